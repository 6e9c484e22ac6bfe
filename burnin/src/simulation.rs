//! A simulated fabric behind the real coordinator: hosts, rails, leaf switches, per-link capacity
//! with seeded run-to-run noise, and injected faults (slow host, slow NIC, bad cable, bad leaf port,
//! slow path, flapping link, fabric-wide shortfall, a host that dies mid-run). A simulated agent
//! answers the same typed steps a real agent answers ([`crate::protocol::Request`]) from the model,
//! so the coordinator's schedule, isolation, reports and resume run unchanged on top of it, and a
//! run at thousands of hosts can be judged against the faults it was given.
//!
//! Time is simulated: each host has its own clock, a step between hosts starts when all of them are
//! free and advances their clocks by the time the step would take on the model (a bandwidth test
//! lasts its `bandwidth_ms`, a latency test its round trips), so disjoint pairs of one round run in
//! parallel as they do on a real fabric, and a 72-hour protocol takes as long as its bookkeeping.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use fabricdoctor_checks::{Finding, Verdict};
use fabricdoctor_report::burnin::{CounterCategories, CounterDelta};
use fabricdoctor_report::{HostInfo, Report};
use serde::{Deserialize, Serialize};

use crate::protocol::{
    AgentLimits, CollectiveKind, CollectiveSummary, MeasureSpec, Measured, RailAddress, RailLink, Request, Response,
};
use crate::BurninError;

/// The largest simulated fabric (the protocol's own bound on a collective's world).
pub const MAX_HOSTS: usize = crate::protocol::limits::MAX_WORLD;

/// The fabric a simulation runs on, as written in its TOML file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FabricModel {
    /// Hosts, named `sim0000`, `sim0001`, ...
    pub hosts: usize,
    /// Rails (NICs) per host, named `rail0`, `rail1`, ...: a rail-optimized fabric has one leaf
    /// per rail per group of `hosts_per_leaf` hosts.
    #[serde(default = "default_rails")]
    pub rails: usize,
    /// Hosts under one leaf switch on each rail.
    #[serde(default = "default_hosts_per_leaf")]
    pub hosts_per_leaf: usize,
    /// Each NIC's link rate, Gb/s (what an agent reads from sysfs).
    #[serde(default = "default_rail_gbps")]
    pub rail_gbps: f64,
    /// What a healthy pair measures, as a fraction of the link rate.
    #[serde(default = "default_efficiency")]
    pub efficiency: f64,
    /// A healthy pair's one-way latency under the same leaf, µs; a pair across the spine adds
    /// `spine_latency_us`.
    #[serde(default = "default_latency_us")]
    pub latency_us: f64,
    #[serde(default = "default_spine_latency_us")]
    pub spine_latency_us: f64,
    /// Run-to-run noise of every measurement: a factor drawn uniformly from 1 ± noise.
    #[serde(default = "default_noise")]
    pub noise: f64,
    /// Seeds the noise: the same model and seed give the same measurements.
    #[serde(default)]
    pub seed: u64,
    #[serde(default)]
    pub faults: Vec<Fault>,
}

fn default_rails() -> usize {
    1
}
fn default_hosts_per_leaf() -> usize {
    32
}
fn default_rail_gbps() -> f64 {
    400.0
}
fn default_efficiency() -> f64 {
    0.92
}
fn default_latency_us() -> f64 {
    3.0
}
fn default_spine_latency_us() -> f64 {
    1.0
}
fn default_noise() -> f64 {
    0.03
}

/// A fault injected into the model. Hosts are numbered from 0, rails too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Fault {
    /// The host itself is slow on every rail and in loopback (PCIe, memory, CPU): `fraction` of
    /// its healthy rate.
    SlowHost { host: usize, fraction: f64 },
    /// One NIC is slow, its own loopback too (firmware, a PCIe link trained down).
    SlowNic { host: usize, rail: usize, fraction: f64 },
    /// The cable between a NIC and its leaf: slow on that rail, loopback fine, the NIC's port
    /// counts symbol errors.
    BadCable { host: usize, rail: usize, fraction: f64 },
    /// The leaf's port that faces a NIC: slow on that rail, loopback fine, the host's counters
    /// clean (the errors are on the switch's side).
    BadLeafPort { host: usize, rail: usize, fraction: f64 },
    /// The route between two hosts on a rail (a spine port on their ECMP path): only that pair is
    /// slow.
    SlowPath { a: usize, b: usize, rail: usize, fraction: f64 },
    /// A NIC's link goes down for `down_s` every `period_s` seconds of simulated time: a
    /// measurement that overlaps a down window fails, and the port counts the link going down.
    Flapping { host: usize, rail: usize, period_s: f64, down_s: f64 },
    /// Every link delivers `fraction` of its rate (a fabric-wide misconfiguration): no host is
    /// worse than another, so only an absolute expectation catches it.
    Shortfall { fraction: f64 },
    /// The host stops answering at `at_s` seconds of simulated time.
    Dies { host: usize, at_s: f64 },
}

impl FabricModel {
    /// Parse a model file; `source` names it in errors.
    pub fn from_toml(text: &str, source: &str) -> Result<FabricModel, BurninError> {
        let model: FabricModel =
            toml::from_str(text).map_err(|e| BurninError::Run(format!("fabric model {source}: {e}")))?;
        model.validate().map_err(|reason| BurninError::Run(format!("fabric model {source}: {reason}")))?;
        Ok(model)
    }

    /// Check every field and fault against the fabric's size; the error names the key.
    pub fn validate(&self) -> Result<(), String> {
        if !(2..=MAX_HOSTS).contains(&self.hosts) {
            return Err(format!("hosts = {} outside 2..={MAX_HOSTS}", self.hosts));
        }
        if !(1..=crate::protocol::limits::MAX_RAILS).contains(&self.rails) {
            return Err(format!("rails = {} outside 1..={}", self.rails, crate::protocol::limits::MAX_RAILS));
        }
        if self.hosts_per_leaf == 0 {
            return Err("hosts_per_leaf = 0".into());
        }
        let positive = |key: &str, value: f64| {
            if value.is_finite() && value > 0.0 {
                Ok(())
            } else {
                Err(format!("{key} = {value}: expected a positive number"))
            }
        };
        positive("rail_gbps", self.rail_gbps)?;
        positive("latency_us", self.latency_us)?;
        if !(self.efficiency > 0.0 && self.efficiency <= 1.0) {
            return Err(format!("efficiency = {} outside (0, 1]", self.efficiency));
        }
        if !(self.spine_latency_us >= 0.0 && self.spine_latency_us.is_finite()) {
            return Err(format!("spine_latency_us = {}: expected 0 or more", self.spine_latency_us));
        }
        if !(0.0..0.5).contains(&self.noise) {
            return Err(format!("noise = {} outside [0, 0.5)", self.noise));
        }
        for (index, fault) in self.faults.iter().enumerate() {
            self.validate_fault(fault).map_err(|reason| format!("faults[{index}]: {reason}"))?;
        }
        Ok(())
    }

    fn validate_fault(&self, fault: &Fault) -> Result<(), String> {
        let host = |h: usize| if h < self.hosts { Ok(()) } else { Err(format!("host {h} of {} hosts", self.hosts)) };
        let rail = |r: usize| if r < self.rails { Ok(()) } else { Err(format!("rail {r} of {} rails", self.rails)) };
        let fraction = |f: f64| {
            if f > 0.0 && f <= 1.0 {
                Ok(())
            } else {
                Err(format!("fraction {f} outside (0, 1]"))
            }
        };
        match *fault {
            Fault::SlowHost { host: h, fraction: f } => host(h).and(fraction(f)),
            Fault::SlowNic { host: h, rail: r, fraction: f }
            | Fault::BadCable { host: h, rail: r, fraction: f }
            | Fault::BadLeafPort { host: h, rail: r, fraction: f } => host(h).and(rail(r)).and(fraction(f)),
            Fault::SlowPath { a, b, rail: r, fraction: f } => {
                if a == b {
                    return Err(format!("a path from host {a} to itself"));
                }
                host(a).and(host(b)).and(rail(r)).and(fraction(f))
            }
            Fault::Flapping { host: h, rail: r, period_s, down_s } => {
                host(h)?;
                rail(r)?;
                if !(period_s > 0.0 && down_s > 0.0 && down_s < period_s && period_s.is_finite()) {
                    return Err(format!("period_s {period_s}, down_s {down_s}: expected 0 < down_s < period_s"));
                }
                Ok(())
            }
            Fault::Shortfall { fraction: f } => fraction(f),
            Fault::Dies { host: h, at_s } => {
                host(h)?;
                if !(at_s >= 0.0 && at_s.is_finite()) {
                    return Err(format!("at_s {at_s}: expected 0 or more"));
                }
                Ok(())
            }
        }
    }

    pub fn host_name(index: usize) -> String {
        format!("sim{index:04}")
    }

    /// The leaf of `host` (the same on every rail: rail k's leaf of a group is switch k of it).
    pub fn leaf_name(&self, host: usize) -> String {
        format!("leaf{}", host / self.hosts_per_leaf)
    }

    pub fn rail_name(index: usize) -> String {
        format!("rail{index}")
    }

    /// The address of `host` on `rail`: 10.RAIL.H.L with H.L = host + 1, so a measurement's server
    /// address names the host and rail it serves on (the simulation's only routing table).
    pub fn address(host: usize, rail: usize) -> IpAddr {
        let number = host + 1;
        IpAddr::V4(Ipv4Addr::new(10, rail as u8, (number >> 8) as u8, (number & 0xff) as u8))
    }

    /// The host and rail an address of [`FabricModel::address`] names.
    fn locate(&self, address: IpAddr) -> Option<(usize, usize)> {
        let IpAddr::V4(v4) = address else { return None };
        let [ten, rail, high, low] = v4.octets();
        let number = (usize::from(high) << 8) | usize::from(low);
        (ten == 10 && number >= 1 && number <= self.hosts && usize::from(rail) < self.rails)
            .then(|| (number - 1, usize::from(rail)))
    }

    fn leaf(&self, host: usize) -> usize {
        host / self.hosts_per_leaf
    }

    /// The rate the host side of `host`'s `rail` delivers, as a fraction of healthy.
    fn end_fraction(&self, host: usize, rail: usize) -> f64 {
        self.faults
            .iter()
            .map(|fault| match *fault {
                Fault::SlowHost { host: h, fraction } if h == host => fraction,
                Fault::SlowNic { host: h, rail: r, fraction }
                | Fault::BadCable { host: h, rail: r, fraction }
                | Fault::BadLeafPort { host: h, rail: r, fraction }
                    if h == host && r == rail =>
                {
                    fraction
                }
                Fault::Shortfall { fraction } => fraction,
                _ => 1.0,
            })
            .fold(1.0, f64::min)
    }

    /// The pair's rate between `a` and `b` on `rail` as a fraction of healthy (the slower end, the
    /// path between them).
    fn pair_fraction(&self, a: usize, b: usize, rail: usize) -> f64 {
        let path = self
            .faults
            .iter()
            .map(|fault| match *fault {
                Fault::SlowPath { a: x, b: y, rail: r, fraction }
                    if r == rail && ((x, y) == (a, b) || (x, y) == (b, a)) =>
                {
                    fraction
                }
                _ => 1.0,
            })
            .fold(1.0, f64::min);
        self.end_fraction(a, rail).min(self.end_fraction(b, rail)).min(path)
    }

    /// The loopback rate of `host` on `rail` as a fraction of healthy: what is inside the host
    /// (the host, its NIC), not what is outside it (cable, leaf, path).
    fn loopback_fraction(&self, host: usize, rail: usize) -> f64 {
        self.faults
            .iter()
            .map(|fault| match *fault {
                Fault::SlowHost { host: h, fraction } if h == host => fraction,
                Fault::SlowNic { host: h, rail: r, fraction } if h == host && r == rail => fraction,
                _ => 1.0,
            })
            .fold(1.0, f64::min)
    }

    fn one_way_latency_us(&self, a: usize, b: usize) -> f64 {
        if self.leaf(a) == self.leaf(b) {
            self.latency_us
        } else {
            self.latency_us + self.spine_latency_us
        }
    }

    /// Whether `host`'s `rail` is down at some time in `[start, end)` seconds.
    fn down_during(&self, host: usize, rail: usize, start: f64, end: f64) -> bool {
        self.faults.iter().any(|fault| match *fault {
            Fault::Flapping { host: h, rail: r, period_s, down_s } if h == host && r == rail => {
                // Down windows are [k * period_s, k * period_s + down_s).
                let first = (start / period_s).floor();
                let last = (end / period_s).floor();
                (first as u64..=last as u64).any(|k| {
                    let down = k as f64 * period_s;
                    down < end && start < down + down_s
                })
            }
            _ => false,
        })
    }

    fn death(&self, host: usize) -> Option<f64> {
        self.faults
            .iter()
            .filter_map(|fault| match *fault {
                Fault::Dies { host: h, at_s } if h == host => Some(at_s),
                _ => None,
            })
            .reduce(f64::min)
    }

    /// What the host's port counters count per measurement on `rail`: symbol errors of a bad cable.
    fn errors_per_measurement(&self, host: usize, rail: usize) -> u64 {
        self.faults
            .iter()
            .map(|fault| match *fault {
                Fault::BadCable { host: h, rail: r, .. } if h == host && r == rail => 1000,
                _ => 0,
            })
            .sum()
    }

    /// The fabric's truth: what a burn-in should name. (kind, host, rail, other end).
    pub fn expected_suspects(&self) -> Vec<ExpectedSuspect> {
        self.faults
            .iter()
            .filter_map(|fault| match *fault {
                Fault::SlowHost { host, .. } => Some(ExpectedSuspect { host, rail: None, peer: None }),
                Fault::SlowNic { host, rail, .. }
                | Fault::BadCable { host, rail, .. }
                | Fault::BadLeafPort { host, rail, .. }
                | Fault::Flapping { host, rail, .. } => Some(ExpectedSuspect { host, rail: Some(rail), peer: None }),
                Fault::SlowPath { a, b, rail, .. } => {
                    Some(ExpectedSuspect { host: a.min(b), rail: Some(rail), peer: Some(a.max(b)) })
                }
                Fault::Shortfall { .. } | Fault::Dies { .. } => None,
            })
            .collect()
    }
}

/// A fault a burn-in should pin: a host (every rail), a host's rail, or the path between two hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ExpectedSuspect {
    pub host: usize,
    pub rail: Option<usize>,
    pub peer: Option<usize>,
}

/// splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014):
/// a stateless mix, so a measurement's noise depends on what is measured and its ordinal, never on
/// which thread asked first.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A uniform draw in [-1, 1] from the keys.
fn draw(keys: &[u64]) -> f64 {
    let hash = keys.iter().fold(0u64, |acc, &k| mix(acc ^ k));
    (hash >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

/// The fabric's state while a run uses it.
#[derive(Debug)]
struct State {
    /// Each host's simulated clock, seconds.
    clocks: Vec<f64>,
    /// Measurements each host made as a client (the noise's ordinal).
    measured: Vec<u64>,
    /// Port counter growth since each host's last sample.
    errors: Vec<u64>,
    /// Each host's clock at its last counter sample.
    sampled_at: Vec<f64>,
    /// Serving steps: port -> (host, rail, incast).
    serving: BTreeMap<u16, (usize, usize, u64)>,
    next_port: u16,
    /// Incasts: the sessions a host serves on a rail before the first of them is measured form one
    /// (a congestion pulse serves one per sender, a pair round one), and its senders share the
    /// server's link. Incast -> (sessions, sessions not yet measured).
    incasts: BTreeMap<u64, (usize, usize)>,
    /// The incast a new session on (host, rail) joins, and the host's clock when it began: until
    /// one of its sessions is measured, and only at that same time (a session whose sender never
    /// came must not make a later pair an incast).
    filling: BTreeMap<(usize, usize), (u64, f64)>,
    next_incast: u64,
    /// Collectives being joined, by rendezvous (master address, port).
    gatherings: BTreeMap<(IpAddr, u16), Gathering>,
}

#[derive(Debug, Default)]
struct Gathering {
    /// rank -> host, or `None` for a rank whose host did not come.
    ranks: BTreeMap<usize, Option<usize>>,
    /// Answers once every rank has come: (summary for rank 0, error).
    outcome: Option<Result<CollectiveSummary, String>>,
    /// Ranks that took their answer; the last one removes the gathering.
    answered: usize,
}

/// A simulated fabric shared by every simulated agent of a run.
#[derive(Debug)]
pub struct SimulatedFabric {
    pub model: FabricModel,
    state: Mutex<State>,
    joined: Condvar,
}

/// How long a simulated rank waits in wall time for the others of its collective (they all run
/// at once on the coordinator's threads; this bounds a coordinator bug, not the model).
const GATHER_WAIT: Duration = Duration::from_secs(30);

impl SimulatedFabric {
    pub fn new(model: FabricModel) -> SimulatedFabric {
        let hosts = model.hosts;
        SimulatedFabric {
            model,
            state: Mutex::new(State {
                clocks: vec![0.0; hosts],
                measured: vec![0; hosts],
                errors: vec![0; hosts],
                sampled_at: vec![0.0; hosts],
                serving: BTreeMap::new(),
                incasts: BTreeMap::new(),
                filling: BTreeMap::new(),
                next_incast: 0,
                next_port: 1024,
                gatherings: BTreeMap::new(),
            }),
            joined: Condvar::new(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic elsewhere cannot leave the clocks half-written in a way that matters more than
        // stopping the run would: keep going with what is there.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The simulated time: the latest host clock, seconds.
    pub fn now(&self) -> f64 {
        self.state().clocks.iter().copied().fold(0.0, f64::max)
    }

    /// Let `seconds` pass on every host (the coordinator's pause between soak iterations).
    pub fn idle(&self, seconds: f64) {
        let mut state = self.state();
        let until = state.clocks.iter().copied().fold(0.0, f64::max) + seconds.max(0.0);
        state.clocks.iter_mut().for_each(|clock| *clock = until);
    }

    /// What the coordinator learns when it connects to `host`: its name and rails.
    pub fn welcome(&self, host: usize) -> (String, Vec<RailAddress>, AgentLimits) {
        let rails = (0..self.model.rails)
            .map(|rail| RailAddress {
                name: FabricModel::rail_name(rail),
                address: FabricModel::address(host, rail),
                device: None,
                link: Some(RailLink {
                    gbps: Some(self.model.rail_gbps),
                    detail: format!("simulated {} Gb/s link", self.model.rail_gbps),
                }),
            })
            .collect();
        (FabricModel::host_name(host), rails, AgentLimits::of_this_build(4))
    }

    fn rail_index(&self, name: &str) -> Option<usize> {
        name.strip_prefix("rail").and_then(|n| n.parse().ok()).filter(|&r| r < self.model.rails)
    }

    /// Answer `request` as `host`'s agent would. `Err` is a lost agent (it died).
    pub fn answer(&self, host: usize, request: &Request) -> Result<Response, BurninError> {
        let lost = |at: f64| {
            BurninError::Run(format!(
                "agent {}: connection reset by peer (simulated: the host died at {at:.0} s)",
                FabricModel::host_name(host)
            ))
        };
        if let Some(at) = self.model.death(host) {
            if self.state().clocks[host] >= at {
                if let Request::Collective { master, master_port, rank, .. } = request {
                    self.absent(*master, *master_port, *rank);
                }
                return Err(lost(at));
            }
        }
        if let Err(reason) = request.validate() {
            return Ok(Response::Error { reason });
        }
        Ok(match request {
            Request::Ping {} => Response::Pong,
            Request::Check { .. } => {
                self.advance_after(&[host], &[host], 2.0);
                let info = HostInfo {
                    hostname: FabricModel::host_name(host),
                    kernel_release: None,
                    source: "simulated".into(),
                };
                let finding = Finding::new(
                    "check.simulated",
                    Verdict::Skip,
                    FabricModel::host_name(host),
                    "a simulated host has no node to check",
                );
                Response::Checked {
                    report: Some(Box::new(Report::new("check", vec![info], vec![finding]))),
                    topology: None,
                    error: None,
                }
            }
            Request::SampleCounters {} => self.sample(host),
            Request::Loopback { rail, spec } => match self.rail_index(rail) {
                Some(rail) => Response::Measured(self.measure(host, host, rail, spec, 1)),
                None => Response::Error { reason: format!("no rail {rail}") },
            },
            Request::Serve { rail, .. } => match self.rail_index(rail) {
                Some(rail) => Response::Serving { port: self.open_port(host, rail, true) },
                None => Response::Error { reason: format!("no rail {rail}") },
            },
            Request::ReservePort { rail } => match self.rail_index(rail) {
                // A collective's rendezvous port: no sender measures into it.
                Some(rail) => Response::Port { port: self.open_port(host, rail, false) },
                None => Response::Error { reason: format!("no rail {rail}") },
            },
            Request::Measure { server, port, spec, .. } => match self.served(*server, *port) {
                Ok((peer, rail, senders)) => Response::Measured(self.measure(host, peer, rail, spec, senders)),
                Err(reason) => Response::Measured(Measured { error: Some(reason), ..Measured::default() }),
            },
            Request::MeasureRails { targets, spec, .. } => {
                // Every rail at once, as the agent runs them: each rail's test starts from the
                // client's clock at the request, and the client is busy until the slowest ends.
                let start = self.state().clocks[host];
                let mut end = start;
                let results = targets
                    .iter()
                    .map(|target| {
                        self.state().clocks[host] = start;
                        let result = match self.served(target.server, target.port) {
                            Ok((peer, rail, senders)) => self.measure(host, peer, rail, spec, senders),
                            Err(reason) => Measured { error: Some(reason), ..Measured::default() },
                        };
                        end = end.max(self.state().clocks[host]);
                        result
                    })
                    .collect();
                self.state().clocks[host] = end;
                Response::MeasuredRails { results }
            }
            Request::Collective { collective, rank, world, master, master_port, bytes, iterations, rail, .. } => {
                let rail = rail.as_deref().and_then(|r| self.rail_index(r)).unwrap_or(0);
                self.collective(host, *collective, *rank, *world, (*master, *master_port), *bytes, *iterations, rail)
            }
        })
    }

    /// A step of `seconds` that starts when every host of `waits_for` is free and keeps the hosts
    /// of `busy` busy until it ends. A measurement keeps its client busy and only waits for its
    /// server: a server serves many clients at once (a congestion pulse's incast), and a pair's
    /// reverse direction, measured next, starts after the first from the other end's clock.
    fn advance_after(&self, waits_for: &[usize], busy: &[usize], seconds: f64) -> (f64, f64) {
        let mut state = self.state();
        let start = waits_for.iter().chain(busy).map(|&h| state.clocks[h]).fold(0.0, f64::max);
        let end = start + seconds;
        for &h in busy {
            state.clocks[h] = end;
        }
        (start, end)
    }

    /// A port `host` serves on `rail`; a session (`joins`) is one sender of the host's incast.
    fn open_port(&self, host: usize, rail: usize, joins: bool) -> u16 {
        let mut state = self.state();
        let port = state.next_port;
        state.next_port = if port == u16::MAX { 1024 } else { port + 1 };
        let now = state.clocks[host];
        let incast = match state.filling.get(&(host, rail)) {
            Some(&(incast, since)) if joins && since == now => incast,
            _ => {
                let incast = state.next_incast;
                state.next_incast += 1;
                if joins {
                    state.filling.insert((host, rail), (incast, now));
                }
                incast
            }
        };
        // A port no sender joins (a rendezvous) has no incast entry: it is measured alone.
        if joins {
            let sessions = state.incasts.entry(incast).or_insert((0, 0));
            sessions.0 += 1;
            sessions.1 += 1;
        }
        state.serving.insert(port, (host, rail, incast));
        port
    }

    /// The host and rail serving at `server:port` (the port is used once), and how many senders
    /// share that server's link (its incast's sessions).
    fn served(&self, server: IpAddr, port: u16) -> Result<(usize, usize, usize), String> {
        let located = self.model.locate(server).ok_or_else(|| format!("no simulated host at {server}"))?;
        let mut state = self.state();
        match state.serving.remove(&port) {
            Some((host, rail, incast)) if (host, rail) == located => {
                if state.filling.get(&located).is_some_and(|&(filling, _)| filling == incast) {
                    state.filling.remove(&located);
                }
                let senders = match state.incasts.get_mut(&incast) {
                    Some((sessions, left)) => {
                        let senders = *sessions;
                        *left = left.saturating_sub(1);
                        if *left == 0 {
                            state.incasts.remove(&incast);
                        }
                        senders
                    }
                    None => 1,
                };
                match self.model.death(host) {
                    Some(at) if state.clocks[host] >= at => Err(format!("connection refused by {server}:{port}")),
                    _ => Ok((host, rail, senders)),
                }
            }
            _ => Err(format!("nothing serves at {server}:{port}")),
        }
    }

    /// One bandwidth test then one latency test from `client` to `server` on `rail` (a host with
    /// itself is its loopback).
    /// `senders` share the server's link (an incast): each gets at most its share of it.
    fn measure(&self, client: usize, server: usize, rail: usize, spec: &MeasureSpec, senders: usize) -> Measured {
        let model = &self.model;
        let loopback = client == server;
        let fraction =
            if loopback { model.loopback_fraction(client, rail) } else { model.pair_fraction(client, server, rail) };
        let fraction = fraction.min(1.0 / senders.max(1) as f64);
        let latency_us = if loopback { model.latency_us / 2.0 } else { model.one_way_latency_us(client, server) };
        let ordinal = {
            let mut state = self.state();
            state.measured[client] += 1;
            state.measured[client]
        };
        let keys = [model.seed, client as u64, server as u64, rail as u64, ordinal];
        let bw_noise = 1.0 + model.noise * draw(&keys);
        let lat_noise = 1.0 + model.noise * draw(&[keys[0], keys[1], keys[2], keys[3], keys[4], 1]);
        let bw_gbps = model.rail_gbps * model.efficiency * fraction * bw_noise;
        // A slow link is slow on small messages too: its serialization, not only its rate.
        let lat_us = latency_us * lat_noise / fraction.max(0.05).sqrt();
        let seconds = spec.bandwidth_ms as f64 / 1000.0 + spec.latency_iterations as f64 * 2.0 * lat_us * 1e-6;
        let ends = if loopback { vec![client] } else { vec![client, server] };
        let (start, end) = self.advance_after(&ends, &[client], seconds);
        let mut flapped = Vec::new();
        for &end_host in &ends {
            if model.down_during(end_host, rail, start, end) {
                flapped.push(end_host);
            }
        }
        {
            let mut state = self.state();
            for &h in &ends {
                state.errors[h] += model.errors_per_measurement(h, rail);
            }
            for &h in &flapped {
                // The link went down and came back: link_downed and carrier changes count it.
                state.errors[h] += 2;
            }
        }
        if let Some(&down) = flapped.first() {
            return Measured {
                error: Some(format!(
                    "{} {}: link down during the test (simulated flap at {start:.0}-{end:.0} s)",
                    FabricModel::host_name(down),
                    FabricModel::rail_name(rail)
                )),
                ..Measured::default()
            };
        }
        let verified = (bw_gbps * 1e9 / 8.0 * spec.bandwidth_ms as f64 / 1000.0) as u64;
        Measured {
            bw_gbps: Some(bw_gbps),
            lat_us: Some(lat_us),
            lat_p99_us: Some(lat_us * 1.2),
            validation_errors: 0,
            error: None,
            verified_bytes: if spec.validate { verified } else { 0 },
            corruption: None,
        }
    }

    fn sample(&self, host: usize) -> Response {
        let mut state = self.state();
        let now = state.clocks[host];
        let interval = now - state.sampled_at[host];
        state.sampled_at[host] = now;
        let errors = std::mem::take(&mut state.errors[host]);
        let totals = CounterCategories { port_errors: errors, ..CounterCategories::default() };
        let deltas = if errors > 0 {
            vec![CounterDelta {
                source: "port_counters".into(),
                subject: format!("{} port 1", FabricModel::host_name(host)),
                name: "symbol_error".into(),
                delta: Some(errors),
                status: "counted".into(),
                category: Some("port_errors".into()),
            }]
        } else {
            Vec::new()
        };
        Response::Counters {
            interval_s: Some(interval),
            totals,
            deltas,
            findings: Vec::new(),
            unreadable: 0,
            observable: crate::counters::Observable::default(),
            tcp_retransmits: None,
            tcp_segments_sent: None,
            optics: Vec::new(),
        }
    }

    /// A rank whose host is gone: the others stop waiting for it.
    fn absent(&self, master: IpAddr, port: u16, rank: usize) {
        let mut state = self.state();
        state.gatherings.entry((master, port)).or_default().ranks.insert(rank, None);
        drop(state);
        self.joined.notify_all();
    }

    /// Every rank of a collective comes here; the last to come works out the collective on the
    /// model (a ring over the ranks in order, or all-to-all, limited by its slowest link) and
    /// every rank's clock moves to its end.
    #[expect(clippy::too_many_arguments, reason = "the fields of a collective step, as the protocol carries them")]
    fn collective(
        &self,
        host: usize,
        kind: CollectiveKind,
        rank: usize,
        world: usize,
        rendezvous: (IpAddr, u16),
        bytes: u64,
        iterations: u32,
        rail: usize,
    ) -> Response {
        let mut state = self.state();
        let gathering = state.gatherings.entry(rendezvous).or_default();
        gathering.ranks.insert(rank, Some(host));
        if gathering.ranks.len() == world {
            let ranks: Vec<Option<usize>> = (0..world).map(|r| gathering.ranks.get(&r).copied().flatten()).collect();
            let outcome = self.work_out(&mut state.clocks, kind, &ranks, bytes, iterations, rail);
            if let Some(gathering) = state.gatherings.get_mut(&rendezvous) {
                gathering.outcome = Some(outcome);
            }
            self.joined.notify_all();
        }
        let deadline = std::time::Instant::now() + GATHER_WAIT;
        loop {
            let Some(gathering) = state.gatherings.get_mut(&rendezvous) else {
                return Response::Error { reason: "the collective ended without this rank".into() };
            };
            if let Some(outcome) = gathering.outcome.clone() {
                gathering.answered += 1;
                if gathering.answered >= gathering.ranks.values().filter(|h| h.is_some()).count() {
                    state.gatherings.remove(&rendezvous);
                }
                return match outcome {
                    Ok(summary) => Response::CollectiveDone { summary: (rank == 0).then_some(summary) },
                    Err(reason) => Response::Error { reason },
                };
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Response::Error {
                    reason: format!("rank {rank}: the other ranks did not join within {GATHER_WAIT:?}"),
                };
            }
            state = self.joined.wait_timeout(state, left).map(|(guard, _)| guard).unwrap_or_else(|p| p.into_inner().0);
        }
    }

    fn work_out(
        &self,
        clocks: &mut [f64],
        kind: CollectiveKind,
        ranks: &[Option<usize>],
        bytes: u64,
        iterations: u32,
        rail: usize,
    ) -> Result<CollectiveSummary, String> {
        if let Some(missing) = ranks.iter().position(Option::is_none) {
            return Err(format!("rank {missing} never joined: its host is gone"));
        }
        let hosts: Vec<usize> = ranks.iter().flatten().copied().collect();
        let n = hosts.len();
        let model = &self.model;
        // Each rank's send rate to the next (ring) or its worst peer (all-to-all).
        let rank_gbps: Vec<f64> = (0..n)
            .map(|r| {
                let peers: Vec<usize> = match kind {
                    CollectiveKind::Allreduce => vec![hosts[(r + 1) % n]],
                    CollectiveKind::Alltoall => hosts.iter().copied().filter(|&h| h != hosts[r]).collect(),
                };
                peers
                    .iter()
                    .map(|&peer| model.rail_gbps * model.efficiency * model.pair_fraction(hosts[r], peer, rail))
                    .fold(f64::INFINITY, f64::min)
            })
            .collect();
        let (slowest_rank, slowest_gbps) =
            rank_gbps.iter().copied().enumerate().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap_or((0, 1.0));
        let bits = bytes as f64 * 8.0;
        let (moved, steps) = match kind {
            CollectiveKind::Allreduce => (2.0 * (n as f64 - 1.0) / n as f64, 2 * (n - 1)),
            CollectiveKind::Alltoall => ((n as f64 - 1.0) / n as f64, n - 1),
        };
        let latency_s = (model.latency_us + model.spine_latency_us) * 1e-6 * steps as f64;
        let call_s = moved * bits / (slowest_gbps * 1e9) + latency_s;
        let rank_time_us: Vec<f64> = rank_gbps.iter().map(|g| (moved * bits / (g * 1e9) + latency_s) * 1e6).collect();
        let start = hosts.iter().map(|&h| clocks[h]).fold(0.0, f64::max);
        for &h in &hosts {
            clocks[h] = start + call_s * f64::from(iterations) + 0.5;
        }
        let time_us = call_s * 1e6;
        let alg_bw_gbps = bits / (call_s * 1e9);
        Ok(CollectiveSummary {
            time_us,
            alg_bw_gbps,
            bus_bw_gbps: alg_bw_gbps * moved,
            wrong: 0,
            slowest_rank,
            rank_time_us,
            algorithm: Some("ring".into()),
        })
    }
}

/// How a run's suspects compare with the faults the fabric was given.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Score {
    /// Injected faults that some suspect names.
    pub found: usize,
    /// Injected faults no suspect names.
    pub missed: Vec<String>,
    /// Suspects that name no injected fault.
    pub false_suspects: Vec<String>,
    /// found / (found + false suspects): 1 when nothing was named.
    pub precision: f64,
    /// found / injected: 1 when nothing was injected.
    pub recall: f64,
}

impl ExpectedSuspect {
    fn describe(&self) -> String {
        let host = FabricModel::host_name(self.host);
        match (self.rail, self.peer) {
            (Some(rail), Some(peer)) => {
                format!("{host}<->{} {}", FabricModel::host_name(peer), FabricModel::rail_name(rail))
            }
            (Some(rail), None) => format!("{host} {}", FabricModel::rail_name(rail)),
            _ => host,
        }
    }

    /// Whether `suspect` names this fault: the path between the two hosts for a path fault; for a
    /// host or NIC fault the host, and the rail where the suspect names one (a host bad on every
    /// rail is reported as the host, which covers each of its rails).
    fn named_by(&self, suspect: &fabricdoctor_report::burnin::Suspect) -> bool {
        let host = FabricModel::host_name(self.host);
        match self.peer {
            Some(peer) => {
                let peer = FabricModel::host_name(peer);
                let (ends, rail) = suspect.subject.split_once(' ').unwrap_or((suspect.subject.as_str(), ""));
                let named = ends == format!("{host}<->{peer}") || ends == format!("{peer}<->{host}");
                named && self.rail.is_none_or(|r| rail.is_empty() || rail == FabricModel::rail_name(r))
            }
            None => {
                if suspect.subject.contains("<->") || suspect.host != host {
                    return false;
                }
                let rail = suspect.subject.split_once(' ').map(|(_, rail)| rail);
                match (self.rail, rail) {
                    (Some(expected), Some(named)) => named == FabricModel::rail_name(expected),
                    (None, Some(_)) => false,
                    _ => true,
                }
            }
        }
    }
}

/// Score `suspects` against the faults of `model`.
pub fn score(model: &FabricModel, suspects: &[fabricdoctor_report::burnin::Suspect]) -> Score {
    let expected = model.expected_suspects();
    let missed: Vec<String> =
        expected.iter().filter(|e| !suspects.iter().any(|s| e.named_by(s))).map(ExpectedSuspect::describe).collect();
    let false_suspects: Vec<String> =
        suspects.iter().filter(|s| !expected.iter().any(|e| e.named_by(s))).map(|s| s.subject.clone()).collect();
    let found = expected.len() - missed.len();
    let named = found + false_suspects.len();
    Score {
        found,
        precision: if named == 0 { 1.0 } else { found as f64 / named as f64 },
        recall: if expected.is_empty() { 1.0 } else { found as f64 / expected.len() as f64 },
        missed,
        false_suspects,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fabric() -> SimulatedFabric {
        let model =
            FabricModel::from_toml("hosts = 8\nrails = 1\nhosts_per_leaf = 8\nnoise = 0.0\n", "test").expect("model");
        SimulatedFabric::new(model)
    }

    fn address(fabric: &SimulatedFabric, host: usize) -> IpAddr {
        fabric.welcome(host).1[0].address
    }

    /// Senders served together share the server's link: four into one get a quarter each, and
    /// the next single session has the link to itself again.
    #[test]
    fn an_incast_shares_the_servers_link_and_a_pair_has_it_whole() {
        let fabric = fabric();
        let spec = crate::playbook::Playbook::builtin().expect("playbook").measure_spec(Duration::from_secs(60));
        let server = address(&fabric, 0);
        let ports: Vec<u16> = (0..4).map(|_| fabric.open_port(0, 0, true)).collect();
        let shares: Vec<f64> = ports
            .iter()
            .enumerate()
            .map(|(sender, &port)| {
                let (host, rail, senders) = fabric.served(server, port).expect("served");
                assert_eq!((host, rail, senders), (0, 0, 4));
                fabric.measure(sender + 1, host, rail, &spec, senders).bw_gbps.expect("bandwidth")
            })
            .collect();
        let whole = fabric.model.rail_gbps * fabric.model.efficiency;
        assert!(shares.iter().all(|&share| (share - whole / 4.0).abs() < 1e-9), "{shares:?} of {whole}");
        let port = fabric.open_port(0, 0, true);
        let (host, rail, senders) = fabric.served(server, port).expect("served");
        assert_eq!(senders, 1, "a new session after the incast is measured alone");
        // A session whose sender never came, then a pair later on: the pair is alone.
        let _abandoned = fabric.open_port(0, 0, true);
        fabric.idle(5.0);
        let port = fabric.open_port(0, 0, true);
        assert_eq!(fabric.served(server, port).expect("served").2, 1, "a stale session is no incast");
        // A collective's rendezvous port is no session.
        let _rendezvous = fabric.open_port(0, 0, false);
        let port = fabric.open_port(0, 0, true);
        assert_eq!(fabric.served(server, port).expect("served").2, 1, "a rendezvous port is no sender");
        let alone = fabric.measure(5, host, rail, &spec, senders).bw_gbps.expect("bandwidth");
        assert!((alone - whole).abs() < 1e-9, "{alone} of {whole}");
    }
}
