//! PyTorch ProcessGroupNCCL watchdog messages, the flight recorder analyzer's text output
//! (`tools/flight_recorder/fr_trace.py`), and raw flight recorder dumps (pickles written by
//! `TORCH_NCCL_DUMP_ON_TIMEOUT`), turned into per-rank sequence facts: who is behind, who is
//! missing, who issued a different collective.

use std::collections::{BTreeMap, BTreeSet};

use super::analysis::Analysis;
use super::lines::numbered_lines;
use super::pickle::{self, PickleError, Value};
use super::prefix::LineLabels;
use crate::fact::{Evidence, Fact};

/// `Watchdog caught collective operation timeout: WorkNCCL(SeqNum=.., OpType=.., NumelIn=.., ...)`
/// and `Timeout at NCCL work: N, last enqueued NCCL work: N, last completed NCCL work: N.`
#[derive(Debug, Clone, Default)]
pub struct WatchdogRecord {
    pub rank: Option<u64>,
    pub seq: Option<u64>,
    pub op: Option<String>,
    pub numel_in: Option<u64>,
    pub numel_out: Option<u64>,
    pub timeout_ms: Option<u64>,
    pub last_enqueued: Option<u64>,
    pub last_completed: Option<u64>,
    /// PyTorch 2.4's "Exception (either an error or timeout) detected by watchdog at work: N" line,
    /// which follows the rank's own "Watchdog caught" line: alone in a paste, that line was cut.
    pub detected_only: bool,
    /// The process group the line names ("[PG ID 3 PG GUID 3 Rank 1]", PyTorch 2.4's "[PG 37
    /// Rank 0]"): sequence numbers count within one group.
    pub group: Option<u64>,
    pub evidence: Evidence,
}

/// One culprit from the analyzer: `Culprit rank 22; Error type: SIZE_OR_SYNTAX_MISMATCH, ...`.
#[derive(Debug, Clone)]
pub struct AnalyzerError {
    pub rank: Option<u64>,
    pub error_type: String,
    pub detail: String,
    pub collective: Option<String>,
    pub op: Option<String>,
    pub group: Option<String>,
    pub state: Option<String>,
    pub missing_ranks: Vec<u64>,
    pub evidence: Vec<Evidence>,
}

/// One flight recorder entry of one rank.
#[derive(Debug, Clone)]
pub struct FlightEntry {
    pub group: String,
    pub seq: i64,
    pub op: String,
    pub input_sizes: String,
    pub state: String,
}

#[derive(Debug, Clone)]
pub struct FlightDump {
    pub file: String,
    pub rank: Option<u64>,
    pub entries: Vec<FlightEntry>,
}

#[derive(Debug, Clone, Default)]
pub struct PytorchRecords {
    pub watchdog: Vec<WatchdogRecord>,
    pub analyzer: Vec<AnalyzerError>,
    pub dumps: Vec<FlightDump>,
    /// Reports that say what they found in one line: ProcessGroupNCCL's desync report and the
    /// collective fingerprint check of TORCH_DISTRIBUTED_DEBUG=DETAIL.
    pub stated: Vec<Fact>,
    /// A progress bar that went on counting after the first watchdog timeout of this input.
    pub progress: Option<ProgressAfterTimeout>,
    /// Ranks that did not time out themselves but say how far they got when another rank's timeout
    /// asked them to dump ("Received a dump signal due to a collective timeout from rank 3 ... Last
    /// enqueued NCCL work: 41, last completed NCCL work: 41."): (rank, its process group's id, last
    /// enqueued, the line).
    pub signalled: Vec<(u64, Option<u64>, u64, Evidence)>,
    /// The process groups whose watchdog caught a timeout ("[PG ID 0 PG GUID 0(default_pg) Rank 3]
    /// failure detected by watchdog at work sequence id: 42").
    pub timed_out_groups: Vec<u64>,
    /// The last lines of Python exceptions the program raised itself ("ValueError: Error in
    /// finalize: ..."), not a distributed or device error: a rank that raised one ended there.
    pub raised: Vec<Evidence>,
}

/// How many of a program's own exceptions an input keeps: the first ranks that raised one are
/// what matters, and a log of a thousand ranks' identical tracebacks adds nothing past them.
const MAX_RAISED: usize = 16;

/// The last line of a Python traceback whose exception is the program's own ("ValueError: Error in
/// finalize: another evaluation module instance is already using the local cache file. ...",
/// "KeyError: 'labels'"): a class name ending in Error or Exception, then its message. Errors of
/// the distributed stack, the device or the network (DistBackendError, "NCCL error", "CUDA out of
/// memory", timeouts, connections, the store) are read by their own readers, not as this.
fn program_exception(line: &str) -> bool {
    let Some((class, message)) = line.split_once(": ") else {
        return false;
    };
    let name = class.rsplit('.').next().unwrap_or(class);
    let is_class = class.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && class.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
        && (name.ends_with("Error") || name.ends_with("Exception"));
    if !is_class {
        return false;
    }
    const DISTRIBUTED_CLASSES: [&str; 10] =
        ["dist", "nccl", "childfailed", "processraised", "timeout", "connection", "cuda", "hip", "gloo", "mpi"];
    const DISTRIBUTED_WORDS: [&str; 16] = [
        "nccl",
        "cuda",
        "timed out",
        "timeout",
        "watchdog",
        "out of memory",
        "process group",
        "c10d",
        "socket",
        "connection",
        "connect to",
        "rendezvous",
        "tcpstore",
        "collective",
        "gloo",
        "hip",
    ];
    let lower = message.to_ascii_lowercase();
    let class = class.to_ascii_lowercase();
    !DISTRIBUTED_CLASSES.iter().any(|word| class.contains(word))
        && !DISTRIBUTED_WORDS.iter().any(|word| lower.contains(word))
}

/// A progress bar (tqdm's `n/total [elapsed<remaining, rate]`) at or before the first watchdog
/// timeout, and the same bar further on after it: the process printing it was still working.
#[derive(Debug, Clone)]
pub struct ProgressAfterTimeout {
    pub before: (u64, u64, Evidence),
    pub after: (u64, Evidence),
}

impl PytorchRecords {
    pub fn kinds(&self) -> Vec<&'static str> {
        let mut kinds = Vec::new();
        if !self.watchdog.is_empty() {
            kinds.push("pytorch-watchdog");
        }
        if !self.stated.is_empty() {
            kinds.push("pytorch-report");
        }
        if !self.analyzer.is_empty() {
            kinds.push("pytorch-flight-recorder-analysis");
        }
        kinds
    }

    pub fn from_dump(dump: FlightDump) -> PytorchRecords {
        PytorchRecords { dumps: vec![dump], ..PytorchRecords::default() }
    }
}

/// `Key=123` inside a WorkNCCL(...) description.
fn keyed_number(text: &str, key: &str) -> Option<u64> {
    let at = text.find(key)?;
    text[at + key.len()..].chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse().ok()
}

fn keyed_word(text: &str, key: &str) -> Option<String> {
    let at = text.find(key)?;
    let word: String = text[at + key.len()..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    (!word.is_empty()).then_some(word)
}

/// The rank a PyTorch log line is about: `[Rank 3]`, `Rank 3]` inside `[PG 0 (default_pg) Rank 3]`, or `[rank3]:`.
fn rank_of(line: &str) -> Option<u64> {
    keyed_number(line, " Rank ").or_else(|| keyed_number(line, "[Rank ")).or_else(|| keyed_number(line, "[rank"))
}

/// Numbers in a Python set or list literal: `{0, 1, 2}`.
fn numbers(text: &str) -> Vec<u64> {
    text.split(|c: char| !c.is_ascii_digit()).filter_map(|t| t.parse().ok()).take(1 << 16).collect()
}

/// The phrases a line is read for here beyond the watchdog's, in one search (each `contains` would
/// scan every line again): c10d's wrapper's collective and shape checks and Accelerate's shape
/// check (ranks disagreeing on a collective), Lightning's line for each process it starts,
/// c10d's wait for a communicator's unique id (PyTorch before 1.10 spelt it "retreiving"), and
/// Gloo's monitored barrier naming the ranks that did not come.
fn line_phrases() -> &'static regex::Regex {
    static PHRASES: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    PHRASES.get_or_init(|| {
        regex::Regex::new(
            r"Detected mismatch between collectives on ranks|Error when verifying shape tensors for collective|Cannot apply desired operation due to shape mismatches|GLOBAL_RANK: |retr(?:ie|ei)ving ncclUniqueId from \[|failed to pass monitoredBarrier in |received errors while waiting for send/recv from rank ",
        )
        .expect("literal phrases compile")
    })
}

/// What a line found by [`line_phrases`] says.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phrase {
    /// Lightning's line for each process it starts.
    LightningMember,
    /// c10d's wait for a communicator's unique id.
    UniqueIdWait,
    /// Gloo's monitored barrier on rank 0: the ranks named before the phrase did not come.
    BarrierMissed,
    /// Gloo's monitored barrier on another rank: the rank named after the phrase failed.
    BarrierRootFailed,
    /// A check that found ranks passing different collectives or shapes.
    Mismatch,
}

impl Phrase {
    fn of(found: &str) -> Phrase {
        match found {
            "GLOBAL_RANK: " => Phrase::LightningMember,
            "failed to pass monitoredBarrier in " => Phrase::BarrierMissed,
            "received errors while waiting for send/recv from rank " => Phrase::BarrierRootFailed,
            _ if found.contains("ncclUniqueId") => Phrase::UniqueIdWait,
            _ => Phrase::Mismatch,
        }
    }
}

/// The ranks Gloo's monitored barrier names as not having passed it (ProcessGroupGloo.cpp
/// monitoredBarrier): on rank 0, "[Rank 0]: Rank 1 failed to pass monitoredBarrier in 2000 ms", or
/// with wait_all_ranks "Ranks 1, 2 failed to pass monitoredBarrier in 120000 ms", the ranks
/// before the phrase; on another rank, "Rank 1 successfully reached monitoredBarrier, but received
/// errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.", the
/// rank after it. At most 64.
fn barrier_absentees(phrase: Phrase, before: &str, after: &str) -> Vec<u64> {
    match phrase {
        Phrase::BarrierMissed => before.rfind("Rank").map(|at| numbers(&before[at..])).unwrap_or_default(),
        Phrase::BarrierRootFailed => {
            after.split(|c: char| !c.is_ascii_digit()).next().and_then(|r| r.parse().ok()).into_iter().collect()
        }
        _ => Vec::new(),
    }
    .into_iter()
    .take(64)
    .collect()
}

pub fn parse_text(file: &str, text: &str) -> PytorchRecords {
    let mut records = PytorchRecords::default();
    let mut context: BTreeMap<&str, String> = BTreeMap::new();
    let mut context_evidence: Vec<Evidence> = Vec::new();
    let mut running: BTreeMap<u64, (u64, String, Evidence)> = BTreeMap::new();
    let mut unpublished: BTreeSet<u64> = BTreeSet::new();
    let mut absent_from_barrier: BTreeSet<u64> = BTreeSet::new();
    let mut members = LightningMembers::default();
    for (line_no, raw) in numbered_lines(text) {
        let evidence = Evidence::new(file, line_no, raw);
        // PyTorch 2.4's watchdog logs each work that failed or timed out as soon as it sees it
        // ("Exception (either an error or timeout) detected by watchdog at work: 438, last enqueued
        // NCCL work: 451, last completed NCCL work: 437.", ProcessGroupNCCL.cpp watchdogHandler;
        // later "NCCL error is detected by watchdog at work: ..."): the same record, which may be
        // all a rank's log kept (huggingface/accelerate#3206).
        let detected = raw.contains("detected by watchdog at work: ");
        if raw.contains("Watchdog caught collective operation timeout")
            || raw.contains("Timeout at NCCL work:")
            || detected
        {
            // The exception the watchdog thread ended with quotes the timeout and names its group
            // ("[PG ID 6 PG GUID 266(...) Rank 6] Process group watchdog thread terminated with
            // exception: [Rank 6] Watchdog caught ...", ProcessGroupNCCL.cpp): all a log keeps of
            // the group that timed out where its "failure detected by watchdog" line was not captured.
            if raw.contains("watchdog thread terminated") {
                records.timed_out_groups.extend(keyed_number(raw, "PG ID "));
            }
            records.watchdog.push(WatchdogRecord {
                rank: rank_of(raw),
                seq: keyed_number(raw, "SeqNum=")
                    .or_else(|| keyed_number(raw, "Timeout at NCCL work: "))
                    .or_else(|| keyed_number(raw, "detected by watchdog at work: ")),
                op: keyed_word(raw, "OpType="),
                numel_in: keyed_number(raw, "NumelIn="),
                numel_out: keyed_number(raw, "NumelOut="),
                timeout_ms: keyed_number(raw, "Timeout(ms)="),
                last_enqueued: keyed_number(raw, "last enqueued NCCL work: "),
                last_completed: keyed_number(raw, "last completed NCCL work: "),
                detected_only: detected,
                group: keyed_number(raw, "PG ID ").or_else(|| keyed_number(raw, "[PG ")),
                evidence,
            });
            continue;
        }
        // ProcessGroupNCCL's heartbeat monitor, on a rank another rank's timeout signalled
        // (ProcessGroupNCCL.cpp: "Received a dump signal due to a collective timeout from rank N and
        // we will try our best to dump the debug info. Last enqueued NCCL work: E, last completed
        // NCCL work: C."): how far this rank got, though it timed out on nothing.
        // Both lines name their process group ("[PG ID 0 PG GUID 0(default_pg) Rank 7]"): one
        // search passes every other line by.
        if raw.contains("PG ID ") {
            if raw.contains("Received a dump signal") {
                if let (Some(rank), Some(enqueued)) = (rank_of(raw), keyed_number(raw, "Last enqueued NCCL work: ")) {
                    records.signalled.push((rank, keyed_number(raw, "PG ID "), enqueued, evidence));
                }
                continue;
            }
            if raw.contains("failure detected by watchdog") || raw.contains("watchdog thread terminated") {
                records.timed_out_groups.extend(keyed_number(raw, "PG ID "));
            }
        }
        let trimmed = raw.trim();
        if records.raised.len() < MAX_RAISED && program_exception(trimmed) {
            records.raised.push(evidence.clone());
        }
        // The same wrapper logs every collective a rank starts ("[Rank 1] Running collective:
        // CollectiveFingerPrint(SequenceNumber=3, OpType=BROADCAST, ...)"); the last one of each
        // rank is where it stands.
        if trimmed.contains("Running collective: CollectiveFingerPrint(") {
            if let (Some(rank), Some(seq)) = (rank_of(raw), keyed_number(raw, "SequenceNumber=")) {
                let op = keyed_word(raw, "OpType=").unwrap_or_else(|| "unknown".into());
                running.insert(rank, (seq, op, evidence));
            }
            continue;
        }
        let phrase = line_phrases().find(trimmed).map(|found| (Phrase::of(found.as_str()), found.start(), found.end()));
        if let Some((Phrase::LightningMember, _, end)) = phrase {
            members.read(&trimmed[end..], &evidence);
        }
        // Gloo's monitored barrier (torch.distributed.monitored_barrier) names the ranks that did not
        // reach it: they crashed, hang before it or run behind, and the ranks waiting in it are
        // their consequence. Each rank named once an input.
        if let Some((kind @ (Phrase::BarrierMissed | Phrase::BarrierRootFailed), start, end)) = phrase {
            for rank in barrier_absentees(kind, &trimmed[..start], &trimmed[end..]) {
                if absent_from_barrier.len() < 64 && absent_from_barrier.insert(rank) {
                    records.stated.push(
                        Fact::new("pytorch.rank_behind")
                            .attr("rank", rank)
                            .attr("last_seq", "unknown (it did not pass Gloo's monitored barrier)")
                            .attr("max_seq", "the monitored barrier")
                            .evidence(evidence.clone()),
                    );
                }
            }
            continue;
        }
        // A rank that waited in vain for the communicator's unique id ("[3] is setting up NCCL
        // communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0',
        // but store->get('0') got error: wait timeout after 1800000ms", ProcessGroupNCCL.cpp
        // broadcastUniqueNCCLID): the rank it names creates the id and publishes it when it sets
        // up the same communicator, so that rank never got there (still loading a model, crashed,
        // or on another code path). The error follows on the same line or, where a terminal
        // wrapped it, the next. Once a rank named, at most 64 ranks.
        if let Some((Phrase::UniqueIdWait, _, end)) = phrase {
            if let Some(root) = trimmed[end..].split(']').next().and_then(|r| r.trim().parse::<u64>().ok()) {
                if unpublished.len() < 64 && unpublished.insert(root) {
                    records.stated.push(
                        Fact::new("pytorch.rank_behind")
                            .attr("rank", root)
                            .attr("last_seq", "unknown (it never published the communicator's unique id)")
                            .attr("max_seq", "the communicator's set-up")
                            .evidence(evidence),
                    );
                }
                continue;
            }
        }
        // The checks that find ranks passing different collectives or shapes.
        if phrase.is_some_and(|(kind, _, _)| kind == Phrase::Mismatch) {
            let ops = if let Some(rest) = trimmed.split("Detected mismatch between collectives on ranks.").nth(1) {
                // c10d ProcessGroupWrapper (TORCH_DISTRIBUTED_DEBUG=DETAIL): "Detected mismatch
                // between collectives on ranks. Rank 1 is running collective:
                // CollectiveFingerPrint(...)".
                rest.trim().to_string()
            } else if let Some(rest) = trimmed.split("Error when verifying shape tensors for collective ").nth(1) {
                // The same wrapper comparing the shapes every rank passes before the collective:
                // "Error when verifying shape tensors for collective ALLREDUCE on rank 0. This
                // likely indicates that input shapes into the collective are mismatched across
                // ranks."
                let op = rest.split_whitespace().next().unwrap_or("unknown");
                format!("the ranks passed tensors of different shapes to {op} (c10d's shape check)")
            } else {
                // Accelerate's own check of a collective's inputs across processes (debug mode,
                // accelerate/utils/operations.py verify_operation): "Cannot apply desired operation
                // due to shape mismatches. All shapes across devices must be valid."
                "the processes passed tensors of different shapes to one collective (Accelerate's check)".to_string()
            };
            let seq = keyed_number(raw, "SequenceNumber=").map_or_else(|| "unknown".to_string(), |s| s.to_string());
            records.stated.push(Fact::new("pytorch.op_mismatch").attr("seq", seq).attr("ops", ops).evidence(evidence));
            continue;
        }
        // c10d desync debug report (TORCH_NCCL_DESYNC_DEBUG=1), under "the lagging/dead/mismatched
        // ranks that caused the desync are:": "[7] finished collective #182, but didn't join
        // collective #183 (count from 1)".
        if let Some(rest) = trimmed.strip_prefix('[') {
            if let (Some((ranks, text)), true) = (rest.split_once(']'), trimmed.contains("didn't join collective #")) {
                let number = |key: &str| {
                    text.split(key)
                        .nth(1)
                        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next()?.parse::<u64>().ok())
                };
                for rank in ranks.split(',').filter_map(|r| r.trim().parse::<u64>().ok()) {
                    let mut fact = Fact::new("pytorch.rank_behind").attr("rank", rank);
                    if let (Some(done), Some(missed)) = (number("finished collective #"), number("join collective #")) {
                        fact = fact.attr("last_seq", done).attr("max_seq", missed);
                    }
                    records.stated.push(fact.evidence(evidence.clone()));
                }
                continue;
            }
        }
        if let Some(rest) = trimmed.strip_prefix("Collective ") {
            if trimmed.ends_with("errors") || trimmed.contains(" at entry ") {
                context.clear();
                context_evidence.clear();
                context.insert("collective", rest.split_whitespace().next().unwrap_or("").to_string());
                context_evidence.push(evidence);
                continue;
            }
        }
        if let Some(rest) = trimmed.strip_prefix("Not all ranks joining collective ") {
            context.clear();
            context_evidence.clear();
            context.insert("collective", rest.split_whitespace().next().unwrap_or("").to_string());
            context_evidence.push(evidence);
            continue;
        }
        for (prefix, key) in [
            ("group info:", "group"),
            ("collective:", "op"),
            ("collective state:", "state"),
            ("input sizes:", "input_sizes"),
        ] {
            if let Some(value) = trimmed.strip_prefix(prefix) {
                context.insert(key, value.trim().to_string());
                if key == "op" || key == "input_sizes" {
                    context_evidence.push(evidence.clone());
                }
            }
        }
        if let Some(value) = trimmed.strip_prefix("missing ranks:") {
            let missing = numbers(value);
            records.analyzer.push(AnalyzerError {
                rank: None,
                error_type: "MISSING_RANKS".into(),
                detail: value.trim().to_string(),
                collective: context.get("collective").cloned(),
                op: context.get("op").cloned(),
                group: context.get("group").cloned(),
                state: context.get("state").cloned(),
                missing_ranks: missing,
                evidence: context_evidence.iter().cloned().chain([evidence.clone()]).collect(),
            });
        }
        if trimmed.contains("Culprit rank ") {
            for part in trimmed.split("Culprit rank ").skip(1) {
                let rank = part.split(|c: char| !c.is_ascii_digit()).next().and_then(|r| r.parse().ok());
                let error_type = part
                    .split_once("Error type: ")
                    .map(|(_, t)| t.split(|c: char| c == ',' || c.is_whitespace()).next().unwrap_or("").to_string())
                    .unwrap_or_else(|| "UNKNOWN".into());
                let detail = part
                    .split_once(", ")
                    .map(|(_, d)| d.trim().trim_end_matches(',').trim().to_string())
                    .unwrap_or_default();
                records.analyzer.push(AnalyzerError {
                    rank,
                    error_type,
                    detail,
                    collective: context.get("collective").cloned(),
                    op: context.get("op").cloned(),
                    group: context.get("group").cloned(),
                    state: context.get("state").cloned(),
                    missing_ranks: Vec::new(),
                    evidence: context_evidence.iter().cloned().chain([evidence.clone()]).collect(),
                });
            }
        }
    }
    if let Some(first) = records.watchdog.first() {
        records.progress = progress_after(file, text, first.evidence.line);
    }
    records.stated.extend(members.never_started());
    records.stated.extend(store_barrier_short(file, text));
    // The wrapper checks each collective's fingerprint across ranks before it runs, so ranks whose
    // last fingerprints name different sequence numbers issued different numbers of collectives:
    // the program took different paths on different ranks.
    let sequences: std::collections::BTreeSet<u64> = running.values().map(|(seq, _, _)| *seq).collect();
    if running.len() >= 2 && sequences.len() >= 2 {
        let ops = running
            .iter()
            .map(|(rank, (seq, op, _))| format!("rank {rank} at #{seq} {op}"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut fact = Fact::new("pytorch.op_mismatch").attr("seq", "differs").attr("ops", ops);
        for (_, _, evidence) in running.into_values() {
            fact = fact.evidence(evidence);
        }
        records.stated.push(fact);
    }
    records
}

/// c10d's store-based barrier at process-group creation (torch/distributed/distributed_c10d.py,
/// `_store_based_barrier`): every process adds itself to a counter in the store and waits until it
/// reaches the world size, logging "Waiting in store based barrier to initialize process group for
/// rank: 3, key: store_based_barrier_key:1 (world_size=8, worker_count=3, timeout=0:30:00)" (newer
/// releases "num_workers_joined=") while it waits, and "Timed out initializing process group in
/// store based barrier on rank: 0, ... (world_size=8, worker_count=3, ...)" when it gives up. Fewer
/// joined than the world holds, with no "Completed store-based barrier" after it, is processes of
/// the job that never started or never got there (NVIDIA/NeMo#5819: Slurm started one task a node
/// for eight ranks). The barrier counts, it does not name: the fact says how many are missing.
/// Read once an input, from the first such line.
fn store_barrier_short(file: &str, text: &str) -> Option<Fact> {
    if !text.contains("store based barrier") || text.contains("Completed store-based barrier") {
        return None;
    }
    numbered_lines(text).find_map(|(line_no, raw)| {
        if !raw.contains("store based barrier") {
            return None;
        }
        let world = keyed_number(raw, "world_size=")?;
        let joined = keyed_number(raw, "worker_count=").or_else(|| keyed_number(raw, "num_workers_joined="))?;
        (joined < world).then(|| {
            Fact::new("pytorch.rank_behind")
                .attr("rank", format!("not named: {} of {world} processes never joined", world - joined))
                .attr("last_seq", "never started (they did not reach the process group's store barrier)")
                .attr(
                    "max_seq",
                    format!("the store barrier of process-group creation, which {joined} of {world} reached"),
                )
                .evidence(Evidence::new(file, line_no, raw))
        })
    })
}

/// tqdm's counter in a progress line: `| 1582/1818 [30:02<04:26,  1.13s/it]` gives (1582, 1818).
/// A bar that has no total (`1582it [30:02, 1.13it/s]`) says nothing about advancing.
fn progress_counter(line: &str) -> Option<(u64, u64)> {
    if !(line.contains("it/s]") || line.contains("s/it]") || line.contains("it/s,") || line.contains("s/it,")) {
        return None;
    }
    progress_brackets(line).find_map(|(counted, _, _)| {
        let (done, total) = counted.rsplit([' ', '|']).next()?.split_once('/')?;
        Some((done.parse().ok()?, total.parse().ok()?))
    })
}

/// tqdm's bracket in a progress line (" [30:11<38:27, 1578.58 examples/s]"), for each " [" whose
/// first field is a time: the text before it, that elapsed time, and the rest of the bracket after
/// it (which opens with '<' where tqdm knows the total).
fn progress_brackets(line: &str) -> impl Iterator<Item = (&str, &str, &str)> {
    line.match_indices(" [").filter_map(move |(at, _)| {
        let inside = &line[at + 2..];
        let end = inside.find(['<', ',', ']']).unwrap_or(inside.len());
        let elapsed = &inside[..end];
        elapsed.contains(':').then_some((&line[..at], elapsed, &inside[end..]))
    })
}

/// The time a tqdm progress bar says has elapsed ("47%|███▊ | 3169000/6811963 [30:11<38:27,
/// 1578.58 examples/s]": minutes and seconds, or hours, minutes and seconds, before "<"), read from
/// the line's last bar whatever its unit.
pub(super) fn progress_elapsed_seconds(line: &str) -> Option<u64> {
    if !line.contains('%') {
        return None;
    }
    let (_, elapsed, rest) = progress_brackets(line).last()?;
    rest.starts_with('<').then_some(())?;
    let parts: Vec<u64> = elapsed.split(':').map(|part| part.parse().ok()).collect::<Option<_>>()?;
    match parts.as_slice() {
        [minutes, seconds] => Some(minutes * 60 + seconds),
        [hours, minutes, seconds] => Some(hours * 3600 + minutes * 60 + seconds),
        _ => None,
    }
}

/// The last progress bar at or before line `timed_out` and the first later line where the same bar
/// (the same total) counts further. Read only in inputs with a watchdog timeout.
fn progress_after(file: &str, text: &str, timed_out: usize) -> Option<ProgressAfterTimeout> {
    let mut before: Option<(u64, u64, Evidence)> = None;
    for (line_no, raw) in numbered_lines(text) {
        let Some((done, total)) = progress_counter(raw) else { continue };
        if line_no <= timed_out {
            before = Some((done, total, Evidence::new(file, line_no, raw)));
            continue;
        }
        let (seen, seen_total, _) = before.as_ref()?;
        if total == *seen_total && done > *seen {
            return before
                .map(|before| ProgressAfterTimeout { before, after: (done, Evidence::new(file, line_no, raw)) });
        }
    }
    None
}

/// PyTorch Lightning's line for each process it starts ("initializing ddp: GLOBAL_RANK: 1, MEMBER:
/// 2/8", "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/8" in later releases,
/// lightning_fabric's strategies): the global rank it took and the world it joins.
#[derive(Default)]
struct LightningMembers {
    lines: usize,
    world: Option<u64>,
    seen: BTreeMap<u64, Evidence>,
    repeated: bool,
}

impl LightningMembers {
    fn read(&mut self, rest: &str, evidence: &Evidence) {
        let rank = rest.split(|c: char| !c.is_ascii_digit()).next().and_then(|r| r.parse::<u64>().ok());
        let world = rest
            .split("MEMBER: ")
            .nth(1)
            .and_then(|m| m.split('/').nth(1))
            .and_then(|w| w.split(|c: char| !c.is_ascii_digit()).next()?.parse::<u64>().ok());
        let (Some(rank), Some(world)) = (rank, world) else { return };
        if self.world.is_some_and(|known| known != world) || rank >= world {
            return;
        }
        self.world = Some(world);
        self.lines += 1;
        match self.seen.entry(rank) {
            std::collections::btree_map::Entry::Occupied(_) => self.repeated = true,
            std::collections::btree_map::Entry::Vacant(slot) => {
                slot.insert(evidence.clone());
            }
        }
    }

    /// Processes that took the same global rank while as many lines as the world has members show
    /// fewer ranks than it: each host numbered its processes as if it were the only one (Slurm's
    /// node count not given to Lightning, Lightning-AI/pytorch-lightning#10098), so the ranks no
    /// process took never start and the rendezvous waits for them. At most 64 are named.
    fn never_started(&self) -> Vec<Fact> {
        let Some(world) = self.world else { return Vec::new() };
        if !self.repeated || (self.lines as u64) < world || self.seen.len() as u64 >= world {
            return Vec::new();
        }
        let mut taken: Vec<String> = self.seen.keys().take(64).map(u64::to_string).collect();
        if self.seen.len() > 64 {
            taken.push(format!("and {} more", self.seen.len() - 64));
        }
        (0..world)
            .filter(|rank| !self.seen.contains_key(rank))
            .take(64)
            .map(|rank| {
                let mut fact =
                    Fact::new("pytorch.rank_behind").attr("rank", rank).attr("last_seq", "never started").attr(
                        "max_seq",
                        format!(
                            "the rendezvous of {world} processes, whose ranks {} each started twice or more",
                            taken.join(", ")
                        ),
                    );
                for evidence in self.seen.values().take(2) {
                    fact = fact.evidence(evidence.clone());
                }
                fact
            })
            .collect()
    }
}

/// A flight recorder dump: `{"version": .., "pg_config": .., "entries": [{..}, ..]}`. The rank comes
/// from the file name's last `_N` (the dump files are `<prefix><rank>`; pytorch#140879 shows names
/// like `nccl_trace_rank_container-node02_5`).
pub fn parse_flight_recorder_dump(file: &str, bytes: &[u8]) -> Result<FlightDump, PickleError> {
    let value = pickle::parse(bytes)?;
    let stem = file.rsplit('/').next().unwrap_or(file);
    let stem = stem.split('.').next().unwrap_or(stem);
    let rank = value
        .get("rank")
        .and_then(Value::as_int)
        .and_then(|r| u64::try_from(r).ok())
        .or_else(|| stem.rsplit(['_', '-']).next().and_then(|r| r.parse().ok()));
    let entries = value
        .get("entries")
        .map(|e| e.items())
        .unwrap_or(&[])
        .iter()
        .filter_map(|entry| {
            let group = match entry.get("process_group") {
                Some(Value::Tuple(parts)) | Some(Value::List(parts)) => {
                    parts.iter().map(Value::render).collect::<Vec<_>>().join(":")
                }
                Some(other) => other.render(),
                None => entry.get("pg_id").map(Value::render).unwrap_or_default(),
            };
            Some(FlightEntry {
                group,
                seq: entry.get("collective_seq_id").and_then(Value::as_int)?,
                op: entry.get("profiling_name").and_then(Value::as_str).unwrap_or("unknown").to_string(),
                input_sizes: entry.get("input_sizes").map(Value::render).unwrap_or_default(),
                state: entry.get("state").and_then(Value::as_str).unwrap_or("unknown").to_string(),
            })
        })
        .collect();
    Ok(FlightDump { file: file.to_string(), rank, entries })
}

pub fn analyze(all: &[PytorchRecords], analysis: &mut Analysis) {
    analysis.facts.extend(all.iter().flat_map(|r| r.stated.iter().cloned()));
    let watchdog: Vec<&WatchdogRecord> = all.iter().flat_map(|r| r.watchdog.iter()).collect();
    // A signalled rank's count is of its own process group: it is set against the timeouts only
    // where that is the group that timed out (or the inputs do not say which did).
    let groups: BTreeSet<u64> = all.iter().flat_map(|r| r.timed_out_groups.iter().copied()).collect();
    let signalled: Vec<(u64, u64, Evidence)> = all
        .iter()
        .flat_map(|r| r.signalled.iter())
        .filter(|(_, group, _, _)| groups.is_empty() || group.is_some_and(|group| groups.contains(&group)))
        .map(|(rank, _, enqueued, evidence)| (*rank, *enqueued, evidence.clone()))
        .collect();
    watchdog_facts(&watchdog, &signalled, analysis);
    for error in all.iter().flat_map(|r| r.analyzer.iter()) {
        let mut fact = if error.error_type == "MISSING_RANKS" {
            Fact::new("fr.missing_ranks")
                .attr("ranks", error.missing_ranks.iter().map(u64::to_string).collect::<Vec<_>>().join(", "))
        } else {
            Fact::new("fr.mismatch").attr("error_type", &error.error_type).attr("detail", &error.detail)
        };
        if let Some(rank) = error.rank {
            fact = fact.attr("rank", rank);
        }
        for (key, value) in
            [("collective", &error.collective), ("op", &error.op), ("group", &error.group), ("state", &error.state)]
        {
            if let Some(value) = value {
                fact = fact.attr(key, value);
            }
        }
        for evidence in &error.evidence {
            fact = fact.evidence(evidence.clone());
        }
        analysis.push(fact);
    }
    let dumps: Vec<&FlightDump> = all.iter().flat_map(|r| r.dumps.iter()).collect();
    dump_facts(&dumps, analysis);
    busy_while_others_timed_out(all, &watchdog, analysis);
    raised_while_others_timed_out(all, &watchdog, analysis);
}

/// A rank that raised an exception of the program's own (its launcher's or its own "[rank6]:" label
/// names it) while other ranks' watchdogs caught a collective that failed or timed out: that rank
/// ended in the program's code, and the others wait for it in the collective it never reached
/// (huggingface/accelerate#3206: rank 6's evaluation metric raised ValueError, rank 0's watchdog
/// fired). The labels count only where they are ranks: every watchdog line that carries one
/// carries its own rank.
fn raised_while_others_timed_out(all: &[PytorchRecords], watchdog: &[&WatchdogRecord], analysis: &mut Analysis) {
    if analysis.facts.iter().any(|f| f.name == "pytorch.rank_behind" || f.name == "process.died") {
        return;
    }
    let timed_out: BTreeSet<u64> = watchdog.iter().filter_map(|r| r.rank).collect();
    if timed_out.is_empty() || !labels_are_ranks(watchdog, |labels| labels.rank, analysis) {
        return;
    }
    let raised = all.iter().flat_map(|r| r.raised.iter()).find_map(|evidence| {
        let rank = analysis.ranks.labels_of(evidence).rank?;
        (!timed_out.contains(&rank)).then_some((rank, evidence))
    });
    let Some((rank, evidence)) = raised else {
        return;
    };
    let waiting = timed_out.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    analysis.push(
        Fact::new("process.died")
            .attr("rank", rank)
            .attr("signal", "none (the program's own exception)")
            .attr(
                "text",
                format!(
                    "rank {rank} raised \"{}\" and ended, while rank(s) {waiting} waited in a collective it never reached",
                    evidence.text.trim()
                ),
            )
            .evidence(evidence.clone()),
    );
}

/// Ranks that timed out while a progress bar in the same input went on counting: the process printing
/// it never reached the collective, it was busy with work of its own (a dataset scan, a validation
/// pass, a cache build) for longer than the timeout. That is the rank its launcher labels the bar
/// with or, unlabelled, rank 0, the one that prints progress by convention, when it is not among those
/// that timed out (yolov5#4400: ranks 1-3 time out at 60 s while rank 0's label scan counts on).
fn busy_while_others_timed_out(all: &[PytorchRecords], watchdog: &[&WatchdogRecord], analysis: &mut Analysis) {
    if analysis.facts.iter().any(|f| f.name == "pytorch.rank_behind") {
        return;
    }
    let timed_out: BTreeSet<u64> = watchdog.iter().filter_map(|r| r.rank).collect();
    if timed_out.is_empty() {
        return;
    }
    let labels_are_ranks = labels_are_ranks(watchdog, |labels| labels.rank, analysis);
    for progress in all.iter().filter_map(|r| r.progress.as_ref()) {
        let (done, total, before) = &progress.before;
        let (later, after) = &progress.after;
        let label = analysis.ranks.labels_of(after).rank.filter(|_| labels_are_ranks);
        let rank = label.unwrap_or(0);
        if timed_out.contains(&rank) {
            continue;
        }
        let ranks = timed_out.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
        let ranks = if timed_out.len() == 1 { format!("rank {ranks}") } else { format!("ranks {ranks}") };
        analysis.push(
            Fact::new("pytorch.rank_behind")
                .attr("rank", rank)
                .attr(
                    "busy",
                    format!("its progress went on from {done}/{total} to {later}/{total} after {ranks} timed out"),
                )
                .evidence(before.clone())
                .evidence(after.clone()),
        );
        return;
    }
}

/// Ranks that timed out together on one collective, all of the same sequence number, name the ranks
/// that did not: when ranks 1, 2 and 3 report the watchdog timeout on SeqNum 2 and rank 0 does not,
/// rank 0 never entered that collective (it was busy elsewhere or had died). Only ranks below the
/// highest reporting one are named, or above it when a launcher's label shows them printing in the
/// same inputs, and only when fewer are absent than reported, so a log cut to a few ranks does not
/// accuse the rest.
fn absent_ranks(records: &[&WatchdogRecord], last: &BTreeMap<u64, (u64, Evidence)>, analysis: &mut Analysis) {
    if analysis.facts.iter().any(|f| f.name == "pytorch.rank_behind") {
        return;
    }
    let timed_out: BTreeMap<u64, &WatchdogRecord> = records
        .iter()
        .filter_map(|r| Some((r.rank?, *r)))
        .filter(|(_, r)| r.seq.is_some() && !r.detected_only)
        .collect();
    let sequences: std::collections::BTreeSet<u64> = timed_out.values().filter_map(|r| r.seq).collect();
    let (Some(&max_rank), Some(&seq)) = (timed_out.keys().max(), sequences.first()) else { return };
    if sequences.len() != 1 {
        return;
    }
    // At most as many as reported: more are not named anyway, and a rank number from a mangled log
    // (2^63 - 1) must not make this a loop over every number below it (found by fabricdoctor-fuzz,
    // target triage: it ran out of memory).
    // Above the highest that timed out, only ranks a launcher's label shows printing in these same
    // inputs are named: they were running, and did not time out with the others. The labels count
    // only where they are ranks: every timed-out line that carries one carries its own rank (an
    // srun task under torchrun numbers nodes instead).
    // The program's rank labels are tried first, then srun's task labels.
    let kinds: [fn(&LineLabels) -> Option<u64>; 2] = [|labels| labels.rank, |labels| labels.task];
    let timed_out_records: Vec<&WatchdogRecord> = timed_out.values().copied().collect();
    // Each rank's first report is the one its label is read from, not its last: PyTorch prints
    // the timeout again in the exception's "what():" line, which a launcher's label may not
    // carry, and that later copy says nothing against the labelled one.
    let mut reported = BTreeSet::new();
    let first_records: Vec<&WatchdogRecord> = records
        .iter()
        .filter(|record| record.seq.is_some() && record.rank.is_some_and(|rank| reported.insert(rank)))
        .copied()
        .collect();
    let are_ranks = |kind: &fn(&LineLabels) -> Option<u64>| labels_are_ranks(&first_records, *kind, analysis);
    let mut labelled_above: BTreeMap<u64, Evidence> = BTreeMap::new();
    if let Some(kind) = kinds.iter().find(|kind| are_ranks(kind)) {
        for (file, labels) in &analysis.ranks.labels {
            for (index, labels) in labels.iter().enumerate() {
                if let Some(rank) = kind(labels).filter(|rank| *rank > max_rank && !labelled_above.contains_key(rank)) {
                    labelled_above.insert(rank, Evidence::new(file, index + 1, ""));
                }
            }
        }
    }
    // Each group is named only when fewer are absent than reported; the labelled ones only add to
    // what the timed-out ranks alone say.
    let absent_of = |candidates: &mut dyn Iterator<Item = u64>| -> Vec<u64> {
        let absent: Vec<u64> =
            candidates.filter(|r| !timed_out.contains_key(r) && !last.contains_key(r)).take(timed_out.len()).collect();
        if absent.len() < timed_out.len() {
            absent
        } else {
            Vec::new()
        }
    };
    let mut absent = absent_of(&mut (0..max_rank));
    absent.extend(absent_of(&mut labelled_above.keys().copied()));
    if timed_out.len() < 2 || absent.is_empty() {
        return;
    }
    // Where the collective itself says how many ranks its group holds, the ranks not shown count
    // against those reported over the whole group: five of sixteen are an excerpt of the log,
    // which says nothing of the eleven others, not eleven ranks that never came.
    if let Some(world) = group_size(&timed_out_records) {
        if world.saturating_sub(timed_out.len() as u64) >= timed_out.len() as u64 {
            return;
        }
    }
    for rank in absent {
        let mut fact = Fact::new("pytorch.rank_behind").attr("rank", rank).attr("max_seq", seq).attr(
            "last_seq",
            format!("unknown (it reported no timeout on SeqNum {seq}, ranks {} did)", join_ranks(&timed_out)),
        );
        for record in timed_out.values().take(3) {
            fact = fact.evidence(record.evidence.clone());
        }
        if let Some(line) = labelled_above.get(&rank) {
            // The line's text is filled in with the input's own when evidence is restored.
            fact = fact.evidence(line.clone());
        }
        analysis.push(fact);
    }
}

/// Collectives the other ranks can complete while one rank is stuck inside an earlier one: only
/// those its stuck kernel happens to satisfy, a handful. Numbers further apart are of different
/// process groups, which c10d numbers each on its own.
const PASSED_WHILE_STUCK: u64 = 16;

/// A rank that timed out inside collective `seq` (it enqueued nothing after it) while another rank
/// timed out in a later one, a few collectives on: the other rank completed `seq` although this
/// rank never finished it, which NCCL allows only when the two called different collectives there
/// (a smaller count completes against a larger one, lightning#20832, Qwen-VL fine-tuning's text-only
/// batches that skip the vision tower), or a different number of them. Not a rank that fell behind:
/// it is in the collective, waiting for data its peers will never send. A rank stuck in a small
/// Broadcast (or Reduce, or Scatter) proves neither that nor that it is behind: their root
/// completes once its data sits in the peers' staging buffers (NCCL_BUFFSIZE, 4 MiB a channel by
/// default), whether or not they ever take it, so the root moving on is its right and why the data
/// never arrived is open (isaac-sim/OmniIsaacGymEnvs#50: the first Broadcast of a dual-GPU
/// workstation, its size not printed). A Broadcast of millions of elements cannot fit there, and
/// keeps the reading (Lightning-AI/pytorch-lightning#20832: 5,164,000 elements).
fn passed_while_stuck(
    records: &[&WatchdogRecord],
    rank: u64,
    seq: u64,
    ahead: Option<&&WatchdogRecord>,
) -> Option<StuckInside> {
    let ahead = ahead?;
    let ahead_seq = ahead.seq?;
    if ahead.rank == Some(rank) || ahead_seq <= seq || ahead_seq - seq > PASSED_WHILE_STUCK {
        return None;
    }
    let stuck = records.iter().find(|r| {
        r.rank == Some(rank) && r.seq == Some(seq) && r.op.is_some() && r.last_enqueued.is_none_or(|last| last == seq)
    })?;
    let rooted = stuck.op.as_deref().map(str::to_ascii_uppercase).is_some_and(|op| {
        (op.contains("BROADCAST") || op == "REDUCE" || op.contains("SCATTER")) && !op.contains("REDUCE_SCATTER")
    });
    if rooted && stuck.numel_in.is_none_or(|elements| elements <= ROOT_MAY_PASS_ELEMENTS) {
        return Some(StuckInside::RootMayHavePassed);
    }
    let described = |r: &WatchdogRecord| {
        let count = r.numel_in.map(|n| format!(" of {n} elements")).unwrap_or_default();
        format!("{}{count}", r.op.as_deref().unwrap_or("?"))
    };
    let ahead_rank = ahead.rank.map_or_else(|| "another rank".to_string(), |r| format!("rank {r}"));
    Some(StuckInside::Mismatch(
        Fact::new("pytorch.op_mismatch")
            .attr("seq", seq)
            .attr(
                "ops",
                format!(
                    "rank {rank} is inside SeqNum {seq} ({}), which {ahead_rank} completed before it timed out in SeqNum {ahead_seq} ({})",
                    described(stuck),
                    described(ahead)
                ),
            )
            .attr("rank", rank)
            .evidence(stuck.evidence.clone())
            .evidence(ahead.evidence.clone()),
    ))
}

/// What a rank stuck inside a collective that another rank completed says.
enum StuckInside {
    /// The two ran different collectives there.
    Mismatch(Fact),
    /// A rooted collective small enough for its root to complete alone: neither a mismatch nor a
    /// rank behind follows.
    RootMayHavePassed,
}

/// The elements (4 MiB of 4-byte ones) up to which a rooted collective may fit the staging buffers of
/// one channel, so that its root completes before the peers take the data.
const ROOT_MAY_PASS_ELEMENTS: u64 = 1 << 20;

/// How many ranks the timed-out collective's group holds, where its element counts say so: an
/// AllGather's output is every rank's input (NumelOut = NumelIn x ranks), a ReduceScatter's input
/// every rank's output (c10d's WorkNCCL prints both counts). `None` for other collectives, or when
/// the records disagree.
fn group_size(records: &[&WatchdogRecord]) -> Option<u64> {
    let sizes: std::collections::BTreeSet<u64> = records
        .iter()
        .filter_map(|record| {
            let op = record.op.as_deref()?.to_ascii_uppercase();
            let (whole, part) = if op.contains("ALLGATHER") {
                (record.numel_out?, record.numel_in?)
            } else if op.contains("REDUCE_SCATTER") {
                (record.numel_in?, record.numel_out?)
            } else {
                return None;
            };
            (part > 0 && whole % part == 0).then(|| whole / part)
        })
        .collect();
    match sizes.len() {
        1 => sizes.first().copied().filter(|size| *size >= 2),
        _ => None,
    }
}

/// Whether a launcher's labels of one `kind` (the program's rank labels, srun's task labels) are
/// ranks in these inputs: some timed-out line carries one, and every one that does carries the rank
/// its line names (an srun task under torchrun numbers nodes instead).
fn labels_are_ranks(records: &[&WatchdogRecord], kind: fn(&LineLabels) -> Option<u64>, analysis: &Analysis) -> bool {
    let labels: Vec<(Option<u64>, Option<u64>)> =
        records.iter().map(|record| (record.rank, kind(&analysis.ranks.labels_of(&record.evidence)))).collect();
    labels.iter().any(|(_, label)| label.is_some())
        && labels.iter().all(|(rank, label)| label.is_none() || label == rank)
}

fn join_ranks(ranks: &BTreeMap<u64, &WatchdogRecord>) -> String {
    ranks.keys().map(u64::to_string).collect::<Vec<_>>().join(", ")
}

fn watchdog_facts(records: &[&WatchdogRecord], signalled: &[(u64, u64, Evidence)], analysis: &mut Analysis) {
    for record in records {
        let mut fact = Fact::new("pytorch.watchdog_timeout");
        if let Some(rank) = record.rank {
            fact = fact.attr("rank", rank);
        }
        if let Some(seq) = record.seq {
            fact = fact.attr("seq", seq);
        }
        if let Some(op) = &record.op {
            fact = fact.attr("op", op);
        }
        if let Some(timeout) = record.timeout_ms {
            fact = fact.attr("timeout_ms", timeout);
        }
        analysis.push(fact.evidence(record.evidence.clone()));
    }
    // Per rank: the highest sequence number it enqueued (or timed out on). How far a rank enqueued
    // is set against another's only where every rank's log says it: a rank whose lines say only
    // the work it timed out on (the "Watchdog caught" line without its "last enqueued" line, cut
    // from the paste) enqueued as far as the others for all they show, and the works they timed
    // out on are compared instead.
    let ranks_enqueued: BTreeSet<u64> =
        records.iter().filter(|r| r.last_enqueued.is_some()).filter_map(|r| r.rank).collect();
    let every_rank_enqueued = records.iter().filter_map(|r| r.rank).all(|rank| ranks_enqueued.contains(&rank));
    let mut last: BTreeMap<u64, (u64, Evidence)> = BTreeMap::new();
    for record in records {
        let reached = if every_rank_enqueued { record.last_enqueued.or(record.seq) } else { record.seq };
        let (Some(rank), Some(seq)) = (record.rank, reached) else { continue };
        let entry = last.entry(rank).or_insert((seq, record.evidence.clone()));
        if seq > entry.0 {
            *entry = (seq, record.evidence.clone());
        }
    }
    // A signalled rank's count stands where the rank did not time out itself (its own timeout says
    // where it stands).
    if !records.is_empty() {
        for (rank, enqueued, evidence) in signalled {
            last.entry(*rank).or_insert((*enqueued, evidence.clone()));
        }
    }
    // Each process group numbers its own works (ProcessGroupNCCL's seq_): ranks that timed out in
    // different groups are not set against each other (xdit-project/xDiT#284: rank 0 on work 0 of
    // group 37, rank 3 on work 29 of group 35, neither behind the other).
    let groups: BTreeSet<u64> = records.iter().filter_map(|r| r.group).collect();
    if last.len() >= 2 && groups.len() < 2 {
        let max = last.values().map(|v| v.0).max().unwrap_or(0);
        let ahead = last.iter().find(|(_, v)| v.0 == max).map(|(_, v)| v.1.clone());
        let ahead_record = records.iter().find(|r| r.seq == Some(max) && r.op.is_some());
        for (rank, (seq, evidence)) in &last {
            match passed_while_stuck(records, *rank, *seq, ahead_record) {
                Some(StuckInside::Mismatch(passed)) => {
                    analysis.push(passed);
                    continue;
                }
                Some(StuckInside::RootMayHavePassed) => continue,
                None => {}
            }
            if *seq < max {
                let mut fact = Fact::new("pytorch.rank_behind")
                    .attr("rank", rank)
                    .attr("last_seq", seq)
                    .attr("max_seq", max)
                    .evidence(evidence.clone());
                if let Some(ahead) = &ahead {
                    fact = fact.evidence(ahead.clone());
                }
                analysis.push(fact);
            }
        }
    }
    absent_ranks(records, &last, analysis);
    // Same sequence number, different operation or size: ranks are in different collectives.
    let mut by_seq: BTreeMap<u64, Vec<&WatchdogRecord>> = BTreeMap::new();
    for record in records {
        if let (Some(seq), Some(_)) = (record.seq, &record.op) {
            by_seq.entry(seq).or_default().push(record);
        }
    }
    for (seq, group) in by_seq {
        let ops: BTreeSet<(String, Option<u64>)> =
            group.iter().map(|r| (r.op.clone().unwrap_or_default(), r.numel_in)).collect();
        // One rank number timed out in two different collectives with this number: in one process
        // group a rank runs one collective per sequence number (c10d numbers each group on its
        // own), so these are two groups' collectives (an expert- and a tensor-parallel group's
        // ninth), and the records do not say which group each is.
        let collectives: BTreeSet<(u64, Option<&str>, Option<u64>)> =
            group.iter().filter_map(|r| Some((r.rank?, r.op.as_deref(), r.numel_in))).collect();
        let ranks: BTreeSet<u64> = collectives.iter().map(|(rank, _, _)| *rank).collect();
        if collectives.len() > ranks.len() {
            continue;
        }
        if ops.len() > 1 {
            let listed: Vec<String> = ops
                .iter()
                .map(|(op, n)| format!("{op}({})", n.map(|n| n.to_string()).unwrap_or_else(|| "?".into())))
                .collect();
            let mut fact = Fact::new("pytorch.op_mismatch").attr("seq", seq).attr("ops", listed.join(" vs "));
            for record in group {
                fact = fact.evidence(record.evidence.clone());
            }
            analysis.push(fact);
        }
    }
}

/// One rank's entry for a (group, sequence), with the dump file it came from.
type RankEntry<'a> = (u64, &'a FlightEntry, &'a str);

/// Compare dumps rank by rank: the same (group, sequence) must be the same operation with the same
/// input sizes on every rank; a rank whose last sequence is lower than the others' is behind.
fn dump_facts(dumps: &[&FlightDump], analysis: &mut Analysis) {
    if dumps.len() < 2 {
        return;
    }
    let mut table: BTreeMap<(String, i64), Vec<RankEntry<'_>>> = BTreeMap::new();
    let mut last: BTreeMap<(String, u64), (i64, &str)> = BTreeMap::new();
    for dump in dumps {
        let Some(rank) = dump.rank else { continue };
        for entry in &dump.entries {
            table.entry((entry.group.clone(), entry.seq)).or_default().push((rank, entry, dump.file.as_str()));
            let slot = last.entry((entry.group.clone(), rank)).or_insert((entry.seq, dump.file.as_str()));
            slot.0 = slot.0.max(entry.seq);
        }
    }
    let mut reported = 0;
    for ((group, seq), ranks) in &table {
        let mut signatures: BTreeMap<(String, String), Vec<u64>> = BTreeMap::new();
        for (rank, entry, _) in ranks {
            signatures.entry((entry.op.clone(), entry.input_sizes.clone())).or_default().push(*rank);
        }
        if signatures.len() < 2 || reported >= 16 {
            continue;
        }
        let majority = signatures.iter().max_by_key(|(_, r)| r.len()).map(|(k, _)| k.clone()).unwrap_or_default();
        for ((op, sizes), culprits) in &signatures {
            if (op, sizes) == (&majority.0, &majority.1) {
                continue;
            }
            for rank in culprits {
                let file = ranks.iter().find(|(r, _, _)| r == rank).map(|(_, _, f)| *f).unwrap_or("");
                let error_type = if *op != majority.0 { "COLLECTIVE_TYPE_MISMATCH" } else { "SIZE_OR_SYNTAX_MISMATCH" };
                analysis.push(
                    Fact::new("fr.mismatch")
                        .attr("rank", rank)
                        .attr("error_type", error_type)
                        .attr("group", group)
                        .attr("collective", seq)
                        .attr("op", op)
                        .attr("detail", format!("expected {} {}, found {op} {sizes}", majority.0, majority.1))
                        .evidence(Evidence::new(
                            file,
                            0,
                            &format!("rank {rank} {group} collective_seq_id {seq}: {op} input_sizes {sizes} (most ranks: {} {})", majority.0, majority.1),
                        )),
                );
                reported += 1;
            }
        }
    }
    let mut groups: BTreeSet<&str> = BTreeSet::new();
    for (group, _) in last.keys() {
        groups.insert(group);
    }
    for group in groups {
        let per_rank: Vec<(u64, i64, &str)> =
            last.iter().filter(|((g, _), _)| g == group).map(|((_, r), (s, f))| (*r, *s, *f)).collect();
        let max = per_rank.iter().map(|p| p.1).max().unwrap_or(0);
        for (rank, seq, file) in per_rank.iter().filter(|p| p.1 < max) {
            analysis.push(
                Fact::new("pytorch.rank_behind")
                    .attr("rank", rank)
                    .attr("last_seq", seq)
                    .attr("max_seq", max)
                    .attr("group", group)
                    .evidence(Evidence::new(
                        file,
                        0,
                        &format!("rank {rank} {group}: last collective_seq_id {seq}, others reached {max}"),
                    )),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The facts of one name that triage's whole analysis (prefixes and labels included) reads
    /// from one log.
    fn facts_named(text: &str, name: &str) -> Vec<Fact> {
        let found = crate::triage::analyze(&[crate::triage::Input::new("log", text.as_bytes().to_vec())]);
        found.facts.into_iter().filter(|f| f.name == name).collect()
    }

    /// TORCH_DISTRIBUTED_DEBUG=DETAIL's fingerprints: the last collective each rank started. Ranks
    /// at different sequence numbers issued different numbers of collectives
    /// (Lightning-AI/pytorch-lightning#19106); ranks at the same one say nothing.
    #[test]
    fn ranks_whose_last_fingerprints_differ_in_sequence_ran_different_collectives() {
        let line = |rank: u32, seq: u32| {
            format!("[I ProcessGroupWrapper.cpp:562] [Rank {rank}] Running collective: CollectiveFingerPrint(SequenceNumber={seq}, OpType=BROADCAST, TensorShape=[1], TensorDtypes=Long)\n")
        };
        let diverged = format!("{}{}{}", line(1, 3), line(0, 4), line(2, 4));
        let records = parse_text("rank.log", &diverged);
        let mismatch = records.stated.iter().find(|f| f.name == "pytorch.op_mismatch").expect("mismatch");
        assert_eq!(
            mismatch.attrs.get("ops").map(String::as_str),
            Some("rank 0 at #4 BROADCAST, rank 1 at #3 BROADCAST, rank 2 at #4 BROADCAST")
        );
        let together = format!("{}{}{}{}", line(0, 3), line(1, 3), line(0, 4), line(1, 4));
        assert!(parse_text("rank.log", &together).stated.is_empty());
    }

    /// 2U1/Qwen-VL-Series-Finetune#17: rank 0 is inside SeqNum 959, an AllReduce of 545M elements,
    /// that ranks 1 and 2 completed (theirs was of 2560) before they timed out in 963: different
    /// collectives, not a rank behind. Sequence numbers thousands apart are other process groups'.
    #[test]
    fn a_rank_inside_a_collective_the_others_completed_ran_a_different_one() {
        let line = |rank: u32, seq: u32, numel: u64| {
            format!("[rank{rank}]:[E ProcessGroupNCCL.cpp:563] [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn={numel}, NumelOut={numel}, Timeout(ms)=600000) ran for 600010 milliseconds before timing out.\n")
        };
        let judged = |text: String| {
            let mut analysis = Analysis::default();
            analyze(&[parse_text("log", &text)], &mut analysis);
            analysis
        };
        let diverged = judged([line(0, 959, 544997376), line(1, 963, 2560), line(2, 963, 2560)].concat());
        let mismatch = diverged.facts.iter().find(|f| f.name == "pytorch.op_mismatch").expect("a mismatch");
        assert_eq!(mismatch.get("rank"), Some("0"));
        assert!(mismatch.get("ops").is_some_and(|ops| ops.contains("ALLREDUCE of 544997376 elements")), "{mismatch:?}");
        assert!(!diverged.has("pytorch.rank_behind"));
        // pytorch#118369: 32,000 apart, another process group; the old reading stands.
        let apart = judged([line(0, 96120, 1), line(7, 64088, 1)].concat());
        assert!(!apart.has("pytorch.op_mismatch"));
        assert!(apart.has("pytorch.rank_behind"));
        // isaac-sim/OmniIsaacGymEnvs#50: stuck in a Broadcast, whose root completes once its data
        // sits in the peers' buffers; that the root moved on proves no mismatch.
        let broadcast = |numel: u64| line(1, 1, numel).replace("OpType=ALLREDUCE", "OpType=BROADCAST");
        let rooted = judged([broadcast(2560), line(0, 3, 2560)].concat());
        assert!(!rooted.has("pytorch.op_mismatch") && !rooted.has("pytorch.rank_behind"), "{:?}", rooted.facts);
        // Lightning-AI/pytorch-lightning#20832: a Broadcast of millions of elements fits no buffer.
        let large = judged([broadcast(5164000), line(0, 3, 2560)].concat());
        assert!(large.has("pytorch.op_mismatch"), "{:?}", large.facts);
    }

    /// LlamaFactory#2424: ranks 1-3 time out on SeqNum 2; rank 0, still tokenizing, never came.
    #[test]
    fn ranks_that_did_not_time_out_with_the_others_are_named() {
        let line = |rank: u32| {
            format!("[E ProcessGroupNCCL.cpp:475] [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800572 milliseconds before timing out.\n")
        };
        let text: String = [1, 2, 3].map(line).concat();
        let mut analysis = Analysis::default();
        analyze(&[parse_text("log", &text)], &mut analysis);
        let behind: Vec<_> = analysis.facts.iter().filter(|f| f.name == "pytorch.rank_behind").collect();
        assert_eq!(behind.iter().map(|f| f.get("rank")).collect::<Vec<_>>(), vec![Some("0")]);
        // Two of eight ranks in a cut log accuse nobody.
        let text: String = [6, 7].map(line).concat();
        let mut analysis = Analysis::default();
        analyze(&[parse_text("log", &text)], &mut analysis);
        assert!(!analysis.has("pytorch.rank_behind"));
        // deepseek-ai/DeepEP#106: five ranks of an AllGather whose output is sixteen times its
        // input time out: an excerpt of a sixteen-rank group, whose absent ranks are not accused;
        // the same five ranks of a six-rank group name the one that is missing.
        let gather = |rank: u32, ranks: u32| {
            format!("[rank{rank}]:[E ProcessGroupNCCL.cpp:574] [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=_ALLGATHER_BASE, NumelIn=1024, NumelOut={}, Timeout(ms)=600000) ran for 600029 milliseconds before timing out.\n", 1024 * ranks)
        };
        let behind_of = |ranks: u32| -> Vec<String> {
            let text: String = [1, 2, 3, 5, 6].map(|rank| gather(rank, ranks)).concat();
            let mut analysis = Analysis::default();
            analyze(&[parse_text("log", &text)], &mut analysis);
            analysis
                .facts
                .iter()
                .filter(|f| f.name == "pytorch.rank_behind")
                .filter_map(|f| f.get("rank"))
                .map(str::to_string)
                .collect()
        };
        assert!(behind_of(16).is_empty());
        assert_eq!(behind_of(7), ["0", "4"]);
        // mlcommons/training_results_v5.1 (Dell rgat): srun -l labels show rank 7 printing (its
        // out-of-memory error) while ranks 0-6 time out; the highest rank is named too.
        let labelled: String = (0..7).map(|rank| format!("{rank}: {}", line(rank))).collect::<String>()
            + "7: torch.OutOfMemoryError: CUDA out of memory.\n";
        let found = crate::triage::analyze(&[crate::triage::Input::new("log", labelled.clone().into_bytes())]);
        let behind: Vec<_> = found.facts.iter().filter(|f| f.name == "pytorch.rank_behind").collect();
        assert_eq!(behind.iter().map(|f| f.get("rank")).collect::<Vec<_>>(), vec![Some("7")]);
        assert!(behind[0].evidence.iter().any(|e| e.text.starts_with("7: torch.OutOfMemoryError")));
        // nebius/soperator's MLPerf run (heldout180): each timeout printed again in the exception's
        // "what():" line without the label, after the labelled one; the labels still count.
        let repeated: String = (0..7)
            .map(|rank| format!("{rank}: {}", line(rank)))
            .chain((0..7).map(|rank| format!("  what():  {}", line(rank))))
            .collect::<String>()
            + "7: torch.OutOfMemoryError: CUDA out of memory.\n";
        let found = crate::triage::analyze(&[crate::triage::Input::new("log", repeated.into_bytes())]);
        let behind: Vec<_> = found.facts.iter().filter(|f| f.name == "pytorch.rank_behind").collect();
        assert_eq!(behind.iter().map(|f| f.get("rank")).collect::<Vec<_>>(), vec![Some("7")]);
        // Labels that are not the ranks the lines name (srun tasks numbering nodes) name nobody.
        let nodes = labelled.replacen("3: [E", "4: [E", 1);
        let found = crate::triage::analyze(&[crate::triage::Input::new("log", nodes.into_bytes())]);
        assert!(!found.has("pytorch.rank_behind"));
        // A rank number near 2^63 (a mangled log, found by fabricdoctor-fuzz) names nobody, at once.
        let text: String = [line(1), line(2), line(3).replace("[Rank 3]", "[Rank 9223372036854775807]")].concat();
        let mut analysis = Analysis::default();
        analyze(&[parse_text("log", &text)], &mut analysis);
        assert!(!analysis.has("pytorch.rank_behind"));
    }

    /// sd-scripts#971 and yolov5#4400: the waiting ranks time out while the progress bar of the
    /// process that prints it (rank 0) counts on: that rank is busy, not in the collective.
    #[test]
    fn a_rank_whose_progress_counts_on_after_the_others_timed_out_is_behind() {
        let timeout = |rank: u32| {
            format!("[E ProcessGroupNCCL.cpp:828] [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802130 milliseconds before timing out.")
        };
        let bar =
            |done: u32| format!(" 87%|█████████████████████████████████▉     | {done}/1818 [30:02<04:26,  1.13s/it]");
        let behind = |text: &str| {
            let mut analysis = Analysis::default();
            analyze(&[parse_text("log", text)], &mut analysis);
            analysis.facts.into_iter().filter(|f| f.name == "pytorch.rank_behind").collect::<Vec<_>>()
        };
        let text = format!(
            "caching latents...\n{}{}\n{}Traceback (most recent call last):\n",
            bar(1582),
            timeout(1),
            bar(1583)
        );
        let found = behind(&text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].get("rank"), Some("0"));
        assert_eq!(
            found[0].get("busy"),
            Some("its progress went on from 1582/1818 to 1583/1818 after rank 1 timed out")
        );
        assert_eq!(found[0].evidence.iter().map(|e| e.line).collect::<Vec<_>>(), vec![2, 3]);
        // A bar that stood still, a bar only before the timeout, or rank 0 among those that timed
        // out: nobody is named.
        assert!(behind(&format!("{}{}\n{}\n", bar(1582), timeout(1), bar(1582))).is_empty());
        assert!(behind(&format!("{}\n{}\n", bar(1582), timeout(1))).is_empty());
        assert!(behind(&format!("{}{}\n{}\n{}\n", bar(1582), timeout(1), timeout(0), bar(1583))).is_empty());
        // A launcher's rank labels name the rank whose bar counts on, where they are ranks.
        let labelled = format!("[rank3]:{}\n[rank1]:{}\n[rank3]:{}\n", bar(1582), timeout(1), bar(1583));
        let found = crate::triage::analyze(&[crate::triage::Input::new("log", labelled.clone().into_bytes())]);
        let named: Vec<_> =
            found.facts.iter().filter(|f| f.name == "pytorch.rank_behind").map(|f| f.get("rank")).collect();
        assert_eq!(named, vec![Some("3")]);
        let mislabelled = labelled.replace("[rank1]:", "[rank2]:");
        let found = crate::triage::analyze(&[crate::triage::Input::new("log", mislabelled.into_bytes())]);
        let named: Vec<_> =
            found.facts.iter().filter(|f| f.name == "pytorch.rank_behind").map(|f| f.get("rank")).collect();
        assert_eq!(named, vec![Some("0")], "labels that are not the lines' ranks are not read as ranks");
        // A bar without a total (`35batch [00:03, 10.54batch/s]`) or a count that is not tqdm's.
        assert_eq!(progress_counter("Epoch 9, Rank 7, world_size 8: 35batch [00:03, 10.54batch/s]"), None);
        assert_eq!(progress_counter("75% 24/32 [01:09<00:22,  2.83s/it]"), Some((24, 32)));
        assert_eq!(progress_counter("see 1/2 [note] it/s]"), None);
    }

    /// huggingface/accelerate#3206 (heldout470): rank 6's own ValueError, then rank 0's watchdog
    /// line of PyTorch 2.4 ("Exception (either an error or timeout) detected by watchdog at work"):
    /// rank 6 ended and never reached the collective. NCCL's own error, a rank among those that
    /// timed out, or labels that are not ranks name nobody so.
    #[test]
    fn a_rank_that_raised_while_the_others_timed_out_is_missing() {
        let raised = "[rank6]: ValueError: Error in finalize: another evaluation module instance is already using the local cache file. Please specify an experiment_id to avoid collision between distributed evaluation module instances.\n";
        let watchdog = "[rank0]:[E1031 11:33:14.593046631 ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank 0] Exception (either an error or timeout) detected by watchdog at work: 438, last enqueued NCCL work: 451, last completed NCCL work: 437.\n";
        let died = |text: String| facts_named(&text, "process.died");
        let found = died(format!("{raised}{watchdog}"));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].get("rank"), Some("6"));
        assert_eq!(found[0].evidence[0].line, 1);
        let records = parse_text("log", watchdog);
        assert_eq!(records.watchdog.first().and_then(|r| r.seq), Some(438));
        assert!(died(format!("{}{watchdog}", raised.replace("[rank6]", "[rank0]"))).is_empty());
        assert!(died(format!("[rank3]: ncclInternalError: Internal check failed.\n{watchdog}")).is_empty());
        assert!(died(format!("[rank6]: RuntimeError: NCCL communicator was aborted on rank 6.\n{watchdog}")).is_empty());
        assert!(died(format!("{raised}{}", watchdog.replace("[rank0]:", "[rank2]:"))).is_empty());
        assert!(died(raised.to_string()).is_empty());
    }

    /// basicsr#737 (heldout3): every rank times out on one work; two ranks' lines also say how far
    /// they enqueued, the third's were cut from the paste. The third is not behind for that.
    #[test]
    fn how_far_a_rank_enqueued_counts_only_where_every_rank_says() {
        let caught = |rank: u32| {
            format!("[rank{rank}]:[E626 06:24:44.9 ProcessGroupNCCL.cpp:616] [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.\n")
        };
        let enqueued = |rank: u32| {
            format!("[rank{rank}]:[E626 06:24:44.9 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank {rank}] Exception (either an error or timeout) detected by watchdog at work: 808, last enqueued NCCL work: 811, last completed NCCL work: 807.\n")
        };
        let text = format!("{}{}{}{}{}", caught(1), enqueued(1), caught(0), enqueued(0), caught(2));
        let behind = facts_named(&text, "pytorch.rank_behind");
        assert!(behind.is_empty(), "{behind:?}");
    }

    /// xdit-project/xDiT#284 (heldout471): rank 0 timed out on work 0 of process group 37, rank 3
    /// on work 29 of group 35. Each group counts its own works: neither rank is behind the other.
    /// The same two lines in one group name rank 0.
    #[test]
    fn works_of_different_process_groups_are_not_compared() {
        let rank0 = "[rank0]:[E923 14:05:28.9 ProcessGroupNCCL.cpp:1664] [PG 37 Rank 0] Exception (either an error or timeout) detected by watchdog at work: 0, last enqueued NCCL work: 0, last completed NCCL work: 0.\n";
        let rank3 = "[rank3]:[E923 14:05:28.9 ProcessGroupNCCL.cpp:1664] [PG 35 Rank 3] Exception (either an error or timeout) detected by watchdog at work: 29, last enqueued NCCL work: 29, last completed NCCL work: 28.\n";
        let behind = |text: String| {
            let facts = facts_named(&text, "pytorch.rank_behind");
            facts.iter().filter_map(|f| f.get("rank").map(str::to_string)).collect::<Vec<_>>()
        };
        assert!(behind(format!("{rank0}{rank3}")).is_empty());
        assert_eq!(behind(format!("{rank0}{}", rank3.replace("[PG 35 ", "[PG 37 "))), vec!["0".to_string()]);
    }

    /// c10d's own verdicts, as posted (pytorch#152623 desync report, ms-swift#9443 fingerprint check).
    #[test]
    fn desync_report_and_fingerprint_mismatch() {
        let text = "         - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:\n             [7] finished collective #182, but didn't join collective #183 (count from 1)\n[rank1]: RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[195812480])\n";
        let mut analysis = Analysis::default();
        analyze(&[parse_text("f", text)], &mut analysis);
        let behind = analysis.facts.iter().find(|f| f.name == "pytorch.rank_behind").expect("rank behind");
        assert_eq!(
            (behind.get("rank"), behind.get("last_seq"), behind.get("max_seq")),
            (Some("7"), Some("182"), Some("183"))
        );
        let mismatch = analysis.facts.iter().find(|f| f.name == "pytorch.op_mismatch").expect("mismatch");
        assert_eq!(mismatch.get("seq"), Some("3104"));
    }

    /// fr_trace's report when some ranks never joined a collective.
    #[test]
    fn analyzer_missing_ranks() {
        let text = "Not all ranks joining collective 5 at entry 4\ngroup info: 0:default_pg\ncollective: nccl:all_reduce\nmissing ranks: {3, 17}\ninput sizes: [[1024]]\n";
        let records = parse_text("f", text);
        assert_eq!(records.analyzer.len(), 1);
        let missing = &records.analyzer[0];
        assert_eq!(missing.missing_ranks, [3, 17]);
        assert_eq!(missing.op.as_deref(), Some("nccl:all_reduce"));
        assert_eq!(missing.collective.as_deref(), Some("5"));
        let mut analysis = Analysis::default();
        analyze(&[records], &mut analysis);
        assert_eq!(analysis.facts[0].name, "fr.missing_ranks");
        assert_eq!(analysis.facts[0].get("ranks"), Some("3, 17"));
    }

    #[test]
    fn watchdog_line_fields() {
        let text = "[rank3]:[E1116 10:00:00.123 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1234, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.";
        let records = parse_text("f", text);
        let w = &records.watchdog[0];
        assert_eq!(
            (w.rank, w.seq, w.op.as_deref(), w.timeout_ms),
            (Some(3), Some(1234), Some("ALLREDUCE"), Some(600000))
        );
    }

    /// NVIDIA-NeMo/Speech#14883: rank 3 timed out in collective 42; ranks 5 and 7, signalled to dump,
    /// had enqueued only up to 41, so they never reached it. A signalled rank of another process
    /// group says nothing of this one.
    #[test]
    fn ranks_signalled_to_dump_say_how_far_they_got() {
        let timed_out = "[rank3]:[E1006 15:30:19.943734533 ProcessGroupNCCL.cpp:655] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=42, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600042 milliseconds before timing out.\n\
            [rank3]:[E1006 15:30:19.943833930 ProcessGroupNCCL.cpp:2299] [PG ID 0 PG GUID 0(default_pg) Rank 3]  failure detected by watchdog at work sequence id: 42 PG status: last enqueued work: 42, last completed work: 41\n";
        let signal = |rank: u64, group: u64| {
            format!("[rank{rank}]:[E1006 15:30:20.630185464 ProcessGroupNCCL.cpp:1772] [PG ID {group} PG GUID 0(default_pg) Rank {rank}] Received a dump signal due to a collective timeout from  rank 3 and we will try our best to dump the debug info. Last enqueued NCCL work: 41, last completed NCCL work: 41.This is most likely caused by incorrect usages of collectives\n")
        };
        let text = format!("{timed_out}{}{}", signal(5, 0), signal(7, 0));
        let found = crate::triage::analyze(&[crate::triage::Input::new("log", text.into_bytes())]);
        let behind: Vec<_> =
            found.facts.iter().filter(|f| f.name == "pytorch.rank_behind").filter_map(|f| f.get("rank")).collect();
        assert_eq!(behind, ["5", "7"]);
        let timeouts = found.facts.iter().filter(|f| f.name == "pytorch.watchdog_timeout").count();
        assert_eq!(timeouts, 1, "a signalled rank did not time out itself");
        let other_group = format!("{timed_out}{}", signal(5, 4));
        let found = crate::triage::analyze(&[crate::triage::Input::new("log", other_group.into_bytes())]);
        assert!(!found.has("pytorch.rank_behind"));
        // NVIDIA-NeMo/RL#2140: the timed-out group named only by the exception its watchdog thread
        // ended with (a pipeline group's first collective); a rank of the default group signalled to
        // dump says nothing of that group's sequence numbers.
        let terminated = "[rank3]:[E1006 15:30:19.943734533 ProcessGroupNCCL.cpp:655] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=COALESCED, NumelIn=0, NumelOut=0, Timeout(ms)=600000) ran for 651421 milliseconds before timing out.\n\
            [2026-03-23 05:15:22,428 E 3340050 3341761] logging.cc:118: Unhandled exception: N3c1016DistBackendErrorE. what(): [PG ID 6 PG GUID 266(PIPELINE_MODEL_PARALLEL_GROUP) Rank 3] Process group watchdog thread terminated with exception: [Rank 3] Watchdog caught collective operation timeout\n";
        let pipeline = format!(
            "{terminated}{}",
            signal(5, 0).replace("Last enqueued NCCL work: 41", "Last enqueued NCCL work: 51")
        );
        let found = crate::triage::analyze(&[crate::triage::Input::new("log", pipeline.into_bytes())]);
        assert!(!found.has("pytorch.rank_behind"), "{:?}", found.facts);
        let same_group = format!(
            "{terminated}{}",
            signal(5, 6).replace("Last enqueued NCCL work: 41", "Last enqueued NCCL work: 0")
        );
        let found = crate::triage::analyze(&[crate::triage::Input::new("log", same_group.into_bytes())]);
        assert!(found.has("pytorch.rank_behind"), "a rank of the timed-out group that enqueued less");
    }

    /// axolotl-ai-cloud/axolotl#3443: rank 3 waited 30 minutes for rank 0's unique id (rank 0 still
    /// loading the model), the message wrapped by the terminal; named once however many ranks wait.
    #[test]
    fn a_rank_that_never_published_the_unique_id_is_behind_axolotl3443() {
        let waiting = |rank: u64| {
            format!("torch.distributed.DistBackendError: [{rank}] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c1\n0d key-value store by key '0', but store->get('0') got error: wait timeout after 1800000ms, keys: /default_pg/0//cuda//0\n")
        };
        let text = format!("{}{}", waiting(3), waiting(2));
        let found = crate::triage::analyze(&[crate::triage::Input::new("log", text.into_bytes())]);
        let behind: Vec<_> =
            found.facts.iter().filter(|f| f.name == "pytorch.rank_behind").filter_map(|f| f.get("rank")).collect();
        assert_eq!(behind, ["0"]);
        let other = "[3] is setting up NCCL communicator\n";
        let found = crate::triage::analyze(&[crate::triage::Input::new("log", other.as_bytes().to_vec())]);
        assert!(!found.has("pytorch.rank_behind"));
    }

    /// haoheliu/AudioLDM-training-finetuning#53: PyTorch before 1.10 spelt the wait "retreiving"; rank
    /// 0's store went away while rank 1 waited for its unique id.
    #[test]
    fn the_older_spelling_of_the_unique_id_wait_names_rank_zero_audioldm53() {
        let text = "RuntimeError: [1] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer\n";
        let behind: Vec<_> = parse_text("log", text)
            .stated
            .into_iter()
            .filter(|f| f.name == "pytorch.rank_behind")
            .filter_map(|f| f.get("rank").map(str::to_string))
            .collect();
        assert_eq!(behind, ["0"]);
    }

    /// Gloo's monitored barrier names the ranks that did not pass it, on rank 0 (one rank, or every
    /// rank with wait_all_ranks) and on the others (FunAudioLLM/CosyVoice#1727: rank 1 reached the
    /// join's barrier, rank 0 never came); the waiting ranks are not named.
    #[test]
    fn the_monitored_barrier_names_the_ranks_that_did_not_pass_it_cosyvoice1727() {
        let absent = |text: &str| -> Vec<String> {
            parse_text("log", text)
                .stated
                .into_iter()
                .filter(|f| f.name == "pytorch.rank_behind")
                .filter_map(|f| f.get("rank").map(str::to_string))
                .collect()
        };
        let root_failed = "[rank1]:[E ProcessGroupGloo.cpp:144] Rank 1 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n";
        assert_eq!(absent(&root_failed.repeat(2)), ["0"]);
        assert_eq!(absent("RuntimeError: [Rank 0]: Rank 3 failed to pass monitoredBarrier in 2000 ms\n"), ["3"]);
        assert_eq!(
            absent("[E ProcessGroupGloo.cpp:138] Ranks 1, 2 failed to pass monitoredBarrier in 120000 ms\n"),
            ["1", "2"]
        );
        assert!(absent("Rank 1 successfully reached monitoredBarrier\n").is_empty());
    }

    /// Lightning-AI/pytorch-lightning#10098: two hosts each took global ranks 0-3 of a world of
    /// eight, so ranks 4-7 never started. One host's own four lines, or a restart that prints every
    /// rank twice, say nothing of that.
    #[test]
    fn ranks_that_two_hosts_both_took_leave_the_rest_unstarted_lightning10098() {
        let member = |rank: u64| format!("initializing ddp: GLOBAL_RANK: {rank}, MEMBER: {}/8\n", rank + 1);
        let parse_members = |ranks: &[u64]| {
            let text: String = ranks.iter().map(|&r| member(r)).collect();
            parse_text("log", &text).stated.into_iter().filter(|f| f.name == "pytorch.rank_behind").collect::<Vec<_>>()
        };
        let behind = parse_members(&[1, 1, 2, 2, 3, 3, 0, 0]);
        let ranks: Vec<_> = behind.iter().filter_map(|f| f.get("rank")).collect();
        assert_eq!(ranks, ["4", "5", "6", "7"]);
        assert!(parse_members(&[0, 1, 2, 3]).is_empty(), "one host's lines");
        assert!(parse_members(&[0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7]).is_empty(), "a restart");
    }

    /// alibaba/Pai-Megatron-Patch#693: rank 1 timed out in an ALLREDUCE and an _ALLGATHER_BASE both
    /// numbered 9, which only two process groups allow: no mismatch between ranks follows from that.
    #[test]
    fn one_process_in_two_collectives_of_one_number_is_two_groups() {
        let line = |op: &str, numel_out: u64| {
            format!("[rank5]:[E1022 03:18:42.064020706 ProcessGroupNCCL.cpp:655] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType={op}, NumelIn=512, NumelOut={numel_out}, Timeout(ms)=7200000) ran for 7200073 milliseconds before timing out.\n")
        };
        let two_groups = format!("{}{}", line("ALLREDUCE", 512), line("_ALLGATHER_BASE", 2048));
        let found = crate::triage::analyze(&[crate::triage::Input::new("log", two_groups.into_bytes())]);
        assert!(!found.has("pytorch.op_mismatch"), "{:?}", found.facts);
        let two_ranks =
            format!("{}{}", line("ALLREDUCE", 512), line("_ALLGATHER_BASE", 2048).replace("[Rank 1]", "[Rank 2]"));
        let found = crate::triage::analyze(&[crate::triage::Input::new("log", two_ranks.into_bytes())]);
        assert!(found.has("pytorch.op_mismatch"), "two processes in two collectives of one number");
    }

    /// NVIDIA/NeMo#5819: three of eight processes at c10d's store barrier, so five never started;
    /// the same wait that ended ("Completed store-based barrier"), and a barrier every process
    /// reached, are not read.
    #[test]
    fn a_store_barrier_short_of_the_world_names_processes_that_never_joined() {
        let waiting = "0: Waiting in store based barrier to initialize process group for rank: 3, key: store_based_barrier_key:1 (world_size=8, worker_count=3, timeout=0:30:00)\n";
        let records = parse_text("log", waiting);
        let fact = records.stated.iter().find(|f| f.name == "pytorch.rank_behind").expect("ranks missing");
        assert_eq!(fact.get("rank"), Some("not named: 5 of 8 processes never joined"));
        let newer = "Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1 (world_size=4, num_workers_joined=2, timeout=0:30:00)\n";
        assert!(parse_text("log", newer).stated.iter().any(|f| f.name == "pytorch.rank_behind"));
        let completed = format!(
            "{waiting}INFO: Rank 3: Completed store-based barrier for key:store_based_barrier_key:1 with 8 nodes.\n"
        );
        assert!(parse_text("log", &completed).stated.is_empty(), "the barrier was passed");
        let full = waiting.replace("worker_count=3", "worker_count=8");
        assert!(parse_text("log", &full).stated.is_empty(), "every process joined");
    }
}
