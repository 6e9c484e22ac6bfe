//! The coordinator: runs the playbook over the agents — (1) check, (2) loopback, (3) pairwise matrix
//! in circle-method rounds then isolation of suspects, (4) all-to-all, (5) ring AllReduce, (6) soak
//! repeating (3)-(5) until the duration has passed, (7) sign-off — sampling counters after every
//! step. After every step it appends to events.jsonl, rewrites report.json atomically and saves the
//! checkpoint, so `--resume` continues after a crash without repeating a finished step.

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
    BaselineComparison, BurninHost, BurninReport, CollectiveResult, CounterInterval, Event, EventKind, HostCheck,
    HostStatus, LoopbackResult, PairMatrix, PairMeasurement, PairStats, Phase, PhaseStatus, Rail, Regression, RunInfo,
    SignOff, SignOffVerdict, Suspect, SuspectKind, TimelineMark,
};
use serde::{Deserialize, Serialize};

use crate::auth::{hex, random_bytes, Token};
use crate::client::AgentConnection;
use crate::isolation::{isolate, judge, Isolation, PairSample, Pinned, References, Thresholds};
use crate::playbook::Playbook;
use crate::protocol::{CollectiveKind, DataTransport, MeasureSpec, Measured, Request, Response};
use crate::schedule::circle_rounds;
use crate::BurninError;

/// A host to burn in: its name and its agent's control address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostSpec {
    pub name: String,
    pub address: String,
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
pub const REPORT_FILE: &str = "report.json";
/// The self-contained HTML page of report.json, rewritten with it.
pub const HTML_FILE: &str = "report.html";
pub const EVENTS_FILE: &str = "events.jsonl";

fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// Write through a temporary file in the same directory and a rename: readers never see half a file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), BurninError> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let io = |what: &str, e| BurninError::Io(format!("{what} {}", path.display()), e);
    let mut temporary = tempfile::NamedTempFile::new_in(dir).map_err(|e| io("cannot create a file beside", e))?;
    temporary.write_all(bytes).map_err(|e| io("cannot write", e))?;
    // Temporary files are created private (0600); reports are for the team and CI to read.
    {
        use std::os::unix::fs::PermissionsExt as _;
        let readable = std::fs::Permissions::from_mode(0o644);
        temporary.as_file().set_permissions(readable).map_err(|e| io("cannot set permissions of", e))?;
    }
    temporary.as_file().sync_all().map_err(|e| io("cannot sync", e))?;
    temporary.persist(path).map_err(|e| io("cannot replace", e.error))?;
    Ok(())
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

/// What one direction of a pair measured, or why its agent was lost.
struct Direction {
    client: usize,
    server: usize,
    measured: Measured,
}

struct PairOutcome {
    directions: Vec<Direction>,
    lost: Vec<(usize, String)>,
}

/// One pair on one rail, both directions: `a` serves and `b` measures, then the reverse.
fn measure_pair(
    agents: &mut [(usize, &mut AgentConnection)],
    rail: &str,
    spec: &MeasureSpec,
    step_timeout: Duration,
) -> PairOutcome {
    let mut outcome = PairOutcome { directions: Vec::new(), lost: Vec::new() };
    let rail_ip = |agent: &AgentConnection| agent.rails.iter().find(|r| r.name == rail).map(|r| r.address);
    let measure_s = spec.bandwidth_ms / 1000 + 1;
    for (server_slot, client_slot) in [(0usize, 1usize), (1, 0)] {
        if !outcome.lost.is_empty() {
            break;
        }
        let (server, client) = (agents[server_slot].0, agents[client_slot].0);
        let Some(server_ip) = rail_ip(agents[server_slot].1) else {
            let measured = Measured { error: Some(format!("no rail {rail} on the server")), ..Measured::default() };
            outcome.directions.push(Direction { client, server, measured });
            continue;
        };
        let serve = Request::Serve {
            rail: rail.into(),
            sessions: 2,
            timeout_s: measure_s + step_timeout.as_secs(),
            transport: spec.transport,
        };
        let port = match call(agents[server_slot].1, &serve, step_timeout) {
            Ok(Response::Serving { port }) => port,
            Ok(Response::Error { reason }) => {
                let measured = Measured { error: Some(format!("server: {reason}")), ..Measured::default() };
                outcome.directions.push(Direction { client, server, measured });
                continue;
            }
            Ok(other) => {
                outcome.lost.push((server, format!("unexpected answer {other:?}")));
                break;
            }
            Err(Lost(reason)) => {
                outcome.lost.push((server, reason));
                break;
            }
        };
        let request = Request::Measure {
            server: server_ip,
            port,
            spec: *spec,
            timeout_s: step_timeout.as_secs().max(1),
            rail: Some(rail.into()),
        };
        let wait = Duration::from_secs(2 * measure_s) + step_timeout;
        match call(agents[client_slot].1, &request, wait) {
            Ok(Response::Measured(measured)) => outcome.directions.push(Direction { client, server, measured }),
            Ok(Response::Error { reason }) => {
                let measured = Measured { error: Some(reason), ..Measured::default() };
                outcome.directions.push(Direction { client, server, measured });
            }
            Ok(other) => outcome.lost.push((client, format!("unexpected answer {other:?}"))),
            Err(Lost(reason)) => outcome.lost.push((client, reason)),
        }
    }
    outcome
}

/// Fold both directions of a pair into the sample isolation judges: the worse of the two.
fn fold(directions: &[Direction]) -> PairSample {
    let mut sample = PairSample { bw_gbps: None, lat_us: None, failed: directions.is_empty() };
    for direction in directions {
        let m = &direction.measured;
        if m.error.is_some() || m.validation_errors > 0 {
            sample.failed = true;
        }
        sample.bw_gbps = match (sample.bw_gbps, m.bw_gbps) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        sample.lat_us = match (sample.lat_us, m.lat_us) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }
    sample
}

pub struct Coordinator {
    options: RunOptions,
    report: BurninReport,
    checkpoint: Checkpoint,
    agents: Vec<Option<AgentConnection>>,
    events: File,
    started: Instant,
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
            let checkpoint = read_checkpoint(dir)?;
            let path = dir.join(REPORT_FILE);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| BurninError::Io(format!("cannot read {}", path.display()), e))?;
            let mut report =
                BurninReport::from_json(&text).map_err(|e| BurninError::Run(format!("{}: {e}", path.display())))?;
            if report.run.run_id != checkpoint.run_id {
                return Err(BurninError::Run(format!(
                    "{}: run {} but the checkpoint is of run {}",
                    path.display(),
                    report.run.run_id,
                    checkpoint.run_id
                )));
            }
            report.run.resumed += 1;
            // The run goes on over the data path it started with.
            options.transport = if report.run.transport == DataTransport::Verbs.name() {
                DataTransport::Verbs
            } else {
                DataTransport::Tcp
            };
            report.run.stopped = None;
            // Agents reached anew (a --local cluster gets new ports).
            for (host, spec) in report.hosts.iter_mut().zip(&options.hosts) {
                host.address = spec.address.clone();
            }
            for phase in report.phases.iter_mut().filter(|p| p.status == PhaseStatus::Running) {
                phase.status = PhaseStatus::Interrupted;
            }
            (report, checkpoint)
        } else {
            let run_id = hex(&random_bytes::<8>()?);
            let run = RunInfo {
                run_id: run_id.clone(),
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
            };
            let hosts = options
                .hosts
                .iter()
                .map(|h| BurninHost {
                    name: h.name.clone(),
                    address: h.address.clone(),
                    status: HostStatus::Ok,
                    status_at: None,
                    reason: None,
                    last_step: None,
                    rails: Vec::new(),
                    hostname: None,
                    agent_version: None,
                })
                .collect();
            let checkpoint = Checkpoint {
                run_id,
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
            };
            (BurninReport::new(run, hosts), checkpoint)
        };
        let events_path = dir.join(EVENTS_FILE);
        let events = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&events_path)
            .map_err(|e| BurninError::Io(format!("cannot open {}", events_path.display()), e))?;
        let mut accumulators = BTreeMap::new();
        let names: Vec<String> = report.hosts.iter().map(|h| h.name.clone()).collect();
        let index = |name: &str| names.iter().position(|n| n == name);
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
        let mut counter_totals: BTreeMap<String, fabricdoctor_report::burnin::CounterCategories> = BTreeMap::new();
        for interval in &report.counters.intervals {
            counter_totals.entry(interval.host.clone()).or_default().add(&interval.totals);
        }
        let agents = (0..report.hosts.len()).map(|_| None).collect();
        Ok(Coordinator {
            options,
            report,
            checkpoint,
            agents,
            events,
            started: Instant::now(),
            accumulators,
            quiet: BTreeMap::new(),
            current_phase: String::new(),
            progress,
            pairs_done: 0,
            counter_totals,
        })
    }

    fn elapsed_s(&self) -> f64 {
        self.checkpoint.elapsed_s + self.started.elapsed().as_secs_f64()
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
        self.report.generated_at = now_rfc3339();
        self.rebuild_matrices();
        let report = serde_json::to_vec_pretty(&self.report).map_err(|e| BurninError::Run(e.to_string()))?;
        write_atomically(&self.options.report_dir.join(REPORT_FILE), &report)?;
        // The page renders the same data as report.json, so an operator can open either mid-run.
        let page = fabricdoctor_report::html::burnin_report_page(&self.report);
        write_atomically(&self.options.report_dir.join(HTML_FILE), page.as_bytes())?;
        let mut checkpoint = self.checkpoint.clone();
        checkpoint.elapsed_s = self.elapsed_s();
        let checkpoint = serde_json::to_vec(&checkpoint).map_err(|e| BurninError::Run(e.to_string()))?;
        write_atomically(&self.options.report_dir.join(CHECKPOINT_FILE), &checkpoint)?;
        self.show();
        Ok(())
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
        let targets: Vec<(usize, String)> = (0..self.report.hosts.len())
            .filter(|&i| self.report.hosts[i].status == HostStatus::Ok)
            .map(|i| (i, self.report.hosts[i].address.clone()))
            .collect();
        let results: Vec<(usize, Result<AgentConnection, BurninError>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = targets
                .iter()
                .map(|(i, address)| {
                    let token = &token;
                    (*i, scope.spawn(move || AgentConnection::connect(address, token, wait)))
                })
                .collect();
            handles
                .into_iter()
                .map(|(i, h)| (i, h.join().unwrap_or_else(|_| Err(BurninError::Run("connect thread panicked".into())))))
                .collect()
        });
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
                        .map(|r| Rail { name: r.name.clone(), address: r.address.to_string() })
                        .collect();
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
        // repeats a step (the report already holds its results).
        self.save()?;
        let StepDetail { measurements, collective, loopback } = detail;
        self.event(EventKind::Step {
            step: key,
            phase: phase.into(),
            measurements,
            collective: collective.map(Box::new),
            loopback: loopback.map(Box::new),
            seconds: started.elapsed().as_secs_f64(),
        });
        self.sample_counters();
        self.save()
    }

    /// Sample every active host's counters; each answer is one interval of the timeline.
    fn sample_counters(&mut self) {
        let active = self.active();
        let timeout = self.step_timeout();
        let answers = self.on_each(&active, |_, agent| call(agent, &Request::SampleCounters {}, timeout));
        let mut lost = Vec::new();
        let now = self.elapsed_s();
        for (host, answer) in answers {
            match answer {
                Ok(Response::Counters { interval_s: Some(interval_s), totals, deltas, findings, .. }) => {
                    let name = self.name(host);
                    self.counter_totals.entry(name.clone()).or_default().add(&totals);
                    let quiet = totals.total() == 0 && deltas.is_empty();
                    let merged = quiet
                        && self.quiet.get(&name).is_some_and(|&index| {
                            index + 1 == self.report.counters.intervals.len()
                                || self.report.counters.intervals[index + 1..].iter().all(|i| i.host != name)
                        });
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
                    // Every interval is an event; the report merges quiet ones.
                    self.event(EventKind::CounterInterval { interval: Box::new(interval.clone()) });
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
        self.lose(lost);
    }

    /// Run `work` on each of `hosts`' agents at once.
    fn on_each<T: Send>(
        &mut self,
        hosts: &[usize],
        work: impl Fn(usize, &mut AgentConnection) -> T + Sync,
    ) -> Vec<(usize, T)> {
        let mut taken: Vec<(usize, AgentConnection)> =
            hosts.iter().filter_map(|&h| self.agents[h].take().map(|a| (h, a))).collect();
        let results: Vec<(usize, T)> = std::thread::scope(|scope| {
            let handles: Vec<_> = taken
                .iter_mut()
                .map(|(h, agent)| {
                    let work = &work;
                    let host = *h;
                    (host, scope.spawn(move || work(host, agent)))
                })
                .collect();
            handles.into_iter().filter_map(|(h, handle)| handle.join().ok().map(|t| (h, t))).collect()
        });
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
        if let Err(error) = self.connect() {
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
        let until = Instant::now() + Duration::from_secs_f64(seconds);
        while Instant::now() < until && !self.stopping() {
            std::thread::sleep(Duration::from_millis(50).min(until.saturating_duration_since(Instant::now())));
        }
        if seconds > 0.0 {
            self.current_phase = format!("soak#{}", self.checkpoint.iteration);
            self.sample_counters();
        }
    }

    fn check_phase(&mut self) -> Result<(), BurninError> {
        let active = self.active();
        self.begin_phase("check", 0, active.len() as u64);
        let started = Instant::now();
        let todo: Vec<usize> =
            active.into_iter().filter(|&h| !self.step_done(&format!("check#0/{}", self.name(h)))).collect();
        let timeout = self.step_timeout() * 4;
        let answers = self.on_each(&todo, |_, agent| call(agent, &Request::Check {}, timeout));
        let exclude_on = self.options.playbook.policy.exclude_on;
        let mut lost = Vec::new();
        for (host, answer) in answers {
            let name = self.name(host);
            self.touch(&[host], "check#0");
            let mut host_check = HostCheck {
                host: name.clone(),
                report: None,
                topology: None,
                error: None,
                worst: Verdict::Pass,
                excluded: false,
            };
            match answer {
                Ok(Response::Checked { report, topology, error }) => {
                    host_check.worst = report.as_ref().map(|r| r.worst()).unwrap_or(Verdict::Error);
                    host_check.report = report.map(|r| *r);
                    host_check.topology = topology;
                    host_check.error = error;
                }
                Ok(Response::Error { reason }) => {
                    host_check.error = Some(reason);
                    host_check.worst = Verdict::Error;
                }
                Ok(other) => lost.push((host, format!("unexpected answer {other:?}"))),
                Err(Lost(reason)) => {
                    lost.push((host, reason));
                    continue;
                }
            }
            let hard = &self.options.playbook.policy.exclude_checks;
            let failing: Vec<String> = host_check
                .report
                .iter()
                .flat_map(|r| r.findings.iter())
                .filter(|f| {
                    exclude_on.excludes(f.verdict) && hard.iter().any(|prefix| f.id.starts_with(prefix.as_str()))
                })
                .map(|f| format!("{} {} {}: {}", f.verdict, f.id, f.subject, f.message))
                .collect();
            host_check.excluded = !failing.is_empty();
            let excluded = host_check.excluded;
            self.report.host_checks.retain(|c| c.host != name);
            self.report.host_checks.push(host_check);
            if excluded {
                let reason = format!("check found {} (policy exclude_on = {exclude_on:?})", failing.join("; "));
                self.set_status(host, HostStatus::Excluded, reason);
            }
            self.finish_step(format!("check#0/{name}"), "check", started, StepDetail::default())?;
        }
        self.lose(lost);
        self.end_phase("check", 0, PhaseStatus::Done)
    }

    fn loopback_phase(&mut self) -> Result<(), BurninError> {
        let rails = self.rails();
        let active = self.active();
        self.begin_phase("loopback", 0, (active.len() * rails.len()) as u64);
        let spec = self.measure_spec();
        let timeout = Duration::from_millis(2 * spec.bandwidth_ms) + self.step_timeout();
        for rail in &rails {
            for &host in &active {
                let key = format!("loopback#0/{}/{rail}", self.name(host));
                if self.step_done(&key) || self.agents[host].is_none() {
                    continue;
                }
                if self.stopping() {
                    return self.end_phase("loopback", 0, PhaseStatus::Interrupted);
                }
                let started = Instant::now();
                self.touch(&[host], &key);
                let request = Request::Loopback { rail: rail.clone(), spec };
                let answer = self.on_each(&[host], |_, agent| call(agent, &request, timeout)).pop().map(|(_, a)| a);
                let result = match answer {
                    Some(Ok(Response::Measured(m))) => LoopbackResult {
                        host: self.name(host),
                        rail: rail.clone(),
                        bw_gbps: m.bw_gbps,
                        lat_us: m.lat_us,
                        error: m.error,
                    },
                    Some(Ok(Response::Error { reason })) => LoopbackResult {
                        host: self.name(host),
                        rail: rail.clone(),
                        bw_gbps: None,
                        lat_us: None,
                        error: Some(reason),
                    },
                    Some(Ok(other)) => {
                        self.lose(vec![(host, format!("unexpected answer {other:?}"))]);
                        continue;
                    }
                    Some(Err(Lost(reason))) => {
                        self.lose(vec![(host, reason)]);
                        continue;
                    }
                    None => continue,
                };
                if let Some(error) = &result.error {
                    let finding = Finding::new(
                        "burnin.loopback.failed",
                        Verdict::Error,
                        format!("{} {rail}", result.host),
                        format!("loopback test failed: {error}"),
                    );
                    self.add_finding(finding);
                }
                self.report.loopback.retain(|l| !(l.host == result.host && l.rail == result.rail));
                self.report.loopback.push(result.clone());
                self.finish_step(
                    key,
                    "loopback",
                    started,
                    StepDetail { loopback: Some(result), ..StepDetail::default() },
                )?;
            }
        }
        self.end_phase("loopback", 0, PhaseStatus::Done)
    }

    /// Record one measured direction.
    fn record(&mut self, direction: &Direction, rail: &str) -> PairMeasurement {
        let m = &direction.measured;
        let entry = self.accumulators.entry((direction.client, direction.server, rail.to_string())).or_default();
        if let Some(bw) = m.bw_gbps {
            entry.bw_sum += bw;
            entry.bw_n += 1;
        }
        if let Some(lat) = m.lat_us {
            entry.lat_sum += lat;
            entry.lat_n += 1;
        }
        let (client, server) = (self.name(direction.client), self.name(direction.server));
        let stats = self.pair_stats(&client, &server, rail);
        stats.samples += u64::from(m.bw_gbps.is_some() || m.lat_us.is_some());
        stats.failures += u64::from(m.error.is_some());
        stats.validation_errors += m.validation_errors;
        if let Some(bw) = m.bw_gbps {
            stats.bw_min_gbps = Some(stats.bw_min_gbps.map_or(bw, |b| b.min(bw)));
            stats.bw_max_gbps = Some(stats.bw_max_gbps.map_or(bw, |b| b.max(bw)));
        }
        if let Some(lat) = m.lat_us {
            stats.lat_min_us = Some(stats.lat_min_us.map_or(lat, |l| l.min(lat)));
            stats.lat_max_us = Some(stats.lat_max_us.map_or(lat, |l| l.max(lat)));
        }
        if let Some(error) = &m.error {
            stats.last_error = Some(error.clone());
        }
        let subject = format!("{client}->{server} {rail}");
        if m.validation_errors > 0 {
            let finding = Finding::new(
                "burnin.data.validation",
                Verdict::Fail,
                subject.clone(),
                format!("{} bytes arrived different from what was sent", m.validation_errors),
            );
            self.add_finding(finding);
        }
        if let Some(error) = &m.error {
            let finding =
                Finding::new("burnin.pair.failed", Verdict::Fail, subject, format!("measurement failed: {error}"));
            self.add_finding(finding);
        }
        PairMeasurement {
            client,
            server,
            rail: rail.into(),
            bw_gbps: m.bw_gbps,
            lat_us: m.lat_us,
            lat_p99_us: m.lat_p99_us,
            validation_errors: m.validation_errors,
            error: m.error.clone(),
        }
    }

    fn pair_stats(&mut self, client: &str, server: &str, rail: &str) -> &mut PairStats {
        let names: Vec<String> = self.report.hosts.iter().map(|h| h.name.clone()).collect();
        let position = self.report.pairs.iter().position(|m| m.rail == rail);
        let index = match position {
            Some(index) => index,
            None => {
                let empty = vec![vec![None; names.len()]; names.len()];
                self.report.pairs.push(PairMatrix {
                    rail: rail.into(),
                    hosts: names,
                    bw_gbps: empty.clone(),
                    lat_us: empty,
                    pairs: Vec::new(),
                });
                self.report.pairs.len() - 1
            }
        };
        let matrix = &mut self.report.pairs[index];
        let slot = match matrix.pairs.iter().position(|p| p.client == client && p.server == server) {
            Some(slot) => slot,
            None => {
                matrix.pairs.push(PairStats {
                    client: client.into(),
                    server: server.into(),
                    rail: rail.into(),
                    samples: 0,
                    failures: 0,
                    bw_min_gbps: None,
                    bw_mean_gbps: None,
                    bw_max_gbps: None,
                    lat_min_us: None,
                    lat_mean_us: None,
                    lat_max_us: None,
                    validation_errors: 0,
                    last_error: None,
                });
                matrix.pairs.len() - 1
            }
        };
        &mut matrix.pairs[slot]
    }

    /// Means and matrices from the accumulators.
    fn rebuild_matrices(&mut self) {
        let names: Vec<String> = self.report.hosts.iter().map(|h| h.name.clone()).collect();
        let index = |name: &str| names.iter().position(|n| n == name);
        for matrix in &mut self.report.pairs {
            for pair in &mut matrix.pairs {
                let (Some(c), Some(s)) = (index(&pair.client), index(&pair.server)) else { continue };
                if let Some(acc) = self.accumulators.get(&(c, s, matrix.rail.clone())) {
                    pair.bw_mean_gbps = (acc.bw_n > 0).then(|| acc.bw_sum / acc.bw_n as f64);
                    pair.lat_mean_us = (acc.lat_n > 0).then(|| acc.lat_sum / acc.lat_n as f64);
                }
            }
            let mut bw = vec![vec![None; names.len()]; names.len()];
            let mut lat = vec![vec![None; names.len()]; names.len()];
            for pair in &matrix.pairs {
                if let (Some(c), Some(s)) = (index(&pair.client), index(&pair.server)) {
                    bw[c][s] = pair.bw_mean_gbps;
                    lat[c][s] = pair.lat_mean_us;
                }
            }
            matrix.hosts = names.clone();
            matrix.bw_gbps = bw;
            matrix.lat_us = lat;
        }
    }

    /// Measure `pairs` (disjoint) on `rail`, `concurrency` at a time; returns each pair's directions.
    fn measure_round(
        &mut self,
        pairs: &[(usize, usize)],
        rail: &str,
        spec: &MeasureSpec,
    ) -> Vec<((usize, usize), Vec<Direction>)> {
        let timeout = self.step_timeout();
        let chunk = self.options.concurrency.unwrap_or(usize::MAX).max(1);
        let mut results = Vec::new();
        for group in pairs.chunks(chunk) {
            let mut taken: Vec<((usize, usize), AgentConnection, AgentConnection)> = Vec::new();
            for &(a, b) in group {
                match (self.agents[a].take(), self.agents[b].take()) {
                    (Some(x), Some(y)) => taken.push(((a, b), x, y)),
                    (x, y) => {
                        self.agents[a] = x;
                        self.agents[b] = y;
                    }
                }
            }
            let outcomes: Vec<((usize, usize), PairOutcome)> = std::thread::scope(|scope| {
                let handles: Vec<_> = taken
                    .iter_mut()
                    .map(|((a, b), x, y)| {
                        let (a, b) = (*a, *b);
                        (
                            (a, b),
                            scope.spawn(move || {
                                let mut agents = [(a, x), (b, y)];
                                measure_pair(&mut agents, rail, spec, timeout)
                            }),
                        )
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|(pair, h)| {
                        let outcome = h.join().unwrap_or_else(|_| PairOutcome {
                            directions: Vec::new(),
                            lost: vec![(pair.0, "measurement thread panicked".into())],
                        });
                        (pair, outcome)
                    })
                    .collect()
            });
            for ((a, b), x, y) in taken {
                self.agents[a] = Some(x);
                self.agents[b] = Some(y);
            }
            for (pair, outcome) in outcomes {
                self.lose(outcome.lost);
                results.push((pair, outcome.directions));
            }
        }
        results
    }

    /// (3): every pair once, in circle-method rounds, on every rail. False when the run must stop.
    fn pairwise_phase(&mut self, iteration: u32) -> Result<bool, BurninError> {
        let key = format!("pairwise#{iteration}");
        let hosts = match self.checkpoint.phase_hosts.get(&key) {
            Some(hosts) => hosts.clone(),
            None => {
                let hosts = self.active();
                self.checkpoint.phase_hosts.insert(key.clone(), hosts.clone());
                self.checkpoint.pass_samples.clear();
                hosts
            }
        };
        let rails = self.rails();
        let rounds = circle_rounds(hosts.len());
        self.begin_phase("pairwise", iteration, (rounds.len() * rails.len()) as u64);
        if hosts.len() < 2 {
            self.add_finding(Finding::new(
                "burnin.pairwise.skipped",
                Verdict::Error,
                "cluster",
                format!("fewer than two hosts left ({}): no pair to measure", hosts.len()),
            ));
            self.end_phase("pairwise", iteration, PhaseStatus::Skipped)?;
            return Ok(true);
        }
        let spec = self.measure_spec();
        for rail in &rails {
            for (number, round) in rounds.iter().enumerate() {
                let step = format!("{key}/{rail}/r{number}");
                if self.step_done(&step) {
                    continue;
                }
                if let Some(reason) = self.must_stop() {
                    let _ = reason;
                    self.end_phase("pairwise", iteration, PhaseStatus::Interrupted)?;
                    return Ok(false);
                }
                let started = Instant::now();
                let pairs: Vec<(usize, usize)> = round
                    .iter()
                    .map(|&(a, b)| (hosts[a], hosts[b]))
                    .filter(|&(a, b)| self.agents[a].is_some() && self.agents[b].is_some())
                    .collect();
                for &(a, b) in &pairs {
                    let label = format!("{key} round {number} {}<->{} {rail}", self.name(a), self.name(b));
                    self.touch(&[a, b], &label);
                }
                let results = self.measure_round(&pairs, rail, &spec);
                let mut measurements = Vec::new();
                for ((a, b), directions) in results {
                    // A pair whose host was lost is no measurement of the link.
                    if self.report.hosts[a].status != HostStatus::Ok || self.report.hosts[b].status != HostStatus::Ok {
                        continue;
                    }
                    for direction in &directions {
                        measurements.push(self.record(direction, rail));
                    }
                    self.pairs_done += 1;
                    let sample = fold(&directions);
                    self.checkpoint.pass_samples.push(PassSample {
                        a,
                        b,
                        rail: rail.clone(),
                        bw_gbps: sample.bw_gbps,
                        lat_us: sample.lat_us,
                        failed: sample.failed,
                    });
                }
                self.finish_step(step, "pairwise", started, StepDetail { measurements, ..StepDetail::default() })?;
            }
        }
        self.end_phase("pairwise", iteration, PhaseStatus::Done)?;
        Ok(true)
    }

    /// Suspect pairs of the pass are retested with fresh partners until pinned.
    fn isolation_phase(&mut self, iteration: u32) -> Result<(), BurninError> {
        let thresholds = Thresholds {
            bandwidth_fraction: self.options.playbook.isolation.bandwidth_fraction,
            latency_multiple: self.options.playbook.isolation.latency_multiple,
        };
        let rails: BTreeSet<String> = self.checkpoint.pass_samples.iter().map(|s| s.rail.clone()).collect();
        self.begin_phase("isolation", iteration, rails.len() as u64);
        let spec = self.measure_spec();
        let mut by_rail: BTreeMap<String, Isolation> = BTreeMap::new();
        for rail in &rails {
            let started = Instant::now();
            let results: BTreeMap<(usize, usize), PairSample> = self
                .checkpoint
                .pass_samples
                .iter()
                .filter(|s| &s.rail == rail)
                .filter(|s| {
                    self.report.hosts[s.a].status == HostStatus::Ok && self.report.hosts[s.b].status == HostStatus::Ok
                })
                .map(|s| {
                    let sample = PairSample { bw_gbps: s.bw_gbps, lat_us: s.lat_us, failed: s.failed };
                    ((s.a.min(s.b), s.a.max(s.b)), sample)
                })
                .collect();
            let references = References::of(results.values());
            for (&(a, b), sample) in &results {
                if let Some(reason) = judge(sample, &references, &thresholds) {
                    let finding = Finding::new(
                        "burnin.pair.tolerance",
                        Verdict::Warn,
                        format!("{}<->{} {rail}", self.name(a), self.name(b)),
                        format!("pair out of tolerance in pairwise#{iteration}: {reason}"),
                    )
                    .observed(format!(
                        "{} Gb/s, {} us",
                        sample.bw_gbps.map_or("-".into(), |v| format!("{v:.2}")),
                        sample.lat_us.map_or("-".into(), |v| format!("{v:.1}"))
                    ));
                    self.add_finding(finding);
                }
            }
            let max_rounds = self.options.playbook.isolation.max_rounds;
            let confirmations = self.options.playbook.isolation.confirmations;
            let mut retest_log: Vec<PairMeasurement> = Vec::new();
            let isolation = {
                let mut retest = |pairs: &[(usize, usize)]| -> Vec<PairSample> {
                    let results = self.measure_round(pairs, rail, &spec);
                    let by_pair: BTreeMap<(usize, usize), Vec<Direction>> = results.into_iter().collect();
                    pairs
                        .iter()
                        .map(|pair| match by_pair.get(pair) {
                            Some(directions) => {
                                for direction in directions {
                                    retest_log.push(self.record(direction, rail));
                                }
                                fold(directions)
                            }
                            None => PairSample { failed: true, ..PairSample::default() },
                        })
                        .collect()
                };
                isolate(&results, &thresholds, max_rounds, confirmations, &mut retest)
            };
            by_rail.insert(rail.clone(), isolation);
            let step = format!("isolation#{iteration}/{rail}");
            self.finish_step(
                step,
                "isolation",
                started,
                StepDetail { measurements: retest_log, ..StepDetail::default() },
            )?;
        }
        self.suspects_from(iteration, &by_rail, &thresholds);
        self.checkpoint.pass_samples.clear();
        self.end_phase("isolation", iteration, PhaseStatus::Done)
    }

    /// Turn pinned faults into suspects: a host bad on every rail with a bad loopback is a host; bad
    /// on every rail with a good loopback is its link (NIC port, cable, switch port); bad on some
    /// rails only is that NIC; a pair bad between healthy hosts is the path between them.
    fn suspects_from(&mut self, iteration: u32, by_rail: &BTreeMap<String, Isolation>, thresholds: &Thresholds) {
        let rail_count = by_rail.len();
        let mut host_rails: BTreeMap<usize, Vec<(String, u32, u32, bool)>> = BTreeMap::new();
        for (rail, isolation) in by_rail {
            for pinned in &isolation.pinned {
                match *pinned {
                    Pinned::Host { host, bad, good, confirmed } => {
                        host_rails.entry(host).or_default().push((rail.clone(), bad, good, confirmed))
                    }
                    Pinned::Link { a, b } => {
                        let subject = format!("{}<->{} {rail}", self.name(a), self.name(b));
                        let evidence = self.retest_evidence(isolation, &[a, b]);
                        self.add_suspect(
                            SuspectKind::Link,
                            subject.clone(),
                            a,
                            0.8,
                            format!(
                                "check the path between {} and {} on {rail} (switch route, ports)",
                                self.name(a),
                                self.name(b)
                            ),
                            evidence,
                            "burnin.isolation.link",
                            iteration,
                        );
                    }
                }
            }
            for &(a, b) in &isolation.not_reproduced {
                let finding = Finding::new(
                    "burnin.pair.transient",
                    Verdict::Warn,
                    format!("{}<->{} {rail}", self.name(a), self.name(b)),
                    format!("out of tolerance in pairwise#{iteration}, within tolerance when retested"),
                );
                self.add_finding(finding);
            }
            for &host in &isolation.unresolved {
                let finding = Finding::new(
                    "burnin.isolation.unresolved",
                    Verdict::Warn,
                    format!("{} {rail}", self.name(host)),
                    "in a suspect pair but no known-good partner was left to retest it with",
                );
                self.add_finding(finding);
            }
        }
        let best_loopback = self
            .report
            .loopback
            .iter()
            .filter_map(|l| l.bw_gbps)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        for (host, rails) in host_rails {
            let name = self.name(host);
            let (bad, good): (u32, u32) = rails.iter().fold((0, 0), |acc, r| (acc.0 + r.1, acc.1 + r.2));
            let confirmed = rails.iter().all(|r| r.3);
            let mut confidence = f64::from(bad) / f64::from((bad + good).max(1)) * if confirmed { 0.9 } else { 0.6 };
            let mut evidence: Vec<String> = by_rail.values().flat_map(|i| self.retest_evidence(i, &[host])).collect();
            let loopback: Vec<&LoopbackResult> = self.report.loopback.iter().filter(|l| l.host == name).collect();
            let loopback_bad = loopback.iter().any(|l| match (l.bw_gbps, best_loopback) {
                (Some(bw), Some(best)) => bw < thresholds.bandwidth_fraction * best,
                _ => l.error.is_some(),
            });
            for l in &loopback {
                evidence.push(format!(
                    "loopback {} {}: {}",
                    name,
                    l.rail,
                    l.bw_gbps.map_or_else(|| l.error.clone().unwrap_or_default(), |bw| format!("{bw:.2} Gb/s")),
                ));
            }
            if let Some(totals) = self.counter_totals.get(&name) {
                if totals.total() > 0 {
                    evidence.push(format!(
                        "{name} counters grew: pfc_pause +{}, ecn_cnp +{}, retransmits +{}, port_errors +{}, pcie_aer +{}",
                        totals.pfc_pause, totals.ecn_cnp, totals.retransmits, totals.port_errors, totals.pcie_aer
                    ));
                    if totals.retransmits + totals.port_errors + totals.pcie_aer > 0 {
                        confidence = (confidence + 0.1).min(1.0);
                    }
                }
            }
            let rail_names: Vec<&str> = rails.iter().map(|r| r.0.as_str()).collect();
            let (kind, subject, action) = if rail_count > 1 && rails.len() < rail_count {
                (
                    SuspectKind::Nic,
                    format!("{name} {}", rail_names.join(",")),
                    format!("reseat or replace the NIC of {name} on {} (other rails are fine)", rail_names.join(",")),
                )
            } else if loopback_bad {
                (
                    SuspectKind::Host,
                    name.clone(),
                    format!("service host {name}: slow even to itself (CPU, memory, PCIe, NIC firmware)"),
                )
            } else {
                (
                    SuspectKind::Link,
                    format!("{name} {}", rail_names.join(",")),
                    format!(
                        "reseat, then replace the cable / transceiver of {name} on {} and check its switch port (loopback is fine)",
                        rail_names.join(",")
                    ),
                )
            };
            self.add_suspect(kind, subject, host, confidence, action, evidence, "burnin.isolation.host", iteration);
        }
    }

    fn retest_evidence(&self, isolation: &Isolation, hosts: &[usize]) -> Vec<String> {
        isolation
            .retests
            .iter()
            .filter(|r| hosts.contains(&r.candidate))
            .map(|r| {
                format!(
                    "retest round {}: {}<->{} {} Gb/s, {} us: {}",
                    r.round,
                    self.name(r.candidate),
                    self.name(r.partner),
                    r.sample.bw_gbps.map_or("-".into(), |v| format!("{v:.2}")),
                    r.sample.lat_us.map_or("-".into(), |v| format!("{v:.1}")),
                    r.suspect.clone().unwrap_or_else(|| "within tolerance".into())
                )
            })
            .collect()
    }

    #[expect(clippy::too_many_arguments, reason = "the fields of a suspect and its finding")]
    fn add_suspect(
        &mut self,
        kind: SuspectKind,
        subject: String,
        host: usize,
        confidence: f64,
        action: String,
        evidence: Vec<String>,
        finding_id: &str,
        iteration: u32,
    ) {
        let mut finding = Finding::new(
            finding_id,
            Verdict::Fail,
            subject.clone(),
            format!("{kind:?} fault pinned by isolation#{iteration}: {action}").to_lowercase(),
        );
        finding.evidence = evidence.clone();
        self.add_finding(finding);
        let host_name = self.name(host);
        match self.report.suspects.iter_mut().find(|s| s.subject == subject && s.kind == kind) {
            Some(existing) => {
                // Seen again in a later soak iteration: more confidence, newest evidence.
                existing.confidence = existing.confidence.max(confidence).max((existing.confidence + 0.05).min(1.0));
                existing.evidence = evidence;
            }
            None => self.report.suspects.push(Suspect {
                kind,
                subject,
                host: host_name,
                confidence: (confidence * 100.0).round() / 100.0,
                action,
                evidence,
                finding_ids: vec![finding_id.to_string()],
            }),
        }
        self.report.suspects.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    }

    /// (4)/(5): one collective over every active host.
    fn collective_phase(&mut self, kind: CollectiveKind, iteration: u32) -> Result<(), BurninError> {
        let name = kind.name();
        let hosts = self.active();
        self.begin_phase(name, iteration, 1);
        if hosts.len() < 2 {
            return self.end_phase(name, iteration, PhaseStatus::Skipped);
        }
        let started = Instant::now();
        let section = match kind {
            CollectiveKind::Alltoall => self.options.playbook.alltoall.clone(),
            CollectiveKind::Allreduce => self.options.playbook.allreduce.clone(),
        };
        let rail = self.rails().first().cloned().unwrap_or_else(|| "default".into());
        let timeout = self.step_timeout();
        let key = format!("{name}#{iteration}");
        self.touch(&hosts, &key);
        let master = hosts[0];
        let master_ip: Option<IpAddr> =
            self.agents[master].as_ref().and_then(|a| a.rails.iter().find(|r| r.name == rail).map(|r| r.address));
        let port = match self
            .on_each(&[master], |_, agent| call(agent, &Request::ReservePort { rail: rail.clone() }, timeout))
            .pop()
        {
            Some((_, Ok(Response::Port { port }))) => Some(port),
            Some((_, Err(Lost(reason)))) => {
                self.lose(vec![(master, reason)]);
                None
            }
            _ => None,
        };
        let mut result = CollectiveResult {
            collective: name.into(),
            iteration,
            at: now_rfc3339(),
            hosts: hosts.iter().map(|&h| self.name(h)).collect(),
            bytes: section.bytes,
            time_us: None,
            alg_bw_gbps: None,
            bus_bw_gbps: None,
            wrong_elements: 0,
            slowest_host: None,
            error: None,
        };
        match (master_ip, port) {
            (Some(master_ip), Some(master_port)) => {
                let world = hosts.len();
                let ranks: BTreeMap<usize, usize> = hosts.iter().enumerate().map(|(rank, &h)| (h, rank)).collect();
                let timeout_s = timeout.as_secs().max(1);
                let transport = self.options.transport;
                let answers = self.on_each(&hosts, |host, agent| {
                    let rank = ranks.get(&host).copied().unwrap_or(0);
                    let request = Request::Collective {
                        collective: kind,
                        rank,
                        world,
                        master: master_ip,
                        master_port,
                        bytes: section.bytes,
                        iterations: section.iterations,
                        timeout_s,
                        transport,
                        rail: Some(rail.clone()),
                    };
                    call(agent, &request, timeout * 3)
                });
                let mut errors = Vec::new();
                let mut lost = Vec::new();
                for (host, answer) in answers {
                    match answer {
                        Ok(Response::CollectiveDone { summary: Some(summary) }) => {
                            result.time_us = Some(summary.time_us);
                            result.alg_bw_gbps = Some(summary.alg_bw_gbps);
                            result.bus_bw_gbps = Some(summary.bus_bw_gbps);
                            result.wrong_elements = summary.wrong;
                            let slowest = hosts.get(summary.slowest_rank).map(|&h| self.name(h));
                            result.slowest_host = slowest;
                        }
                        Ok(Response::CollectiveDone { summary: None }) => {}
                        Ok(Response::Error { reason }) => errors.push(format!("{}: {reason}", self.name(host))),
                        Ok(other) => lost.push((host, format!("unexpected answer {other:?}"))),
                        Err(Lost(reason)) => lost.push((host, reason)),
                    }
                }
                self.lose(lost);
                if !errors.is_empty() {
                    result.error = Some(errors.join("; "));
                }
            }
            _ => result.error = Some("no rendezvous port on rank 0".into()),
        }
        if let Some(error) = &result.error {
            let finding = Finding::new(
                &format!("burnin.{name}.failed"),
                Verdict::Error,
                format!("{name}#{iteration}"),
                format!("{name} failed: {error}"),
            );
            self.add_finding(finding);
        }
        if result.wrong_elements > 0 {
            let finding = Finding::new(
                "burnin.data.collective",
                Verdict::Fail,
                format!("{name}#{iteration}"),
                format!("{} elements held wrong values after {name}", result.wrong_elements),
            );
            self.add_finding(finding);
        }
        self.report.collectives.push(result.clone());
        self.finish_step(key, name, started, StepDetail { collective: Some(result), ..StepDetail::default() })?;
        self.end_phase(name, iteration, PhaseStatus::Done)
    }

    /// (7): the verdict, then every output.
    fn signoff(&mut self, finished: bool) -> Result<(), BurninError> {
        self.current_phase = "signoff".into();
        if let Some((path, baseline)) = self.options.baseline.clone() {
            self.rebuild_matrices();
            let comparison =
                compare(&self.report, &baseline, &path, self.options.playbook.isolation.bandwidth_fraction);
            for regression in &comparison.regressions {
                let finding = Finding::new(
                    "burnin.baseline.regression",
                    Verdict::Fail,
                    format!("{} {}", regression.subject, regression.metric),
                    format!(
                        "{:.2} now, {:.2} in the baseline ({:+.1} %)",
                        regression.current, regression.baseline, regression.change_percent
                    ),
                );
                self.add_finding(finding);
            }
            self.report.baseline = Some(comparison);
        }
        let mut reasons = Vec::new();
        let mut failed = false;
        let validation: u64 = self.report.pairs.iter().flat_map(|m| m.pairs.iter()).map(|p| p.validation_errors).sum();
        let wrong: u64 = self.report.collectives.iter().map(|c| c.wrong_elements).sum();
        if validation + wrong == 0 {
            reasons.push("zero data errors: ok".into());
        } else {
            failed = true;
            reasons
                .push(format!("data errors: {validation} bytes in pair tests, {wrong} wrong elements in collectives"));
        }
        let judged = &self.options.playbook.signoff.fail_on_counters;
        let mut grew = Vec::new();
        for (host, totals) in &self.counter_totals {
            for (category, value) in [
                ("pfc_pause", totals.pfc_pause),
                ("ecn_cnp", totals.ecn_cnp),
                ("retransmits", totals.retransmits),
                ("port_errors", totals.port_errors),
                ("pcie_aer", totals.pcie_aer),
            ] {
                if value > 0 && judged.iter().any(|c| c == category) {
                    grew.push(format!("{host} {category} +{value}"));
                }
            }
        }
        if grew.is_empty() {
            reasons.push(format!("no error-counter growth ({}): ok", judged.join(", ")));
        } else {
            failed = true;
            reasons.push(format!("error counters grew: {}", grew.join(", ")));
            for line in &grew {
                let (host, rest) = line.split_once(' ').unwrap_or((line, ""));
                let finding =
                    Finding::new("burnin.counters.growth", Verdict::Fail, host, format!("counter growth: {rest}"));
                self.add_finding(finding);
            }
        }
        let bad_pairs = self.report.findings.iter().filter(|f| f.id == "burnin.pair.tolerance").count();
        if self.report.suspects.is_empty() && bad_pairs == 0 {
            reasons.push("every pair within tolerance: ok".into());
        } else if self.report.suspects.is_empty() {
            reasons.push(format!("{bad_pairs} pair(s) out of tolerance once, not reproduced when retested"));
        } else {
            failed = true;
            let subjects: Vec<String> = self
                .report
                .suspects
                .iter()
                .map(|s| format!("{:?} {} ({:.0} %)", s.kind, s.subject, s.confidence * 100.0))
                .collect();
            reasons.push(format!("suspects: {}", subjects.join(", ").to_lowercase()));
        }
        for status in [HostStatus::Lost, HostStatus::Excluded] {
            let names: Vec<&str> =
                self.report.hosts.iter().filter(|h| h.status == status).map(|h| h.name.as_str()).collect();
            if !names.is_empty() {
                failed = true;
                reasons.push(format!("hosts {}: {}", format!("{status:?}").to_lowercase(), names.join(", ")));
            }
        }
        let errors: BTreeSet<&str> =
            self.report.findings.iter().filter(|f| f.verdict >= Verdict::Error).map(|f| f.id.as_str()).collect();
        if !errors.is_empty() {
            failed = true;
            reasons.push(format!("findings at error or fail: {}", errors.into_iter().collect::<Vec<_>>().join(", ")));
        }
        let measured_pairs = self.report.pairs.iter().flat_map(|m| m.pairs.iter()).filter(|p| p.samples > 0).count();
        let verdict = if !finished || self.report.run.stopped.is_some() {
            reasons.push(format!(
                "run incomplete: {}",
                self.report.run.stopped.clone().unwrap_or_else(|| "did not reach sign-off".into())
            ));
            SignOffVerdict::Incomplete
        } else if measured_pairs == 0 && self.options.playbook.pairwise.enabled {
            reasons.push("no pair was measured".into());
            SignOffVerdict::Incomplete
        } else if failed {
            SignOffVerdict::Fail
        } else {
            SignOffVerdict::Pass
        };
        self.report.signoff = SignOff { verdict, reasons };
        self.report.run.complete = verdict != SignOffVerdict::Incomplete;
        self.report.run.finished_at = Some(now_rfc3339());
        self.begin_phase("signoff", 0, 1);
        let status = if verdict == SignOffVerdict::Incomplete { PhaseStatus::Interrupted } else { PhaseStatus::Done };
        let offset = self.elapsed_s();
        if let Some(phase) = self.report.phases.last_mut() {
            phase.status = status;
            phase.ended_at = Some(now_rfc3339());
            phase.end_offset_s = Some(offset);
        }
        self.event(EventKind::RunFinished {
            signoff: self.report.signoff.clone(),
            stopped: self.report.run.stopped.clone(),
        });
        self.save()?;
        let dir = self.options.report_dir.clone();
        write_atomically(
            &dir.join("summary.md"),
            fabricdoctor_report::burnin::summary_markdown(&self.report).as_bytes(),
        )?;
        write_atomically(&dir.join("junit.xml"), fabricdoctor_report::burnin::junit(&self.report).as_bytes())?;
        Ok(())
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
}

/// Compare with an earlier run: pairs by (client, server, rail) mean bandwidth and latency, and
/// collectives by mean bus bandwidth.
pub fn compare(current: &BurninReport, baseline: &BurninReport, path: &str, tolerance: f64) -> BaselineComparison {
    let mut regressions = Vec::new();
    let mut compared = 0;
    let old = baseline.pair_index();
    for ((client, server, rail), now) in current.pair_index() {
        let Some(before) = old.get(&(client.clone(), server.clone(), rail.clone())) else { continue };
        let subject = format!("{client}->{server} {rail}");
        if let (Some(b), Some(n)) = (before.bw_mean_gbps, now.bw_mean_gbps) {
            compared += 1;
            if n < tolerance * b {
                regressions.push(regression(&subject, "bw_gbps", b, n));
            }
        }
        if let (Some(b), Some(n)) = (before.lat_mean_us, now.lat_mean_us) {
            compared += 1;
            if n > b / tolerance {
                regressions.push(regression(&subject, "lat_us", b, n));
            }
        }
    }
    for name in ["alltoall", "allreduce"] {
        let mean = |report: &BurninReport| {
            let values: Vec<f64> =
                report.collectives.iter().filter(|c| c.collective == name).filter_map(|c| c.bus_bw_gbps).collect();
            (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
        };
        if let (Some(b), Some(n)) = (mean(baseline), mean(current)) {
            compared += 1;
            if n < tolerance * b {
                regressions.push(regression(name, "bus_bw_gbps", b, n));
            }
        }
    }
    BaselineComparison {
        path: path.into(),
        baseline_run_id: baseline.run.run_id.clone(),
        baseline_generated_at: baseline.generated_at.clone(),
        tolerance,
        regressions,
        compared,
    }
}

fn regression(subject: &str, metric: &str, baseline: f64, current: f64) -> Regression {
    Regression {
        subject: subject.into(),
        metric: metric.into(),
        baseline,
        current,
        change_percent: ((current - baseline) / baseline * 1000.0).round() / 10.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(bw: Option<f64>, lat: Option<f64>, error: Option<&str>, validation_errors: u64) -> Direction {
        Direction {
            client: 0,
            server: 1,
            measured: Measured {
                bw_gbps: bw,
                lat_us: lat,
                lat_p99_us: None,
                validation_errors,
                error: error.map(str::to_string),
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
        let baseline = fabricdoctor_report::burnin::example();
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

    #[test]
    fn reports_are_replaced_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("report.json");
        write_atomically(&path, b"first").expect("write");
        write_atomically(&path, b"second").expect("replace");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "second");
        assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 1, "no temporary file left behind");
        assert!(write_atomically(&dir.path().join("missing/report.json"), b"x").is_err());
    }
}
