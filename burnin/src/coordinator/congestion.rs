//! The congestion pulse (the protocol's PFC pulse test): every other host sends into one at full
//! rate for a few seconds, rotating the target, while the target's counters are read at sub-second
//! intervals. A lossless fabric must signal the congestion (ECN marks and CNPs, PFC pauses) and lose
//! nothing; the order in which the two mechanisms acted says whether ECN's thresholds sit below
//! PFC's.

use std::sync::atomic::AtomicUsize;

use fabricdoctor_report::burnin::{CongestionPulse, PulseSample};

use super::pairwise::{LostHosts, Served};
use super::*;
use crate::playbook::FirstSignal;

/// Which signal moved first in `samples` (cumulative): "ecn", "pfc", "both" when they first moved in
/// the same sample, `None` when neither did.
pub fn first_signal(samples: &[PulseSample]) -> Option<&'static str> {
    let ecn = samples.iter().position(|s| s.ecn_cnp > 0);
    let pfc = samples.iter().position(|s| s.pfc_pause > 0);
    match (ecn, pfc) {
        (None, None) => None,
        (Some(_), None) => Some("ecn"),
        (None, Some(_)) => Some("pfc"),
        (Some(e), Some(p)) if e < p => Some("ecn"),
        (Some(e), Some(p)) if p < e => Some("pfc"),
        _ => Some("both"),
    }
}

/// The findings of one pulse: loss (drops, discards, retransmits) fails, the other mechanism acting
/// first warns, and a target without PFC/ECN counters is said to be unobservable. TCP
/// retransmissions are counted per network namespace, so they are judged only where each host has
/// its own (`tcp_judged`; agents of `--local` share this machine's with everything else on it).
/// Senders a pulse names above 128 hosts.
const LISTED_SENDERS: usize = 8;

/// "node1, node2" or, when the pulse lists only its first senders, "1023 hosts (node1, node2, ...)".
fn senders_phrase(pulse: &CongestionPulse) -> String {
    if pulse.senders_count > pulse.senders.len() {
        format!("{} hosts ({}, ...)", pulse.senders_count, pulse.senders.join(", "))
    } else {
        pulse.senders.join(", ")
    }
}

pub fn judge_pulse(pulse: &CongestionPulse, expect_first: FirstSignal, tcp_judged: bool) -> Vec<Finding> {
    let subject = format!("{} {}", pulse.target, pulse.rail);
    let target = pulse.samples.last().copied().unwrap_or_default();
    let senders = pulse.senders_growth;
    let mut last = PulseSample {
        offset_s: target.offset_s,
        pfc_pause: target.pfc_pause + senders.pfc_pause,
        ecn_cnp: target.ecn_cnp + senders.ecn_cnp,
        port_errors: target.port_errors + senders.port_errors,
        retransmits: target.retransmits + senders.retransmits,
        tcp_retransmits: target.tcp_retransmits + senders.tcp_retransmits,
        tcp_segments_sent: target.tcp_segments_sent + senders.tcp_segments_sent,
    };
    let tcp_lossy = last.tcp_retransmits as f64 > TCP_LOSS_FRACTION * last.tcp_segments_sent as f64;
    if !tcp_judged || !tcp_lossy {
        last.tcp_retransmits = 0;
    }
    let mut findings = Vec::new();
    let lost = last.port_errors + last.retransmits + last.tcp_retransmits;
    if lost > 0 {
        // A fabric with PFC is meant to be lossless: loss there is a fault. Without PFC counters the
        // fabric is lossy or unmonitored (TCP, RoCE without PFC), where incast beyond the buffers
        // loses packets by design: reported, not failed.
        let (verdict, consequence) = if pulse.pfc_observable {
            (Verdict::Fail, "congestion must be signalled (ECN, PFC), not dropped: check PFC on the RDMA priority and the switch buffers")
        } else {
            (Verdict::Warn, "without PFC the fabric is lossy under incast: enable PFC on the RDMA priority (or expect the retransmissions)")
        };
        findings.push(
            Finding::new(
                "burnin.congestion.loss",
                verdict,
                &subject,
                format!(
                    "incast from {} lost data: {} drops/discards, {} RDMA retransmits, {} TCP retransmissions \
                     (of {} segments sent); {consequence}",
                    senders_phrase(pulse),
                    last.port_errors,
                    last.retransmits,
                    last.tcp_retransmits,
                    last.tcp_segments_sent
                ),
            )
            .expected("no drops and no retransmits")
            .observed(lost.to_string()),
        );
    }
    if !pulse.pfc_observable && !pulse.ecn_observable {
        findings.push(Finding::new(
            "burnin.congestion.unobservable",
            Verdict::Skip,
            &subject,
            "PFC and ECN were not observable: the target has no pause or ECN/CNP counters (a TCP or \
             virtual link), so only drops and retransmits were judged",
        ));
        return findings;
    }
    let expected = match expect_first {
        FirstSignal::Ecn => "ecn",
        FirstSignal::Pfc => "pfc",
    };
    if let Some(first) = first_signal(&pulse.samples) {
        if first != expected && first != "both" {
            let why = match expect_first {
                FirstSignal::Ecn => {
                    "pause frames came before ECN marks: ECN's marking threshold (Kmin) sits above the PFC \
                     Xoff threshold, so PFC pauses the fabric before DCQCN slows the senders (NVIDIA DCQCN \
                     guidance: ECN first)"
                }
                FirstSignal::Pfc => "ECN marks came before pause frames, against the playbook's expect_first = \"pfc\"",
            };
            findings.push(
                Finding::new("burnin.congestion.order", Verdict::Warn, &subject, why)
                    .expected(format!("{expected} first"))
                    .observed(format!("{first} first")),
            );
        }
    }
    findings
}

/// TCP counts a tail-loss probe or a spurious timeout as a retransmission too, so a few happen at
/// the end of every burst without any loss: only more than this share of the segments sent is loss.
pub const TCP_LOSS_FRACTION: f64 = 0.01;

fn add_growth(
    sample: &mut PulseSample,
    grown: &fabricdoctor_report::burnin::CounterCategories,
    tcp: (Option<u64>, Option<u64>),
) {
    sample.pfc_pause += grown.pfc_pause;
    sample.ecn_cnp += grown.ecn_cnp;
    sample.port_errors += grown.port_errors;
    sample.retransmits += grown.retransmits;
    sample.tcp_retransmits += tcp.0.unwrap_or(0);
    sample.tcp_segments_sent += tcp.1.unwrap_or(0);
}

impl Coordinator {
    /// Each target in turn receives from every other host at once.
    pub(super) fn congestion_phase(&mut self) -> Result<bool, BurninError> {
        let key = "congestion#0".to_string();
        let hosts = match self.checkpoint.phase_hosts.get(&key) {
            Some(hosts) => hosts.clone(),
            None => {
                let hosts = self.active();
                self.checkpoint.phase_hosts.insert(key.clone(), hosts.clone());
                hosts
            }
        };
        let section = self.options.playbook.congestion.clone();
        let count = if section.targets == 0 { hosts.len() } else { section.targets.min(hosts.len()) };
        self.begin_phase("congestion", 0, count as u64);
        let Some(rail) = self.rails().into_iter().next() else {
            self.end_phase("congestion", 0, PhaseStatus::Skipped)?;
            return Ok(true);
        };
        if hosts.len() < 2 {
            self.end_phase("congestion", 0, PhaseStatus::Skipped)?;
            return Ok(true);
        }
        for &target in hosts.iter().take(count) {
            let step = format!("{key}/{}", self.name(target));
            if self.step_done(&step) || self.agents[target].is_none() {
                continue;
            }
            if self.must_stop().is_some() {
                self.end_phase("congestion", 0, PhaseStatus::Interrupted)?;
                return Ok(false);
            }
            let started = Instant::now();
            let senders: Vec<usize> =
                hosts.iter().copied().filter(|&h| h != target && self.agents[h].is_some()).collect();
            let label = format!("{key} incast into {}", self.name(target));
            self.touch(&[target], &label);
            let pulse = self.pulse(target, &senders, &rail, &section);
            self.report.congestion.retain(|p| p.target != pulse.target);
            self.report.congestion.push(pulse);
            self.finish_step(step, "congestion", started, StepDetail::default())?;
        }
        self.end_phase("congestion", 0, PhaseStatus::Done)?;
        Ok(true)
    }

    /// One pulse into `target`, in four phases: a baseline sample on every host, the target serving
    /// one session per sender, the senders pushing while the target is sampled, and the senders'
    /// own growth over the pulse.
    fn pulse(
        &mut self,
        target: usize,
        senders: &[usize],
        rail: &str,
        section: &crate::playbook::CongestionSection,
    ) -> CongestionPulse {
        let spec = MeasureSpec {
            bandwidth_ms: (section.seconds * 1000.0) as u64,
            latency_iterations: 10,
            ..self.measure_spec()
        };
        let listed = if pair_summary::summarised(self.report.hosts.len()) { LISTED_SENDERS } else { senders.len() };
        let mut pulse = CongestionPulse {
            target: self.name(target),
            // Above 128 hosts a pulse names its first senders only (every other host is a
            // thousand names per pulse, and a pulse per host): `senders_count` says how many.
            senders: senders.iter().take(listed).map(|&s| self.name(s)).collect(),
            senders_count: senders.len(),
            rail: rail.to_string(),
            aggregate_gbps: None,
            samples: Vec::new(),
            senders_growth: PulseSample::default(),
            pfc_observable: false,
            ecn_observable: false,
            first_signal: None,
            errors: Vec::new(),
        };
        let Some(mut receiver) = self.agents[target].take() else { return pulse };
        let Some(address) = receiver.rails.iter().find(|r| r.name == rail).map(|r| r.address) else {
            pulse.errors.push(format!("no rail {rail} on {}", pulse.target));
            self.agents[target] = Some(receiver);
            return pulse;
        };
        let mut lost = Vec::new();
        self.baseline_samples(target, &mut receiver, senders, &mut lost);
        let ports = match self.serve_senders(&mut receiver, senders, rail, &spec, &mut pulse.errors) {
            Ok(ports) => ports,
            Err(Lost(reason)) => {
                self.agents[target] = Some(receiver);
                lost.push((target, reason));
                self.lose(lost);
                return pulse;
            }
        };
        let destination = PulseDestination { address, rail, spec, sample_ms: section.sample_ms };
        let pushed = self.push_and_sample(&mut receiver, ports, &destination, &mut pulse);
        self.agents[target] = Some(receiver);
        for (at, answer) in pushed.target_answers {
            self.record_counters(target, answer, at, &mut lost);
        }
        self.senders_growth(senders, &mut pulse, &mut lost);
        let mut aggregate = 0.0;
        for (sender, answer) in pushed.outcomes {
            match answer {
                Ok(Response::Measured(measured)) => {
                    aggregate += measured.bw_gbps.unwrap_or(0.0);
                    if let Some(error) = measured.error {
                        pulse.errors.push(format!("{}: {error}", self.name(sender)));
                    }
                }
                Ok(Response::Error { reason }) => pulse.errors.push(format!("{}: {reason}", self.name(sender))),
                Ok(other) => lost.push((sender, format!("unexpected answer {other:?}"))),
                Err(Lost(reason)) => lost.push((sender, reason)),
            }
        }
        self.lose(lost);
        pulse.aggregate_gbps = (aggregate > 0.0).then_some(aggregate);
        pulse.first_signal = first_signal(&pulse.samples).map(str::to_string);
        pulse
    }

    /// Baseline counter samples of the target and every sender (into the timeline like any other),
    /// so each connection's next sample holds the pulse's growth alone.
    fn baseline_samples(
        &mut self,
        target: usize,
        receiver: &mut AgentConnection,
        senders: &[usize],
        lost: &mut LostHosts,
    ) {
        let timeout = self.step_timeout();
        let now = self.elapsed_s();
        let answer = call(receiver, &Request::SampleCounters {}, timeout);
        self.record_counters(target, answer, now, lost);
        for &sender in senders {
            if let Some(agent) = self.agents[sender].as_mut() {
                let answer = call(agent, &Request::SampleCounters {}, timeout);
                self.record_counters(sender, answer, now, lost);
            }
        }
    }

    /// The target serves one session per sender on `rail`: each sender with its port and ticket. A sender the
    /// target refused is an error of the pulse; a target that is gone ends it.
    fn serve_senders(
        &self,
        receiver: &mut AgentConnection,
        senders: &[usize],
        rail: &str,
        spec: &MeasureSpec,
        errors: &mut Vec<String>,
    ) -> Result<Vec<(usize, u16, String)>, Lost> {
        let timeout = self.step_timeout();
        let mut ports = Vec::new();
        for &sender in senders {
            match super::pairwise::serve_on(receiver, rail, spec, timeout)? {
                Served::Serving { port, ticket } => ports.push((sender, port, ticket)),
                Served::Refused(reason) => errors.push(format!("{}: serve: {reason}", self.name(sender))),
            }
        }
        Ok(ports)
    }

    /// Every sender measures into the target at once (its agent lent to its call, see workers.rs)
    /// while the target's counters are read every `sample_ms` on its own connection; the
    /// cumulative samples go into `pulse`. Returns each sender's answer and the target's raw answers, timed.
    fn push_and_sample(
        &mut self,
        receiver: &mut AgentConnection,
        ports: Vec<(usize, u16, String)>,
        destination: &PulseDestination<'_>,
        pulse: &mut CongestionPulse,
    ) -> Pushed {
        let timeout = self.step_timeout();
        let measure_s = destination.spec.bandwidth_ms / 1000 + 1;
        let answer_within = Duration::from_secs(2 * measure_s) + timeout;
        let mut taken: Vec<(usize, u16, String, AgentConnection)> = ports
            .into_iter()
            .filter_map(|(sender, port, ticket)| self.agents[sender].take().map(|agent| (sender, port, ticket, agent)))
            .collect();
        let finished = AtomicUsize::new(0);
        let deadline = Instant::now() + answer_within;
        let mut totals = PulseSample::default();
        let pulse_start = Instant::now();
        let run_start = self.elapsed_s();
        let simulated = self.options.simulation.is_some();
        let mut target_answers: Vec<(f64, Result<Response, Lost>)> = Vec::new();
        let outcomes: Vec<(usize, Result<Response, Lost>)> = std::thread::scope(|scope| {
            let senders = taken.len();
            let finished = &finished;
            let taken = &mut taken;
            // The senders' calls run beside this thread, which samples the target meanwhile.
            let pushing = scope.spawn(move || {
                let workers = workers_for(taken.len(), simulated);
                let answers = on_workers(taken, workers, |(_, port, ticket, agent)| {
                    let request = Request::Measure {
                        server: destination.address,
                        port: *port,
                        spec: destination.spec,
                        timeout_s: timeout.as_secs().max(1),
                        rail: Some(destination.rail.to_string()),
                        ticket: ticket.clone(),
                    };
                    let answer = call(agent, &request, answer_within);
                    finished.fetch_add(1, Ordering::SeqCst);
                    answer
                });
                taken
                    .iter()
                    .zip(answers)
                    .filter_map(|((sender, ..), answer)| answer.map(|answer| (*sender, answer)))
                    .collect::<Vec<_>>()
            });
            // A simulated pulse takes no wall time: its senders answer at once, so only yield to them.
            let pause =
                if simulated { Duration::from_micros(100) } else { Duration::from_millis(destination.sample_ms) };
            while finished.load(Ordering::SeqCst) < senders && Instant::now() < deadline {
                std::thread::sleep(pause);
                let answer = call(receiver, &Request::SampleCounters {}, timeout);
                let offset = pulse_start.elapsed().as_secs_f64();
                if let Ok(Response::Counters {
                    totals: grown, observable, tcp_retransmits, tcp_segments_sent, ..
                }) = &answer
                {
                    add_growth(&mut totals, grown, (*tcp_retransmits, *tcp_segments_sent));
                    totals.offset_s = offset;
                    pulse.pfc_observable |= observable.pfc;
                    pulse.ecn_observable |= observable.ecn;
                    pulse.samples.push(totals);
                }
                let failed = answer.is_err();
                target_answers.push((run_start + offset, answer));
                if failed {
                    break;
                }
            }
            pushing.join().unwrap_or_default()
        });
        for (sender, _, _, agent) in taken {
            self.agents[sender] = Some(agent);
        }
        Pushed { outcomes, target_answers }
    }

    /// The senders' growth over the pulse: their retransmissions, and the pauses and CNPs the fabric
    /// sent back to them.
    fn senders_growth(&mut self, senders: &[usize], pulse: &mut CongestionPulse, lost: &mut LostHosts) {
        let timeout = self.step_timeout();
        let now = self.elapsed_s();
        for &sender in senders {
            let Some(agent) = self.agents[sender].as_mut() else { continue };
            let answer = call(agent, &Request::SampleCounters {}, timeout);
            if let Ok(Response::Counters { totals: grown, observable, tcp_retransmits, tcp_segments_sent, .. }) =
                &answer
            {
                add_growth(&mut pulse.senders_growth, grown, (*tcp_retransmits, *tcp_segments_sent));
                pulse.pfc_observable |= observable.pfc;
                pulse.ecn_observable |= observable.ecn;
            }
            self.record_counters(sender, answer, now, lost);
        }
    }
}

/// Where a pulse's senders push: the target's address on the rail, and how.
struct PulseDestination<'a> {
    address: std::net::IpAddr,
    rail: &'a str,
    spec: MeasureSpec,
    sample_ms: u64,
}

/// What the push phase brought back: each sender's answer, and the target's counter answers with
/// the run time they were read at.
struct Pushed {
    outcomes: Vec<(usize, Result<Response, Lost>)>,
    target_answers: Vec<(f64, Result<Response, Lost>)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricdoctor_probes::counters::{read_sample, CounterObservation};
    use fabricdoctor_probes::SysRoot;

    /// A target's ethtool statistics at one moment, with mlx5's real counter names
    /// (mlx5 ethtool documentation: np_ecn_marked_roce_packets, np_cnp_sent, rx_prio3_pause,
    /// tx_prio3_pause, rx_discards_phy).
    fn tree(dir: &std::path::Path, ecn: u64, pause: u64, discards: u64) -> std::path::PathBuf {
        let root = dir.join(format!("{ecn}-{pause}-{discards}"));
        let statistics = root.join("ethtool/ens1f0np0/statistics");
        std::fs::create_dir_all(statistics.parent().expect("parent")).expect("mkdir");
        std::fs::create_dir_all(root.join("sys/class/net/ens1f0np0")).expect("mkdir");
        std::fs::write(root.join("sys/class/net/ens1f0np0/operstate"), "up\n").expect("write");
        std::fs::create_dir_all(root.join("proc")).expect("mkdir");
        std::fs::write(root.join("proc/uptime"), "100.0 10.0\n").expect("write");
        let text = format!(
            "NIC statistics:\n     np_ecn_marked_roce_packets: {ecn}\n     np_cnp_sent: {ecn}\n     rx_prio3_pause: {pause}\n     tx_prio3_pause: {pause}\n     rx_discards_phy: {discards}\n"
        );
        std::fs::write(&statistics, text).expect("write");
        root
    }

    /// Cumulative pulse samples from a sequence of counter trees, as the agent's sampler computes
    /// them (categories of the probes' deltas).
    fn sampled(trees: &[std::path::PathBuf]) -> (Vec<PulseSample>, crate::counters::Observable) {
        let mut previous = read_sample(&SysRoot::captured(&trees[0]));
        let mut totals = PulseSample::default();
        let mut out = Vec::new();
        let mut seen = crate::counters::Observable::default();
        for (index, tree) in trees.iter().enumerate().skip(1) {
            let next = read_sample(&SysRoot::captured(tree));
            let observation = CounterObservation::new(Some(previous), next, Some(0.25));
            let (grown, _) = crate::counters::growth(&observation, None, &BTreeMap::new());
            let observable = crate::counters::observable(&observation);
            seen.pfc |= observable.pfc;
            seen.ecn |= observable.ecn;
            totals.pfc_pause += grown.pfc_pause;
            totals.ecn_cnp += grown.ecn_cnp;
            totals.port_errors += grown.port_errors;
            totals.offset_s = index as f64 * 0.25;
            out.push(totals);
            previous = observation.after;
        }
        (out, seen)
    }

    fn pulse(samples: Vec<PulseSample>, seen: crate::counters::Observable) -> CongestionPulse {
        CongestionPulse {
            target: "node2".into(),
            senders: vec!["node1".into(), "node3".into()],
            senders_count: 2,
            rail: "rail0".into(),
            aggregate_gbps: Some(390.0),
            first_signal: first_signal(&samples).map(str::to_string),
            samples,
            senders_growth: PulseSample::default(),
            pfc_observable: seen.pfc,
            ecn_observable: seen.ecn,
            errors: Vec::new(),
        }
    }

    #[test]
    fn the_first_mechanism_is_read_from_sub_second_counter_samples() {
        let dir = tempfile::tempdir().expect("tempdir");
        // ECN marks at the first sample, pauses only at the second: DCQCN acted first.
        let ecn_first = [tree(dir.path(), 0, 0, 0), tree(dir.path(), 40, 0, 0), tree(dir.path(), 90, 12, 0)];
        let (samples, seen) = sampled(&ecn_first);
        assert!(seen.pfc && seen.ecn, "{seen:?}");
        let good = pulse(samples, seen);
        assert_eq!(good.first_signal.as_deref(), Some("ecn"));
        assert!(
            judge_pulse(&good, FirstSignal::Ecn, true).is_empty(),
            "{:?}",
            judge_pulse(&good, FirstSignal::Ecn, true)
        );
        let order = judge_pulse(&good, FirstSignal::Pfc, true);
        assert_eq!(order.len(), 1);
        assert_eq!(order[0].id, "burnin.congestion.order");

        // Pauses first, then marks, then discards: PFC acted first and data was still lost.
        let bad = [tree(dir.path(), 0, 0, 0), tree(dir.path(), 0, 30, 0), tree(dir.path(), 20, 60, 7)];
        let (samples, seen) = sampled(&bad);
        let bad = pulse(samples, seen);
        assert_eq!(bad.first_signal.as_deref(), Some("pfc"));
        let findings = judge_pulse(&bad, FirstSignal::Ecn, true);
        let ids: Vec<&str> = findings.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["burnin.congestion.loss", "burnin.congestion.order"], "{findings:?}");
        assert!(findings[0].message.contains("7 drops/discards"), "{}", findings[0].message);
    }

    #[test]
    fn a_target_without_congestion_counters_is_unobservable_not_passed() {
        // A few retransmissions of many segments: tail-loss probes, not loss.
        let samples = vec![PulseSample {
            offset_s: 0.25,
            tcp_retransmits: 110,
            tcp_segments_sent: 400_000,
            ..PulseSample::default()
        }];
        let quiet = pulse(samples, crate::counters::Observable::default());
        let findings = judge_pulse(&quiet, FirstSignal::Ecn, true);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].id, "burnin.congestion.unobservable");
        let lossy = pulse(
            vec![PulseSample { offset_s: 0.5, tcp_retransmits: 42, tcp_segments_sent: 200, ..PulseSample::default() }],
            crate::counters::Observable::default(),
        );
        let findings = judge_pulse(&lossy, FirstSignal::Ecn, true);
        assert_eq!(findings[0].id, "burnin.congestion.loss");
        assert_eq!(findings[0].verdict, Verdict::Warn, "no PFC: a lossy fabric, reported");
        let shared = judge_pulse(&lossy, FirstSignal::Ecn, false);
        assert!(!shared.iter().any(|f| f.id == "burnin.congestion.loss"), "{shared:?}");
        assert!(findings[0].message.contains("42 TCP retransmissions"), "{}", findings[0].message);
    }
}
