//! The versioned report every command writes, and its renderers (text, JSON, JUnit XML, Markdown,
//! the `nvidia-smi topo -m` matrix). Data first: renderers only format what the report holds.

pub mod burnin;
pub mod counters;
pub mod exporter;
pub mod html;
pub mod output;
pub mod pair_summary;
pub mod perf;
pub mod render;
pub mod topo;

use fabricdoctor_checks::topology::FunctionLocality;
use fabricdoctor_checks::{Finding, Topology, Verdict};
use serde::{Deserialize, Serialize};

/// Bump on any change of meaning of the JSON (removed or renamed keys, changed units or semantics);
/// adding keys is compatible. Consumers check it as nccl-tests' JSON_FILE_VERSION is meant to be checked.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    pub schema_version: u32,
    pub tool_version: String,
    /// RFC 3339 UTC time the report was made.
    pub generated_at: String,
    /// "check", "burnin", ...
    pub command: String,
    pub hosts: Vec<HostInfo>,
    pub findings: Vec<Finding>,
    pub summary: Summary,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostInfo {
    pub hostname: String,
    pub kernel_release: Option<String>,
    /// "live", or the captured tree that was analysed.
    pub source: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    pub pass: usize,
    pub warn: usize,
    pub fail: usize,
    pub skip: usize,
    pub error: usize,
}

impl Summary {
    pub fn of(findings: &[Finding]) -> Summary {
        let mut summary = Summary::default();
        for finding in findings {
            *match finding.verdict {
                Verdict::Pass => &mut summary.pass,
                Verdict::Warn => &mut summary.warn,
                Verdict::Fail => &mut summary.fail,
                Verdict::Skip => &mut summary.skip,
                Verdict::Error => &mut summary.error,
            } += 1;
        }
        summary
    }

    pub fn total(&self) -> usize {
        self.pass + self.warn + self.fail + self.skip + self.error
    }
}

impl Report {
    pub fn new(command: &str, hosts: Vec<HostInfo>, findings: Vec<Finding>) -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            generated_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            command: command.to_string(),
            hosts,
            summary: Summary::of(&findings),
            findings,
        }
    }

    /// The worst verdict present (`Pass` for an empty report).
    pub fn worst(&self) -> Verdict {
        self.findings.iter().map(|f| f.verdict).max().unwrap_or(Verdict::Pass)
    }
}

/// `fabricdoctor topo --json`.
#[derive(Debug, Clone, Serialize)]
pub struct TopologyReport {
    pub schema_version: u32,
    pub tool_version: String,
    pub host: HostInfo,
    pub topology: Topology,
    pub legend: Vec<(String, String)>,
    /// Every PCI function's NUMA node (not only GPUs and NICs).
    pub pci_locality: Vec<FunctionLocality>,
}

impl TopologyReport {
    pub fn new(host: HostInfo, topology: Topology, pci_locality: Vec<FunctionLocality>) -> TopologyReport {
        TopologyReport {
            schema_version: SCHEMA_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            host,
            topology,
            legend: topo::LEGEND_ORDER.iter().map(|r| (r.as_str().to_string(), r.legend().to_string())).collect(),
            pci_locality,
        }
    }
}
