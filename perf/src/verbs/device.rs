//! The libibverbs calls, through sideway (which dlopens libibverbs.so.1 via rdma-mummy-sys, so the
//! binary starts without rdma-core): device, port and GID queries, the registered buffer, queue pair
//! transitions, posting and polling. The rest of the transport is safe code over this module.
//!
//! Unsafe code, and why it cannot be avoided here: the buffer is memory the adapter reads and writes
//! behind the compiler's back (DMA), so it is a raw allocation accessed with volatile reads and
//! writes, never through `&[u8]`/`&mut [u8]` while a work request may touch it; sideway marks
//! `ibv_reg_mr` and scatter/gather setup `unsafe` because the library cannot check that the memory
//! outlives the work requests (here: the buffer is dropped after the queue pair and the memory region).
#![expect(
    unsafe_code,
    reason = "DMA buffer, sideway's unsafe ibv_reg_mr, and ibv_post_send/ibv_query_qp called directly; see the module doc"
)]

use std::alloc::Layout;
use std::io;
use std::net::Ipv6Addr;
use std::ops::Range;
use std::ptr::NonNull;
use std::sync::Arc;

use sideway::ibverbs::address::{AddressHandleAttribute, Gid, GidType};
use sideway::ibverbs::completion::{GenericCompletionQueue, PollCompletionQueueError};
use sideway::ibverbs::device::{DeviceInfo, DeviceList, GetDeviceListErrorKind};
use sideway::ibverbs::device_context::{DeviceContext, LinkLayer, Mtu, PortState};
use sideway::ibverbs::memory_region::MemoryRegion;
use sideway::ibverbs::protection_domain::ProtectionDomain;
use sideway::ibverbs::queue_pair::{
    GenericQueuePair, ModifyQueuePairErrorKind, QueuePair, QueuePairAttribute, QueuePairState,
};
use sideway::ibverbs::AccessFlags;

use super::protocol::{self, GidCandidate, GidKind, QpSetting, QpState, Traffic};
use crate::integrity::fill_region;
use crate::PerfError;

/// An open device.
pub(super) struct Device {
    context: Arc<DeviceContext>,
    /// The one protection domain of every queue pair and memory region opened on this device by a
    /// run (perftest allocates one per context, ctx_init), allocated with the first of them.
    protection_domain: std::sync::OnceLock<Arc<ProtectionDomain>>,
    pub name: String,
}

/// What the transport needs to know about a port.
#[derive(Debug, Clone)]
pub(super) struct PortInfo {
    pub ethernet: bool,
    pub active_mtu: u32,
    pub lid: u16,
    pub gid_table_len: u32,
}

/// Device limits that size the queues.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub max_qp_wr: u32,
    pub max_cqe: u32,
    /// Incoming RDMA READs a queue pair can serve at once (responder resources).
    pub responder_resources: u8,
    /// RDMA READs a queue pair can have outstanding (initiator depth).
    pub initiator_depth: u8,
}

fn io_error_text(error: &dyn std::error::Error) -> String {
    // sideway's errors say what failed; the io::Error below says why.
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Open `name`, or the first device whose port `port` is active (else the first device).
pub(super) fn open_device(name: Option<&str>, port: u8) -> Result<Device, PerfError> {
    let list = DeviceList::new().map_err(|e| match e.0 {
        GetDeviceListErrorKind::Ibverbs(source) => protocol::device_list_error(source.raw_os_error().unwrap_or(0)),
        other => protocol::no_devices_error(&io_error_text(&other)),
    })?;
    if list.is_empty() {
        return Err(protocol::no_devices_error("libibverbs lists no device"));
    }
    let names: Vec<String> = list.iter().map(|d| d.name()).collect();
    let open = |index: usize| -> Result<Device, PerfError> {
        let device = list.get(index).ok_or_else(|| protocol::no_devices_error("device list changed"))?;
        let context = device.open().map_err(|e| {
            PerfError::Transport(format!("cannot open RDMA device {}: {}", names[index], io_error_text(&e)))
        })?;
        Ok(Device { context, protection_domain: std::sync::OnceLock::new(), name: names[index].clone() })
    };
    match name {
        Some(wanted) => match names.iter().position(|n| n == wanted) {
            Some(index) => open(index),
            None => Err(PerfError::Transport(format!("RDMA device {wanted} not found; devices: {}", names.join(", ")))),
        },
        None => {
            for index in 0..names.len() {
                let device = open(index)?;
                if device.context.query_port(port).is_ok_and(|p| p.port_state() == PortState::Active) {
                    return Ok(device);
                }
            }
            open(0)
        }
    }
}

impl Device {
    fn protection_domain(&self) -> Result<Arc<ProtectionDomain>, PerfError> {
        if let Some(pd) = self.protection_domain.get() {
            return Ok(Arc::clone(pd));
        }
        let pd = self.context.alloc_pd().map_err(|e| {
            PerfError::Transport(format!("cannot allocate a protection domain on {}: {}", self.name, io_error_text(&e)))
        })?;
        Ok(Arc::clone(self.protection_domain.get_or_init(|| pd)))
    }

    /// Register `length` bytes at `address` (ordinary memory the caller owns) as a source of RDMA
    /// WRITEs on every queue pair of this device: the collectives' working memory, written from in
    /// place. Local write access although the adapter only reads it: it makes the kernel pin private,
    /// writable pages (ibv_reg_mr(3)), so a page still shared copy-on-write (a zeroed allocation not
    /// yet written maps the zero page) is not the one the adapter keeps reading after the program
    /// writes its own copy.
    ///
    /// # Safety
    /// The memory stays allocated, and where it is, while the registration lives and while a work
    /// request posted from it may be outstanding.
    unsafe fn register_source(&self, address: usize, length: usize) -> Result<SourceRegistration, PerfError> {
        let pd = self.protection_domain()?;
        // SAFETY: the caller keeps the memory valid for the registration's life (see above).
        let mr = unsafe { pd.reg_mr(address, length.max(1), AccessFlags::LocalWrite) }.map_err(|e| {
            PerfError::Transport(format!(
                "cannot register {length} bytes of memory on {}: {}",
                self.name,
                io_error_text(&e)
            ))
        })?;
        Ok(SourceRegistration { mr, _pd: pd })
    }

    pub fn port(&self, port: u8) -> Result<PortInfo, PerfError> {
        let attr = self.context.query_port(port).map_err(|e| {
            PerfError::Transport(format!("cannot query port {port} of {}: {}", self.name, io_error_text(&e)))
        })?;
        let state = attr.port_state();
        if state != PortState::Active {
            return Err(PerfError::Transport(format!(
                "{} port {port} is {state:?}, not Active: check the link (`rdma link`, `ibstat`)",
                self.name
            )));
        }
        let active_mtu = match attr.active_mtu() {
            Mtu::Mtu256 => 256,
            Mtu::Mtu512 => 512,
            Mtu::Mtu1024 => 1024,
            Mtu::Mtu2048 => 2048,
            Mtu::Mtu4096 => 4096,
        };
        Ok(PortInfo {
            ethernet: attr.link_layer() == LinkLayer::Ethernet,
            active_mtu,
            lid: attr.lid(),
            gid_table_len: u32::try_from(attr.gid_tbl_len()).unwrap_or(0),
        })
    }

    pub fn limits(&self) -> Result<Limits, PerfError> {
        let attr = self.context.query_device().map_err(|e| {
            PerfError::Transport(format!("cannot query RDMA device {}: {}", self.name, io_error_text(&e)))
        })?;
        let to_u8 = |v: i32| u8::try_from(v.clamp(1, 255)).unwrap_or(1);
        Ok(Limits {
            max_qp_wr: u32::try_from(attr.max_qp_wr()).unwrap_or(1).max(1),
            max_cqe: u32::try_from(attr.max_cqe()).unwrap_or(1).max(1),
            responder_resources: to_u8(attr.max_qp_rd_atom()),
            initiator_depth: to_u8(attr.max_qp_init_rd_atom()),
        })
    }

    /// The populated GID entries of `port`, in index order.
    pub fn gid_table(&self, port: u8, table_len: u32) -> Result<Vec<GidCandidate>, PerfError> {
        let entries = self.context.query_gid_table().map_err(|e| {
            PerfError::Transport(format!("cannot read the GID table of {}: {}", self.name, io_error_text(&e)))
        })?;
        let mut table: Vec<GidCandidate> = entries
            .iter()
            .filter(|e| e.port_num() == u32::from(port) && e.gid_index() < table_len.max(1) && !e.gid().is_zero())
            .map(|e| GidCandidate {
                index: e.gid_index(),
                gid: Ipv6Addr::from(e.gid().raw),
                kind: match e.gid_type() {
                    GidType::InfiniBand => GidKind::InfiniBand,
                    GidType::RoceV1 => GidKind::RoceV1,
                    GidType::RoceV2 => GidKind::RoceV2,
                },
                netdev: e.netdev_name().ok().filter(|n| !n.is_empty()),
            })
            .collect();
        table.sort_by_key(|e| e.index);
        Ok(table)
    }

    /// The GID at `index`, which must be populated.
    pub fn gid(&self, port: u8, index: u32) -> Result<Ipv6Addr, PerfError> {
        let gid = self.context.query_gid(port, index).map_err(|e| {
            PerfError::Transport(format!(
                "cannot read GID index {index} of {} port {port}: {}",
                self.name,
                io_error_text(&e)
            ))
        })?;
        Ok(Ipv6Addr::from(gid.raw))
    }
}

/// Memory registered as a source of RDMA WRITEs ([`Device::register_source`]).
struct SourceRegistration {
    mr: Arc<MemoryRegion>,
    _pd: Arc<ProtectionDomain>,
}

/// Zeroed memory owned together with its registration as a source of RDMA WRITEs: what the
/// collectives' working buffers live in, so links write from them in place. Field order is drop
/// order: the registration goes before the memory; the memory never moves (a boxed slice that is
/// never replaced while registered).
pub(super) struct RegisteredMemory {
    registration: SourceRegistration,
    memory: Box<[u8]>,
}

impl RegisteredMemory {
    pub fn new(device: &Device, length: usize) -> Result<RegisteredMemory, PerfError> {
        let memory = vec![0u8; length.max(1)].into_boxed_slice();
        // SAFETY: the memory is owned by the value the registration is part of, dropped after it, and
        // never moved or replaced (no method hands out the box). Writes posted from it are completed
        // before a collective returns (`Sender::flush`), so none outlives this value.
        let registration = unsafe { device.register_source(memory.as_ptr() as usize, memory.len())? };
        Ok(RegisteredMemory { registration, memory })
    }

    pub fn bytes(&self) -> &[u8] {
        &self.memory
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.memory
    }

    pub fn local_key(&self) -> u32 {
        self.registration.mr.lkey()
    }
}

/// A page-aligned, zeroed allocation registered with the adapter: the only memory work requests touch.
pub(super) struct Buffer {
    pointer: NonNull<u8>,
    layout: Layout,
}

// SAFETY: the buffer owns its allocation; nothing in it is tied to the thread that made it.
unsafe impl Send for Buffer {}

impl Buffer {
    fn new(length: usize) -> Result<Buffer, PerfError> {
        let page = 4096;
        let layout = Layout::from_size_align(length.max(1).div_ceil(page) * page, page)
            .map_err(|e| PerfError::Unsupported(format!("buffer of {length} bytes: {e}")))?;
        // SAFETY: the layout has a non-zero size.
        let pointer = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })
            .ok_or_else(|| PerfError::Unsupported(format!("cannot allocate a {length}-byte buffer")))?;
        Ok(Buffer { pointer, layout })
    }

    pub fn address(&self, offset: usize) -> u64 {
        self.pointer.as_ptr() as u64 + offset as u64
    }

    fn check(&self, range: &Range<usize>) {
        assert!(range.start <= range.end && range.end <= self.layout.size(), "range {range:?} outside the buffer");
    }

    /// Fill `range` with the region pattern of `crate::integrity` (message offset 0 at
    /// `range.start`). Only while no work request uses the range (before the connection starts).
    pub fn fill_pattern(&mut self, range: Range<usize>) {
        self.check(&range);
        let mut pattern = vec![0u8; range.len()];
        fill_region(&mut pattern);
        self.copy_in(range.start, &pattern);
    }

    /// One byte as the adapter left it (volatile: it changes behind the compiler's back).
    pub fn read_byte(&self, offset: usize) -> u8 {
        self.check(&(offset..offset + 1));
        // SAFETY: in bounds (checked); u8 has no alignment or validity requirements.
        unsafe { self.pointer.as_ptr().add(offset).read_volatile() }
    }

    /// Set one byte (volatile, so the store is not moved past the post that makes the adapter read it).
    pub fn write_byte(&self, offset: usize, value: u8) {
        self.check(&(offset..offset + 1));
        // SAFETY: in bounds (checked).
        unsafe { self.pointer.as_ptr().add(offset).write_volatile(value) }
    }

    /// Hand `range` to `visit` in consecutive chunks of whole words (the last may be shorter). The
    /// adapter may be writing the same bytes for a later message (SEND or WRITE into one region), so
    /// the region is read with volatile 8-byte loads into a stack chunk, never as a slice: eight bytes
    /// a load instead of one.
    pub fn read_chunks(&self, range: Range<usize>, mut visit: impl FnMut(&[u8])) {
        const CHUNK: usize = 4096;
        self.check(&range);
        // The completion was read by an FFI call; order the reads after it (as `copy_out` does).
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        let mut chunk = [0u8; CHUNK];
        let mut offset = range.start;
        while offset < range.end {
            let length = CHUNK.min(range.end - offset);
            let words = if (self.pointer.as_ptr() as usize + offset) % 8 == 0 { length / 8 } else { 0 };
            for word in 0..words {
                // SAFETY: in bounds (range checked) and 8-byte aligned (tested above); u64 has no
                // invalid bit patterns.
                let value = unsafe { (self.pointer.as_ptr().add(offset + word * 8) as *const u64).read_volatile() };
                chunk[word * 8..word * 8 + 8].copy_from_slice(&value.to_ne_bytes());
            }
            for (index, byte) in chunk.iter_mut().enumerate().take(length).skip(words * 8) {
                *byte = self.read_byte(offset + index);
            }
            visit(&chunk[..length]);
            offset += length;
        }
    }

    /// The little-endian word at `offset` (8-byte aligned), read at once: the sequence number of a
    /// header the adapter may be overwriting.
    pub fn read_word(&self, offset: usize) -> u64 {
        self.check(&(offset..offset + 8));
        assert!((self.pointer.as_ptr() as usize + offset) % 8 == 0, "word at {offset} is not aligned");
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        // SAFETY: in bounds and aligned (both checked); u64 has no invalid bit patterns.
        u64::from_le(unsafe { (self.pointer.as_ptr().add(offset) as *const u64).read_volatile() })
    }

    /// Copy `bytes` into the buffer at `offset`. Only where no work request is using those bytes (a
    /// send slot whose previous message the peer has credited).
    pub fn copy_in(&mut self, offset: usize, bytes: &[u8]) {
        self.check(&(offset..offset + bytes.len()));
        // SAFETY: in bounds (checked); the source is ordinary memory that cannot overlap the buffer.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.pointer.as_ptr().add(offset), bytes.len()) }
    }

    /// Copy bytes out of the buffer at `offset` into `into`. Only after the completion that says the
    /// adapter finished writing them, and before the slot is handed back to the peer.
    pub fn copy_out(&self, offset: usize, into: &mut [u8]) {
        self.check(&(offset..offset + into.len()));
        // The completion was read by an FFI call; order the copy after it.
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        // SAFETY: in bounds (checked); the destination is ordinary memory that cannot overlap the buffer.
        unsafe { std::ptr::copy_nonoverlapping(self.pointer.as_ptr().add(offset), into.as_mut_ptr(), into.len()) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.pointer.as_ptr(), self.layout) }
    }
}

/// A failed `ibv_modify_qp`: the errno (to explain a missing route) and the full text.
#[derive(Debug)]
pub(super) struct ModifyError {
    pub errno: Option<i32>,
    pub detail: String,
}

/// The wire operation of one work request.
#[derive(Debug, Clone, Copy)]
pub(super) enum WireOp {
    Write {
        remote_address: u64,
        rkey: u32,
    },
    Read {
        remote_address: u64,
        rkey: u32,
    },
    Send,
    /// `immediate` in host order (converted to the wire's big-endian `imm_data` here).
    WriteImmediate {
        remote_address: u64,
        rkey: u32,
        immediate: u32,
    },
    SendImmediate {
        immediate: u32,
    },
}

/// One polled completion.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Completion {
    pub wr_id: u64,
    pub status: u32,
    pub vendor_err: u32,
    pub byte_len: u32,
    /// Immediate data in host order (meaningful for messages sent with immediate).
    pub immediate: u32,
    /// ibv_wc_opcode (verbs.h): IBV_WC_RECV for a SEND, IBV_WC_RECV_RDMA_WITH_IMM for a WRITE with
    /// immediate.
    pub opcode: u32,
}

/// ibv_wc_opcode values (rdma-core verbs.h).
pub const WC_RECV_RDMA_WITH_IMM: u32 = 129;

/// Work requests one [`Resources::post_send_list`] call posts at most (perftest caps `-l` lower in
/// practice; the list lives on the stack).
pub const MAX_POST_LIST: usize = 64;

/// Scatter/gather entries per work request: a message's header slot and its payload region.
pub const MAX_GATHER: usize = 2;

/// The local memory of one work request: up to [`MAX_GATHER`] pieces of the registered buffer, as
/// (offset, length); empty pieces are left out (a zero-length message has none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Gather {
    pieces: [(usize, usize); MAX_GATHER],
    count: usize,
}

impl Gather {
    pub fn of(range: Range<usize>) -> Gather {
        Gather::default().then(range)
    }

    /// This list and `range` after it (left out when empty).
    pub fn then(mut self, range: Range<usize>) -> Gather {
        if !range.is_empty() && self.count < MAX_GATHER {
            self.pieces[self.count] = (range.start, range.len());
            self.count += 1;
        }
        self
    }

    pub fn pieces(&self) -> &[(usize, usize)] {
        &self.pieces[..self.count]
    }

    fn check(&self, buffer: &Buffer) {
        for &(offset, length) in self.pieces() {
            buffer.check(&(offset..offset + length));
        }
    }
}

/// One work request of a post list.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct SendRequest {
    pub wr_id: u64,
    pub signaled: bool,
    pub gather: Gather,
    /// Immediate data of this request, where the operation carries one and it differs per request
    /// (the sequence of a validated RDMA WRITE); `None`: the operation's.
    pub immediate: Option<u32>,
}

impl SendRequest {
    fn immediate(&self, operation: u32) -> u32 {
        self.immediate.unwrap_or(operation)
    }
}

/// Queue sizes of a queue pair.
#[derive(Debug, Clone, Copy)]
pub(super) struct QueueSizes {
    pub send: u32,
    pub receive: u32,
    pub inline: u32,
}

/// Protection domain, completion queues, queue pair and the registered buffer of one connection.
/// Field order is drop order: the queue pair goes before the memory region, the buffer last.
pub(super) struct Resources {
    qp: GenericQueuePair,
    queues: Queues,
    mr: Arc<MemoryRegion>,
    _pd: Arc<ProtectionDomain>,
    pub buffer: Buffer,
}

/// Where a queue pair's completions arrive.
enum Queues {
    /// Its own send and receive completion queues (the collectives' links).
    Own { send: GenericCompletionQueue, receive: GenericCompletionQueue },
    /// The run's shared pair of completion queues, this queue pair being `slot` among them.
    Shared { shared: Arc<SharedQueues>, slot: u16 },
}

/// The top 16 bits of every work request id of a queue pair on [`SharedQueues`]: its slot, so a
/// completion polled by any queue pair of the run is routed back to the one that posted it. Ids the
/// transport uses stay below 2^48 (message counts).
const SLOT_SHIFT: u32 = 48;
const ID_MASK: u64 = (1 << SLOT_SHIFT) - 1;

/// One send and one receive completion queue for every queue pair of a run, as perftest creates
/// them (ctx_init: one send CQ and one receive CQ per context, sized for all queue pairs), instead
/// of two per queue pair. Whichever queue pair polls drains the queue and files each completion
/// under the slot in its work request id; each takes its own.
pub(super) struct SharedQueues {
    send: GenericCompletionQueue,
    receive: GenericCompletionQueue,
    routed: std::sync::Mutex<Routed>,
}

#[derive(Default)]
struct Routed {
    send: Vec<Vec<Completion>>,
    receive: Vec<Vec<Completion>>,
    scratch: Vec<Completion>,
}

impl SharedQueues {
    /// Completion queues of `send` and `receive` entries (the sum over the queue pairs to come).
    pub fn new(device: &Device, send: u32, receive: u32) -> Result<Arc<SharedQueues>, PerfError> {
        let fail = |detail: String| {
            PerfError::Transport(format!("cannot create a shared completion queue on {}: {detail}", device.name))
        };
        Ok(Arc::new(SharedQueues {
            send: build_cq(&device.context, send.max(1)).map_err(fail)?,
            receive: build_cq(&device.context, receive.max(1)).map_err(fail)?,
            routed: std::sync::Mutex::new(Routed::default()),
        }))
    }

    fn register(&self) -> Result<u16, PerfError> {
        let mut routed = self.routed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let slot = u16::try_from(routed.send.len())
            .map_err(|_| PerfError::Unsupported("more than 65536 queue pairs on shared completion queues".into()))?;
        routed.send.push(Vec::new());
        routed.receive.push(Vec::new());
        Ok(slot)
    }

    /// Drain one of the queues and hand `slot` its completions (ids without the slot bits).
    fn poll(&self, receive: bool, slot: u16, out: &mut Vec<Completion>) -> Result<(), io::Error> {
        let mut routed = self.routed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Routed { send, receive: received, scratch } = &mut *routed;
        scratch.clear();
        poll(if receive { &self.receive } else { &self.send }, scratch)?;
        let filed = if receive { received } else { send };
        for mut completion in scratch.drain(..) {
            let owner = (completion.wr_id >> SLOT_SHIFT) as usize;
            completion.wr_id &= ID_MASK;
            if let Some(queue) = filed.get_mut(owner) {
                queue.push(completion);
            }
        }
        if let Some(mine) = filed.get_mut(usize::from(slot)) {
            out.append(mine);
        }
        Ok(())
    }
}

fn build_cq(context: &Arc<DeviceContext>, entries: u32) -> Result<GenericCompletionQueue, String> {
    context.create_cq_builder().setup_cqe(entries).build().map(Into::into).map_err(|e| io_error_text(&e))
}

impl Resources {
    pub fn create(
        device: &Device,
        sizes: QueueSizes,
        buffer_length: usize,
        shared: Option<&Arc<SharedQueues>>,
    ) -> Result<Resources, PerfError> {
        let fail =
            |what: &str, detail: String| PerfError::Transport(format!("cannot {what} on {}: {detail}", device.name));
        let pd = device.protection_domain()?;
        let queues = match shared {
            Some(shared) => Queues::Shared { shared: Arc::clone(shared), slot: shared.register()? },
            None => Queues::Own {
                send: build_cq(&device.context, sizes.send).map_err(|e| fail("create a completion queue", e))?,
                receive: build_cq(&device.context, sizes.receive.max(1))
                    .map_err(|e| fail("create a completion queue", e))?,
            },
        };
        let (send_cq, recv_cq) = match &queues {
            Queues::Own { send, receive } => (send.clone(), receive.clone()),
            Queues::Shared { shared, .. } => (shared.send.clone(), shared.receive.clone()),
        };
        let mut builder = pd.create_qp_builder();
        builder
            .setup_max_send_wr(sizes.send)
            .setup_max_recv_wr(sizes.receive.max(1))
            .setup_max_send_sge(MAX_GATHER as u32)
            .setup_max_recv_sge(MAX_GATHER as u32)
            .setup_max_inline_data(sizes.inline)
            .setup_send_cq(send_cq.clone())
            .setup_recv_cq(recv_cq.clone());
        // The classic ibv_post_send/ibv_poll_cq, not the extended ibv_wr_*/ibv_start_poll API: on
        // Soft-RoCE (rdma-core 44, Debian 12, through sideway 0.4.3) the extended CQ reported receive
        // completions as zero-length and SEND bandwidth ran the send queue full (ENOMEM/ENOSPC), with
        // either QP flavour; the classic calls pass every test in tests/vm/perf-guest.sh and work on
        // every provider.
        let qp: GenericQueuePair = match builder.build() {
            Ok(qp) => qp.into(),
            Err(e) => {
                let inline = if sizes.inline > 0 {
                    format!(" (inline {} bytes: try a smaller --inline)", sizes.inline)
                } else {
                    String::new()
                };
                return Err(fail(
                    &format!(
                        "create a queue pair of {} send and {} receive entries{inline}",
                        sizes.send, sizes.receive
                    ),
                    io_error_text(&e),
                ));
            }
        };
        let buffer = Buffer::new(buffer_length)?;
        let access = AccessFlags::LocalWrite | AccessFlags::RemoteWrite | AccessFlags::RemoteRead;
        // SAFETY: the buffer is valid for its whole layout and outlives the memory region (field order).
        let mr = unsafe { pd.reg_mr(buffer.address(0) as usize, buffer.layout.size(), access) }
            .map_err(|e| fail(&format!("register {} bytes of memory", buffer.layout.size()), io_error_text(&e)))?;
        Ok(Resources { qp, queues, mr, _pd: pd, buffer })
    }

    pub fn qpn(&self) -> u32 {
        self.qp.qp_number()
    }

    /// The traffic class and service level the provider holds for this queue pair, read back with
    /// ibv_query_qp(3) (mask IBV_QP_AV) rather than assumed from what was asked: what the adapter
    /// puts on the wire. sideway's query result has no getter for the address vector, so this
    /// calls the C function directly.
    pub fn queried_traffic(&self) -> Result<Traffic, String> {
        // SAFETY: ibv_qp_attr and ibv_qp_init_attr are plain C structs for which all-zero bytes are
        // valid values; they are out parameters of ibv_query_qp, and the queue pair pointer stays
        // valid while `self.qp` lives.
        let (code, attr) = unsafe {
            let mut attr: rdma_mummy_sys::ibv_qp_attr = std::mem::zeroed();
            let mut init: rdma_mummy_sys::ibv_qp_init_attr = std::mem::zeroed();
            let code = rdma_mummy_sys::ibv_query_qp(
                self.qp.qp().as_ptr(),
                &mut attr,
                rdma_mummy_sys::ibv_qp_attr_mask::IBV_QP_AV.0 as i32,
                &mut init,
            );
            (code, attr)
        };
        if code != 0 {
            return Err(format!("ibv_query_qp: {}", std::io::Error::from_raw_os_error(code.abs())));
        }
        Ok(Traffic { traffic_class: attr.ah_attr.grh.traffic_class, service_level: attr.ah_attr.sl })
    }

    pub fn rkey(&self) -> u32 {
        self.mr.rkey()
    }

    /// Apply one transition: each setting becomes the matching `QueuePairAttribute` field and mask bit.
    pub fn modify(&mut self, settings: &[QpSetting]) -> Result<(), ModifyError> {
        let mut attr = QueuePairAttribute::new();
        for setting in settings {
            match setting {
                QpSetting::State(state) => attr.setup_state(match state {
                    QpState::Init => QueuePairState::Init,
                    QpState::ReadyToReceive => QueuePairState::ReadyToReceive,
                    QpState::ReadyToSend => QueuePairState::ReadyToSend,
                }),
                QpSetting::PkeyIndex(index) => attr.setup_pkey_index(*index),
                QpSetting::Port(port) => attr.setup_port(*port),
                QpSetting::AccessFlags { remote_write, remote_read } => {
                    let mut access = AccessFlags::LocalWrite;
                    if *remote_write {
                        access |= AccessFlags::RemoteWrite;
                    }
                    if *remote_read {
                        access |= AccessFlags::RemoteRead;
                    }
                    attr.setup_access_flags(access)
                }
                QpSetting::AddressVector { dlid, port, service_level, grh } => {
                    let mut av = AddressHandleAttribute::new();
                    av.setup_dest_lid(*dlid).setup_service_level(*service_level).setup_port(*port);
                    if let Some(grh) = grh {
                        av.setup_grh(
                            &Gid { raw: grh.dgid.octets() },
                            0,
                            grh.sgid_index,
                            grh.hop_limit,
                            grh.traffic_class,
                        );
                    }
                    attr.setup_address_vector(&av)
                }
                QpSetting::PathMtu(mtu) => attr.setup_path_mtu(Mtu::from(*mtu)),
                QpSetting::DestQpn(qpn) => attr.setup_dest_qp_num(*qpn),
                QpSetting::RqPsn(psn) => attr.setup_rq_psn(*psn),
                QpSetting::MaxDestRdAtomic(n) => attr.setup_max_dest_read_atomic(*n),
                QpSetting::MinRnrTimer(timer) => attr.setup_min_rnr_timer(*timer),
                QpSetting::SqPsn(psn) => attr.setup_sq_psn(*psn),
                QpSetting::Timeout(timeout) => attr.setup_timeout(*timeout),
                QpSetting::RetryCount(count) => attr.setup_retry_cnt(*count),
                QpSetting::RnrRetry(count) => attr.setup_rnr_retry(*count),
                QpSetting::MaxRdAtomic(n) => attr.setup_max_read_atomic(*n),
            };
        }
        self.qp.modify(&attr).map_err(|e| {
            let errno = match &e.0 {
                ModifyQueuePairErrorKind::NetworkUnreachable { source, .. }
                | ModifyQueuePairErrorKind::ResolveRouteTimedout { source, .. }
                | ModifyQueuePairErrorKind::Ibverbs(source) => source.raw_os_error(),
                _ => None,
            };
            ModifyError { errno, detail: io_error_text(&e) }
        })
    }

    /// Post one work request over one local range (see [`Resources::post_send_list`]).
    pub fn post_send(
        &mut self,
        op: WireOp,
        local: Range<usize>,
        wr_id: u64,
        signaled: bool,
        inline: bool,
    ) -> Result<(), io::Error> {
        self.post_send_list(op, &[SendRequest { wr_id, signaled, gather: Gather::of(local), immediate: None }], inline)
    }

    /// Post the work requests of one operation, each with its own id, signaling and gather list, in
    /// one ibv_post_send(3) call: perftest's post list (`-l`). The requests are a linked list of
    /// `ibv_send_wr` on the stack with their `ibv_sge`s beside them, handed to libibverbs directly, so
    /// posting allocates nothing (sideway's guard builds two `Vec`s per post and copies inline data
    /// once more), which matters at millions of messages per second. Inline data is read from the
    /// registered buffer by the provider during the call. At most [`MAX_POST_LIST`] requests.
    pub fn post_send_list(&mut self, op: WireOp, requests: &[SendRequest], inline: bool) -> Result<(), io::Error> {
        use rdma_mummy_sys::{ibv_send_flags, ibv_send_wr, ibv_sge, ibv_wr_opcode};
        if requests.is_empty() || requests.len() > MAX_POST_LIST {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a post list holds 1 to {MAX_POST_LIST} work requests, not {}", requests.len()),
            ));
        }
        for request in requests {
            request.gather.check(&self.buffer);
        }
        let allow_inline = inline && !matches!(op, WireOp::Read { .. });
        let mut bad: *mut ibv_send_wr = std::ptr::null_mut();
        // SAFETY: an all-zero ibv_send_wr/ibv_sge is a valid value (null pointers, no scatter
        // entries); each request's own union fields are the ones written (verbs.h: wr.rdma for RDMA
        // operations, imm_data for the *_WITH_IMM ones, in network byte order). `list` and `sges`
        // outlive the call, every `next` points into `list` and every `sg_list` into `sges`; the
        // entries name memory inside the registered buffer (checked above), which outlives the queue
        // pair, and the queue pair pointer is valid while `self.qp` lives.
        let code = unsafe {
            let mut list: [ibv_send_wr; MAX_POST_LIST] = std::mem::zeroed();
            let mut sges: [[ibv_sge; MAX_GATHER]; MAX_POST_LIST] = std::mem::zeroed();
            let first = list.as_mut_ptr();
            for (index, request) in requests.iter().enumerate() {
                let wr = &mut *first.add(index);
                wr.wr_id = self.tagged(request.wr_id);
                if request.signaled {
                    wr.send_flags |= ibv_send_flags::IBV_SEND_SIGNALED.0;
                }
                wr.num_sge = self.entries(&request.gather, &mut sges[index]);
                if wr.num_sge > 0 {
                    wr.sg_list = sges[index].as_mut_ptr();
                    if allow_inline {
                        wr.send_flags |= ibv_send_flags::IBV_SEND_INLINE.0;
                    }
                }
                match op {
                    WireOp::Write { remote_address, rkey } => {
                        wr.opcode = ibv_wr_opcode::IBV_WR_RDMA_WRITE;
                        wr.wr.rdma.remote_addr = remote_address;
                        wr.wr.rdma.rkey = rkey;
                    }
                    WireOp::Read { remote_address, rkey } => {
                        wr.opcode = ibv_wr_opcode::IBV_WR_RDMA_READ;
                        wr.wr.rdma.remote_addr = remote_address;
                        wr.wr.rdma.rkey = rkey;
                    }
                    WireOp::Send => wr.opcode = ibv_wr_opcode::IBV_WR_SEND,
                    WireOp::WriteImmediate { remote_address, rkey, immediate } => {
                        wr.opcode = ibv_wr_opcode::IBV_WR_RDMA_WRITE_WITH_IMM;
                        wr.wr.rdma.remote_addr = remote_address;
                        wr.wr.rdma.rkey = rkey;
                        wr.imm_data_invalidated_rkey_union.imm_data = request.immediate(immediate).to_be();
                    }
                    WireOp::SendImmediate { immediate } => {
                        wr.opcode = ibv_wr_opcode::IBV_WR_SEND_WITH_IMM;
                        wr.imm_data_invalidated_rkey_union.imm_data = request.immediate(immediate).to_be();
                    }
                }
                if index + 1 < requests.len() {
                    wr.next = first.add(index + 1);
                }
            }
            rdma_mummy_sys::ibv_post_send(self.qp.qp().as_ptr(), first, &mut bad)
        };
        match code {
            0 => Ok(()),
            // ibv_post_send returns an errno value (ENOMEM: the send queue is full).
            errno => Err(io::Error::from_raw_os_error(errno.abs())),
        }
    }

    /// Post one signaled RDMA WRITE with immediate of `length` bytes at `address`, memory outside this
    /// queue pair's buffer registered under `local_key` ([`Device::register_source`]), to
    /// `remote_address`: the collectives' zero-copy send.
    pub fn post_write_from(
        &mut self,
        address: u64,
        length: u32,
        local_key: u32,
        remote: (u64, u32),
        immediate: u32,
        wr_id: u64,
    ) -> Result<(), io::Error> {
        use rdma_mummy_sys::{ibv_send_flags, ibv_send_wr, ibv_sge, ibv_wr_opcode};
        let mut bad: *mut ibv_send_wr = std::ptr::null_mut();
        // SAFETY: all-zero ibv_send_wr/ibv_sge are valid values; the fields written are the ones of
        // an RDMA WRITE with immediate (verbs.h: wr.rdma, imm_data in network byte order). `wr` and
        // `sge` outlive the call; the memory the entry names is registered under `local_key` and
        // stays valid while the write is outstanding (the caller's contract: `Sender::send_in_place`),
        // and the queue pair pointer is valid while `self.qp` lives.
        let code = unsafe {
            let mut sge: ibv_sge = std::mem::zeroed();
            sge.addr = address;
            sge.length = length;
            sge.lkey = local_key;
            let mut wr: ibv_send_wr = std::mem::zeroed();
            wr.wr_id = self.tagged(wr_id);
            wr.send_flags = ibv_send_flags::IBV_SEND_SIGNALED.0;
            wr.opcode = ibv_wr_opcode::IBV_WR_RDMA_WRITE_WITH_IMM;
            wr.wr.rdma.remote_addr = remote.0;
            wr.wr.rdma.rkey = remote.1;
            wr.imm_data_invalidated_rkey_union.imm_data = immediate.to_be();
            if length > 0 {
                wr.sg_list = &mut sge;
                wr.num_sge = 1;
            }
            rdma_mummy_sys::ibv_post_send(self.qp.qp().as_ptr(), &mut wr, &mut bad)
        };
        match code {
            0 => Ok(()),
            errno => Err(io::Error::from_raw_os_error(errno.abs())),
        }
    }

    /// Fill the scatter/gather entries of one work request from `gather` (offsets into the registered
    /// buffer, checked by the caller); returns how many are used.
    fn entries(&self, gather: &Gather, entries: &mut [rdma_mummy_sys::ibv_sge; MAX_GATHER]) -> i32 {
        for (entry, &(offset, length)) in entries.iter_mut().zip(gather.pieces()) {
            *entry = rdma_mummy_sys::ibv_sge {
                addr: self.buffer.address(offset),
                length: length as u32,
                lkey: self.mr.lkey(),
            };
        }
        gather.pieces().len() as i32
    }

    /// Post `count` receives, each over `local`, with work request id 0.
    pub fn post_receives(&mut self, local: Range<usize>, count: usize) -> Result<(), io::Error> {
        let request = (0, Gather::of(local));
        let batch = [request; MAX_POST_LIST];
        let mut left = count;
        while left > 0 {
            let now = left.min(MAX_POST_LIST);
            self.post_receive_list(&batch[..now])?;
            left -= now;
        }
        Ok(())
    }

    /// Post receives, each `(wr_id, scatter list)`, in one ibv_post_recv(3) call, allocating nothing
    /// (as [`Resources::post_send_list`]). At most [`MAX_POST_LIST`].
    pub fn post_receive_list(&mut self, requests: &[(u64, Gather)]) -> Result<(), io::Error> {
        use rdma_mummy_sys::{ibv_recv_wr, ibv_sge};
        if requests.is_empty() || requests.len() > MAX_POST_LIST {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a receive list holds 1 to {MAX_POST_LIST} work requests, not {}", requests.len()),
            ));
        }
        for (_, scatter) in requests {
            scatter.check(&self.buffer);
        }
        let mut bad: *mut ibv_recv_wr = std::ptr::null_mut();
        // SAFETY: as in `post_send_list`: zeroed entries are valid, every pointer names `list`,
        // `sges` (which outlive the call) or the registered buffer (checked), and the queue pair is
        // valid while `self.qp` lives.
        let code = unsafe {
            let mut list: [ibv_recv_wr; MAX_POST_LIST] = std::mem::zeroed();
            let mut sges: [[ibv_sge; MAX_GATHER]; MAX_POST_LIST] = std::mem::zeroed();
            let first = list.as_mut_ptr();
            for (index, (wr_id, scatter)) in requests.iter().enumerate() {
                let wr = &mut *first.add(index);
                wr.wr_id = self.tagged(*wr_id);
                wr.num_sge = self.entries(scatter, &mut sges[index]);
                if wr.num_sge > 0 {
                    wr.sg_list = sges[index].as_mut_ptr();
                }
                if index + 1 < requests.len() {
                    wr.next = first.add(index + 1);
                }
            }
            rdma_mummy_sys::ibv_post_recv(self.qp.qp().as_ptr(), first, &mut bad)
        };
        match code {
            0 => Ok(()),
            errno => Err(io::Error::from_raw_os_error(errno.abs())),
        }
    }

    /// Append the send queue's completions to `out` (non-blocking).
    pub fn poll_send(&self, out: &mut Vec<Completion>) -> Result<(), io::Error> {
        match &self.queues {
            Queues::Own { send, .. } => poll(send, out),
            Queues::Shared { shared, slot } => shared.poll(false, *slot, out),
        }
    }

    /// Append the receive queue's completions to `out` (non-blocking).
    pub fn poll_receive(&self, out: &mut Vec<Completion>) -> Result<(), io::Error> {
        match &self.queues {
            Queues::Own { receive, .. } => poll(receive, out),
            Queues::Shared { shared, slot } => shared.poll(true, *slot, out),
        }
    }

    /// True when this queue pair's completions arrive on the run's shared completion queues.
    pub fn shares_completion_queues(&self) -> bool {
        matches!(self.queues, Queues::Shared { .. })
    }

    /// A work request id as posted: the slot of a queue pair on shared completion queues in the top
    /// bits (see [`SLOT_SHIFT`]).
    fn tagged(&self, wr_id: u64) -> u64 {
        match &self.queues {
            Queues::Own { .. } => wr_id,
            Queues::Shared { slot, .. } => (u64::from(*slot) << SLOT_SHIFT) | (wr_id & ID_MASK),
        }
    }
}

fn poll(cq: &GenericCompletionQueue, out: &mut Vec<Completion>) -> Result<(), io::Error> {
    match cq.start_poll() {
        Ok(poller) => {
            for wc in poller {
                out.push(Completion {
                    wr_id: wc.wr_id(),
                    status: wc.status(),
                    vendor_err: wc.vendor_err(),
                    byte_len: if wc.status() == 0 { wc.byte_len() } else { 0 },
                    // ibv_wc.imm_data is __be32 (rdma-core verbs.h).
                    immediate: if wc.status() == 0 { u32::from_be(wc.imm_data()) } else { 0 },
                    opcode: if wc.status() == 0 { wc.opcode() } else { 0 },
                });
            }
            Ok(())
        }
        Err(PollCompletionQueueError::CompletionQueueEmpty) => Ok(()),
        Err(PollCompletionQueueError::Ibverbs(e)) => Err(e),
        Err(e) => Err(io::Error::other(e.to_string())),
    }
}
