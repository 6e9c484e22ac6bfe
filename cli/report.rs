//! `fabricdoctor report html`: render a report written earlier (by `check --json` or a burn-in) as a
//! self-contained HTML page.

use std::path::Path;

use anyhow::Context;
use fabricdoctor_report::burnin::BurninReport;
use fabricdoctor_report::html::{burnin_report_page, check_page};
use fabricdoctor_report::{Report, SCHEMA_VERSION};

use crate::args::{ReportCommand, ReportHtmlArgs};
use crate::exit;
use crate::output::emit;
use fabricdoctor_report::output::write_atomically;

pub fn run(command: ReportCommand) -> anyhow::Result<i32> {
    match command {
        ReportCommand::Html(args) => html(args),
    }
}

fn html(args: ReportHtmlArgs) -> anyhow::Result<i32> {
    let page = render_file(&args.report)?;
    match &args.output {
        Some(path) => write_atomically(path, page.as_bytes())?,
        None => emit(&page)?,
    }
    Ok(exit::SUCCESS)
}

/// Reads the report, tells its kind by its `command` key, and renders the matching page.
fn render_file(path: &Path) -> anyhow::Result<String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).with_context(|| format!("failed to read report {shown}"))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{shown} is not JSON (a fabricdoctor report.json)"))?;
    // A burn-in report has its own schema version (burnin::BURNIN_SCHEMA_VERSION) and no `command`.
    if value.get("run").is_some() && value.get("signoff").is_some() {
        let report =
            BurninReport::from_json(&text).with_context(|| format!("failed to read burn-in report {shown}"))?;
        return Ok(burnin_report_page(&report));
    }
    let version = value.get("schema_version").and_then(serde_json::Value::as_u64);
    match version {
        None => anyhow::bail!("{shown} is not a fabricdoctor report: it has no schema_version"),
        Some(v) if v > u64::from(SCHEMA_VERSION) => anyhow::bail!(
            "{shown} has schema version {v}; this fabricdoctor reads up to {SCHEMA_VERSION} (upgrade fabricdoctor)"
        ),
        Some(_) => {}
    }
    match value.get("command").and_then(serde_json::Value::as_str) {
        Some("check") => {
            let report: Report = serde_json::from_value(value)
                .with_context(|| format!("{shown} does not match the check report schema"))?;
            Ok(check_page(&report, None))
        }
        Some(other) => anyhow::bail!("{shown}: no HTML page for reports of `{other}`"),
        None if value.get("topology").is_some() => {
            anyhow::bail!("{shown} is a `topo --json` document; `fabricdoctor topo --html FILE` draws the topology")
        }
        None => anyhow::bail!("{shown} is not a fabricdoctor report: it has no command"),
    }
}
