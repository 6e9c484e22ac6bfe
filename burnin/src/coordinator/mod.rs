//! The coordinator: runs the playbook over the agents — (1) check, (2) loopback, (3) pairwise matrix
//! in circle-method rounds then isolation of suspects, (4) all-to-all, (5) ring AllReduce, (6) soak
//! repeating (3)-(5) until the duration has passed, (7) sign-off — sampling counters after every
//! step. After every step it appends to events.jsonl, rewrites report.json atomically and saves the
//! checkpoint, so `--resume` continues after a crash without repeating a finished step.
//! This module holds the run's state and bookkeeping; each phase is a submodule.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Write as _;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use fabricdoctor_checks::{Finding, Verdict};
use fabricdoctor_report::burnin::{
    BaselineComparison, BurninHost, BurninReport, CollectiveResult, ConcurrentRail, CounterInterval, Event, EventKind,
    HostCheck, HostStatus, LoopbackResult, OpticsPeak, PairMatrix, PairMeasurement, PairStats, PairTestSettings, Phase,
    PhaseStatus, Rail, RailExpectation, Regression, RunInfo, SignOff, SignOffVerdict, Suspect, SuspectKind,
    TimelineMark,
};
use serde::{Deserialize, Serialize};

use crate::auth::{hex, random_bytes, Token};
use crate::client::AgentConnection;
use crate::expectations::{expect, judge_loopback, judge_pairs, Overrides};
use crate::isolation::{isolate, judge, Isolation, PairSample, Pinned, References, Thresholds};
use crate::playbook::Playbook;
use crate::protocol::{CollectiveKind, DataTransport, MeasureSpec, Measured, RailLink, Request, Response};
use crate::schedule::circle_rounds;
use crate::BurninError;
pub use fabricdoctor_report::output::{write_atomically, write_atomically_with};
use fabricdoctor_report::pair_summary;

mod all_rails;
mod check;
mod collectives;
mod congestion;
mod loopback;
mod pairwise;
mod signoff;
mod suspects;
mod workers;

use pairwise::{fold, Direction};
pub use signoff::compare;
use workers::{on_workers, workers_for};

/// A host to burn in: its name and its agent's control address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostSpec {
    pub name: String,
    pub address: String,
    /// The leaf switch or rack it hangs off (hostfile `leaf=`), for the report's grouping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf: Option<String>,
}

impl HostSpec {
    /// A host with no leaf named.
    pub fn new(name: String, address: String) -> HostSpec {
        HostSpec { name, address, leaf: None }
    }
}

/// What the live view shows.
#[derive(Debug, Clone, Default)]
pub struct LiveView {
    pub phase: String,
    pub elapsed_s: f64,
    pub duration_s: f64,
    pub steps_done: u64,
    pub pairs_done: u64,
    pub hosts_ok: usize,
    pub hosts_lost: usize,
    /// The slowest pairs so far: ("node1->node0", Gb/s).
    pub worst: Vec<(String, f64)>,
}

/// Where progress goes (the CLI draws it on a TTY, or ignores it).
pub trait Progress: Send {
    fn update(&mut self, view: &LiveView);
}

/// A progress sink that shows nothing.
#[derive(Debug)]
pub struct Silent;

impl Progress for Silent {
    fn update(&mut self, _view: &LiveView) {}
}

#[derive(Debug)]
pub struct RunOptions {
    pub hosts: Vec<HostSpec>,
    pub token: Token,
    pub duration: Duration,
    pub playbook: Playbook,
    /// The playbook file, or "built-in".
    pub playbook_source: String,
    pub report_dir: PathBuf,
    /// "local", "hosts", "slurm", "ssh".
    pub launcher: String,
    /// Continue the run in report_dir.
    pub resume: bool,
    pub baseline: Option<(String, BurninReport)>,
    /// Set by SIGINT/SIGTERM: finish the current step, write the partial report, stop.
    pub stop: Arc<AtomicBool>,
    /// How long to wait for agents to accept connections (they may still be starting).
    pub connect_wait: Duration,
    /// Pairs measured at once in a round (`None`: all). Hosts sharing one machine (--local) measure
    /// one pair at a time so they do not compete for its CPUs.
    pub concurrency: Option<usize>,
    /// The data path of every measurement (pairs, loopback, collectives).
    pub transport: DataTransport,
    /// `--expect-pair-gbps` and `--expect-latency-us`, and the profile's rate.
    pub expect: Overrides,
    /// `--profile`: the node model the hosts should be.
    pub profile: Option<fabricdoctor_checks::profile::NodeProfile>,
    /// `--cross-rail`: besides each rail with itself, every pair on every two different rails (rail k
    /// of one host with rail j of the other), which crosses the spine of a rail-optimized fabric.
    pub cross_rail: bool,
    /// Run against this simulated fabric instead of agents (`burnin --simulate MODEL`): the hosts
    /// are its hosts, and the run's clock is the fabric's simulated time.
    pub simulation: Option<Arc<crate::simulation::SimulatedFabric>>,
}

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    /// Sign-off passed.
    SignedOff,
    /// Sign-off failed (suspects, lost hosts, errors).
    Findings,
    /// The run could not run or was interrupted before sign-off.
    Incomplete,
}

/// Saved next to report.json after every step.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Checkpoint {
    run_id: String,
    hosts: Vec<HostSpec>,
    duration_s: f64,
    playbook_text: String,
    playbook_source: String,
    launcher: String,
    /// Active seconds before the last interruption.
    elapsed_s: f64,
    /// Steps finished in phases still in progress, and phases finished ("pairwise#2").
    done: BTreeSet<String>,
    /// Hosts of the phase in progress (its schedule depends on them).
    phase_hosts: BTreeMap<String, Vec<usize>>,
    /// Folded pair samples of the pairwise pass awaiting isolation.
    pass_samples: Vec<PassSample>,
    /// The soak iteration to run next.
    iteration: u32,
    /// `--expect-pair-gbps` / `--expect-latency-us` of the run (a resumed run keeps them).
    #[serde(default)]
    expect_pair_gbps: Option<f64>,
    #[serde(default)]
    expect_latency_us: Option<f64>,
    #[serde(default)]
    profile: Option<fabricdoctor_checks::profile::NodeProfile>,
    /// `--cross-rail` of the run.
    #[serde(default)]
    cross_rail: bool,
}

/// One pair of the pairwise pass (both directions folded), kept for isolation.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PassSample {
    a: usize,
    b: usize,
    rail: String,
    bw_gbps: Option<f64>,
    lat_us: Option<f64>,
    failed: bool,
}

pub const CHECKPOINT_FILE: &str = "checkpoint.json";
/// A step's save (or counter sweep) is skipped while the time since the last one is under this many
/// times what it took: bookkeeping stays under about a tenth of the run at any size.
const SAVE_COST_RATIO: u32 = 10;
pub const REPORT_FILE: &str = "report.json";
/// The self-contained HTML page of report.json, rewritten with it.
pub const HTML_FILE: &str = "report.html";
pub const EVENTS_FILE: &str = "events.jsonl";

fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// Per-pair accumulator behind [`PairStats`].
#[derive(Debug, Clone, Default)]
struct Accumulator {
    bw_sum: f64,
    bw_n: u64,
    lat_sum: f64,
    lat_n: u64,
}

/// The error of a request that lost its agent.
#[derive(Debug)]
struct Lost(String);

fn call(agent: &mut AgentConnection, request: &Request, timeout: Duration) -> Result<Response, Lost> {
    agent.request(request, timeout).map_err(|e| Lost(e.to_string()))
}

pub struct Coordinator {
    options: RunOptions,
    report: BurninReport,
    checkpoint: Checkpoint,
    agents: Vec<Option<AgentConnection>>,
    events: File,
    started: Instant,
    /// The simulated fabric's time when this session of the run began.
    simulated_start: f64,
    /// When the last save ended and how long it took.
    last_save: Option<(Instant, Duration)>,
    /// When the last counter sweep (every active host) ended, and what it took.
    last_sweep: Option<(Instant, Duration)>,
    /// Each rail matrix's pair slots by (client, server) name.
    pair_slots: BTreeMap<String, std::collections::HashMap<(String, String), usize>>,
    accumulators: BTreeMap<(usize, usize, String), Accumulator>,
    /// Index in the timeline of each host's last quiet interval (to merge the next quiet one).
    quiet: BTreeMap<String, usize>,
    /// The phase's label for counter intervals ("pairwise#2").
    current_phase: String,
    progress: Box<dyn Progress>,
    pairs_done: u64,
    /// Cumulative counter growth per host (for evidence and sign-off).
    counter_totals: BTreeMap<String, fabricdoctor_report::burnin::CounterCategories>,
}

impl std::fmt::Debug for Coordinator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Coordinator").field("run_id", &self.checkpoint.run_id).finish()
    }
}

/// Read a run directory's checkpoint and report (for `--resume`).
pub fn load_run(dir: &Path) -> Result<(Vec<HostSpec>, Duration, String, String, String), BurninError> {
    let checkpoint = read_checkpoint(dir)?;
    Ok((
        checkpoint.hosts,
        Duration::from_secs_f64(checkpoint.duration_s),
        checkpoint.playbook_text,
        checkpoint.playbook_source,
        checkpoint.launcher,
    ))
}

fn read_checkpoint(dir: &Path) -> Result<Checkpoint, BurninError> {
    let path = dir.join(CHECKPOINT_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        BurninError::Io(format!("cannot read {} (is it a burn-in report directory?)", path.display()), e)
    })?;
    serde_json::from_str(&text)
        .map_err(|e| BurninError::Run(format!("{}: not a burn-in checkpoint: {e}", path.display())))
}

/// Load the run in `report_dir` to go on with it: its report and checkpoint must be of the same run.
/// The run keeps the data path it started with; agents are reached at their new addresses (a
/// `--local` cluster gets new ports), and phases that were running are marked interrupted.
fn resume_run(options: &mut RunOptions) -> Result<(BurninReport, Checkpoint), BurninError> {
    let dir = &options.report_dir;
    let checkpoint = read_checkpoint(dir)?;
    let path = dir.join(REPORT_FILE);
    let text =
        std::fs::read_to_string(&path).map_err(|e| BurninError::Io(format!("cannot read {}", path.display()), e))?;
    let mut report =
        BurninReport::from_json(&text).map_err(|e| BurninError::Run(format!("{}: {e}", path.display())))?;
    pair_summary::restore_beside(&mut report, dir).map_err(BurninError::Run)?;
    if report.run.run_id != checkpoint.run_id {
        return Err(BurninError::Run(format!(
            "{}: run {} but the checkpoint is of run {}",
            path.display(),
            report.run.run_id,
            checkpoint.run_id
        )));
    }
    report.run.resumed += 1;
    options.profile = checkpoint.profile.clone();
    options.cross_rail = checkpoint.cross_rail;
    options.expect = Overrides {
        pair_gbps: checkpoint.expect_pair_gbps,
        pair_latency_us: checkpoint.expect_latency_us,
        profile_rate: options.profile.as_ref().map(|p| (p.nics.rate_gbps, p.name.clone())),
    };
    options.transport =
        if report.run.transport == DataTransport::Verbs.name() { DataTransport::Verbs } else { DataTransport::Tcp };
    report.run.stopped = None;
    for (host, spec) in report.hosts.iter_mut().zip(&options.hosts) {
        host.address = spec.address.clone();
    }
    for phase in report.phases.iter_mut().filter(|p| p.status == PhaseStatus::Running) {
        phase.status = PhaseStatus::Interrupted;
    }
    Ok((report, checkpoint))
}

/// The report of a new run: its settings, and every host as given, not yet reached.
fn new_report(options: &RunOptions) -> Result<BurninReport, BurninError> {
    let pairwise = &options.playbook.pairwise;
    let traffic = &options.playbook.traffic;
    let run = RunInfo {
        run_id: hex(&random_bytes::<8>()?),
        started_at: now_rfc3339(),
        finished_at: None,
        duration_s: options.duration.as_secs_f64(),
        playbook: options.playbook.name.clone(),
        playbook_source: options.playbook_source.clone(),
        transport: options.transport.name().into(),
        launcher: options.launcher.clone(),
        complete: false,
        stopped: None,
        steps_done: 0,
        resumed: 0,
        pair_test: Some(PairTestSettings {
            message_bytes: pairwise.message_bytes,
            queue_pairs: pairwise.queue_pairs,
            tx_depth: pairwise.tx_depth,
            validate: pairwise.validate,
            latency_bytes: pairwise.latency_bytes,
            traffic_class: traffic.traffic_class,
            service_level: traffic.service_level,
            gid_index: traffic.gid_index,
        }),
    };
    let hosts = options.hosts.iter().map(|h| BurninHost::new(&h.name, &h.address, h.leaf.clone())).collect();
    Ok(BurninReport::new(run, hosts))
}

/// The checkpoint of a new run: what `--resume` needs to go on with it, nothing done yet.
fn new_checkpoint(options: &RunOptions, run_id: &str) -> Checkpoint {
    Checkpoint {
        run_id: run_id.to_string(),
        hosts: options.hosts.clone(),
        duration_s: options.duration.as_secs_f64(),
        playbook_text: toml::to_string(&options.playbook).unwrap_or_default(),
        playbook_source: options.playbook_source.clone(),
        launcher: options.launcher.clone(),
        elapsed_s: 0.0,
        done: BTreeSet::new(),
        phase_hosts: BTreeMap::new(),
        pass_samples: Vec::new(),
        iteration: 0,
        expect_pair_gbps: options.expect.pair_gbps,
        expect_latency_us: options.expect.pair_latency_us,
        profile: options.profile.clone(),
        cross_rail: options.cross_rail,
    }
}

/// Each host's number by its name (a lookup per pair, at a million pairs, must not be a search).
fn host_index(report: &BurninReport) -> std::collections::HashMap<String, usize> {
    report.hosts.iter().enumerate().map(|(i, h)| (h.name.clone(), i)).collect()
}

/// The pair accumulators behind the report's matrices, rebuilt from the means and sample counts a
/// resumed report holds (empty for a new run).
fn accumulators_from(report: &BurninReport) -> BTreeMap<(usize, usize, String), Accumulator> {
    let mut accumulators = BTreeMap::new();
    let names = host_index(report);
    let index = |name: &str| names.get(name).copied();
    for matrix in &report.pairs {
        for pair in &matrix.pairs {
            if let (Some(c), Some(s)) = (index(&pair.client), index(&pair.server)) {
                let bw_n = if pair.bw_mean_gbps.is_some() { pair.samples } else { 0 };
                let lat_n = if pair.lat_mean_us.is_some() { pair.samples } else { 0 };
                accumulators.insert(
                    (c, s, pair.rail.clone()),
                    Accumulator {
                        bw_sum: pair.bw_mean_gbps.unwrap_or(0.0) * bw_n as f64,
                        bw_n,
                        lat_sum: pair.lat_mean_us.unwrap_or(0.0) * lat_n as f64,
                        lat_n,
                    },
                );
            }
        }
    }
    accumulators
}

impl Coordinator {
    /// How each pair and each loopback is measured: the playbook's test over the run's transport.
    fn measure_spec(&self) -> MeasureSpec {
        MeasureSpec { transport: self.options.transport, ..self.options.playbook.measure_spec(self.options.duration) }
    }

    /// Prepare a new run, or load the one in `report_dir` with `resume`.
    pub fn new(mut options: RunOptions, progress: Box<dyn Progress>) -> Result<Coordinator, BurninError> {
        let dir = &options.report_dir;
        std::fs::create_dir_all(dir)
            .map_err(|e| BurninError::Io(format!("cannot create the report directory {}", dir.display()), e))?;
        let (report, checkpoint) = if options.resume {
            resume_run(&mut options)?
        } else {
            let report = new_report(&options)?;
            let checkpoint = new_checkpoint(&options, &report.run.run_id);
            (report, checkpoint)
        };
        let events_path = options.report_dir.join(EVENTS_FILE);
        let events = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&events_path)
            .map_err(|e| BurninError::Io(format!("cannot open {}", events_path.display()), e))?;
        if options.playbook.pairwise.pairing == crate::playbook::Pairing::Leaf {
            let unplaced: Vec<&str> =
                report.hosts.iter().filter(|h| h.leaf.is_none()).map(|h| h.name.as_str()).take(5).collect();
            if !unplaced.is_empty() {
                return Err(BurninError::Run(format!(
                    "the playbook pairs by leaf (pairwise.pairing = \"leaf\") but no leaf is named for {} (a hostfile \
                     line names its hosts' leaf with leaf=NAME)",
                    unplaced.join(", ")
                )));
            }
        }
        let accumulators = accumulators_from(&report);
        let mut counter_totals: BTreeMap<String, fabricdoctor_report::burnin::CounterCategories> = BTreeMap::new();
        for interval in &report.counters.intervals {
            counter_totals.entry(interval.host.clone()).or_default().add(&interval.totals);
        }
        if let Some(fabric) = options.simulation.as_ref().filter(|_| options.resume) {
            // The model's faults keep their times across a resume (a host that dies at 700 s of the
            // run dies then, not 700 s after the resume): its clocks go on from the stopped run's.
            fabric.idle(checkpoint.elapsed_s - fabric.now());
        }
        let agents = (0..report.hosts.len()).map(|_| None).collect();
        Ok(Coordinator {
            report,
            checkpoint,
            agents,
            events,
            started: Instant::now(),
            simulated_start: options.simulation.as_ref().map_or(0.0, |fabric| fabric.now()),
            last_save: None,
            last_sweep: None,
            pair_slots: BTreeMap::new(),
            options,
            accumulators,
            quiet: BTreeMap::new(),
            current_phase: String::new(),
            progress,
            pairs_done: 0,
            counter_totals,
        })
    }

    /// Seconds the run has been active, across resumes: wall time, or the simulated fabric's time.
    fn elapsed_s(&self) -> f64 {
        let this_session = match &self.options.simulation {
            Some(fabric) => fabric.now() - self.simulated_start,
            None => self.started.elapsed().as_secs_f64(),
        };
        self.checkpoint.elapsed_s + this_session
    }

    fn event(&mut self, kind: EventKind) {
        let event = Event { at: now_rfc3339(), offset_s: self.elapsed_s(), kind };
        if let Ok(mut line) = serde_json::to_vec(&event) {
            line.push(b'\n');
            // A full disk must not stop the burn-in; the report says what the events would have.
            let _ = self.events.write_all(&line).and_then(|_| self.events.flush());
        }
    }

    /// Rewrite report.json, then the checkpoint (a crash between the two repeats one step at most).
    fn save(&mut self) -> Result<(), BurninError> {
        let began = Instant::now();
        let saved = self.write_all();
        self.last_save = Some((Instant::now(), began.elapsed()));
        saved
    }

    fn write_all(&mut self) -> Result<(), BurninError> {
        self.report.generated_at = now_rfc3339();
        self.rebuild_matrices();
        let dir = self.options.report_dir.clone();
        // Above PAIRS_IN_FULL_UP_TO hosts report.json carries each rail's outliers and summary, and
        // every pair goes to the table beside it; the run keeps every pair in memory for sign-off.
        let full_pairs = if pair_summary::summarised(self.report.hosts.len()) {
            write_atomically_with(&dir.join(pair_summary::PAIR_TABLE_FILE), |out| {
                for pair in self.report.pairs.iter().flat_map(|m| m.pairs.iter()) {
                    serde_json::to_writer(&mut *out, pair)?;
                    out.write_all(b"\n")?;
                }
                Ok(())
            })?;
            let isolation = &self.options.playbook.isolation;
            let rule = pair_summary::OutlierRule {
                bandwidth_fraction: isolation.bandwidth_fraction,
                latency_multiple: isolation.latency_multiple,
            };
            let summaries =
                self.report.pairs.iter().map(|m| pair_summary::summarise(m, &self.report.hosts, rule)).collect();
            Some(std::mem::replace(&mut self.report.pairs, summaries))
        } else {
            None
        };
        let all_findings = self.trim_findings_for_writing();
        let written = write_atomically_with(&dir.join(REPORT_FILE), |out| {
            serde_json::to_writer_pretty(out, &self.report).map_err(std::io::Error::from)
        })
        .and_then(|()| {
            // The page renders the same data as report.json, so an operator can open either mid-run.
            let page = fabricdoctor_report::html::burnin_report_page(&self.report);
            write_atomically(&dir.join(HTML_FILE), page.as_bytes())
        });
        if let Some(full_pairs) = full_pairs {
            self.report.pairs = full_pairs;
        }
        if let Some(all_findings) = all_findings {
            self.report.findings = all_findings;
        }
        written?;
        let mut checkpoint = self.checkpoint.clone();
        checkpoint.elapsed_s = self.elapsed_s();
        let checkpoint = serde_json::to_vec(&checkpoint).map_err(|e| BurninError::Run(e.to_string()))?;
        write_atomically(&self.options.report_dir.join(CHECKPOINT_FILE), &checkpoint)?;
        self.show();
        Ok(())
    }

    /// Above 128 hosts, put the findings as the written reports keep them in place
    /// ([`pair_summary::trim_findings`]) and return every finding to restore after writing.
    fn trim_findings_for_writing(&mut self) -> Option<Vec<Finding>> {
        if !pair_summary::summarised(self.report.hosts.len()) {
            return None;
        }
        let trimmed = pair_summary::trim_findings(&self.report.findings);
        Some(std::mem::replace(&mut self.report.findings, trimmed))
    }

    fn show(&mut self) {
        let mut worst: Vec<(String, f64)> = self
            .report
            .pairs
            .iter()
            .flat_map(|m| m.pairs.iter())
            .filter_map(|p| p.bw_mean_gbps.map(|bw| (format!("{}->{}", p.client, p.server), bw)))
            .collect();
        worst.sort_by(|a, b| a.1.total_cmp(&b.1));
        worst.truncate(3);
        let view = LiveView {
            phase: self.current_phase.clone(),
            elapsed_s: self.elapsed_s(),
            duration_s: self.options.duration.as_secs_f64(),
            steps_done: self.report.run.steps_done,
            pairs_done: self.pairs_done,
            hosts_ok: self.report.hosts.iter().filter(|h| h.status == HostStatus::Ok).count(),
            hosts_lost: self.report.hosts.iter().filter(|h| h.status == HostStatus::Lost).count(),
            worst,
        };
        self.progress.update(&view);
    }

    fn stopping(&self) -> bool {
        self.options.stop.load(Ordering::Relaxed)
    }

    /// The rounds of pass `iteration` over `hosts` (host numbers): positions into `hosts`, by the
    /// playbook's pairing. By leaf, each pass shifts who meets whom across leaves.
    fn pass_rounds(&self, hosts: &[usize], iteration: u32) -> Vec<Vec<(usize, usize)>> {
        match self.options.playbook.pairwise.pairing {
            crate::playbook::Pairing::All => circle_rounds(hosts.len()),
            crate::playbook::Pairing::Leaf => {
                let leaves: Vec<&str> =
                    hosts.iter().map(|&h| self.report.hosts[h].leaf.as_deref().unwrap_or("")).collect();
                crate::schedule::leaf_rounds(&leaves, iteration as usize)
            }
        }
    }

    fn active(&self) -> Vec<usize> {
        (0..self.report.hosts.len())
            .filter(|&i| self.report.hosts[i].status == HostStatus::Ok && self.agents[i].is_some())
            .collect()
    }

    fn name(&self, host: usize) -> String {
        self.report.hosts[host].name.clone()
    }

    fn add_finding(&mut self, finding: Finding) {
        let duplicate = self
            .report
            .findings
            .iter()
            .any(|f| f.id == finding.id && f.subject == finding.subject && f.verdict == finding.verdict);
        if !duplicate {
            self.event(EventKind::Finding { finding: Box::new(finding.clone()) });
            self.report.findings.push(finding);
        }
    }

    fn set_status(&mut self, host: usize, status: HostStatus, reason: String) {
        let at = now_rfc3339();
        let entry = &mut self.report.hosts[host];
        if entry.status == status {
            return;
        }
        entry.status = status;
        entry.status_at = Some(at.clone());
        entry.reason = Some(reason.clone());
        let last_step = entry.last_step.clone();
        let name = entry.name.clone();
        self.agents[host] = None;
        self.event(EventKind::HostStatus {
            host: name.clone(),
            status,
            reason: reason.clone(),
            last_step: last_step.clone(),
        });
        let (id, message) = match status {
            HostStatus::Lost => ("burnin.host.lost", format!("agent lost: {reason}")),
            HostStatus::Excluded => ("burnin.host.excluded", format!("excluded: {reason}")),
            HostStatus::Ok => return,
        };
        let finding = Finding::new(id, Verdict::Fail, name, message)
            .evidence(format!("at {at}, last step: {}", last_step.unwrap_or_else(|| "none".into())));
        self.add_finding(finding);
    }

    fn lose(&mut self, lost: Vec<(usize, String)>) {
        for (host, reason) in lost {
            self.set_status(host, HostStatus::Lost, reason);
        }
    }

    fn touch(&mut self, hosts: &[usize], step: &str) {
        for &host in hosts {
            self.report.hosts[host].last_step = Some(step.to_string());
        }
    }

    /// Connect to every host that is neither excluded nor lost.
    fn connect(&mut self) -> Result<(), BurninError> {
        let wait = self.options.connect_wait;
        let token = self.options.token.clone();
        let mut targets: Vec<(usize, String)> = (0..self.report.hosts.len())
            .filter(|&i| self.report.hosts[i].status == HostStatus::Ok)
            .map(|i| (i, self.report.hosts[i].address.clone()))
            .collect();
        let simulation = self.options.simulation.as_ref();
        let workers = workers_for(targets.len(), simulation.is_some());
        let connections = on_workers(&mut targets, workers, |(host, address)| match simulation {
            Some(fabric) => Ok(AgentConnection::simulated(Arc::clone(fabric), *host)),
            None => AgentConnection::connect(address, &token, wait),
        });
        let results: Vec<(usize, Result<AgentConnection, BurninError>)> = targets
            .iter()
            .zip(connections)
            .map(|((host, _), connection)| {
                (*host, connection.unwrap_or_else(|| Err(BurninError::Run("connect thread panicked".into()))))
            })
            .collect();
        let mut refused = Vec::new();
        for (host, result) in results {
            match result {
                Ok(agent) => {
                    let entry = &mut self.report.hosts[host];
                    entry.hostname = Some(agent.hostname.clone());
                    entry.agent_version = Some(agent.tool_version.clone());
                    entry.rails = agent
                        .rails
                        .iter()
                        .map(|r| Rail {
                            name: r.name.clone(),
                            address: r.address.to_string(),
                            link_gbps: r.link.as_ref().and_then(|l| l.gbps),
                            link: r.link.as_ref().map(|l| l.detail.clone()),
                        })
                        .collect();
                    // A run this agent announced it would refuse is said once, here, by the field
                    // and the agent's limit, instead of as a failed measurement of every pair.
                    if let Err(reason) = agent.limits.admit(&self.measure_spec()) {
                        self.agents[host] = Some(agent);
                        self.set_status(host, HostStatus::Excluded, format!("beyond the agent's limits: {reason}"));
                        continue;
                    }
                    self.agents[host] = Some(agent);
                }
                Err(error) => {
                    if matches!(error, BurninError::Auth(_)) {
                        refused.push(error.to_string());
                    }
                    self.set_status(host, HostStatus::Lost, format!("cannot connect: {error}"));
                }
            }
        }
        if self.active().is_empty() {
            return Err(BurninError::Run(if refused.is_empty() {
                "no agent could be reached".into()
            } else {
                format!("every agent refused us: {}", refused.join("; "))
            }));
        }
        Ok(())
    }

    fn step_timeout(&self) -> Duration {
        Duration::from_secs(self.options.playbook.policy.step_timeout_s)
    }

    /// What each rail should measure, from the options, the playbook and the link rates the agents
    /// announced. A playbook rail that is not a rail of this run is an error naming it.
    fn set_expectations(&mut self) -> Result<(), BurninError> {
        let rails = self.rails();
        let section = &self.options.playbook.expectations;
        if let Some(profile) = &self.options.profile {
            let outside: Vec<&String> = rails.iter().filter(|rail| !profile.rails.contains(rail)).collect();
            if !profile.rails.is_empty() && !outside.is_empty() {
                return Err(BurninError::Playbook(format!(
                    "profile {}: rails = [{}] has no rail {} of this run",
                    profile.name,
                    profile.rails.join(", "),
                    outside.iter().map(|r| format!("{r:?}")).collect::<Vec<_>>().join(", ")
                )));
            }
        }
        if let Some(unknown) = section.rails.keys().find(|name| !rails.contains(name)) {
            return Err(BurninError::Playbook(format!(
                "{}: [expectations.rails.{unknown}]: no rail {unknown:?} in this run (rails: {})",
                self.options.playbook_source,
                rails.join(", ")
            )));
        }
        self.report.expectations = rails
            .iter()
            .map(|rail| {
                let links: Vec<(String, Option<RailLink>)> = self
                    .active()
                    .into_iter()
                    .map(|host| {
                        let entry = &self.report.hosts[host];
                        let link = entry
                            .rails
                            .iter()
                            .find(|r| &r.name == rail)
                            .and_then(|r| r.link.clone().map(|detail| RailLink { gbps: r.link_gbps, detail }));
                        (entry.name.clone(), link)
                    })
                    .collect();
                expect(rail, &links, self.options.transport, section, &self.options.expect)
            })
            .collect();
        // Cross-rail links are judged against their two rails' figures, in both directions.
        let cross: Vec<RailExpectation> = self
            .pair_rails()
            .into_iter()
            .filter(|(first, second)| first != second)
            .filter_map(|(first, second)| {
                let of = |rail: &str| self.report.expectations.iter().find(|e| e.rail == rail);
                Some(crate::expectations::expect_cross(of(&first)?, of(&second)?, section.cross_rail_fraction))
            })
            .collect();
        self.report.expectations.extend(cross);
        Ok(())
    }

    /// The rails of each pairing, (rail of a round's first host, rail of its second): every rail with
    /// itself (rail-aware pairing: in a rail-optimized fabric rail k's NICs meet at rail k's leaf
    /// switches), then with `--cross-rail` every ordered pair of two different rails, so each two
    /// hosts meet on every combination of their rails.
    fn pair_rails(&self) -> Vec<(String, String)> {
        let rails = self.rails();
        let mut pairings: Vec<(String, String)> = rails.iter().map(|r| (r.clone(), r.clone())).collect();
        if self.options.cross_rail {
            for first in &rails {
                pairings.extend(rails.iter().filter(|second| *second != first).map(|s| (first.clone(), s.clone())));
            }
        }
        pairings
    }

    /// Rails every active host has, in the first host's order.
    fn rails(&self) -> Vec<String> {
        let active = self.active();
        let Some(first) = active.first().and_then(|&i| self.agents[i].as_ref()) else {
            return Vec::new();
        };
        first
            .rails
            .iter()
            .map(|r| r.name.clone())
            .filter(|name| {
                active.iter().all(|&i| self.agents[i].as_ref().is_some_and(|a| a.rails.iter().any(|r| &r.name == name)))
            })
            .collect()
    }

    fn begin_phase(&mut self, name: &str, iteration: u32, steps_total: u64) {
        self.current_phase = format!("{name}#{iteration}");
        let offset = self.elapsed_s();
        if let Some(phase) = self.report.phases.iter_mut().rev().find(|p| p.name == name && p.iteration == iteration) {
            // Resumed: the phase goes on.
            phase.status = PhaseStatus::Running;
        } else {
            self.report.phases.push(Phase {
                name: name.into(),
                iteration,
                started_at: now_rfc3339(),
                start_offset_s: offset,
                ended_at: None,
                end_offset_s: None,
                status: PhaseStatus::Running,
                steps_done: 0,
                steps_total,
            });
            self.report
                .counters
                .marks
                .push(TimelineMark { offset_s: offset, label: format!("{name}#{iteration} start") });
        }
        self.event(EventKind::PhaseStarted { phase: name.into(), iteration, steps_total });
    }

    fn end_phase(&mut self, name: &str, iteration: u32, status: PhaseStatus) -> Result<(), BurninError> {
        let offset = self.elapsed_s();
        if let Some(phase) = self.report.phases.iter_mut().rev().find(|p| p.name == name && p.iteration == iteration) {
            phase.status = status;
            phase.ended_at = Some(now_rfc3339());
            phase.end_offset_s = Some(offset);
        }
        let key = format!("{name}#{iteration}");
        if status == PhaseStatus::Done || status == PhaseStatus::Skipped {
            // The phase is done: its step keys collapse into the phase key (the checkpoint stays small).
            let prefix = format!("{key}/");
            self.checkpoint.done.retain(|k| !k.starts_with(&prefix));
            self.checkpoint.done.insert(key.clone());
            self.checkpoint.phase_hosts.remove(&key);
        }
        if status == PhaseStatus::Done {
            self.sample_counters();
        }
        self.event(EventKind::PhaseFinished { phase: name.into(), iteration, status });
        self.save()
    }

    fn phase_done(&self, name: &str, iteration: u32) -> bool {
        self.checkpoint.done.contains(&format!("{name}#{iteration}"))
    }

    fn step_done(&self, key: &str) -> bool {
        self.checkpoint.done.contains(key)
    }

    /// A step finished: count it, record it, sample counters, save.
    fn finish_step(
        &mut self,
        key: String,
        phase: &str,
        started: Instant,
        detail: StepDetail,
    ) -> Result<(), BurninError> {
        self.checkpoint.done.insert(key.clone());
        self.report.run.steps_done += 1;
        if let Some(current) = self.report.phases.last_mut() {
            current.steps_done += 1;
        }
        // The checkpoint first: a crash after it and before the event loses an event line, never
        // repeats a step (the report already holds its results). At thousands of hosts a save
        // (report, page, checkpoint: all pairs) takes longer than a step; then it is skipped while
        // saving would take more than a tenth of the run, and a crash repeats at most the steps
        // since the last save (events.jsonl, append-only, still has every step).
        let due = self.save_due();
        if due {
            self.save()?;
        }
        let StepDetail { measurements, collective, loopback, rounds } = detail;
        self.event(EventKind::Step {
            step: key,
            phase: phase.into(),
            measurements,
            collective: collective.map(Box::new),
            loopback: loopback.map(Box::new),
            rounds,
            seconds: started.elapsed().as_secs_f64(),
        });
        // Counters after every step, unless a sweep of every host costs more than a tenth of the
        // time since the last one: at 4,096 hosts a sweep per step of a per-host phase (check,
        // congestion pulses) was 16 million requests. Phase ends always sweep, so growth is
        // attributed to the phase it happened in.
        if self.last_sweep.is_none_or(|(ended, took)| ended.elapsed() >= took * SAVE_COST_RATIO) {
            self.sample_counters();
        }
        if due {
            self.save()?;
        }
        Ok(())
    }

    /// Whether a step's save is due: always, unless the last save took more than a tenth of the
    /// time since it ended.
    fn save_due(&self) -> bool {
        self.last_save.is_none_or(|(ended, took)| ended.elapsed() >= took * SAVE_COST_RATIO)
    }

    /// Sample every active host's counters; each answer is one interval of the timeline.
    fn sample_counters(&mut self) {
        let began = Instant::now();
        self.sweep_counters();
        self.last_sweep = Some((Instant::now(), began.elapsed()));
    }

    fn sweep_counters(&mut self) {
        let active = self.active();
        let timeout = self.step_timeout();
        let answers = self.on_each(&active, |_, agent| call(agent, &Request::SampleCounters {}, timeout));
        let mut lost = Vec::new();
        let now = self.elapsed_s();
        for (host, answer) in answers {
            self.record_counters(host, answer, now, &mut lost);
        }
        self.lose(lost);
    }

    /// One host's counter sample into the timeline (merging quiet intervals), the run's totals and
    /// the findings; `now` is when it was taken (seconds into the run).
    fn record_counters(
        &mut self,
        host: usize,
        answer: Result<Response, Lost>,
        now: f64,
        lost: &mut Vec<(usize, String)>,
    ) {
        match answer {
            Ok(Response::Counters { interval_s: Some(interval_s), totals, deltas, findings, optics, .. }) => {
                let name = self.name(host);
                for module in optics {
                    let reading = OpticsPeak {
                        host: name.clone(),
                        netdev: module.netdev,
                        module: module.module,
                        peak_temperature_c: module.temperature_c,
                        phase: self.current_phase.clone(),
                        offset_s: now,
                    };
                    OpticsPeak::record(&mut self.report.optics, reading);
                }
                self.counter_totals.entry(name.clone()).or_default().add(&totals);
                let quiet = totals.total() == 0 && deltas.is_empty();
                // `quiet` holds a host's index only while its latest interval is that quiet one:
                // every interval pushed below either sets it or removes it. (A scan of the later
                // intervals for the host was most of a 1,024-host run's CPU.)
                let merged = quiet && self.quiet.contains_key(&name);
                let interval = CounterInterval {
                    host: name.clone(),
                    phase: self.current_phase.clone(),
                    start_offset_s: (now - interval_s).max(0.0),
                    end_offset_s: now,
                    end_at: now_rfc3339(),
                    totals,
                    deltas,
                    merged: 1,
                };
                // Every interval that grew, and the first of a quiet stretch, is an event; the
                // report merges the rest of the stretch into that one (its end and count). An event
                // per host per step would be millions of lines at a thousand hosts.
                if !merged {
                    self.event(EventKind::CounterInterval { interval: Box::new(interval.clone()) });
                }
                if merged {
                    if let Some(&index) = self.quiet.get(&name) {
                        let entry = &mut self.report.counters.intervals[index];
                        entry.end_offset_s = now;
                        entry.end_at = now_rfc3339();
                        entry.merged += 1;
                    }
                } else {
                    self.report.counters.intervals.push(interval);
                    if quiet {
                        self.quiet.insert(name.clone(), self.report.counters.intervals.len() - 1);
                    } else {
                        self.quiet.remove(&name);
                    }
                }
                for mut finding in findings {
                    finding.subject = format!("{name}: {}", finding.subject);
                    self.add_finding(finding);
                }
            }
            // The first sample of a connection is the baseline of the next interval.
            Ok(Response::Counters { interval_s: None, .. }) => {}
            Ok(Response::Error { reason }) => {
                let finding = Finding::new("burnin.counters.unreadable", Verdict::Warn, self.name(host), reason);
                self.add_finding(finding);
            }
            Ok(other) => lost.push((host, format!("unexpected answer {other:?}"))),
            Err(Lost(reason)) => lost.push((host, reason)),
        }
    }

    /// Run `work` on each of `hosts`' agents at once (see workers.rs for what carries the calls).
    fn on_each<T: Send>(
        &mut self,
        hosts: &[usize],
        work: impl Fn(usize, &mut AgentConnection) -> T + Sync,
    ) -> Vec<(usize, T)> {
        let simulated = self.options.simulation.is_some();
        self.on_each_with(hosts, simulated, work)
    }

    /// `on_each` for calls that wait for each other, the ranks of one collective: every call is in
    /// flight together, simulated or not (a simulated rank waits for the others to join too).
    fn on_each_together<T: Send>(
        &mut self,
        hosts: &[usize],
        work: impl Fn(usize, &mut AgentConnection) -> T + Sync,
    ) -> Vec<(usize, T)> {
        self.on_each_with(hosts, false, work)
    }

    fn on_each_with<T: Send>(
        &mut self,
        hosts: &[usize],
        share_the_cpus: bool,
        work: impl Fn(usize, &mut AgentConnection) -> T + Sync,
    ) -> Vec<(usize, T)> {
        let mut taken: Vec<(usize, AgentConnection)> =
            hosts.iter().filter_map(|&h| self.agents[h].take().map(|a| (h, a))).collect();
        let workers = workers_for(taken.len(), share_the_cpus);
        let answers = on_workers(&mut taken, workers, |(host, agent)| work(*host, agent));
        let results: Vec<(usize, T)> =
            taken.iter().zip(answers).filter_map(|((host, _), answer)| answer.map(|t| (*host, t))).collect();
        for (h, agent) in taken {
            self.agents[h] = Some(agent);
        }
        results
    }

    /// Run the whole protocol (or what is left of it).
    pub fn run(&mut self) -> Result<RunEnd, BurninError> {
        if self.options.resume {
            let steps_done = self.report.run.steps_done;
            self.event(EventKind::RunResumed { run_id: self.report.run.run_id.clone(), steps_done });
        } else {
            self.event(EventKind::RunStarted {
                run_id: self.report.run.run_id.clone(),
                hosts: self.report.hosts.iter().map(|h| h.name.clone()).collect(),
                duration_s: self.options.duration.as_secs_f64(),
                playbook: self.options.playbook.name.clone(),
            });
        }
        self.save()?;
        if let Err(error) = self.connect().and_then(|()| self.set_expectations()) {
            self.report.run.stopped = Some(error.to_string());
            self.signoff(false)?;
            return Ok(RunEnd::Incomplete);
        }
        self.current_phase = "start".into();
        self.sample_counters();
        let finished = self.protocol()?;
        self.signoff(finished)?;
        Ok(match self.report.signoff.verdict {
            SignOffVerdict::Pass => RunEnd::SignedOff,
            SignOffVerdict::Fail => RunEnd::Findings,
            SignOffVerdict::Incomplete => RunEnd::Incomplete,
        })
    }

    /// Why the run must stop now, if it must.
    fn must_stop(&mut self) -> Option<String> {
        if self.stopping() {
            return Some("interrupted by a signal (resume with --resume)".into());
        }
        let total = self.report.hosts.len().max(1);
        let lost = self.report.hosts.iter().filter(|h| h.status == HostStatus::Lost).count();
        if lost as f64 / total as f64 > self.options.playbook.policy.stop_when_lost_fraction {
            return Some(format!("{lost} of {total} hosts lost (playbook policy.stop_when_lost_fraction)"));
        }
        if self.active().is_empty() {
            return Some("no host left".into());
        }
        None
    }

    /// Phases (1)-(6); false when the run stopped early.
    fn protocol(&mut self) -> Result<bool, BurninError> {
        let playbook = self.options.playbook.clone();
        if playbook.check.enabled && !self.phase_done("check", 0) {
            self.check_phase()?;
        }
        if let Some(reason) = self.must_stop() {
            return self.stop(reason);
        }
        if playbook.loopback.enabled && !self.phase_done("loopback", 0) {
            self.loopback_phase()?;
        }
        loop {
            let iteration = self.checkpoint.iteration;
            if iteration > 0 {
                if !playbook.soak.enabled || self.elapsed_s() >= self.options.duration.as_secs_f64() {
                    break;
                }
                self.idle(playbook.soak.interval_s);
            }
            if let Some(reason) = self.must_stop() {
                return self.stop(reason);
            }
            if playbook.pairwise.enabled
                && !self.phase_done("pairwise", iteration)
                && !self.pairwise_phase(iteration)?
            {
                let reason = self.must_stop().unwrap_or_else(|| "stopped".into());
                return self.stop(reason);
            }
            if playbook.pairwise.enabled && !self.phase_done("isolation", iteration) {
                self.isolation_phase(iteration)?;
            }
            if playbook.pairwise.enabled
                && playbook.all_rails.enabled
                && !self.phase_done("all-rails", iteration)
                && !self.all_rails_phase(iteration)?
            {
                let reason = self.must_stop().unwrap_or_else(|| "stopped".into());
                return self.stop(reason);
            }
            // The congestion pulse runs once, after the first pass has shown every link healthy on
            // its own.
            if iteration == 0
                && playbook.congestion.enabled
                && !self.phase_done("congestion", 0)
                && !self.congestion_phase()?
            {
                let reason = self.must_stop().unwrap_or_else(|| "stopped".into());
                return self.stop(reason);
            }
            for (kind, enabled) in [
                (CollectiveKind::Alltoall, playbook.alltoall.enabled),
                (CollectiveKind::Allreduce, playbook.allreduce.enabled),
            ] {
                if let Some(reason) = self.must_stop() {
                    return self.stop(reason);
                }
                if enabled && !self.phase_done(kind.name(), iteration) {
                    self.collective_phase(kind, iteration)?;
                }
            }
            self.checkpoint.iteration = iteration + 1;
            self.save()?;
            if !playbook.soak.enabled {
                break;
            }
        }
        Ok(true)
    }

    fn stop(&mut self, reason: String) -> Result<bool, BurninError> {
        for phase in self.report.phases.iter_mut().filter(|p| p.status == PhaseStatus::Running) {
            phase.status = PhaseStatus::Interrupted;
        }
        self.report.run.stopped = Some(reason);
        self.save()?;
        Ok(false)
    }

    /// Wait between soak iterations, sampling counters each second-ish, until `seconds` pass or a stop.
    fn idle(&mut self, seconds: f64) {
        match &self.options.simulation {
            Some(fabric) => fabric.idle(seconds),
            None => {
                let until = Instant::now() + Duration::from_secs_f64(seconds);
                while Instant::now() < until && !self.stopping() {
                    std::thread::sleep(Duration::from_millis(50).min(until.saturating_duration_since(Instant::now())));
                }
            }
        }
        if seconds > 0.0 {
            self.current_phase = format!("soak#{}", self.checkpoint.iteration);
            self.sample_counters();
        }
    }

    pub fn report(&self) -> &BurninReport {
        &self.report
    }
}

#[derive(Debug, Default)]
struct StepDetail {
    measurements: Vec<PairMeasurement>,
    collective: Option<CollectiveResult>,
    loopback: Option<LoopbackResult>,
    /// Isolation's retest rounds.
    rounds: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(bw: Option<f64>, lat: Option<f64>, error: Option<&str>, validation_errors: u64) -> Direction {
        Direction {
            client: 0,
            server: 1,
            rail: "rail0".into(),
            measured: Measured {
                bw_gbps: bw,
                lat_us: lat,
                lat_p99_us: None,
                validation_errors,
                error: error.map(str::to_string),
                ..Measured::default()
            },
        }
    }

    #[test]
    fn both_directions_fold_into_the_worse() {
        let folded = fold(&[sample(Some(90.0), Some(3.0), None, 0), sample(Some(9.0), Some(2.0), None, 0)]);
        assert_eq!(folded, PairSample { bw_gbps: Some(9.0), lat_us: Some(3.0), failed: false });
        assert!(fold(&[sample(Some(90.0), Some(3.0), None, 7)]).failed, "data errors fail the pair");
        assert!(fold(&[sample(None, Some(3.0), Some("bandwidth: timeout"), 0)]).failed);
        assert!(fold(&[]).failed, "no measurement is no pass");
    }

    #[test]
    fn the_baseline_comparison_flags_only_what_got_worse() {
        // The small example report (report::burnin's test fixture).
        let baseline =
            BurninReport::from_json(include_str!("../../../tests/fixtures/burnin/report-small.json")).expect("fixture");
        let same = compare(&baseline, &baseline, "old.json", 0.93);
        assert!(same.regressions.is_empty());
        assert!(same.compared > 0, "a comparison that compared nothing is not a pass");
        let mut current = baseline.clone();
        for pair in &mut current.pairs[0].pairs {
            if pair.client == "node2" && pair.server == "node0" {
                pair.bw_mean_gbps = pair.bw_mean_gbps.map(|b| b * 0.5);
                pair.lat_mean_us = pair.lat_mean_us.map(|l| l * 3.0);
            }
        }
        let worse = compare(&current, &baseline, "old.json", 0.93);
        let found: Vec<(&str, &str)> =
            worse.regressions.iter().map(|r| (r.subject.as_str(), r.metric.as_str())).collect();
        assert_eq!(found, [("node2->node0 default", "bw_gbps"), ("node2->node0 default", "lat_us")]);
        assert_eq!(worse.regressions[0].change_percent, -50.0);
    }
}
