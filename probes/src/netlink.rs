//! Netlink framing for the probes that ask the kernel over netlink: DCB over rtnetlink
//! ([`crate::dcb`]) and the module EEPROM over generic netlink ([`crate::module_eeprom`]). The
//! framing is done by hand (netlink(7): `NLMSG_ALIGN`/`NLA_ALIGN` to 4 bytes, every length checked
//! against what was received); the socket calls are nix's safe wrappers, so no `unsafe` is needed.
//! Layouts follow `include/uapi/linux/netlink.h`.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::socket::{
    recv, recvfrom, sendto, setsockopt, socket, sockopt, AddressFamily, MsgFlags, NetlinkAddr, SockFlag, SockProtocol,
    SockType,
};
use nix::sys::time::TimeVal;

/// `sizeof(struct nlmsghdr)`: length, type, flags, sequence, port id.
pub(crate) const NLMSG_HEADER_LEN: usize = 16;
pub(crate) const NLM_F_REQUEST: u16 = 0x01;
const NLMSG_NOOP: u16 = 0x1;
const NLMSG_ERROR: u16 = 0x2;
const NLMSG_DONE: u16 = 0x3;
const NLMSG_OVERRUN: u16 = 0x4;
/// `sizeof(struct nlattr)`.
pub(crate) const NLA_HEADER_LEN: usize = 4;
/// `NLA_F_NESTED` and `NLA_F_NET_BYTEORDER` are flags, not part of the type.
const NLA_TYPE_MASK: u16 = !(0x8000 | 0x4000);

/// Sequence numbers of requests from this process (netlink(7): the reply echoes it).
static NEXT_SEQUENCE: AtomicU32 = AtomicU32::new(1);

pub(crate) fn next_sequence() -> u32 {
    NEXT_SEQUENCE.fetch_add(1, Ordering::Relaxed)
}

/// A request under construction: `nlmsghdr`, the family's own header, then attributes.
pub(crate) struct Request {
    bytes: Vec<u8>,
}

impl Request {
    /// `nlmsghdr` of type `kind` with `flags`, followed by `family_header`.
    pub(crate) fn new(kind: u16, flags: u16, sequence: u32, family_header: &[u8]) -> Request {
        let mut bytes = Vec::with_capacity(64);
        bytes.extend_from_slice(&0u32.to_ne_bytes()); // length, set by `finish`
        bytes.extend_from_slice(&kind.to_ne_bytes());
        bytes.extend_from_slice(&flags.to_ne_bytes());
        bytes.extend_from_slice(&sequence.to_ne_bytes());
        bytes.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel fills in ours
        bytes.extend_from_slice(family_header);
        bytes.resize(align4(bytes.len()), 0);
        Request { bytes }
    }

    /// One attribute, padded to `NLA_ALIGNTO`.
    pub(crate) fn attribute(&mut self, kind: u16, payload: &[u8]) -> &mut Request {
        let length = NLA_HEADER_LEN + payload.len();
        self.bytes.extend_from_slice(&(length as u16).to_ne_bytes());
        self.bytes.extend_from_slice(&kind.to_ne_bytes());
        self.bytes.extend_from_slice(payload);
        self.bytes.resize(align4(self.bytes.len()), 0);
        self
    }

    /// A nested attribute (`NLA_F_NESTED` set, as the kernel's strict validation wants) holding
    /// the attributes `inner` writes.
    pub(crate) fn nested(&mut self, kind: u16, inner: impl FnOnce(&mut Request)) -> &mut Request {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(&[0; NLA_HEADER_LEN]);
        inner(self);
        let length = (self.bytes.len() - start) as u16;
        self.bytes[start..start + 2].copy_from_slice(&length.to_ne_bytes());
        self.bytes[start + 2..start + 4].copy_from_slice(&(kind | 0x8000).to_ne_bytes());
        self
    }

    pub(crate) fn finish(mut self) -> Vec<u8> {
        let total = self.bytes.len() as u32;
        self.bytes[0..4].copy_from_slice(&total.to_ne_bytes());
        self.bytes
    }
}

/// What a datagram holds for our request.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reply<'a> {
    /// The answer's payload (after `nlmsghdr`).
    Answer(&'a [u8]),
    KernelError(Errno),
    /// Nothing for this sequence number (a stale or unrelated message).
    NotOurs,
}

/// Walk the netlink messages of one datagram and find the answer of type `answer_type` to
/// `sequence`.
pub(crate) fn parse_reply(datagram: &[u8], sequence: u32, answer_type: u16) -> Result<Reply<'_>, String> {
    let mut offset = 0;
    while offset < datagram.len() {
        let rest = &datagram[offset..];
        if rest.len() < NLMSG_HEADER_LEN {
            return Err(format!("{} trailing bytes, less than a netlink header", rest.len()));
        }
        let length = u32::from_ne_bytes(array_at(rest, 0)) as usize;
        let kind = u16::from_ne_bytes(array_at(rest, 4));
        let message_sequence = u32::from_ne_bytes(array_at(rest, 8));
        if length < NLMSG_HEADER_LEN || length > rest.len() {
            return Err(format!("netlink message length {length} outside 16..={}", rest.len()));
        }
        let payload = &rest[NLMSG_HEADER_LEN..length];
        if message_sequence == sequence {
            match kind {
                NLMSG_ERROR => {
                    // struct nlmsgerr: int error (negative errno, 0 for an acknowledgement), then the request.
                    if payload.len() < 4 {
                        return Err(format!("NLMSG_ERROR payload of {} bytes", payload.len()));
                    }
                    let error = i32::from_ne_bytes(array_at(payload, 0));
                    if error != 0 {
                        return Ok(Reply::KernelError(Errno::from_raw(error.saturating_neg())));
                    }
                }
                NLMSG_DONE | NLMSG_OVERRUN => return Err(format!("unexpected netlink message type {kind}")),
                NLMSG_NOOP => {}
                kind if kind == answer_type => return Ok(Reply::Answer(payload)),
                other => return Err(format!("unexpected netlink message type {other}")),
            }
        }
        offset += align4(length);
    }
    Ok(Reply::NotOurs)
}

/// A netlink socket of `protocol` whose receives give up after `timeout`.
pub(crate) fn open(protocol: SockProtocol, timeout: Duration) -> Result<OwnedFd, (&'static str, Errno)> {
    let socket = socket(AddressFamily::Netlink, SockType::Raw, SockFlag::SOCK_CLOEXEC, protocol)
        .map_err(|errno| ("open a netlink socket", errno))?;
    let timeval = TimeVal::from(libc::timeval { tv_sec: timeout.as_secs() as libc::time_t, tv_usec: 0 });
    setsockopt(&socket, sockopt::ReceiveTimeout, &timeval).map_err(|errno| ("set the receive timeout", errno))?;
    Ok(socket)
}

/// Send to the kernel (port id 0, netlink(7)).
pub(crate) fn send(socket: &OwnedFd, request: &[u8]) -> Result<(), Errno> {
    sendto(socket.as_raw_fd(), request, &NetlinkAddr::new(0, 0), MsgFlags::empty()).map(|_| ())
}

/// One whole datagram from the kernel; `None` when another sender wrote it. The size is learnt first with
/// `MSG_PEEK | MSG_TRUNC` so a large reply is never cut (recv(2): MSG_TRUNC returns the real length).
pub(crate) fn receive(socket: &OwnedFd) -> Result<Option<Vec<u8>>, Errno> {
    let mut probe = [0u8; 0];
    let length = recv(socket.as_raw_fd(), &mut probe, MsgFlags::MSG_PEEK | MsgFlags::MSG_TRUNC)?;
    let mut buffer = vec![0u8; length.max(NLMSG_HEADER_LEN)];
    let (received, sender) = recvfrom::<NetlinkAddr>(socket.as_raw_fd(), &mut buffer)?;
    buffer.truncate(received);
    Ok(sender.is_some_and(|address| address.pid() == 0).then_some(buffer))
}

/// Split a run of netlink attributes into (type without flag bits, payload); every length is checked.
pub(crate) fn parse_attributes(mut bytes: &[u8]) -> Result<Vec<(u16, &[u8])>, String> {
    let mut attributes = Vec::new();
    while !bytes.is_empty() {
        if bytes.len() < NLA_HEADER_LEN {
            return Err(format!("{} trailing bytes, less than an attribute header", bytes.len()));
        }
        let length = u16::from_ne_bytes(array_at(bytes, 0)) as usize;
        let kind = u16::from_ne_bytes(array_at(bytes, 2)) & NLA_TYPE_MASK;
        if length < NLA_HEADER_LEN || length > bytes.len() {
            return Err(format!("attribute {kind} length {length} outside 4..={}", bytes.len()));
        }
        attributes.push((kind, &bytes[NLA_HEADER_LEN..length]));
        // The last attribute's padding may be left out (nla_ok in include/net/netlink.h).
        bytes = &bytes[align4(length).min(bytes.len())..];
    }
    Ok(attributes)
}

pub(crate) fn find<'a>(attributes: &[(u16, &'a [u8])], kind: u16) -> Option<&'a [u8]> {
    attributes.iter().find(|(k, _)| *k == kind).map(|(_, payload)| *payload)
}

/// `NLMSG_ALIGN` and `NLA_ALIGN`: both round up to 4 bytes.
pub(crate) fn align4(length: usize) -> usize {
    (length + 3) & !3
}

/// `N` bytes at `offset`; callers have checked `offset + N <= bytes.len()`.
pub(crate) fn array_at<const N: usize>(bytes: &[u8], offset: usize) -> [u8; N] {
    let mut array = [0u8; N];
    array.copy_from_slice(&bytes[offset..offset + N]);
    array
}
