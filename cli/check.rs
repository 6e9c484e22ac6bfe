//! `fabricdoctor check`.

use std::io::IsTerminal;

use anyhow::Context;
use fabricdoctor_checks::{registry, run_checks, Policy, Topology, Verdict};
use fabricdoctor_probes::NodeSnapshot;
use fabricdoctor_report::html::{check_page, TopologyPicture};
use fabricdoctor_report::render::{render, Format};
use fabricdoctor_report::Report;

use crate::args::{CheckArgs, ColorChoice, FailOn, OutputFormat};
use crate::exit;
use crate::output::{emit, write_atomically};
use crate::sampling::observe;
use crate::source::Source;

pub fn run(args: CheckArgs) -> anyhow::Result<i32> {
    if args.list {
        emit(&list_text())?;
        return Ok(exit::SUCCESS);
    }
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
    let source = Source::resolve(&args.source)?;
    let node = NodeSnapshot::probe(&source.root);
    let counters = if wants_counters(&args.only) {
        let interval = (!args.sampling.no_sample).then_some(args.sampling.sample_interval);
        Some(observe(&source, args.sampling.before.as_deref(), interval)?)
    } else {
        None
    };
    let findings = run_checks(&node, counters.as_ref(), &policy, &args.only);
    let report = Report::new("check", vec![source.host_info(&node.host)], findings);

    let format = if args.json { Format::Json } else { format_of(args.format) };
    let color = args.output.is_none()
        && match args.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        };
    let rendered = render(&report, format, color);
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

/// Counter checks need samples; skip the sampling wait when `--only` selects none of them.
fn wants_counters(only: &[String]) -> bool {
    registry()
        .iter()
        .filter(|check| check.needs_counters())
        .any(|check| only.is_empty() || only.iter().any(|s| check.id().starts_with(s.as_str())))
}

fn format_of(format: OutputFormat) -> Format {
    match format {
        OutputFormat::Text => Format::Text,
        OutputFormat::Json => Format::Json,
        OutputFormat::Junit => Format::Junit,
        OutputFormat::Markdown => Format::Markdown,
    }
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
