//! Kernel log lines (dmesg, journalctl -k, /var/log/messages): NVIDIA Xid events, PCIe AER,
//! IOMMU faults and NIC link changes; and NCCL RAS client reports (`ncclras`, NCCL 2.24+).

use std::collections::BTreeMap;

use super::decode::xid;
use super::lines::numbered_lines;
use crate::fact::{Evidence, Fact};

/// The host a syslog/journal line names: `Nov 22 10:00:01 node7 kernel: ...`.
fn syslog_host(line: &str) -> Option<&str> {
    let before = line.split(" kernel:").next().filter(|b| b.len() < line.len())?;
    before.split_whitespace().last().filter(|h| !h.contains(':') && !h.starts_with('['))
}

pub fn parse_kernel(file: &str, text: &str) -> Vec<Fact> {
    let mut facts = Vec::new();
    let mut link_downs: BTreeMap<String, Vec<Evidence>> = BTreeMap::new();
    for (line_no, raw) in numbered_lines(text) {
        let evidence = || Evidence::new(file, line_no, raw);
        let host = syslog_host(raw).unwrap_or(crate::fact::UNKNOWN_HOST).to_string();
        if let Some(rest) = raw.split("NVRM: Xid ").nth(1) {
            // NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.
            let bus =
                rest.trim_start_matches('(').split(')').next().unwrap_or("").trim_start_matches("PCI:").to_string();
            let code = rest
                .split_once("):")
                .and_then(|(_, r)| r.trim().split(|c: char| !c.is_ascii_digit()).next()?.parse::<u32>().ok());
            if let Some(code) = code {
                let (meaning, hardware) = xid(code).unwrap_or(("see NVIDIA's Xid catalogue", false));
                let name = if hardware { "gpu.xid" } else { "gpu.xid_application" };
                let fact = |name: &str| {
                    Fact::new(name)
                        .attr("xid", code)
                        .attr("meaning", meaning)
                        .attr("bus_id", &bus)
                        .host(&host)
                        .evidence(evidence())
                };
                facts.push(fact(name));
                // Xids that report GPU memory errors are also ECC facts (NVIDIA Xid catalogue).
                if matches!(code, 48 | 63 | 64 | 92 | 94 | 95) {
                    facts.push(fact("gpu.ecc"));
                }
            }
            continue;
        }
        let lower = raw.to_ascii_lowercase();
        // pcieport 0000:00:01.0: AER: Corrected error received: 0000:3b:00.0 (drivers/pci/pcie/aer.c)
        let aer_line = raw
            .split_whitespace()
            .collect::<Vec<_>>()
            .windows(2)
            .any(|w| w[1] == "AER:" && w[0].ends_with(':') && w[0].matches(':').count() >= 2 && w[0].contains('.'));
        if aer_line || raw.contains("PCIe Bus Error:") {
            let severity = if lower.contains("uncorrected") || lower.contains("fatal") {
                "uncorrected"
            } else if lower.contains("corrected") {
                "corrected"
            } else {
                "unknown"
            };
            // "pcieport P: AER: ... error received: D" names the port P that reported and the device D
            // in error; other lines name the device first.
            let device = raw
                .split("received:")
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
                .or_else(|| {
                    raw.split_whitespace().find(|t| t.len() >= 7 && t.matches(':').count() >= 2 && t.contains('.'))
                })
                .unwrap_or("");
            facts.push(
                Fact::new("pcie.aer_event")
                    .attr("severity", severity)
                    .attr("device", device.trim_end_matches(':'))
                    .host(&host)
                    .evidence(evidence()),
            );
            continue;
        }
        // Intel VT-d (DMAR), AMD-Vi (IO_PAGE_FAULT) and Arm SMMU fault reports.
        if (lower.contains("dmar:") && lower.contains("fault"))
            || lower.contains("io_page_fault")
            || (lower.contains("smmu") && lower.contains("fault"))
        {
            facts.push(Fact::new("iommu.fault").host(&host).evidence(evidence()));
            continue;
        }
        if lower.contains("link down") || lower.contains("link is down") {
            let interface =
                raw.split(':').rev().nth(1).and_then(|s| s.split_whitespace().last()).unwrap_or("unknown").to_string();
            link_downs.entry(format!("{host} {interface}")).or_default().push(evidence());
        }
    }
    for (key, events) in link_downs {
        let (host, interface) = key.split_once(' ').unwrap_or((crate::fact::UNKNOWN_HOST, key.as_str()));
        let mut fact = Fact::new("link.flap").host(host).attr("nic", interface).attr("count", events.len());
        for evidence in events.into_iter().take(8) {
            fact = fact.evidence(evidence);
        }
        facts.push(fact);
    }
    facts
}

/// NCCL RAS report facts (format: NCCL `src/ras/client_support.cc`).
#[derive(Debug, Default)]
pub struct RasReport {
    pub facts: Vec<Fact>,
}

impl RasReport {
    pub fn is_empty(&self) -> bool {
        self.facts.is_empty()
    }
}

pub fn parse_ras(file: &str, text: &str) -> RasReport {
    let mut report = RasReport::default();
    let mut section = "";
    let mut is_ras = false;
    for (line_no, raw) in numbered_lines(text) {
        let trimmed = raw.trim();
        if trimmed.starts_with("Group     Comms     Nodes") || trimmed.starts_with("Communicators...") {
            is_ras = true;
        }
        if !is_ras {
            continue;
        }
        let evidence = || Evidence::new(file, line_no, raw);
        if trimmed == "DEAD"
            || trimmed == "INCOMPLETE"
            || trimmed.ends_with(") INCOMPLETE")
            || trimmed.ends_with(") ERROR")
        {
            section = if trimmed == "DEAD" {
                "dead"
            } else if trimmed.ends_with("ERROR") {
                "error"
            } else {
                "incomplete"
            };
            if section == "error" {
                report.facts.push(Fact::new("ras.error").attr("text", trimmed).evidence(evidence()));
            }
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("Rank ") {
            // Rank 21 -- GPU 5 managed by process 12345 on node 10.0.0.7
            let rank = rest.split_whitespace().next().and_then(|r| r.parse::<u64>().ok());
            if let Some(rank) = rank {
                let mut fact = Fact::new("ras.rank_missing").attr("rank", rank);
                if let Some(gpu) = rest.split(" GPU ").nth(1).and_then(|g| g.split_whitespace().next()) {
                    fact = fact.attr("gpu", gpu);
                }
                if let Some(host) = rest.split(" on node ").nth(1) {
                    fact = fact.attr("host", host.trim());
                }
                report.facts.push(fact.evidence(evidence()));
            }
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("Process ") {
            // Process 12345 on node 10.0.0.7 managing GPU 5
            let name = if section == "dead" { "ras.process_dead" } else { "ras.process_missing" };
            let mut fact = Fact::new(name);
            if let Some(host) = rest.split(" on node ").nth(1).and_then(|h| h.split_whitespace().next()) {
                fact = fact.host(host);
            }
            if let Some(gpu) = rest.split(" GPU").nth(1).and_then(|g| g.split_whitespace().last()) {
                fact = fact.attr("gpu", gpu);
            }
            report.facts.push(fact.evidence(evidence()));
            continue;
        }
        let columns: Vec<&str> = trimmed.split_whitespace().collect();
        if columns.len() >= 8 && columns[0].parse::<u32>().is_ok() && columns[columns.len() - 1].contains("MISMATCH") {
            report
                .facts
                .push(Fact::new("ras.mismatch").attr("status", columns[columns.len() - 2]).evidence(evidence()));
        }
        if trimmed.starts_with("Asynchronous error") || trimmed.starts_with("Initialization error") {
            report.facts.push(Fact::new("ras.error").attr("text", trimmed).evidence(evidence()));
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ras_dead_and_missing_processes() {
        let text = "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n    #  in group  per comm  per node  per comm  in group\n    0         1         2         8        16        16   RUNNING  MISMATCH\n\nErrors\n======\n\nDEAD\n  1 job process is considered dead (unreachable via the RAS network)\n  Process 4242 on node 10.0.0.9 managing GPU 3\n";
        let report = parse_ras("f", text);
        let names: Vec<&str> = report.facts.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["ras.mismatch", "ras.process_dead"]);
        assert_eq!(report.facts[1].get("host"), Some("10.0.0.9"));
        assert_eq!(report.facts[1].get("gpu"), Some("3"));
        assert!(parse_ras("f", "Process 1 on node x managing GPU 0\n").is_empty(), "not a RAS report");
    }

    #[test]
    fn xid_from_journal_line() {
        let facts = parse_kernel("f", "Nov 22 10:00:01 node7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.");
        assert_eq!(facts[0].name, "gpu.xid");
        assert_eq!(facts[0].get("xid"), Some("79"));
        assert_eq!(facts[0].get("host"), Some("node7"));
        assert_eq!(facts[0].get("bus_id"), Some("0000:3b:00"));
    }
}
