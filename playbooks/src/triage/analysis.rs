//! Everything the parsers found in the inputs, before the playbooks' rules run: the facts, the
//! verdicts of checks applied to pasted tool outputs, what each input was read as, and the rank table
//! (rank -> host -> GPU -> NIC) that `join` fills and enriches.

use std::collections::{BTreeMap, BTreeSet};

use fabricdoctor_checks::Finding;
use serde::{Deserialize, Serialize};

use crate::fact::{Evidence, Fact};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputSummary {
    pub file: String,
    /// What the input was recognised as ("nccl-log", "lspci", ...); "unrecognised" when nothing was.
    pub kinds: Vec<String>,
    pub lines: usize,
}

/// Everything the parsers found in the inputs, before rules run.
#[derive(Debug, Default)]
pub struct Analysis {
    pub facts: Vec<Fact>,
    /// Verdicts from the same checks `fabricdoctor check` runs, applied to pasted tool outputs.
    pub observations: Vec<Finding>,
    pub inputs: Vec<InputSummary>,
    pub ranks: RankTable,
}

impl Analysis {
    pub fn push(&mut self, fact: Fact) {
        self.facts.push(fact);
    }

    pub fn has(&self, name: &str) -> bool {
        self.facts.iter().any(|f| f.name == name)
    }
}

/// What the inputs say about one rank: its host, its GPU and the quoted lines that said so.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RankEntry {
    pub host: Option<String>,
    /// CUDA device index on its host.
    pub gpu: Option<u32>,
    pub bus_id: Option<String>,
    pub evidence: Vec<Evidence>,
}

#[derive(Debug, Clone, Default)]
pub struct RankTable {
    pub ranks: BTreeMap<u64, RankEntry>,
    /// GPU index -> rail NIC device, from a pasted `nvidia-smi topo -m` (nodes of a job are alike).
    pub rails: BTreeMap<u32, String>,
    /// Rank -> the NIC its inter-node channels use, from NCCL's `via NET/IB/k` lines and its host's
    /// `NET/IB : Using [k]mlx5_k` list: what NCCL chose, preferred over the topology's rail.
    pub nccl_nics: BTreeMap<u64, String>,
    /// Per input, per line, the numbers launchers' labels gave it (srun -l's task, Open MPI's or
    /// torchrun's rank). Empty for inputs without such labels.
    pub labels: BTreeMap<String, Vec<super::prefix::LineLabels>>,
}

impl RankTable {
    pub fn record(
        &mut self,
        rank: u64,
        host: Option<&str>,
        gpu: Option<u32>,
        bus_id: Option<&str>,
        evidence: Evidence,
    ) {
        let entry = self.ranks.entry(rank).or_default();
        if entry.host.is_none() {
            entry.host = host.map(str::to_string);
        }
        if entry.gpu.is_none() {
            entry.gpu = gpu;
        }
        if entry.bus_id.is_none() {
            entry.bus_id = bus_id.map(str::to_string);
        }
        if entry.evidence.len() < 2 && !entry.evidence.contains(&evidence) {
            entry.evidence.push(evidence);
        }
    }

    pub fn get(&self, rank: u64) -> Option<&RankEntry> {
        self.ranks.get(&rank)
    }

    /// `nccl.single_host` when every one of `ranks` (two or more) is known to run on one host: such a
    /// job never uses the network, so an RDMA device it could not open did not matter to it.
    pub fn single_host(&self, ranks: impl IntoIterator<Item = u64>) -> Option<Fact> {
        let entries: Vec<Option<&RankEntry>> = ranks.into_iter().map(|rank| self.get(rank)).collect();
        let hosts: BTreeSet<Option<&str>> =
            entries.iter().map(|entry| entry.and_then(|entry| entry.host.as_deref())).collect();
        let [Some(host)] = hosts.into_iter().collect::<Vec<_>>()[..] else { return None };
        if entries.len() < 2 {
            return None;
        }
        let mut fact = Fact::new("nccl.single_host").host(host).attr("ranks", entries.len());
        for evidence in entries.iter().flatten().filter_map(|entry| entry.evidence.first()).take(4) {
            fact = fact.evidence(evidence.clone());
        }
        Some(fact)
    }

    /// The labels launchers put on the line `evidence` cites.
    pub fn labels_of(&self, evidence: &Evidence) -> super::prefix::LineLabels {
        let line = evidence.line.checked_sub(1);
        line.and_then(|line| self.labels.get(&evidence.file)?.get(line).copied()).unwrap_or_default()
    }

    /// The NIC a rank's GPU uses, when a topology gave its rail.
    pub fn nic(&self, rank: u64) -> Option<&str> {
        if let Some(nic) = self.nccl_nics.get(&rank) {
            return Some(nic);
        }
        let gpu = self.get(rank)?.gpu?;
        self.rails.get(&gpu).map(String::as_str)
    }
}
