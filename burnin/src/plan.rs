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

use crate::playbook::{Pairing, Playbook};

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

/// Rounds of one pass and the unordered pairs they measure, as `circle_rounds` or `leaf_rounds`
/// lay them out (closed forms: a fleet's schedule is not built to count it).
fn schedule_size(hosts: usize, pairing: Pairing, hosts_per_leaf: usize) -> (u64, u64) {
    let circle = |n: u64| {
        if n < 2 {
            0
        } else if n % 2 == 0 {
            n - 1
        } else {
            n
        }
    };
    let n = hosts as u64;
    match pairing {
        Pairing::All => (circle(n), n * n.saturating_sub(1) / 2),
        Pairing::Leaf => {
            let size = hosts_per_leaf.clamp(1, hosts) as u64;
            let full = n / size;
            let last = n % size;
            let leaves = full + u64::from(last > 0);
            let within = full * size * (size - 1) / 2 + last * last.saturating_sub(1) / 2;
            // Host k of one leaf meets host k of every other: min(size) per pair of leaves.
            let cross = full * full.saturating_sub(1) / 2 * size + if last > 0 { full * last } else { 0 };
            (circle(size) + circle(leaves), within + cross)
        }
    }
}

/// The plan of a run of `hosts` hosts with `rails` rails each (and, for pairing by leaf,
/// `hosts_per_leaf` hosts under each leaf).
pub fn plan(hosts: usize, rails: usize, hosts_per_leaf: usize, playbook: &Playbook, duration: Duration) -> Plan {
    plan_with_setup(hosts, rails, hosts_per_leaf, playbook, duration, STEP_SETUP_S)
}

/// [`plan`] with `setup_s` seconds of setup per request (0 for a simulated fabric, whose steps
/// cost only their tests).
pub fn plan_with_setup(
    hosts: usize,
    rails: usize,
    hosts_per_leaf: usize,
    playbook: &Playbook,
    duration: Duration,
    setup_s: f64,
) -> Plan {
    let spec = playbook.measure_spec(duration);
    let test_s = spec.bandwidth_ms as f64 / 1000.0;
    let latency_s = spec.latency_iterations as f64 * 2.0 * LATENCY_US * 1e-6;
    // One pair direction: the server's listen and the client's bandwidth and latency tests.
    let direction_s = 2.0 * setup_s + test_s + latency_s;
    let pairing = playbook.pairwise.pairing;
    let (rounds, pairs) = schedule_size(hosts, pairing, hosts_per_leaf);
    let pairs_per_round = pairs.div_ceil(rounds.max(1));
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
        measurements: 2 * pairs * rails_u,
        estimated_s: (rounds * rails_u) as f64 * 2.0 * direction_s,
        how: format!(
            "{rounds} rounds of up to {pairs_per_round} pairs at once per rail{}, {rails_u} rail(s) in turn, both directions",
            match pairing {
                Pairing::All => String::new(),
                Pairing::Leaf => format!(" (by leaf: {hosts_per_leaf} hosts per leaf)"),
            }
        ),
    };
    let pairwise_s = pairwise.estimated_s;
    phases.push(pairwise);
    if playbook.all_rails.enabled && rails > 1 {
        phases.push(PlannedPhase {
            name: "all-rails".into(),
            steps: rounds,
            measurements: 2 * pairs * rails_u,
            estimated_s: rounds as f64 * 2.0 * (rails as f64 * setup_s + test_s + latency_s),
            how: format!("{rounds} rounds, every rail of both hosts at once"),
        });
    }
    if playbook.congestion.enabled && hosts > 2 {
        let targets = if playbook.congestion.targets == 0 { hosts } else { playbook.congestion.targets.min(hosts) };
        phases.push(PlannedPhase {
            name: "congestion".into(),
            steps: targets as u64,
            measurements: (targets * (hosts - 1)) as u64,
            estimated_s: targets as f64 * (playbook.congestion.seconds + 2.0 * setup_s),
            how: format!("{targets} pulses: every other host sends into one"),
        });
    }
    // A collective of a few MiB takes well under a second on a healthy fabric; its rendezvous of
    // every host is the setup.
    let collectives: f64 = [playbook.alltoall.enabled, playbook.allreduce.enabled]
        .iter()
        .filter(|on| **on)
        .map(|_| 2.0 * setup_s + 0.5)
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
    if pairing == Pairing::All && hosts > 256 && first_pass_s > duration_s {
        let (leaf_rounds, _) = schedule_size(hosts, Pairing::Leaf, hosts_per_leaf);
        warnings.push(format!(
            "every pair meets in {rounds} rounds per rail; pairing by leaf (playbook pairwise.pairing = \"leaf\", \
             hostfile leaf=) takes {leaf_rounds} rounds with {hosts_per_leaf} hosts per leaf and still loads every \
             uplink and every leaf-to-leaf path"
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
        let plan = plan(64, 2, 32, &playbook, Duration::from_secs(3600));
        let pairwise = plan.phases.iter().find(|p| p.name == "pairwise").expect("pairwise");
        // 64 hosts: 63 rounds of 32 pairs, per rail, both directions.
        assert_eq!(pairwise.steps, 126);
        assert_eq!(pairwise.measurements, 2 * 63 * 32 * 2);
        // 0.002 of an hour is 7.2 s per direction.
        assert!((plan.pair_test_s - 7.2).abs() < 1e-9, "{}", plan.pair_test_s);
        assert!(plan.phases.iter().any(|p| p.name == "all-rails"), "two rails");
        assert!(plan.warnings.is_empty(), "{:?}", plan.warnings);
        // An odd count sits one host out per round: 65 hosts take 65 rounds.
        assert_eq!(super::plan(65, 1, 32, &playbook, Duration::from_secs(600)).phases[2].steps, 65);
    }

    #[test]
    fn a_first_pass_longer_than_the_duration_is_said() {
        let playbook = default_playbook();
        let plan = plan(1024, 8, 32, &playbook, Duration::from_secs(72 * 3600));
        assert_eq!(plan.pair_test_s, 30.0, "max_ms caps the tests");
        assert!(plan.first_pass_s > 72.0 * 3600.0, "{}", plan.first_pass_s);
        assert!(plan.warnings[0].contains("the first pass alone takes about"), "{:?}", plan.warnings);
        assert!(plan.text().contains("pairwise"), "{}", plan.text());
        assert_eq!(plan.soak_passes, 0);
        assert!(plan.warnings[1].contains("takes 62 rounds with 32 hosts per leaf"), "{:?}", plan.warnings);
    }

    /// The closed forms count what the schedules lay out.
    #[test]
    fn the_counts_are_the_schedules_own() {
        for (hosts, per_leaf) in [(2, 32), (7, 3), (64, 16), (100, 32), (129, 32)] {
            let all = crate::schedule::circle_rounds(hosts);
            assert_eq!(
                schedule_size(hosts, Pairing::All, per_leaf),
                (all.len() as u64, all.iter().map(Vec::len).sum::<usize>() as u64)
            );
            let names: Vec<String> = (0..hosts).map(|h| format!("leaf{}", h / per_leaf)).collect();
            let leaves: Vec<&str> = names.iter().map(String::as_str).collect();
            let by_leaf = crate::schedule::leaf_rounds(&leaves, 0);
            assert_eq!(
                schedule_size(hosts, Pairing::Leaf, per_leaf),
                (by_leaf.len() as u64, by_leaf.iter().map(Vec::len).sum::<usize>() as u64),
                "{hosts} hosts, {per_leaf} per leaf"
            );
        }
    }
}
