//! The pairwise phase: every pair on every rail in circle-method rounds, both directions, and the
//! pair statistics and matrices of the report.

use super::*;
use crate::expectations::cross_rail_label;

/// What one direction of a pair measured, or why its agent was lost.
pub(super) struct Direction {
    pub(super) client: usize,
    pub(super) server: usize,
    /// What it is recorded under: the rail, or the client's and server's rails of a cross-rail link
    /// ([`cross_rail_label`]).
    pub(super) rail: String,
    pub(super) measured: Measured,
}

/// The rails a pair's two hosts use: `first` on the round's first host, `second` on the other. One
/// rail on both is rail-aware pairing; two different rails are a cross-rail link (`--cross-rail`).
#[derive(Debug, Clone, Copy)]
pub(super) struct PairRails<'a> {
    pub(super) first: &'a str,
    pub(super) second: &'a str,
}

impl<'a> PairRails<'a> {
    pub(super) fn same(rail: &'a str) -> PairRails<'a> {
        PairRails { first: rail, second: rail }
    }

    /// The rail of the pair's host in `slot` (0: first, 1: second).
    fn of(&self, slot: usize) -> &'a str {
        if slot == 0 {
            self.first
        } else {
            self.second
        }
    }

    /// The label of a direction whose client is in `client_slot`.
    pub(super) fn label(&self, client_slot: usize) -> String {
        let (client, server) = (self.of(client_slot), self.of(1 - client_slot));
        if client == server {
            client.to_string()
        } else {
            cross_rail_label(client, server)
        }
    }

    /// The label of the pairing in step keys and progress: the rail, or "first->second".
    pub(super) fn name(&self) -> String {
        self.label(0)
    }

    pub(super) fn is_cross(&self) -> bool {
        self.first != self.second
    }
}

/// Hosts a step lost, with why.
pub(super) type LostHosts = Vec<(usize, String)>;

pub(super) struct PairOutcome {
    pub(super) directions: Vec<Direction>,
    pub(super) lost: Vec<(usize, String)>,
}

/// One pair, both directions: `a` serves on its rail and `b` measures from its own, then the
/// reverse. Each host sends from its rail's address, so a cross-rail link's traffic leaves by the
/// client's rail and arrives on the server's.
pub(super) fn measure_pair(
    agents: &mut [(usize, &mut AgentConnection)],
    rails: PairRails<'_>,
    spec: &MeasureSpec,
    step_timeout: Duration,
) -> PairOutcome {
    let mut outcome = PairOutcome { directions: Vec::new(), lost: Vec::new() };
    let rail_ip = |agent: &AgentConnection, rail: &str| agent.rails.iter().find(|r| r.name == rail).map(|r| r.address);
    let measure_s = spec.bandwidth_ms / 1000 + 1;
    for (server_slot, client_slot) in [(0usize, 1usize), (1, 0)] {
        if !outcome.lost.is_empty() {
            break;
        }
        let (server, client) = (agents[server_slot].0, agents[client_slot].0);
        let (server_rail, client_rail) = (rails.of(server_slot), rails.of(client_slot));
        let rail = rails.label(client_slot);
        let failed = |reason: String| Direction {
            client,
            server,
            rail: rail.clone(),
            measured: Measured { error: Some(reason), ..Measured::default() },
        };
        let Some(server_ip) = rail_ip(agents[server_slot].1, server_rail) else {
            outcome.directions.push(failed(format!("no rail {server_rail} on the server")));
            continue;
        };
        let (port, ticket) = match serve_on(agents[server_slot].1, server_rail, spec, step_timeout) {
            Ok(Served::Serving { port, ticket }) => (port, ticket),
            Ok(Served::Refused(reason)) => {
                outcome.directions.push(failed(format!("server: {reason}")));
                continue;
            }
            Err(Lost(reason)) => {
                outcome.lost.push((server, reason));
                break;
            }
        };
        let request = Request::Measure {
            server: server_ip,
            port,
            spec: *spec,
            timeout_s: step_timeout.as_secs().max(1),
            rail: Some(client_rail.into()),
            ticket,
        };
        let wait = Duration::from_secs(2 * measure_s) + step_timeout;
        match call(agents[client_slot].1, &request, wait) {
            Ok(Response::Measured(measured)) => outcome.directions.push(Direction { client, server, rail, measured }),
            Ok(Response::Error { reason }) => outcome.directions.push(failed(reason)),
            Ok(other) => outcome.lost.push((client, format!("unexpected answer {other:?}"))),
            Err(Lost(reason)) => outcome.lost.push((client, reason)),
        }
    }
    outcome
}

/// What a serving agent answered.
pub(super) enum Served {
    /// Listening on `port` for clients that present `ticket`.
    Serving { port: u16, ticket: String },
    /// It could not serve, and why.
    Refused(String),
}

/// Have `agent` serve one measurement (a bandwidth and a latency session) of `spec` on `rail`,
/// listening for as long as it may take plus the step's slack, for the holder of this step's ticket
/// only: a fresh nonce goes with the step, and both ends of our session derive the ticket from it.
pub(super) fn serve_on(
    agent: &mut AgentConnection,
    rail: &str,
    spec: &MeasureSpec,
    step_timeout: Duration,
) -> Result<Served, Lost> {
    let nonce = match random_bytes::<16>() {
        Ok(bytes) => hex(&bytes),
        Err(error) => return Ok(Served::Refused(error.to_string())),
    };
    let request = Request::Serve {
        rail: rail.into(),
        sessions: 2,
        timeout_s: spec.bandwidth_ms / 1000 + 1 + step_timeout.as_secs(),
        transport: spec.transport,
        traffic: spec.traffic,
        ticket_nonce: nonce.clone(),
    };
    match call(agent, &request, step_timeout)? {
        Response::Serving { port } => Ok(Served::Serving { port, ticket: agent.ticket(rail, &nonce) }),
        Response::Error { reason } => Ok(Served::Refused(reason)),
        other => Err(Lost(format!("unexpected answer {other:?}"))),
    }
}

/// Fold both directions of a pair into the sample isolation judges: the worse of the two.
pub(super) fn fold(directions: &[Direction]) -> PairSample {
    let mut sample = PairSample { bw_gbps: None, lat_us: None, failed: directions.is_empty() };
    for direction in directions {
        let m = &direction.measured;
        if m.error.is_some() || m.validation_errors > 0 {
            sample.failed = true;
        }
        sample.bw_gbps = match (sample.bw_gbps, m.bw_gbps) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        sample.lat_us = match (sample.lat_us, m.lat_us) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }
    sample
}

impl Coordinator {
    /// Record one measured direction under its rail (or cross-rail link).
    pub(super) fn record(&mut self, direction: &Direction) -> PairMeasurement {
        let rail = direction.rail.as_str();
        let m = &direction.measured;
        let entry = self.accumulators.entry((direction.client, direction.server, rail.to_string())).or_default();
        if let Some(bw) = m.bw_gbps {
            entry.bw_sum += bw;
            entry.bw_n += 1;
        }
        if let Some(lat) = m.lat_us {
            entry.lat_sum += lat;
            entry.lat_n += 1;
        }
        let (client, server) = (self.name(direction.client), self.name(direction.server));
        let stats = self.pair_stats(&client, &server, rail);
        stats.samples += u64::from(m.bw_gbps.is_some() || m.lat_us.is_some());
        stats.failures += u64::from(m.error.is_some());
        stats.validation_errors += m.validation_errors;
        stats.verified_bytes += m.verified_bytes;
        if let Some(bw) = m.bw_gbps {
            stats.bw_min_gbps = Some(stats.bw_min_gbps.map_or(bw, |b| b.min(bw)));
            stats.bw_max_gbps = Some(stats.bw_max_gbps.map_or(bw, |b| b.max(bw)));
        }
        if let Some(lat) = m.lat_us {
            stats.lat_min_us = Some(stats.lat_min_us.map_or(lat, |l| l.min(lat)));
            stats.lat_max_us = Some(stats.lat_max_us.map_or(lat, |l| l.max(lat)));
        }
        if let Some(error) = &m.error {
            stats.last_error = Some(error.clone());
        }
        let subject = format!("{client}->{server} {rail}");
        if m.validation_errors > 0 {
            let finding = Finding::new(
                "burnin.data.validation",
                Verdict::Fail,
                subject.clone(),
                match &m.corruption {
                    Some(corruption) => format!("data arrived different from what was sent: {corruption}"),
                    None => format!(
                        "{} validation errors (wrong bytes, or lost, repeated or reordered messages)",
                        m.validation_errors
                    ),
                },
            );
            self.add_finding(finding);
        }
        if let Some(error) = &m.error {
            let finding =
                Finding::new("burnin.pair.failed", Verdict::Fail, subject, format!("measurement failed: {error}"));
            self.add_finding(finding);
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

    pub(super) fn pair_stats(&mut self, client: &str, server: &str, rail: &str) -> &mut PairStats {
        // The hot path of recording a measurement: nothing here may cost per host (the dense
        // matrices are built at save time, where they are drawn).
        let index = match self.report.pairs.iter().position(|m| m.rail == rail) {
            Some(index) => index,
            None => {
                self.report.pairs.push(PairMatrix::new(rail, Vec::new()));
                self.report.pairs.len() - 1
            }
        };
        let matrix = &mut self.report.pairs[index];
        // A thousand hosts make a million pairs per rail: find the pair's slot by its names in the
        // matrix's index (built from the matrix on first use, e.g. after a resume) rather than by
        // a search per measurement.
        let slots = self.pair_slots.entry(rail.to_string()).or_insert_with(|| {
            matrix.pairs.iter().enumerate().map(|(slot, p)| ((p.client.clone(), p.server.clone()), slot)).collect()
        });
        let key = (client.to_string(), server.to_string());
        let slot = match slots.get(&key) {
            Some(&slot) => slot,
            None => {
                slots.insert(key, matrix.pairs.len());
                matrix.pairs.push(PairStats::new(client, server, rail));
                matrix.pairs.len() - 1
            }
        };
        &mut matrix.pairs[slot]
    }

    /// Means and matrices from the accumulators.
    pub(super) fn rebuild_matrices(&mut self) {
        let names: Vec<String> = self.report.hosts.iter().map(|h| h.name.clone()).collect();
        let numbers = host_index(&self.report);
        let index = |name: &str| numbers.get(name).copied();
        for matrix in &mut self.report.pairs {
            for pair in &mut matrix.pairs {
                let (Some(c), Some(s)) = (index(&pair.client), index(&pair.server)) else { continue };
                if let Some(acc) = self.accumulators.get(&(c, s, matrix.rail.clone())) {
                    pair.bw_mean_gbps = (acc.bw_n > 0).then(|| acc.bw_sum / acc.bw_n as f64);
                    pair.lat_mean_us = (acc.lat_n > 0).then(|| acc.lat_sum / acc.lat_n as f64);
                }
            }
            if pair_summary::summarised(names.len()) {
                continue;
            }
            let mut bw = vec![vec![None; names.len()]; names.len()];
            let mut lat = vec![vec![None; names.len()]; names.len()];
            for pair in &matrix.pairs {
                if let (Some(c), Some(s)) = (index(&pair.client), index(&pair.server)) {
                    bw[c][s] = pair.bw_mean_gbps;
                    lat[c][s] = pair.lat_mean_us;
                }
            }
            matrix.hosts = names.clone();
            matrix.bw_gbps = bw;
            matrix.lat_us = lat;
        }
    }

    /// A round's pairs (indices into `hosts`) as host numbers, leaving out pairs with a host no longer
    /// connected; each host's last step is labelled "`label` A<->B `what`".
    pub(super) fn round_pairs(
        &mut self,
        round: &[(usize, usize)],
        hosts: &[usize],
        label: &str,
        what: &str,
    ) -> Vec<(usize, usize)> {
        let pairs: Vec<(usize, usize)> = round
            .iter()
            .map(|&(a, b)| (hosts[a], hosts[b]))
            .filter(|&(a, b)| self.agents[a].is_some() && self.agents[b].is_some())
            .collect();
        for &(a, b) in &pairs {
            let step = format!("{label} {}<->{} {what}", self.name(a), self.name(b));
            self.touch(&[a, b], &step);
        }
        pairs
    }

    /// Measure `pairs` (disjoint) on `rails`, `concurrency` at a time; returns each pair's directions.
    pub(super) fn measure_round(
        &mut self,
        pairs: &[(usize, usize)],
        rails: PairRails<'_>,
        spec: &MeasureSpec,
    ) -> Vec<((usize, usize), Vec<Direction>)> {
        let timeout = self.step_timeout();
        self.measure_round_by(pairs, |agents| {
            let outcome = measure_pair(agents, rails, spec, timeout);
            (outcome.directions, outcome.lost)
        })
    }

    /// Run `run` on each of `pairs` (disjoint), `concurrency` pairs at a time, each pair's two agents
    /// lent to one call (on a thread of its own for real agents, see workers.rs); hosts `run`
    /// reports lost are marked lost. Returns each pair's result.
    pub(super) fn measure_round_by<T: Send + Default>(
        &mut self,
        pairs: &[(usize, usize)],
        run: impl Fn(&mut [(usize, &mut AgentConnection)]) -> (T, LostHosts) + Sync,
    ) -> Vec<((usize, usize), T)> {
        let chunk = self.options.concurrency.unwrap_or(usize::MAX).max(1);
        let mut results = Vec::new();
        for group in pairs.chunks(chunk) {
            let mut taken: Vec<((usize, usize), AgentConnection, AgentConnection)> = Vec::new();
            for &(a, b) in group {
                match (self.agents[a].take(), self.agents[b].take()) {
                    (Some(x), Some(y)) => taken.push(((a, b), x, y)),
                    (x, y) => {
                        self.agents[a] = x;
                        self.agents[b] = y;
                    }
                }
            }
            let workers = workers_for(taken.len(), self.options.simulation.is_some());
            let outcomes = on_workers(&mut taken, workers, |((a, b), x, y)| {
                let mut agents = [(*a, x), (*b, y)];
                run(&mut agents)
            });
            let outcomes: Vec<((usize, usize), (T, LostHosts))> = taken
                .iter()
                .zip(outcomes)
                .map(|((pair, _, _), outcome)| {
                    let outcome =
                        outcome.unwrap_or_else(|| (T::default(), vec![(pair.0, "measurement thread panicked".into())]));
                    (*pair, outcome)
                })
                .collect();
            for ((a, b), x, y) in taken {
                self.agents[a] = Some(x);
                self.agents[b] = Some(y);
            }
            for (pair, (result, lost)) in outcomes {
                self.lose(lost);
                results.push((pair, result));
            }
        }
        results
    }

    /// (3): every pair once, in circle-method rounds, on every rail (and with `--cross-rail` on every
    /// two different rails). Only same-rail pairs feed isolation: a cross-rail link crosses the spine
    /// and is judged against its own expectation. False when the run must stop.
    pub(super) fn pairwise_phase(&mut self, iteration: u32) -> Result<bool, BurninError> {
        let key = format!("pairwise#{iteration}");
        let hosts = match self.checkpoint.phase_hosts.get(&key) {
            Some(hosts) => hosts.clone(),
            None => {
                let hosts = self.active();
                self.checkpoint.phase_hosts.insert(key.clone(), hosts.clone());
                self.checkpoint.pass_samples.clear();
                hosts
            }
        };
        let pairings = self.pair_rails();
        let rounds = self.pass_rounds(&hosts, iteration);
        self.begin_phase("pairwise", iteration, (rounds.len() * pairings.len()) as u64);
        if hosts.len() < 2 {
            self.add_finding(Finding::new(
                "burnin.pairwise.skipped",
                Verdict::Error,
                "cluster",
                format!("fewer than two hosts left ({}): no pair to measure", hosts.len()),
            ));
            self.end_phase("pairwise", iteration, PhaseStatus::Skipped)?;
            return Ok(true);
        }
        let spec = self.measure_spec();
        for (first, second) in &pairings {
            let rails = PairRails { first, second };
            let rail = rails.name();
            for (number, round) in rounds.iter().enumerate() {
                let step = format!("{key}/{rail}/r{number}");
                if self.step_done(&step) {
                    continue;
                }
                if let Some(reason) = self.must_stop() {
                    let _ = reason;
                    self.end_phase("pairwise", iteration, PhaseStatus::Interrupted)?;
                    return Ok(false);
                }
                let started = Instant::now();
                let pairs = self.round_pairs(round, &hosts, &format!("{key} round {number}"), &rail);
                let results = self.measure_round(&pairs, rails, &spec);
                let mut measurements = Vec::new();
                for ((a, b), directions) in results {
                    // A pair whose host was lost is no measurement of the link.
                    if self.report.hosts[a].status != HostStatus::Ok || self.report.hosts[b].status != HostStatus::Ok {
                        continue;
                    }
                    for direction in &directions {
                        measurements.push(self.record(direction));
                    }
                    self.pairs_done += 1;
                    if rails.is_cross() {
                        continue;
                    }
                    let sample = fold(&directions);
                    self.checkpoint.pass_samples.push(PassSample {
                        a,
                        b,
                        rail: rail.clone(),
                        bw_gbps: sample.bw_gbps,
                        lat_us: sample.lat_us,
                        failed: sample.failed,
                    });
                }
                self.finish_step(step, "pairwise", started, StepDetail { measurements, ..StepDetail::default() })?;
            }
        }
        self.end_phase("pairwise", iteration, PhaseStatus::Done)?;
        Ok(true)
    }
}
