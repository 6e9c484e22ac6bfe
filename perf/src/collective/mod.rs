//! fabricdoctor's own collectives: ring AllReduce (ReduceScatter then AllGather), ReduceScatter,
//! AllGather, Broadcast (a pipelined chain) and AlltoAll (pairwise over a full mesh), with nccl-tests'
//! semantics (`doc/PERFORMANCE.md`: algbw = size / time; busbw = algbw x 2(n-1)/n for AllReduce,
//! (n-1)/n for AllGather, ReduceScatter and AlltoAll, 1 for Broadcast).
//!
//! Ranks meet through a TCP rendezvous at rank 0, then open their data connections: per channel one to
//! the right neighbour and one from the left (several channels are parallel rings over separate
//! connections, each on its own contiguous part of the buffer), plus a full mesh for AlltoAll. Every
//! socket has a timeout, so a rank that dies or stalls makes the others stop with an error naming it.
//!
//! Data then moves over the chosen [`Transport`]: the TCP connections themselves, or RC queue pairs
//! set up over them (`verbs::stream`: RDMA WRITE with immediate into registered slots, with credits).
//! The algorithms see only [`link::Sender`] and [`link::Receiver`], so they are the same for both.

pub mod datatype;
mod departure;
pub mod link;
pub mod nodelist;
pub mod sweep;
pub mod tree;
mod working;

use std::io::ErrorKind;
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::handshake::{read_message, write_message};
use crate::verbs::credit::Role;
use crate::verbs::stream::{connect_links, StreamHalf, StreamOptions, StreamPort};
use crate::PerfError;
use datatype::{count_wrong, expected_value, fill, input_value, reduce_from, reduce_into, DataType, ReduceOp};
pub use fabricdoctor_perf_schema::collective::{doubling_steps, Algorithm, AlgorithmChoice, Collective, CostModel};
use link::{io_error, Receiver, Sender, TcpLink};

/// Elements of part `index` when `count` elements are split into `parts` (the first parts take the
/// remainder's floor positions, so any count, including fewer elements than parts, is covered).
pub fn part_range(count: usize, parts: usize, index: usize) -> std::ops::Range<usize> {
    let start = index * count / parts;
    let end = (index + 1) * count / parts;
    start..end
}

/// Control messages between every rank and rank 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "message", rename_all = "snake_case", deny_unknown_fields)]
enum Control {
    Join {
        rank: usize,
        world: usize,
        data_port: u16,
        fingerprint: String,
        /// The job's ticket, where the ranks were given one ([`Rendezvous::ticket`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ticket: Option<String>,
        /// The address this rank's data listener is bound to ([`Rendezvous::bind`]); without it,
        /// the address rank 0 sees the join come from. A rank bound to one address of a host with
        /// several (a rail) is reachable there only, whatever source its join left from.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data_host: Option<std::net::IpAddr>,
    },
    /// Data address of every rank; `None` for rank 0 (reach it at the master address).
    Table {
        hosts: Vec<Option<String>>,
        ports: Vec<u16>,
    },
    Reject {
        reason: String,
    },
    Ready,
    Go,
    Result {
        time_us: f64,
        wrong: u64,
    },
    /// Rank 0's choice of algorithm after a trial of both (`CostModel::uncertain`).
    Choice {
        tree: bool,
    },
    /// Rank 0's cost model for the sweep, so every rank picks the same algorithm per size.
    Model {
        model: CostModel,
    },
    Abort {
        rank: usize,
        reason: String,
    },
    /// A rank other than 0 gives up on rank `because` (closed, or silent for `silent_ms`): sent
    /// over TCP before its links close, so rank 0 can name the rank that stopped first
    /// (`departure.rs`).
    Leaving {
        because: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        silent_ms: Option<u64>,
    },
    /// Rank 0 to the others, once it has followed their words: rank `first` stopped first (it
    /// exited, or was silent for `silent_ms`), so a rank that gave up on a neighbour that left
    /// because of it can name it too (`departure.rs`).
    Stopped {
        first: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        silent_ms: Option<u64>,
    },
}

/// How to meet the other ranks.
#[derive(Debug, Clone)]
pub struct Rendezvous {
    pub rank: usize,
    pub world: usize,
    /// Rank 0's host and control port.
    pub master_host: String,
    pub master_port: u16,
    pub channels: usize,
    pub timeout: Duration,
    /// Everything the ranks must agree on (sizes, collective, type, ...): a differing rank is named.
    pub fingerprint: String,
    /// The address to listen on (rank 0's rendezvous and every rank's data listener): a burn-in
    /// rail's address, so nothing else on the host can be reached; `None`: every address.
    pub bind: Option<std::net::IpAddr>,
    /// A secret every rank of the job was given (a burn-in step's, over the coordinator's
    /// authenticated channel): joins and data connections that do not present it are dropped
    /// unanswered, before anything is read into the job, and the ranks go on waiting for their real
    /// peers; `None`: anyone who speaks the protocol may join (`perf allreduce` by hand).
    pub ticket: Option<String>,
}

impl Rendezvous {
    /// The listening address of this rank's sockets.
    fn listen_on(&self) -> std::net::IpAddr {
        self.bind.unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED))
    }

    /// Whether a peer's `presented` ticket admits it (compared in time independent of where it
    /// differs).
    fn admits(&self, presented: Option<&str>) -> bool {
        match (&self.ticket, presented) {
            (None, _) => true,
            (Some(expected), Some(presented)) => crate::handshake::same_ticket(presented, expected),
            (Some(_), None) => false,
        }
    }
}

/// How long a peer that connected may take to say who it is; a stranger that says nothing is
/// dropped after this, not after the job's whole timeout.
const INTRODUCTION_TIMEOUT: Duration = Duration::from_secs(2);

/// How the data moves once the ranks are connected.
#[derive(Debug, Clone)]
pub enum Transport {
    /// Over the TCP data connections.
    Tcp,
    /// Over RC queue pairs set up through the TCP data connections.
    Verbs(StreamOptions),
}

/// A connected group of ranks.
pub struct Communicator {
    pub rank: usize,
    pub world: usize,
    /// Where each rank was reached, for messages.
    pub hosts: Vec<String>,
    /// Rank 0: control connections to ranks 1..; others: one to rank 0.
    control: Vec<TcpStream>,
    /// Per channel: to the right neighbour, and from the left one.
    right: Vec<Box<dyn Sender>>,
    left: Vec<Box<dyn Receiver>>,
    /// AlltoAll: a link to and from every other rank.
    mesh_senders: Vec<Option<Box<dyn Sender>>>,
    mesh_receivers: Vec<Option<Box<dyn Receiver>>>,
    /// Recursive doubling receives into this, kept between calls.
    scratch: Vec<u8>,
    /// How messages name each rank ("rank 1 (10.0.0.2)"), made once at connect, not per call.
    labels: Vec<String>,
    /// "tcp", or the verbs device, port and GID in use.
    pub transport: String,
    /// The sweep's input and output buffers, registered over verbs (see `working.rs`).
    working: working::WorkingMemory,
    /// The verbs port the links are on (registers the working memory).
    port: Option<StreamPort>,
    /// How long a link waits on a silent peer (the rendezvous' timeout).
    timeout: Duration,
}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Communicator")
            .field("rank", &self.rank)
            .field("world", &self.world)
            .field("hosts", &self.hosts)
            .field("transport", &self.transport)
            .finish()
    }
}

/// A rank other than 0 waiting for rank 0's word where rank 0 waits on every rank first (a
/// barrier, an algorithm choice): rank 0 may itself wait out a silent rank for the communicator's
/// `timeout` and then listen for the others' words (at most `departure::LISTEN_LONGEST`) before it
/// says which rank stopped, so this rank waits that long and a little more
/// (`departure::WORD_PATIENCE`) before it blames rank 0.
fn read_from_rank_zero(
    stream: &mut TcpStream,
    master: &str,
    during: &'static str,
    timeout: Duration,
) -> Result<Control, PerfError> {
    let _ = stream.set_read_timeout(Some(timeout + departure::WORD_PATIENCE));
    let message = read_message::<Control>(stream, master, during);
    let _ = stream.set_read_timeout(Some(timeout));
    message
}

fn prepare(stream: &TcpStream, timeout: Duration) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(timeout));
    let _ = stream.set_write_timeout(Some(timeout));
}

fn dial_until(address: &str, port: u16, deadline: Instant, timeout: Duration) -> Result<TcpStream, PerfError> {
    let target = format!("{address}:{port}");
    loop {
        let attempt = (address, port).to_socket_addrs().map(|mut a| a.next());
        let error = match attempt {
            Ok(Some(socket)) => match TcpStream::connect_timeout(&socket, timeout) {
                Ok(stream) => {
                    prepare(&stream, timeout);
                    return Ok(stream);
                }
                Err(error) => error,
            },
            Ok(None) => std::io::Error::new(ErrorKind::NotFound, "no address"),
            Err(error) => error,
        };
        if Instant::now() >= deadline {
            return Err(PerfError::Connect { peer: target, cause: error });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn accept_until(
    listener: &TcpListener,
    deadline: Instant,
    timeout: Duration,
    waiting_for: &str,
) -> Result<TcpStream, PerfError> {
    listener.set_nonblocking(true).map_err(|e| io_error(waiting_for, "accept", e, timeout))?;
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                stream.set_nonblocking(false).map_err(|e| io_error(waiting_for, "accept", e, timeout))?;
                prepare(&stream, timeout);
                return Ok(stream);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(PerfError::PeerSilent { peer: waiting_for.into(), waited: timeout });
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(io_error(waiting_for, "accept", e, timeout)),
        }
    }
}

/// Decode what a peer of a collective sends first (a join, a table, a data hello: frames as
/// [`write_message`] writes them) and judge it as rank 0 of a 4-rank job with a ticket would, naming
/// the peer: the network-facing decoders of this module, for the fuzz harness. Never panics.
pub fn judge_peer_message(bytes: &[u8]) -> Result<String, PerfError> {
    let rendezvous = Rendezvous {
        rank: 0,
        world: 4,
        master_host: "127.0.0.1".into(),
        master_port: 1,
        channels: 2,
        timeout: Duration::from_secs(1),
        fingerprint: "job".into(),
        bind: None,
        ticket: Some("ab".repeat(32)),
    };
    let membership = Membership {
        hosts: vec!["a".into(), "b".into(), "c".into(), "d".into()],
        ports: vec![1, 2, 3, 4],
        control: vec![],
    };
    if let Ok(hello) = crate::handshake::decode_frame::<DataHello>(bytes, "peer") {
        let admitted = rendezvous.admits(hello.ticket.as_deref());
        return Ok(format!("{} admitted {admitted} channel {:?}", membership.label(hello.rank), hello.channel));
    }
    match crate::handshake::decode_frame::<Control>(bytes, "peer")? {
        Control::Join { rank, world, ticket, .. } => {
            Ok(format!("join {} of {world}, admitted {}", membership.label(rank), rendezvous.admits(ticket.as_deref())))
        }
        Control::Table { hosts, ports } => Ok(format!("table of {} hosts, {} ports", hosts.len(), ports.len())),
        other => Ok(format!("{other:?}")),
    }
}

/// The first message of an accepted connection. Where the job has a ticket, strangers are
/// expected: one that says nothing within [`INTRODUCTION_TIMEOUT`], or garbage, is dropped
/// (`Ok(None)`). Without a ticket every peer is a rank, and a bad first message is the job's error.
fn introduction<T: serde::de::DeserializeOwned>(
    stream: &mut TcpStream,
    rendezvous: &Rendezvous,
    peer: &str,
    what: &'static str,
    timeout: Duration,
) -> Result<Option<T>, PerfError> {
    if rendezvous.ticket.is_none() {
        return read_message(stream, peer, what).map(Some);
    }
    let _ = stream.set_read_timeout(Some(INTRODUCTION_TIMEOUT));
    let message = read_message(stream, peer, what).ok();
    let _ = stream.set_read_timeout(Some(timeout));
    Ok(message)
}

fn boxed_sender(link: TcpLink) -> Box<dyn Sender> {
    Box::new(link)
}

fn boxed_receiver(link: TcpLink) -> Box<dyn Receiver> {
    Box::new(link)
}

/// The first message on a data connection: who is calling, and for which ring channel or the mesh.
#[derive(Debug, Serialize, Deserialize)]
struct DataHello {
    rank: usize,
    channel: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ticket: Option<String>,
}

/// Who is in the job: every rank's host and data port, and the control connections (rank 0: to
/// ranks 1.. in rank order; the others: one to rank 0).
struct Membership {
    hosts: Vec<String>,
    ports: Vec<u16>,
    control: Vec<TcpStream>,
}

impl Membership {
    /// How messages name rank 0 while the table is being built.
    fn master_label(rendezvous: &Rendezvous) -> String {
        format!("rank 0 ({}:{})", rendezvous.master_host, rendezvous.master_port)
    }

    /// Rank 0: accept every other rank's join, refuse a mismatched one by name, then send everyone
    /// the table of hosts and data ports.
    fn gather(rendezvous: &Rendezvous, data_port: u16, deadline: Instant) -> Result<Membership, PerfError> {
        let Rendezvous { world, timeout, .. } = *rendezvous;
        let master = Membership::master_label(rendezvous);
        let listener = TcpListener::bind((rendezvous.listen_on(), rendezvous.master_port))
            .map_err(|e| io_error(&master, "listening for ranks", e, timeout))?;
        let mut joined: Vec<Option<(TcpStream, String, u16)>> = (0..world).map(|_| None).collect();
        while joined.iter().skip(1).any(Option::is_none) {
            let missing: Vec<String> = (1..world).filter(|r| joined[*r].is_none()).map(|r| r.to_string()).collect();
            let mut stream =
                accept_until(&listener, deadline, timeout, &format!("ranks {} to join", missing.join(",")))?;
            let peer = stream.peer_addr().map(|a| a.ip().to_string()).unwrap_or_default();
            let Some(message) = introduction::<Control>(&mut stream, rendezvous, &peer, "join", timeout)? else {
                continue;
            };
            let Control::Join { rank: joiner, world: their_world, data_port, fingerprint, ticket, data_host } = message
            else {
                return Err(PerfError::Handshake { peer, reason: "expected a join".into() });
            };
            if !rendezvous.admits(ticket.as_deref()) {
                // A stranger: dropped unanswered, and rank 0 goes on waiting for the real ranks.
                continue;
            }
            let refuse = |stream: &mut TcpStream, reason: String| {
                let _ = write_message(stream, &peer, &Control::Reject { reason: reason.clone() });
                PerfError::Handshake { peer: format!("rank {joiner} ({peer})"), reason }
            };
            if their_world != world {
                return Err(refuse(
                    &mut stream,
                    format!("world size {their_world} on rank {joiner} but {world} on rank 0"),
                ));
            }
            if joiner == 0 || joiner >= world || joined[joiner].is_some() {
                return Err(refuse(&mut stream, format!("rank {joiner} is taken or out of range")));
            }
            if fingerprint != rendezvous.fingerprint {
                return Err(refuse(
                    &mut stream,
                    format!(
                        "parameters differ: rank {joiner} runs {fingerprint}, rank 0 runs {}",
                        rendezvous.fingerprint
                    ),
                ));
            }
            let host = data_host.map_or(peer, |address| address.to_string());
            joined[joiner] = Some((stream, host, data_port));
        }
        let mut hosts = vec![rendezvous.master_host.clone()];
        let mut ports = vec![data_port];
        let mut table_hosts = vec![None];
        for entry in joined.iter().skip(1) {
            let Some((_, host, port)) = entry else { continue };
            hosts.push(host.clone());
            ports.push(*port);
            table_hosts.push(Some(host.clone()));
        }
        let table = Control::Table { hosts: table_hosts, ports: ports.clone() };
        let mut control = Vec::new();
        for entry in joined.into_iter().skip(1).flatten() {
            let (mut stream, host, _) = entry;
            write_message(&mut stream, &host, &table)?;
            control.push(stream);
        }
        Ok(Membership { hosts, ports, control })
    }

    /// Ranks 1..: join rank 0 and receive the table (or rank 0's reason for refusing).
    fn join(rendezvous: &Rendezvous, data_port: u16, deadline: Instant) -> Result<Membership, PerfError> {
        let Rendezvous { rank, world, timeout, .. } = *rendezvous;
        let master = Membership::master_label(rendezvous);
        let mut stream = dial_until(&rendezvous.master_host, rendezvous.master_port, deadline, timeout)?;
        let join = Control::Join {
            rank,
            world,
            data_port,
            fingerprint: rendezvous.fingerprint.clone(),
            ticket: rendezvous.ticket.clone(),
            data_host: rendezvous.bind,
        };
        write_message(&mut stream, &master, &join)?;
        match read_message::<Control>(&mut stream, &master, "rendezvous")? {
            Control::Table { hosts, ports } => {
                // Every later index (neighbours, mesh peers) is a rank below `world`: a table of any
                // other length is refused here rather than indexed out of bounds later.
                if hosts.len() != world || ports.len() != world {
                    return Err(PerfError::Handshake {
                        peer: master,
                        reason: format!(
                            "a table of {} hosts and {} ports for a world of {world} ranks",
                            hosts.len(),
                            ports.len()
                        ),
                    });
                }
                let hosts = hosts.into_iter().map(|h| h.unwrap_or_else(|| rendezvous.master_host.clone())).collect();
                Ok(Membership { hosts, ports, control: vec![stream] })
            }
            Control::Reject { reason } => Err(PerfError::Handshake { peer: master, reason }),
            other => Err(PerfError::Handshake { peer: master, reason: format!("unexpected {other:?}") }),
        }
    }

    /// How messages name a rank's data endpoint; a rank outside the table (a peer's claim, read
    /// from the network) is named as such, never indexed.
    fn label(&self, rank: usize) -> String {
        match (self.hosts.get(rank), self.ports.get(rank)) {
            (Some(host), Some(port)) => format!("rank {rank} ({host}:{port})"),
            _ => format!("rank {rank} (outside a world of {} ranks)", self.hosts.len()),
        }
    }
}

/// How a message names `rank` from the communicator's labels ("rank 1 (10.0.0.2)"), so a control
/// connection's error names the host as a data link's does; a rank outside them (a peer's claim, read
/// from the network) is named as such, never indexed.
pub(crate) fn name_of(labels: &[String], rank: usize) -> String {
    labels.get(rank).cloned().unwrap_or_else(|| format!("rank {rank} (outside a world of {} ranks)", labels.len()))
}

/// The data connections of one rank, before a transport is wired over them.
struct DataStreams {
    /// Per channel, dialed to the right neighbour.
    right: Vec<TcpStream>,
    /// Per channel, accepted from the left neighbour.
    left: Vec<TcpStream>,
    /// One per mesh peer (dialed to higher ranks, accepted from lower ones), by rank.
    mesh: Vec<Option<TcpStream>>,
}

/// Which links a communicator opens besides its ring channels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mesh {
    /// Ring only.
    None,
    /// The partners of recursive doubling (log2(n) of them, [`tree::partners`]).
    Doubling,
    /// Every other rank (AlltoAll).
    Full,
}

impl Mesh {
    /// The links `collective` needs when `choice` says which AllReduce algorithms may run.
    pub fn for_collective(collective: Collective, choice: AlgorithmChoice) -> Mesh {
        match (collective, choice) {
            (Collective::AlltoAll, _) => Mesh::Full,
            (Collective::AllReduce, AlgorithmChoice::Tree | AlgorithmChoice::Auto) => Mesh::Doubling,
            _ => Mesh::None,
        }
    }

    /// The mesh peers of `rank`, ascending.
    fn peers(self, rank: usize, world: usize) -> Vec<usize> {
        match self {
            Mesh::None => Vec::new(),
            Mesh::Doubling => tree::partners(rank, world),
            Mesh::Full => (0..world).filter(|&peer| peer != rank).collect(),
        }
    }
}

impl DataStreams {
    /// Dial first (the peers' listeners exist since before the table was sent; the kernel queues
    /// our connections until they accept), then accept what the others dialed, each announcing
    /// itself with a `DataHello`.
    fn open(
        data: &TcpListener,
        rendezvous: &Rendezvous,
        mesh: Mesh,
        membership: &Membership,
        deadline: Instant,
    ) -> Result<DataStreams, PerfError> {
        let Rendezvous { rank, world, channels, timeout, .. } = *rendezvous;
        let Membership { hosts, ports, .. } = membership;
        let label = |r: usize| membership.label(r);
        let mut right_streams = Vec::with_capacity(channels);
        let mut mesh_streams: Vec<Option<TcpStream>> = (0..world).map(|_| None).collect();
        let right = (rank + 1) % world;
        for channel in 0..channels {
            let mut stream = dial_until(&hosts[right], ports[right], deadline, timeout)?;
            let hello = DataHello { rank, channel: Some(channel), ticket: rendezvous.ticket.clone() };
            write_message(&mut stream, &label(right), &hello)?;
            right_streams.push(stream);
        }
        let peers = mesh.peers(rank, world);
        for &peer in peers.iter().filter(|&&peer| peer > rank) {
            let mut stream = dial_until(&hosts[peer], ports[peer], deadline, timeout)?;
            let hello = DataHello { rank, channel: None, ticket: rendezvous.ticket.clone() };
            write_message(&mut stream, &label(peer), &hello)?;
            mesh_streams[peer] = Some(stream);
        }
        let expected = channels + peers.iter().filter(|&&peer| peer < rank).count();
        let mut left: Vec<Option<TcpStream>> = (0..channels).map(|_| None).collect();
        let left_rank = (rank + world - 1) % world;
        let mut accepted = 0;
        while accepted < expected {
            let mut stream = accept_until(data, deadline, timeout, &label(left_rank))?;
            let Some(hello) = introduction::<DataHello>(&mut stream, rendezvous, "a peer", "data hello", timeout)?
            else {
                continue;
            };
            if !rendezvous.admits(hello.ticket.as_deref()) {
                continue;
            }
            accepted += 1;
            match hello.channel {
                Some(channel) if hello.rank == left_rank && channel < channels => left[channel] = Some(stream),
                None if hello.rank < rank && peers.contains(&hello.rank) => mesh_streams[hello.rank] = Some(stream),
                _ => {
                    return Err(PerfError::Handshake {
                        peer: label(hello.rank),
                        reason: "unexpected data connection".into(),
                    })
                }
            }
        }
        let left_streams: Vec<TcpStream> = left
            .into_iter()
            .map(|s| s.ok_or_else(|| PerfError::Transport("missing left connection".into())))
            .collect::<Result<_, _>>()?;
        Ok(DataStreams { right: right_streams, left: left_streams, mesh: mesh_streams })
    }
}

/// Tries to bind a listener to any free port again when the kernel reported the address in use.
/// A port the system hands out is free when handed out, yet burn-in agents of one machine bind
/// theirs at the same moment as rank 0 binds the port an agent reserved and released for its
/// rendezvous, and a bind to port 0 has been seen to fail so (EADDRINUSE, bind(2)); the next one
/// gets another port. Bounded: five tries, 20 ms apart; any other error at once.
fn bind_any_port(mut bind: impl FnMut() -> std::io::Result<TcpListener>) -> std::io::Result<TcpListener> {
    const TRIES: u32 = 5;
    let mut tried = 1;
    loop {
        match bind() {
            Err(e) if e.kind() == ErrorKind::AddrInUse && tried < TRIES => {
                tried += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            result => return result,
        }
    }
}

/// Which of a rank's data streams a verbs link was set up over; its stream halves go there.
#[derive(Debug, Clone, Copy)]
enum LinkPlace {
    Right,
    Left,
    Mesh(usize),
}

impl Communicator {
    /// Meet the other ranks and open every data connection; fails within `timeout` (plus connection
    /// setup) naming the rank that did not come.
    pub fn connect(rendezvous: &Rendezvous, mesh: Mesh, transport: &Transport) -> Result<Communicator, PerfError> {
        let Rendezvous { rank, world, timeout, .. } = *rendezvous;
        if world == 0 || rank >= world {
            return Err(PerfError::Unsupported(format!("rank {rank} is outside a world of {world} ranks")));
        }
        let deadline = Instant::now() + timeout;
        let data = bind_any_port(|| TcpListener::bind((rendezvous.listen_on(), 0)))
            .map_err(|e| io_error("data listener", "bind", e, timeout))?;
        let data_port = data.local_addr().map_err(|e| io_error("data listener", "bind", e, timeout))?.port();
        let membership = if rank == 0 {
            Membership::gather(rendezvous, data_port, deadline)?
        } else {
            Membership::join(rendezvous, data_port, deadline)?
        };
        // Open the device before anything else can fail half-way: its errors name what is missing.
        let port = match transport {
            Transport::Tcp => None,
            Transport::Verbs(options) => Some(StreamPort::open(options)?),
        };
        let mut communicator = Communicator {
            rank,
            world,
            hosts: membership.hosts.clone(),
            control: Vec::new(),
            right: Vec::new(),
            left: Vec::new(),
            mesh_senders: (0..world).map(|_| None).collect(),
            mesh_receivers: (0..world).map(|_| None).collect(),
            scratch: Vec::new(),
            labels: Vec::new(),
            transport: port.as_ref().map(|p| format!("verbs {}", p.describe())).unwrap_or_else(|| "tcp".into()),
            working: working::WorkingMemory::default(),
            port: None,
            timeout,
        };
        communicator.labels = (0..world).map(|r| communicator.label(r)).collect();
        if world == 1 {
            communicator.control = membership.control;
            return Ok(communicator);
        }
        let streams = DataStreams::open(&data, rendezvous, mesh, &membership, deadline)?;
        communicator.control = membership.control;
        let names = communicator.labels.clone();
        match &port {
            None => communicator.wire_tcp(streams, &names, timeout)?,
            Some(port) => communicator.wire_verbs(port, streams, &names)?,
        }
        communicator.port = port;
        Ok(communicator)
    }

    /// Data over TCP: one link per ring channel each way, and a link to and from every mesh peer.
    fn wire_tcp(&mut self, streams: DataStreams, names: &[String], timeout: Duration) -> Result<(), PerfError> {
        let right = (self.rank + 1) % self.world;
        let left = (self.rank + self.world - 1) % self.world;
        let name = |r: usize| names[r].clone();
        self.right = streams.right.into_iter().map(|s| boxed_sender(TcpLink::new(s, name(right), timeout))).collect();
        self.left = streams.left.into_iter().map(|s| boxed_receiver(TcpLink::new(s, name(left), timeout))).collect();
        for (peer, stream) in streams.mesh.into_iter().enumerate() {
            let Some(stream) = stream else { continue };
            let reader = stream.try_clone().map_err(|e| io_error(&name(peer), "mesh setup", e, timeout))?;
            self.mesh_senders[peer] = Some(boxed_sender(TcpLink::new(stream, name(peer), timeout)));
            self.mesh_receivers[peer] = Some(boxed_receiver(TcpLink::new(reader, name(peer), timeout)));
        }
        Ok(())
    }

    /// Data over verbs: one queue pair per ring link (this side writes to the right and is written
    /// to from the left) and two per mesh link (one each way), set up over the TCP data streams.
    fn wire_verbs(&mut self, port: &StreamPort, streams: DataStreams, names: &[String]) -> Result<(), PerfError> {
        let right = (self.rank + 1) % self.world;
        let left = (self.rank + self.world - 1) % self.world;
        let DataStreams { right: mut right_streams, left: mut left_streams, mesh: mut mesh_streams } = streams;
        let mut links: Vec<(&mut TcpStream, usize, String, Vec<Role>)> = Vec::new();
        let mut places: Vec<LinkPlace> = Vec::new();
        for stream in right_streams.iter_mut() {
            links.push((stream, right, names[right].clone(), vec![Role::Send]));
            places.push(LinkPlace::Right);
        }
        for stream in left_streams.iter_mut() {
            links.push((stream, left, names[left].clone(), vec![Role::Receive]));
            places.push(LinkPlace::Left);
        }
        for (peer, stream) in mesh_streams.iter_mut().enumerate() {
            if let Some(stream) = stream {
                links.push((stream, peer, names[peer].clone(), vec![Role::Send, Role::Receive]));
                places.push(LinkPlace::Mesh(peer));
            }
        }
        // The halves come back in the order of `links`, so each goes where its link's place says.
        let halves = connect_links(port, self.rank, names, &mut links)?;
        for (halves, place) in halves.into_iter().zip(places) {
            for half in halves {
                match (half, place) {
                    (StreamHalf::Send(sender), LinkPlace::Right) => self.right.push(Box::new(sender)),
                    (StreamHalf::Receive(receiver), LinkPlace::Left) => self.left.push(Box::new(receiver)),
                    (StreamHalf::Send(sender), LinkPlace::Mesh(peer)) => {
                        self.mesh_senders[peer] = Some(Box::new(sender))
                    }
                    (StreamHalf::Receive(receiver), LinkPlace::Mesh(peer)) => {
                        self.mesh_receivers[peer] = Some(Box::new(receiver))
                    }
                    (StreamHalf::Send(_), LinkPlace::Left) | (StreamHalf::Receive(_), LinkPlace::Right) => {
                        return Err(PerfError::Transport(
                            "verbs link setup returned a half of the wrong direction for a ring link".into(),
                        ))
                    }
                }
            }
        }
        Ok(())
    }

    fn label(&self, rank: usize) -> String {
        match self.hosts.get(rank) {
            Some(host) => format!("rank {rank} ({host})"),
            None => format!("rank {rank} (outside a world of {} ranks)", self.world),
        }
    }

    /// Every rank waits until all are ready (through rank 0).
    pub fn barrier(&mut self) -> Result<(), PerfError> {
        if self.rank == 0 {
            self.hear_every_rank("barrier", |labels, peer, message| match message {
                Control::Ready => Ok(()),
                Control::Abort { rank, reason } => {
                    Err(PerfError::Transport(format!("{} aborted: {reason}", name_of(labels, rank))))
                }
                other => Err(PerfError::Handshake { peer, reason: format!("expected ready, got {other:?}") }),
            })?;
            self.tell_ranks(&Control::Go)?;
        } else {
            let master = name_of(&self.labels, 0);
            let timeout = self.timeout;
            let Some(stream) = self.control.first_mut() else { return Ok(()) };
            if let Err(error) = write_message(stream, &master, &Control::Ready) {
                return Err(departure::why_rank_zero_is_gone(stream, &self.labels, error));
            }
            match read_from_rank_zero(stream, &master, "barrier", timeout)? {
                Control::Go => {}
                Control::Stopped { first, silent_ms } => {
                    return Err(departure::rank_zero_left(&self.labels, first, silent_ms))
                }
                other => {
                    return Err(PerfError::Handshake { peer: master, reason: format!("expected go, got {other:?}") })
                }
            }
        }
        Ok(())
    }

    /// Rank 0 collects every rank's (time, wrong count); other ranks send theirs and get `None`.
    pub fn gather_results(&mut self, time_us: f64, wrong: u64) -> Result<Option<Vec<(f64, u64)>>, PerfError> {
        if self.rank == 0 {
            let mut all = vec![(time_us, wrong)];
            self.hear_every_rank("results", |_, peer, message| match message {
                Control::Result { time_us, wrong } => {
                    all.push((time_us, wrong));
                    Ok(())
                }
                other => Err(PerfError::Handshake { peer, reason: format!("expected results, got {other:?}") }),
            })?;
            Ok(Some(all))
        } else {
            if let Some(stream) = self.control.first_mut() {
                if let Err(error) =
                    write_message(stream, &name_of(&self.labels, 0), &Control::Result { time_us, wrong })
                {
                    return Err(departure::why_rank_zero_is_gone(stream, &self.labels, error));
                }
            }
            Ok(None)
        }
    }

    /// Rank 0: one message from every other rank, in rank order, each handed to `take` with the
    /// labels and the sender's name. Failing where every other rank waits on it (a barrier, the
    /// results), rank 0 tells them which rank went silent or closed its control connection
    /// (`departure.rs`) instead of leaving them to find rank 0 gone.
    fn hear_every_rank(
        &mut self,
        during: &'static str,
        mut take: impl FnMut(&[String], String, Control) -> Result<(), PerfError>,
    ) -> Result<(), PerfError> {
        let labels = &self.labels;
        let heard = self.control.iter_mut().enumerate().try_for_each(|(index, stream)| {
            let peer = name_of(labels, index + 1);
            let message = read_message::<Control>(stream, &peer, during)?;
            take(labels, peer, message)
        });
        heard.map_err(|error| departure::name_the_first(&mut self.control, &self.labels, error))
    }

    /// Rank 0: send `message` to every other rank.
    fn tell_ranks(&mut self, message: &Control) -> Result<(), PerfError> {
        let labels = &self.labels;
        for (index, stream) in self.control.iter_mut().enumerate() {
            write_message(stream, &name_of(labels, index + 1), message)?;
        }
        Ok(())
    }

    /// Other ranks: read what rank 0 decided (`what`, for messages); `pick` takes the one message
    /// that may come, anything else is a handshake error naming rank 0.
    fn hear_from_rank_zero<T>(
        &mut self,
        what: &'static str,
        pick: impl FnOnce(Control) -> Result<T, Control>,
    ) -> Result<T, PerfError> {
        let master = name_of(&self.labels, 0);
        let timeout = self.timeout;
        let stream = self.control.first_mut().ok_or_else(|| PerfError::Transport(format!("no link to {master}")))?;
        let message = read_from_rank_zero(stream, &master, what, timeout)?;
        if let Control::Stopped { first, silent_ms } = message {
            return Err(departure::rank_zero_left(&self.labels, first, silent_ms));
        }
        pick(message).map_err(|other| PerfError::Handshake {
            peer: master,
            reason: format!("expected the {what}, got {other:?}"),
        })
    }

    /// Rank 0 decides from every rank's time of each algorithm (tree where its slowest rank was
    /// faster than ring's) and every rank gets its answer: the same algorithm everywhere.
    /// Returns the choice and, on rank 0, the slowest rank's time of each (elsewhere this rank's).
    pub fn agree_on_tree(&mut self, ring_us: f64, tree_us: f64) -> Result<(bool, f64, f64), PerfError> {
        let ring = self.gather_results(ring_us, 0)?;
        let tree = self.gather_results(tree_us, 0)?;
        let (Some(ring), Some(tree)) = (ring, tree) else {
            let tree = self.hear_from_rank_zero("algorithm choice", |message| match message {
                Control::Choice { tree } => Ok(tree),
                other => Err(other),
            })?;
            return Ok((tree, ring_us, tree_us));
        };
        let slowest = |times: &[(f64, u64)]| times.iter().map(|(t, _)| *t).fold(0.0, f64::max);
        let (ring, tree) = (slowest(&ring), slowest(&tree));
        let choice = tree < ring;
        self.tell_ranks(&Control::Choice { tree: choice })?;
        Ok((choice, ring, tree))
    }

    /// Measure the cost model on the live links (every rank takes part; rank 0 decides and tells
    /// the others, so all pick the same algorithm per size):
    /// - α per algorithm: the median time of a ring AllReduce of one element per rank, run
    ///   [`LATENCY_ROUNDS`] times after warm-up, divided by its 2(n-1) steps; with `tree`, the same
    ///   for recursive doubling, divided by its exchanges. A step's latency then holds everything a
    ///   step costs on this communicator (the wire, the kernel, waking the receiver), as each
    ///   algorithm meets it: exchanges run all pairs at once, a ring hop one link after another.
    /// - β: every rank sends [`PROBE_BYTES`] to its right neighbour while receiving as much from its
    ///   left, over all channels at once (a ring step's traffic pattern), [`PROBE_ROUNDS`] times
    ///   after a first; each rank's fastest round, the slowest rank's, less a ring step, gives the
    ///   bandwidth.
    pub fn calibrate(&mut self, tree: bool) -> Result<Option<CostModel>, PerfError> {
        if self.world == 1 {
            return Ok(None);
        }
        let world = self.world;
        self.barrier()?;
        let (ring_call_us, tree_call_us) = self.median_tiny_all_reduces(tree)?;
        self.barrier()?;
        // The first round opens the links' windows; of the others, each rank keeps its fastest.
        let mut probe_us = f64::INFINITY;
        for round in 0..=PROBE_ROUNDS {
            let started = Instant::now();
            self.ring_shift(PROBE_BYTES)?;
            if round > 0 {
                probe_us = probe_us.min(started.elapsed().as_secs_f64() * 1e6);
            }
        }
        let Some(times) = self.gather_results(probe_us, 0)? else {
            let model = self.hear_from_rank_zero("cost model", |message| match message {
                Control::Model { model } => Ok(model),
                other => Err(other),
            })?;
            return Ok(Some(model));
        };
        let ring_step_us = ring_call_us / (2 * (world - 1)) as f64;
        let slowest = times.iter().map(|(t, _)| *t).fold(0.0, f64::max);
        let transfer_us = (slowest - ring_step_us).max(slowest / 2.0);
        let model = CostModel {
            ring_step_us,
            tree_step_us: tree_call_us.map(|t| t / doubling_steps(world).max(1) as f64),
            bandwidth_gbytes_per_second: PROBE_BYTES as f64 / (transfer_us * 1e3),
        };
        self.tell_ranks(&Control::Model { model })?;
        Ok(Some(model))
    }

    /// This rank's median times, in µs, of an AllReduce of one f32 per rank: ring, and with `tree`
    /// recursive doubling. The two alternate round by round, so a passing disturbance (another
    /// process on the cores, a burst of traffic) weighs on both alike.
    fn median_tiny_all_reduces(&mut self, tree: bool) -> Result<(f64, Option<f64>), PerfError> {
        let mut buffer = vec![0u8; self.world * DataType::F32.size()];
        let mut calls = [Vec::with_capacity(LATENCY_ROUNDS), Vec::with_capacity(LATENCY_ROUNDS)];
        let algorithms: &[Algorithm] = if tree { &[Algorithm::Ring, Algorithm::Tree] } else { &[Algorithm::Ring] };
        for round in 0..LATENCY_WARMUP + LATENCY_ROUNDS {
            for (index, &algorithm) in algorithms.iter().enumerate() {
                let started = Instant::now();
                self.run(Collective::AllReduce, algorithm, &mut buffer, DataType::F32, ReduceOp::Sum, 0)?;
                if round >= LATENCY_WARMUP {
                    calls[index].push(started.elapsed().as_secs_f64() * 1e6);
                }
            }
        }
        let median = |mut times: Vec<f64>| {
            times.sort_by(f64::total_cmp);
            times.get(times.len() / 2).copied()
        };
        let [ring, tree] = calls;
        Ok((median(ring).unwrap_or(0.0), median(tree)))
    }

    /// Every rank sends `bytes` to its right neighbour and receives as many from its left, split
    /// over the channels, all at once.
    fn ring_shift(&mut self, bytes: usize) -> Result<(), PerfError> {
        let per_channel = bytes.div_ceil(self.right.len().max(1));
        let outgoing = vec![0x5au8; per_channel];
        let outgoing = &outgoing;
        std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .right
                .iter_mut()
                .zip(self.left.iter_mut())
                .map(|(right, left)| {
                    scope.spawn(move || {
                        let mut incoming = vec![0u8; per_channel];
                        link::exchange(&mut **right, &mut **left, outgoing, &mut incoming, SLICE_BYTES)
                    })
                })
                .collect();
            for handle in handles {
                handle.join().map_err(|_| PerfError::Transport("a bandwidth probe thread panicked".into()))??;
            }
            Ok(())
        })
    }

    /// Run `collective` once over `buffer` (the receive buffer, already holding this rank's input where
    /// the collective works in place), splitting the data over the channels. `algorithm` chooses
    /// AllReduce's; the other collectives have one each.
    pub fn run(
        &mut self,
        collective: Collective,
        algorithm: Algorithm,
        buffer: &mut [u8],
        data_type: DataType,
        op: ReduceOp,
        root: usize,
    ) -> Result<(), PerfError> {
        let result = self.run_from(collective, algorithm, None, buffer, data_type, op, root);
        self.name_who_stopped(result)
    }

    /// Make the working memory hold two buffers of at least `bytes` each (over verbs registered
    /// with the adapter, and every link told to send from it in place). A sweep reserves its
    /// largest size first, so the memory is allocated and registered once.
    pub fn reserve_working(&mut self, bytes: usize) -> Result<(), PerfError> {
        if self.working.capacity() >= bytes {
            return Ok(());
        }
        // Links stop writing from the old memory before it goes.
        self.tell_links(None);
        self.working = working::WorkingMemory::default();
        self.working = working::WorkingMemory::allocate(bytes, self.port.as_ref())?;
        self.tell_links(self.working.region());
        Ok(())
    }

    fn tell_links(&mut self, region: Option<link::SourceRegion>) {
        for sender in self.right.iter_mut().chain(self.mesh_senders.iter_mut().flatten()) {
            sender.send_in_place(region);
        }
    }

    /// This rank's input and output buffers of `bytes` each, in the working memory (reserved here
    /// when it is smaller): fill the input, run [`Communicator::run_working`], read the output.
    pub fn working_buffers(&mut self, bytes: usize) -> Result<(&mut [u8], &mut [u8]), PerfError> {
        self.reserve_working(bytes)?;
        Ok(self.working.buffers(bytes))
    }

    /// Run `collective` on the working buffers of `bytes`: in place on the output, or out of place
    /// from the input into the output, where AllReduce's ring and AlltoAll read the input where it
    /// is (the others copy it to the output first). Over verbs the links write from the working
    /// memory in place.
    #[expect(clippy::too_many_arguments, reason = "the collective's parameters, as nccl-tests takes them")]
    pub fn run_working(
        &mut self,
        collective: Collective,
        algorithm: Algorithm,
        bytes: usize,
        in_place: bool,
        data_type: DataType,
        op: ReduceOp,
        root: usize,
    ) -> Result<(), PerfError> {
        self.reserve_working(bytes)?;
        // The memory is moved out and back, not its bytes: they stay where they were registered.
        let mut memory = std::mem::take(&mut self.working);
        let (input, output) = memory.buffers(bytes);
        let source = if in_place { None } else { Some(&*input) };
        let result = self.run_from(collective, algorithm, source, output, data_type, op, root);
        self.working = memory;
        self.name_who_stopped(result)
    }

    /// Over TCP a failure names the rank that stopped first, as rank 0 learns it (`departure.rs`):
    /// rank 0 follows what the others said as they left and tells them what it found, and they
    /// wait a moment for it. Over verbs the links' own watch does (`verbs::watch`), and rank 0 tells
    /// what it found to the ranks that may be waiting for it outside the links.
    fn name_who_stopped(&mut self, result: Result<(), PerfError>) -> Result<(), PerfError> {
        match result {
            Err(error) if self.port.is_some() && self.rank == 0 && self.world > 1 => {
                departure::tell_what_the_links_found(&mut self.control, &self.labels, &error);
                Err(error)
            }
            Err(error) if self.port.is_none() && self.world > 1 => Err(if self.rank == 0 {
                departure::name_the_first(&mut self.control, &self.labels, error)
            } else {
                departure::tell_rank_zero(&mut self.control, &self.labels, &error);
                // The links end now, so the ranks waiting on this one see it gone at once, and
                // rank 0's answer is not held up by its own wait on them.
                for sender in self.right.iter_mut().chain(self.mesh_senders.iter_mut().flatten()) {
                    sender.leave();
                }
                for receiver in self.left.iter_mut().chain(self.mesh_receivers.iter_mut().flatten()) {
                    receiver.leave();
                }
                // Rank 0 fails of the same cause within one timeout of this rank (its own wait on a
                // link), then listens for at most its patience.
                let patience = self.timeout + departure::WORD_PATIENCE;
                departure::hear_the_first(&mut self.control, &self.labels, error, patience)
            }),
            other => other,
        }
    }

    /// [`Communicator::run`], out of place when `source` (this rank's input, as long as `buffer`)
    /// is given.
    #[expect(clippy::too_many_arguments, reason = "the collective's parameters, as nccl-tests takes them")]
    fn run_from(
        &mut self,
        collective: Collective,
        algorithm: Algorithm,
        source: Option<&[u8]>,
        buffer: &mut [u8],
        data_type: DataType,
        op: ReduceOp,
        root: usize,
    ) -> Result<(), PerfError> {
        let direct =
            collective == Collective::AlltoAll || (collective == Collective::AllReduce && algorithm == Algorithm::Ring);
        let source = match source {
            Some(input) if !direct || self.world == 1 => {
                buffer.copy_from_slice(input);
                None
            }
            other => other,
        };
        if self.world == 1 {
            return Ok(());
        }
        let element = data_type.size();
        let count = buffer.len() / element;
        let (rank, world) = (self.rank, self.world);
        let labels = &self.labels;
        if collective == Collective::AlltoAll {
            let links = (&mut self.mesh_senders[..], &mut self.mesh_receivers[..]);
            return alltoall(links, source, buffer, &mut self.scratch, element, rank, world, labels);
        }
        if collective == Collective::AllReduce && algorithm == Algorithm::Tree {
            let mut links = tree::Links {
                senders: &mut self.mesh_senders,
                receivers: &mut self.mesh_receivers,
                labels,
                rank,
                world,
            };
            let usable = count * element;
            return tree::all_reduce(&mut links, &mut buffer[..usable], &mut self.scratch, data_type, op);
        }
        // A message that one channel carries in a few slices gains nothing from more: every
        // channel adds its own per-step latency and threads. All ranks see the same length, so
        // all use the same channels.
        let channels = if buffer.len() <= ONE_CHANNEL_BYTES { 1 } else { self.right.len() };
        // Each channel is an independent ring over its own slice of the data. Where the result layout
        // is per rank (AllGather, ReduceScatter), channel c takes the c-th piece of every rank's block
        // (staged contiguously); elsewhere it takes the c-th contiguous part of the buffer.
        let per_rank_layout = matches!(collective, Collective::AllGather | Collective::ReduceScatter);
        let mut staged: Vec<StagedChannel> = Vec::new();
        let mut parts: Vec<ChannelPart<'_>> = Vec::with_capacity(channels);
        if per_rank_layout && channels > 1 {
            for channel in 0..channels {
                let mut staging = Vec::new();
                let mut blocks = Vec::with_capacity(world);
                let mut pieces = Vec::with_capacity(world);
                for block in 0..world {
                    let elements = part_range(count, world, block);
                    let piece = part_range(elements.len(), channels, channel);
                    let bytes = (elements.start + piece.start) * element..(elements.start + piece.end) * element;
                    let start = staging.len();
                    staging.extend_from_slice(&buffer[bytes.clone()]);
                    blocks.push(start..staging.len());
                    pieces.push(bytes);
                }
                staged.push((staging, blocks, pieces));
            }
            for (staging, blocks, _) in staged.iter_mut() {
                parts.push((staging.as_mut_slice(), None, blocks.clone()));
            }
        } else {
            let mut rest: &mut [u8] = buffer;
            let mut source_rest = source;
            for channel in 0..channels {
                let elements = part_range(count, channels, channel).len();
                let (part, tail) = std::mem::take(&mut rest).split_at_mut(elements * element);
                let input = source_rest.map(|s| s.split_at(elements * element));
                source_rest = input.map(|(_, tail)| tail);
                let blocks = (0..world)
                    .map(|b| {
                        let r = part_range(elements, world, b);
                        r.start * element..r.end * element
                    })
                    .collect();
                parts.push((part, input.map(|(head, _)| head), blocks));
                rest = tail;
            }
        }
        let run_channel = move |right: &mut Box<dyn Sender>, left: &mut Box<dyn Receiver>, channel: ChannelPart| {
            let (part, input, blocks) = channel;
            let mut ring = Ring { right: &mut **right, left: &mut **left, rank, world, blocks, labels };
            match collective {
                Collective::AllReduce => ring.all_reduce(part, input, data_type, op),
                Collective::ReduceScatter => ring.reduce_scatter(part, data_type, op),
                Collective::AllGather => ring.all_gather(part),
                Collective::Broadcast => ring.broadcast(part, root),
                Collective::AlltoAll => Ok(()),
            }
        };
        let result = if channels == 1 {
            // One channel runs on this thread: no thread to start on the latency-bound path.
            match (self.right.first_mut(), self.left.first_mut(), parts.pop()) {
                (Some(right), Some(left), Some(channel)) => run_channel(right, left, channel),
                _ => Err(PerfError::Transport("no ring channel".into())),
            }
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = self
                    .right
                    .iter_mut()
                    .zip(self.left.iter_mut())
                    .zip(parts)
                    .map(|((right, left), channel)| scope.spawn(move || run_channel(right, left, channel)))
                    .collect();
                for handle in handles {
                    handle.join().map_err(|_| PerfError::Transport("a channel thread panicked".into()))??;
                }
                Ok(())
            })
        };
        for (staging, blocks, pieces) in &staged {
            for (block, piece) in blocks.iter().zip(pieces) {
                buffer[piece.clone()].copy_from_slice(&staging[block.clone()]);
            }
        }
        result
    }
}

/// A slice of a ring's part: its offset in the part, its length, and its bytes behind the lock that
/// keeps the writer (sending it) and the receiving thread (combining into it) apart.
type RingSlice<'a> = (usize, usize, std::sync::Mutex<&'a mut [u8]>);

/// A rank's mesh links: a sender to and a receiver from each peer (none for itself).
type MeshLinks<'a> = (&'a mut [Option<Box<dyn Sender>>], &'a mut [Option<Box<dyn Receiver>>]);

/// A ring slice for the one thread that reads or writes it now. A lock poisoned by the other
/// thread's panic still guards plain bytes; that panic is reported when the thread is joined.
fn lock_slice<'a, 'b>(slice: &'a std::sync::Mutex<&'b mut [u8]>) -> std::sync::MutexGuard<'a, &'b mut [u8]> {
    slice.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One channel's ring: its part of the output, its part of the input when the collective runs out of
/// place from it, and the range of each rank's block in the part.
type ChannelPart<'a> = (&'a mut [u8], Option<&'a [u8]>, Vec<std::ops::Range<usize>>);

/// A channel's pieces of every rank's block, copied together: (staging buffer, each block's range in
/// it, each block's range in the real buffer).
type StagedChannel = (Vec<u8>, Vec<std::ops::Range<usize>>, Vec<std::ops::Range<usize>>);

/// How a received slice joins the local block.
#[derive(Debug, Clone, Copy)]
enum Combine {
    Reduce(DataType, ReduceOp),
    Copy,
}

/// One channel's ring: the link to the right neighbour and the one from the left.
struct Ring<'a> {
    right: &'a mut dyn Sender,
    left: &'a mut dyn Receiver,
    rank: usize,
    world: usize,
    /// Byte range of each rank's block within this channel's part.
    blocks: Vec<std::ops::Range<usize>>,
    labels: &'a [String],
}

/// Slices of this size flow through the pipeline, so reduction and forwarding overlap the transfer.
pub(crate) const SLICE_BYTES: usize = 256 * 1024;

/// Up to this size a collective runs on one channel (see [`Communicator::run`]).
const ONE_CHANNEL_BYTES: usize = 64 * 1024;

/// A pipeline whose whole part is at most this is sent on the receiving thread, without a writer:
/// every slice of it fits what a link holds unread (see `tree::INLINE_BYTES`), so no rank can
/// block its neighbour, and no thread is started on the latency-bound path.
const INLINE_PART_BYTES: usize = 16 * 1024;

/// Tiny collectives before the step latency is timed, and timed.
const LATENCY_WARMUP: usize = 5;
const LATENCY_ROUNDS: usize = 31;
/// The bandwidth probe: bytes each rank sends per round (large enough that the per-hop latency is a
/// small share even on a 400 Gb/s link: 4 MiB is 84 µs there), and timed rounds after one more.
const PROBE_BYTES: usize = 4 << 20;
const PROBE_ROUNDS: u32 = 3;

impl Ring<'_> {
    fn right_label(&self) -> &str {
        &self.labels[(self.rank + 1) % self.world]
    }

    /// Run ring steps as one pipeline. Each step sends a block to the right and receives a block from
    /// the left, reducing it into (or copying it over) the local block; in a ring the block received
    /// at step s is the one sent at step s+1, so every slice is forwarded as soon as it is combined
    /// instead of after the whole step: the links stay busy across steps (NCCL's slots do the same).
    /// A writer thread sends the queued slices while this thread receives and combines.
    ///
    /// Nothing is copied on the way: the writer sends each slice from where it lies in `part` (or in
    /// `input`, this rank's own data of an out-of-place call: the first block sent and the base of
    /// every reduction, `part = input op received`), and received bytes are reduced from where the
    /// link holds them. `part` is cut into slices, each behind its own lock, so the writer reading a
    /// slice and this thread writing one can never be the same bytes at once; in a correct ring the
    /// locks never wait (a slice is written again only with data that the peers derived from what
    /// was sent from it).
    fn pipeline(
        &mut self,
        part: &mut [u8],
        input: Option<&[u8]>,
        steps: &[(usize, usize, Combine)],
    ) -> Result<(), PerfError> {
        let Some(&(first_send, _, _)) = steps.first() else {
            return Ok(());
        };
        if part.len() <= INLINE_PART_BYTES {
            return self
                .pipeline_inline(part, input, steps, first_send)
                .map_err(|error| self.blame_left_if_closed(error));
        }
        let right_label = self.right_label().to_string();
        let interrupt = self.right.interrupter();
        let right = &mut *self.right;
        let left = &mut *self.left;
        let world = self.world;
        // Each block's slices, in order: (offset in the part, the slice behind its lock).
        let mut slices: Vec<Vec<RingSlice<'_>>> = Vec::with_capacity(world);
        {
            let mut rest: &mut [u8] = part;
            let mut consumed = 0;
            for block in &self.blocks {
                let (_, tail) = std::mem::take(&mut rest).split_at_mut(block.start - consumed);
                let (body, tail) = tail.split_at_mut(block.len());
                rest = tail;
                consumed = block.end;
                let mut offset = block.start;
                slices.push(
                    body.chunks_mut(SLICE_BYTES)
                        .map(|slice| {
                            let at = offset;
                            offset += slice.len();
                            (at, slice.len(), std::sync::Mutex::new(slice))
                        })
                        .collect(),
                );
            }
        }
        let slices = &slices;
        let first_block = self.blocks[first_send % world].clone();
        // What the writer sends: a slice of the input's first block, or (block, slice) of the part.
        enum Outgoing {
            Input(std::ops::Range<usize>),
            Part(usize, usize),
        }
        let (queue, outgoing) = std::sync::mpsc::channel::<Outgoing>();
        // Set when receiving failed: the writer drops what is queued instead of waiting for a peer.
        let stop = std::sync::atomic::AtomicBool::new(false);
        let stopped = || stop.load(std::sync::atomic::Ordering::Relaxed);
        std::thread::scope(|scope| {
            let writer = scope.spawn(move || -> Result<(), (Instant, PerfError)> {
                let failed = |error| (Instant::now(), error);
                for item in outgoing {
                    if stopped() {
                        return Ok(());
                    }
                    match item {
                        Outgoing::Input(range) => {
                            let bytes = input.map(|i| &i[range]).unwrap_or_default();
                            right.send(bytes).map_err(failed)?;
                        }
                        Outgoing::Part(block, index) => {
                            let slice = lock_slice(&slices[block][index].2);
                            right.send(&slice).map_err(failed)?;
                        }
                    }
                }
                if stopped() {
                    return Ok(());
                }
                right.flush().map_err(failed)
            });
            let received = (|| -> Result<(), PerfError> {
                // A failed writer drops the queue's receiver; sends then fail and stop this side too.
                let send = |item: Outgoing| {
                    queue.send(item).map_err(|_| PerfError::Transport(format!("ring send to {right_label} stopped")))
                };
                let first = first_send % world;
                match input {
                    Some(_) => {
                        let mut offset = first_block.start;
                        while offset < first_block.end {
                            let end = (offset + SLICE_BYTES).min(first_block.end);
                            send(Outgoing::Input(offset..end))?;
                            offset = end;
                        }
                    }
                    None => (0..slices[first].len()).try_for_each(|index| send(Outgoing::Part(first, index)))?,
                }
                for (step, &(_, receive, combine)) in steps.iter().enumerate() {
                    let forward = step + 1 < steps.len();
                    let block = receive % world;
                    for (index, (offset, length, slice)) in slices[block].iter().enumerate() {
                        let length = *length;
                        let mut at = 0;
                        // The slice is locked only while a piece that arrived is combined, never
                        // while waiting for one: the writer may still be sending this slice's
                        // earlier contents, which the peers need before they can send these.
                        left.receive_with(length, &mut |piece| {
                            let end = at + piece.len();
                            let mut local = lock_slice(slice);
                            match (combine, input) {
                                // The input is the base of the reduction where the call is out of
                                // place: a block is reduced into once, before anything else writes it.
                                (Combine::Reduce(data_type, op), Some(input)) => reduce_from(
                                    &mut local[at..end],
                                    &input[offset + at..offset + end],
                                    piece,
                                    data_type,
                                    op,
                                ),
                                (Combine::Reduce(data_type, op), None) => {
                                    reduce_into(&mut local[at..end], piece, data_type, op)
                                }
                                (Combine::Copy, _) => local[at..end].copy_from_slice(piece),
                            }
                            at = end;
                        })?;
                        if forward {
                            send(Outgoing::Part(block, index))?;
                        }
                    }
                }
                Ok(())
            })()
            .map_err(|error| (Instant::now(), error));
            if received.is_err() {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                // The writer may be blocked on a right neighbour that stopped reading: end that
                // send now rather than after the timeout (`Sender::interrupter`).
                if let Some(interrupt) = &interrupt {
                    interrupt();
                }
            }
            drop(queue);
            let written = writer.join().map_err(|_| PerfError::Transport("ring writer panicked".into()))?;
            // When both sides failed, the earlier error is the cause; the later one is the ring
            // coming apart after it (a neighbour stopping because of the same dead rank).
            match (received, written) {
                (Err((at_receive, receive_error)), Err((at_send, send_error))) => {
                    Err(if at_send < at_receive { send_error } else { receive_error })
                }
                (Err((_, error)), Ok(())) | (Ok(()), Err((_, error))) => Err(error),
                (Ok(()), Ok(())) => Ok(()),
            }
        })
        .map_err(|error| self.blame_left_if_closed(error))
    }

    /// [`Ring::pipeline`] for a part small enough to send without a writer thread.
    fn pipeline_inline(
        &mut self,
        part: &mut [u8],
        input: Option<&[u8]>,
        steps: &[(usize, usize, Combine)],
        first_send: usize,
    ) -> Result<(), PerfError> {
        let world = self.world;
        let first = self.blocks[first_send % world].clone();
        self.right.send(input.map_or(&part[first.clone()], |input| &input[first]))?;
        for (index, &(_, receive, combine)) in steps.iter().enumerate() {
            let target = self.blocks[receive % world].clone();
            let mut at = target.start;
            match combine {
                Combine::Reduce(data_type, op) => self.left.receive_with(target.len(), &mut |piece| {
                    let end = at + piece.len();
                    match input {
                        Some(input) => reduce_from(&mut part[at..end], &input[at..end], piece, data_type, op),
                        None => reduce_into(&mut part[at..end], piece, data_type, op),
                    }
                    at = end;
                })?,
                Combine::Copy => self.left.receive(&mut part[target.clone()])?,
            }
            if index + 1 < steps.len() {
                self.right.send(&part[target])?;
            }
        }
        self.right.flush()
    }

    /// When a rank dies, its right neighbour's sends may fail first (the failure cascades around the
    /// ring) while the dead rank's EOF is still behind unread data on the left link. Look at the left
    /// link briefly: if its exit was hidden there, the left neighbour is the rank that stopped, and the
    /// error names it.
    fn blame_left_if_closed(&mut self, error: PerfError) -> PerfError {
        if matches!(&error, PerfError::PeerClosed { peer, .. } if peer == self.left.peer()) {
            return error;
        }
        if self.left.exit_was_hidden(Duration::from_millis(300)) {
            PerfError::PeerClosed { peer: self.left.peer().to_string(), during: "ring receive" }
        } else {
            error
        }
    }

    /// Reduce-scatter steps: after them block `rank` holds every rank's block `rank` reduced.
    fn reduce_scatter_steps(&self, combine: Combine) -> Vec<(usize, usize, Combine)> {
        let (rank, world) = (self.rank, self.world);
        (0..world - 1).map(|step| (rank + 2 * world - step - 1, rank + 2 * world - step - 2, combine)).collect()
    }

    /// All-gather steps starting from block `rank`: after them every block is everywhere.
    fn all_gather_steps(&self) -> Vec<(usize, usize, Combine)> {
        let (rank, world) = (self.rank, self.world);
        (0..world - 1).map(|step| (rank + world - step, rank + 2 * world - step - 1, Combine::Copy)).collect()
    }

    /// After it, block `rank` of `part` holds the reduction of every rank's block `rank`.
    fn reduce_scatter(&mut self, part: &mut [u8], data_type: DataType, op: ReduceOp) -> Result<(), PerfError> {
        let steps = self.reduce_scatter_steps(Combine::Reduce(data_type, op));
        self.pipeline(part, None, &steps)
    }

    /// Starting from block `rank` complete on every rank, make every block complete everywhere.
    fn all_gather(&mut self, part: &mut [u8]) -> Result<(), PerfError> {
        let steps = self.all_gather_steps();
        self.pipeline(part, None, &steps)
    }

    /// AllReduce as one pipeline of 2(n-1) steps: the reduce-scatter's last received block (block
    /// `rank`, now complete) is the all-gather's first sent block, so its slices go out as they are
    /// reduced and the two phases chain without a pause.
    fn all_reduce(
        &mut self,
        part: &mut [u8],
        input: Option<&[u8]>,
        data_type: DataType,
        op: ReduceOp,
    ) -> Result<(), PerfError> {
        let mut steps = self.reduce_scatter_steps(Combine::Reduce(data_type, op));
        steps.extend(self.all_gather_steps());
        self.pipeline(part, input, &steps)
    }

    /// A pipelined chain from `root` around the ring: receive a slice from the left, pass it right.
    fn broadcast(&mut self, part: &mut [u8], root: usize) -> Result<(), PerfError> {
        let (rank, world) = (self.rank, self.world);
        let last = (root + world - 1) % world;
        for slice in part.chunks_mut(SLICE_BYTES) {
            if rank != root {
                self.left.receive(slice)?;
            }
            if rank != last {
                self.right.send(slice)?;
            }
        }
        if rank != last {
            self.right.flush()?;
        }
        Ok(())
    }
}

/// Elements per block of AlltoAll: every block has the same size, so block j of the sender fits block
/// i of the receiver; elements past `world * per_block` take no part (nccl-tests rounds the count to
/// `(count / nranks) * nranks` the same way).
pub fn alltoall_block(count: usize, world: usize) -> usize {
    count / world.max(1)
}

/// Pairwise exchange over the mesh: at step k send block (rank+k) to that rank and receive block
/// (rank-k) from that one. Out of place (`input` given) the blocks are sent from the input where they
/// are and received into `buffer`; in place, the blocks still to be sent are first saved in
/// `scratch` (kept between calls), since a received block lands where an unsent one sits.
#[expect(clippy::too_many_arguments, reason = "one rank's links, buffers and place in the world")]
fn alltoall(
    (senders, receivers): MeshLinks<'_>,
    input: Option<&[u8]>,
    buffer: &mut [u8],
    scratch: &mut Vec<u8>,
    element: usize,
    rank: usize,
    world: usize,
    labels: &[String],
) -> Result<(), PerfError> {
    let per_block = alltoall_block(buffer.len() / element, world) * element;
    let block = |b: usize| b * per_block..(b + 1) * per_block;
    let original: &[u8] = match input {
        Some(input) => input,
        None => {
            scratch.clear();
            scratch.extend_from_slice(&buffer[..world * per_block]);
            scratch
        }
    };
    let missing = |peer: usize| PerfError::Transport(format!("no mesh link to {}", labels[peer]));
    for step in 1..world {
        let to = (rank + step) % world;
        let from = (rank + world - step) % world;
        let outgoing = &original[block(to)];
        let sender = senders[to].as_deref_mut().ok_or_else(|| missing(to))?;
        let receiver = receivers[from].as_deref_mut().ok_or_else(|| missing(from))?;
        link::exchange(sender, receiver, outgoing, &mut buffer[block(from)], SLICE_BYTES)?;
    }
    let own = block(rank);
    if input.is_some() {
        buffer[own.clone()].copy_from_slice(&original[own]);
    }
    Ok(())
}

/// What each rank's buffers hold before a run, and what must be there after it (nccl-tests layout:
/// AllGather's size is the whole output, each rank contributing its block; ReduceScatter's and
/// AlltoAll's size is the whole input; Broadcast's is the message).
pub fn prepare_buffer(
    collective: Collective,
    buffer: &mut [u8],
    data_type: DataType,
    rank: usize,
    world: usize,
    root: usize,
) {
    let count = buffer.len() / data_type.size();
    let width = data_type.size();
    match collective {
        Collective::AllReduce | Collective::ReduceScatter => fill(buffer, data_type, 0, |i| input_value(rank, i)),
        Collective::AllGather => {
            buffer.fill(0);
            let own = part_range(count, world, rank);
            fill(&mut buffer[own.start * width..own.end * width], data_type, own.start, |i| input_value(rank, i));
        }
        // Block b of rank r's send buffer is destined to rank b: value encodes (sender, element).
        Collective::AlltoAll => fill(buffer, data_type, 0, |i| input_value(rank, i)),
        Collective::Broadcast => {
            if rank == root {
                fill(buffer, data_type, 0, |i| input_value(root, i))
            } else {
                buffer.fill(0)
            }
        }
    }
}

/// Elements of this rank's result that are wrong.
pub fn check_buffer(
    collective: Collective,
    buffer: &[u8],
    data_type: DataType,
    op: ReduceOp,
    rank: usize,
    world: usize,
    root: usize,
) -> u64 {
    let count = buffer.len() / data_type.size();
    let width = data_type.size();
    match collective {
        Collective::AllReduce => count_wrong(buffer, data_type, 0, |i| expected_value(world, i, op)),
        Collective::ReduceScatter => {
            let own = part_range(count, world, rank);
            count_wrong(&buffer[own.start * width..own.end * width], data_type, own.start, |i| {
                expected_value(world, i, op)
            })
        }
        Collective::AllGather => (0..world)
            .map(|owner| {
                let range = part_range(count, world, owner);
                count_wrong(&buffer[range.start * width..range.end * width], data_type, range.start, |i| {
                    input_value(owner, i)
                })
            })
            .sum(),
        Collective::AlltoAll => {
            let per_block = alltoall_block(count, world);
            (0..world)
                .map(|sender| {
                    // Block `sender` of this rank's result is block `rank` of the sender's input.
                    let here = sender * per_block * width..(sender + 1) * per_block * width;
                    count_wrong(&buffer[here], data_type, 0, |i| input_value(sender, rank * per_block + i))
                })
                .sum()
        }
        Collective::Broadcast => count_wrong(buffer, data_type, 0, |i| input_value(root, i)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The local burn-in's all-to-all (main job, 2026-11-30): one agent's data listener failed to
    /// bind with "Address already in use" while the others and rank 0's rendezvous bound theirs.
    /// A port in use is asked again, a bounded number of times; other errors are not.
    #[test]
    fn a_listener_bind_that_finds_the_address_in_use_tries_another_port() {
        let mut calls = 0;
        let listener = bind_any_port(|| {
            calls += 1;
            if calls < 3 {
                Err(std::io::Error::from(ErrorKind::AddrInUse))
            } else {
                TcpListener::bind(("127.0.0.1", 0))
            }
        });
        assert!(listener.is_ok(), "{listener:?}");
        assert_eq!(calls, 3);
        let mut calls = 0;
        let always = bind_any_port(|| {
            calls += 1;
            Err(std::io::Error::from(ErrorKind::AddrInUse))
        });
        assert_eq!((always.map(|_| ()).map_err(|e| e.kind()), calls), (Err(ErrorKind::AddrInUse), 5));
        let mut calls = 0;
        let denied = bind_any_port(|| {
            calls += 1;
            Err(std::io::Error::from(ErrorKind::PermissionDenied))
        });
        assert_eq!((denied.map(|_| ()).map_err(|e| e.kind()), calls), (Err(ErrorKind::PermissionDenied), 1));
    }

    #[test]
    fn parts_cover_any_count_exactly_once() {
        for count in [0usize, 1, 3, 7, 8, 1001] {
            for parts in 1..=8 {
                let covered: usize = (0..parts).map(|p| part_range(count, parts, p).len()).sum();
                assert_eq!(covered, count);
                for p in 1..parts {
                    assert_eq!(part_range(count, parts, p - 1).end, part_range(count, parts, p).start);
                }
            }
        }
    }

    /// Rank `rank` of a one-channel job with rank 0 on loopback, no bound address and no ticket.
    /// A loopback port nothing listens on now, for rank 0's rendezvous.
    fn free_master_port() -> u16 {
        let control = TcpListener::bind("127.0.0.1:0").expect("bind");
        control.local_addr().expect("address").port()
    }

    /// Rank 0 started by `start` on a control port that was free when chosen. Tests run in parallel,
    /// and another test's listener on port 0 may be given that port before rank 0 binds it (the CI
    /// once saw the hostile-hello test dial a rank 0 that had already failed): rank 0 then fails at
    /// once with EADDRINUSE and is started again on another port. Any other outcome is handed back.
    fn rank_zero_on_a_free_port(
        start: impl Fn(u16) -> std::thread::JoinHandle<Result<(), PerfError>>,
    ) -> (u16, std::thread::JoinHandle<Result<(), PerfError>>) {
        for _ in 0..5 {
            let port = free_master_port();
            let rank0 = start(port);
            let until = Instant::now() + Duration::from_millis(500);
            while !rank0.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
            if !rank0.is_finished() {
                return (port, rank0);
            }
            match rank0.join() {
                Ok(Err(PerfError::Io { cause, .. })) if cause.kind() == ErrorKind::AddrInUse => continue,
                outcome => {
                    let outcome = outcome.unwrap_or_else(|_| Err(PerfError::Transport("rank 0 panicked".into())));
                    return (port, std::thread::spawn(move || outcome));
                }
            }
        }
        panic!("no free control port for rank 0 in five tries");
    }

    fn plain_rendezvous(rank: usize, world: usize, master_port: u16, timeout: Duration) -> Rendezvous {
        Rendezvous {
            rank,
            world,
            master_host: "127.0.0.1".into(),
            master_port,
            channels: 1,
            timeout,
            fingerprint: "same".into(),
            bind: None,
            ticket: None,
        }
    }

    /// A peer that joins properly and then claims rank 99 on its data connection (issue #19: the
    /// claim reached `hosts[99]` and panicked, which inside an agent leaked a connection slot): rank
    /// 0 answers with an error naming the claim, and nothing panics.
    #[test]
    fn a_data_hello_from_a_rank_outside_the_world_is_an_error_not_a_panic() {
        let timeout = Duration::from_secs(5);
        let (master_port, rank0) = rank_zero_on_a_free_port(|master_port| {
            let rendezvous = plain_rendezvous(0, 2, master_port, timeout);
            std::thread::spawn(move || Communicator::connect(&rendezvous, Mesh::None, &Transport::Tcp).map(|_| ()))
        });
        // The hostile rank 1: a real join, a data listener rank 0 dials, then a lie on its own dial.
        let data = TcpListener::bind("127.0.0.1:0").expect("bind");
        let data_port = data.local_addr().expect("address").port();
        let deadline = Instant::now() + timeout;
        let mut join = dial_until("127.0.0.1", master_port, deadline, timeout).expect("rank 0 listens");
        let hello =
            Control::Join { rank: 1, world: 2, data_port, fingerprint: "same".into(), ticket: None, data_host: None };
        write_message(&mut join, "rank 0", &hello).expect("join");
        let table: Control = read_message(&mut join, "rank 0", "table").expect("table");
        let Control::Table { ports, .. } = table else { panic!("expected the table, got {table:?}") };
        let (_from_rank0, _) = data.accept().expect("rank 0 dials its right neighbour");
        let mut lie = dial_until("127.0.0.1", ports[0], deadline, timeout).expect("rank 0's data port");
        write_message(&mut lie, "rank 0", &DataHello { rank: 99, channel: Some(0), ticket: None }).expect("hello");
        let outcome = rank0.join().expect("rank 0 does not panic");
        let error = outcome.expect_err("a rank outside the world is refused").to_string();
        assert!(error.contains("rank 99") && error.contains("outside a world of 2"), "{error}");
    }

    /// A rank 0 (or an impostor) whose table does not fit the world is refused at the join.
    #[test]
    fn a_table_that_does_not_fit_the_world_is_refused() {
        let timeout = Duration::from_secs(5);
        let control = TcpListener::bind("127.0.0.1:0").expect("bind");
        let master_port = control.local_addr().expect("address").port();
        let rendezvous = plain_rendezvous(1, 3, master_port, timeout);
        let rank1 = std::thread::spawn(move || Membership::join(&rendezvous, 1, Instant::now() + timeout).map(|_| ()));
        let (mut stream, _) = control.accept().expect("rank 1 joins");
        let _: Control = read_message(&mut stream, "rank 1", "join").expect("join");
        write_message(&mut stream, "rank 1", &Control::Table { hosts: vec![None], ports: vec![1] }).expect("table");
        let error = rank1.join().expect("no panic").expect_err("refused").to_string();
        assert!(error.contains("a table of 1 hosts and 1 ports for a world of 3"), "{error}");
    }

    /// Issue #19: with the job's ticket, a stranger who joins first (with another ticket, or none,
    /// or who says nothing) is dropped unanswered and the real ranks still meet, each on the
    /// address it was told to bind (127.0.0.2 and 127.0.0.3 here: rank 1's join leaves from
    /// 127.0.0.1, so rank 0 must take its data address from the join, not from the connection).
    #[test]
    fn strangers_without_the_jobs_ticket_are_dropped_and_the_ranks_still_meet() {
        let timeout = Duration::from_secs(10);
        let control = TcpListener::bind("127.0.0.2:0").expect("bind");
        let master_port = control.local_addr().expect("address").port();
        drop(control);
        let rank = |rank: usize| Rendezvous {
            rank,
            world: 2,
            master_host: "127.0.0.2".into(),
            master_port,
            channels: 1,
            timeout,
            fingerprint: "same".into(),
            bind: Some(format!("127.0.0.{}", 2 + rank).parse().expect("ip")),
            ticket: Some("7e".repeat(32)),
        };
        let first = rank(0);
        let rank0 =
            std::thread::spawn(move || Communicator::connect(&first, Mesh::None, &Transport::Tcp).map(|c| c.world));
        let deadline = Instant::now() + timeout;
        let _silent = dial_until("127.0.0.2", master_port, deadline, timeout).expect("rank 0 listens");
        for ticket in [None, Some("00".repeat(32))] {
            let mut stranger = dial_until("127.0.0.2", master_port, deadline, timeout).expect("connect");
            let join =
                Control::Join { rank: 1, world: 2, data_port: 1, fingerprint: "same".into(), ticket, data_host: None };
            write_message(&mut stranger, "rank 0", &join).expect("join");
        }
        let second = rank(1);
        let rank1 =
            std::thread::spawn(move || Communicator::connect(&second, Mesh::None, &Transport::Tcp).map(|c| c.world));
        assert_eq!(rank0.join().expect("no panic").expect("rank 0 met rank 1"), 2);
        assert_eq!(rank1.join().expect("no panic").expect("rank 1 met rank 0"), 2);
    }

    /// A rank that stops between collectives stalls rank 0 in the barrier, on the control connection:
    /// its error names the silent rank with its host, as a data link's does (the Soft-RoCE guest test
    /// once caught rank 0 saying only "peer rank 1 sent no data for 10s").
    #[test]
    fn a_rank_silent_at_the_barrier_is_named_with_its_host() {
        let timeout = Duration::from_millis(400);
        let master_port = free_master_port();
        let (stalled, release) = std::sync::mpsc::channel::<()>();
        let ranks: Vec<_> = (0..3)
            .map(|rank| {
                let stalled = stalled.clone();
                std::thread::spawn(move || -> Result<(), String> {
                    let rendezvous = plain_rendezvous(rank, 3, master_port, Duration::from_secs(10));
                    let mut communicator =
                        Communicator::connect(&rendezvous, Mesh::None, &Transport::Tcp).map_err(|e| e.to_string())?;
                    if rank == 1 {
                        // Alive, its connections open, and silent until the others have given up
                        // (rank 0's wait, its patience, and its word to rank 2).
                        let _ = stalled.send(());
                        std::thread::sleep(timeout + departure::LISTEN_PATIENCE * 3);
                        return Ok(());
                    }
                    if rank == 0 {
                        for stream in &communicator.control {
                            stream.set_read_timeout(Some(timeout)).map_err(|e| e.to_string())?;
                        }
                    }
                    communicator.barrier().map_err(|e| e.to_string())
                })
            })
            .collect();
        drop(stalled);
        let _ = release.recv();
        let results: Vec<_> = ranks.into_iter().map(|r| r.join().expect("no panic")).collect();
        let error = results[0].clone().expect_err("rank 0 gives up at the barrier");
        assert!(error.contains("rank 1 (127.0.0.1)") && error.contains("sent no data"), "{error}");
        // Rank 2 waited on rank 0 at the barrier: rank 0 tells it which rank stopped.
        let error = results[2].clone().expect_err("rank 2 stops with rank 0");
        assert!(
            error.contains("rank 0 (127.0.0.1) left the collective because rank 1 (127.0.0.1) sent no data"),
            "{error}"
        );
    }

    /// Three ranks over loopback TCP, two channels, sizes on both sides of the inline limit: out of
    /// place, AllReduce's ring and AlltoAll read the input where it is, write only the output, and
    /// leave the input as it was after many calls; in place gives the same result.
    #[test]
    fn out_of_place_runs_read_the_input_in_place_and_never_write_it() {
        let timeout = Duration::from_secs(20);
        let master_port = free_master_port();
        let world = 3;
        let ranks: Vec<_> = (0..world)
            .map(|rank| {
                std::thread::spawn(move || -> Result<(), String> {
                    let mut rendezvous = plain_rendezvous(rank, world, master_port, timeout);
                    rendezvous.channels = 2;
                    let mut communicator =
                        Communicator::connect(&rendezvous, Mesh::Full, &Transport::Tcp).map_err(|e| e.to_string())?;
                    for (collective, bytes) in [
                        (Collective::AllReduce, 12 * 1024),
                        (Collective::AllReduce, 3 * 1024 * 1024 + 12),
                        (Collective::AlltoAll, 12 * 1024),
                        (Collective::AlltoAll, 3 * 1024 * 1024),
                    ] {
                        let (input, output) = communicator.working_buffers(bytes).map_err(|e| e.to_string())?;
                        prepare_buffer(collective, input, DataType::F32, rank, world, 0);
                        output.fill(0xee);
                        let original = input.to_vec();
                        for _ in 0..3 {
                            communicator
                                .run_working(collective, Algorithm::Ring, bytes, false, DataType::F32, ReduceOp::Sum, 0)
                                .map_err(|e| e.to_string())?;
                        }
                        let (input, output) = communicator.working_buffers(bytes).map_err(|e| e.to_string())?;
                        if input != original.as_slice() {
                            return Err(format!("{collective:?} {bytes}: the input changed"));
                        }
                        let wrong = check_buffer(collective, output, DataType::F32, ReduceOp::Sum, rank, world, 0);
                        if wrong != 0 {
                            return Err(format!("{collective:?} {bytes} out of place: {wrong} wrong"));
                        }
                        output.copy_from_slice(input);
                        communicator
                            .run_working(collective, Algorithm::Ring, bytes, true, DataType::F32, ReduceOp::Sum, 0)
                            .map_err(|e| e.to_string())?;
                        let (_, output) = communicator.working_buffers(bytes).map_err(|e| e.to_string())?;
                        let wrong = check_buffer(collective, output, DataType::F32, ReduceOp::Sum, rank, world, 0);
                        if wrong != 0 {
                            return Err(format!("{collective:?} {bytes} in place: {wrong} wrong"));
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        for (rank, handle) in ranks.into_iter().enumerate() {
            assert_eq!(handle.join().expect("no panic"), Ok(()), "rank {rank}");
        }
    }

    #[test]
    fn a_source_region_holds_only_bytes_wholly_inside_it() {
        let memory = [0u8; 64];
        let region = link::SourceRegion { address: memory.as_ptr() as u64, length: 32, key: 7 };
        assert_eq!(region.offset_of(&memory[8..16]), Some(8));
        assert_eq!(region.offset_of(&memory[..32]), Some(0));
        assert_eq!(region.offset_of(&memory[24..40]), None, "crosses the end");
        assert_eq!(region.offset_of(&memory[40..48]), None, "outside");
    }

    #[test]
    fn bus_factors_are_nccl_tests() {
        assert_eq!(Collective::AllReduce.bus_factor(4), 1.5);
        assert_eq!(Collective::AllGather.bus_factor(4), 0.75);
        assert_eq!(Collective::Broadcast.bus_factor(4), 1.0);
        assert_eq!(Collective::AllReduce.bus_factor(1), 0.0);
    }
}
