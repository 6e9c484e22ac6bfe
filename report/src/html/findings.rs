//! The findings table with its filter controls (verdict checkboxes, id prefix). Rows carry their
//! verdict and id as data attributes; the page's script hides the rows the filters exclude.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use fabricdoctor_checks::{Finding, Verdict};

use super::{escape, verdict_class};

/// Above this many passing findings (a burn-in of many hosts), passes are counted per check id
/// instead of listed one by one: the page must stay small enough to mail, and a pass has no evidence
/// an operator acts on. Every non-passing finding is always listed.
pub const PASS_ROWS_LIMIT: usize = 1000;

const VERDICTS: [Verdict; 5] = [Verdict::Fail, Verdict::Error, Verdict::Warn, Verdict::Skip, Verdict::Pass];

pub fn table(findings: &[Finding]) -> String {
    let mut out = String::new();
    out.push_str("<form class=\"filters\" data-filter-for=\"findings-table\" onsubmit=\"return false\">");
    for verdict in VERDICTS {
        let count = findings.iter().filter(|f| f.verdict == verdict).count();
        // Passes start hidden: the table opens on what needs attention.
        let checked = if verdict == Verdict::Pass { "" } else { " checked" };
        let _ = write!(
            out,
            "<label class=\"{}\"><input type=\"checkbox\" name=\"verdict\" value=\"{}\"{checked}> {} ({count})</label> ",
            verdict_class(verdict),
            verdict.as_str(),
            verdict.as_str()
        );
    }
    let mut ids: Vec<&str> = findings.iter().map(|f| f.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    out.push_str(
        "<label>check id <input type=\"search\" name=\"id\" list=\"finding-ids\" placeholder=\"prefix, e.g. pcie\"></label>",
    );
    out.push_str("<datalist id=\"finding-ids\">");
    for id in &ids {
        let _ = write!(out, "<option value=\"{}\">", escape(id));
    }
    out.push_str("</datalist> <output name=\"shown\"></output></form>\n");

    out.push_str(
        "<table id=\"findings-table\" class=\"findings\"><thead><tr><th>verdict</th><th>check</th><th>subject</th>\
         <th>message</th><th>action</th><th>owner</th><th>evidence</th></tr></thead><tbody>\n",
    );
    let mut sorted: Vec<&Finding> = findings.iter().collect();
    sorted.sort_by(|a, b| b.verdict.cmp(&a.verdict).then_with(|| a.id.cmp(&b.id)));
    let passes = findings.iter().filter(|f| f.verdict == Verdict::Pass).count();
    let list_passes = passes <= PASS_ROWS_LIMIT;
    for finding in sorted.iter().filter(|f| list_passes || f.verdict != Verdict::Pass) {
        row(&mut out, finding);
    }
    if !list_passes {
        let mut per_id: BTreeMap<&str, usize> = BTreeMap::new();
        for finding in findings.iter().filter(|f| f.verdict == Verdict::Pass) {
            *per_id.entry(&finding.id).or_default() += 1;
        }
        for (id, count) in per_id {
            let _ = writeln!(
                out,
                "<tr class=\"v-pass\" data-verdict=\"pass\" data-id=\"{id}\" hidden><td>pass</td><td><code>{id}</code></td>\
                 <td colspan=\"5\">{count} subjects passed (listed in report.json)</td></tr>",
                id = escape(id)
            );
        }
    }
    out.push_str("</tbody></table>\n");
    out
}

fn row(out: &mut String, finding: &Finding) {
    let mut evidence = String::new();
    for line in &finding.evidence {
        let _ = write!(evidence, "<li>{}</li>", escape(line));
    }
    if let Some(expected) = &finding.expected {
        let _ = write!(evidence, "<li>expected: {}</li>", escape(expected));
    }
    if let Some(observed) = &finding.observed {
        let _ = write!(evidence, "<li>observed: {}</li>", escape(observed));
    }
    if !evidence.is_empty() {
        evidence = format!("<ul>{evidence}</ul>");
    }
    let hidden = if finding.verdict == Verdict::Pass { " hidden" } else { "" };
    let _ = writeln!(
        out,
        "<tr class=\"{}\" data-verdict=\"{}\" data-id=\"{}\"{hidden}><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td>\
         <td>{}</td><td>{}</td><td>{evidence}</td></tr>",
        verdict_class(finding.verdict),
        finding.verdict.as_str(),
        escape(&finding.id),
        finding.verdict.as_str(),
        escape(&finding.id),
        escape(&finding.subject),
        escape(&finding.message),
        finding.action.name(),
        finding.owner.name(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_carry_their_filter_keys_and_passes_start_hidden() {
        let findings = vec![
            Finding::new("pcie.acs", Verdict::Fail, "0000:17:00.0", "redirect <on>").evidence("ACSCtl: ReqRedir+"),
            Finding::new("host.memlock", Verdict::Pass, "node", "unlimited"),
        ];
        let html = table(&findings);
        assert!(html.contains("data-verdict=\"fail\" data-id=\"pcie.acs\"><td>fail</td>"));
        assert!(html.contains("data-verdict=\"pass\" data-id=\"host.memlock\" hidden>"));
        assert!(html.contains("redirect &lt;on&gt;"));
        assert!(html.contains("<td>fix-config</td><td>node</td>"), "{html}");
        assert!(html.find("pcie.acs</code>") < html.find("host.memlock</code>"), "worst first");
    }

    #[test]
    fn many_passes_are_counted_per_id_and_every_other_finding_is_listed() {
        let mut findings: Vec<Finding> = (0..PASS_ROWS_LIMIT + 1)
            .map(|i| Finding::new("pcie.link.width", Verdict::Pass, format!("host{i}"), "x16"))
            .collect();
        findings.push(Finding::new("pcie.link.width", Verdict::Fail, "host7 0000:17:00.0", "x8 of x16"));
        let html = table(&findings);
        assert!(html.contains(&format!("{} subjects passed", PASS_ROWS_LIMIT + 1)));
        assert!(html.contains("host7 0000:17:00.0"));
        assert!(!html.contains(">host3<"));
    }
}
