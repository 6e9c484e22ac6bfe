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
    /// From now on, bytes handed to `send` that lie inside `region` may be written from where they are
    /// instead of being copied into the link's own memory first (verbs: an RDMA WRITE straight from
    /// the registered region); `None` ends that before the region goes away. Such a `send` returns
    /// once the write is posted, so the caller leaves those bytes unchanged until `flush` returns, or
    /// until it has received data that the peer could only produce after receiving them (the ring's
    /// data dependency). Links that always copy ignore it.
    fn send_in_place(&mut self, region: Option<SourceRegion>) {
        let _ = region;
    }
}

/// Memory registered with the adapter that links may send from without copying it: its address,
/// length and local key. It stays where it is, registered, until every link was told `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceRegion {
    pub address: u64,
    pub length: usize,
    pub key: u32,
}

impl SourceRegion {
    /// Where `bytes` start inside the region, when all of them lie in it.
    pub fn offset_of(&self, bytes: &[u8]) -> Option<u64> {
        let start = bytes.as_ptr() as u64;
        let end = start.checked_add(bytes.len() as u64)?;
        (start >= self.address && end <= self.address + self.length as u64).then(|| start - self.address)
    }
}

/// The receiving half of a link: bytes from one peer, in the order they were sent.
pub trait Receiver: Send {
    /// Fill `into` with the next bytes from the peer.
    fn receive(&mut self, into: &mut [u8]) -> Result<(), PerfError>;
    /// Hand the next `length` bytes from the peer to `consume`, in order, in pieces of at most a few
    /// KiB, read from where they arrived (verbs: the receive slot the peer wrote) rather than copied
    /// into a buffer first: a reduction combines them with local data as they come.
    fn receive_with(&mut self, length: usize, consume: &mut dyn FnMut(&[u8])) -> Result<(), PerfError>;
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
    /// What `receive_with` reads into: the socket's bytes have to land somewhere before they are
    /// combined (allocated on first use, then reused).
    pieces: Vec<u8>,
}

/// Bytes `TcpLink::receive_with` reads at a time: small enough to stay in the CPU's cache between
/// the read and the reduction, large enough that a read is not a syscall per packet.
const TCP_PIECE_BYTES: usize = 64 * 1024;

impl TcpLink {
    pub fn new(stream: TcpStream, peer: String, timeout: Duration) -> TcpLink {
        TcpLink { stream, peer, timeout, pieces: Vec::new() }
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

    fn receive_with(&mut self, length: usize, consume: &mut dyn FnMut(&[u8])) -> Result<(), PerfError> {
        if self.pieces.len() < TCP_PIECE_BYTES.min(length) {
            self.pieces.resize(TCP_PIECE_BYTES.min(length), 0);
        }
        let mut left = length;
        while left > 0 {
            let piece = &mut self.pieces[..TCP_PIECE_BYTES.min(left)];
            self.stream.read_exact(piece).map_err(|e| io_error(&self.peer, "receive", e, self.timeout))?;
            consume(piece);
            left -= piece.len();
        }
        Ok(())
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
