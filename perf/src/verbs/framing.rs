//! Where a connection's messages lie in its registered buffer, and `--validate`'s per-message framing
//! on verbs: the rules of `crate::integrity` (a header with sequence, sender, seed, length and a check
//! word; a payload checked word by word) applied to memory the adapter reads and writes.
//!
//! Without framing every message of a run is the same bytes in the same region, so a lost,
//! repeated or stale message passes any content check. With it:
//! - **SEND**: each message is gathered from two pieces, its own header slot (stamped with the next
//!   sequence just before posting; a ring of depth + 1 slots, so a slot is never rewritten while its
//!   message may still be read) and the payload region; each receive scatters into a header slot of
//!   its own and the payload region. The receiver checks every header against the next sequence
//!   expected, then the payload.
//! - **RDMA WRITE** (bandwidth): the same gather, posted as WRITE with immediate whose immediate data
//!   is the sequence (low 32 bits), so the responder sees one completion per message and checks the
//!   sequence; it also reads the sequence word at the start of its region, which must be at least the
//!   completion's (an older one means the data of the announced message was not placed: a stale
//!   buffer). The whole region, header and payload, is checked as the last message at the end.
//! - **RDMA READ**: each read scatters the responder's header into a header slot of the reader's,
//!   zeroed before posting; a completion whose slot does not hold the responder's intact header was
//!   reported without its data.
//!
//! Payloads are fixed per stream ([`Stream::with_fixed_payload`]): SEND and WRITE payloads land in one
//! shared region that the next message may already be overwriting while this one is checked, so
//! payloads that differed per message would fail there without any fault. Messages shorter than a
//! header travel whole in the header slot and carry their sequence in their content.

use std::ops::Range;

use crate::integrity::{Fault, Stream, Verified, Verifier, HEADER_BYTES};
use crate::params::Operation;

use super::device::{Buffer, Gather};

/// Header slots start a cache line apart.
const HEADER_STRIDE: usize = 64;

/// Offsets of the regions in a connection's buffer: the send region (source of WRITE and SEND, what
/// the peer READs), the receive region (where the peer WRITEs, where SENDs land, the destination of
/// READs), and with framing the send and receive rings of header slots.
#[derive(Debug, Clone, Copy)]
pub(super) struct Layout {
    pub size: usize,
    receive_offset: usize,
    /// Bytes of one header slot: a header, or a whole message shorter than one.
    header: usize,
    send_slots: usize,
    receive_slots: usize,
}

impl Layout {
    /// Two regions, no header rings.
    pub fn new(size: usize) -> Layout {
        Layout::framed(size, 0, 0)
    }

    /// Two regions and rings of `send_slots` and `receive_slots` header slots.
    pub fn framed(size: usize, send_slots: usize, receive_slots: usize) -> Layout {
        // Separate cache lines, like perftest's BUFF_SIZE halves.
        let receive_offset = size.div_ceil(64) * 64;
        Layout { size, receive_offset, header: size.min(HEADER_BYTES), send_slots, receive_slots }
    }

    pub fn send(&self) -> Range<usize> {
        0..self.size
    }

    pub fn receive(&self) -> Range<usize> {
        self.receive_offset..self.receive_offset + self.size
    }

    fn rings(&self) -> usize {
        (self.receive_offset + self.size).div_ceil(HEADER_STRIDE) * HEADER_STRIDE
    }

    pub fn length(&self) -> usize {
        if self.send_slots + self.receive_slots == 0 {
            return self.receive_offset + self.size;
        }
        self.rings() + (self.send_slots + self.receive_slots) * HEADER_STRIDE
    }

    /// The header slot of outgoing message `sequence` (and of READ `sequence`'s header).
    pub fn send_slot(&self, sequence: u64) -> Range<usize> {
        let start = self.rings() + (sequence % self.send_slots.max(1) as u64) as usize * HEADER_STRIDE;
        start..start + self.header
    }

    /// Receive `index`'s header slot.
    pub fn receive_slot(&self, index: usize) -> Range<usize> {
        let start = self.rings() + (self.send_slots + index % self.receive_slots.max(1)) * HEADER_STRIDE;
        start..start + self.header
    }

    /// A region's bytes after its header piece: a framed message's payload.
    pub fn payload(&self, region: Range<usize>) -> Range<usize> {
        region.start + self.header..region.end
    }

    /// The header piece at the start of a region.
    pub fn head(&self, region: Range<usize>) -> Range<usize> {
        region.start..region.start + self.header
    }
}

/// `--validate` on one connection.
#[derive(Debug)]
pub(super) struct Integrity {
    /// This side's messages (its SENDs and WRITEs; what the peer READs).
    pub outgoing: Stream,
    pub next_outgoing: u64,
    /// The peer's messages in arrival order: SEND headers, WRITE immediates.
    pub incoming: Verifier,
    /// What was checked against one fixed message of the peer (READ, WRITE latency), apart from
    /// `incoming`'s order.
    pub fixed: Verified,
    pub fixed_first: Option<crate::integrity::Corruption>,
    /// READ: messages whose header slots were checked.
    pub reads_checked: u64,
}

impl Integrity {
    /// Framing for a connection whose own messages are `sender`'s, the peer's the other side's.
    pub fn new(seed: u64, sender: u32, peer: u32, size: usize) -> Integrity {
        Integrity {
            outgoing: Stream::new(seed, sender, size).with_fixed_payload(),
            next_outgoing: 0,
            incoming: Verifier::new(Stream::new(seed, peer, size).with_fixed_payload()),
            fixed: Verified::default(),
            fixed_first: None,
            reads_checked: 0,
        }
    }

    /// The peer's stream.
    pub fn peer(&self) -> Stream {
        *self.incoming.stream()
    }

    /// Everything verified on this connection so far.
    pub fn verified(&self) -> Verified {
        let mut verified = self.incoming.verified;
        verified.add(&self.fixed);
        verified
    }

    pub fn first(&self) -> Option<&crate::integrity::Corruption> {
        self.incoming.first.as_ref().or(self.fixed_first.as_ref())
    }

    /// Check one message of the peer that holds `sequence` in a fixed place, apart from the arrival
    /// order (`Verifier::resume`), and fold the result into `fixed`.
    pub fn check_fixed(&mut self, buffer: &Buffer, message: Pieces, sequence: u64) -> bool {
        let mut verifier = Verifier::resume(self.peer(), sequence);
        let good = message.check(buffer, &mut verifier);
        self.fixed.add(&verifier.verified);
        if self.fixed_first.is_none() {
            self.fixed_first = verifier.first;
        }
        good
    }
}

/// Where one framed message lies: its header piece and its payload (empty for a short message).
#[derive(Debug, Clone)]
pub(super) struct Pieces {
    pub header: Range<usize>,
    pub payload: Range<usize>,
    /// The message's length on the wire.
    pub length: usize,
    /// The last byte of the message carries something else (WRITE latency's iteration count) and is
    /// not checked.
    pub last_byte_free: bool,
}

impl Pieces {
    /// Check the message as the next of `verifier`. The header piece is copied out (its slot is this
    /// side's until it is posted again); the payload is read in chunks.
    pub fn check(&self, buffer: &Buffer, verifier: &mut Verifier) -> bool {
        let mut header = [0u8; HEADER_BYTES];
        let header = &mut header[..self.header.len()];
        buffer.copy_out(self.header.start, header);
        let mut payload = self.payload.clone();
        if self.last_byte_free {
            if payload.is_empty() {
                // A message shorter than a header: its last byte is the header piece's.
                let mut expected = [0u8; HEADER_BYTES];
                verifier.stream().stamp(&mut expected[..header.len()], verifier.expected());
                if let (Some(last), Some(wanted)) = (header.last_mut(), expected[..self.header.len()].last()) {
                    *last = *wanted;
                }
            } else {
                payload.end -= 1;
            }
        }
        let mut arrival = verifier.begin(header, self.length);
        buffer.read_chunks(payload, |chunk| arrival.payload(chunk));
        arrival.end()
    }
}

/// The header slots and payload region of one framed message.
pub(super) fn gather(header: Range<usize>, payload: Range<usize>) -> Gather {
    Gather::of(header).then(payload)
}

/// The full sequence number of a 32-bit immediate, the one nearest to `expected` (the immediate
/// wraps every 2^32 messages; a run of 100 Gb/s at 64 bytes wraps in under half an hour).
pub(super) fn widen_immediate(immediate: u32, expected: u64) -> u64 {
    const SPAN: u64 = 1 << 32;
    let candidate = (expected & !(SPAN - 1)) | u64::from(immediate);
    if candidate + SPAN / 2 < expected {
        candidate + SPAN
    } else if candidate > expected + SPAN / 2 && candidate >= SPAN {
        candidate - SPAN
    } else {
        candidate
    }
}

/// The stale-region rule of framed RDMA WRITE: the completion of message `announced` arrived, and
/// the region's first word says which message wrote it last. Writes land in order, so it is at
/// least `announced`; an older one means the announced message's data never arrived.
pub(super) fn stale_region(announced: u64, found: u64) -> Option<Fault> {
    (found < announced).then_some(Fault::Stale { announced, found })
}

/// Receives the responder keeps posted: SEND bandwidth needs more than the peer's depth (perftest
/// DEF_RX_SEND), and so does a framed WRITE, whose every message consumes one; otherwise one, for
/// the end marker of `Connection::finish`.
pub(super) fn receive_depth(operation: Operation, depth: usize, framed: bool) -> usize {
    match (operation, framed) {
        (Operation::Send, _) | (Operation::Write, true) => super::SEND_RECEIVE_DEPTH.max(depth + 1),
        (Operation::Write | Operation::Read, _) => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_do_not_overlap_and_start_on_cache_lines() {
        let layout = Layout::new(100);
        assert_eq!(layout.send(), 0..100);
        assert_eq!(layout.receive(), 128..228);
        assert_eq!(layout.length(), 228);
        assert_eq!(Layout::new(64).receive(), 64..128);
    }

    #[test]
    fn header_rings_follow_the_regions_and_wrap() {
        let layout = Layout::framed(100, 3, 2);
        assert_eq!(layout.send_slot(0), 256..288);
        assert_eq!(layout.send_slot(4), 320..352, "sequence 4 of 3 slots reuses slot 1");
        assert_eq!(layout.receive_slot(0), 448..480);
        assert_eq!(layout.receive_slot(1), 512..544);
        assert_eq!(layout.length(), 576);
        assert_eq!(layout.payload(layout.send()), 32..100);
        // A message shorter than a header travels whole in its slot.
        let short = Layout::framed(8, 2, 2);
        assert_eq!(short.send_slot(1).len(), 8);
        assert!(short.payload(short.send()).is_empty());
    }

    #[test]
    fn immediates_widen_to_the_nearest_sequence() {
        assert_eq!(widen_immediate(5, 5), 5);
        assert_eq!(widen_immediate(7, 5), 7);
        assert_eq!(widen_immediate(3, 5), 3);
        // Across the 2^32 wrap in both directions.
        assert_eq!(widen_immediate(2, (1 << 32) - 3), (1 << 32) + 2);
        assert_eq!(widen_immediate(u32::MAX, (1 << 32) + 1), (1 << 32) - 1);
    }

    #[test]
    fn a_region_older_than_its_completion_is_stale() {
        assert_eq!(stale_region(9, 9), None);
        assert_eq!(stale_region(9, 12), None, "later writes may have landed already");
        assert_eq!(stale_region(9, 8), Some(Fault::Stale { announced: 9, found: 8 }));
    }

    #[test]
    fn framed_writes_keep_receives_for_every_message() {
        assert_eq!(receive_depth(Operation::Write, 128, false), 1);
        assert_eq!(receive_depth(Operation::Write, 128, true), 512);
        assert_eq!(receive_depth(Operation::Send, 1000, false), 1001);
        assert_eq!(receive_depth(Operation::Read, 128, true), 1);
    }
}
