//! The burn-in protocol as data: `playbooks/burnin/default.toml` is built in, `--playbook FILE`
//! replaces it. Unknown keys are refused so a typo does not silently fall back to a default.

use std::time::Duration;

use fabricdoctor_checks::Verdict;
use serde::{Deserialize, Serialize};

use crate::expectations::ExpectationsSection;
use crate::protocol::{DataTransport, MeasureSpec, TrafficSpec};
use crate::BurninError;

/// The default playbook's text.
pub const DEFAULT_PLAYBOOK: &str = include_str!("../../playbooks/burnin/default.toml");

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Playbook {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub policy: PolicySection,
    pub check: Toggle,
    pub loopback: Toggle,
    pub pairwise: PairwiseSection,
    pub alltoall: CollectiveSection,
    pub allreduce: CollectiveSection,
    pub soak: SoakSection,
    pub isolation: IsolationSection,
    pub signoff: SignoffSection,
    /// The class of service of verbs traffic; absent keys fall back to NCCL_IB_TC, NCCL_IB_SL and
    /// NCCL_IB_GID_INDEX in the coordinator's environment ([`Playbook::with_nccl_environment`]).
    #[serde(default)]
    pub traffic: TrafficSpec,
    /// What each rail should measure (absolute); absent: derived from the link rates.
    #[serde(default)]
    pub expectations: ExpectationsSection,
    /// Every rail of both hosts of a pair loaded at once, after the pairwise phase.
    #[serde(default)]
    pub all_rails: AllRailsSection,
    /// The congestion (PFC/ECN) pulse: incast into each host in turn.
    #[serde(default)]
    pub congestion: CongestionSection,
}

/// Which congestion signal a lossless RoCE fabric should raise first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FirstSignal {
    Ecn,
    Pfc,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CongestionSection {
    pub enabled: bool,
    /// How long every other host sends into the target, seconds.
    pub seconds: f64,
    /// Hosts taken as targets in turn (0: every host).
    pub targets: usize,
    /// How often the target's counters are read during a pulse, milliseconds.
    pub sample_ms: u64,
    /// NVIDIA's DCQCN guidance: ECN marks before PFC pauses (Kmin below the Xoff threshold).
    pub expect_first: FirstSignal,
}

impl Default for CongestionSection {
    fn default() -> Self {
        CongestionSection { enabled: true, seconds: 2.0, targets: 0, sample_ms: 250, expect_first: FirstSignal::Ecn }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllRailsSection {
    pub enabled: bool,
    /// A rail whose bandwidth with every rail loaded falls more than this fraction below the same
    /// rail alone is flagged (`burnin.rails.concurrent_drop`).
    pub tolerance: f64,
}

impl Default for AllRailsSection {
    fn default() -> Self {
        // PCIe root-complex contention costs quad-rail load about 11 % (89 % efficiency); a drop
        // beyond 15 % is more than sharing a healthy root complex explains.
        AllRailsSection { enabled: true, tolerance: 0.15 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExcludeOn {
    Pass,
    Warn,
    Error,
    Fail,
    Never,
}

impl ExcludeOn {
    /// Whether a host whose worst check verdict is `worst` is excluded.
    pub fn excludes(self, worst: Verdict) -> bool {
        let threshold = match self {
            ExcludeOn::Never => return false,
            ExcludeOn::Pass => Verdict::Pass,
            ExcludeOn::Warn => Verdict::Warn,
            ExcludeOn::Error => Verdict::Error,
            ExcludeOn::Fail => Verdict::Fail,
        };
        worst >= threshold
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicySection {
    pub exclude_on: ExcludeOn,
    /// Check id prefixes whose findings can exclude a host.
    pub exclude_checks: Vec<String>,
    pub stop_when_lost_fraction: f64,
    pub step_timeout_s: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Toggle {
    pub enabled: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairwiseSection {
    pub enabled: bool,
    pub fraction: f64,
    pub min_ms: u64,
    pub max_ms: u64,
    pub message_bytes: u64,
    pub queue_pairs: u32,
    pub tx_depth: u32,
    pub latency_iterations: u64,
    pub latency_bytes: u64,
    pub validate: bool,
    /// Which pairs meet: every pair ([`Pairing::All`], n-1 rounds), or by leaf
    /// ([`Pairing::Leaf`]: all pairs within each leaf, then host i of every leaf with host i of every
    /// other leaf; about hosts-per-leaf + leaves rounds, every host's uplink and every leaf-to-leaf
    /// path loaded, at a fraction of the pairs; each soak pass shifts the partner by one, so
    /// hosts-per-leaf passes meet every pair).
    #[serde(default)]
    pub pairing: Pairing,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pairing {
    #[default]
    All,
    Leaf,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectiveSection {
    pub enabled: bool,
    pub bytes: u64,
    pub iterations: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SoakSection {
    pub enabled: bool,
    pub interval_s: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IsolationSection {
    pub bandwidth_fraction: f64,
    pub latency_multiple: f64,
    pub max_rounds: u32,
    pub confirmations: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignoffSection {
    pub fail_on_counters: Vec<String>,
}

const CATEGORIES: [&str; 5] = ["pfc_pause", "ecn_cnp", "retransmits", "port_errors", "pcie_aer"];

impl Playbook {
    pub fn builtin() -> Result<Playbook, BurninError> {
        Playbook::parse(DEFAULT_PLAYBOOK, "built-in playbook")
    }

    /// Parse and check a playbook; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<Playbook, BurninError> {
        let playbook: Playbook =
            toml::from_str(text).map_err(|e| BurninError::Playbook(format!("{source}: {}", e.message())))?;
        let bad = |what: String| Err(BurninError::Playbook(format!("{source}: {what}")));
        let p = &playbook;
        if !(p.isolation.bandwidth_fraction > 0.0 && p.isolation.bandwidth_fraction <= 1.0) {
            return bad(format!("isolation.bandwidth_fraction {} outside (0, 1]", p.isolation.bandwidth_fraction));
        }
        if !(p.isolation.latency_multiple >= 1.0 && p.isolation.latency_multiple.is_finite()) {
            return bad(format!("isolation.latency_multiple {} below 1", p.isolation.latency_multiple));
        }
        if !(0.0..=1.0).contains(&p.policy.stop_when_lost_fraction) {
            return bad(format!("policy.stop_when_lost_fraction {} outside [0, 1]", p.policy.stop_when_lost_fraction));
        }
        if p.pairwise.min_ms == 0 || p.pairwise.min_ms > p.pairwise.max_ms {
            return bad(format!("pairwise.min_ms {} must be in 1..=max_ms {}", p.pairwise.min_ms, p.pairwise.max_ms));
        }
        if !(p.pairwise.fraction >= 0.0 && p.pairwise.fraction.is_finite()) {
            return bad(format!("pairwise.fraction {} is not a fraction", p.pairwise.fraction));
        }
        if !(p.soak.interval_s >= 0.0 && p.soak.interval_s <= 3600.0) {
            return bad(format!("soak.interval_s {} outside [0, 3600]", p.soak.interval_s));
        }
        if p.policy.step_timeout_s == 0 {
            return bad("policy.step_timeout_s must be at least 1".into());
        }
        if let Some(unknown) = p.signoff.fail_on_counters.iter().find(|c| !CATEGORIES.contains(&c.as_str())) {
            return bad(format!(
                "signoff.fail_on_counters: unknown category {unknown:?} (known: {})",
                CATEGORIES.join(", ")
            ));
        }
        for (name, section) in [("alltoall", &p.alltoall), ("allreduce", &p.allreduce)] {
            if section.enabled && (section.bytes == 0 || section.iterations == 0) {
                return bad(format!("{name}: bytes and iterations must be positive"));
            }
        }
        if !(p.congestion.seconds > 0.0 && p.congestion.seconds <= 600.0) {
            return bad(format!("congestion.seconds {} outside (0, 600]", p.congestion.seconds));
        }
        if !(50..=5000).contains(&p.congestion.sample_ms) {
            return bad(format!("congestion.sample_ms {} outside 50..=5000", p.congestion.sample_ms));
        }
        if !(p.all_rails.tolerance > 0.0 && p.all_rails.tolerance < 1.0) {
            return bad(format!("all_rails.tolerance {} outside (0, 1)", p.all_rails.tolerance));
        }
        p.expectations.validate().map_err(|e| BurninError::Playbook(format!("{source}: {e}")))?;
        let spec = playbook.measure_spec(Duration::from_secs(60));
        spec.validate().map_err(|e| BurninError::Playbook(format!("{source}: pairwise: {e}")))?;
        Ok(playbook)
    }

    /// The measuring time of one pair test for a run of `duration`.
    pub fn pair_ms(&self, duration: Duration) -> u64 {
        let scaled = (duration.as_secs_f64() * self.pairwise.fraction * 1000.0) as u64;
        scaled.clamp(self.pairwise.min_ms, self.pairwise.max_ms)
    }

    pub fn measure_spec(&self, duration: Duration) -> MeasureSpec {
        MeasureSpec {
            bandwidth_ms: self.pair_ms(duration),
            message_bytes: self.pairwise.message_bytes,
            queue_pairs: self.pairwise.queue_pairs,
            tx_depth: self.pairwise.tx_depth,
            latency_iterations: self.pairwise.latency_iterations,
            latency_bytes: self.pairwise.latency_bytes,
            validate: self.pairwise.validate,
            transport: DataTransport::Tcp,
            traffic: self.traffic,
        }
    }

    /// Fill the traffic keys the playbook leaves out from the variables NCCL reads (`lookup` is the
    /// environment), so a burn-in started in a training job's environment tests that job's queue.
    /// A set variable that is not a number is an error naming it.
    pub fn with_nccl_environment(mut self, lookup: impl Fn(&str) -> Option<String>) -> Result<Playbook, BurninError> {
        fn number<T: std::str::FromStr>(name: &str, value: Option<String>) -> Result<Option<T>, BurninError> {
            value
                .map(|v| {
                    v.trim()
                        .parse::<T>()
                        .map_err(|_| BurninError::Playbook(format!("{name}={v:?} is not a number in range for {name}")))
                })
                .transpose()
        }
        if self.traffic.traffic_class.is_none() {
            self.traffic.traffic_class = number("NCCL_IB_TC", lookup("NCCL_IB_TC"))?;
        }
        if self.traffic.service_level.is_none() {
            self.traffic.service_level = number("NCCL_IB_SL", lookup("NCCL_IB_SL"))?;
        }
        if self.traffic.gid_index.is_none() {
            self.traffic.gid_index = number("NCCL_IB_GID_INDEX", lookup("NCCL_IB_GID_INDEX"))?;
        }
        if self.traffic.service_level.is_some_and(|sl| sl > 15) {
            return Err(BurninError::Playbook(format!(
                "traffic.service_level {} outside 0..=15 (IB spec: 4 bits)",
                self.traffic.service_level.unwrap_or_default()
            )));
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Burn-in traffic must ride the class the training job's NCCL uses: playbook keys first, then
    /// NCCL_IB_TC / NCCL_IB_SL / NCCL_IB_GID_INDEX, and a variable that is not a number is refused.
    #[test]
    fn traffic_comes_from_the_playbook_then_nccls_variables() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        };
        let playbook = Playbook::builtin().expect("built-in");
        assert_eq!(playbook.traffic, TrafficSpec::default(), "the built-in playbook sets no class");
        let from_env = playbook
            .clone()
            .with_nccl_environment(env(&[("NCCL_IB_TC", "106"), ("NCCL_IB_SL", "3"), ("NCCL_IB_GID_INDEX", "3")]))
            .expect("numbers");
        assert_eq!(
            from_env.measure_spec(Duration::from_secs(60)).traffic,
            TrafficSpec { traffic_class: Some(106), service_level: Some(3), gid_index: Some(3) }
        );
        let text = DEFAULT_PLAYBOOK.replace("# traffic_class = 106", "traffic_class = 96");
        let set = Playbook::parse(&text, "test").expect("parse").with_nccl_environment(env(&[("NCCL_IB_TC", "106")]));
        assert_eq!(set.expect("ok").traffic.traffic_class, Some(96), "the playbook wins over the variable");
        let error = playbook.clone().with_nccl_environment(env(&[("NCCL_IB_TC", "high")])).expect_err("not a number");
        assert!(error.to_string().contains("NCCL_IB_TC=\"high\""), "{error}");
        assert!(playbook.with_nccl_environment(env(&[("NCCL_IB_SL", "16")])).is_err(), "SL is 4 bits");
    }

    #[test]
    fn the_builtin_playbook_parses_and_scales() {
        let playbook = Playbook::builtin().expect("built-in");
        assert_eq!(playbook.isolation.bandwidth_fraction, 0.93);
        assert_eq!(playbook.isolation.latency_multiple, 2.1);
        assert_eq!(playbook.pair_ms(Duration::from_secs(45)), 400, "short runs take the minimum");
        assert_eq!(playbook.pair_ms(Duration::from_secs(72 * 3600)), 30000, "long runs the maximum");
        assert_eq!(playbook.pair_ms(Duration::from_secs(3 * 3600)), 21600);
    }

    #[test]
    fn edited_playbooks_are_checked() {
        let typo = DEFAULT_PLAYBOOK.replace("bandwidth_fraction", "bandwith_fraction");
        let error = Playbook::parse(&typo, "mine.toml").expect_err("typo refused");
        assert!(error.to_string().contains("mine.toml"), "{error}");
        let silly = DEFAULT_PLAYBOOK.replace("bandwidth_fraction = 0.93", "bandwidth_fraction = 3.0");
        assert!(Playbook::parse(&silly, "mine.toml").is_err());
        let unknown = DEFAULT_PLAYBOOK.replace("\"pcie_aer\"]", "\"pcie_aer\", \"cosmic_rays\"]");
        assert!(Playbook::parse(&unknown, "mine.toml").expect_err("category").to_string().contains("cosmic_rays"));
        assert!(Playbook::parse("not toml [", "x").is_err());
        assert!(ExcludeOn::Fail.excludes(Verdict::Fail) && !ExcludeOn::Fail.excludes(Verdict::Error));
        assert!(!ExcludeOn::Never.excludes(Verdict::Fail));
    }
}
