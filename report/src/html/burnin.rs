//! The burn-in page: sign-off, ranked suspects with their evidence, pairwise heatmaps per metric and
//! rail, counter timelines per host with phase boundaries, the topology of each distinct host layout,
//! and the findings table. [`BurninView`] is what the page shows; it is filled from the burn-in
//! report without computing anything new (the report already holds verdicts, suspects and matrices).

use std::fmt::Write as _;

use fabricdoctor_checks::{Finding, Verdict};

use super::heatmap::{self, HeatmapInput};
pub use super::timeline::{CounterSeries, HostTimeline, PhaseSpan};
use super::{escape, findings, page, timeline, verdict_class, TopologyPicture};
use crate::burnin::{BurninReport, CounterCategories, CounterInterval, SignOffVerdict, SuspectKind};
use crate::pair_summary::PairSummary;

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
    pub matrices: Vec<PairMatrix>,
    /// Rails whose pairs are summarised (over 128 hosts).
    pub rail_summaries: Vec<RailSummaryView>,
    /// How the pairs were measured and what bounds the figures (`crate::burnin::pair_figures`).
    pub pair_figures: Option<String>,
    pub phases: Vec<PhaseSpan>,
    pub timelines: Vec<HostTimeline>,
    /// Hosts whose topology could not be drawn, and why.
    pub notes: Vec<String>,
    pub topologies: Vec<TopologyPicture>,
    /// Further tables of the report (hosts and their status, loopback, collectives, baseline).
    pub tables: Vec<SimpleTable>,
    pub findings: Vec<Finding>,
}

/// A plain table: a title, a header row and text rows.
#[derive(Debug, Clone, PartialEq)]
pub struct SimpleTable {
    pub id: String,
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
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
    /// The host the suspect is on (a link's first end).
    pub host: String,
    /// "node07", "node07 mlx5_2", "node03<->node11 mlx5_2" (the report's subject).
    pub subject: String,
    /// The report's confidence (0..1) as a percentage, "90%".
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
    /// Indices into `BurninView::hosts` of suspect hosts (or their NIC or cable on this rail): their
    /// rows and columns are marked.
    pub suspect_hosts: Vec<usize>,
    /// Pairs (row, column) named as suspects or below tolerance: the cells are outlined.
    pub suspect_cells: Vec<(usize, usize)>,
    /// The rail's expectation for this metric (Gb/s at least, or µs at most) and where it came
    /// from: colours are then the fraction of the expectation, not of the best pair.
    pub expected: Option<(f64, String)>,
    /// The axis when it is not `BurninView::hosts`: the groups of a summarised rail (each cell a
    /// tile of pairs, coloured by its worst pair).
    pub groups: Option<Vec<String>>,
    /// With `groups`: each tile's worst pair ("client->server"), where the summary names it; a
    /// click on the tile shows it with the hosts of both groups.
    pub worst_pairs: Option<Vec<Vec<Option<String>>>>,
}

/// What a summarised rail (over 128 hosts) shows beside its tiles: the spread of every pair, the
/// worst pairs, and which hosts each group holds.
#[derive(Debug, Clone, PartialEq)]
pub struct RailSummaryView {
    pub rail: String,
    /// "40,000 pairs; mean bandwidth min 184, p1 ..., median 368 Gb/s; 1 failed".
    pub spread: String,
    /// (from Gb/s, to Gb/s, pairs) per bin.
    pub histogram: Vec<(f64, f64, u64)>,
    pub outliers: SimpleTable,
    /// (group, its hosts).
    pub groups: Vec<(String, String)>,
}

/// The whole page.
pub fn burnin_page(view: &BurninView) -> String {
    let mut body = String::new();
    signoff(&mut body, view);
    suspects(&mut body, &view.suspects);
    heatmaps(&mut body, view);
    timelines(&mut body, view);
    for table in &view.tables {
        simple_table(&mut body, table);
    }
    topologies(&mut body, &view.topologies, &view.notes);
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
    if let Some(line) = &view.pair_figures {
        let _ = write!(out, "<p class=\"measured\">{}</p>", escape(line));
    }
    if view.matrices.is_empty() {
        out.push_str("<p class=\"note\">This report holds no pairwise measurements.</p>");
    } else {
        out.push_str(
            "<p class=\"note\">Colour is relative to the rail's expectation where the run had one (the legend under \
             the matrix says so and gives its source), else to the best pair of the matrix: light is as good as the \
             reference, dark is far from it. Outlined cells are suspect pairs; marked rows and columns are suspect \
             hosts. Point at a cell for its numbers.</p>",
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
            hosts: matrix.groups.as_deref().unwrap_or(&view.hosts),
            values: &matrix.values,
            suspect_hosts: &matrix.suspect_hosts,
            suspect_cells: &matrix.suspect_cells,
            expected: matrix.expected.as_ref().map(|(figure, source)| (*figure, source.as_str())),
            tiles: matrix.groups.as_ref().map(|_| matrix.worst_pairs.as_deref().unwrap_or(&[])),
        }));
    }
    for summary in &view.rail_summaries {
        rail_summary(out, summary);
    }
    out.push_str("</section>\n");
}

/// A summarised rail: the histogram as bars, the worst pairs, and the hosts of each group.
fn rail_summary(out: &mut String, summary: &RailSummaryView) {
    let _ = write!(
        out,
        "<div class=\"rail-summary\"><h3>Every pair of rail {}</h3><p class=\"measured\">{}</p>",
        escape(&summary.rail),
        escape(&summary.spread)
    );
    let most = summary.histogram.iter().map(|(_, _, n)| *n).max().unwrap_or(0).max(1);
    out.push_str("<table class=\"histogram\"><thead><tr><th>Gb/s</th><th>pairs</th><th></th></tr></thead><tbody>");
    for (from, to, pairs) in summary.histogram.iter().filter(|(_, _, n)| *n > 0) {
        // A bar per bin; a few pairs in a bin far from the peak still show (at least one pixel).
        let width = (*pairs as f64 / most as f64 * 300.0).max(1.0);
        let _ = write!(
            out,
            "<tr><td>{}–{}</td><td>{pairs}</td><td><div class=\"bar\" style=\"width:{width:.0}px\"></div></td></tr>",
            heatmap::number(*from),
            heatmap::number(*to)
        );
    }
    out.push_str("</tbody></table>");
    simple_table(out, &summary.outliers);
    out.push_str("<details><summary>Hosts of each group</summary><table class=\"groups\"><tbody>");
    for (group, hosts) in &summary.groups {
        let _ = write!(
            out,
            "<tr data-group=\"{}\"><th>{}</th><td>{}</td></tr>",
            escape(group),
            escape(group),
            escape(hosts)
        );
    }
    out.push_str("</tbody></table></details></div>");
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
    let suspect_names: Vec<&str> = view.suspects.iter().map(|s| s.host.as_str()).collect();
    let mut shown: Vec<&HostTimeline> = view.timelines.iter().filter(|t| timeline::has_activity(t)).collect();
    // Hosts of suspects first, in the suspects' rank order, then the others in host order.
    shown.sort_by_key(|t| suspect_names.iter().position(|s| *s == t.host).unwrap_or(usize::MAX));
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

fn simple_table(out: &mut String, table: &SimpleTable) {
    let _ = write!(out, "<section id=\"{}\"><h2>{}</h2>", escape(&table.id), escape(&table.title));
    if table.rows.is_empty() {
        out.push_str("<p class=\"note\">None.</p></section>\n");
        return;
    }
    // Long tables (a row per host of a large run) start folded, so the sections below stay in reach.
    let folded = table.rows.len() > FOLD_ROWS;
    if folded {
        let _ = write!(out, "<details><summary>{} rows</summary>", table.rows.len());
    }
    out.push_str("<table class=\"plain\"><thead><tr>");
    for cell in &table.header {
        let _ = write!(out, "<th>{}</th>", escape(cell));
    }
    out.push_str("</tr></thead><tbody>");
    for row in &table.rows {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", escape(cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    if folded {
        out.push_str("</details>");
    }
    out.push_str("</section>\n");
}

/// Tables longer than this start folded.
const FOLD_ROWS: usize = 16;

/// One picture per distinct layout (hosts of a cluster are usually identical), plus one for every
/// host whose picture has marks of its own, so a 64-host page does not repeat 64 equal drawings.
fn topologies(out: &mut String, pictures: &[TopologyPicture], notes: &[String]) {
    out.push_str("<section id=\"topology\"><h2>Topology</h2>");
    for note in notes {
        let _ = write!(out, "<p class=\"note\">{}</p>", escape(note));
    }
    if pictures.is_empty() {
        if notes.is_empty() {
            out.push_str("<p class=\"note\">This report holds no host topology.</p>");
        }
        out.push_str("</section>\n");
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

/// `burnin`'s report.json as a page (what `report html` and the burn-in's own `report.html` show).
pub fn burnin_report_page(report: &BurninReport) -> String {
    burnin_page(&BurninView::from_report(report))
}

impl BurninView {
    /// What the page shows of a burn-in report. Nothing is judged here: verdicts, suspects and the
    /// matrices are the report's; this only lays them out (host order, which cells to outline).
    pub fn from_report(report: &BurninReport) -> BurninView {
        let hosts = host_axis(report);
        let matrices = pair_matrices(report, &hosts);
        let timelines = counter_timelines(report, &hosts);
        let (topologies, notes) = topology_pictures(report);
        BurninView {
            title: format!("fabricdoctor burnin — {} hosts, run {}", report.hosts.len(), report.run.run_id),
            tool_version: report.tool_version.clone(),
            generated_at: report.generated_at.clone(),
            signoff: signoff_summary(report),
            suspects: suspect_views(report),
            hosts,
            matrices,
            rail_summaries: rail_summaries(report),
            pair_figures: crate::burnin::pair_figures(report),
            phases: phase_spans(report),
            timelines,
            notes,
            topologies,
            tables: tables(report),
            findings: page_findings(report),
        }
    }
}

/// The axis of every matrix: the run's hosts, then any host only a pair matrix names.
fn host_axis(report: &BurninReport) -> Vec<String> {
    let mut hosts: Vec<String> = report.hosts.iter().map(|h| h.name.clone()).collect();
    for matrix in &report.pairs {
        for host in &matrix.hosts {
            if !hosts.contains(host) {
                hosts.push(host.clone());
            }
        }
    }
    hosts
}

/// The verdict and the headline of the sign-off, with the report's reasons.
fn signoff_summary(report: &BurninReport) -> SignOff {
    let (verdict, headline) = match report.signoff.verdict {
        SignOffVerdict::Pass => (Verdict::Pass, "signed off".to_string()),
        SignOffVerdict::Fail => (
            Verdict::Fail,
            format!(
                "not signed off: {} suspect{}",
                report.suspects.len(),
                if report.suspects.len() == 1 { "" } else { "s" }
            ),
        ),
        SignOffVerdict::Incomplete => (
            Verdict::Error,
            match &report.run.stopped {
                Some(why) => format!("incomplete: {why}"),
                None => "incomplete: the run has not reached sign-off".to_string(),
            },
        ),
    };
    SignOff { verdict, headline, reasons: report.signoff.reasons.clone() }
}

/// The report's suspects in its order, confidence as a percentage.
fn suspect_views(report: &BurninReport) -> Vec<SuspectView> {
    report
        .suspects
        .iter()
        .map(|s| SuspectView {
            kind: suspect_kind(s.kind).into(),
            host: s.host.clone(),
            subject: s.subject.clone(),
            confidence: format!("{:.0}%", s.confidence * 100.0),
            action: s.action.clone(),
            evidence: s.evidence.clone(),
        })
        .collect()
}

/// A bandwidth matrix per rail, then a latency matrix per rail, on the page's host axis, with the
/// suspects of each rail marked.
fn pair_matrices(report: &BurninReport, hosts: &[String]) -> Vec<PairMatrix> {
    let several_rails = report.pairs.len() > 1;
    let mut matrices = Vec::new();
    for metric in [Metric::Bandwidth, Metric::Latency] {
        for pairs in &report.pairs {
            let source = match metric {
                Metric::Bandwidth => &pairs.bw_gbps,
                Metric::Latency => &pairs.lat_us,
            };
            let (suspect_hosts, suspect_cells) = suspects_on_rail(report, &pairs.rail, hosts, metric);
            let expectation = report.expectations.iter().find(|e| e.rail == pairs.rail);
            let expected = expectation.and_then(|e| {
                let figure = match metric {
                    Metric::Bandwidth => e.pair_gbps,
                    Metric::Latency => e.pair_latency_us,
                }?;
                Some((figure, e.source.clone()))
            });
            if let Some(summary) = &pairs.summary {
                matrices.push(tile_matrix(report, pairs, summary, hosts, metric, several_rails));
                continue;
            }
            matrices.push(PairMatrix {
                metric,
                rail: (several_rails || pairs.rail != "default").then(|| pairs.rail.clone()),
                unit: match metric {
                    Metric::Bandwidth => "Gb/s".into(),
                    Metric::Latency => "µs one-way".into(),
                },
                values: values_by_host(&pairs.hosts, source, hosts),
                axes: "rows: client (sender), columns: server; mean over the run".into(),
                suspect_hosts,
                suspect_cells,
                expected,
                groups: None,
                worst_pairs: None,
            });
        }
    }
    matrices
}

/// A summarised rail's tiles as a matrix over its groups: each tile is its worst pair, and a tile
/// holding a suspect's pair (or a suspect host's group) is marked as the cell would be.
fn tile_matrix(
    report: &BurninReport,
    pairs: &crate::burnin::PairMatrix,
    summary: &PairSummary,
    hosts: &[String],
    metric: Metric,
    several_rails: bool,
) -> PairMatrix {
    let group_of: std::collections::HashMap<&str, usize> = summary
        .groups
        .iter()
        .enumerate()
        .flat_map(|(g, group)| group.hosts.iter().map(move |h| (h.as_str(), g)))
        .collect();
    let group = |host: usize| hosts.get(host).and_then(|name| group_of.get(name.as_str()).copied());
    let (suspect_hosts, suspect_cells) = suspects_on_rail(report, &pairs.rail, hosts, metric);
    let mut marked: Vec<usize> = suspect_hosts.into_iter().filter_map(group).collect();
    marked.sort_unstable();
    marked.dedup();
    let mut cells: Vec<(usize, usize)> =
        suspect_cells.into_iter().filter_map(|(a, b)| Some((group(a)?, group(b)?))).collect();
    cells.sort_unstable();
    cells.dedup();
    let values = summary
        .tiles
        .iter()
        .map(|row| {
            row.iter()
                .map(|tile| {
                    tile.as_ref().and_then(|t| match metric {
                        Metric::Bandwidth => t.worst_gbps,
                        Metric::Latency => t.worst_lat_us,
                    })
                })
                .collect()
        })
        .collect();
    let expected = report.expectations.iter().find(|e| e.rail == pairs.rail).and_then(|e| {
        let figure = match metric {
            Metric::Bandwidth => e.pair_gbps,
            Metric::Latency => e.pair_latency_us,
        }?;
        Some((figure, e.source.clone()))
    });
    PairMatrix {
        metric,
        rail: (several_rails || pairs.rail != "default").then(|| pairs.rail.clone()),
        unit: match metric {
            Metric::Bandwidth => "Gb/s".into(),
            Metric::Latency => "µs one-way".into(),
        },
        values,
        axes: format!(
            "{} hosts in {} groups; rows: the client's group, columns: the server's; each tile is its worst pair",
            hosts.len(),
            summary.groups.len()
        ),
        suspect_hosts: marked,
        suspect_cells: cells,
        expected,
        groups: Some(summary.groups.iter().map(|g| g.name.clone()).collect()),
        // The summary keeps the worst pair by bandwidth only; a latency tile names none.
        worst_pairs: (metric == Metric::Bandwidth).then(|| {
            summary
                .tiles
                .iter()
                .map(|row| row.iter().map(|t| t.as_ref().and_then(|t| t.worst_pair.clone())).collect())
                .collect()
        }),
    }
}

/// How many of a rail's worst pairs the page lists (report.json keeps more).
const OUTLIERS_ON_PAGE: usize = 100;

fn rail_summaries(report: &BurninReport) -> Vec<RailSummaryView> {
    let text = |v: Option<f64>| v.map(heatmap::number).unwrap_or_else(|| "—".into());
    report
        .pairs
        .iter()
        .filter_map(|matrix| {
            let summary = matrix.summary.as_ref()?;
            let mut spread = format!("{} pairs", summary.pairs);
            if let Some(q) = summary.bw_gbps {
                spread.push_str(&format!(
                    "; mean bandwidth min {}, p1 {}, p5 {}, median {}, p99 {}, max {} Gb/s",
                    heatmap::number(q.min),
                    heatmap::number(q.p1),
                    heatmap::number(q.p5),
                    heatmap::number(q.p50),
                    heatmap::number(q.p99),
                    heatmap::number(q.max)
                ));
            }
            if let Some(q) = summary.lat_us {
                spread.push_str(&format!(
                    "; mean latency median {}, p99 {}, max {} µs",
                    heatmap::number(q.p50),
                    heatmap::number(q.p99),
                    heatmap::number(q.max)
                ));
            }
            spread
                .push_str(&format!("; {} failed. Kept in report.json: {}", summary.failed_pairs, summary.outlier_rule));
            let outliers = SimpleTable {
                id: format!("outliers-{}", matrix.rail),
                title: format!(
                    "Worst pairs of rail {} ({} of {} outliers)",
                    matrix.rail,
                    matrix.pairs.len().min(OUTLIERS_ON_PAGE),
                    matrix.pairs.len() as u64 + summary.outliers_left_out
                ),
                header: ["client", "server", "mean Gb/s", "of expected", "mean µs", "failures", "errors", "last error"]
                    .map(String::from)
                    .to_vec(),
                rows: matrix
                    .pairs
                    .iter()
                    .take(OUTLIERS_ON_PAGE)
                    .map(|p| {
                        vec![
                            p.client.clone(),
                            p.server.clone(),
                            text(p.bw_mean_gbps),
                            p.expected_fraction.map(|f| format!("{:.0}%", f * 100.0)).unwrap_or_else(|| "—".into()),
                            text(p.lat_mean_us),
                            p.failures.to_string(),
                            p.validation_errors.to_string(),
                            p.last_error.clone().unwrap_or_default(),
                        ]
                    })
                    .collect(),
            };
            Some(RailSummaryView {
                rail: matrix.rail.clone(),
                spread,
                histogram: summary.bw_histogram.iter().map(|b| (b.from_gbps, b.to_gbps, b.pairs)).collect(),
                outliers,
                groups: summary.groups.iter().map(|g| (g.name.clone(), g.hosts.join(" "))).collect(),
            })
        })
        .collect()
}

/// A matrix over `pair_hosts` moved onto the page's host axis.
fn values_by_host(pair_hosts: &[String], source: &[Vec<Option<f64>>], hosts: &[String]) -> Vec<Vec<Option<f64>>> {
    // The report's own host order may differ from the run's; place each value by name. Each
    // name is looked up once (a search per cell is hosts^3 work: minutes at a thousand hosts).
    let index: std::collections::HashMap<&str, usize> =
        hosts.iter().enumerate().map(|(i, h)| (h.as_str(), i)).collect();
    let positions: Vec<Option<usize>> = pair_hosts.iter().map(|h| index.get(h.as_str()).copied()).collect();
    let mut values = vec![vec![None; hosts.len()]; hosts.len()];
    for (r, row) in positions.iter().enumerate() {
        for (c, column) in positions.iter().enumerate() {
            if let (Some(i), Some(j)) = (row, column) {
                values[*i][*j] = source.get(r).and_then(|cells| cells.get(c)).copied().flatten();
            }
        }
    }
    values
}

/// Each phase iteration as a span on the run's clock, named `phase#iteration`.
fn phase_spans(report: &BurninReport) -> Vec<PhaseSpan> {
    report
        .phases
        .iter()
        .map(|p| PhaseSpan {
            name: format!("{}#{}", p.name, p.iteration),
            start_seconds: p.start_offset_s,
            end_seconds: p.end_offset_s.unwrap_or(p.start_offset_s),
        })
        .collect()
}

/// Per host with counter samples, in axis order, a step curve per counter category.
fn counter_timelines(report: &BurninReport, hosts: &[String]) -> Vec<HostTimeline> {
    let mut timelines: Vec<HostTimeline> = Vec::new();
    for host in hosts {
        let mut intervals: Vec<&CounterInterval> =
            report.counters.intervals.iter().filter(|i| &i.host == host).collect();
        if intervals.is_empty() {
            continue;
        }
        intervals.sort_by(|a, b| a.start_offset_s.total_cmp(&b.start_offset_s));
        let series = COUNTER_CATEGORIES
            .iter()
            .map(|(counter, value)| CounterSeries {
                counter: (*counter).to_string(),
                unit: "count".into(),
                // Each interval's growth held over the interval: a step curve.
                points: intervals
                    .iter()
                    .flat_map(|i| {
                        let v = value(&i.totals) as f64;
                        [(i.start_offset_s, v), (i.end_offset_s, v)]
                    })
                    .collect(),
            })
            .collect();
        timelines.push(HostTimeline { host: host.clone(), series });
    }
    timelines
}

/// The topology picture of every host check that has one drawable, and notes saying why the others
/// have none.
fn topology_pictures(report: &BurninReport) -> (Vec<TopologyPicture>, Vec<String>) {
    // Why hosts have no picture, each reason once with the hosts it applies to.
    let mut reasons: Vec<(String, Vec<String>)> = Vec::new();
    let mut note = |reason: String, host: &str| match reasons.iter_mut().find(|(r, _)| *r == reason) {
        Some((_, hosts)) => hosts.push(host.to_string()),
        None => reasons.push((reason, vec![host.to_string()])),
    };
    let mut topologies = Vec::new();
    for check in &report.host_checks {
        let host_findings: &[Finding] = check.report.as_ref().map(|r| r.findings.as_slice()).unwrap_or(&[]);
        match &check.topology {
            Some(value) => match TopologyPicture::from_topology_json(&check.host, value, host_findings) {
                Ok(picture) if picture.nodes.is_empty() => {
                    note("no GPU or RDMA NIC in the topology".into(), &check.host)
                }
                Ok(picture) => topologies.push(picture),
                Err(error) => note(format!("topology not readable: {error}"), &check.host),
            },
            None => note(
                match &check.error {
                    Some(error) => format!("no topology in the report ({error})"),
                    None => "no topology in the report".to_string(),
                },
                &check.host,
            ),
        }
    }
    let notes = reasons.into_iter().map(|(reason, hosts)| format!("{}: {reason}", hosts.join(", "))).collect();
    (topologies, notes)
}

/// The run's findings, then those of every host check.
fn page_findings(report: &BurninReport) -> Vec<Finding> {
    let mut findings = report.findings.clone();
    for check in &report.host_checks {
        let host_findings: &[Finding] = check.report.as_ref().map(|r| r.findings.as_slice()).unwrap_or(&[]);
        // Node check findings name devices, not hosts: the host goes in front of the subject.
        findings.extend(host_findings.iter().map(|f| {
            let mut f = f.clone();
            f.subject = format!("{}: {}", check.host, f.subject);
            f
        }));
    }
    findings
}

/// The counter categories of [`CounterCategories`] in the order the timelines draw them.
type CategoryValue = fn(&CounterCategories) -> u64;
const COUNTER_CATEGORIES: [(&str, CategoryValue); 5] = [
    ("PFC pause", |c| c.pfc_pause),
    ("ECN / CNP", |c| c.ecn_cnp),
    ("retransmits", |c| c.retransmits),
    ("port errors", |c| c.port_errors),
    ("PCIe AER", |c| c.pcie_aer),
];

fn suspect_kind(kind: SuspectKind) -> &'static str {
    match kind {
        SuspectKind::Host => "host",
        SuspectKind::Nic => "nic",
        SuspectKind::Link => "link",
    }
}

/// "a<->b rail" (a pair) -> (a, b, rail). Subjects without "<->" name one host.
fn pair_subject(subject: &str) -> Option<(&str, &str, Option<&str>)> {
    let (pair, rail) = match subject.rsplit_once(' ') {
        Some((pair, rail)) if pair.contains("<->") => (pair, Some(rail)),
        _ => (subject, None),
    };
    let (a, b) = pair.split_once("<->")?;
    Some((a.trim(), b.trim(), rail))
}

/// The hosts to mark and the cells to outline on one rail's matrices: suspects of kind host (every
/// rail), NIC or host cable (their rail), pair links (both directions), and the pairs that failed a
/// `burnin.pair.*` check of this metric on this rail.
fn suspects_on_rail(
    report: &BurninReport,
    rail: &str,
    hosts: &[String],
    metric: Metric,
) -> (Vec<usize>, Vec<(usize, usize)>) {
    let position = |name: &str| hosts.iter().position(|h| h == name);
    let mut marked = Vec::new();
    let mut cells = Vec::new();
    let add_pair = |a: &str, b: &str, cells: &mut Vec<(usize, usize)>| {
        if let (Some(i), Some(j)) = (position(a), position(b)) {
            cells.push((i, j));
            cells.push((j, i));
        }
    };
    for suspect in &report.suspects {
        match pair_subject(&suspect.subject) {
            Some((a, b, pair_rail)) if pair_rail.is_none_or(|r| r == rail) => add_pair(a, b, &mut cells),
            Some(_) => {}
            None => {
                // "host" or "host rail": a host, or its NIC or cable on a rail.
                let on_this_rail = match suspect.subject.split_once(' ') {
                    Some((_, suspect_rail)) if suspect.kind != SuspectKind::Host => suspect_rail == rail,
                    _ => true,
                };
                if on_this_rail {
                    marked.extend(position(&suspect.host));
                }
            }
        }
    }
    let metric_word = match metric {
        Metric::Bandwidth => "bandwidth",
        Metric::Latency => "latency",
    };
    for finding in &report.findings {
        let about_this_metric = finding.id.starts_with("burnin.pair") && finding.id.contains(metric_word);
        if about_this_metric && matches!(finding.verdict, Verdict::Fail | Verdict::Error | Verdict::Warn) {
            if let Some((a, b, pair_rail)) = pair_subject(&finding.subject) {
                if pair_rail.is_none_or(|r| r == rail) {
                    add_pair(a, b, &mut cells);
                }
            }
        }
    }
    marked.sort_unstable();
    marked.dedup();
    cells.sort_unstable();
    cells.dedup();
    (marked, cells)
}

fn tables(report: &BurninReport) -> Vec<SimpleTable> {
    let text = |v: Option<f64>| v.map(heatmap::number).unwrap_or_else(|| "—".into());
    let hosts = SimpleTable {
        id: "hosts".into(),
        title: "Hosts".into(),
        header: ["host", "address", "status", "since", "reason", "last step"].map(String::from).to_vec(),
        rows: report
            .hosts
            .iter()
            .map(|h| {
                vec![
                    h.name.clone(),
                    h.address.clone(),
                    format!("{:?}", h.status).to_lowercase(),
                    h.status_at.clone().unwrap_or_default(),
                    h.reason.clone().unwrap_or_default(),
                    h.last_step.clone().unwrap_or_default(),
                ]
            })
            .collect(),
    };
    let loopback = SimpleTable {
        id: "loopback".into(),
        title: "Loopback per NIC".into(),
        header: ["host", "rail", "bandwidth Gb/s", "latency µs", "error"].map(String::from).to_vec(),
        rows: report
            .loopback
            .iter()
            .map(|l| {
                vec![
                    l.host.clone(),
                    l.rail.clone(),
                    text(l.bw_gbps),
                    text(l.lat_us),
                    l.error.clone().unwrap_or_default(),
                ]
            })
            .collect(),
    };
    let collectives = SimpleTable {
        id: "collectives".into(),
        title: "All-to-all and AllReduce".into(),
        header: [
            "collective",
            "iteration",
            "at",
            "hosts",
            "bytes",
            "time µs",
            "algbw Gb/s",
            "busbw Gb/s",
            "#wrong",
            "slowest",
            "error",
        ]
        .map(String::from)
        .to_vec(),
        rows: report
            .collectives
            .iter()
            .map(|c| {
                vec![
                    c.collective.clone(),
                    c.iteration.to_string(),
                    c.at.clone(),
                    c.hosts.len().to_string(),
                    c.bytes.to_string(),
                    text(c.time_us),
                    text(c.alg_bw_gbps),
                    text(c.bus_bw_gbps),
                    c.wrong_elements.to_string(),
                    c.slowest_host.clone().unwrap_or_default(),
                    c.error.clone().unwrap_or_default(),
                ]
            })
            .collect(),
    };
    let mut out = vec![hosts, loopback, collectives];
    if let Some(baseline) = &report.baseline {
        out.push(SimpleTable {
            id: "baseline".into(),
            title: format!(
                "Regressions against {} (run {}, {} compared, tolerance {})",
                baseline.path, baseline.baseline_run_id, baseline.compared, baseline.tolerance
            ),
            header: ["subject", "metric", "baseline", "now", "change %"].map(String::from).to_vec(),
            rows: baseline
                .regressions
                .iter()
                .map(|r| {
                    vec![
                        r.subject.clone(),
                        r.metric.clone(),
                        heatmap::number(r.baseline),
                        heatmap::number(r.current),
                        format!("{:+.1}", r.change_percent),
                    ]
                })
                .collect(),
        });
    }
    out
}
