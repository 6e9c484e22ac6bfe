//! The join across inputs: rank -> host -> GPU -> NIC, so a rank named in a PyTorch or flight
//! recorder message becomes a machine, a GPU and the NIC whose counters were given.

use super::analysis::Analysis;
pub use super::analysis::{RankEntry, RankTable};
use super::counters::CounterRecord;
use crate::fact::Evidence;

/// nccl-tests' "Using devices" header: `#  Rank  1 Group  0 Pid   6900 on ztan-mig-235z device  1 [0000:05:00] NVIDIA H100`.
pub fn parse_nccl_tests_ranks(file: &str, text: &str, table: &mut RankTable) -> bool {
    let mut found = false;
    for (line_no, raw) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
        let tokens: Vec<&str> = raw.trim_start_matches('#').split_whitespace().collect();
        if tokens.first() != Some(&"Rank") {
            continue;
        }
        let Some(rank) = tokens.get(1).and_then(|r| r.parse::<u64>().ok()) else { continue };
        let position = |word: &str| tokens.iter().position(|t| *t == word);
        let (Some(on), Some(device)) = (position("on"), position("device")) else { continue };
        let host = tokens.get(on + 1).copied();
        let gpu = tokens.get(device + 1).and_then(|d| d.parse::<u32>().ok());
        let bus = tokens.get(device + 2).map(|b| b.trim_matches(|c| c == '[' || c == ']'));
        table.record(rank, host, gpu, bus, Evidence::new(file, line_no, raw));
        found = true;
    }
    found
}

/// Add host, GPU and NIC to every fact that names a rank, and that NIC's nonzero error counters as
/// evidence when counters for it were given.
pub fn enrich(analysis: &mut Analysis, counters: &[CounterRecord]) {
    let table = analysis.ranks.clone();
    for fact in &mut analysis.facts {
        let Some(rank) = fact.get("rank").and_then(|r| r.parse::<u64>().ok()) else { continue };
        let Some(entry) = table.get(rank) else { continue };
        if let Some(host) = &entry.host {
            fact.attrs.entry("host".into()).or_insert_with(|| host.clone());
        }
        if let Some(gpu) = entry.gpu {
            fact.attrs.entry("gpu".into()).or_insert_with(|| gpu.to_string());
        }
        if let Some(bus) = &entry.bus_id {
            fact.attrs.entry("bus_id".into()).or_insert_with(|| bus.clone());
        }
        for evidence in &entry.evidence {
            if !fact.evidence.contains(evidence) {
                fact.evidence.push(evidence.clone());
            }
        }
        if let Some(nic) = table.nic(rank) {
            fact.attrs.entry("nic".into()).or_insert_with(|| nic.to_string());
            for record in
                counters.iter().filter(|c| c.device == nic && c.value > 0 && super::counters::is_error_counter(&c.name))
            {
                let evidence = record.evidence.clone();
                if !fact.evidence.contains(&evidence) {
                    fact.evidence.push(evidence);
                }
            }
        }
    }
}
