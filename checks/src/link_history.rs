//! Link flap and drop state held across samples, for a long-running monitor (`fabricdoctor serve`).
//! One `check` sees one interval; a monitor sees hours, and the faults that matter there are a port
//! that keeps coming back (a flap: repeated returns to ACTIVE, each of which aborted every queue
//! pair on it) and a port that went down and stayed down (a drop). gpud tracks InfiniBand ports the
//! same way (its "ib port flap" and "ib port drop" events); this module is that rule, pure and
//! driven by the caller's clock, so it is tested without waiting.
//!
//! A flap is counted from two sources: observed returns of `state` to ACTIVE
//! between samples (sysfs `ports/N/state`, Documentation/ABI/stable/sysfs-class-infiniband), and
//! growth of the port's `link_downed` counter, which also counts bounces faster than the sampling
//! interval (IBA 1.4 vol. 1 16.1.3.5 PortCounters LinkDownedCounter; Soft-RoCE counts it among its
//! hw_counters).

use std::collections::{BTreeMap, VecDeque};

use crate::finding::{Finding, Verdict};

/// Finding id: a port returned to ACTIVE repeatedly within the window.
pub const FLAPPING: &str = "link.flapping";
/// Finding id: a port down for longer than the drop time.
pub const DROPPED: &str = "link.dropped";

/// When a port is flapping and when it is dropped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkRules {
    /// Flaps are counted over this many seconds.
    pub window_seconds: f64,
    /// This many flaps within the window fail; fewer (but at least one) warn.
    pub flap_threshold: u32,
    /// Down for this long is a drop (gpud: 4 minutes).
    pub drop_after_seconds: f64,
}

impl Default for LinkRules {
    fn default() -> LinkRules {
        LinkRules { window_seconds: 3600.0, flap_threshold: 3, drop_after_seconds: 240.0 }
    }
}

/// One port at one sample.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkReading {
    /// "mlx5_0 port 1".
    pub subject: String,
    /// `state` read as ACTIVE (4); `None` when it could not be read.
    pub active: Option<bool>,
    /// The port's `link_downed` counter, when it has one.
    pub link_downed: Option<u64>,
}

/// What the monitor knows about one port.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkState {
    pub subject: String,
    /// As last read; `None` when the last reading could not tell.
    pub active: Option<bool>,
    /// Flaps since the monitor started.
    pub flaps_total: u64,
    /// Flaps within the window.
    pub flaps_in_window: u32,
    /// Seconds the port has been down, 0 when up.
    pub down_seconds: f64,
    pub flapping: bool,
    pub dropped: bool,
}

#[derive(Debug, Clone, Default)]
struct PortHistory {
    active: Option<bool>,
    link_downed: Option<u64>,
    /// When the port was first seen down in the current down period.
    down_since: Option<f64>,
    /// Times of flaps within the window, oldest first.
    flaps: VecDeque<f64>,
    flaps_total: u64,
    last_seen: f64,
}

/// Every port's history; fed one sample at a time with the caller's monotonic clock.
#[derive(Debug, Clone, Default)]
pub struct LinkHistory {
    rules: LinkRules,
    ports: BTreeMap<String, PortHistory>,
    samples: u64,
    now: f64,
}

impl LinkHistory {
    pub fn new(rules: LinkRules) -> LinkHistory {
        LinkHistory { rules, ..LinkHistory::default() }
    }

    /// Take one sample at `at_seconds` (monotonic). A port missing from the sample (its device
    /// gone, the driver unloaded) is kept and counts as down: a NIC that vanished is not healthy.
    pub fn observe(&mut self, at_seconds: f64, readings: &[LinkReading]) {
        self.samples += 1;
        self.now = at_seconds;
        for reading in readings {
            let port = self.ports.entry(reading.subject.clone()).or_default();
            let returned = port.active == Some(false) && reading.active == Some(true);
            // Each link_downed step is one down. A down that has come back up is a flap; the step
            // of a port that is down now is that down, not yet a flap (it becomes one when the
            // port is seen back, as `returned`). A counter that went backwards was reset (driver
            // reload, `perfquery -R`): no flaps.
            let down_now = reading.active == Some(false);
            let bounced = match (port.link_downed, reading.link_downed) {
                (Some(before), Some(after)) if after >= before => (after - before).saturating_sub(u64::from(down_now)),
                _ => 0,
            };
            let flaps = bounced + u64::from(returned);
            for _ in 0..flaps.min(1024) {
                port.flaps.push_back(at_seconds);
            }
            port.flaps_total += flaps;
            port.link_downed = reading.link_downed.or(port.link_downed);
            if reading.active.is_some() {
                port.active = reading.active;
            }
            match port.active {
                Some(false) => {
                    port.down_since.get_or_insert(at_seconds);
                }
                Some(true) => port.down_since = None,
                None => {}
            }
            port.last_seen = at_seconds;
        }
        for port in self.ports.values_mut() {
            if port.last_seen < at_seconds {
                port.active = Some(false);
                port.down_since.get_or_insert(at_seconds);
            }
            while port.flaps.front().is_some_and(|&at| at_seconds - at > self.rules.window_seconds) {
                port.flaps.pop_front();
            }
        }
    }

    pub fn states(&self) -> Vec<LinkState> {
        self.ports
            .iter()
            .map(|(subject, port)| {
                let flaps_in_window = u32::try_from(port.flaps.len()).unwrap_or(u32::MAX);
                let down_seconds = port.down_since.map_or(0.0, |since| (self.now - since).max(0.0));
                LinkState {
                    subject: subject.clone(),
                    active: port.active,
                    flaps_total: port.flaps_total,
                    flaps_in_window,
                    down_seconds,
                    flapping: flaps_in_window >= self.rules.flap_threshold,
                    dropped: port.down_since.is_some() && down_seconds >= self.rules.drop_after_seconds,
                }
            })
            .collect()
    }

    /// `link.flapping` and `link.dropped` per port. Before the second sample nothing can have
    /// flapped or dropped yet as far as this monitor saw: skip, saying so.
    pub fn findings(&self) -> Vec<Finding> {
        if self.samples < 2 {
            let reason = "needs two samples; the monitor has taken one";
            return vec![
                Finding::new(FLAPPING, Verdict::Skip, "node", reason),
                Finding::new(DROPPED, Verdict::Skip, "node", reason),
            ];
        }
        if self.ports.is_empty() {
            let reason = "no RDMA port found (sys/class/infiniband)";
            return vec![
                Finding::new(FLAPPING, Verdict::Skip, "node", reason),
                Finding::new(DROPPED, Verdict::Skip, "node", reason),
            ];
        }
        let window = humanize(self.rules.window_seconds);
        let mut findings = Vec::new();
        for state in self.states() {
            let flap_verdict = if state.flapping {
                Verdict::Fail
            } else if state.flaps_in_window > 0 {
                Verdict::Warn
            } else {
                Verdict::Pass
            };
            let message = match flap_verdict {
                Verdict::Pass => format!("no flap in the last {window}"),
                _ => format!(
                    "{} flap(s) in the last {window} ({} since the monitor started): each one aborted the queue pairs on the port",
                    state.flaps_in_window, state.flaps_total
                ),
            };
            findings.push(
                Finding::new(FLAPPING, flap_verdict, &state.subject, message)
                    .expected(format!("fewer than {} flaps in {window}", self.rules.flap_threshold))
                    .observed(format!("{} in {window}", state.flaps_in_window)),
            );
            let (drop_verdict, message) = if state.dropped {
                (
                    Verdict::Fail,
                    format!(
                        "down for {} (a drop: longer than {})",
                        humanize(state.down_seconds),
                        humanize(self.rules.drop_after_seconds)
                    ),
                )
            } else if state.active == Some(false) {
                (Verdict::Warn, format!("down for {}", humanize(state.down_seconds)))
            } else if state.active.is_none() {
                (Verdict::Skip, "state could not be read".to_string())
            } else {
                (Verdict::Pass, "up".to_string())
            };
            findings.push(Finding::new(DROPPED, drop_verdict, &state.subject, message));
        }
        findings
    }
}

/// "90 s", "4 min", "1 h" for messages.
fn humanize(seconds: f64) -> String {
    if seconds >= 3600.0 && seconds % 3600.0 == 0.0 {
        format!("{} h", seconds / 3600.0)
    } else if seconds >= 120.0 {
        format!("{:.0} min", seconds / 60.0)
    } else {
        format!("{seconds:.0} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(active: Option<bool>, link_downed: Option<u64>) -> Vec<LinkReading> {
        vec![LinkReading { subject: "mlx5_0 port 1".into(), active, link_downed }]
    }

    fn verdicts(history: &LinkHistory) -> Vec<(String, Verdict)> {
        history.findings().into_iter().map(|f| (f.id, f.verdict)).collect()
    }

    #[test]
    fn returns_to_active_and_counter_growth_are_flaps_counted_once() {
        let mut history = LinkHistory::new(LinkRules::default());
        history.observe(0.0, &port(Some(true), Some(5)));
        assert_eq!(verdicts(&history)[0].1, Verdict::Skip, "one sample cannot show a flap");
        history.observe(60.0, &port(Some(false), Some(6)));
        // Seen down and back, and the counter says the same single down: one flap, not two.
        assert_eq!(history.states()[0].flaps_total, 0, "a port that is down has not flapped yet");
        history.observe(120.0, &port(Some(true), Some(6)));
        assert_eq!(history.states()[0].flaps_total, 1);
        assert_eq!(verdicts(&history), [(FLAPPING.into(), Verdict::Warn), (DROPPED.into(), Verdict::Pass)]);
        // Two bounces between samples: only the counter saw them.
        history.observe(180.0, &port(Some(true), Some(8)));
        let state = &history.states()[0];
        assert_eq!((state.flaps_total, state.flaps_in_window, state.flapping), (3, 3, true));
        assert_eq!(verdicts(&history)[0].1, Verdict::Fail);
        // An hour later the window has forgotten them; the total has not.
        history.observe(3900.0, &port(Some(true), Some(8)));
        let state = &history.states()[0];
        assert_eq!((state.flaps_total, state.flaps_in_window, state.flapping), (3, 0, false));
        assert_eq!(verdicts(&history)[0].1, Verdict::Pass);
        // Down at the last sample, back now, and one more bounce in between: two flaps.
        let mut bounced = LinkHistory::new(LinkRules::default());
        bounced.observe(0.0, &port(Some(false), Some(1)));
        bounced.observe(1.0, &port(Some(true), Some(2)));
        assert_eq!(bounced.states()[0].flaps_total, 2);
        // A counter reset is no flap.
        history.observe(3960.0, &port(Some(true), Some(0)));
        assert_eq!(history.states()[0].flaps_total, 3);
    }

    #[test]
    fn a_long_down_is_a_drop_and_a_vanished_port_counts_as_down() {
        let mut history = LinkHistory::new(LinkRules::default());
        history.observe(0.0, &port(Some(true), None));
        history.observe(10.0, &port(Some(false), None));
        history.observe(200.0, &port(Some(false), None));
        assert_eq!(verdicts(&history)[1].1, Verdict::Warn);
        assert_eq!(history.states()[0].down_seconds, 190.0);
        history.observe(250.0, &port(Some(false), None));
        assert_eq!(verdicts(&history)[1].1, Verdict::Fail);
        assert!(history.states()[0].dropped);
        // Back up: the drop clears, and the return is a flap.
        history.observe(260.0, &port(Some(true), None));
        assert_eq!(verdicts(&history), [(FLAPPING.into(), Verdict::Warn), (DROPPED.into(), Verdict::Pass)]);
        // The device disappears from the sample.
        history.observe(270.0, &[]);
        history.observe(600.0, &[]);
        assert!(history.states()[0].dropped);
        // An unreadable state keeps what was known.
        let mut unreadable = LinkHistory::new(LinkRules::default());
        unreadable.observe(0.0, &port(None, None));
        unreadable.observe(1.0, &port(None, None));
        assert_eq!(verdicts(&unreadable)[1].1, Verdict::Skip);
    }

    #[test]
    fn no_port_skips_with_the_reason() {
        let mut history = LinkHistory::new(LinkRules::default());
        history.observe(0.0, &[]);
        history.observe(1.0, &[]);
        let findings = history.findings();
        assert!(findings.iter().all(|f| f.verdict == Verdict::Skip && f.message.contains("no RDMA port")));
    }
}
