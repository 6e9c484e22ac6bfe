//! What each side of a perftest-style run can count, and so what the generator may compare. The
//! rules depend on two things only: the operation, and what a completion proves on the transport in
//! use ([`Delivery`]). They used to be spread over the generator as boolean questions to each
//! connection; here they are one type, tested without a device.
//!
//! - RC verbs (IB spec vol. 1, 9.7.5.1): a requester's completion means the responder acknowledged
//!   the message, so the requester's own count is delivery. A one-sided WRITE or READ gives the
//!   responder's CPU nothing to count or answer.
//! - TCP: a completion means the local stack took the bytes. The peer's report is what proves
//!   delivery, and every operation (including the emulated WRITE and READ) has the server's code on
//!   the data path, so the server counts.

use crate::transport::{Connection, Delivery, Served};
use crate::Operation;

/// Which side of a bidirectional bandwidth run measures the server-to-client direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReverseMeasuredBy {
    /// The server, which sent it: its completions mean delivery (verbs).
    Sender,
    /// The client, which received it: the sender's completions are local (TCP).
    Receiver,
}

/// The accounting rules of one run: an operation over connections whose completions mean
/// `delivery`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accounting {
    operation: Operation,
    delivery: Delivery,
}

impl Accounting {
    pub fn new(operation: Operation, delivery: Delivery) -> Accounting {
        Accounting { operation, delivery }
    }

    /// The rules for a run over `connections`: completions prove delivery only when they do on every
    /// connection.
    pub fn of(operation: Operation, connections: &[Box<dyn Connection>]) -> Accounting {
        let remote = connections.iter().all(|c| c.delivery() == Delivery::Remote);
        Accounting::new(operation, if remote { Delivery::Remote } else { Delivery::Local })
    }

    /// With local completions the client's last completion is not the end of the run: the server's
    /// report (which arrives after it has everything) adds the final point of the timeline.
    pub fn run_ends_at_peer_report(&self) -> bool {
        self.delivery == Delivery::Local
    }

    /// Who measures the reverse direction of a bidirectional run: where completions mean delivery.
    pub fn reverse_measured_by(&self) -> ReverseMeasuredBy {
        match self.delivery {
            Delivery::Remote => ReverseMeasuredBy::Sender,
            Delivery::Local => ReverseMeasuredBy::Receiver,
        }
    }

    /// Whether the server's message count is its own observation, so the client may require it to
    /// match what it sent. A one-sided WRITE on verbs leaves the responder nothing to count (its
    /// count is the expectation it was given, and none in duration mode), and RC completions already
    /// prove delivery; a READ's data flows to the client, which counts its own completions.
    pub fn responder_counts(&self) -> bool {
        match self.operation {
            Operation::Read => false,
            Operation::Write => self.delivery == Delivery::Local,
            Operation::Send => true,
        }
    }

    /// Whether the passive side of a latency test takes part in each round trip. A verbs READ reads
    /// the server's memory without its CPU, so the server just waits for the end of the test.
    pub fn responder_answers_latency(&self) -> bool {
        !(self.operation == Operation::Read && self.delivery == Delivery::Remote)
    }

    /// What the server reports for one connection of a bandwidth test: what it counted, or (for a
    /// one-sided operation it could not see) the count it was told to expect, 0 in duration mode.
    pub fn reported(served: Served, expected: Option<u64>) -> u64 {
        match served {
            Served::Counted(messages) => messages,
            Served::Unobserved => expected.unwrap_or(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table the generator relied on before these rules were one type: every operation on both
    /// kinds of transport.
    #[test]
    fn every_operation_on_both_transports() {
        use Delivery::{Local, Remote};
        use Operation::{Read, Send, Write};
        // (operation, delivery, responder counts, responder answers latency)
        let table = [
            (Write, Remote, false, true),
            (Write, Local, true, true),
            (Send, Remote, true, true),
            (Send, Local, true, true),
            (Read, Remote, false, false),
            (Read, Local, false, true),
        ];
        for (operation, delivery, counts, answers) in table {
            let rules = Accounting::new(operation, delivery);
            assert_eq!(rules.responder_counts(), counts, "{operation:?} over {delivery:?}");
            assert_eq!(rules.responder_answers_latency(), answers, "{operation:?} over {delivery:?}");
            assert_eq!(rules.run_ends_at_peer_report(), delivery == Local);
            let by = if delivery == Remote { ReverseMeasuredBy::Sender } else { ReverseMeasuredBy::Receiver };
            assert_eq!(rules.reverse_measured_by(), by);
        }
    }

    #[test]
    fn an_unobserved_serve_reports_the_expectation() {
        assert_eq!(Accounting::reported(Served::Counted(7), Some(9)), 7);
        assert_eq!(Accounting::reported(Served::Unobserved, Some(9)), 9);
        assert_eq!(Accounting::reported(Served::Unobserved, None), 0);
    }

    /// A connection that only says what its completions mean.
    struct Described(Delivery);

    impl Connection for Described {
        fn depth(&self) -> usize {
            1
        }
        fn post(&mut self) -> Result<(), crate::PerfError> {
            Err(crate::PerfError::Unsupported("a description only".into()))
        }
        fn poll(&mut self, _: std::time::Duration) -> Result<usize, crate::PerfError> {
            Ok(0)
        }
        fn finish(&mut self) -> Result<(), crate::PerfError> {
            Ok(())
        }
        fn serve(&mut self, _: Option<u64>) -> Result<Served, crate::PerfError> {
            Ok(Served::Unobserved)
        }
        fn ping(&mut self) -> Result<(), crate::PerfError> {
            Ok(())
        }
        fn pong(&mut self) -> Result<(), crate::PerfError> {
            Ok(())
        }
        fn describe(&self) -> String {
            format!("{:?}", self.0)
        }
        fn delivery(&self) -> Delivery {
            self.0
        }
    }

    #[test]
    fn completions_prove_delivery_only_when_they_do_on_every_connection() {
        let remote: Vec<Box<dyn Connection>> =
            vec![Box::new(Described(Delivery::Remote)), Box::new(Described(Delivery::Remote))];
        assert_eq!(Accounting::of(Operation::Write, &remote).delivery, Delivery::Remote);
        let mixed: Vec<Box<dyn Connection>> =
            vec![Box::new(Described(Delivery::Remote)), Box::new(Described(Delivery::Local))];
        assert_eq!(Accounting::of(Operation::Write, &mixed).delivery, Delivery::Local);
        assert!(Accounting::of(Operation::Write, &mixed).responder_counts());
    }
}
