//! The results of one perf run, as reports carry them: bandwidth or latency of each size, both
//! sides' counts and what each side verified. The generator (`fabricdoctor_perf::generator`) and
//! statistics (`fabricdoctor_perf::stats`) produce them.

use serde::Serialize;

use crate::params::RunParameters;

/// Bandwidth of one size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BandwidthResult {
    pub bytes: u64,
    pub iterations: u64,
    pub bw_peak_gbps: f64,
    pub bw_avg_gbps: f64,
    pub bw_peak_mib_per_second: f64,
    pub bw_avg_mib_per_second: f64,
    pub msg_rate_mpps: f64,
    /// Duration mode: the slowest of the per-interval bandwidths (a dip perftest's average hides).
    pub bw_min_interval_gbps: Option<f64>,
    pub seconds: f64,
}

/// Latency of one size, microseconds, perftest's columns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyResult {
    pub bytes: u64,
    pub iterations: u64,
    pub lat_min_us: f64,
    pub lat_max_us: f64,
    /// perftest's t_typical: the median.
    pub lat_typical_us: f64,
    pub lat_avg_us: f64,
    /// Population standard deviation (perftest divides by n).
    pub lat_stdev_us: f64,
    pub lat_p99_us: f64,
    pub lat_p99_9_us: f64,
}

/// Counts of what a receiver verified, as reports carry them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Verified {
    /// Messages checked (good or bad) and their bytes.
    pub messages: u64,
    pub bytes: u64,
    /// Payload bytes that differed from what was sent.
    pub wrong_bytes: u64,
    /// Messages lost, repeated, reordered, foreign, of the wrong length or with a corrupted header.
    pub sequence_errors: u64,
}

impl Verified {
    /// Every kind of error in one number: wrong bytes plus sequence errors (0 means all good).
    pub fn errors(&self) -> u64 {
        self.wrong_bytes + self.sequence_errors
    }

    pub fn add(&mut self, other: &Verified) {
        self.messages += other.messages;
        self.bytes += other.bytes;
        self.wrong_bytes += other.wrong_bytes;
        self.sequence_errors += other.sequence_errors;
    }
}

/// Results of one message size.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum SizeResult {
    Bandwidth(BandwidthResult),
    Latency(LatencyResult),
}

/// What the server reported for one size.
#[derive(Debug, Clone, Serialize)]
pub struct ServerCounts {
    pub messages: u64,
    pub validation_errors: u64,
    /// What the server verified of what it received (zero when not validating, or on transports
    /// whose receiver cannot see one-sided operations).
    pub verified: Verified,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_corruption: Option<String>,
}

/// One size's result with both sides' counts.
#[derive(Debug, Clone, Serialize)]
pub struct SizeRun {
    pub parameters: RunParameters,
    pub result: SizeResult,
    pub client_messages: u64,
    pub client_validation_errors: u64,
    /// What the client verified of what it received (READ responses, latency replies, the reverse
    /// direction of a bidirectional run).
    pub client_verified: Verified,
    pub server: ServerCounts,
    pub connections: Vec<String>,
    pub server_tool_version: String,
}
