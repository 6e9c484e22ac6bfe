//! Counter timelines: per host, one strip per counter (PFC pause, ECN/CNP, retransmits, port errors)
//! over the run, with the phase boundaries drawn across all strips. Curves are polylines whose points
//! are computed here; a long run is reduced to at most [`MAX_POINTS`] points per strip by keeping
//! each bucket's largest value, so a one-interval burst of pause frames is never averaged away.

use std::fmt::Write as _;

use super::escape;
use super::heatmap::number;

/// The timeline's input: the burn-in's phases and each host's counter series (built by
/// `html::burnin` from a burn-in report).
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

/// Points drawn per strip (about one per 2.5 pixels of the strip's width).
pub const MAX_POINTS: usize = 240;

const WIDTH: f64 = 720.0;
const LABEL_WIDTH: f64 = 210.0;
const STRIP_HEIGHT: f64 = 30.0;
const STRIP_GAP: f64 = 6.0;
const PHASE_LABEL_HEIGHT: f64 = 14.0;

/// Largest value per time bucket, at most `max_points` points, in time order.
pub fn reduce(points: &[(f64, f64)], start: f64, end: f64, max_points: usize) -> Vec<(f64, f64)> {
    let mut valid: Vec<(f64, f64)> = points.iter().copied().filter(|(t, v)| t.is_finite() && v.is_finite()).collect();
    valid.sort_by(|a, b| a.0.total_cmp(&b.0));
    if valid.len() <= max_points || max_points == 0 || end <= start {
        return valid;
    }
    let span = (end - start) / max_points as f64;
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(max_points);
    let mut current: Option<(usize, (f64, f64))> = None;
    for (t, v) in valid {
        let bucket = (((t - start) / span).floor().max(0.0) as usize).min(max_points - 1);
        match current {
            Some((b, (_, best))) if b == bucket => {
                if v > best {
                    current = Some((b, (t, v)));
                }
            }
            _ => {
                if let Some((_, point)) = current.take() {
                    out.push(point);
                }
                current = Some((bucket, (t, v)));
            }
        }
    }
    if let Some((_, point)) = current {
        out.push(point);
    }
    out
}

fn total(series: &CounterSeries) -> f64 {
    series.points.iter().map(|(_, v)| v).filter(|v| v.is_finite()).sum()
}

/// True when some counter of the host moved during the run.
pub fn has_activity(timeline: &HostTimeline) -> bool {
    timeline.series.iter().any(|s| s.points.iter().any(|(_, v)| v.is_finite() && *v != 0.0))
}

/// The SVG strips of one host over `[start, end]` seconds of the run.
pub fn render(timeline: &HostTimeline, phases: &[PhaseSpan], start: f64, end: f64) -> String {
    let rows = timeline.series.len().max(1);
    let height = PHASE_LABEL_HEIGHT + rows as f64 * (STRIP_HEIGHT + STRIP_GAP) + 16.0;
    let plot = WIDTH - LABEL_WIDTH - 8.0;
    let span = if end > start { end - start } else { 1.0 };
    // A time that is not a number (a hand-edited report) is drawn at the start, never as "NaN".
    let x_of = |t: f64| LABEL_WIDTH + if t.is_finite() { ((t - start) / span).clamp(0.0, 1.0) * plot } else { 0.0 };
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg class=\"timeline\" role=\"img\" viewBox=\"0 0 {WIDTH} {height:.0}\" width=\"{WIDTH}\" height=\"{height:.0}\" \
         data-host=\"{}\"><title>counters of {}</title>",
        escape(&timeline.host),
        escape(&timeline.host)
    );
    for (i, phase) in phases.iter().enumerate() {
        let x = x_of(phase.start_seconds);
        let bottom = height - 16.0;
        let _ = write!(
            out,
            "<g class=\"phase p{}\"><title>{}: {}–{} s</title><line x1=\"{x:.1}\" y1=\"0\" x2=\"{x:.1}\" y2=\"{bottom:.1}\"/>\
             <text x=\"{:.1}\" y=\"10\">{}</text></g>",
            i % 2,
            escape(&phase.name),
            number(phase.start_seconds),
            number(phase.end_seconds),
            x + 2.0,
            escape(&truncate_to_width(&phase.name, x_of(phase.end_seconds) - x))
        );
    }
    for (row, series) in timeline.series.iter().enumerate() {
        let top = PHASE_LABEL_HEIGHT + row as f64 * (STRIP_HEIGHT + STRIP_GAP);
        let points = reduce(&series.points, start, end, MAX_POINTS);
        let max = points.iter().map(|(_, v)| *v).fold(0.0f64, f64::max);
        let y_of = |v: f64| {
            if max > 0.0 {
                top + STRIP_HEIGHT - (v.max(0.0) / max) * STRIP_HEIGHT
            } else {
                top + STRIP_HEIGHT
            }
        };
        let active = max > 0.0;
        let _ = write!(
            out,
            "<g class=\"series{}\"><title>{}: total {} {}, peak {} {} per interval</title><rect class=\"strip\" x=\"{LABEL_WIDTH}\" \
             y=\"{top:.1}\" width=\"{plot:.1}\" height=\"{STRIP_HEIGHT}\"/><text x=\"0\" y=\"{:.1}\">{}</text><text class=\"peak\" \
             x=\"0\" y=\"{:.1}\">peak {}</text>",
            if active { " active" } else { "" },
            escape(&series.counter),
            number(total(series)),
            escape(&series.unit),
            number(max),
            escape(&series.unit),
            top + 12.0,
            escape(&series.counter),
            top + 25.0,
            number(max),
        );
        if !points.is_empty() {
            out.push_str("<polyline points=\"");
            for (t, v) in &points {
                let _ = write!(out, "{:.1},{:.1} ", x_of(*t), y_of(*v));
            }
            out.push_str("\"/>");
        }
        out.push_str("</g>");
    }
    let _ = write!(
        out,
        "<text class=\"axis\" x=\"{LABEL_WIDTH}\" y=\"{:.1}\">{} s</text><text class=\"axis end\" x=\"{WIDTH}\" \
         y=\"{:.1}\">{} s</text></svg>",
        height - 3.0,
        number(start),
        height - 3.0,
        number(end)
    );
    out
}

/// A phase name cut to what fits between its boundaries (about 6 px a character at the label size).
fn truncate_to_width(name: &str, width: f64) -> String {
    let fits = (width / 6.0).floor().max(0.0) as usize;
    if name.chars().count() <= fits {
        name.to_string()
    } else if fits <= 1 {
        String::new()
    } else {
        let mut cut: String = name.chars().take(fits - 1).collect();
        cut.push('…');
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduction_keeps_the_burst_of_each_bucket() {
        let mut points: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64, 0.0)).collect();
        points[5_003].1 = 900.0;
        let reduced = reduce(&points, 0.0, 10_000.0, 100);
        assert!(reduced.len() <= 100);
        assert!(reduced.contains(&(5_003.0, 900.0)));
        let short = vec![(2.0, 1.0), (1.0, 3.0)];
        assert_eq!(reduce(&short, 0.0, 3.0, 100), vec![(1.0, 3.0), (2.0, 1.0)]);
    }

    #[test]
    fn strips_span_the_run_and_phases_are_drawn() {
        let timeline = HostTimeline {
            host: "h<1>".into(),
            series: vec![CounterSeries {
                counter: "PFC pause rx".into(),
                unit: "frames".into(),
                points: vec![(0.0, 0.0), (50.0, 10.0), (100.0, 0.0)],
            }],
        };
        let phases = vec![
            PhaseSpan { name: "pairwise".into(), start_seconds: 0.0, end_seconds: 60.0 },
            PhaseSpan { name: "soak".into(), start_seconds: 60.0, end_seconds: 100.0 },
        ];
        let svg = render(&timeline, &phases, 0.0, 100.0);
        assert_eq!(svg.matches("<g class=\"phase").count(), 2);
        assert!(svg.contains("total 10.0 frames, peak 10.0"));
        assert!(svg.contains("210.0,44.0 "), "first point at the left edge, at zero");
        assert!(svg.contains("h&lt;1&gt;"));
    }
}
