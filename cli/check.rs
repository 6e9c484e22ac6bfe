//! `fabricdoctor check`.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use anyhow::Context;
use fabricdoctor_checks::{evaluate_selected, registry, Inputs, Policy, Topology, Verdict};
use fabricdoctor_probes::gpu::{read_nvml, GpuObservation, LinkUnderLoad, LoadedLink};
use fabricdoctor_probes::pci::{read_link, PciLink};
use fabricdoctor_probes::{NodeSnapshot, SysRoot};
use fabricdoctor_report::html::{check_page, TopologyPicture};
use fabricdoctor_report::render::{render, Format, TextOptions};
use fabricdoctor_report::Report;

use crate::args::{CheckArgs, ColorChoice, FailOn, OutputFormat};
use crate::exit;
use crate::output::emit;
use crate::sampling::observe;
use crate::source::Source;
use fabricdoctor_report::output::write_atomically;

pub fn run(args: CheckArgs) -> anyhow::Result<i32> {
    if args.list {
        emit(&list_text())?;
        return Ok(exit::SUCCESS);
    }
    let (report, node) = evaluate(&args)?;

    if args.format == OutputFormat::Npd && !args.json {
        let (code, line) = npd_status(&report, args.fail_on);
        match &args.output {
            Some(path) => write_atomically(path, format!("{line}\n").as_bytes())?,
            None => emit(&format!("{line}\n"))?,
        }
        return Ok(code);
    }
    let format = if args.json { Format::Json } else { format_of(args.format) };
    let color = args.output.is_none()
        && match args.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        };
    let rendered = render(&report, format, TextOptions { color, hide_pass: args.hide_pass });
    match &args.output {
        Some(path) => write_atomically(path, rendered.as_bytes())?,
        None => emit(&rendered)?,
    }
    if let Some(path) = &args.html {
        // The picture needs the PCI tree; without it the page says so and still lists the findings.
        let hostname = report.hosts.first().map(|h| h.hostname.as_str()).unwrap_or("node");
        let picture = node
            .pci
            .is_ok()
            .then(|| TopologyPicture::from_topology(hostname, &Topology::from_node(&node), &report.findings));
        write_atomically(path, check_page(&report, picture.as_ref()).as_bytes())?;
    }
    Ok(exit_code(&report, args.fail_on))
}

/// Probe the node (or the capture) and run the selected checks: the report `check` prints, and the
/// snapshot it came from. `slurm health-check` runs the same.
pub(crate) fn evaluate(args: &CheckArgs) -> anyhow::Result<(Report, NodeSnapshot)> {
    let policy = load_policy(args)?;
    let source = Source::resolve(&args.source)?;
    if args.load && !source.root.is_live() {
        anyhow::bail!("--load loads this node's GPU links; it cannot run on a capture (--root)");
    }
    let mut node = NodeSnapshot::probe(&source.root);
    if selects(&args.only, "optics.") {
        node.read_optics(&source.root);
    }
    refuse_foreign_profile(&policy, &node)?;
    let mut gpu = selects(&args.only, "gpu.").then(|| GpuObservation::probe(&source.root));
    let window_started = Instant::now();
    let counters = if wants_counters(&args.only) {
        let interval = (!args.sampling.no_sample).then_some(args.sampling.sample_interval);
        let observation = observe(&source, args.sampling.before.as_deref(), interval)?;
        // The GPU's PCIe replay counter is read across the same window as the other counters.
        if let Some(gpu) = &mut gpu {
            if let Some(before) = &args.sampling.before {
                let earlier = Source::resolve(&crate::args::SourceArgs { root: Some(before.clone()) })?;
                gpu.earlier = Some((read_nvml(&earlier.root), None));
            } else if interval.is_some() && source.root.is_live() {
                let earlier = std::mem::replace(&mut gpu.nvml, read_nvml(&source.root));
                gpu.earlier = Some((earlier, Some(window_started.elapsed().as_secs_f64())));
            }
        }
        Some(observation)
    } else {
        None
    };
    if args.load {
        let observation = gpu.get_or_insert_with(|| GpuObservation::probe(&source.root));
        observation.under_load = Some(load_gpu_links(&source.root, &node));
    }
    let inputs = Inputs::new(&node).with_counters(counters.as_ref()).with_gpu(gpu.as_ref());
    let findings = evaluate_selected(&inputs, &policy, &args.only);
    Ok((Report::new("check", vec![source.host_info(&node.host)], findings), node))
}

/// The policy (with its profile) a check run judges by, after `--only` is known to select
/// something. Errors name the file and the key.
pub(crate) fn load_policy(args: &CheckArgs) -> anyhow::Result<Policy> {
    let known: Vec<&str> = registry().iter().map(|c| c.id()).collect();
    for selected in &args.only {
        if !known.iter().any(|id| id.starts_with(selected.as_str())) {
            anyhow::bail!("--only {selected}: no check id starts with it (see `fabricdoctor check --list`)");
        }
    }
    let policy = match &args.policy {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("failed to read policy {}", path.display()))?;
            Policy::from_toml(&text, &path.display().to_string())?
        }
        None => Policy::default(),
    };
    Ok(match &args.profile {
        Some(path) => policy.with_profile(read_profile(path)?),
        None => policy,
    })
}

/// A profile for another node model would judge every device against the wrong figures: refuse it
/// by name rather than print a page of false fails. A node without GPUs (or with some of the
/// model) is judged: profile.inventory reports what it finds.
pub(crate) fn refuse_foreign_profile(policy: &Policy, node: &NodeSnapshot) -> anyhow::Result<()> {
    if let Some(profile) = &policy.profile {
        let foreign = profile.foreign_gpus(node);
        let gpus = node.gpus().len();
        if gpus > 0 && node.gpus().iter().all(|g| foreign.contains(&g.model_name())) {
            anyhow::bail!(
                "profile {} does not fit this node: gpus.model = {:?}, but its {gpus} GPUs are {}",
                profile.name,
                profile.gpus.model,
                foreign.join(", ")
            );
        }
    }
    Ok(())
}

/// True when a check whose id starts with `prefix` runs (all run when `--only` is not given).
pub(crate) fn selects(only: &[String], prefix: &str) -> bool {
    registry()
        .iter()
        .filter(|check| check.id().starts_with(prefix))
        .any(|check| only.is_empty() || only.iter().any(|s| check.id().starts_with(s.as_str())))
}

/// How long each GPU's link is kept busy: long enough for the link to retrain up (tens of
/// milliseconds) and for several sysfs readings, short enough to run on every node of a job.
const LOAD_DURATION: Duration = Duration::from_millis(1500);

/// Load each GPU's PCIe link in turn and read its speed and width from sysfs while the copies run.
fn load_gpu_links(root: &SysRoot, node: &NodeSnapshot) -> Vec<LinkUnderLoad> {
    node.gpus()
        .iter()
        .map(|function| {
            let address = function.address;
            let mut best: Option<PciLink> = None;
            let mut sample_error = None;
            let outcome = fabricdoctor_perf::gpu::Gpu::open_at(&address.to_string())
                .and_then(|gpu| {
                    fabricdoctor_perf::gpu::load_link(&gpu, LOAD_DURATION, || match read_link(root, address) {
                        Ok(link) => best = Some(fastest(best.take(), link)),
                        Err(error) => sample_error = Some(error.to_string()),
                    })
                })
                .map_err(|error| error.to_string())
                .and_then(|figures| match best.take() {
                    Some(link) => Ok(LoadedLink {
                        link,
                        host_to_device_gbps: figures.host_to_device_gbps,
                        device_to_host_gbps: figures.device_to_host_gbps,
                        seconds: figures.seconds,
                    }),
                    None => Err(sample_error.take().unwrap_or_else(|| "no link reading during the load".into())),
                });
            LinkUnderLoad { address, outcome }
        })
        .collect()
}

/// The faster (then wider) of two readings of one link.
fn fastest(previous: Option<PciLink>, current: PciLink) -> PciLink {
    match previous {
        Some(previous)
            if (previous.current_speed, previous.current_width) >= (current.current_speed, current.current_width) =>
        {
            previous
        }
        _ => current,
    }
}

/// Counter checks need samples; skip the sampling wait when `--only` selects none of them.
fn wants_counters(only: &[String]) -> bool {
    registry()
        .iter()
        .filter(|check| check.needs_counters())
        .any(|check| only.is_empty() || only.iter().any(|s| check.id().starts_with(s.as_str())))
}

fn format_of(format: OutputFormat) -> Format {
    match format {
        OutputFormat::Text | OutputFormat::Npd => Format::Text,
        OutputFormat::Json => Format::Json,
        OutputFormat::Junit => Format::Junit,
        OutputFormat::Markdown => Format::Markdown,
    }
}

/// What node-problem-detector reads from a custom plugin (its custom plugin monitor: exit status 0
/// OK, 1 NonOK, 2 Unknown; standard output, cut at the monitor's `max_output_length`, 80 by
/// default, becomes the condition's message). A problem names the worst finding first, with its
/// action, so the node condition says what to do; checks that could not look (error, or nothing
/// but skips) are unknown, never OK.
fn npd_status(report: &Report, fail_on: FailOn) -> (i32, String) {
    const NPD_UNKNOWN: i32 = 2;
    let threshold = match fail_on {
        FailOn::Fail => Verdict::Fail,
        FailOn::Warn => Verdict::Warn,
    };
    let mut problems: Vec<&fabricdoctor_checks::Finding> =
        report.findings.iter().filter(|f| f.verdict >= threshold && f.verdict != Verdict::Error).collect();
    problems.sort_by(|a, b| b.verdict.cmp(&a.verdict).then_with(|| a.id.cmp(&b.id)));
    let line = |text: String| text.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some(worst) = problems.first() {
        let more = if problems.len() > 1 { format!(" (+{} more)", problems.len() - 1) } else { String::new() };
        let text = format!("{}: {} {}{more}: {}", worst.action.name(), worst.id, worst.subject, worst.message);
        return (exit::FINDINGS, line(text));
    }
    if let Some(error) = report.findings.iter().find(|f| f.verdict == Verdict::Error) {
        return (NPD_UNKNOWN, line(format!("unknown: {} {}: {}", error.id, error.subject, error.message)));
    }
    let looked = report.findings.iter().filter(|f| f.verdict != Verdict::Skip).count();
    if looked == 0 {
        let reason = report.findings.first().map_or("no check ran".to_string(), |f| f.message.clone());
        return (NPD_UNKNOWN, line(format!("unknown: nothing could be checked: {reason}")));
    }
    (exit::SUCCESS, format!("ok: {looked} findings passed"))
}

fn exit_code(report: &Report, fail_on: FailOn) -> i32 {
    let threshold = match fail_on {
        FailOn::Fail => Verdict::Error,
        FailOn::Warn => Verdict::Warn,
    };
    if report.findings.iter().any(|f| f.verdict >= threshold) {
        exit::FINDINGS
    } else {
        exit::SUCCESS
    }
}

fn list_text() -> String {
    let mut out = String::new();
    for check in registry() {
        out.push_str(&format!("{}\n    {}\n\n", check.id(), check.doc_short()));
        for line in textwrap(check.doc_long(), 96) {
            out.push_str(&format!("    {line}\n"));
        }
        out.push('\n');
    }
    out
}

/// Wrap on whitespace (documentation strings are written as one paragraph).
fn textwrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// A node model profile from a file; errors name the file and the key.
pub fn read_profile(path: &std::path::Path) -> anyhow::Result<fabricdoctor_checks::profile::NodeProfile> {
    let text = std::fs::read_to_string(path).with_context(|| format!("failed to read profile {}", path.display()))?;
    fabricdoctor_checks::profile::NodeProfile::from_toml(&text, &path.display().to_string()).map_err(anyhow::Error::msg)
}
