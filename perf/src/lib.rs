//! fabricdoctor's traffic generator: RDMA WRITE/READ/SEND bandwidth and latency tests with perftest's
//! semantics and units, over a [`transport::Connection`] implemented for TCP (and verbs), driven by a
//! versioned handshake on a TCP side channel.

pub mod accounting;
pub mod collective;
pub mod error;
pub mod generator;
pub mod gpu;
pub mod handshake;
pub mod integrity;
pub mod params;
pub mod stats;
pub mod tcp;
pub mod transport;
pub mod verbs;

pub use error::PerfError;
pub use params::{Operation, RunParameters, TestKind, TransportKind};
