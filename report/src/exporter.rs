//! What `fabricdoctor serve` exposes to Prometheus: each finding's verdict as a gauge, when checks
//! last ran and how long they took, and the flap and drop state of every port (text exposition
//! format 0.0.4, prometheus.io/docs/instrumenting/exposition_formats). The counters are
//! [`crate::counters::CountersReport::prometheus`]'s, appended by the caller.

use std::fmt::Write as _;

use fabricdoctor_checks::link_history::LinkState;
use fabricdoctor_checks::Verdict;

use crate::counters::escape_label;
use crate::Report;

/// The value of `fabricdoctor_check_verdict`, as issue #20 fixed it: 0 pass, 1 warn, 2 fail,
/// 3 skip, 4 error (not the order of severity `Verdict` sorts by, so it is spelt out).
pub fn verdict_value(verdict: Verdict) -> u8 {
    match verdict {
        Verdict::Pass => 0,
        Verdict::Warn => 1,
        Verdict::Fail => 2,
        Verdict::Skip => 3,
        Verdict::Error => 4,
    }
}

/// One finished check run, as the exporter publishes it.
#[derive(Debug, Clone)]
pub struct CheckRun<'a> {
    pub report: &'a Report,
    pub links: &'a [LinkState],
    /// Unix time the run finished.
    pub finished_unix_seconds: f64,
    pub duration_seconds: f64,
    /// Runs finished since the exporter started, and those that ended in an error.
    pub runs_total: u64,
    pub run_errors_total: u64,
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// The exporter's own series (everything but the counters).
pub fn metrics(run: &CheckRun<'_>) -> String {
    let mut out = String::new();
    family(
        &mut out,
        "fabricdoctor_check_verdict",
        "gauge",
        "Verdict of a finding of the last check run: 0 pass, 1 warn, 2 fail, 3 skip, 4 error",
    );
    // Two findings of one id can share a subject ("node"); a series must be unique, so the worst
    // of them is exported.
    let mut series: Vec<(&str, &str, Verdict, &str, &str)> = Vec::new();
    for finding in &run.report.findings {
        match series.iter_mut().find(|(id, subject, ..)| *id == finding.id && *subject == finding.subject) {
            Some(entry) if finding.verdict > entry.2 => {
                *entry = (&finding.id, &finding.subject, finding.verdict, finding.action.name(), finding.owner.name())
            }
            Some(_) => {}
            None => series.push((
                &finding.id,
                &finding.subject,
                finding.verdict,
                finding.action.name(),
                finding.owner.name(),
            )),
        }
    }
    for (id, subject, verdict, action, owner) in &series {
        let _ = writeln!(
            out,
            "fabricdoctor_check_verdict{{id=\"{}\",subject=\"{}\",action=\"{action}\",owner=\"{owner}\"}} {}",
            escape_label(id),
            escape_label(subject),
            verdict_value(*verdict)
        );
    }
    family(&mut out, "fabricdoctor_findings", "gauge", "Findings of the last check run by verdict");
    for verdict in [Verdict::Pass, Verdict::Warn, Verdict::Fail, Verdict::Skip, Verdict::Error] {
        let count = run.report.findings.iter().filter(|f| f.verdict == verdict).count();
        let _ = writeln!(out, "fabricdoctor_findings{{verdict=\"{}\"}} {count}", verdict.as_str());
    }
    family(&mut out, "fabricdoctor_check_last_run_timestamp_seconds", "gauge", "Unix time the last check run finished");
    let _ = writeln!(out, "fabricdoctor_check_last_run_timestamp_seconds {:.3}", run.finished_unix_seconds);
    family(&mut out, "fabricdoctor_check_run_duration_seconds", "gauge", "How long the last check run took");
    let _ = writeln!(out, "fabricdoctor_check_run_duration_seconds {:.3}", run.duration_seconds);
    family(&mut out, "fabricdoctor_check_runs_total", "counter", "Check runs finished since the exporter started");
    let _ = writeln!(out, "fabricdoctor_check_runs_total {}", run.runs_total);
    family(&mut out, "fabricdoctor_check_run_errors_total", "counter", "Check runs that failed to finish");
    let _ = writeln!(out, "fabricdoctor_check_run_errors_total {}", run.run_errors_total);
    links(&mut out, run.links);
    out
}

/// One per-port family: name, type, help, and the value of a port.
type LinkSeries = (&'static str, &'static str, &'static str, fn(&LinkState) -> String);

fn links(out: &mut String, links: &[LinkState]) {
    let labels = |state: &LinkState| {
        let (device, port) = state.subject.split_once(" port ").unwrap_or((&state.subject, ""));
        format!("device=\"{}\",port=\"{}\"", escape_label(device), escape_label(port))
    };
    let gauges: [LinkSeries; 6] = [
        ("fabricdoctor_link_up", "gauge", "Port state ACTIVE at the last sample (1), not (0)", |s| {
            u8::from(s.active == Some(true)).to_string()
        }),
        (
            "fabricdoctor_link_flaps_total",
            "counter",
            "Returns to ACTIVE (or link_downed growth) since the exporter started",
            |s| s.flaps_total.to_string(),
        ),
        ("fabricdoctor_link_flaps_in_window", "gauge", "Flaps within the flap window", |s| {
            s.flaps_in_window.to_string()
        }),
        ("fabricdoctor_link_flapping", "gauge", "Flaps within the window reached the threshold (1)", |s| {
            u8::from(s.flapping).to_string()
        }),
        (
            "fabricdoctor_link_down_seconds",
            "gauge",
            "Seconds the port has been down (0 when up); dropped when past the drop time",
            |s| format!("{:.1}", s.down_seconds),
        ),
        ("fabricdoctor_link_dropped", "gauge", "Down for longer than the drop time (1)", |s| {
            u8::from(s.dropped).to_string()
        }),
    ];
    for (name, kind, help, value) in gauges {
        family(out, name, kind, help);
        for state in links {
            let _ = writeln!(out, "{name}{{{}}} {}", labels(state), value(state));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricdoctor_checks::Finding;

    #[test]
    fn verdicts_and_link_state_render_as_unique_series() {
        let findings = vec![
            Finding::new("rdma.port.state", Verdict::Fail, "mlx5_0 port 1", "DOWN"),
            Finding::new("host.memlock", Verdict::Pass, "node", "unlimited"),
            Finding::new("host.memlock", Verdict::Warn, "node", "64 KiB"),
            Finding::new("pcie.mrrs", Verdict::Skip, "0000:17:00.0 \"x\"", "needs root"),
        ];
        let report = Report::new("serve", Vec::new(), findings);
        let links = vec![LinkState {
            subject: "mlx5_0 port 1".into(),
            active: Some(false),
            flaps_total: 4,
            flaps_in_window: 3,
            down_seconds: 300.0,
            flapping: true,
            dropped: true,
        }];
        let run = CheckRun {
            report: &report,
            links: &links,
            finished_unix_seconds: 1.8e9,
            duration_seconds: 0.25,
            runs_total: 7,
            run_errors_total: 1,
        };
        let text = metrics(&run);
        assert!(text.contains(
            "fabricdoctor_check_verdict{id=\"rdma.port.state\",subject=\"mlx5_0 port 1\",action=\"replace-cable-or-optic\",owner=\"fabric\"} 2"
        ));
        assert_eq!(text.matches("id=\"host.memlock\"").count(), 1, "{text}");
        assert!(text.contains("subject=\"node\",action=\"fix-config\",owner=\"node\"} 1"));
        assert!(text.contains("subject=\"0000:17:00.0 \\\"x\\\"\",action=\"none\",owner=\"node\"} 3"));
        assert!(text.contains("fabricdoctor_link_flaps_total{device=\"mlx5_0\",port=\"1\"} 4"));
        assert!(text.contains("fabricdoctor_link_dropped{device=\"mlx5_0\",port=\"1\"} 1"));
        assert!(text.contains("fabricdoctor_check_runs_total 7"));
        assert!(text.contains("fabricdoctor_findings{verdict=\"warn\"} 1"));
        // Every sample line belongs to a family declared before it.
        let mut declared = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                declared.push(rest.split(' ').next().unwrap_or("").to_string());
            } else if !line.starts_with('#') {
                let name = line.split(['{', ' ']).next().unwrap_or("");
                assert_eq!(declared.last().map(String::as_str), Some(name), "{line}");
            }
        }
    }
}
