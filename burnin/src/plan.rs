//! `burnin --plan HOSTS`: the protocol's rounds and an estimate of its duration for a host count,
//! rail count and playbook, without reaching any host. At fleet scale the all-pairs schedule is the
//! cost (n - 1 rounds per rail, each rail in turn, both directions of every pair): a 1,024-host
//! cluster with 8 rails and 30 s tests needs days for one pass, and an operator has to know that
//! before booking the machines, not after.
//!
//! The estimate follows the coordinator's schedule step by step (the same `circle_rounds`, the same
//! test lengths from the playbook and `--duration`); what it cannot know is each step's setup cost
//! on the real cluster, taken as [`STEP_SETUP_S`] per request, and the check phase's length.

use std::time::Duration;

use crate::playbook::Playbook;
use crate::schedule::circle_rounds;

/// Seconds a step spends on more than its tests: the coordinator's requests, the server's listen,
/// the data connection. On the namespace rig a pair direction's setup takes 20-60 ms; 0.2 s leaves
/// room for a cluster's ssh-started agents and large RTTs.
pub const STEP_SETUP_S: f64 = 0.2;

/// The check phase runs on every host at once; a check of a GPU node takes seconds.
const CHECK_S: f64 = 10.0;

/// One-way latency assumed for the latency tests' round trips, microseconds (a leaf-spine fabric).
const LATENCY_US: f64 = 5.0;

#[derive(Debug, Clone, PartialEq)]
pub struct PlannedPhase {
    pub name: String,
    /// Steps run one after the other (a round of pairs is one step).
    pub steps: u64,
    /// Pair directions measured in the phase (every rail).
    pub measurements: u64,
    pub estimated_s: f64,
    pub how: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub hosts: usize,
    pub rails: usize,
    pub duration_s: f64,
    /// Seconds of one pair direction's bandwidth test (the playbook's `pairwise.fraction` of the
    /// duration, within its `min_ms`/`max_ms`).
    pub pair_test_s: f64,
    /// The first pass, in protocol order.
    pub phases: Vec<PlannedPhase>,
    pub first_pass_s: f64,
    /// Further soak passes (pairwise and collectives again) that fit in the duration.
    pub soak_passes: u64,
    pub warnings: Vec<String>,
}

/// The plan of a run of `hosts` hosts with `rails` rails each.
pub fn plan(hosts: usize, rails: usize, playbook: &Playbook, duration: Duration) -> Plan {
    let spec = playbook.measure_spec(duration);
    let test_s = spec.bandwidth_ms as f64 / 1000.0;
    let latency_s = spec.latency_iterations as f64 * 2.0 * LATENCY_US * 1e-6;
    // One pair direction: the server's listen and the client's bandwidth and latency tests.
    let direction_s = 2.0 * STEP_SETUP_S + test_s + latency_s;
    let rounds = circle_rounds(hosts).len() as u64;
    let pairs_per_round = (hosts / 2) as u64;
    let rails_u = rails.max(1) as u64;
    let mut phases = Vec::new();
    if playbook.check.enabled {
        phases.push(PlannedPhase {
            name: "check".into(),
            steps: 1,
            measurements: 0,
            estimated_s: CHECK_S,
            how: "every host at once".into(),
        });
    }
    if playbook.loopback.enabled {
        phases.push(PlannedPhase {
            name: "loopback".into(),
            steps: rails_u,
            measurements: rails_u * hosts as u64,
            estimated_s: rails_u as f64 * direction_s,
            how: "every host against itself, one rail at a time".into(),
        });
    }
    let pairwise = PlannedPhase {
        name: "pairwise".into(),
        steps: rounds * rails_u,
        measurements: 2 * rounds * pairs_per_round * rails_u,
        estimated_s: (rounds * rails_u) as f64 * 2.0 * direction_s,
        how: format!(
            "{rounds} rounds of {pairs_per_round} pairs at once per rail, {rails_u} rail(s) in turn, both directions"
        ),
    };
    let pairwise_s = pairwise.estimated_s;
    phases.push(pairwise);
    if playbook.all_rails.enabled && rails > 1 {
        phases.push(PlannedPhase {
            name: "all-rails".into(),
            steps: rounds,
            measurements: 2 * rounds * pairs_per_round * rails_u,
            estimated_s: rounds as f64 * 2.0 * (rails as f64 * STEP_SETUP_S + test_s + latency_s),
            how: format!("{rounds} rounds, every rail of both hosts at once"),
        });
    }
    if playbook.congestion.enabled && hosts > 2 {
        let targets = if playbook.congestion.targets == 0 { hosts } else { playbook.congestion.targets.min(hosts) };
        phases.push(PlannedPhase {
            name: "congestion".into(),
            steps: targets as u64,
            measurements: (targets * (hosts - 1)) as u64,
            estimated_s: targets as f64 * (playbook.congestion.seconds + hosts as f64 * STEP_SETUP_S / 8.0),
            how: format!("{targets} pulses: every other host sends into one"),
        });
    }
    let collectives: f64 = [playbook.alltoall.enabled, playbook.allreduce.enabled]
        .iter()
        .filter(|on| **on)
        .map(|_| STEP_SETUP_S * hosts as f64 / 8.0 + 1.0)
        .sum();
    if collectives > 0.0 {
        phases.push(PlannedPhase {
            name: "collectives".into(),
            steps: 2,
            measurements: 0,
            estimated_s: collectives,
            how: "all-to-all and AllReduce over every host".into(),
        });
    }
    let first_pass_s: f64 = phases.iter().map(|p| p.estimated_s).sum();
    let duration_s = duration.as_secs_f64();
    let soak_pass_s = pairwise_s + collectives;
    let soak_passes = if playbook.soak.enabled && first_pass_s < duration_s && soak_pass_s > 0.0 {
        ((duration_s - first_pass_s) / soak_pass_s).floor() as u64
    } else {
        0
    };
    let mut warnings = Vec::new();
    if first_pass_s > duration_s {
        warnings.push(format!(
            "the first pass alone takes about {} but --duration is {}: every phase still runs once, so the run \
             lasts about {}; fewer rails per run, a shorter pairwise.max_ms or a smaller host set shortens it",
            human(first_pass_s),
            human(duration_s),
            human(first_pass_s)
        ));
    }
    if pairwise_s > 0.5 * first_pass_s && hosts > 256 {
        warnings.push(format!(
            "the pairwise matrix is {} of {} ordered pairs per rail; isolation only needs the pairs of a suspect's \
             host again, so one pass is enough on this many hosts",
            2 * rounds * pairs_per_round,
            hosts * (hosts - 1)
        ));
    }
    Plan { hosts, rails: rails.max(1), duration_s, pair_test_s: test_s, phases, first_pass_s, soak_passes, warnings }
}

/// Seconds as "3 h 25 min", "12 min 5 s", "40 s".
pub fn human(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

impl Plan {
    /// The plan as the terminal shows it.
    pub fn text(&self) -> String {
        let mut out = format!(
            "burn-in plan: {} hosts, {} rail(s), --duration {}, pair tests of {:.1} s per direction\n",
            self.hosts,
            self.rails,
            human(self.duration_s),
            self.pair_test_s
        );
        for phase in &self.phases {
            out.push_str(&format!(
                "  {:<12} {:>8} steps {:>12} measurements  ~{:>14}  {}\n",
                phase.name,
                phase.steps,
                phase.measurements,
                human(phase.estimated_s),
                phase.how
            ));
        }
        out.push_str(&format!(
            "  first pass ~{}; then {} soak pass(es) fit in the duration\n",
            human(self.first_pass_s),
            self.soak_passes
        ));
        out.push_str(&format!(
            "  estimate: test lengths from the playbook, {STEP_SETUP_S} s setup per request, {LATENCY_US} us one-way \
             latency; retests of suspects (isolation) come on top\n"
        ));
        for warning in &self.warnings {
            out.push_str(&format!("warning: {warning}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default_playbook() -> Playbook {
        Playbook::parse(crate::playbook::DEFAULT_PLAYBOOK, "default").expect("default playbook")
    }

    #[test]
    fn the_plan_follows_the_schedule_of_the_run() {
        let playbook = default_playbook();
        let plan = plan(64, 2, &playbook, Duration::from_secs(3600));
        let pairwise = plan.phases.iter().find(|p| p.name == "pairwise").expect("pairwise");
        // 64 hosts: 63 rounds of 32 pairs, per rail, both directions.
        assert_eq!(pairwise.steps, 126);
        assert_eq!(pairwise.measurements, 2 * 63 * 32 * 2);
        // 0.002 of an hour is 7.2 s per direction.
        assert!((plan.pair_test_s - 7.2).abs() < 1e-9, "{}", plan.pair_test_s);
        assert!(plan.phases.iter().any(|p| p.name == "all-rails"), "two rails");
        assert!(plan.warnings.is_empty(), "{:?}", plan.warnings);
        // An odd count sits one host out per round: 65 hosts take 65 rounds.
        assert_eq!(super::plan(65, 1, &playbook, Duration::from_secs(600)).phases[2].steps, 65);
    }

    #[test]
    fn a_first_pass_longer_than_the_duration_is_said() {
        let playbook = default_playbook();
        let plan = plan(1024, 8, &playbook, Duration::from_secs(72 * 3600));
        assert_eq!(plan.pair_test_s, 30.0, "max_ms caps the tests");
        assert!(plan.first_pass_s > 72.0 * 3600.0, "{}", plan.first_pass_s);
        assert!(plan.warnings[0].contains("the first pass alone takes about"), "{:?}", plan.warnings);
        assert!(plan.text().contains("pairwise"), "{}", plan.text());
        assert_eq!(plan.soak_passes, 0);
    }
}
