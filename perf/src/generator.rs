//! The generator: runs a bandwidth or latency test for each message size over the data connections
//! a [`DataPath`] sets up, with the side channel carrying handshake, end-of-test and the server's
//! counts. Pure orchestration: numbers go through [`crate::stats`], printing is the CLI's business.

use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::accounting::{Accounting, ReverseMeasuredBy};
use crate::gpu::Gpu;
use crate::handshake::{check_hello, hello, read_frame, write_frame, Frame, ServerConstraints, PROTOCOL_VERSION};
use crate::integrity::Verified;
use crate::params::{Operation, RunParameters, TestKind};
use crate::stats::{bandwidth, CompletionTimeline, LatencyRecorder};
use crate::tcp::{End, TcpConnection};
use crate::transport::Connection;
use crate::PerfError;
pub use fabricdoctor_perf_schema::results::{ServerCounts, SizeResult, SizeRun};

/// Which end of a session a data path serves: the server prepares its endpoints before its Accept and
/// accepts the data connections; the client dials them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Client,
    Server,
}

/// Sets up the data connections of one session on one side of one transport.
pub trait DataPath {
    /// Before the handshake: this side's endpoint descriptions for the peer.
    fn prepare(&mut self, parameters: &RunParameters, control: &TcpStream) -> Result<Vec<Value>, PerfError>;
    /// After the handshake: connect to the peer's endpoints.
    fn connect(
        &mut self,
        parameters: &RunParameters,
        peer_endpoints: &[Value],
        control: &TcpStream,
    ) -> Result<Vec<Box<dyn Connection>>, PerfError>;
}

/// TCP data connections: the server listens on an ephemeral port of the control connection's local
/// address and says which; the client dials it once per queue pair.
#[derive(Debug)]
pub struct TcpDataPath {
    pub side: Side,
    pub timeout: Duration,
    listener: Option<TcpListener>,
    /// `--gpu`: messages in this GPU's memory, staged through pinned host memory.
    gpu: Option<Arc<Gpu>>,
    /// Test hook: flip a bit in every Nth message sent.
    corrupt_every: Option<u64>,
}

impl TcpDataPath {
    pub fn new(side: Side, timeout: Duration) -> TcpDataPath {
        TcpDataPath { side, timeout, listener: None, gpu: None, corrupt_every: None }
    }

    /// Flip one bit in every `every`th message this side sends (`perf client --inject-corruption`).
    pub fn with_corruption(mut self, every: Option<u64>) -> TcpDataPath {
        self.corrupt_every = every;
        self
    }

    pub fn with_gpu(mut self, gpu: Option<Arc<Gpu>>) -> TcpDataPath {
        self.gpu = gpu;
        self
    }

    fn connection(&self, stream: TcpStream, parameters: &RunParameters) -> Result<Box<dyn Connection>, PerfError> {
        let end = match self.side {
            Side::Client => End::Dialer,
            Side::Server => End::Acceptor,
        };
        let connection = TcpConnection::new(stream, parameters, self.timeout, end)?.with_corruption(self.corrupt_every);
        Ok(match &self.gpu {
            Some(gpu) => Box::new(connection.with_gpu(gpu, self.side == Side::Client)?),
            None => Box::new(connection),
        })
    }
}

fn peer_of(control: &TcpStream) -> String {
    control.peer_addr().map(|a| a.to_string()).unwrap_or_else(|_| "peer".into())
}

impl DataPath for TcpDataPath {
    /// The server binds its data port and announces it; the client has nothing to announce.
    fn prepare(&mut self, _parameters: &RunParameters, control: &TcpStream) -> Result<Vec<Value>, PerfError> {
        match self.side {
            Side::Server => tcp_server_endpoints(self, control),
            Side::Client => Ok(Vec::new()),
        }
    }

    fn connect(
        &mut self,
        parameters: &RunParameters,
        peer_endpoints: &[Value],
        control: &TcpStream,
    ) -> Result<Vec<Box<dyn Connection>>, PerfError> {
        let peer = peer_of(control);
        let mut connections: Vec<Box<dyn Connection>> = Vec::new();
        if let Some(listener) = &self.listener {
            listener.set_nonblocking(false).map_err(|source| PerfError::Io {
                peer: peer.clone(),
                during: "data accept",
                cause: source,
            })?;
            for _ in 0..connection_count(parameters) {
                let stream = accept_with_timeout(listener, self.timeout, &peer)?;
                connections.push(self.connection(stream, parameters)?);
            }
            self.listener = None;
        } else {
            let port = peer_endpoints
                .first()
                .and_then(|e| e.get("port"))
                .and_then(Value::as_u64)
                .and_then(|p| u16::try_from(p).ok())
                .ok_or_else(|| PerfError::Handshake {
                    peer: peer.clone(),
                    reason: "server gave no TCP data port".into(),
                })?;
            let mut address = control.peer_addr().map_err(|source| PerfError::Io {
                peer: peer.clone(),
                during: "data connect",
                cause: source,
            })?;
            address.set_port(port);
            // Data connections leave from the control connection's address: a client bound to a
            // rail's address keeps all its traffic on that rail.
            let local = control.local_addr().ok().map(|a| a.ip());
            for _ in 0..connection_count(parameters) {
                let stream = connect_from(&address, local, self.timeout)
                    .map_err(|source| PerfError::Connect { peer: address.to_string(), cause: source })?;
                connections.push(self.connection(stream, parameters)?);
            }
        }
        Ok(connections)
    }
}

/// Data connections a session opens: one per queue pair, twice as many when bidirectional (the second
/// half carries the server-to-client direction).
pub fn connection_count(parameters: &RunParameters) -> u32 {
    if parameters.bidirectional && parameters.test == TestKind::Bandwidth {
        parameters.queue_pairs * 2
    } else {
        parameters.queue_pairs
    }
}

/// The server side of [`TcpDataPath`]: bind before answering the hello.
fn tcp_server_endpoints(path: &mut TcpDataPath, control: &TcpStream) -> Result<Vec<Value>, PerfError> {
    let peer = peer_of(control);
    let mut local = control.local_addr().map_err(|source| PerfError::Io {
        peer: peer.clone(),
        during: "data listen",
        cause: source,
    })?;
    local.set_port(0);
    let listener = TcpListener::bind(local).map_err(|source| PerfError::Io {
        peer: peer.clone(),
        during: "data listen",
        cause: source,
    })?;
    let port =
        listener.local_addr().map_err(|source| PerfError::Io { peer, during: "data listen", cause: source })?.port();
    path.listener = Some(listener);
    Ok(vec![serde_json::json!({ "port": port })])
}

fn accept_with_timeout(listener: &TcpListener, timeout: Duration, peer: &str) -> Result<TcpStream, PerfError> {
    listener.set_nonblocking(true).map_err(|source| PerfError::Io {
        peer: peer.into(),
        during: "data accept",
        cause: source,
    })?;
    let deadline = Instant::now() + timeout;
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                stream.set_nonblocking(false).map_err(|source| PerfError::Io {
                    peer: peer.into(),
                    during: "data accept",
                    cause: source,
                })?;
                return Ok(stream);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(PerfError::PeerSilent { peer: peer.into(), waited: timeout });
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(source) => return Err(PerfError::Io { peer: peer.into(), during: "data accept", cause: source }),
        }
    }
}

/// How long the client waits for progress before declaring the peer gone.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    pub server: String,
    pub port: u16,
    pub timeout: Duration,
    /// The local address to send from (bound before connecting), so the traffic leaves by the
    /// interface that holds it where the host routes by source (one routing table per NIC, as
    /// multi-rail RoCE hosts are set up); `None`: whatever the routing table picks.
    pub local: Option<IpAddr>,
    /// The ticket the server expects (a burn-in step's), sent in the hello.
    pub ticket: Option<String>,
}

/// Connect to `address` from `local` (when given), within `timeout`.
pub fn connect_from(address: &SocketAddr, local: Option<IpAddr>, timeout: Duration) -> std::io::Result<TcpStream> {
    let Some(local) = local else {
        return TcpStream::connect_timeout(address, timeout);
    };
    let socket = socket2::Socket::new(socket2::Domain::for_address(*address), socket2::Type::STREAM, None)?;
    socket.bind(&SocketAddr::new(local, 0).into())?;
    socket.connect_timeout(&(*address).into(), timeout)?;
    Ok(socket.into())
}

/// Resolve and dial the server's control port.
pub fn dial(options: &ClientOptions) -> Result<TcpStream, PerfError> {
    let target = format!("{}:{}", options.server, options.port);
    let addresses: Vec<SocketAddr> = (options.server.as_str(), options.port)
        .to_socket_addrs()
        .map_err(|source| PerfError::Connect { peer: target.clone(), cause: source })?
        .collect();
    let mut last = None;
    for address in addresses {
        match connect_from(&address, options.local, options.timeout) {
            Ok(stream) => {
                stream.set_read_timeout(Some(options.timeout)).ok();
                stream.set_write_timeout(Some(options.timeout)).ok();
                stream.set_nodelay(true).ok();
                return Ok(stream);
            }
            Err(error) => last = Some(error),
        }
    }
    Err(PerfError::Connect {
        peer: target,
        cause: last.unwrap_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no address")),
    })
}

/// Run one size as the client: handshake, connect, measure, exchange counts.
pub fn run_client_size(
    options: &ClientOptions,
    parameters: &RunParameters,
    path: &mut dyn DataPath,
) -> Result<SizeRun, PerfError> {
    let parameters = &with_fresh_seed(parameters);
    let mut session = ClientSession::open(options, parameters, path)?;
    let mut connections = path.connect(parameters, &session.server_endpoints, &session.control)?;
    let described = connections.iter().map(|c| c.describe()).collect();
    let started = Instant::now();
    let measured = measure(&mut connections, parameters, options.timeout)?;
    for connection in connections.iter_mut() {
        connection.finish()?;
    }
    let (messages, reverse_received) = (measured.messages, measured.reverse_received);
    let (server, server_sent) = session.exchange_counts(messages)?;
    let accounting = Accounting::of(parameters.operation, &connections);
    let result = measured.result(parameters, &accounting, started, server_sent)?;
    let client_validation_errors = connections.iter().map(|c| c.validation_errors()).sum();
    let mut client_verified = Verified::default();
    for connection in &connections {
        client_verified.add(&connection.verified());
    }
    check_validation(parameters, &server, client_validation_errors, &connections)?;
    check_counts(parameters, &accounting, &server, messages, reverse_received)?;
    Ok(SizeRun {
        parameters: parameters.clone(),
        result,
        client_messages: messages,
        client_validation_errors,
        client_verified,
        server,
        connections: described,
        server_tool_version: session.server_tool_version,
    })
}

/// Each validated run gets its own stream seed, so a message of an earlier run (a stale buffer, a
/// late packet) cannot pass as one of this run's.
fn with_fresh_seed(parameters: &RunParameters) -> RunParameters {
    let mut seeded = parameters.clone();
    if seeded.validate && seeded.validation_seed == 0 {
        seeded.validation_seed = random_seed();
    }
    seeded
}

/// The client's control connection after the server accepted the run.
struct ClientSession {
    control: TcpStream,
    peer: String,
    server_endpoints: Vec<Value>,
    server_tool_version: String,
}

impl ClientSession {
    /// Dial, offer the run and this side's data endpoints, and read the server's answer: its
    /// endpoints, or its reason for refusing.
    fn open(
        options: &ClientOptions,
        parameters: &RunParameters,
        path: &mut dyn DataPath,
    ) -> Result<ClientSession, PerfError> {
        let mut control = dial(options)?;
        let peer = peer_of(&control);
        let endpoints = path.prepare(parameters, &control)?;
        write_frame(&mut control, &peer, &hello(parameters, endpoints, options.ticket.as_deref()))?;
        match read_frame(&mut control, &peer, "handshake")? {
            Frame::Accept { version, endpoints, tool_version } if version == PROTOCOL_VERSION => {
                Ok(ClientSession { control, peer, server_endpoints: endpoints, server_tool_version: tool_version })
            }
            Frame::Accept { version, .. } => Err(PerfError::Mismatch {
                field: "protocol version",
                client: PROTOCOL_VERSION.to_string(),
                server: version.to_string(),
            }),
            Frame::Reject { reason } => Err(PerfError::Handshake { peer, reason: format!("server refused: {reason}") }),
            other => Err(PerfError::Handshake { peer, reason: format!("unexpected {other:?}") }),
        }
    }

    /// Tell the server how many messages completed here and read its counts, plus what it sent back
    /// in a bidirectional run.
    fn exchange_counts(&mut self, messages: u64) -> Result<(ServerCounts, Option<(u64, f64)>), PerfError> {
        let peer = &self.peer;
        write_frame(&mut self.control, peer, &Frame::Done { messages })?;
        match read_frame(&mut self.control, peer, "end of test")? {
            Frame::Report { messages, validation_errors, sent, verified, first_corruption } => {
                Ok((ServerCounts { messages, validation_errors, verified, first_corruption }, sent))
            }
            other => Err(PerfError::Handshake {
                peer: peer.clone(),
                reason: format!("expected the server's report, got {other:?}"),
            }),
        }
    }
}

/// What the client measured of one size, before the server's counts are in.
struct ClientMeasurement {
    measured: Measured,
    /// Messages (or round trips) completed on this side.
    messages: u64,
    /// Bidirectional runs: what this side received of the server's direction, and in how long.
    reverse_received: Option<(u64, f64)>,
}

/// Drive the run: bandwidth (with the reverse direction served on a second thread when
/// bidirectional) or latency round trips.
fn measure(
    connections: &mut [Box<dyn Connection>],
    parameters: &RunParameters,
    timeout: Duration,
) -> Result<ClientMeasurement, PerfError> {
    match parameters.test {
        TestKind::Bandwidth => {
            let forward_count = (parameters.queue_pairs as usize).min(connections.len());
            let (forward, reverse) = connections.split_at_mut(forward_count);
            let mut reverse_received: Option<(u64, f64)> = None;
            let (timeline, messages) = std::thread::scope(|scope| {
                // Bidirectional (perftest -b): receive the server's direction while sending ours; the
                // receiving side times it, so TCP's local completions cannot flatter it.
                let receiving = (!reverse.is_empty()).then(|| {
                    scope.spawn(|| {
                        let started = Instant::now();
                        serve_bandwidth(reverse, parameters).map(|served| (served, started.elapsed().as_secs_f64()))
                    })
                });
                let sent = drive_bandwidth(forward, parameters, timeout);
                if let Some(handle) = receiving {
                    let received =
                        handle.join().map_err(|_| PerfError::Transport("the receiving thread panicked".into()))??;
                    reverse_received = Some(received);
                }
                sent
            })?;
            Ok(ClientMeasurement { measured: Measured::Bandwidth(timeline), messages, reverse_received })
        }
        TestKind::Latency => {
            let samples = drive_latency(connections, parameters)?;
            let messages = samples.count();
            Ok(ClientMeasurement { measured: Measured::Latency(samples), messages, reverse_received: None })
        }
    }
}

impl ClientMeasurement {
    /// The size's figures: bandwidth (both directions when bidirectional, each measured where its
    /// completions mean delivery) or latency.
    fn result(
        self,
        parameters: &RunParameters,
        accounting: &Accounting,
        started: Instant,
        server_sent: Option<(u64, f64)>,
    ) -> Result<SizeResult, PerfError> {
        match self.measured {
            Measured::Bandwidth(mut timeline) => {
                // TCP completions are local: the run ends when the server has received everything.
                if accounting.run_ends_at_peer_report() {
                    timeline.record(started.elapsed().as_secs_f64(), self.messages);
                }
                let window = (parameters.tx_depth as u64 * parameters.queue_pairs as u64).max(1);
                let interval = parameters.duration_ms.map(|ms| (ms as f64 / 1000.0 / 10.0).max(0.1));
                let forward = bandwidth(parameters.size, &timeline, window, interval)
                    .ok_or_else(|| PerfError::Transport("the run completed no message: nothing to measure".into()))?;
                // The other direction is measured where its completions mean delivery: by the sender
                // when completions are remote (verbs: a one-sided WRITE leaves the receiver nothing to
                // time), by the receiver otherwise (TCP: the sender's completions are local).
                let other = match accounting.reverse_measured_by() {
                    ReverseMeasuredBy::Sender => server_sent,
                    ReverseMeasuredBy::Receiver => self.reverse_received,
                };
                Ok(SizeResult::Bandwidth(match other {
                    Some((messages, seconds)) => {
                        crate::stats::add_direction(forward, parameters.size, messages, seconds)
                    }
                    None => forward,
                }))
            }
            Measured::Latency(samples) => {
                let halve = parameters.operation != Operation::Read;
                Ok(SizeResult::Latency(
                    samples
                        .result(parameters.size, halve)
                        .ok_or_else(|| PerfError::Transport("the run completed no round trip".into()))?,
                ))
            }
        }
    }
}

/// A validated run with any verification failure on either side fails, naming the first one.
fn check_validation(
    parameters: &RunParameters,
    server: &ServerCounts,
    client_validation_errors: u64,
    connections: &[Box<dyn Connection>],
) -> Result<(), PerfError> {
    if parameters.validate && (server.validation_errors > 0 || client_validation_errors > 0) {
        let first = server
            .first_corruption
            .clone()
            .map(|c| format!("; first on the server: {c}"))
            .or_else(|| {
                connections.iter().find_map(|c| c.first_corruption()).map(|c| format!("; first on the client: {c}"))
            })
            .unwrap_or_default();
        return Err(PerfError::Validation(format!(
            "{} validation errors on the server, {} on the client (wrong bytes plus lost, repeated or \
             reordered messages){first}",
            server.validation_errors, client_validation_errors
        )));
    }
    Ok(())
}

/// Both sides must agree on how many messages went each way, where the receiving side can count
/// them (see `Accounting::responder_counts`).
fn check_counts(
    parameters: &RunParameters,
    accounting: &Accounting,
    server: &ServerCounts,
    messages: u64,
    reverse_received: Option<(u64, f64)>,
) -> Result<(), PerfError> {
    if parameters.test == TestKind::Bandwidth && accounting.responder_counts() && server.messages != messages {
        return Err(PerfError::Validation(format!(
            "client sent {messages} messages but the server received {}",
            server.messages
        )));
    }
    if let (Some((received, _)), Some(iterations)) = (reverse_received, parameters.iterations) {
        let expected = iterations * parameters.queue_pairs as u64;
        if received != expected {
            return Err(PerfError::Validation(format!(
                "the server sent {expected} messages back but the client received {received}"
            )));
        }
    }
    Ok(())
}

/// A seed no earlier run is likely to have used: the standard library's per-process random SipHash
/// keys (seeded from the OS), mixed with the time.
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    hasher.finish() | 1
}

enum Measured {
    Bandwidth(CompletionTimeline),
    Latency(LatencyRecorder),
}

/// Keep every connection `depth` messages deep until the iterations are posted (or the duration is
/// over), recording completion progress.
fn drive_bandwidth(
    connections: &mut [Box<dyn Connection>],
    parameters: &RunParameters,
    timeout: Duration,
) -> Result<(CompletionTimeline, u64), PerfError> {
    // perftest -n counts iterations per queue pair: each connection posts exactly that many, so the
    // server (which expects `iterations` on each) and the client agree message for message.
    let per_connection = parameters.iterations;
    let deadline = parameters.duration_ms.map(Duration::from_millis);
    let mut in_flight = vec![0usize; connections.len()];
    let mut posted_on = vec![0u64; connections.len()];
    let (mut posted, mut completed) = (0u64, 0u64);
    let mut timeline = CompletionTimeline::default();
    let started = Instant::now();
    let mut last_progress = Instant::now();
    loop {
        let in_time = deadline.is_none_or(|d| started.elapsed() < d);
        let mut posting = false;
        for (index, connection) in connections.iter_mut().enumerate() {
            let wants_more = |posted_here: u64| in_time && per_connection.is_none_or(|n| posted_here < n);
            posting |= wants_more(posted_on[index]);
            if wants_more(posted_on[index]) && in_flight[index] < connection.depth() {
                let room = (connection.depth() - in_flight[index]) as u64;
                let left = per_connection.map_or(room, |n| room.min(n - posted_on[index]));
                let done = connection.post_many(left as usize)? as u64;
                in_flight[index] += done as usize;
                posted_on[index] += done;
                posted += done;
            }
        }
        let mut progressed = false;
        for (index, connection) in connections.iter_mut().enumerate() {
            let done = connection.poll(Duration::from_micros(200))?;
            if done > 0 {
                in_flight[index] = in_flight[index].saturating_sub(done);
                completed += done as u64;
                progressed = true;
            }
        }
        if progressed {
            timeline.record(started.elapsed().as_secs_f64(), completed);
            last_progress = Instant::now();
        } else if last_progress.elapsed() > timeout {
            return Err(PerfError::PeerSilent {
                peer: connections.first().map(|c| c.describe()).unwrap_or_default(),
                waited: timeout,
            });
        }
        if !posting && completed >= posted {
            return Ok((timeline, completed));
        }
    }
}

/// Round trips of one connection, microseconds.
fn drive_latency(
    connections: &mut [Box<dyn Connection>],
    parameters: &RunParameters,
) -> Result<LatencyRecorder, PerfError> {
    let Some(connection) = connections.first_mut() else {
        return Err(PerfError::Transport("no data connection".into()));
    };
    let deadline = parameters.duration_ms.map(Duration::from_millis);
    let started = Instant::now();
    let mut samples = LatencyRecorder::default();
    loop {
        if parameters.iterations.is_some_and(|n| samples.count() >= n)
            || deadline.is_some_and(|d| started.elapsed() >= d)
        {
            return Ok(samples);
        }
        let sent = Instant::now();
        connection.ping()?;
        samples.record(sent.elapsed().as_secs_f64() * 1e6);
        connection.settle();
    }
}

/// Chooses the server's data path for a client's parameters (or refuses them).
pub type ServerPathFactory<'a> = dyn FnMut(&RunParameters) -> Result<Box<dyn DataPath>, PerfError> + 'a;

/// Serve one client session on an accepted control connection.
pub fn serve_session(
    mut control: TcpStream,
    constraints: &ServerConstraints,
    timeout: Duration,
    path_for: &mut ServerPathFactory<'_>,
) -> Result<RunParameters, PerfError> {
    control.set_read_timeout(Some(constraints.hello_timeout.unwrap_or(timeout))).ok();
    control.set_write_timeout(Some(timeout)).ok();
    control.set_nodelay(true).ok();
    let peer = peer_of(&control);
    let frame = read_frame(&mut control, &peer, "handshake")?;
    control.set_read_timeout(Some(timeout)).ok();
    let parameters = match check_hello(&frame, constraints) {
        Ok(parameters) => parameters,
        Err(error) => {
            let _ = write_frame(&mut control, &peer, &Frame::Reject { reason: error.to_string() });
            return Err(error);
        }
    };
    let Frame::Hello { endpoints: client_endpoints, .. } = frame else {
        return Err(PerfError::Handshake { peer, reason: "expected a hello frame".into() });
    };
    let mut path = match path_for(&parameters) {
        Ok(path) => path,
        Err(error) => {
            let _ = write_frame(&mut control, &peer, &Frame::Reject { reason: error.to_string() });
            return Err(error);
        }
    };
    let endpoints = path.prepare(&parameters, &control)?;
    write_frame(
        &mut control,
        &peer,
        &Frame::Accept { version: PROTOCOL_VERSION, tool_version: env!("CARGO_PKG_VERSION").to_string(), endpoints },
    )?;
    let mut connections = path.connect(&parameters, &client_endpoints, &control)?;
    let mut sent_back: Option<(u64, f64)> = None;
    let served = match parameters.test {
        TestKind::Bandwidth => {
            let forward_count = (parameters.queue_pairs as usize).min(connections.len());
            let (forward, reverse) = connections.split_at_mut(forward_count);
            std::thread::scope(|scope| {
                // Bidirectional: drive the server-to-client half while serving the client's.
                let sending = (!reverse.is_empty()).then(|| {
                    scope.spawn(|| {
                        let started = Instant::now();
                        let (_, sent) = drive_bandwidth(reverse, &parameters, timeout)?;
                        let seconds = started.elapsed().as_secs_f64();
                        reverse.iter_mut().try_for_each(|c| c.finish())?;
                        Ok::<(u64, f64), PerfError>((sent, seconds))
                    })
                });
                let served = serve_bandwidth(forward, &parameters);
                if let Some(handle) = sending {
                    sent_back =
                        Some(handle.join().map_err(|_| PerfError::Transport("the sending thread panicked".into()))??);
                }
                served
            })?
        }
        TestKind::Latency => serve_latency(&mut connections, &parameters)?,
    };
    // The client's Done arrives after its last message; the server's count answers it.
    match read_frame(&mut control, &peer, "end of test")? {
        Frame::Done { .. } => {}
        other => return Err(PerfError::Handshake { peer, reason: format!("expected done, got {other:?}") }),
    }
    let validation_errors = connections.iter().map(|c| c.validation_errors()).sum();
    let mut verified = Verified::default();
    for connection in &connections {
        verified.add(&connection.verified());
    }
    let first_corruption = connections.iter().find_map(|c| c.first_corruption());
    write_frame(
        &mut control,
        &peer,
        &Frame::Report { messages: served, validation_errors, sent: sent_back, verified, first_corruption },
    )?;
    Ok(parameters)
}

fn serve_bandwidth(connections: &mut [Box<dyn Connection>], parameters: &RunParameters) -> Result<u64, PerfError> {
    let expected = parameters.iterations;
    let mut served = 0;
    std::thread::scope(|scope| {
        let handles: Vec<_> = connections.iter_mut().map(|c| scope.spawn(move || c.serve(expected))).collect();
        for handle in handles {
            let outcome = handle.join().map_err(|_| PerfError::Transport("a serving thread panicked".into()))??;
            served += Accounting::reported(outcome, expected);
        }
        Ok::<(), PerfError>(())
    })?;
    Ok(served)
}

fn serve_latency(connections: &mut [Box<dyn Connection>], parameters: &RunParameters) -> Result<u64, PerfError> {
    let Some(connection) = connections.first_mut() else {
        return Ok(0);
    };
    if !Accounting::of(parameters.operation, std::slice::from_ref(&*connection)).responder_answers_latency() {
        // One-sided reads need nothing from this side; the client's Done ends the test.
        return Ok(parameters.iterations.unwrap_or(0));
    }
    let mut served = 0;
    loop {
        if parameters.iterations.is_some_and(|n| served >= n) {
            return Ok(served);
        }
        match connection.pong() {
            Ok(()) => served += 1,
            // Duration mode: the client's finish ends the run.
            Err(PerfError::PeerClosed { .. }) if parameters.iterations.is_none() => return Ok(served),
            Err(error) => return Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handshake::{hello, write_frame};

    /// Issue #19: a data connection without the step's ticket is refused before the server builds
    /// any data path (where queue pairs are created and memory registered): the factory is never
    /// called, whatever the stranger asked for.
    #[test]
    fn a_ticketless_client_makes_the_server_allocate_nothing() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let mut stranger = TcpStream::connect(listener.local_addr().expect("address")).expect("connect");
        let (control, _) = listener.accept().expect("accept");
        let greedy = RunParameters { queue_pairs: 64, size: 1 << 26, ..RunParameters::default() };
        write_frame(&mut stranger, "server", &hello(&greedy, vec![], None)).expect("hello");
        let constraints = ServerConstraints { ticket: Some("ab".repeat(32)), ..ServerConstraints::default() };
        let mut built = 0;
        let mut path_for = |_: &RunParameters| -> Result<Box<dyn DataPath>, PerfError> {
            built += 1;
            Err(PerfError::Unsupported("no data path in this test".into()))
        };
        let error = serve_session(control, &constraints, Duration::from_secs(5), &mut path_for).expect_err("refused");
        assert!(matches!(error, PerfError::NoTicket { .. }), "{error}");
        assert_eq!(built, 0, "a data path was built for a client without a ticket");
        let answer = read_frame(&mut stranger, "server", "refusal").expect("the refusal is sent");
        assert!(matches!(answer, Frame::Reject { ref reason } if reason.contains("no valid ticket")), "{answer:?}");
    }
}
