//! What each rail should measure, in absolute terms, and the judgement of pairs and loopbacks against
//! it. Relative isolation (`isolation.rs`) finds one bad host among good ones; only an absolute
//! expectation sees a fault that touches every pair (every link at half rate, the wrong traffic
//! class, a switch misconfigured fabric-wide).
//!
//! An expectation comes, first match wins, from `--expect-pair-gbps` / `--expect-latency-us`, the
//! playbook's `[expectations.rails.NAME]`, the playbook's `[expectations]`, or the rail's link rate
//! times the playbook's efficiency. Operators gate `ib_write_bw` at 90-95 % of the port rate (healthy
//! HDR measured 194 of 200 Gb/s, azurehpc-health-checks#46), hence the verbs default of 0.90.

use std::collections::BTreeMap;

use fabricdoctor_checks::{Finding, Verdict};
use fabricdoctor_report::burnin::{LoopbackResult, PairMatrix, RailExpectation};
use serde::{Deserialize, Serialize};

use crate::protocol::{DataTransport, RailLink};

/// Efficiency of verbs WRITE/SEND at 64 KiB and more against the port rate (perftest semantics).
pub const VERBS_EFFICIENCY: f64 = 0.90;
/// Efficiency of the TCP transport against the interface speed: kernel copies and per-segment costs
/// keep a few streams below line rate on fast links even when tuned; below 0.80 is worth a look.
pub const TCP_EFFICIENCY: f64 = 0.80;
/// A rail is below expectation fabric-wide when more than this share of its measured pairs are.
pub const FABRIC_FRACTION: f64 = 0.5;

/// A cross-rail link (`--cross-rail`) is expected to reach this share of the lower of its two rails'
/// expectations: 1.0 in a non-blocking fat tree, where the spine carries every leaf's full rate; an
/// oversubscribed spine (2:1, say) sets `[expectations] cross_rail_fraction = 0.5`.
pub const CROSS_RAIL_FRACTION: f64 = 1.0;

/// The playbook's `[expectations]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectationsSection {
    #[serde(default = "verbs_efficiency")]
    pub verbs_efficiency: f64,
    #[serde(default = "tcp_efficiency")]
    pub tcp_efficiency: f64,
    #[serde(default = "fabric_fraction")]
    pub fabric_fraction: f64,
    #[serde(default = "cross_rail_fraction")]
    pub cross_rail_fraction: f64,
    /// For every rail (serde's `flatten` cannot be combined with `deny_unknown_fields`, so the three
    /// keys of [`Targets`] are spelled out here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair_gbps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair_latency_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loopback_gbps: Option<f64>,
    /// Per rail, by the rail's name (`--rail NAME=...`; "default" for agents given none).
    #[serde(default)]
    pub rails: BTreeMap<String, Targets>,
}

impl Default for ExpectationsSection {
    fn default() -> Self {
        ExpectationsSection {
            verbs_efficiency: VERBS_EFFICIENCY,
            tcp_efficiency: TCP_EFFICIENCY,
            fabric_fraction: FABRIC_FRACTION,
            cross_rail_fraction: CROSS_RAIL_FRACTION,
            pair_gbps: None,
            pair_latency_us: None,
            loopback_gbps: None,
            rails: BTreeMap::new(),
        }
    }
}

fn verbs_efficiency() -> f64 {
    VERBS_EFFICIENCY
}
fn tcp_efficiency() -> f64 {
    TCP_EFFICIENCY
}
fn fabric_fraction() -> f64 {
    FABRIC_FRACTION
}
fn cross_rail_fraction() -> f64 {
    CROSS_RAIL_FRACTION
}

/// Explicit figures, for every rail or one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Targets {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair_gbps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair_latency_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loopback_gbps: Option<f64>,
}

impl ExpectationsSection {
    /// The figures set for every rail.
    pub fn all(&self) -> Targets {
        Targets { pair_gbps: self.pair_gbps, pair_latency_us: self.pair_latency_us, loopback_gbps: self.loopback_gbps }
    }

    /// Every figure positive and finite, every fraction in (0, 1]; the error names the key.
    pub fn validate(&self) -> Result<(), String> {
        for (key, value) in [
            ("verbs_efficiency", self.verbs_efficiency),
            ("tcp_efficiency", self.tcp_efficiency),
            ("fabric_fraction", self.fabric_fraction),
            ("cross_rail_fraction", self.cross_rail_fraction),
        ] {
            if !(value > 0.0 && value <= 1.0) {
                return Err(format!("expectations.{key} = {value}: must be in (0, 1]"));
            }
        }
        self.all().validate("expectations")?;
        for (rail, targets) in &self.rails {
            targets.validate(&format!("expectations.rails.{rail}"))?;
        }
        Ok(())
    }
}

impl Targets {
    pub fn validate(&self, section: &str) -> Result<(), String> {
        for (key, value) in [
            ("pair_gbps", self.pair_gbps),
            ("pair_latency_us", self.pair_latency_us),
            ("loopback_gbps", self.loopback_gbps),
        ] {
            if let Some(value) = value {
                positive(&format!("{section}.{key}"), value)?;
            }
        }
        Ok(())
    }
}

/// A figure an expectation can be: positive and finite. The error names `key`.
pub fn positive(key: &str, value: f64) -> Result<f64, String> {
    if value > 0.0 && value.is_finite() {
        Ok(value)
    } else {
        Err(format!("{key} = {value}: an expectation must be a positive number"))
    }
}

/// The command line's overrides (`--expect-pair-gbps`, `--expect-latency-us`) and the node
/// profile's port rate (`--profile`: `nics.rate_gbps`, with the profile's name).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    pub pair_gbps: Option<f64>,
    pub pair_latency_us: Option<f64>,
    pub profile_rate: Option<(f64, String)>,
}

/// The expectation of `rail`, whose hosts announced `links` (one per host that has the rail).
pub fn expect(
    rail: &str,
    links: &[(String, Option<RailLink>)],
    transport: DataTransport,
    section: &ExpectationsSection,
    overrides: &Overrides,
) -> RailExpectation {
    let own = section.rails.get(rail).copied().unwrap_or_default();
    let mut expectation = RailExpectation {
        rail: rail.to_string(),
        pair_gbps: None,
        pair_latency_us: overrides.pair_latency_us.or(own.pair_latency_us).or(section.pair_latency_us),
        loopback_gbps: own.loopback_gbps.or(section.loopback_gbps),
        source: String::new(),
        link_gbps: None,
        efficiency: None,
    };
    let explicit = [
        (overrides.pair_gbps, "--expect-pair-gbps".to_string()),
        (own.pair_gbps, format!("playbook [expectations.rails.{rail}]")),
        (section.pair_gbps, "playbook [expectations]".to_string()),
    ];
    if let Some((gbps, source)) = explicit.into_iter().find_map(|(gbps, source)| gbps.map(|g| (g, source))) {
        expectation.pair_gbps = Some(gbps);
        expectation.source = source;
        return expectation;
    }
    let efficiency = match transport {
        DataTransport::Verbs => section.verbs_efficiency,
        DataTransport::Tcp => section.tcp_efficiency,
    };
    let rate = match &overrides.profile_rate {
        Some((gbps, profile)) => Ok((*gbps, format!("profile {profile}, nics.rate_gbps"))),
        None => rail_rate(links),
    };
    match rate {
        Ok((gbps, how)) => {
            expectation.pair_gbps = Some(gbps * efficiency);
            expectation.link_gbps = Some(gbps);
            expectation.efficiency = Some(efficiency);
            expectation.source =
                format!("link rate {gbps} Gb/s ({how}) x {} efficiency {efficiency}", transport.name());
        }
        Err(why) => {
            expectation.source =
                format!("no expectation: {why}; set --expect-pair-gbps or [expectations] pair_gbps in the playbook")
        }
    }
    expectation
}

/// The label a cross-rail link's directions are recorded and judged under: the client's rail, then
/// the server's ("rail0->rail1": rail0 of the client sends to rail1 of the server). Rail names hold
/// no '>' (`--rail` refuses it), so the label cannot be a rail's own name.
pub fn cross_rail_label(client_rail: &str, server_rail: &str) -> String {
    format!("{client_rail}->{server_rail}")
}

/// The expectation of a cross-rail link from `client` to `server` rail (`--cross-rail`): such a
/// link crosses the spine, so it may reach at most what the slower of the two rails reaches, times
/// the spine's share (`cross_rail_fraction`); latency may be the higher of the two. Nothing to
/// judge where either rail has no bandwidth expectation.
pub fn expect_cross(client: &RailExpectation, server: &RailExpectation, fraction: f64) -> RailExpectation {
    let label = cross_rail_label(&client.rail, &server.rail);
    let pair_latency_us = match (client.pair_latency_us, server.pair_latency_us) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    let (pair_gbps, source) = match (client.pair_gbps, server.pair_gbps) {
        (Some(a), Some(b)) => {
            let (gbps, lower) = if a <= b { (a, client) } else { (b, server) };
            (
                Some(gbps * fraction),
                format!(
                    "cross-rail: rail {} ({}, the lower of the two) x cross_rail_fraction {fraction}",
                    lower.rail, lower.source
                ),
            )
        }
        _ => {
            let without = if client.pair_gbps.is_none() { client } else { server };
            (None, format!("no expectation: cross-rail over rail {} ({})", without.rail, without.source))
        }
    };
    RailExpectation {
        rail: label,
        pair_gbps,
        pair_latency_us,
        loopback_gbps: None,
        source,
        link_gbps: None,
        efficiency: None,
    }
}

/// The rail's rate: the one most hosts report (ties to the higher), so one host negotiated down to a
/// lower rate is judged against its peers' rate rather than lowering everyone's expectation.
fn rail_rate(links: &[(String, Option<RailLink>)]) -> Result<(f64, String), String> {
    let mut counts: BTreeMap<u64, (f64, Vec<&str>)> = BTreeMap::new();
    let mut without = Vec::new();
    for (host, link) in links {
        match link.as_ref().and_then(|l| l.gbps.map(|g| (g, l))) {
            Some((gbps, _)) => counts.entry((gbps * 1000.0).round() as u64).or_insert((gbps, Vec::new())).1.push(host),
            None => without.push(match link {
                Some(link) => format!("{host}: {}", link.detail),
                None => format!("{host}: its agent does not report link rates"),
            }),
        }
    }
    let best = counts.values().max_by(|a, b| a.1.len().cmp(&b.1.len()).then(a.0.total_cmp(&b.0)));
    match best {
        Some((gbps, hosts)) => {
            let example = links
                .iter()
                .find(|(host, _)| host == hosts[0])
                .and_then(|(_, link)| link.as_ref())
                .map(|l| l.detail.clone())
                .unwrap_or_default();
            Ok((*gbps, format!("{} of {} hosts, e.g. {example}", hosts.len(), links.len())))
        }
        None if without.is_empty() => Err("no host has this rail".into()),
        None => Err(format!("no link rate known ({})", without.join("; "))),
    }
}

/// The findings of one rail's pairs against its expectation, and each pair's fraction of it
/// (written into `matrix`). One `burnin.pair.below_expected` per ordered pair below, and one
/// `burnin.fabric.below_expected` when more than `fabric_fraction` of the measured pairs are.
pub fn judge_pairs(matrix: &mut PairMatrix, expectation: &RailExpectation, fabric_fraction: f64) -> Vec<Finding> {
    let mut findings = Vec::new();
    let (mut measured, mut below) = (0usize, 0usize);
    let mut fractions = Vec::new();
    for pair in &mut matrix.pairs {
        pair.expected_gbps = expectation.pair_gbps;
        pair.expected_fraction = None;
        let subject = format!("{}->{} {}", pair.client, pair.server, pair.rail);
        let mut reasons = Vec::new();
        if let (Some(bw), Some(expected)) = (pair.bw_mean_gbps, expectation.pair_gbps) {
            let fraction = bw / expected;
            pair.expected_fraction = Some(fraction);
            fractions.push(fraction);
            if bw < expected {
                reasons.push(format!(
                    "bandwidth {bw:.2} Gb/s is {fraction:.2} of the expected {expected:.2} Gb/s ({})",
                    expectation.source
                ));
            }
        }
        if let (Some(lat), Some(limit)) = (pair.lat_mean_us, expectation.pair_latency_us) {
            if lat > limit {
                reasons.push(format!("latency {lat:.1} us is above the expected {limit:.1} us"));
            }
        }
        let judged = (pair.bw_mean_gbps.is_some() && expectation.pair_gbps.is_some())
            || (pair.lat_mean_us.is_some() && expectation.pair_latency_us.is_some());
        measured += usize::from(judged);
        if !reasons.is_empty() {
            below += 1;
            findings.push(
                Finding::new("burnin.pair.below_expected", Verdict::Fail, subject, reasons.join("; "))
                    .expected(expected_text(expectation)),
            );
        }
    }
    if measured > 0 && below as f64 > fabric_fraction * measured as f64 {
        fractions.sort_by(f64::total_cmp);
        let median =
            fractions.get(fractions.len() / 2).map(|f| format!(", median {f:.2} of expected")).unwrap_or_default();
        findings.push(
            Finding::new(
                "burnin.fabric.below_expected",
                Verdict::Fail,
                format!("rail {}", expectation.rail),
                format!(
                    "{below} of {measured} pairs below expectation{median}: a fault every pair shares (link \
                     rates, switch configuration, traffic class, host tuning) or a wrong expectation ({})",
                    expectation.source
                ),
            )
            .expected(expected_text(expectation)),
        );
    }
    findings
}

/// `burnin.loopback.below_expected` for a host's loopback on a rail. Over verbs a loopback crosses
/// the adapter, so the pair expectation applies when no loopback figure is set; over TCP it never
/// leaves the host (memory copies), so only an explicit `loopback_gbps` is judged.
pub fn judge_loopback(
    result: &LoopbackResult,
    expectation: &RailExpectation,
    transport: DataTransport,
) -> Option<Finding> {
    let (expected, source) = match (expectation.loopback_gbps, transport) {
        (Some(gbps), _) => (gbps, "loopback_gbps".to_string()),
        (None, DataTransport::Verbs) => (expectation.pair_gbps?, expectation.source.clone()),
        (None, DataTransport::Tcp) => return None,
    };
    let bw = result.bw_gbps?;
    (bw < expected).then(|| {
        Finding::new(
            "burnin.loopback.below_expected",
            Verdict::Fail,
            format!("{} {}", result.host, result.rail),
            format!("loopback {bw:.2} Gb/s is {:.2} of the expected {expected:.2} Gb/s ({source})", bw / expected),
        )
        .expected(format!("at least {expected:.2} Gb/s"))
    })
}

fn expected_text(expectation: &RailExpectation) -> String {
    let mut parts = Vec::new();
    if let Some(gbps) = expectation.pair_gbps {
        parts.push(format!("at least {gbps:.2} Gb/s"));
    }
    if let Some(us) = expectation.pair_latency_us {
        parts.push(format!("at most {us:.1} us"));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricdoctor_report::burnin::PairStats;

    fn link(gbps: Option<f64>, detail: &str) -> Option<RailLink> {
        Some(RailLink { gbps, detail: detail.into() })
    }

    fn pair(client: &str, server: &str, bw: f64) -> PairStats {
        PairStats {
            samples: 1,
            bw_min_gbps: Some(bw),
            bw_mean_gbps: Some(bw),
            bw_max_gbps: Some(bw),
            lat_min_us: Some(3.0),
            lat_mean_us: Some(3.0),
            lat_max_us: Some(3.0),
            ..PairStats::new(client, server, "rail0")
        }
    }

    fn matrix(pairs: Vec<PairStats>) -> PairMatrix {
        PairMatrix::new("rail0", pairs)
    }

    #[test]
    fn explicit_figures_win_in_order_and_the_link_rate_is_the_fallback() {
        let links = vec![
            ("a".to_string(), link(Some(400.0), "mlx5_0 port 1 rate 400 Gb/sec (4X NDR)")),
            ("b".to_string(), link(Some(400.0), "mlx5_0 port 1 rate 400 Gb/sec (4X NDR)")),
            ("c".to_string(), link(Some(200.0), "mlx5_0 port 1 rate 200 Gb/sec (4X HDR)")),
        ];
        let mut section = ExpectationsSection::default();
        let derived = expect("rail0", &links, DataTransport::Verbs, &section, &Overrides::default());
        assert_eq!(derived.pair_gbps, Some(360.0), "the rate most hosts have, x 0.90: {derived:?}");
        assert!(derived.source.contains("2 of 3 hosts"), "{}", derived.source);
        section.pair_gbps = Some(300.0);
        section.rails.insert("rail0".into(), Targets { pair_gbps: Some(350.0), ..Targets::default() });
        let own = expect("rail0", &links, DataTransport::Verbs, &section, &Overrides::default());
        assert_eq!((own.pair_gbps, own.source.as_str()), (Some(350.0), "playbook [expectations.rails.rail0]"));
        let other = expect("rail1", &links, DataTransport::Verbs, &section, &Overrides::default());
        assert_eq!((other.pair_gbps, other.source.as_str()), (Some(300.0), "playbook [expectations]"));
        let profile = Overrides { profile_rate: Some((200.0, "dgx-a100-8x200g".into())), ..Overrides::default() };
        let from_profile = expect("rail2", &links, DataTransport::Verbs, &ExpectationsSection::default(), &profile);
        assert_eq!(from_profile.pair_gbps, Some(180.0), "the profile's rate, not the links': {from_profile:?}");
        assert!(from_profile.source.contains("profile dgx-a100-8x200g"), "{}", from_profile.source);
        let cli = Overrides { pair_gbps: Some(10.0), pair_latency_us: Some(5.0), ..profile };
        let forced = expect("rail0", &links, DataTransport::Verbs, &section, &cli);
        assert_eq!((forced.pair_gbps, forced.pair_latency_us), (Some(10.0), Some(5.0)));
        assert_eq!(forced.source, "--expect-pair-gbps");
    }

    #[test]
    fn a_virtual_link_gives_no_expectation_and_says_why() {
        let links = vec![("a".to_string(), link(None, "veth0 is a virtual interface")), ("b".to_string(), None)];
        let none =
            expect("default", &links, DataTransport::Tcp, &ExpectationsSection::default(), &Overrides::default());
        assert_eq!(none.pair_gbps, None);
        assert!(
            none.source.contains("virtual interface") && none.source.contains("--expect-pair-gbps"),
            "{}",
            none.source
        );
    }

    #[test]
    fn every_pair_below_is_one_fabric_finding_beside_the_pairs() {
        let expectation = RailExpectation {
            rail: "rail0".into(),
            pair_gbps: Some(10.0),
            pair_latency_us: None,
            loopback_gbps: None,
            source: "--expect-pair-gbps".into(),
            link_gbps: None,
            efficiency: None,
        };
        let mut all_slow = matrix(vec![pair("a", "b", 5.0), pair("b", "a", 5.1), pair("a", "c", 4.9)]);
        let findings = judge_pairs(&mut all_slow, &expectation, FABRIC_FRACTION);
        let count = |id: &str| findings.iter().filter(|f| f.id == id).count();
        assert_eq!((count("burnin.pair.below_expected"), count("burnin.fabric.below_expected")), (3, 1));
        assert_eq!(all_slow.pairs[0].expected_fraction, Some(0.5));
        let mut one_slow = matrix(vec![pair("a", "b", 12.0), pair("b", "a", 11.0), pair("a", "c", 4.0)]);
        let findings = judge_pairs(&mut one_slow, &expectation, FABRIC_FRACTION);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].subject, "a->c rail0");
        let mut fine = matrix(vec![pair("a", "b", 12.0)]);
        assert!(judge_pairs(&mut fine, &expectation, FABRIC_FRACTION).is_empty());
    }

    #[test]
    fn loopback_is_judged_by_its_own_figure_or_over_verbs_by_the_pairs() {
        let mut expectation = RailExpectation {
            rail: "rail0".into(),
            pair_gbps: Some(100.0),
            pair_latency_us: None,
            loopback_gbps: None,
            source: "x".into(),
            link_gbps: None,
            efficiency: None,
        };
        let result =
            LoopbackResult { host: "a".into(), rail: "rail0".into(), bw_gbps: Some(50.0), lat_us: None, error: None };
        assert!(judge_loopback(&result, &expectation, DataTransport::Tcp).is_none(), "TCP loopback is memory");
        assert!(judge_loopback(&result, &expectation, DataTransport::Verbs).is_some());
        expectation.loopback_gbps = Some(40.0);
        assert!(judge_loopback(&result, &expectation, DataTransport::Tcp).is_none());
        expectation.loopback_gbps = Some(60.0);
        let finding = judge_loopback(&result, &expectation, DataTransport::Tcp).expect("below");
        assert_eq!(finding.id, "burnin.loopback.below_expected");
    }

    #[test]
    fn bad_figures_are_refused_by_key() {
        let mut section = ExpectationsSection::default();
        section.rails.insert("rail1".into(), Targets { pair_gbps: Some(0.0), ..Targets::default() });
        let error = section.validate().expect_err("zero");
        assert!(error.contains("expectations.rails.rail1.pair_gbps"), "{error}");
        let mut section = ExpectationsSection { pair_latency_us: Some(-3.0), ..ExpectationsSection::default() };
        assert!(section.validate().expect_err("negative").contains("expectations.pair_latency_us"));
        section.pair_latency_us = None;
        section.verbs_efficiency = 1.5;
        assert!(section.validate().expect_err("efficiency").contains("verbs_efficiency"));
        assert!(positive("--expect-pair-gbps", f64::NAN).is_err());
        let section = ExpectationsSection { cross_rail_fraction: 0.0, ..ExpectationsSection::default() };
        assert!(section.validate().expect_err("zero").contains("expectations.cross_rail_fraction"));
    }

    /// A cross-rail link is held to the slower of its two rails times the spine's share, named as
    /// such; a rail without a figure leaves the link unjudged, saying which rail.
    #[test]
    fn a_cross_rail_link_expects_the_lower_rail_times_the_spine_share() {
        let rail = |name: &str, gbps: Option<f64>, latency: Option<f64>| RailExpectation {
            rail: name.into(),
            pair_gbps: gbps,
            pair_latency_us: latency,
            loopback_gbps: Some(1.0),
            source: format!("source of {name}"),
            link_gbps: None,
            efficiency: None,
        };
        let fast = rail("rail0", Some(360.0), Some(4.0));
        let slow = rail("rail1", Some(180.0), None);
        let cross = expect_cross(&fast, &slow, 0.5);
        assert_eq!(cross.rail, "rail0->rail1");
        assert_eq!(cross.pair_gbps, Some(90.0));
        assert_eq!(cross.pair_latency_us, Some(4.0));
        assert_eq!(cross.loopback_gbps, None, "a link between two hosts has no loopback");
        assert!(
            cross.source.contains("rail rail1 (source of rail1") && cross.source.contains("0.5"),
            "{}",
            cross.source
        );
        assert_eq!(expect_cross(&slow, &fast, 1.0).pair_gbps, Some(180.0));
        let unknown = expect_cross(&fast, &rail("rail2", None, None), 1.0);
        assert_eq!(unknown.pair_gbps, None);
        assert!(unknown.source.contains("rail rail2"), "{}", unknown.source);
    }
}
