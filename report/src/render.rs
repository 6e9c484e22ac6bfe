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

/// How the terminal text is drawn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextOptions {
    /// SGR colours on the verdicts.
    pub color: bool,
    /// Leave out the pass lines (the summary still counts them and says they are hidden).
    pub hide_pass: bool,
}

pub fn render(report: &Report, format: Format, options: TextOptions) -> String {
    match format {
        Format::Text => text(report, options),
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
pub fn text(report: &Report, options: TextOptions) -> String {
    let TextOptions { color, hide_pass } = options;
    let mut out = String::new();
    let shown: Vec<&Finding> = report.findings.iter().filter(|f| !(hide_pass && f.verdict == Verdict::Pass)).collect();
    let id_width = shown.iter().map(|f| f.id.len()).max().unwrap_or(0);
    let subject_width = shown.iter().map(|f| f.subject.chars().count()).max().unwrap_or(0).min(36);
    for finding in shown {
        let _ = writeln!(
            out,
            "{} {:<id_width$}  {:<subject_width$}  {}",
            verdict_label(finding.verdict, color),
            finding.id,
            finding.subject,
            finding.message
        );
        if !matches!(finding.verdict, Verdict::Pass | Verdict::Skip) {
            let _ = writeln!(
                out,
                "      {:<id_width$}  action: {} (owner: {})",
                "",
                finding.action.name(),
                finding.owner.name()
            );
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
    if hide_pass && s.pass > 0 {
        let _ = writeln!(out, "({} pass lines hidden; run without --hide-pass to list them)", s.pass);
    }
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
            // What to do leads the detail, where CI reporters show it under the failure.
            let advice = format!("action: {}, owner: {}", finding.action.name(), finding.owner.name());
            let detail = xml_escape(
                &std::iter::once(advice).chain(finding.evidence.iter().cloned()).collect::<Vec<_>>().join("\n"),
            );
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

/// A Markdown table of everything that is not a pass, then the passes in a short table of their own:
/// what goes into a ticket. Skips that share subject, message and evidence (every GPU check on a node
/// without the NVIDIA driver) are one row naming all their checks, so a long reason is said once.
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
    } else {
        out.push_str(
            "| verdict | check | subject | message | action | owner | evidence |\n|---|---|---|---|---|---|---|\n",
        );
        let mut rows: Vec<(Verdict, Vec<&str>, &str, &str, String)> = Vec::new();
        let mut advice: Vec<(&str, &str)> = Vec::new();
        for finding in notable {
            let evidence = finding.evidence.join("; ");
            let same = rows.last_mut().filter(|(verdict, _, subject, message, text)| {
                finding.verdict == Verdict::Skip
                    && *verdict == Verdict::Skip
                    && *subject == finding.subject
                    && *message == finding.message
                    && *text == evidence
            });
            match same {
                Some(row) => row.1.push(&finding.id),
                None => {
                    rows.push((finding.verdict, vec![&finding.id], &finding.subject, &finding.message, evidence));
                    advice.push((finding.action.name(), finding.owner.name()));
                }
            }
        }
        for ((verdict, ids, subject, message, evidence), (action, owner)) in rows.into_iter().zip(advice) {
            let ids: Vec<String> = ids.iter().map(|id| format!("`{id}`")).collect();
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                verdict,
                ids.join(", "),
                markdown_cell(subject),
                markdown_cell(message),
                action,
                owner,
                markdown_cell(&evidence)
            );
        }
    }
    let passes: Vec<&Finding> = report.findings.iter().filter(|f| f.verdict == Verdict::Pass).collect();
    if !passes.is_empty() {
        let _ = writeln!(out, "\n## Passed ({})\n", passes.len());
        out.push_str("| check | subject | message |\n|---|---|---|\n");
        for finding in passes {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} |",
                finding.id,
                markdown_cell(&finding.subject),
                markdown_cell(&finding.message)
            );
        }
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
        let out = text(&report(), TextOptions::default());
        assert!(out.lines().any(|l| l.starts_with("FAIL  pcie.acs")));
        assert!(out.lines().any(|l| l.starts_with("PASS  host.memlock")));
        assert!(out.contains("2 findings: 1 fail, 0 error, 0 warn, 1 pass, 0 skip"));
        assert!(!out.contains('\x1b'));
    }

    #[test]
    fn hidden_passes_are_counted_and_said_to_be_hidden() {
        let out = text(&report(), TextOptions { color: false, hide_pass: true });
        assert!(!out.contains("host.memlock"), "{out}");
        assert!(out.contains("1 pass"), "{out}");
        assert!(out.contains("1 pass lines hidden"), "{out}");
    }

    /// From a newcomer's run: check.md said "7 pass" and listed none of them, and every GPU check
    /// repeated the same long dlopen error.
    #[test]
    fn markdown_lists_passes_and_says_a_shared_skip_reason_once() {
        let mut report = report();
        let reason = "libnvidia-ml.so.1: cannot open shared object file: No such file or directory";
        for id in ["gpu.ecc", "gpu.xid", "gpu.thermal"] {
            report.findings.push(Finding::new(id, Verdict::Skip, "node", "no NVIDIA driver").evidence(reason));
        }
        let markdown = markdown(&report);
        assert_eq!(markdown.matches(reason).count(), 1, "{markdown}");
        assert!(markdown.contains("`gpu.ecc`, `gpu.thermal`, `gpu.xid`"), "{markdown}");
        assert!(markdown.contains("## Passed (1)"), "{markdown}");
        assert!(markdown.contains("| `host.memlock` | node | unlimited |"), "{markdown}");
    }

    #[test]
    fn json_round_trips_through_the_schema() {
        let original = report();
        let parsed: Report = serde_json::from_str(&json(&original)).expect("valid JSON of the schema");
        assert_eq!(parsed, original);
    }
}
