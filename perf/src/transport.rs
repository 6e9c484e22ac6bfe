//! The seam between the generator and the wire: a [`Connection`] is one connected data path (an RC
//! queue pair, or a TCP connection) set up for one operation and message size. The generator decides
//! what to post and when; the connection knows how. TCP and verbs implement the same contract, so the
//! same generator (and later the collectives) runs over both.
//!
//! Roles follow perftest: the *client* (active side) posts WRITE/SEND/READ operations and measures;
//! the *server* (passive side) serves them: it posts receives for SEND, answers READ requests where
//! the transport needs it, and does nothing for one-sided WRITE/READ on verbs.

use std::time::Duration;

use crate::integrity::Verified;
use crate::PerfError;

/// What a completion on a connection proves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// The peer has the data (RC verbs: the responder's ACK).
    Remote,
    /// Only that the local stack took it (TCP): delivery is what the peer reports.
    Local,
}

/// What the passive side of a bandwidth test saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    /// Messages that arrived (or requests answered), counted by this side.
    Counted(u64),
    /// A one-sided operation on a transport that needs nothing from this side: there was nothing
    /// to count.
    Unobserved,
}

/// One connected data path.
pub trait Connection: Send {
    /// Messages this side may have in flight before it must wait for completions (perftest -t).
    fn depth(&self) -> usize;

    /// Start one message of the connection's size: RDMA WRITE or SEND from the local buffer, or RDMA
    /// READ into it. May block briefly when the transport applies back-pressure.
    fn post(&mut self) -> Result<(), PerfError>;

    /// Post `count` messages (at most the room left in the window), as few calls into the transport
    /// as it allows (verbs post lists, perftest -l); returns how many were posted. The default posts
    /// them one by one.
    fn post_many(&mut self, count: usize) -> Result<usize, PerfError> {
        for _ in 0..count {
            self.post()?;
        }
        Ok(count)
    }

    /// Messages completed since the previous call (0 when none yet). Must not block longer than
    /// `wait`; a peer that stops answering surfaces as [`PerfError::PeerSilent`] after the connection's
    /// own timeout, never as a hang.
    fn poll(&mut self, wait: Duration) -> Result<usize, PerfError>;

    /// Tell the peer this side will post nothing more (TCP: shut the write half; verbs: a final
    /// message on the side channel is enough, so this may do nothing).
    fn finish(&mut self) -> Result<(), PerfError>;

    /// After a timed [`Connection::ping`], with the clock stopped: work deferred out of the round
    /// trip (verifying the reply), done before the next ping.
    fn settle(&mut self) {}

    /// Passive side of a bandwidth test: serve until the peer has finished (`expected` messages when
    /// known, else until the peer's [`Connection::finish`]), then say how many messages arrived or
    /// were served, or that this side could not see them (one-sided verbs). With validation on,
    /// received data is checked against the pattern.
    fn serve(&mut self, expected: Option<u64>) -> Result<Served, PerfError>;

    /// Latency, active side: one message out and the answer back (WRITE/SEND: the peer's reply of the
    /// same size; READ: the read's own completion).
    fn ping(&mut self) -> Result<(), PerfError>;

    /// Latency, passive side: wait for the peer's message and answer it (nothing to do for READ on
    /// transports where the peer reads memory without this side's help: return at once).
    fn pong(&mut self) -> Result<(), PerfError>;

    /// Human description for report headers ("tcp 10.0.0.2:41234", "mlx5_0:1 gid 3 qpn 0x1a2").
    fn describe(&self) -> String;

    /// What this connection's completions prove; the run's accounting
    /// ([`crate::accounting::Accounting`]) follows from it and the operation.
    fn delivery(&self) -> Delivery {
        Delivery::Remote
    }

    /// Validation errors so far (0 when not validating): bytes that arrived different from what was
    /// sent, plus messages lost, repeated or out of order where the transport can tell.
    fn validation_errors(&self) -> u64 {
        0
    }

    /// What this side verified of what it received (all zero when not validating).
    fn verified(&self) -> Verified {
        Verified::default()
    }

    /// The first verification failure, described for the report.
    fn first_corruption(&self) -> Option<String> {
        None
    }
}
