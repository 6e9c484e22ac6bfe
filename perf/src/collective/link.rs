//! The links the collectives move data over, as ordered byte streams: a [`Sender`] to one peer and a
//! [`Receiver`] from one peer. The ring, broadcast and AlltoAll algorithms are written once against
//! these two traits; TCP sockets implement them here and RC queue pairs in `verbs::stream` (RDMA
//! WRITE with immediate into the peer's registered slots, with credits).

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::sync::{Arc, OnceLock};
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
    /// This rank gave up: end the link now, so the peer sees it closed at once instead of when
    /// the process exits (TCP: both directions shut down). Links whose peers are told otherwise
    /// (verbs: a frame on the setup connection) keep the default, which does nothing.
    fn leave(&mut self) {}
    /// What another thread calls to end a `send` this link is blocked in, once the collective
    /// failed elsewhere (the receive from the other neighbour broke): the send fails at once
    /// instead of after the communicator's timeout, so the rank reports its failure while the
    /// ranks that gave up before it still listen (`departure.rs`: rank 0's word reaches them only
    /// when rank 0 itself has failed). `None`: this link's sends never wait on the peer for long.
    fn interrupter(&self) -> Option<SendInterrupt> {
        None
    }
}

/// Ends a [`Sender::send`] that another thread is blocked in; the send then returns an error.
pub type SendInterrupt = Arc<dyn Fn() + Send + Sync>;

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
    /// As [`Sender::leave`].
    fn leave(&mut self) {}
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
    let interrupt = sender.interrupter();
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            outgoing.chunks(slice).try_for_each(|piece| sender.send(piece))?;
            sender.flush()
        });
        let read = incoming.chunks_mut(slice).try_for_each(|piece| receiver.receive(piece));
        if let (Err(_), Some(interrupt)) = (&read, &interrupt) {
            interrupt();
        }
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
    /// A second handle on the socket for [`Sender::interrupter`] (made on first use), so another
    /// thread can shut it down while `send` holds the link.
    second_handle: OnceLock<Option<Arc<TcpStream>>>,
}

/// Bytes `TcpLink::receive_with` reads at a time: small enough to stay in the CPU's cache between
/// the read and the reduction, large enough that a read is not a syscall per packet.
const TCP_PIECE_BYTES: usize = 64 * 1024;

/// Receives of at most this many bytes poll the socket before sleeping on it: a message this small
/// arrives in one go once it arrives (it fits a socket's receive buffer many times over), and what
/// a small collective waits for is the peer's round trip, not bandwidth.
const POLL_BYTES: usize = 64 * 1024;

/// How long a small receive polls before it blocks. A process asleep in read(2) pays the kernel's
/// wake-up and a trip through the scheduler when the data lands, about as long as the hop itself
/// on a veth or a NIC (tens of microseconds); a rank that polls sees the data on its next look.
/// Long enough to cover a few round trips of a healthy link; a slow peer is waited for asleep, so
/// a stalled job does not spin a core. Each look that finds nothing yields the core (sched_yield(2)),
/// as MPI libraries do when ranks share cores (Open MPI's `mpi_yield_when_idle`).
const POLL_WINDOW: Duration = Duration::from_micros(200);

impl TcpLink {
    pub fn new(stream: TcpStream, peer: String, timeout: Duration) -> TcpLink {
        TcpLink { stream, peer, timeout, pieces: Vec::new(), second_handle: OnceLock::new() }
    }

    /// Read what arrives within `POLL_WINDOW` without sleeping (recv(2) with MSG_DONTWAIT, which
    /// leaves the socket blocking for the sending thread that shares it). Returns how many bytes
    /// of `into` are filled; the caller reads the rest blocking.
    fn poll_briefly(&mut self, into: &mut [u8]) -> Result<usize, PerfError> {
        use nix::errno::Errno;
        use nix::sys::socket::{recv, MsgFlags};
        let started = Instant::now();
        let mut filled = 0;
        while filled < into.len() {
            match recv(self.stream.as_raw_fd(), &mut into[filled..], MsgFlags::MSG_DONTWAIT) {
                Ok(0) => return Err(PerfError::PeerClosed { peer: self.peer.clone(), during: "receive" }),
                Ok(read) => filled += read,
                Err(Errno::EINTR) => {}
                Err(Errno::EAGAIN) if started.elapsed() < POLL_WINDOW => std::thread::yield_now(),
                Err(Errno::EAGAIN) => break,
                Err(error) => return Err(io_error(&self.peer, "receive", error.into(), self.timeout)),
            }
        }
        Ok(filled)
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

    fn leave(&mut self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }

    /// Shutting the socket's sending side down wakes a write(2) blocked on a full send buffer
    /// with EPIPE (tcp(7); the kernel's tcp_sendmsg checks SEND_SHUTDOWN after each wait), so a
    /// peer that stopped reading no longer holds this rank for the whole timeout. The peer sees
    /// the connection end, as it would when this rank leaves.
    fn interrupter(&self) -> Option<SendInterrupt> {
        let stream = self.second_handle.get_or_init(|| self.stream.try_clone().ok().map(Arc::new)).clone()?;
        Some(Arc::new(move || {
            let _ = stream.shutdown(std::net::Shutdown::Write);
        }))
    }
}

impl Receiver for TcpLink {
    fn receive(&mut self, into: &mut [u8]) -> Result<(), PerfError> {
        let filled = if into.len() <= POLL_BYTES { self.poll_briefly(into)? } else { 0 };
        self.stream.read_exact(&mut into[filled..]).map_err(|e| io_error(&self.peer, "receive", e, self.timeout))
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

    fn leave(&mut self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A connected pair of sockets on loopback: (our end as a link, the peer's end).
    fn pair() -> (TcpLink, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let peer = TcpStream::connect(listener.local_addr().expect("address")).expect("connect");
        let (ours, _) = listener.accept().expect("accept");
        (TcpLink::new(ours, "rank 1 (test)".into(), Duration::from_secs(5)), peer)
    }

    /// A small message split across the poll window: the part that arrives late is read blocking,
    /// in order, after the part the poll found.
    #[test]
    fn a_small_receive_finishes_blocking_what_the_poll_did_not_see() {
        let (mut link, mut peer) = pair();
        let writer = std::thread::spawn(move || {
            peer.write_all(b"abc").expect("first part");
            std::thread::sleep(POLL_WINDOW * 20);
            peer.write_all(b"defgh").expect("second part");
            peer
        });
        let mut into = [0u8; 8];
        link.receive(&mut into).expect("receive");
        assert_eq!(&into, b"abcdefgh");
        drop(writer.join());
    }

    /// A peer that closes while polled is a closed peer, named, not a busy loop or a short read.
    #[test]
    fn a_peer_closing_during_the_poll_is_reported_as_closed() {
        let (mut link, mut peer) = pair();
        peer.write_all(b"abc").expect("part");
        drop(peer);
        let mut into = [0u8; 8];
        match link.receive(&mut into) {
            Err(PerfError::PeerClosed { peer, during }) => {
                assert_eq!(peer, "rank 1 (test)");
                assert_eq!(during, "receive");
            }
            other => panic!("expected PeerClosed, got {other:?}"),
        }
    }

    /// A send blocked on a peer that stopped reading (its socket buffers full) ends when another
    /// thread interrupts it, long before the link's timeout, as the peer's closing would end it.
    #[test]
    fn a_send_blocked_on_a_peer_that_stopped_reading_ends_when_interrupted() {
        let (mut link, peer) = pair();
        link.timeout = Duration::from_secs(60);
        let _ = link.stream.set_write_timeout(Some(link.timeout));
        let interrupt = link.interrupter().expect("a TCP link can be interrupted");
        let started = Instant::now();
        let sending = std::thread::spawn(move || link.send(&vec![0u8; 64 << 20]));
        std::thread::sleep(Duration::from_millis(300));
        assert!(!sending.is_finished(), "64 MiB cannot fit the socket buffers of a peer that never reads");
        interrupt();
        let result = sending.join().expect("the sending thread");
        assert!(started.elapsed() < Duration::from_secs(30), "the send ended only after {:?}", started.elapsed());
        match result {
            Err(PerfError::PeerClosed { peer, during }) => {
                assert_eq!((peer.as_str(), during), ("rank 1 (test)", "send"))
            }
            other => panic!("expected the send to fail as closed, got {other:?}"),
        }
        drop(peer);
    }
}
