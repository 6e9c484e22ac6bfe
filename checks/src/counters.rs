//! Counter checks: retransmissions, InfiniBand port errors, link flaps, bit error ratio, PFC storms and
//! drops on lossless priorities, and the PFC/ECN configuration RoCE depends on. With two samples a
//! verdict is about growth over the interval; with one sample (`--no-sample`, a single capture) it is
//! about totals since the counters were last reset, and never worse than a warning.

use std::borrow::Cow;
use std::collections::BTreeMap;

use fabricdoctor_probes::counters::{CounterChange, CounterObservation, CounterSource, DeltaStatus, NetdevCounters};
use fabricdoctor_probes::ProbeErrorKind;

use crate::{unreadable, Check, Finding, Inputs, Policy, Verdict};

/// How a counter growing is judged.
#[derive(Debug, Clone)]
struct Rule {
    name: Cow<'static, str>,
    source: CounterSource,
    when_growing: Verdict,
    /// Whether a non-zero total (one sample) means anything; false for counters that normal
    /// operation increments (carrier_changes counts the boot-time link-up too).
    judge_totals: bool,
}

const fn rule(name: &'static str, source: CounterSource, when_growing: Verdict) -> Rule {
    Rule { name: Cow::Borrowed(name), source, when_growing, judge_totals: true }
}

const fn growth_only(name: &'static str, source: CounterSource, when_growing: Verdict) -> Rule {
    Rule { name: Cow::Borrowed(name), source, when_growing, judge_totals: false }
}

fn not_sampled(id: &str) -> Vec<Finding> {
    vec![Finding::new(id, Verdict::Skip, "node", "counters were not sampled")]
}

fn interval_text(observation: &CounterObservation) -> String {
    match observation.interval_seconds {
        Some(seconds) => format!("{seconds:.1} s"),
        None => "an unknown interval".to_string(),
    }
}

/// "local_ack_timeout_err 91316 -> 91500 (+184 in 2.0 s)" / "link_downed 3 (since reset)".
fn describe(change: &CounterChange, observation: &CounterObservation) -> String {
    if change.saturated() {
        return format!(
            "{} saturated at {} (its maximum): reset the counters (perfquery -R)",
            change.name, change.after
        );
    }
    match (change.before, change.status) {
        (Some(before), Some(DeltaStatus::Counted | DeltaStatus::Wrapped)) => format!(
            "{} {} -> {} (+{} in {})",
            change.name,
            before,
            change.after,
            change.delta.unwrap_or(0),
            interval_text(observation)
        ),
        (Some(before), Some(DeltaStatus::Reset)) => {
            format!("{} {} -> {} (reset during the interval)", change.name, before, change.after)
        }
        _ => format!("{} {} (since the counters were last reset)", change.name, change.after),
    }
}

/// Judge the counters named by `rules`, one finding per subject that has any of them.
fn judge(id: &str, observation: &CounterObservation, rules: &[Rule], what: &str) -> Vec<Finding> {
    let two_samples = observation.before.is_some();
    let mut by_subject: BTreeMap<String, Vec<(CounterChange, Verdict)>> = BTreeMap::new();
    for change in observation.changes() {
        let judged = |r: &&Rule| r.source == change.source && r.name == change.name && (two_samples || r.judge_totals);
        if let Some(rule) = rules.iter().find(judged) {
            by_subject.entry(change.subject.clone()).or_default().push((change, rule.when_growing));
        }
    }
    if by_subject.is_empty() {
        let names: Vec<&str> =
            rules.iter().filter(|r| two_samples || r.judge_totals).map(|r| r.name.as_ref()).collect();
        return vec![Finding::new(
            id,
            Verdict::Skip,
            "node",
            format!("no {what} counters on this node ({})", names.join(", ")),
        )];
    }
    by_subject
        .into_iter()
        .map(|(subject, changes)| {
            let saturated: Vec<&CounterChange> = changes.iter().map(|(c, _)| c).filter(|c| c.saturated()).collect();
            let growing: Vec<&(CounterChange, Verdict)> = changes
                .iter()
                .filter(|(c, _)| !c.saturated() && if two_samples { c.delta.unwrap_or(0) > 0 } else { c.after > 0 })
                .collect();
            let worst = growing.iter().map(|(_, v)| *v).max();
            let (verdict, message) = match worst {
                Some(verdict) if two_samples => {
                    let names: Vec<&str> = growing.iter().map(|(c, _)| c.name.as_str()).collect();
                    (verdict, format!("{what} counters growing: {}", names.join(", ")))
                }
                Some(_) => {
                    let names: Vec<&str> = growing.iter().map(|(c, _)| c.name.as_str()).collect();
                    (
                        Verdict::Warn,
                        format!(
                            "{what} counters non-zero since the last reset: {} (one sample: growth not measured)",
                            names.join(", ")
                        ),
                    )
                }
                None if !saturated.is_empty() => (
                    Verdict::Warn,
                    format!(
                        "{} saturated: growth cannot be measured; reset the counters (perfquery -R)",
                        saturated.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                ),
                None if two_samples => {
                    (Verdict::Pass, format!("no {what} counter grew in {}", interval_text(observation)))
                }
                None => (Verdict::Pass, format!("all {what} counters are zero")),
            };
            let verdict = if !saturated.is_empty() && verdict == Verdict::Pass { Verdict::Warn } else { verdict };
            let mut finding = Finding::new(id, verdict, subject, message);
            let mut shown: Vec<&CounterChange> = growing.iter().map(|(c, _)| c).collect();
            // Disjoint: growing counters exclude saturated ones.
            shown.extend(saturated.iter().copied());
            for change in shown {
                finding = finding.evidence(describe(change, observation));
            }
            finding.observed(if two_samples {
                format!("interval {}", interval_text(observation))
            } else {
                "one sample".into()
            })
        })
        .collect()
}

fn counters<'a>(inputs: &Inputs<'a>) -> Option<&'a CounterObservation> {
    inputs.counters
}

use CounterSource::{Ethtool, HardwareCounters, Netdev, PortCounters};

#[derive(Debug)]
pub struct Retransmit;

/// mlx5 names (drivers/infiniband/hw/mlx5/counters.c) and Soft-RoCE's (drivers/infiniband/sw/rxe/
/// rxe_hw_counters.c), which name the same events differently.
const RETRANSMIT_RULES: [Rule; 12] = [
    rule("out_of_seq_request", HardwareCounters, Verdict::Warn),
    rule("rcvd_seq_err", HardwareCounters, Verdict::Warn),
    rule("retry_exceeded_err", HardwareCounters, Verdict::Fail),
    rule("retry_rnr_exceeded_err", HardwareCounters, Verdict::Fail),
    rule("local_ack_timeout_err", HardwareCounters, Verdict::Warn),
    rule("packet_seq_err", HardwareCounters, Verdict::Warn),
    rule("out_of_sequence", HardwareCounters, Verdict::Warn),
    rule("implied_nak_seq_err", HardwareCounters, Verdict::Warn),
    rule("duplicate_request", HardwareCounters, Verdict::Warn),
    rule("roce_adp_retrans", HardwareCounters, Verdict::Warn),
    rule("req_transport_retries_exceeded", HardwareCounters, Verdict::Fail),
    rule("rnr_nak_retry_err", HardwareCounters, Verdict::Fail),
];

impl Check for Retransmit {
    fn id(&self) -> &'static str {
        "rdma.retransmit"
    }
    fn doc_short(&self) -> &'static str {
        "RDMA transport retransmissions: sequence errors, ACK timeouts, retries exceeded"
    }
    fn doc_long(&self) -> &'static str {
        "Samples the RDMA hardware counters (sys/class/infiniband/*/ports/*/hw_counters, mlx5 names) twice. \
         Growing out_of_sequence, packet_seq_err, implied_nak_seq_err, duplicate_request, \
         local_ack_timeout_err or roce_adp_retrans mean packets are lost and retransmitted (a lossy RoCE \
         fabric: PFC/ECN misconfigured, drops on a switch): warn. Growing req_transport_retries_exceeded \
         or rnr_nak_retry_err mean a QP exhausted its retries and broke (NCCL then fails with completion \
         status 12 or 13): fail. One sample judges totals since the last reset (warn at most). mlx5 Q \
         counters are 32-bit and wrap; deltas account for it."
    }
    fn needs_counters(&self) -> bool {
        true
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        match counters(inputs) {
            Some(observation) => judge(self.id(), observation, &RETRANSMIT_RULES, "retransmission"),
            None => not_sampled(self.id()),
        }
    }
}

#[derive(Debug)]
pub struct InfinibandPortErrors;

const PORT_ERROR_RULES: [Rule; 11] = [
    rule("symbol_error", PortCounters, Verdict::Fail),
    rule("link_error_recovery", PortCounters, Verdict::Fail),
    rule("port_rcv_errors", PortCounters, Verdict::Fail),
    rule("port_rcv_remote_physical_errors", PortCounters, Verdict::Fail),
    rule("port_rcv_switch_relay_errors", PortCounters, Verdict::Warn),
    rule("local_link_integrity_errors", PortCounters, Verdict::Fail),
    rule("excessive_buffer_overrun_errors", PortCounters, Verdict::Fail),
    rule("port_xmit_discards", PortCounters, Verdict::Warn),
    rule("port_xmit_constraint_errors", PortCounters, Verdict::Warn),
    rule("port_rcv_constraint_errors", PortCounters, Verdict::Warn),
    rule("VL15_dropped", PortCounters, Verdict::Warn),
];

impl Check for InfinibandPortErrors {
    fn id(&self) -> &'static str {
        "ib.port.errors"
    }
    fn doc_short(&self) -> &'static str {
        "InfiniBand port error counters growing (symbol errors, link recovery, receive errors, overruns)"
    }
    fn doc_long(&self) -> &'static str {
        "Samples the IBTA PortCounters (sys/class/infiniband/*/ports/*/counters). Growing symbol_error, \
         link_error_recovery, port_rcv_errors, port_rcv_remote_physical_errors, \
         local_link_integrity_errors or excessive_buffer_overrun_errors: fail (a bad cable, transceiver or \
         port). Growing port_xmit_discards, constraint errors, switch relay errors or VL15_dropped: warn. \
         These legacy counters are 4 to 32 bits wide and saturate instead of wrapping (IBTA vol. 1 \
         §16.1.3.5); a saturated counter (real captures show 65535, 255, 4294967295) hides all growth and \
         is reported as a warning to reset the counters (perfquery -R)."
    }
    fn needs_counters(&self) -> bool {
        true
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        let Some(observation) = counters(inputs) else {
            return not_sampled(self.id());
        };
        judge(self.id(), observation, &PORT_ERROR_RULES, "port error")
    }
}

/// `port_xmit_wait` (IBTA vol. 1 §16.1.3.5 PortXmitWait): ticks during which the port had data to
/// send and no credits from its peer. That is congestion (back-pressure from the fabric), not an
/// error of the port, and only means something beside the traffic sent in the same interval.
#[derive(Debug)]
pub struct InfinibandCongestion;

/// Share of waiting ticks beside words sent above which a port is called congested: one tick of
/// waiting for every nine 4-byte words sent.
const CONGESTED_WAIT_SHARE: f64 = 0.10;

impl Check for InfinibandCongestion {
    fn id(&self) -> &'static str {
        "ib.congestion"
    }
    fn doc_short(&self) -> &'static str {
        "InfiniBand port waiting for credits (port_xmit_wait) beside the traffic it sent"
    }
    fn doc_long(&self) -> &'static str {
        "Samples port_xmit_wait and port_xmit_data (sys/class/infiniband/*/ports/*/counters). Waiting \
         ticks are back-pressure from the fabric (a congested switch port, a slow receiver, a credit \
         loop), judged relative to traffic: waiting ticks above 10 % of waiting ticks plus 4-byte words \
         sent over the interval warns. A saturated counter warns to reset the counters (perfquery -R). \
         With one sample the total since reset is shown and not judged."
    }
    fn needs_counters(&self) -> bool {
        true
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        let Some(observation) = counters(inputs) else {
            return not_sampled(self.id());
        };
        let changes: Vec<CounterChange> = observation.changes();
        let find = |subject: &str, name: &str| {
            changes.iter().find(|c| c.source == PortCounters && c.subject == subject && c.name == name)
        };
        let waits: Vec<&CounterChange> =
            changes.iter().filter(|c| c.source == PortCounters && c.name == "port_xmit_wait").collect();
        if waits.is_empty() {
            return vec![Finding::new(self.id(), Verdict::Skip, "node", "no port_xmit_wait counter on this node")];
        }
        waits
            .into_iter()
            .map(|wait| {
                let subject = wait.subject.clone();
                if wait.saturated() {
                    return Finding::new(self.id(), Verdict::Warn, subject, describe(wait, observation));
                }
                let (Some(waited), Some(sent)) =
                    (wait.delta, find(&wait.subject, "port_xmit_data").and_then(|d| d.delta))
                else {
                    return Finding::new(
                        self.id(),
                        Verdict::Skip,
                        subject,
                        format!(
                            "{}: congestion is judged over an interval beside port_xmit_data",
                            describe(wait, observation)
                        ),
                    );
                };
                let share = if waited == 0 { 0.0 } else { waited as f64 / (waited as f64 + sent as f64) };
                let text = format!(
                    "waited {waited} ticks for credits while sending {:.1} MB in {} ({:.1} % waiting)",
                    sent as f64 * 4.0 / 1e6,
                    interval_text(observation),
                    share * 100.0
                );
                let verdict = if share > CONGESTED_WAIT_SHARE { Verdict::Warn } else { Verdict::Pass };
                let message = if verdict == Verdict::Warn {
                    format!("{text}: congestion, back-pressure from the fabric (a hot switch port or a slow receiver)")
                } else {
                    text
                };
                Finding::new(self.id(), verdict, subject, message).evidence(describe(wait, observation))
            })
            .collect()
    }
}

#[derive(Debug)]
pub struct LinkFlap;

const FLAP_RULES: [Rule; 4] = [
    rule("link_downed", PortCounters, Verdict::Fail),
    // Soft-RoCE counts link-downs among its hardware counters.
    rule("link_downed", HardwareCounters, Verdict::Fail),
    rule("link_down_events_phy", Ethtool, Verdict::Fail),
    growth_only("carrier_changes", Netdev, Verdict::Fail),
];

impl Check for LinkFlap {
    fn id(&self) -> &'static str {
        "link.flap"
    }
    fn doc_short(&self) -> &'static str {
        "Link went down (link_downed, link_down_events_phy growing)"
    }
    fn doc_long(&self) -> &'static str {
        "Samples InfiniBand link_downed (PortCounters), the Ethernet PHY's link_down_events_phy \
         (ethtool) and the kernel's carrier_changes of every netdev (sysfs-class-net). Growth during the \
         interval: fail — the link is flapping now (a cable, transceiver or \
         switch port), and every flap aborts in-flight RDMA operations. With one sample, non-zero totals \
         are past flaps since the last reset: warn."
    }
    fn needs_counters(&self) -> bool {
        true
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        match counters(inputs) {
            Some(observation) => judge(self.id(), observation, &FLAP_RULES, "link-down"),
            None => not_sampled(self.id()),
        }
    }
}

#[derive(Debug)]
pub struct CnpIgnored;

impl Check for CnpIgnored {
    fn id(&self) -> &'static str {
        "ecn.cnp_ignored"
    }
    fn doc_short(&self) -> &'static str {
        "Congestion notifications (CNPs) arriving but ignored (rp_cnp_ignored growing)"
    }
    fn doc_long(&self) -> &'static str {
        "Samples the mlx5 hardware counter rp_cnp_ignored: CNPs that reached this host's reaction point \
         but did not slow its sender, because DCQCN is disabled for that priority or the CNP arrived on a \
         priority without it. Congestion control is then only PFC: warn."
    }
    fn needs_counters(&self) -> bool {
        true
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        match counters(inputs) {
            Some(observation) => {
                judge(self.id(), observation, &[rule("rp_cnp_ignored", HardwareCounters, Verdict::Warn)], "ignored-CNP")
            }
            None => not_sampled(self.id()),
        }
    }
}

/// The per-priority ethtool counter `rx_prio3_pause` -> ("rx", 3, "pause").
fn priority_counter(name: &str) -> Option<(&str, u8, &str)> {
    let (direction, rest) = name.split_once("_prio")?;
    let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
    let priority = rest[..digits].parse().ok()?;
    let kind = rest[digits..].strip_prefix('_')?;
    Some((direction, priority, kind))
}

fn roce_netdevs(observation: &CounterObservation) -> impl Iterator<Item = &NetdevCounters> {
    observation.after.netdevs.iter().filter(|n| !n.rdma_devices.is_empty())
}

#[derive(Debug)]
pub struct PfcStorm;

impl Check for PfcStorm {
    fn id(&self) -> &'static str {
        "pfc.storm"
    }
    fn doc_short(&self) -> &'static str {
        "PFC pause storm: storm events, or a priority paused for too much of the interval"
    }
    fn doc_long(&self) -> &'static str {
        "Samples the ethtool counters of each netdev. Growing tx_pause_storm_error_events (the NIC's \
         storm watchdog stopped sending pauses: a stuck receiver) fails; growing \
         tx_pause_storm_warning_events warns. With two samples, a priority whose rx_prioN_pause_duration \
         or tx_prioN_pause_duration (microseconds, mlx5) covers more than counters.pause_share_warn \
         (default 10%) of the interval warns: the link is stalled by back-pressure, which spreads \
         congestion through the fabric (head-of-line blocking, deadlocks)."
    }
    fn needs_counters(&self) -> bool {
        true
    }
    fn evaluate(&self, inputs: &Inputs<'_>, policy: &Policy) -> Vec<Finding> {
        let Some(observation) = counters(inputs) else {
            return not_sampled(self.id());
        };
        let rules = [
            rule("tx_pause_storm_error_events", Ethtool, Verdict::Fail),
            rule("tx_pause_storm_warning_events", Ethtool, Verdict::Warn),
        ];
        let mut findings = judge(self.id(), observation, &rules, "pause-storm");
        let Some(seconds) = observation.interval_seconds.filter(|_| observation.before.is_some()) else {
            return findings;
        };
        let share_limit = policy.counters.pause_share_warn;
        for change in observation.changes() {
            let Some((direction, priority, "pause_duration")) = priority_counter(&change.name) else {
                continue;
            };
            let Some(paused_microseconds) = change.delta else {
                continue;
            };
            let share = paused_microseconds as f64 / (seconds * 1e6);
            if share > share_limit {
                findings.push(
                    Finding::new(
                        self.id(),
                        Verdict::Warn,
                        change.subject.clone(),
                        format!(
                            "priority {priority} {} paused {:.0}% of the interval (limit {:.0}%): PFC back-pressure is stalling the link",
                            if direction == "rx" { "received pauses and was" } else { "sent pauses and its peer was" },
                            share * 100.0,
                            share_limit * 100.0
                        ),
                    )
                    .evidence(describe(&change, observation))
                    .expected(format!("<= {:.0}% paused", share_limit * 100.0))
                    .observed(format!("{:.0}% paused", share * 100.0)),
                );
            }
        }
        findings
    }
}

#[derive(Debug)]
pub struct LosslessDrops;

impl Check for LosslessDrops {
    fn id(&self) -> &'static str {
        "pfc.lossless_drops"
    }
    fn doc_short(&self) -> &'static str {
        "Packets dropped on a PFC-enabled (lossless) priority"
    }
    fn doc_long(&self) -> &'static str {
        "Samples rx_prioN_discards, rx_prioN_buf_discard and rx_prioN_cong_discard (ethtool, mlx5) for the \
         priorities PFC protects (from DCB; when DCB cannot tell, the priorities that carry pause frames, \
         else counters.roce_priority). Drops on a lossless priority mean PFC is not doing its job (headroom \
         buffer too small, PFC off on the peer or switch): fail. rx_discards_phy (drops at the port before \
         classification) growing: warn."
    }
    fn needs_counters(&self) -> bool {
        true
    }
    fn evaluate(&self, inputs: &Inputs<'_>, policy: &Policy) -> Vec<Finding> {
        let Some(observation) = counters(inputs) else {
            return not_sampled(self.id());
        };
        let changes = observation.changes();
        let mut findings = Vec::new();
        for netdev in observation.after.netdevs.iter() {
            let own: Vec<&CounterChange> =
                changes.iter().filter(|c| c.source == Ethtool && c.subject == netdev.netdev).collect();
            let has_priority_counters = own.iter().any(|c| priority_counter(&c.name).is_some());
            if !has_priority_counters {
                continue;
            }
            let (lossless, how) = lossless_priorities(netdev, &own, policy);
            let lossless_names: Vec<String> = own
                .iter()
                .filter_map(|c| {
                    let (direction, priority, kind) = priority_counter(&c.name)?;
                    (direction == "rx"
                        && lossless.contains(&priority)
                        && matches!(kind, "discards" | "buf_discard" | "cong_discard"))
                    .then(|| c.name.clone())
                })
                .collect();
            let mut rules: Vec<Rule> = lossless_names
                .into_iter()
                .map(|name| Rule {
                    name: Cow::Owned(name),
                    source: Ethtool,
                    when_growing: Verdict::Fail,
                    judge_totals: true,
                })
                .collect();
            rules.push(rule("rx_discards_phy", Ethtool, Verdict::Warn));
            let narrowed = CounterObservation {
                before: observation.before.as_ref().map(|b| only_netdev(b, &netdev.netdev)),
                after: only_netdev(&observation.after, &netdev.netdev),
                interval_seconds: observation.interval_seconds,
            };
            for finding in judge(self.id(), &narrowed, &rules, "lossless-priority drop") {
                findings.push(finding.evidence(format!("lossless priorities {lossless:?} ({how})")));
            }
        }
        if findings.is_empty() {
            findings.push(Finding::new(
                self.id(),
                Verdict::Skip,
                "node",
                "no netdev reports per-priority counters (rx_prioN_*)",
            ));
        }
        findings
    }
}

fn only_netdev(
    sample: &fabricdoctor_probes::counters::CounterSample,
    netdev: &str,
) -> fabricdoctor_probes::counters::CounterSample {
    fabricdoctor_probes::counters::CounterSample {
        uptime_seconds: sample.uptime_seconds.clone(),
        ports: Vec::new(),
        netdevs: sample.netdevs.iter().filter(|n| n.netdev == netdev).cloned().collect(),
        unreadable: Vec::new(),
    }
}

/// The priorities PFC protects on a netdev, and how that was learned.
fn lossless_priorities(netdev: &NetdevCounters, own: &[&CounterChange], policy: &Policy) -> (Vec<u8>, &'static str) {
    if let Ok(pfc) = &netdev.pfc {
        return (pfc.enabled_priorities.clone(), "from DCB");
    }
    let mut paused: Vec<u8> = own
        .iter()
        .filter(|c| c.after > 0)
        .filter_map(|c| priority_counter(&c.name).filter(|(_, _, kind)| *kind == "pause").map(|(_, p, _)| p))
        .collect();
    paused.sort_unstable();
    paused.dedup();
    if paused.is_empty() {
        (vec![policy.counters.roce_priority], "DCB unavailable; policy counters.roce_priority")
    } else {
        (paused, "DCB unavailable; priorities carrying pause frames")
    }
}

#[derive(Debug)]
pub struct PfcConfig;

impl Check for PfcConfig {
    fn id(&self) -> &'static str {
        "pfc.config"
    }
    fn doc_short(&self) -> &'static str {
        "PFC enabled on no priority, or on more than the RDMA class, on a RoCE netdev"
    }
    fn doc_long(&self) -> &'static str {
        "Reads IEEE PFC through DCB netlink (dcbnl, DCB_CMD_IEEE_GET) on each netdev that carries RoCE. \
         PFC on no priority: warn — RoCE runs lossy and depends entirely on ECN and retransmission. PFC on \
         several priorities: warn — only the RDMA class should be lossless; more lossless classes mean \
         more pause spreading and buffer headroom spent. Drivers without DCB support: skip."
    }
    fn needs_counters(&self) -> bool {
        true
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        let Some(observation) = counters(inputs) else {
            return not_sampled(self.id());
        };
        let findings: Vec<Finding> = roce_netdevs(observation)
            .map(|netdev| {
                let subject = format!("{} ({})", netdev.netdev, netdev.rdma_devices.join(","));
                let pfc = match &netdev.pfc {
                    Ok(pfc) => pfc,
                    Err(error) if error.is_not_found() => {
                        return Finding::new(self.id(), Verdict::Skip, subject, "no DCB PFC configuration reported (the driver has no DCB support, or the capture holds none)");
                    }
                    Err(error) => return unreadable(self.id(), subject, error),
                };
                let trust = pfc.trust.as_deref().unwrap_or("unknown");
                let (verdict, message) = match pfc.enabled_priorities.as_slice() {
                    [] => (Verdict::Warn, "PFC enabled on no priority: RoCE traffic is lossy".to_string()),
                    [one] => (Verdict::Pass, format!("PFC on priority {one} only")),
                    several => (
                        Verdict::Warn,
                        format!("PFC on priorities {several:?}: more lossless classes than the RDMA one"),
                    ),
                };
                Finding::new(self.id(), verdict, subject, message)
                    .evidence(format!("DCB IEEE PFC enabled {:?}, trust {trust}", pfc.enabled_priorities))
                    .expected("PFC on exactly the RDMA priority")
                    .observed(format!("{:?}", pfc.enabled_priorities))
            })
            .collect();
        if findings.is_empty() {
            return vec![Finding::new(self.id(), Verdict::Skip, "node", "no RoCE netdev on this node")];
        }
        findings
    }
}

#[derive(Debug)]
pub struct EcnConfig;

impl Check for EcnConfig {
    fn id(&self) -> &'static str {
        "ecn.config"
    }
    fn doc_short(&self) -> &'static str {
        "ECN/DCQCN not enabled for the RoCE priority"
    }
    fn doc_long(&self) -> &'static str {
        "Reads sys/class/net/<if>/ecn/roce_np/enable/<prio> (notification point: turns ECN marks into CNPs) \
         and roce_rp/enable/<prio> (reaction point: slows down on CNPs) for the RoCE priority (the single \
         PFC-enabled priority, else counters.roce_priority). Either disabled: fail — without DCQCN, \
         congestion is handled only by PFC pauses (storms, victim flows) or by drops. The DCQCN firmware \
         parameters (debugfs mlx5/<pci>/cc_params) are shown when readable, else reported as skipped \
         (needs root and debugfs)."
    }
    fn needs_counters(&self) -> bool {
        true
    }
    fn evaluate(&self, inputs: &Inputs<'_>, policy: &Policy) -> Vec<Finding> {
        let Some(observation) = counters(inputs) else {
            return not_sampled(self.id());
        };
        let mut findings = Vec::new();
        for netdev in roce_netdevs(observation) {
            let subject = format!("{} ({})", netdev.netdev, netdev.rdma_devices.join(","));
            let priority = match &netdev.pfc {
                Ok(pfc) if pfc.enabled_priorities.len() == 1 => pfc.enabled_priorities[0],
                _ => policy.counters.roce_priority,
            };
            let ecn = match &netdev.ecn {
                Ok(ecn) => ecn,
                Err(error) if error.is_not_found() => {
                    findings.push(Finding::new(
                        self.id(),
                        Verdict::Skip,
                        subject,
                        "no ECN settings in sysfs (sys/class/net/<if>/ecn) for this driver",
                    ));
                    continue;
                }
                Err(error) => {
                    findings.push(unreadable(self.id(), subject, error));
                    continue;
                }
            };
            let np = ecn.notification_point.contains(&priority);
            let rp = ecn.reaction_point.contains(&priority);
            let mut finding = match (np, rp) {
                (true, true) => Finding::new(self.id(), Verdict::Pass, subject.clone(), format!("ECN (DCQCN) on for priority {priority}")),
                _ => Finding::new(
                    self.id(),
                    Verdict::Fail,
                    subject.clone(),
                    format!(
                        "ECN off for RoCE priority {priority}: notification point {}, reaction point {}; congestion is left to PFC and drops",
                        if np { "on" } else { "off" },
                        if rp { "on" } else { "off" }
                    ),
                ),
            }
            .evidence(format!(
                "roce_np enabled on {:?}, roce_rp enabled on {:?}",
                ecn.notification_point, ecn.reaction_point
            ))
            .expected(format!("roce_np and roce_rp enabled on priority {priority}"));
            match &netdev.cc_params {
                Ok(parameters) => {
                    let shown: Vec<String> = parameters.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    finding = finding.evidence(format!("cc_params: {}", shown.join(" ")));
                    findings.push(finding);
                }
                Err(error) => {
                    findings.push(finding);
                    let why = match error.kind {
                        ProbeErrorKind::NotInCapture => format!("not in this capture ({})", error.path.display()),
                        ProbeErrorKind::PermissionDenied => "needs root".to_string(),
                        ProbeErrorKind::NotFound => "debugfs is not mounted at /sys/kernel/debug, or the driver \
                                                     exposes no cc_params"
                            .to_string(),
                        _ => error.to_string(),
                    };
                    findings.push(Finding::new(
                        self.id(),
                        Verdict::Skip,
                        format!("{subject} cc_params"),
                        format!("DCQCN firmware parameters (debugfs mlx5/<pci>/cc_params) not read: {why}"),
                    ));
                }
            }
        }
        if findings.is_empty() {
            findings.push(Finding::new(self.id(), Verdict::Skip, "node", "no RoCE netdev on this node"));
        }
        findings
    }
}

#[derive(Debug)]
pub struct BitErrorRatio;

impl Check for BitErrorRatio {
    fn id(&self) -> &'static str {
        "phy.ber"
    }
    fn doc_short(&self) -> &'static str {
        "Physical bit error ratio too high (symbol errors or corrected bits over received bits)"
    }
    fn doc_long(&self) -> &'static str {
        "From the PHY counters of ethtool (mlx5: rx_bits_phy, rx_pcs_symbol_err_phy, \
         rx_corrected_bits_phy), over the interval (two samples) or since reset (one sample). Effective \
         BER — uncorrectable symbol errors over bits — above counters.effective_ber_fail (default 1e-12, \
         the IEEE 802.3 target): fail, packets are being lost on the wire. Pre-FEC BER — corrected bits \
         over bits — above counters.corrected_ber_warn (default 1e-5): warn, the link survives on FEC \
         with little margin (clean optics and cables, check transceivers)."
    }
    fn needs_counters(&self) -> bool {
        true
    }
    fn evaluate(&self, inputs: &Inputs<'_>, policy: &Policy) -> Vec<Finding> {
        let Some(observation) = counters(inputs) else {
            return not_sampled(self.id());
        };
        let two_samples = observation.before.is_some();
        let changes = observation.changes();
        let mut findings = Vec::new();
        for netdev in &observation.after.netdevs {
            let amount = |name: &str| -> Option<u64> {
                let change =
                    changes.iter().find(|c| c.source == Ethtool && c.subject == netdev.netdev && c.name == name)?;
                if two_samples {
                    change.delta
                } else {
                    Some(change.after)
                }
            };
            let Some(bits) = amount("rx_bits_phy") else {
                continue;
            };
            let subject = netdev.netdev.clone();
            if bits == 0 {
                findings.push(Finding::new(
                    self.id(),
                    Verdict::Skip,
                    subject,
                    "no bits received: the ratio is undefined",
                ));
                continue;
            }
            let symbol_errors = amount("rx_pcs_symbol_err_phy");
            let corrected = amount("rx_corrected_bits_phy");
            let effective = symbol_errors.map(|e| e as f64 / bits as f64);
            let pre_fec = corrected.map(|c| c as f64 / bits as f64);
            let span = if two_samples { format!("over {}", interval_text(observation)) } else { "since reset".into() };
            let (verdict, message) = if effective.is_some_and(|b| b > policy.counters.effective_ber_fail) {
                (
                    Verdict::Fail,
                    format!("effective BER {:.2e} {span}: uncorrectable errors on the wire", effective.unwrap_or(0.0)),
                )
            } else if pre_fec.is_some_and(|b| b > policy.counters.corrected_ber_warn) {
                (
                    Verdict::Warn,
                    format!(
                        "pre-FEC BER {:.2e} {span}: the link relies on FEC with little margin",
                        pre_fec.unwrap_or(0.0)
                    ),
                )
            } else {
                (Verdict::Pass, format!("BER within limits {span}"))
            };
            findings.push(
                Finding::new(self.id(), verdict, subject, message)
                    .evidence(format!(
                        "rx_bits_phy {bits}, rx_pcs_symbol_err_phy {}, rx_corrected_bits_phy {}",
                        symbol_errors.map(|v| v.to_string()).unwrap_or_else(|| "absent".into()),
                        corrected.map(|v| v.to_string()).unwrap_or_else(|| "absent".into())
                    ))
                    .expected(format!(
                        "effective <= {:.0e}, pre-FEC <= {:.0e}",
                        policy.counters.effective_ber_fail, policy.counters.corrected_ber_warn
                    ))
                    .observed(format!(
                        "effective {}, pre-FEC {}",
                        effective.map(|b| format!("{b:.2e}")).unwrap_or_else(|| "unknown".into()),
                        pre_fec.map(|b| format!("{b:.2e}")).unwrap_or_else(|| "unknown".into())
                    )),
            );
        }
        if findings.is_empty() {
            findings.push(Finding::new(
                self.id(),
                Verdict::Skip,
                "node",
                "no netdev reports PHY bit counters (rx_bits_phy)",
            ));
        }
        findings
    }
}

#[cfg(test)]
mod tests {
    use super::priority_counter;

    #[test]
    fn per_priority_counter_names_split() {
        assert_eq!(priority_counter("rx_prio3_pause_duration"), Some(("rx", 3, "pause_duration")));
        assert_eq!(priority_counter("tx_prio0_pause"), Some(("tx", 0, "pause")));
        assert_eq!(priority_counter("rx_prio7_buf_discard"), Some(("rx", 7, "buf_discard")));
        assert_eq!(priority_counter("rx_discards_phy"), None);
        assert_eq!(priority_counter("rx_prio_pause"), None);
    }
}
