//! The all-rails phase: each pair again, with every rail of both hosts carrying load at once, as a
//! training job loads them. PCIe root-complex contention and power or thermal limits only show under
//! that load; the pairwise phase loads one rail at a time. Each rail's figure is set beside the same
//! pair and rail alone, and a rail that drops more than the playbook's tolerance is flagged.

use super::pairwise::{serve_on, LostHosts, Served};
use super::*;
use crate::protocol::RailTarget;

/// One direction of a pair on every rail at once: the server side serves each rail, the client
/// measures all of them in one step. Returns (rail, direction) per measured rail and the lost hosts.
fn measure_all_rails(
    agents: &mut [(usize, &mut AgentConnection)],
    rails: &[String],
    spec: &MeasureSpec,
    step_timeout: Duration,
) -> (Vec<(String, Direction)>, LostHosts) {
    let mut measured = Vec::new();
    let mut lost = Vec::new();
    let measure_s = spec.bandwidth_ms / 1000 + 1;
    for (server_slot, client_slot) in [(0usize, 1usize), (1, 0)] {
        let (server, client) = (agents[server_slot].0, agents[client_slot].0);
        let failed = |rail: &str, reason: String| {
            (
                rail.to_string(),
                Direction {
                    client,
                    server,
                    rail: rail.to_string(),
                    measured: Measured { error: Some(reason), ..Measured::default() },
                },
            )
        };
        let mut targets = Vec::new();
        for rail in rails {
            let Some(address) = agents[server_slot].1.rails.iter().find(|r| &r.name == rail).map(|r| r.address) else {
                measured.push(failed(rail, format!("no rail {rail} on the server")));
                continue;
            };
            match serve_on(agents[server_slot].1, rail, spec, step_timeout) {
                Ok(Served::Serving { port, ticket }) => {
                    targets.push(RailTarget { rail: rail.clone(), server: address, port, ticket })
                }
                Ok(Served::Refused(reason)) => measured.push(failed(rail, format!("server: {reason}"))),
                Err(Lost(reason)) => lost.push((server, reason)),
            }
            if !lost.is_empty() {
                return (measured, lost);
            }
        }
        if targets.is_empty() {
            continue;
        }
        let request =
            Request::MeasureRails { targets: targets.clone(), spec: *spec, timeout_s: step_timeout.as_secs().max(1) };
        let wait = Duration::from_secs(2 * measure_s) + step_timeout;
        match call(agents[client_slot].1, &request, wait) {
            Ok(Response::MeasuredRails { results }) if results.len() == targets.len() => {
                for (target, result) in targets.into_iter().zip(results) {
                    let direction = Direction { client, server, rail: target.rail.clone(), measured: result };
                    measured.push((target.rail, direction));
                }
            }
            Ok(Response::Error { reason }) => {
                measured.extend(targets.iter().map(|t| failed(&t.rail, reason.clone())));
            }
            Ok(other) => {
                lost.push((client, format!("unexpected answer {other:?}")));
                return (measured, lost);
            }
            Err(Lost(reason)) => {
                lost.push((client, reason));
                return (measured, lost);
            }
        }
    }
    (measured, lost)
}

impl Coordinator {
    /// After the pairwise phase of `iteration`: every pair in circle-method rounds, every rail at once.
    pub(super) fn all_rails_phase(&mut self, iteration: u32) -> Result<bool, BurninError> {
        let key = format!("all-rails#{iteration}");
        let rails = self.rails();
        let hosts = match self.checkpoint.phase_hosts.get(&key) {
            Some(hosts) => hosts.clone(),
            None => {
                let hosts = self.active();
                self.checkpoint.phase_hosts.insert(key.clone(), hosts.clone());
                hosts
            }
        };
        let rounds = self.pass_rounds(&hosts, iteration);
        self.begin_phase("all-rails", iteration, rounds.len() as u64);
        if rails.len() < 2 || hosts.len() < 2 {
            self.end_phase("all-rails", iteration, PhaseStatus::Skipped)?;
            return Ok(true);
        }
        let spec = self.measure_spec();
        let timeout = self.step_timeout();
        for (number, round) in rounds.iter().enumerate() {
            let step = format!("{key}/r{number}");
            if self.step_done(&step) {
                continue;
            }
            if self.must_stop().is_some() {
                self.end_phase("all-rails", iteration, PhaseStatus::Interrupted)?;
                return Ok(false);
            }
            let started = Instant::now();
            let pairs = self.round_pairs(round, &hosts, &format!("{key} round {number}"), "all rails");
            let results = self.measure_round_by(&pairs, |agents| measure_all_rails(agents, &rails, &spec, timeout));
            let mut measurements = Vec::new();
            for ((a, b), directions) in results {
                if self.report.hosts[a].status != HostStatus::Ok || self.report.hosts[b].status != HostStatus::Ok {
                    continue;
                }
                for (rail, direction) in &directions {
                    measurements.push(self.record_concurrent(direction, rail));
                }
            }
            self.finish_step(step, "all-rails", started, StepDetail { measurements, ..StepDetail::default() })?;
        }
        self.end_phase("all-rails", iteration, PhaseStatus::Done)?;
        Ok(true)
    }

    /// Fold one direction measured under all-rails load into the report.
    fn record_concurrent(&mut self, direction: &Direction, rail: &str) -> PairMeasurement {
        let m = &direction.measured;
        let (client, server) = (self.name(direction.client), self.name(direction.server));
        let position = self
            .report
            .concurrent_rails
            .iter()
            .position(|c| c.client == client && c.server == server && c.rail == rail);
        let index = position.unwrap_or_else(|| {
            self.report.concurrent_rails.push(ConcurrentRail {
                client: client.clone(),
                server: server.clone(),
                rail: rail.into(),
                samples: 0,
                together_gbps: None,
                alone_gbps: None,
                fraction: None,
                last_error: None,
            });
            self.report.concurrent_rails.len() - 1
        });
        let entry = &mut self.report.concurrent_rails[index];
        if let Some(bw) = m.bw_gbps {
            let n = entry.samples as f64;
            entry.together_gbps = Some(entry.together_gbps.map_or(bw, |mean| (mean * n + bw) / (n + 1.0)));
            entry.samples += 1;
        }
        if let Some(error) = &m.error {
            entry.last_error = Some(error.clone());
            self.add_finding(Finding::new(
                "burnin.pair.failed",
                Verdict::Fail,
                format!("{client}->{server} {rail} (all rails)"),
                format!("measurement with every rail loaded failed: {error}"),
            ));
        }
        PairMeasurement {
            client,
            server,
            rail: rail.into(),
            bw_gbps: m.bw_gbps,
            lat_us: m.lat_us,
            lat_p99_us: m.lat_p99_us,
            validation_errors: m.validation_errors,
            error: m.error.clone(),
        }
    }
}

/// Each rail under all-rails load against the same pair and rail alone (`pairs`, the pairwise
/// means): the fraction, and a `burnin.rails.concurrent_drop` finding where it is below
/// 1 - `tolerance`.
pub(super) fn judge_concurrent(
    concurrent: &mut [ConcurrentRail],
    pairs: &[PairMatrix],
    tolerance: f64,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    for entry in concurrent.iter_mut() {
        let alone = pairs
            .iter()
            .filter(|m| m.rail == entry.rail)
            .flat_map(|m| m.pairs.iter())
            .find(|p| p.client == entry.client && p.server == entry.server)
            .and_then(|p| p.bw_mean_gbps);
        entry.alone_gbps = alone;
        entry.fraction = match (entry.together_gbps, alone) {
            (Some(together), Some(alone)) if alone > 0.0 => Some(together / alone),
            _ => None,
        };
        if let (Some(fraction), Some(together), Some(alone)) = (entry.fraction, entry.together_gbps, alone) {
            if fraction < 1.0 - tolerance {
                findings.push(
                    Finding::new(
                        "burnin.rails.concurrent_drop",
                        Verdict::Fail,
                        format!("{}->{} {}", entry.client, entry.server, entry.rail),
                        format!(
                            "{together:.2} Gb/s with every rail loaded, {alone:.2} Gb/s alone ({:.0} %): the rails share \
                             a bottleneck this rail should not feel (PCIe root complex or switch uplink, power or \
                             thermal throttling)",
                            fraction * 100.0
                        ),
                    )
                    .expected(format!("at least {:.0} % of the rail alone", (1.0 - tolerance) * 100.0))
                    .observed(format!("{:.0} %", fraction * 100.0)),
                );
            }
        }
    }
    findings
}
