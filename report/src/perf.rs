//! Rendering of `fabricdoctor perf` results: perftest's table layout and units (so numbers can be put
//! side by side with ib_write_bw / ib_write_lat), and the JSON document with every unit in its key.

use std::fmt::Write as _;

use fabricdoctor_perf_schema::params::RunParameters;
use fabricdoctor_perf_schema::results::{SizeResult, SizeRun};
use serde::Serialize;

use crate::SCHEMA_VERSION;

#[derive(Debug, Clone, Serialize)]
pub struct PerfReport {
    pub schema_version: u32,
    pub tool_version: String,
    pub server: String,
    pub parameters: RunParameters,
    pub runs: Vec<SizeRun>,
    /// `--gpu`: where this side's messages lived and how they reached the wire.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuBuffers>,
}

/// This side's GPU buffers (`perf --gpu N`).
#[derive(Debug, Clone, Serialize)]
pub struct GpuBuffers {
    /// CUDA device ordinal.
    pub gpu: u32,
    pub name: String,
    pub pci_bus_id: String,
    /// "staged-pinned-host" (copied between GPU and pinned host memory around every message) or
    /// "gpudirect-dmabuf" (the NIC reads and writes GPU memory itself).
    pub memory_path: String,
}

impl PerfReport {
    pub fn new(server: String, parameters: RunParameters, runs: Vec<SizeRun>) -> PerfReport {
        PerfReport {
            schema_version: SCHEMA_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            server,
            parameters,
            runs,
            gpu: None,
        }
    }

    pub fn with_gpu(mut self, gpu: Option<GpuBuffers>) -> PerfReport {
        self.gpu = gpu;
        self
    }
}

const RULE: &str = "---------------------------------------------------------------------------------------";

/// The header block: what ran where, as perftest prints its connection summary.
pub fn header(report: &PerfReport) -> String {
    let p = &report.parameters;
    let mut out = String::new();
    let _ = writeln!(out, "{RULE}");
    let _ = writeln!(
        out,
        "                    RDMA_{} {} Test (fabricdoctor, transport {})",
        format!("{:?}", p.operation).to_uppercase(),
        match p.test {
            fabricdoctor_perf_schema::params::TestKind::Bandwidth => "BW",
            fabricdoctor_perf_schema::params::TestKind::Latency => "Latency",
        },
        p.transport
    );
    let _ = writeln!(out, " Number of qps   : {}\t\tTransport type : {}", p.queue_pairs, p.transport);
    let _ = writeln!(out, " TX depth        : {}", p.tx_depth);
    if p.post_list > 1 {
        let _ = writeln!(out, " Post List       : {}", p.post_list);
    }
    match (p.iterations, p.duration_ms) {
        (_, Some(ms)) => {
            let _ = writeln!(out, " Duration        : {:.1} s", ms as f64 / 1000.0);
        }
        (Some(n), None) => {
            let _ = writeln!(out, " Iterations      : {n}");
        }
        (None, None) => {}
    }
    let _ = writeln!(out, " Server          : {}", report.server);
    if p.validate {
        let _ = writeln!(
            out,
            " Validation      : every message verified (sequence, sender, length, payload words), seed {:#018x}",
            report.runs.first().map_or(p.validation_seed, |r| r.parameters.validation_seed)
        );
    }
    if let Some(gpu) = &report.gpu {
        let _ =
            writeln!(out, " GPU buffers     : GPU {} ({}, {}), {}", gpu.gpu, gpu.name, gpu.pci_bus_id, gpu.memory_path);
    }
    if let Some(run) = report.runs.first() {
        for connection in &run.connections {
            let _ = writeln!(out, " local/remote    : {connection}");
        }
    }
    out
}

/// With `--validate`: what each side verified, summed over the sizes, so the reader sees the check
/// covered the traffic it measured (where the receiver sees it: a one-sided RDMA WRITE or READ
/// leaves the passive side nothing to verify per message).
pub fn verified_footer(report: &PerfReport) -> String {
    if !report.parameters.validate {
        return String::new();
    }
    let mut server = fabricdoctor_perf_schema::results::Verified::default();
    let mut client = fabricdoctor_perf_schema::results::Verified::default();
    for run in &report.runs {
        server.add(&run.server.verified);
        client.add(&run.client_verified);
    }
    let side = |name: &str, v: &fabricdoctor_perf_schema::results::Verified| {
        format!(
            "{name} verified {} messages ({} bytes): {} wrong bytes, {} lost/repeated/reordered",
            v.messages, v.bytes, v.wrong_bytes, v.sequence_errors
        )
    };
    format!(" {}\n {}\n", side("server", &server), side("client", &client))
}

/// perftest's bandwidth table: `#bytes #iterations BW peak BW average MsgRate` in MiB/s (perftest's
/// "MB/sec" is 2^20 bytes) or Gb/s with `report_gbits`, MsgRate in Mpps.
pub fn bandwidth_table(report: &PerfReport, report_gbits: bool) -> String {
    let unit = if report_gbits { "Gb/sec" } else { "MiB/sec" };
    let mut out = header(report);
    let _ = writeln!(out, "{RULE}");
    let _ = writeln!(
        out,
        " #bytes     #iterations    BW peak[{unit}]    BW average[{unit}]   MsgRate[Mpps]   BW min interval[{unit}]"
    );
    for run in &report.runs {
        if let SizeResult::Bandwidth(b) = &run.result {
            let (peak, average) = if report_gbits {
                (b.bw_peak_gbps, b.bw_avg_gbps)
            } else {
                (b.bw_peak_mib_per_second, b.bw_avg_mib_per_second)
            };
            let minimum = b
                .bw_min_interval_gbps
                .map(|g| if report_gbits { format!("{g:.2}") } else { format!("{:.2}", g * 1e9 / 8.0 / 1048576.0) })
                .unwrap_or_else(|| "-".into());
            let _ = writeln!(
                out,
                " {:<10} {:<14} {:<18.2} {:<20.2} {:<15.6} {}",
                b.bytes, b.iterations, peak, average, b.msg_rate_mpps, minimum
            );
        }
    }
    let _ = writeln!(out, "{RULE}");
    out.push_str(&verified_footer(report));
    out
}

/// perftest's latency table in microseconds (floating point, with both percentiles, also in duration
/// mode).
pub fn latency_table(report: &PerfReport) -> String {
    let mut out = header(report);
    let _ = writeln!(out, "{RULE}");
    let _ = writeln!(
        out,
        " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]"
    );
    for run in &report.runs {
        if let SizeResult::Latency(l) = &run.result {
            let _ = writeln!(
                out,
                " {:<6} {:<11} {:<14.3} {:<14.3} {:<16.3} {:<14.3} {:<15.3} {:<22.3} {:.3}",
                l.bytes,
                l.iterations,
                l.lat_min_us,
                l.lat_max_us,
                l.lat_typical_us,
                l.lat_avg_us,
                l.lat_stdev_us,
                l.lat_p99_us,
                l.lat_p99_9_us
            );
        }
    }
    let _ = writeln!(out, "{RULE}");
    out.push_str(&verified_footer(report));
    out
}

/// `fabricdoctor perf allreduce ... --json` (rank 0): the sweep's parameters and nccl-tests' rows, with
/// every rank's time and the slowest rank per size.
#[derive(Debug, Clone, Serialize)]
pub struct CollectiveReport {
    pub schema_version: u32,
    pub tool_version: String,
    pub collective: fabricdoctor_perf_schema::collective::Collective,
    pub ranks: usize,
    pub hosts: Vec<String>,
    pub channels: u32,
    pub transport: String,
    pub spec: fabricdoctor_perf_schema::collective::SweepSpec,
    /// The α-β model measured before the sweep, from which each row's prediction (and, with
    /// `--algo auto`, its algorithm) comes; absent with one rank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<fabricdoctor_perf_schema::collective::CostModel>,
    pub rows: Vec<fabricdoctor_perf_schema::collective::SizeRow>,
    /// `--gpu`: rank 0's GPU buffers and how they reached the wire.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuBuffers>,
}
