//! The isolation phase: suspect pairs retested against cleared partners until each fault is pinned
//! on a host, NIC or link; and the suspects of the report.

use super::*;

impl Coordinator {
    /// Suspect pairs of the pass are retested with fresh partners until pinned.
    pub(super) fn isolation_phase(&mut self, iteration: u32) -> Result<(), BurninError> {
        let thresholds = Thresholds {
            bandwidth_fraction: self.options.playbook.isolation.bandwidth_fraction,
            latency_multiple: self.options.playbook.isolation.latency_multiple,
        };
        let rails: BTreeSet<String> = self.checkpoint.pass_samples.iter().map(|s| s.rail.clone()).collect();
        self.begin_phase("isolation", iteration, rails.len() as u64);
        let spec = self.measure_spec();
        let mut by_rail: BTreeMap<String, Isolation> = BTreeMap::new();
        for rail in &rails {
            let started = Instant::now();
            let results: BTreeMap<(usize, usize), PairSample> = self
                .checkpoint
                .pass_samples
                .iter()
                .filter(|s| &s.rail == rail)
                .filter(|s| {
                    self.report.hosts[s.a].status == HostStatus::Ok && self.report.hosts[s.b].status == HostStatus::Ok
                })
                .map(|s| {
                    let sample = PairSample { bw_gbps: s.bw_gbps, lat_us: s.lat_us, failed: s.failed };
                    ((s.a.min(s.b), s.a.max(s.b)), sample)
                })
                .collect();
            let references = References::of(results.values());
            for (&(a, b), sample) in &results {
                if let Some(reason) = judge(sample, &references, &thresholds) {
                    let finding = Finding::new(
                        "burnin.pair.tolerance",
                        Verdict::Warn,
                        format!("{}<->{} {rail}", self.name(a), self.name(b)),
                        format!("pair out of tolerance in pairwise#{iteration}: {reason}"),
                    )
                    .observed(format!(
                        "{} Gb/s, {} us",
                        sample.bw_gbps.map_or("-".into(), |v| format!("{v:.2}")),
                        sample.lat_us.map_or("-".into(), |v| format!("{v:.1}"))
                    ));
                    self.add_finding(finding);
                }
            }
            let max_rounds = self.options.playbook.isolation.max_rounds;
            let confirmations = self.options.playbook.isolation.confirmations;
            let mut retest_log: Vec<PairMeasurement> = Vec::new();
            let isolation = {
                let mut retest = |pairs: &[(usize, usize)]| -> Vec<PairSample> {
                    let results = self.measure_round(pairs, super::pairwise::PairRails::same(rail), &spec);
                    let by_pair: BTreeMap<(usize, usize), Vec<Direction>> = results.into_iter().collect();
                    pairs
                        .iter()
                        .map(|pair| match by_pair.get(pair) {
                            Some(directions) => {
                                for direction in directions {
                                    retest_log.push(self.record(direction));
                                }
                                fold(directions)
                            }
                            None => PairSample { failed: true, ..PairSample::default() },
                        })
                        .collect()
                };
                isolate(&results, &thresholds, max_rounds, confirmations, &mut retest)
            };
            let rounds = Some(isolation.rounds);
            by_rail.insert(rail.clone(), isolation);
            let step = format!("isolation#{iteration}/{rail}");
            self.finish_step(
                step,
                "isolation",
                started,
                StepDetail { measurements: retest_log, rounds, ..StepDetail::default() },
            )?;
        }
        self.suspects_from(iteration, &by_rail, &thresholds);
        self.checkpoint.pass_samples.clear();
        self.end_phase("isolation", iteration, PhaseStatus::Done)
    }

    /// Turn pinned faults into suspects: a host bad on every rail with a bad loopback is a host; bad
    /// on every rail with a good loopback is its link (NIC port, cable, switch port); bad on some
    /// rails only is that NIC; a pair bad between healthy hosts is the path between them.
    pub(super) fn suspects_from(
        &mut self,
        iteration: u32,
        by_rail: &BTreeMap<String, Isolation>,
        thresholds: &Thresholds,
    ) {
        let rail_count = by_rail.len();
        let mut host_rails: BTreeMap<usize, Vec<(String, u32, u32, bool)>> = BTreeMap::new();
        for (rail, isolation) in by_rail {
            for pinned in &isolation.pinned {
                match *pinned {
                    Pinned::Host { host, bad, good, confirmed } => {
                        host_rails.entry(host).or_default().push((rail.clone(), bad, good, confirmed))
                    }
                    Pinned::Link { a, b } => {
                        let subject = format!("{}<->{} {rail}", self.name(a), self.name(b));
                        let evidence = self.retest_evidence(isolation, &[a, b]);
                        self.add_suspect(
                            SuspectKind::Link,
                            subject.clone(),
                            a,
                            0.8,
                            format!(
                                "check the path between {} and {} on {rail} (switch route, ports)",
                                self.name(a),
                                self.name(b)
                            ),
                            evidence,
                            "burnin.isolation.link",
                            iteration,
                        );
                    }
                }
            }
            for &(a, b) in &isolation.not_reproduced {
                let finding = Finding::new(
                    "burnin.pair.transient",
                    Verdict::Warn,
                    format!("{}<->{} {rail}", self.name(a), self.name(b)),
                    format!("out of tolerance in pairwise#{iteration}, within tolerance when retested"),
                );
                self.add_finding(finding);
            }
            for &host in &isolation.unresolved {
                let finding = Finding::new(
                    "burnin.isolation.unresolved",
                    Verdict::Warn,
                    format!("{} {rail}", self.name(host)),
                    "in a suspect pair but no known-good partner was left to retest it with",
                );
                self.add_finding(finding);
            }
        }
        let best_loopback = self
            .report
            .loopback
            .iter()
            .filter_map(|l| l.bw_gbps)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        for (host, rails) in host_rails {
            let name = self.name(host);
            let (bad, good): (u32, u32) = rails.iter().fold((0, 0), |acc, r| (acc.0 + r.1, acc.1 + r.2));
            let confirmed = rails.iter().all(|r| r.3);
            let mut confidence = f64::from(bad) / f64::from((bad + good).max(1)) * if confirmed { 0.9 } else { 0.6 };
            let mut evidence: Vec<String> = by_rail.values().flat_map(|i| self.retest_evidence(i, &[host])).collect();
            let loopback: Vec<&LoopbackResult> = self.report.loopback.iter().filter(|l| l.host == name).collect();
            // A loopback that measured low is the host; one that failed outright is a port that was
            // down when it ran (an RDMA loopback needs its port up; a flapping link fails it), which is
            // the link's, not the host's.
            let loopback_bad = loopback.iter().any(|l| match (l.bw_gbps, best_loopback) {
                (Some(bw), Some(best)) => bw < thresholds.bandwidth_fraction * best,
                _ => false,
            });
            let loopback_failed = loopback.iter().any(|l| l.bw_gbps.is_none() && l.error.is_some());
            for l in &loopback {
                evidence.push(format!(
                    "loopback {} {}: {}",
                    name,
                    l.rail,
                    l.bw_gbps.map_or_else(|| l.error.clone().unwrap_or_default(), |bw| format!("{bw:.2} Gb/s")),
                ));
            }
            if let Some(totals) = self.counter_totals.get(&name) {
                if totals.total() > 0 {
                    evidence.push(format!(
                        "{name} counters grew: pfc_pause +{}, ecn_cnp +{}, retransmits +{}, port_errors +{}, pcie_aer +{}",
                        totals.pfc_pause, totals.ecn_cnp, totals.retransmits, totals.port_errors, totals.pcie_aer
                    ));
                    if totals.retransmits + totals.port_errors + totals.pcie_aer > 0 {
                        confidence = (confidence + 0.1).min(1.0);
                    }
                }
            }
            let rail_names: Vec<&str> = rails.iter().map(|r| r.0.as_str()).collect();
            let (kind, subject, action) = if rail_count > 1 && rails.len() < rail_count {
                (
                    SuspectKind::Nic,
                    format!("{name} {}", rail_names.join(",")),
                    format!("reseat or replace the NIC of {name} on {} (other rails are fine)", rail_names.join(",")),
                )
            } else if loopback_bad {
                (
                    SuspectKind::Host,
                    name.clone(),
                    format!("service host {name}: slow even to itself (CPU, memory, PCIe, NIC firmware)"),
                )
            } else if loopback_failed {
                (
                    SuspectKind::Link,
                    format!("{name} {}", rail_names.join(",")),
                    format!(
                        "the port of {name} on {} went down during the run (its loopback failed too): read its \
                         link_downed counter and the kernel log for link down/up, reseat, then replace the cable / \
                         transceiver; if the port stays down, the NIC",
                        rail_names.join(",")
                    ),
                )
            } else {
                (
                    SuspectKind::Link,
                    format!("{name} {}", rail_names.join(",")),
                    format!(
                        "reseat, then replace the cable / transceiver of {name} on {} and check its switch port (loopback is fine)",
                        rail_names.join(",")
                    ),
                )
            };
            self.add_suspect(kind, subject, host, confidence, action, evidence, "burnin.isolation.host", iteration);
        }
    }

    pub(super) fn retest_evidence(&self, isolation: &Isolation, hosts: &[usize]) -> Vec<String> {
        isolation
            .retests
            .iter()
            .filter(|r| hosts.contains(&r.candidate))
            .map(|r| {
                format!(
                    "retest round {}: {}<->{} {} Gb/s, {} us: {}",
                    r.round,
                    self.name(r.candidate),
                    self.name(r.partner),
                    r.sample.bw_gbps.map_or("-".into(), |v| format!("{v:.2}")),
                    r.sample.lat_us.map_or("-".into(), |v| format!("{v:.1}")),
                    r.suspect.clone().unwrap_or_else(|| "within tolerance".into())
                )
            })
            .collect()
    }

    #[expect(clippy::too_many_arguments, reason = "the fields of a suspect and its finding")]
    pub(super) fn add_suspect(
        &mut self,
        kind: SuspectKind,
        subject: String,
        host: usize,
        confidence: f64,
        action: String,
        evidence: Vec<String>,
        finding_id: &str,
        iteration: u32,
    ) {
        let mut finding = Finding::new(
            finding_id,
            Verdict::Fail,
            subject.clone(),
            format!("{kind:?} fault pinned by isolation#{iteration}: {action}").to_lowercase(),
        );
        finding.evidence = evidence.clone();
        self.add_finding(finding);
        let host_name = self.name(host);
        match self.report.suspects.iter_mut().find(|s| s.subject == subject && s.kind == kind) {
            Some(existing) => {
                // Seen again in a later soak iteration: more confidence, newest evidence.
                existing.confidence = existing.confidence.max(confidence).max((existing.confidence + 0.05).min(1.0));
                existing.evidence = evidence;
            }
            None => self.report.suspects.push(Suspect {
                kind,
                subject,
                host: host_name,
                confidence: (confidence * 100.0).round() / 100.0,
                action,
                evidence,
                finding_ids: vec![finding_id.to_string()],
            }),
        }
        self.report.suspects.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    }
}
