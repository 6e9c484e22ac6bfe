//! The rules of the verbs byte stream that need no device (see `stream.rs`): how the immediate data of
//! a message is encoded, which receive slot each message uses, when a slot may be written again
//! (credits), and the description each side of a link sends over TCP before connecting.
//!
//! A link has `slots` receive slots of `slot_bytes` each in the receiver's registered memory. Message
//! k (counting from 0) goes to slot k mod slots. The sender may have at most `slots` messages not yet
//! credited; the receiver returns one credit (a zero-length SEND with immediate naming the slot) when
//! it has copied a slot out, and only then may the sender write that slot again. RC delivers in order
//! (IB spec 9.7.7), so messages and credits arrive in slot order and anything else is a protocol error.

use serde::{Deserialize, Serialize};

use super::VerbsEndpointInfo;

/// What a message with immediate carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Immediate {
    /// RDMA WRITE with immediate: `length` bytes were written into receive slot `slot`.
    Data { slot: u32, length: u32 },
    /// SEND with immediate, no payload: the receiver has emptied `slot`; the sender may reuse it.
    Credit { slot: u32 },
}

/// The immediate layout: bits 31-30 the kind (01 data, 10 credit), bits 29-24 the slot, bits 23-0 the
/// length in bytes. Slots and slot sizes are bounded by it.
pub const MAX_SLOTS: u32 = 1 << 6;
pub const MAX_SLOT_BYTES: u32 = (1 << 24) - 1;
const KIND_DATA: u32 = 0b01;
const KIND_CREDIT: u32 = 0b10;

impl Immediate {
    /// The 32-bit value in host order. `ibv_send_wr.imm_data` and `ibv_wc.imm_data` are big-endian
    /// (`__be32`, rdma-core verbs.h); the device layer converts.
    pub fn encode(self) -> u32 {
        match self {
            Immediate::Data { slot, length } => {
                debug_assert!(slot < MAX_SLOTS && length <= MAX_SLOT_BYTES);
                (KIND_DATA << 30) | ((slot & 0x3f) << 24) | (length & MAX_SLOT_BYTES)
            }
            Immediate::Credit { slot } => (KIND_CREDIT << 30) | ((slot & 0x3f) << 24),
        }
    }

    pub fn decode(value: u32) -> Result<Immediate, String> {
        let slot = (value >> 24) & 0x3f;
        let length = value & MAX_SLOT_BYTES;
        match value >> 30 {
            KIND_DATA => Ok(Immediate::Data { slot, length }),
            KIND_CREDIT if length == 0 => Ok(Immediate::Credit { slot }),
            _ => Err(format!("immediate data {value:#010x} is neither a data message nor a credit")),
        }
    }
}

/// The sender's view: messages written and credits returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderWindow {
    slots: u32,
    sent: u64,
    credited: u64,
}

impl SenderWindow {
    pub fn new(slots: u32) -> SenderWindow {
        SenderWindow { slots: slots.max(1), sent: 0, credited: 0 }
    }

    /// The slot of the next message if the receiver has room for it, and count it as sent.
    pub fn reserve(&mut self) -> Option<u32> {
        if self.sent - self.credited >= u64::from(self.slots) {
            return None;
        }
        let slot = (self.sent % u64::from(self.slots)) as u32;
        self.sent += 1;
        Some(slot)
    }

    /// A credit arrived: it must free the oldest uncredited slot.
    pub fn credit(&mut self, slot: u32) -> Result<(), String> {
        if self.credited == self.sent {
            return Err(format!("credit for slot {slot} with no message outstanding"));
        }
        let expected = (self.credited % u64::from(self.slots)) as u32;
        if slot != expected {
            return Err(format!("credit for slot {slot} but slot {expected} is the oldest outstanding"));
        }
        self.credited += 1;
        Ok(())
    }

    /// Messages written and not yet credited.
    pub fn outstanding(&self) -> u64 {
        self.sent - self.credited
    }
}

/// The receiver's view: which slot the next message must use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiverWindow {
    slots: u32,
    slot_bytes: u32,
    received: u64,
}

impl ReceiverWindow {
    pub fn new(slots: u32, slot_bytes: u32) -> ReceiverWindow {
        ReceiverWindow { slots: slots.max(1), slot_bytes, received: 0 }
    }

    /// A message arrived with this immediate; returns its slot and length.
    pub fn accept(&mut self, immediate: Immediate) -> Result<(u32, u32), String> {
        let Immediate::Data { slot, length } = immediate else {
            return Err("a credit arrived on the receiving side of the link".into());
        };
        let expected = (self.received % u64::from(self.slots)) as u32;
        if slot != expected {
            return Err(format!("message in slot {slot} but slot {expected} was next"));
        }
        if length == 0 || length > self.slot_bytes {
            return Err(format!("message of {length} bytes in a {}-byte slot", self.slot_bytes));
        }
        self.received += 1;
        Ok((slot, length))
    }
}

/// Byte range of `slot` in a buffer of slots.
pub fn slot_range(slot: u32, slot_bytes: u32) -> std::ops::Range<usize> {
    let start = slot as usize * slot_bytes as usize;
    start..start + slot_bytes as usize
}

/// Which way data flows through one queue pair of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// This side writes data into the peer's slots and receives credits.
    Send,
    /// This side owns the slots the peer writes into and returns credits.
    Receive,
}

impl Role {
    pub fn opposite(self) -> Role {
        match self {
            Role::Send => Role::Receive,
            Role::Receive => Role::Send,
        }
    }
}

/// What one side of a TCP connection tells the other before the queue pairs connect: one endpoint
/// per queue pair it opened on this connection, with the slot geometry both must share.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkHello {
    pub rank: usize,
    pub slots: u32,
    pub slot_bytes: u32,
    pub endpoints: Vec<(Role, VerbsEndpointInfo)>,
}

impl LinkHello {
    /// Pair each of our roles with the peer's endpoint of the opposite role; the peer must be the
    /// expected rank and use the same slots. Returns the peer's endpoints in the order of `ours`.
    pub fn match_peer(
        ours: &[Role],
        slots: u32,
        slot_bytes: u32,
        expected_rank: usize,
        theirs: &LinkHello,
    ) -> Result<Vec<VerbsEndpointInfo>, String> {
        if theirs.rank != expected_rank {
            return Err(format!("rank {} answered where rank {expected_rank} was expected", theirs.rank));
        }
        if (theirs.slots, theirs.slot_bytes) != (slots, slot_bytes) {
            return Err(format!(
                "slots differ: {} x {} bytes here, {} x {} bytes on rank {}",
                slots, slot_bytes, theirs.slots, theirs.slot_bytes, theirs.rank
            ));
        }
        if theirs.endpoints.len() != ours.len() {
            return Err(format!(
                "{} queue pairs here but {} on rank {} for this connection",
                ours.len(),
                theirs.endpoints.len(),
                theirs.rank
            ));
        }
        ours.iter()
            .map(|role| {
                theirs
                    .endpoints
                    .iter()
                    .find(|(theirs, _)| *theirs == role.opposite())
                    .map(|(_, info)| info.clone())
                    .ok_or_else(|| format!("rank {} offers no {:?} queue pair", theirs.rank, role.opposite()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn immediates_round_trip_and_garbage_is_refused() {
        for immediate in [
            Immediate::Data { slot: 0, length: 1 },
            Immediate::Data { slot: 63, length: MAX_SLOT_BYTES },
            Immediate::Data { slot: 5, length: 256 * 1024 },
            Immediate::Credit { slot: 0 },
            Immediate::Credit { slot: 63 },
        ] {
            assert_eq!(Immediate::decode(immediate.encode()), Ok(immediate), "{immediate:?}");
        }
        assert_eq!(Immediate::Data { slot: 3, length: 0x40000 }.encode(), 0x4304_0000);
        assert_eq!(Immediate::Credit { slot: 3 }.encode(), 0x8300_0000);
        assert!(Immediate::decode(0).is_err(), "kind 00");
        assert!(Immediate::decode(0xc000_0000).is_err(), "kind 11");
        assert!(Immediate::decode(0x8000_0001).is_err(), "a credit with a length");
    }

    #[test]
    fn sender_stops_at_the_window_and_reuses_a_slot_only_after_its_credit() {
        let mut window = SenderWindow::new(3);
        assert_eq!((window.reserve(), window.reserve(), window.reserve()), (Some(0), Some(1), Some(2)));
        assert_eq!(window.reserve(), None, "three slots, none credited");
        assert_eq!(window.outstanding(), 3);
        assert!(window.credit(1).is_err(), "slot 0 is the oldest");
        window.credit(0).expect("oldest");
        assert_eq!(window.reserve(), Some(0), "slot 0 again, after its credit");
        assert_eq!(window.reserve(), None);
        for slot in [1, 2, 0] {
            window.credit(slot).expect("in order");
        }
        assert!(window.credit(1).is_err(), "nothing outstanding");
        // Many laps: slots cycle 0,1,2,0,...
        let slots: Vec<u32> = (0..7)
            .map(|_| {
                let slot = window.reserve().expect("room");
                window.credit(slot).expect("credit");
                slot
            })
            .collect();
        assert_eq!(slots, [1, 2, 0, 1, 2, 0, 1]);
    }

    #[test]
    fn receiver_checks_slot_order_and_length() {
        let mut window = ReceiverWindow::new(2, 1024);
        assert_eq!(window.accept(Immediate::Data { slot: 0, length: 1024 }), Ok((0, 1024)));
        assert!(window.accept(Immediate::Data { slot: 0, length: 8 }).is_err(), "slot 1 is next");
        assert_eq!(window.accept(Immediate::Data { slot: 1, length: 8 }), Ok((1, 8)));
        assert!(window.accept(Immediate::Data { slot: 0, length: 1025 }).is_err(), "longer than a slot");
        assert!(window.accept(Immediate::Data { slot: 0, length: 0 }).is_err(), "empty");
        assert!(window.accept(Immediate::Credit { slot: 0 }).is_err(), "a credit on the receive side");
        assert_eq!(window.accept(Immediate::Data { slot: 0, length: 1 }), Ok((0, 1)));
        assert_eq!(slot_range(3, 1024), 3072..4096);
    }

    fn endpoint(qpn: u32) -> VerbsEndpointInfo {
        VerbsEndpointInfo {
            device: "rxe0".into(),
            port: 1,
            qpn,
            psn: 1,
            gid: "::ffff:10.77.0.12".into(),
            gid_index: 1,
            lid: 0,
            rkey: 0x99,
            address: 0x1000,
            length: 4 * 262144,
            mtu: 1024,
            max_read_atomic: 1,
            link_layer: "ethernet".into(),
        }
    }

    #[test]
    fn link_hello_round_trips_and_pairs_opposite_roles() {
        let hello = LinkHello {
            rank: 2,
            slots: 4,
            slot_bytes: 262144,
            endpoints: vec![(Role::Receive, endpoint(7)), (Role::Send, endpoint(8))],
        };
        // Framed as on the TCP connection it travels over (loopback).
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let mut writer = std::net::TcpStream::connect(listener.local_addr().expect("address")).expect("connect");
        let (mut reader, _) = listener.accept().expect("accept");
        crate::handshake::write_message(&mut writer, "test", &hello).expect("frame");
        let back: LinkHello = crate::handshake::read_message(&mut reader, "test", "hello").expect("back");
        assert_eq!(back, hello);
        // A mesh connection: our Send pairs with their Receive (qpn 7), our Receive with their Send.
        let peers = LinkHello::match_peer(&[Role::Send, Role::Receive], 4, 262144, 2, &back).expect("pairs");
        assert_eq!(peers.iter().map(|p| p.qpn).collect::<Vec<_>>(), [7, 8]);
        let refused = |ours: &[Role], slots: u32, rank: usize, theirs: &LinkHello| {
            LinkHello::match_peer(ours, slots, 262144, rank, theirs).expect_err("must be refused")
        };
        assert!(refused(&[Role::Send], 4, 2, &back).contains("queue pairs"));
        assert!(refused(&[Role::Send, Role::Receive], 8, 2, &back).contains("slots differ"));
        assert!(refused(&[Role::Send, Role::Receive], 4, 1, &back).contains("rank 2 answered"));
        let one_sided = LinkHello { endpoints: vec![(Role::Send, endpoint(9))], ..hello };
        assert!(refused(&[Role::Send], 4, 2, &one_sided).contains("no Receive"));
        let text = serde_json::to_string(&one_sided).expect("json");
        assert!(serde_json::from_str::<LinkHello>(&text.replace("\"rank\"", "\"extra\":1,\"rank\"")).is_err());
    }
}
