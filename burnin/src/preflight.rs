//! The gang preflight of a Slurm prolog: every node of a starting job measures latency and TCP
//! bandwidth to every other node of the job, the nodes share what they measured, and each judges
//! the same matrix the same way, so only the node that is at fault fails its own prolog. That
//! matters because Slurm drains the node whose prolog exits non-zero and requeues the job
//! (slurm.conf(5), Prolog): a healthy node that failed because a peer was slow would be drained
//! in the bad node's place.
//!
//! Rounds follow the circle method ([`crate::schedule::circle_rounds`]): each node is in one pair
//! per round, so no two measurements share a node's link and the figures are the links', not
//! contention's. The lower-ranked node of a pair connects; the other waits for it for at most the
//! round timeout. On one connection: [`PINGS`] round trips of 8 bytes, then the client streams
//! for the duration and the server answers with the bytes it counted, then the server streams
//! back for the duration. Every peer is bounded: a hello line of at most [`MAX_LINE`] bytes naming
//! this job, from the address of the node it claims to be, and results of at most
//! [`MAX_RESULTS`] bytes.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::schedule::circle_rounds;
use crate::BurninError;

/// Round trips per pair for the latency figure.
pub const PINGS: usize = 20;
/// The longest hello or control line a peer may send.
pub const MAX_LINE: usize = 512;
/// The largest results document a peer may send.
pub const MAX_RESULTS: usize = 1 << 20;
/// Bytes per write while streaming.
const CHUNK: usize = 1 << 20;
/// Send buffer of a preflight socket (the kernel doubles it, socket(7) SO_SNDBUF). What is queued
/// when a stream stops still has to cross the link before the byte count comes back: at the
/// default (up to 4 MiB, tcp(7) tcp_wmem) a link shaped to a few Mbit/s would take seconds per
/// direction and make every later round late. 256 KiB still covers the bandwidth-delay product
/// of a 100 Gbit/s path at 20 us.
const SEND_BUFFER: usize = 256 << 10;

fn limit_send_buffer(stream: &TcpStream) {
    // Best effort: an unchanged buffer only makes a slow link's rounds longer.
    let _ = nix::sys::socket::setsockopt(stream, nix::sys::socket::sockopt::SndBuf, &SEND_BUFFER);
}

/// What one node needs to take part.
#[derive(Debug, Clone)]
pub struct Preflight {
    /// SLURM_JOB_ID: peers of another job are refused.
    pub job: String,
    /// The job's nodes in SLURM_JOB_NODELIST order, and where each listens.
    pub nodes: Vec<String>,
    pub addresses: Vec<SocketAddr>,
    /// This node's index in `nodes`.
    pub me: usize,
    /// How long each direction streams.
    pub duration: Duration,
    /// How long a node waits for its partner in a round.
    pub round_timeout: Duration,
    /// When the whole preflight gives up (results not received by then are missing).
    pub deadline: Instant,
}

/// One direction-pair of figures, as the connecting node measured them, or why there are none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairFigure {
    pub a: usize,
    pub b: usize,
    /// a -> b and b -> a, in Gbit/s.
    pub forward_gbps: Option<f64>,
    pub reverse_gbps: Option<f64>,
    /// Median round trip.
    pub round_trip_us: Option<f64>,
    /// Why the pair could not be measured.
    pub error: Option<String>,
}

impl PairFigure {
    fn failed(a: usize, b: usize, error: String) -> PairFigure {
        PairFigure { a, b, forward_gbps: None, reverse_gbps: None, round_trip_us: None, error: Some(error) }
    }

    /// The slower direction: what a collective over this pair gets.
    pub fn gbps(&self) -> Option<f64> {
        Some(self.forward_gbps?.min(self.reverse_gbps?))
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Hello {
    job: String,
    from: String,
    /// `Some(round)` to measure; `None` to ask for the results.
    round: Option<usize>,
}

/// How slow is slow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rules {
    /// A pair below this share of the job's healthy rate ([`Judgement::median_gbps`]) is slow.
    pub ratio: f64,
    /// A pair below this is slow whatever the median (Gbit/s).
    pub min_gbps: Option<f64>,
}

/// What the preflight concluded for the whole job.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// The median over nodes of each node's best pair: the job's healthy rate.
    pub median_gbps: Option<f64>,
    /// Nodes at fault, with the evidence.
    pub bad_nodes: Vec<(usize, String)>,
    /// Slow or broken pairs that no bad node explains: both ends are named.
    pub bad_links: Vec<(usize, usize, String)>,
    /// Pairs with no figure from either end (results that never arrived).
    pub unmeasured: usize,
}

impl Judgement {
    /// Whether node `index` should fail its prolog.
    pub fn fails(&self, index: usize) -> bool {
        self.bad_nodes.iter().any(|(node, _)| *node == index)
            || self.bad_links.iter().any(|(a, b, _)| *a == index || *b == index)
    }
}

fn describe(figure: &PairFigure, nodes: &[String]) -> String {
    let (a, b) = (&nodes[figure.a], &nodes[figure.b]);
    match (&figure.error, figure.gbps()) {
        (Some(error), _) => format!("{a}-{b}: {error}"),
        (None, Some(gbps)) => format!("{a}-{b}: {gbps:.2} Gb/s"),
        (None, None) => format!("{a}-{b}: no figure"),
    }
}

/// Judge every pair of the job (`figures` may hold a pair twice: once from each end).
pub fn judge(nodes: &[String], figures: &[PairFigure], rules: &Rules) -> Judgement {
    let n = nodes.len();
    // One verdict per pair: the worst record of it.
    let mut pairs: HashMap<(usize, usize), &PairFigure> = HashMap::new();
    for figure in figures.iter().filter(|f| f.a < n && f.b < n && f.a != f.b) {
        let key = (figure.a.min(figure.b), figure.a.max(figure.b));
        // An error is worse than any figure, and a lower figure worse than a higher one.
        let score = |f: &PairFigure| if f.error.is_some() { -1.0 } else { f.gbps().unwrap_or(-0.5) };
        match pairs.get(&key) {
            Some(old) if score(old) <= score(figure) => {}
            _ => {
                pairs.insert(key, figure);
            }
        }
    }
    // The reference is the median over nodes of each node's best pair, not the median over
    // pairs: a slow node is in n-1 of the n(n-1)/2 pairs, a majority of them at three nodes, but
    // its best pair is the only slow best.
    let mut rates: Vec<f64> = (0..n)
        .filter_map(|node| {
            pairs.values().filter(|f| f.a == node || f.b == node).filter_map(|f| f.gbps()).max_by(f64::total_cmp)
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    let median_gbps = (!rates.is_empty()).then(|| {
        let middle = rates.len() / 2;
        if rates.len() % 2 == 0 {
            (rates[middle - 1] + rates[middle]) / 2.0
        } else {
            rates[middle]
        }
    });
    let floor = median_gbps.map(|m| m * rules.ratio).into_iter().chain(rules.min_gbps).fold(0.0, f64::max);
    let bad: Vec<&PairFigure> =
        pairs.values().copied().filter(|f| f.error.is_some() || f.gbps().is_some_and(|g| g < floor)).collect();
    let mut bad_nodes = Vec::new();
    for node in 0..n {
        let mine: Vec<&&PairFigure> = bad.iter().filter(|f| f.a == node || f.b == node).collect();
        // More than half of its pairs: the node is what they share. With two nodes the one pair
        // is all of each node's pairs, and both are named.
        if n > 1 && mine.len() * 2 > n - 1 {
            let mut evidence: Vec<String> = mine.iter().map(|f| describe(f, nodes)).collect();
            evidence.sort();
            bad_nodes.push((
                node,
                format!("{} of its {} pairs are slow or broken ({})", mine.len(), n - 1, evidence.join("; ")),
            ));
        }
    }
    let mut bad_links: Vec<(usize, usize, String)> = bad
        .iter()
        .filter(|f| !bad_nodes.iter().any(|(node, _)| *node == f.a || *node == f.b))
        .map(|f| (f.a.min(f.b), f.a.max(f.b), describe(f, nodes)))
        .collect();
    bad_links.sort_by_key(|(a, b, _)| (*a, *b));
    let unmeasured = n * n.saturating_sub(1) / 2 - pairs.len();
    Judgement { median_gbps, bad_nodes, bad_links, unmeasured }
}

/// Read one line of at most [`MAX_LINE`] bytes.
fn read_line(reader: &mut impl BufRead, limit: usize) -> Result<String, String> {
    let mut line = Vec::new();
    let read = reader.take(limit as u64 + 1).read_until(b'\n', &mut line).map_err(|e| e.to_string())?;
    if read == 0 {
        return Err("connection closed".into());
    }
    if line.len() > limit || !line.ends_with(b"\n") {
        return Err(format!("line longer than {limit} bytes"));
    }
    String::from_utf8(line).map(|l| l.trim_end().to_string()).map_err(|_| "line is not UTF-8".into())
}

/// Read one line byte by byte: the client's first ping follows its hello at once, and a buffered
/// reader would swallow it with the line.
fn read_unbuffered_line(stream: &mut impl Read, limit: usize) -> Result<String, String> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        match stream.read(&mut byte) {
            Ok(0) => return Err("connection closed".into()),
            Ok(_) if byte[0] == b'\n' => break,
            Ok(_) => line.push(byte[0]),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error.to_string()),
        }
        if line.len() > limit {
            return Err(format!("line longer than {limit} bytes"));
        }
    }
    String::from_utf8(line).map(|l| l.trim_end().to_string()).map_err(|_| "line is not UTF-8".into())
}

/// What the responder thread hands the measuring thread.
type Arrival = (usize, usize, TcpStream);

/// Accept peers until `stop`: measurement connections go to the measuring thread, results
/// requests are answered from `published` (or refused as not ready yet).
fn respond(
    listener: TcpListener,
    config: Arc<Preflight>,
    arrivals: Sender<Arrival>,
    published: Arc<Mutex<Option<String>>>,
    served: Arc<Mutex<Vec<bool>>>,
) {
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        if Instant::now() > config.deadline {
            return;
        }
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
        let Ok(peer) = stream.peer_addr() else { continue };
        let hello = read_unbuffered_line(&mut stream, MAX_LINE)
            .and_then(|line| serde_json::from_str::<Hello>(&line).map_err(|e| format!("not a hello: {e}")));
        let refuse = |stream: &mut TcpStream, why: String| {
            answer_and_close(stream, &serde_json::json!({ "refused": why }).to_string());
        };
        let hello = match hello {
            Ok(hello) => hello,
            Err(why) => {
                refuse(&mut stream, why);
                continue;
            }
        };
        let Some(from) = config.nodes.iter().position(|n| *n == hello.from) else {
            refuse(&mut stream, format!("{} is not a node of this job", hello.from));
            continue;
        };
        if hello.job != config.job {
            refuse(&mut stream, format!("job {} is not job {}", hello.job, config.job));
            continue;
        }
        if !same_host(peer.ip(), config.addresses[from].ip()) {
            refuse(&mut stream, format!("{} connects from {}, not from its address", hello.from, peer.ip()));
            continue;
        }
        match hello.round {
            Some(round) => {
                let _ = arrivals.send((from, round, stream));
            }
            None => {
                let results = published.lock().ok().and_then(|p| p.clone());
                match results {
                    Some(text) => {
                        answer_and_close(&mut stream, &text);
                        if let Ok(mut served) = served.lock() {
                            served[from] = true;
                        }
                    }
                    None => refuse(&mut stream, "not ready".into()),
                }
            }
        }
    }
}

/// Send one answer line and close so that the peer reads it. The line goes out in one write: a
/// `writeln!` of a formatted value issues a write per token, and Nagle holds all but the first
/// until it is acknowledged. The close is a half-close and a bounded drain: closing a socket that
/// still holds unread input (a peer that sent an over-long line) makes Linux answer with RST
/// instead of FIN (tcp_close(), net/ipv4/tcp.c), and an RST can overtake what was still queued.
fn answer_and_close(stream: &mut TcpStream, line: &str) {
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    if stream.write_all(&bytes).is_err() {
        return;
    }
    let _ = stream.shutdown(Shutdown::Write);
    // The responder serves one peer at a time: a peer that trickles bytes holds it 500 ms at most.
    let deadline = Instant::now() + Duration::from_millis(500);
    let mut sink = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            break;
        }
        match stream.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
}

/// IPv4 peers may arrive as IPv4-mapped IPv6 on a dual-stack listener.
fn same_host(a: IpAddr, b: IpAddr) -> bool {
    let plain = |ip: IpAddr| match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    plain(a) == plain(b)
}

/// Run this node's part: the rounds, then the exchange. Returns every pair figure it could gather
/// (its own and its peers'), for [`judge`].
pub fn run(config: Preflight, listener: TcpListener) -> Result<Vec<PairFigure>, BurninError> {
    let config = Arc::new(config);
    let n = config.nodes.len();
    let (arrivals_in, arrivals) = channel();
    let published = Arc::new(Mutex::new(None));
    let served = Arc::new(Mutex::new(vec![false; n]));
    {
        let (config, published, served) = (Arc::clone(&config), Arc::clone(&published), Arc::clone(&served));
        std::thread::Builder::new()
            .name("preflight-responder".into())
            .spawn(move || respond(listener, config, arrivals_in, published, served))
            .map_err(|e| BurninError::Io("cannot start the preflight responder".into(), e))?;
    }
    let mut mine = Vec::new();
    let mut early: Vec<Arrival> = Vec::new();
    for (round, pairs) in circle_rounds(n).iter().enumerate() {
        let Some(&(a, b)) = pairs.iter().find(|(a, b)| *a == config.me || *b == config.me) else { continue };
        if a == config.me {
            mine.push(measure_to(&config, b, round));
        } else if let Some(failure) = await_partner(&config, a, round, &arrivals, &mut early) {
            mine.push(failure);
        }
    }
    let text = serde_json::to_string(&mine).map_err(|e| BurninError::Run(format!("results: {e}")))?;
    if let Ok(mut slot) = published.lock() {
        *slot = Some(text);
    }
    let mut all = mine;
    let mut pending: Vec<usize> = (0..n).filter(|&i| i != config.me).collect();
    while !pending.is_empty() && Instant::now() < config.deadline {
        pending.retain(|&peer| match fetch_results(&config, peer) {
            Ok(figures) => {
                all.extend(figures.into_iter().filter(|f| f.a < n && f.b < n));
                false
            }
            Err(_) => true,
        });
        if !pending.is_empty() {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    // Stay to answer peers still asking, until each has fetched or the deadline.
    while Instant::now() < config.deadline {
        let all_served = served.lock().map(|s| s.iter().enumerate().all(|(i, done)| *done || i == config.me));
        if all_served.unwrap_or(true) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(all)
}

fn connect(config: &Preflight, peer: usize, round: Option<usize>) -> Result<BufReader<TcpStream>, String> {
    let address = config.addresses[peer];
    let limit = config.round_timeout.min(config.deadline.saturating_duration_since(Instant::now()));
    let started = Instant::now();
    let stream = loop {
        match TcpStream::connect_timeout(&address, Duration::from_secs(1)) {
            Ok(stream) => break stream,
            // The peer's prolog may not have started listening yet.
            Err(error) if started.elapsed() < limit => {
                let _ = error;
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(error) => return Err(format!("cannot connect to {address} within {limit:?}: {error}")),
        }
    };
    let _ = stream.set_nodelay(true);
    limit_send_buffer(&stream);
    stream.set_read_timeout(Some(config.round_timeout)).map_err(|e| e.to_string())?;
    stream.set_write_timeout(Some(config.round_timeout)).map_err(|e| e.to_string())?;
    let hello = Hello { job: config.job.clone(), from: config.nodes[config.me].clone(), round };
    let mut stream = stream;
    writeln!(stream, "{}", serde_json::to_string(&hello).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    Ok(BufReader::new(stream))
}

fn fetch_results(config: &Preflight, peer: usize) -> Result<Vec<PairFigure>, String> {
    let mut reader = connect(config, peer, None)?;
    let line = read_line(&mut reader, MAX_RESULTS)?;
    serde_json::from_str(&line).map_err(|_| format!("{}: {line}", config.nodes[peer]))
}

/// Client side of a pair: ping, stream out, stream in.
fn measure_to(config: &Preflight, peer: usize, round: usize) -> PairFigure {
    let me = config.me;
    let outcome = connect(config, peer, Some(round)).and_then(|reader| client_exchange(reader, config.duration));
    match outcome {
        Ok((round_trip_us, forward_gbps, reverse_gbps)) => PairFigure {
            a: me,
            b: peer,
            forward_gbps: Some(forward_gbps),
            reverse_gbps: Some(reverse_gbps),
            round_trip_us: Some(round_trip_us),
            error: None,
        },
        Err(error) => PairFigure::failed(me, peer, error),
    }
}

fn client_exchange(mut reader: BufReader<TcpStream>, duration: Duration) -> Result<(f64, f64, f64), String> {
    let mut trips = Vec::with_capacity(PINGS);
    let mut echo = [0u8; 8];
    for sequence in 0..PINGS as u64 {
        let started = Instant::now();
        reader.get_mut().write_all(&sequence.to_le_bytes()).map_err(|e| format!("ping: {e}"))?;
        reader.read_exact(&mut echo).map_err(|e| format!("ping: {e}"))?;
        if u64::from_le_bytes(echo) != sequence {
            // A refusal arrives here as text: say what the peer said.
            return Err(format!("peer answered {:?} to a ping", String::from_utf8_lossy(&echo)));
        }
        trips.push(started.elapsed().as_secs_f64() * 1e6);
    }
    trips.sort_by(f64::total_cmp);
    let round_trip_us = trips[trips.len() / 2];
    let chunk = vec![0u8; CHUNK];
    let started = Instant::now();
    while started.elapsed() < duration {
        reader.get_mut().write_all(&chunk).map_err(|e| format!("stream to peer: {e}"))?;
    }
    reader.get_mut().shutdown(Shutdown::Write).map_err(|e| format!("stream to peer: {e}"))?;
    let mut count = [0u8; 8];
    reader.read_exact(&mut count).map_err(|e| format!("peer's byte count: {e}"))?;
    let forward_gbps = u64::from_le_bytes(count) as f64 * 8.0 / started.elapsed().as_secs_f64() / 1e9;
    let started = Instant::now();
    let mut received = 0u64;
    let mut buffer = vec![0u8; CHUNK];
    loop {
        match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => received += read as u64,
            Err(error) => return Err(format!("stream from peer: {error}")),
        }
    }
    let reverse_gbps = received as f64 * 8.0 / started.elapsed().as_secs_f64() / 1e9;
    Ok((round_trip_us, forward_gbps, reverse_gbps))
}

/// Server side of a pair: wait for `partner`'s connection for `round`, then echo, count, stream.
/// Returns a failure record when the partner never came or the exchange broke; nothing on success
/// (the partner, as client, records the figures).
fn await_partner(
    config: &Preflight,
    partner: usize,
    round: usize,
    arrivals: &Receiver<Arrival>,
    early: &mut Vec<Arrival>,
) -> Option<PairFigure> {
    let me = config.me;
    let limit = Instant::now() + config.round_timeout;
    let stream = loop {
        if let Some(at) = early.iter().position(|(from, r, _)| *from == partner && *r == round) {
            break early.swap_remove(at).2;
        }
        let left = limit.min(config.deadline).saturating_duration_since(Instant::now());
        match arrivals.recv_timeout(left) {
            Ok(arrival) => early.push(arrival),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                return Some(PairFigure::failed(
                    partner,
                    me,
                    format!("{} did not connect within {:?}", config.nodes[partner], config.round_timeout),
                ));
            }
        }
    };
    server_exchange(stream, config.duration, config.round_timeout)
        .err()
        .map(|error| PairFigure::failed(partner, me, error))
}

fn server_exchange(mut stream: TcpStream, duration: Duration, timeout: Duration) -> Result<(), String> {
    let _ = stream.set_nodelay(true);
    limit_send_buffer(&stream);
    stream.set_read_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    stream.set_write_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    let mut ping = [0u8; 8];
    for _ in 0..PINGS {
        stream.read_exact(&mut ping).map_err(|e| format!("ping: {e}"))?;
        stream.write_all(&ping).map_err(|e| format!("ping: {e}"))?;
    }
    let mut buffer = vec![0u8; CHUNK];
    let mut received = 0u64;
    // The client streams for `duration`; anything much longer is not a fabricdoctor peer.
    let limit = Instant::now() + duration * 4 + timeout;
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => received += read as u64,
            Err(error) => return Err(format!("stream from peer: {error}")),
        }
        if Instant::now() > limit {
            return Err("peer streamed far longer than the duration".into());
        }
    }
    stream.write_all(&received.to_le_bytes()).map_err(|e| format!("byte count: {e}"))?;
    let started = Instant::now();
    while started.elapsed() < duration {
        stream.write_all(&buffer).map_err(|e| format!("stream to peer: {e}"))?;
    }
    stream.shutdown(Shutdown::Write).map_err(|e| format!("stream to peer: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("gpu{i:02}")).collect()
    }

    fn pair(a: usize, b: usize, gbps: f64) -> PairFigure {
        PairFigure {
            a,
            b,
            forward_gbps: Some(gbps),
            reverse_gbps: Some(gbps * 1.01),
            round_trip_us: Some(20.0),
            error: None,
        }
    }

    /// Every pair of `n` nodes at `healthy`, with `node` at `slow` on all its pairs.
    fn matrix(n: usize, slow_node: Option<usize>, healthy: f64, slow: f64) -> Vec<PairFigure> {
        let mut figures = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                let gbps = if Some(a) == slow_node || Some(b) == slow_node { slow } else { healthy };
                figures.push(pair(a, b, gbps));
            }
        }
        figures
    }

    const RULES: Rules = Rules { ratio: 0.5, min_gbps: None };

    #[test]
    fn the_node_all_its_pairs_share_is_the_one_that_fails() {
        for n in [3, 4, 8] {
            let judgement = judge(&nodes(n), &matrix(n, Some(2), 90.0, 4.0), &RULES);
            assert_eq!(judgement.bad_nodes.len(), 1, "{n} nodes: {judgement:?}");
            assert_eq!(judgement.bad_nodes[0].0, 2);
            assert!(judgement.bad_links.is_empty(), "{judgement:?}");
            assert!(judgement.fails(2) && !judgement.fails(0) && !judgement.fails(1));
            assert!(judgement.bad_nodes[0].1.contains("gpu03") && judgement.bad_nodes[0].1.contains("4.00 Gb/s"));
        }
        let healthy = judge(&nodes(4), &matrix(4, None, 90.0, 90.0), &RULES);
        assert!(healthy.bad_nodes.is_empty() && healthy.bad_links.is_empty());
        assert_eq!(healthy.median_gbps, Some(90.0));
        // The absolute floor catches a job whose every pair is slow.
        let floor = Rules { ratio: 0.5, min_gbps: Some(100.0) };
        assert_eq!(judge(&nodes(4), &matrix(4, None, 90.0, 90.0), &floor).bad_nodes.len(), 4);
    }

    #[test]
    fn a_slow_link_between_healthy_nodes_names_both_ends_and_two_nodes_cannot_be_told_apart() {
        let mut figures = matrix(4, None, 90.0, 90.0);
        figures[0] = pair(0, 1, 10.0);
        let judgement = judge(&nodes(4), &figures, &RULES);
        assert!(judgement.bad_nodes.is_empty());
        assert_eq!(judgement.bad_links.len(), 1);
        assert!(judgement.fails(0) && judgement.fails(1) && !judgement.fails(2));
        // Two nodes and a broken pair: both are named.
        let two = judge(&nodes(2), &[PairFigure::failed(0, 1, "refused".into())], &RULES);
        assert_eq!(two.bad_nodes.len(), 2);
        // One node: nothing to judge.
        assert_eq!(
            judge(&nodes(1), &[], &RULES),
            Judgement { median_gbps: None, bad_nodes: vec![], bad_links: vec![], unmeasured: 0 }
        );
    }

    #[test]
    fn a_dead_node_is_named_from_the_failures_its_peers_recorded() {
        // gpu04 never started: its peers recorded failures from both sides of the pairs.
        let mut figures = matrix(3, None, 90.0, 90.0);
        figures.push(PairFigure::failed(0, 3, "cannot connect".into()));
        figures.push(PairFigure::failed(3, 1, "did not connect".into()));
        figures.push(PairFigure::failed(3, 2, "did not connect".into()));
        let judgement = judge(&nodes(4), &figures, &RULES);
        assert_eq!(judgement.bad_nodes.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [3]);
        // A pair recorded twice keeps its worse record; out-of-range indices are ignored.
        let mut twice = matrix(3, None, 90.0, 90.0);
        twice.push(PairFigure::failed(1, 0, "reset".into()));
        twice.push(pair(7, 9, 1.0));
        let judgement = judge(&nodes(3), &twice, &RULES);
        assert_eq!(judgement.bad_links.len(), 1, "{judgement:?}");
        assert_eq!(judgement.unmeasured, 0);
        assert_eq!(judge(&nodes(3), &matrix(3, None, 90.0, 90.0)[..1], &RULES).unmeasured, 2);
    }

    #[test]
    fn hello_lines_are_bounded() {
        let mut long = std::io::Cursor::new(vec![b'x'; 2000]);
        assert!(read_line(&mut long, MAX_LINE).expect_err("too long").contains("longer"));
        let mut ok = std::io::Cursor::new(b"{\"a\":1}\nrest".to_vec());
        assert_eq!(read_line(&mut ok, MAX_LINE).expect("a line"), "{\"a\":1}");
        assert!(read_line(&mut std::io::Cursor::new(Vec::new()), MAX_LINE).is_err());
        // The hello is read without taking the bytes after it.
        let mut stream = std::io::Cursor::new(b"{\"job\":\"1\"}\nPINGPING".to_vec());
        assert_eq!(read_unbuffered_line(&mut stream, MAX_LINE).expect("a line"), "{\"job\":\"1\"}");
        assert_eq!(stream.position(), 12);
        assert!(read_unbuffered_line(&mut std::io::Cursor::new(vec![b'x'; 2000]), MAX_LINE).is_err());
        assert!(same_host("::ffff:10.0.0.1".parse().expect("v6"), "10.0.0.1".parse().expect("v4")));
    }
}
