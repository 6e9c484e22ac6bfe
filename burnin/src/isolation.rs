//! Fault isolation. A pair is suspect when its bandwidth is below `bandwidth_fraction` x the best
//! pair's or its latency above `latency_multiple` x the lowest pair's (relative, so it works on any
//! fabric). Hosts with a good pair are cleared (they can send and receive at full rate); the others
//! are retested against cleared partners they have not been retested with, one pair per host per
//! round, until each is pinned (bad with `confirmations` distinct partners, never good) or cleared
//! — every round shrinks the candidate set, so a handful of rounds pins the fault. Bad pairs whose
//! two ends are both cleared are retested as they are: a repeatable one is a link (path) fault.
//! Pure logic over a retest oracle, so it is tested on synthetic matrices.

use std::collections::{BTreeMap, BTreeSet};

use crate::schedule::fresh_partners;

/// What one pair measured.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PairSample {
    pub bw_gbps: Option<f64>,
    pub lat_us: Option<f64>,
    /// The measurement failed (error, timeout, data mismatch).
    pub failed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    pub bandwidth_fraction: f64,
    pub latency_multiple: f64,
}

/// The best bandwidth and lowest latency of a set of pairs: the yardsticks of the relative rule.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct References {
    pub best_bw_gbps: Option<f64>,
    pub lowest_lat_us: Option<f64>,
}

impl References {
    pub fn of<'a>(samples: impl IntoIterator<Item = &'a PairSample>) -> References {
        let mut references = References::default();
        for sample in samples {
            if let Some(bw) = sample.bw_gbps.filter(|b| b.is_finite() && *b > 0.0) {
                references.best_bw_gbps = Some(references.best_bw_gbps.map_or(bw, |b| b.max(bw)));
            }
            if let Some(lat) = sample.lat_us.filter(|l| l.is_finite() && *l > 0.0) {
                references.lowest_lat_us = Some(references.lowest_lat_us.map_or(lat, |l| l.min(lat)));
            }
        }
        references
    }
}

/// Why a pair is suspect, or `None` when it is within tolerance.
pub fn judge(sample: &PairSample, references: &References, thresholds: &Thresholds) -> Option<String> {
    if sample.failed {
        return Some("the measurement failed".into());
    }
    let mut reasons = Vec::new();
    match (sample.bw_gbps, references.best_bw_gbps) {
        (Some(bw), Some(best)) if bw < thresholds.bandwidth_fraction * best => reasons
            .push(format!("bandwidth {bw:.2} Gb/s < {:.2} x best pair {best:.2} Gb/s", thresholds.bandwidth_fraction)),
        (None, _) => reasons.push("no bandwidth measured".into()),
        _ => {}
    }
    match (sample.lat_us, references.lowest_lat_us) {
        (Some(lat), Some(lowest)) if lat > thresholds.latency_multiple * lowest => reasons
            .push(format!("latency {lat:.1} us > {:.1} x lowest pair {lowest:.1} us", thresholds.latency_multiple)),
        (None, _) => reasons.push("no latency measured".into()),
        _ => {}
    }
    (!reasons.is_empty()).then(|| reasons.join("; "))
}

/// One retest and its outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Retest {
    pub round: u32,
    pub candidate: usize,
    pub partner: usize,
    pub sample: PairSample,
    /// `None`: within tolerance.
    pub suspect: Option<String>,
}

/// Where isolation put the fault.
#[derive(Debug, Clone, PartialEq)]
pub enum Pinned {
    /// Every retest of the host with a cleared partner was bad.
    Host { host: usize, bad: u32, good: u32, confirmed: bool },
    /// The pair is bad though both hosts are fine with others, and stayed bad when retested.
    Link { a: usize, b: usize },
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Isolation {
    pub pinned: Vec<Pinned>,
    /// Candidates that could not be retested (no cleared partner left, or none at all).
    pub unresolved: Vec<usize>,
    /// Bad pairs that were fine when retested (transient; reported, not blamed).
    pub not_reproduced: Vec<(usize, usize)>,
    pub retests: Vec<Retest>,
    pub rounds: u32,
}

/// Runs one round of disjoint pairs and returns a sample per pair, in order.
pub type Retester<'a> = dyn FnMut(&[(usize, usize)]) -> Vec<PairSample> + 'a;

/// Isolate the faults behind `results` (unordered pairs of host indices with their sample; both
/// directions folded into one sample by the caller). `retest` runs one round of disjoint pairs and
/// returns a sample per pair, in order.
pub fn isolate(
    results: &BTreeMap<(usize, usize), PairSample>,
    thresholds: &Thresholds,
    max_rounds: u32,
    confirmations: u32,
    retest: &mut Retester<'_>,
) -> Isolation {
    let references = References::of(results.values());
    let mut bad_pairs = BTreeSet::new();
    let mut hosts = BTreeSet::new();
    let mut cleared = BTreeSet::new();
    for (&(a, b), sample) in results {
        hosts.insert(a);
        hosts.insert(b);
        if judge(sample, &references, thresholds).is_some() {
            bad_pairs.insert((a.min(b), a.max(b)));
        } else {
            cleared.insert(a);
            cleared.insert(b);
        }
    }
    let mut isolation = Isolation::default();
    if bad_pairs.is_empty() {
        return isolation;
    }
    let mut candidates: BTreeSet<usize> =
        bad_pairs.iter().flat_map(|&(a, b)| [a, b]).filter(|h| !cleared.contains(h)).collect();
    let mut tally: BTreeMap<usize, (u32, u32)> = candidates.iter().map(|&c| (c, (0, 0))).collect();
    let mut used: BTreeSet<(usize, usize)> = BTreeSet::new();
    let partners: Vec<usize> = cleared.iter().copied().collect();
    while !candidates.is_empty() && isolation.rounds < max_rounds {
        let open: Vec<usize> = candidates
            .iter()
            .copied()
            .filter(|c| tally.get(c).is_none_or(|(bad, _)| *bad < confirmations.max(1)))
            .collect();
        if open.is_empty() {
            break;
        }
        let (pairs, _) = fresh_partners(&open, &partners, |c, p| used.contains(&(c, p)));
        if pairs.is_empty() {
            break;
        }
        isolation.rounds += 1;
        let samples = retest(&pairs);
        for (&(candidate, partner), sample) in pairs.iter().zip(samples) {
            used.insert((candidate, partner));
            let suspect = judge(&sample, &references, thresholds);
            let entry = tally.entry(candidate).or_insert((0, 0));
            if suspect.is_some() {
                entry.0 += 1;
            } else {
                entry.1 += 1;
                // Fine with a cleared partner: the host is healthy; its bad pairs are path faults.
                candidates.remove(&candidate);
                cleared.insert(candidate);
            }
            isolation.retests.push(Retest { round: isolation.rounds, candidate, partner, sample, suspect });
        }
    }
    for &candidate in &candidates {
        let (bad, good) = tally.get(&candidate).copied().unwrap_or((0, 0));
        if bad == 0 {
            isolation.unresolved.push(candidate);
        } else {
            isolation.pinned.push(Pinned::Host { host: candidate, bad, good, confirmed: bad >= confirmations });
        }
    }
    // Bad pairs between two healthy hosts: retest the pair itself (disjoint pairs per round) until it
    // is bad `confirmations` times — a path fault — or good once — a transient.
    let mut path_pairs: Vec<((usize, usize), u32)> = bad_pairs
        .iter()
        .copied()
        .filter(|(a, b)| cleared.contains(a) && cleared.contains(b))
        .map(|pair| (pair, 0))
        .collect();
    while !path_pairs.is_empty() {
        let mut busy = BTreeSet::new();
        let mut round = Vec::new();
        for &((a, b), _) in &path_pairs {
            if !busy.contains(&a) && !busy.contains(&b) {
                busy.insert(a);
                busy.insert(b);
                round.push((a, b));
            }
        }
        isolation.rounds += 1;
        let samples = retest(&round);
        for (&(a, b), sample) in round.iter().zip(samples) {
            let suspect = judge(&sample, &references, thresholds);
            let Some(index) = path_pairs.iter().position(|(pair, _)| *pair == (a, b)) else { continue };
            if suspect.is_some() {
                path_pairs[index].1 += 1;
                if path_pairs[index].1 >= confirmations.max(1) {
                    isolation.pinned.push(Pinned::Link { a, b });
                    path_pairs.remove(index);
                }
            } else {
                isolation.not_reproduced.push((a, b));
                path_pairs.remove(index);
            }
            isolation.retests.push(Retest { round: isolation.rounds, candidate: a, partner: b, sample, suspect });
        }
        // A host with COMMON_END_PATHS paths pinned is its own link's fault (merge_common_ends):
        // its other paths need no retest. Without this, a flapping port's hundreds of bad pairs
        // were retested one per round (they share the host), rounds growing with the fabric.
        let pinned_through = paths_through(&isolation.pinned);
        let common = |host: &usize| pinned_through.get(host).is_some_and(|&n| n >= COMMON_END_PATHS);
        path_pairs.retain(|((a, b), _)| !common(a) && !common(b));
    }
    merge_common_ends(&mut isolation);
    isolation
}

/// How many pinned paths run through each host.
fn paths_through(pinned: &[Pinned]) -> BTreeMap<usize, usize> {
    let mut through: BTreeMap<usize, usize> = BTreeMap::new();
    for pin in pinned {
        if let Pinned::Link { a, b } = *pin {
            *through.entry(a).or_default() += 1;
            *through.entry(b).or_default() += 1;
        }
    }
    through
}

/// Paths pinned through one host at least this often are that host's own link.
const COMMON_END_PATHS: usize = 3;

/// Many pinned paths through one host are one fault at that host, not a fault per partner: a link
/// that fails part of the time (a flapping port, a marginal cable) passes some tests, so its host
/// is cleared by a good pair and each of its bad pairs is then retested, and confirmed, as a path.
/// Independent path faults (a spine port on an ECMP route) share a host by chance far less often.
fn merge_common_ends(isolation: &mut Isolation) {
    loop {
        let through = paths_through(&isolation.pinned);
        // The host with the most paths first; a tie goes to the lower number, so the outcome does not
        // depend on the order of the pins.
        let Some((host, paths)) = through.into_iter().max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0))) else {
            return;
        };
        if paths < COMMON_END_PATHS {
            return;
        }
        isolation.pinned.retain(|p| !matches!(*p, Pinned::Link { a, b } if a == host || b == host));
        let good = isolation
            .retests
            .iter()
            .filter(|r| (r.candidate == host || r.partner == host) && r.suspect.is_none())
            .count();
        isolation.pinned.push(Pinned::Host {
            host,
            bad: u32::try_from(paths).unwrap_or(u32::MAX),
            good: u32::try_from(good).unwrap_or(u32::MAX),
            confirmed: true,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const THRESHOLDS: Thresholds = Thresholds { bandwidth_fraction: 0.93, latency_multiple: 2.1 };

    /// A fabric where `slow_hosts` run at a tenth of the rate, `slow_links` too, and `laggy_hosts`
    /// have four times the latency.
    #[derive(Clone)]
    struct Fabric {
        slow_hosts: Vec<usize>,
        slow_links: Vec<(usize, usize)>,
        laggy_hosts: Vec<usize>,
        /// Pairs that were bad once (in the matrix) but are fine when retested.
        transient: Vec<(usize, usize)>,
    }

    impl Fabric {
        fn sample(&self, a: usize, b: usize, first_time: bool) -> PairSample {
            let (lo, hi) = (a.min(b), a.max(b));
            let slow = self.slow_hosts.contains(&a)
                || self.slow_hosts.contains(&b)
                || self.slow_links.contains(&(lo, hi))
                || (first_time && self.transient.contains(&(lo, hi)));
            // Healthy pairs vary by a few percent, as real ones do.
            let jitter = 1.0 - ((a * 7 + b * 3) % 5) as f64 * 0.01;
            let lag = self.laggy_hosts.contains(&a) || self.laggy_hosts.contains(&b);
            PairSample {
                bw_gbps: Some(if slow { 9.4 } else { 94.0 * jitter }),
                lat_us: Some(if lag { 12.0 } else { 3.0 / jitter }),
                failed: false,
            }
        }

        fn matrix(&self, hosts: usize) -> BTreeMap<(usize, usize), PairSample> {
            let mut results = BTreeMap::new();
            for a in 0..hosts {
                for b in a + 1..hosts {
                    results.insert((a, b), self.sample(a, b, true));
                }
            }
            results
        }

        fn isolate(&self, hosts: usize) -> Isolation {
            let fabric = self.clone();
            let mut retest = move |pairs: &[(usize, usize)]| {
                let mut busy = BTreeSet::new();
                for &(a, b) in pairs {
                    assert!(busy.insert(a) && busy.insert(b), "a host twice in one retest round: {pairs:?}");
                }
                pairs.iter().map(|&(a, b)| fabric.sample(a, b, false)).collect()
            };
            isolate(&self.matrix(hosts), &THRESHOLDS, 4, 2, &mut retest)
        }
    }

    fn fabric() -> Fabric {
        Fabric { slow_hosts: vec![], slow_links: vec![], laggy_hosts: vec![], transient: vec![] }
    }

    #[test]
    fn a_clean_fabric_has_no_suspects() {
        let isolation = fabric().isolate(8);
        assert_eq!(isolation, Isolation::default());
    }

    #[test]
    fn a_slow_host_is_pinned_and_nobody_else() {
        for hosts in [4, 5, 8] {
            let isolation = Fabric { slow_hosts: vec![2], ..fabric() }.isolate(hosts);
            assert_eq!(
                isolation.pinned,
                vec![Pinned::Host { host: 2, bad: 2, good: 0, confirmed: true }],
                "n={hosts}: {isolation:?}"
            );
            assert!(isolation.unresolved.is_empty() && isolation.not_reproduced.is_empty());
            let partners: BTreeSet<usize> = isolation.retests.iter().map(|r| r.partner).collect();
            assert_eq!(partners.len(), 2, "distinct fresh partners");
        }
    }

    #[test]
    fn a_slow_link_between_healthy_hosts_is_a_link() {
        let isolation = Fabric { slow_links: vec![(1, 4)], ..fabric() }.isolate(6);
        assert_eq!(isolation.pinned, vec![Pinned::Link { a: 1, b: 4 }], "{isolation:?}");
    }

    #[test]
    fn two_slow_hosts_are_both_pinned() {
        let isolation = Fabric { slow_hosts: vec![0, 3], ..fabric() }.isolate(7);
        let hosts: Vec<usize> = isolation
            .pinned
            .iter()
            .filter_map(|p| match p {
                Pinned::Host { host, confirmed: true, .. } => Some(*host),
                _ => None,
            })
            .collect();
        assert_eq!(hosts, vec![0, 3], "{isolation:?}");
        assert_eq!(isolation.pinned.len(), 2);
    }

    #[test]
    fn latency_alone_pins_a_host() {
        let isolation = Fabric { laggy_hosts: vec![5], ..fabric() }.isolate(6);
        assert_eq!(isolation.pinned, vec![Pinned::Host { host: 5, bad: 2, good: 0, confirmed: true }]);
        let reason = isolation.retests[0].suspect.clone().unwrap_or_default();
        assert!(reason.contains("latency"), "{reason}");
    }

    #[test]
    fn a_transient_bad_pair_is_reported_not_blamed() {
        let isolation = Fabric { transient: vec![(2, 3)], ..fabric() }.isolate(5);
        assert!(isolation.pinned.is_empty(), "{isolation:?}");
        assert_eq!(isolation.not_reproduced, vec![(2, 3)]);
    }

    #[test]
    fn a_link_is_pinned_only_when_every_retest_confirms_it() {
        let fabric = Fabric { slow_links: vec![(1, 4)], ..fabric() };
        let mut retests = 0;
        let mut retest = |pairs: &[(usize, usize)]| {
            retests += 1;
            // The second retest of the pair comes back healthy: contention, not a cable.
            pairs
                .iter()
                .map(|&(a, b)| fabric.sample(a, b, false))
                .map(|s| if retests > 1 { PairSample { bw_gbps: Some(93.0), ..s } } else { s })
                .collect()
        };
        let isolation = isolate(&fabric.matrix(6), &THRESHOLDS, 4, 2, &mut retest);
        assert!(isolation.pinned.is_empty(), "{isolation:?}");
        assert_eq!(isolation.not_reproduced, vec![(1, 4)]);
        assert_eq!(isolation.retests.len(), 2);
    }

    #[test]
    fn the_relative_rule_uses_the_playbook_thresholds() {
        let references = References::of(&[
            PairSample { bw_gbps: Some(100.0), lat_us: Some(2.0), failed: false },
            PairSample { bw_gbps: Some(93.5), lat_us: Some(4.1), failed: false },
        ]);
        assert_eq!(references, References { best_bw_gbps: Some(100.0), lowest_lat_us: Some(2.0) });
        let ok = PairSample { bw_gbps: Some(93.5), lat_us: Some(4.1), failed: false };
        assert_eq!(judge(&ok, &references, &THRESHOLDS), None);
        let slow = PairSample { bw_gbps: Some(92.9), ..ok };
        assert!(judge(&slow, &references, &THRESHOLDS).is_some_and(|r| r.contains("bandwidth")));
        let laggy = PairSample { lat_us: Some(4.3), ..ok };
        assert!(judge(&laggy, &references, &THRESHOLDS).is_some_and(|r| r.contains("latency")));
        assert!(judge(&PairSample { failed: true, ..ok }, &references, &THRESHOLDS).is_some());
    }

    /// A host whose link fails some tests and passes others (a flapping port): cleared by a good
    /// pair, its bad pairs are each confirmed as a path; they are one fault, at the host.
    #[test]
    fn paths_pinned_through_one_host_are_that_hosts_link() {
        let flaky = 5;
        let bad_partners = [0usize, 2, 3, 7];
        let sample = |a: usize, b: usize| {
            let other = if a == flaky { b } else { a };
            let bad = (a == flaky || b == flaky) && bad_partners.contains(&other);
            PairSample { bw_gbps: Some(if bad { 9.4 } else { 94.0 }), lat_us: Some(3.0), failed: false }
        };
        let matrix: BTreeMap<(usize, usize), PairSample> =
            (0..9).flat_map(|a| (a + 1..9).map(move |b| (a, b))).map(|(a, b)| ((a, b), sample(a, b))).collect();
        let mut retest = |pairs: &[(usize, usize)]| pairs.iter().map(|&(a, b)| sample(a, b)).collect();
        let isolation = isolate(&matrix, &THRESHOLDS, 4, 2, &mut retest);
        assert_eq!(isolation.pinned, vec![Pinned::Host { host: flaky, bad: 3, good: 0, confirmed: true }]);
        // Its fourth bad pair was not retested: three pinned paths already named the host.
        assert_eq!(isolation.rounds, 6, "{isolation:?}");
        // Bad with every partner but one: the retest rounds do not grow with the fabric.
        for hosts in [9usize, 33, 129] {
            let sample = |a: usize, b: usize| {
                let bad = (a == flaky || b == flaky) && a != 1 && b != 1;
                PairSample { bw_gbps: Some(if bad { 9.4 } else { 94.0 }), lat_us: Some(3.0), failed: false }
            };
            let matrix: BTreeMap<(usize, usize), PairSample> = (0..hosts)
                .flat_map(|a| (a + 1..hosts).map(move |b| (a, b)))
                .map(|(a, b)| ((a, b), sample(a, b)))
                .collect();
            let mut retest = |pairs: &[(usize, usize)]| pairs.iter().map(|&(a, b)| sample(a, b)).collect();
            let isolation = isolate(&matrix, &THRESHOLDS, 4, 2, &mut retest);
            assert_eq!(isolation.pinned, vec![Pinned::Host { host: flaky, bad: 3, good: 0, confirmed: true }]);
            assert_eq!(isolation.rounds, 6, "{hosts} hosts");
        }
        // Two independent slow paths that share no host stay two paths.
        let two = Fabric { slow_links: vec![(1, 4), (2, 6)], ..fabric() }.isolate(8);
        assert_eq!(two.pinned, vec![Pinned::Link { a: 1, b: 4 }, Pinned::Link { a: 2, b: 6 }], "{two:?}");
    }

    #[test]
    fn two_hosts_cannot_blame_either() {
        // The only pair is the best pair: nothing is suspect by the relative rule.
        let isolation = Fabric { slow_hosts: vec![1], ..fabric() }.isolate(2);
        assert!(isolation.pinned.is_empty());
    }
}
