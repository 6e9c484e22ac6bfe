//! The loopback phase: bandwidth and latency from each host to itself on each rail.

use super::*;

impl Coordinator {
    pub(super) fn loopback_phase(&mut self) -> Result<(), BurninError> {
        let rails = self.rails();
        let active = self.active();
        self.begin_phase("loopback", 0, (active.len() * rails.len()) as u64);
        let spec = self.measure_spec();
        let timeout = Duration::from_millis(2 * spec.bandwidth_ms) + self.step_timeout();
        for rail in &rails {
            for &host in &active {
                let key = format!("loopback#0/{}/{rail}", self.name(host));
                if self.step_done(&key) || self.agents[host].is_none() {
                    continue;
                }
                if self.stopping() {
                    return self.end_phase("loopback", 0, PhaseStatus::Interrupted);
                }
                let started = Instant::now();
                self.touch(&[host], &key);
                let request = Request::Loopback { rail: rail.clone(), spec };
                let answer = self.on_each(&[host], |_, agent| call(agent, &request, timeout)).pop().map(|(_, a)| a);
                let result = match answer {
                    Some(Ok(Response::Measured(m))) => LoopbackResult {
                        host: self.name(host),
                        rail: rail.clone(),
                        bw_gbps: m.bw_gbps,
                        lat_us: m.lat_us,
                        error: m.error,
                    },
                    Some(Ok(Response::Error { reason })) => LoopbackResult {
                        host: self.name(host),
                        rail: rail.clone(),
                        bw_gbps: None,
                        lat_us: None,
                        error: Some(reason),
                    },
                    Some(Ok(other)) => {
                        self.lose(vec![(host, format!("unexpected answer {other:?}"))]);
                        continue;
                    }
                    Some(Err(Lost(reason))) => {
                        self.lose(vec![(host, reason)]);
                        continue;
                    }
                    None => continue,
                };
                if let Some(error) = &result.error {
                    let finding = Finding::new(
                        "burnin.loopback.failed",
                        Verdict::Error,
                        format!("{} {rail}", result.host),
                        format!("loopback test failed: {error}"),
                    );
                    self.add_finding(finding);
                }
                self.report.loopback.retain(|l| !(l.host == result.host && l.rail == result.rail));
                self.report.loopback.push(result.clone());
                self.finish_step(
                    key,
                    "loopback",
                    started,
                    StepDetail { loopback: Some(result), ..StepDetail::default() },
                )?;
            }
        }
        self.end_phase("loopback", 0, PhaseStatus::Done)
    }
}
