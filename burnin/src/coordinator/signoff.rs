//! Sign-off (the run's verdict and final reports) and the comparison with a baseline run.

use super::*;
use fabricdoctor_report::pair_summary::named_list;

/// Names a sign-off reason lists before it counts the rest.
const LISTED: usize = 10;

/// The sign-off's reasons as they are judged, and whether any of them fails the run.
#[derive(Default)]
struct Reasons {
    lines: Vec<String>,
    failed: bool,
}

impl Reasons {
    fn note(&mut self, line: impl Into<String>) {
        self.lines.push(line.into());
    }

    fn fail(&mut self, line: impl Into<String>) {
        self.failed = true;
        self.lines.push(line.into());
    }
}

impl Coordinator {
    /// (7): the verdict, then every output.
    pub(super) fn signoff(&mut self, finished: bool) -> Result<(), BurninError> {
        self.current_phase = "signoff".into();
        self.compare_with_baseline();
        let mut reasons = Reasons::default();
        self.judge_data_errors(&mut reasons);
        self.judge_counter_growth(&mut reasons);
        self.judge_pairs(&mut reasons);
        self.judge_expectations(&mut reasons);
        self.judge_concurrent_rails(&mut reasons);
        self.judge_congestion(&mut reasons);
        reasons.note(self.host_check_reason());
        self.judge_lossless(&mut reasons);
        self.judge_hosts_and_findings(&mut reasons);
        let verdict = self.verdict(finished, &mut reasons);
        self.report.signoff = SignOff { verdict, reasons: reasons.lines };
        self.report.run.complete = verdict != SignOffVerdict::Incomplete;
        self.report.run.finished_at = Some(now_rfc3339());
        self.close_signoff_phase(verdict);
        self.write_outputs()
    }

    /// With `--baseline`: every metric that regressed against the earlier run is a failing finding.
    fn compare_with_baseline(&mut self) {
        let Some((path, baseline)) = self.options.baseline.clone() else { return };
        self.rebuild_matrices();
        let comparison = compare(&self.report, &baseline, &path, self.options.playbook.isolation.bandwidth_fraction);
        for regression in &comparison.regressions {
            let finding = Finding::new(
                "burnin.baseline.regression",
                Verdict::Fail,
                format!("{} {}", regression.subject, regression.metric),
                format!(
                    "{:.2} now, {:.2} in the baseline ({:+.1} %)",
                    regression.current, regression.baseline, regression.change_percent
                ),
            );
            self.add_finding(finding);
        }
        self.report.baseline = Some(comparison);
    }

    /// Any wrong byte in a pair test or wrong element in a collective fails the run.
    fn judge_data_errors(&self, reasons: &mut Reasons) {
        let pairs = || self.report.pairs.iter().flat_map(|m| m.pairs.iter());
        let validation: u64 = pairs().map(|p| p.validation_errors).sum();
        let wrong: u64 = self.report.collectives.iter().map(|c| c.wrong_elements).sum();
        let verified: u64 = pairs().map(|p| p.verified_bytes).sum();
        if validation + wrong == 0 {
            reasons.note(if verified > 0 {
                format!("zero data errors in {:.2} GB verified end to end: ok", verified as f64 / 1e9)
            } else {
                "zero data errors: ok".into()
            });
        } else {
            reasons.fail(format!("data errors: {validation} in pair tests, {wrong} wrong elements in collectives"));
        }
    }

    /// Growth of the counter categories the playbook judges (`fail_on_counters`) fails the run, one
    /// finding per host.
    fn judge_counter_growth(&mut self, reasons: &mut Reasons) {
        let judged = &self.options.playbook.signoff.fail_on_counters;
        let mut grew = Vec::new();
        for (host, totals) in &self.counter_totals {
            for (category, value) in [
                ("pfc_pause", totals.pfc_pause),
                ("ecn_cnp", totals.ecn_cnp),
                ("retransmits", totals.retransmits),
                ("port_errors", totals.port_errors),
                ("pcie_aer", totals.pcie_aer),
            ] {
                if value > 0 && judged.iter().any(|c| c == category) {
                    grew.push(format!("{host} {category} +{value}"));
                }
            }
        }
        if grew.is_empty() {
            reasons.note(format!("no error-counter growth ({}): ok", judged.join(", ")));
            return;
        }
        reasons.fail(format!("error counters grew: {}", named_list(&grew, LISTED)));
        for line in &grew {
            let (host, rest) = line.split_once(' ').unwrap_or((line, ""));
            let finding =
                Finding::new("burnin.counters.growth", Verdict::Fail, host, format!("counter growth: {rest}"));
            self.add_finding(finding);
        }
    }

    /// Every pair and loopback against its rail's expectation (absolute), which sees what relative
    /// isolation cannot: a shortfall every pair shares. A rail without an expectation is said so.
    fn judge_expectations(&mut self, reasons: &mut Reasons) {
        self.rebuild_matrices();
        let fabric_fraction = self.options.playbook.expectations.fabric_fraction;
        let transport = self.options.transport;
        let mut findings = Vec::new();
        for expectation in self.report.expectations.clone() {
            if expectation.pair_gbps.is_none() && expectation.pair_latency_us.is_none() {
                reasons.note(format!("rail {}: {}", expectation.rail, expectation.source));
                findings.push(Finding::new(
                    "burnin.expectation.unknown",
                    Verdict::Skip,
                    format!("rail {}", expectation.rail),
                    expectation.source.clone(),
                ));
                continue;
            }
            let mut rail_findings = Vec::new();
            for matrix in self.report.pairs.iter_mut().filter(|m| m.rail == expectation.rail) {
                rail_findings.extend(judge_pairs(matrix, &expectation, fabric_fraction));
            }
            for result in self.report.loopback.iter().filter(|l| l.rail == expectation.rail) {
                rail_findings.extend(judge_loopback(result, &expectation, transport));
            }
            let count = |id: &str| rail_findings.iter().filter(|f| f.id == id).count();
            let figure = match (expectation.pair_gbps, expectation.pair_latency_us) {
                (Some(gbps), Some(us)) => format!("{gbps:.2} Gb/s and {us:.1} us"),
                (Some(gbps), None) => format!("{gbps:.2} Gb/s"),
                (None, Some(us)) => format!("{us:.1} us"),
                (None, None) => String::new(),
            };
            let (pairs, loopbacks) = (count("burnin.pair.below_expected"), count("burnin.loopback.below_expected"));
            if count("burnin.fabric.below_expected") > 0 {
                reasons.fail(format!(
                    "rail {}: {pairs} pairs below the expected {figure} ({}): fabric-wide",
                    expectation.rail, expectation.source
                ));
            } else if pairs + loopbacks > 0 {
                reasons.fail(format!(
                    "rail {}: {pairs} pairs and {loopbacks} loopbacks below the expected {figure} ({})",
                    expectation.rail, expectation.source
                ));
            } else {
                reasons.note(format!(
                    "rail {}: every pair at or above the expected {figure} ({}): ok",
                    expectation.rail, expectation.source
                ));
            }
            findings.extend(rail_findings);
        }
        for finding in findings {
            self.add_finding(finding);
        }
    }

    /// Every congestion pulse: loss fails, the other mechanism first warns, and a target without
    /// PFC/ECN counters is said to be unobservable.
    fn judge_congestion(&mut self, reasons: &mut Reasons) {
        if self.report.congestion.is_empty() {
            return;
        }
        let expect_first = self.options.playbook.congestion.expect_first;
        let tcp_judged = self.report.run.launcher != "local";
        let findings: Vec<Finding> = self
            .report
            .congestion
            .iter()
            .flat_map(|pulse| super::congestion::judge_pulse(pulse, expect_first, tcp_judged))
            .collect();
        let lost = |verdict: Verdict| -> Vec<&str> {
            findings
                .iter()
                .filter(|f| f.id == "burnin.congestion.loss" && f.verdict == verdict)
                .map(|f| f.subject.as_str())
                .collect()
        };
        let (failed, warned) = (lost(Verdict::Fail), lost(Verdict::Warn));
        let blind = findings.iter().filter(|f| f.id == "burnin.congestion.unobservable").count();
        let pulses = self.report.congestion.len();
        if !failed.is_empty() {
            reasons.fail(format!(
                "congestion pulses lost data on a fabric with PFC, into {}",
                named_list(&failed, LISTED)
            ));
        } else if !warned.is_empty() {
            reasons.note(format!(
                "congestion pulses lost data into {} on a fabric without PFC (lossy under incast): reported",
                named_list(&warned, LISTED)
            ));
        } else {
            reasons.note(format!("{pulses} congestion pulses absorbed without loss: ok"));
        }
        if blind > 0 {
            reasons.note(format!(
                "PFC/ECN not observable on {blind} of {pulses} pulse targets (no pause or ECN/CNP counters): only \
                 drops and retransmits were judged"
            ));
        }
        for finding in findings {
            self.add_finding(finding);
        }
    }

    /// Every rail under all-rails load against the same rail alone.
    fn judge_concurrent_rails(&mut self, reasons: &mut Reasons) {
        if self.report.concurrent_rails.is_empty() {
            return;
        }
        self.rebuild_matrices();
        let tolerance = self.options.playbook.all_rails.tolerance;
        let findings =
            super::all_rails::judge_concurrent(&mut self.report.concurrent_rails, &self.report.pairs, tolerance);
        let judged = self.report.concurrent_rails.iter().filter(|c| c.fraction.is_some()).count();
        if findings.is_empty() {
            reasons.note(format!(
                "every rail with all rails loaded within {:.0} % of itself alone ({judged} pair-rails): ok",
                tolerance * 100.0
            ));
        } else {
            let mut hosts: Vec<&str> = findings.iter().filter_map(|f| f.subject.split("->").next()).collect();
            hosts.sort_unstable();
            hosts.dedup();
            reasons.fail(format!(
                "{} of {judged} pair-rails drop more than {:.0} % with every rail loaded (senders: {})",
                findings.len(),
                tolerance * 100.0,
                named_list(&hosts, LISTED)
            ));
        }
        for finding in findings {
            self.add_finding(finding);
        }
    }

    /// Suspects from isolation fail the run; a pair out of tolerance once but not when retested is
    /// only reported.
    fn judge_pairs(&self, reasons: &mut Reasons) {
        let bad_pairs = self.report.findings.iter().filter(|f| f.id == "burnin.pair.tolerance").count();
        if self.report.suspects.is_empty() && bad_pairs == 0 {
            reasons.note("every pair within tolerance: ok");
        } else if self.report.suspects.is_empty() {
            reasons.note(format!("{bad_pairs} pair(s) out of tolerance once, not reproduced when retested"));
        } else {
            let subjects: Vec<String> = self
                .report
                .suspects
                .iter()
                .map(|s| format!("{:?} {} ({:.0} %)", s.kind, s.subject, s.confidence * 100.0))
                .collect();
            reasons.fail(format!("suspects: {}", named_list(&subjects, LISTED).to_lowercase()));
        }
    }

    /// Over verbs: was the tested class lossless on every host? A warning each where not.
    fn judge_lossless(&mut self, reasons: &mut Reasons) {
        if self.options.transport != DataTransport::Verbs {
            return;
        }
        let traffic = self.options.playbook.traffic;
        let readings = crate::lossless::pfc_readings(&self.report.host_checks);
        let (line, findings) =
            crate::lossless::judge(traffic.traffic_class.unwrap_or(0), traffic.service_level.unwrap_or(0), &readings);
        reasons.note(line);
        for finding in findings {
            self.add_finding(finding);
        }
    }

    /// Lost or excluded hosts, and any finding at error or fail (including those the steps above
    /// added), fail the run.
    fn judge_hosts_and_findings(&self, reasons: &mut Reasons) {
        for status in [HostStatus::Lost, HostStatus::Excluded] {
            let names: Vec<&str> =
                self.report.hosts.iter().filter(|h| h.status == status).map(|h| h.name.as_str()).collect();
            if !names.is_empty() {
                reasons.fail(format!("hosts {}: {}", format!("{status:?}").to_lowercase(), named_list(&names, LISTED)));
            }
        }
        let errors: BTreeSet<&str> =
            self.report.findings.iter().filter(|f| f.verdict >= Verdict::Error).map(|f| f.id.as_str()).collect();
        if !errors.is_empty() {
            reasons.fail(format!("findings at error or fail: {}", errors.into_iter().collect::<Vec<_>>().join(", ")));
        }
    }

    /// Incomplete (stopped, or nothing measured where pairs were asked for) outranks fail and pass.
    fn verdict(&self, finished: bool, reasons: &mut Reasons) -> SignOffVerdict {
        let measured_pairs = self.report.pairs.iter().flat_map(|m| m.pairs.iter()).filter(|p| p.samples > 0).count();
        if !finished || self.report.run.stopped.is_some() {
            reasons.note(format!(
                "run incomplete: {}",
                self.report.run.stopped.clone().unwrap_or_else(|| "did not reach sign-off".into())
            ));
            SignOffVerdict::Incomplete
        } else if measured_pairs == 0 && self.options.playbook.pairwise.enabled {
            reasons.note("no pair was measured");
            SignOffVerdict::Incomplete
        } else if reasons.failed {
            SignOffVerdict::Fail
        } else {
            SignOffVerdict::Pass
        }
    }

    /// The sign-off phase in the timeline and the event log.
    fn close_signoff_phase(&mut self, verdict: SignOffVerdict) {
        self.begin_phase("signoff", 0, 1);
        let status = if verdict == SignOffVerdict::Incomplete { PhaseStatus::Interrupted } else { PhaseStatus::Done };
        let offset = self.elapsed_s();
        if let Some(phase) = self.report.phases.last_mut() {
            phase.status = status;
            phase.ended_at = Some(now_rfc3339());
            phase.end_offset_s = Some(offset);
        }
        self.event(EventKind::RunFinished {
            signoff: self.report.signoff.clone(),
            stopped: self.report.run.stopped.clone(),
        });
    }

    /// The report (JSON), then the summary and JUnit written from it (with its findings as
    /// report.json keeps them).
    fn write_outputs(&mut self) -> Result<(), BurninError> {
        self.save()?;
        let dir = self.options.report_dir.clone();
        let all = self.trim_findings_for_writing();
        let written = write_atomically(
            &dir.join("summary.md"),
            fabricdoctor_report::burnin::summary_markdown(&self.report).as_bytes(),
        )
        .and_then(|()| {
            write_atomically(&dir.join("junit.xml"), fabricdoctor_report::burnin::junit(&self.report).as_bytes())
        });
        if let Some(all) = all {
            self.report.findings = all;
        }
        written?;
        Ok(())
    }
}

impl Coordinator {
    /// The host checks' part of the sign-off: which hosts' `check` failed, on what, and whether the
    /// playbook lets that block the run (exclude_checks) or only reports it.
    fn host_check_reason(&self) -> String {
        let checks = &self.report.host_checks;
        let failing: Vec<&HostCheck> = checks.iter().filter(|c| c.worst >= Verdict::Error).collect();
        if failing.is_empty() {
            return format!("host checks: no fail or error on {} host(s): ok", checks.len());
        }
        let mut ids: BTreeSet<&str> = BTreeSet::new();
        for check in &failing {
            ids.extend(
                check
                    .report
                    .iter()
                    .flat_map(|r| r.findings.iter())
                    .filter(|f| f.verdict >= Verdict::Error)
                    .map(|f| f.id.as_str()),
            );
        }
        let excluded = failing.iter().filter(|c| c.excluded).count();
        let blocking = &self.options.playbook.policy.exclude_checks;
        let reported: Vec<&str> =
            ids.iter().copied().filter(|id| !blocking.iter().any(|prefix| id.starts_with(prefix.as_str()))).collect();
        let ids = if ids.is_empty() {
            "the check could not run".to_string()
        } else {
            ids.into_iter().collect::<Vec<_>>().join(", ")
        };
        let effect = if excluded == failing.len() {
            "those hosts were excluded from the run".to_string()
        } else {
            format!(
                "{} not among the playbook's exclude_checks ({}): reported, not blocking sign-off; fix before training",
                if reported.is_empty() {
                    "the check could not run, and that is".to_string()
                } else {
                    reported.join(", ")
                },
                blocking.join(", ")
            )
        };
        format!("host checks: fail or error on {} of {} host(s) ({ids}); {effect}", failing.len(), checks.len())
    }
}

/// Compare with an earlier run: pairs by (client, server, rail) mean bandwidth and latency, and
/// collectives by mean bus bandwidth.
pub fn compare(current: &BurninReport, baseline: &BurninReport, path: &str, tolerance: f64) -> BaselineComparison {
    let mut regressions = Vec::new();
    let mut compared = 0;
    let old = baseline.pair_index();
    for ((client, server, rail), now) in current.pair_index() {
        let Some(before) = old.get(&(client.clone(), server.clone(), rail.clone())) else { continue };
        let subject = format!("{client}->{server} {rail}");
        if let (Some(b), Some(n)) = (before.bw_mean_gbps, now.bw_mean_gbps) {
            compared += 1;
            if n < tolerance * b {
                regressions.push(regression(&subject, "bw_gbps", b, n));
            }
        }
        if let (Some(b), Some(n)) = (before.lat_mean_us, now.lat_mean_us) {
            compared += 1;
            if n > b / tolerance {
                regressions.push(regression(&subject, "lat_us", b, n));
            }
        }
    }
    for name in ["alltoall", "allreduce"] {
        let mean = |report: &BurninReport| {
            let values: Vec<f64> =
                report.collectives.iter().filter(|c| c.collective == name).filter_map(|c| c.bus_bw_gbps).collect();
            (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
        };
        if let (Some(b), Some(n)) = (mean(baseline), mean(current)) {
            compared += 1;
            if n < tolerance * b {
                regressions.push(regression(name, "bus_bw_gbps", b, n));
            }
        }
    }
    BaselineComparison {
        path: path.into(),
        baseline_run_id: baseline.run.run_id.clone(),
        baseline_generated_at: baseline.generated_at.clone(),
        tolerance,
        regressions,
        compared,
    }
}

pub(super) fn regression(subject: &str, metric: &str, baseline: f64, current: f64) -> Regression {
    Regression {
        subject: subject.into(),
        metric: metric.into(),
        baseline,
        current,
        change_percent: ((current - baseline) / baseline * 1000.0).round() / 10.0,
    }
}
