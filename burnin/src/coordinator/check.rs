//! The check phase: `fabricdoctor check` on every host; a host failing the playbook's hardware
//! checks is excluded.

use super::*;

impl Coordinator {
    pub(super) fn check_phase(&mut self) -> Result<(), BurninError> {
        let active = self.active();
        self.begin_phase("check", 0, active.len() as u64);
        let started = Instant::now();
        let todo: Vec<usize> =
            active.into_iter().filter(|&h| !self.step_done(&format!("check#0/{}", self.name(h)))).collect();
        let timeout = self.step_timeout() * 4;
        let request = Request::Check { profile: self.options.profile.clone().map(Box::new) };
        let answers = self.on_each(&todo, |_, agent| call(agent, &request, timeout));
        let exclude_on = self.options.playbook.policy.exclude_on;
        let mut lost = Vec::new();
        for (host, answer) in answers {
            let name = self.name(host);
            self.touch(&[host], "check#0");
            let mut host_check = HostCheck {
                host: name.clone(),
                report: None,
                topology: None,
                error: None,
                worst: Verdict::Pass,
                excluded: false,
            };
            match answer {
                Ok(Response::Checked { report, topology, error }) => {
                    host_check.worst = report.as_ref().map(|r| r.worst()).unwrap_or(Verdict::Error);
                    host_check.report = report.map(|r| *r);
                    host_check.topology = topology;
                    host_check.error = error;
                }
                Ok(Response::Error { reason }) => {
                    host_check.error = Some(reason);
                    host_check.worst = Verdict::Error;
                }
                Ok(other) => lost.push((host, format!("unexpected answer {other:?}"))),
                Err(Lost(reason)) => {
                    lost.push((host, reason));
                    continue;
                }
            }
            let hard = &self.options.playbook.policy.exclude_checks;
            let failing: Vec<String> = host_check
                .report
                .iter()
                .flat_map(|r| r.findings.iter())
                .filter(|f| {
                    exclude_on.excludes(f.verdict) && hard.iter().any(|prefix| f.id.starts_with(prefix.as_str()))
                })
                .map(|f| format!("{} {} {}: {}", f.verdict, f.id, f.subject, f.message))
                .collect();
            host_check.excluded = !failing.is_empty();
            let excluded = host_check.excluded;
            self.report.host_checks.retain(|c| c.host != name);
            self.report.host_checks.push(host_check);
            if excluded {
                let reason = format!("check found {} (policy exclude_on = {exclude_on:?})", failing.join("; "));
                self.set_status(host, HostStatus::Excluded, reason);
            }
            self.finish_step(format!("check#0/{name}"), "check", started, StepDetail::default())?;
        }
        self.lose(lost);
        self.end_phase("check", 0, PhaseStatus::Done)
    }
}
