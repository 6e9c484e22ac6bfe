//! The verbs rules that need no device: which GID to use, MTU encodings, completion status names,
//! completion moderation, the attributes of each queue pair transition, and the errors a user reads.
//! Everything here is pure so it is tested without RDMA hardware (as sideway tests its QP state tables).

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

use crate::PerfError;

/// Kind of a GID table entry (rdma-core `enum ibv_gid_type`; sysfs `gid_attrs/types/N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GidKind {
    InfiniBand,
    RoceV1,
    RoceV2,
}

impl fmt::Display for GidKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GidKind::InfiniBand => "IB",
            GidKind::RoceV1 => "RoCE v1",
            GidKind::RoceV2 => "RoCE v2",
        })
    }
}

/// One populated entry of a port's GID table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GidCandidate {
    pub index: u32,
    pub gid: Ipv6Addr,
    pub kind: GidKind,
    /// The netdev the entry belongs to (RoCE only; a VLAN device has its own entries).
    pub netdev: Option<String>,
}

/// Why a GID index was used; printed in the report header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GidReason {
    /// `--gid-index` on the command line.
    User,
    /// The RoCE v2 GID of an IPv4 address of the port's own netdev: what `show_gids` would tell a
    /// user to pass to perftest (`-x`).
    PortNetdevIpv4 { netdev: String, address: Ipv4Addr },
    /// The RoCE v2 GID of an IPv4 address of another netdev on the port (a VLAN device).
    OtherNetdevIpv4 { netdev: String, address: Ipv4Addr },
    /// No IPv4-mapped RoCE v2 GID: the first RoCE v2 GID.
    FirstRoceV2,
    /// InfiniBand, or no RoCE v2 GID at all: index 0 (perftest's default).
    Default,
}

impl fmt::Display for GidReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GidReason::User => f.write_str("given with --gid-index"),
            GidReason::PortNetdevIpv4 { netdev, address } => {
                write!(f, "RoCE v2 GID of {netdev}'s IPv4 address {address}")
            }
            GidReason::OtherNetdevIpv4 { netdev, address } => {
                write!(f, "RoCE v2 GID of {netdev}'s IPv4 address {address} (the port's own netdev has none)")
            }
            GidReason::FirstRoceV2 => f.write_str("first RoCE v2 GID (no IPv4-mapped RoCE v2 GID on the port)"),
            GidReason::Default => f.write_str("index 0 (no RoCE v2 GID on the port)"),
        }
    }
}

/// The chosen GID index and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GidChoice {
    pub index: u32,
    pub reason: GidReason,
}

/// Which GID index to use when the user gave none: the RoCE v2 GID whose address is an IPv4 address
/// of the port's netdev (IPv4-mapped, `::ffff:a.b.c.d`), else such a GID of another netdev on the
/// port (VLAN), else the first RoCE v2 GID, else index 0 (InfiniBand, RoCE v1 only).
///
/// The kernel fills the GID table from the addresses of the port's netdevs (drivers/infiniband/core/
/// roce_gid_mgmt.c), so an IPv4-mapped RoCE v2 entry *is* an interface address; `port_netdev` is the
/// netdev of the port itself (the netdev of GID index 0, the default GID). The table is in index order.
pub fn choose_gid_index(table: &[GidCandidate], port_netdev: Option<&str>) -> GidChoice {
    let ipv4_roce_v2 = |entry: &&GidCandidate| entry.kind == GidKind::RoceV2 && ipv4_mapped(&entry.gid).is_some();
    let own = |entry: &&GidCandidate| port_netdev.is_some() && entry.netdev.as_deref() == port_netdev;
    if let Some(entry) = table.iter().filter(ipv4_roce_v2).find(own) {
        return GidChoice {
            index: entry.index,
            reason: GidReason::PortNetdevIpv4 {
                netdev: entry.netdev.clone().unwrap_or_default(),
                address: ipv4_mapped(&entry.gid).unwrap_or(Ipv4Addr::UNSPECIFIED),
            },
        };
    }
    if let Some(entry) = table.iter().find(ipv4_roce_v2) {
        return GidChoice {
            index: entry.index,
            reason: GidReason::OtherNetdevIpv4 {
                netdev: entry.netdev.clone().unwrap_or_else(|| "an unknown netdev".into()),
                address: ipv4_mapped(&entry.gid).unwrap_or(Ipv4Addr::UNSPECIFIED),
            },
        };
    }
    if let Some(entry) = table.iter().find(|e| e.kind == GidKind::RoceV2) {
        return GidChoice { index: entry.index, reason: GidReason::FirstRoceV2 };
    }
    GidChoice { index: 0, reason: GidReason::Default }
}

/// The IPv4 address of an IPv4-mapped GID (`::ffff:a.b.c.d`, RFC 4291 section 2.5.5.2).
pub fn ipv4_mapped(gid: &Ipv6Addr) -> Option<Ipv4Addr> {
    match gid.octets() {
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d] => Some(Ipv4Addr::new(a, b, c, d)),
        _ => None,
    }
}

/// Path MTU in bytes to `enum ibv_mtu` (IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5; IB spec 1.3
/// table 145, rdma-core verbs.h). Other sizes are not IB MTUs.
pub fn mtu_to_enum(bytes: u32) -> Option<u32> {
    match bytes {
        256 => Some(1),
        512 => Some(2),
        1024 => Some(3),
        2048 => Some(4),
        4096 => Some(5),
        _ => None,
    }
}

/// `enum ibv_mtu` to bytes.
pub fn mtu_from_enum(value: u32) -> Option<u32> {
    (1..=5).contains(&value).then(|| 128 << value)
}

/// The path MTU of a connection: the smaller of both ports' active MTUs (perftest `ctx_set_mtu` takes
/// the minimum of both sides' `active_mtu`).
pub fn path_mtu(local_bytes: u32, remote_bytes: u32) -> Result<u32, PerfError> {
    let mtu = local_bytes.min(remote_bytes);
    mtu_to_enum(mtu).map(|_| mtu).ok_or_else(|| {
        PerfError::Transport(format!("path MTU {mtu} bytes is not an RDMA MTU (256, 512, 1024, 2048 or 4096)"))
    })
}

/// Name and meaning of a work completion status (`enum ibv_wc_status` and the strings of
/// `ibv_wc_status_str`, rdma-core libibverbs/enum_strs.c).
pub fn wc_status_name(status: u32) -> (&'static str, &'static str) {
    const NAMES: [(&str, &str); 24] = [
        ("IBV_WC_SUCCESS", "success"),
        ("IBV_WC_LOC_LEN_ERR", "local length error"),
        ("IBV_WC_LOC_QP_OP_ERR", "local QP operation error"),
        ("IBV_WC_LOC_EEC_OP_ERR", "local EE context operation error"),
        ("IBV_WC_LOC_PROT_ERR", "local protection error"),
        ("IBV_WC_WR_FLUSH_ERR", "Work Request Flushed Error"),
        ("IBV_WC_MW_BIND_ERR", "memory management operation error"),
        ("IBV_WC_BAD_RESP_ERR", "bad response error"),
        ("IBV_WC_LOC_ACCESS_ERR", "local access error"),
        ("IBV_WC_REM_INV_REQ_ERR", "remote invalid request error"),
        ("IBV_WC_REM_ACCESS_ERR", "remote access error"),
        ("IBV_WC_REM_OP_ERR", "remote operation error"),
        ("IBV_WC_RETRY_EXC_ERR", "transport retry counter exceeded"),
        ("IBV_WC_RNR_RETRY_EXC_ERR", "RNR retry counter exceeded"),
        ("IBV_WC_LOC_RDD_VIOL_ERR", "local RDD violation error"),
        ("IBV_WC_REM_INV_RD_REQ_ERR", "remote invalid RD request"),
        ("IBV_WC_REM_ABORT_ERR", "aborted error"),
        ("IBV_WC_INV_EECN_ERR", "invalid EE context number"),
        ("IBV_WC_INV_EEC_STATE_ERR", "invalid EE context state"),
        ("IBV_WC_FATAL_ERR", "fatal error"),
        ("IBV_WC_RESP_TIMEOUT_ERR", "response timeout error"),
        ("IBV_WC_GENERAL_ERR", "general error"),
        ("IBV_WC_TM_ERR", "TM error"),
        ("IBV_WC_TM_RNDV_INCOMPLETE", "TM software rendezvous"),
    ];
    NAMES.get(status as usize).copied().unwrap_or(("IBV_WC_UNKNOWN", "unknown status"))
}

/// What a failed completion usually means, for the statuses users meet.
fn wc_status_hint(status: u32) -> Option<&'static str> {
    match status {
        5 => Some("an earlier error put the queue pair into the error state"),
        10 => Some("the peer rejected the rkey or address (its memory region is gone or the parameters are stale)"),
        12 => Some(
            "the peer stopped acknowledging: it exited, its port or link went down, or the path drops packets \
             (check the GID index, MTU, PFC/ECN and the switch)",
        ),
        13 => Some("the peer had no receive posted for a SEND"),
        _ => None,
    }
}

/// The error of a completion that did not succeed: the status name, number and meaning, the vendor
/// error, the operation and the peer.
pub fn completion_error(operation: &str, peer: &str, status: u32, vendor_err: u32) -> PerfError {
    let (name, meaning) = wc_status_name(status);
    let hint = wc_status_hint(status).map(|h| format!(": {h}")).unwrap_or_default();
    PerfError::Transport(format!(
        "{operation} with peer {peer} failed: completion status {status} {name} ({meaning}), vendor error {vendor_err:#x}{hint}"
    ))
}

/// `ibv_get_device_list` returned NULL with `errno`. rdma-mummy-sys sets EOPNOTSUPP when it could not
/// dlopen libibverbs.so.1 (its RETURN_NOT_EXIST); libibverbs itself sets ENOSYS when the kernel has no
/// uverbs ABI (no /sys/class/infiniband_verbs).
pub fn device_list_error(errno: i32) -> PerfError {
    if errno == libc_errno::EOPNOTSUPP {
        PerfError::Unsupported(
            "RDMA userspace (rdma-core) not installed: libibverbs.so.1 could not be loaded \
             (Debian/Ubuntu: apt install libibverbs1 ibverbs-providers; RHEL: dnf install rdma-core libibverbs)"
                .into(),
        )
    } else {
        no_devices_error(&format!("ibv_get_device_list: {}", std::io::Error::from_raw_os_error(errno)))
    }
}

/// libibverbs is there but lists no device.
pub fn no_devices_error(detail: &str) -> PerfError {
    PerfError::Unsupported(format!(
        "no RDMA devices: kernel has no RDMA support or no driver loaded ({detail}; check `rdma link`, \
         /sys/class/infiniband and that the provider package, e.g. ibverbs-providers, is installed)"
    ))
}

/// Modifying the queue pair to RTR failed (`detail`: the library's text). ENETUNREACH/ETIMEDOUT mean
/// the kernel found no route from the source GID to the peer's GID (the address resolution of RoCE,
/// drivers/infiniband/core/verbs.c `ib_resolve_eth_dmac`).
pub fn rtr_error(errno: Option<i32>, gid_index: u32, peer: &str, detail: &str) -> PerfError {
    match errno {
        Some(libc_errno::ENETUNREACH | libc_errno::ETIMEDOUT) => PerfError::Transport(format!(
            "GID index {gid_index} has no route to the peer; try the RoCE v2 GID of the interface address \
             (peer {peer}; `show_gids` or /sys/class/infiniband/*/ports/*/gids list them; pass --gid-index)"
        )),
        _ => PerfError::Transport(format!(
            "cannot move the queue pair to RTR towards peer {peer} (GID index {gid_index}): {detail}"
        )),
    }
}

/// The errno values used above (Linux, asm-generic/errno.h), so this module needs no libc.
mod libc_errno {
    pub const ETIMEDOUT: i32 = 110;
    pub const ENETUNREACH: i32 = 101;
    pub const EOPNOTSUPP: i32 = 95;
}

/// perftest's completion moderation (`-Q`, DEF_CQ_MOD 100): signal one send in `cq_mod`, never more
/// than the depth, and every one above 8 KiB (MSG_SIZE_CQ_MOD_LIMIT: moderation would skew the
/// bandwidth of few large messages). perftest_parameters.c `force_dependecies`.
pub fn completion_moderation(size: usize, depth: usize) -> usize {
    const DEF_CQ_MOD: usize = 100;
    const MSG_SIZE_CQ_MOD_LIMIT: usize = 8192;
    if size > MSG_SIZE_CQ_MOD_LIMIT {
        1
    } else {
        DEF_CQ_MOD.min(depth).max(1)
    }
}

/// Target state of a transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QpState {
    Init,
    ReadyToReceive,
    ReadyToSend,
}

/// One attribute with its value, as `ibv_modify_qp` receives it. A transition is a list of these,
/// applied one by one by the device layer, so the list the tests check is the list the device gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QpSetting {
    State(QpState),
    PkeyIndex(u16),
    Port(u8),
    AccessFlags {
        remote_write: bool,
        remote_read: bool,
    },
    AddressVector {
        dlid: u16,
        port: u8,
        /// Service level (IB spec vol. 1, 7.6.5: selects the virtual lane on InfiniBand; RoCE
        /// adapters map it to the VLAN priority when the port trusts PCP).
        service_level: u8,
        grh: Option<GrhPlan>,
    },
    /// `enum ibv_mtu`.
    PathMtu(u32),
    DestQpn(u32),
    RqPsn(u32),
    MaxDestRdAtomic(u8),
    MinRnrTimer(u8),
    SqPsn(u32),
    Timeout(u8),
    RetryCount(u8),
    RnrRetry(u8),
    MaxRdAtomic(u8),
}

/// Reset -> Init: the port and what the peer may do to our memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitPlan {
    pub port: u8,
    pub pkey_index: u16,
    pub remote_write: bool,
    pub remote_read: bool,
}

impl InitPlan {
    pub fn new(port: u8) -> InitPlan {
        // perftest grants remote write and read on every RC QP (ctx_modify_qp_to_init).
        InitPlan { port, pkey_index: 0, remote_write: true, remote_read: true }
    }

    pub fn settings(&self) -> Vec<QpSetting> {
        vec![
            QpSetting::State(QpState::Init),
            QpSetting::PkeyIndex(self.pkey_index),
            QpSetting::Port(self.port),
            QpSetting::AccessFlags { remote_write: self.remote_write, remote_read: self.remote_read },
        ]
    }
}

/// Global routing header of the address vector (mandatory on RoCE).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrhPlan {
    pub dgid: Ipv6Addr,
    pub sgid_index: u8,
    pub hop_limit: u8,
    /// The GRH traffic class (IB spec vol. 1, 8.3.1); on RoCE v2 it becomes the IP header's TOS
    /// byte, whose upper six bits are the DSCP that lossless fabrics map to a PFC priority.
    pub traffic_class: u8,
}

/// The class of service a queue pair's packets carry: what NCCL sets with NCCL_IB_TC and
/// NCCL_IB_SL, and perftest with --tclass and --sl.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Traffic {
    pub traffic_class: u8,
    pub service_level: u8,
}

impl Traffic {
    /// The DSCP of RoCE v2 packets (the traffic class's upper six bits, RFC 2474).
    pub fn dscp(&self) -> u8 {
        self.traffic_class >> 2
    }
}

/// Init -> RTR: the peer's queue pair and path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtrPlan {
    pub port: u8,
    /// `enum ibv_mtu`.
    pub path_mtu: u32,
    pub dest_qpn: u32,
    pub rq_psn: u32,
    pub max_dest_rd_atomic: u8,
    pub min_rnr_timer: u8,
    pub dlid: u16,
    pub service_level: u8,
    pub grh: Option<GrhPlan>,
}

/// perftest MIN_RNR_TIMER: 12 = 0.64 ms (IB spec table 45).
pub const MIN_RNR_TIMER: u8 = 12;
/// perftest DEF_QP_TIME: 14 = 4.096 us * 2^14 = 67 ms local ACK timeout.
pub const QP_TIMEOUT: u8 = 14;
/// Transport retries before IBV_WC_RETRY_EXC_ERR (7 is the maximum).
pub const RETRY_COUNT: u8 = 7;
/// RNR retries: 7 means retry for ever (a slow receiver only slows the sender), as perftest.
pub const RNR_RETRY: u8 = 7;

impl RtrPlan {
    pub fn settings(&self) -> Vec<QpSetting> {
        vec![
            QpSetting::State(QpState::ReadyToReceive),
            QpSetting::AddressVector {
                dlid: self.dlid,
                port: self.port,
                service_level: self.service_level,
                grh: self.grh.clone(),
            },
            QpSetting::PathMtu(self.path_mtu),
            QpSetting::DestQpn(self.dest_qpn),
            QpSetting::RqPsn(self.rq_psn),
            QpSetting::MaxDestRdAtomic(self.max_dest_rd_atomic),
            QpSetting::MinRnrTimer(self.min_rnr_timer),
        ]
    }

    /// Connect to `remote`: `grh` is required on RoCE (Ethernet link layer) and whenever a GID index
    /// was chosen explicitly on InfiniBand.
    pub fn new(
        port: u8,
        path_mtu_bytes: u32,
        remote: &super::VerbsEndpointInfo,
        local_responder_resources: u8,
        grh: Option<GrhPlan>,
    ) -> Result<RtrPlan, PerfError> {
        let path_mtu = mtu_to_enum(path_mtu_bytes)
            .ok_or_else(|| PerfError::Transport(format!("path MTU {path_mtu_bytes} is not an RDMA MTU")))?;
        Ok(RtrPlan {
            port,
            path_mtu,
            dest_qpn: remote.qpn,
            rq_psn: remote.psn,
            max_dest_rd_atomic: local_responder_resources.max(1),
            min_rnr_timer: MIN_RNR_TIMER,
            dlid: remote.lid,
            service_level: 0,
            grh,
        })
    }
}

/// RTR -> RTS: our send queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtsPlan {
    pub sq_psn: u32,
    pub timeout: u8,
    pub retry_count: u8,
    pub rnr_retry: u8,
    pub max_rd_atomic: u8,
}

impl RtsPlan {
    pub fn settings(&self) -> Vec<QpSetting> {
        vec![
            QpSetting::State(QpState::ReadyToSend),
            QpSetting::SqPsn(self.sq_psn),
            QpSetting::Timeout(self.timeout),
            QpSetting::RetryCount(self.retry_count),
            QpSetting::RnrRetry(self.rnr_retry),
            QpSetting::MaxRdAtomic(self.max_rd_atomic),
        ]
    }

    /// Outstanding RDMA READs we may issue: no more than the peer's responder resources (IB spec
    /// 9.4.4: the requester must not exceed the responder's limit), nor our device's limit.
    pub fn new(sq_psn: u32, local_initiator_depth: u8, remote_responder_resources: u8) -> RtsPlan {
        RtsPlan {
            sq_psn,
            timeout: QP_TIMEOUT,
            retry_count: RETRY_COUNT,
            rnr_retry: RNR_RETRY,
            max_rd_atomic: local_initiator_depth.min(remote_responder_resources).max(1),
        }
    }
}

/// A 24-bit packet sequence number (perftest: `lrand48() & 0xffffff`); random so a stale packet of an
/// earlier run does not fit the new connection.
pub fn random_psn() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0),
    );
    hasher.write_u32(std::process::id());
    (hasher.finish() & 0x00ff_ffff) as u32
}

/// How users name the peer in messages: its IPv4 address when the GID is IPv4-mapped, else the GID
/// (or LID on InfiniBand), with the queue pair number.
pub fn peer_name(remote: &super::VerbsEndpointInfo) -> String {
    match remote.gid.parse::<Ipv6Addr>() {
        Ok(gid) if ipv4_mapped(&gid).is_some() => {
            format!("{} (qpn {:#x})", ipv4_mapped(&gid).unwrap_or(Ipv4Addr::UNSPECIFIED), remote.qpn)
        }
        Ok(gid) if !gid.is_unspecified() => format!("{gid} (qpn {:#x})", remote.qpn),
        _ => format!("lid {} (qpn {:#x})", remote.lid, remote.qpn),
    }
}

#[cfg(test)]
mod state_table_tests {
    use super::*;
    use crate::verbs::VerbsEndpointInfo;

    /// Queue pair attributes set by `ibv_modify_qp` (`enum ibv_qp_attr_mask`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    enum QpAttribute {
        State,
        PkeyIndex,
        Port,
        AccessFlags,
        AddressVector,
        PathMtu,
        DestQpn,
        RqPsn,
        MaxDestRdAtomic,
        MinRnrTimer,
        SqPsn,
        Timeout,
        RetryCount,
        RnrRetry,
        MaxRdAtomic,
    }

    /// The `ibv_qp_attr_mask` bit a setting sets.
    fn attribute(setting: &QpSetting) -> QpAttribute {
        match setting {
            QpSetting::State(_) => QpAttribute::State,
            QpSetting::PkeyIndex(_) => QpAttribute::PkeyIndex,
            QpSetting::Port(_) => QpAttribute::Port,
            QpSetting::AccessFlags { .. } => QpAttribute::AccessFlags,
            QpSetting::AddressVector { .. } => QpAttribute::AddressVector,
            QpSetting::PathMtu(_) => QpAttribute::PathMtu,
            QpSetting::DestQpn(_) => QpAttribute::DestQpn,
            QpSetting::RqPsn(_) => QpAttribute::RqPsn,
            QpSetting::MaxDestRdAtomic(_) => QpAttribute::MaxDestRdAtomic,
            QpSetting::MinRnrTimer(_) => QpAttribute::MinRnrTimer,
            QpSetting::SqPsn(_) => QpAttribute::SqPsn,
            QpSetting::Timeout(_) => QpAttribute::Timeout,
            QpSetting::RetryCount(_) => QpAttribute::RetryCount,
            QpSetting::RnrRetry(_) => QpAttribute::RnrRetry,
            QpSetting::MaxRdAtomic(_) => QpAttribute::MaxRdAtomic,
        }
    }

    /// The RC transitions: attributes required and allowed (Linux drivers/infiniband/core/verbs.c
    /// `qp_state_table`, IB spec 1.3 section 11.2.5.2).
    mod rc_table {
        use super::QpAttribute::{self, *};

        pub const RESET_TO_INIT_REQUIRED: &[QpAttribute] = &[State, PkeyIndex, Port, AccessFlags];
        pub const INIT_TO_RTR_REQUIRED: &[QpAttribute] =
            &[State, AddressVector, PathMtu, DestQpn, RqPsn, MaxDestRdAtomic, MinRnrTimer];
        pub const INIT_TO_RTR_OPTIONAL: &[QpAttribute] = &[PkeyIndex, AccessFlags];
        pub const RTR_TO_RTS_REQUIRED: &[QpAttribute] = &[State, SqPsn, Timeout, RetryCount, RnrRetry, MaxRdAtomic];
        pub const RTR_TO_RTS_OPTIONAL: &[QpAttribute] = &[AccessFlags, MinRnrTimer];
    }

    fn remote() -> VerbsEndpointInfo {
        VerbsEndpointInfo {
            device: "rxe0".into(),
            port: 1,
            qpn: 0x11,
            psn: 0x123456,
            gid: "::ffff:10.77.0.2".into(),
            gid_index: 1,
            lid: 0,
            rkey: 0x1234,
            address: 0x7f00_0000_0000,
            length: 65536,
            mtu: 1024,
            max_read_atomic: 16,
            link_layer: "ethernet".into(),
        }
    }

    fn covers(settings: Vec<QpSetting>, required: &[QpAttribute], optional: &[QpAttribute]) {
        let plan: Vec<QpAttribute> = settings.iter().map(attribute).collect();
        let mut unique = plan.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), plan.len(), "an attribute is set twice: {plan:?}");
        for attribute in required {
            assert!(plan.contains(attribute), "{attribute:?} is required but not set");
        }
        for attribute in &plan {
            assert!(
                required.contains(attribute) || optional.contains(attribute),
                "{attribute:?} is not allowed in this transition"
            );
        }
    }

    #[test]
    fn every_transition_sets_exactly_what_the_rc_state_table_requires() {
        covers(InitPlan::new(1).settings(), rc_table::RESET_TO_INIT_REQUIRED, &[]);
        let grh =
            GrhPlan { dgid: "::ffff:10.77.0.2".parse().expect("gid"), sgid_index: 1, hop_limit: 255, traffic_class: 0 };
        let rtr = RtrPlan::new(1, 1024, &remote(), 128, Some(grh)).expect("plan");
        covers(rtr.settings(), rc_table::INIT_TO_RTR_REQUIRED, rc_table::INIT_TO_RTR_OPTIONAL);
        covers(RtsPlan::new(7, 128, 16).settings(), rc_table::RTR_TO_RTS_REQUIRED, rc_table::RTR_TO_RTS_OPTIONAL);
    }

    #[test]
    fn traffic_class_and_service_level_reach_the_address_vector() {
        let grh = GrhPlan {
            dgid: "::ffff:10.77.0.2".parse().expect("gid"),
            sgid_index: 3,
            hop_limit: 255,
            traffic_class: 106,
        };
        let plan = RtrPlan { service_level: 3, ..RtrPlan::new(1, 1024, &remote(), 16, Some(grh)).expect("plan") };
        let vector = plan.settings().into_iter().find(|s| matches!(s, QpSetting::AddressVector { .. }));
        match vector {
            Some(QpSetting::AddressVector { service_level, grh: Some(grh), .. }) => {
                assert_eq!((service_level, grh.traffic_class), (3, 106));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(Traffic { traffic_class: 106, service_level: 3 }.dscp(), 26);
    }

    #[test]
    fn rtr_takes_the_peers_queue_pair_psn_and_lid_and_perftests_timers() {
        let plan = RtrPlan::new(1, 1024, &remote(), 128, None).expect("plan");
        assert_eq!((plan.dest_qpn, plan.rq_psn, plan.dlid, plan.path_mtu), (0x11, 0x123456, 0, 3));
        assert_eq!(plan.min_rnr_timer, 12);
        assert_eq!(plan.max_dest_rd_atomic, 128);
        assert!(RtrPlan::new(1, 1500, &remote(), 1, None).is_err(), "1500 is an Ethernet MTU, not an IB MTU");
    }

    #[test]
    fn rts_never_exceeds_the_peers_responder_resources() {
        let plan = RtsPlan::new(7, 128, 16);
        assert_eq!((plan.sq_psn, plan.timeout, plan.retry_count, plan.rnr_retry), (7, 14, 7, 7));
        assert_eq!(plan.max_rd_atomic, 16);
        assert_eq!(RtsPlan::new(7, 4, 16).max_rd_atomic, 4);
        assert_eq!(RtsPlan::new(7, 0, 0).max_rd_atomic, 1, "at least one read in flight");
    }

    #[test]
    fn mtu_enum_mapping_follows_ibv_mtu() {
        for (bytes, value) in [(256, 1), (512, 2), (1024, 3), (2048, 4), (4096, 5)] {
            assert_eq!(mtu_to_enum(bytes), Some(value));
            assert_eq!(mtu_from_enum(value), Some(bytes));
        }
        assert_eq!(mtu_to_enum(1500), None);
        assert_eq!(mtu_from_enum(0), None);
        assert_eq!(mtu_from_enum(6), None);
        assert_eq!(path_mtu(4096, 1024).expect("mtu"), 1024);
    }

    #[test]
    fn completion_status_names_follow_ibv_wc_status_str() {
        assert_eq!(wc_status_name(0), ("IBV_WC_SUCCESS", "success"));
        assert_eq!(wc_status_name(5), ("IBV_WC_WR_FLUSH_ERR", "Work Request Flushed Error"));
        assert_eq!(wc_status_name(12), ("IBV_WC_RETRY_EXC_ERR", "transport retry counter exceeded"));
        assert_eq!(wc_status_name(13), ("IBV_WC_RNR_RETRY_EXC_ERR", "RNR retry counter exceeded"));
        assert_eq!(wc_status_name(23), ("IBV_WC_TM_RNDV_INCOMPLETE", "TM software rendezvous"));
        assert_eq!(wc_status_name(99).0, "IBV_WC_UNKNOWN");
        let message = completion_error("RDMA WRITE", "10.77.0.2 (qpn 0x11)", 12, 0x81).to_string();
        assert!(message.contains("IBV_WC_RETRY_EXC_ERR (transport retry counter exceeded)"), "{message}");
        assert!(message.contains("vendor error 0x81"), "{message}");
        assert!(message.contains("peer 10.77.0.2 (qpn 0x11)"), "{message}");
    }

    #[test]
    fn errors_say_what_is_missing() {
        let not_installed = device_list_error(95).to_string();
        assert!(not_installed.starts_with("RDMA userspace (rdma-core) not installed"), "{not_installed}");
        let no_kernel = device_list_error(38).to_string();
        assert!(
            no_kernel.starts_with("no RDMA devices: kernel has no RDMA support or no driver loaded"),
            "{no_kernel}"
        );
        for errno in [101, 110] {
            let route = rtr_error(Some(errno), 0, "10.77.0.3 (qpn 0x12)", "network unreachable").to_string();
            assert!(
                route.starts_with("GID index 0 has no route to the peer; try the RoCE v2 GID of the interface address"),
                "{route}"
            );
        }
        let other = rtr_error(Some(22), 3, "p", "modify queue pair failed: Invalid argument").to_string();
        assert!(other.contains("GID index 3): modify queue pair failed: Invalid argument"), "{other}");
    }

    #[test]
    fn moderation_is_perftests() {
        assert_eq!(completion_moderation(64, 128), 100);
        assert_eq!(completion_moderation(8192, 128), 100);
        assert_eq!(completion_moderation(8193, 128), 1, "above MSG_SIZE_CQ_MOD_LIMIT every send is signaled");
        assert_eq!(completion_moderation(64, 16), 16, "never more than the depth");
        assert_eq!(completion_moderation(64, 0), 1);
    }

    #[test]
    fn psn_has_24_bits() {
        for _ in 0..100 {
            assert!(random_psn() < 1 << 24);
        }
    }

    #[test]
    fn peer_is_named_by_its_address() {
        assert_eq!(peer_name(&remote()), "10.77.0.2 (qpn 0x11)");
        let mut ib = remote();
        ib.gid = "::".into();
        ib.lid = 7;
        assert_eq!(peer_name(&ib), "lid 7 (qpn 0x11)");
    }
}

#[cfg(test)]
mod gid_choice_tests {
    use super::*;

    fn entry(index: u32, gid: &str, kind: GidKind, netdev: &str) -> GidCandidate {
        GidCandidate { index, gid: gid.parse().expect("gid"), kind, netdev: Some(netdev.into()) }
    }

    /// rxe0 in the test guest (tests/vm/README.md): index 0 link-local, index 1 the IPv4-mapped GID.
    #[test]
    fn soft_roce_guest_takes_index_1() {
        let table = [
            entry(0, "fe80::5054:ff:fefd:1", GidKind::RoceV2, "eth2"),
            entry(1, "::ffff:10.77.0.2", GidKind::RoceV2, "eth2"),
        ];
        let choice = choose_gid_index(&table, Some("eth2"));
        assert_eq!(choice.index, 1);
        assert_eq!(choice.reason.to_string(), "RoCE v2 GID of eth2's IPv4 address 10.77.0.2");
    }

    /// mlx5 on a ConnectX: v1 and v2 per address; the VLAN's addresses come after the port's own.
    #[test]
    fn connectx_prefers_the_port_netdevs_ipv4_v2_over_v1_and_vlans() {
        let table = [
            entry(0, "fe80::1", GidKind::RoceV1, "ens1f0"),
            entry(1, "fe80::1", GidKind::RoceV2, "ens1f0"),
            entry(2, "::ffff:192.168.7.1", GidKind::RoceV1, "ens1f0.100"),
            entry(3, "::ffff:192.168.7.1", GidKind::RoceV2, "ens1f0.100"),
            entry(4, "::ffff:10.0.0.1", GidKind::RoceV1, "ens1f0"),
            entry(5, "::ffff:10.0.0.1", GidKind::RoceV2, "ens1f0"),
        ];
        assert_eq!(choose_gid_index(&table, Some("ens1f0")).index, 5);
        let vlan_only = &table[..4];
        let choice = choose_gid_index(vlan_only, Some("ens1f0"));
        assert_eq!(choice.index, 3);
        assert!(matches!(choice.reason, GidReason::OtherNetdevIpv4 { .. }));
    }

    #[test]
    fn without_ipv4_the_first_roce_v2_then_index_0() {
        let link_local = [entry(0, "fe80::1", GidKind::RoceV1, "eth0"), entry(1, "fe80::1", GidKind::RoceV2, "eth0")];
        assert_eq!(choose_gid_index(&link_local, Some("eth0")), GidChoice { index: 1, reason: GidReason::FirstRoceV2 });
        let ib = [GidCandidate {
            index: 0,
            gid: "fe80::2:c903:a:1".parse().expect("gid"),
            kind: GidKind::InfiniBand,
            netdev: None,
        }];
        assert_eq!(choose_gid_index(&ib, None), GidChoice { index: 0, reason: GidReason::Default });
        assert_eq!(choose_gid_index(&[], None).index, 0);
    }

    #[test]
    fn ipv4_mapped_gids_read_as_addresses() {
        let gid: Ipv6Addr = "::ffff:10.77.0.2".parse().expect("gid");
        assert_eq!(ipv4_mapped(&gid), Some(Ipv4Addr::new(10, 77, 0, 2)));
        assert_eq!(gid.to_string(), "::ffff:10.77.0.2", "std prints IPv4-mapped GIDs the way show_gids does");
        assert_eq!(ipv4_mapped(&"fe80::1".parse().expect("gid")), None);
        assert_eq!(ipv4_mapped(&"::10.0.0.1".parse().expect("gid")), None, "IPv4-compatible is not IPv4-mapped");
    }
}
