//! The self-contained HTML report: one file with its styles and script inline and a Content Security
//! Policy that forbids every fetch, so it opens the same from a ticket attachment as from disk.
//!
//! Everything shown is computed here, in Rust: colours of heatmap cells, positions of the topology
//! picture and of the timeline curves are written into the page. The page's script only filters the
//! findings table and shows the numbers under the pointer.

mod burnin;
mod findings;
mod heatmap;
mod timeline;
mod topology;

pub use burnin::{
    burnin_page, burnin_report_page, BurninView, CounterSeries, HostTimeline, Metric, PairMatrix, PhaseSpan, SignOff,
    SimpleTable, SuspectView,
};
pub use heatmap::{ColourScale, SCALE_STEPS};
pub use timeline::MAX_POINTS;
pub use topology::{Mark, NodeKind, PictureNode, RailLink, TopologyPicture};

use std::fmt::Write as _;

use fabricdoctor_checks::Verdict;

use crate::{HostInfo, Report};

const STYLE: &str = include_str!("../assets/report.css");
const SCRIPT: &str = include_str!("../assets/report.js");

/// No fetch of any kind (scripts, styles, images, fonts, frames, connections) leaves the page; the
/// inline style and script are the only code it runs. `default-src 'none'` covers every fetch
/// directive (CSP Level 3, section 6.1).
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/// Text for element content and double- or single-quoted attribute values (HTML Living Standard,
/// 13.1.2.6 and 13.3 "escaping a string"): hostnames, finding messages and counter names come from
/// the measured machines and must never become markup.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters other than tab and newline are not allowed in HTML text (13.1.4).
            c if c.is_control() && !matches!(c, '\t' | '\n') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// `check --html`: the node's sign-off, its topology picture when known, and the findings table.
pub fn check_page(report: &Report, topology: Option<&TopologyPicture>) -> String {
    let hosts: Vec<&str> = report.hosts.iter().map(|h| h.hostname.as_str()).collect();
    let title = format!("fabricdoctor {} — {}", report.command, hosts.join(", "));
    let mut body = String::new();
    let worst = report.worst();
    let s = &report.summary;
    let headline = match worst {
        Verdict::Fail | Verdict::Error => "not signed off".to_string(),
        Verdict::Warn => "signed off with warnings".to_string(),
        Verdict::Skip => format!("signed off; {} checks could not look (skip)", s.skip),
        Verdict::Pass => "signed off".to_string(),
    };
    let _ = write!(
        body,
        "<section id=\"signoff\" class=\"signoff v-{}\"><h2>Sign-off: {}</h2><p class=\"counts\">{} fail, {} error, {} \
         warn, {} pass, {} skip</p>",
        worst.as_str(),
        headline,
        s.fail,
        s.error,
        s.warn,
        s.pass,
        s.skip
    );
    body.push_str(&hosts_table(&report.hosts));
    body.push_str("</section>\n");
    match topology {
        Some(picture) => {
            body.push_str("<section id=\"topology\"><h2>Topology</h2>");
            body.push_str(&picture.render());
            body.push_str("</section>\n");
        }
        None => body.push_str(
            "<section id=\"topology\"><h2>Topology</h2><p class=\"note\">This report carries no topology (a \
             <code>check --json</code> report holds findings only; <code>check --html</code> draws it).</p></section>\n",
        ),
    }
    body.push_str("<section id=\"findings\"><h2>Findings</h2>");
    body.push_str(&findings::table(&report.findings));
    body.push_str("</section>\n");
    page(&title, &report.tool_version, &report.generated_at, &body)
}

/// `topo --html`: the topology picture and relation matrix of one node, made now.
pub fn topology_page(host: &HostInfo, picture: &TopologyPicture) -> String {
    let generated_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let tool_version = env!("CARGO_PKG_VERSION");
    let title = format!("fabricdoctor topo — {}", host.hostname);
    let mut body = String::from("<section id=\"topology\"><h2>Topology</h2>");
    body.push_str(&hosts_table(std::slice::from_ref(host)));
    body.push_str(&picture.render());
    body.push_str("</section>\n");
    page(&title, tool_version, &generated_at, &body)
}

fn hosts_table(hosts: &[HostInfo]) -> String {
    let mut out = String::from("<table class=\"hosts\"><tr><th>host</th><th>kernel</th><th>source</th></tr>");
    for host in hosts {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&host.hostname),
            escape(host.kernel_release.as_deref().unwrap_or("unknown")),
            escape(&host.source)
        );
    }
    out.push_str("</table>");
    out
}

/// The document around a body: CSP first in <head> so it applies before anything else is parsed.
fn page(title: &str, tool_version: &str, generated_at: &str, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + STYLE.len() + SCRIPT.len() + 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" \
         content=\"{CONTENT_SECURITY_POLICY}\">\n<meta name=\"viewport\" content=\"width=device-width, \
         initial-scale=1\">\n<meta name=\"generator\" content=\"fabricdoctor {}\">\n<title>{}</title>\n<style>\n{STYLE}</style>\n\
         </head>\n<body>\n<header><h1>{}</h1><p class=\"meta\">generated {} by fabricdoctor {}</p></header>\n<main>\n{body}</main>\n\
         <div id=\"tooltip\" role=\"tooltip\" hidden></div>\n<script>\n{SCRIPT}</script>\n</body></html>\n",
        escape(tool_version),
        escape(title),
        escape(title),
        escape(generated_at),
        escape(tool_version),
    );
    out
}

/// CSS class suffix of a verdict ("v-fail").
fn verdict_class(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "v-pass",
        Verdict::Skip => "v-skip",
        Verdict::Warn => "v-warn",
        Verdict::Error => "v-error",
        Verdict::Fail => "v-fail",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_neutralises_markup_in_text_and_attributes() {
        assert_eq!(escape("<script>alert('x')</script>"), "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
        assert_eq!(escape("a\"b&c"), "a&quot;b&amp;c");
        assert_eq!(escape("bell\u{7}"), "bell\u{fffd}");
    }

    #[test]
    fn the_page_forbids_every_fetch_before_anything_else_loads() {
        let host = HostInfo { hostname: "n1".into(), kernel_release: None, source: "live".into() };
        let html = check_page(&Report::new("check", vec![host], Vec::new()), None);
        let csp = html.find("Content-Security-Policy").expect("a CSP meta tag");
        assert!(csp < html.find("<style>").expect("inline style"));
        assert!(html.contains("default-src 'none'"));
        assert!(!html.contains("http://") && !html.contains("https://"), "no external reference");
    }
}
