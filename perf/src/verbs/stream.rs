//! Ordered byte streams over RC queue pairs, for the collectives: the sending side copies each piece of
//! up to one slot into its registered staging slot and RDMA WRITEs it with immediate into the matching
//! receive slot of the peer; the receiving side copies the slot out and returns a credit (a zero-length
//! SEND with immediate) so the slot may be written again. The slot and credit rules are in `credit.rs`.
//!
//! Memory is registered once, when a link is set up (one staging or receive area of
//! [`SLOTS`] x [`SLOT_BYTES`] per queue pair); the data path only copies and posts. Each queue pair
//! carries one direction of data: a ring link is one queue pair, a mesh link two.
//!
//! The TCP connections the endpoints were exchanged over stay open to tell a dead or stalled rank
//! from one that only waits (`watch.rs`): an exited rank's sockets close at once, while its queue
//! pairs vanish silently and a writer would learn of it only after the transport retries
//! (IBV_WC_RETRY_EXC_ERR, seconds later).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::credit::{slot_range, Immediate, ReceiverWindow, Role, SenderWindow};
use super::device::{Completion, QueueSizes, Resources, WireOp};
use super::watch::{Departure, Seen, Watch};
use super::{protocol, PortContext, VerbsEndpointInfo};
use crate::collective::link;
use crate::PerfError;

/// Receive slots per link (NCCL's NCCL_STEPS is 8 for its simple protocol; 4 keeps a link full on a
/// ring whose slices are this large, with 1 MiB registered per queue pair).
pub const SLOTS: u32 = 4;
/// Bytes per slot: the collectives' slice, so one forwarded slice is one message.
pub const SLOT_BYTES: u32 = 256 * 1024;
/// Local ACK timeout exponent of the links' queue pairs (IB spec 9.7.6.1.3): 18 = 4.096 us x 2^18 =
/// 1.07 s before a retransmission, not perftest's 14 (67 ms). A peer busy reducing, or Soft-RoCE on a
/// loaded CPU, acknowledges late, and every early retransmission of a multi-packet write costs
/// bandwidth; on rxe of Linux 6.1 under TCG, runs with 67 ms saw many (rxe `completer_retry_err`) and
/// one ended with IBV_WC_REM_INV_REQ_ERR. A dead peer is noticed through its TCP connection, not
/// through retries, so the longer timeout does not slow that down.
const ACK_TIMEOUT: u8 = 18;
/// Polls before a waiting thread gives the CPU away (the peer may share it, as Soft-RoCE's kernel
/// threads do).
const SPINS_BEFORE_YIELD: u32 = 64;
/// A wait idle this long sleeps between polls instead of spinning.
const IDLE_BEFORE_SLEEP: Duration = Duration::from_millis(2);
/// After the peer's connection closed, how long a wait still polls for what it sent before exiting.
const PEER_GONE_GRACE: Duration = Duration::from_millis(200);
/// How often a wait looks at the peer's TCP connection.
const LIVENESS_INTERVAL: Duration = Duration::from_millis(20);

/// What the CLI resolved for verbs links.
#[derive(Debug, Clone)]
pub struct StreamOptions {
    pub device: Option<String>,
    pub port: u8,
    pub gid_index: Option<u32>,
    /// How long a peer may make no progress.
    pub timeout: Duration,
    /// Traffic class and service level of every link's queue pair.
    pub traffic: super::Traffic,
}

/// The device port every link of a communicator uses, opened once.
pub struct StreamPort {
    context: PortContext,
    timeout: Duration,
}

impl std::fmt::Debug for StreamPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamPort").field("port", &self.context.describe()).finish()
    }
}

impl StreamPort {
    pub fn open(options: &StreamOptions) -> Result<StreamPort, PerfError> {
        let context = PortContext::open(options.device.as_deref(), options.port, options.gid_index)?
            .with_traffic(options.traffic);
        Ok(StreamPort { context, timeout: options.timeout })
    }

    pub fn describe(&self) -> String {
        self.context.describe()
    }

    /// `length` zeroed bytes registered with this port's adapter, for the links to send from in place.
    pub(crate) fn source_memory(&self, length: usize) -> Result<SourceMemory, PerfError> {
        Ok(SourceMemory(super::device::RegisteredMemory::new(self.context.device(), length)?))
    }

    /// A queue pair in INIT with its slots registered, for one direction of a link.
    pub(crate) fn endpoint(&self, role: Role) -> Result<StreamEndpoint, PerfError> {
        // Data writes, or credits, in flight: at most the slots, plus completions not yet reaped.
        let sizes = QueueSizes {
            send: self.context.queue_entries(2 * SLOTS as usize + 2),
            receive: self.context.queue_entries(SLOTS as usize + 1),
            inline: 0,
        };
        let resources = self.context.create(sizes, (SLOTS * SLOT_BYTES) as usize, None)?;
        let psn = protocol::random_psn();
        // The peer writes into a receiving endpoint's slots; a sending endpoint offers nothing.
        let target = match role {
            Role::Receive => 0..(SLOTS * SLOT_BYTES) as usize,
            Role::Send => 0..0,
        };
        let info = self.context.endpoint_info(&resources, psn, target);
        Ok(StreamEndpoint { role, resources, psn, info })
    }
}

/// Memory registered with the adapter that the collectives run on ([`StreamPort::source_memory`]).
pub struct SourceMemory(super::device::RegisteredMemory);

impl std::fmt::Debug for SourceMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceMemory").field("length", &self.0.bytes().len()).finish()
    }
}

impl SourceMemory {
    pub fn bytes(&self) -> &[u8] {
        self.0.bytes()
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        self.0.bytes_mut()
    }

    /// What links are told to send from in place (`Sender::send_in_place`).
    pub fn region(&self) -> link::SourceRegion {
        let bytes = self.0.bytes();
        link::SourceRegion { address: bytes.as_ptr() as u64, length: bytes.len(), key: self.0.local_key() }
    }
}

/// One direction of a link before connecting.
pub(crate) struct StreamEndpoint {
    role: Role,
    resources: Resources,
    psn: u32,
    info: VerbsEndpointInfo,
}

/// A connected direction of a link.
pub(crate) enum StreamHalf {
    Send(VerbsSender),
    Receive(VerbsReceiver),
}

impl StreamEndpoint {
    pub fn role(&self) -> Role {
        self.role
    }

    pub fn info(&self) -> &VerbsEndpointInfo {
        &self.info
    }

    /// Post the receives (credits or data: one per slot, so flow control never lets a message find
    /// the queue empty), then INIT -> RTR -> RTS. `ranks` says who is at either end (and names every
    /// rank in messages); `watch` holds this rank's setup connections, watched while waiting.
    fn connect(
        mut self,
        port: &StreamPort,
        remote: &VerbsEndpointInfo,
        ranks: Ranks,
        watch: Watch,
    ) -> Result<StreamHalf, PerfError> {
        let peer = ranks.peer_name().to_string();
        if self.role == Role::Send && remote.length < u64::from(SLOTS * SLOT_BYTES) {
            return Err(PerfError::Handshake {
                peer,
                reason: format!("offers {} bytes of receive slots, {} expected", remote.length, SLOTS * SLOT_BYTES),
            });
        }
        self.resources
            .post_receives(0..0, SLOTS as usize)
            .map_err(|e| PerfError::Transport(format!("cannot post receives for {peer}: {e}")))?;
        port.context.connect(&mut self.resources, self.psn, remote, ACK_TIMEOUT)?;
        let common = Common {
            resources: self.resources,
            peer,
            ranks,
            timeout: port.timeout,
            watch,
            last_look: Instant::now(),
            completions: Vec::new(),
        };
        Ok(match self.role {
            Role::Send => StreamHalf::Send(VerbsSender {
                common,
                window: SenderWindow::new(SLOTS),
                remote: (remote.address, remote.rkey),
                in_flight: 0,
                in_place: None,
            }),
            Role::Receive => StreamHalf::Receive(VerbsReceiver {
                common,
                window: ReceiverWindow::new(SLOTS, SLOT_BYTES),
                current: None,
                queued: std::collections::VecDeque::new(),
                credits_in_flight: 0,
            }),
        })
    }
}

/// This rank and the peer of a link, with every rank's name for messages.
#[derive(Debug, Clone)]
pub(crate) struct Ranks {
    pub us: usize,
    pub peer: usize,
    pub names: Arc<Vec<String>>,
}

impl Ranks {
    fn peer_name(&self) -> &str {
        &self.names[self.peer]
    }

    /// A rank's label; a number a peer sent that is no rank of this communicator is named as such.
    fn name(&self, rank: usize) -> String {
        self.names.get(rank).cloned().unwrap_or_else(|| format!("rank {rank} (not in this communicator)"))
    }

    /// The error of a wait during `during` that found `gone`'s connection closed (with what it said
    /// when it left), and what this rank tells its own peers as it leaves in turn: the rank that
    /// stopped first, so the word travels on unchanged.
    fn peer_gone(&self, gone: usize, told: Option<Departure>, during: &'static str) -> (PerfError, Departure) {
        let peer = self.name(gone);
        match told {
            None => {
                let during = if gone == self.peer { during } else { "the collective" };
                (PerfError::PeerClosed { peer, during }, Departure::Exited(rank_number(gone)))
            }
            Some(departure) => {
                let first = self.name(departure.rank() as usize);
                let silent = match departure {
                    Departure::Exited(_) => None,
                    Departure::Silent(_, waited) => Some(waited),
                };
                (PerfError::PeerLeft { peer, first, silent }, departure)
            }
        }
    }
}

/// A rank as the watch's frames carry it (ranks are far fewer than 2^32).
fn rank_number(rank: usize) -> u32 {
    u32::try_from(rank).unwrap_or(u32::MAX - 1)
}

/// Removes this thread's wait from the watch however the wait ends.
struct Registered(Watch);

impl Drop for Registered {
    fn drop(&mut self) {
        self.0.end_wait();
    }
}

/// What both directions hold.
struct Common {
    resources: Resources,
    /// The peer's name, for messages.
    peer: String,
    ranks: Ranks,
    timeout: Duration,
    watch: Watch,
    last_look: Instant,
    completions: Vec<Completion>,
}

impl Common {
    /// Poll `attempt` until it yields, giving up when a peer exits or this one makes no progress for
    /// the timeout (then naming the rank it waits on if it answers that it is waiting too). Spins
    /// first, then yields, then sleeps briefly: on Soft-RoCE the adapter is kernel threads on the same
    /// CPUs.
    fn wait<S, T>(
        state: &mut S,
        common: impl Fn(&mut S) -> &mut Common,
        during: &'static str,
        mut attempt: impl FnMut(&mut S) -> Result<Option<T>, PerfError>,
    ) -> Result<T, PerfError> {
        let started = Instant::now();
        let mut spins = 0u32;
        let mut registered: Option<Registered> = None;
        loop {
            if let Some(value) = attempt(state)? {
                return Ok(value);
            }
            spins = spins.wrapping_add(1);
            if spins % SPINS_BEFORE_YIELD != 0 {
                std::hint::spin_loop();
                continue;
            }
            let this = common(state);
            if registered.is_none() {
                this.watch.begin_wait(this.ranks.peer, started);
                registered = Some(Registered(this.watch.clone()));
            }
            if this.last_look.elapsed() >= LIVENESS_INTERVAL {
                this.last_look = Instant::now();
                if let Seen::Gone { rank: gone, told } = this.watch.look_preferring(Some(this.ranks.peer)) {
                    // What the peer sent before it exited may still be completing: look a little longer.
                    let grace = Instant::now() + PEER_GONE_GRACE;
                    while Instant::now() < grace {
                        if let Some(value) = attempt(state)? {
                            return Ok(value);
                        }
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    let this = common(state);
                    let (error, departure) = this.ranks.peer_gone(gone, told, during);
                    this.watch.leave(departure);
                    return Err(error);
                }
            }
            let waited = started.elapsed();
            if waited > this.timeout {
                let (error, departure) = match this.watch.ask(this.ranks.peer, this.ranks.us) {
                    Some(cause) => (
                        format!("{} (which {} is waiting on)", this.ranks.name(cause), this.peer),
                        Departure::Silent(rank_number(cause), this.timeout),
                    ),
                    None => (this.peer.clone(), Departure::Silent(rank_number(this.ranks.peer), this.timeout)),
                };
                this.watch.leave(departure);
                return Err(PerfError::PeerSilent { peer: error, waited: this.timeout });
            }
            if waited > IDLE_BEFORE_SLEEP {
                std::thread::sleep(Duration::from_micros(50));
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// The first failed completion polled, as the error of `operation`.
    fn check_completions(&self, operation: &str) -> Result<(), PerfError> {
        match self.completions.iter().find(|c| c.status != 0) {
            Some(c) => Err(protocol::completion_error(operation, &self.peer, c.status, c.vendor_err)),
            None => Ok(()),
        }
    }

    fn poll_send(&mut self, operation: &str) -> Result<usize, PerfError> {
        self.completions.clear();
        self.resources.poll_send(&mut self.completions).map_err(|e| {
            PerfError::Transport(format!("polling the send completion queue (peer {}) failed: {e}", self.peer))
        })?;
        self.check_completions(operation)?;
        Ok(self.completions.len())
    }

    /// Receive completions into `completions`, each checked and its receive posted again.
    fn poll_receive(&mut self, operation: &str) -> Result<(), PerfError> {
        self.completions.clear();
        self.resources.poll_receive(&mut self.completions).map_err(|e| {
            PerfError::Transport(format!("polling the receive completion queue (peer {}) failed: {e}", self.peer))
        })?;
        self.check_completions(operation)?;
        if !self.completions.is_empty() {
            self.resources
                .post_receives(0..0, self.completions.len())
                .map_err(|e| PerfError::Transport(format!("cannot post a receive (peer {}): {e}", self.peer)))?;
        }
        Ok(())
    }

    fn protocol_error(&self, reason: String) -> PerfError {
        PerfError::Handshake { peer: self.peer.clone(), reason: format!("verbs stream: {reason}") }
    }
}

/// Writes into the peer's receive slots.
pub(crate) struct VerbsSender {
    common: Common,
    window: SenderWindow,
    /// Address and rkey of the peer's receive slots.
    remote: (u64, u32),
    /// Data writes posted (all signaled) and not yet completed.
    in_flight: usize,
    /// Registered memory that sends are written from in place (`Sender::send_in_place`).
    in_place: Option<link::SourceRegion>,
}

const WRITE: &str = "RDMA WRITE with immediate";
const CREDIT: &str = "credit SEND with immediate";

impl VerbsSender {
    /// Reap write completions and take in credits.
    fn progress(&mut self) -> Result<(), PerfError> {
        let done = self.common.poll_send(WRITE)?;
        self.in_flight = self.in_flight.saturating_sub(done);
        self.common.poll_receive(CREDIT)?;
        for index in 0..self.common.completions.len() {
            let immediate = self.common.completions[index].immediate;
            let credited = match Immediate::decode(immediate) {
                Ok(Immediate::Credit { slot }) => self.window.credit(slot),
                Ok(other) => Err(format!("{other:?} arrived where only credits come")),
                Err(reason) => Err(reason),
            };
            credited.map_err(|reason| self.common.protocol_error(reason))?;
        }
        Ok(())
    }

    /// A free slot of the peer's, waiting for its credit (and for room in the send queue:
    /// completions may trail the credits).
    fn reserve_slot(&mut self) -> Result<u32, PerfError> {
        Common::wait(
            self,
            |s| &mut s.common,
            "send",
            |s| {
                s.progress()?;
                Ok(if s.in_flight < 2 * SLOTS as usize { s.window.reserve() } else { None })
            },
        )
    }

    /// Write `length` bytes at `address` of the registered source region (`key`) into the peer's
    /// next free slot, from where they are: no staging copy.
    fn write_in_place(&mut self, address: u64, length: usize, key: u32) -> Result<(), PerfError> {
        let slot = self.reserve_slot()?;
        let (remote, rkey) = self.remote;
        let target = remote + slot_range(slot, SLOT_BYTES).start as u64;
        let immediate = Immediate::Data { slot, length: length as u32 }.encode();
        self.common
            .resources
            .post_write_from(address, length as u32, key, (target, rkey), immediate, u64::from(slot))
            .map_err(|e| PerfError::Transport(format!("cannot post {WRITE} to {}: {e}", self.common.peer)))?;
        self.in_flight += 1;
        Ok(())
    }

    /// Write one piece of at most a slot.
    fn send_piece(&mut self, piece: &[u8]) -> Result<(), PerfError> {
        let slot = self.reserve_slot()?;
        let local = slot_range(slot, SLOT_BYTES);
        let local = local.start..local.start + piece.len();
        self.common.resources.buffer.copy_in(local.start, piece);
        let (address, rkey) = self.remote;
        let immediate = Immediate::Data { slot, length: piece.len() as u32 }.encode();
        let op = WireOp::WriteImmediate { remote_address: address + local.start as u64, rkey, immediate };
        self.common
            .resources
            .post_send(op, local, u64::from(slot), true, false)
            .map_err(|e| PerfError::Transport(format!("cannot post {WRITE} to {}: {e}", self.common.peer)))?;
        self.in_flight += 1;
        Ok(())
    }
}

impl link::Sender for VerbsSender {
    fn send(&mut self, bytes: &[u8]) -> Result<(), PerfError> {
        if let Some((region, offset)) = self.in_place.and_then(|r| r.offset_of(bytes).map(|o| (r, o))) {
            let mut sent = 0;
            for piece in bytes.chunks(SLOT_BYTES as usize) {
                self.write_in_place(region.address + offset + sent, piece.len(), region.key)?;
                sent += piece.len() as u64;
            }
            return Ok(());
        }
        for piece in bytes.chunks(SLOT_BYTES as usize) {
            self.send_piece(piece)?;
        }
        Ok(())
    }

    fn send_in_place(&mut self, region: Option<link::SourceRegion>) {
        self.in_place = region;
    }

    fn flush(&mut self) -> Result<(), PerfError> {
        Common::wait(
            self,
            |s| &mut s.common,
            "send",
            |s| {
                s.progress()?;
                Ok((s.in_flight == 0).then_some(()))
            },
        )
    }
}

/// Owns the receive slots the peer writes into.
pub(crate) struct VerbsReceiver {
    common: Common,
    window: ReceiverWindow,
    /// The slot being copied out: (slot, length, bytes consumed).
    current: Option<(u32, usize, usize)>,
    /// Immediates of messages polled but not yet consumed, oldest first.
    queued: std::collections::VecDeque<u32>,
    credits_in_flight: usize,
}

impl VerbsReceiver {
    /// The next message: its slot and length. One poll may bring several (RC keeps them in order, each
    /// in its own slot); the later ones wait in `queued`.
    fn next_message(&mut self) -> Result<(u32, usize), PerfError> {
        let immediate = match self.queued.pop_front() {
            Some(immediate) => immediate,
            None => Common::wait(
                self,
                |s| &mut s.common,
                "receive",
                |s| {
                    s.reap_credits()?;
                    s.common.poll_receive(WRITE)?;
                    s.queued.extend(s.common.completions.iter().map(|c| c.immediate));
                    Ok(s.queued.pop_front())
                },
            )?,
        };
        let accepted = Immediate::decode(immediate).and_then(|i| self.window.accept(i));
        let (slot, length) = accepted.map_err(|reason| self.common.protocol_error(reason))?;
        Ok((slot, length as usize))
    }

    /// Walk the next `length` bytes the peer wrote, slot by slot: `visit` gets the receive area,
    /// each piece's range in it and how many bytes came before the piece; each slot is credited
    /// back once its last byte was visited.
    fn read_slots(
        &mut self,
        length: usize,
        mut visit: impl FnMut(&super::device::Buffer, std::ops::Range<usize>, usize),
    ) -> Result<(), PerfError> {
        let mut done = 0;
        while done < length {
            let (slot, message, consumed) = match self.current {
                Some(current) => current,
                None => {
                    let (slot, message) = self.next_message()?;
                    (slot, message, 0)
                }
            };
            let take = (message - consumed).min(length - done);
            let start = slot_range(slot, SLOT_BYTES).start + consumed;
            visit(&self.common.resources.buffer, start..start + take, done);
            done += take;
            if consumed + take == message {
                self.current = None;
                self.return_credit(slot)?;
            } else {
                self.current = Some((slot, message, consumed + take));
            }
        }
        Ok(())
    }

    fn reap_credits(&mut self) -> Result<(), PerfError> {
        let done = self.common.poll_send(CREDIT)?;
        self.credits_in_flight = self.credits_in_flight.saturating_sub(done);
        Ok(())
    }

    /// Hand `slot` back to the peer.
    fn return_credit(&mut self, slot: u32) -> Result<(), PerfError> {
        Common::wait(
            self,
            |s| &mut s.common,
            "receive",
            |s| {
                s.reap_credits()?;
                Ok((s.credits_in_flight < 2 * SLOTS as usize).then_some(()))
            },
        )?;
        let op = WireOp::SendImmediate { immediate: Immediate::Credit { slot }.encode() };
        self.common
            .resources
            .post_send(op, 0..0, u64::from(slot), true, false)
            .map_err(|e| PerfError::Transport(format!("cannot post a {CREDIT} to {}: {e}", self.common.peer)))?;
        self.credits_in_flight += 1;
        Ok(())
    }
}

impl link::Receiver for VerbsReceiver {
    /// The slot's bytes go to `consume` straight from the registered receive area, in chunks read
    /// with word loads ([`super::device::Buffer::read_chunks`]), and the slot is credited back after
    /// the last of them: no copy into a receive buffer first.
    fn receive_with(&mut self, length: usize, consume: &mut dyn FnMut(&[u8])) -> Result<(), PerfError> {
        self.read_slots(length, |buffer, range, _| buffer.read_chunks(range, |chunk| consume(chunk)))
    }

    fn receive(&mut self, into: &mut [u8]) -> Result<(), PerfError> {
        let length = into.len();
        self.read_slots(length, |buffer, range, done| {
            buffer.copy_out(range.start, &mut into[done..done + range.len()]);
        })
    }

    /// Every wait looks at the peers' setup connections (`watch.rs`): an exit is seen within
    /// [`LIVENESS_INTERVAL`] and the error of that wait names the peer. Nothing is hidden.
    fn exit_was_hidden(&mut self, _patience: Duration) -> bool {
        false
    }

    fn peer(&self) -> &str {
        &self.common.peer
    }
}

/// Connect the queue pairs of the links whose TCP connections are `streams` (with the peer rank and
/// its label, and the roles this side takes on that connection). Every hello is written before any is
/// read and every ready byte before any is awaited, so ranks that set up their links in different
/// orders never wait on each other.
pub(crate) fn connect_links(
    port: &StreamPort,
    rank: usize,
    names: &[String],
    streams: &mut [(&mut TcpStream, usize, String, Vec<Role>)],
) -> Result<Vec<Vec<StreamHalf>>, PerfError> {
    use super::credit::LinkHello;
    use crate::handshake::{read_message, write_message};
    let mut endpoints: Vec<Vec<StreamEndpoint>> = Vec::with_capacity(streams.len());
    for (stream, _, label, roles) in streams.iter_mut() {
        let opened = roles.iter().map(|role| port.endpoint(*role)).collect::<Result<Vec<_>, _>>()?;
        let hello = LinkHello {
            rank,
            slots: SLOTS,
            slot_bytes: SLOT_BYTES,
            endpoints: opened.iter().map(|e| (e.role(), e.info().clone())).collect(),
        };
        write_message(&mut **stream, label, &hello)?;
        endpoints.push(opened);
    }
    let mut remotes = Vec::with_capacity(streams.len());
    for (stream, peer_rank, label, roles) in streams.iter_mut() {
        let theirs: LinkHello = read_message(stream, label, "verbs link setup")?;
        let matched = LinkHello::match_peer(roles, SLOTS, SLOT_BYTES, *peer_rank, &theirs)
            .map_err(|reason| PerfError::Handshake { peer: label.clone(), reason })?;
        remotes.push(matched);
    }
    let connections = streams
        .iter()
        .map(|(stream, peer_rank, label, _)| {
            let clone = stream.try_clone().map_err(|e| link::io_error(label, "verbs link setup", e, port.timeout))?;
            Ok((*peer_rank, clone))
        })
        .collect::<Result<Vec<_>, PerfError>>()?;
    let watch = Watch::new(connections);
    let names = Arc::new(names.to_vec());
    let mut halves = Vec::with_capacity(streams.len());
    for ((opened, remote), (_, peer, _, _)) in endpoints.into_iter().zip(remotes).zip(streams.iter()) {
        let mut connected = Vec::with_capacity(opened.len());
        for (endpoint, remote) in opened.into_iter().zip(remote) {
            let ranks = Ranks { us: rank, peer: *peer, names: Arc::clone(&names) };
            connected.push(endpoint.connect(port, &remote, ranks, watch.clone())?);
        }
        halves.push(connected);
    }
    // Both sides' queue pairs are in RTS before anyone writes: a write to a queue pair not yet in RTR
    // is dropped and retried (67 ms per retry) and may end in IBV_WC_RETRY_EXC_ERR.
    for (stream, _, label, _) in streams.iter_mut() {
        stream.write_all(&[READY]).map_err(|e| link::io_error(label, "verbs link setup", e, port.timeout))?;
    }
    for (stream, _, label, _) in streams.iter_mut() {
        let mut ready = [0u8; 1];
        stream.read_exact(&mut ready).map_err(|e| link::io_error(label, "verbs link setup", e, port.timeout))?;
        if ready[0] != READY {
            return Err(PerfError::Handshake {
                peer: label.clone(),
                reason: format!("expected the verbs ready byte, got {:#04x}", ready[0]),
            });
        }
    }
    // From now on the connections carry only probes and answers; non-blocking, so a look never waits.
    for (stream, _, label, _) in streams.iter_mut() {
        stream.set_nonblocking(true).map_err(|e| link::io_error(label, "verbs link setup", e, port.timeout))?;
    }
    Ok(halves)
}

const READY: u8 = b'R';

#[cfg(test)]
mod tests {
    use super::*;

    fn ranks() -> Ranks {
        let names = ["rank 0 (10.77.0.11)", "rank 1 (10.77.0.12)", "rank 2 (10.77.0.13)"];
        Ranks { us: 0, peer: 2, names: Arc::new(names.iter().map(|n| n.to_string()).collect()) }
    }

    /// The error names the rank that stopped first, and the word passed on is that rank's, so a
    /// third rank hearing it from this one names the same rank.
    #[test]
    fn a_peer_gone_is_named_with_the_rank_it_left_because_of() {
        let ranks = ranks();
        let (error, passed_on) = ranks.peer_gone(2, None, "receive");
        assert_eq!(error.to_string(), "peer rank 2 (10.77.0.13) closed the connection during receive");
        assert_eq!(passed_on, Departure::Exited(2));
        let (error, _) = ranks.peer_gone(1, None, "receive");
        assert!(error.to_string().ends_with("during the collective"), "not the link waited on: {error}");

        let (error, passed_on) = ranks.peer_gone(2, Some(Departure::Exited(1)), "receive");
        assert_eq!(
            error.to_string(),
            "peer rank 2 (10.77.0.13) left the collective because rank 1 (10.77.0.12) exited"
        );
        assert_eq!(passed_on, Departure::Exited(1));
        let silent = Departure::Silent(1, Duration::from_secs(10));
        let (error, passed_on) = ranks.peer_gone(2, Some(silent), "receive");
        assert_eq!(
            error.to_string(),
            "peer rank 2 (10.77.0.13) left the collective because rank 1 (10.77.0.12) sent no data for 10s"
        );
        assert_eq!(passed_on, silent);
        // A hostile or broken peer's rank number is not indexed.
        let (error, _) = ranks.peer_gone(2, Some(Departure::Exited(9)), "receive");
        assert!(error.to_string().ends_with("rank 9 (not in this communicator) exited"), "{error}");
    }
}
