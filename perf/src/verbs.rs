//! The verbs transport: one RDMA RC queue pair per [`Connection`], carrying RDMA WRITE, READ or SEND
//! with perftest's semantics (ib_write_bw, ib_read_bw, ib_send_bw, ib_*_lat), bound to libibverbs at
//! run time so the same binary runs with or without rdma-core.
//!
//! Setup: [`VerbsEndpoint::open`] opens the device, chooses the GID, registers the buffer and creates
//! the queue pair (RESET -> INIT); the generator sends [`VerbsEndpoint::local_info`] to the peer over
//! the side channel and [`VerbsEndpoint::connect`] takes the peer's (INIT -> RTR -> RTS).
//!
//! The buffer of a connection has two regions of one message each: the *send* region (source of
//! WRITE and SEND, the memory the peer READs) and the *receive* region (where the peer WRITEs, where
//! SENDs land, the destination of READs). Each side advertises the region the peer targets.
//!
//! Bandwidth (client): [`Connection::post`] signals one work request in `cq_mod` (perftest `-Q`:
//! 100, at most the depth, every one above 8 KiB) and [`Connection::poll`] returns how many messages
//! the completions cover. A `poll` that may wait while only unsignaled messages are outstanding (the
//! end of a run) first posts a signaled zero-length RDMA WRITE: RC completes in order, so its
//! completion covers them. At the depth a signaled request is always in flight, so a generator that
//! posts up to the depth before it waits (perftest's loop, and ours) flushes only at the end; one that
//! waited below the depth mid-run would get extra flushes: correct, slower.
//!
//! End of a run: [`Connection::finish`] posts a zero-length SEND, the end marker. It ends the server's
//! [`Connection::serve`] for SEND and [`Connection::pong`] for SEND and WRITE (duration mode, where
//! the server does not know the count); every queue pair keeps a receive posted for it.
//!
//! Latency: WRITE is perftest's ping-pong on the last byte (each side polls the last byte of its
//! receive region for the peer's iteration count), SEND uses posted receives, READ is the read's own
//! completion (the server's `pong` returns at once: the generator must not loop on it in duration
//! mode).
//!
//! [`VerbsDataPath`] plugs this into the generator, with a ready byte after connecting so the client
//! never sends to a queue pair that is not in RTR yet.

pub mod credit;
mod device;
mod framing;
mod protocol;
mod signaling;
pub mod stream;
pub mod watch;

use std::collections::VecDeque;
use std::net::Ipv6Addr;
use std::ops::Range;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub use protocol::{
    choose_gid_index, completion_moderation, ipv4_mapped, mtu_from_enum, mtu_to_enum, wc_status_name, GidCandidate,
    GidChoice, GidKind, GidReason, Traffic,
};

use crate::integrity::{self, Verified, HEADER_BYTES};
use crate::params::Operation;
use crate::transport::{Connection, Served};
use crate::PerfError;
use device::{Completion, Gather, QueueSizes, Resources, SendRequest, SharedQueues, WireOp};
use framing::{receive_depth, Integrity, Layout, Pieces};
use protocol::{GrhPlan, InitPlan, RtrPlan, RtsPlan};
use signaling::SendWindow;

/// perftest DEF_RX_SEND: receives kept posted for SEND bandwidth.
const SEND_RECEIVE_DEPTH: usize = 512;
/// RoCE hop limit of the GRH (perftest: 0xFF).
const HOP_LIMIT: u8 = 0xff;
/// How often a busy-poll loop looks at the clock.
const SPINS_PER_CLOCK_CHECK: u32 = 64;

/// What the CLI resolved for the verbs transport.
#[derive(Debug, Clone)]
pub struct VerbsOptions {
    /// RDMA device (`mlx5_0`, `rxe0`); `None`: the first device whose port is active.
    pub device: Option<String>,
    /// Port number, from 1 (perftest `-i`).
    pub port: u8,
    /// GID index (perftest `-x`); `None`: [`choose_gid_index`].
    pub gid_index: Option<u32>,
    pub operation: Operation,
    /// Message size in bytes.
    pub size: usize,
    /// Messages in flight (perftest `-t`).
    pub depth: usize,
    /// Messages up to this size go inline (perftest `-I`; not for READ).
    pub inline_size: u32,
    /// The inline size is perftest's default, not the user's: a device that cannot create a queue
    /// pair with it gets one without inline data (the description says so) instead of failing.
    pub inline_fallback: bool,
    /// Frame every message (sequence, sender, seed, length, check word) and check what arrives.
    pub validate: bool,
    /// The run's seed for framed messages (both sides use the client's).
    pub validation_seed: u64,
    /// This side's sender number in message headers: 0 the client, 1 the server.
    pub sender: u32,
    /// How long to wait for the peer before giving up.
    pub timeout: Duration,
    /// Traffic class and service level of the queue pairs (perftest --tclass, --sl).
    pub traffic: Traffic,
    /// Set by [`VerbsEndpoint::open`] when the device refused the default inline size.
    pub inline_note: Option<String>,
    /// Work requests per post call in bandwidth tests (perftest -l).
    pub post_list: usize,
    /// Test hook (`perf client --inject-corruption N` over verbs): flip one bit in the header of every
    /// Nth framed SEND, so a test proves the receiver's check can fail.
    pub corrupt_every: Option<u64>,
}

/// Connection parameters a side sends to its peer over the side channel (the generator puts it in
/// the handshake as JSON). perftest's `pingpong_dest` plus what this transport checks.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct VerbsEndpointInfo {
    /// Device name, for messages.
    pub device: String,
    pub port: u8,
    /// Queue pair number.
    pub qpn: u32,
    /// Initial packet sequence number (24 bits).
    pub psn: u32,
    /// The GID in IPv6 text form (`::ffff:10.77.0.2`); `::` when the port has none.
    pub gid: String,
    pub gid_index: u32,
    /// LID (InfiniBand; 0 on RoCE).
    pub lid: u16,
    /// Remote key and address of the region the peer targets, and its length in bytes.
    pub rkey: u32,
    pub address: u64,
    pub length: u64,
    /// Active MTU of the port in bytes.
    pub mtu: u32,
    /// RDMA READs this side serves at once (responder resources).
    pub max_read_atomic: u8,
    /// "ethernet" (RoCE) or "infiniband".
    pub link_layer: String,
}

/// An opened device port with its chosen GID: what every queue pair on it shares.
pub(crate) struct PortContext {
    device: device::Device,
    port_number: u8,
    port: device::PortInfo,
    gid: Ipv6Addr,
    gid_choice: GidChoice,
    /// The GID index came from the command line (on InfiniBand it then adds a GRH).
    gid_given: bool,
    gid_netdev: Option<String>,
    limits: device::Limits,
    /// Traffic class and service level of every queue pair connected on this port.
    traffic: Traffic,
}

impl PortContext {
    pub(in crate::verbs) fn device(&self) -> &device::Device {
        &self.device
    }

    /// Open the device (`None`: the first with an active port), check the port and choose the GID.
    pub(crate) fn open(name: Option<&str>, port_number: u8, gid_index: Option<u32>) -> Result<PortContext, PerfError> {
        let device = device::open_device(name, port_number)?;
        let port = device.port(port_number)?;
        let limits = device.limits()?;
        let table = device.gid_table(port_number, port.gid_table_len)?;
        let port_netdev = table.iter().find(|e| e.index == 0).and_then(|e| e.netdev.clone());
        let gid_choice = match gid_index {
            Some(index) => {
                if index >= port.gid_table_len.max(1) || (port.ethernet && !table.iter().any(|e| e.index == index)) {
                    return Err(PerfError::Transport(format!(
                        "GID index {index} of {} port {port_number} is empty; populated: {}",
                        device.name,
                        describe_table(&table)
                    )));
                }
                GidChoice { index, reason: GidReason::User }
            }
            None if port.ethernet => choose_gid_index(&table, port_netdev.as_deref()),
            // InfiniBand: index 0 (the port GID), used only for the GRH when one is asked for.
            None => GidChoice { index: 0, reason: GidReason::Default },
        };
        let gid = device.gid(port_number, gid_choice.index)?;
        let gid_netdev = table.iter().find(|e| e.index == gid_choice.index).and_then(|e| e.netdev.clone());
        if port.ethernet && gid.is_unspecified() {
            return Err(PerfError::Transport(format!(
                "GID index {} of {} port {port_number} is empty; populated: {}",
                gid_choice.index,
                device.name,
                describe_table(&table)
            )));
        }
        Ok(PortContext {
            device,
            port_number,
            port,
            gid,
            gid_choice,
            gid_given: gid_index.is_some(),
            gid_netdev,
            limits,
            traffic: Traffic::default(),
        })
    }

    /// "tclass 106 sl 3" as the provider reports it for a connected queue pair (ibv_query_qp), with
    /// what was asked when the two differ or the query fails.
    fn traffic_description(&self, resources: &Resources) -> String {
        let asked = self.traffic;
        match resources.queried_traffic() {
            Ok(held)
                if held == asked
                    || (!self.port.ethernet && !self.gid_given && held.service_level == asked.service_level) =>
            {
                format!("tclass {} sl {}", held.traffic_class, held.service_level)
            }
            Ok(held) => format!(
                "tclass {} sl {} (asked for tclass {} sl {})",
                held.traffic_class, held.service_level, asked.traffic_class, asked.service_level
            ),
            Err(error) => format!("tclass {} sl {} (not read back: {error})", asked.traffic_class, asked.service_level),
        }
    }

    /// Give every queue pair connected on this port `traffic`'s class and service level.
    pub(crate) fn with_traffic(mut self, traffic: Traffic) -> PortContext {
        self.traffic = traffic;
        self
    }

    /// Entries a queue of `wanted` may have on this device.
    fn queue_entries(&self, wanted: usize) -> u32 {
        u32::try_from(wanted).unwrap_or(u32::MAX).min(self.limits.max_qp_wr).min(self.limits.max_cqe)
    }

    /// Create a queue pair with a registered buffer of `buffer_length` bytes and move it to INIT.
    fn create(
        &self,
        sizes: QueueSizes,
        buffer_length: usize,
        shared: Option<&std::sync::Arc<SharedQueues>>,
    ) -> Result<Resources, PerfError> {
        let mut resources = Resources::create(&self.device, sizes, buffer_length, shared)?;
        resources.modify(&InitPlan::new(self.port_number).settings()).map_err(|e| {
            PerfError::Transport(format!("cannot move the queue pair on {} to INIT: {}", self.device.name, e.detail))
        })?;
        Ok(resources)
    }

    /// What the peer needs to connect to `resources`, which offer it `target` of their buffer.
    fn endpoint_info(&self, resources: &Resources, psn: u32, target: Range<usize>) -> VerbsEndpointInfo {
        VerbsEndpointInfo {
            device: self.device.name.clone(),
            port: self.port_number,
            qpn: resources.qpn(),
            psn,
            gid: self.gid.to_string(),
            gid_index: self.gid_choice.index,
            lid: self.port.lid,
            rkey: resources.rkey(),
            address: resources.buffer.address(target.start),
            length: target.len() as u64,
            mtu: self.port.active_mtu,
            max_read_atomic: self.limits.responder_resources,
            link_layer: if self.port.ethernet { "ethernet" } else { "infiniband" }.into(),
        }
    }

    /// Device, port, GID index, GID and how it was chosen, MTU.
    pub(crate) fn describe(&self) -> String {
        let netdev = self.gid_netdev.as_deref().map(|n| format!(" {n}")).unwrap_or_default();
        let link = if self.port.ethernet { "RoCE" } else { "InfiniBand" };
        format!(
            "{}:{} {link}{netdev} gid index {} {} ({}), mtu {}",
            self.device.name,
            self.port_number,
            self.gid_choice.index,
            self.gid,
            self.gid_choice.reason,
            self.port.active_mtu,
        )
    }

    /// INIT -> RTR -> RTS towards `remote` with the local ACK timeout exponent `ack_timeout` (4.096 us x
    /// 2^n, IB spec 9.7.6.1.3); returns the path MTU. Receives must be posted before this (after RTR the
    /// peer's messages may arrive).
    fn connect(
        &self,
        resources: &mut Resources,
        psn: u32,
        remote: &VerbsEndpointInfo,
        ack_timeout: u8,
    ) -> Result<u32, PerfError> {
        let peer = protocol::peer_name(remote);
        let remote_ethernet = remote.link_layer == "ethernet";
        if remote_ethernet != self.port.ethernet {
            return Err(PerfError::Transport(format!(
                "link layers differ: {} port {} is {} but the peer {peer} is {}",
                self.device.name,
                self.port_number,
                if self.port.ethernet { "ethernet" } else { "infiniband" },
                remote.link_layer
            )));
        }
        let remote_gid: Ipv6Addr = remote.gid.parse().map_err(|_| PerfError::Handshake {
            peer: peer.clone(),
            reason: format!("GID {:?} is not an IPv6 address", remote.gid),
        })?;
        let mtu = protocol::path_mtu(self.port.active_mtu, remote.mtu)?;
        // RoCE needs the GRH; on InfiniBand only a GID index asked for on the command line adds one.
        let grh = (self.port.ethernet || self.gid_given).then(|| GrhPlan {
            dgid: remote_gid,
            sgid_index: u8::try_from(self.gid_choice.index).unwrap_or(u8::MAX),
            hop_limit: HOP_LIMIT,
            traffic_class: self.traffic.traffic_class,
        });
        let rtr = RtrPlan {
            service_level: self.traffic.service_level,
            ..RtrPlan::new(self.port_number, mtu, remote, self.limits.responder_resources, grh)?
        };
        resources
            .modify(&rtr.settings())
            .map_err(|e| protocol::rtr_error(e.errno, self.gid_choice.index, &peer, &e.detail))?;
        let rts =
            RtsPlan { timeout: ack_timeout, ..RtsPlan::new(psn, self.limits.initiator_depth, remote.max_read_atomic) };
        resources.modify(&rts.settings()).map_err(|e| {
            PerfError::Transport(format!("cannot move the queue pair to RTS towards peer {peer}: {}", e.detail))
        })?;
        Ok(mtu)
    }
}

/// An opened, registered queue pair in INIT, not yet connected.
pub struct VerbsEndpoint {
    options: VerbsOptions,
    /// Shared by every endpoint of a run: one device context and protection domain, as perftest.
    context: std::sync::Arc<PortContext>,
    psn: u32,
    layout: Layout,
    resources: Resources,
}

impl std::fmt::Debug for VerbsEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerbsEndpoint").field("description", &self.describe()).finish()
    }
}

impl VerbsEndpoint {
    /// Open the device, choose the GID, register the buffer and create the queue pair (INIT).
    pub fn open(options: &VerbsOptions) -> Result<VerbsEndpoint, PerfError> {
        VerbsEndpoint::open_on(VerbsEndpoint::open_port(options)?, options, None)
    }

    /// Open the device port once for several endpoints (the queue pairs of one run).
    fn open_port(options: &VerbsOptions) -> Result<std::sync::Arc<PortContext>, PerfError> {
        VerbsEndpoint::check(options)?;
        let context = PortContext::open(options.device.as_deref(), options.port, options.gid_index)?
            .with_traffic(options.traffic);
        Ok(std::sync::Arc::new(context))
    }

    /// The queues of one endpoint's queue pair.
    fn queue_sizes(context: &PortContext, options: &VerbsOptions) -> QueueSizes {
        QueueSizes {
            // One more than the depth for the flush/end marker.
            send: context.queue_entries(options.depth + 1),
            receive: context.queue_entries(receive_depth(options.operation, options.depth, options.validate)),
            inline: if options.operation == Operation::Read { 0 } else { options.inline_size },
        }
    }

    /// One send and one receive completion queue for `count` endpoints of `options` (perftest's
    /// ctx_init), or `None` when the device's largest completion queue cannot hold them all: each
    /// queue pair then gets its own.
    fn shared_queues(
        context: &PortContext,
        options: &VerbsOptions,
        count: usize,
    ) -> Result<Option<std::sync::Arc<SharedQueues>>, PerfError> {
        let sizes = VerbsEndpoint::queue_sizes(context, options);
        let count = count as u64;
        let (send, receive) = (u64::from(sizes.send) * count, u64::from(sizes.receive.max(1)) * count);
        let limit = u64::from(context.limits.max_cqe);
        if count < 2 || send > limit || receive > limit {
            return Ok(None);
        }
        SharedQueues::new(&context.device, send as u32, receive as u32).map(Some)
    }

    fn check(options: &VerbsOptions) -> Result<(), PerfError> {
        if options.size == 0 || options.size > 1 << 30 {
            return Err(PerfError::Unsupported(format!("message size {} must be 1 byte to 1 GiB", options.size)));
        }
        if options.depth == 0 {
            return Err(PerfError::Unsupported("the depth (messages in flight) must be at least 1".into()));
        }
        Ok(())
    }

    /// A queue pair, its registered buffer and completion queues on an opened port (INIT).
    fn open_on(
        context: std::sync::Arc<PortContext>,
        options: &VerbsOptions,
        shared: Option<&std::sync::Arc<SharedQueues>>,
    ) -> Result<VerbsEndpoint, PerfError> {
        let sizes = VerbsEndpoint::queue_sizes(&context, options);
        let layout = if options.validate {
            // One header slot per message in flight and one more (the slot of the next message to
            // post never belongs to one in flight), and one per posted receive.
            Layout::framed(options.size, options.depth + 1, VerbsEndpoint::receive_count(&context, options))
        } else {
            Layout::new(options.size)
        };
        let mut options = options.clone();
        let mut resources = match context.create(sizes, layout.length(), shared) {
            Ok(resources) => resources,
            Err(error) if options.inline_fallback && sizes.inline > 0 => {
                let retried =
                    context.create(QueueSizes { inline: 0, ..sizes }, layout.length(), shared).map_err(|_| error)?;
                options.inline_note = Some(format!("inline off: the device refused {} bytes", sizes.inline));
                options.inline_size = 0;
                retried
            }
            Err(error) => return Err(error),
        };
        // The send region always carries content: what WRITE/SEND deliver and what the peer READs.
        // Validated, it is this side's message 0, header and payload (the payload of every framed
        // message, and what a reader of this region checks).
        if options.validate {
            let mut message = vec![0u8; options.size];
            Integrity::new(options.validation_seed, options.sender, options.sender ^ 1, options.size)
                .outgoing
                .fill(&mut message, 0);
            resources.buffer.copy_in(layout.send().start, &message);
        } else {
            resources.buffer.fill_pattern(layout.send());
        }
        Ok(VerbsEndpoint { options, context, psn: protocol::random_psn(), layout, resources })
    }

    /// What the peer needs to connect to this endpoint.
    pub fn local_info(&self) -> VerbsEndpointInfo {
        // The peer READs our send region; it WRITEs (or SENDs) into our receive region.
        let target = match self.options.operation {
            Operation::Read => self.layout.send(),
            Operation::Write | Operation::Send => self.layout.receive(),
        };
        self.context.endpoint_info(&self.resources, self.psn, target)
    }

    /// Device, port, GID index, GID and how it was chosen, MTU, queue pair number.
    pub fn describe(&self) -> String {
        format!("{}, qpn {:#x}", self.context.describe(), self.resources.qpn())
    }

    /// Connect to the peer: post the receives (SEND), then INIT -> RTR -> RTS.
    ///
    /// The peer must have reached RTR before this side posts (a message to a queue pair that is not
    /// ready is dropped and retried, 67 ms each time, and after 7 retries the sender fails with
    /// IBV_WC_RETRY_EXC_ERR): [`VerbsDataPath`] waits for the server's ready byte.
    pub fn connect(self, remote: &VerbsEndpointInfo) -> Result<VerbsConnection, PerfError> {
        let peer = protocol::peer_name(remote);
        if remote.length < self.options.size as u64 {
            return Err(PerfError::Transport(format!(
                "peer {peer} offers a {}-byte buffer for {}-byte messages: the sides run different sizes",
                remote.length, self.options.size
            )));
        }
        let options = &self.options;
        let integrity = options
            .validate
            .then(|| Integrity::new(options.validation_seed, options.sender, options.sender ^ 1, options.size));
        let mut connection = VerbsConnection {
            window: SendWindow::new(completion_moderation(options.size, options.depth)),
            inline: options.size <= options.inline_size as usize && options.operation != Operation::Read,
            post_list: options.post_list.max(1),
            operation: options.operation,
            depth: options.depth,
            timeout: options.timeout,
            remote: (remote.address, remote.rkey),
            layout: self.layout,
            resources: self.resources,
            peer,
            description: String::new(),
            finished: false,
            served_one_sided: false,
            last_progress: Instant::now(),
            completions: Vec::with_capacity(64),
            received: VecDeque::new(),
            sent_count: 0,
            received_count: 0,
            integrity,
            corrupt_every: options.corrupt_every.filter(|every| *every > 0),
            in_round_trip: false,
            unverified: None,
        };
        // Before RTR, so no message of the peer finds the receive queue empty. Receive `slot`'s work
        // request id is its slot, which says where a framed SEND's header landed.
        let receive_count = VerbsEndpoint::receive_count(&self.context, &self.options);
        let mut slot = 0;
        while slot < receive_count {
            let batch = (receive_count - slot).min(device::MAX_POST_LIST);
            let mut requests = [(0u64, Gather::default()); device::MAX_POST_LIST];
            for (index, request) in requests.iter_mut().take(batch).enumerate() {
                *request = ((slot + index) as u64, connection.scatter(slot + index));
            }
            connection.resources.post_receive_list(&requests[..batch]).map_err(|e| {
                PerfError::Transport(format!("cannot post receives on {}: {e}", self.context.device.name))
            })?;
            slot += batch;
        }
        let mtu = self.context.connect(&mut connection.resources, self.psn, remote, protocol::QP_TIMEOUT)?;

        let inline = match &self.options.inline_note {
            Some(note) => note.clone(),
            None if self.options.operation != Operation::Read && self.options.inline_size > 0 => {
                format!("inline up to {} bytes", self.options.inline_size)
            }
            None => "no inline".to_string(),
        };
        let queues = if connection.resources.shares_completion_queues() {
            ", completion queues shared by the run's queue pairs"
        } else {
            ""
        };
        let framed = if connection.integrity.is_some() { ", messages framed for --validate" } else { "" };
        connection.description = format!(
            "{}, qpn {:#x} -> {}, path mtu {mtu}, {}, {inline}{queues}{framed}",
            self.context.describe(),
            connection.resources.qpn(),
            connection.peer,
            self.context.traffic_description(&connection.resources)
        );
        Ok(connection)
    }

    /// Receives posted on each queue pair ([`receive_depth`], within the device's limit).
    fn receive_count(context: &PortContext, options: &VerbsOptions) -> usize {
        receive_depth(options.operation, options.depth, options.validate).min(context.limits.max_qp_wr as usize)
    }
}

fn describe_table(table: &[GidCandidate]) -> String {
    if table.is_empty() {
        return "none".into();
    }
    table
        .iter()
        .map(|e| {
            format!(
                "{} {} {}{}",
                e.index,
                e.gid,
                e.kind,
                e.netdev.as_deref().map(|n| format!(" {n}")).unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A connected RC queue pair.
pub struct VerbsConnection {
    operation: Operation,
    depth: usize,
    inline: bool,
    /// Work requests per ibv_post_send in bandwidth tests (perftest -l).
    post_list: usize,
    timeout: Duration,
    /// Address and rkey of the peer's target region.
    remote: (u64, u32),
    layout: Layout,
    peer: String,
    description: String,
    /// Bandwidth accounting of the send queue: signaling, coverage, markers (`signaling.rs`).
    window: SendWindow,
    /// `finish` posted the end marker.
    finished: bool,
    /// `serve` ran for WRITE: the peer's data is in our receive region.
    served_one_sided: bool,
    last_progress: Instant,
    completions: Vec<Completion>,
    /// Receive completions polled but not yet consumed (one poll can return several).
    received: VecDeque<Completion>,
    /// Latency: the iteration counts carried in the last byte (WRITE) or counted (SEND).
    sent_count: u64,
    received_count: u64,
    /// `--validate`: the framing of this side's messages and the checks of the peer's.
    integrity: Option<Integrity>,
    /// Flip a bit in every Nth framed header ([`VerbsOptions::corrupt_every`]).
    corrupt_every: Option<u64>,
    /// Inside a timed latency round trip (checks wait for `settle`), and the check left to do.
    in_round_trip: bool,
    unverified: Option<Pending>,
    resources: Resources,
}

/// A check of a received message left for after the clock stopped ([`Connection::settle`]).
#[derive(Debug, Clone, Copy)]
enum Pending {
    /// A SEND in receive slot `slot` (posted again after the check).
    Receive { slot: usize },
    /// The peer's WRITE in the receive region (latency: its last byte is the iteration count).
    Write,
    /// A READ into header slot of message `sequence` and the receive region.
    Read { sequence: u64 },
}

impl std::fmt::Debug for VerbsConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerbsConnection").field("description", &self.description).finish()
    }
}

/// What a completion's work request id means: the number of messages it covers.
fn covered(completion: &Completion) -> usize {
    completion.wr_id as usize
}

impl VerbsConnection {
    fn op_name(&self) -> &'static str {
        match self.operation {
            Operation::Write => "RDMA WRITE",
            Operation::Read => "RDMA READ",
            Operation::Send => "SEND",
        }
    }

    /// The operation of bandwidth messages: framed WRITEs carry their sequence as immediate data.
    fn wire_op(&self) -> WireOp {
        let (remote_address, rkey) = self.remote;
        match self.operation {
            Operation::Write if self.integrity.is_some() => {
                WireOp::WriteImmediate { remote_address, rkey, immediate: 0 }
            }
            Operation::Write => WireOp::Write { remote_address, rkey },
            Operation::Read => WireOp::Read { remote_address, rkey },
            Operation::Send => WireOp::Send,
        }
    }

    /// The local range of one unframed message: the source of WRITE/SEND, the destination of READ.
    fn local(&self) -> Range<usize> {
        match self.operation {
            Operation::Read => self.layout.receive(),
            Operation::Write | Operation::Send => self.layout.send(),
        }
    }

    /// The next message's work request: unframed, the whole region; framed, its header slot stamped
    /// with the next sequence (zeroed for a READ, which brings the responder's header into it) and
    /// the payload, and for WRITE the sequence as immediate data. Only for a slot whose previous
    /// message completed (at most `depth` are outstanding, and the ring has `depth + 1` slots).
    fn next_request(&mut self, wr_id: u64, signaled: bool) -> SendRequest {
        let Some(integrity) = self.integrity.as_mut() else {
            return SendRequest { wr_id, signaled, gather: Gather::of(self.local()), immediate: None };
        };
        let sequence = integrity.next_outgoing;
        integrity.next_outgoing += 1;
        let slot = self.layout.send_slot(sequence);
        let mut header = [0u8; HEADER_BYTES];
        let header = &mut header[..slot.len()];
        let payload = match self.operation {
            Operation::Read => self.layout.payload(self.layout.receive()),
            Operation::Write | Operation::Send => {
                integrity.outgoing.stamp(header, sequence);
                self.layout.payload(self.layout.send())
            }
        };
        if self.corrupt_every.is_some_and(|every| (sequence + 1) % every == 0) {
            header[0] ^= 0x01;
        }
        self.resources.buffer.copy_in(slot.start, header);
        let immediate = (self.operation == Operation::Write).then_some(sequence as u32);
        SendRequest { wr_id, signaled, gather: framing::gather(slot, payload), immediate }
    }

    fn post_error(&self, error: std::io::Error) -> PerfError {
        PerfError::Transport(format!("cannot post {} to peer {}: {error}", self.op_name(), self.peer))
    }

    fn silent(&self) -> PerfError {
        PerfError::PeerSilent { peer: self.peer.clone(), waited: self.timeout }
    }

    /// A signaled zero-length RDMA WRITE covering the unsignaled tail (or ending a SEND stream).
    fn post_marker(&mut self, op: WireOp) -> Result<(), PerfError> {
        let covers = self.window.marker();
        self.resources.post_send(op, 0..0, covers, true, false).map_err(|e| self.post_error(e))
    }

    fn flush_marker(&self) -> WireOp {
        let (remote_address, rkey) = self.remote;
        WireOp::Write { remote_address, rkey }
    }

    /// Reap the send queue; returns the messages covered. A failed completion is the run's error.
    fn reap_send(&mut self) -> Result<usize, PerfError> {
        self.completions.clear();
        self.resources.poll_send(&mut self.completions).map_err(|e| {
            PerfError::Transport(format!("polling the send completion queue (peer {}) failed: {e}", self.peer))
        })?;
        let mut messages = 0;
        for completion in &self.completions {
            if completion.status != 0 {
                return Err(protocol::completion_error(
                    self.op_name(),
                    &self.peer,
                    completion.status,
                    completion.vendor_err,
                ));
            }
            messages += covered(completion);
        }
        self.window.completed(self.completions.len(), messages);
        if !self.completions.is_empty() {
            self.last_progress = Instant::now();
        }
        Ok(messages)
    }

    /// Busy-poll until `done` holds, giving up after the timeout.
    fn spin_until(&mut self, mut done: impl FnMut(&mut Self) -> Result<bool, PerfError>) -> Result<(), PerfError> {
        let start = Instant::now();
        let mut spins = 0u32;
        loop {
            if done(self)? {
                return Ok(());
            }
            spins += 1;
            if spins % SPINS_PER_CLOCK_CHECK == 0 && start.elapsed() > self.timeout {
                return Err(self.silent());
            }
            std::hint::spin_loop();
        }
    }

    /// Wait for one signaled send completion (latency: every work request is signaled).
    fn wait_send_completion(&mut self) -> Result<(), PerfError> {
        self.spin_until(|c| {
            c.reap_send()?;
            Ok(!c.completions.is_empty())
        })
    }

    /// Move the receive queue's completions into `received`.
    fn poll_receives(&mut self) -> Result<(), PerfError> {
        self.completions.clear();
        self.resources.poll_receive(&mut self.completions).map_err(|e| {
            PerfError::Transport(format!("polling the receive completion queue (peer {}) failed: {e}", self.peer))
        })?;
        self.received.extend(self.completions.iter().copied());
        Ok(())
    }

    /// The scatter list of receive `slot`: framed SENDs land in a header slot of their own and the
    /// payload region; anything else (unframed SENDs, the end marker) in the receive region.
    fn scatter(&self, slot: usize) -> Gather {
        if self.integrity.is_some() && self.operation == Operation::Send {
            framing::gather(self.layout.receive_slot(slot), self.layout.payload(self.layout.receive()))
        } else {
            Gather::of(self.layout.receive())
        }
    }

    fn post_receive(&mut self, slot: usize) -> Result<(), PerfError> {
        let scatter = self.scatter(slot);
        self.resources
            .post_receive_list(&[(slot as u64, scatter)])
            .map_err(|e| PerfError::Transport(format!("cannot post a receive (peer {}): {e}", self.peer)))
    }

    /// Wait for one receive completion; `Ok(false)` for the peer's end marker (a zero-length SEND).
    fn wait_receive(&mut self) -> Result<bool, PerfError> {
        if self.received.is_empty() {
            self.spin_until(|c| {
                c.poll_receives()?;
                Ok(!c.received.is_empty())
            })?;
        }
        let completion = self.received.pop_front().unwrap_or_default();
        if completion.status != 0 {
            return Err(protocol::completion_error("receive", &self.peer, completion.status, completion.vendor_err));
        }
        let slot = completion.wr_id as usize;
        if completion.opcode == device::WC_RECV_RDMA_WITH_IMM {
            // A framed RDMA WRITE: its sequence came as immediate data.
            self.post_receive(slot)?;
            self.check_written(completion.immediate);
            return Ok(true);
        }
        if completion.byte_len == 0 {
            self.post_receive(slot)?;
            return Ok(false);
        }
        match self.integrity.as_mut() {
            Some(integrity) if completion.byte_len as usize != self.layout.size => {
                // Counted as a message of the wrong length; the slot's bytes mean nothing.
                let _ = integrity.incoming.begin(&[], completion.byte_len as usize).end();
                self.post_receive(slot)?;
            }
            Some(_) => self.verify(Pending::Receive { slot })?,
            // Every receive comes back once: keep the queue full.
            None => self.post_receive(slot)?,
        }
        Ok(true)
    }

    /// A framed WRITE's completion: its sequence in order, and the region at least that new.
    fn check_written(&mut self, immediate: u32) {
        let Some(integrity) = self.integrity.as_mut() else { return };
        let sequence = framing::widen_immediate(immediate, integrity.incoming.expected());
        // Payload bytes are checked once, at the end (final_check): not counted here.
        integrity.incoming.check_sequence(sequence, 0);
        if self.layout.size >= HEADER_BYTES {
            let found = self.resources.buffer.read_word(self.layout.receive().start);
            if let Some(fault) = framing::stale_region(sequence, found) {
                integrity.incoming.report(fault);
            }
        }
    }

    /// WRITE latency: the byte that carries the iteration count (the last of the message).
    fn count_byte(&self) -> usize {
        self.layout.size - 1
    }

    fn write_ping(&mut self) -> Result<(), PerfError> {
        self.sent_count += 1;
        self.resources.buffer.write_byte(self.layout.send().start + self.count_byte(), self.sent_count as u8);
        let (remote_address, rkey) = self.remote;
        let local = self.local();
        self.resources
            .post_send(WireOp::Write { remote_address, rkey }, local, 0, true, self.inline)
            .map_err(|e| self.post_error(e))?;
        self.wait_send_completion()
    }

    /// Wait until the peer's WRITE brings the next iteration count into our last byte; `Ok(false)`
    /// when the peer's end marker arrives instead (checked between polls of the byte).
    fn wait_write(&mut self) -> Result<bool, PerfError> {
        self.received_count += 1;
        let expected = self.received_count as u8;
        let offset = self.layout.receive().start + self.count_byte();
        let mut spins = 0u32;
        self.spin_until(|c| {
            if c.resources.buffer.read_byte(offset) == expected {
                return Ok(true);
            }
            spins += 1;
            if spins % SPINS_PER_CLOCK_CHECK == 0 {
                c.poll_receives()?;
                return Ok(!c.received.is_empty());
            }
            Ok(false)
        })?;
        if let Some(marker) = self.received.pop_front() {
            if marker.status != 0 {
                return Err(protocol::completion_error("receive", &self.peer, marker.status, marker.vendor_err));
            }
            return Ok(false);
        }
        if self.integrity.is_some() {
            self.verify(Pending::Write)?;
        }
        Ok(true)
    }

    /// Post one signaled message of a latency test and wait for its completion.
    /// SEND and READ only: WRITE latency is [`VerbsConnection::write_ping`].
    fn post_one(&mut self) -> Result<(), PerfError> {
        let op = self.wire_op();
        let request = self.next_request(0, true);
        let inline = self.inline;
        self.resources.post_send_list(op, &[request], inline).map_err(|e| self.post_error(e))?;
        self.wait_send_completion()
    }

    /// One timed round trip of a latency test (see [`Connection::ping`]).
    fn round_trip(&mut self) -> Result<(), PerfError> {
        match self.operation {
            Operation::Write => {
                self.write_ping()?;
                if !self.wait_write()? {
                    return Err(PerfError::PeerClosed { peer: self.peer.clone(), during: "WRITE latency" });
                }
                Ok(())
            }
            Operation::Send => {
                self.post_one()?;
                if !self.wait_receive()? {
                    return Err(PerfError::PeerClosed { peer: self.peer.clone(), during: "SEND latency" });
                }
                Ok(())
            }
            Operation::Read => {
                let sequence = self.integrity.as_ref().map(|i| i.next_outgoing);
                self.post_one()?;
                if let Some(sequence) = sequence {
                    self.verify(Pending::Read { sequence })?;
                }
                Ok(())
            }
        }
    }

    /// Run a check of a received message: at once, or inside a timed round trip after the clock
    /// has stopped ([`Connection::settle`]), so verification is not measured as latency. The peer
    /// writes again only after this side's next ping, so the bytes wait unchanged.
    fn verify(&mut self, pending: Pending) -> Result<(), PerfError> {
        if self.in_round_trip {
            self.unverified = Some(pending);
            return Ok(());
        }
        self.run_check(pending)
    }

    fn run_check(&mut self, pending: Pending) -> Result<(), PerfError> {
        let Some(integrity) = self.integrity.as_mut() else { return Ok(()) };
        let layout = self.layout;
        let buffer = &self.resources.buffer;
        match pending {
            Pending::Receive { slot } => {
                let message = Pieces {
                    header: layout.receive_slot(slot),
                    payload: layout.payload(layout.receive()),
                    length: layout.size,
                    last_byte_free: false,
                };
                message.check(buffer, &mut integrity.incoming);
                self.post_receive(slot)?;
            }
            Pending::Write => {
                let receive = layout.receive();
                let message = Pieces {
                    header: layout.head(receive.clone()),
                    payload: layout.payload(receive),
                    length: layout.size,
                    last_byte_free: true,
                };
                integrity.check_fixed(buffer, message, 0);
            }
            Pending::Read { sequence } => {
                let message = Pieces {
                    header: layout.send_slot(sequence),
                    payload: layout.payload(layout.receive()),
                    length: layout.size,
                    last_byte_free: false,
                };
                integrity.check_fixed(buffer, message, 0);
            }
        }
        Ok(())
    }

    /// READ bandwidth: the header slots of the `messages` just completed must hold the responder's
    /// header (each was zeroed before its read was posted); the payload region, read by all of them,
    /// is checked once with the last.
    fn check_reads(&mut self, messages: usize) {
        let Some(integrity) = self.integrity.as_mut() else { return };
        let layout = self.layout;
        for index in 0..messages {
            let sequence = integrity.reads_checked;
            integrity.reads_checked += 1;
            let payload = if index + 1 == messages {
                layout.payload(layout.receive())
            } else {
                layout.receive().end..layout.receive().end
            };
            let message =
                Pieces { header: layout.send_slot(sequence), payload, length: layout.size, last_byte_free: false };
            integrity.check_fixed(&self.resources.buffer, message, 0);
        }
    }
}

impl Connection for VerbsConnection {
    fn depth(&self) -> usize {
        self.depth
    }

    fn post_many(&mut self, count: usize) -> Result<usize, PerfError> {
        if self.post_list <= 1 {
            for _ in 0..count {
                self.post()?;
            }
            return Ok(count);
        }
        let op = self.wire_op();
        let mut requests = [SendRequest::default(); device::MAX_POST_LIST];
        let mut done = 0;
        while done < count {
            let batch = (count - done).min(self.post_list).min(device::MAX_POST_LIST);
            // The same signaling as `post` one at a time.
            if self.window.outstanding() == 0 {
                self.last_progress = Instant::now();
            }
            for request in requests.iter_mut().take(batch) {
                let signal = self.window.next();
                *request = self.next_request(signal.covers, signal.signaled);
            }
            let inline = self.inline;
            self.resources.post_send_list(op, &requests[..batch], inline).map_err(|e| self.post_error(e))?;
            done += batch;
        }
        Ok(count)
    }

    fn post(&mut self) -> Result<(), PerfError> {
        if self.window.outstanding() == 0 {
            self.last_progress = Instant::now();
        }
        let signal = self.window.next();
        let op = self.wire_op();
        let request = self.next_request(signal.covers, signal.signaled);
        let inline = self.inline;
        self.resources.post_send_list(op, &[request], inline).map_err(|e| self.post_error(e))
    }

    fn poll(&mut self, wait: Duration) -> Result<usize, PerfError> {
        let mut messages = self.reap_send()?;
        if messages == 0 && !wait.is_zero() {
            // Waiting with only unsignaled messages outstanding: nothing would ever complete them.
            if self.window.needs_marker() {
                let marker = self.flush_marker();
                self.post_marker(marker)?;
            }
            let deadline = Instant::now() + wait;
            let mut spins = 0u32;
            while messages == 0 && self.window.completion_pending() {
                messages = self.reap_send()?;
                spins += 1;
                if spins % SPINS_PER_CLOCK_CHECK == 0 && Instant::now() >= deadline {
                    break;
                }
                std::hint::spin_loop();
            }
        }
        if messages == 0 && self.window.outstanding() > 0 && self.last_progress.elapsed() > self.timeout {
            return Err(self.silent());
        }
        if messages > 0 && self.operation == Operation::Read {
            self.check_reads(messages);
        }
        Ok(messages)
    }

    /// Post the end marker, a zero-length SEND: it ends the server's `serve` (SEND, framed WRITE)
    /// and `pong` (SEND, WRITE), which is how duration mode stops. Signaled, it also covers an
    /// unsignaled tail.
    fn finish(&mut self) -> Result<(), PerfError> {
        if !self.finished {
            self.post_marker(WireOp::Send)?;
            self.finished = true;
        }
        Ok(())
    }

    fn serve(&mut self, expected: Option<u64>) -> Result<Served, PerfError> {
        let framed_write = self.operation == Operation::Write && self.integrity.is_some();
        match self.operation {
            // One-sided: the data path needs nothing from this side; the client's "done" arrives on
            // the side channel. Framed WRITEs are the exception: each brings its sequence.
            Operation::Write | Operation::Read if !framed_write => {
                self.served_one_sided = self.operation == Operation::Write;
                Ok(Served::Unobserved)
            }
            Operation::Write | Operation::Read | Operation::Send => {
                self.served_one_sided = framed_write;
                let mut received = 0u64;
                while expected.is_none_or(|e| received < e) {
                    if !self.wait_receive()? {
                        break;
                    }
                    received += 1;
                }
                Ok(Served::Counted(received))
            }
        }
    }

    fn ping(&mut self) -> Result<(), PerfError> {
        // The clock runs around this call: checking the reply waits for `settle`.
        self.in_round_trip = true;
        let result = self.round_trip();
        self.in_round_trip = false;
        result
    }

    fn settle(&mut self) {
        if let Some(pending) = self.unverified.take() {
            // A receive that cannot be posted again shows up as the next round trip's timeout.
            let _ = self.run_check(pending);
        }
    }

    fn pong(&mut self) -> Result<(), PerfError> {
        match self.operation {
            Operation::Write => {
                if !self.wait_write()? {
                    return Err(PerfError::PeerClosed { peer: self.peer.clone(), during: "WRITE latency" });
                }
                self.write_ping()
            }
            Operation::Send => {
                if !self.wait_receive()? {
                    return Err(PerfError::PeerClosed { peer: self.peer.clone(), during: "SEND latency" });
                }
                self.post_one()
            }
            Operation::Read => Ok(()),
        }
    }

    fn describe(&self) -> String {
        self.description.clone()
    }

    fn validation_errors(&self) -> u64 {
        self.final_check().0.errors()
    }

    fn verified(&self) -> Verified {
        self.final_check().0
    }

    fn first_corruption(&self) -> Option<String> {
        self.final_check().1.map(|c| c.to_string())
    }
}

impl VerbsConnection {
    /// What was verified and the first failure, with the responder's region of framed WRITEs checked
    /// now: it must hold the last message written, header and payload (the generator asks after the
    /// client's "done", when the data has landed).
    fn final_check(&self) -> (Verified, Option<crate::integrity::Corruption>) {
        let Some(integrity) = self.integrity.as_ref() else { return (Verified::default(), None) };
        let mut verified = integrity.verified();
        let mut first = integrity.first().cloned();
        let last = integrity.incoming.expected();
        if self.served_one_sided && last > 0 {
            let receive = self.layout.receive();
            let message = Pieces {
                header: self.layout.head(receive.clone()),
                payload: self.layout.payload(receive),
                length: self.layout.size,
                last_byte_free: false,
            };
            let mut region = integrity::Verifier::resume(integrity.peer(), last - 1);
            message.check(&self.resources.buffer, &mut region);
            verified.add(&region.verified);
            first = first.or(region.first);
        }
        (verified, first)
    }
}

/// The verbs data path of one session for the generator: one queue pair per data connection, the
/// endpoint descriptions carried in the handshake as JSON.
///
/// After connecting, the server writes one byte (`R`) on the control connection and the client reads
/// it before returning its connections: the server's queue pairs are then in RTR, so the client's
/// first messages are not dropped and retried (a 67 ms stall per retry; perftest syncs the same way
/// after `ctx_connect`). The byte sits between the Accept frame and the first frame after the test,
/// where both sides expect it.
#[derive(Debug)]
pub struct VerbsDataPath {
    pub side: crate::generator::Side,
    pub device: Option<String>,
    pub port: u8,
    pub gid_index: Option<u32>,
    pub timeout: Duration,
    /// This side's traffic class and service level, where the run's parameters name none.
    pub traffic: Traffic,
    /// Test hook: see [`VerbsOptions::corrupt_every`].
    corrupt_every: Option<u64>,
    endpoints: Vec<VerbsEndpoint>,
}

const READY: u8 = b'R';

impl VerbsDataPath {
    pub fn new(
        side: crate::generator::Side,
        device: Option<String>,
        port: u8,
        gid_index: Option<u32>,
        timeout: Duration,
    ) -> VerbsDataPath {
        VerbsDataPath {
            side,
            device,
            port,
            gid_index,
            timeout,
            traffic: Traffic::default(),
            corrupt_every: None,
            endpoints: Vec::new(),
        }
    }

    /// Flip one bit in the header of every `every`th framed SEND this side posts (`perf client
    /// --inject-corruption` over verbs).
    pub fn with_corruption(mut self, every: Option<u64>) -> VerbsDataPath {
        self.corrupt_every = every.filter(|n| *n > 0);
        self
    }

    /// The traffic class and service level to use where the run's parameters give none.
    pub fn with_traffic(mut self, traffic: Traffic) -> VerbsDataPath {
        self.traffic = traffic;
        self
    }

    fn options(&self, parameters: &crate::RunParameters) -> Result<VerbsOptions, PerfError> {
        Ok(VerbsOptions {
            device: self.device.clone(),
            port: self.port,
            gid_index: self.gid_index,
            operation: parameters.operation,
            size: usize::try_from(parameters.size)
                .map_err(|_| PerfError::Unsupported(format!("message size {} is too large", parameters.size)))?,
            depth: parameters.tx_depth.max(1) as usize,
            inline_size: parameters.inline_size,
            inline_fallback: parameters.inline_size > 0
                && parameters.inline_size == crate::params::default_inline(parameters.operation, parameters.test),
            validate: parameters.validate,
            validation_seed: parameters.validation_seed,
            sender: match self.side {
                crate::generator::Side::Client => 0,
                crate::generator::Side::Server => 1,
            },
            timeout: self.timeout,
            // The client's choice travels in the parameters, so both ends of every queue pair
            // (data one way, ACKs and replies the other) ride the same class.
            post_list: parameters.post_list.clamp(1, device::MAX_POST_LIST as u32) as usize,
            corrupt_every: self.corrupt_every,
            inline_note: None,
            traffic: Traffic {
                traffic_class: parameters.traffic_class.unwrap_or(self.traffic.traffic_class),
                service_level: parameters.service_level.unwrap_or(self.traffic.service_level),
            },
        })
    }

    fn open_all(&mut self, parameters: &crate::RunParameters) -> Result<Vec<serde_json::Value>, PerfError> {
        let options = self.options(parameters)?;
        // One device context and protection domain for every queue pair of the run (perftest's
        // ctx_init), not one per queue pair.
        let port = VerbsEndpoint::open_port(&options)?;
        let count = crate::generator::connection_count(parameters);
        let shared = VerbsEndpoint::shared_queues(&port, &options, count as usize)?;
        self.endpoints = (0..count)
            .map(|_| VerbsEndpoint::open_on(std::sync::Arc::clone(&port), &options, shared.as_ref()))
            .collect::<Result<_, _>>()?;
        self.endpoints
            .iter()
            .map(|e| {
                serde_json::to_value(e.local_info())
                    .map_err(|e| PerfError::Transport(format!("endpoint description: {e}")))
            })
            .collect()
    }

    fn connect_all(
        &mut self,
        peer_endpoints: &[serde_json::Value],
        control: &std::net::TcpStream,
    ) -> Result<Vec<Box<dyn Connection>>, PerfError> {
        let peer = control.peer_addr().map(|a| a.to_string()).unwrap_or_else(|_| "peer".into());
        if peer_endpoints.len() != self.endpoints.len() {
            return Err(PerfError::Mismatch {
                field: "verbs queue pairs",
                client: peer_endpoints.len().to_string(),
                server: self.endpoints.len().to_string(),
            });
        }
        std::mem::take(&mut self.endpoints)
            .into_iter()
            .zip(peer_endpoints)
            .map(|(endpoint, remote)| {
                let remote: VerbsEndpointInfo = serde_json::from_value(remote.clone()).map_err(|e| {
                    PerfError::Handshake { peer: peer.clone(), reason: format!("verbs endpoint description: {e}") }
                })?;
                Ok(Box::new(endpoint.connect(&remote)?) as Box<dyn Connection>)
            })
            .collect()
    }
}

impl crate::generator::DataPath for VerbsDataPath {
    fn prepare(
        &mut self,
        parameters: &crate::RunParameters,
        _control: &std::net::TcpStream,
    ) -> Result<Vec<serde_json::Value>, PerfError> {
        self.open_all(parameters)
    }

    /// Connect (receives posted, RTR, RTS); then the server sends the ready byte and the client waits
    /// for it.
    fn connect(
        &mut self,
        _parameters: &crate::RunParameters,
        peer_endpoints: &[serde_json::Value],
        control: &std::net::TcpStream,
    ) -> Result<Vec<Box<dyn Connection>>, PerfError> {
        use std::io::{Read, Write};
        let connections = self.connect_all(peer_endpoints, control)?;
        let peer = control.peer_addr().map(|a| a.to_string()).unwrap_or_else(|_| "peer".into());
        let mut channel = control;
        if self.side == crate::generator::Side::Server {
            channel.write_all(&[READY]).map_err(|source| PerfError::Io {
                peer,
                during: "verbs connect",
                cause: source,
            })?;
            return Ok(connections);
        }
        let mut ready = [0u8; 1];
        channel.read_exact(&mut ready).map_err(|source| match source.kind() {
            std::io::ErrorKind::UnexpectedEof => PerfError::PeerClosed { peer: peer.clone(), during: "verbs connect" },
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                PerfError::PeerSilent { peer: peer.clone(), waited: self.timeout }
            }
            _ => PerfError::Io { peer: peer.clone(), during: "verbs connect", cause: source },
        })?;
        if ready[0] != READY {
            return Err(PerfError::Handshake {
                peer,
                reason: format!("expected the verbs ready byte, got {:#04x}", ready[0]),
            });
        }
        Ok(connections)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> VerbsOptions {
        VerbsOptions {
            device: None,
            port: 1,
            gid_index: None,
            operation: Operation::Write,
            size: 65536,
            depth: 128,
            inline_size: 0,
            validate: false,
            validation_seed: 0,
            sender: 0,
            timeout: Duration::from_secs(5),
            traffic: Traffic::default(),
            inline_note: None,
            post_list: 1,
            corrupt_every: None,
            inline_fallback: false,
        }
    }

    /// This build host has no kernel RDMA (and may or may not have libibverbs): opening must fail
    /// with the message for whichever is missing, never panic or hang. On a host with a device this
    /// test checks nothing more (the guest test covers real devices).
    #[test]
    fn open_without_rdma_says_what_is_missing() {
        let has_devices = std::fs::read_dir("/sys/class/infiniband").is_ok_and(|mut d| d.next().is_some());
        if has_devices {
            eprintln!("note: this host has RDMA devices; the missing-RDMA error is covered by tests/vm instead");
            return;
        }
        let error = VerbsEndpoint::open(&options()).expect_err("no RDMA here").to_string();
        let libibverbs = [
            "/usr/lib/x86_64-linux-gnu",
            "/usr/lib64",
            "/usr/lib",
            "/lib/x86_64-linux-gnu",
            "/usr/lib/aarch64-linux-gnu",
        ]
        .iter()
        .any(|dir| std::path::Path::new(dir).join("libibverbs.so.1").exists());
        if libibverbs {
            assert!(error.starts_with("no RDMA devices: kernel has no RDMA support or no driver loaded"), "{error}");
        } else {
            assert!(error.starts_with("RDMA userspace (rdma-core) not installed"), "{error}");
        }
    }

    #[test]
    fn bad_sizes_are_refused_before_touching_a_device() {
        let error = VerbsEndpoint::open(&VerbsOptions { size: 0, ..options() }).expect_err("size 0").to_string();
        assert!(error.contains("message size 0"), "{error}");
        let error = VerbsEndpoint::open(&VerbsOptions { depth: 0, ..options() }).expect_err("depth 0").to_string();
        assert!(error.contains("depth"), "{error}");
    }

    #[test]
    fn endpoint_info_round_trips_as_json() {
        let info = VerbsEndpointInfo {
            device: "rxe0".into(),
            port: 1,
            qpn: 17,
            psn: 0xabcdef,
            gid: "::ffff:10.77.0.2".into(),
            gid_index: 1,
            lid: 0,
            rkey: 0x1234,
            address: 0x7f12_3456_7000,
            length: 65536,
            mtu: 1024,
            max_read_atomic: 128,
            link_layer: "ethernet".into(),
        };
        let json = serde_json::to_value(&info).expect("json");
        assert_eq!(json["gid"], "::ffff:10.77.0.2");
        let back: VerbsEndpointInfo = serde_json::from_value(json).expect("back");
        assert_eq!(back, info);
        assert!(serde_json::from_str::<VerbsEndpointInfo>(r#"{"qpn": 1}"#).is_err());
    }
}
