//! A netdev's Priority Flow Control configuration (IEEE 802.1Qbb, as configured through IEEE 802.1Qaz DCB)
//! read from the kernel's DCB netlink interface, plus a small text form a snapshot stores it in.
//!
//! The request is `RTM_GETDCB` with `DCB_CMD_IEEE_GET` on a `NETLINK_ROUTE` socket (rtnetlink(7)); the
//! reply's nested `DCB_ATTR_IEEE` carries `DCB_ATTR_IEEE_PFC` (`struct ieee_pfc`) and, on kernels since
//! 6.2 whose driver supports it, `DCB_ATTR_DCB_APP_TRUST_TABLE`. Layouts and numbers follow
//! `include/uapi/linux/dcbnl.h`; the kernel side is `net/dcb/dcbnl.c` (`dcb_doit`, `dcbnl_ieee_fill`).
//! The netlink framing is done by hand (netlink(7): `NLMSG_ALIGN`/`NLA_ALIGN` to 4 bytes, every length
//! checked against what was received); the socket calls are nix's safe wrappers, so this module needs no
//! `unsafe`.

use std::time::Duration;

use nix::errno::Errno;
use nix::sys::socket::SockProtocol;
use serde::Serialize;

use crate::error::ParseError;
use crate::ethtool::kernel_interface_name;
use crate::netlink::{self, array_at, find, parse_attributes, Reply, Request, NLM_F_REQUEST};

// include/uapi/linux/rtnetlink.h and dcbnl.h
const RTM_GETDCB: u16 = 78;

// include/uapi/linux/dcbnl.h
/// `sizeof(struct dcbmsg)`: `dcb_family`, `cmd` (u8 each), `dcb_pad` (u16).
const DCBMSG_LEN: usize = 4;
const DCB_CMD_IEEE_GET: u8 = 21;
const DCB_ATTR_IFNAME: u16 = 1;
const DCB_ATTR_IEEE: u16 = 13;
const DCB_ATTR_IEEE_PFC: u16 = 2;
const DCB_ATTR_DCB_APP_TRUST_TABLE: u16 = 11;
/// `IEEE_8021QAZ_MAX_TCS`: eight priorities and traffic classes.
const MAX_TRAFFIC_CLASSES: usize = 8;
/// `sizeof(struct ieee_pfc)`: `pfc_cap`, `pfc_en`, `mbc` (u8) at 0..3, `delay` (u16) at 4, then
/// `requests[8]` at 8 and `indications[8]` at 72 (u64 each), 136 bytes in all.
const IEEE_PFC_LEN: usize = 136;
const IEEE_PFC_REQUESTS_OFFSET: usize = 8;
const IEEE_PFC_INDICATIONS_OFFSET: usize = 72;

/// How long to wait for the kernel's answer; dcbnl answers synchronously, so this only bounds a wedged
/// driver callback (they run under RTNL).
const REPLY_TIMEOUT: Duration = Duration::from_secs(5);

/// PFC as the driver reports it through `DCB_ATTR_IEEE_PFC` (`struct ieee_pfc`, include/uapi/linux/dcbnl.h).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PfcConfig {
    /// `pfc_cap`: how many traffic classes may have PFC enabled at once.
    pub capable_traffic_classes: u8,
    /// The priorities (0-7) whose bit is set in `pfc_en`, ascending.
    pub enabled_priorities: Vec<u8>,
    /// `requests[prio]`: PFC pause frames sent per priority, as counted by the driver.
    pub requests: [u64; MAX_TRAFFIC_CLASSES],
    /// `indications[prio]`: PFC pause frames received per priority.
    pub indications: [u64; MAX_TRAFFIC_CLASSES],
    /// The APP selectors trusted for classifying received packets, in order of precedence ("pcp", "dscp",
    /// ...), from `DCB_ATTR_DCB_APP_TRUST_TABLE`; `None` when the kernel or driver does not report trust.
    pub trust: Option<Vec<String>>,
}

/// One step of the netlink exchange, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DcbStep {
    OpenSocket,
    SetTimeout,
    Send,
    Receive,
    /// The kernel answered with an `NLMSG_ERROR` carrying this errno.
    Kernel,
}

impl std::fmt::Display for DcbStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DcbStep::OpenSocket => "socket(AF_NETLINK, NETLINK_ROUTE)",
            DcbStep::SetTimeout => "setsockopt(SO_RCVTIMEO)",
            DcbStep::Send => "sending RTM_GETDCB",
            DcbStep::Receive => "receiving the RTM_GETDCB reply",
            DcbStep::Kernel => "RTM_GETDCB DCB_CMD_IEEE_GET",
        })
    }
}

/// Why PFC configuration could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DcbError {
    /// The name cannot be passed to the kernel (empty, longer than 15 bytes, or holding a NUL byte).
    #[error("{interface:?} is not a network interface name: {reason}")]
    InvalidInterfaceName { interface: String, reason: &'static str },
    /// ENODEV: no interface of that name in this network namespace.
    #[error("DCB netlink on {interface}: no such interface")]
    InterfaceNotFound { interface: String },
    /// EOPNOTSUPP: the driver has no DCB operations at all (veth, loopback, most virtual devices).
    #[error("{interface} has no DCB support (its driver implements no DCB netlink operations)")]
    NoDcbSupport { interface: String },
    /// The driver has DCB operations but reports no IEEE PFC (CEE-only drivers, or `ieee_getpfc` failed).
    #[error("{interface} reports no IEEE PFC configuration through DCB netlink")]
    NoIeeePfc { interface: String },
    /// EPERM or EACCES (reading needs no capability, so a security module refused).
    #[error("DCB netlink on {interface}: {step}: permission denied ({errno})")]
    PermissionDenied { interface: String, step: DcbStep, errno: Errno },
    /// No answer within the timeout.
    #[error("DCB netlink on {interface}: no reply within {} s", REPLY_TIMEOUT.as_secs())]
    TimedOut { interface: String },
    /// Any other errno, from a socket call or from the kernel's `NLMSG_ERROR`.
    #[error("DCB netlink on {interface}: {step} failed: {errno}")]
    Failed { interface: String, step: DcbStep, errno: Errno },
    /// A reply that breaks netlink framing or the dcbnl.h layouts.
    #[error("DCB netlink on {interface}: malformed reply: {reason}")]
    MalformedReply { interface: String, reason: String },
}

impl DcbError {
    /// True when the interface simply has no (IEEE) PFC to report: checks report Skip, not Error.
    pub fn is_unsupported(&self) -> bool {
        matches!(self, DcbError::NoDcbSupport { .. } | DcbError::NoIeeePfc { .. })
    }

    fn from_errno(interface: &str, step: DcbStep, errno: Errno) -> Self {
        let interface = interface.to_string();
        match errno {
            Errno::ENODEV => DcbError::InterfaceNotFound { interface },
            Errno::EOPNOTSUPP if step == DcbStep::Kernel => DcbError::NoDcbSupport { interface },
            Errno::EPERM | Errno::EACCES => DcbError::PermissionDenied { interface, step, errno },
            Errno::EAGAIN if step == DcbStep::Receive => DcbError::TimedOut { interface },
            _ => DcbError::Failed { interface, step, errno },
        }
    }
}

/// The IEEE PFC configuration of `interface` in the calling thread's network namespace.
pub fn read_pfc(interface: &str) -> Result<PfcConfig, DcbError> {
    let name = kernel_interface_name(interface)
        .map_err(|reason| DcbError::InvalidInterfaceName { interface: interface.to_string(), reason })?;
    let failed = |step| move |errno| DcbError::from_errno(interface, step, errno);
    let socket = netlink::open(SockProtocol::NetlinkRoute, REPLY_TIMEOUT).map_err(|(step, errno)| {
        let step = if step.starts_with("open") { DcbStep::OpenSocket } else { DcbStep::SetTimeout };
        DcbError::from_errno(interface, step, errno)
    })?;
    let sequence = netlink::next_sequence();
    let request = ieee_get_request(&name, sequence);
    netlink::send(&socket, &request).map_err(failed(DcbStep::Send))?;

    loop {
        let datagram = netlink::receive(&socket).map_err(failed(DcbStep::Receive))?;
        let Some(datagram) = datagram else {
            // Sent by another process (only the kernel, port id 0, may answer); not ours to read.
            continue;
        };
        match parse_reply(&datagram, sequence) {
            Ok(Reply::Answer(payload)) => {
                return parse_ieee_payload(payload).map_err(|problem| match problem {
                    PayloadProblem::NoPfc => DcbError::NoIeeePfc { interface: interface.to_string() },
                    PayloadProblem::Malformed(reason) => {
                        DcbError::MalformedReply { interface: interface.to_string(), reason }
                    }
                });
            }
            Ok(Reply::KernelError(errno)) => return Err(DcbError::from_errno(interface, DcbStep::Kernel, errno)),
            Ok(Reply::NotOurs) => continue,
            Err(reason) => return Err(DcbError::MalformedReply { interface: interface.to_string(), reason }),
        }
    }
}

/// `nlmsghdr` + `dcbmsg` + `DCB_ATTR_IFNAME` (a NUL-terminated string: dcbnl_rtnl_policy says
/// `NLA_NUL_STRING`). No `NLM_F_ACK`: a successful get is answered by its reply alone, a failure by an
/// `NLMSG_ERROR` (netlink_rcv_skb always acknowledges errors).
fn ieee_get_request(name: &[u8; crate::ethtool::IFNAMSIZ], sequence: u32) -> Vec<u8> {
    let name_length = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    let mut with_nul = name[..name_length].to_vec();
    with_nul.push(0);
    let mut request =
        Request::new(RTM_GETDCB, NLM_F_REQUEST, sequence, &[libc::AF_UNSPEC as u8, DCB_CMD_IEEE_GET, 0, 0]);
    request.attribute(DCB_ATTR_IFNAME, &with_nul);
    request.finish()
}

/// Find the `RTM_GETDCB` answer to `sequence` in one datagram: its attributes, after `dcbmsg`.
fn parse_reply(datagram: &[u8], sequence: u32) -> Result<Reply<'_>, String> {
    match netlink::parse_reply(datagram, sequence, RTM_GETDCB)? {
        Reply::Answer(payload) => {
            if payload.len() < DCBMSG_LEN {
                return Err(format!("RTM_GETDCB payload of {} bytes, shorter than dcbmsg", payload.len()));
            }
            if payload[1] != DCB_CMD_IEEE_GET {
                return Err(format!("reply to DCB command {} instead of DCB_CMD_IEEE_GET", payload[1]));
            }
            Ok(Reply::Answer(&payload[DCBMSG_LEN..]))
        }
        other => Ok(other),
    }
}

enum PayloadProblem {
    /// The reply is well formed but holds no `DCB_ATTR_IEEE_PFC`.
    NoPfc,
    Malformed(String),
}

/// `DCB_ATTR_IEEE` -> `DCB_ATTR_IEEE_PFC` (required) and `DCB_ATTR_DCB_APP_TRUST_TABLE` (optional).
fn parse_ieee_payload(attributes: &[u8]) -> Result<PfcConfig, PayloadProblem> {
    let malformed = PayloadProblem::Malformed;
    let top = parse_attributes(attributes).map_err(malformed)?;
    let Some(ieee) = find(&top, DCB_ATTR_IEEE) else {
        return Err(PayloadProblem::NoPfc);
    };
    let nested = parse_attributes(ieee).map_err(malformed)?;
    let Some(pfc) = find(&nested, DCB_ATTR_IEEE_PFC) else {
        return Err(PayloadProblem::NoPfc);
    };
    // Longer is accepted (a future kernel may append fields); shorter cannot hold the counters.
    if pfc.len() < IEEE_PFC_LEN {
        return Err(malformed(format!("DCB_ATTR_IEEE_PFC of {} bytes, struct ieee_pfc has {IEEE_PFC_LEN}", pfc.len())));
    }
    let counters = |offset: usize| -> [u64; MAX_TRAFFIC_CLASSES] {
        std::array::from_fn(|priority| u64::from_ne_bytes(array_at(pfc, offset + 8 * priority)))
    };
    let trust = match find(&nested, DCB_ATTR_DCB_APP_TRUST_TABLE) {
        None => None,
        Some(table) => Some(parse_trust_table(table).map_err(malformed)?),
    };
    Ok(PfcConfig {
        capable_traffic_classes: pfc[0],
        enabled_priorities: priorities_of(pfc[1]),
        requests: counters(IEEE_PFC_REQUESTS_OFFSET),
        indications: counters(IEEE_PFC_INDICATIONS_OFFSET),
        trust,
    })
}

/// The trust table holds one u8 selector per attribute, in order of precedence (dcbnl_getapptrust: type
/// `DCB_ATTR_IEEE_APP` for IEEE selectors, `DCB_ATTR_DCB_APP` for PCP; the type is not needed to name it).
fn parse_trust_table(table: &[u8]) -> Result<Vec<String>, String> {
    parse_attributes(table)?
        .into_iter()
        .map(|(_, payload)| {
            payload
                .first()
                .map(|&selector| selector_name(selector))
                .ok_or_else(|| "empty trust table entry".to_string())
        })
        .collect()
}

/// APP selector names (include/uapi/linux/dcbnl.h `IEEE_8021QAZ_APP_SEL_*`, `DCB_APP_SEL_PCP`), as
/// dcb-apptrust(8) prints them.
fn selector_name(selector: u8) -> String {
    match selector {
        1 => "ethtype".into(),
        2 => "stream-port".into(),
        3 => "dgram-port".into(),
        4 => "port".into(),
        5 => "dscp".into(),
        255 => "pcp".into(),
        other => format!("selector-{other}"),
    }
}

const TRUST_NAMES: [&str; 6] = ["ethtype", "stream-port", "dgram-port", "port", "dscp", "pcp"];

fn priorities_of(bitmap: u8) -> Vec<u8> {
    (0..8u8).filter(|priority| bitmap & (1 << priority) != 0).collect()
}

/// Parse the snapshot form written by [`format_pfc_text`]:
///
/// ```text
/// # DCB IEEE PFC of eth0 (RTM_GETDCB DCB_CMD_IEEE_GET)
/// pfc_cap: 8
/// pfc_enabled: 3
/// requests: 0 0 0 120 0 0 0 0
/// indications: 0 0 0 7 0 0 0 0
/// trust: pcp dscp
/// ```
///
/// `pfc_enabled` lists priorities 0-7 or says `none`; `trust` is left out when unknown and says `none` for
/// an empty table. Every other key is required, each key appears once, unknown keys are errors (the file is
/// ours, so anything else is damage).
pub fn parse_pfc_text(text: &str) -> Result<PfcConfig, ParseError> {
    let mut capable = None;
    let mut enabled = None;
    let mut requests = None;
    let mut indications = None;
    let mut trust = None;
    for (index, line) in text.lines().enumerate() {
        let line_number = index + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(ParseError::new(format!("line {line_number}: expected \"key: value\", found {line:?}")));
        };
        let value = value.trim();
        let error = |reason: String| ParseError::new(format!("line {line_number}: {key}: {reason}"));
        let duplicate = || ParseError::new(format!("line {line_number}: {key} given twice"));
        match key {
            "pfc_cap" => {
                let parsed = value.parse::<u8>().ok().filter(|&v| v as usize <= MAX_TRAFFIC_CLASSES);
                let parsed = parsed.ok_or_else(|| error(format!("expected 0-8 traffic classes, found {value:?}")))?;
                if capable.replace(parsed).is_some() {
                    return Err(duplicate());
                }
            }
            "pfc_enabled" => {
                let parsed = parse_priorities(value).map_err(error)?;
                if enabled.replace(parsed).is_some() {
                    return Err(duplicate());
                }
            }
            "requests" | "indications" => {
                let parsed = parse_counters(value).map_err(error)?;
                let slot = if key == "requests" { &mut requests } else { &mut indications };
                if slot.replace(parsed).is_some() {
                    return Err(duplicate());
                }
            }
            "trust" => {
                let parsed = parse_trust(value).map_err(error)?;
                if trust.replace(parsed).is_some() {
                    return Err(duplicate());
                }
            }
            other => return Err(ParseError::new(format!("line {line_number}: unknown key {other:?}"))),
        }
    }
    let missing = |key: &str| ParseError::new(format!("{key} missing"));
    Ok(PfcConfig {
        capable_traffic_classes: capable.ok_or_else(|| missing("pfc_cap"))?,
        enabled_priorities: enabled.ok_or_else(|| missing("pfc_enabled"))?,
        requests: requests.ok_or_else(|| missing("requests"))?,
        indications: indications.ok_or_else(|| missing("indications"))?,
        trust,
    })
}

fn parse_priorities(value: &str) -> Result<Vec<u8>, String> {
    if value == "none" {
        return Ok(Vec::new());
    }
    let mut priorities = Vec::new();
    for word in value.split_whitespace() {
        let priority = word.parse::<u8>().ok().filter(|&p| (p as usize) < MAX_TRAFFIC_CLASSES);
        let priority = priority.ok_or_else(|| format!("expected priorities 0-7 or \"none\", found {word:?}"))?;
        if priorities.contains(&priority) {
            return Err(format!("priority {priority} listed twice"));
        }
        priorities.push(priority);
    }
    if priorities.is_empty() {
        return Err("expected priorities 0-7 or \"none\", found nothing".into());
    }
    Ok(priorities)
}

fn parse_counters(value: &str) -> Result<[u64; MAX_TRAFFIC_CLASSES], String> {
    let words: Vec<&str> = value.split_whitespace().collect();
    if words.len() != MAX_TRAFFIC_CLASSES {
        return Err(format!("expected 8 counters (priorities 0-7), found {}", words.len()));
    }
    let mut counters = [0u64; MAX_TRAFFIC_CLASSES];
    for (counter, word) in counters.iter_mut().zip(words) {
        if !word.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("{word:?} is not an unsigned decimal number"));
        }
        *counter = word.parse().map_err(|e| format!("{word:?}: {e}"))?;
    }
    Ok(counters)
}

fn parse_trust(value: &str) -> Result<Vec<String>, String> {
    if value == "none" {
        return Ok(Vec::new());
    }
    let mut selectors = Vec::new();
    for word in value.split_whitespace() {
        let known =
            TRUST_NAMES.contains(&word) || word.strip_prefix("selector-").is_some_and(|n| n.parse::<u8>().is_ok());
        if !known {
            return Err(format!("unknown APP selector {word:?} (expected {} or selector-N)", TRUST_NAMES.join(", ")));
        }
        selectors.push(word.to_string());
    }
    if selectors.is_empty() {
        return Err("expected APP selectors or \"none\", found nothing".into());
    }
    Ok(selectors)
}

/// Write `config` in the form [`parse_pfc_text`] reads, after a comment naming the interface and the source.
pub fn format_pfc_text(interface: &str, config: &PfcConfig) -> String {
    let words = |values: &mut dyn Iterator<Item = String>| {
        let joined = values.collect::<Vec<_>>().join(" ");
        if joined.is_empty() {
            "none".to_string()
        } else {
            joined
        }
    };
    let mut text = format!("# DCB IEEE PFC of {interface} (RTM_GETDCB DCB_CMD_IEEE_GET)\n");
    text.push_str(&format!("pfc_cap: {}\n", config.capable_traffic_classes));
    text.push_str(&format!("pfc_enabled: {}\n", words(&mut config.enabled_priorities.iter().map(u8::to_string))));
    text.push_str(&format!("requests: {}\n", words(&mut config.requests.iter().map(u64::to_string))));
    text.push_str(&format!("indications: {}\n", words(&mut config.indications.iter().map(u64::to_string))));
    if let Some(trust) = &config.trust {
        text.push_str(&format!("trust: {}\n", words(&mut trust.iter().cloned())));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netlink::{align4, NLA_HEADER_LEN, NLMSG_HEADER_LEN};

    /// `NLMSG_ERROR` (include/uapi/linux/netlink.h).
    const NLMSG_ERROR: u16 = 0x2;

    fn config() -> PfcConfig {
        PfcConfig {
            capable_traffic_classes: 8,
            enabled_priorities: vec![3],
            requests: [0, 0, 0, 120, 0, 0, 0, u64::MAX],
            indications: [0, 0, 0, 7, 0, 0, 0, 0],
            trust: Some(vec!["pcp".into(), "dscp".into()]),
        }
    }

    /// A reply as dcbnl_ieee_fill builds it: IFNAME, IEEE { ETS (ignored), PFC, APP_TABLE (empty),
    /// TRUST { IEEE_APP dscp, DCB_APP pcp } }, DCBX.
    fn reply_payload(pfc: &[u8], with_trust: bool) -> Vec<u8> {
        fn attribute(kind: u16, payload: &[u8]) -> Vec<u8> {
            let mut bytes = ((NLA_HEADER_LEN + payload.len()) as u16).to_ne_bytes().to_vec();
            bytes.extend_from_slice(&kind.to_ne_bytes());
            bytes.extend_from_slice(payload);
            bytes.resize(align4(bytes.len()), 0);
            bytes
        }
        let mut ieee = attribute(1, &[0u8; 59]);
        ieee.extend(attribute(DCB_ATTR_IEEE_PFC, pfc));
        ieee.extend(attribute(3 | 0x8000, &[]));
        if with_trust {
            let mut table = attribute(1, &[5]);
            table.extend(attribute(2, &[255]));
            ieee.extend(attribute(DCB_ATTR_DCB_APP_TRUST_TABLE | 0x8000, &table));
        }
        let mut payload = vec![0, DCB_CMD_IEEE_GET, 0, 0];
        payload.extend(attribute(DCB_ATTR_IFNAME, b"eth0\0"));
        payload.extend(attribute(DCB_ATTR_IEEE, &ieee));
        payload.extend(attribute(14, &[2]));
        payload
    }

    fn ieee_pfc(cap: u8, enabled: u8, requests: [u64; 8], indications: [u64; 8]) -> Vec<u8> {
        let mut bytes = vec![cap, enabled, 0, 0, 0, 0, 0, 0];
        bytes.extend(requests.iter().flat_map(|v| v.to_ne_bytes()));
        bytes.extend(indications.iter().flat_map(|v| v.to_ne_bytes()));
        assert_eq!(bytes.len(), IEEE_PFC_LEN);
        bytes
    }

    fn message(kind: u16, sequence: u32, payload: &[u8]) -> Vec<u8> {
        let length = NLMSG_HEADER_LEN + payload.len();
        let mut bytes = (length as u32).to_ne_bytes().to_vec();
        bytes.extend_from_slice(&kind.to_ne_bytes());
        bytes.extend_from_slice(&0u16.to_ne_bytes());
        bytes.extend_from_slice(&sequence.to_ne_bytes());
        bytes.extend_from_slice(&0u32.to_ne_bytes());
        bytes.extend_from_slice(payload);
        bytes.resize(align4(bytes.len()), 0);
        bytes
    }

    #[test]
    fn request_is_laid_out_as_dcbnl_expects() {
        let name = kernel_interface_name("eth0").expect("name");
        let request = ieee_get_request(&name, 7);
        // 16 header + 4 dcbmsg + align4(4 + "eth0\0") = 16 + 4 + 12.
        assert_eq!(request.len(), 32);
        assert_eq!(u32::from_ne_bytes(array_at(&request, 0)), 32);
        assert_eq!(u16::from_ne_bytes(array_at(&request, 4)), RTM_GETDCB);
        assert_eq!(u16::from_ne_bytes(array_at(&request, 6)), NLM_F_REQUEST);
        assert_eq!(u32::from_ne_bytes(array_at(&request, 8)), 7);
        assert_eq!(&request[16..20], &[0, DCB_CMD_IEEE_GET, 0, 0]);
        assert_eq!(u16::from_ne_bytes(array_at(&request, 20)), 9);
        assert_eq!(u16::from_ne_bytes(array_at(&request, 22)), DCB_ATTR_IFNAME);
        assert_eq!(&request[24..], b"eth0\0\0\0\0");
    }

    #[test]
    fn reply_with_pfc_and_trust_is_decoded() {
        let pfc = ieee_pfc(8, 0b0001_1000, [1, 2, 3, 4, 5, 6, 7, 8], [9, 10, 11, 12, 13, 14, 15, u64::MAX]);
        let datagram = message(RTM_GETDCB, 5, &reply_payload(&pfc, true));
        let Ok(Reply::Answer(payload)) = parse_reply(&datagram, 5) else { panic!("no answer") };
        let Ok(config) = parse_ieee_payload(payload) else { panic!("not decoded") };
        assert_eq!(
            config,
            PfcConfig {
                capable_traffic_classes: 8,
                enabled_priorities: vec![3, 4],
                requests: [1, 2, 3, 4, 5, 6, 7, 8],
                indications: [9, 10, 11, 12, 13, 14, 15, u64::MAX],
                trust: Some(vec!["dscp".into(), "pcp".into()]),
            }
        );
        let without_trust = message(RTM_GETDCB, 5, &reply_payload(&pfc, false));
        let Ok(Reply::Answer(payload)) = parse_reply(&without_trust, 5) else { panic!("no answer") };
        assert!(matches!(parse_ieee_payload(payload), Ok(PfcConfig { trust: None, .. })));
    }

    #[test]
    fn kernel_errors_and_foreign_messages_are_told_apart() {
        let mut error = (-libc::EOPNOTSUPP).to_ne_bytes().to_vec();
        error.extend_from_slice(&[0u8; 16]);
        let datagram = message(NLMSG_ERROR, 9, &error);
        assert_eq!(parse_reply(&datagram, 9), Ok(Reply::KernelError(Errno::EOPNOTSUPP)));
        assert_eq!(parse_reply(&datagram, 10), Ok(Reply::NotOurs));
        assert!(DcbError::from_errno("veth0", DcbStep::Kernel, Errno::EOPNOTSUPP).is_unsupported());
        assert!(!DcbError::from_errno("veth0", DcbStep::Kernel, Errno::EINVAL).is_unsupported());
        assert!(matches!(
            DcbError::from_errno("eth9", DcbStep::Kernel, Errno::ENODEV),
            DcbError::InterfaceNotFound { .. }
        ));
    }

    #[test]
    fn reply_without_pfc_is_no_ieee_pfc() {
        let mut payload = vec![0, DCB_CMD_IEEE_GET, 0, 0];
        payload.extend_from_slice(&[8, 0, 13, 0, 4, 0, 1, 0]); // IEEE { UNSPEC {} }
        assert!(matches!(parse_ieee_payload(&payload[4..]), Err(PayloadProblem::NoPfc)));
        assert!(matches!(parse_ieee_payload(&[]), Err(PayloadProblem::NoPfc)));
    }

    #[test]
    fn truncated_and_lying_lengths_are_errors_never_panics() {
        let pfc = ieee_pfc(8, 0b1000, [0; 8], [0; 8]);
        let datagram = message(RTM_GETDCB, 1, &reply_payload(&pfc, true));
        for end in 0..datagram.len() {
            let cut = &datagram[..end];
            if let Ok(Reply::Answer(payload)) = parse_reply(cut, 1) {
                let _ = parse_ieee_payload(payload);
            }
        }
        // Every byte position overwritten with 0x00 and 0xff.
        for position in 0..datagram.len() {
            for byte in [0x00, 0xff] {
                let mut damaged = datagram.clone();
                damaged[position] = byte;
                if let Ok(Reply::Answer(payload)) = parse_reply(&damaged, 1) {
                    let _ = parse_ieee_payload(payload);
                }
            }
        }
        let short_pfc = message(RTM_GETDCB, 1, &reply_payload(&pfc[..100], false));
        let Ok(Reply::Answer(payload)) = parse_reply(&short_pfc, 1) else { panic!("no answer") };
        assert!(
            matches!(parse_ieee_payload(payload), Err(PayloadProblem::Malformed(reason)) if reason.contains("100 bytes"))
        );
        assert!(parse_reply(&[0u8; 7], 1).is_err());
        let mut zero_length = message(RTM_GETDCB, 1, &[0, DCB_CMD_IEEE_GET, 0, 0]);
        zero_length[0..4].copy_from_slice(&0u32.to_ne_bytes());
        assert!(parse_reply(&zero_length, 1).is_err(), "a zero length must not loop forever");
    }

    #[test]
    fn text_round_trips() {
        let original = config();
        let text = format_pfc_text("eth0", &original);
        assert_eq!(
            text,
            "# DCB IEEE PFC of eth0 (RTM_GETDCB DCB_CMD_IEEE_GET)\npfc_cap: 8\npfc_enabled: 3\n\
             requests: 0 0 0 120 0 0 0 18446744073709551615\nindications: 0 0 0 7 0 0 0 0\ntrust: pcp dscp\n"
        );
        assert_eq!(parse_pfc_text(&text).expect("parse"), original);
        let none = PfcConfig { enabled_priorities: vec![], trust: None, ..config() };
        let text = format_pfc_text("eth0", &none);
        assert!(text.contains("pfc_enabled: none\n") && !text.contains("trust"), "{text}");
        assert_eq!(parse_pfc_text(&text).expect("parse"), none);
        let empty_trust = PfcConfig { trust: Some(vec![]), enabled_priorities: vec![0, 7], ..config() };
        assert_eq!(parse_pfc_text(&format_pfc_text("eth0", &empty_trust)).expect("parse"), empty_trust);
    }

    #[test]
    fn malformed_text_is_an_error_naming_the_problem() {
        let valid = format_pfc_text("eth0", &config());
        for (text, needle) in [
            (valid.replace("pfc_cap: 8", "pfc_cap: 9"), "pfc_cap"),
            (valid.replace("pfc_enabled: 3", "pfc_enabled: 8"), "priorities 0-7"),
            (valid.replace("pfc_enabled: 3", "pfc_enabled: 3 3"), "twice"),
            (valid.replace("pfc_enabled: 3", "pfc_enabled:"), "found nothing"),
            (valid.replace("requests: 0 0 0 120 ", "requests: 0 0 120 "), "expected 8 counters"),
            (valid.replace("indications: 0", "indications: -1"), "not an unsigned"),
            (valid.replace("trust: pcp dscp", "trust: vlan"), "unknown APP selector"),
            (valid.replace("pfc_cap: 8\n", ""), "pfc_cap missing"),
            (valid.clone() + "pfc_cap: 8\n", "given twice"),
            (valid.clone() + "mbc: 0\n", "unknown key"),
            (valid.clone() + "garbage\n", "expected \"key: value\""),
            (String::new(), "missing"),
        ] {
            let error = parse_pfc_text(&text).expect_err(&text);
            assert!(error.reason.contains(needle), "{text:?}: {error}");
        }
    }

    #[test]
    fn selectors_are_named_like_dcb_apptrust() {
        assert_eq!(selector_name(5), "dscp");
        assert_eq!(selector_name(255), "pcp");
        assert_eq!(selector_name(9), "selector-9");
        assert_eq!(parse_trust("selector-9 dscp"), Ok(vec!["selector-9".into(), "dscp".into()]));
    }
}
