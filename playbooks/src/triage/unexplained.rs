//! Never silent: lines that look like errors and that no analyzer explained. An on-call engineer
//! reads "no diagnosis" as "not a fabric problem"; when a log holds error lines that no playbook
//! knows, triage says so and quotes them.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use fabricdoctor_checks::{Finding, Verdict};
use regex::Regex;

use super::analysis::Analysis;
use super::lines::numbered_lines;
use crate::fact::{Evidence, Fact};

/// Most error lines quoted per input: enough to see the first failure and its neighbours.
const MAX_QUOTED: usize = 12;

/// Words that mark a line as reporting a failure, in the forms NCCL, PyTorch, the kernel and the
/// usual launchers print them.
fn error_words() -> &'static Regex {
    static WORDS: OnceLock<Regex> = OnceLock::new();
    WORDS.get_or_init(|| {
        Regex::new(
            // Exception and error types are one word ("torch.OutOfMemoryError", "ChildFailedError",
            // "ncclSystemError"): their names end in the word, after a lower-case letter.
            r"(?i)\b(?:WARN|error|errors|failed|failure|fatal|timeout|timed out|abort|aborted|aborting|xid|aer|panic|exception|traceback|segfault|segmentation fault|killed|unreachable|refused|out of memory)\b|(?-i:[a-z](?:Error|Exception)\b)",
        )
        .expect("a fixed pattern compiles")
    })
}

/// Whether a line reports a failure: an error word, and not a zero count ("port_rcv_errors: 0",
/// "#wrong 0") or an INFO line of NCCL's (settings and choices, never failures by themselves).
pub fn looks_like_error(line: &str) -> bool {
    if !error_words().is_match(line) || line.contains(" NCCL INFO ") {
        return false;
    }
    let last = line.trim_end().rsplit([' ', '\t', ':', '=']).next().unwrap_or("");
    last != "0"
}

/// A tool's report that it failed: a line that starts with the failure ("Failed to initialize
/// NVML: Unknown Error", "Unable to open umad port", "ERROR: ...", "error: ...").
fn tool_failed(line: &str) -> bool {
    let line = line.trim_start();
    ["Failed to ", "Unable to ", "ERROR:", "Error:", "error:", "FATAL:", "fatal:"].iter().any(|p| line.starts_with(p))
}

/// Input kinds that are logs (where an error line is news) rather than tool outputs read field
/// by field (where "errors" names a counter or a capability).
fn is_log(kinds: &[String]) -> bool {
    kinds.iter().all(|k| {
        matches!(
            k.as_str(),
            "unrecognised" | "nccl-log" | "kernel-log" | "nccl-ras" | "nccl-tests" | "tool-messages" | "process-exit"
        ) || k.starts_with("pytorch-")
    })
}

/// For every log input: the error lines no fact cites become an `input.error_lines` fact (what
/// the fallback rule quotes when nothing else matched), and an unrecognised input gets an
/// observation listing them by line number.
pub fn record(analysis: &mut Analysis, texts: &[(String, String)]) {
    let cited: BTreeSet<(&str, usize)> =
        analysis.facts.iter().flat_map(|f| f.evidence.iter()).map(|e| (e.file.as_str(), e.line)).collect();
    let mut facts = Vec::new();
    let mut observations = Vec::new();
    for (name, text) in texts {
        let Some(summary) = analysis.inputs.iter().find(|i| &i.file == name) else { continue };
        // In a log every error line is news; in a tool's output read field by field only the
        // tool's own failure is ("Failed to initialize NVML: Unknown Error" where nvidia-smi's
        // table should be), as "errors" there names counters and capabilities.
        let log = is_log(&summary.kinds);
        let mut lines: Vec<(usize, &str)> = numbered_lines(text)
            .filter(|(number, line)| {
                !cited.contains(&(name.as_str(), *number))
                    && if log { looks_like_error(line) } else { tool_failed(line) }
            })
            .collect();
        // A failure PyTorch's distributed stack is known to print is named with the part that
        // printed it (its message catalogue), not left as an unknown error line.
        lines.retain(|(number, line)| match super::catalogue::lookup_torch(line) {
            Some(entry) => {
                facts.push(torch_fact(entry, Evidence::new(name, *number, line)));
                false
            }
            None => true,
        });
        let Some((_, first)) = lines.first() else { continue };
        let mut fact =
            Fact::new("input.error_lines").attr("file", name).attr("count", lines.len()).attr("first", first.trim());
        for (number, line) in lines.iter().take(MAX_QUOTED) {
            fact = fact.evidence(Evidence::new(name, *number, line));
        }
        if summary.kinds.iter().any(|k| k == "unrecognised") {
            let numbers: Vec<String> = lines.iter().take(40).map(|(n, _)| n.to_string()).collect();
            let more = if lines.len() > 40 { format!(" and {} more", lines.len() - 40) } else { String::new() };
            let mut finding = Finding::new(
                "triage.input",
                Verdict::Warn,
                name.clone(),
                format!("not understood, but these lines look like errors: {}{more}", numbers.join(", ")),
            );
            finding.evidence =
                lines.iter().take(MAX_QUOTED).map(|(n, l)| format!("{name}:{n}: {}", l.trim())).collect();
            observations.push(finding);
        }
        facts.push(fact);
    }
    analysis.facts.extend(facts);
    analysis.observations.extend(observations);
}

/// A catalogued PyTorch failure: `pytorch.error` with its family; a store or socket that could not
/// reach its peer is also `pytorch.store_unreachable` (the rendezvous host or port is not reachable).
fn torch_fact(entry: &super::catalogue::TorchEntry, evidence: Evidence) -> Fact {
    let family = super::catalogue::torch_family(entry.file);
    let lower = entry.message.to_ascii_lowercase();
    let unreachable = matches!(family, "store" | "socket")
        && (lower.contains("connect") || lower.contains("timed out") || lower.contains("timeout"));
    let name = if unreachable { "pytorch.store_unreachable" } else { "pytorch.error" };
    Fact::new(name)
        .attr("family", family)
        .attr("source", entry.file)
        .attr("kind", entry.kind)
        .attr("text", evidence.text.trim())
        .evidence(evidence)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_lines_and_not_counts_or_settings() {
        assert!(looks_like_error("node1:1:2 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<5000> failed : Connection refused"));
        assert!(looks_like_error("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, unhandled system error"));
        assert!(looks_like_error(
            "[ 12.5] pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received: 0000:01:00.0"
        ));
        assert!(!looks_like_error("port_rcv_errors: 0"));
        assert!(!looks_like_error("node1:1:2 [0] NCCL INFO NCCL_IB_TIMEOUT set by environment to 22"));
        assert!(!looks_like_error("Epoch 3 loss 0.41"));
        assert!(tool_failed("   Failed to initialize NVML: Unknown Error"));
        assert!(!tool_failed("        Correctable Errors           : 0"));
        assert!(looks_like_error("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"));
        assert!(looks_like_error("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:"));
        assert!(
            !looks_like_error("ERRORS_FOUND_TOTAL_IS_A_NAME_NOT_A_FAILURE=no"),
            "no lower-case letter before the word"
        );
    }
}
