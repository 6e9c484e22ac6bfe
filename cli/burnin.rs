//! `fabricdoctor burnin`: resolve hosts (--local, --hosts/--hostfile with or without ssh, SLURM, or
//! --resume), start the coordinator, draw the live view on a TTY, map the sign-off to the exit code.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use fabricdoctor_burnin::auth::Token;
use fabricdoctor_burnin::coordinator::{
    load_run, Coordinator, HostSpec, LiveView, Progress, RunEnd, RunOptions, Silent,
};
use fabricdoctor_burnin::expectations::Overrides;
use fabricdoctor_burnin::launch::{self, Agents};
use fabricdoctor_burnin::playbook::{Playbook, DEFAULT_PLAYBOOK};
use fabricdoctor_burnin::protocol::DataTransport;
use fabricdoctor_burnin::simulation::{score, FabricModel, SimulatedFabric};
use fabricdoctor_report::burnin::BurninReport;

use crate::args::{BurninArgs, Launcher, PerfTransport};
use crate::exit;
use crate::output::emit;

/// One status line on stderr, redrawn in place (only on a terminal).
struct TtyView;

impl Progress for TtyView {
    fn update(&mut self, view: &LiveView) {
        let eta = (view.duration_s - view.elapsed_s).max(0.0);
        let worst: Vec<String> = view.worst.iter().map(|(pair, bw)| format!("{pair} {bw:.2}")).collect();
        eprint!(
            "\r\x1b[2K{} | {:.0}/{:.0} s, ETA {:.0} s | steps {} | pairs {} | hosts ok {} lost {} | slowest Gb/s: {}",
            view.phase,
            view.elapsed_s,
            view.duration_s,
            eta,
            view.steps_done,
            view.pairs_done,
            view.hosts_ok,
            view.hosts_lost,
            if worst.is_empty() { "-".into() } else { worst.join(", ") }
        );
    }
}

struct Resolved {
    hosts: Vec<HostSpec>,
    token: Token,
    launcher: String,
    duration: Duration,
    playbook: Playbook,
    playbook_source: String,
    report_dir: PathBuf,
    resume: bool,
    concurrency: Option<usize>,
    simulation: Option<Arc<SimulatedFabric>>,
    /// Agents this process started (killed when it ends).
    _agents: Option<Agents>,
}

/// `--simulate MODEL`: the fabric, and its hosts as the run's hosts.
fn start_simulated(path: &std::path::Path) -> anyhow::Result<(Vec<HostSpec>, Token, Arc<SimulatedFabric>)> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("failed to read the fabric model {}", path.display()))?;
    let model = FabricModel::from_toml(&text, &path.display().to_string())?;
    let hosts = (0..model.hosts)
        .map(|host| HostSpec {
            name: FabricModel::host_name(host),
            address: format!("simulated:{host}"),
            leaf: Some(model.leaf_name(host)),
        })
        .collect();
    // Nothing authenticates to a simulated host; the run still needs a token to carry.
    let token = Token::random()?.0;
    Ok((hosts, token, Arc::new(SimulatedFabric::new(model))))
}

fn playbook_of(args: &BurninArgs) -> anyhow::Result<(Playbook, String)> {
    match &args.playbook {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("failed to read playbook {}", path.display()))?;
            let source = path.display().to_string();
            Ok((Playbook::parse(&text, &source)?, source))
        }
        None => Ok((Playbook::builtin()?, "built-in".into())),
    }
}

fn start_local(count: usize, log_dir: &std::path::Path) -> anyhow::Result<(Vec<HostSpec>, Token, Agents)> {
    let (token, text) = Token::random()?;
    let program = std::env::current_exe().context("failed to find this program to start local agents")?;
    let (hosts, agents) = launch::local(&program, count, &text, log_dir)?;
    Ok((hosts, token, agents))
}

fn start_ssh(args: &BurninArgs, hosts: &[HostSpec]) -> anyhow::Result<(Vec<HostSpec>, Token, Agents)> {
    // The remote agents get the token's text on stdin: the operator's, or a fresh random one.
    let text = match (&args.token.token_file, std::env::var("FABRICDOCTOR_TOKEN")) {
        (Some(path), _) => crate::agent::read_token_file(path)?.1,
        (None, Ok(text)) => text.trim().to_string(),
        (None, Err(_)) => Token::random()?.1,
    };
    let token = Token::from_text(&text, "the token")?;
    let (started, agents) = launch::ssh(&args.ssh_command, &args.agent_command, hosts, args.agent_port, &text)?;
    Ok((started, token, agents))
}

fn resolve(args: &BurninArgs) -> anyhow::Result<Option<Resolved>> {
    if let Some(dir) = &args.resume {
        let (hosts, duration, text, source, launcher) = load_run(dir)?;
        let playbook = Playbook::parse(&text, &source)?;
        let mut simulation = None;
        let (hosts, token, agents) = match launcher.as_str() {
            "simulated" => {
                let path = args.simulate.as_deref().context(format!(
                    "{} is a simulated run: give its fabric model again with --simulate MODEL",
                    dir.display()
                ))?;
                let (started, token, fabric) = start_simulated(path)?;
                if started.len() != hosts.len() {
                    bail!(
                        "{} ran on {} simulated hosts; the model {} has {}",
                        dir.display(),
                        hosts.len(),
                        path.display(),
                        started.len()
                    );
                }
                simulation = Some(fabric);
                (hosts, token, None)
            }
            "local" => {
                let (started, token, agents) = start_local(hosts.len(), dir)?;
                // Same names as before, new ports.
                let renamed = hosts
                    .iter()
                    .zip(started)
                    .map(|(old, new)| HostSpec { address: new.address, ..old.clone() })
                    .collect();
                (renamed, token, Some(agents))
            }
            "ssh" => {
                let (started, token, agents) = start_ssh(args, &hosts)?;
                (started, token, Some(agents))
            }
            _ => (hosts, crate::agent::token(&args.token)?, None),
        };
        let concurrency = (launcher == "local").then_some(1);
        return Ok(Some(Resolved {
            hosts,
            token,
            launcher,
            duration,
            playbook,
            playbook_source: source,
            report_dir: dir.clone(),
            resume: true,
            concurrency,
            simulation,
            _agents: agents,
        }));
    }
    let (playbook, playbook_source) = playbook_of(args)?;
    let playbook = playbook.with_nccl_environment(|name| std::env::var(name).ok())?;
    let report_dir = args.report_dir.clone().context("--report-dir is required")?;
    let listed = match (&args.hosts, &args.hostfile) {
        (Some(list), _) => Some(launch::parse_hosts(list, args.agent_port, "--hosts")?),
        (None, Some(path)) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("failed to read hostfile {}", path.display()))?;
            Some(launch::parse_hosts(&text, args.agent_port, &path.display().to_string())?)
        }
        (None, None) => None,
    };
    let mut simulation = None;
    let (hosts, token, launcher, agents, concurrency) = if let Some(path) = &args.simulate {
        let (hosts, token, fabric) = start_simulated(path)?;
        simulation = Some(fabric);
        (hosts, token, "simulated", None, None)
    } else if let Some(count) = args.local {
        let (hosts, token, agents) = start_local(count as usize, &report_dir)?;
        (hosts, token, "local", Some(agents), Some(1))
    } else if let Some(hosts) = listed {
        match args.launcher {
            Launcher::Ssh => {
                let (started, token, agents) = start_ssh(args, &hosts)?;
                (started, token, "ssh", Some(agents), None)
            }
            Launcher::None => (hosts, crate::agent::token(&args.token)?, "hosts", None, None),
        }
    } else if let Some((rank, nodes)) = launch::slurm(&|key| std::env::var(key).ok())? {
        let token = crate::agent::token(&args.token).context("inside SLURM every rank needs the same token")?;
        if rank != 0 {
            // Ranks other than 0 are agents until the coordinator is done with them.
            crate::agent::slurm_agent(token, args.agent_port, true)?;
            return Ok(None);
        }
        crate::agent::slurm_agent(token.clone(), args.agent_port, false)?;
        let hosts =
            nodes.iter().map(|node| HostSpec::new(node.clone(), format!("{node}:{}", args.agent_port))).collect();
        (hosts, token, "slurm", None, None)
    } else {
        bail!("no hosts: give --hosts, --hostfile, --local N, or run inside `srun ... fabricdoctor burnin`");
    };
    if hosts.len() < 2 {
        bail!("a burn-in needs at least two hosts ({} given)", hosts.len());
    }
    Ok(Some(Resolved {
        hosts,
        token,
        launcher: launcher.into(),
        duration: args.duration,
        playbook,
        playbook_source,
        report_dir,
        resume: false,
        concurrency,
        simulation,
        _agents: agents,
    }))
}

/// What a simulated run found against what its fabric was given: printed, and kept beside the
/// report as simulation.json (the model and the score) for bench/burnin-scale.sh.
fn simulation_lines(fabric: &SimulatedFabric, report: &BurninReport, dir: &std::path::Path) -> anyhow::Result<String> {
    let score = score(&fabric.model, &report.suspects);
    let record = serde_json::json!({ "model": fabric.model, "score": score, "simulated_s": fabric.now() });
    let path = dir.join("simulation.json");
    fabricdoctor_burnin::coordinator::write_atomically(&path, serde_json::to_string_pretty(&record)?.as_bytes())
        .with_context(|| format!("failed to write {}", path.display()))?;
    let mut out = format!(
        "  simulated fabric: {} faults to pin, {} pinned, {} missed, {} false suspects (precision {:.3}, recall {:.3}); {:.0} s simulated\n",
        score.found + score.missed.len(),
        score.found,
        score.missed.len(),
        score.false_suspects.len(),
        score.precision,
        score.recall,
        fabric.now()
    );
    for missed in &score.missed {
        out.push_str(&format!("  missed: {missed}\n"));
    }
    for false_suspect in &score.false_suspects {
        out.push_str(&format!("  false suspect: {false_suspect}\n"));
    }
    Ok(out)
}

pub fn run(args: BurninArgs) -> anyhow::Result<i32> {
    if args.print_playbook {
        emit(DEFAULT_PLAYBOOK)?;
        return Ok(exit::SUCCESS);
    }
    if let Some(hosts) = args.plan {
        let (playbook, _) = playbook_of(&args)?;
        let plan = fabricdoctor_burnin::plan::plan(
            hosts as usize,
            args.rails as usize,
            args.hosts_per_leaf as usize,
            &playbook,
            args.duration,
        );
        emit(&plan.text())?;
        return Ok(exit::SUCCESS);
    }
    let baseline = match &args.baseline {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("failed to read baseline {}", path.display()))?;
            let mut report = BurninReport::from_json(&text).with_context(|| format!("baseline {}", path.display()))?;
            // A summarised baseline (over 128 hosts) is compared pair by pair from its pair table.
            let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
            fabricdoctor_report::pair_summary::restore_beside(&mut report, dir)
                .map_err(|e| anyhow::anyhow!("baseline {}: {e}", path.display()))?;
            Some((path.display().to_string(), report))
        }
        None => None,
    };
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop)).context("failed to install a signal handler")?;
    }
    let profile = args.profile.as_deref().map(crate::check::read_profile).transpose()?;
    let Some(resolved) = resolve(&args)? else {
        return Ok(exit::SUCCESS);
    };
    let tty = std::io::stderr().is_terminal();
    let progress: Box<dyn Progress> = if tty { Box::new(TtyView) } else { Box::new(Silent) };
    let report_dir = resolved.report_dir.clone();
    let options = RunOptions {
        hosts: resolved.hosts,
        token: resolved.token,
        duration: resolved.duration,
        playbook: resolved.playbook,
        playbook_source: resolved.playbook_source,
        report_dir: resolved.report_dir,
        launcher: resolved.launcher,
        resume: resolved.resume,
        baseline,
        stop,
        connect_wait: args.connect_timeout,
        concurrency: resolved.concurrency,
        transport: match args.transport {
            PerfTransport::Tcp => DataTransport::Tcp,
            PerfTransport::Verbs => DataTransport::Verbs,
        },
        expect: Overrides {
            pair_gbps: args.expect_pair_gbps,
            pair_latency_us: args.expect_latency_us,
            profile_rate: profile.as_ref().map(|p| (p.nics.rate_gbps, p.name.clone())),
        },
        profile,
        cross_rail: args.cross_rail,
        simulation: resolved.simulation.clone(),
    };
    let mut coordinator = Coordinator::new(options, progress)?;
    let end = coordinator.run()?;
    if tty {
        eprintln!();
    }
    let report = coordinator.report();
    let mut out =
        format!("burn-in {}: {}\n", report.run.run_id, format!("{:?}", report.signoff.verdict).to_lowercase());
    for reason in &report.signoff.reasons {
        out.push_str(&format!("  {reason}\n"));
    }
    if let Some(line) = fabricdoctor_report::burnin::pair_figures(report) {
        out.push_str(&format!("  {line}\n"));
    }
    // The hottest optic under load: the protocol's 70 C rule is about this number.
    if let Some(hottest) = report.optics.iter().max_by(|a, b| a.peak_temperature_c.total_cmp(&b.peak_temperature_c)) {
        out.push_str(&format!(
            "  hottest optic: {} {} ({}) {:.1} C during {}; {} modules watched\n",
            hottest.host,
            hottest.netdev,
            hottest.module,
            hottest.peak_temperature_c,
            hottest.phase,
            report.optics.len()
        ));
    }
    for suspect in &report.suspects {
        out.push_str(&format!(
            "  suspect {:?} {} ({:.0} %): {}\n",
            suspect.kind,
            suspect.subject,
            suspect.confidence * 100.0,
            suspect.action
        ));
    }
    if let Some(fabric) = &resolved.simulation {
        out.push_str(&simulation_lines(fabric, report, &report_dir)?);
    }
    out.push_str(&format!(
        "reports: {}/{{report.json,report.html,summary.md,junit.xml,events.jsonl}}\n",
        report_dir.display()
    ));
    emit(&out)?;
    drop(coordinator);
    Ok(match end {
        RunEnd::SignedOff => exit::SUCCESS,
        RunEnd::Findings => exit::FINDINGS,
        RunEnd::Incomplete => exit::TOOL_ERROR,
    })
}
