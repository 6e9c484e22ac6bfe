//! The links the collectives move data over, as ordered byte streams: a [`Sender`] to one peer and a
//! [`Receiver`] from one peer. The ring, broadcast and AlltoAll algorithms are written once against
//! these two traits; TCP sockets implement them here and RC queue pairs in `verbs::stream` (RDMA
//! WRITE with immediate into the peer's registered slots, with credits).

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::PerfError;

/// The sending half of a link: bytes to one peer, delivered in order.
pub trait Sender: Send {
    /// Hand `bytes` to the link; returns once `bytes` may be reused (they are copied or sent).
    fn send(&mut self, bytes: &[u8]) -> Result<(), PerfError>;
    /// Wait until every byte handed over has left this process for good (verbs: the adapter reported
    /// the last write complete), so the rank may exit without the peer losing the tail.
    fn flush(&mut self) -> Result<(), PerfError>;
}

/// The receiving half of a link: bytes from one peer, in the order they were sent.
pub trait Receiver: Send {
    /// Fill `into` with the next bytes from the peer.
    fn receive(&mut self, into: &mut [u8]) -> Result<(), PerfError>;
    /// After an error elsewhere: did this peer exit while its end of the link hid it (an EOF behind
    /// data not yet read)? Looks for up to `patience`. When a rank dies, its right neighbour's sends
    /// may fail first (the failure cascades around the ring); asking the left link names the rank that
    /// really stopped. A link that notices its peer's exit as it happens answers false: its own
    /// errors already name the right rank.
    fn exit_was_hidden(&mut self, patience: Duration) -> bool;
    /// Who is at the other end, for messages: "rank 1 (10.0.0.2)".
    fn peer(&self) -> &str;
}

/// Send `outgoing` to one peer while receiving `incoming.len()` bytes from one (the same or
/// another), in `slice`-sized pieces; the sending runs on its own thread, so two ranks that send
/// to each other at once never wait on each other's buffers. Ends with the sender flushed.
pub(crate) fn exchange(
    sender: &mut dyn Sender,
    receiver: &mut dyn Receiver,
    outgoing: &[u8],
    incoming: &mut [u8],
    slice: usize,
) -> Result<(), PerfError> {
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            outgoing.chunks(slice).try_for_each(|piece| sender.send(piece))?;
            sender.flush()
        });
        let read = incoming.chunks_mut(slice).try_for_each(|piece| receiver.receive(piece));
        let written = writer.join().map_err(|_| PerfError::Transport("a sending thread panicked".into()))?;
        read.and(written)
    })
}

/// `waited` is the socket timeout, which a silent peer has exceeded.
pub(crate) fn io_error(peer: &str, during: &'static str, error: std::io::Error, waited: Duration) -> PerfError {
    match error.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => PerfError::PeerSilent { peer: peer.into(), waited },
        ErrorKind::UnexpectedEof
        | ErrorKind::ConnectionReset
        | ErrorKind::BrokenPipe
        | ErrorKind::ConnectionAborted => PerfError::PeerClosed { peer: peer.into(), during },
        _ => PerfError::Io { peer: peer.into(), during, cause: error },
    }
}

/// A TCP connection as one half of a link (the socket has the communicator's read and write timeout).
#[derive(Debug)]
pub struct TcpLink {
    stream: TcpStream,
    peer: String,
    timeout: Duration,
}

impl TcpLink {
    pub fn new(stream: TcpStream, peer: String, timeout: Duration) -> TcpLink {
        TcpLink { stream, peer, timeout }
    }
}

impl Sender for TcpLink {
    fn send(&mut self, bytes: &[u8]) -> Result<(), PerfError> {
        self.stream.write_all(bytes).map_err(|e| io_error(&self.peer, "send", e, self.timeout))
    }

    /// The kernel delivers what `write_all` queued even after this process exits.
    fn flush(&mut self) -> Result<(), PerfError> {
        Ok(())
    }
}

impl Receiver for TcpLink {
    fn receive(&mut self, into: &mut [u8]) -> Result<(), PerfError> {
        self.stream.read_exact(into).map_err(|e| io_error(&self.peer, "receive", e, self.timeout))
    }

    /// The peer's EOF may sit behind unread data: drain briefly and see whether the stream ends.
    fn exit_was_hidden(&mut self, patience: Duration) -> bool {
        let deadline = Instant::now() + patience;
        let _ = self.stream.set_read_timeout(Some(Duration::from_millis(50)));
        let mut scratch = [0u8; 64 * 1024];
        let closed = loop {
            match self.stream.read(&mut scratch) {
                Ok(0) => break true,
                Err(e) if matches!(e.kind(), ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted) => break true,
                Ok(_) if Instant::now() < deadline => continue,
                _ => break false,
            }
        };
        let _ = self.stream.set_read_timeout(Some(self.timeout));
        closed
    }

    fn peer(&self) -> &str {
        &self.peer
    }
}
