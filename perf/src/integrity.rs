//! Message integrity for `--validate` at line rate: every message carries a header (sequence, sender,
//! length, a per-run seed, a header check) and a payload the receiver checks word by word. Checking
//! costs one read of each byte and an add per 8 bytes, so it keeps up with the wire where the former
//! check (a volatile read, a bounds check and a `% 251` per byte) ran at about 1.3 Gb/s.
//!
//! What a receiver catches, and how:
//! - a flipped bit or a shifted byte anywhere in the payload: payload word `i` is `base + i * STEP`
//!   with an odd `STEP`, so every word of a message differs from every other (no shift maps the
//!   progression onto itself), and `base` depends on the run's seed;
//! - a lost, duplicated, reordered or stale message: the header's sequence number against the next
//!   one expected, and the payload's `base` depends on the sequence (`sequence mod SLOTS`), so a
//!   buffer the wire left half-written with the previous message fails in its payload too;
//! - a message of another run or another sender: the header's seed and sender;
//! - a corrupted header: the header check word.
//!
//! Senders keep [`SLOTS`] messages already filled and stamp only the 32-byte header per message, so
//! sending costs no pass over the payload either. Messages shorter than the header carry only the
//! first bytes of the sequence's words: a content check without a readable sequence.

use std::fmt;

pub use fabricdoctor_perf_schema::results::Verified;

/// Bytes of the header at the start of every message of at least this size.
pub const HEADER_BYTES: usize = 32;

/// Payload bases cycle over this many values: enough that the previous message's bytes (a stale
/// buffer) never match the current one's, few enough that senders keep every variant pre-filled.
pub const SLOTS: u64 = 4;

/// Increment between payload words: odd (so `i * STEP` differs for every i below 2^64) and with bits
/// spread over the word (the golden-ratio constant of Fibonacci hashing, Knuth TAOCP vol. 3, 6.4).
const STEP: u64 = 0x9E37_79B9_7F4A_7C15;

/// splitmix64's finalizer (Steele, Lea, Flood: "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): a bijection that spreads every input bit over the output.
fn mix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The stream of messages one sender sends over one connection: all share seed, sender and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stream {
    pub seed: u64,
    pub sender: u32,
    pub length: usize,
    /// Every message's payload is sequence 0's ([`Stream::with_fixed_payload`]).
    fixed_payload: bool,
}

impl Stream {
    pub fn new(seed: u64, sender: u32, length: usize) -> Stream {
        Stream { seed, sender, length, fixed_payload: false }
    }

    /// The same stream with one payload for every message of at least [`HEADER_BYTES`]: the header
    /// alone tells them apart. For transports whose messages land in one shared region that the next
    /// message may already be overwriting while this one is checked (verbs SEND and WRITE): payloads
    /// that differ per message would fail there without any fault. Shorter messages still carry
    /// their sequence in their content (they travel whole, in a slot of their own).
    pub fn with_fixed_payload(self) -> Stream {
        Stream { fixed_payload: true, ..self }
    }

    /// First payload word of a message with `sequence`.
    fn base(&self, sequence: u64) -> u64 {
        let variant = match (self.length < HEADER_BYTES, self.fixed_payload) {
            (true, _) => sequence,
            (false, true) => 0,
            (false, false) => sequence % SLOTS,
        };
        mix(self.seed ^ mix(variant.wrapping_add(u64::from(self.sender) << 32)))
    }

    /// Bytes of a message that travel in its header piece: the header, or a whole short message.
    pub fn header_length(&self) -> usize {
        self.length.min(HEADER_BYTES)
    }

    fn header_check(&self, sequence: u64) -> u64 {
        mix(sequence ^ self.seed.rotate_left(17) ^ ((u64::from(self.sender) << 32) | self.length as u64))
    }

    /// Write the whole message of `sequence` (header and payload) into `message`, which must be
    /// `length` bytes long.
    pub fn fill(&self, message: &mut [u8], sequence: u64) {
        if message.len() < HEADER_BYTES {
            write_words(message, self.base(sequence));
            return;
        }
        write_words(&mut message[HEADER_BYTES..], self.base(sequence));
        self.stamp(message, sequence);
    }

    /// Write only the header of `sequence`. The payload must already be that of a sequence with the
    /// same `sequence % SLOTS` (a message filled once and re-sent every [`SLOTS`] messages).
    pub fn stamp(&self, message: &mut [u8], sequence: u64) {
        if message.len() < HEADER_BYTES {
            write_words(message, self.base(sequence));
            return;
        }
        let header = &mut message[..HEADER_BYTES];
        header[0..8].copy_from_slice(&sequence.to_le_bytes());
        header[8..16].copy_from_slice(&self.seed.to_le_bytes());
        header[16..20].copy_from_slice(&self.sender.to_le_bytes());
        header[20..24].copy_from_slice(&(self.length as u32).to_le_bytes());
        header[24..32].copy_from_slice(&self.header_check(sequence).to_le_bytes());
    }
}

/// Payload words from `base`, little-endian; a tail shorter than a word gets the next word's first
/// bytes.
fn write_words(bytes: &mut [u8], base: u64) {
    let mut word = base;
    let mut chunks = bytes.chunks_exact_mut(8);
    for chunk in &mut chunks {
        chunk.copy_from_slice(&word.to_le_bytes());
        word = word.wrapping_add(STEP);
    }
    let tail = chunks.into_remainder();
    let length = tail.len();
    tail.copy_from_slice(&word.to_le_bytes()[..length]);
}

/// The one pass over a payload: true when any byte differs from the words starting at `base`. Written
/// as an OR over XORs with no early exit so the compiler vectorizes it.
fn differs(bytes: &[u8], base: u64) -> bool {
    let mut word = base;
    let mut difference = 0u64;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut raw = [0u8; 8];
        raw.copy_from_slice(chunk);
        difference |= u64::from_le_bytes(raw) ^ word;
        word = word.wrapping_add(STEP);
    }
    let tail = chunks.remainder();
    difference != 0 || tail != &word.to_le_bytes()[..tail.len()]
}

/// The first differing word of a payload known to differ: (byte offset in the payload, expected
/// word, actual word), and how many bytes differ in all.
fn locate(bytes: &[u8], base: u64) -> (Option<(usize, u64, u64)>, u64) {
    let mut first = None;
    let mut wrong_bytes = 0u64;
    let mut word = base;
    for (index, chunk) in bytes.chunks(8).enumerate() {
        let expected = &word.to_le_bytes()[..chunk.len()];
        if chunk != expected {
            wrong_bytes += chunk.iter().zip(expected).filter(|(a, b)| a != b).count() as u64;
            if first.is_none() {
                let mut actual = [0u8; 8];
                actual[..chunk.len()].copy_from_slice(chunk);
                let mut wanted = [0u8; 8];
                wanted[..chunk.len()].copy_from_slice(expected);
                first = Some((index * 8, u64::from_le_bytes(wanted), u64::from_le_bytes(actual)));
            }
        }
        word = word.wrapping_add(STEP);
    }
    (first, wrong_bytes)
}

/// What was wrong with one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// The message has another length than the stream's.
    Length { expected: usize, actual: usize },
    /// The header's check word does not match its fields: the header itself was corrupted.
    Header,
    /// A message of another run (seed) or another sender.
    Foreign { seed: u64, sender: u32 },
    /// Sequence numbers `expected..actual` never arrived.
    Lost { expected: u64, actual: u64 },
    /// The previous message again (or one already seen): duplicated, or a stale buffer.
    Repeated { expected: u64, actual: u64 },
    /// Payload bytes differ: the first differing word, at `offset` bytes from the message start.
    Content { offset: usize, expected: u64, actual: u64, wrong_bytes: u64 },
    /// The completion of message `announced` arrived, but the region it wrote still holds the older
    /// message `found`: its data was never placed.
    Stale { announced: u64, found: u64 },
}

/// A message that failed verification, as reports name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corruption {
    /// The sequence the receiver expected.
    pub sequence: u64,
    pub fault: Fault,
}

impl fmt::Display for Corruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "message {}: ", self.sequence)?;
        match &self.fault {
            Fault::Length { expected, actual } => write!(f, "{actual} bytes, expected {expected}"),
            Fault::Header => f.write_str("header corrupted (its check word does not match)"),
            Fault::Foreign { seed, sender } => {
                write!(f, "from another stream (seed {seed:#018x}, sender {sender}): stale or misrouted")
            }
            Fault::Lost { expected, actual } => {
                write!(f, "{} message(s) lost (got sequence {actual}, expected {expected})", actual - expected)
            }
            Fault::Repeated { expected, actual } => {
                write!(f, "sequence {actual} again (expected {expected}): duplicated, reordered or stale")
            }
            Fault::Content { offset, expected, actual, wrong_bytes } => write!(
                f,
                "{wrong_bytes} byte(s) wrong, first at offset {offset}: expected {expected:#018x}, got {actual:#018x}"
            ),
            Fault::Stale { announced, found } => write!(
                f,
                "completed, but its region still holds message {found}: the data of message {announced} was not \
                 placed (stale buffer)"
            ),
        }
    }
}

/// The receiving end of a [`Stream`]: checks each message in arrival order.
#[derive(Debug, Clone)]
pub struct Verifier {
    stream: Stream,
    next: u64,
    pub verified: Verified,
    /// The first failure, kept for the report (later ones are only counted).
    pub first: Option<Corruption>,
}

impl Verifier {
    /// A verifier expecting sequence 0 first.
    pub fn new(stream: Stream) -> Verifier {
        Verifier::resume(stream, 0)
    }

    /// A verifier expecting `next` first: one message checked out of order (a region that holds the
    /// last message written into it).
    pub fn resume(stream: Stream, next: u64) -> Verifier {
        Verifier { stream, next, verified: Verified::default(), first: None }
    }

    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    fn fail(&mut self, sequence: u64, fault: Fault) {
        match &fault {
            Fault::Content { wrong_bytes, .. } => self.verified.wrong_bytes += wrong_bytes,
            Fault::Lost { expected, actual } => self.verified.sequence_errors += actual - expected,
            _ => self.verified.sequence_errors += 1,
        }
        if self.first.is_none() {
            self.first = Some(Corruption { sequence, fault });
        }
    }

    /// Check the next message, whole. Returns false when anything was wrong with it.
    pub fn check(&mut self, message: &[u8]) -> bool {
        let split = self.stream.header_length().min(message.len());
        let (header, payload) = message.split_at(split);
        let mut arrival = self.begin(header, message.len());
        arrival.payload(payload);
        arrival.end()
    }

    /// Start checking the next message of `length` bytes from its header piece (its first
    /// [`Stream::header_length`] bytes); the payload follows in [`Arrival::payload`] chunks. For
    /// messages whose header and payload lie apart (verbs: each header in a slot of its own, payloads
    /// in one region) or that are read in pieces.
    pub fn begin(&mut self, header: &[u8], length: usize) -> Arrival<'_> {
        let expected = self.next;
        let before = self.verified.errors();
        self.verified.messages += 1;
        let mut arrival =
            Arrival { expected, base: None, offset: 0, wrong_bytes: 0, first: None, before, verifier: self };
        let verifier = &mut *arrival.verifier;
        if length != verifier.stream.length || header.len() != verifier.stream.header_length() {
            verifier.verified.bytes += length as u64;
            verifier.fail(expected, Fault::Length { expected: verifier.stream.length, actual: length });
            verifier.next += 1;
            return arrival;
        }
        verifier.verified.bytes += header.len() as u64;
        if length < HEADER_BYTES {
            let base = verifier.stream.base(expected);
            if differs(header, base) {
                let (first, wrong_bytes) = locate(header, base);
                let (offset, expected_word, actual) = first.unwrap_or((0, 0, 0));
                verifier.fail(expected, Fault::Content { offset, expected: expected_word, actual, wrong_bytes });
            }
            verifier.next += 1;
            return arrival;
        }
        let payload_sequence = verifier.check_header(header, expected);
        arrival.base = Some(verifier.stream.base(payload_sequence));
        arrival
    }

    /// The header rules of a message expected to be `expected`; returns the sequence whose payload
    /// should follow (the header's own when it is intact, else the expected one).
    fn check_header(&mut self, header: &[u8], expected: u64) -> u64 {
        let field = |range: std::ops::Range<usize>| {
            let mut raw = [0u8; 8];
            raw[..range.len()].copy_from_slice(&header[range]);
            u64::from_le_bytes(raw)
        };
        let sequence = field(0..8);
        let seed = field(8..16);
        let sender = field(16..20) as u32;
        let length = field(20..24) as usize;
        let check = field(24..32);
        let header_intact = check == self.stream.header_check(sequence)
            && seed == self.stream.seed
            && sender == self.stream.sender
            && length == self.stream.length;
        if !header_intact {
            // Tell a message of another stream (intact in itself) from a damaged header.
            let foreign = Stream { seed, sender, length, fixed_payload: self.stream.fixed_payload };
            if (seed != self.stream.seed || sender != self.stream.sender) && check == foreign.header_check(sequence) {
                self.fail(expected, Fault::Foreign { seed, sender });
            } else {
                self.fail(expected, Fault::Header);
            }
            self.next += 1;
            expected
        } else {
            self.order(sequence, expected);
            sequence
        }
    }

    /// The order rules: `sequence` arrived where `expected` was due. Returns false when messages
    /// were lost or this one was seen before.
    fn order(&mut self, sequence: u64, expected: u64) -> bool {
        if sequence == expected {
            self.next += 1;
            true
        } else if sequence > expected {
            self.fail(expected, Fault::Lost { expected, actual: sequence });
            self.next = sequence + 1;
            false
        } else {
            // Seen before: the counter stays where it is, so the next new message is not also blamed.
            self.fail(expected, Fault::Repeated { expected, actual: sequence });
            false
        }
    }

    /// Check a sequence number that arrived without a header (verbs: the immediate data of an RDMA
    /// WRITE), as the next message of `bytes`. Returns false when messages were lost or repeated.
    pub fn check_sequence(&mut self, sequence: u64, bytes: u64) -> bool {
        let expected = self.next;
        self.verified.messages += 1;
        self.verified.bytes += bytes;
        self.order(sequence, expected)
    }

    /// The sequence number expected next.
    pub fn expected(&self) -> u64 {
        self.next
    }

    /// Count a fault found outside the message rules (a region that still holds an older message
    /// than its completion announced).
    pub fn report(&mut self, fault: Fault) {
        let expected = self.next.saturating_sub(1);
        self.fail(expected, fault);
    }
}

/// One message being checked piece by piece ([`Verifier::begin`]).
#[derive(Debug)]
#[must_use = "a content fault is counted by `end`"]
pub struct Arrival<'a> {
    verifier: &'a mut Verifier,
    expected: u64,
    /// First payload word; `None` when nothing more is checked (a short message, a wrong length).
    base: Option<u64>,
    /// Payload bytes seen so far.
    offset: usize,
    wrong_bytes: u64,
    /// The first wrong payload word: (offset in the payload, expected, actual).
    first: Option<(usize, u64, u64)>,
    before: u64,
}

impl Arrival<'_> {
    /// The next piece of the payload. Every piece but the last must be a whole number of words.
    pub fn payload(&mut self, chunk: &[u8]) {
        let Some(base) = self.base else { return };
        debug_assert!(self.offset % 8 == 0, "payload pieces must start on a word");
        let start = base.wrapping_add(((self.offset / 8) as u64).wrapping_mul(STEP));
        if differs(chunk, start) {
            let (first, wrong_bytes) = locate(chunk, start);
            self.wrong_bytes += wrong_bytes;
            if self.first.is_none() {
                self.first = first.map(|(offset, expected, actual)| (self.offset + offset, expected, actual));
            }
        }
        self.offset += chunk.len();
        self.verifier.verified.bytes += chunk.len() as u64;
    }

    /// Finish the message: true when nothing was wrong with it.
    pub fn end(self) -> bool {
        if self.wrong_bytes > 0 {
            let (offset, expected, actual) = self.first.unwrap_or((0, 0, 0));
            let fault =
                Fault::Content { offset: HEADER_BYTES + offset, expected, actual, wrong_bytes: self.wrong_bytes };
            self.verifier.fail(self.expected, fault);
        }
        self.verifier.verified.errors() == self.before
    }
}

/// A sender's [`SLOTS`] pre-filled messages; [`Sender::next_message`] stamps the header of the next
/// sequence into one of them and hands it out.
#[derive(Debug, Clone)]
pub struct Sender {
    stream: Stream,
    messages: Vec<Vec<u8>>,
    next: u64,
}

impl Sender {
    pub fn new(stream: Stream) -> Sender {
        let messages = (0..SLOTS)
            .map(|slot| {
                let mut message = vec![0u8; stream.length];
                stream.fill(&mut message, slot);
                message
            })
            .collect();
        Sender { stream, messages, next: 0 }
    }

    /// The next message to send (its header stamped with the next sequence number).
    pub fn next_message(&mut self) -> &[u8] {
        let sequence = self.next;
        self.next += 1;
        let slot = (sequence % SLOTS) as usize;
        let message = &mut self.messages[slot];
        self.stream.stamp(message, sequence);
        message
    }
}

/// The word-wise content pattern for a region both sides fill without exchanging data (verbs
/// one-sided operations, where the same region is written by many messages): payload words from a
/// fixed base, no header.
pub fn fill_region(bytes: &mut [u8]) {
    write_words(bytes, REGION_BASE);
}

/// Bytes of `bytes` that differ from [`fill_region`]'s pattern (0 when equal), and the first
/// differing word when any.
pub fn check_region(bytes: &[u8]) -> (u64, Option<(usize, u64, u64)>) {
    check_region_from(bytes, 0)
}

/// [`check_region`] for a piece of a region that starts at its word `first_word` (a region read in
/// chunks).
pub fn check_region_from(bytes: &[u8], first_word: u64) -> (u64, Option<(usize, u64, u64)>) {
    let base = REGION_BASE.wrapping_add(first_word.wrapping_mul(STEP));
    if !differs(bytes, base) {
        return (0, None);
    }
    let (first, wrong) = locate(bytes, base);
    (wrong, first)
}

const REGION_BASE: u64 = 0x6661_6272_6963_646F;

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(length: usize) -> Stream {
        Stream::new(0x1234_5678_9ABC_DEF0, 7, length)
    }

    /// The check that `--validate` used before: the same byte pattern in every message.
    fn old_pattern_check(message: &[u8]) -> bool {
        message.iter().enumerate().all(|(i, b)| *b == (i.wrapping_mul(31).wrapping_add(7) % 251) as u8)
    }

    fn old_pattern(length: usize) -> Vec<u8> {
        (0..length).map(|i| (i.wrapping_mul(31).wrapping_add(7) % 251) as u8).collect()
    }

    #[test]
    fn a_good_stream_verifies_for_every_length() {
        for length in [1, 7, 8, 31, 32, 33, 40, 4096, 65536 + 5] {
            let mut sender = Sender::new(stream(length));
            let mut verifier = Verifier::new(stream(length));
            for _ in 0..10 {
                assert!(verifier.check(sender.next_message()), "length {length}: {:?}", verifier.first);
            }
            assert_eq!(verifier.verified.messages, 10);
            assert_eq!(verifier.verified.bytes, 10 * length as u64);
            assert_eq!(verifier.verified.errors(), 0);
        }
    }

    #[test]
    fn a_flipped_bit_is_found_with_its_offset_and_words() {
        let mut sender = Sender::new(stream(4096));
        let mut message = sender.next_message().to_vec();
        message[1000] ^= 0x10;
        let mut verifier = Verifier::new(stream(4096));
        assert!(!verifier.check(&message));
        let corruption = verifier.first.expect("reported");
        match corruption.fault {
            Fault::Content { offset, expected, actual, wrong_bytes } => {
                assert_eq!(offset, 1000 - (1000 - HEADER_BYTES) % 8);
                assert_eq!(expected ^ actual, 0x10u64 << (8 * ((1000 - HEADER_BYTES) % 8)));
                assert_eq!(wrong_bytes, 1);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(verifier.verified.wrong_bytes, 1);
    }

    /// The old pattern is the same in every message: a lost message, a duplicate, a reorder and a
    /// stale buffer all pass it. Each must fail the new check.
    #[test]
    fn lost_repeated_reordered_and_stale_messages_fail_where_the_old_pattern_passed() {
        let old = old_pattern(4096);
        assert!(old_pattern_check(&old) && old_pattern_check(&old), "the old check cannot tell messages apart");

        let mut sender = Sender::new(stream(4096));
        let messages: Vec<Vec<u8>> = (0..6).map(|_| sender.next_message().to_vec()).collect();

        let mut lost = Verifier::new(stream(4096));
        assert!(lost.check(&messages[0]));
        assert!(!lost.check(&messages[2]));
        assert_eq!(lost.first.as_ref().map(|c| c.fault.clone()), Some(Fault::Lost { expected: 1, actual: 2 }));
        assert!(lost.check(&messages[3]), "the stream resynchronises after a loss");
        assert_eq!(lost.verified.sequence_errors, 1);

        let mut duplicated = Verifier::new(stream(4096));
        assert!(duplicated.check(&messages[0]));
        assert!(!duplicated.check(&messages[0]));
        assert!(duplicated.check(&messages[1]), "a duplicate does not shift the expectation");

        let mut reordered = Verifier::new(stream(4096));
        assert!(reordered.check(&messages[0]));
        assert!(!reordered.check(&messages[2]));
        assert!(!reordered.check(&messages[1]));

        // A stale buffer: the new header arrived, the payload is still the previous message's.
        let mut stale = messages[1].clone();
        stale[..HEADER_BYTES].copy_from_slice(&messages[2][..HEADER_BYTES]);
        let mut verifier = Verifier::new(stream(4096));
        assert!(verifier.check(&messages[0]) && verifier.check(&messages[1]));
        assert!(!verifier.check(&stale));
        assert!(matches!(verifier.first.map(|c| c.fault), Some(Fault::Content { offset: HEADER_BYTES, .. })));
    }

    #[test]
    fn foreign_messages_and_damaged_headers_are_told_apart() {
        let mut other = Sender::new(Stream::new(99, 7, 256));
        let mut verifier = Verifier::new(stream(256));
        assert!(!verifier.check(other.next_message()));
        assert!(matches!(verifier.first.clone().map(|c| c.fault), Some(Fault::Foreign { seed: 99, sender: 7 })));

        let mut sender = Sender::new(stream(256));
        let mut message = sender.next_message().to_vec();
        message[3] ^= 1;
        let mut verifier = Verifier::new(stream(256));
        assert!(!verifier.check(&message));
        assert_eq!(verifier.first.map(|c| c.fault), Some(Fault::Header));

        let mut verifier = Verifier::new(stream(256));
        assert!(!verifier.check(&message[..100]));
        assert_eq!(verifier.first.map(|c| c.fault), Some(Fault::Length { expected: 256, actual: 100 }));
    }

    #[test]
    fn short_messages_carry_their_sequence_in_the_content() {
        let mut sender = Sender::new(stream(8));
        let first = sender.next_message().to_vec();
        let mut verifier = Verifier::new(stream(8));
        assert!(verifier.check(&first));
        assert!(!verifier.check(&first), "the same 8 bytes twice is a repeat");
    }

    #[test]
    fn shifted_data_fails() {
        let mut sender = Sender::new(stream(1024));
        let message = sender.next_message().to_vec();
        let mut shifted = message.clone();
        shifted[HEADER_BYTES..].rotate_left(8);
        let mut verifier = Verifier::new(stream(1024));
        assert!(!verifier.check(&shifted));
    }

    /// Verbs: each message's header lands in a receive slot of its own, its payload in one region
    /// shared by all. A slot the adapter never wrote (its completion reported without the data)
    /// still holds an earlier message's header; the old pattern check, the same bytes in every
    /// message, passes it.
    #[test]
    fn a_header_slot_left_from_an_earlier_message_is_caught_piece_by_piece() {
        let stream = stream(4096).with_fixed_payload();
        let messages: Vec<Vec<u8>> = (0..4)
            .map(|sequence| {
                let mut message = vec![0u8; 4096];
                stream.fill(&mut message, sequence);
                message
            })
            .collect();
        assert_eq!(messages[0][HEADER_BYTES..], messages[3][HEADER_BYTES..], "one payload for all");
        let old = old_pattern(4096);
        assert!(old_pattern_check(&old), "the old check passes a stale slot: it looks like any other");

        let check = |verifier: &mut Verifier, header: &[u8], payload: &[u8]| {
            let mut arrival = verifier.begin(header, HEADER_BYTES + payload.len());
            for chunk in payload.chunks(4096 / 8) {
                arrival.payload(chunk);
            }
            arrival.end()
        };
        let payload = &messages[0][HEADER_BYTES..];
        let mut verifier = Verifier::new(stream);
        assert!(check(&mut verifier, &messages[0][..HEADER_BYTES], payload));
        assert!(check(&mut verifier, &messages[1][..HEADER_BYTES], payload));
        // Slot reuse: message 2's slot still holds message 0's header.
        assert!(!check(&mut verifier, &messages[0][..HEADER_BYTES], payload));
        assert_eq!(verifier.first.clone().map(|c| c.fault), Some(Fault::Repeated { expected: 2, actual: 0 }));
        assert!(check(&mut verifier, &messages[2][..HEADER_BYTES], payload), "the next one is fine again");
        // A flipped payload bit in one chunk is found at its offset in the message.
        let mut bad = payload.to_vec();
        bad[3000] ^= 4;
        assert!(!check(&mut verifier, &messages[3][..HEADER_BYTES], &bad));
        assert_eq!(verifier.verified.wrong_bytes, 1);
        assert_eq!(verifier.verified.messages, 5);
        assert_eq!(verifier.verified.bytes, 5 * 4096);
    }

    /// Verbs WRITE with immediate: the sequence arrives without a header.
    #[test]
    fn sequences_without_headers_count_losses_and_repeats() {
        let mut verifier = Verifier::new(stream(64));
        assert!(verifier.check_sequence(0, 0) && verifier.check_sequence(1, 0));
        assert!(!verifier.check_sequence(3, 0), "2 was lost");
        assert!(!verifier.check_sequence(3, 0), "3 again");
        assert!(verifier.check_sequence(4, 0));
        assert_eq!(verifier.verified.sequence_errors, 2);
        verifier.report(Fault::Stale { announced: 4, found: 3 });
        assert_eq!(verifier.verified.sequence_errors, 3);
        let stale = Corruption { sequence: 4, fault: Fault::Stale { announced: 4, found: 3 } };
        assert!(stale.to_string().contains("still holds message 3"), "{stale}");
    }

    #[test]
    fn regions_check_word_wise() {
        let mut region = vec![0u8; 1003];
        fill_region(&mut region);
        assert_eq!(check_region(&region), (0, None));
        region[500] ^= 0xff;
        let (wrong, first) = check_region(&region);
        assert_eq!(wrong, 1);
        assert_eq!(first.map(|(offset, ..)| offset), Some(496));
        // Read in chunks: each chunk checked from its first word.
        let (head, tail) = region.split_at(496);
        assert_eq!(check_region_from(head, 0).0, 0);
        assert_eq!(check_region_from(tail, 62).0, 1);
    }

    #[test]
    fn corruptions_read_as_sentences() {
        let corruption =
            Corruption { sequence: 5, fault: Fault::Content { offset: 64, expected: 1, actual: 2, wrong_bytes: 1 } };
        assert_eq!(
            corruption.to_string(),
            "message 5: 1 byte(s) wrong, first at offset 64: expected 0x0000000000000001, got 0x0000000000000002"
        );
    }
}
