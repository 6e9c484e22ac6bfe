//! `fabricdoctor agent`: listens on the address it is given, authenticates each coordinator
//! (crate::auth), then runs only the typed steps of crate::protocol, one at a time per connection,
//! each bounded by its own timeout. Every refused or malformed message gets an error answer and a
//! log line; a failing step never takes the agent down.

use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fabricdoctor_checks::profile::NodeProfile;
use fabricdoctor_checks::{run_checks, Policy, Topology};
use fabricdoctor_perf::collective::datatype::{DataType, ReduceOp};
use fabricdoctor_perf::collective::sweep::{run_sweep, SweepSpec, TimeAverage};
use fabricdoctor_perf::collective::{AlgorithmChoice, Collective, Communicator, Mesh, Rendezvous, Transport};
use fabricdoctor_perf::generator::{
    run_client_size, serve_session, ClientOptions, DataPath, Side, SizeResult, TcpDataPath,
};
use fabricdoctor_perf::handshake::ServerConstraints;
use fabricdoctor_perf::verbs::stream::StreamOptions;
use fabricdoctor_perf::verbs::{Traffic, VerbsDataPath};
use fabricdoctor_perf::{Operation, RunParameters, TestKind, TransportKind};
use fabricdoctor_probes::rdma::{read_rdma_devices, GidType, RdmaDevice};
use fabricdoctor_probes::{NodeSnapshot, SysRoot};
use fabricdoctor_report::{HostInfo, Report};

use crate::auth::{random_bytes, AgentHandshake, Session, Token};
use crate::counters::Sampler;
use crate::protocol::{
    read_frame, read_sealed, write_frame, write_sealed, AgentLimits, Auth, CollectiveKind, CollectiveSummary,
    DataTransport, MeasureSpec, Measured, RailAddress, RailLink, Request, Response, TrafficSpec, MAGIC, MAX_FRAME,
    MAX_UNAUTHENTICATED_FRAME, PROTOCOL_VERSION,
};
use crate::BurninError;

/// Where agent log lines go (the CLI prints them on stderr).
pub type Log = Arc<dyn Fn(String) + Send + Sync>;

#[derive(Clone)]
pub struct AgentConfig {
    pub token: Token,
    /// Data addresses by rail; the first is the default.
    pub rails: Vec<RailAddress>,
    /// Simultaneous authenticated coordinator sessions; more are refused (after their handshake, so
    /// only a peer holding the token can take a session's place).
    pub max_connections: usize,
    /// How long an unauthenticated peer may take to finish the whole handshake.
    pub handshake_timeout: Duration,
    /// Handshakes in progress at once (a pool apart from the sessions), and from one source address;
    /// beyond either, the oldest pending handshake (of that source first) is cut off.
    pub max_handshakes: usize,
    pub max_handshakes_per_source: usize,
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
            // A coordinator on the same fabric answers in milliseconds; a peer that has not
            // finished in 2 s is not one, and must not hold a place longer.
            handshake_timeout: Duration::from_secs(2),
            max_handshakes: 16,
            max_handshakes_per_source: 4,
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
                Some(ip) if r.address.is_unspecified() => RailAddress { address: ip, ..r.clone() },
                _ => r.clone(),
            })
            .collect()
    }
}

fn rail<'a>(rails: &'a [RailAddress], name: &str) -> Result<&'a RailAddress, String> {
    rails.iter().find(|r| r.name == name).ok_or_else(|| format!("no rail named {name:?} on this agent"))
}

/// The RDMA device port and GID a rail's verbs traffic uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RailPort {
    pub device: String,
    pub port: u8,
    /// `None`: the port's RoCE v2 GID of its netdev's IPv4 address (perf's choose_gid_index).
    pub gid_index: Option<u32>,
    /// Traffic class and service level of the step's queue pairs.
    pub traffic: Traffic,
}

impl RailPort {
    /// The port as a step asks for it: its traffic class and service level, and its GID index where
    /// the step names one.
    fn with(mut self, traffic: TrafficSpec) -> RailPort {
        self.gid_index = traffic.gid_index.or(self.gid_index);
        self.traffic = Traffic {
            traffic_class: traffic.traffic_class.unwrap_or(0),
            service_level: traffic.service_level.unwrap_or(0),
        };
        self
    }
}

/// The device port of a rail: the one named by `--rail NAME=IP@DEVICE`, else the port whose GID
/// table holds the rail's address (RoCE puts each IP address of the port's netdev in its GID table,
/// an IPv4 address as ::ffff:a.b.c.d; Documentation/ABI/stable/sysfs-class-infiniband, gids/N). The
/// GID of the address is preferred as RoCE v2 (routable, what NCCL_IB_GID_INDEX names), else v1.
pub fn rail_port(devices: &[RdmaDevice], address: IpAddr, device: Option<&str>) -> Result<RailPort, String> {
    let holds = |gid: &std::net::Ipv6Addr| match address {
        IpAddr::V4(v4) => gid.to_ipv4_mapped() == Some(v4),
        IpAddr::V6(v6) => *gid == v6,
    };
    let mut found: Vec<(RailPort, bool)> = Vec::new();
    for candidate in devices.iter().filter(|d| device.is_none_or(|name| d.name == name)) {
        for port in &candidate.ports {
            for gid in port.gids.iter().filter(|g| holds(&g.gid)) {
                let Ok(number) = u8::try_from(port.number) else { continue };
                let rail_port = RailPort {
                    device: candidate.name.clone(),
                    port: number,
                    gid_index: Some(gid.index),
                    traffic: Traffic::default(),
                };
                found.push((rail_port, gid.gid_type == Some(GidType::RoceV2)));
            }
        }
    }
    found.sort_by_key(|(_, v2)| !v2);
    if let Some((port, _)) = found.into_iter().next() {
        return Ok(port);
    }
    match device {
        Some(name) if devices.iter().any(|d| d.name == name) => {
            // A named device whose table lacks the address (InfiniBand GIDs are not IP addresses):
            // port 1 and the transport's own GID choice.
            Ok(RailPort { device: name.to_string(), port: 1, gid_index: None, traffic: Traffic::default() })
        }
        Some(name) => {
            let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
            Err(format!("no RDMA device {name} on this host (devices: {})", list_or_none(&names)))
        }
        None if devices.is_empty() => Err("no RDMA device on this host (/sys/class/infiniband is empty)".into()),
        None => Err(format!(
            "no RDMA device has {address} in its GID table; name the device with --rail NAME={address}@DEVICE"
        )),
    }
}

fn list_or_none(names: &[&str]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// Where a step runs and over what, for its errors: "host H rail R (device D)".
struct Place<'a> {
    hostname: &'a str,
    rail: &'a RailAddress,
}

impl Place<'_> {
    fn describe(&self, port: Option<&RailPort>) -> String {
        let device = port.map(|p| p.device.as_str()).or(self.rail.device.as_deref()).unwrap_or("none");
        format!("host {} rail {} device {device}", self.hostname, self.rail.name)
    }

    /// The rail's device port when `transport` is verbs; an error naming the place otherwise.
    fn verbs_port(&self, transport: DataTransport, traffic: TrafficSpec) -> Result<Option<RailPort>, String> {
        if transport == DataTransport::Tcp {
            return Ok(None);
        }
        let mut unreadable = Vec::new();
        let devices = read_rdma_devices(&SysRoot::live(), &mut unreadable).unwrap_or_default();
        rail_port(&devices, self.rail.address, self.rail.device.as_deref())
            .map(|port| Some(port.with(traffic)))
            .map_err(|e| format!("{}: verbs: {e}", self.describe(None)))
    }
}

/// The rail an agent listening on `listen` uses when none are given: the listen address itself. An
/// agent listening on every address (0.0.0.0) announces, per coordinator, the local address that
/// coordinator reached it on.
pub fn default_rails(listen: SocketAddr) -> Vec<RailAddress> {
    vec![RailAddress { name: "default".into(), address: listen.ip(), device: None, link: None }]
}

/// The physical link rate behind a rail, read from `root`: the RDMA port carrying it (its sysfs
/// `rate`, Documentation/ABI/stable/sysfs-class-infiniband) when a hardware device holds the address,
/// else the speed of the network interface `interface` that holds it (sysfs `speed` in Mb/s,
/// Documentation/ABI/testing/sysfs-class-net). Software RDMA devices (rxe, siw) and interfaces
/// without a `device` link (veth, bridges, bonds' slaves aside, lo) have no physical rate of their
/// own: a veth reports 10000 Mb/s whatever it carries, so that figure is not an expectation.
pub fn rail_link(root: &SysRoot, rail: &RailAddress, interface: Option<&str>) -> RailLink {
    let mut unreadable = Vec::new();
    let devices = read_rdma_devices(root, &mut unreadable).unwrap_or_default();
    if let Ok(port) = rail_port(&devices, rail.address, rail.device.as_deref()) {
        let device = devices.iter().find(|d| d.name == port.device);
        let rate = device
            .filter(|d| !d.software)
            .and_then(|d| d.ports.iter().find(|p| p.number == u32::from(port.port)))
            .and_then(|p| p.rate.as_ref().ok());
        if let Some(rate) = rate {
            return RailLink {
                gbps: Some(rate.gbps),
                detail: format!("{} port {} rate {}", port.device, port.port, rate.text.trim()),
            };
        }
    }
    let Some(interface) = interface else {
        return RailLink { gbps: None, detail: format!("no interface holds {}", rail.address) };
    };
    if !root.exists(format!("sys/class/net/{interface}/device")) {
        return RailLink {
            gbps: None,
            detail: format!("{interface} is a virtual interface (no physical device, so no line rate)"),
        };
    }
    match fabricdoctor_probes::netdev::read_net_device(root, interface) {
        Ok(netdev) => match netdev.speed_mbps.filter(|&mbps| mbps > 0 && mbps != u32::MAX) {
            Some(mbps) => {
                RailLink { gbps: Some(f64::from(mbps) / 1000.0), detail: format!("{interface} speed {mbps} Mb/s") }
            }
            None => RailLink { gbps: None, detail: format!("{interface} link speed unknown (link down?)") },
        },
        Err(error) => RailLink { gbps: None, detail: format!("{interface}: {error}") },
    }
}

/// The interface holding `address` on this host (getifaddrs(3)).
pub fn interface_of(address: IpAddr) -> Option<String> {
    let addresses = nix::ifaddrs::getifaddrs().ok()?;
    for entry in addresses {
        let held = entry.address.as_ref().and_then(|a| {
            a.as_sockaddr_in()
                .map(|v4| IpAddr::V4(v4.ip()))
                .or_else(|| a.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip())))
        });
        if held == Some(address) {
            return Some(entry.interface_name);
        }
    }
    None
}

/// One of a limited number of places (an agent's sessions, `serve`'s scrape connections), given
/// back when its holder ends, also by a panic's unwinding (issue #19: a counter decremented by code
/// after the work leaked a place per panic until the agent answered "agent busy" forever).
#[derive(Debug)]
pub struct ConnectionPlace {
    taken: Arc<AtomicUsize>,
}

impl ConnectionPlace {
    /// Take one of `limit` places, or `None` when all are taken.
    pub fn take(taken: &Arc<AtomicUsize>, limit: usize) -> Option<ConnectionPlace> {
        let mut now = taken.load(Ordering::SeqCst);
        loop {
            if now >= limit {
                return None;
            }
            match taken.compare_exchange(now, now + 1, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => return Some(ConnectionPlace { taken: Arc::clone(taken) }),
                Err(actual) => now = actual,
            }
        }
    }
}

impl Drop for ConnectionPlace {
    fn drop(&mut self) {
        self.taken.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Unauthenticated connections still in their handshake: each with its source, when it came, and
/// a handle to cut it off. A small pool apart from the sessions, so connections that never prove
/// anything cannot keep a coordinator out: past the pool's size (or a source's share of it) the
/// oldest is cut off, and none lives past the handshake timeout.
#[derive(Default)]
struct Handshakes {
    pending: std::sync::Mutex<Vec<Pending>>,
    next: std::sync::atomic::AtomicU64,
}

struct Pending {
    id: u64,
    source: IpAddr,
    since: Instant,
    stream: TcpStream,
}

impl Handshakes {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Pending>> {
        self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Register a new handshake from `source`, cutting off the oldest of that source when it holds
    /// `per_source`, else the oldest of all when the pool holds `limit`. Returns its id and the cut.
    fn admit(&self, source: IpAddr, stream: TcpStream, limit: usize, per_source: usize) -> (u64, Vec<IpAddr>) {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        let mut pending = self.lock();
        let mut cut = Vec::new();
        let mut evict = |pending: &mut Vec<Pending>, index: usize| {
            let old = pending.remove(index);
            let _ = old.stream.shutdown(std::net::Shutdown::Both);
            cut.push(old.source);
        };
        // Oldest first: the vector is in arrival order.
        if pending.iter().filter(|p| p.source == source).count() >= per_source {
            if let Some(index) = pending.iter().position(|p| p.source == source) {
                evict(&mut pending, index);
            }
        }
        if pending.len() >= limit && !pending.is_empty() {
            evict(&mut pending, 0);
        }
        pending.push(Pending { id, source, since: Instant::now(), stream });
        (id, cut)
    }

    /// The handshake ended (either way): it no longer counts.
    fn finish(&self, id: u64) {
        self.lock().retain(|p| p.id != id);
    }

    /// Cut off every handshake older than `limit`; returns their sources.
    fn expire(&self, limit: Duration) -> Vec<IpAddr> {
        let mut pending = self.lock();
        let (old, young): (Vec<Pending>, Vec<Pending>) = pending.drain(..).partition(|p| p.since.elapsed() >= limit);
        *pending = young;
        old.into_iter()
            .map(|p| {
                let _ = p.stream.shutdown(std::net::Shutdown::Both);
                p.source
            })
            .collect()
    }
}

/// Removes a handshake from the pool when its thread ends, also by a panic.
struct HandshakeEntry<'a> {
    pool: &'a Handshakes,
    id: u64,
}

impl Drop for HandshakeEntry<'_> {
    fn drop(&mut self) {
        self.pool.finish(self.id);
    }
}

/// Accept coordinators until `stop` is set.
pub fn serve(listener: TcpListener, config: AgentConfig, stop: Arc<AtomicBool>) -> Result<(), BurninError> {
    listener.set_nonblocking(true).map_err(|e| BurninError::Io("agent listener".into(), e))?;
    let sessions = Arc::new(AtomicUsize::new(0));
    let handshakes = Arc::new(Handshakes::default());
    let config = Arc::new(config);
    while !stop.load(Ordering::Relaxed) {
        for source in handshakes.expire(config.handshake_timeout) {
            (config.log)(format!("{source}: cut off: no handshake within {:?}", config.handshake_timeout));
        }
        match listener.accept() {
            Ok((stream, peer)) => {
                let _ = stream.set_nonblocking(false);
                let Ok(handle) = stream.try_clone() else {
                    (config.log)(format!("{peer}: refused: cannot hold the connection"));
                    continue;
                };
                let (id, cut) =
                    handshakes.admit(peer.ip(), handle, config.max_handshakes, config.max_handshakes_per_source);
                for source in cut {
                    (config.log)(format!("{source}: cut off an unfinished handshake to admit {peer}"));
                }
                let (shared, sessions, pool, stopper) =
                    (Arc::clone(&config), Arc::clone(&sessions), Arc::clone(&handshakes), Arc::clone(&stop));
                let spawned = std::thread::Builder::new().name(format!("agent {peer}")).spawn(move || {
                    let entry = HandshakeEntry { pool: &pool, id };
                    let mut authenticated = false;
                    if let Err(error) = connection(stream, peer, &shared, &sessions, entry, &mut authenticated) {
                        (shared.log)(format!("{peer}: {error}"));
                    }
                    if authenticated && shared.exit_after_session {
                        stopper.store(true, Ordering::Relaxed);
                    }
                });
                if let Err(error) = spawned {
                    handshakes.finish(id);
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
fn authenticate(stream: &mut TcpStream, config: &AgentConfig) -> Result<Session, BurninError> {
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
    let agent_nonce = match handshake.challenge(&nonce) {
        Ok(answer) => answer,
        Err(error) => return Err(refuse(stream, error.to_string())),
    };
    write_frame(stream, &Auth::Challenge { nonce: agent_nonce })?;
    match read_frame::<Auth>(stream, MAX_UNAUTHENTICATED_FRAME) {
        Ok(Auth::Proof { proof }) => match handshake.verify(&proof) {
            Ok(session) => Ok(session),
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
    sessions: &Arc<AtomicUsize>,
    handshake: HandshakeEntry<'_>,
    authenticated: &mut bool,
) -> Result<(), BurninError> {
    let _ = stream.set_nodelay(true);
    let authenticated_session = authenticate(&mut stream, config);
    drop(handshake);
    let mut session = authenticated_session.map_err(|e| BurninError::Auth(format!("authentication failed: {e}")))?;
    // Held until this function returns or unwinds.
    let Some(_place) = ConnectionPlace::take(sessions, config.max_connections) else {
        let reason = format!("agent busy: {} coordinator sessions already open", config.max_connections);
        let _ = write_sealed(&mut stream, &mut session, &Auth::Refused { reason: reason.clone() });
        return Err(BurninError::Auth(reason));
    };
    *authenticated = true;
    let live = SysRoot::live();
    let rails: Vec<RailAddress> = config
        .rails_seen_from(stream.local_addr().ok().map(|a| a.ip()))
        .into_iter()
        .map(|rail| {
            let link = rail_link(&live, &rail, interface_of(rail.address).as_deref());
            RailAddress { link: Some(link), ..rail }
        })
        .collect();
    let hostname =
        SysRoot::live().read_string("proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_default();
    write_sealed(
        &mut stream,
        &mut session,
        &Auth::Welcome {
            hostname: hostname.clone(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            rails: rails.clone(),
            limits: AgentLimits::of_this_build(u32::try_from(config.max_connections).unwrap_or(u32::MAX)),
        },
    )?;
    (config.log)(format!("{peer}: coordinator authenticated"));
    let mut sampler = Sampler::default();
    loop {
        stream.set_read_timeout(Some(config.idle_timeout)).ok();
        let request = match read_sealed::<Request>(&mut stream, &mut session, MAX_FRAME) {
            Ok(request) => request,
            Err(BurninError::Io(_, e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                (config.log)(format!("{peer}: coordinator disconnected"));
                return Ok(());
            }
            Err(BurninError::Protocol(reason)) => {
                // A genuine frame we could not understand: answer, log, and keep the session (the
                // framing is intact).
                (config.log)(format!("{peer}: refused message: {reason}"));
                write_sealed(&mut stream, &mut session, &Response::Error { reason })?;
                continue;
            }
            Err(error @ BurninError::Oversized { .. }) => {
                // The body was not read: the stream is out of step with the framing. Answer, close.
                (config.log)(format!("{peer}: refused message: {error}"));
                let _ = write_sealed(&mut stream, &mut session, &Response::Error { reason: error.to_string() });
                return Ok(());
            }
            Err(BurninError::Auth(reason)) => {
                // Altered, injected, replayed or reflected: nothing more from this peer is trusted
                // and nothing is answered (an answer would be a tagged frame for an attacker).
                (config.log)(format!("{peer}: {reason}"));
                let _ = stream.shutdown(std::net::Shutdown::Both);
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
            Ok(()) => run_step(&request, config, &rails, &hostname, &mut sampler, &session),
        };
        if let Response::Error { reason } = &response {
            (config.log)(format!("{peer}: {} failed: {reason}", request.name()));
        }
        write_sealed(&mut stream, &mut session, &response)?;
        // Counter samples come after every step; a line for each would bury the rest.
        if !matches!(request, Request::SampleCounters {}) {
            (config.log)(format!("{peer}: {} done in {:.2} s", request.name(), started.elapsed().as_secs_f64()));
        }
    }
}

fn run_step(
    request: &Request,
    config: &AgentConfig,
    rails: &[RailAddress],
    hostname: &str,
    sampler: &mut Sampler,
    session: &Session,
) -> Response {
    let error = |reason: String| Response::Error { reason };
    let place = |name: &str| rail(rails, name).map(|rail| Place { hostname, rail });
    match request {
        Request::Ping {} => Response::Pong,
        Request::Check { profile } => check(profile.as_deref()),
        Request::SampleCounters {} => {
            let growth = sampler.sample(&SysRoot::live());
            Response::Counters {
                interval_s: growth.interval_s,
                totals: growth.totals,
                deltas: growth.deltas,
                findings: growth.findings,
                unreadable: growth.unreadable,
                observable: growth.observable,
                tcp_retransmits: growth.tcp_retransmits,
                tcp_segments_sent: growth.tcp_segments_sent,
                optics: growth.optics,
            }
        }
        Request::Loopback { rail: name, spec } => match place(name) {
            Ok(place) => loopback(&place, spec, config),
            Err(reason) => error(reason),
        },
        Request::Serve { rail: name, sessions, timeout_s, transport, traffic, ticket_nonce } => {
            let ticket = session.ticket(name, ticket_nonce);
            let started = place(name).and_then(|place| {
                let port = place.verbs_port(*transport, *traffic)?;
                start_server(&place, port, *sessions, Duration::from_secs(*timeout_s), config, ticket)
            });
            match started {
                Ok(port) => Response::Serving { port },
                Err(reason) => error(reason),
            }
        }
        Request::Measure { server, port, spec, timeout_s, rail: name, ticket } => {
            // A coordinator that names no rail measures from the first (the default).
            let name = name.as_deref().or(rails.first().map(|r| r.name.as_str())).unwrap_or("default");
            match place(name).and_then(|place| place.verbs_port(spec.transport, spec.traffic).map(|port| (place, port)))
            {
                Ok((place, verbs)) => Response::Measured(measure(
                    Endpoint { from: place.rail.address, server: *server, port: *port, ticket: ticket.clone() },
                    spec,
                    Duration::from_secs(*timeout_s),
                    verbs.as_ref().map(|v| (v, place.describe(Some(v)))),
                )),
                Err(reason) => error(reason),
            }
        }
        Request::MeasureRails { targets, spec, timeout_s } => {
            let prepared: Result<Vec<_>, String> = targets
                .iter()
                .map(|target| {
                    let place = place(&target.rail)?;
                    let verbs = place.verbs_port(spec.transport, spec.traffic)?;
                    Ok((target, place, verbs))
                })
                .collect();
            match prepared {
                Ok(prepared) => Response::MeasuredRails { results: measure_rails(&prepared, spec, *timeout_s) },
                Err(reason) => error(reason),
            }
        }
        Request::ReservePort { rail: name } => match rail(rails, name) {
            // The port is free when we answer; the collective binds it right after (a narrow race
            // another program could lose us, reported as the collective's error).
            Ok(rail) => match TcpListener::bind((rail.address, 0)).and_then(|l| l.local_addr()) {
                Ok(local) => Response::Port { port: local.port() },
                Err(e) => error(format!("no free port on {}: {e}", rail.address)),
            },
            Err(reason) => error(reason),
        },
        Request::Collective {
            collective,
            rank,
            world,
            master,
            master_port,
            bytes,
            iterations,
            timeout_s,
            transport,
            traffic,
            rail: name,
            ticket,
        } => {
            let name = name.as_deref().or(rails.first().map(|r| r.name.as_str())).unwrap_or("default");
            let timeout = Duration::from_secs(*timeout_s);
            let setup = place(name).and_then(|place| {
                let verbs = place.verbs_port(*transport, *traffic)?;
                let described = place.describe(verbs.as_ref());
                Ok((verbs, described, place.rail.address))
            });
            let (verbs, described, bind) = match setup {
                Ok(setup) => setup,
                Err(reason) => return error(reason),
            };
            let data = match verbs {
                None => Transport::Tcp,
                Some(port) => Transport::Verbs(StreamOptions {
                    device: Some(port.device),
                    port: port.port,
                    gid_index: port.gid_index,
                    timeout,
                    traffic: port.traffic,
                }),
            };
            let collective = CollectiveStep {
                collective: *collective,
                rank: *rank,
                world: *world,
                master: *master,
                master_port: *master_port,
                bytes: *bytes,
                iterations: *iterations,
                timeout,
                bind,
                ticket: ticket.clone(),
            };
            match run_collective(&collective, &data, transport.name()) {
                Ok(summary) => Response::CollectiveDone { summary },
                Err(reason) if *transport == DataTransport::Verbs => error(format!("{described}: {reason}")),
                Err(reason) => error(reason),
            }
        }
    }
}

/// `fabricdoctor check` of this node (no counter sampling: the burn-in samples around every step).
fn check(profile: Option<&NodeProfile>) -> Response {
    let root = SysRoot::live();
    let mut node = NodeSnapshot::probe(&root);
    node.read_optics(&root);
    let policy = match profile {
        Some(profile) => Policy::default().with_profile(profile.clone()),
        None => Policy::default(),
    };
    let findings = run_checks(&node, None, &policy, &[]);
    let host = HostInfo {
        hostname: node.host.hostname.clone().unwrap_or_else(|_| "unknown-host".into()),
        kernel_release: node.host.kernel_release.clone().ok(),
        source: "live".into(),
    };
    let report = Report::new("check", vec![host], findings);
    let topology = serde_json::to_value(Topology::from_node(&node)).ok();
    Response::Checked { report: Some(Box::new(report)), topology, error: None }
}

fn transport_kind(transport: DataTransport) -> TransportKind {
    match transport {
        DataTransport::Tcp => TransportKind::Tcp,
        DataTransport::Verbs => TransportKind::Verbs,
    }
}

/// The client side's data path of one perf session.
fn client_path(verbs: Option<&RailPort>, timeout: Duration) -> Box<dyn DataPath> {
    match verbs {
        None => Box::new(TcpDataPath::new(Side::Client, timeout)),
        Some(port) => Box::new(
            VerbsDataPath::new(Side::Client, Some(port.device.clone()), port.port, port.gid_index, timeout)
                .with_traffic(port.traffic),
        ),
    }
}

/// The bandwidth test: RDMA WRITE over TCP's byte stream (perf's emulation), and SEND over verbs,
/// where the receiver then completes, counts and checks every message (ib_send_bw); a one-sided
/// WRITE leaves the receiver nothing to count in duration mode, and the burn-in's "zero data errors"
/// needs the receiver's count.
fn bandwidth_parameters(spec: &MeasureSpec) -> RunParameters {
    RunParameters {
        operation: match spec.transport {
            DataTransport::Tcp => Operation::Write,
            DataTransport::Verbs => Operation::Send,
        },
        test: TestKind::Bandwidth,
        transport: transport_kind(spec.transport),
        size: spec.message_bytes,
        iterations: None,
        duration_ms: Some(spec.bandwidth_ms),
        bidirectional: false,
        queue_pairs: spec.queue_pairs,
        tx_depth: spec.tx_depth,
        inline_size: 0,
        validate: spec.validate,
        validation_seed: 0,
        traffic_class: None,
        service_level: None,
        post_list: 1,
    }
}

fn latency_parameters(spec: &MeasureSpec) -> RunParameters {
    RunParameters {
        operation: Operation::Write,
        test: TestKind::Latency,
        transport: transport_kind(spec.transport),
        size: spec.latency_bytes,
        iterations: Some(spec.latency_iterations),
        duration_ms: None,
        bidirectional: false,
        queue_pairs: 1,
        tx_depth: 1,
        // perftest ib_write_lat sends its small messages inline.
        inline_size: fabricdoctor_perf::params::default_inline(Operation::Write, TestKind::Latency),
        validate: spec.validate,
        validation_seed: 0,
        traffic_class: None,
        service_level: None,
        post_list: 1,
    }
}

/// Every target of a `MeasureRails` at once, one thread each, so the host's NICs carry load together
/// (a shared PCIe root complex or a power/thermal limit only shows then).
fn measure_rails(
    prepared: &[(&crate::protocol::RailTarget, Place<'_>, Option<RailPort>)],
    spec: &MeasureSpec,
    timeout_s: u64,
) -> Vec<Measured> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = prepared
            .iter()
            .map(|(target, place, verbs)| {
                scope.spawn(move || {
                    measure(
                        Endpoint {
                            from: place.rail.address,
                            server: target.server,
                            port: target.port,
                            ticket: target.ticket.clone(),
                        },
                        spec,
                        Duration::from_secs(timeout_s),
                        verbs.as_ref().map(|v| (v, place.describe(Some(v)))),
                    )
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle.join().unwrap_or_else(|_| Measured {
                    error: Some("the measurement thread panicked".into()),
                    ..Measured::default()
                })
            })
            .collect()
    })
}

/// Bandwidth then latency against a serving peer, through the perf generator; over verbs on `verbs`'s
/// device port (with where it runs, for the errors), else over TCP.
/// Where a measurement goes: from this rail's address to a serving peer, with the peer's ticket.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub from: IpAddr,
    pub server: IpAddr,
    pub port: u16,
    pub ticket: String,
}

pub fn measure(
    endpoint: Endpoint,
    spec: &MeasureSpec,
    timeout: Duration,
    verbs: Option<(&RailPort, String)>,
) -> Measured {
    let Endpoint { from, server, port, ticket } = endpoint;
    // Sent from the rail's own address: where each NIC routes by source (multi-rail hosts), the
    // traffic leaves by the rail being measured, also when the server is on another rail.
    let local = (!from.is_unspecified()).then_some(from);
    let options = ClientOptions { server: server.to_string(), port, timeout, local, ticket: Some(ticket) };
    let mut measured = Measured::default();
    let mut errors = Vec::new();
    let device = verbs.as_ref().map(|(port, _)| *port);
    let mut path = client_path(device, timeout);
    match run_client_size(&options, &bandwidth_parameters(spec), path.as_mut()) {
        Ok(run) => {
            measured.validation_errors += run.client_validation_errors + run.server.validation_errors;
            measured.verified_bytes += run.client_verified.bytes + run.server.verified.bytes;
            if let SizeResult::Bandwidth(b) = run.result {
                measured.bw_gbps = Some(b.bw_avg_gbps);
            }
        }
        // Data that arrived wrong is a data error of the pair, not a failed measurement.
        Err(fabricdoctor_perf::PerfError::Validation(text)) => {
            measured.validation_errors += 1;
            measured.corruption.get_or_insert(format!("bandwidth: {text}"));
        }
        Err(e) => errors.push(format!("bandwidth: {e}")),
    }
    let mut path = client_path(device, timeout);
    match run_client_size(&options, &latency_parameters(spec), path.as_mut()) {
        Ok(run) => {
            measured.validation_errors += run.client_validation_errors + run.server.validation_errors;
            measured.verified_bytes += run.client_verified.bytes + run.server.verified.bytes;
            if let SizeResult::Latency(l) = run.result {
                // The median (perftest's t_typical): one scheduler hiccup must not make a pair suspect.
                measured.lat_us = Some(l.lat_typical_us);
                measured.lat_p99_us = Some(l.lat_p99_us);
            }
        }
        Err(fabricdoctor_perf::PerfError::Validation(text)) => {
            measured.validation_errors += 1;
            measured.corruption.get_or_insert(format!("latency: {text}"));
        }
        Err(e) => errors.push(format!("latency: {e}")),
    }
    if !errors.is_empty() {
        let errors = errors.join("; ");
        measured.error = Some(match &verbs {
            Some((_, place)) => format!("{place} to {server}: verbs: {errors}"),
            None => errors,
        });
    }
    measured
}

/// Listen on the rail's address and serve `sessions` perf sessions in the background, each within
/// `timeout`, over verbs on `verbs` when the client asks for verbs (and it is given).
fn start_server(
    place: &Place<'_>,
    verbs: Option<RailPort>,
    sessions: u32,
    timeout: Duration,
    config: &AgentConfig,
    ticket: String,
) -> Result<u16, String> {
    let address = place.rail.address;
    let listener = TcpListener::bind((address, 0)).map_err(|e| format!("cannot listen on {address}: {e}"))?;
    let port = listener.local_addr().map_err(|e| format!("cannot listen on {address}: {e}"))?.port();
    let log = Arc::clone(&config.log);
    let described = place.describe(verbs.as_ref());
    std::thread::Builder::new()
        .name(format!("perf server {port}"))
        .spawn(move || serve_sessions(&listener, sessions, timeout, verbs.as_ref(), &described, &log, ticket))
        .map_err(|e| format!("cannot start the perf server thread: {e}"))?;
    Ok(port)
}

/// Serve `sessions` sessions that present `ticket`; a connection without it is refused before
/// anything is allocated and does not count, so a stranger who connects first takes nothing.
fn serve_sessions(
    listener: &TcpListener,
    sessions: u32,
    timeout: Duration,
    verbs: Option<&RailPort>,
    described: &str,
    log: &Log,
    ticket: String,
) {
    if listener.set_nonblocking(true).is_err() {
        return;
    }
    let constraints = ServerConstraints {
        ticket: Some(ticket),
        // The coordinator's client sends its hello at once; a silent stranger holds the server no
        // longer than this.
        hello_timeout: Some(Duration::from_secs(2)),
        ..ServerConstraints::default()
    };
    let deadline = Instant::now() + timeout;
    let mut served = 0;
    while served < sessions {
        match listener.accept() {
            Ok((control, peer)) => {
                served += 1;
                let _ = control.set_nonblocking(false);
                // The client's handshake names the transport; a rail set up for TCP refuses verbs.
                let mut path_for =
                    |parameters: &RunParameters| -> Result<Box<dyn DataPath>, fabricdoctor_perf::PerfError> {
                        match (parameters.transport, verbs) {
                            (TransportKind::Tcp, _) => Ok(Box::new(TcpDataPath::new(Side::Server, timeout))),
                            (TransportKind::Verbs, Some(port)) => Ok(Box::new(
                                VerbsDataPath::new(
                                    Side::Server,
                                    Some(port.device.clone()),
                                    port.port,
                                    port.gid_index,
                                    timeout,
                                )
                                .with_traffic(port.traffic),
                            )),
                            (TransportKind::Verbs, None) => Err(fabricdoctor_perf::PerfError::Unsupported(format!(
                                "{described}: serving TCP only; the step asked for verbs"
                            ))),
                        }
                    };
                match serve_session(control, &constraints, timeout, &mut path_for) {
                    Ok(_) => {}
                    Err(error @ fabricdoctor_perf::PerfError::NoTicket { .. }) => {
                        served -= 1;
                        log(format!("perf session from {peer} ({described}): {error}"));
                    }
                    Err(error) => log(format!("perf session from {peer} ({described}): {error}")),
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

fn loopback(place: &Place<'_>, spec: &MeasureSpec, config: &AgentConfig) -> Response {
    let timeout = Duration::from_millis(spec.bandwidth_ms) + Duration::from_secs(30);
    let verbs = match place.verbs_port(spec.transport, spec.traffic) {
        Ok(verbs) => verbs,
        Err(reason) => return Response::Error { reason },
    };
    // A ticket of the agent's own: nobody else may take the loopback's session either.
    let ticket = match random_bytes::<32>() {
        Ok(bytes) => crate::auth::hex(&bytes),
        Err(error) => return Response::Error { reason: error.to_string() },
    };
    match start_server(place, verbs.clone(), 2, timeout, config, ticket.clone()) {
        Ok(port) => Response::Measured(measure(
            Endpoint { from: place.rail.address, server: place.rail.address, port, ticket },
            spec,
            timeout,
            verbs.as_ref().map(|v| (v, place.describe(Some(v)))),
        )),
        Err(reason) => Response::Error { reason },
    }
}

/// The fields of `Request::Collective` the agent runs.
#[derive(Clone)]
struct CollectiveStep {
    collective: CollectiveKind,
    rank: usize,
    world: usize,
    master: IpAddr,
    master_port: u16,
    bytes: u64,
    iterations: u32,
    timeout: Duration,
    /// The rail's address: rank 0's rendezvous and the data listeners bind it, nothing wider.
    bind: IpAddr,
    ticket: String,
}

fn run_collective(
    step: &CollectiveStep,
    transport: &Transport,
    transport_name: &str,
) -> Result<Option<CollectiveSummary>, String> {
    let CollectiveStep { collective, rank, world, master, master_port, bytes, iterations, timeout, bind, .. } =
        step.clone();
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
        algorithm: AlgorithmChoice::Auto,
    };
    // Every rank must agree on the data path too (rank 0 refuses a mismatched fingerprint).
    let fingerprint = serde_json::to_string(&(&spec, transport_name)).map_err(|e| e.to_string())?;
    let rendezvous = Rendezvous {
        rank,
        world,
        master_host: master.to_string(),
        master_port,
        channels: 1,
        timeout,
        fingerprint,
        // An unspecified rail address (an agent listening on 0.0.0.0 with no rails) binds all.
        bind: (!bind.is_unspecified()).then_some(bind),
        ticket: Some(step.ticket.clone()),
    };
    let mesh = Mesh::for_collective(collective, spec.algorithm);
    let mut communicator = Communicator::connect(&rendezvous, mesh, transport)
        .map_err(|e| format!("rendezvous at {master}:{master_port}: {e}"))?;
    let sweep = run_sweep(&mut communicator, &spec).map_err(|e| format!("{}: {e}", collective.name()))?;
    Ok(sweep.rows.first().map(|row| {
        let m = &row.out_of_place;
        CollectiveSummary {
            time_us: m.time_us,
            // nccl-tests' GB/s are 10^9 bytes; the report's Gb/s are 10^9 bits.
            alg_bw_gbps: m.algbw_gbytes_per_second * 8.0,
            bus_bw_gbps: m.busbw_gbytes_per_second * 8.0,
            wrong: row.out_of_place.wrong + row.in_place.wrong,
            slowest_rank: m.slowest_rank,
            rank_time_us: m.rank_time_us.clone(),
            algorithm: Some(row.algorithm.name().to_string()),
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step that panics gives its session's place back as it unwinds (issue #19: eight panics
    /// left the agent answering "agent busy" forever).
    #[test]
    fn a_panicking_session_gives_its_place_back() {
        let taken = Arc::new(AtomicUsize::new(0));
        for _ in 0..20 {
            let held = Arc::clone(&taken);
            let outcome = std::thread::spawn(move || {
                let _place = ConnectionPlace::take(&held, 8).expect("a free place");
                panic!("a hostile peer's input");
            })
            .join();
            assert!(outcome.is_err());
        }
        assert_eq!(taken.load(Ordering::SeqCst), 0);
        let places: Vec<ConnectionPlace> = (0..8).filter_map(|_| ConnectionPlace::take(&taken, 8)).collect();
        assert_eq!(places.len(), 8);
        assert!(ConnectionPlace::take(&taken, 8).is_none(), "a ninth session while eight are open");
    }

    /// The handshake pool: a source past its share gives way first (its oldest), then the oldest
    /// of all; finished or expired handshakes leave it.
    #[test]
    fn the_handshake_pool_cuts_off_the_oldest() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let address = listener.local_addr().expect("address");
        let mut held = Vec::new();
        let mut stream = || {
            let client = TcpStream::connect(address).expect("connect");
            held.push(client);
            listener.accept().expect("accept").0
        };
        let pool = Handshakes::default();
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().expect("ip"), "10.0.0.2".parse().expect("ip"));
        let first = pool.admit(a, stream(), 3, 2);
        assert!(first.1.is_empty());
        assert!(pool.admit(a, stream(), 3, 2).1.is_empty());
        // A third from `a` cuts `a`'s oldest, though the pool is not full.
        assert_eq!(pool.admit(a, stream(), 3, 2).1, vec![a]);
        assert!(pool.lock().iter().all(|p| p.id != first.0));
        // The pool is full (3): `b`'s first cuts the oldest of all, one of `a`'s.
        assert!(pool.admit(b, stream(), 3, 2).1.is_empty());
        assert_eq!(pool.admit(b, stream(), 3, 2).1, vec![a]);
        assert_eq!(pool.lock().len(), 3);
        let (last, _) = pool.admit(b, stream(), 4, 4);
        pool.finish(last);
        assert_eq!(pool.lock().len(), 3);
        assert_eq!(pool.expire(Duration::ZERO).len(), 3, "older than no time at all");
        assert!(pool.lock().is_empty());
    }

    fn rail(address: &str) -> RailAddress {
        RailAddress { name: "rail0".into(), address: address.parse().expect("ip"), device: None, link: None }
    }

    /// The link rate behind a rail: a software RDMA device (rxe) has no rate of its own, so its
    /// netdev is read (virtio reports -1: unknown); a physical interface gives its speed; a veth has
    /// no physical device and so no rate, whatever its `speed` says.
    #[test]
    fn a_rail_link_is_a_physical_rate_or_says_why_not() {
        let guest = SysRoot::captured(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/qemu-q35-rxe"));
        let soft = rail_link(&guest, &rail("10.77.0.2"), Some("eth2"));
        assert_eq!(soft.gbps, None, "{soft:?}");
        assert!(soft.detail.contains("eth2 link speed unknown"), "{}", soft.detail);

        let dir = tempfile::tempdir().expect("tempdir");
        let write = |path: &str, text: &str| {
            let at = dir.path().join(path);
            std::fs::create_dir_all(at.parent().expect("parent")).expect("mkdir");
            std::fs::write(at, text).expect("write");
        };
        write("sys/devices/pci0000:00/0000:00:02.0/0000:17:00.0/vendor", "0x15b3\n");
        std::fs::create_dir_all(dir.path().join("sys/class/net/ens1np0")).expect("mkdir");
        std::os::unix::fs::symlink(
            "../../../devices/pci0000:00/0000:00:02.0/0000:17:00.0",
            dir.path().join("sys/class/net/ens1np0/device"),
        )
        .expect("link");
        write("sys/class/net/ens1np0/speed", "100000\n");
        write("sys/class/net/veth3/speed", "10000\n");
        let root = SysRoot::captured(dir.path());
        let physical = rail_link(&root, &rail("10.0.0.1"), Some("ens1np0"));
        assert_eq!(physical.gbps, Some(100.0), "{physical:?}");
        let virtual_link = rail_link(&root, &rail("10.0.0.2"), Some("veth3"));
        assert_eq!(virtual_link.gbps, None);
        assert!(virtual_link.detail.contains("virtual interface"), "{}", virtual_link.detail);
        assert!(rail_link(&root, &rail("10.0.0.3"), None).detail.contains("no interface holds 10.0.0.3"));
    }

    /// The devices of the QEMU q35 guest with rxe0 on 10.77.0.2 (GID 1, RoCE v2).
    fn guest_devices() -> Vec<RdmaDevice> {
        let root = SysRoot::captured(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/qemu-q35-rxe"));
        let mut unreadable = Vec::new();
        read_rdma_devices(&root, &mut unreadable).expect("fixture devices")
    }

    #[test]
    fn a_rail_finds_the_device_whose_gid_table_holds_its_address() {
        let devices = guest_devices();
        let expected = RailPort { device: "rxe0".into(), port: 1, gid_index: Some(1), traffic: Traffic::default() };
        let address: IpAddr = "10.77.0.2".parse().expect("ip");
        assert_eq!(rail_port(&devices, address, None), Ok(expected.clone()));
        assert_eq!(rail_port(&devices, address, Some("rxe0")), Ok(expected));
    }

    #[test]
    fn a_rail_without_a_device_is_an_error_saying_what_to_do() {
        let devices = guest_devices();
        let elsewhere: IpAddr = "10.9.9.9".parse().expect("ip");
        let error = rail_port(&devices, elsewhere, None).expect_err("no device holds it");
        assert!(error.contains("no RDMA device has 10.9.9.9") && error.contains("NAME=10.9.9.9@DEVICE"), "{error}");
        let error = rail_port(&devices, elsewhere, Some("mlx5_0")).expect_err("not here");
        assert_eq!(error, "no RDMA device mlx5_0 on this host (devices: rxe0)");
        // A named device whose GIDs are not IP addresses (InfiniBand): its port 1, GID chosen later.
        assert_eq!(
            rail_port(&devices, elsewhere, Some("rxe0")),
            Ok(RailPort { device: "rxe0".into(), port: 1, gid_index: None, traffic: Traffic::default() })
        );
        let error = rail_port(&[], elsewhere, None).expect_err("no devices");
        assert!(error.starts_with("no RDMA device on this host"), "{error}");
    }
}
