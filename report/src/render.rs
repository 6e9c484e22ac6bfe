//! Renderers of a [`Report`]: one line per finding for terminals, JSON, JUnit XML for CI, Markdown for
//! tickets. Each returns a String; the CLI decides where it goes.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use fabricdoctor_checks::{Finding, Verdict};

use crate::Report;

/// Output formats of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Junit,
    Markdown,
}

pub fn render(report: &Report, format: Format, color: bool) -> String {
    match format {
        Format::Text => text(report, color),
        Format::Json => json(report),
        Format::Junit => junit(report),
        Format::Markdown => markdown(report),
    }
}

fn verdict_label(verdict: Verdict, color: bool) -> String {
    let label = format!("{:<5}", verdict.as_str().to_uppercase());
    if !color {
        return label;
    }
    // SGR colours (ECMA-48): green, dim, yellow, magenta, red.
    let code = match verdict {
        Verdict::Pass => "32",
        Verdict::Skip => "2",
        Verdict::Warn => "33",
        Verdict::Error => "35",
        Verdict::Fail => "1;31",
    };
    format!("\x1b[{code}m{label}\x1b[0m")
}

/// One line per finding: verdict, check id, subject, message; evidence indented below non-passing ones.
pub fn text(report: &Report, color: bool) -> String {
    let mut out = String::new();
    let id_width = report.findings.iter().map(|f| f.id.len()).max().unwrap_or(0);
    let subject_width = report.findings.iter().map(|f| f.subject.chars().count()).max().unwrap_or(0).min(36);
    for finding in &report.findings {
        let _ = writeln!(
            out,
            "{} {:<id_width$}  {:<subject_width$}  {}",
            verdict_label(finding.verdict, color),
            finding.id,
            finding.subject,
            finding.message
        );
        if !matches!(finding.verdict, Verdict::Pass | Verdict::Skip) {
            for line in &finding.evidence {
                let _ = writeln!(out, "      {:<id_width$}  evidence: {line}", "");
            }
        }
    }
    let s = &report.summary;
    let hosts: Vec<&str> = report.hosts.iter().map(|h| h.hostname.as_str()).collect();
    let _ = writeln!(
        out,
        "\n{}: {} findings: {} fail, {} error, {} warn, {} pass, {} skip",
        hosts.join(", "),
        s.total(),
        s.fail,
        s.error,
        s.warn,
        s.pass,
        s.skip
    );
    out
}

pub fn json(report: &Report) -> String {
    // Serializing plain data with string keys cannot fail; a failure would be a bug in the schema types.
    serde_json::to_string_pretty(report)
        .unwrap_or_else(|e| format!("{{\"error\": \"report serialization failed: {e}\"}}"))
        + "\n"
}

/// XML escaping for JUnit: the HTML escaper's five entities (`&#39;` for the apostrophe) are valid
/// XML 1.0 too (W3C XML 1.0 section 4.6, predefined and character references).
fn xml_escape(text: &str) -> String {
    crate::html::escape(text)
}

/// JUnit XML as Jenkins, GitLab and GitHub test reporters read it: one testsuite per check id, one
/// testcase per finding; fail and error become <failure>/<error>, skip <skipped/>, warn passes with
/// its message in <system-out> (gate on warnings with `--fail-on warn`).
pub fn junit(report: &Report) -> String {
    let mut by_id: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
    for finding in &report.findings {
        by_id.entry(&finding.id).or_default().push(finding);
    }
    let host = report.hosts.first().map(|h| h.hostname.as_str()).unwrap_or("node");
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let s = &report.summary;
    let _ = writeln!(
        out,
        "<testsuites name=\"fabricdoctor {}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">",
        xml_escape(&report.command),
        s.total(),
        s.fail,
        s.error,
        s.skip
    );
    for (id, findings) in by_id {
        let count = |v: Verdict| findings.iter().filter(|f| f.verdict == v).count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">",
            xml_escape(id),
            findings.len(),
            count(Verdict::Fail),
            count(Verdict::Error),
            count(Verdict::Skip)
        );
        for finding in findings {
            let _ = write!(
                out,
                "    <testcase classname=\"{}.{}\" name=\"{}\">",
                xml_escape(host),
                xml_escape(id),
                xml_escape(&finding.subject)
            );
            let detail = xml_escape(&finding.evidence.join("\n"));
            let message = xml_escape(&finding.message);
            match finding.verdict {
                Verdict::Fail => {
                    let _ = write!(out, "<failure message=\"{message}\">{detail}</failure>");
                }
                Verdict::Error => {
                    let _ = write!(out, "<error message=\"{message}\">{detail}</error>");
                }
                Verdict::Skip => {
                    let _ = write!(out, "<skipped message=\"{message}\"/>");
                }
                Verdict::Warn => {
                    let _ = write!(out, "<system-out>WARN: {message}\n{detail}</system-out>");
                }
                Verdict::Pass => {}
            }
            out.push_str("</testcase>\n");
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// A Markdown table cell: a pipe would end the cell and a newline the row.
pub(crate) fn markdown_cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// A Markdown table of everything that is not a pass, then a count of passes: what goes into a ticket.
pub fn markdown(report: &Report) -> String {
    let mut out = String::new();
    let hosts: Vec<&str> = report.hosts.iter().map(|h| h.hostname.as_str()).collect();
    let s = &report.summary;
    let _ = writeln!(out, "# fabricdoctor {}: {}\n", report.command, hosts.join(", "));
    let _ = writeln!(out, "{} fail, {} error, {} warn, {} pass, {} skip\n", s.fail, s.error, s.warn, s.pass, s.skip);
    let mut notable: Vec<&Finding> = report.findings.iter().filter(|f| f.verdict != Verdict::Pass).collect();
    notable.sort_by(|a, b| b.verdict.cmp(&a.verdict).then_with(|| a.id.cmp(&b.id)));
    if notable.is_empty() {
        out.push_str("All checks passed.\n");
        return out;
    }
    out.push_str("| verdict | check | subject | message | evidence |\n|---|---|---|---|---|\n");
    for finding in notable {
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {} | {} |",
            finding.verdict,
            finding.id,
            markdown_cell(&finding.subject),
            markdown_cell(&finding.message),
            markdown_cell(&finding.evidence.join("; "))
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HostInfo;

    fn report() -> Report {
        let host = HostInfo { hostname: "n1".into(), kernel_release: None, source: "live".into() };
        Report::new(
            "check",
            vec![host],
            vec![
                Finding::new("pcie.acs", Verdict::Fail, "0000:16:02.0 (bridge)", "ACS <redirect> & \"more\"")
                    .evidence("ACSCtl: ReqRedir+"),
                Finding::new("host.memlock", Verdict::Pass, "node", "unlimited"),
            ],
        )
    }

    #[test]
    fn junit_escapes_and_counts() {
        let xml = junit(&report());
        assert!(xml.contains("failures=\"1\""));
        assert!(xml.contains("ACS &lt;redirect&gt; &amp; &quot;more&quot;"));
        assert!(!xml.contains("<redirect>"));
    }

    #[test]
    fn text_has_one_line_per_finding_and_a_summary() {
        let out = text(&report(), false);
        assert!(out.lines().any(|l| l.starts_with("FAIL  pcie.acs")));
        assert!(out.contains("2 findings: 1 fail, 0 error, 0 warn, 1 pass, 0 skip"));
        assert!(!out.contains('\x1b'));
    }

    #[test]
    fn json_round_trips_through_the_schema() {
        let original = report();
        let parsed: Report = serde_json::from_str(&json(&original)).expect("valid JSON of the schema");
        assert_eq!(parsed, original);
    }
}
