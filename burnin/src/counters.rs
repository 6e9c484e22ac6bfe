//! Counter growth per interval for the burn-in timeline: the agent samples its node's counters
//! (fabricdoctor_probes::counters) and PCIe AER totals, computes deltas against its previous sample
//! with the probes' reset/wrap/saturation arithmetic, groups them by what they mean for the fabric,
//! and judges the interval with the registry's counter checks.

use std::collections::BTreeMap;
use std::time::Instant;

use fabricdoctor_checks::{registry, Check, Finding, Inputs, Policy, Verdict};
use fabricdoctor_probes::counters::{read_sample, CounterObservation, CounterSource, DeltaStatus};
use fabricdoctor_probes::{NodeSnapshot, SysRoot};
use fabricdoctor_report::burnin::{CounterCategories, CounterDelta};

/// Counter checks that judge growth over an interval (the configuration checks belong to `check`).
/// The optics checks judge each interval's module readings (temperature under load, a lane going
/// dark, a latched alarm).
pub const INTERVAL_CHECKS: [&str; 10] = [
    "rdma.retransmit",
    "ib.port.errors",
    "link.flap",
    "ecn.cnp_ignored",
    "pfc.storm",
    "pfc.lossless_drops",
    "phy.ber",
    "optics.temperature",
    "optics.power",
    "optics.alarms",
];

/// Retransmission and transport retry counters (mlx5 hw_counters; the rdma.retransmit check's list).
const RETRANSMITS: [&str; 12] = [
    "out_of_seq_request",
    "rcvd_seq_err",
    "retry_exceeded_err",
    "retry_rnr_exceeded_err",
    "local_ack_timeout_err",
    "packet_seq_err",
    "out_of_sequence",
    "implied_nak_seq_err",
    "duplicate_request",
    "roce_adp_retrans",
    "req_transport_retries_exceeded",
    "rnr_nak_retry_err",
];

/// Port, link and netdev error counters (IBTA PortCounters errors, link_downed, carrier_changes,
/// kernel netdev statistics' errors and drops, mlx5 ethtool PHY errors).
const PORT_ERRORS: [&str; 23] = [
    "symbol_error",
    "link_error_recovery",
    "port_rcv_errors",
    "port_rcv_remote_physical_errors",
    "port_rcv_switch_relay_errors",
    "local_link_integrity_errors",
    "excessive_buffer_overrun_errors",
    "port_xmit_discards",
    "port_xmit_constraint_errors",
    "port_rcv_constraint_errors",
    "VL15_dropped",
    "link_downed",
    "link_down_events_phy",
    "carrier_changes",
    "rx_errors",
    "tx_errors",
    "rx_dropped",
    "tx_dropped",
    "rx_crc_errors",
    "rx_frame_errors",
    "rx_discards_phy",
    "rx_symbol_err_phy",
    "rx_out_of_buffer",
];

/// The category a counter's growth is summed into.
pub fn category(source: &str, name: &str) -> Option<&'static str> {
    if source == "pcie_aer" {
        return Some("pcie_aer");
    }
    if name.contains("cnp") || name.contains("ecn_marked") {
        return Some("ecn_cnp");
    }
    // ethtool rx_pause/tx_pause, per-priority rx_prio3_pause, mlx5 *_pause_ctrl_phy; durations and
    // storm events are not frame counts.
    if name.contains("pause") && !name.contains("duration") && !name.contains("storm") && !name.contains("transition") {
        return Some("pfc_pause");
    }
    if RETRANSMITS.contains(&name) {
        return Some("retransmits");
    }
    if PORT_ERRORS.contains(&name) {
        return Some("port_errors");
    }
    None
}

fn add(totals: &mut CounterCategories, category: &str, delta: u64) {
    let slot = match category {
        "pfc_pause" => &mut totals.pfc_pause,
        "ecn_cnp" => &mut totals.ecn_cnp,
        "retransmits" => &mut totals.retransmits,
        "port_errors" => &mut totals.port_errors,
        "pcie_aer" => &mut totals.pcie_aer,
        _ => return,
    };
    *slot = slot.saturating_add(delta);
}

fn source_name(source: CounterSource) -> &'static str {
    match source {
        CounterSource::PortCounters => "port_counters",
        CounterSource::HardwareCounters => "hardware_counters",
        CounterSource::Ethtool => "ethtool",
        CounterSource::Netdev => "netdev",
    }
}

fn status_name(status: DeltaStatus) -> &'static str {
    match status {
        DeltaStatus::Counted => "counted",
        DeltaStatus::Wrapped => "wrapped",
        DeltaStatus::Reset => "reset",
        DeltaStatus::Saturated => "saturated",
        DeltaStatus::Missing => "missing",
    }
}

/// PCIe AER totals of the fabric's endpoints (NICs and GPUs): (pci address, class, total).
pub fn aer_totals(node: &NodeSnapshot) -> AerTotals {
    let inputs = Inputs::new(node);
    let mut totals = BTreeMap::new();
    for function in &inputs.endpoints {
        if let Some(aer) = &function.aer {
            let address = function.address.to_string();
            totals.insert((address.clone(), "correctable"), aer.total_correctable);
            totals.insert((address.clone(), "nonfatal"), aer.total_nonfatal);
            totals.insert((address, "fatal"), aer.total_fatal);
        }
    }
    totals
}

/// One interval's result.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalGrowth {
    pub interval_s: Option<f64>,
    pub totals: CounterCategories,
    pub deltas: Vec<CounterDelta>,
    pub findings: Vec<Finding>,
    pub unreadable: usize,
    /// Which congestion signals this node has counters for at all (moving or not).
    pub observable: Observable,
    /// TCP segments retransmitted over the interval (`Tcp: RetransSegs` of proc/net/snmp, per
    /// network namespace; RFC 4293 tcpRetransSegs); `None` when unreadable or on the first sample.
    pub tcp_retransmits: Option<u64>,
    /// TCP segments sent over the interval (`OutSegs`), the denominator of the retransmissions.
    pub tcp_segments_sent: Option<u64>,
    /// The fabric ports' module temperatures at the end of the interval.
    pub optics: Vec<ModuleTemperature>,
}

/// One module's temperature as an agent read it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ModuleTemperature {
    pub netdev: String,
    pub module: String,
    pub temperature_c: f64,
}

/// The temperatures of the modules `node` could read.
pub fn module_temperatures(node: &NodeSnapshot) -> Vec<ModuleTemperature> {
    node.optics
        .iter()
        .flatten()
        .filter_map(|reading| {
            let module = reading.module.as_ref().ok()?;
            Some(ModuleTemperature {
                netdev: reading.netdev.clone(),
                module: format!("{} {} {}", module.identifier_name, module.vendor, module.part_number),
                temperature_c: module.temperature_c?,
            })
        })
        .collect()
}

/// Whether PFC pause and ECN/CNP counters exist on a node (a node without them cannot show which
/// mechanism acted).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Observable {
    pub pfc: bool,
    pub ecn: bool,
}

/// The congestion signals an observation's counters can show.
pub fn observable(observation: &CounterObservation) -> Observable {
    let mut seen = Observable::default();
    for change in observation.changes() {
        match category(source_name(change.source), &change.name) {
            Some("pfc_pause") => seen.pfc = true,
            Some("ecn_cnp") => seen.ecn = true,
            _ => {}
        }
    }
    seen
}

/// (`RetransSegs`, `OutSegs`) from the text of proc/net/snmp: the `Tcp:` header line names the
/// columns, the next `Tcp:` line holds the values (proc(5), /proc/net/snmp; RFC 4293).
pub fn tcp_segments(snmp: &str) -> Option<(u64, u64)> {
    let mut tcp = snmp.lines().filter(|l| l.starts_with("Tcp:"));
    let (header, values) = (tcp.next()?, tcp.next()?);
    let column = |name: &str| -> Option<u64> {
        let index = header.split_whitespace().position(|column| column == name)?;
        values.split_whitespace().nth(index)?.parse().ok()
    };
    Some((column("RetransSegs")?, column("OutSegs")?))
}

/// Deltas of an observation (and AER totals before/after) grouped into categories. Counters that did
/// not move are left out; ones that cannot be measured (saturated) are kept with their status.
pub fn growth(
    observation: &CounterObservation,
    aer_before: Option<&AerTotals>,
    aer_after: &AerTotals,
) -> (CounterCategories, Vec<CounterDelta>) {
    let mut totals = CounterCategories::default();
    let mut deltas = Vec::new();
    if observation.before.is_none() {
        return (totals, deltas);
    }
    for change in observation.changes() {
        let Some(status) = change.status else { continue };
        let moved = change.delta.is_some_and(|d| d > 0);
        let unmeasurable = status == DeltaStatus::Saturated;
        if !moved && !unmeasurable {
            continue;
        }
        let source = source_name(change.source);
        let category = category(source, &change.name);
        if let (Some(category), Some(delta)) = (category, change.delta) {
            add(&mut totals, category, delta);
        }
        // Data and packet counters move under any load; only categorised ones are worth a line.
        if category.is_some() {
            deltas.push(CounterDelta {
                source: source.to_string(),
                subject: change.subject.clone(),
                name: change.name.clone(),
                delta: change.delta,
                status: status_name(status).to_string(),
                category: category.map(str::to_string),
            });
        }
    }
    if let Some(before) = aer_before {
        for ((address, class), after) in aer_after {
            let Some(previous) = before.get(&(address.clone(), *class)) else { continue };
            let (delta, status) = if after >= previous {
                (after - previous, "counted")
            } else {
                // sysfs AER totals only reset with the device (hot reset, driver reload).
                (*after, "reset")
            };
            if delta > 0 {
                add(&mut totals, "pcie_aer", delta);
                deltas.push(CounterDelta {
                    source: "pcie_aer".into(),
                    subject: address.clone(),
                    name: format!("aer_{class}"),
                    delta: Some(delta),
                    status: status.into(),
                    category: Some("pcie_aer".into()),
                });
            }
        }
    }
    (totals, deltas)
}

/// Counter checks over the interval, keeping only verdicts worse than pass that looked at something
/// (a skip for "no such counters on this node" is no news in every interval).
pub fn judge(node: &NodeSnapshot, observation: &CounterObservation) -> Vec<Finding> {
    let policy = Policy::default();
    let inputs = Inputs::new(node).with_counters(Some(observation));
    registry()
        .iter()
        .filter(|check| INTERVAL_CHECKS.contains(&check.id()))
        .flat_map(|check: &&dyn Check| check.evaluate(&inputs, &policy))
        .filter(|finding| matches!(finding.verdict, Verdict::Warn | Verdict::Error | Verdict::Fail))
        .collect()
}

/// AER totals by (PCI address, class).
pub type AerTotals = BTreeMap<(String, &'static str), u64>;

/// The agent's sampler: one per coordinator connection.
#[derive(Debug, Default)]
pub struct Sampler {
    previous: Option<(fabricdoctor_probes::counters::CounterSample, AerTotals, Instant)>,
    previous_tcp: Option<(u64, u64)>,
}

impl Sampler {
    pub fn sample(&mut self, root: &SysRoot) -> IntervalGrowth {
        let mut node = NodeSnapshot::probe(root);
        // The optics are judged every interval, and their temperatures kept for the peaks.
        node.read_optics(root);
        let sample = read_sample(root);
        let aer = aer_totals(&node);
        let now = Instant::now();
        let unreadable = sample.unreadable.len();
        let (before, aer_before, measured) = match self.previous.take() {
            Some((sample, aer, at)) => (Some(sample), Some(aer), Some(now.duration_since(at).as_secs_f64())),
            None => (None, None, None),
        };
        let observation = CounterObservation::new(before, sample, measured);
        let (totals, deltas) = growth(&observation, aer_before.as_ref(), &aer);
        let findings = if observation.before.is_some() { judge(&node, &observation) } else { Vec::new() };
        let interval_s = observation.interval_seconds.filter(|_| observation.before.is_some());
        let observable = observable(&observation);
        let tcp = root.read_string("proc/net/snmp").ok().and_then(|text| tcp_segments(&text));
        let (tcp_retransmits, tcp_segments_sent) = match (self.previous_tcp, tcp) {
            (Some(before), Some(now)) => (Some(now.0.saturating_sub(before.0)), Some(now.1.saturating_sub(before.1))),
            _ => (None, None),
        };
        self.previous_tcp = tcp;
        self.previous = Some((observation.after, aer, now));
        IntervalGrowth {
            interval_s,
            totals,
            deltas,
            findings,
            unreadable,
            observable,
            tcp_retransmits,
            tcp_segments_sent,
            optics: module_temperatures(&node),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_interval_judges_the_optics_and_reports_their_temperatures() {
        let root = SysRoot::captured(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/optics-hot"));
        let mut sampler = Sampler::default();
        let first = sampler.sample(&root);
        assert!(first.findings.is_empty(), "the first sample is the baseline");
        let second = sampler.sample(&root);
        let hot: Vec<&Finding> = second.findings.iter().filter(|f| f.id == "optics.temperature").collect();
        assert_eq!(hot.len(), 1, "{:?}", second.findings);
        assert_eq!((hot[0].verdict, hot[0].subject.as_str()), (Verdict::Fail, "ibp93s0 (mlx5_3)"));
        assert_eq!(second.optics.len(), 8);
        let peak = second.optics.iter().find(|m| m.netdev == "ibp93s0").expect("mlx5_3's module");
        assert_eq!((peak.temperature_c, peak.module.as_str()), (72.0, "OSFP NVIDIA MMA4Z00-NS400"));
    }

    #[test]
    fn counters_fall_into_their_categories() {
        assert_eq!(category("ethtool", "rx_prio3_pause"), Some("pfc_pause"));
        assert_eq!(category("ethtool", "tx_pause_ctrl_phy"), Some("pfc_pause"));
        assert_eq!(category("ethtool", "rx_prio3_pause_duration"), None);
        assert_eq!(category("ethtool", "tx_pause_storm_error_events"), None);
        assert_eq!(category("hardware_counters", "np_cnp_sent"), Some("ecn_cnp"));
        assert_eq!(category("hardware_counters", "np_ecn_marked_roce_packets"), Some("ecn_cnp"));
        assert_eq!(category("hardware_counters", "local_ack_timeout_err"), Some("retransmits"));
        assert_eq!(category("port_counters", "symbol_error"), Some("port_errors"));
        assert_eq!(category("netdev", "tx_dropped"), Some("port_errors"));
        assert_eq!(category("pcie_aer", "aer_correctable"), Some("pcie_aer"));
        assert_eq!(category("port_counters", "port_xmit_data"), None);
    }

    #[test]
    fn growth_is_summed_by_category_from_two_fixture_samples() {
        // The counters fixture pairs (tests/fixtures/counters/<case>/{before,after}) feed the probes'
        // own sampler; any pair whose counters moved must produce categorised lines that add up.
        let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/counters");
        let mut seen_growth = false;
        for case in std::fs::read_dir(fixtures).expect("counter fixtures").flatten() {
            let (before, after) = (case.path().join("before"), case.path().join("after"));
            if !before.is_dir() || !after.is_dir() {
                continue;
            }
            let before = read_sample(&SysRoot::captured(&before));
            let after = read_sample(&SysRoot::captured(&after));
            let observation = CounterObservation::new(Some(before), after, Some(1.0));
            let (totals, deltas) = growth(&observation, None, &BTreeMap::new());
            let summed: u64 = deltas.iter().filter_map(|d| d.delta).sum();
            assert_eq!(summed, totals.total(), "{}: {deltas:?}", case.path().display());
            seen_growth |= totals.total() > 0;
        }
        assert!(seen_growth, "no fixture pair had categorised counter growth");
    }

    #[test]
    fn tcp_retransmissions_are_read_by_column_name() {
        let snmp = "Ip: Forwarding DefaultTTL\nIp: 1 64\nTcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\nTcp: 1 200 120000 -1 10 5 0 0 2 1000 900 37 0 3 0\n";
        assert_eq!(tcp_segments(snmp), Some((37, 900)));
        assert_eq!(tcp_segments("Tcp: RetransSegs\n"), None, "no values line");
        assert_eq!(tcp_segments("garbage"), None);
    }

    #[test]
    fn aer_growth_counts_and_resets() {
        let before = BTreeMap::from([(("0000:17:00.0".to_string(), "correctable"), 5u64)]);
        let after = BTreeMap::from([(("0000:17:00.0".to_string(), "correctable"), 9u64)]);
        let observation = CounterObservation::new(
            Some(read_sample(&SysRoot::captured("/nonexistent"))),
            read_sample(&SysRoot::captured("/nonexistent")),
            Some(1.0),
        );
        let (totals, deltas) = growth(&observation, Some(&before), &after);
        assert_eq!(totals.pcie_aer, 4);
        assert_eq!(deltas[0].name, "aer_correctable");
        let (totals, _) = growth(&observation, Some(&after), &before);
        assert_eq!(totals.pcie_aer, 5, "a reset counts what is there now");
    }
}
