//! How a rank of a verbs communicator tells a dead or stalled peer from one that is only waiting.
//!
//! The TCP connections the queue pairs were set up over carry nothing else afterwards. Every wait looks
//! at all of this rank's connections (not only its own link's): a closed one means that peer exited.
//! The first one seen closed names the rank that stopped. Ranks leave only after a final barrier, so a
//! closed connection during a collective is never a normal exit.
//!
//! A stalled peer keeps its connections open, and in a ring everyone ends up waiting on someone. A
//! wait that times out on peer X therefore asks X over its connection (a [`Frame::Probe`]) what it is
//! waiting on. A rank that answers ([`Frame::Answer`]: the peer it has waited on longest) is alive
//! and blocked, and the error names the rank it waits on. A rank that does not answer within
//! [`PROBE_PATIENCE`] is the stalled one. Every wait answers probes as it looks at the connections.
//!
//! A rank that gives up tells the peers it leaves behind why ([`Frame::Leaving`]: the rank that exited
//! or went silent) before its connections close. When a rank dies its neighbours notice and exit too,
//! and a rank that looks only after several closed cannot tell from the sockets which went first (on
//! slow guests a ring neighbour exited 253 ms after the killed rank, before the third rank's look);
//! the neighbour's word names the rank that stopped them all.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

/// How long a rank that timed out waits for the silent peer's answer. Ranks start waiting on a
/// stalled rank within moments of each other; a peer that is itself giving up still answers meanwhile.
pub const PROBE_PATIENCE: Duration = Duration::from_secs(1);

/// Why a rank left its collective: what it tells the peers it leaves behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Departure {
    /// This rank's connection closed: it exited.
    Exited(u32),
    /// This rank sent nothing for this long (whole milliseconds) and answered no probe.
    Silent(u32, Duration),
}

impl Departure {
    /// The rank that stopped.
    pub fn rank(self) -> u32 {
        match self {
            Departure::Exited(rank) | Departure::Silent(rank, _) => rank,
        }
    }
}

/// Messages on the setup connections after setup: 9 bytes, a kind, a big-endian rank and a
/// big-endian value (milliseconds for [`Departure::Silent`], else zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// "What are you waiting on?"
    Probe,
    /// "I have waited longest on this rank" (`None`: on nothing).
    Answer(Option<u32>),
    /// "I am leaving, because of this rank."
    Leaving(Departure),
}

const FRAME_BYTES: usize = 9;
const NOTHING: u32 = u32::MAX;

impl Frame {
    pub fn encode(self) -> [u8; FRAME_BYTES] {
        let (kind, rank, value) = match self {
            Frame::Probe => (b'?', 0, 0),
            Frame::Answer(rank) => (b'!', rank.unwrap_or(NOTHING), 0),
            Frame::Leaving(Departure::Exited(rank)) => (b'x', rank, 0),
            Frame::Leaving(Departure::Silent(rank, waited)) => {
                (b's', rank, u32::try_from(waited.as_millis()).unwrap_or(u32::MAX))
            }
        };
        let mut bytes = [0u8; FRAME_BYTES];
        bytes[0] = kind;
        bytes[1..5].copy_from_slice(&rank.to_be_bytes());
        bytes[5..].copy_from_slice(&value.to_be_bytes());
        bytes
    }

    pub fn decode(bytes: [u8; FRAME_BYTES]) -> Result<Frame, String> {
        let rank = u32::from_be_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]);
        let value = u32::from_be_bytes([bytes[5], bytes[6], bytes[7], bytes[8]]);
        match bytes[0] {
            b'?' if rank == 0 && value == 0 => Ok(Frame::Probe),
            b'!' if value == 0 => Ok(Frame::Answer((rank != NOTHING).then_some(rank))),
            b'x' if rank != NOTHING && value == 0 => Ok(Frame::Leaving(Departure::Exited(rank))),
            b's' if rank != NOTHING => {
                Ok(Frame::Leaving(Departure::Silent(rank, Duration::from_millis(u64::from(value)))))
            }
            _ => Err(format!("unexpected bytes {bytes:02x?} on a verbs setup connection")),
        }
    }
}

/// The waits in progress in this process, one per thread: the peer rank and since when.
#[derive(Debug, Default)]
pub struct Waits {
    by_thread: HashMap<ThreadId, (usize, Instant)>,
}

impl Waits {
    pub fn begin(&mut self, thread: ThreadId, peer: usize, since: Instant) {
        self.by_thread.insert(thread, (peer, since));
    }

    pub fn end(&mut self, thread: ThreadId) {
        self.by_thread.remove(&thread);
    }

    /// The peer waited on longest: what a probe is answered with.
    pub fn longest(&self) -> Option<usize> {
        self.by_thread.values().min_by_key(|(_, since)| *since).map(|(peer, _)| *peer)
    }
}

/// One setup connection.
#[derive(Debug)]
struct Connection {
    rank: usize,
    stream: TcpStream,
    /// The last answer to a probe, and when it came.
    answer: Option<(Option<u32>, Instant)>,
    /// What the peer said when it left, if it did.
    departure: Option<Departure>,
}

/// What a look at the connections found.
#[derive(Debug, PartialEq, Eq)]
pub enum Seen {
    Nothing,
    /// This peer's connection is closed: it exited, because of `told` if it said so.
    Gone {
        rank: usize,
        told: Option<Departure>,
    },
}

#[derive(Debug)]
struct Shared {
    connections: Vec<Connection>,
    waits: Waits,
}

/// The rank's setup connections and waits, shared by all its links' threads.
#[derive(Debug, Clone)]
pub struct Watch {
    shared: Arc<Mutex<Shared>>,
}

impl Watch {
    /// `connections`: (peer rank, connection), already non-blocking.
    pub fn new(connections: Vec<(usize, TcpStream)>) -> Watch {
        let connections = connections
            .into_iter()
            .map(|(rank, stream)| Connection { rank, stream, answer: None, departure: None })
            .collect();
        Watch { shared: Arc::new(Mutex::new(Shared { connections, waits: Waits::default() })) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        // A thread that panicked while looking leaves the state as consistent as any other look.
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn begin_wait(&self, peer: usize, since: Instant) {
        self.lock().waits.begin(std::thread::current().id(), peer, since);
    }

    pub fn end_wait(&self) {
        self.lock().waits.end(std::thread::current().id());
    }

    /// Answer probes, keep answers, and report the first peer whose connection is closed.
    pub fn look(&self) -> Seen {
        self.look_preferring(None)
    }

    /// As [`Watch::look`], but when several peers are gone at one look, name `waited_on` if it is
    /// one of them (with what it said when it left), else one that left without a word (the rank
    /// that stopped), else the first.
    pub fn look_preferring(&self, waited_on: Option<usize>) -> Seen {
        let mut shared = self.lock();
        let longest = shared.waits.longest().and_then(|r| u32::try_from(r).ok());
        let mut gone = Vec::new();
        for connection in shared.connections.iter_mut() {
            let closed = loop {
                let mut bytes = [0u8; FRAME_BYTES];
                match connection.stream.peek(&mut bytes) {
                    Ok(0) => break true,
                    Ok(n) if n < FRAME_BYTES => break false,
                    Ok(_) => {}
                    Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => break false,
                    Err(_) => break true,
                }
                if connection.stream.read_exact(&mut bytes).is_err() {
                    break true;
                }
                match Frame::decode(bytes) {
                    Ok(Frame::Probe) => {
                        // Best effort: a peer that cannot take 5 bytes is gone, which the next look sees.
                        let _ = connection.stream.write_all(&Frame::Answer(longest).encode());
                    }
                    Ok(Frame::Answer(rank)) => connection.answer = Some((rank, Instant::now())),
                    Ok(Frame::Leaving(departure)) => connection.departure = Some(departure),
                    // Not a fabricdoctor peer speaking: treat the connection as broken.
                    Err(_) => break true,
                }
            };
            if closed {
                gone.push((connection.rank, connection.departure));
            }
        }
        let named = gone
            .iter()
            .find(|(rank, _)| Some(*rank) == waited_on)
            .or_else(|| gone.iter().find(|(_, told)| told.is_none()))
            .or_else(|| gone.first());
        match named {
            Some(&(rank, told)) => Seen::Gone { rank, told },
            None => Seen::Nothing,
        }
    }

    /// Tell every peer still connected why this rank leaves (best effort: a peer that cannot take the
    /// frame is gone itself). Written before the connections close, so it arrives ahead of the EOF.
    pub fn leave(&self, departure: Departure) {
        let mut shared = self.lock();
        for connection in shared.connections.iter_mut() {
            let _ = connection.stream.write_all(&Frame::Leaving(departure).encode());
        }
    }

    /// Ask `peer` what it waits on; `Some(rank)` when it answers within [`PROBE_PATIENCE`] that it is
    /// waiting on another rank (or leaves saying it gave up on one), `None` when it does not answer
    /// (it is the stalled one) or waits on nothing or on us.
    pub fn ask(&self, peer: usize, us: usize) -> Option<usize> {
        let asked = Instant::now();
        {
            let mut shared = self.lock();
            let connection = shared.connections.iter_mut().find(|c| c.rank == peer)?;
            connection.stream.write_all(&Frame::Probe.encode()).ok()?;
        }
        while asked.elapsed() < PROBE_PATIENCE {
            if let Seen::Gone { rank, told } = self.look_preferring(Some(peer)) {
                // A peer that left while asked may have said on whose account: that is what it waited on.
                return told.filter(|_| rank == peer).map(|d| d.rank() as usize).filter(|r| *r != peer && *r != us);
            }
            let shared = self.lock();
            let answer = shared.connections.iter().find(|c| c.rank == peer).and_then(|c| c.answer);
            if let Some((rank, at)) = answer {
                if at >= asked {
                    return rank.map(|r| r as usize).filter(|r| *r != peer && *r != us);
                }
            }
            drop(shared);
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_strangers_are_refused() {
        for frame in [
            Frame::Probe,
            Frame::Answer(None),
            Frame::Answer(Some(0)),
            Frame::Answer(Some(7)),
            Frame::Leaving(Departure::Exited(1)),
            Frame::Leaving(Departure::Silent(3, Duration::from_secs(10))),
        ] {
            assert_eq!(Frame::decode(frame.encode()), Ok(frame));
        }
        assert_eq!(Frame::Answer(Some(2)).encode(), *b"!\0\0\0\x02\0\0\0\0");
        assert_eq!(
            Frame::Leaving(Departure::Silent(1, Duration::from_millis(10_000))).encode(),
            *b"s\0\0\0\x01\0\0\x27\x10"
        );
        assert!(Frame::decode(*b"GET / HTT").is_err(), "an HTTP client is not a peer");
        assert!(Frame::decode(*b"?\0\0\0\x01\0\0\0\0").is_err(), "a probe carries no rank");
        assert!(Frame::decode(*b"x\xff\xff\xff\xff\0\0\0\0").is_err(), "a departure names a rank");
    }

    #[test]
    fn the_answer_is_the_peer_waited_on_longest() {
        let mut waits = Waits::default();
        assert_eq!(waits.longest(), None);
        let start = Instant::now();
        let main = std::thread::current().id();
        let writer = std::thread::spawn(|| std::thread::current().id()).join().expect("thread");
        waits.begin(main, 2, start + Duration::from_millis(5));
        waits.begin(writer, 1, start);
        assert_eq!(waits.longest(), Some(1), "the writer waited on rank 1 first");
        waits.end(writer);
        assert_eq!(waits.longest(), Some(2));
        waits.end(main);
        assert_eq!(waits.longest(), None);
    }

    /// Two ranks' watches over a loopback connection: a probe is answered with the longest wait, and
    /// a closed connection is seen as the peer gone.
    #[test]
    fn a_waiting_peer_answers_and_a_closed_one_is_gone() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let one = TcpStream::connect(listener.local_addr().expect("address")).expect("connect");
        let (two, _) = listener.accept().expect("accept");
        for stream in [&one, &two] {
            stream.set_nonblocking(true).expect("non-blocking");
        }
        // Rank 0 holds `one` (to rank 2); rank 2 holds `two` (to rank 0) and waits on rank 1.
        let rank0 = Watch::new(vec![(2, one)]);
        let rank2 = Watch::new(vec![(0, two)]);
        rank2.begin_wait(1, Instant::now());
        let answering = std::thread::spawn(move || {
            let until = Instant::now() + Duration::from_millis(1500);
            while Instant::now() < until {
                if rank2.look() != Seen::Nothing {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            rank2
        });
        assert_eq!(rank0.ask(2, 0), Some(1), "rank 2 is alive and waits on rank 1");
        drop(answering.join().expect("rank 2"));
        // Rank 2's side is closed now.
        let until = Instant::now() + Duration::from_secs(3);
        while rank0.look() == Seen::Nothing && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(rank0.look(), Seen::Gone { rank: 2, told: None });
        assert_eq!(rank0.ask(2, 0), None, "a gone peer answers nothing");
    }

    /// Two peers gone by the time of one look: the one waited on is named, else the first.
    #[test]
    fn of_two_gone_peers_the_one_waited_on_is_named() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let mut ours = Vec::new();
        for rank in [0usize, 1] {
            let stream = TcpStream::connect(listener.local_addr().expect("address")).expect("connect");
            let (theirs, _) = listener.accept().expect("accept");
            stream.set_nonblocking(true).expect("non-blocking");
            ours.push((rank, stream));
            drop(theirs);
        }
        let rank2 = Watch::new(ours);
        let until = Instant::now() + Duration::from_secs(3);
        while rank2.look_preferring(Some(1)) != (Seen::Gone { rank: 1, told: None }) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(rank2.look_preferring(Some(1)), Seen::Gone { rank: 1, told: None });
        assert_eq!(rank2.look(), Seen::Gone { rank: 0, told: None });
        assert_eq!(rank2.look_preferring(Some(5)), Seen::Gone { rank: 0, told: None });
    }

    /// Rank 1 killed; rank 2, which waited on it, left saying so; rank 0 waited on rank 2 and looks
    /// only after both closed. It learns from rank 2's word that rank 1 stopped them (the Soft-RoCE
    /// guests' CI once saw rank 0 blame rank 2 here, the neighbour it waited on).
    #[test]
    fn a_neighbour_that_left_because_of_a_dead_rank_names_it() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        for rank in [1usize, 2] {
            let stream = TcpStream::connect(listener.local_addr().expect("address")).expect("connect");
            let (other, _) = listener.accept().expect("accept");
            for s in [&stream, &other] {
                s.set_nonblocking(true).expect("non-blocking");
            }
            ours.push((rank, stream));
            theirs.push((0usize, other));
        }
        let rank0 = Watch::new(ours);
        let rank2 = Watch::new(vec![theirs.pop().expect("rank 2's connection")]);
        drop(theirs);
        rank2.leave(Departure::Exited(1));
        drop(rank2);
        let until = Instant::now() + Duration::from_secs(3);
        let mut seen = rank0.look_preferring(Some(2));
        while !matches!(seen, Seen::Gone { rank: 2, .. }) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
            seen = rank0.look_preferring(Some(2));
        }
        assert_eq!(seen, Seen::Gone { rank: 2, told: Some(Departure::Exited(1)) });
        assert_eq!(
            rank0.look(),
            Seen::Gone { rank: 1, told: None },
            "without a rank waited on, the one that left unannounced"
        );
    }
}
