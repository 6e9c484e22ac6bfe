//! Whether the class of service a verbs burn-in tested is lossless on every host: the priority its
//! RoCE v2 packets ride, from the traffic class or service level and the port's trust mode, against
//! the priorities each host's `pfc.config` check found PFC enabled on.
//!
//! Which priority a RoCE v2 packet rides (IEEE 802.1Qaz DCB APP trust, include/uapi/linux/dcbnl.h):
//! - a port that trusts DSCP classifies by the IP header's DSCP, the traffic class's upper six bits
//!   (RFC 2474), through its DSCP-to-priority map; mlx5's default map is priority = DSCP / 8
//!   (DSCP 24-31 to priority 3), and a site that remapped it must read this as "under the default map";
//! - a port that trusts PCP classifies by the VLAN header's priority, which RoCE adapters take from
//!   the address vector's service level (NCCL_IB_SL).

use fabricdoctor_checks::{Finding, Verdict};
use fabricdoctor_report::burnin::HostCheck;

/// The priority RoCE v2 packets of `traffic_class` and `service_level` ride on a port whose trust
/// table is `trust` ("dscp", "pcp", or selectors in order of precedence, "dscp,pcp"), and how it was
/// derived; `None` when the trust mode is unknown.
pub fn roce_priority(traffic_class: u8, service_level: u8, trust: &str) -> Option<(u8, String)> {
    match trust.split(',').next().map(str::trim) {
        Some("dscp") => {
            let dscp = traffic_class >> 2;
            Some((dscp / 8, format!("DSCP {dscp} under the default DSCP-to-priority map (DSCP / 8)")))
        }
        Some("pcp") => Some((service_level & 7, format!("SL {service_level} as the VLAN priority"))),
        _ => None,
    }
}

/// One RoCE netdev's PFC as a host's `pfc.config` finding reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PfcReading {
    pub host: String,
    /// "ens1f0np0 (mlx5_0)".
    pub netdev: String,
    pub enabled: Vec<u8>,
    pub trust: String,
}

/// The PFC readings in the hosts' check reports. `pfc.config` reports the enabled priorities as its
/// `observed` value ("[3]", checks/src/counters.rs) and the trust as the end of its evidence
/// ("DCB IEEE PFC enabled [3], trust dscp"); skipped and unreadable netdevs give none.
pub fn pfc_readings(host_checks: &[HostCheck]) -> Vec<PfcReading> {
    let mut readings = Vec::new();
    for check in host_checks {
        let findings = check.report.iter().flat_map(|r| r.findings.iter());
        for finding in findings.filter(|f| f.id == "pfc.config" && matches!(f.verdict, Verdict::Pass | Verdict::Warn)) {
            let Some(enabled) = finding.observed.as_deref().and_then(parse_priorities) else { continue };
            let trust = finding
                .evidence
                .iter()
                .find_map(|line| line.rsplit_once(", trust ").map(|(_, trust)| trust.trim().to_string()))
                .unwrap_or_else(|| "unknown".into());
            readings.push(PfcReading { host: check.host.clone(), netdev: finding.subject.clone(), enabled, trust });
        }
    }
    readings
}

/// "[3, 4]" -> [3, 4]; "[]" -> [].
fn parse_priorities(text: &str) -> Option<Vec<u8>> {
    let inner = text.trim().strip_prefix('[')?.strip_suffix(']')?;
    inner.split(',').map(str::trim).filter(|p| !p.is_empty()).map(|p| p.parse().ok()).collect()
}

/// The sign-off's line on the tested class, and a warning per host netdev whose PFC does not cover
/// it (the burn-in then loaded a lossy queue, not the one training uses).
pub fn judge(traffic_class: u8, service_level: u8, readings: &[PfcReading]) -> (String, Vec<Finding>) {
    let class = format!("traffic class {traffic_class} (DSCP {}), SL {service_level}", traffic_class >> 2);
    if readings.is_empty() {
        return (format!("{class}: whether PFC covers it is unknown: no host reported DCB PFC"), Vec::new());
    }
    let mut findings = Vec::new();
    let mut unknown = Vec::new();
    let mut covered = 0;
    for reading in readings {
        let subject = format!("{} {}", reading.host, reading.netdev);
        match roce_priority(traffic_class, service_level, &reading.trust) {
            None => unknown.push(subject),
            Some((priority, _)) if reading.enabled.contains(&priority) => covered += 1,
            Some((priority, how)) => findings.push(
                Finding::new(
                    "burnin.traffic.lossless",
                    Verdict::Warn,
                    subject,
                    format!(
                        "the tested {class} rides priority {priority} ({how}), which has no PFC here: the burn-in \
                         loaded a lossy queue"
                    ),
                )
                .evidence(format!("PFC enabled on {:?}, trust {}", reading.enabled, reading.trust))
                .expected(format!("PFC on priority {priority}"))
                .observed(format!("{:?}", reading.enabled)),
            ),
        }
    }
    let mut line = format!("{class}: PFC covers it on {covered} of {} RoCE netdevs", readings.len());
    if !findings.is_empty() {
        line.push_str(&format!(", not on {}", findings.len()));
    }
    if !unknown.is_empty() {
        line.push_str(&format!(", trust mode unknown on {}", unknown.join(", ")));
    }
    if findings.is_empty() && unknown.is_empty() {
        line.push_str(": ok");
    }
    (line, findings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricdoctor_report::Report;

    #[test]
    fn the_priority_follows_the_trust_mode() {
        // NCCL's usual RoCE setting: NCCL_IB_TC=106 is DSCP 26, priority 3 under the default map.
        assert_eq!(roce_priority(106, 0, "dscp").map(|p| p.0), Some(3));
        assert_eq!(roce_priority(106, 5, "pcp").map(|p| p.0), Some(5));
        assert_eq!(roce_priority(106, 5, "dscp,pcp").map(|p| p.0), Some(3));
        assert_eq!(roce_priority(106, 5, "unknown"), None);
    }

    fn host(name: &str, enabled: &str, trust: &str) -> HostCheck {
        let finding = Finding::new("pfc.config", Verdict::Pass, "ens1f0np0 (mlx5_0)", "PFC on priority 3 only")
            .evidence(format!("DCB IEEE PFC enabled {enabled}, trust {trust}"))
            .observed(enabled);
        HostCheck {
            host: name.into(),
            report: Some(Report::new("check", Vec::new(), vec![finding])),
            topology: None,
            error: None,
            worst: Verdict::Pass,
            excluded: false,
        }
    }

    #[test]
    fn a_host_without_pfc_on_the_tested_priority_is_named() {
        let readings = pfc_readings(&[host("n1", "[3]", "dscp"), host("n2", "[4]", "dscp"), host("n3", "[]", "x")]);
        assert_eq!(readings.len(), 3);
        let (line, findings) = judge(106, 0, &readings);
        assert_eq!(findings.len(), 1, "{line}");
        assert_eq!(findings[0].subject, "n2 ens1f0np0 (mlx5_0)");
        assert!(findings[0].message.contains("rides priority 3 (DSCP 26"), "{}", findings[0].message);
        assert!(line.contains("PFC covers it on 1 of 3 RoCE netdevs, not on 1, trust mode unknown on n3"), "{line}");
        let (line, findings) = judge(106, 0, &readings[..1]);
        assert!(findings.is_empty() && line.ends_with(": ok"), "{line}");
        assert!(judge(0, 0, &[]).0.contains("unknown: no host reported DCB PFC"));
    }

    /// The formats read here are the ones `pfc.config` writes (checks/src/counters.rs): run the real
    /// check on a captured RoCE node (tests/fixtures/counters/pfc-storm, PFC on priority 3, DSCP
    /// trust) and read its finding back.
    #[test]
    fn the_pfc_config_finding_is_read_back() {
        use fabricdoctor_checks::{evaluate_selected, Inputs, Policy};
        use fabricdoctor_probes::counters::{read_sample, CounterObservation};
        use fabricdoctor_probes::{NodeSnapshot, SysRoot};
        let root =
            SysRoot::captured(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/counters/pfc-storm/after"));
        let node = NodeSnapshot::probe(&root);
        let observation = CounterObservation::new(None, read_sample(&root), None);
        let inputs = Inputs::new(&node).with_counters(Some(&observation));
        let findings = evaluate_selected(&inputs, &Policy::default(), &["pfc.config".to_string()]);
        let check = HostCheck {
            host: "n1".into(),
            report: Some(Report::new("check", Vec::new(), findings.clone())),
            topology: None,
            error: None,
            worst: Verdict::Pass,
            excluded: false,
        };
        let readings = pfc_readings(&[check]);
        assert_eq!(readings.len(), 1, "{findings:#?}");
        assert!(!readings[0].enabled.is_empty(), "{readings:?}");
        assert_ne!(readings[0].trust, "unknown", "{readings:?} from {findings:#?}");
        assert_eq!(parse_priorities("[3, 4]"), Some(vec![3, 4]));
        assert_eq!(parse_priorities("[]"), Some(vec![]));
        assert_eq!(parse_priorities("3"), None);
    }
}
