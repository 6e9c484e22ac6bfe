//! `fabricdoctor slurm health-check`: Slurm's HealthCheckProgram (slurm.conf(5): run as root by
//! slurmd every HealthCheckInterval, killed after 60 s). It runs the node checks, drains the node
//! when one fails (`scontrol update NodeName=X State=DRAIN Reason="fabricdoctor: <id> <subject>"`),
//! and resumes it once it passes again, but only when fabricdoctor drained it: a drain whose reason
//! starts with `fabricdoctor:` is ours; any other belongs to someone else and is left alone. A brake
//! (`--max-drained-fraction`, as NVIDIA NVSentinel stops at half the fleet) refuses to drain past
//! a share of the node's partitions, so one bad rule or fixture cannot empty the cluster.
//!
//! `fabricdoctor slurm prolog` is the job's gang preflight (slurm.conf(5) Prolog: run as root on
//! every node of the job before it starts; a non-zero exit drains that node and requeues the job):
//! the same fast checks, then all-pairs latency and bandwidth between the job's nodes
//! (`fabricdoctor_burnin::preflight`), judged alike on every node so that only the node at fault
//! exits non-zero.

use std::net::{IpAddr, SocketAddr, TcpListener, ToSocketAddrs};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context};
use fabricdoctor_burnin::preflight::{self, judge, Preflight, Rules};
use fabricdoctor_checks::{registry, Finding, Verdict};
use fabricdoctor_perf::collective::nodelist::expand;

use crate::args::{CheckArgs, HealthCheckArgs, NodeCheckArgs, PrologArgs};
use crate::exit;
use crate::output::emit;

/// The reason prefix that marks a drain as fabricdoctor's own.
pub const REASON_PREFIX: &str = "fabricdoctor:";

/// One node as `scontrol show nodes --oneliner` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmNode {
    pub name: String,
    /// "IDLE", "IDLE+DRAIN", "MIXED+DRAIN", "DOWN+DRAIN", ...
    pub state: String,
    pub partitions: Vec<String>,
    /// NodeAddr: where the node is reached (its name when slurm.conf gives none).
    pub address: Option<String>,
    /// The drain or down reason, without the "[user@time]" scontrol appends.
    pub reason: Option<String>,
}

impl SlurmNode {
    /// Drained or draining (scontrol prints DRAIN as a state flag: "IDLE+DRAIN", "DRAINED").
    pub fn drained(&self) -> bool {
        self.state.contains("DRAIN")
    }

    /// Drained by fabricdoctor (its reason starts with [`REASON_PREFIX`]).
    pub fn drained_by_us(&self) -> bool {
        self.drained() && self.reason.as_deref().is_some_and(|r| r.starts_with(REASON_PREFIX))
    }
}

/// Parse `scontrol show nodes --oneliner`: one node per line, `Key=Value` pairs separated by
/// spaces, where Reason runs to the end of the line ("Reason=fabricdoctor: x y [root@2026-...]").
pub fn parse_nodes(text: &str) -> Vec<SlurmNode> {
    text.lines()
        .filter_map(|line| {
            let (before_reason, reason) = match line.find(" Reason=") {
                Some(at) => (&line[..at], Some(line[at + " Reason=".len()..].trim())),
                None => (line, None),
            };
            let value = |key: &str| {
                before_reason
                    .split_whitespace()
                    .find_map(|pair| pair.strip_prefix(key).and_then(|rest| rest.strip_prefix('=')))
            };
            let name = value("NodeName")?.to_string();
            let reason = reason.map(|r| match r.rfind(" [") {
                Some(at) if r.ends_with(']') => r[..at].trim().to_string(),
                _ => r.to_string(),
            });
            Some(SlurmNode {
                name,
                state: value("State").unwrap_or("UNKNOWN").to_string(),
                partitions: value("Partitions")
                    .map(|p| p.split(',').filter(|p| !p.is_empty()).map(str::to_string).collect())
                    .unwrap_or_default(),
                address: value("NodeAddr").map(str::to_string),
                reason: reason.filter(|r| !r.is_empty() && r != "(null)"),
            })
        })
        .collect()
}

/// What the health check decided for this node.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Healthy and not drained by us: nothing to do.
    Healthy,
    /// Healthy again after our drain: resume it.
    Resume,
    /// A check failed: drain with this reason.
    Drain { reason: String },
    /// A check failed but the node is already drained (by us, or by someone else): leave it.
    AlreadyDrained { reason: String },
    /// A check failed, but draining would take the drained share of the node's partitions past
    /// the brake.
    Braked { reason: String, drained: usize, total: usize },
}

/// The drain reason for the failing findings: the worst first, with how many more.
pub fn drain_reason(failing: &[&Finding]) -> String {
    let Some(first) = failing.first() else { return REASON_PREFIX.to_string() };
    let more = if failing.len() > 1 { format!(" (+{} more)", failing.len() - 1) } else { String::new() };
    // scontrol keeps the reason as one argument; newlines and runs of spaces would only garble sinfo.
    let text = format!("{REASON_PREFIX} {} {}{more}", first.id, first.subject);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Decide for `node` from the findings and every node of the cluster.
pub fn decide(findings: &[Finding], node: &SlurmNode, cluster: &[SlurmNode], max_drained_fraction: f64) -> Decision {
    let mut failing: Vec<&Finding> = findings.iter().filter(|f| f.verdict == Verdict::Fail).collect();
    failing.sort_by(|a, b| a.id.cmp(&b.id).then_with(|| a.subject.cmp(&b.subject)));
    if failing.is_empty() {
        return if node.drained_by_us() { Decision::Resume } else { Decision::Healthy };
    }
    let reason = drain_reason(&failing);
    if node.drained() {
        return Decision::AlreadyDrained { reason };
    }
    // The partitions this node serves: draining it removes capacity from each of them.
    let peers: Vec<&SlurmNode> = cluster
        .iter()
        .filter(|other| other.name == node.name || other.partitions.iter().any(|p| node.partitions.contains(p)))
        .collect();
    let total = peers.len().max(1);
    let drained = peers.iter().filter(|other| other.drained()).count();
    if (drained + 1) as f64 / total as f64 > max_drained_fraction {
        return Decision::Braked { reason, drained, total };
    }
    Decision::Drain { reason }
}

/// The check run a health check or prolog makes: fast checks only (no counter sample) unless
/// `--sample`.
fn check_args(args: &NodeCheckArgs) -> anyhow::Result<CheckArgs> {
    let only: Vec<String> = if !args.selection.only.is_empty() || args.sample {
        args.selection.only.clone()
    } else {
        registry().iter().filter(|c| !c.needs_counters()).map(|c| c.id().to_string()).collect()
    };
    args.selection.check_args(&only, args.sample).context("the checks' arguments")
}

/// Runs scontrol, or prints what it would run.
struct Scontrol<'a> {
    program: &'a str,
    dry_run: bool,
}

impl Scontrol<'_> {
    fn query(&self, args: &[&str]) -> anyhow::Result<String> {
        let output = Command::new(self.program).args(args).output().map_err(|error| {
            if error.kind() == std::io::ErrorKind::NotFound {
                anyhow::anyhow!(
                    "{} not found: this host has no Slurm client (install slurm-client, or give --scontrol PATH)",
                    self.program
                )
            } else {
                anyhow::anyhow!("cannot run {}: {error}", self.program)
            }
        })?;
        if !output.status.success() {
            bail!(
                "`{} {}` failed ({}): {}",
                self.program,
                args.join(" "),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// Run (or, with --dry-run, print) an update.
    fn update(&self, args: &[String]) -> anyhow::Result<()> {
        if self.dry_run {
            let quoted: Vec<String> = args.iter().map(|a| shell_quote(a)).collect();
            emit(&format!("would run: {} {}\n", self.program, quoted.join(" ")))?;
            return Ok(());
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        self.query(&refs).map(|_| ())
    }
}

fn shell_quote(text: &str) -> String {
    if text.chars().all(|c| c.is_ascii_alphanumeric() || "-_=./:,".contains(c)) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// The Slurm name of this node: --node, slurmd's SLURMD_NODENAME, else the short hostname.
fn node_name(given: Option<&String>) -> anyhow::Result<String> {
    if let Some(name) = given {
        return Ok(name.clone());
    }
    if let Ok(name) = std::env::var("SLURMD_NODENAME") {
        if !name.is_empty() {
            return Ok(name);
        }
    }
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").context("reading the hostname")?;
    Ok(hostname.trim().split('.').next().unwrap_or("").to_string())
}

pub fn health_check(args: HealthCheckArgs) -> anyhow::Result<i32> {
    if !(args.max_drained_fraction > 0.0 && args.max_drained_fraction <= 1.0) {
        bail!("--max-drained-fraction {} must be above 0 and at most 1", args.max_drained_fraction);
    }
    let scontrol = Scontrol { program: &args.scontrol, dry_run: args.dry_run };
    // Slurm first: on a host that is not a Slurm node there is nothing to drain, and saying so
    // beats running checks whose verdict goes nowhere.
    let name = node_name(args.node.as_ref())?;
    let cluster = parse_nodes(&scontrol.query(&["show", "nodes", "--oneliner"])?);
    let Some(node) = cluster.iter().find(|n| n.name == name) else {
        bail!("Slurm does not know node {name:?} (scontrol show nodes lists {}); give --node NAME", cluster.len());
    };
    let (report, _) = crate::check::evaluate(&check_args(&args.checks)?)?;
    let decision = decide(&report.findings, node, &cluster, args.max_drained_fraction);
    let summary = &report.summary;
    let counts =
        format!("{} fail, {} error, {} warn, {} pass", summary.fail, summary.error, summary.warn, summary.pass);
    match &decision {
        Decision::Healthy => {
            emit(&format!("fabricdoctor slurm health-check: {name} healthy ({counts})\n"))?;
        }
        Decision::Resume => {
            scontrol.update(&["update".into(), format!("NodeName={name}"), "State=RESUME".into()])?;
            emit(&format!(
                "fabricdoctor slurm health-check: {name} passes again ({counts}); resumed (drained by fabricdoctor: {})\n",
                node.reason.as_deref().unwrap_or("")
            ))?;
        }
        Decision::Drain { reason } => {
            scontrol.update(&[
                "update".into(),
                format!("NodeName={name}"),
                "State=DRAIN".into(),
                format!("Reason={reason}"),
            ])?;
            emit(&format!("fabricdoctor slurm health-check: {name} drained: {reason} ({counts})\n"))?;
        }
        Decision::AlreadyDrained { reason } => {
            emit(&format!(
                "fabricdoctor slurm health-check: {name} fails ({reason}); already drained: {}\n",
                node.reason.as_deref().unwrap_or("no reason")
            ))?;
        }
        Decision::Braked { reason, drained, total } => {
            eprintln!(
                "fabricdoctor slurm health-check: {name} fails ({reason}) but is NOT drained: {drained} of {total} nodes \
                 of its partitions are drained already, and one more would pass --max-drained-fraction {}",
                args.max_drained_fraction
            );
        }
    }
    if args.verbose {
        for finding in report.findings.iter().filter(|f| f.verdict >= Verdict::Warn) {
            emit(&format!(
                "  {} {} {}: {} (action: {})\n",
                finding.verdict,
                finding.id,
                finding.subject,
                finding.message,
                finding.action.name()
            ))?;
        }
    }
    Ok(match decision {
        Decision::Healthy | Decision::Resume => exit::SUCCESS,
        _ => exit::FINDINGS,
    })
}

/// Where each of the job's nodes is reached: `--address NAME=IP`, else Slurm's NodeAddr, else DNS.
fn node_addresses(args: &PrologArgs, nodes: &[String]) -> anyhow::Result<Vec<SocketAddr>> {
    let mut given = std::collections::HashMap::new();
    for pair in &args.addresses {
        let (name, ip) = pair.split_once('=').with_context(|| format!("--address {pair}: expected NAME=IP"))?;
        let ip: IpAddr = ip.parse().with_context(|| format!("--address {pair}: {ip:?} is not an IP address"))?;
        given.insert(name.to_string(), ip);
    }
    // Slurm's own view, when every node is not given already and scontrol answers.
    let known: Vec<SlurmNode> = if nodes.iter().all(|n| given.contains_key(n)) {
        Vec::new()
    } else {
        let scontrol = Scontrol { program: &args.scontrol, dry_run: false };
        scontrol.query(&["show", "nodes", "--oneliner"]).map(|text| parse_nodes(&text)).unwrap_or_default()
    };
    nodes
        .iter()
        .map(|name| {
            if let Some(ip) = given.get(name) {
                return Ok(SocketAddr::new(*ip, args.port));
            }
            let host = known.iter().find(|n| n.name == *name).and_then(|n| n.address.clone()).unwrap_or(name.clone());
            (host.as_str(), args.port)
                .to_socket_addrs()
                .ok()
                .and_then(|mut addresses| addresses.next())
                .with_context(|| format!("cannot resolve node {name} ({host}); give --address {name}=IP"))
        })
        .collect()
}

pub fn prolog(args: PrologArgs) -> anyhow::Result<i32> {
    if !(args.min_ratio > 0.0 && args.min_ratio <= 1.0) {
        bail!("--min-ratio {} must be above 0 and at most 1", args.min_ratio);
    }
    let deadline = Instant::now() + args.timeout;
    let list = match &args.nodes {
        Some(list) => list.clone(),
        // slurmd gives a Prolog SLURM_NODELIST (Slurm's prolog_epilog guide); job steps and
        // newer releases also have SLURM_JOB_NODELIST. Slurm 22.05's slurmd sets only the former.
        None => std::env::var("SLURM_JOB_NODELIST").or_else(|_| std::env::var("SLURM_NODELIST")).context(
            "no --nodes, SLURM_JOB_NODELIST or SLURM_NODELIST: the prolog runs under slurmd, or give --nodes",
        )?,
    };
    let nodes = expand(&list).map_err(|e| anyhow::anyhow!("node list {list:?}: {e}"))?;
    let name = node_name(args.node.as_ref())?;
    let Some(me) = nodes.iter().position(|n| *n == name) else {
        bail!("this node ({name}) is not in the job's node list {list}; give --node NAME");
    };
    let job = match &args.job {
        Some(job) => job.clone(),
        None => std::env::var("SLURM_JOB_ID").context("no --job and no SLURM_JOB_ID")?,
    };
    // Listen before the checks, so peers that are quicker find this node at once.
    let listener = (nodes.len() > 1)
        .then(|| {
            TcpListener::bind(("0.0.0.0", args.port))
                .with_context(|| format!("cannot listen on port {} for the job's peers (--port)", args.port))
        })
        .transpose()?;
    let addresses = if nodes.len() > 1 { node_addresses(&args, &nodes)? } else { Vec::new() };

    let (report, _) = crate::check::evaluate(&check_args(&args.checks)?)?;
    let mut failing: Vec<&Finding> = report.findings.iter().filter(|f| f.verdict == Verdict::Fail).collect();
    failing.sort_by(|a, b| a.id.cmp(&b.id).then_with(|| a.subject.cmp(&b.subject)));
    let mut code = exit::SUCCESS;
    if let Some(first) = failing.first() {
        // This node is at fault whatever the pairs show; it still takes part, so its peers'
        // rounds are not left waiting for it.
        emit(&format!(
            "fabricdoctor slurm prolog: {name} fails its checks: {} {}: {} (action: {}{})\n",
            first.id,
            first.subject,
            first.message,
            first.action.name(),
            if failing.len() > 1 { format!("; +{} more", failing.len() - 1) } else { String::new() }
        ))?;
        code = exit::FINDINGS;
    }
    let Some(listener) = listener else {
        if code == exit::SUCCESS {
            emit(&format!("fabricdoctor slurm prolog: {name} passes its checks; one node, no pairs to test\n"))?;
        }
        return Ok(code);
    };
    let config = Preflight {
        job,
        nodes: nodes.clone(),
        addresses,
        me,
        duration: args.duration,
        round_timeout: args.round_timeout,
        deadline,
    };
    let figures = preflight::run(config, listener)?;
    let judgement = judge(&nodes, &figures, &Rules { ratio: args.min_ratio, min_gbps: args.min_gbps });
    let rate = judgement.median_gbps.map_or("no pair measured".to_string(), |g| format!("{g:.2} Gb/s"));
    for (node, evidence) in &judgement.bad_nodes {
        let whose = if *node == me { "this node" } else { "its own prolog fails it" };
        emit(&format!(
            "fabricdoctor slurm prolog: {} is bad ({whose}): {evidence}; the job's healthy rate is {rate}\n",
            nodes[*node]
        ))?;
    }
    for (a, b, evidence) in &judgement.bad_links {
        emit(&format!(
            "fabricdoctor slurm prolog: the link {}-{} is slow or broken ({evidence}); both ends fail; the job's healthy rate is {rate}\n",
            nodes[*a], nodes[*b]
        ))?;
    }
    if judgement.unmeasured > 0 {
        emit(&format!(
            "fabricdoctor slurm prolog: {} pair(s) have no figure (results never arrived before --timeout)\n",
            judgement.unmeasured
        ))?;
    }
    if judgement.fails(me) {
        code = exit::FINDINGS;
    } else if judgement.bad_nodes.is_empty() && judgement.bad_links.is_empty() {
        let pairs = nodes.len() * (nodes.len() - 1) / 2;
        emit(&format!(
            "fabricdoctor slurm prolog: {name}: all {pairs} pairs of the job's {} nodes reach {:.0} % of its healthy rate ({rate})\n",
            nodes.len(),
            args.min_ratio * 100.0
        ))?;
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NODES: &str = "NodeName=gpu01 Arch=x86_64 CoresPerSocket=1 State=IDLE ThreadsPerCore=1 Partitions=train,debug  BootTime=2026-11-27T06:28:10\n\
NodeName=gpu02 Arch=x86_64 State=IDLE+DRAIN Partitions=train Reason=fabricdoctor: pcie.link.width 0000:3b:00.0 (mlx5_1) [root@2026-11-27T10:30:24]\n\
NodeName=gpu03 State=DOWN+DRAIN Partitions=train Reason=bad dimm [admin@2026-11-26T01:00:00]\n\
NodeName=cpu01 State=IDLE Partitions=cpu\n";

    #[test]
    fn scontrol_nodes_are_read_with_their_reasons() {
        let nodes = parse_nodes(NODES);
        assert_eq!(nodes.len(), 4);
        assert_eq!(nodes[0].partitions, ["train", "debug"]);
        assert_eq!(nodes[0].reason, None);
        assert_eq!(nodes[1].reason.as_deref(), Some("fabricdoctor: pcie.link.width 0000:3b:00.0 (mlx5_1)"));
        assert!(nodes[1].drained_by_us() && !nodes[2].drained_by_us() && nodes[2].drained());
        assert!(parse_nodes("garbage\n\n").is_empty());
    }

    #[test]
    fn only_our_drains_are_resumed_and_the_brake_counts_the_partitions() {
        let nodes = parse_nodes(NODES);
        let fail = vec![
            Finding::new("rdma.port.state", Verdict::Fail, "mlx5_2 port 1", "port DOWN"),
            Finding::new("host.memlock", Verdict::Fail, "node", "64 KiB"),
            Finding::new("pcie.mrrs", Verdict::Warn, "0000:19:00.0", "512"),
        ];
        let pass = vec![Finding::new("host.memlock", Verdict::Pass, "node", "unlimited")];
        assert_eq!(decide(&pass, &nodes[0], &nodes, 0.1), Decision::Healthy);
        assert_eq!(decide(&pass, &nodes[1], &nodes, 0.1), Decision::Resume);
        // Someone else's drain stays.
        assert_eq!(decide(&pass, &nodes[2], &nodes, 0.1), Decision::Healthy);
        // gpu01 serves train and debug: 3 nodes, 2 drained already; a third would be 100 %.
        let braked = decide(&fail, &nodes[0], &nodes, 0.5);
        assert_eq!(
            braked,
            Decision::Braked { reason: "fabricdoctor: host.memlock node (+1 more)".into(), drained: 2, total: 3 }
        );
        assert_eq!(
            decide(&fail, &nodes[0], &nodes, 1.0),
            Decision::Drain { reason: "fabricdoctor: host.memlock node (+1 more)".into() }
        );
        // cpu01 is alone in its partition, and nothing there is drained.
        assert!(matches!(decide(&fail, &nodes[3], &nodes, 1.0), Decision::Drain { .. }));
        assert!(matches!(decide(&fail, &nodes[1], &nodes, 1.0), Decision::AlreadyDrained { .. }));
        // Warnings alone drain nothing.
        assert_eq!(decide(&fail[2..], &nodes[0], &nodes, 1.0), Decision::Healthy);
    }

    #[test]
    fn reasons_are_one_line_and_arguments_are_quoted_for_the_dry_run() {
        let finding = Finding::new("pcie.link.width", Verdict::Fail, "0000:3b:00.0 (mlx5_1)\nx", "x8");
        assert_eq!(drain_reason(&[&finding]), "fabricdoctor: pcie.link.width 0000:3b:00.0 (mlx5_1) x");
        assert_eq!(shell_quote("State=DRAIN"), "State=DRAIN");
        assert_eq!(shell_quote("Reason=it's down"), "'Reason=it'\\''s down'");
    }
}
