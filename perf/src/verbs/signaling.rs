//! The send-queue accounting of a bandwidth test (perftest's `cq_mod`): which work requests are
//! signaled, how many messages each completion covers, and when a marker must be posted so an
//! unsignaled tail completes. Kept apart from the device so its rules are tested without one, as
//! `credit.rs` does for the collectives' streams.
//!
//! The rules (IB spec 10.8.3 and 11.4.1.1: an RC send queue completes in order, and an unsignaled
//! work request produces no completion but is finished once a later signaled one completes):
//! - every `moderation`th message is signaled, and its work request id is the number of messages
//!   its completion covers (itself and the unsignaled ones before it);
//! - a marker (a signaled zero-length RDMA WRITE) covers the unsignaled messages posted since the
//!   last signaled one; it is needed only when the poster waits while no signaled request is in
//!   flight;
//! - the messages outstanding are the unsignaled ones plus those covered by signaled requests in
//!   flight; a completion takes its messages off.

/// One queue pair's send queue, counted.
#[derive(Debug, Clone)]
pub(super) struct SendWindow {
    moderation: usize,
    /// Messages posted since the last signaled work request (or marker).
    unsignaled: usize,
    /// Signaled work requests (messages and markers) not yet completed.
    signaled_in_flight: usize,
    /// Messages posted and not yet reported complete.
    outstanding: usize,
}

/// How the next message is posted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Signal {
    pub signaled: bool,
    /// The work request id: messages its completion covers (0 for an unsignaled one).
    pub covers: u64,
}

impl SendWindow {
    pub fn new(moderation: usize) -> SendWindow {
        SendWindow { moderation: moderation.max(1), unsignaled: 0, signaled_in_flight: 0, outstanding: 0 }
    }

    /// Count one more message posted and say how to post it.
    pub fn next(&mut self) -> Signal {
        self.outstanding += 1;
        if self.unsignaled + 1 >= self.moderation {
            let covers = self.unsignaled as u64 + 1;
            self.unsignaled = 0;
            self.signaled_in_flight += 1;
            Signal { signaled: true, covers }
        } else {
            self.unsignaled += 1;
            Signal { signaled: false, covers: 0 }
        }
    }

    /// A waiting poster must post a marker: messages are outstanding and no signaled request is in
    /// flight to complete them.
    pub fn needs_marker(&self) -> bool {
        self.signaled_in_flight == 0 && self.unsignaled > 0
    }

    /// Count a marker posted; returns its work request id (the messages it covers, possibly 0: the
    /// end marker of a stream whose last message was signaled).
    pub fn marker(&mut self) -> u64 {
        let covers = self.unsignaled as u64;
        self.unsignaled = 0;
        self.signaled_in_flight += 1;
        covers
    }

    /// Count `completions` signaled completions covering `messages` messages.
    pub fn completed(&mut self, completions: usize, messages: usize) {
        self.signaled_in_flight = self.signaled_in_flight.saturating_sub(completions);
        self.outstanding = self.outstanding.saturating_sub(messages);
    }

    pub fn outstanding(&self) -> usize {
        self.outstanding
    }

    /// A signaled request is in flight: waiting for a completion can succeed.
    pub fn completion_pending(&self) -> bool {
        self.signaled_in_flight > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Post `count` messages, then drain the way `poll` does: complete every signaled request, then
    /// post a marker if unsignaled messages remain and nothing signaled is in flight. Returns the messages the completions
    /// covered.
    fn run(moderation: usize, count: usize) -> (usize, usize) {
        let mut window = SendWindow::new(moderation);
        let mut in_flight = Vec::new();
        for _ in 0..count {
            let signal = window.next();
            if signal.signaled {
                in_flight.push(signal.covers as usize);
            }
        }
        let mut covered: usize = in_flight.iter().sum();
        window.completed(in_flight.len(), covered);
        let mut markers = 0;
        if window.needs_marker() {
            let marker = window.marker() as usize;
            window.completed(1, marker);
            covered += marker;
            markers += 1;
        }
        assert_eq!(window.outstanding(), 0, "moderation {moderation}, {count} messages");
        assert!(!window.completion_pending() && !window.needs_marker());
        (covered, markers)
    }

    #[test]
    fn every_message_is_covered_once_whatever_the_tail() {
        assert_eq!(run(100, 1001), (1001, 1), "an unsignaled tail of one needs a marker");
        assert_eq!(run(100, 1000), (1000, 0), "a tail that ends signaled needs none");
        assert_eq!(run(1, 7), (7, 0), "every message signaled");
        assert_eq!(run(8, 3), (3, 1));
    }

    #[test]
    fn signaled_requests_cover_the_messages_since_the_previous_one() {
        let mut window = SendWindow::new(3);
        let signals: Vec<Signal> = (0..6).map(|_| window.next()).collect();
        let covers: Vec<u64> = signals.iter().map(|s| s.covers).collect();
        assert_eq!(covers, [0, 0, 3, 0, 0, 3]);
        assert_eq!(window.outstanding(), 6);
        window.completed(1, 3);
        assert_eq!(window.outstanding(), 3);
        assert!(window.completion_pending());
    }

    #[test]
    fn a_zero_moderation_is_one() {
        let mut window = SendWindow::new(0);
        assert_eq!(window.next(), Signal { signaled: true, covers: 1 }, "every message signaled");
    }
}
