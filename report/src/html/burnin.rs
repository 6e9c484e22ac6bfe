//! The burn-in page: sign-off, ranked suspects with their evidence, pairwise heatmaps per metric and
//! rail, counter timelines per host with phase boundaries, the topology of each distinct host layout,
//! and the findings table. [`BurninView`] is what the page shows; it is filled from the burn-in
//! report without computing anything new (the report already holds verdicts, suspects and matrices).

use std::fmt::Write as _;

use fabricdoctor_checks::{Finding, Verdict};

use super::heatmap::{self, HeatmapInput};
use super::{escape, findings, page, timeline, verdict_class, TopologyPicture};

#[derive(Debug, Clone, PartialEq)]
pub struct BurninView {
    pub title: String,
    pub tool_version: String,
    pub generated_at: String,
    pub signoff: SignOff,
    /// Ranked, most likely first.
    pub suspects: Vec<SuspectView>,
    /// The axis of every matrix.
    pub hosts: Vec<String>,
    /// Indices into `hosts` of hosts named as suspects (their rows and columns are marked).
    pub suspect_hosts: Vec<usize>,
    pub matrices: Vec<PairMatrix>,
    pub phases: Vec<PhaseSpan>,
    pub timelines: Vec<HostTimeline>,
    pub topologies: Vec<TopologyPicture>,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SignOff {
    pub verdict: Verdict,
    /// "signed off", "not signed off: 2 suspects".
    pub headline: String,
    /// The sign-off criteria and how each went.
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SuspectView {
    /// "host", "nic", "link".
    pub kind: String,
    /// "node07", "node07 mlx5_2", "node03 ↔ node11 rail 2".
    pub subject: String,
    /// "high", "medium", or a number the report gives.
    pub confidence: String,
    /// What to do ("replace the cable", "reseat the NIC").
    pub action: String,
    pub evidence: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Bandwidth,
    Latency,
}

impl Metric {
    fn name(self) -> &'static str {
        match self {
            Metric::Bandwidth => "bandwidth",
            Metric::Latency => "latency",
        }
    }

    fn higher_is_better(self) -> bool {
        self == Metric::Bandwidth
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct PairMatrix {
    pub metric: Metric,
    /// `None` when the run had one rail (or the matrix is over all rails).
    pub rail: Option<String>,
    pub unit: String,
    /// `values[row][column]` for `BurninView::hosts`; what row and column mean (sender and receiver)
    /// is said in `axes`.
    pub values: Vec<Vec<Option<f64>>>,
    pub axes: String,
    /// Pairs (row, column) named as suspects.
    pub suspect_cells: Vec<(usize, usize)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PhaseSpan {
    pub name: String,
    /// Seconds since the start of the run.
    pub start_seconds: f64,
    pub end_seconds: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HostTimeline {
    pub host: String,
    pub series: Vec<CounterSeries>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CounterSeries {
    /// "PFC pause rx", "CNP sent", "retransmits", "port errors".
    pub counter: String,
    pub unit: String,
    /// (seconds since the start of the run, increase during the interval ending then).
    pub points: Vec<(f64, f64)>,
}

/// The whole page.
pub fn burnin_page(view: &BurninView) -> String {
    let mut body = String::new();
    signoff(&mut body, view);
    suspects(&mut body, &view.suspects);
    heatmaps(&mut body, view);
    timelines(&mut body, view);
    topologies(&mut body, &view.topologies);
    body.push_str("<section id=\"findings\"><h2>Findings</h2>");
    body.push_str(&findings::table(&view.findings));
    body.push_str("</section>\n");
    page(&view.title, &view.tool_version, &view.generated_at, &body)
}

fn signoff(out: &mut String, view: &BurninView) {
    let _ = write!(
        out,
        "<section id=\"signoff\" class=\"signoff {}\"><h2>Sign-off: {}</h2><p class=\"counts\">{} hosts, {} suspects</p><ul>",
        verdict_class(view.signoff.verdict),
        escape(&view.signoff.headline),
        view.hosts.len(),
        view.suspects.len()
    );
    for reason in &view.signoff.reasons {
        let _ = write!(out, "<li>{}</li>", escape(reason));
    }
    out.push_str("</ul></section>\n");
}

fn suspects(out: &mut String, suspects: &[SuspectView]) {
    out.push_str("<section id=\"suspects\"><h2>Suspects</h2>");
    if suspects.is_empty() {
        out.push_str("<p class=\"note\">No host, NIC or link was found at fault.</p></section>\n");
        return;
    }
    out.push_str(
        "<table class=\"suspects\"><thead><tr><th>#</th><th>kind</th><th>suspect</th><th>confidence</th><th>action</th>\
         <th>evidence</th></tr></thead><tbody>",
    );
    for (rank, suspect) in suspects.iter().enumerate() {
        let _ = write!(
            out,
            "<tr class=\"suspect\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><ul>",
            rank + 1,
            escape(&suspect.kind),
            escape(&suspect.subject),
            escape(&suspect.confidence),
            escape(&suspect.action)
        );
        for line in &suspect.evidence {
            let _ = write!(out, "<li>{}</li>", escape(line));
        }
        out.push_str("</ul></td></tr>");
    }
    out.push_str("</tbody></table></section>\n");
}

fn heatmaps(out: &mut String, view: &BurninView) {
    out.push_str("<section id=\"heatmaps\"><h2>Pairwise bandwidth and latency</h2>");
    if view.matrices.is_empty() {
        out.push_str("<p class=\"note\">This report holds no pairwise measurements.</p>");
    } else {
        out.push_str(
            "<p class=\"note\">Colour is relative to the best pair of each matrix: light is as good as the best, dark \
             is far from it. Outlined cells are suspect pairs; marked rows and columns are suspect hosts. Point at a \
             cell for its numbers.</p>",
        );
    }
    for (index, matrix) in view.matrices.iter().enumerate() {
        let id = format!("{}-{index}", matrix.metric.name());
        let caption = match &matrix.rail {
            Some(rail) => format!("{} on rail {rail} ({}; {})", matrix.metric.name(), matrix.unit, matrix.axes),
            None => format!("{} ({}; {})", matrix.metric.name(), matrix.unit, matrix.axes),
        };
        out.push_str(&heatmap::render(&HeatmapInput {
            id: &id,
            caption: &caption,
            unit: &matrix.unit,
            higher_is_better: matrix.metric.higher_is_better(),
            hosts: &view.hosts,
            values: &matrix.values,
            suspect_hosts: &view.suspect_hosts,
            suspect_cells: &matrix.suspect_cells,
        }));
    }
    out.push_str("</section>\n");
}

fn timelines(out: &mut String, view: &BurninView) {
    out.push_str("<section id=\"timelines\"><h2>Counters over the run</h2>");
    let start = view.phases.iter().map(|p| p.start_seconds).fold(0.0f64, f64::min);
    let end = view
        .phases
        .iter()
        .map(|p| p.end_seconds)
        .chain(view.timelines.iter().flat_map(|t| t.series.iter().flat_map(|s| s.points.iter().map(|(t, _)| *t))))
        .filter(|t| t.is_finite())
        .fold(start, f64::max);
    let suspect_names: Vec<&str> =
        view.suspect_hosts.iter().filter_map(|&i| view.hosts.get(i)).map(String::as_str).collect();
    let mut shown: Vec<&HostTimeline> = view.timelines.iter().filter(|t| timeline::has_activity(t)).collect();
    // Suspect hosts first, then in host order.
    shown.sort_by_key(|t| !suspect_names.contains(&t.host.as_str()));
    let quiet: Vec<&str> =
        view.timelines.iter().filter(|t| !timeline::has_activity(t)).map(|t| t.host.as_str()).collect();
    if view.timelines.is_empty() {
        out.push_str("<p class=\"note\">This report holds no counter samples.</p>");
    }
    for host_timeline in shown {
        let suspect = if suspect_names.contains(&host_timeline.host.as_str()) { " suspect" } else { "" };
        let _ = write!(
            out,
            "<figure class=\"host-timeline{suspect}\"><figcaption>{}</figcaption>",
            escape(&host_timeline.host)
        );
        out.push_str(&timeline::render(host_timeline, &view.phases, start, end));
        out.push_str("</figure>");
    }
    if !quiet.is_empty() {
        let _ = write!(
            out,
            "<p class=\"note quiet\">No counter moved on {} host{}: {}</p>",
            quiet.len(),
            if quiet.len() == 1 { "" } else { "s" },
            escape(&quiet.join(", "))
        );
    }
    out.push_str("</section>\n");
}

/// One picture per distinct layout (hosts of a cluster are usually identical), plus one for every
/// host whose picture has marks of its own, so a 64-host page does not repeat 64 equal drawings.
fn topologies(out: &mut String, pictures: &[TopologyPicture]) {
    out.push_str("<section id=\"topology\"><h2>Topology</h2>");
    if pictures.is_empty() {
        out.push_str("<p class=\"note\">This report holds no host topology.</p></section>\n");
        return;
    }
    let layout = |p: &TopologyPicture| {
        let mut bare = p.clone();
        bare.hostname.clear();
        for node in &mut bare.nodes {
            node.marks.clear();
            node.link_marks.clear();
        }
        bare
    };
    let marked = |p: &TopologyPicture| p.nodes.iter().any(|n| !n.marks.is_empty() || !n.link_marks.is_empty());
    let mut groups: Vec<(TopologyPicture, Vec<&TopologyPicture>)> = Vec::new();
    for picture in pictures.iter().filter(|p| !marked(p)) {
        let bare = layout(picture);
        match groups.iter_mut().find(|(b, _)| *b == bare) {
            Some((_, members)) => members.push(picture),
            None => groups.push((bare, vec![picture])),
        }
    }
    for picture in pictures.iter().filter(|p| marked(p)) {
        let _ = write!(out, "<h3 class=\"marked\">{}</h3>", escape(&picture.hostname));
        out.push_str(&picture.render());
    }
    for (_, members) in groups {
        let names: Vec<&str> = members.iter().map(|p| p.hostname.as_str()).collect();
        let _ = write!(
            out,
            "<h3>{} host{} with this layout and nothing marked: {}</h3>",
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            escape(&names.join(", "))
        );
        out.push_str(&members[0].render());
    }
    out.push_str("</section>\n");
}
