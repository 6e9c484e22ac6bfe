//! `fabricdoctor agent`: listens on the address it is given, authenticates each coordinator
//! (crate::auth), then runs only the typed steps of crate::protocol, one at a time per connection,
//! each bounded by its own timeout. Every refused or malformed message gets an error answer and a
//! log line; a failing step never takes the agent down.

use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fabricdoctor_checks::{run_checks, Policy, Topology};
use fabricdoctor_perf::collective::datatype::{DataType, ReduceOp};
use fabricdoctor_perf::collective::sweep::{run_sweep, SweepSpec, TimeAverage};
use fabricdoctor_perf::collective::{Collective, Communicator, Rendezvous, Transport};
use fabricdoctor_perf::generator::{
    run_client_size, serve_session, ClientOptions, DataPath, Side, SizeResult, TcpDataPath,
};
use fabricdoctor_perf::handshake::ServerConstraints;
use fabricdoctor_perf::{Operation, RunParameters, TestKind, TransportKind};
use fabricdoctor_probes::{NodeSnapshot, SysRoot};
use fabricdoctor_report::{HostInfo, Report};

use crate::auth::{random_bytes, AgentHandshake, Token};
use crate::counters::Sampler;
use crate::protocol::{
    read_frame, write_frame, Auth, CollectiveKind, CollectiveSummary, MeasureSpec, Measured, RailAddress, Request,
    Response, MAGIC, MAX_FRAME, MAX_UNAUTHENTICATED_FRAME, PROTOCOL_VERSION,
};
use crate::BurninError;

/// Where agent log lines go (the CLI prints them on stderr).
pub type Log = Arc<dyn Fn(String) + Send + Sync>;

#[derive(Clone)]
pub struct AgentConfig {
    pub token: Token,
    /// Data addresses by rail; the first is the default.
    pub rails: Vec<RailAddress>,
    /// Simultaneous coordinator connections; more are refused.
    pub max_connections: usize,
    /// How long an unauthenticated peer may take to finish the handshake.
    pub handshake_timeout: Duration,
    /// How long an authenticated connection may stay silent between steps.
    pub idle_timeout: Duration,
    /// Stop serving when the first authenticated coordinator leaves (agents of a SLURM step end
    /// with the step's coordinator).
    pub exit_after_session: bool,
    pub log: Log,
}

impl std::fmt::Debug for AgentConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentConfig")
            .field("rails", &self.rails)
            .field("max_connections", &self.max_connections)
            .finish()
    }
}

impl AgentConfig {
    pub fn new(token: Token, rails: Vec<RailAddress>, log: Log) -> AgentConfig {
        AgentConfig {
            token,
            rails,
            max_connections: 8,
            handshake_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(6 * 3600),
            exit_after_session: false,
            log,
        }
    }

    /// The rails as announced on a connection whose local address is `local`.
    fn rails_seen_from(&self, local: Option<IpAddr>) -> Vec<RailAddress> {
        self.rails
            .iter()
            .map(|r| match local {
                Some(ip) if r.address.is_unspecified() => RailAddress { name: r.name.clone(), address: ip },
                _ => r.clone(),
            })
            .collect()
    }
}

fn rail(rails: &[RailAddress], name: &str) -> Result<IpAddr, String> {
    rails
        .iter()
        .find(|r| r.name == name)
        .map(|r| r.address)
        .ok_or_else(|| format!("no rail named {name:?} on this agent"))
}

/// The rail an agent listening on `listen` uses when none are given: the listen address itself. An
/// agent listening on every address (0.0.0.0) announces, per coordinator, the local address that
/// coordinator reached it on.
pub fn default_rails(listen: SocketAddr) -> Vec<RailAddress> {
    vec![RailAddress { name: "default".into(), address: listen.ip() }]
}

/// Accept coordinators until `stop` is set.
pub fn serve(listener: TcpListener, config: AgentConfig, stop: Arc<AtomicBool>) -> Result<(), BurninError> {
    listener.set_nonblocking(true).map_err(|e| BurninError::Io("agent listener".into(), e))?;
    let active = Arc::new(AtomicUsize::new(0));
    let config = Arc::new(config);
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, peer)) => {
                let _ = stream.set_nonblocking(false);
                if active.load(Ordering::SeqCst) >= config.max_connections {
                    (config.log)(format!("{peer}: refused: {} connections already open", config.max_connections));
                    let mut stream = stream;
                    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
                    let _ = write_frame(&mut stream, &Auth::Refused { reason: "agent busy".into() });
                    continue;
                }
                active.fetch_add(1, Ordering::SeqCst);
                let (shared, counter, stopper) = (Arc::clone(&config), Arc::clone(&active), Arc::clone(&stop));
                let spawned = std::thread::Builder::new().name(format!("agent {peer}")).spawn(move || {
                    let mut authenticated = false;
                    if let Err(error) = connection(stream, peer, &shared, &mut authenticated) {
                        (shared.log)(format!("{peer}: {error}"));
                    }
                    if authenticated && shared.exit_after_session {
                        stopper.store(true, Ordering::Relaxed);
                    }
                    counter.fetch_sub(1, Ordering::SeqCst);
                });
                if let Err(error) = spawned {
                    active.fetch_sub(1, Ordering::SeqCst);
                    (config.log)(format!("{peer}: cannot start a thread: {error}"));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(20)),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                (config.log)(format!("accept failed: {e}"));
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
    Ok(())
}

/// Authenticate one peer. Returns an error (for the log) when it is refused.
fn authenticate(stream: &mut TcpStream, config: &AgentConfig) -> Result<(), BurninError> {
    stream.set_read_timeout(Some(config.handshake_timeout)).ok();
    stream.set_write_timeout(Some(config.handshake_timeout)).ok();
    let refuse = |stream: &mut TcpStream, reason: String| {
        let _ = write_frame(stream, &Auth::Refused { reason: reason.clone() });
        BurninError::Auth(reason)
    };
    let hello = match read_frame::<Auth>(stream, MAX_UNAUTHENTICATED_FRAME) {
        Ok(hello) => hello,
        Err(error) => return Err(refuse(stream, format!("bad hello: {error}"))),
    };
    let Auth::Hello { magic, version, nonce } = hello else {
        return Err(refuse(stream, "expected a hello".into()));
    };
    if magic != MAGIC || version != PROTOCOL_VERSION {
        return Err(refuse(
            stream,
            format!("protocol {magic} v{version}, this agent speaks {MAGIC} v{PROTOCOL_VERSION}"),
        ));
    }
    let mut handshake = AgentHandshake::new(config.token.clone(), random_bytes()?);
    let (agent_nonce, proof) = match handshake.challenge(&nonce) {
        Ok(answer) => answer,
        Err(error) => return Err(refuse(stream, error.to_string())),
    };
    write_frame(stream, &Auth::Challenge { nonce: agent_nonce, proof })?;
    match read_frame::<Auth>(stream, MAX_UNAUTHENTICATED_FRAME) {
        Ok(Auth::Proof { proof }) => match handshake.verify(&proof) {
            Ok(()) => Ok(()),
            Err(error) => Err(refuse(stream, error.to_string())),
        },
        // The coordinator refused us (it could not verify our proof: a different token).
        Ok(Auth::Refused { reason }) => Err(BurninError::Auth(format!("the coordinator refused: {reason}"))),
        Ok(_) => Err(refuse(stream, "expected a proof".into())),
        Err(error) => Err(refuse(stream, format!("bad proof message: {error}"))),
    }
}

fn connection(
    mut stream: TcpStream,
    peer: SocketAddr,
    config: &AgentConfig,
    authenticated: &mut bool,
) -> Result<(), BurninError> {
    let _ = stream.set_nodelay(true);
    authenticate(&mut stream, config).map_err(|e| BurninError::Auth(format!("authentication failed: {e}")))?;
    *authenticated = true;
    let rails = config.rails_seen_from(stream.local_addr().ok().map(|a| a.ip()));
    let hostname =
        SysRoot::live().read_string("proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_default();
    write_frame(
        &mut stream,
        &Auth::Welcome { hostname, tool_version: env!("CARGO_PKG_VERSION").into(), rails: rails.clone() },
    )?;
    (config.log)(format!("{peer}: coordinator authenticated"));
    let mut sampler = Sampler::default();
    loop {
        stream.set_read_timeout(Some(config.idle_timeout)).ok();
        let request = match read_frame::<Request>(&mut stream, MAX_FRAME) {
            Ok(request) => request,
            Err(BurninError::Io(_, e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                (config.log)(format!("{peer}: coordinator disconnected"));
                return Ok(());
            }
            Err(BurninError::Protocol(reason)) => {
                // A frame we could read but not understand: answer, log, and keep the session (the
                // framing is intact).
                (config.log)(format!("{peer}: refused message: {reason}"));
                let _ = write_frame(&mut stream, &Response::Error { reason });
                continue;
            }
            Err(error @ BurninError::Oversized { .. }) => {
                // The body was not read: the stream is out of step with the framing. Answer, close.
                (config.log)(format!("{peer}: refused message: {error}"));
                let _ = write_frame(&mut stream, &Response::Error { reason: error.to_string() });
                return Ok(());
            }
            Err(error) => return Err(error),
        };
        let started = Instant::now();
        let response = match request.validate() {
            Err(reason) => {
                (config.log)(format!("{peer}: refused {}: {reason}", request.name()));
                Response::Error { reason }
            }
            Ok(()) => run_step(&request, config, &rails, &mut sampler),
        };
        if let Response::Error { reason } = &response {
            (config.log)(format!("{peer}: {} failed: {reason}", request.name()));
        }
        write_frame(&mut stream, &response)?;
        // Counter samples come after every step; a line for each would bury the rest.
        if !matches!(request, Request::SampleCounters {}) {
            (config.log)(format!("{peer}: {} done in {:.2} s", request.name(), started.elapsed().as_secs_f64()));
        }
    }
}

fn run_step(request: &Request, config: &AgentConfig, rails: &[RailAddress], sampler: &mut Sampler) -> Response {
    let error = |reason: String| Response::Error { reason };
    match request {
        Request::Ping {} => Response::Pong,
        Request::Check {} => check(),
        Request::SampleCounters {} => {
            let growth = sampler.sample(&SysRoot::live());
            Response::Counters {
                interval_s: growth.interval_s,
                totals: growth.totals,
                deltas: growth.deltas,
                findings: growth.findings,
                unreadable: growth.unreadable,
            }
        }
        Request::Loopback { rail: name, spec } => match rail(rails, name) {
            Ok(address) => loopback(address, spec, config),
            Err(reason) => error(reason),
        },
        Request::Serve { rail: name, sessions, timeout_s } => match rail(rails, name) {
            Ok(address) => match start_server(address, *sessions, Duration::from_secs(*timeout_s), config) {
                Ok(port) => Response::Serving { port },
                Err(reason) => error(reason),
            },
            Err(reason) => error(reason),
        },
        Request::Measure { server, port, spec, timeout_s } => {
            Response::Measured(measure(*server, *port, spec, Duration::from_secs(*timeout_s)))
        }
        Request::ReservePort { rail: name } => match rail(rails, name) {
            // The port is free when we answer; the collective binds it right after (a narrow race
            // another program could lose us, reported as the collective's error).
            Ok(address) => match TcpListener::bind((address, 0)).and_then(|l| l.local_addr()) {
                Ok(local) => Response::Port { port: local.port() },
                Err(e) => error(format!("no free port on {address}: {e}")),
            },
            Err(reason) => error(reason),
        },
        Request::Collective { collective, rank, world, master, master_port, bytes, iterations, timeout_s } => {
            match run_collective(*collective, *rank, *world, *master, *master_port, *bytes, *iterations, *timeout_s) {
                Ok(summary) => Response::CollectiveDone { summary },
                Err(reason) => error(reason),
            }
        }
    }
}

/// `fabricdoctor check` of this node (no counter sampling: the burn-in samples around every step).
fn check() -> Response {
    let root = SysRoot::live();
    let node = NodeSnapshot::probe(&root);
    let findings = run_checks(&node, None, &Policy::default(), &[]);
    let host = HostInfo {
        hostname: node.host.hostname.clone().unwrap_or_else(|_| "unknown-host".into()),
        kernel_release: node.host.kernel_release.clone().ok(),
        source: "live".into(),
    };
    let report = Report::new("check", vec![host], findings);
    let topology = serde_json::to_value(Topology::from_node(&node)).ok();
    Response::Checked { report: Some(Box::new(report)), topology, error: None }
}

fn bandwidth_parameters(spec: &MeasureSpec) -> RunParameters {
    RunParameters {
        operation: Operation::Write,
        test: TestKind::Bandwidth,
        transport: TransportKind::Tcp,
        size: spec.message_bytes,
        iterations: None,
        duration_ms: Some(spec.bandwidth_ms),
        bidirectional: false,
        queue_pairs: spec.queue_pairs,
        tx_depth: spec.tx_depth,
        inline_size: 0,
        validate: spec.validate,
    }
}

fn latency_parameters(spec: &MeasureSpec) -> RunParameters {
    RunParameters {
        operation: Operation::Write,
        test: TestKind::Latency,
        transport: TransportKind::Tcp,
        size: spec.latency_bytes,
        iterations: Some(spec.latency_iterations),
        duration_ms: None,
        bidirectional: false,
        queue_pairs: 1,
        tx_depth: 1,
        inline_size: 0,
        validate: spec.validate,
    }
}

/// Bandwidth then latency against a serving peer, through the perf generator.
pub fn measure(server: IpAddr, port: u16, spec: &MeasureSpec, timeout: Duration) -> Measured {
    let options = ClientOptions { server: server.to_string(), port, timeout };
    let mut measured = Measured::default();
    let mut errors = Vec::new();
    let mut path = TcpDataPath::new(Side::Client, timeout);
    match run_client_size(&options, &bandwidth_parameters(spec), &mut path) {
        Ok(run) => {
            measured.validation_errors += run.client_validation_errors + run.server.validation_errors;
            if let SizeResult::Bandwidth(b) = run.result {
                measured.bw_gbps = Some(b.bw_avg_gbps);
            }
        }
        Err(e) => errors.push(format!("bandwidth: {e}")),
    }
    let mut path = TcpDataPath::new(Side::Client, timeout);
    match run_client_size(&options, &latency_parameters(spec), &mut path) {
        Ok(run) => {
            measured.validation_errors += run.client_validation_errors + run.server.validation_errors;
            if let SizeResult::Latency(l) = run.result {
                // The median (perftest's t_typical): one scheduler hiccup must not make a pair suspect.
                measured.lat_us = Some(l.lat_typical_us);
                measured.lat_p99_us = Some(l.lat_p99_us);
            }
        }
        Err(e) => errors.push(format!("latency: {e}")),
    }
    if !errors.is_empty() {
        measured.error = Some(errors.join("; "));
    }
    measured
}

/// Listen on `address` and serve `sessions` perf sessions in the background, each within `timeout`.
fn start_server(address: IpAddr, sessions: u32, timeout: Duration, config: &AgentConfig) -> Result<u16, String> {
    let listener = TcpListener::bind((address, 0)).map_err(|e| format!("cannot listen on {address}: {e}"))?;
    let port = listener.local_addr().map_err(|e| format!("cannot listen on {address}: {e}"))?.port();
    let log = Arc::clone(&config.log);
    std::thread::Builder::new()
        .name(format!("perf server {port}"))
        .spawn(move || serve_sessions(&listener, sessions, timeout, &log))
        .map_err(|e| format!("cannot start the perf server thread: {e}"))?;
    Ok(port)
}

fn serve_sessions(listener: &TcpListener, sessions: u32, timeout: Duration, log: &Log) {
    if listener.set_nonblocking(true).is_err() {
        return;
    }
    let deadline = Instant::now() + timeout;
    let mut served = 0;
    while served < sessions {
        match listener.accept() {
            Ok((control, peer)) => {
                served += 1;
                let _ = control.set_nonblocking(false);
                let mut path_for = |_: &RunParameters| -> Result<Box<dyn DataPath>, fabricdoctor_perf::PerfError> {
                    Ok(Box::new(TcpDataPath::new(Side::Server, timeout)))
                };
                if let Err(error) = serve_session(control, &ServerConstraints::default(), timeout, &mut path_for) {
                    log(format!("perf session from {peer}: {error}"));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    log(format!("perf server: {} of {sessions} sessions came before the timeout", served));
                    return;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) => {
                log(format!("perf server: accept failed: {e}"));
                return;
            }
        }
    }
}

fn loopback(address: IpAddr, spec: &MeasureSpec, config: &AgentConfig) -> Response {
    let timeout = Duration::from_millis(spec.bandwidth_ms) + Duration::from_secs(30);
    match start_server(address, 2, timeout, config) {
        Ok(port) => Response::Measured(measure(address, port, spec, timeout)),
        Err(reason) => Response::Error { reason },
    }
}

#[expect(clippy::too_many_arguments, reason = "the fields of Request::Collective, validated there")]
fn run_collective(
    collective: CollectiveKind,
    rank: usize,
    world: usize,
    master: IpAddr,
    master_port: u16,
    bytes: u64,
    iterations: u32,
    timeout_s: u64,
) -> Result<Option<CollectiveSummary>, String> {
    let collective = match collective {
        CollectiveKind::Alltoall => Collective::AlltoAll,
        CollectiveKind::Allreduce => Collective::AllReduce,
    };
    let spec = SweepSpec {
        collective,
        sizes: vec![bytes],
        iterations,
        warmup: 1,
        check_passes: 1,
        data_type: DataType::F32,
        op: ReduceOp::Sum,
        root: 0,
        corrupt_rank: None,
        average: TimeAverage::Maximum,
    };
    let fingerprint = serde_json::to_string(&spec).map_err(|e| e.to_string())?;
    let rendezvous = Rendezvous {
        rank,
        world,
        master_host: master.to_string(),
        master_port,
        channels: 1,
        timeout: Duration::from_secs(timeout_s),
        fingerprint,
    };
    let mut communicator = Communicator::connect(&rendezvous, collective == Collective::AlltoAll, &Transport::Tcp)
        .map_err(|e| format!("rendezvous at {master}:{master_port}: {e}"))?;
    let rows = run_sweep(&mut communicator, &spec).map_err(|e| format!("{}: {e}", collective.name()))?;
    Ok(rows.first().map(|row| {
        let m = &row.out_of_place;
        CollectiveSummary {
            time_us: m.time_us,
            // nccl-tests' GB/s are 10^9 bytes; the report's Gb/s are 10^9 bits.
            alg_bw_gbps: m.algbw_gbytes_per_second * 8.0,
            bus_bw_gbps: m.busbw_gbytes_per_second * 8.0,
            wrong: row.out_of_place.wrong + row.in_place.wrong,
            slowest_rank: m.slowest_rank,
            rank_time_us: m.rank_time_us.clone(),
        }
    }))
}
