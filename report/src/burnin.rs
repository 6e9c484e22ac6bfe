//! The schema of `fabricdoctor burnin`: `report.json` (rewritten atomically after every step) and the
//! lines of `events.jsonl` (one event per step and per counter interval). The HTML report, `summary.md`,
//! `junit.xml` and `--baseline` comparisons read these types, so the schema only grows: keys are added,
//! never renamed or given a new meaning without bumping [`BURNIN_SCHEMA_VERSION`].
//!
//! Units are in the key names: `*_gbps` are 10^9 bits per second (perftest's Gb/s, see
//! `fabricdoctor_perf::stats`), `*_us` microseconds, `*_s` seconds, `*_at` RFC 3339 UTC times with
//! milliseconds, `offset_s` seconds since the run started (for timelines).

use std::collections::BTreeMap;

use fabricdoctor_checks::{Finding, Verdict};
use serde::{Deserialize, Serialize};

use crate::render::markdown_cell;
use crate::Report;

/// Version of the burn-in report and event schema. Bump on any change of meaning; additions are
/// compatible (readers must ignore unknown keys of a newer minor addition, so these types do not
/// deny unknown fields).
///
/// Migration notes:
/// - 3 (fleet scale): above 128 hosts a rail's `pairs` holds only its outliers (worst first) and
///   `summary` the rest (quantiles, histogram, group × group tiles); `hosts`, `bw_gbps` and `lat_us`
///   are then absent, and every pair is in pairs.jsonl beside the report. Hosts may name their
///   `leaf`. Above 128 hosts a congestion pulse lists its first senders only (`senders_count`
///   counts them all), and at most 100 findings of one id are listed (one more finding of the id
///   counts the rest). A version 2 report reads as one whose matrices are all in full.
/// - 2 (expectations): `expectations` (what each rail should measure, and where that came from) and,
///   per pair, `expected_gbps` / `expected_fraction`. Sign-off now also fails on the findings
///   `burnin.pair.below_expected`, `burnin.fabric.below_expected` and `burnin.loopback.below_expected`.
///   Also `concurrent_rails`: each pair's bandwidth per rail with every rail loaded at once, against
///   the same rail alone (finding `burnin.rails.concurrent_drop`), and `congestion`: the incast
///   pulses with the target's counters (findings `burnin.congestion.loss`, `.order`, `.unobservable`).
///   A version 1 report reads as one without expectations (nothing else changed meaning), so
///   `--baseline` accepts runs made before.
pub const BURNIN_SCHEMA_VERSION: u32 = 3;

/// The oldest `report.json` version [`BurninReport::from_json`] reads (see the migration notes).
pub const BURNIN_SCHEMA_OLDEST: u32 = 1;

/// `report.json` of a burn-in run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BurninReport {
    pub schema_version: u32,
    pub tool_version: String,
    /// When this version of the file was written (it is rewritten after every step).
    pub generated_at: String,
    pub run: RunInfo,
    pub hosts: Vec<BurninHost>,
    /// Phases in the order they ran; the soak repeats pairwise/alltoall/allreduce with increasing
    /// `iteration`.
    pub phases: Vec<Phase>,
    /// Phase (2): each host against itself over loopback, per rail.
    #[serde(default)]
    pub loopback: Vec<LoopbackResult>,
    /// Phase (3) and the soak: one matrix per rail.
    #[serde(default)]
    pub pairs: Vec<PairMatrix>,
    /// Phases (4) and (5): every all-to-all and AllReduce run.
    #[serde(default)]
    pub collectives: Vec<CollectiveResult>,
    /// Counter deltas per host per interval, with the phase boundaries to draw them against.
    #[serde(default)]
    pub counters: CounterTimeline,
    /// Findings of the run itself (ids `burnin.*`) and the counter checks judged per interval. Node
    /// check findings stay in `host_checks`.
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// What to replace or reseat, most confident first.
    #[serde(default)]
    pub suspects: Vec<Suspect>,
    pub signoff: SignOff,
    /// Present when the run was given `--baseline`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineComparison>,
    /// Phase (1): the `check` report of every host, and its topology for drawing.
    #[serde(default)]
    pub host_checks: Vec<HostCheck>,
    /// What each rail should measure (absolute, from the link rate or set by the operator); pairs
    /// and loopbacks are judged against it at sign-off. Empty in version 1 reports.
    #[serde(default)]
    pub expectations: Vec<RailExpectation>,
    /// The all-rails phase: each ordered pair's bandwidth per rail while every rail of both hosts
    /// carried load at once. Empty when the run had one rail or the phase was off.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub concurrent_rails: Vec<ConcurrentRail>,
    /// The congestion pulses: every other host sending into one, rotating the target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub congestion: Vec<CongestionPulse>,
    /// Each transceiver's hottest reading over the run (sampled after every step, with the
    /// counters), and the phase it was read in: the protocol watches optics under load.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub optics: Vec<OpticsPeak>,
}

/// A transceiver module's peak temperature over the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpticsPeak {
    pub host: String,
    pub netdev: String,
    /// "OSFP NVIDIA MMA4Z00-NS400".
    pub module: String,
    pub peak_temperature_c: f64,
    /// The phase during which the peak was read ("pairwise#1").
    pub phase: String,
    /// Seconds into the run.
    pub offset_s: f64,
}

impl OpticsPeak {
    /// Fold one reading into the peaks: a module seen for the first time is added; a hotter
    /// reading replaces the peak and its phase.
    pub fn record(peaks: &mut Vec<OpticsPeak>, reading: OpticsPeak) {
        match peaks.iter_mut().find(|p| p.host == reading.host && p.netdev == reading.netdev) {
            Some(peak) if reading.peak_temperature_c > peak.peak_temperature_c => *peak = reading,
            Some(_) => {}
            None => peaks.push(reading),
        }
    }
}

/// One incast pulse: `senders` all sent to `target` on `rail` at once for the pulse's duration,
/// while the target's counters were sampled at sub-second intervals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CongestionPulse {
    pub target: String,
    /// Every sender, or above 128 hosts the first few (`senders_count` says how many there were).
    pub senders: Vec<String>,
    /// How many hosts sent; 0 in reports before version 3 (count `senders`).
    #[serde(default)]
    pub senders_count: usize,
    pub rail: String,
    /// The senders' bandwidths summed, Gb/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate_gbps: Option<f64>,
    /// The target's counter growth, cumulative from the pulse's start, one entry per sample.
    pub samples: Vec<PulseSample>,
    /// The senders' counter growth over the whole pulse, summed (their retransmissions, the pauses
    /// and CNPs they received).
    #[serde(default)]
    pub senders_growth: PulseSample,
    /// Whether the target or a sender has PFC pause / ECN-CNP counters at all.
    pub pfc_observable: bool,
    pub ecn_observable: bool,
    /// Which signal moved first: "ecn", "pfc", "both" (in the same sample); absent when neither did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_signal: Option<String>,
    /// Senders whose measurement failed, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

/// The target's counters during a pulse, cumulative since its start.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct PulseSample {
    pub offset_s: f64,
    pub pfc_pause: u64,
    pub ecn_cnp: u64,
    /// Discards, drops and port errors.
    pub port_errors: u64,
    /// RDMA transport retries.
    pub retransmits: u64,
    /// TCP segments retransmitted (the namespace's proc/net/snmp).
    pub tcp_retransmits: u64,
    /// TCP segments sent, the denominator of `tcp_retransmits`.
    #[serde(default)]
    pub tcp_segments_sent: u64,
}

/// One ordered pair on one rail under concurrent load on every rail, beside the same rail alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConcurrentRail {
    pub client: String,
    pub server: String,
    pub rail: String,
    /// Measurements averaged into `together_gbps`.
    pub samples: u64,
    /// Mean bandwidth with every rail loaded, Gb/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub together_gbps: Option<f64>,
    /// The pairwise phase's mean for the same pair and rail, measured alone, Gb/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alone_gbps: Option<f64>,
    /// `together_gbps / alone_gbps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fraction: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// What one rail should measure, and where that came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RailExpectation {
    pub rail: String,
    /// Bandwidth one direction of a pair should reach, Gb/s; `None`: nothing to judge against
    /// (`source` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair_gbps: Option<f64>,
    /// Median one-way latency a pair should stay under, microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair_latency_us: Option<f64>,
    /// Bandwidth of a host with itself on the rail, Gb/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loopback_gbps: Option<f64>,
    /// Where `pair_gbps` came from ("--expect-pair-gbps", "playbook [expectations.rails.NAME]",
    /// "link rate 400 Gb/s (...) x 0.90"), or why there is none.
    pub source: String,
    /// The link rate it was derived from, Gb/s, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_gbps: Option<f64>,
    /// The efficiency applied to the link rate, when derived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub efficiency: Option<f64>,
}

/// What ran, when, under which protocol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// Random id of the run; `--resume` keeps it.
    pub run_id: String,
    pub started_at: String,
    /// Absent while the run is going on (and in the partial report of an interrupted run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// `--duration` in seconds.
    pub duration_s: f64,
    /// The playbook's `name`, and the file it came from ("built-in" for the embedded default).
    pub playbook: String,
    pub playbook_source: String,
    /// "tcp" or "verbs": the data path of the measurements.
    pub transport: String,
    /// How the agents were reached: "local", "hosts", "slurm", "ssh".
    pub launcher: String,
    /// True once sign-off ran.
    pub complete: bool,
    /// Why the run stopped early ("interrupted by SIGINT", "too many hosts lost"), when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Steps finished (counts steps resumed from a checkpoint too).
    pub steps_done: u64,
    /// Number of times the run was continued with `--resume`.
    #[serde(default)]
    pub resumed: u32,
    /// How each pair was measured, so a figure is read against what bounded it. Absent in reports
    /// written before this field existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair_test: Option<PairTestSettings>,
}

/// The playbook's pair-test settings (`[pairwise]`), copied into the report beside the figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairTestSettings {
    pub message_bytes: u64,
    /// Connections (TCP) or queue pairs (verbs) per pair.
    pub queue_pairs: u32,
    /// Messages in flight per connection (perftest -t).
    pub tx_depth: u32,
    /// Whether every received message was verified (crate::perf's integrity check).
    pub validate: bool,
    pub latency_bytes: u64,
    /// Verbs: the traffic class, service level and GID index the queue pairs were asked to use
    /// (absent: the agents' defaults, class 0, SL 0, the rail's RoCE v2 GID).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic_class: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_level: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gid_index: Option<u32>,
}

impl PairTestSettings {
    /// "tcp, 64 KiB messages, 2 connections x 4 in flight, data validation on".
    pub fn describe(&self, transport: &str) -> String {
        let connections = if transport == "verbs" { "queue pairs" } else { "connections" };
        let mut text = format!(
            "{transport}, {} messages, {} {connections} x {} in flight, data validation {}",
            bytes_label(self.message_bytes),
            self.queue_pairs,
            self.tx_depth,
            if self.validate { "on" } else { "off" }
        );
        if transport == "verbs" {
            let class = self.traffic_class.unwrap_or(0);
            text.push_str(&format!(
                ", traffic class {class} (DSCP {}), SL {}, GID index {}",
                class >> 2,
                self.service_level.unwrap_or(0),
                self.gid_index.map_or("of each rail's address".to_string(), |i| i.to_string())
            ));
        }
        text
    }
}

/// 65536 -> "64 KiB", 100 -> "100 B".
fn bytes_label(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// A host of the burn-in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BurninHost {
    /// The name the operator gave (hostfile entry, SLURM node name, "local-0").
    pub name: String,
    /// Agent control address, "10.0.0.1:7207".
    pub address: String,
    pub status: HostStatus,
    /// When the status last changed (excluded or lost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_at: Option<String>,
    /// Why the host was excluded or lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The last step the host took part in ("pairwise#2 round 3 local-1<->local-2").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_step: Option<String>,
    /// Data addresses per rail; one entry "default" when the host has one.
    #[serde(default)]
    pub rails: Vec<Rail>,
    /// The agent's hostname and tool version, as it reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
    /// The leaf switch (or rack) the host hangs off, as the hostfile's `leaf=` named it: the groups
    /// of a summarised pair matrix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HostStatus {
    /// Taking part.
    Ok,
    /// Left out by policy (failed hard checks, or an operator exclusion).
    Excluded,
    /// Stopped answering (agent died, host down, step timeout).
    Lost,
}

/// One rail of a host: a NIC (or its IP address) that data runs over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rail {
    /// "default", "mlx5_0", "rail0".
    pub name: String,
    /// Address the peer dials for this rail's data connections.
    pub address: String,
    /// The rail's physical link rate as its agent read it, Gb/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_gbps: Option<f64>,
    /// Where that rate was read, or why there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

/// One phase of the protocol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// "check", "loopback", "pairwise", "isolation", "alltoall", "allreduce", "signoff".
    pub name: String,
    /// 0 for the first pass; soak repetitions count up.
    pub iteration: u32,
    pub started_at: String,
    /// Seconds since the run started, for timelines.
    pub start_offset_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_offset_s: Option<f64>,
    pub status: PhaseStatus,
    pub steps_done: u64,
    pub steps_total: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PhaseStatus {
    Running,
    /// Every step ran (steps may still have failed; see findings).
    Done,
    /// Could not run (fewer than two hosts left, ...).
    Skipped,
    /// Stopped by a signal or a stop policy; the run may be resumed.
    Interrupted,
}

/// Phase (2): one host's loopback bandwidth and latency on one rail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopbackResult {
    pub host: String,
    pub rail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bw_gbps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_us: Option<f64>,
    /// Why the measurement failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The pairwise matrix of one rail. Rows are the client (sender), columns the server; `hosts` gives
/// the order. Values are the mean over every measurement of the pair in this run (`None`: never
/// measured, or the diagonal). `pairs` holds the statistics behind each cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairMatrix {
    pub rail: String,
    /// The matrices' host order; empty when summarised.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// Mean bandwidth client -> server, Gb/s; empty when summarised.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bw_gbps: Vec<Vec<Option<f64>>>,
    /// Mean over the pair's measurements of each one's median one-way latency (half the round trip,
    /// perftest's t_typical), microseconds; empty when summarised.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lat_us: Vec<Vec<Option<f64>>>,
    /// Every pair, or, when `summary` is present, only its outliers (worst first).
    pub pairs: Vec<PairStats>,
    /// Present above [`crate::pair_summary::PAIRS_IN_FULL_UP_TO`] hosts: the rail's pairs summarised
    /// (the full table is [`crate::pair_summary::PAIR_TABLE_FILE`] beside report.json).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<crate::pair_summary::PairSummary>,
}

/// Every measurement of one ordered pair on one rail, summarised (the raw measurements are the
/// `step` events of events.jsonl).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairStats {
    pub client: String,
    pub server: String,
    pub rail: String,
    /// Measurements that produced a number.
    pub samples: u64,
    /// Measurements that failed (connection refused, timeout, data mismatch).
    pub failures: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bw_min_gbps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bw_mean_gbps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bw_max_gbps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_min_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_mean_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_max_us: Option<f64>,
    /// Validation errors summed over the run: bytes that arrived different from what was sent, plus
    /// messages lost, repeated or reordered.
    pub validation_errors: u64,
    /// Bytes verified end to end (validation on), summed over the run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub verified_bytes: u64,
    /// The last failure's message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The rail's expected bandwidth (see [`RailExpectation`]), Gb/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_gbps: Option<f64>,
    /// `bw_mean_gbps / expected_gbps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_fraction: Option<f64>,
}

impl PairStats {
    /// A pair not measured yet.
    pub fn new(client: &str, server: &str, rail: &str) -> PairStats {
        PairStats {
            client: client.into(),
            server: server.into(),
            rail: rail.into(),
            samples: 0,
            failures: 0,
            bw_min_gbps: None,
            bw_mean_gbps: None,
            bw_max_gbps: None,
            lat_min_us: None,
            lat_mean_us: None,
            lat_max_us: None,
            validation_errors: 0,
            verified_bytes: 0,
            last_error: None,
            expected_gbps: None,
            expected_fraction: None,
        }
    }
}

impl PairMatrix {
    /// A rail's pairs without the dense matrices (built at save time where they are drawn).
    pub fn new(rail: &str, pairs: Vec<PairStats>) -> PairMatrix {
        PairMatrix {
            rail: rail.into(),
            hosts: Vec::new(),
            bw_gbps: Vec::new(),
            lat_us: Vec::new(),
            pairs,
            summary: None,
        }
    }
}

impl BurninHost {
    /// A host as given, taking part, not reached yet.
    pub fn new(name: &str, address: &str, leaf: Option<String>) -> BurninHost {
        BurninHost {
            name: name.into(),
            address: address.into(),
            status: HostStatus::Ok,
            status_at: None,
            reason: None,
            last_step: None,
            rails: Vec::new(),
            hostname: None,
            agent_version: None,
            leaf,
        }
    }
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// One pairwise measurement (an event of events.jsonl; the report keeps [`PairStats`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairMeasurement {
    pub client: String,
    pub server: String,
    pub rail: String,
    /// Average bandwidth client -> server over the test's duration, Gb/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bw_gbps: Option<f64>,
    /// Median one-way latency (perftest t_typical), microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_p99_us: Option<f64>,
    #[serde(default)]
    pub validation_errors: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One all-to-all or AllReduce over the hosts that were `ok` at the time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CollectiveResult {
    /// "alltoall" or "allreduce".
    pub collective: String,
    pub iteration: u32,
    pub at: String,
    pub hosts: Vec<String>,
    /// Bytes per rank (nccl-tests' size column).
    pub bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_us: Option<f64>,
    /// nccl-tests' algbw and busbw (doc/PERFORMANCE.md), Gb/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alg_bw_gbps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bus_bw_gbps: Option<f64>,
    /// Elements that did not hold the expected value after the collective.
    #[serde(default)]
    pub wrong_elements: u64,
    /// The rank that took longest, when it stood out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowest_host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Counter deltas over time. Intervals of a host in which no counter of interest moved are merged
/// into one entry (so a clean 72-hour soak stays small); any interval with growth is kept as is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterTimeline {
    pub intervals: Vec<CounterInterval>,
    /// Phase boundaries to draw on the timeline: (offset_s, "pairwise#1 start").
    #[serde(default)]
    pub marks: Vec<TimelineMark>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineMark {
    pub offset_s: f64,
    pub label: String,
}

/// One host's counter growth over one interval (from the sample before a step or soak interval to
/// the sample after it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterInterval {
    pub host: String,
    /// Phase the interval belongs to ("pairwise#2"); merged quiet intervals name the first.
    pub phase: String,
    pub start_offset_s: f64,
    pub end_offset_s: f64,
    pub end_at: String,
    /// Sums by category (see [`CounterCategories`]).
    pub totals: CounterCategories,
    /// The counters that grew (or could not be measured), each named by its source.
    #[serde(default)]
    pub deltas: Vec<CounterDelta>,
    /// How many sampled intervals this entry covers (>1 for merged quiet intervals).
    #[serde(default = "one")]
    pub merged: u32,
}

fn one() -> u32 {
    1
}

/// Counter growth grouped by what it means for the fabric.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterCategories {
    /// PFC pause frames sent and received (ethtool *_pause, *_prio*_pause), count.
    pub pfc_pause: u64,
    /// ECN-marked packets and congestion notification packets (np_ecn_marked_roce_packets,
    /// rp_cnp_handled, np_cnp_sent), count.
    pub ecn_cnp: u64,
    /// Transport retries and timeouts (local_ack_timeout_err, packet_seq_err, out_of_sequence,
    /// duplicate_request, rnr_nak_retry_err), count.
    pub retransmits: u64,
    /// Port and link errors (symbol/link errors, receive errors, discards, link_downed,
    /// carrier_changes, netdev rx/tx errors and drops), count.
    pub port_errors: u64,
    /// PCIe AER correctable + non-fatal + fatal errors reported by the NIC functions, count.
    pub pcie_aer: u64,
}

impl CounterCategories {
    pub fn total(&self) -> u64 {
        self.pfc_pause + self.ecn_cnp + self.retransmits + self.port_errors + self.pcie_aer
    }

    pub fn add(&mut self, other: &CounterCategories) {
        self.pfc_pause += other.pfc_pause;
        self.ecn_cnp += other.ecn_cnp;
        self.retransmits += other.retransmits;
        self.port_errors += other.port_errors;
        self.pcie_aer += other.pcie_aer;
    }
}

/// One counter's growth in an interval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterDelta {
    /// "port_counters", "hardware_counters", "ethtool", "netdev", "pcie_aer".
    pub source: String,
    /// "mlx5_0 port 1", "eth0", "0000:17:00.0".
    pub subject: String,
    pub name: String,
    /// In the counter's unit (bytes for data counters, else count); absent when it could not be
    /// measured (saturated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<u64>,
    /// "counted", "wrapped", "reset", "saturated", "missing" (fabricdoctor_probes::counters::DeltaStatus).
    pub status: String,
    /// The category it is summed into, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
}

/// Where a fault most likely is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suspect {
    pub kind: SuspectKind,
    /// Host name; "host rail" for a NIC ("node3 mlx5_1"); "hostA<->hostB rail" for a link.
    pub subject: String,
    /// The host the suspect is on (a link's first end).
    pub host: String,
    /// 0..1: how strongly the retests point here (1: every pair with this subject was bad and every
    /// pair without it was good).
    pub confidence: f64,
    /// One line an operator acts on: "replace or reseat the cable of node3 rail0".
    pub action: String,
    /// Why: the measurements and counter deltas, one line each.
    pub evidence: Vec<String>,
    /// Findings (ids) that point at this suspect.
    #[serde(default)]
    pub finding_ids: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SuspectKind {
    Host,
    Nic,
    Link,
}

/// The verdict of sign-off (phase 7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignOff {
    pub verdict: SignOffVerdict,
    /// Each rule's outcome: "zero data errors: ok", "pair node1->node3 below tolerance (41.0 < 0.93 x 94.1 Gb/s)".
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SignOffVerdict {
    /// Zero data errors, no error-counter growth, every pair within tolerance, no host lost.
    Pass,
    /// At least one rule failed; see suspects.
    Fail,
    /// The run did not reach sign-off (still running, interrupted, or could not run).
    Incomplete,
}

/// `--baseline old/report.json`: what got worse.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineComparison {
    /// The baseline file as given.
    pub path: String,
    pub baseline_run_id: String,
    pub baseline_generated_at: String,
    /// Fraction of the baseline a value may lose before it is a regression (0.93: 7 % worse).
    pub tolerance: f64,
    pub regressions: Vec<Regression>,
    /// Pairs/collectives compared (so "no regressions" is never vacuous).
    pub compared: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Regression {
    /// "local-0->local-1 default", "allreduce".
    pub subject: String,
    /// "bw_gbps", "lat_us", "bus_bw_gbps".
    pub metric: String,
    pub baseline: f64,
    pub current: f64,
    /// (current - baseline) / baseline x 100; negative for lost bandwidth.
    pub change_percent: f64,
}

/// Phase (1) of one host: the `fabricdoctor check` report (schema of [`crate::Report`]) and the
/// topology object of `fabricdoctor topo --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostCheck {
    pub host: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<Report>,
    /// `fabricdoctor topo --json`'s `topology` (gpus, nics, matrix, rails).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<serde_json::Value>,
    /// Why the check could not run on the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The worst verdict of the host's findings (pass when none).
    pub worst: Verdict,
    /// True when the host was excluded because of these findings.
    pub excluded: bool,
}

/// One line of events.jsonl. Every line has `event`, `at` and `offset_s`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub at: String,
    pub offset_s: f64,
    #[serde(flatten)]
    pub kind: EventKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventKind {
    RunStarted {
        run_id: String,
        hosts: Vec<String>,
        duration_s: f64,
        playbook: String,
    },
    RunResumed {
        run_id: String,
        steps_done: u64,
    },
    PhaseStarted {
        phase: String,
        iteration: u32,
        steps_total: u64,
    },
    PhaseFinished {
        phase: String,
        iteration: u32,
        status: PhaseStatus,
    },
    /// A step finished: its key (unique in the run, used by the checkpoint), and what it measured.
    Step {
        step: String,
        phase: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        measurements: Vec<PairMeasurement>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        collective: Option<Box<CollectiveResult>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        loopback: Option<Box<LoopbackResult>>,
        /// Retest rounds isolation ran for this step (an isolation step: one rail of one pass).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rounds: Option<u32>,
        seconds: f64,
    },
    CounterInterval {
        interval: Box<CounterInterval>,
    },
    HostStatus {
        host: String,
        status: HostStatus,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        last_step: Option<String>,
    },
    Finding {
        finding: Box<Finding>,
    },
    RunFinished {
        signoff: SignOff,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stopped: Option<String>,
    },
}

impl BurninReport {
    /// An empty report for a run that starts now.
    pub fn new(run: RunInfo, hosts: Vec<BurninHost>) -> BurninReport {
        BurninReport {
            schema_version: BURNIN_SCHEMA_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            generated_at: run.started_at.clone(),
            run,
            hosts,
            phases: Vec::new(),
            loopback: Vec::new(),
            pairs: Vec::new(),
            collectives: Vec::new(),
            counters: CounterTimeline::default(),
            findings: Vec::new(),
            suspects: Vec::new(),
            signoff: SignOff {
                verdict: SignOffVerdict::Incomplete,
                reasons: vec!["the run has not reached sign-off".into()],
            },
            baseline: None,
            host_checks: Vec::new(),
            expectations: Vec::new(),
            concurrent_rails: Vec::new(),
            congestion: Vec::new(),
            optics: Vec::new(),
        }
    }

    /// Parse a report, refusing one of another schema version with a message naming both.
    pub fn from_json(text: &str) -> Result<BurninReport, BurninSchemaError> {
        let probe: serde_json::Value = serde_json::from_str(text).map_err(BurninSchemaError::Json)?;
        let version = probe.get("schema_version").and_then(serde_json::Value::as_u64);
        let readable = u64::from(BURNIN_SCHEMA_OLDEST)..=u64::from(BURNIN_SCHEMA_VERSION);
        if !version.is_some_and(|v| readable.contains(&v)) {
            return Err(BurninSchemaError::Version { found: version });
        }
        // Version 1 lacks only what version 2 added, all of it defaulted (see the migration notes).
        serde_json::from_value(probe).map_err(BurninSchemaError::Json)
    }

    /// Pair statistics by (client, server, rail).
    pub fn pair_index(&self) -> BTreeMap<(String, String, String), &PairStats> {
        self.pairs
            .iter()
            .flat_map(|m| m.pairs.iter())
            .map(|p| ((p.client.clone(), p.server.clone(), p.rail.clone()), p))
            .collect()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BurninSchemaError {
    #[error("not a burn-in report: {0}")]
    Json(serde_json::Error),
    #[error("burn-in report schema version {found:?}, this fabricdoctor reads versions {BURNIN_SCHEMA_OLDEST} to {BURNIN_SCHEMA_VERSION}")]
    Version { found: Option<u64> },
}

/// A small, complete example: four hosts, one lost, one slow link pinned by isolation. It is the
/// fixture `tests/fixtures/burnin/report-small.json` (regenerated by the test below with
/// FABRICDOCTOR_BLESS=1) that renderers are developed against. Test code only: other crates' tests
/// read the fixture.
#[cfg(test)]
fn example() -> BurninReport {
    let at = |s: u32| format!("2026-11-22T18:{:02}:{:02}.000Z", 30 + s / 60, s % 60);
    let hosts: Vec<String> = (0..4).map(|i| format!("node{i}")).collect();
    let run = RunInfo {
        run_id: "3f2a9c1e0b7d4a55".into(),
        started_at: at(0),
        finished_at: Some(at(95)),
        duration_s: 90.0,
        playbook: "default".into(),
        playbook_source: "built-in".into(),
        transport: "tcp".into(),
        launcher: "hosts".into(),
        complete: true,
        stopped: None,
        steps_done: 31,
        resumed: 0,
        pair_test: None,
    };
    let burnin_hosts = hosts
        .iter()
        .enumerate()
        .map(|(i, name)| BurninHost {
            name: name.clone(),
            address: format!("10.0.0.{}:7207", i + 1),
            status: if i == 3 { HostStatus::Lost } else { HostStatus::Ok },
            status_at: (i == 3).then(|| at(70)),
            reason: (i == 3).then(|| "agent stopped answering: connection reset by peer".to_string()),
            last_step: Some(if i == 3 { "pairwise#1 round 1 node2<->node3".into() } else { "allreduce#1".into() }),
            rails: vec![Rail {
                name: "default".into(),
                address: format!("10.0.0.{}", i + 1),
                link_gbps: None,
                link: None,
            }],
            hostname: Some(name.clone()),
            agent_version: Some(env!("CARGO_PKG_VERSION").into()),
            leaf: None,
        })
        .collect();
    let mut report = BurninReport::new(run, burnin_hosts);
    report.generated_at = at(95);
    let phase = |name: &str, iteration: u32, start: u32, end: u32, steps: u64| Phase {
        name: name.into(),
        iteration,
        started_at: at(start),
        start_offset_s: f64::from(start),
        ended_at: Some(at(end)),
        end_offset_s: Some(f64::from(end)),
        status: PhaseStatus::Done,
        steps_done: steps,
        steps_total: steps,
    };
    report.phases = vec![
        phase("check", 0, 0, 2, 4),
        phase("loopback", 0, 2, 10, 4),
        phase("pairwise", 0, 10, 30, 6),
        phase("isolation", 0, 30, 40, 2),
        phase("alltoall", 0, 40, 45, 1),
        phase("allreduce", 0, 45, 50, 1),
        phase("pairwise", 1, 50, 72, 6),
        phase("alltoall", 1, 72, 78, 1),
        phase("allreduce", 1, 78, 84, 1),
        phase("signoff", 0, 94, 95, 1),
    ];
    report.loopback = hosts
        .iter()
        .map(|h| LoopbackResult {
            host: h.clone(),
            rail: "default".into(),
            bw_gbps: Some(38.0),
            lat_us: Some(9.5),
            error: None,
        })
        .collect();
    // node1's link is throttled: every pair with node1 is slow in both directions.
    let bw = |a: usize, b: usize| if a == 1 || b == 1 { 0.95 } else { 9.4 };
    let lat = |a: usize, b: usize| if a == 1 || b == 1 { 61.0 } else { 24.0 };
    let round = |x: f64| (x * 1000.0).round() / 1000.0;
    let mut pairs = Vec::new();
    for a in 0..4 {
        for b in 0..4 {
            if a != b {
                let lost = a == 3 || b == 3;
                pairs.push(PairStats {
                    client: hosts[a].clone(),
                    server: hosts[b].clone(),
                    rail: "default".into(),
                    samples: if lost { 1 } else { 2 },
                    failures: u64::from(lost),
                    bw_min_gbps: Some(round(bw(a, b) * 0.98)),
                    bw_mean_gbps: Some(bw(a, b)),
                    bw_max_gbps: Some(round(bw(a, b) * 1.02)),
                    lat_min_us: Some(round(lat(a, b) * 0.97)),
                    lat_mean_us: Some(lat(a, b)),
                    lat_max_us: Some(round(lat(a, b) * 1.05)),
                    validation_errors: 0,
                    verified_bytes: 0,
                    last_error: lost.then(|| "node3: connection refused".to_string()),
                    expected_gbps: None,
                    expected_fraction: None,
                });
            }
        }
    }
    let cell = |f: &dyn Fn(usize, usize) -> f64| {
        (0..4).map(|a| (0..4).map(|b| (a != b).then(|| f(a, b))).collect()).collect::<Vec<Vec<Option<f64>>>>()
    };
    report.pairs = vec![PairMatrix {
        rail: "default".into(),
        hosts: hosts.clone(),
        bw_gbps: cell(&bw),
        lat_us: cell(&lat),
        pairs,
        summary: None,
    }];
    report.collectives = vec![
        CollectiveResult {
            collective: "alltoall".into(),
            iteration: 0,
            at: at(45),
            hosts: hosts.clone(),
            bytes: 4 << 20,
            time_us: Some(15800.0),
            alg_bw_gbps: Some(2.12),
            bus_bw_gbps: Some(1.59),
            wrong_elements: 0,
            slowest_host: Some("node1".into()),
            error: None,
        },
        CollectiveResult {
            collective: "allreduce".into(),
            iteration: 1,
            at: at(84),
            hosts: hosts[..3].to_vec(),
            bytes: 4 << 20,
            time_us: Some(52000.0),
            alg_bw_gbps: Some(0.65),
            bus_bw_gbps: Some(0.86),
            wrong_elements: 0,
            slowest_host: Some("node1".into()),
            error: None,
        },
    ];
    report.counters = CounterTimeline {
        intervals: vec![
            CounterInterval {
                host: "node0".into(),
                phase: "loopback#0".into(),
                start_offset_s: 2.0,
                end_offset_s: 84.0,
                end_at: at(84),
                totals: CounterCategories::default(),
                deltas: Vec::new(),
                merged: 12,
            },
            CounterInterval {
                host: "node1".into(),
                phase: "pairwise#0".into(),
                start_offset_s: 10.0,
                end_offset_s: 30.0,
                end_at: at(30),
                totals: CounterCategories { port_errors: 1840, ..CounterCategories::default() },
                deltas: vec![CounterDelta {
                    source: "netdev".into(),
                    subject: "eth0".into(),
                    name: "tx_dropped".into(),
                    delta: Some(1840),
                    status: "counted".into(),
                    category: Some("port_errors".into()),
                }],
                merged: 1,
            },
        ],
        marks: report
            .phases
            .iter()
            .map(|p| TimelineMark { offset_s: p.start_offset_s, label: format!("{}#{} start", p.name, p.iteration) })
            .collect(),
    };
    let slow = Finding::new("burnin.pair.bandwidth", Verdict::Fail, "node1<->node0 default", "pair below tolerance")
        .expected(">= 8.74 Gb/s (0.93 x best pair 9.40 Gb/s)")
        .observed("0.95 Gb/s")
        .evidence("pairwise#0 node1->node0 0.95 Gb/s, node0->node1 0.95 Gb/s");
    let lost = Finding::new("burnin.host.lost", Verdict::Fail, "node3", "agent stopped answering during pairwise#1")
        .evidence("last step: pairwise#1 round 1 node2<->node3 at 2026-11-22T18:31:10.000Z");
    report.findings = vec![slow, lost];
    report.suspects = vec![Suspect {
        kind: SuspectKind::Link,
        subject: "node1 default".into(),
        host: "node1".into(),
        confidence: 0.9,
        action: "check the cable and switch port of node1 rail default (reseat, then replace)".into(),
        evidence: vec![
            "every pair with node1 was slow (0.95 Gb/s) against 3 different partners; pairs without node1: 9.40 Gb/s"
                .into(),
            "node1 eth0 tx_dropped +1840 during pairwise#0".into(),
        ],
        finding_ids: vec!["burnin.pair.bandwidth".into()],
    }];
    report.signoff = SignOff {
        verdict: SignOffVerdict::Fail,
        reasons: vec![
            "zero data errors: ok".into(),
            "error counters grew on node1 (port_errors +1840)".into(),
            "pairs below tolerance: 6 (all with node1)".into(),
            "hosts lost: node3".into(),
        ],
    };
    report.baseline = Some(BaselineComparison {
        path: "baseline/report.json".into(),
        baseline_run_id: "0c1d2e3f4a5b6c7d".into(),
        baseline_generated_at: "2026-11-20T09:00:00.000Z".into(),
        tolerance: 0.93,
        regressions: vec![Regression {
            subject: "node1->node0 default".into(),
            metric: "bw_gbps".into(),
            baseline: 9.38,
            current: 0.95,
            change_percent: -89.87,
        }],
        compared: 13,
    });
    report.host_checks = hosts
        .iter()
        .map(|h| {
            let findings = vec![Finding::new("host.kernel", Verdict::Pass, "node", "kernel 6.8.0")];
            let mut check = Report::new(
                "check",
                vec![crate::HostInfo {
                    hostname: h.clone(),
                    kernel_release: Some("6.8.0".into()),
                    source: "live".into(),
                }],
                findings,
            );
            check.generated_at = at(1);
            check.tool_version = env!("CARGO_PKG_VERSION").into();
            HostCheck {
                host: h.clone(),
                report: Some(check),
                topology: Some(serde_json::json!({ "gpus": [], "nics": [], "matrix": [], "rails": [] })),
                error: None,
                worst: Verdict::Pass,
                excluded: false,
            }
        })
        .collect();
    report
}

/// Findings of the run plus one finding for the sign-off itself (`burnin.signoff`), as a
/// [`Report`] so the existing renderers (JUnit XML, Markdown, text) apply.
pub fn as_findings_report(report: &BurninReport) -> Report {
    let mut findings = report.findings.clone();
    let verdict = match report.signoff.verdict {
        SignOffVerdict::Pass => Verdict::Pass,
        SignOffVerdict::Fail => Verdict::Fail,
        SignOffVerdict::Incomplete => Verdict::Error,
    };
    let mut signoff = Finding::new(
        "burnin.signoff",
        verdict,
        "cluster",
        format!("sign-off: {}", format!("{:?}", report.signoff.verdict).to_lowercase()),
    );
    signoff.evidence = report.signoff.reasons.clone();
    findings.push(signoff);
    // A passing testcase per host and per measured pair, so CI shows what was covered.
    for host in report.hosts.iter().filter(|h| h.status == HostStatus::Ok) {
        findings.push(Finding::new("burnin.host", Verdict::Pass, host.name.clone(), "took part to the end"));
    }
    // Above 128 hosts a testcase per pair would be a million per rail: one per rail says how many
    // pairs passed (the failing ones are findings of their own either way).
    if crate::pair_summary::summarised(report.hosts.len()) {
        for matrix in &report.pairs {
            let passed = match &matrix.summary {
                Some(summary) => summary.pairs - summary.failed_pairs,
                None => matrix.pairs.iter().filter(|p| p.samples > 0 && p.failures == 0).count() as u64,
            };
            findings.push(Finding::new(
                "burnin.pairs",
                Verdict::Pass,
                format!("rail {}", matrix.rail),
                format!("{passed} ordered pairs measured without a failure"),
            ));
        }
    }
    let per_pair = !crate::pair_summary::summarised(report.hosts.len());
    for pair in
        report.pairs.iter().flat_map(|m| m.pairs.iter()).filter(|p| per_pair && p.samples > 0 && p.failures == 0)
    {
        let message = format!(
            "{} measurement(s): {} Gb/s, {} us",
            pair.samples,
            pair.bw_mean_gbps.map_or("-".into(), |b| format!("{b:.2}")),
            pair.lat_mean_us.map_or("-".into(), |l| format!("{l:.1}"))
        );
        findings.push(Finding::new(
            "burnin.pair",
            Verdict::Pass,
            format!("{}->{} {}", pair.client, pair.server, pair.rail),
            message,
        ));
    }
    let hosts = vec![crate::HostInfo {
        hostname: format!("burnin {}", report.run.run_id),
        kernel_release: None,
        source: format!("{} hosts", report.hosts.len()),
    }];
    let mut rendered = Report::new("burnin", hosts, findings);
    rendered.generated_at = report.generated_at.clone();
    rendered
}

/// `junit.xml`: one testsuite per finding id, the sign-off as testcase `burnin.signoff`, and a
/// passing testcase per host (`burnin.host`) and measured pair (`burnin.pair`).
pub fn junit(report: &BurninReport) -> String {
    crate::render::junit(&as_findings_report(report))
}

/// `summary.md`: the verdict, what to replace or reseat in order of confidence and why, lost and
/// excluded hosts, the slowest pairs, and every finding that is not a pass.
/// One line that puts the pair figures beside how they were measured and what bounds them: "12 pairs
/// measured: 3.11 to 3.19 Gb/s mean bandwidth, 2.6 to 4.8 us mean latency; over tcp, 64 KiB messages,
/// 2 connections x 4 in flight, data validation on". `None` before any pair was measured.
pub fn pair_figures(report: &BurninReport) -> Option<String> {
    // A summarised rail (over 128 hosts) brings its count and range from its summary, the others
    // from their pairs.
    let mut measured = 0u64;
    let mut bandwidth: Vec<f64> = Vec::new();
    let mut latency: Vec<f64> = Vec::new();
    for matrix in &report.pairs {
        match &matrix.summary {
            Some(summary) => {
                measured += summary.bw_histogram.iter().map(|b| b.pairs).sum::<u64>();
                bandwidth.extend(summary.bw_gbps.iter().flat_map(|q| [q.min, q.max]));
                latency.extend(summary.lat_us.iter().flat_map(|q| [q.min, q.max]));
            }
            None => {
                measured += matrix.pairs.iter().filter(|p| p.bw_mean_gbps.is_some()).count() as u64;
                bandwidth.extend(matrix.pairs.iter().filter_map(|p| p.bw_mean_gbps));
                latency.extend(matrix.pairs.iter().filter(|p| p.bw_mean_gbps.is_some()).filter_map(|p| p.lat_mean_us));
            }
        }
    }
    let range = |values: &[f64]| {
        let low = values.iter().copied().fold(f64::INFINITY, f64::min);
        let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (low, high)
    };
    if bandwidth.is_empty() {
        return None;
    }
    let (low, high) = range(&bandwidth);
    let mut line = format!("{measured} pairs measured: {low:.2} to {high:.2} Gb/s mean bandwidth");
    if !latency.is_empty() {
        let (low, high) = range(&latency);
        line.push_str(&format!(", {low:.1} to {high:.1} us mean latency"));
    }
    if let Some(settings) = &report.run.pair_test {
        line.push_str(&format!("; over {}", settings.describe(&report.run.transport)));
    }
    if report.run.launcher == "local" {
        line.push_str(
            "; every host is an agent on this one machine (--local), so the figures are bounded by its CPUs and \
             loopback, not by a link",
        );
    }
    Some(line)
}

/// Every host's `check` result in the summary: the failing checks, and whether they kept the host out
/// of the run (the playbook's `exclude_checks`) or were reported only. A host-check failure that did
/// not block sign-off is still a fault of the node, and the summary says so.
fn host_checks_markdown(report: &BurninReport, out: &mut String) {
    use std::fmt::Write as _;
    if report.host_checks.is_empty() {
        return;
    }
    out.push_str("\n## Host checks\n\n| host | worst | fail and error findings | effect |\n|---|---|---|---|\n");
    for check in &report.host_checks {
        let failing: Vec<String> = check
            .report
            .iter()
            .flat_map(|r| r.findings.iter())
            .filter(|f| f.verdict >= Verdict::Error)
            .map(|f| format!("`{}` {}: {}", f.id, f.subject, f.message))
            .collect();
        let mut failing = failing.join("; ");
        if let Some(error) = &check.error {
            failing = if failing.is_empty() { error.clone() } else { format!("{failing}; {error}") };
        }
        let effect = if check.excluded {
            "excluded from the run"
        } else if check.worst >= Verdict::Error {
            "reported, not blocking (not in the playbook's exclude_checks)"
        } else {
            "-"
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            check.host,
            check.worst,
            markdown_cell(if failing.is_empty() { "-" } else { &failing }),
            effect
        );
    }
}

pub fn summary_markdown(report: &BurninReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let verdict = format!("{:?}", report.signoff.verdict).to_uppercase();
    let _ = writeln!(out, "# fabricdoctor burn-in {}: {verdict}\n", report.run.run_id);
    let _ = writeln!(
        out,
        "{} hosts, playbook `{}` ({}), {:.0} s planned, started {}{}.\n",
        report.hosts.len(),
        report.run.playbook,
        report.run.playbook_source,
        report.run.duration_s,
        report.run.started_at,
        report.run.finished_at.as_ref().map(|f| format!(", finished {f}")).unwrap_or_default()
    );
    if let Some(stopped) = &report.run.stopped {
        let _ = writeln!(out, "**Stopped early:** {stopped}\n");
    }
    out.push_str("## Sign-off\n\n");
    for reason in &report.signoff.reasons {
        let _ = writeln!(out, "- {reason}");
    }
    host_checks_markdown(report, &mut out);
    out.push_str("\n## What to replace or reseat\n\n");
    if report.suspects.is_empty() {
        out.push_str("Nothing: no fault was pinned.\n");
    } else {
        out.push_str("| confidence | kind | subject | action | evidence |\n|---|---|---|---|---|\n");
        for suspect in &report.suspects {
            let _ = writeln!(
                out,
                "| {:.0} % | {} | {} | {} | {} |",
                suspect.confidence * 100.0,
                format!("{:?}", suspect.kind).to_lowercase(),
                markdown_cell(&suspect.subject),
                markdown_cell(&suspect.action),
                markdown_cell(&suspect.evidence.join("; "))
            );
        }
    }
    let gone: Vec<&BurninHost> = report.hosts.iter().filter(|h| h.status != HostStatus::Ok).collect();
    if !gone.is_empty() {
        out.push_str(
            "\n## Hosts lost or excluded\n\n| host | status | since | last step | reason |\n|---|---|---|---|---|\n",
        );
        for host in gone {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                host.name,
                format!("{:?}", host.status).to_lowercase(),
                host.status_at.as_deref().unwrap_or("-"),
                markdown_cell(host.last_step.as_deref().unwrap_or("-")),
                markdown_cell(host.reason.as_deref().unwrap_or("-"))
            );
        }
    }
    if !report.expectations.is_empty() {
        out.push_str("\n## Expectations\n\n| rail | pair Gb/s | pair latency us | loopback Gb/s | source |\n|---|---|---|---|---|\n");
        let figure = |value: Option<f64>, digits: usize| value.map_or("-".to_string(), |v| format!("{v:.digits$}"));
        for expectation in &report.expectations {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                markdown_cell(&expectation.rail),
                figure(expectation.pair_gbps, 2),
                figure(expectation.pair_latency_us, 1),
                figure(expectation.loopback_gbps, 2),
                markdown_cell(&expectation.source)
            );
        }
    }
    let mut pairs: Vec<&PairStats> =
        report.pairs.iter().flat_map(|m| m.pairs.iter()).filter(|p| p.bw_mean_gbps.is_some()).collect();
    pairs.sort_by(|a, b| a.bw_mean_gbps.unwrap_or(0.0).total_cmp(&b.bw_mean_gbps.unwrap_or(0.0)));
    if !pairs.is_empty() {
        out.push_str("\n## Slowest pairs\n\n");
        if let Some(line) = pair_figures(report) {
            let _ = writeln!(out, "{line}");
        }
        out.push_str("\n| client -> server | rail | bw mean Gb/s | of expected | bw min Gb/s | lat mean us | samples |\n|---|---|---|---|---|---|---|\n");
        for pair in pairs.iter().take(10) {
            let _ = writeln!(
                out,
                "| {} -> {} | {} | {:.2} | {} | {:.2} | {} | {} |",
                pair.client,
                pair.server,
                pair.rail,
                pair.bw_mean_gbps.unwrap_or(0.0),
                pair.expected_fraction.map_or("-".into(), |f| format!("{:.0} %", f * 100.0)),
                pair.bw_min_gbps.unwrap_or(0.0),
                pair.lat_mean_us.map_or("-".into(), |l| format!("{l:.1}")),
                pair.samples
            );
        }
    }
    if let Some(baseline) = &report.baseline {
        let _ = writeln!(
            out,
            "\n## Baseline {}\n\n{} values compared, {} regressions (tolerance {:.2}).\n",
            baseline.path,
            baseline.compared,
            baseline.regressions.len(),
            baseline.tolerance
        );
        for r in &baseline.regressions {
            let _ = writeln!(
                out,
                "- {} {}: {:.2} -> {:.2} ({:+.1} %)",
                r.subject, r.metric, r.baseline, r.current, r.change_percent
            );
        }
    }
    let notable: Vec<&Finding> = report.findings.iter().filter(|f| f.verdict != Verdict::Pass).collect();
    if !notable.is_empty() {
        out.push_str("\n## Findings\n\n| verdict | id | subject | message |\n|---|---|---|---|\n");
        for finding in notable {
            let _ = writeln!(
                out,
                "| {} | `{}` | {} | {} |",
                finding.verdict,
                finding.id,
                markdown_cell(&finding.subject),
                markdown_cell(&finding.message)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optics_peaks_keep_the_hottest_reading_and_its_phase() {
        let reading = |host: &str, t: f64, phase: &str| OpticsPeak {
            host: host.into(),
            netdev: "eth2".into(),
            module: "OSFP NVIDIA MMA4Z00-NS400".into(),
            peak_temperature_c: t,
            phase: phase.into(),
            offset_s: 0.0,
        };
        let mut peaks = Vec::new();
        OpticsPeak::record(&mut peaks, reading("h1", 48.0, "loopback"));
        OpticsPeak::record(&mut peaks, reading("h1", 61.5, "alltoall"));
        OpticsPeak::record(&mut peaks, reading("h1", 55.0, "soak#2"));
        OpticsPeak::record(&mut peaks, reading("h2", 40.0, "loopback"));
        assert_eq!(peaks.len(), 2);
        assert_eq!((peaks[0].peak_temperature_c, peaks[0].phase.as_str()), (61.5, "alltoall"));
    }

    const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/burnin/report-small.json");

    #[test]
    fn example_matches_the_fixture_and_round_trips() {
        let rendered = serde_json::to_string_pretty(&example()).expect("serialize") + "\n";
        if std::env::var("FABRICDOCTOR_BLESS").as_deref() == Ok("1") {
            std::fs::create_dir_all(std::path::Path::new(FIXTURE).parent().expect("parent")).expect("mkdir");
            std::fs::write(FIXTURE, &rendered).expect("write fixture");
        }
        let stored = std::fs::read_to_string(FIXTURE).expect("fixture present (FABRICDOCTOR_BLESS=1 writes it)");
        assert_eq!(stored, rendered, "the example changed: additive changes only, then re-bless");
        let parsed = BurninReport::from_json(&stored).expect("parse fixture");
        // Compared as text: serde_json's default float parsing may differ in the last bit.
        let again = serde_json::to_string_pretty(&parsed).expect("serialize") + "\n";
        assert_eq!(again, rendered);
    }

    #[test]
    fn other_schema_versions_are_refused_by_name() {
        let mut value = serde_json::to_value(example()).expect("serialize");
        value["schema_version"] = serde_json::json!(99);
        let error = BurninReport::from_json(&value.to_string()).expect_err("version 99");
        assert!(error.to_string().contains("99"), "{error}");
        assert!(BurninReport::from_json("{").is_err());
    }

    /// From a newcomer's run: every host's check failed on host.memlock, the burn-in said PASS, and
    /// summary.md never said so; the pair figures came with no word on what bounded them.
    #[test]
    fn summary_states_host_check_failures_and_how_pairs_were_measured() {
        let mut report = example();
        let failing = Finding::new("host.memlock", Verdict::Fail, "node", "locked-memory limit 8 MiB");
        if let Some(check) = report.host_checks.first_mut() {
            check.worst = Verdict::Fail;
            check.excluded = false;
            if let Some(inner) = check.report.as_mut() {
                inner.findings.push(failing);
            }
        }
        report.run.launcher = "local".into();
        report.run.pair_test = Some(PairTestSettings {
            message_bytes: 65536,
            queue_pairs: 2,
            tx_depth: 4,
            validate: true,
            latency_bytes: 64,
            traffic_class: None,
            service_level: None,
            gid_index: None,
        });
        let summary = summary_markdown(&report);
        assert!(summary.contains("## Host checks"), "{summary}");
        assert!(
            summary
                .contains("| node0 | fail | `host.memlock` node: locked-memory limit 8 MiB | reported, not blocking"),
            "{summary}"
        );
        assert!(
            summary.contains("over tcp, 64 KiB messages, 2 connections x 4 in flight, data validation on"),
            "{summary}"
        );
        assert!(summary.contains("bounded by its CPUs and loopback"), "{summary}");
    }

    #[test]
    fn summary_and_junit_name_the_suspects_and_the_signoff() {
        let report = example();
        let summary = summary_markdown(&report);
        assert!(summary.contains("# fabricdoctor burn-in 3f2a9c1e0b7d4a55: FAIL"), "{summary}");
        assert!(summary.contains("| 90 % | link | node1 default |"), "{summary}");
        assert!(summary.contains("| node3 | lost |"), "{summary}");
        let junit = junit(&report);
        assert!(junit.contains("burnin.signoff") && junit.contains("<failure"), "{junit}");
        assert!(junit.contains(r#"name="node0-&gt;node2 default""#), "a testcase per measured pair: {junit}");
    }

    #[test]
    fn events_carry_their_kind_and_time() {
        let event = Event {
            at: "2026-11-22T18:30:00.000Z".into(),
            offset_s: 1.5,
            kind: EventKind::PhaseStarted { phase: "pairwise".into(), iteration: 0, steps_total: 6 },
        };
        let line = serde_json::to_string(&event).expect("serialize");
        assert!(line.contains(r#""event":"phase_started""#), "{line}");
        assert_eq!(serde_json::from_str::<Event>(&line).expect("parse"), event);
    }
}
