//! A rail's pair matrix at fleet scale. Above [`PAIRS_IN_FULL_UP_TO`] hosts, report.json keeps, per
//! rail, the pairs an operator has to look at (failed, corrupted, slow or late, worst first) and a
//! [`PairSummary`] of the rest: quantiles, a histogram of the pairs' bandwidth, and a group × group
//! tile matrix (leaf × leaf when the hosts name their leaf) coloured by each tile's worst pair. Every
//! pair's statistics go to [`PAIR_TABLE_FILE`] beside it, one JSON object per line, which `--resume`
//! and `--baseline` read back.
//!
//! Why: 1,024 hosts make a million ordered pairs per rail. Their statistics written in full made a
//! 710 MB report.json and a dense host × host matrix of a million cells per rail, which no browser
//! draws and no operator reads; the slow pairs are what a burn-in is for.

use std::collections::HashMap;

use fabricdoctor_checks::{Finding, Verdict};
use serde::{Deserialize, Serialize};

use crate::burnin::{BurninHost, PairMatrix, PairStats};

/// Up to this many hosts a rail's pairs are written in full with dense matrices; above it, the
/// matrix is summarised. 128 hosts draw as a 128 × 128 heatmap (16,384 cells, about 1 MB of page).
pub const PAIRS_IN_FULL_UP_TO: usize = 128;

/// At most this many outlier pairs per rail stay in report.json (worst first): a fabric-wide
/// shortfall makes every pair an outlier, and the full table is in [`PAIR_TABLE_FILE`].
pub const MAX_OUTLIERS: usize = 5_000;

/// Hosts per group when the hosts do not name their leaf: consecutive hosts of the host list, which
/// hostfiles and Slurm node lists order by rack.
pub const GROUP_HOSTS: usize = 32;

/// Every pair's statistics of a summarised run, one [`PairStats`] as JSON per line.
pub const PAIR_TABLE_FILE: &str = "pairs.jsonl";

/// Bins of the bandwidth histogram, from zero to the best pair.
const HISTOGRAM_BINS: usize = 40;

/// What a summarised rail matrix holds besides its outliers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairSummary {
    /// Ordered pairs measured on this rail (all of them are in [`PAIR_TABLE_FILE`]).
    pub pairs: u64,
    /// Pairs with at least one failed measurement.
    pub failed_pairs: u64,
    /// Quantiles of the pairs' mean bandwidth, Gb/s; absent when nothing was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bw_gbps: Option<Quantiles>,
    /// Quantiles of the pairs' mean one-way latency, microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_us: Option<Quantiles>,
    /// The pairs' mean bandwidth in equal bins from 0 to the best pair.
    pub bw_histogram: Vec<HistogramBin>,
    /// Which pairs the matrix's `pairs` keeps.
    pub outlier_rule: String,
    /// Outliers beyond [`MAX_OUTLIERS`], left out of `pairs` (they are in the table).
    pub outliers_left_out: u64,
    /// The groups of the tile matrix, in host order.
    pub groups: Vec<HostGroup>,
    /// `tiles[client group][server group]`: the pairs from one group to another.
    pub tiles: Vec<Vec<Option<Tile>>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    pub min: f64,
    pub p1: f64,
    pub p5: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl Quantiles {
    /// Nearest-rank quantiles of `values` (sorted here); `None` when empty.
    pub fn of(mut values: Vec<f64>) -> Option<Quantiles> {
        values.retain(|v| v.is_finite());
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let at = |q: f64| values[((q * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1];
        Some(Quantiles {
            min: values[0],
            p1: at(0.01),
            p5: at(0.05),
            p50: at(0.5),
            p95: at(0.95),
            p99: at(0.99),
            max: values[values.len() - 1],
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HistogramBin {
    pub from_gbps: f64,
    pub to_gbps: f64,
    pub pairs: u64,
}

/// Hosts drawn as one row and column of the tile matrix: a leaf, or a block of the host list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostGroup {
    pub name: String,
    pub hosts: Vec<String>,
}

/// The pairs from one group's hosts to another's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tile {
    pub pairs: u64,
    pub failed_pairs: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_gbps: Option<f64>,
    /// The lowest mean bandwidth of the tile's pairs, and which pair ("client->server").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_gbps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_pair: Option<String>,
    /// The highest mean latency of the tile's pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_lat_us: Option<f64>,
}

/// The thresholds that make a pair an outlier: the isolation's own (playbook `[isolation]`), so the
/// pairs kept are the ones burn-in would retest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutlierRule {
    /// Below this fraction of the rail's median bandwidth, or of its expectation.
    pub bandwidth_fraction: f64,
    /// Above this multiple of the rail's median latency.
    pub latency_multiple: f64,
}

/// The groups of a host list: by leaf when every host names one (hosts of a leaf in the order they
/// first appear), else blocks of [`GROUP_HOSTS`] consecutive hosts.
pub fn host_groups(hosts: &[BurninHost]) -> Vec<HostGroup> {
    if !hosts.is_empty() && hosts.iter().all(|h| h.leaf.is_some()) {
        let mut groups: Vec<HostGroup> = Vec::new();
        let mut position: HashMap<&str, usize> = HashMap::new();
        for host in hosts {
            let leaf = host.leaf.as_deref().unwrap_or_default();
            let index = *position.entry(leaf).or_insert_with(|| {
                groups.push(HostGroup { name: leaf.to_string(), hosts: Vec::new() });
                groups.len() - 1
            });
            groups[index].hosts.push(host.name.clone());
        }
        return groups;
    }
    hosts
        .chunks(GROUP_HOSTS)
        .map(|block| HostGroup {
            name: match block {
                [only] => only.name.clone(),
                [first, .., last] => format!("{}..{}", first.name, last.name),
                [] => String::new(),
            },
            hosts: block.iter().map(|h| h.name.clone()).collect(),
        })
        .collect()
}

/// Whether a run of this many hosts has its pair matrices summarised.
pub fn summarised(hosts: usize) -> bool {
    hosts > PAIRS_IN_FULL_UP_TO
}

/// The matrix as report.json holds it above [`PAIRS_IN_FULL_UP_TO`] hosts: its outliers (worst
/// first, at most [`MAX_OUTLIERS`]) and a summary of every pair; no dense matrices.
pub fn summarise(matrix: &PairMatrix, hosts: &[BurninHost], rule: OutlierRule) -> PairMatrix {
    let bandwidths: Vec<f64> = matrix.pairs.iter().filter_map(|p| p.bw_mean_gbps).collect();
    let latencies: Vec<f64> = matrix.pairs.iter().filter_map(|p| p.lat_mean_us).collect();
    let bw = Quantiles::of(bandwidths.clone());
    let lat = Quantiles::of(latencies);
    let median_bw = bw.map(|q| q.p50);
    let median_lat = lat.map(|q| q.p50);

    // How far from healthy a pair is: failures and corruption first, then the lowest share of
    // the rail's median (or expectation) bandwidth, then latency.
    let badness = |p: &PairStats| -> Option<f64> {
        if p.failures > 0 || p.validation_errors > 0 {
            return Some(f64::INFINITY);
        }
        let mut worst: Option<f64> = None;
        let mut note = |shortfall: f64| worst = Some(worst.map_or(shortfall, |w: f64| w.max(shortfall)));
        if let (Some(value), Some(median)) = (p.bw_mean_gbps, median_bw) {
            if median > 0.0 && value < rule.bandwidth_fraction * median {
                note(1.0 - value / median);
            }
        }
        if let Some(fraction) = p.expected_fraction {
            if fraction < rule.bandwidth_fraction {
                note(1.0 - fraction);
            }
        }
        if let (Some(value), Some(median)) = (p.lat_mean_us, median_lat) {
            if median > 0.0 && value > rule.latency_multiple * median {
                note(1.0 - median / value);
            }
        }
        worst
    };
    let mut outliers: Vec<(f64, &PairStats)> = matrix.pairs.iter().filter_map(|p| badness(p).map(|b| (b, p))).collect();
    outliers
        .sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| (&a.1.client, &a.1.server).cmp(&(&b.1.client, &b.1.server))));
    let left_out = outliers.len().saturating_sub(MAX_OUTLIERS) as u64;
    outliers.truncate(MAX_OUTLIERS);

    let best = bw.map_or(0.0, |q| q.max);
    let mut bw_histogram: Vec<HistogramBin> = (0..HISTOGRAM_BINS)
        .map(|i| HistogramBin {
            from_gbps: best * i as f64 / HISTOGRAM_BINS as f64,
            to_gbps: best * (i + 1) as f64 / HISTOGRAM_BINS as f64,
            pairs: 0,
        })
        .collect();
    if best > 0.0 {
        for value in &bandwidths {
            let bin = ((value / best) * HISTOGRAM_BINS as f64) as usize;
            bw_histogram[bin.min(HISTOGRAM_BINS - 1)].pairs += 1;
        }
    }

    let groups = host_groups(hosts);
    let group_of: HashMap<&str, usize> =
        groups.iter().enumerate().flat_map(|(g, group)| group.hosts.iter().map(move |h| (h.as_str(), g))).collect();
    let mut sums = vec![vec![(0.0f64, 0u64); groups.len()]; groups.len()];
    let mut tiles: Vec<Vec<Option<Tile>>> = vec![vec![None; groups.len()]; groups.len()];
    for pair in &matrix.pairs {
        let (Some(&row), Some(&column)) = (group_of.get(pair.client.as_str()), group_of.get(pair.server.as_str()))
        else {
            continue;
        };
        let tile = tiles[row][column].get_or_insert(Tile {
            pairs: 0,
            failed_pairs: 0,
            mean_gbps: None,
            worst_gbps: None,
            worst_pair: None,
            worst_lat_us: None,
        });
        tile.pairs += 1;
        tile.failed_pairs += u64::from(pair.failures > 0);
        if let Some(value) = pair.bw_mean_gbps {
            sums[row][column].0 += value;
            sums[row][column].1 += 1;
            if tile.worst_gbps.is_none_or(|worst| value < worst) {
                tile.worst_gbps = Some(value);
                tile.worst_pair = Some(format!("{}->{}", pair.client, pair.server));
            }
        }
        if let Some(value) = pair.lat_mean_us {
            tile.worst_lat_us = Some(tile.worst_lat_us.map_or(value, |worst| worst.max(value)));
        }
    }
    for (row, cells) in tiles.iter_mut().enumerate() {
        for (column, tile) in cells.iter_mut().enumerate() {
            if let Some(tile) = tile {
                let (sum, count) = sums[row][column];
                tile.mean_gbps = (count > 0).then(|| sum / count as f64);
            }
        }
    }

    let summary = PairSummary {
        pairs: matrix.pairs.len() as u64,
        failed_pairs: matrix.pairs.iter().filter(|p| p.failures > 0).count() as u64,
        bw_gbps: bw,
        lat_us: lat,
        bw_histogram,
        outlier_rule: format!(
            "failed or corrupted, or below {:.2} of the rail's median or expected bandwidth, or above {:.1}x its \
             median latency; worst first, at most {MAX_OUTLIERS} (every pair is in {PAIR_TABLE_FILE})",
            rule.bandwidth_fraction, rule.latency_multiple
        ),
        outliers_left_out: left_out,
        groups,
        tiles,
    };
    PairMatrix {
        rail: matrix.rail.clone(),
        hosts: Vec::new(),
        bw_gbps: Vec::new(),
        lat_us: Vec::new(),
        pairs: outliers.into_iter().map(|(_, p)| p.clone()).collect(),
        summary: Some(summary),
    }
}

/// Put the full pair table back into summarised matrices (for `--resume` and `--baseline`): each
/// line of [`PAIR_TABLE_FILE`] is a [`PairStats`]; a rail's outliers are replaced by its full list.
/// A table with fewer pairs than a rail's summary counts is refused.
pub fn restore_pairs(matrices: &mut [PairMatrix], table: &str, source: &str) -> Result<(), String> {
    let mut by_rail: HashMap<String, Vec<PairStats>> = HashMap::new();
    for (number, line) in table.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let pair: PairStats =
            serde_json::from_str(line).map_err(|e| format!("{source}:{}: not a pair's statistics: {e}", number + 1))?;
        by_rail.entry(pair.rail.clone()).or_default().push(pair);
    }
    for matrix in matrices.iter_mut().filter(|m| m.summary.is_some()) {
        let pairs = by_rail.remove(&matrix.rail).unwrap_or_default();
        // The table is written before report.json: after a crash between the two it may hold the
        // pairs of one more save, never fewer.
        let expected = matrix.summary.as_ref().map_or(0, |s| s.pairs);
        if (pairs.len() as u64) < expected {
            return Err(format!(
                "{source}: rail {} has {} pairs but the report counts {expected}",
                matrix.rail,
                pairs.len()
            ));
        }
        matrix.pairs = pairs;
        matrix.summary = None;
    }
    Ok(())
}

/// At most this many findings of one id stay in a summarised report (report.json, the page,
/// summary.md, junit.xml); one more finding of that id counts the rest. A slow host of a
/// thousand-host run fails two thousand pairs, each its own `burnin.pair.*` finding in memory.
pub const FINDINGS_PER_ID: usize = 100;

/// The findings as a summarised report keeps them: per id the first [`FINDINGS_PER_ID`], then one
/// finding of the same id, at the worst verdict of those left out, that says how many there were.
pub fn trim_findings(findings: &[Finding]) -> Vec<Finding> {
    let mut kept: Vec<Finding> = Vec::new();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut left_out: Vec<(&str, usize, Verdict)> = Vec::new();
    for finding in findings {
        let count = seen.entry(finding.id.as_str()).or_insert(0);
        *count += 1;
        if *count <= FINDINGS_PER_ID {
            kept.push(finding.clone());
            continue;
        }
        match left_out.iter_mut().find(|(id, _, _)| *id == finding.id) {
            Some(entry) => {
                entry.1 += 1;
                entry.2 = entry.2.max(finding.verdict);
            }
            None => left_out.push((finding.id.as_str(), 1, finding.verdict)),
        }
    }
    for (id, count, verdict) in left_out {
        kept.push(Finding::new(
            id,
            verdict,
            format!("{count} more"),
            format!(
                "{count} more findings of {id} are left out of this report (the first {FINDINGS_PER_ID} are above); \
                 every pair's figures are in {PAIR_TABLE_FILE} and every step's in events.jsonl"
            ),
        ));
    }
    kept
}

/// Names as a sentence lists them: all of them up to `limit`, else the first `limit` and how many
/// more ("a, b, c and 560 more"), so a reason about a thousand hosts stays one line.
pub fn named_list<S: AsRef<str>>(names: &[S], limit: usize) -> String {
    let shown: Vec<&str> = names.iter().take(limit).map(AsRef::as_ref).collect();
    if names.len() > limit {
        format!("{} and {} more", shown.join(", "), names.len() - limit)
    } else {
        shown.join(", ")
    }
}

/// Give a report read from `dir` its full pair table back when its matrices are summarised.
pub fn restore_beside(report: &mut crate::burnin::BurninReport, dir: &std::path::Path) -> Result<(), String> {
    if report.pairs.iter().all(|m| m.summary.is_none()) {
        return Ok(());
    }
    let path = dir.join(PAIR_TABLE_FILE);
    let table = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: cannot read the pair table of a summarised report: {e}", path.display()))?;
    restore_pairs(&mut report.pairs, &table, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(client: usize, server: usize, bw: f64) -> PairStats {
        PairStats {
            samples: 1,
            bw_min_gbps: Some(bw),
            bw_mean_gbps: Some(bw),
            bw_max_gbps: Some(bw),
            lat_min_us: Some(3.0),
            lat_mean_us: Some(3.0),
            lat_max_us: Some(3.0),
            ..PairStats::new(&format!("h{client}"), &format!("h{server}"), "rail0")
        }
    }

    /// 200 hosts, every ordered pair at 368 Gb/s but those from h7 (half) and one failed pair.
    fn fabric(leaves: bool) -> (Vec<BurninHost>, PairMatrix) {
        let hosts: Vec<BurninHost> = (0..200)
            .map(|i| BurninHost::new(&format!("h{i}"), "", leaves.then(|| format!("leaf{}", i / 50))))
            .collect();
        let mut pairs = Vec::new();
        for a in 0..200 {
            for b in 0..200 {
                if a != b {
                    pairs.push(pair(a, b, if a == 7 { 184.0 } else { 368.0 }));
                }
            }
        }
        pairs[1000].failures = 1;
        (hosts, PairMatrix::new("rail0", pairs))
    }

    const RULE: OutlierRule = OutlierRule { bandwidth_fraction: 0.93, latency_multiple: 2.1 };

    #[test]
    fn the_summary_keeps_the_bad_pairs_worst_first_and_counts_the_rest() {
        let (hosts, matrix) = fabric(false);
        let summary = summarise(&matrix, &hosts, RULE);
        // The failed pair first, then h7's 199 slow pairs; nothing healthy.
        assert_eq!(summary.pairs.len(), 200, "{:?}", summary.pairs.iter().take(3).collect::<Vec<_>>());
        assert_eq!(summary.pairs[0].failures, 1);
        assert!(summary.pairs[1..].iter().all(|p| p.client == "h7"));
        let s = summary.summary.as_ref().expect("summary");
        assert_eq!(s.pairs, 200 * 199);
        assert_eq!(s.failed_pairs, 1);
        assert_eq!(s.bw_gbps.map(|q| (q.min, q.p50, q.max)), Some((184.0, 368.0, 368.0)));
        assert_eq!(s.bw_histogram.iter().map(|b| b.pairs).sum::<u64>(), 200 * 199);
        assert_eq!(s.bw_histogram[20].pairs, 199, "h7's pairs sit in the half-rate bin");
        // Blocks of 32: seven groups, h7 in the first; its row of tiles shows it.
        assert_eq!(s.groups.len(), 7);
        assert_eq!(s.groups[0].name, "h0..h31");
        assert_eq!(s.tiles[0][3].as_ref().and_then(|t| t.worst_gbps), Some(184.0));
        assert_eq!(s.tiles[0][3].as_ref().and_then(|t| t.worst_pair.clone()), Some("h7->h96".into()));
        assert_eq!(s.tiles[3][0].as_ref().and_then(|t| t.worst_gbps), Some(368.0));
        assert!(summary.bw_gbps.is_empty() && summary.lat_us.is_empty());
    }

    #[test]
    fn hosts_that_name_their_leaf_are_grouped_by_it() {
        let (hosts, matrix) = fabric(true);
        let summary = summarise(&matrix, &hosts, RULE);
        let s = summary.summary.expect("summary");
        assert_eq!(s.groups.iter().map(|g| g.name.as_str()).collect::<Vec<_>>(), ["leaf0", "leaf1", "leaf2", "leaf3"]);
        assert_eq!(s.tiles[0][0].as_ref().map(|t| t.pairs), Some(50 * 49));
        assert_eq!(s.tiles[1][2].as_ref().map(|t| t.pairs), Some(50 * 50));
    }

    #[test]
    fn a_fabric_wide_shortfall_keeps_the_worst_outliers_only() {
        let (hosts, mut matrix) = fabric(false);
        for (i, pair) in matrix.pairs.iter_mut().enumerate() {
            pair.expected_fraction = Some(0.5 + (i % 100) as f64 / 1000.0);
        }
        let summary = summarise(&matrix, &hosts, RULE);
        assert_eq!(summary.pairs.len(), MAX_OUTLIERS);
        let s = summary.summary.expect("summary");
        assert_eq!(s.outliers_left_out, (200 * 199 - MAX_OUTLIERS) as u64);
    }

    #[test]
    fn findings_beyond_a_hundred_of_one_id_are_counted_not_listed() {
        let mut findings: Vec<Finding> = (0..250)
            .map(|i| Finding::new("burnin.pair.tolerance", Verdict::Warn, format!("h{i}->h0 rail0"), "slow"))
            .collect();
        findings[200].verdict = Verdict::Fail;
        findings.push(Finding::new("burnin.signoff", Verdict::Fail, "cluster", "not signed off"));
        let trimmed = trim_findings(&findings);
        assert_eq!(trimmed.len(), FINDINGS_PER_ID + 2);
        assert_eq!(trimmed[FINDINGS_PER_ID].id, "burnin.signoff", "other ids keep their place");
        let count = trimmed.last().expect("the count");
        assert_eq!(
            (count.id.as_str(), count.subject.as_str(), count.verdict),
            ("burnin.pair.tolerance", "150 more", Verdict::Fail)
        );
        assert_eq!(named_list(&["a", "b", "c"], 2), "a, b and 1 more");
        assert_eq!(named_list(&["a", "b"], 2), "a, b");
    }

    #[test]
    fn the_table_restores_every_pair_and_refuses_a_short_one() {
        let (hosts, matrix) = fabric(false);
        let table: String = matrix.pairs.iter().map(|p| serde_json::to_string(p).expect("json") + "\n").collect();
        let mut restored = vec![summarise(&matrix, &hosts, RULE)];
        restore_pairs(&mut restored, &table, "pairs.jsonl").expect("restore");
        assert_eq!(restored[0].pairs, matrix.pairs);
        assert!(restored[0].summary.is_none());

        let mut short = vec![summarise(&matrix, &hosts, RULE)];
        let cut: String = table.lines().skip(1).map(|l| format!("{l}\n")).collect();
        let error = restore_pairs(&mut short, &cut, "pairs.jsonl").expect_err("a pair is missing");
        assert!(error.contains("rail0 has 39799 pairs but the report counts 39800"), "{error}");
        let error = restore_pairs(&mut short, "{\"client\":", "pairs.jsonl").expect_err("truncated");
        assert!(error.starts_with("pairs.jsonl:1: not a pair's statistics"), "{error}");
    }
}
