//! How a rank's process ended, and how the job did, as its launcher, the kernel or the job itself
//! tells it: torchrun's failure summary, Slurm's OOM-kill events, the kernel's OOM killer, and a
//! job's own word that it finished well. A rank killed by a signal it did not send itself (SIGKILL
//! from the OOM killer or a scheduler, a crash on SIGSEGV or SIGBUS) never reaches the next
//! collective, so its peers time out waiting: the `rank-missing` diagnosis names it. A job that
//! says it finished well did not hang, whatever its teardown printed.
//!
//! A rank that exits with an error code, or aborts (SIGABRT: PyTorch's watchdog ends a process so
//! after a timeout), is the consequence of an error printed elsewhere, and is not read here; nor
//! are the SIGTERMs torchrun sends the surviving ranks after the first one failed.

use std::collections::{BTreeMap, BTreeSet};

use super::lines::numbered_lines;
use crate::fact::{Evidence, Fact};

/// Signals that end a rank from outside or by a crash, with what each usually means (signal(7)).
fn fatal_signal(number: u32) -> Option<&'static str> {
    match number {
        9 => Some("SIGKILL: killed from outside, most often by the host's OOM killer or the scheduler"),
        11 => Some("SIGSEGV: the process crashed"),
        7 => Some("SIGBUS: the process crashed on a bus error (a memory or PCIe mapping that went away)"),
        4 => Some("SIGILL: the process crashed on an illegal instruction"),
        8 => Some("SIGFPE: the process crashed on an arithmetic fault"),
        _ => None,
    }
}

/// The value after `key` and its colon in a torchrun summary row ("  host      : node12").
fn row<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = line.trim().strip_prefix(key)?;
    let value = rest.trim_start().strip_prefix(':')?;
    Some(value.trim())
}

/// A negative exit code as Python's subprocess reports a signal ("-9 (pid: 1237)"), when that
/// signal is one that ends a rank from outside or by a crash, with its meaning.
fn killed_by(exit_code: &str) -> Option<(u32, &'static str)> {
    let digits: String = exit_code.trim().strip_prefix('-')?.chars().take_while(char::is_ascii_digit).collect();
    let signal = digits.parse().ok()?;
    Some((signal, fatal_signal(signal)?))
}

/// The kernel's OOM killer (mm/oom_kill.c, "Out of memory: Killed process %d (%s)" and the memory
/// cgroup's variant; kernels before 5.0 "Kill process %d (%s) score ... or sacrifice child"): the
/// name of the process it killed, when that is a training process.
fn oom_killed(line: &str) -> Option<&str> {
    let at = ["Killed process ", "Kill process "].iter().find_map(|key| line.find(key).map(|i| i + key.len()))?;
    if !line.contains("out of memory") && !line.contains("Out of memory") {
        return None;
    }
    let rest = &line[at..];
    let name = rest.split_once('(')?.1.split_once(')')?.0;
    training_process(name).then_some(name)
}

/// A job's process killed for want of memory (SIGKILL, 9), in the words of what reported it.
fn killed_out_of_memory(text: String, evidence: Evidence) -> Fact {
    Fact::new("process.died").attr("signal", 9).attr("text", text).evidence(evidence)
}

/// Whether a process name is a training job's: Python (and PyTorch's renamed main thread,
/// "pt_main_thread"), a Ray worker, or a launcher.
fn training_process(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("python")
        || lower.starts_with("pt_")
        || lower.starts_with("ray::")
        || ["torchrun", "deepspeed", "accelerate"].iter().any(|n| lower.contains(n))
}

/// The training process that invoked the OOM killer in its memory cgroup, where the input does not
/// name the process killed (see `oom_killed`, which reads that line when it is there).
fn oom_invoker<'a>(line: &'a str, text: &str) -> Option<&'a str> {
    let name = line.split(" invoked oom-killer").next()?.rsplit(|c: char| c.is_whitespace() || c == ']').next()?;
    let training = training_process(name);
    let in_cgroup = text.contains("mem_cgroup_out_of_memory") || text.contains("Memory cgroup out of memory");
    let victim_named = text.contains("Killed process ") || text.contains("Kill process ");
    (training && in_cgroup && !victim_named).then_some(name)
}

/// A job's own word that it finished well: MLPerf's logger ending the run (`:::MLLOG {"key":
/// "run_stop", ... "status": "success"}`, mlcommons/logging), nccl-tests' closing check ("# Out of
/// bounds values : 0 OK"), torchrun's agent ("worker group successfully finished"), PyTorch
/// Lightning's fit loop reaching the steps or epochs it was asked for ("`Trainer.fit` stopped:
/// `max_steps=20` reached.", loops/fit_loop.py; NeMo and other trainers built on it print it too).
/// Errors printed after it are the job's teardown; a job that says so did not hang.
fn completed(line: &str) -> bool {
    (line.contains("\"run_stop\"") && line.contains("\"status\": \"success\""))
        || (line.contains("Out of bounds values") && line.trim_end().ends_with("OK"))
        || line.contains("worker group successfully finished")
        || (line.contains("`Trainer.fit` stopped: `max_")
            && ["`max_steps=", "`max_epochs="].iter().any(|limit| line.contains(limit))
            && line.trim_end().ends_with("reached."))
}

/// The process id of a line: NCCL's "host:pid:tid [dev]" prefix (read as NCCL's lines are), or
/// nccl-tests' rank list ("Rank 0 Pid 775733 on host device 0").
fn process_id(line: &str) -> Option<u64> {
    if let Some(rest) = line.split("Pid ").nth(1).filter(|_| line.contains("Rank ")) {
        return rest.split_whitespace().next()?.parse().ok();
    }
    super::nccl::parse_line(0, line)?.pid
}

/// Whether, after the job said it finished well (line `completed`), a process that was not part
/// of it reports an NCCL WARN: a second run pasted below the first (a standalone nccl-tests that
/// passed, then the application that failed), whose failure the first run's success does not cover.
fn another_run_fails_after(text: &str, completed: usize) -> bool {
    let job: std::collections::BTreeSet<u64> = text.lines().take(completed).filter_map(process_id).collect();
    !job.is_empty()
        && text
            .lines()
            .skip(completed + 1)
            .filter(|line| line.contains("NCCL WARN"))
            .filter_map(process_id)
            .any(|pid| !job.contains(&pid))
}

/// Whether a collective timed out after the job's word that it finished (PyTorch's watchdog:
/// "Watchdog caught collective operation timeout"): teardown does not wait minutes on a collective,
/// so the job went on to one its ranks did not all enter (a checkpoint's barrier called on rank 0
/// only after Lightning's fit loop ended, Lightning-AI autocast#381).
fn a_collective_timed_out_after(text: &str, completed: usize) -> bool {
    text.lines().skip(completed + 1).any(|line| line.contains("caught collective operation timeout"))
}

/// Whether a test that nccl-tests ran before the one that finished well (each run begins "#
/// Collective test starting: alltoall_perf") failed: a sweep that runs several tests in one file,
/// whose first failed ("Test NCCL failure common.cu:401 'remote process exited ...'") and whose
/// next passed, did not finish well as a whole.
fn an_earlier_test_failed(text: &str, completed: usize) -> bool {
    let lines: Vec<&str> = text.lines().take(completed).collect();
    let Some(start) = lines.iter().rposition(|line| line.contains("Collective test starting")) else {
        return false;
    };
    lines[..start].iter().any(|line| line.contains("Test NCCL failure") || line.contains("Test CUDA failure"))
}

pub fn parse(file: &str, text: &str) -> Vec<Fact> {
    let mut facts = Vec::new();
    // nccl-tests prints its verdict as a "#" line, which the comment filter of `numbered_lines`
    // would drop: the end of the job is looked for in every line.
    // Each word is looked for in the whole text once, not in every line: most inputs hold none.
    let said = ["\"run_stop\"", "Out of bounds values", "worker group successfully finished", "`Trainer.fit` stopped"]
        .iter()
        .any(|word| text.contains(word));
    let end = if said { text.lines().enumerate().find(|(_, line)| completed(line)) } else { None };
    if let Some((index, line)) = end {
        if !another_run_fails_after(text, index)
            && !an_earlier_test_failed(text, index)
            && !a_collective_timed_out_after(text, index)
        {
            facts.push(Fact::new("job.completed").attr("text", line.trim()).evidence(Evidence::new(
                file,
                index + 1,
                line,
            )));
        }
    }
    // torchrun's ChildFailedError table (torch/distributed/elastic/multiprocessing/errors): the
    // block after "Root Cause (first observed failure):" is the first rank that failed.
    let mut in_root_cause = false;
    let mut host: Option<String> = None;
    let mut rank: Option<String> = None;
    let mut root_cause_seen = false;
    // The OOM killer's report header, read once (each kill prints one).
    let mut oom_invoker_read = false;
    let mut node_failure_read = false;
    let mut signalled_task: Option<(&str, u64, u32, &'static str, Evidence)> = None;
    for (line_no, raw) in numbered_lines(text) {
        let evidence = || Evidence::new(file, line_no, raw);
        let trimmed = raw.trim();
        if trimmed.starts_with("Root Cause (first observed failure)") {
            (in_root_cause, host, rank) = (true, None, None);
            continue;
        }
        if in_root_cause {
            if let Some(value) = row(trimmed, "host") {
                host = Some(value.to_string());
            } else if let Some(value) = row(trimmed, "rank") {
                rank = value.split_whitespace().next().map(str::to_string);
            } else if let Some(value) = row(trimmed, "exitcode") {
                in_root_cause = false;
                let Some((signal, meaning)) = killed_by(value) else { continue };
                root_cause_seen = true;
                let mut fact = Fact::new("process.died")
                    .attr("signal", signal)
                    .attr("text", format!("torchrun's first failed rank ended by signal {signal} ({meaning})"))
                    .evidence(evidence());
                if let Some(rank) = &rank {
                    fact = fact.attr("rank", rank);
                }
                if let Some(host) = &host {
                    fact = fact.host(host);
                }
                facts.push(fact);
            } else if trimmed.starts_with("====") || (trimmed.is_empty() && rank.is_some()) {
                in_root_cause = false;
            }
            continue;
        }
        // torchrun's agent, as the first rank fails (elastic/agent/server/api.py): "failed
        // (exitcode: -9) local_rank: 3 (pid: 1237) of binary: ...". The summary table, when it
        // follows, says the same with the host.
        if let Some(after) = agent_failure(trimmed) {
            if let Some((signal, meaning)) = killed_by(after.split(')').next().unwrap_or_default()) {
                let local_rank =
                    after.split_once("local_rank: ").and_then(|(_, r)| r.split_whitespace().next()).map(str::to_string);
                let mut fact = Fact::new("process.died")
                    .attr("signal", signal)
                    .attr("text", format!("a local rank ended by signal {signal} ({meaning})"))
                    .evidence(evidence());
                if let Some(local_rank) = local_rank {
                    fact = fact.attr("local_rank", local_rank);
                }
                facts.push(fact);
            }
            continue;
        }
        // srun naming the task that its cgroup's OOM killer ended ("srun: error: nic5-w052: task
        // 13: Out Of Memory", src/srun: the task's exit as Slurm records it): that rank, on that
        // host, died.
        if let Some((host, task)) = srun_task_out_of_memory(trimmed) {
            facts.push(
                Fact::new("process.died")
                    .host(host)
                    .attr("rank", task)
                    .attr("signal", 9)
                    .attr("text", format!("Slurm's task {task} on {host} was killed out of memory ({trimmed})"))
                    .evidence(evidence()),
            );
            continue;
        }
        // srun's word that a node of the step failed ("srun: error: Node failure on jean-zay-iam37",
        // src/srun: the controller set the node down while the step ran, and cancels the step
        // "DUE TO NODE FAILURE"): every rank on that node died with it, and the others lose their
        // peers. Read once: srun repeats it for every task of the node.
        if let Some(host) = srun_node_failure(trimmed) {
            if !std::mem::replace(&mut node_failure_read, true) {
                facts.push(
                    Fact::new("process.died")
                        .host(host)
                        .attr("text", format!("Slurm lost the node {host} while the job ran ({trimmed})"))
                        .evidence(evidence()),
                );
            }
            continue;
        }
        // slurmstepd after a step's task was OOM-killed in its cgroup (src/plugins/task/cgroup):
        // "Detected 1 oom_kill event in StepId=1234.0. Some of the step tasks have been OOM Killed.";
        // older releases "Detected 1 oom-kill event(s) in StepId=...".
        if (trimmed.contains("oom_kill event") || trimmed.contains("oom-kill event")) && trimmed.contains("Detected") {
            facts.push(killed_out_of_memory(
                format!("the job's tasks were killed by the OOM killer ({trimmed})"),
                evidence(),
            ));
            continue;
        }
        // The header of the OOM killer's report ("python invoked oom-killer: gfp_mask=...",
        // mm/oom_kill.c dump_header) where the report's end, the line naming the process killed,
        // is not in the input (a paste cut after the stack, NVIDIA/DALI#585): a training process
        // ran its host out of memory; in a memory cgroup (mem_cgroup_out_of_memory in the stack),
        // the victim is one of that cgroup's tasks, the job's own. Read once.
        if !oom_invoker_read && trimmed.contains("invoked oom-killer") {
            oom_invoker_read = true;
            if let Some(name) = oom_invoker(trimmed, text) {
                let text = format!("{name} ran its memory cgroup out of memory and the kernel's OOM killer killed one of its tasks (the line naming the task is not in the input)");
                facts.push(killed_out_of_memory(text, evidence()));
                continue;
            }
        }
        // srun naming the first task that ended by a signal of its own fault ("srun: error:
        // worker-0: task 11: Exited with exit code 134"): weighed after the loop against the ranks
        // that timed out.
        if signalled_task.is_none() {
            if let Some((host, task, signal, meaning)) = srun_task_signalled(trimmed) {
                signalled_task = Some((host, task, signal, meaning, evidence()));
                continue;
            }
        }
        if let Some(name) = oom_killed(trimmed) {
            facts.push(killed_out_of_memory(
                format!("the kernel's OOM killer killed {name} (host memory ran out)"),
                evidence(),
            ));
        }
    }
    // A task srun saw end by a signal while other ranks' watchdogs timed out in a collective, itself
    // not among them: it died (a CUDA error, a crash) and the others waited for it. A rank whose
    // own watchdog fired aborts too, after its timeout: that exit is a consequence, not read.
    if let Some((host, task, signal, meaning, evidence)) = signalled_task {
        let (timeouts, timed_out) = ranks_timed_out(text);
        if timeouts && !timed_out.contains(&task) {
            facts.push(
                Fact::new("process.died")
                    .host(host)
                    .attr("rank", task)
                    .attr("signal", signal)
                    .attr("text", format!("Slurm's task {task} on {host} ended by signal {signal} ({meaning}) while other ranks timed out in a collective"))
                    .evidence(evidence),
            );
        }
    }
    facts.extend(crash_inside_nccl(file, text));
    facts.extend(bus_error_in_open_mpi_shared_memory(file, text));
    facts.extend(bus_errors_on_one_host(file, text));
    facts.extend(sanitizer_in_nccl(file, text));
    facts.extend(abort_that_did_not_return(file, text));
    facts.extend(stacks_in_a_collective(file, text));
    facts.extend(stack_that_waits(file, text));
    facts.extend(mpi_group_crashed(file, text));
    facts.extend(main_process_still_preparing(file, text));
    if !facts.iter().any(|f| f.name == "pytorch.rank_behind") {
        facts.extend(preparation_outlasted_wait(file, text));
    }
    // The agent's one-line report and its summary table name the same death: keep the table's,
    // which has the host.
    if root_cause_seen {
        facts.retain(|f| f.get("local_rank").is_none());
    }
    facts
}

/// What follows "failed (exitcode: " in torchrun's agent line for a failed rank (elastic/agent/
/// server/api.py: "failed (exitcode: -9) local_rank: 3 (pid: 1237) of binary: ..."): the exit
/// code, then the local rank.
fn agent_failure(line: &str) -> Option<&str> {
    line.split_once("failed (exitcode: ").map(|(_, after)| after)
}

/// The host and task of srun's "srun: error: HOST: task N: Out Of Memory".
fn srun_task_out_of_memory(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("srun: error: ")?;
    let (host, rest) = rest.split_once(": task ")?;
    let (task, what) = rest.split_once(':')?;
    (what.trim() == "Out Of Memory" && task.chars().all(|c| c.is_ascii_digit()) && !host.contains(' '))
        .then_some((host, task))
}

/// The host, task and signal of srun's "srun: error: HOST: task N: Exited with exit code C" where C is
/// 128 plus a signal that ends a process on its own fault: SIGABRT (an uncaught C++ exception or a
/// failed check; 134), or one of [`fatal_signal`]'s crashes (139 for SIGSEGV). A shell's exit code
/// for a process a signal ended (bash(1), EXIT STATUS).
fn srun_task_signalled(line: &str) -> Option<(&str, u64, u32, &'static str)> {
    let rest = line.strip_prefix("srun: error: ")?;
    let (host, rest) = rest.split_once(": task ")?;
    let (task, what) = rest.split_once(':')?;
    let code: u32 = what.trim().strip_prefix("Exited with exit code ")?.trim().parse().ok()?;
    let signal = code.checked_sub(128)?;
    let meaning = match signal {
        6 => "SIGABRT: the process aborted (an uncaught C++ exception or a failed check)",
        9 => return None,
        other => fatal_signal(other)?,
    };
    let task = task.trim().parse().ok()?;
    (!host.contains(' ')).then_some((host, task, signal, meaning))
}

/// The ranks whose own watchdog timed out in a collective ("[Rank 10] Watchdog caught collective
/// operation timeout: WorkNCCL(...)", ProcessGroupNCCL.cpp), at most 1024, and whether any did.
fn ranks_timed_out(text: &str) -> (bool, BTreeSet<u64>) {
    let mut ranks = BTreeSet::new();
    let mut any = false;
    for line in text.lines().filter(|l| l.contains("Watchdog caught collective operation timeout")) {
        any = true;
        let rank = line.split("[Rank ").nth(1).and_then(|r| r.split(']').next()).and_then(|r| r.trim().parse().ok());
        if let Some(rank) = rank.filter(|_| ranks.len() < 1024) {
            ranks.insert(rank);
        }
    }
    (any, ranks)
}

/// The node of srun's "srun: error: Node failure on <node>".
fn srun_node_failure(line: &str) -> Option<&str> {
    let node = line.strip_prefix("srun: error: Node failure on ")?.trim();
    (!node.is_empty() && !node.contains(' ')).then_some(node)
}

/// Lines of a crash report searched for the library it happened in.
const BACKTRACE_LINES: usize = 30;

/// The words of a fatal SIGBUS, as the handlers below print it.
const BUS: [&str; 3] = ["Caught signal 7", "SIGBUS", "Bus error"];

/// The words of a fatal SIGSEGV. A debugger's innermost frame at address zero ("#0
/// 0x0000000000000000 in ?? ()") is a call through a null function pointer: the process faults
/// there, whether or not the signal's line was kept (pytorch/pytorch#94393, an injected library's
/// dlvsym inside NCCL's ibvwrap).
const SEGV: [&str; 6] =
    ["Caught signal 11", "SIGSEGV", "Segmentation fault", "signal 11", "Segfault", "#0  0x0000000000000000 in "];

fn marked(text: &str, marks: &[&str]) -> bool {
    marks.iter().any(|mark| text.contains(mark))
}

/// A rank that died of a fatal signal whose backtrace runs through libnccl.
///
/// SIGBUS (UCX's or the runtime's "Caught signal 7 (Bus error: nonexistent physical address)"):
/// NCCL's shared-memory segments are files in /dev/shm, and a store to a page of such a file that
/// tmpfs cannot back (the container's 64 MB /dev/shm is full) raises SIGBUS (mmap(2), "SIGBUS"),
/// where newer NCCL releases fail cleanly at posix_fallocate instead.
///
/// SIGSEGV (Open MPI's "Signal: Segmentation fault (11)", UCX's "Caught signal 11", a Python
/// faulthandler's "Fatal Python error: Segmentation fault", the backward-cpp handler's "!!!!!!!
/// Segfault encountered !!!!!!!" that some frameworks install, gdb's "received signal SIGSEGV"):
/// NCCL itself, or a library it calls into (a verbs provider, a net plugin, the CUDA driver), crashed
/// in NCCL's thread.
fn crash_inside_nccl(file: &str, text: &str) -> Option<Fact> {
    if !marked(text, &BUS) && !marked(text, &SEGV) {
        return None;
    }
    let in_nccl = |line: &str| {
        line.contains("libnccl")
            || line.split_whitespace().any(|word| word.starts_with("nccl") && word.contains('('))
            || debugger_frame(line).is_some_and(|function| function.starts_with("nccl"))
    };
    let lines: Vec<(usize, &str)> = numbered_lines(text).collect();
    lines.iter().enumerate().filter(|(_, (_, raw))| marked(raw, &BUS) || marked(raw, &SEGV)).find_map(
        |(index, (line_no, raw))| {
            let frame = lines[index + 1..].iter().take(BACKTRACE_LINES).find(|(_, line)| in_nccl(line))?;
            let fact = if marked(raw, &BUS) {
                Fact::new("nccl.shm_failed").attr(
                    "text",
                    "a rank died of SIGBUS inside NCCL (a page of its shared memory in /dev/shm that tmpfs could not back)",
                )
            } else {
                Fact::new("nccl.crashed").attr("text", "a rank crashed (SIGSEGV) inside libnccl")
            };
            Some(fact.evidence(Evidence::new(file, *line_no, raw)).evidence(Evidence::new(file, frame.0, frame.1)))
        },
    )
}

/// Open MPI's shared-memory components keep their segments in a backing file of the session
/// directory (under TMPDIR, /tmp by default, or /dev/shm), which they mmap: a store to a page the
/// file system cannot back raises SIGBUS (mmap(2)) inside them, as in NCCL's case (the users
/// list, 2016-03: a full /tmp on the compute nodes, "Signal: Bus error (7)" in mca_shmem_mmap.so
/// under mca_common_sm_module_create_and_attach).
fn bus_error_in_open_mpi_shared_memory(file: &str, text: &str) -> Option<Fact> {
    const COMPONENTS: [&str; 4] = ["mca_shmem_mmap", "mca_common_sm", "mca_btl_sm", "mca_btl_vader"];
    if !marked(text, &BUS) {
        return None;
    }
    let lines: Vec<(usize, &str)> = numbered_lines(text).collect();
    lines.iter().enumerate().filter(|(_, (_, raw))| marked(raw, &BUS)).find_map(|(index, (line_no, raw))| {
        let frame = lines[index + 1..]
            .iter()
            .take(BACKTRACE_LINES)
            .find(|(_, line)| COMPONENTS.iter().any(|component| line.contains(component)))?;
        Some(
            Fact::new("process.shm_full")
                .attr(
                    "text",
                    "a process died of SIGBUS inside Open MPI's shared memory (a page of its backing file that the file system could not back)",
                )
                .evidence(Evidence::new(file, *line_no, raw))
                .evidence(Evidence::new(file, frame.0, frame.1)),
        )
    })
}

/// torchrun's failure summary (ChildFailedError's table: a "host" row, then "exitcode : -7") naming
/// two or more ranks of one host ended by SIGBUS. Several ranks of a host at once share what they
/// map, and what local ranks share is their shared memory in /dev/shm (NCCL's segments, the data
/// loaders' tensors): a store to a page of a tmpfs file that tmpfs cannot back raises SIGBUS
/// (mmap(2)), which is a full /dev/shm, the container's 64 MB default above all
/// (huggingface/diffusers#4229, every rank of a DreamBooth run in a container at one second).
/// One rank ended so (the table's one row, or the agent's "failed (exitcode: -7) local_rank: 0"
/// where no table follows) is read the same where the input also holds the bus error itself
/// ("Bus error: nonexistent physical address", BUS_ADRERR, what a tmpfs page that cannot be
/// backed raises; FlagOpen/FlagEmbedding#635, a container's /dev/shm): a device mapping that went
/// away instead comes with the lost GPU's own lines, which the gpu-lost rule ranks first.
fn bus_errors_on_one_host(file: &str, text: &str) -> Option<Fact> {
    if !text.contains("exitcode") || !marked(text, &BUS) {
        return None;
    }
    let mut host = String::new();
    let mut by_host: BTreeMap<String, Vec<Evidence>> = BTreeMap::new();
    let mut agent_deaths: Vec<Evidence> = Vec::new();
    for (line_no, raw) in numbered_lines(text) {
        let trimmed = raw.trim();
        if let Some(value) = row(trimmed, "host") {
            host = value.to_string();
        } else if let Some(value) = row(trimmed, "exitcode") {
            if killed_by(value).is_some_and(|(signal, _)| signal == 7) {
                let deaths = by_host.entry(host.clone()).or_default();
                if deaths.len() < 64 {
                    deaths.push(Evidence::new(file, line_no, raw));
                }
            }
        } else if let Some(after) = agent_failure(trimmed) {
            if killed_by(after.split(')').next().unwrap_or_default()).is_some_and(|(signal, _)| signal == 7)
                && agent_deaths.len() < 64
            {
                agent_deaths.push(Evidence::new(file, line_no, raw));
            }
        }
    }
    let together = by_host.iter().filter(|(_, deaths)| deaths.len() >= 2).max_by_key(|(_, d)| d.len());
    let (host, deaths, text) = match together {
        Some((host, deaths)) => {
            let place = if host.is_empty() { "one host".to_string() } else { host.clone() };
            let text = format!("{} ranks on {place} died of SIGBUS together (pages of the shared memory they map, in /dev/shm, that tmpfs could not back)", deaths.len());
            (host.clone(), deaths.clone(), text)
        }
        None => {
            // One rank: the table's only death, else the agent's, and the bus error beside it.
            let rows: Vec<(&String, &Vec<Evidence>)> = by_host.iter().filter(|(_, d)| !d.is_empty()).collect();
            let (host, death) = match rows.as_slice() {
                [(host, deaths)] if deaths.len() == 1 => ((*host).clone(), deaths[0].clone()),
                [] if agent_deaths.len() == 1 => (String::new(), agent_deaths[0].clone()),
                _ => return None,
            };
            let statement = numbered_lines(text).find(|(_, line)| line.contains("Bus error"))?;
            let text = "a rank died of SIGBUS beside its bus error (most often a page of the shared memory it maps, in /dev/shm, that tmpfs could not back)".to_string();
            (host, vec![Evidence::new(file, statement.0, statement.1), death], text)
        }
    };
    let mut fact = Fact::new("process.shm_full").attr("text", text);
    if !host.is_empty() {
        fact = fact.host(&host);
    }
    Some(deaths.into_iter().take(3).fold(fact, Fact::evidence))
}

/// The function of a debugger's frame line: gdb's "#7  0x00007ff58bde3349 in ncclIbInit
/// (logFunction=...) at transport/net_ib.cc:150" or "#9  ncclNetInit (comm=...) at net.cc:273",
/// py-spy's native frame "    ncclCommAbort (init.cc:1931)".
fn debugger_frame(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    if let Some(rest) = trimmed.strip_prefix('#') {
        let (number, rest) = rest.split_once(char::is_whitespace)?;
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let rest = rest.trim_start();
        let rest = match rest.strip_prefix("0x") {
            Some(address) => address.split_once(" in ")?.1,
            None => rest,
        };
        return rest.split([' ', '(']).next().filter(|f| !f.is_empty());
    }
    // py-spy: an indented function, then its file and line (or library) in parentheses.
    let (function, place) = trimmed.split_once(" (")?;
    (line.starts_with("    ") && place.ends_with(')') && !function.contains(' ')).then_some(function)
}

/// py-spy dumps of a hung job ("Thread 835995 (active): \"MainThread\"", then one indented frame a
/// line, innermost first, "    broadcast (torch/distributed/distributed_c10d.py:1191)") in which
/// some threads stand inside a torch.distributed collective: the job hangs in a collective, and
/// where other threads stand elsewhere, the processes are not all in it (one went on, or never
/// came). The stacks say where each waits, not why (bigscience's BLOOM prequel chronicles).
/// Where the main threads of the processes stand in different collectives (one in all_reduce,
/// another in reduce_scatter_tensor), the processes issued different collectives: NCCL matches a
/// communicator's collectives by their order, so neither can complete (DeepSpeed#7461).
fn stacks_in_a_collective(file: &str, text: &str) -> Vec<Fact> {
    if !text.contains("distributed_c10d.py") || !text.contains("Thread ") {
        return Vec::new();
    }
    // The dumps, those standing in a torch.distributed frame, the first such frame, and the
    // collective each main thread stands in (at most 64 main threads kept).
    let mut threads = 0usize;
    let mut waiting = 0usize;
    let mut first: Option<(&str, Evidence)> = None;
    let mut main_threads: Vec<(&str, Evidence)> = Vec::new();
    let mut in_thread = false;
    let mut thread_waits = false;
    let mut main_thread = false;
    for (line_no, raw) in numbered_lines(text) {
        let trimmed = raw.trim();
        if let Some(rest) = trimmed.strip_prefix("Thread ") {
            let (id, state) = rest.split_once(' ').unwrap_or((rest, ""));
            if !id.is_empty()
                && id.bytes().all(|b| b.is_ascii_digit())
                && state.starts_with('(')
                && state.contains("):")
            {
                threads += 1;
                in_thread = true;
                thread_waits = false;
                main_thread = state.ends_with("\"MainThread\"");
                continue;
            }
        }
        if !in_thread || thread_waits {
            continue;
        }
        let Some(function) = debugger_frame(raw) else {
            in_thread = false;
            continue;
        };
        if raw.contains("distributed_c10d.py:") {
            thread_waits = true;
            waiting += 1;
            let evidence = Evidence::new(file, line_no, raw);
            if main_thread && COLLECTIVES.contains(&function) && main_threads.len() < 64 {
                main_threads.push((function, evidence.clone()));
            }
            first.get_or_insert((function, evidence));
        }
    }
    let Some((function, first)) = first else {
        return Vec::new();
    };
    let mut distinct: Vec<&str> = main_threads.iter().map(|(f, _)| *f).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let elsewhere = threads.saturating_sub(waiting);
    let others = if elsewhere == 0 {
        "every dumped thread stands in one".to_string()
    } else {
        format!("{elsewhere} other thread(s) stand outside any collective: the processes are not all in it")
    };
    let functions = if distinct.len() > 1 { distinct.join(", ") } else { function.to_string() };
    let mut facts = vec![Fact::new("process.waiting_in_collective")
        .attr(
            "text",
            format!("py-spy: {waiting} of {threads} dumped threads wait in torch.distributed's {functions} (distributed_c10d.py); {others}"),
        )
        .evidence(first)];
    if distinct.len() > 1 {
        // One main thread's frame for each collective, in the order of the dumps.
        let mut shown: Vec<&str> = Vec::new();
        let mut fact = Fact::new("process.different_collectives").attr(
            "text",
            format!("py-spy: the processes' main threads stand in different collectives ({})", distinct.join(", ")),
        );
        for (function, evidence) in main_threads {
            if !shown.contains(&function) {
                shown.push(function);
                fact = fact.evidence(evidence);
            }
        }
        facts.push(fact);
    }
    facts
}

/// torch.distributed's collectives (distributed_c10d.py), the functions every process of a group
/// calls in the same order; point-to-point calls (send, recv, batch_isend_irecv) pair different
/// functions by design and are not here.
const COLLECTIVES: [&str; 22] = [
    "all_reduce",
    "all_reduce_coalesced",
    "reduce",
    "broadcast",
    "all_gather",
    "all_gather_into_tensor",
    "_all_gather_base",
    "all_gather_coalesced",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "_reduce_scatter_base",
    "all_to_all",
    "all_to_all_single",
    "gather",
    "scatter",
    "barrier",
    "monitored_barrier",
    "all_gather_object",
    "gather_object",
    "broadcast_object_list",
    "scatter_object_list",
    "all_gather_into_tensor_coalesced",
];

/// The calls a thread blocks in until another thread, process or device acts, as a debugger names
/// the innermost frame: pthread_cond_wait(3) and its timed form, the futex(2) lock wait under a
/// mutex, sched_yield(2) in a spin loop (NCCL's and CUDA's host waits), poll(2), epoll_wait(2),
/// select(2), sem_wait(3), nanosleep(2). glibc's internal names carry underscores and a symbol
/// version ("__GI___poll", "pthread_cond_wait@@GLIBC_2.3.2").
const WAITS: [&str; 12] = [
    "pthread_cond_wait",
    "pthread_cond_timedwait",
    "pthread_cond_clockwait",
    "lll_lock_wait",
    "futex_wait",
    "sched_yield",
    "poll",
    "epoll_wait",
    "select",
    "sem_wait",
    "nanosleep",
    "clock_nanosleep",
];

/// Whether a debugger's (plain) function name is a blocking wait: one of WAITS, glibc's futex waits
/// under its locks and condition variables ("futex_abstimed_wait", glibc 2.34's
/// "__futex_abstimed_wait_common64"), or a reader-writer lock's wait (pthread_rwlock_wrlock(3p)).
fn is_wait(function: &str) -> bool {
    WAITS.contains(&function)
        || (function.starts_with("futex_") && function.contains("wait"))
        || function.starts_with("pthread_rwlock_")
}

/// A read of the clock as a debugger names it (clock_gettime(2) through the vDSO, gettimeofday(2)),
/// which is where a thread that spins on a condition with a deadline is found most of the time.
fn is_clock_read(function: &str) -> bool {
    matches!(function, "vdso_clock_gettime" | "clock_gettime" | "vdso_gettimeofday" | "gettimeofday")
}

/// Whether a clock read was made by the CUDA driver, from the frames `outer` to it: the first frame
/// out of the clock's own (the C library's wrapper) is libcuda's. The driver waits for the device by spinning
/// on its completion with the clock as deadline (cudaDeviceScheduleSpin, the default scheduling
/// for a context with fewer active threads than processors, CUDA Runtime API "Device Management");
/// a cudaFree or synchronize that never returns stands there (NVIDIA/apex#599). Elsewhere a clock
/// read is only a program asking the time.
fn clock_read_by_the_driver(outer: &[(usize, &str, &str)]) -> bool {
    outer
        .iter()
        .find(|(_, _, function)| !is_clock_read(plain_function(function)))
        .and_then(|(_, raw, _)| raw.rsplit_once(" from ").map(|(_, path)| path.trim()))
        .is_some_and(|library| library.rsplit('/').next().unwrap_or(library).starts_with("libcuda.so"))
}

/// The innermost frames of a process that crashed or aborted, which a debugger shows in the
/// faulting thread while the others wait as usual (raise(3) and abort(3) under a failed assertion,
/// pthread_kill under either).
const CRASH_FRAMES: [&str; 4] = ["raise", "abort", "pthread_kill", "__pthread_kill_implementation"];

/// A debugger's function name without glibc's internal prefixes and symbol version.
fn plain_function(function: &str) -> &str {
    let function = function.split('@').next().unwrap_or(function);
    let function = function.trim_start_matches('_');
    function.strip_prefix("GI_").map(|f| f.trim_start_matches('_')).unwrap_or(function)
}

/// A debugger's stack (gdb's "#0  0x00003fffac2cdd60 in pthread_cond_wait@@GLIBC_2.17 ()") whose
/// innermost frame is a wait, in an input that holds no crash: someone attached a debugger to a
/// process because it stopped making progress, and the stack shows where it waits (apache/mxnet#
/// 8695: a 4-GPU run hanging in the engine's WaitForVar; NVIDIA/nccl#1550: TensorRT-LLM's
/// all-gather spinning in sched_yield). It says where, not why: the hang is not explained, and
/// "nothing wrong" would be the wrong answer.
fn stack_that_waits(file: &str, text: &str) -> Option<Fact> {
    if !text.contains("#0 ") || marked(text, &SEGV) || marked(text, &BUS) || text.contains("SIGABRT") {
        return None;
    }
    let frames: Vec<(usize, &str, &str)> = numbered_lines(text)
        .filter_map(|(n, raw)| debugger_frame(raw).map(|f| (n, raw, f)))
        .filter(|(_, raw, _)| raw.trim_start().starts_with('#'))
        .collect();
    let innermost = |(_, raw, _): &&(usize, &str, &str)| {
        raw.trim_start().strip_prefix("#0").is_some_and(|rest| rest.starts_with(char::is_whitespace))
    };
    if frames.iter().filter(innermost).any(|(_, _, function)| CRASH_FRAMES.contains(&plain_function(function))) {
        return None;
    }
    let index = (0..frames.len()).find(|&at| {
        innermost(&&frames[at]) && {
            let function = plain_function(frames[at].2);
            is_wait(function) || (is_clock_read(function) && clock_read_by_the_driver(&frames[at + 1..]))
        }
    })?;
    let (line_no, raw, function) = frames[index];
    // The caller that waits: the first frame out of the C library and the C++ runtime's wrappers.
    // A library without symbols names no function: gdb's "#3  0x00007fdbd52fa258 in ?? () from
    // /lib/x86_64-linux-gnu/libcuda.so.1" (tensorflow under CUPTI, NVIDIA/nccl#1108) names the
    // library, which says whose lock it is.
    let outer = || frames[index + 1..].iter().take_while(|frame| !innermost(frame));
    let caller = outer()
        .map(|(_, _, function)| *function)
        .find(|function| {
            *function != "??"
                && !function.starts_with("std::")
                && !function.starts_with('_')
                && !is_wait(plain_function(function))
                && !is_clock_read(plain_function(function))
        })
        .map(str::to_string)
        .or_else(|| {
            outer().find_map(|(_, raw, function)| {
                let library = raw.rsplit_once(" from ").map(|(_, path)| path.trim())?;
                let library = library.rsplit('/').next().unwrap_or(library);
                (*function == "??").then(|| format!("a function of {library} without symbols"))
            })
        });
    let wait = plain_function(function);
    let place = caller.map(|caller| format!("{wait} (called from {caller})")).unwrap_or_else(|| wait.to_string());
    Some(
        Fact::new("process.stack_waiting")
            .attr(
                "text",
                format!("a debugger's stack of the process stands waiting in {place}, and the input holds no crash: the process waits for something that does not come"),
            )
            .evidence(Evidence::new(file, line_no, raw)),
    )
}

/// A backtrace through PyTorch's creation of an MPI process group (c10d::ProcessGroupMPI::
/// createProcessGroupMPI, mangled "_ZN4c10d15ProcessGroupMPI21createProcessGroupMPI...", under
/// MPI_Comm_create or MPI_Group_incl): the group's ranks are not in MPI's world, which is what a
/// job whose processes mpirun did not start has (torchrun starts each as an MPI world of one, and
/// ProcessGroupMPI warns "MPI was previously initialized"). Transformer Engine's userbuffers
/// bootstrap creates such a group under Megatron's --tp-comm-overlap (pytorch/pytorch#116016,
/// NVIDIA/Megatron-LM#1274, NVIDIA/NeMo#13509): a launch that does not fit the backend asked for.
/// A backtrace prints only where the process crashed or aborted.
fn mpi_group_crashed(file: &str, text: &str) -> Option<Fact> {
    if !text.contains("createProcessGroupMPI") {
        return None;
    }
    let (line_no, raw) =
        numbered_lines(text).find(|(_, raw)| raw.contains("createProcessGroupMPI") && raw.contains("0x"))?;
    Some(
        Fact::new("process.mpi_group_crashed")
            .attr(
                "text",
                "the process crashed creating an MPI process group (torch.distributed's backend='mpi', Transformer Engine's userbuffers bootstrap): its ranks are not in MPI's world, as where mpirun did not start the processes (torchrun starts each as an MPI world of one)",
            )
            .evidence(Evidence::new(file, line_no, raw)),
    )
}

/// The collectives' default timeout in PyTorch (30 minutes, init_process_group's `timeout`).
const DEFAULT_COLLECTIVE_TIMEOUT_SECONDS: u64 = 30 * 60;

/// Ranks that died waiting at the barrier of transformers' `main_process_first` (training_args.py:
/// the other ranks wait in torch.distributed.barrier() while the main process preprocesses the
/// dataset, then it joins them), where the input shows the main process still preprocessing (a
/// progress bar past the 30 minutes of the default collective timeout, "Running tokenizer on
/// dataset: 47%| ... [30:11<38:27") or the wait timed out: the main process, busy, did not reach the
/// barrier in time (hiyouga/ChatGLM-Efficient-Tuning#137, hiyouga/LLaMA-Factory#549). A rank that
/// runs behind, not a network fault; a longer timeout (ddp_timeout) or preprocessing before the
/// job mends it.
fn main_process_still_preparing(file: &str, text: &str) -> Option<Fact> {
    if !text.contains("main_process_first") {
        return None;
    }
    let lines: Vec<(usize, &str)> = numbered_lines(text).collect();
    let (index, &(line_no, raw)) = lines.iter().enumerate().find(|(_, (_, raw))| raw.contains("main_process_first"))?;
    lines[index..].iter().take(BACKTRACE_LINES).find(|(_, raw)| raw.contains("barrier"))?;
    let past_timeout = lines.iter().any(|(_, raw)| {
        super::pytorch::progress_elapsed_seconds(raw)
            .is_some_and(|seconds| seconds >= DEFAULT_COLLECTIVE_TIMEOUT_SECONDS)
    });
    if !past_timeout && !text.contains("imeout") && !text.contains("timed out") {
        return None;
    }
    Some(
        Fact::new("pytorch.rank_behind")
            .attr("rank", "0 (the main process)")
            .attr("last_seq", "still preprocessing the dataset in transformers' main_process_first")
            .attr("max_seq", "the barrier the other ranks wait at")
            .evidence(Evidence::new(file, line_no, raw)),
    )
}

/// How long a wait on the c10d store lasted before it gave up, from its line ("[c10d] waitForInput:
/// socket SocketImpl(...) timed out after 1800000ms", socket.cpp; "Timed out after 1801 seconds
/// waiting for clients", TCPStore), in seconds.
fn store_wait_seconds(line: &str) -> Option<u64> {
    // Called for every line of an input that holds the phrase somewhere: the other lines are passed
    // over before any copy ("Timed"/"timed" alike).
    if !line.contains("imed out after ") {
        return None;
    }
    let lower = line.to_ascii_lowercase();
    if !["waitforinput", "store", "c10d", "barrier"].iter().any(|word| lower.contains(word)) {
        return None;
    }
    let after = lower.split_once("timed out after ")?.1;
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    let amount: u64 = after[..digits].parse().ok()?;
    let unit = after[digits..].trim_start();
    if unit.starts_with("ms") {
        Some(amount / 1000)
    } else if unit.starts_with('s') {
        Some(amount)
    } else {
        None
    }
}

/// A rank's wait on the store that gave up as a progress bar printed before it had run for as
/// long as that wait (axolotl-ai-cloud/axolotl#2684: "Tokenizing Prompts: 92%| ... [29:58<12:05",
/// then rank 1's "waitForInput ... timed out after 1800000ms"): the waiting rank waited for the
/// process doing that work, which had not reached the collective when the timeout ran out. A rank
/// behind, not a network fault: a longer timeout, or the work done before the job, mends it. A bar
/// whose time is far from the wait's (a training loop hours long) says nothing of it.
fn preparation_outlasted_wait(file: &str, text: &str) -> Option<Fact> {
    if !text.contains("timed out after") {
        return None;
    }
    let mut bar: Option<(usize, &str, u64)> = None;
    for (line_no, raw) in numbered_lines(text) {
        if let Some(seconds) = super::pytorch::progress_elapsed_seconds(raw) {
            bar = Some((line_no, raw, seconds));
        }
        let Some(waited) = store_wait_seconds(raw) else { continue };
        let (bar_line, bar_raw, elapsed) = bar?;
        if waited < 60 || elapsed * 100 < waited * 85 || elapsed * 100 > waited * 115 {
            return None;
        }
        let mut fact = Fact::new("pytorch.rank_behind")
            .attr("rank", "the process printing the progress bar (the main process, as a rule)")
            .attr("last_seq", format!("still at the work its progress bar counts, {elapsed} s in"))
            .attr("max_seq", format!("the store, which the waiting rank gave up on after {waited} s"))
            .evidence(Evidence::new(file, bar_line, bar_raw));
        if bar_line != line_no {
            fact = fact.evidence(Evidence::new(file, line_no, raw));
        }
        return Some(fact);
    }
    None
}

/// compute-sanitizer's memcheck report of a bad access ("========= Invalid __global__ read of
/// size 4 bytes", then "=========     at ncclDevKernel_AllReduce_Sum_u8_RING_LL(...)") made by one of
/// NCCL's kernels: NCCL's device code read or wrote outside the buffers it was given, which is
/// NCCL's fault or that of what its caller handed it (pytorch/pytorch#132640: a one-byte barrier
/// buffer that the all-reduce kernel reads four bytes of).
fn sanitizer_in_nccl(file: &str, text: &str) -> Option<Fact> {
    if !text.contains("=========") {
        return None;
    }
    let lines: Vec<(usize, &str)> = numbered_lines(text).collect();
    lines.iter().enumerate().find_map(|(index, (line_no, raw))| {
        let report = raw.split_once("========= Invalid ")?.1;
        let kernel = lines[index + 1..].iter().take(3).find_map(|(_, line)| {
            let at = line.split_once("=========")?.1.trim_start().strip_prefix("at ")?;
            let name = at.split('(').next()?.trim();
            (name.starts_with("ncclDev") || name.starts_with("ncclKernel")).then_some(name)
        })?;
        Some(
            Fact::new("nccl.internal")
                .attr("text", format!("compute-sanitizer: NCCL's kernel {kernel} made an invalid {}", report.trim()))
                .evidence(Evidence::new(file, *line_no, raw)),
        )
    })
}

/// A stack taken from a hung process (gdb, py-spy) that stands inside ncclCommAbort or
/// ncclCommDestroy, in the teardown they run (commReclaim, commCleanup, commFree): NCCL's abort is
/// meant to return whatever state the communicator is in (nccl.h), so one that does not is NCCL's
/// own fault (NVIDIA/nccl#992: aborting from several threads hung in NCCL 2.18.1, fixed in 2.19.1).
/// A crash is another reading (`crash_inside_nccl`).
fn abort_that_did_not_return(file: &str, text: &str) -> Option<Fact> {
    if !text.contains("ncclCommAbort") && !text.contains("ncclCommDestroy") {
        return None;
    }
    let frames: Vec<(usize, &str, &str)> =
        numbered_lines(text).filter_map(|(n, raw)| debugger_frame(raw).map(|f| (n, raw, f))).collect();
    if frames.len() < 3 || marked(text, &SEGV) {
        return None;
    }
    let teardown = ["commReclaim", "commCleanup", "commFree", "commDestroy"];
    let inner = frames.iter().position(|(_, _, f)| teardown.iter().any(|t| f.starts_with(t)))?;
    let (line_no, raw, entry) =
        frames[inner..].iter().find(|(_, _, f)| *f == "ncclCommAbort" || *f == "ncclCommDestroy")?;
    Some(
        Fact::new("nccl.internal")
            .attr("text", format!("{entry} did not return: the stack stands in {}", frames[inner].2))
            .evidence(Evidence::new(file, frames[inner].0, frames[inner].1))
            .evidence(Evidence::new(file, *line_no, raw)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pytorch/pytorch#94393 (a null call inside NCCL's ibvwrap, no signal line kept),
    /// pytorch/pytorch#132640 (compute-sanitizer in NCCL's kernel), NVIDIA/nccl#992 (an abort
    /// that never returned); and a stack of a wait, which is none of them (a hang, read below).
    #[test]
    fn debuggers_and_sanitizers_inside_nccl_name_nccl() {
        let null = "#0  0x0000000000000000 in ?? ()\n#1  0x00007ff5c8b0f1da in ?? () from /opt/nsight/libToolsInjection64.so\n#3  0x00007ff58be01168 in initOnceFunc () at misc/ibvwrap.cc:94\n#7  0x00007ff58bde3349 in ncclIbInit (logFunction=<optimized out>) at transport/net_ib.cc:150\n";
        assert_eq!(parse("f", null).iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["nccl.crashed"]);
        let sanitizer = "========= COMPUTE-SANITIZER\n========= Invalid __global__ read of size 4 bytes\n=========     at ncclDevKernel_AllReduce_Sum_u8_RING_LL(ncclDevComm *, unsigned long, ncclWork *)+0x1ad0\n";
        let facts = parse("f", sanitizer);
        assert_eq!(facts[0].name, "nccl.internal");
        assert!(
            facts[0].get("text").is_some_and(|t| t.contains("ncclDevKernel_AllReduce_Sum_u8_RING_LL")),
            "{facts:?}"
        );
        let own = "========= Invalid __global__ read of size 4 bytes\n=========     at my_kernel(float *)+0x10\n";
        assert!(parse("f", own).is_empty(), "the program's own kernel");
        let abort = "Thread 3438296 (idle): \"Thread-41\"\n    0x155555277197 (libc.so.6)\n    commFree (init.cc:180)\n    commCleanup (init.cc:1731)\n    commReclaim (init.cc:1862)\n    ncclCommAbort (init.cc:1931)\n    c10d::NCCLComm::ncclCommAbort (libtorch_cuda.so)\n";
        let facts = parse("f", abort);
        assert_eq!(facts.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["nccl.internal"]);
        let waiting = "#0  0x00007fff8deb4588 in sched_yield () from /usr/lib64/libc.so.6\n#2  0x00007fff618e4964 in ncclCpuBarrierOut (comm=0x7ffc10000dc0)\n#5  0x00007fff61820248 in ncclAllReduce (sendbuff=0x7ffe9320aa00)\n";
        assert!(parse("f", waiting).iter().all(|f| !f.name.starts_with("nccl.")), "a wait, no fault of NCCL's");
    }

    /// hiyouga/ChatGLM-Efficient-Tuning#137 (heldout413): the tokenizer's bar past 30 minutes and
    /// a traceback in main_process_first's barrier name the main process behind. The same
    /// traceback without a long bar or a timeout (a barrier that failed at once) is not read so.
    #[test]
    fn ranks_waiting_for_a_main_process_still_preprocessing_name_it() {
        let trace = "  File \"/env/lib/python3.9/site-packages/transformers/training_args.py\", line 1891, in main_process_first\n    torch.distributed.barrier()\n";
        let long = format!("Running tokenizer on dataset: 47%|###8 | 3169000/6811963 [30:11<38:27, 1578.58 examples/s]Traceback (most recent call last):\n{trace}");
        let found: Vec<Fact> = parse("f", &long).into_iter().filter(|f| f.name == "pytorch.rank_behind").collect();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].evidence[0].line, 2);
        let short =
            format!("Running tokenizer on dataset: 47%|###8 | 3169/6811 [00:11<38:27, 1578.58 examples/s]\n{trace}");
        assert!(parse("f", &short).iter().all(|f| f.name != "pytorch.rank_behind"));
        assert_eq!(
            super::super::pytorch::progress_elapsed_seconds("100%|##| 5/5 [1:02:03<00:00, 1.2it/s]"),
            Some(3723)
        );
    }

    /// axolotl-ai-cloud/axolotl#2684 (heldout434): a rank's store wait that gave up after 30
    /// minutes as the tokenizer's bar reached 29:58 names the process behind it; the same wait after
    /// a bar minutes long, or after a training loop hours long, does not; nor a bar after the wait.
    #[test]
    fn a_store_wait_as_long_as_a_progress_bar_names_the_process_behind() {
        let wait = "[rank1]:[W516 14:34:56.854597329 socket.cpp:489] [c10d] waitForInput: socket SocketImpl(fd=79, addr=[localhost]:41170, remote=[localhost]:29500) timed out after 1800000ms\n";
        let bar = |elapsed: &str| {
            format!(
                "Tokenizing Prompts (num_proc=64):  92%|#########1| 328986/359152 [{elapsed}<12:05, 41.59 examples/s]"
            )
        };
        let behind = |text: &str| parse("f", text).into_iter().filter(|f| f.name == "pytorch.rank_behind").count();
        assert_eq!(behind(&format!("{}{wait}", bar("29:58"))), 1);
        assert_eq!(behind(&format!("{}\n{wait}", bar("29:58"))), 1);
        assert_eq!(behind(&format!("{}\n{wait}", bar("04:10"))), 0, "a short bar");
        assert_eq!(behind(&format!("{}\n{wait}", bar("5:12:00"))), 0, "a training loop");
        assert_eq!(behind(&format!("{wait}{}\n", bar("29:58"))), 0, "the bar after the wait");
        assert_eq!(
            store_wait_seconds("Timed out after 1801 seconds waiting for clients. 1/2 clients joined (TCPStore)"),
            Some(1801)
        );
    }

    /// NVIDIA/NeMo#13509 and NVIDIA/Megatron-LM#1274 (heldout399): UCX's backtraces through
    /// PyTorch's MPI group creation, mangled and not, read once; an MPI job whose stack holds
    /// ProcessGroupMPI's collectives but not its creation is not read so.
    #[test]
    fn a_crash_creating_an_mpi_group_is_a_launch_without_mpirun() {
        let mangled = "[1de2faca3781:446  :0:446] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x28)\n 6  /opt/hpcx/ompi/lib/libmpi.so.40(PMPI_Group_incl+0x55) [0x7fca27af6755]\n 7  /usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cpu.so(_ZN4c10d15ProcessGroupMPI21createProcessGroupMPIESt6vectorIiSaIiEE+0xaf) [0x7fca1421685f]\n";
        let found: Vec<Fact> =
            parse("f", &mangled.repeat(3)).into_iter().filter(|f| f.name == "process.mpi_group_crashed").collect();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].evidence[0].line, 3);
        let plain = " 8 0x0000000004f1ea87 c10d::ProcessGroupMPI::createProcessGroupMPI()  ???:0\n";
        assert!(parse("f", plain).iter().any(|f| f.name == "process.mpi_group_crashed"));
        let collective = " 8 0x0000000004f1ea87 c10d::ProcessGroupMPI::allreduce()  ???:0\n";
        assert!(parse("f", collective).iter().all(|f| f.name != "process.mpi_group_crashed"));
    }

    /// apache/mxnet#8695 (heldout391): gdb's stack of a run that hangs, waiting in the engine's
    /// WaitForVar: a wait, named with its caller. The same waits beside a thread that aborted, a
    /// segfault's stack, and a frame that waits deeper than the innermost are not read so.
    #[test]
    fn a_debuggers_stack_that_waits_without_a_crash_is_a_hang() {
        let hung = "(gdb) bt\n#0  0x00003fffac2cdd60 in pthread_cond_wait@@GLIBC_2.17 () at /lib64/libpthread.so.0\n#1  0x00003fff4777608c in std::condition_variable::wait(std::unique_lock<std::mutex>&) () at /lib64/libstdc++.so.6\n#3  0x00003fff6a3e1d10 in mxnet::engine::ThreadedEngine::WaitForVar(mxnet::engine::Var*) (this=0x3fff2c001150) at src/engine/threaded_engine.cc:358\n";
        let found: Vec<Fact> = parse("f", hung).into_iter().filter(|f| f.name == "process.stack_waiting").collect();
        assert_eq!(found.len(), 1, "{found:?}");
        let text = found[0].get("text").unwrap_or_default();
        assert!(text.contains("pthread_cond_wait (called from mxnet::engine::ThreadedEngine::WaitForVar"), "{text}");
        assert_eq!(found[0].evidence[0].line, 2);
        let spinning = "Thread 16 (Thread 0x7f997d9fa000 (LWP 1705706)):\n#0  0x00007fa4e83c7b8b in sched_yield () from /lib64/libc.so.6\n#1  0x00007fa56759e433 in tensorrt_llm::plugins::AllgatherPlugin::enqueue () from libtensorrt_llm.so\n";
        assert!(parse("f", spinning).iter().any(|f| f.name == "process.stack_waiting"));
        let aborted = format!("{hung}Thread 2:\n#0  0x00007f in __GI_raise (sig=6) at raise.c:51\n#1  0x00007f in __GI_abort () at abort.c:79\n");
        assert!(parse("f", &aborted).iter().all(|f| f.name != "process.stack_waiting"));
        let crashed = format!("Program received signal SIGSEGV, Segmentation fault.\n{hung}");
        assert!(parse("f", &crashed).iter().all(|f| f.name != "process.stack_waiting"));
        let working = "#0  0x00007f in ncclAllReduce (sendbuff=0x7ffe9320aa00) at collectives.cc:10\n#1  0x00007f in poll () from /lib64/libc.so.6\n";
        assert!(parse("f", working).iter().all(|f| f.name != "process.stack_waiting"));
        // NVIDIA/nccl#1108 (heldout468): a futex wait under a reader-writer lock of the CUDA
        // driver, whose frames have no symbols: the library is named.
        let driver = "#0  futex_abstimed_wait (private=0, abstime=0x0, clockid=0, expected=2, futex_word=<optimized out>) at ../sysdeps/nptl/futex-internal.h:284
#1  __pthread_rwlock_wrlock_full (abstime=0x0, clockid=0, rwlock=0x895a2a0) at pthread_rwlock_common.c:830
#3  0x00007fdbd52fa258 in ?? () from /lib/x86_64-linux-gnu/libcuda.so.1
";
        let found: Vec<Fact> = parse("f", driver).into_iter().filter(|f| f.name == "process.stack_waiting").collect();
        let text = found.first().and_then(|f| f.get("text")).unwrap_or_default();
        assert!(
            text.contains("futex_abstimed_wait (called from a function of libcuda.so.1 without symbols)"),
            "{text}"
        );
        // NVIDIA/apex#599 (heldout482): the CUDA driver spinning on the clock under a cudaFree
        // that never returns is a wait; a program of its own asking the time is not.
        let spin = "#0  __vdso_clock_gettime (clock=4, ts=0x7f9170ffabc0) at arch/x86/vdso/vclock_gettime.c:256
#1  0x00007f928421896d in clock_gettime () from /lib64/libc.so.6
#2  0x00007f917fc5d01e in ?? () from /lib64/libcuda.so.1
#6  0x00007f917fca2370 in cuMemFree_v2 () from /lib64/libcuda.so.1
";
        let found: Vec<Fact> = parse("f", spin).into_iter().filter(|f| f.name == "process.stack_waiting").collect();
        let text = found.first().and_then(|f| f.get("text")).unwrap_or_default();
        assert!(text.contains("vdso_clock_gettime (called from cuMemFree_v2)"), "{text}");
        let asking = spin.replace("from /lib64/libcuda.so.1", "from /opt/app/libtimer.so");
        assert!(parse("f", &asking).iter().all(|f| f.name != "process.stack_waiting"));
    }

    /// bigscience's BLOOM prequel chronicles (heldout352): py-spy dumps of a 40-node hang, some
    /// ranks in a pipeline broadcast, others back in train(). Dumps without a torch.distributed
    /// frame are no hang in a collective.
    #[test]
    fn py_spy_stacks_inside_a_collective_are_a_hang_in_it() {
        let dumps = "Thread 835990 (active): \"MainThread\"\n    train (megatron/training.py:915)\n    pretrain (megatron/training.py:187)\nThread 835995 (active): \"MainThread\"\n    broadcast (torch/distributed/distributed_c10d.py:1191)\n    _aggregate_total_loss (deepspeed/runtime/pipe/engine.py:540)\n    train (megatron/training.py:851)\n";
        let found: Vec<Fact> =
            parse("f", dumps).into_iter().filter(|f| f.name == "process.waiting_in_collective").collect();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].evidence[0].line, 5);
        assert!(found[0].get("text").is_some_and(|t| t.contains("1 of 2") && t.contains("broadcast")), "{found:?}");
        let idle = "Thread 1 (idle): \"MainThread\"\n    train (megatron/training.py:915)\n# see torch/distributed/distributed_c10d.py:1191\n";
        assert!(parse("f", idle).iter().all(|f| f.name != "process.waiting_in_collective"));
    }

    /// deepspeedai/DeepSpeed#7461: py-spy dumps of a ZeRO-3 mixture-of-experts job, one process's main
    /// thread in all_reduce (the gradient norm), the other's in reduce_scatter_tensor: different
    /// collectives. Two in the same collective, a send beside a recv, or a second thread of one
    /// process are not.
    #[test]
    fn main_threads_in_different_collectives_are_a_mismatch_deepspeed7461() {
        let dump = |id: u32, name: &str, function: &str| {
            format!("Thread {id} (active): \"{name}\"\n    {function} (torch/distributed/distributed_c10d.py:2924)\n    wrapper (torch/distributed/c10d_logger.py:81)\n    step (deepspeed/runtime/zero/stage3.py:2120)\n")
        };
        let different = |text: String| {
            crate::triage::analyze(&[crate::triage::Input::new("dumps", text.into_bytes())])
                .facts
                .into_iter()
                .find(|f| f.name == "process.different_collectives")
        };
        let found = different(format!(
            "{}{}",
            dump(33550, "MainThread", "all_reduce"),
            dump(33549, "MainThread", "reduce_scatter_tensor")
        ));
        let fact = found.expect("two collectives");
        assert!(fact.get("text").is_some_and(|t| t.contains("all_reduce, reduce_scatter_tensor")), "{fact:?}");
        assert_eq!(fact.evidence.len(), 2);
        assert!(different(format!("{}{}", dump(1, "MainThread", "all_reduce"), dump(2, "MainThread", "all_reduce")))
            .is_none());
        assert!(different(format!("{}{}", dump(1, "MainThread", "send"), dump(2, "MainThread", "recv"))).is_none());
        assert!(
            different(format!("{}{}", dump(1, "MainThread", "all_reduce"), dump(2, "Thread-3", "broadcast"))).is_none()
        );
        let text = format!(
            "{}{}",
            dump(33550, "MainThread", "all_reduce"),
            dump(33549, "MainThread", "reduce_scatter_tensor")
        );
        let report = crate::triage::triage(
            &[crate::triage::Input::new("dumps", text.into_bytes())],
            &crate::playbook::Playbook::embedded(),
        );
        assert_eq!(report.diagnoses.first().map(|d| d.id.as_str()), Some("collective-mismatch"));
    }

    /// nebius/soperator's MLPerf log of Slurm job 839: task 11 aborted on a CUDA error ("srun: error:
    /// worker-0: task 11: Exited with exit code 134") while ranks 0, 8 and 10 timed out in an
    /// all-gather. A task that is itself among the timed-out ranks (its watchdog's abort), an exit
    /// with a plain error code, or an abort with no timeout beside it, is not read.
    #[test]
    fn a_task_that_aborted_while_the_others_timed_out_died_soperator839() {
        let timeout = |rank: u64| {
            format!("[rank{rank}]:[E ProcessGroupNCCL.cpp:754] [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=71974, OpType=ALLGATHER, NumelIn=3840000, NumelOut=61440000, Timeout(ms)=1800000) ran for 1800699 milliseconds before timing out.\n")
        };
        let died = |text: String| parse("f", &text).into_iter().find(|f| f.name == "process.died");
        let exit = |task: u64, code: u32| format!("srun: error: worker-0: task {task}: Exited with exit code {code}\n");
        let fact = died(format!("{}{}{}", timeout(10), timeout(0), exit(11, 134))).expect("task 11 died");
        assert_eq!(fact.get("rank"), Some("11"));
        assert_eq!(fact.get("signal"), Some("6"));
        assert_eq!(fact.get("host"), Some("worker-0"));
        assert!(died(format!("{}{}", timeout(10), exit(10, 134))).is_none(), "its own watchdog's abort");
        assert!(died(format!("{}{}", timeout(10), exit(11, 1))).is_none(), "a plain error exit");
        assert!(died(exit(11, 134)).is_none(), "no timeout beside it");
        assert_eq!(
            died(format!("{}{}", timeout(0), exit(3, 139)))
                .and_then(|f| f.get("signal").map(str::to_string))
                .as_deref(),
            Some("11")
        );
    }

    #[test]
    fn a_rank_killed_or_crashed_is_named_with_its_host() {
        // torchrun's summary for a rank the OOM killer ended (the form of
        // torch.distributed.elastic.multiprocessing.errors.ChildFailedError).
        let torchrun = "\
[2024-01-01 00:00:00,000] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 1234 closing signal SIGTERM
[2024-01-01 00:00:01,000] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -9) local_rank: 3 (pid: 1237) of binary: /usr/bin/python
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2024-01-01_00:00:01
  host      : node12
  rank      : 2 (local_rank: 2)
  exitcode  : -15 (pid: 1236)
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2024-01-01_00:00:00
  host      : node12
  rank      : 11 (local_rank: 3)
  exitcode  : -9 (pid: 1237)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 1237
============================================================
";
        let facts = parse("job.log", torchrun);
        assert_eq!(facts.len(), 1, "{facts:?}");
        let died = &facts[0];
        assert_eq!(
            (died.name.as_str(), died.get("rank"), died.get("host")),
            ("process.died", Some("11"), Some("node12"))
        );
        assert_eq!(died.get("signal"), Some("9"));
        assert_eq!(died.evidence[0].line, 19);

        // The agent's line alone still says a rank was killed.
        let line = "torch.distributed.elastic.multiprocessing.api:failed (exitcode: -11) local_rank: 0 (pid: 77) of binary: /opt/conda/bin/python\n";
        let facts = parse("job.log", line);
        assert_eq!((facts.len(), facts[0].get("signal"), facts[0].get("local_rank")), (1, Some("11"), Some("0")));

        // The kernel's and Slurm's OOM kills.
        let kernel = "[Tue Mar  5 10:00:00 2024] Out of memory: Killed process 4242 (python3) total-vm:812345678kB, anon-rss:98765432kB\n\
                      [Tue Mar  5 10:00:01 2024] Memory cgroup out of memory: Killed process 4243 (pt_main_thread) total-vm:1kB\n";
        assert_eq!(parse("dmesg", kernel).len(), 2);
        let slurm = "slurmstepd: error: Detected 1 oom_kill event in StepId=1234.0. Some of the step tasks have been OOM Killed.\n";
        assert_eq!(parse("slurm.out", slurm)[0].name, "process.died");
    }

    /// NVIDIA/DALI#585 (heldout368): a training process invoking the OOM killer in its memory
    /// cgroup, the paste cut before the line naming the task killed. Where that line is there it is
    /// read instead, and a global OOM (no memory cgroup) names no victim of the job.
    #[test]
    fn a_training_process_that_invoked_the_oom_killer_in_its_cgroup_lost_a_task() {
        let header = "[2612362.231458] python invoked oom-killer: gfp_mask=0x14000c0(GFP_KERNEL), nodemask=(null), order=0, oom_score_adj=829\n";
        let stack = "[2612362.231487]  mem_cgroup_out_of_memory+0x4b/0x80\n";
        let facts = parse("dmesg", &format!("{header}{stack}"));
        assert_eq!(facts.len(), 1, "{facts:?}");
        assert_eq!((facts[0].name.as_str(), facts[0].evidence[0].line), ("process.died", 1));
        let named = format!(
            "{header}{stack}[2612362.231600] Memory cgroup out of memory: Killed process 9 (sshd) total-vm:1kB\n"
        );
        assert!(parse("dmesg", &named).is_empty());
        assert!(parse("dmesg", header).is_empty());
    }

    /// msr-fiddle/pipedream#76: SIGBUS in NCCL's thread in a container with the default /dev/shm.
    #[test]
    fn a_bus_error_inside_nccl_is_its_shared_memory() {
        let crash = "[8d6bf97c3bf4:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)\n==== backtrace (tid:   3095) ====\n 0 0x0000000000043090 killpg()  ???:0\n 2 0x000000000007587d ncclGroupEnd()  ???:0\n";
        let facts = parse("f", crash);
        assert_eq!(facts.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["nccl.shm_failed"]);
        assert_eq!((facts[0].evidence[0].line, facts[0].evidence[1].line), (1, 4));
        let elsewhere = crash.replace("ncclGroupEnd()", "memcpy()");
        assert!(parse("f", &elsewhere).is_empty(), "a bus error in another library");
    }

    /// The Open MPI users list, 2016-03 (heldout175): a full /tmp on the compute nodes, and the
    /// processes' SIGBUS inside Open MPI's mmap'ed shared memory; the same signal elsewhere is not.
    #[test]
    fn a_bus_error_in_open_mpi_shared_memory_is_its_file_system_full_ompi_users_2016_28757() {
        let crash = "[csclprd3-6-12:30667] *** Process received signal ***\n[csclprd3-6-12:30667] Signal: Bus error (7)\n[csclprd3-6-12:30667] [ 0] /lib64/libpthread.so.0(+0xf500)[0x2b1b0e06c500]\n[csclprd3-6-12:30667] [ 1] /hpc/apps/mpi/openmpi/1.10.1/lib/openmpi/mca_shmem_mmap.so(+0x1524)[0x2b1b0f5fd524]\n";
        let found = parse("f", crash);
        let full = found.iter().find(|f| f.name == "process.shm_full").expect("shared memory full");
        assert_eq!((full.evidence[0].line, full.evidence[1].line), (2, 4));
        assert!(parse("f", &crash.replace("mca_shmem_mmap.so", "libfoo.so"))
            .iter()
            .all(|f| f.name != "process.shm_full"));
    }

    /// chainer/chainer#7586: Open MPI's report of a SIGSEGV in NCCL's thread, inside the mlx4
    /// verbs provider it called.
    #[test]
    fn a_segmentation_fault_inside_nccl_is_nccls_crash() {
        let crash = "*** Process received signal ***\nSignal: Segmentation fault (11)\nSignal code: Address not mapped (1)\n[ 0] /lib/x86_64-linux-gnu/libpthread.so.0(+0x11390)[0x7ff32df7d390]\n[ 1] /usr/lib/libibverbs/libmlx4-rdmav2.so(+0x1aee)[0x7ff320091aee]\n[ 2] /usr/lib/x86_64-linux-gnu/libnccl.so.2(+0x2b136)[0x7ff2bf5c3136]\n";
        let facts = parse("f", crash);
        assert_eq!(facts.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["nccl.crashed"]);
        assert_eq!((facts[0].evidence[0].line, facts[0].evidence[1].line), (2, 6));
        let elsewhere = crash.replace("libnccl.so.2", "libtorch_cuda.so");
        assert!(parse("f", &elsewhere).is_empty(), "a crash in another library");
        // NVIDIA/nccl#2106: the CUDA driver crashed under NCCL's cuMem probe, a stack that names
        // NCCL's functions rather than its library file.
        let probe = "> !!!!!!! Segfault encountered !!!!!!!
>   File \"<unknown>\", line 0, in cuMemCreate
>   File \"misc/cudawrap.cc\", line 92, in ncclCuMemHostEnable()
";
        let facts = parse("f", probe);
        assert_eq!(facts.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["nccl.crashed"]);
        assert_eq!((facts[0].evidence[0].line, facts[0].evidence[1].line), (1, 3));
        assert!(parse("f", &probe.replace("ncclCuMemHostEnable()", "cudaMalloc()")).is_empty());
    }

    /// mlcommons/training_results logs and nccl-tests: the job's own end, once.
    #[test]
    fn a_job_that_says_it_finished_well() {
        let mlperf = ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1, \"event_type\": \"INTERVAL_END\", \"key\": \"run_stop\", \"value\": null, \"metadata\": {\"file\": \"fit.py\", \"lineno\": 996, \"status\": \"success\"}}\n";
        let facts = parse("result_0.txt", &mlperf.repeat(2));
        assert_eq!(facts.iter().filter(|f| f.name == "job.completed").count(), 1, "{facts:?}");
        assert_eq!(parse("f", "# Out of bounds values : 0 OK\n")[0].name, "job.completed");
        // deepmodeling/deepmd-kit#1774: a standalone nccl-tests run passed, and then another
        // process (the application) failed; the success is the first run's only.
        let two_runs = "#   Rank  0 Pid 775733 on hp-Z8 device  0 [0x15] NVIDIA GeForce RTX 2080 Ti\n\
                        \x20Out of bounds values : 0 OK\n\
                        hp-Z8:779166:779172 [0] init.cc:255 NCCL WARN Cuda failure 'CUDA driver is a stub library'\n";
        assert!(parse("f", two_runs).iter().all(|f| f.name != "job.completed"));
        let teardown = two_runs.replace("779166:779172", "775733:775790");
        assert!(parse("f", &teardown).iter().any(|f| f.name == "job.completed"), "the same process's teardown");
        // xxrjun/nccl-tests-cluster (heldout115): a sweep whose alltoall failed and whose sendrecv,
        // run next, passed; a test that failed after the header of the one that passed is its own.
        let sweep = "# Collective test starting: alltoall_perf\ncnode2-001: Test NCCL failure common.cu:401 'remote process exited or there was a network error / '\n# Collective test starting: sendrecv_perf\n# Out of bounds values : 0 OK\n";
        assert!(parse("f", sweep).iter().all(|f| f.name != "job.completed"));
        let one_test = "# Collective test starting: sendrecv_perf\ncnode2-001: Test NCCL failure common.cu:401 'internal error'\n# Out of bounds values : 0 OK\n";
        assert!(parse("f", one_test).iter().any(|f| f.name == "job.completed"));
        assert!(parse("f", "# Out of bounds values : 3 FAILED\n").is_empty());
        assert!(parse("f", &mlperf.replace("success", "aborted")).is_empty());
    }

    /// verdimrc/playground-nemo-2.0-gh's sample log (heldout166): NeMo, on PyTorch Lightning,
    /// stops its fit loop at the steps it was asked for, and NCCL's proxy WARNs on its way out are
    /// teardown. A fit loop that stopped for another reason did not finish well.
    #[test]
    fn a_fit_loop_that_reached_its_steps_finished_well_nemo_playground() {
        let log = "`Trainer.fit` stopped: `max_steps=20` reached.\n\
                   7d3a:444:957 [0] proxy.cc:1521 NCCL WARN [Proxy Service 0] Failed to execute operation Close from rank 0, retcode 3\n";
        assert_eq!(parse("f", log).first().map(|f| f.name.as_str()), Some("job.completed"));
        assert!(parse("f", &log.replace("max_steps=20", "max_epochs=3")).iter().any(|f| f.name == "job.completed"));
        // The training repository behind autocast#381 (heldout2): after fit ended, rank 0 alone
        // entered a checkpoint's barrier, and the watchdog ended it half an hour later.
        let hang =
            "`Trainer.fit` stopped: `max_epochs=3` reached.\n[Rank 0] Watchdog caught collective operation timeout:\n";
        assert!(parse("f", hang).iter().all(|f| f.name != "job.completed"));
        let no_batches = "`Trainer.fit` stopped: No training batches.\n";
        assert!(parse("f", no_batches).is_empty());
    }

    #[test]
    fn errors_aborts_and_the_launchers_own_signals_are_not_deaths() {
        // An exception (exit code 1), PyTorch's watchdog abort (SIGABRT) and torchrun stopping the
        // other ranks (SIGTERM) follow an error printed elsewhere.
        for exit in ["1", "-6", "-15"] {
            let text = format!("Root Cause (first observed failure):\n[0]:\n  host      : n1\n  rank      : 0 (local_rank: 0)\n  exitcode  : {exit} (pid: 9)\n");
            assert!(parse("f", &text).is_empty(), "exit code {exit}");
            let line = format!("api:failed (exitcode: {exit}) local_rank: 0 (pid: 9) of binary: python\n");
            assert!(parse("f", &line).is_empty(), "exit code {exit}");
        }
        // The OOM killer ending a process that is not a training process.
        assert!(parse("f", "Out of memory: Killed process 12 (chrome) total-vm:1kB\n").is_empty());
        // Prose that names the words without the kernel's message.
        assert!(parse("f", "Killed process 12 (python) by hand\n").is_empty());
    }

    /// huggingface/m4-logs (tr_141, num_workers_06): Slurm lost a node of the job and cancelled
    /// the step; a node named in another of srun's errors is not lost.
    #[test]
    fn a_node_slurm_lost_while_the_job_ran_m4_logs_tr141() {
        let log = "srun: error: Node failure on jean-zay-iam37\nsrun: Job step aborted: Waiting up to 62 seconds for job step to finish.\nslurmstepd: error: *** STEP 1943824.0 ON jean-zay-iam17 CANCELLED AT 2023-03-06T03:17:51 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***\nsrun: error: Node failure on jean-zay-iam37\n";
        let facts = parse("f", log);
        assert_eq!(facts.iter().filter(|f| f.name == "process.died").count(), 1, "{facts:?}");
        assert_eq!(facts[0].get("host"), Some("jean-zay-iam37"));
        let other = parse("f", "srun: error: jean-zay-iam37: task 3: Exited with exit code 1\n");
        assert!(other.iter().all(|f| !f.get("text").is_some_and(|t| t.contains("lost the node"))));
    }

    /// The canarycroco error log (heldout69): srun names the task its cgroup OOM-killed, with its
    /// host; older slurmstepd words the event "oom-kill event(s)".
    #[test]
    fn srun_names_the_task_that_ran_out_of_memory() {
        let log = "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=10238881.0. Some of your processes may have been killed by the cgroup out-of-memory handler.\nsrun: error: nic5-w052: task 13: Out Of Memory\n";
        let died: Vec<Fact> = parse("slurm.err", log).into_iter().filter(|f| f.name == "process.died").collect();
        assert_eq!(died.len(), 2, "{died:?}");
        assert_eq!((died[1].get("host"), died[1].get("rank")), (Some("nic5-w052"), Some("13")));
        assert!(parse("f", "srun: error: node1: task 3: Exited with exit code 1\n").is_empty());
    }

    /// huggingface/diffusers#4229: torchrun's summary with several ranks of one container ended by
    /// SIGBUS at once is a full /dev/shm; one rank's SIGBUS, or one on each of two hosts, is not.
    #[test]
    fn ranks_of_one_host_ended_by_sigbus_together_are_a_full_dev_shm() {
        let block = |index: u32, host: &str, signal: u32| {
            format!("[{index}]:\n  time      : 2023-07-24_10:22:38\n  host      : {host}\n  rank      : {index} (local_rank: {index})\n  exitcode  : -{signal} (pid: 75{index})\n  error_file: <N/A>\n  traceback : Signal {signal} (SIGBUS) received by PID 75{index}\n")
        };
        let table = |blocks: &[String]| format!("train.py FAILED\n---\nFailures:\n{}", blocks.concat());
        let shared = table(&[block(1, "1156403c744d", 7), block(2, "1156403c744d", 7), block(3, "1156403c744d", 7)]);
        let facts = parse("f", &shared);
        let full = facts.iter().find(|f| f.name == "process.shm_full").expect("a full /dev/shm");
        assert_eq!(full.get("host"), Some("1156403c744d"));
        assert!(full.get("text").is_some_and(|t| t.starts_with("3 ranks on 1156403c744d")), "{full:?}");
        let one = table(&[block(1, "node1", 7), block(2, "node1", 9)]);
        assert!(!parse("f", &one).iter().any(|f| f.name == "process.shm_full"), "one rank's bus error");
        let apart = table(&[block(1, "node1", 7), block(2, "node2", 7)]);
        assert!(!parse("f", &apart).iter().any(|f| f.name == "process.shm_full"), "one on each host");
    }

    /// FlagOpen/FlagEmbedding#635: one rank's bus error and torchrun's agent reporting it ended by
    /// SIGBUS, in a container whose /dev/shm was too small. The agent's line without the bus error
    /// beside it, or a death by another signal, is not read so.
    #[test]
    fn one_rank_ended_by_sigbus_beside_its_bus_error_is_a_full_dev_shm_flagembedding635() {
        let bus = "Bus error: nonexistent physical address\n";
        let agent = |code: u32| {
            format!("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -{code}) local_rank: 0 (pid: 53138) of binary: /usr/bin/python\n")
        };
        let full = |text: String| parse("f", &text).into_iter().find(|f| f.name == "process.shm_full");
        let fact = full(format!("{bus}{}", agent(7))).expect("a full /dev/shm");
        assert_eq!(fact.evidence.len(), 2, "{fact:?}");
        assert!(full(agent(7)).is_none(), "no bus error beside it");
        assert!(full(format!("{bus}{}", agent(9))).is_none(), "another signal");
    }
}
