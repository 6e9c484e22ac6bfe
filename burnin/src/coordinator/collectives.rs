//! The collective phases: AlltoAll and ring AllReduce over every active host.

use super::*;

impl Coordinator {
    /// (4)/(5): one collective over every active host.
    pub(super) fn collective_phase(&mut self, kind: CollectiveKind, iteration: u32) -> Result<(), BurninError> {
        let name = kind.name();
        let hosts = self.active();
        self.begin_phase(name, iteration, 1);
        if hosts.len() < 2 {
            return self.end_phase(name, iteration, PhaseStatus::Skipped);
        }
        let started = Instant::now();
        let section = match kind {
            CollectiveKind::Alltoall => self.options.playbook.alltoall.clone(),
            CollectiveKind::Allreduce => self.options.playbook.allreduce.clone(),
        };
        let rail = self.rails().first().cloned().unwrap_or_else(|| "default".into());
        let timeout = self.step_timeout();
        let key = format!("{name}#{iteration}");
        self.touch(&hosts, &key);
        let master = hosts[0];
        let master_ip: Option<IpAddr> =
            self.agents[master].as_ref().and_then(|a| a.rails.iter().find(|r| r.name == rail).map(|r| r.address));
        let port = match self
            .on_each(&[master], |_, agent| call(agent, &Request::ReservePort { rail: rail.clone() }, timeout))
            .pop()
        {
            Some((_, Ok(Response::Port { port }))) => Some(port),
            Some((_, Err(Lost(reason)))) => {
                self.lose(vec![(master, reason)]);
                None
            }
            _ => None,
        };
        let mut result = CollectiveResult {
            collective: name.into(),
            iteration,
            at: now_rfc3339(),
            hosts: hosts.iter().map(|&h| self.name(h)).collect(),
            bytes: section.bytes,
            time_us: None,
            alg_bw_gbps: None,
            bus_bw_gbps: None,
            wrong_elements: 0,
            slowest_host: None,
            error: None,
        };
        match (master_ip, port) {
            (Some(master_ip), Some(master_port)) => {
                let world = hosts.len();
                let ranks: BTreeMap<usize, usize> = hosts.iter().enumerate().map(|(rank, &h)| (h, rank)).collect();
                let timeout_s = timeout.as_secs().max(1);
                let transport = self.options.transport;
                let traffic = self.measure_spec().traffic;
                // One secret for every rank of this step, sent over each agent's authenticated
                // session: ranks drop joins and data connections without it.
                let ticket = match random_bytes::<32>() {
                    Ok(bytes) => hex(&bytes),
                    Err(error) => {
                        result.error = Some(error.to_string());
                        String::new()
                    }
                };
                let answers = self.on_each_together(&hosts, |host, agent| {
                    let rank = ranks.get(&host).copied().unwrap_or(0);
                    let request = Request::Collective {
                        collective: kind,
                        rank,
                        world,
                        master: master_ip,
                        master_port,
                        bytes: section.bytes,
                        iterations: section.iterations,
                        timeout_s,
                        transport,
                        traffic,
                        rail: Some(rail.clone()),
                        ticket: ticket.clone(),
                    };
                    call(agent, &request, timeout * 3)
                });
                let mut errors = Vec::new();
                let mut lost = Vec::new();
                for (host, answer) in answers {
                    match answer {
                        Ok(Response::CollectiveDone { summary: Some(summary) }) => {
                            result.time_us = Some(summary.time_us);
                            result.alg_bw_gbps = Some(summary.alg_bw_gbps);
                            result.bus_bw_gbps = Some(summary.bus_bw_gbps);
                            result.wrong_elements = summary.wrong;
                            let slowest = hosts.get(summary.slowest_rank).map(|&h| self.name(h));
                            result.slowest_host = slowest;
                        }
                        Ok(Response::CollectiveDone { summary: None }) => {}
                        Ok(Response::Error { reason }) => errors.push(format!("{}: {reason}", self.name(host))),
                        Ok(other) => lost.push((host, format!("unexpected answer {other:?}"))),
                        Err(Lost(reason)) => lost.push((host, reason)),
                    }
                }
                self.lose(lost);
                if !errors.is_empty() {
                    result.error = Some(errors.join("; "));
                }
            }
            _ => result.error = Some("no rendezvous port on rank 0".into()),
        }
        if let Some(error) = &result.error {
            let finding = Finding::new(
                &format!("burnin.{name}.failed"),
                Verdict::Error,
                format!("{name}#{iteration}"),
                format!("{name} failed: {error}"),
            );
            self.add_finding(finding);
        }
        if result.wrong_elements > 0 {
            let finding = Finding::new(
                "burnin.data.collective",
                Verdict::Fail,
                format!("{name}#{iteration}"),
                format!("{} elements held wrong values after {name}", result.wrong_elements),
            );
            self.add_finding(finding);
        }
        self.report.collectives.push(result.clone());
        self.finish_step(key, name, started, StepDetail { collective: Some(result), ..StepDetail::default() })?;
        self.end_phase(name, iteration, PhaseStatus::Done)
    }
}
