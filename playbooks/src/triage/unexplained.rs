//! Never silent: lines that look like errors and that no analyzer explained. An on-call engineer
//! reads "no diagnosis" as "not a fabric problem"; when a log holds error lines that no playbook
//! knows, triage says so and quotes them.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use fabricdoctor_checks::{Finding, Verdict};
use regex::Regex;

use super::analysis::Analysis;
use super::lines::numbered_lines;
use super::prefix::Relabelled;
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
            // "ncclSystemError"): their names end in the word, after a lower-case letter. The
            // kernel's own crash reports begin "BUG: unable to handle ..." and "Oops: 0001 [#1]";
            // mpirun says a rank failed as "one or more processes exited with non-zero status";
            // the kernel says a device's memory window could not be placed as "BAR 1 [mem size
            // 0x800000000 64bit pref]: can't assign; no space".
            // A driver's counter of errors by its own short name with a count that is not zero
            // ("unrecoverable_err=4", bnxt_re's) reports failures; the name alone (a command that
            // greps for it) does not.
            // The C library's words for a failed call (strerror(3): EPERM, EINVAL, ENOMEM, ENODEV,
            // EFAULT, EIO, ECONNRESET, EPIPE, EAFNOSUPPORT) end a line that reports one without an error word
            // ("process_vm_readv(...) returned -1: Operation not permitted"), as do the kernel's
            // module loader's ("Unknown symbol mlx5_db_free (err -22)", "disagrees about version of
            // symbol", kernel/module/main.c). A fault or trap is named by its own words without an
            // error word: ROCm's runtime "Memory access fault by GPU node-1", CUDA's "an illegal
            // memory access was encountered" (cudaGetErrorString), SIGILL's "Illegal instruction"
            // (strsignal(3)), the kernel's "general protection fault", an access a checker finds
            // "out of bounds" (compute-sanitizer), ENOSYS's "Function not implemented". The kernel's
            // hung-task detector reports a task stuck in uninterruptible sleep as "INFO: task
            // kworker/87:0:470 blocked for more than 122 seconds." (kernel/hung_task.c): a driver
            // deadlocked or waiting on hardware that never answers; the stack dump under it starts
            // "task:python3.11 state:D stack:0 pid:15277" (kernel/sched/core.c sched_show_task),
            // which is all a paste keeps where the poster cut the report's first line, and which
            // SysRq's list of blocked tasks prints the same way. A kernel warning's own header,
            // "WARNING: CPU: 7 PID: 1 at kernel/irq/manage.c:2034 free_irq+0x59/0x70" (kernel/panic.c
            // __warn), reports a driver in a state it should never reach; and a net device that
            // cannot be unregistered because something still holds it ("unregister_netdevice:
            // waiting for eno1.1000 to become free. Usage count = 4", net/core/dev.c) is a leaked
            // reference (RDMA queue pairs holding a VLAN's GID). A work completion's status other than
            // success is named IBV_WC_..._ERR (ibv_poll_cq(3), enum ibv_wc_status in verbs.h), on a
            // line of its own where a paste wrapped NCCL's "Got completion from peer" report. The
            // kernel's report of a process a CPU trap killed ("traps: ib_send_lat[30527] trap stack
            // segment ip:... error:0 in librdmacm.so", arch/x86/kernel/traps.c do_trap) names a
            // crash whose error code is no count. A kernel-mode instruction pointer in a register
            // dump ("RIP: 0010:ib_drain_rq+0x7/0x80 [ib_core]", arch/x86/kernel/dumpstack.c; code
            // segment 0x10 is the kernel's) is printed only for an oops or a warning, which a poster
            // may have cut above; and lib/refcount.c's "refcount_t: underflow; use-after-free." is
            // a reference count gone wrong in a driver. VT-d's fault reports name a fault without an
            // error word ("DMAR: DRHD: handling fault status reg 2", "DMAR: [INTR-REMAP] Request device
            // [42:00.2] fault index 1600", drivers/iommu/intel/dmar.c dmar_fault). A fatal signal's own
            // name is a crash where a handler reports it without other words (glog's failure signal
            // handler: "*** SIGSEGV (@0x50) received by PID 12833 (TID 0x7f56686c9700) from PID 80;
            // stack trace: ***", signal(7)'s names of the signals that end a process with a core), and
            // by its number where Ubuntu's crash reporter records it ("Signal: 11" in an apport
            // report, beside "SourcePackage: opensm").
            r"(?i)\b(?:WARN|error|errors|failed|failure|fatal|timeout|timed out|abort|aborted|aborting|xid|aer|panic|exception|traceback|segfault|segmentation fault|killed|unreachable|refused|no route to host|out of memory|operation not permitted|permission denied|invalid argument|cannot allocate memory|no such device|bad address|input/output error|connection reset by peer|broken pipe|address family not supported by protocol|unknown symbol|disagrees about version of symbol|memory access fault|illegal memory access|illegal instruction|general protection fault|function not implemented|out of bounds|blocked for more than \d+ seconds)\b|(?-i:\btask:\S+\s+state:D(?:\s|$))|(?-i:[a-z](?:Error|Exception)\b)|(?-i:\bBUG: |\bOops: |\bCRITICAL\b|\bWARNING: CPU: \d+ PID: \d+)|to become free\. Usage count|exited with non-zero status|can't assign|(?-i:[a-z0-9]_err\s*[:=]?\s*[1-9])|(?-i:\bIBV_WC_[A-Z_]+_ERR\b)|(?-i:\bSIG(?:SEGV|BUS|ABRT|ILL|FPE)\b)|(?-i:^\s*Signal: (?:4|6|7|8|11)\s*$)|(?-i:\btraps: \S+\[\d+\] trap )|(?-i:\bRIP: 0010:\S+\+0x)|(?-i:\brefcount_t: (?:underflow|overflow|saturated|addition on 0|decrement hit 0))|(?-i:\bDMAR: (?:DRHD: handling fault|\[(?:INTR-REMAP|DMA Read|DMA Write)\]))",
        )
        .expect("a fixed pattern compiles")
    })
}

/// The first lines of the kernel's dumps (kernel/panic.c __warn, mm and arch fault handlers'
/// "BUG: " and "Oops: ", arch/x86/kernel/traps.c): a register dump follows each.
const KERNEL_DUMP_HEADERS: [&str; 4] = ["WARNING: CPU: ", "BUG: ", "Oops: ", "general protection fault"];

/// Whether a line reports a failure: an error word, and not a zero count ("port_rcv_errors: 0",
/// "#wrong 0") or an INFO line of NCCL's (settings and choices, never failures by themselves).
pub fn looks_like_error(line: &str) -> bool {
    if !error_words().is_match(line) || line.contains(" NCCL INFO ") {
        return false;
    }
    // A command at a shell's prompt that searches for the words ("$ dmesg | grep -i error", "#
    // journalctl -k | egrep 'AER|Xid'") asks for failures; its output lines report them.
    if searches_for_words(line) {
        return false;
    }
    // cuda-gdb reports every CUDA call that returned other than success ("warning: Cuda API error
    // detected: cudaDeviceEnablePeerAccess returned (0x2c0)"); two of those returns are a program's
    // normal questions, not failures: cudaErrorNotReady (600, 0x258: work not finished yet) and
    // cudaErrorPeerAccessAlreadyEnabled (704, 0x2c0), which NCCL meets probing peer access.
    if line.contains("Cuda API error detected") && (line.contains("(0x258)") || line.contains("(0x2c0)")) {
        return false;
    }
    // A blocked task's stack dump header ("task:kworker/u16:5 state:D stack:0", see above) reads
    // no count, whatever number ends it: the words' own pattern names it.
    if line.contains("task:") && error_words().find_iter(line).any(|word| word.as_str().starts_with("task:")) {
        return true;
    }
    // A summary that begins with its count, zero, counts none of what it reports ("0 tests
    // completed and failed residual checks", HPL's end of run).
    if line.split_whitespace().next() == Some("0") {
        return false;
    }
    // A line that ends in a zero is a count of none ("port_rcv_errors: 0"), unless the zero is the
    // number of what the line names ("Failed to open device mlx5_3 on port  with GID 0", "rank 0").
    let mut words = line.trim_end().rsplit([' ', '\t', ':', '=']);
    if words.next() == Some("0") && !words.next().is_some_and(names_by_number) {
        return false;
    }
    // A program's own DEBUG or TRACE line (DCGM's "DEBUG [pid:tid] Called; errors = 0, ...") is
    // bookkeeping, never its report of a failure; nor is an error word that names a count of zero
    // mid-line.
    let level = line.trim_start().trim_start_matches('[');
    if ["DEBUG", "TRACE"].iter().any(|word| level.starts_with(word)) {
        return false;
    }
    // A health check's report that a check passed names what it checked ("SUCCESS:  nhc:  Health
    // check passed:  check_gpu_xid:  GPU XID error check passed.", Azure's Node Health Check):
    // the words of the check are no failure.
    if level.starts_with("SUCCESS") || line.contains("check passed") {
        return false;
    }
    // Errors a code corrected ("FEC Corrected Errors 1151") are the link working as designed; a
    // title that names errors without a number ("Input errors:", "Ethernet FEC statistics
    // Errors", a switch's or a counter tool's section heads, and a table's column heads set apart
    // by runs of spaces) reports none.
    let corrected = line.contains("orrected") && {
        let lower = line.to_ascii_lowercase();
        lower.contains("corrected errors") && !lower.contains("uncorrected")
    };
    // A line that opens with its severity ("ERROR:  nhc:  Health check failed:  check_hw_ib:  ...",
    // Node Health Check's log, which sets its fields apart by two spaces) is a report, not a head.
    let columns = line.trim().split("  ").filter(|column| !column.trim().is_empty()).count();
    let reported = ["ERROR:", "FATAL:", "CRITICAL:"].iter().any(|severity| level.starts_with(severity));
    let title = !reported
        && !line.contains(|c: char| c.is_ascii_digit())
        && (columns >= 3 || error_words().find_iter(line).all(|word| word.as_str().eq_ignore_ascii_case("errors")));
    if corrected || title {
        return false;
    }
    error_words().find_iter(line).any(|word| {
        let counted = ["errors", "failures", "failed"].iter().any(|count| word.as_str().eq_ignore_ascii_case(count));
        !names_zero(&line[word.end()..])
            && (!counted || !counted_zero(&line[..word.start()]))
            && !names_a_log_level(&line[..word.start()])
    })
}

/// Whether the text before an error word makes it the value a logging setting is given
/// ("NCCL_DEBUG=WARN", "FI_LOG_LEVEL=warn", "--log-level=error" in a command line or an
/// environment dump): a level asked for, not a failure reported.
fn names_a_log_level(before: &str) -> bool {
    let Some(key) = before.strip_suffix('=') else { return false };
    let key = key.rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).next().unwrap_or("");
    let key = key.to_ascii_lowercase();
    !key.is_empty() && (key.contains("debug") || key.contains("log") || key.contains("level"))
}

/// Whether the text before a counted error word ("errors", "failures", "failed") counts it as zero,
/// the number first ("Verification: PASS (0 march errors over 16 passes)", a memory test's summary;
/// "10 passed, 0 failed"): a zero, at most one word that says which, then the word; not a zero that
/// numbers a rank or a port ("rank 0 errors:"). A singular "error" after a zero is no count ("port 1
/// fabnum 0 error 733", GPFS's verbs log: an error code).
fn counted_zero(before: &str) -> bool {
    let words: Vec<&str> =
        before.trim_end().rsplit(|c: char| c.is_whitespace() || c == '(').filter(|w| !w.is_empty()).take(3).collect();
    let numbered = |at: usize| words.get(at).is_some_and(|word| names_by_number(word));
    match words.as_slice() {
        ["0", ..] => !numbered(1),
        [which, "0", ..] => which.chars().all(|c| c.is_ascii_alphabetic() || c == '-') && !numbered(2),
        _ => false,
    }
}

/// Whether a line is a shell command that filters text for words: grep(1) and its variants after a
/// pipe, or at the start of the command after a prompt (`$ `, `# `, `]$ `, `]# `, `> `).
fn searches_for_words(line: &str) -> bool {
    const SEARCHES: [&str; 4] = ["grep ", "egrep ", "zgrep ", "rg "];
    let piped =
        line.split('|').skip(1).any(|command| SEARCHES.iter().any(|search| command.trim_start().starts_with(search)));
    let trimmed = line.trim_start();
    let command = ["$ ", "# ", "> "]
        .iter()
        .find_map(|prompt| trimmed.strip_prefix(prompt))
        .or_else(|| ["]$ ", "]# "].iter().find_map(|prompt| trimmed.split_once(prompt).map(|(_, after)| after)));
    piped || command.is_some_and(|command| SEARCHES.iter().any(|search| command.trim_start().starts_with(search)))
}

/// Whether a word is the name of a thing that is numbered from zero (the GID, port, rank, device or
/// GPU that a number after it picks), so that a zero after it is that thing's number, not a count.
fn names_by_number(word: &str) -> bool {
    ["gid", "port", "rank", "device", "dev", "gpu", "index", "node", "nic", "hca", "channel", "cpu", "lane", "rail"]
        .iter()
        .any(|name| word.eq_ignore_ascii_case(name))
}

/// Whether the text after an error word gives it a count of zero ("errors = 0,", "failed: 0 ",
/// "Error: None").
fn names_zero(after: &str) -> bool {
    // A JSON or YAML key ends in its closing quote, and its value may open with one
    // ("\"Effective Physical Errors\" : \"0\",", `mlxlink --json`).
    let rest = after.trim_start_matches(['"', '\'']).trim_start();
    let Some(rest) = rest.strip_prefix(['=', ':']) else { return false };
    let rest = rest.trim_start().trim_start_matches(['"', '\'']);
    let none = |tail: &str| !tail.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '.');
    // "BPDU Error: None" (Junos' show interfaces) says none as a word.
    rest.strip_prefix('0').is_some_and(none) || rest.strip_prefix("None").is_some_and(none)
}

/// A tool's report that it failed: a line that starts with the failure ("Failed to initialize
/// NVML: Unknown Error", "Unable to open umad port", "ERROR: ...", "error: ..."), or a CUDA
/// program's checked call that failed as the CUDA samples' helper prints it (helper_cuda.h's
/// check(): "CUDA error at test.cu:44 code=35(cudaErrorInsufficientDriver) ..."), or nvidia-smi's
/// own ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver").
fn tool_failed(line: &str) -> bool {
    let line = line.trim_start();
    [
        "Failed to ",
        "Unable to ",
        "ERROR:",
        "Error:",
        "error:",
        "FATAL:",
        "fatal:",
        "CUDA error at ",
        "NVIDIA-SMI has failed",
    ]
    .iter()
    .any(|p| line.starts_with(p))
        || raised(line)
        || program_aborted(line)
}

/// A program's own failed check or uncaught exception, whatever tool output was pasted beside it:
/// assert(3)'s "python: MatrixMult.cu:265: run: Assertion `err == 0' failed.", Faiss's FAISS_ASSERT
/// ("Faiss assertion 'err == CUBLAS_STATUS_SUCCESS' failed in void faiss::gpu::runMatrixMult(...)"),
/// and libstdc++'s verbose terminate handler ("terminate called after throwing an instance of
/// 'c10::Error'"). No field of a tool's table says either.
fn program_aborted(line: &str) -> bool {
    line.starts_with("terminate called after throwing an instance of")
        || ["Assertion `", "assertion '", "Assertion '"]
            .iter()
            .any(|opening| line.split_once(opening).is_some_and(|(_, rest)| rest.contains("' failed")))
}

/// A Python exception as the interpreter prints it, alone on its line ("RuntimeError: DeepEP error:
/// timeout (dispatch CPU)", "torch.multiprocessing.spawn.ProcessRaisedException:"): a program
/// failed, whatever tool output was pasted beside it. No field of a tool's table has that shape
/// (a dotted name without spaces that ends in Error or Exception, then a colon or the line's end).
fn raised(line: &str) -> bool {
    let name = line.split(':').next().unwrap_or("");
    let rest = &line[name.len()..];
    (rest.is_empty() || rest.starts_with(':'))
        && (name.ends_with("Error") || name.ends_with("Exception"))
        && name.len() > "Error".len()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// Input kinds that are logs (where an error line is news) rather than tool outputs read field
/// by field (where "errors" names a counter or a capability).
fn is_log(kinds: &[String]) -> bool {
    kinds.iter().all(|k| {
        matches!(
            k.as_str(),
            "unrecognised"
                | "nccl-log"
                | "kernel-log"
                | "gpudirect-storage"
                | "nccl-ras"
                | "nccl-tests"
                | "tool-messages"
                | "process-exit"
        ) || k.starts_with("pytorch-")
    })
}

/// For every log input: the error lines no fact cites become an `input.error_lines` fact (what
/// the fallback rule quotes when nothing else matched), and an unrecognised input gets an
/// observation listing them by line number.
pub fn record(analysis: &mut Analysis, texts: &[(String, String)], relabelled: &[Relabelled]) {
    // An NCCL WARN from a part of NCCL that names what failed (NVML, peer-to-peer, topology, CUDA,
    // ...) and that no rule explains is the first error to read, not a consequence to pass over:
    // its line stays among the unexplained ones.
    let cited_by = |named: bool| -> BTreeSet<(&str, usize)> {
        analysis
            .facts
            .iter()
            .filter(|f| names_what_failed(f) == named)
            .flat_map(|f| f.evidence.iter())
            .map(|e| (e.file.as_str(), e.line))
            .collect()
    };
    let cited = cited_by(false);
    let named: BTreeSet<(&str, usize)> = cited_by(true).difference(&cited).copied().collect();
    // A collective the watchdog timed out (it has a sequence number) ran on a communicator, which
    // c10d builds only after its store rendezvous: a store that refused connections earlier was
    // reached in the end.
    let rendezvous_done = analysis.facts.iter().any(|f| f.name == "pytorch.watchdog_timeout" && f.get("seq").is_some());
    let mut facts = Vec::new();
    let mut observations = Vec::new();
    for (name, text) in texts {
        let Some(summary) = analysis.inputs.iter().find(|i| &i.file == name) else { continue };
        // In a log every error line is news; in a tool's output read field by field only the
        // tool's own failure is ("Failed to initialize NVML: Unknown Error" where nvidia-smi's
        // table should be), as "errors" there names counters and capabilities.
        let log = is_log(&summary.kinds);
        // A line of the kernel's log is a log line whatever else the input holds (dmesg pasted
        // below an lspci): its timestamp was removed before the analyzers read it, so the line as
        // given says so.
        // (A log's lines all count already: its stamps are not looked at.)
        let given: Vec<&str> = match relabelled.iter().find(|r| &r.name == name) {
            Some(input) if !log => input.original.lines().collect(),
            _ => Vec::new(),
        };
        // A stamp every line carries (`pdsh dmesg -T` around a tool's output) is the collector's and
        // says nothing of one line against another: a kernel line has more than the input's least.
        let stamps: Vec<usize> = given.iter().map(|line| kernel_stamps(line)).collect();
        let least = given.iter().zip(&stamps).filter(|(line, _)| !line.trim().is_empty()).map(|(_, n)| *n).min();
        let kernel = |number: usize| {
            stamps.get(number.wrapping_sub(1)).zip(least).is_some_and(|(stamps, least)| *stamps > least)
        };
        let mut lines: Vec<(usize, &str)> = numbered_lines(text)
            .filter(|(number, line)| {
                !cited.contains(&(name.as_str(), *number))
                    && if log || kernel(*number) { looks_like_error(line) } else { tool_failed(line) }
            })
            .collect();
        // Lines above an nccl-tests result row were survived: the collectives of that row ran to
        // the end after them (MPI's warnings about its own libraries, a plugin not found). So were
        // lines above a program's own report that its run passed the check it makes of its result
        // (HPL's end of run): the run went on past them to a right answer.
        let table = summary.kinds.iter().any(|kind| kind == "nccl-tests");
        let survived_until = table.then(|| super::nccl_tests::last_row(text)).flatten().or_else(|| hpl_passed(text));
        if let Some(last) = survived_until {
            let before = lines.len();
            lines.retain(|(number, _)| *number > last);
            let survived = before - lines.len();
            if survived > 0 {
                let reported = text.lines().nth(last - 1).map(str::trim);
                let mut finding = Finding::new(
                    "triage.input",
                    Verdict::Warn,
                    name.clone(),
                    format!(
                        "{survived} lines that look like errors came before line {last}, a result the run went on to report: they did not stop it"
                    ),
                );
                finding.evidence = reported.map(|line| format!("{name}:{last}: {line}")).into_iter().collect();
                observations.push(finding);
            }
        }
        // FORTIFY_SOURCE's run-time check of memcpy() (include/linux/fortify-string.h,
        // fortify_memcpy_chk) warns once, with a full kernel WARNING, when a copy spans the fields
        // of a struct ("memcpy: detected field-spanning write (size 56) of single field ... at
        // drivers/infiniband/hw/mlx5/wr.c:81 (size 2)"): the copy was meant, and the drivers
        // annotate it rather than change it (the linux-rdma list, 2023). That warning's header, at
        // the place the check named, is no failure to quote.
        // (One search of the whole text first: most inputs hold no such warning.)
        let spanning: BTreeSet<&str> = if text.contains("detected field-spanning write") {
            text.lines()
                .filter(|line| line.contains("detected field-spanning write"))
                .filter_map(|line| line.rsplit(" at ").next()?.split_whitespace().next())
                .collect()
        } else {
            BTreeSet::new()
        };
        if !spanning.is_empty() {
            lines.retain(|(_, line)| !warning_place(line).is_some_and(|at| spanning.contains(at)));
        }
        // A kernel-mode instruction pointer ("RIP: 0010:...") is an error line for the dump whose
        // header a poster cut; where the input holds a dump's header (a WARNING, BUG or Oops line),
        // the pointer is that dump's, and the header speaks for it (or is explained, as above).
        if text.contains("RIP: 0010:") && KERNEL_DUMP_HEADERS.iter().any(|header| text.contains(header)) {
            lines.retain(|(_, line)| !line.contains("RIP: 0010:"));
        }
        // A failure PyTorch's distributed stack is known to print is named with the part that
        // printed it (its message catalogue), not left as an unknown error line.
        // A port that another process holds (EADDRINUSE: "errno: 98 - Address already in use", a
        // second job's store on the same default port) is a cause the line states, which the
        // network-unreachable playbook names (tools.rs reads it as the store's port unusable): it
        // is not passed on as a failure of the distributed stack whose cause the inputs do not
        // show; nor is the store's "failed to listen on any local network address" that follows. A port the process may not bind is the same (EACCES,
        // "errno: 13 - Permission denied": a port below 1024 without CAP_NET_BIND_SERVICE,
        // ip(7); KimMeen/Time-LLM#20's MASTER_PORT 97).
        let refused_bind = |line: &str| line.contains("failed to bind") && line.contains("Permission denied");
        let port_taken = text.contains("Address already in use") || text.lines().any(refused_bind);
        let from_the_port = |line: &str| {
            line.contains("Address already in use")
                || refused_bind(line)
                || (port_taken && line.contains("failed to listen"))
        };
        lines.retain(|(number, line)| match super::catalogue::lookup_torch(line).filter(|_| !from_the_port(line)) {
            Some(entry) => {
                if !address_family_warning(line) {
                    facts.push(torch_fact(entry, Evidence::new(name, *number, line), rendezvous_done));
                }
                false
            }
            None => true,
        });
        let Some((_, first)) = lines.first() else { continue };
        let mut fact =
            Fact::new("input.error_lines").attr("file", name).attr("count", lines.len()).attr("first", first.trim());
        if lines.iter().any(|(number, _)| named.contains(&(name.as_str(), *number))) {
            fact = fact.attr("nccl_named", "yes");
        }
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

/// The line of HPL's end-of-run summary that counts the tests that passed their residual check,
/// where at least one passed and none failed (netlib HPL's testing/ptest/HPL_pddriver.c, which
/// HPL-NVIDIA and rocHPL keep: "1 tests completed and passed residual checks," then "0 tests
/// completed and failed residual checks,"). `None` for a run that failed one, or checked none.
fn hpl_passed(text: &str) -> Option<usize> {
    if !text.contains("passed residual checks") {
        return None;
    }
    let count = |line: &str| line.split_whitespace().next().and_then(|word| word.parse::<u64>().ok());
    let mut passed = None;
    for (number, line) in numbered_lines(text) {
        if line.contains("tests completed and failed residual checks") && count(line) != Some(0) {
            return None;
        }
        if line.contains("tests completed and passed residual checks") && count(line).is_some_and(|n| n > 0) {
            passed = Some(number);
        }
    }
    passed
}

/// The lines of facts that look like errors, as one `input.error_lines` fact per the first file
/// that has them: for when no rule took those facts up (its other conditions unmet), so the
/// lines they cite are still said to be errors no playbook explains, not passed over in silence.
/// `None` when no fact cites such a line.
pub fn unused_error_lines(facts: &[&Fact]) -> Option<Fact> {
    let mut lines: Vec<&Evidence> = Vec::new();
    let mut seen = BTreeSet::new();
    for evidence in facts.iter().flat_map(|fact| fact.evidence.iter()) {
        // Evidence quotes the line as given, colours and all; its words are what is judged.
        if looks_like_error(&super::prefix::without_colours(&evidence.text))
            && seen.insert((evidence.file.as_str(), evidence.line))
        {
            lines.push(evidence);
        }
    }
    lines.sort_by(|a, b| (a.file.as_str(), a.line).cmp(&(b.file.as_str(), b.line)));
    let first = lines.first()?;
    let mut fact = Fact::new("input.error_lines")
        .attr("file", &first.file)
        .attr("count", lines.len())
        .attr("first", first.text.trim());
    for evidence in lines.into_iter().take(MAX_QUOTED) {
        fact = fact.evidence(evidence.clone());
    }
    Some(fact)
}

/// A client that warns it could not open a socket of one address family (errno 97, EAFNOSUPPORT:
/// "[W711 21:05:36.1 socket.cpp:764] [c10d] The client socket cannot be initialized to connect to
/// [localhost]:29619 (errno: 97 - Address family not supported by protocol)."): c10d resolves the
/// name to IPv6 and IPv4 addresses, warns for each it cannot use and tries the next (socket.cpp),
/// so on a host without IPv6 every healthy job prints it (NVIDIA-NeMo/Automodel#3032, MLPerf's
/// MangoBoost logs). The warning is no error; an unreachable store says so in its own lines.
fn address_family_warning(line: &str) -> bool {
    is_warning(line) && line.to_ascii_lowercase().contains("address family not supported")
}

/// A catalogued PyTorch failure: `pytorch.error` with its family; a store or socket that could not
/// reach its peer is also `pytorch.store_unreachable` (the rendezvous host or port is not reachable),
/// unless it was only a warning of a client that retries (c10d logs its retried connects at level
/// W, "[W socket.cpp:601]" or "[W1127 08:55:12.9 socket.cpp:...]") and the rendezvous completed.
fn torch_fact(entry: &super::catalogue::TorchEntry, evidence: Evidence, rendezvous_done: bool) -> Fact {
    let family = super::catalogue::torch_family(entry.file);
    let lower = entry.message.to_ascii_lowercase();
    let retried = rendezvous_done && is_warning(&evidence.text);
    // A read on a socket that is connected ("waitForInput: socket SocketImpl(fd=71, addr=...,
    // remote=[localhost]:29500) timed out after 600000ms", socket.cpp) reached the store: it is a
    // wait for a key that another rank has not set yet, which is a rank behind, not an address out
    // of reach (hao-ai-lab/FastVideo#228).
    let waited_on_a_connection = lower.contains("waitforinput");
    let unreachable = matches!(family, "store" | "socket")
        && !retried
        && !waited_on_a_connection
        && (lower.contains("connect") || lower.contains("timed out") || lower.contains("timeout"));
    let name = if unreachable { "pytorch.store_unreachable" } else { "pytorch.error" };
    Fact::new(name)
        .attr("family", family)
        .attr("source", entry.file)
        .attr("kind", entry.kind)
        .attr("text", evidence.text.trim())
        .evidence(evidence)
}

/// An `nccl.error` (a WARN no rule names) printed by a part of NCCL that says what failed, rather
/// than by the paths every failure travels (sockets, the proxy, the network transport, the
/// communicator, or the caller's quote of NCCL's result), which report a fault elsewhere.
fn names_what_failed(fact: &Fact) -> bool {
    if fact.name != "nccl.error" {
        return false;
    }
    let text = fact.get("text").unwrap_or("");
    fact.get("family").is_some_and(|family| match family {
        "p2p" | "nvml" | "shared-memory" | "nvls" | "topology" | "cuda" | "memory-and-misc" | "os" | "core" => true,
        // init.cc, enqueue.cc, group.cc: mostly the caller's usage or configuration refused
        // ("Invalid rank requested : 2/2", "Invalid config ..."), except the teardown of a
        // communicator that already failed ("commReclaim: ...", "communicator was revoked").
        "communicator" => {
            !["commReclaim", "commDestroy", "revoked", "destroyed", "abort"].iter().any(|w| text.contains(w))
        }
        _ => false,
    })
}

/// The place a kernel warning's header names: the word after its " at " ("WARNING: CPU: 2 PID: 1217
/// at drivers/infiniband/hw/mlx5/wr.c:81 mlx5_ib_post_send+0x59d/0x867").
fn warning_place(line: &str) -> Option<&str> {
    line.split_once("WARNING: CPU:")?.1.split_once(" at ")?.1.split_whitespace().next()
}

/// How many stamps of the kernel's log a line carries, as dmesg ("[  245.749599] ...", "[Tue Apr
/// 1 10:00:00 2025] ...") or the journal and syslog ("... kernel: ...") print them
/// (kernel/printk/printk.c prints the seconds with six decimals).
fn kernel_stamps(line: &str) -> usize {
    static KERNEL: OnceLock<Regex> = OnceLock::new();
    KERNEL
        .get_or_init(|| {
            // Anywhere in the line: a collector's or launcher's prefix may stand before the kernel's.
            Regex::new(r"\[\s*\d+\.\d{6}\] |\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\] | kernel: ")
                .expect("a fixed pattern compiles")
        })
        .find_iter(line)
        .count()
}

/// Whether a c10d line was logged at level W (glog's "[W1127 08:55:12.92 file.cpp:N]" or the older
/// "[W file.cpp:N]").
fn is_warning(line: &str) -> bool {
    line.match_indices("[W").any(|(at, _)| {
        let rest = &line[at + 2..];
        // c10's logger writes the month without its leading zero ("[W430 02:53:53.854 socket.cpp:757]",
        // 30 April), glog's with it ("[W1127 08:55:12.9 ...]").
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        rest.starts_with(' ') || (digits == 4 || (digits == 3 && rest.as_bytes().get(3) == Some(&b' ')))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts_of(text: &str) -> Vec<Fact> {
        super::super::analyze(&[super::super::Input::new("case.txt", text.as_bytes().to_vec())]).facts
    }

    /// deepseek-ai/DeepEP#13: a traceback pasted above `ibstatus` of the ports; the input reads as
    /// ibstat, and the program's exception is still an error line. The tool's own fields, whose
    /// names say error, are not.
    /// mghpcc aicr-bench (heldout77): HPL's summary of a run that passed counts no failure.
    #[test]
    fn a_summary_that_counts_none_is_no_error() {
        assert!(!looks_like_error("               0 tests completed and failed residual checks,"));
        assert!(looks_like_error("               1 tests completed and failed residual checks,"));
        // deepseek-ai/3FS#98 (heldout77): a program's CRITICAL level (syslog's crit, Python logging's
        // CRITICAL) is an error line whatever words follow; the word in prose is not.
        assert!(looks_like_error(
            "[2025-03-13T11:10:09 mgmtd_main:   32 IBDevice.cc:441 CRITICAL] IBDevice mlx5_0:1 can't set zone by IP"
        ));
        assert!(!looks_like_error("the critical path of the allreduce"));
    }

    /// mghpcc aicr-bench's 8-node HPL (heldout309): UCX's shared-memory attach refused on every
    /// node, then HPL's summary that the run passed its residual check. The run went on past
    /// those lines to a right answer, so they are noted, not quoted as the cause; a run that
    /// failed its check, or errors after the summary, keep their lines.
    #[test]
    fn error_lines_before_a_run_that_passed_its_own_check_were_survived_aicrbench_hpl() {
        let ucx = "[1779126884.877334] [b0005:1443008:0]        mm_posix.c:238  UCX  ERROR   open(file_name=/proc/1443071/fd/130 flags=0x0) failed: Permission denied\n";
        let summary = |passed: u32, failed: u32| {
            format!("Finished      1 tests with the following results:\n{passed:>16} tests completed and passed residual checks,\n{failed:>16} tests completed and failed residual checks,\n               0 tests skipped because of illegal input values.\n")
        };
        let names = |facts: &[Fact]| facts.iter().map(|f| f.name.clone()).collect::<Vec<_>>();
        let passed = format!("{ucx}{ucx}{}", summary(1, 0));
        assert!(!names(&facts_of(&passed)).contains(&"input.error_lines".to_string()));
        let analysis = super::super::analyze(&[super::super::Input::new("case.txt", passed.as_bytes().to_vec())]);
        assert!(
            analysis
                .observations
                .iter()
                .any(|o| o.message.starts_with("2 lines that look like errors came before line 4")),
            "{:?}",
            analysis.observations
        );
        let failed = format!("{ucx}{ucx}{}", summary(0, 1));
        assert!(names(&facts_of(&failed)).contains(&"input.error_lines".to_string()));
        let after = format!("{}{ucx}", summary(1, 0));
        assert!(names(&facts_of(&after)).contains(&"input.error_lines".to_string()));
    }

    /// linux-rdma/perftest 6ff1c4a: the kernel's report of ib_send_lat killed by a stack-segment
    /// trap inside librdmacm is an error line, though its error code reads zero; the kernel's
    /// note of its trap handlers at boot is not.
    /// Habana's hccl_demo (heldout397): a command line that sets a library's log level to "warn"
    /// reports no warning; a failure on a line that also names a level still does.
    #[test]
    fn a_logging_settings_level_is_no_error_line() {
        assert!(!looks_like_error(
            "export FI_LOG_LEVEL=warn HCCL_OVER_OFI=1 python3 run_hccl_demo.py --test broadcast"
        ));
        assert!(!looks_like_error("mpirun -x NCCL_DEBUG=WARN -np 16 ./all_reduce_perf -b 8 -e 8G"));
        assert!(looks_like_error("NCCL_DEBUG=WARN run failed: exit code 1"));
        assert!(looks_like_error("status=error while connecting to peer"));
    }

    /// PaddlePaddle/Paddle#18232 (heldout391): glog's report of a segfault inside
    /// ncclCommInitAll, the input's only failure line, is quoted; a signal that only stops a
    /// process is no crash.
    /// ml-explore/mlx#2540: Open MPI's TCP transport says only that no route reaches its peer.
    #[test]
    fn a_peer_no_route_reaches_is_an_error_line() {
        assert!(looks_like_error(
            "[b][[59259,1],0][btl_tcp_endpoint.c:857:mca_btl_tcp_endpoint_start_connect] peer: m Unable to connect to the peer 192.168.68.53 on port 1024: No route to host"
        ));
    }

    #[test]
    fn a_fatal_signals_own_name_is_an_error_line() {
        assert!(looks_like_error(
            "*** SIGSEGV (@0x50) received by PID 12833 (TID 0x7f56686c9700) from PID 80; stack trace: ***"
        ));
        assert!(!looks_like_error("the handler of SIGTERM stops the workers"));
        assert!(looks_like_error("Signal: 11"));
        assert!(!looks_like_error("Signal: 15"));
    }

    #[test]
    fn a_process_a_cpu_trap_killed_perftest_6ff1c4a() {
        assert!(looks_like_error(
            "[  350.898268] traps: ib_send_lat[30527] trap stack segment ip:7f374b039651 sp:7ffcf1ae0130 error:0 in librdmacm.so.1.2.29.0[7f374b030000+18000]"
        ));
        assert!(!looks_like_error("[    0.000000] traps: installing trap handlers"));
        // The linux-nfs and linux-nvme lists: an oops cut to its register dump, and a reference
        // count that went below zero. A process's own (user-mode) instruction pointer is not one.
        assert!(looks_like_error("[ 2116.080990] RIP: 0010:ib_drain_rq+0x7/0x80 [ib_core]"));
        assert!(looks_like_error("[65857.994862] refcount_t: underflow; use-after-free."));
        assert!(!looks_like_error("[  703.192232] RIP: 0033:0x7fd660cddc60"));
    }

    #[test]
    fn a_python_exception_beside_a_tool_output_is_an_error_line() {
        let ports = "Infiniband device 'mlx5_0' port 1 status:\n\tdefault gid:\t fe80:0000:0000:0000:1270:fdff:fe5d:dcd8\n\tbase lid:\t 0x0\n\tsm lid:\t\t 0x0\n\tstate:\t\t 4: ACTIVE\n\tphys state:\t 5: LinkUp\n\trate:\t\t 100 Gb/sec (4X EDR)\n\tlink_layer:\t Ethernet\n";
        let exception =
            "torch.multiprocessing.spawn.ProcessRaisedException:\nRuntimeError: DeepEP error: unknown failure\n";
        let facts = facts_of(&format!("{exception}{ports}"));
        let lines = facts.iter().find(|f| f.name == "input.error_lines").expect("the exception is quoted");
        assert_eq!(lines.get("count"), Some("2"), "{lines:?}");
        assert!(facts_of(ports).iter().all(|f| f.name != "input.error_lines"));
        assert!(raised("RuntimeError: DeepEP error"));
        assert!(raised("torch.distributed.DistBackendError"));
        for field in ["Symbol Error: 5", "rx_crc_errors: 5", "Error: 5", "Error Count: 3", "Link Error: 3"] {
            assert!(!raised(field), "{field}");
        }
    }

    /// facebookresearch/faiss#4605: nvidia-smi's banner above Faiss's failed assertion; the input
    /// reads as nvidia-smi, and the program's failed check is still its error. So are assert(3)'s
    /// words and a C++ exception nothing caught; an assertion that held is not.
    #[test]
    fn a_failed_assertion_beside_nvidia_smi_is_an_error_line_faiss4605() {
        let banner = "| NVIDIA-SMI 550.163.01 Driver Version: 550.163.01 CUDA Version: 12.4 |\n";
        let failed = "Faiss assertion 'err == CUBLAS_STATUS_SUCCESS' failed in void faiss::gpu::runMatrixMult(...) at /project/faiss/faiss/gpu/utils/MatrixMult-inl.cuh:265; details: cublas failed (13)\n";
        let facts = facts_of(&format!("{banner}{failed}"));
        let lines = facts.iter().find(|f| f.name == "input.error_lines").expect("the assertion is quoted");
        assert!(lines.get("first").is_some_and(|l| l.starts_with("Faiss assertion")), "{lines:?}");
        assert!(facts_of(banner).iter().all(|f| f.name != "input.error_lines"));
        assert!(program_aborted("python: MatrixMult.cu:265: void run(): Assertion `err == 0' failed."));
        assert!(program_aborted("terminate called after throwing an instance of 'c10::Error'"));
        assert!(!program_aborted("Assertion `err == 0' passed"));
    }

    /// jade-hpc-gpu#10 (heldout92): nvidia-smi's banner above a CUDA sample's failed call; the
    /// input reads as nvidia-smi, and the checked call's failure is still the program's error.
    #[test]
    fn a_cuda_samples_failed_call_beside_nvidia_smi_is_an_error_line() {
        let text = "NVIDIA-SMI 375.66                 Driver Version: 375.66\n\
                    CUDA error at test.cu:44 code=35(cudaErrorInsufficientDriver) \"cudaMalloc((void **)&d_u, sizeof(float)*NX)\"\n";
        let lines = facts_of(text).into_iter().find(|f| f.name == "input.error_lines").expect("the call is quoted");
        assert!(lines.get("first").is_some_and(|l| l.contains("cudaErrorInsufficientDriver")), "{lines:?}");
        let input = super::super::Input::new("case.txt", text.as_bytes().to_vec());
        let report = super::super::triage(&[input], &crate::playbook::Playbook::embedded());
        assert_eq!(report.diagnoses.first().map(|d| d.id.as_str()), Some("cuda-driver-mismatch"));
        assert!(tool_failed("CUDA error at test.cu:44 code=35(cudaErrorInsufficientDriver)"));
        assert!(!tool_failed("    CUDA Version: 12.4"));
    }

    /// NVIDIA/gds-nvidia-fs#60: dmesg pasted below lspci's ACS lines; the input reads as lspci, and
    /// the kernel's failures below it are still error lines.
    #[test]
    fn kernel_lines_below_a_tool_output_are_log_lines() {
        let text = "ACSCtl:    SrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-\n\
                    [  226.622821] XFS (nvme0n1): Ending clean mount\n\
                    [  245.749599] nvidia-fs:rw_verify_area failed with -14\n";
        let facts = facts_of(text);
        let lines = facts.iter().find(|f| f.name == "input.error_lines").expect("the kernel's failure is quoted");
        assert_eq!(lines.get("count"), Some("1"));
        assert!(lines.get("first").is_some_and(|l| l.contains("rw_verify_area failed")), "{lines:?}");
        // The same under `pdsh dmesg -T`'s stamp on every line: still the kernel's one line.
        let stamped: String = text.lines().map(|l| format!("gpu-node-001: [Mon May  1 10:00:00 2026] {l}\n")).collect();
        let facts = facts_of(&stamped);
        let lines = facts.iter().find(|f| f.name == "input.error_lines").expect("quoted under the stamp too");
        assert_eq!(lines.get("count"), Some("1"));

        assert_eq!(kernel_stamps("Nov 29 10:00:01 node7 kernel: mlx5_core 0000:17:00.0: failed"), 1);
        assert_eq!(kernel_stamps("node1: [Tue Apr  1 10:00:00 2025] [  245.749599] NVRM: Xid 79"), 2);
        assert_eq!(kernel_stamps("[rank1]: RuntimeError: failed"), 0);
    }

    /// LlamaFactory#6161: NCCL says what failed (NVML could not be loaded) and no rule names it:
    /// the lines stay unexplained and are marked as NCCL's, so the diagnosis quotes them rather than
    /// saying the inputs do not show why. A WARN of the paths failures travel (a socket reset by the
    /// peer) is a consequence, and is not.
    #[test]
    fn an_nccl_warn_that_names_what_failed_stays_among_the_unexplained() {
        let quoted = "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n\
                      [rank1]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n\
                      [rank1]: Last error:\n\
                      [rank1]: Failed to open libnvidia-ml.so.1\n";
        let facts = facts_of(quoted);
        let lines = facts.iter().find(|f| f.name == "input.error_lines").expect("quoted");
        assert_eq!(lines.get("nccl_named"), Some("yes"), "{facts:?}");
        // Azure/AML-Kubernetes#58: NCCL refusing the rank it was given names what failed; the
        // teardown of a communicator that failed already does not.
        let usage = "worker-1:25:25 [0] init.cc:981 NCCL WARN Invalid rank requested : 2/2\n";
        let lines = facts_of(usage).into_iter().find(|f| f.name == "input.error_lines").expect("quoted");
        assert_eq!(lines.get("nccl_named"), Some("yes"));
        let teardown = "n1:1:2 [0] init.cc:2046 NCCL WARN commReclaim: comm 0x55 (rank = 3) in abort, error 6\n";
        assert!(facts_of(teardown).iter().all(|f| f.get("nccl_named").is_none()));
        let reset = "node1:1:2 [0] include/socket.h:409 NCCL WARN Call to recv failed : Connection reset by peer\n";
        let facts = facts_of(reset);
        assert!(facts.iter().all(|f| f.get("nccl_named").is_none()), "{facts:?}");
    }

    /// text-generation-inference#1106: c10d's client warns that it retries the store, then the job's
    /// first AllReduce times out: the rendezvous was reached, and the warning is no unreachable store.
    #[test]
    fn a_retried_store_connect_before_a_collective_ran_is_no_unreachable_store() {
        let retry = "[W socket.cpp:601] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99 - Cannot assign requested address).\n";
        let timeout = "[E ProcessGroupNCCL.cpp:828] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, Timeout(ms)=60000) ran for 69027 milliseconds before timing out.\n";
        let has = |text: &str| facts_of(text).iter().any(|f| f.name == "pytorch.store_unreachable");
        assert!(has(retry), "alone, the store was not reached");
        assert!(!has(&format!("{timeout}{retry}")));
        let error = "[E socket.cpp:957] [c10d] The client socket has timed out after 900s while trying to connect to (10.0.0.1, 29500).\n";
        assert!(has(&format!("{timeout}{error}")), "an error, not a retry");
        // hao-ai-lab/FastVideo#228: a read on a connected store socket timed out: reached, waiting.
        let waiting = "[rank2]:[W303 08:23:41.025328690 socket.cpp:487] [c10d] waitForInput: socket SocketImpl(fd=71, addr=[localhost]:43246, remote=[localhost]:29500) timed out after 600000ms\n";
        assert!(!has(waiting));
        assert!(is_warning("[W1127 08:55:12.921262401 socket.cpp:752] [c10d] The client socket has failed to connect"));
        assert!(!is_warning("[WARNING] something"));
    }

    #[test]
    fn error_lines_and_not_counts_or_settings() {
        assert!(looks_like_error("node1:1:2 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<5000> failed : Connection refused"));
        assert!(looks_like_error("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, unhandled system error"));
        assert!(looks_like_error(
            "[ 12.5] pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received: 0000:01:00.0"
        ));
        assert!(!looks_like_error("port_rcv_errors: 0"));
        assert!(!looks_like_error("\t\t\t\t\"Effective Physical Errors\" : \"0\","));
        assert!(looks_like_error("\t\t\t\t\"Effective Physical Errors\" : \"12\","));
        assert!(!looks_like_error("Total failed: 0"));
        // mymdbook/xai_link_flap: a switch's healthy interface report.
        assert!(!looks_like_error(
            "  Link-level type: Ethernet, MTU: 9216, BPDU Error: None, Loop Detect PDU Error: None"
        ));
        assert!(!looks_like_error("  Input errors:"));
        assert!(!looks_like_error("  Ethernet FEC statistics              Errors"));
        assert!(!looks_like_error("    FEC Corrected Errors                 1151"));
        assert!(looks_like_error("    FEC Uncorrected Errors               12"));
        assert!(looks_like_error("Errors: 3"));
        assert!(!looks_like_error(
            "  Symbol Error Per Code Word         Code Words    Total Code Words    Last Changed"
        ));
        // AlizeeChen11/azurehpc-health-checks: a passed check that names errors it looked for.
        assert!(!looks_like_error("SUCCESS:  nhc:  Health check passed:  check_gpu_xid:  GPU XID error check passed."));
        assert!(looks_like_error("ERROR:  nhc:  Health check failed:  check_gpu_xid:  GPU XID error 79 found."));
        // zrlio/softiwarp#2: the kernel's own crash report.
        assert!(looks_like_error("[  519.463509] BUG: unable to handle kernel paging request at 0000000001d39d00"));
        assert!(looks_like_error("[  519.463697] Oops: 0001 [#1] SMP"));
        assert!(!looks_like_error("a debug build of the bug tracker"));
        // ROCm/MAD's Thor2 counters: a driver's error counter by its short name, when not zero.
        assert!(looks_like_error("  unrecoverable_err=4"));
        assert!(!looks_like_error("  unrecoverable_err=0"));
        // A command that searches for failures is no failure; grep's own complaint is.
        assert!(!looks_like_error("$ dmesg | grep -i error"));
        assert!(!looks_like_error("[root@node7 ~]# grep -i 'failed' /var/log/kern.log"));
        assert!(!looks_like_error("# journalctl -k |egrep 'AER|Xid'"));
        assert!(looks_like_error("grep: /var/log/kern.log: Permission denied"));
        assert!(!looks_like_error("rdma statistic show link mlx5_0/1 | grep -oP '(packet_seq_err|out_of_sequence)'"));
        // NVIDIA/TensorRT-LLM#1034: mpirun's word that a rank failed.
        assert!(looks_like_error(
            "mpirun detected that one or more processes exited with non-zero status, thus causing"
        ));
        // MoonshotAI/checkpoint-engine#1: a zero that numbers the GID the open failed on.
        assert!(looks_like_error(
            "E0911 06:19:37.204720  3746 rdma_context.cpp:70] Failed to open device mlx5_3 on port  with GID 0"
        ));
        // DCGM's own log (NVIDIA/DCGM#272): bookkeeping at DEBUG, and a count of zero mid-line.
        assert!(!looks_like_error(
            "DEBUG [3279516:3279516] Called; errors = 0, info = 24, results = 8 [PluginLibTest.cpp:228]"
        ));
        assert!(!looks_like_error("links: errors = 0, retries = 3"));
        // skypilot-org/skypilot's GPU health check example: a memory test's passes, zero first.
        assert!(!looks_like_error("Verification: PASS (0 march errors over 16 passes)"));
        assert!(!looks_like_error("Verification: PASS (0 errors)"));
        assert!(looks_like_error("Verification: FAIL (10 march errors over 16 passes)"));
        assert!(looks_like_error("rank 0 errors: connection reset"));
        // The linux-nfs list: a blocked task's header the mail client wrapped after its stack size.
        assert!(looks_like_error("[Wed Nov  1 08:03:55 2023] task:kworker/u16:5   state:D stack:0"));
        assert!(!looks_like_error("[Wed Nov  1 08:03:55 2023] task:kworker/u16:5   state:S stack:0"));
        assert!(looks_like_error(
            "VERBS RDMA closed connection to 10.0.0.2 on mlx5_0 port 1 fabnum 0 error 733 index 10"
        ));
        assert!(looks_like_error("links: errors = 0, failed = 2"));
        assert!(looks_like_error(
            "ERROR [3279516:3279516] [[nvbandwidth]] The memory copy utilization for the GPU: 2 is greater than 10%"
        ));
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

    /// A failed call worded only by the C library or the module loader is an error line; cuda-gdb's
    /// report of a benign return (peer access already enabled) is not.
    #[test]
    fn strerror_words_and_module_loads_are_errors_and_benign_cuda_returns_are_not() {
        assert!(looks_like_error("cma_ep.c:84 process_vm_readv(pid=35) returned -1: Operation not permitted"));
        assert!(looks_like_error("mlx5_vdpa: Unknown symbol mlx5_db_free (err -22)"));
        assert!(looks_like_error("mlx5_vdpa: disagrees about version of symbol mlx5_db_free"));
        assert!(!looks_like_error("warning: Cuda API error detected: cudaDeviceEnablePeerAccess returned (0x2c0)"));
        assert!(looks_like_error("warning: Cuda API error detected: cudaMalloc returned (0x2)"));
    }

    /// wekws#93 (heldout71): a second job's store on a port the first holds is named as the port
    /// (network-unreachable's store port), not passed on as a distributed failure of unknown cause.
    #[test]
    fn a_port_already_in_use_is_named_not_passed_as_a_hang() {
        let text = "[W socket.cpp:401] [c10d] The server socket has failed to bind to 0.0.0.0:29400 (errno: 98 - Address already in use).\n[E socket.cpp:435] [c10d] The server socket has failed to listen on any local network address.\n";
        let found = facts_of(text);
        assert!(!found.iter().any(|f| f.name == "pytorch.error"), "{found:?}");
        assert!(found.iter().any(|f| f.name == "network.store_port_unusable"), "{found:?}");
    }

    /// ray-project/ray#35907 (heldout496): Gloo's pair refused the address it listens on is the
    /// port named, with Gloo's; a connect Gloo's pair could not make is not.
    #[test]
    fn gloo_refused_its_listening_address_is_a_port_in_use() {
        let text = "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:176] bind: Address already in use\n";
        let found = facts_of(text);
        let port = found.iter().find(|f| f.name == "network.store_port_unusable").expect("a port in use");
        assert_eq!(port.get("port"), Some("Gloo's listening"));
        let connect = "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect [10.0.0.2]:4321: Connection refused\n";
        assert!(!facts_of(connect).iter().any(|f| f.name == "network.store_port_unusable"));
    }

    /// KimMeen/Time-LLM#20 (heldout356): the store told to listen on port 97, which an unprivileged
    /// process may not bind (EACCES), is named as the port; a store that failed to listen without a
    /// refused bind is still PyTorch's known failure.
    #[test]
    fn a_port_the_process_may_not_bind_is_named_not_passed_as_a_hang() {
        let text = "[W socket.cpp:426] [c10d] The server socket has failed to bind to 0.0.0.0:97 (errno: 13 - Permission denied).\n[E socket.cpp:462] [c10d] The server socket has failed to listen on any local network address.\n";
        let found = facts_of(text);
        assert!(!found.iter().any(|f| f.name == "pytorch.error"), "{found:?}");
        assert!(found.iter().any(|f| f.name == "network.store_port_unusable"), "{found:?}");
        let alone = "[E socket.cpp:462] [c10d] The server socket has failed to listen on any local network address.\n";
        assert!(facts_of(alone).iter().any(|f| f.name == "pytorch.error"));
    }

    /// The linux-rdma list (heldout138): a kernel warning's header and a net device the kernel
    /// cannot free, quoted in threads whose cause was a driver's bug. A kernel's own line that only
    /// mentions a warning or a device becoming free is not one.
    /// ofiwg/libfabric#10873: PSM3 unable to open a UDP socket on a host without IPv6, in strerror's
    /// words for EAFNOSUPPORT alone.
    #[test]
    fn an_address_family_the_host_lacks_is_an_error_libfabric10873() {
        assert!(looks_like_error("Unable to create UDP socket for eth0: Address family not supported by protocol"));
        assert!(!looks_like_error("Unable to create UDP socket for eth0"));
    }

    /// mej/nhc#111: Node Health Check sets its fields apart by two spaces, and a failed check whose
    /// message has no number is still its report of a failure, not a table's head.
    #[test]
    fn a_health_check_failed_without_a_number_is_an_error_nhc111() {
        assert!(looks_like_error("ERROR:  nhc:  Health check failed:  check_hw_ib:  No Infiniband device was found."));
        assert!(!looks_like_error("  Port    Errors    Discards    Drops"));
    }

    /// EldritchJS/ml-dev-env's IOMMU note: NCCL's completion error wrapped by the page, its status on
    /// a line of its own; a status of success is none.
    #[test]
    fn a_completion_status_on_a_wrapped_line_is_an_error_ml_dev_env_iommu() {
        let first = "h-kim-0:1353:1409 [3] ib_plugin.c:2033 NCCL WARN NET/IB: Got completion";
        let wrapped = "from peer 10.128.8.30<55095> with status=IBV_WC_LOC_PROT_ERR(4) opcode=IBV_WC_SEND(0)";
        assert!(looks_like_error(wrapped));
        assert!(!looks_like_error("wc.status=IBV_WC_SUCCESS opcode=IBV_WC_RDMA_WRITE"));
        let found = facts_of(&format!("{first}\n{wrapped}\n"));
        let quoted = found.iter().find(|f| f.name == "input.error_lines").expect("the error lines quoted");
        assert!(quoted.evidence.iter().any(|e| e.text == wrapped), "{quoted:?}");
    }

    #[test]
    fn kernel_warnings_and_devices_held_are_errors_linux_rdma() {
        assert!(looks_like_error(
            "[  270.146851][    T1] WARNING: CPU: 7 PID: 1 at kernel/irq/manage.c:2034 free_irq+0x59/0x70"
        ));
        assert!(looks_like_error(
            "kernel: [10408.846497] unregister_netdevice: waiting for eno1.1000 to become free. Usage count = 4"
        ));
        assert!(!looks_like_error("[    0.000000] Warning: CPU frequency scaling is off"));
        assert!(!looks_like_error(
            "mlx5_core 0000:01:00.0: port module event: module 0, Cable plugged, the slot became free"
        ));
    }

    /// The linux-rdma list, an NFS server's mlx5 (heldout129): FORTIFY_SOURCE's warning of a copy
    /// across a struct's fields, which the driver meant, is quoted as no error; another kernel
    /// warning beside it still is.
    #[test]
    fn a_fortify_field_spanning_warning_is_not_quoted_linux_rdma_mlx5() {
        let text = "memcpy: detected field-spanning write (size 56) of single field \"eseg->inline_hdr.start\" at drivers/infiniband/hw/mlx5/wr.c:81 (size 2)\nWARNING: CPU: 2 PID: 1217 at drivers/infiniband/hw/mlx5/wr.c:81 mlx5_ib_post_send+0x59d/0x867 [mlx5_ib]\n";
        assert!(!facts_of(text).iter().any(|f| f.name == "input.error_lines"));
        let other = format!("{text}WARNING: CPU: 7 PID: 1 at kernel/irq/manage.c:2034 free_irq+0x59/0x70\n");
        let quoted = facts_of(&other).into_iter().find(|f| f.name == "input.error_lines").expect("quoted");
        assert_eq!(quoted.evidence.iter().map(|e| e.line).collect::<Vec<_>>(), [3]);
        // The warning's register dump is the warning's: its instruction pointer is not a second
        // error to quote.
        let dump = format!("{text}RIP: 0010:mlx5_ib_post_send+0x59d/0x867 [mlx5_ib]\n");
        assert!(!facts_of(&dump).iter().any(|f| f.name == "input.error_lines"), "{:?}", facts_of(&dump));
        // The same pointer where the poster cut the dump's header is the error line.
        let cut = "RIP: 0010:nvme_rdma_init_request+0x31/0x140 [nvme_rdma]\n";
        assert!(facts_of(cut).iter().any(|f| f.name == "input.error_lines"));
    }

    /// MLPerf Training v5.0 (MangoBoost, heldout233): c10d's client warns for an address family the
    /// host lacks (errno 97) and goes on with the next address; c10's logger writes April 30 as
    /// "[W430 ...". A refused connect at level E is still the store out of reach.
    #[test]
    fn a_client_warning_for_an_address_family_it_lacks_is_no_unreachable_store() {
        let family = "[W430 02:53:53.854827901 socket.cpp:757] [c10d] The client socket cannot be initialized to connect to [ai3.mbk.ifra]:23456 (errno: 97 - Address family not supported by protocol).\n";
        assert!(facts_of(family).is_empty(), "{:?}", facts_of(family));
        let refused = family
            .replace("[W430", "[E430")
            .replace("errno: 97 - Address family not supported by protocol", "errno: 111 - Connection refused");
        assert!(facts_of(&refused).iter().any(|f| f.name == "pytorch.store_unreachable"));
        assert!(
            is_warning("[W430 02:53:53.854827901 socket.cpp:757]") && is_warning("[W1127 08:55:12.9 socket.cpp:1]")
        );
        assert!(!is_warning("[W43 x]") && !is_warning("[Worker 3]"));
    }

    /// VT-d's fault reports name a fault without an error word: they are error lines where nothing
    /// reads them (an interrupt refused by remapping, heldout236).
    #[test]
    fn iommu_fault_reports_are_error_lines() {
        assert!(looks_like_error("DMAR: [INTR-REMAP] Request device [42:00.2] fault index 1600 [fault reason 37] Blocked a compatibility format interrupt request"));
        assert!(looks_like_error("DMAR: DRHD: handling fault status reg 2"));
        assert!(!looks_like_error("DMAR: IOMMU enabled"));
    }
}
