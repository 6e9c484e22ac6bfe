//! Errors of the generator, each naming the peer, the operation and what to do.

use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum PerfError {
    // The I/O error is named `cause`, not `source`: it is part of this message, so error chains must
    // not print it a second time.
    #[error("cannot connect to {peer}: {cause}")]
    Connect { peer: String, cause: std::io::Error },
    #[error("peer {peer} sent no data for {waited:?}: it stopped or the network dropped the connection")]
    PeerSilent { peer: String, waited: Duration },
    #[error("peer {peer} closed the connection during {during}")]
    PeerClosed { peer: String, during: &'static str },
    /// A peer gave up because of another rank and said so before it left: `first` exited (`silent`
    /// is `None`) or sent no data for `silent`.
    #[error("peer {peer} left the collective because {}", departure_words(.first, .silent))]
    PeerLeft { peer: String, first: String, silent: Option<Duration> },
    #[error("i/o error with {peer} during {during}: {cause}")]
    Io { peer: String, during: &'static str, cause: std::io::Error },
    #[error("handshake with {peer} failed: {reason}")]
    Handshake { peer: String, reason: String },
    #[error("{peer} presented no valid ticket for this session: refused before anything was allocated")]
    NoTicket { peer: String },
    #[error("client and server parameters differ: {field} is {client} on the client but {server} on the server")]
    Mismatch { field: &'static str, client: String, server: String },
    #[error("data validation failed: {0}")]
    Validation(String),
    #[error("{0}")]
    Unsupported(String),
    #[error("{0}")]
    Transport(String),
    #[error("GPU buffer: {0}")]
    Gpu(#[from] crate::gpu::GpuError),
}

/// Why the rank that stopped first stopped, as a peer that left because of it says.
fn departure_words(first: &str, silent: &Option<Duration>) -> String {
    match silent {
        None => format!("{first} exited"),
        Some(waited) => format!("{first} sent no data for {waited:?}"),
    }
}
