//! Pairwise heatmaps (hosts × hosts) of bandwidth or latency. Each cell's colour step is computed
//! here from its ratio to the best pair, so a slow host shows as a dark row and column and a bad
//! cable as one dark cell. The exact numbers of a row are one attribute of the row (shown by the
//! page's tooltip), which keeps a 64×64 matrix per rail small enough to mail and quick to lay out.

use std::fmt::Write as _;

use super::escape;

/// Number of colour steps (CSS classes `q0`, lightest = best, to `q9`).
pub const SCALE_STEPS: usize = 10;

/// Lower bounds of the ratio to the best pair for steps q0..q8; below the last is q9. Fine steps near
/// the best (where a burn-in's tolerance sits, 0.93 by default) and coarse ones far from it.
const STEP_FLOORS: [f64; SCALE_STEPS - 1] = [0.99, 0.97, 0.95, 0.90, 0.80, 0.70, 0.55, 0.40, 0.25];

/// The colour scale of one matrix: relative to its best pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColourScale {
    /// The highest bandwidth or the lowest latency of the matrix.
    pub best: f64,
    pub higher_is_better: bool,
}

impl ColourScale {
    /// The scale of the measured values, ignoring missing, non-finite and non-positive ones (a zero
    /// latency or bandwidth is not a measurement). `None` when nothing was measured.
    pub fn of<'a>(values: impl Iterator<Item = &'a f64>, higher_is_better: bool) -> Option<ColourScale> {
        let valid = values.copied().filter(|v| v.is_finite() && *v > 0.0);
        let best = if higher_is_better { valid.reduce(f64::max) } else { valid.reduce(f64::min) }?;
        Some(ColourScale { best, higher_is_better })
    }

    /// 1.0 for the reference (the best pair, or the expectation: better than it counts as 1.0),
    /// towards 0 for worse ones.
    pub fn ratio(&self, value: f64) -> f64 {
        if !(value.is_finite() && value > 0.0) {
            return 0.0;
        }
        let ratio = if self.higher_is_better { value / self.best } else { self.best / value };
        ratio.min(1.0)
    }

    pub fn step(&self, value: f64) -> usize {
        let ratio = self.ratio(value);
        STEP_FLOORS.iter().position(|floor| ratio >= *floor).unwrap_or(SCALE_STEPS - 1)
    }

    /// The value at a ratio to the best (for the legend).
    fn value_at(&self, ratio: f64) -> f64 {
        if self.higher_is_better {
            self.best * ratio
        } else {
            self.best / ratio
        }
    }
}

/// A number as the report prints it: enough digits to tell pairs apart, no more.
pub fn number(value: f64) -> String {
    if value.abs() >= 1000.0 {
        format!("{value:.0}")
    } else if value.abs() >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

/// Headers longer than this are cut (the full name is the header's title and in the tooltip), so
/// one long hostname does not push the matrix off the screen.
const HEADER_CHARS: usize = 24;

fn short_host(host: &str) -> String {
    if host.chars().count() <= HEADER_CHARS {
        host.to_string()
    } else {
        let mut cut: String = host.chars().take(HEADER_CHARS - 1).collect();
        cut.push('…');
        cut
    }
}

/// What one heatmap shows.
#[derive(Debug)]
pub struct HeatmapInput<'a> {
    /// Unique within the page ("bandwidth-rail0").
    pub id: &'a str,
    pub caption: &'a str,
    pub unit: &'a str,
    pub higher_is_better: bool,
    pub hosts: &'a [String],
    /// `values[row][column]`; `None` for a pair not measured.
    pub values: &'a [Vec<Option<f64>>],
    /// Hosts named as suspects: their row and column are marked.
    pub suspect_hosts: &'a [usize],
    /// Pairs named as suspects (row, column): the cell is outlined.
    pub suspect_cells: &'a [(usize, usize)],
    /// The expectation (a figure in `unit`) and its source: colours are the fraction of it, so a
    /// matrix where every pair is equally far below it is dark, not light.
    pub expected: Option<(f64, &'a str)>,
    /// A matrix of tiles (the axes are groups of hosts): each tile's worst pair, `[row][column]`,
    /// empty where none is named. The page's script shows it and the groups' hosts on a click.
    pub tiles: Option<&'a [Vec<Option<String>>]>,
}

pub fn render(input: &HeatmapInput<'_>) -> String {
    let n = input.hosts.len();
    let measured = ColourScale::of(input.values.iter().flatten().flatten(), input.higher_is_better);
    let scale = match input.expected {
        Some((figure, _)) if figure.is_finite() && figure > 0.0 && measured.is_some() => {
            Some(ColourScale { best: figure, higher_is_better: input.higher_is_better })
        }
        _ => measured,
    };
    let mut out = String::with_capacity(n * n * 24 + 4096);
    // Cells shrink as hosts grow so a 64-host matrix still fits a screen; small runs get big cells.
    let cell_pixels = (720 / n.max(1)).clamp(11, 32);
    let _ = write!(
        out,
        "<figure class=\"heatmap-figure\"><figcaption>{}</figcaption><table class=\"heatmap\" id=\"{}\" \
         style=\"--cell:{cell_pixels}px\" data-unit=\"{}\" data-best=\"{}\"{}><thead><tr><th class=\"corner\">row → column</th>",
        escape(input.caption),
        escape(input.id),
        escape(input.unit),
        scale.map(|s| number(s.best)).unwrap_or_default(),
        if input.tiles.is_some() { " data-tiles" } else { "" },
    );
    let suspect_host = |i: usize| input.suspect_hosts.contains(&i);
    for (j, host) in input.hosts.iter().enumerate() {
        let class = if suspect_host(j) { " class=\"col suspect\"" } else { " class=\"col\"" };
        let _ = write!(out, "<th{class} title=\"{}\"><span>{}</span></th>", escape(host), escape(&short_host(host)));
    }
    out.push_str("</tr></thead><tbody>\n");
    for (i, host) in input.hosts.iter().enumerate() {
        let row_suspect = suspect_host(i);
        let row = input.values.get(i);
        let value = |j: usize| row.and_then(|r| r.get(j)).copied().flatten().filter(|v| v.is_finite());
        // A host with itself is no pair; a group with itself is the tile of its own pairs.
        let self_pair = |j: usize| i == j && input.tiles.is_none();
        // The row's numbers, one per column ("-" where not measured), for the tooltip: one attribute
        // per row instead of text in 64 cells keeps the page small and the browser's layout fast.
        let numbers: Vec<String> = (0..n)
            .map(|j| match value(j) {
                Some(v) if !self_pair(j) => number(v),
                _ => "-".to_string(),
            })
            .collect();
        let class = if row_suspect { " class=\"suspect\"" } else { "" };
        // A tile's worst pair, one per column like the numbers ("-" where none is named); a host
        // name holds no space (RFC 1123), and one that does is cut there rather than misaligned.
        let worst = input.tiles.filter(|tiles| !tiles.is_empty()).map(|tiles| {
            let names: Vec<&str> = (0..n)
                .map(|j| {
                    tiles
                        .get(i)
                        .and_then(|r| r.get(j))
                        .and_then(|w| w.as_deref())
                        .map_or("-", |w| w.split_whitespace().next().unwrap_or("-"))
                })
                .collect();
            format!(" data-worst=\"{}\"", escape(&names.join(" ")))
        });
        let _ = write!(
            out,
            "<tr data-values=\"{}\"{}><th{class} title=\"{}\">{}</th>",
            numbers.join(" "),
            worst.unwrap_or_default(),
            escape(host),
            escape(&short_host(host))
        );
        for j in 0..n {
            // Classes: q0..q9 colour step, "na" not measured, "sh" on a suspect host's row or column,
            // "sl" a suspect pair. Short, and no end tag (optional for cells, HTML 13.1.2.4), because
            // a 64-host page has tens of thousands of cells.
            let mut classes = String::new();
            match (value(j), scale) {
                (Some(v), Some(s)) if !self_pair(j) => {
                    let _ = write!(classes, "q{}", s.step(v));
                }
                _ => classes.push_str("na"),
            }
            if row_suspect || suspect_host(j) {
                classes.push_str(" sh");
            }
            if input.suspect_cells.contains(&(i, j)) {
                classes.push_str(" sl");
            }
            if classes.contains(' ') {
                let _ = write!(out, "<td class=\"{classes}\">");
            } else {
                let _ = write!(out, "<td class={classes}>");
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>");
    out.push_str(&legend(scale, input.unit, input.expected.map(|(_, source)| source)));
    out.push_str("</figure>\n");
    out
}

fn legend(scale: Option<ColourScale>, unit: &str, expected: Option<&str>) -> String {
    let Some(scale) = scale else {
        return "<p class=\"note\">No pair was measured.</p>".to_string();
    };
    let reference = if expected.is_some() { "expected" } else { "best" };
    let mut out = match expected {
        Some(source) => format!(
            "<p class=\"note\">Colours are the fraction of the expected {} {} ({}).</p><ol class=\"scale\">",
            number(scale.best),
            escape(unit),
            escape(source)
        ),
        None => String::from("<ol class=\"scale\">"),
    };
    let relation = if scale.higher_is_better { "≥" } else { "≤" };
    for (step, floor) in STEP_FLOORS.iter().enumerate() {
        let _ = write!(
            out,
            "<li class=\"q{step}\">{relation} {} {} ({:.0}% of {reference})</li>",
            number(scale.value_at(*floor)),
            escape(unit),
            floor * 100.0
        );
    }
    let _ = write!(
        out,
        "<li class=\"q{}\">worse</li><li class=\"na\">not measured</li><li class=\"sl\">suspect pair</li><li class=\"sh\">suspect host</li></ol>",
        SCALE_STEPS - 1
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_relative_to_the_best_pair_for_both_directions() {
        let bandwidth = ColourScale::of([100.0, 50.0, 0.0, f64::NAN].iter(), true).expect("scale");
        assert_eq!(bandwidth.best, 100.0);
        assert_eq!(bandwidth.step(100.0), 0);
        assert_eq!(bandwidth.step(93.0), 3);
        assert_eq!(bandwidth.step(50.0), 7);
        assert_eq!(bandwidth.step(1.0), SCALE_STEPS - 1);
        let latency = ColourScale::of([2.0, 4.2].iter(), false).expect("scale");
        assert_eq!(latency.best, 2.0);
        assert_eq!(latency.step(2.0), 0);
        assert_eq!(latency.step(4.2), 7);
        assert!(ColourScale::of([0.0].iter(), true).is_none());
    }

    #[test]
    fn a_matrix_renders_one_cell_per_pair_with_suspects_marked() {
        let hosts: Vec<String> = vec!["a".into(), "b<x>".into(), "c".into()];
        let values = vec![
            vec![None, Some(97.0), Some(98.0)],
            vec![Some(40.0), None, Some(96.0)],
            vec![Some(98.0), Some(95.0), None],
        ];
        let html = render(&HeatmapInput {
            id: "bw",
            caption: "bandwidth",
            unit: "Gb/s",
            higher_is_better: true,
            hosts: &hosts,
            values: &values,
            suspect_hosts: &[],
            suspect_cells: &[(1, 0)],
            expected: None,
            tiles: None,
        });
        assert_eq!(html.matches("<td").count(), 9);
        assert!(html.contains("<tr data-values=\"40.0 - 96.0\"><th title=\"b&lt;x&gt;\">b&lt;x&gt;</th><td class=\"q7 sl\"><td class=na><td class=q1>"));
        assert!(html
            .contains("<tr data-values=\"- 97.0 98.0\"><th title=\"a\">a</th><td class=na><td class=q1><td class=q0>"));
        assert!(html.contains("b&lt;x&gt;") && !html.contains("b<x>"));
    }

    /// Every pair at half the expectation: relative to the best pair the matrix would be all light;
    /// relative to the expectation it is dark, and the legend says what the reference is.
    #[test]
    fn an_expectation_is_the_colour_reference() {
        let hosts: Vec<String> = vec!["a".into(), "b".into()];
        let values = vec![vec![None, Some(50.0)], vec![Some(51.0), None]];
        let input = |expected| HeatmapInput {
            id: "bw",
            caption: "bandwidth",
            unit: "Gb/s",
            higher_is_better: true,
            hosts: &hosts,
            values: &values,
            suspect_hosts: &[],
            suspect_cells: &[],
            expected,
            tiles: None,
        };
        let relative = render(&input(None));
        assert!(relative.contains("<td class=q0>") && relative.contains("% of best"), "{relative}");
        let absolute = render(&input(Some((100.0, "--expect-pair-gbps"))));
        assert!(absolute.contains("<td class=q7>") && !absolute.contains("<td class=q0>"), "{absolute}");
        assert!(absolute.contains("fraction of the expected 100.0 Gb/s (--expect-pair-gbps)"), "{absolute}");
        assert!(absolute.contains("% of expected"));
    }

    /// A tile matrix says so on its table and names each tile's worst pair per row; a name with a
    /// space or markup cannot shift the columns or escape the attribute.
    #[test]
    fn tiles_carry_their_worst_pairs_for_the_click() {
        let groups: Vec<String> = vec!["leaf-a".into(), "leaf-b".into()];
        let values = vec![vec![Some(40.0), Some(97.0)], vec![Some(98.0), None]];
        let worst = vec![
            vec![Some("a1->a7".to_string()), Some("a2 \"x\"->b3".to_string())],
            vec![Some("b1-><b2>".to_string()), None],
        ];
        let html = render(&HeatmapInput {
            id: "bw",
            caption: "tiles",
            unit: "Gb/s",
            higher_is_better: true,
            hosts: &groups,
            values: &values,
            suspect_hosts: &[],
            suspect_cells: &[],
            expected: None,
            tiles: Some(&worst),
        });
        assert!(html.contains("data-best=\"98.0\" data-tiles>"), "{html}");
        assert!(html.contains("<tr data-values=\"40.0 97.0\" data-worst=\"a1-&gt;a7 a2\"><th"), "{html}");
        assert!(html.contains("<tr data-values=\"98.0 -\" data-worst=\"b1-&gt;&lt;b2&gt; -\"><th"), "{html}");
        // The diagonal is a group's pairs among its own hosts: coloured, unlike a host with itself.
        assert!(html.contains("data-worst=\"a1-&gt;a7 a2\"><th title=\"leaf-a\">leaf-a</th><td class=q7>"), "{html}");
        let plain = render(&input_like(&groups, &values));
        assert!(!plain.contains("data-tiles") && !plain.contains("data-worst"));
    }

    fn input_like<'a>(hosts: &'a [String], values: &'a [Vec<Option<f64>>]) -> HeatmapInput<'a> {
        HeatmapInput {
            id: "bw",
            caption: "hosts",
            unit: "Gb/s",
            higher_is_better: true,
            hosts,
            values,
            suspect_hosts: &[],
            suspect_cells: &[],
            expected: None,
            tiles: None,
        }
    }
}
