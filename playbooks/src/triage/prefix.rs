//! What launchers, log collectors and terminals put in front of the lines a tool printed, removed
//! before any analyzer reads them, so that `node7:1234:1250 [0] NCCL WARN ...` is read the same under
//! any of them. The original line stays the evidence (see `analyze`).
//!
//! Prefixes, in the forms their tools print them:
//! - ANSI colour and cursor sequences (ECMA-48 CSI), anywhere in the line;
//! - timestamps: ISO-8601 / RFC 3339 (`2024-05-01T10:00:01.123Z`, journalctl `-o short-iso`),
//!   bracketed (`[2024-05-01 10:00:01]`, `[2024-05-01 10:00:01,123]`), `dmesg` (`[ 1234.567890]`),
//!   `dmesg -T` (`[Wed May  1 10:00:01 2024]`), `dmesg --decode` (`kern  :warn  : `) and syslog (`May  1 10:00:01`; the host and tag
//!   that follow are left for the kernel-log reader, which takes the host from them);
//! - launcher labels: Open MPI `--tag-output` (`[1,0]<stdout>:`), horovodrun (`[0]<stderr>:`, with
//!   the time first under `--prefix-output-with-timestamp`), torchrun (`[rank3]:`,
//!   `[default0]:`), `kubectl logs --prefix` (`[pod/name/container]`), stern (`pod container | `),
//!   Ray's worker labels (`(RayWorkerVllm pid=7500)`);
//! - loggers' own heads: vLLM/SGLang (`ERROR 04-07 00:57:46 ray_utils.py:45]`,
//!   `INFO 05-30 22:22:26 [pynccl.py:153]`) and glog/absl (`E0901 10:20:11.257981 12345 file.cc:275]`);
//! - labels that are only prefixes when the whole input carries them: Slurm `srun -l` (`12: `),
//!   pdsh/clush (`node7: `, whose host is kept for facts that name none) and markdown's block quote
//!   (`> `, a log quoted in an issue or chat). A single `bond0: ...` or
//!   `1: lo: ...` line is the tool's own text and is left alone.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use regex::Regex;

use super::analysis::Analysis;
use super::horovod::{stall_list_heading, stall_list_line};
use crate::fact::Evidence;

/// A line without its prefixes, the host a pdsh/clush label named, and the numbers launchers'
/// labels gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stripped<'a> {
    pub text: Cow<'a, str>,
    pub host: Option<String>,
    pub labels: LineLabels,
}

/// The numbers launchers' labels put on a line: Slurm `srun -l`'s task ("12: "), which is the rank
/// when srun starts the ranks and the node's index when it starts a per-node launcher, and the
/// rank the program's own launcher names (Open MPI's `[job,rank]`, torchrun's `[rankN]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineLabels {
    pub task: Option<u64>,
    pub rank: Option<u64>,
    /// Two rank labels of one line that disagree: the input's rank labels say nothing.
    conflict: bool,
}

/// The rank a removed launcher label names: "12: " (srun -l, whose task ids are the ranks it
/// starts), "[1,12]<stdout>:" (Open MPI), "[rank12]:" (torchrun).
fn labelled_rank(prefix: &str) -> Option<u64> {
    let prefix = prefix.trim_start();
    let digits = |s: &str| -> Option<u64> {
        let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        s[..end].parse().ok()
    };
    if let Some(rest) = prefix.strip_prefix("[rank") {
        return digits(rest);
    }
    if let Some(end) = prefix.find("]<") {
        // Open MPI's "[1,12]<stdout>:" (job, rank) and horovodrun's "[12]<stdout>:", after the
        // time it may put first.
        let inside = prefix[..end].rsplit('[').next()?;
        return digits(inside.rsplit(',').next()?);
    }
    if prefix.starts_with('[') {
        return None;
    }
    prefix.trim_end().strip_suffix(':').and_then(|task| task.parse().ok())
}

/// The prefixes of one input: which of the ambiguous labels it uses, decided over all its lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Prefixes {
    task_labels: bool,
    /// srun labels twice over ("3: 0: ..."): a labelled log run under `srun -l` again. Otherwise a
    /// second "N: " after the label is the program's own (Horovod's stall list, "0: [tensor]").
    stacked_task_labels: bool,
    host_labels: bool,
    /// Markdown's block quote (`> `), as a log quoted in an issue or chat comes.
    quotes: bool,
}

struct Patterns {
    ansi: Regex,
    always: Vec<Regex>,
    task_label: Regex,
    host_label: Regex,
}

/// The line without a terminal's colour codes (ANSI SGR sequences, "\x1b[31m").
pub fn without_colours(line: &str) -> Cow<'_, str> {
    if line.contains('\x1b') {
        Cow::Owned(patterns().ansi.replace_all(line, "").into_owned())
    } else {
        Cow::Borrowed(line)
    }
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        let compile = |pattern: &str| Regex::new(pattern).expect("a fixed pattern compiles");
        Patterns {
            ansi: compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]"),
            always: [
                // [2024-05-01 10:00:01] / [2024-05-01T10:00:01.123+00:00] / [2024-05-01 10:00:01,123 INFO]
                r"^\s*\[\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}[^\]]{0,40}\]:? ?",
                // 2024-05-01T10:00:01.123456Z / 2024-05-01 10:00:01,123 / ...+0000, then one space (a
                // '|' after it may be the first column of a table, so it stays; the indentation of
                // an indented tool output after it stays too: nvidia-smi -q nests sections by it)
                r"^\s*\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})? ",
                // dmesg --decode (-x): facility and level ("kern  :warn  : "), before its timestamp
                r"^\s*(?:kern|user|mail|daemon|auth|syslog|lpr|news|uucp|cron|authpriv|ftp|local[0-7])\s*:\s*(?:emerg|alert|crit|err|warn|notice|info|debug)\s*: ?",
                // dmesg -T
                r"^\s*\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}\] ?",
                // dmesg
                r"^\s*\[\s*\d+\.\d+\] ?",
                // syslog timestamp (RFC 3164)
                r"^(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2}(?:\.\d+)? ",
                // Open MPI --tag-output / --timestamp-output labels
                r"^\s*\[\d+,\d+\]<(?:stdout|stderr)>: ?",
                // horovodrun's "[3]<stderr>:", after the time.asctime() of
                // --prefix-output-with-timestamp ("Fri Sep 18 03:11:09 2020[3]<stderr>:",
                // horovod/runner/common/util/safe_shell_exec.py)
                r"^\s*(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})?\[\d+\]<(?:stdout|stderr)>: ?",
                // torchrun --tee / --redirects and PyTorch's own rank label
                r"^\s*\[(?:rank|default)\d+\]: ?",
                // TorchX / TorchElastic role labels: "[trainer3]:", "[trainer0|0]:"
                r"^\s*\[[a-z][a-z0-9_.-]*\d(?:\|\d+)?\]: ?",
                // kubectl logs --prefix
                r"^\s*\[pod/[^\]\s]+\]\s",
                // stern: pod and container names (RFC 1123 labels), then " | "
                r"^[a-z0-9][a-z0-9.-]*(?: [a-z0-9][a-z0-9.-]*)? \| ",
                // Ray's worker label: "(RayWorkerVllm pid=7500)", "(pid=12, ip=10.0.0.1)",
                // "(VllmWorker rank=0 pid=123)"; a pid is required, so a shell's "(base)" stays
                r"^\s*\((?:[A-Za-z_][\w.-]* )?(?:[a-z_]+=[\w.:-]+,? )*pid=\d+(?:,? [a-z_]+=[\w.:-]+)*\) ?",
                // vLLM and SGLang's Python logger: "ERROR 04-07 00:57:46 ray_utils.py:45] " and the
                // newer "INFO 05-30 22:22:26 [pynccl.py:153] "
                r"^\s*(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? (?:\[[\w./-]+:\d+\]|[\w./-]+:\d+\]) ?",
                // glog / absl (XLA, TensorFlow, gRPC): "E0901 10:20:11.257981   12345 nccl_utils.cc:275] "
                r"^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+ +\d+ [\w./-]+:\d+\] ?",
            ]
            .iter()
            .map(|p| compile(p))
            .collect(),
            task_label: compile(r"^\s*\d{1,6}: "),
            // A host name with a digit (node7, gpu-a-012, ip-10-0-0-1): Python exception names and
            // tool field names ("RuntimeError: ", "Port: ") have none.
            host_label: compile(r"^([a-z][a-z0-9-]*\d[a-z0-9.-]*): "),
        }
    })
}

/// Linux drivers whose names hold a digit, as their messages begin ("bnx2x: [bnx2x_fw_command:3055
/// (enp2s0f0)]FW failed to respond!", each driver's pr_fmt of KBUILD_MODNAME ": "): a pdsh label's
/// form, but a driver's name, not a host's.
const DRIVERS_WITH_DIGITS: [&str; 13] = [
    "bnx2", "bnx2x", "bnx2i", "bnx2fc", "i40e", "e1000", "e1000e", "r8169", "tg3", "be2net", "mpt2sas", "mpt3sas",
    "qla2xxx",
];

/// Whether a line is `ip link`'s or `ip addr`'s heading of an interface ("7: net04: <BROADCAST,UP>
/// mtu 1500 ...", ip-link(8)): an index, a name, its flags in angle brackets, then its MTU.
fn interface_heading(line: &str) -> bool {
    // Most lines do not start with a digit: they are passed over before any search.
    let index = line.bytes().take_while(u8::is_ascii_digit).count();
    let Some(rest) = line.get(index..).and_then(|rest| rest.strip_prefix(": ")).filter(|_| index > 0) else {
        return false;
    };
    let Some((name, rest)) = rest.split_once(": <") else {
        return false;
    };
    !name.is_empty()
        && !name.contains(' ')
        && rest.split_once('>').is_some_and(|(_, after)| after.trim_start().starts_with("mtu "))
}

/// A pdsh/clush label at the start of `text` ("node7: "), and the host it names.
fn host_label(text: &str) -> Option<regex::Captures<'_>> {
    // Most lines are no label at all: the match alone is cheaper than its captures.
    let pattern = &patterns().host_label;
    if !pattern.is_match(text) {
        return None;
    }
    pattern.captures(text).filter(|captures| {
        // An interface's heading in ifconfig ("ibp65s0: flags=4099<UP,BROADCAST,MULTICAST>  mtu
        // 4092", net-tools) names the interface, not a host: it is the output itself.
        let after = captures.get(0).map_or("", |label| &text[label.end()..]);
        !DRIVERS_WITH_DIGITS.contains(&&captures[1]) && !after.starts_with("flags=")
    })
}

impl Prefixes {
    /// Decide the ambiguous labels: an input uses one when at least half of its non-blank lines
    /// (after the unambiguous prefixes) start with it.
    pub fn of(text: &str) -> Prefixes {
        let plain = Prefixes::default();
        Prefixes::counted(text.lines().map(|line| (line, plain.strip(line).text)))
    }

    /// The same decision from lines already stripped of the unambiguous prefixes (raw, stripped).
    fn counted<'a, S: AsRef<str>>(lines: impl Iterator<Item = (&'a str, S)>) -> Prefixes {
        let patterns = patterns();
        let (mut count, mut tasks, mut stacked, mut hosts, mut quotes) = (0usize, 0usize, 0usize, 0usize, 0usize);
        // Inside Horovod's stall list ("Missing ranks:" or "Stalled ranks:", then "3: [tensor, ...]"
        // a line, horovod/common/stall_inspector.cc).
        let mut stall_list = false;
        for (raw, stripped) in lines.filter(|(raw, _)| !raw.trim().is_empty()) {
            count += 1;
            let stripped = stripped.as_ref();
            // Horovod's stall list names a rank at the start of each line, which looks like srun's
            // task label and may be most of a pasted warning: it is the output itself.
            if stall_list && stall_list_line(stripped) {
                continue;
            }
            // `ip link` and `ip addr` head each interface with its index and name ("7: net04:
            // <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 ..."), which look like srun's task and
            // pdsh's host labels and are half of such a listing's lines: they are the output itself.
            if interface_heading(stripped) {
                continue;
            }
            let task = patterns.task_label.find(stripped);
            // Labels stack: `srun -l` over a pdsh-labelled log gives "3: node2: ...".
            let after_task = task.map_or(stripped, |m| &stripped[m.end()..]);
            // srun's label over the stall list: the label counts, the rank below it is no second.
            let listed = stall_list && stall_list_line(after_task);
            stall_list = listed || stall_list_heading(after_task);
            stacked += usize::from(task.is_some() && !listed && patterns.task_label.is_match(after_task));
            let host = host_label(after_task).is_some();
            hosts += usize::from(host);
            // And the other way round, with a timestamp between them: "node2: [Mon May  1 ...] 3: ...".
            let inner = || Prefixes { host_labels: true, ..Prefixes::default() }.strip(after_task).text;
            tasks += usize::from(task.is_some() || (host && patterns.task_label.is_match(&inner())));
            // A quoted log may carry a launcher's or collector's label before the quote mark (a
            // mailing-list reply quoting a labelled log, or a log of quoted lines labelled again).
            let quoted = |text: &str| text.trim_start().starts_with('>');
            quotes += usize::from(quoted(raw) || quoted(after_task) || (host && quoted(&inner())));
        }
        Prefixes {
            task_labels: count > 0 && tasks * 2 >= count,
            stacked_task_labels: count > 0 && stacked * 2 >= count,
            host_labels: count > 0 && hosts * 2 >= count,
            quotes: count > 0 && quotes * 2 >= count,
        }
    }

    /// The line without the prefixes this input uses (they may be stacked: a pod label, then a
    /// rank label, then a timestamp).
    pub fn strip<'a>(&self, line: &'a str) -> Stripped<'a> {
        let patterns = patterns();
        let mut text = without_colours(line);
        let mut host = None;
        let mut labels = LineLabels::default();
        // Each round removes one prefix; a line carries a few at most.
        let mut task_label_cut = false;
        for _ in 0..8 {
            let quote = self.quotes.then(|| {
                let trimmed = text.trim_start();
                let body = trimmed.trim_start_matches('>');
                (body.len() < trimmed.len()).then(|| text.len() - body.strip_prefix(' ').unwrap_or(body).len())
            });
            let mut cut =
                quote.flatten().or_else(|| patterns.always.iter().find_map(|p| p.find(&text)).map(|m| m.end()));
            if cut.is_none() && self.task_labels && (self.stacked_task_labels || !task_label_cut) {
                cut = patterns.task_label.find(&text).map(|m| m.end());
                task_label_cut = cut.is_some();
            }
            if let Some(end) = cut {
                // The innermost label of each kind is the one nearest the program.
                match labelled_rank(&text[..end]) {
                    Some(number) if !text[..end].contains('[') => labels.task = Some(number),
                    Some(number) => {
                        labels.conflict |= labels.rank.is_some_and(|outer| outer != number);
                        labels.rank = Some(number);
                    }
                    None => {}
                }
            }
            if cut.is_none() && self.host_labels {
                if let Some(captures) = host_label(&text) {
                    host = Some(captures[1].to_string());
                    cut = captures.get(0).map(|m| m.end());
                }
            }
            let Some(end) = cut.filter(|end| *end > 0) else { break };
            text = match text {
                Cow::Borrowed(s) => Cow::Borrowed(&s[end..]),
                Cow::Owned(s) => Cow::Owned(s[end..].to_string()),
            };
        }
        Stripped { text, host, labels }
    }
}

/// An input's text with every line's prefixes removed (same line count, so line numbers still
/// cite the input), and per line the host a pdsh/clush label named and the numbers launchers'
/// labels gave it (both empty when no line had such a prefix).
pub fn strip_input(text: &str) -> (Cow<'_, str>, Vec<Option<String>>, Vec<LineLabels>) {
    // One pass with the unambiguous prefixes; only an input that turns out to carry srun or pdsh
    // labels is stripped again with them.
    let plain = Prefixes::default();
    let mut lines: Vec<Stripped> = text.lines().map(|line| plain.strip(line)).collect();
    let prefixes = Prefixes::counted(text.lines().zip(lines.iter().map(|s| s.text.as_ref())));
    if prefixes != plain {
        lines = text.lines().map(|line| prefixes.strip(line)).collect();
    }
    if lines.iter().zip(text.lines()).all(|(clean, line)| clean.text.len() == line.len()) {
        return (Cow::Borrowed(text), Vec::new(), Vec::new());
    }
    let mut stripped = String::with_capacity(text.len());
    let mut hosts = Vec::with_capacity(lines.len());
    let mut labels = Vec::with_capacity(lines.len());
    for Stripped { text: clean, host, labels: line_labels } in lines {
        stripped.push_str(&clean);
        stripped.push('\n');
        hosts.push(host);
        labels.push(line_labels);
    }
    if labels.iter().any(|l| l.conflict) {
        for line in &mut labels {
            line.rank = None;
        }
    }
    if labels.iter().all(|l| l.task.is_none() && l.rank.is_none()) {
        labels = Vec::new();
    }
    (Cow::Owned(stripped), hosts, labels)
}

/// An input whose lines had prefixes: its text as given and the host each pdsh/clush label named.
#[derive(Debug)]
pub struct Relabelled {
    pub name: String,
    pub original: String,
    pub hosts: Vec<Option<String>>,
}

/// Evidence quotes the line as the input had it, prefixes included (the analyzers read it without
/// them); a fact that names no host takes the one its lines' pdsh/clush labels agree on.
pub fn restore_evidence(analysis: &mut Analysis, relabelled: &[Relabelled]) {
    if relabelled.is_empty() {
        return;
    }
    let originals: BTreeMap<&str, (Vec<&str>, &Vec<Option<String>>)> = relabelled
        .iter()
        .map(|input| (input.name.as_str(), (input.original.lines().collect(), &input.hosts)))
        .collect();
    let original = |evidence: &Evidence| -> Option<(&str, Option<&String>)> {
        let (lines, hosts) = originals.get(evidence.file.as_str())?;
        let index = evidence.line.checked_sub(1)?;
        Some((*lines.get(index)?, hosts.get(index).and_then(Option::as_ref)))
    };
    let restore = |evidence: &mut Evidence| {
        if let Some((line, _)) = original(evidence) {
            *evidence = Evidence::new(&evidence.file, evidence.line, line);
        }
    };
    for fact in &mut analysis.facts {
        if fact.get("host").is_none() {
            let hosts: BTreeSet<&String> = fact.evidence.iter().filter_map(|e| original(e).and_then(|o| o.1)).collect();
            if let (1, Some(host)) = (hosts.len(), hosts.first()) {
                fact.attrs.insert("host".into(), (*host).clone());
            }
        }
        fact.evidence.iter_mut().for_each(restore);
    }
    for entry in analysis.ranks.ranks.values_mut() {
        entry.evidence.iter_mut().for_each(restore);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(text: &str) -> Vec<String> {
        let prefixes = Prefixes::of(text);
        text.lines().map(|l| prefixes.strip(l).text.into_owned()).collect()
    }

    const NCCL: &str = "node7:1234:1250 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB";

    #[test]
    fn every_launcher_and_timestamp_form_is_removed() {
        for prefixed in [
            format!("2024-05-01T10:00:01.123456Z {NCCL}"),
            format!("2024-05-01 10:00:01,123 {NCCL}"),
            format!("[2024-05-01 10:00:01] {NCCL}"),
            format!("[2024-05-01T10:00:01.5+00:00]: {NCCL}"),
            format!("[1,3]<stdout>:{NCCL}"),
            format!("[rank3]: {NCCL}"),
            format!("[default0]:{NCCL}"),
            format!("[trainer0|0]:{NCCL}"),
            format!("[trainer3]:{NCCL}"),
            format!("[pod/trainer-0/main] {NCCL}"),
            format!("trainer-worker-3 pytorch | {NCCL}"),
            format!("\x1b[32m[rank3]:\x1b[0m {NCCL}"),
            format!("pod-a | [rank1]: 2024-05-01T10:00:01Z {NCCL}"),
            format!("[Wed May  1 10:00:01 2024] {NCCL}"),
            format!("[ 1234.567890] {NCCL}"),
            format!("(RayWorkerVllm pid=7500) {NCCL}"),
            format!("(pid=12, ip=10.0.0.1) {NCCL}"),
            format!("(VllmWorker rank=0 pid=123) ERROR 05-30 22:22:26 [pynccl.py:153] {NCCL}"),
            format!("(RayWorkerVllm pid=7602) ERROR 04-07 00:57:46 ray_utils.py:45] {NCCL}"),
            format!("E0901 10:20:11.257981   12345 nccl_utils.cc:275] {NCCL}"),
            format!("kern  :warn  : 2025-01-17T15:36:26,478631+00:00 {NCCL}"),
        ] {
            assert_eq!(strip(&prefixed), vec![NCCL.to_string()], "{prefixed:?}");
        }
    }

    #[test]
    fn syslog_keeps_the_host_and_tag_for_the_kernel_reader() {
        assert_eq!(
            strip("Nov 22 10:00:01 node7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, x"),
            vec!["node7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, x"]
        );
    }

    #[test]
    fn ambiguous_labels_only_when_the_whole_input_carries_them() {
        let srun = format!("0: {NCCL}\n1: {NCCL}\n12: {NCCL}\n");
        assert_eq!(strip(&srun), vec![NCCL.to_string(); 3]);
        let pdsh = format!("node7: {NCCL}\ngpu-a-012: [ 12.5] mlx5_core 0000:3b:00.0: link down\n");
        let prefixes = Prefixes::of(&pdsh);
        let second = prefixes.strip(pdsh.lines().nth(1).expect("line"));
        assert_eq!(second.text, "mlx5_core 0000:3b:00.0: link down");
        assert_eq!(second.host.as_deref(), Some("gpu-a-012"));
        // The tool's own text: a lone bond line in a kernel log, `ip link` numbering.
        let kernel = "[ 5.1] mlx5_core 0000:3b:00.0: x\nbond0: (slave ens1f0): link status down\n[ 5.2] y\n";
        assert_eq!(strip(kernel)[1], "bond0: (slave ens1f0): link status down");
        // 52K-0812/28gpu-cluster-rebuild's NAS incident (heldout174): Broadcom's bnx2x names itself
        // the way pdsh names a host.
        let driver = "bnx2x: [bnx2x_state_wait:312(enp2s0f0)]timeout waiting for state\nbnx2x: [bnx2x_fw_command:3055(enp2s0f0)]FW failed to respond!\n";
        assert_eq!(strip(driver)[1], "bnx2x: [bnx2x_fw_command:3055(enp2s0f0)]FW failed to respond!");
        assert!(Prefixes::of(driver).strip(driver.lines().next().expect("line")).host.is_none());
        let exceptions = "RuntimeError: NCCL error\nDistBackendError: x\n";
        assert_eq!(strip(exceptions), vec!["RuntimeError: NCCL error", "DistBackendError: x"]);
    }

    #[test]
    fn stacked_task_and_host_labels_are_both_removed() {
        let text = format!("3: node2: {NCCL}\n3: node2: {NCCL}\n");
        assert_eq!(strip(&text), vec![NCCL.to_string(); 2]);
        // ifconfig's interface heading under a pdsh label keeps the interface's name.
        let ifconfig = "ibp65s0: flags=4099<UP,BROADCAST,MULTICAST>  mtu 4092";
        let text = format!("gpu-node-003: {ifconfig}\ngpu-node-003: {ifconfig}\n");
        assert_eq!(strip(&text), vec![ifconfig.to_string(); 2]);
    }

    #[test]
    fn a_log_quoted_as_a_markdown_block_quote_is_unquoted() {
        // mosaicml/diffusion#110 and AI-Hypercomputer/xpk#492 quote their logs so.
        let quoted = format!("> {NCCL}\n> \n>{NCCL}\n");
        assert_eq!(strip(&quoted), vec![NCCL.to_string(), String::new(), NCCL.to_string()]);
        // One quoted line in a log is the log's own text.
        let once = format!("{NCCL}\n> not a quote\n{NCCL}\n");
        assert_eq!(strip(&once)[1], "> not a quote");
        // A quoted log labelled again (a mailing-list reply quoting ibqueryerrors, collected by a
        // launcher or pdsh): the label, then the quote mark.
        for label in ["[1,3]<stdout>:", "3: ", "gpu-node-002: [Mon May  1 10:00:01 2026] "] {
            let labelled = format!("{label}> {NCCL}\n{label}> {NCCL}\n");
            assert_eq!(strip(&labelled), vec![NCCL.to_string(); 2], "{label}");
        }
    }

    #[test]
    fn launcher_labels_give_their_line_a_task_or_a_rank() {
        let labels = |text: &str| strip_input(text).2;
        let task = |n| LineLabels { task: Some(n), ..LineLabels::default() };
        let rank = |n| LineLabels { rank: Some(n), ..LineLabels::default() };
        assert_eq!(labels(&format!("0: {NCCL}\n7: {NCCL}\n")), vec![task(0), task(7)]);
        assert_eq!(labels(&format!("[1,5]<stdout>: {NCCL}\n[rank6]: {NCCL}\n")), vec![rank(5), rank(6)]);
        // horovodrun, with and without --prefix-output-with-timestamp (horovod/horovod#2285).
        let horovod = format!("Fri Sep 18 03:11:09 2020[8]<stderr>:{NCCL}\n[3]<stdout>:{NCCL}\n");
        assert_eq!(labels(&horovod), vec![rank(8), rank(3)]);
        assert_eq!(strip(&horovod), vec![NCCL.to_string(); 2]);
        // A bracketed number without a stream is no label.
        assert_eq!(strip(&format!("[8] {NCCL}\n"))[0], format!("[8] {NCCL}"));
        // srun over torchrun: the task is the node, the inner label the rank.
        let stacked = labels(&format!("1: [rank9]: {NCCL}\n1: [rank9]: {NCCL}\n"));
        assert_eq!(stacked[0], LineLabels { task: Some(1), rank: Some(9), conflict: false });
        // A line that two launchers say two ranks printed: the input's rank labels say nothing.
        let contradictory = labels(&format!("[rank2]: [rank9]: {NCCL}\n[rank3]: {NCCL}\n"));
        assert!(contradictory.iter().all(|l| l.rank.is_none()), "{contradictory:?}");
        assert!(labels(&format!("[2024-05-01 10:00:01,123] {NCCL}\n")).is_empty(), "a timestamp names no rank");
    }

    #[test]
    fn indentation_without_a_prefix_is_kept() {
        // lspci -vvv and ibv_devinfo attach indented lines to the device above them.
        assert_eq!(strip("\tLnkSta: Speed 8GT/s, Width x8\n"), vec!["\tLnkSta: Speed 8GT/s, Width x8"]);
        // A timestamp takes one space with it, not the indentation that nests nvidia-smi -q's sections.
        assert_eq!(strip("2026-05-01T10:00:01Z         Summary : Unhealthy\n"), vec!["        Summary : Unhealthy"]);
    }

    /// `ip link` heads each interface with its index and name, half of the listing's lines: they
    /// are the output, not srun's and pdsh's labels.
    #[test]
    fn an_interface_listing_keeps_its_indexes_and_names() {
        let listing = "7: net04: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc mq state DOWN mode DEFAULT group default qlen 1000\n    link/ether b4:83:51:27:8d:44 brd ff:ff:ff:ff:ff:ff\n8: net05: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP\n    link/ether b4:83:51:27:8d:45 brd ff:ff:ff:ff:ff:ff\n";
        assert_eq!(strip(listing)[0], listing.lines().next().unwrap_or_default());
        // A launcher's labels over other output are still labels.
        assert_eq!(strip("3: node2: NCCL WARN x\n4: node2: NCCL WARN y\n")[0], "NCCL WARN x");
    }

    /// Horovod's stall list starts each line with a rank, most of a pasted warning's lines: they are
    /// the output. srun's labels over it are still labels, the program's rank kept below them.
    #[test]
    fn horovods_stall_list_keeps_its_ranks() {
        let stall = "W horovod/common/stall_inspector.cc:105] One or more tensors were submitted\nStalled ranks:\n0: [T_a]\n1: [T_b]\n2: [T_e]\n3!: [T_c, T_d]\n";
        assert_eq!(strip(stall)[2..], ["0: [T_a]", "1: [T_b]", "2: [T_e]", "3!: [T_c, T_d]"]);
        let labelled: String = stall.lines().map(|line| format!("5: {line}\n")).collect();
        assert_eq!(strip(&labelled)[2..], ["0: [T_a]", "1: [T_b]", "2: [T_e]", "3!: [T_c, T_d]"]);
    }
}
