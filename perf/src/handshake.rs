//! The side channel between client and server: a TCP connection carrying length-prefixed JSON frames.
//! It opens with a versioned handshake that also checks both sides run compatible parameters (and names
//! the one that differs), carries the verbs connection parameters of every queue pair, and closes with
//! each side's counts so the client reports what the server saw.

use std::io::{Read, Write};
use std::net::TcpStream;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::params::RunParameters;
use crate::PerfError;

/// Bumped when a frame's meaning changes; both sides must run the same version.
pub const PROTOCOL_VERSION: u32 = 1;
pub const MAGIC: &str = "fabricdoctor-perf";
/// Frames are small (parameters, a few endpoint descriptions); a larger length is a stranger or garbage.
const MAX_FRAME_BYTES: u32 = 1 << 20;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "frame", rename_all = "snake_case", deny_unknown_fields)]
pub enum Frame {
    Hello {
        magic: String,
        version: u32,
        tool_version: String,
        parameters: RunParameters,
        /// Transport connection parameters per queue pair (verbs: QPN, PSN, GID, rkey, ...).
        endpoints: Vec<serde_json::Value>,
        /// The session's ticket, where the server was started for one measurement (a burn-in
        /// step): proof that the client is the one the coordinator sent, checked before anything
        /// is allocated.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ticket: Option<String>,
    },
    Accept {
        version: u32,
        tool_version: String,
        /// The server's data endpoints (verbs: per queue pair; TCP: the data port to dial).
        endpoints: Vec<serde_json::Value>,
    },
    Reject {
        reason: String,
    },
    /// The client posted its last message (`messages` in all).
    Done {
        messages: u64,
    },
    /// What the server saw, and in a bidirectional run what it sent back (messages, seconds).
    Report {
        messages: u64,
        validation_errors: u64,
        #[serde(default)]
        sent: Option<(u64, f64)>,
        /// What the server verified (absent from servers that predate it).
        #[serde(default)]
        verified: crate::integrity::Verified,
        #[serde(default)]
        first_corruption: Option<String>,
    },
}

/// Write one frame: 4-byte big-endian length, then JSON.
pub fn write_frame(stream: &mut TcpStream, peer: &str, frame: &Frame) -> Result<(), PerfError> {
    write_message(stream, peer, frame)
}

/// Write any serializable message with the frame encoding (the collectives' control channel uses it).
pub fn write_message<T: Serialize>(stream: &mut impl Write, peer: &str, frame: &T) -> Result<(), PerfError> {
    let body =
        serde_json::to_vec(frame).map_err(|e| PerfError::Handshake { peer: peer.into(), reason: e.to_string() })?;
    let length = u32::try_from(body.len()).ok().filter(|l| *l <= MAX_FRAME_BYTES).ok_or_else(|| {
        PerfError::Handshake { peer: peer.into(), reason: format!("frame of {} bytes is too large", body.len()) }
    })?;
    let io = |source| PerfError::Io { peer: peer.into(), during: "side-channel write", cause: source };
    stream.write_all(&length.to_be_bytes()).map_err(io)?;
    stream.write_all(&body).map_err(|source| PerfError::Io {
        peer: peer.into(),
        during: "side-channel write",
        cause: source,
    })?;
    Ok(())
}

/// Read one frame; the stream's read timeout bounds the wait.
pub fn read_frame(stream: &mut TcpStream, peer: &str, during: &'static str) -> Result<Frame, PerfError> {
    read_message(stream, peer, during)
}

/// Read any message written by [`write_message`].
pub fn read_message<T: DeserializeOwned>(
    stream: &mut TcpStream,
    peer: &str,
    during: &'static str,
) -> Result<T, PerfError> {
    let mut length = [0u8; 4];
    read_exact(stream, &mut length, peer, during)?;
    let length = u32::from_be_bytes(length);
    if length > MAX_FRAME_BYTES {
        return Err(PerfError::Handshake {
            peer: peer.into(),
            reason: format!("frame length {length} is not a fabricdoctor perf peer (wrong port or another program?)"),
        });
    }
    let mut body = vec![0u8; length as usize];
    read_exact(stream, &mut body, peer, during)?;
    decode(&body, peer)
}

/// Decode one whole frame as [`read_message`] reads it (length, bound, body), from bytes already
/// received: the decoder alone, for the fuzz harness and for peers' bytes held in memory.
pub fn decode_frame<T: DeserializeOwned>(bytes: &[u8], peer: &str) -> Result<T, PerfError> {
    let closed = || PerfError::PeerClosed { peer: peer.into(), during: "decode" };
    let (length, body) = bytes.split_first_chunk::<4>().ok_or_else(closed)?;
    let length = u32::from_be_bytes(*length);
    if length > MAX_FRAME_BYTES {
        return Err(PerfError::Handshake {
            peer: peer.into(),
            reason: format!("frame length {length} is not a fabricdoctor perf peer (wrong port or another program?)"),
        });
    }
    let body = body.get(..length as usize).ok_or_else(closed)?;
    decode(body, peer)
}

fn decode<T: DeserializeOwned>(body: &[u8], peer: &str) -> Result<T, PerfError> {
    serde_json::from_slice(body)
        .map_err(|e| PerfError::Handshake { peer: peer.into(), reason: format!("malformed frame: {e}") })
}

fn read_exact(stream: &mut TcpStream, buffer: &mut [u8], peer: &str, during: &'static str) -> Result<(), PerfError> {
    stream.read_exact(buffer).map_err(|source| match source.kind() {
        // A peer process that exits with bytes it never read still in its socket is answered by its
        // kernel with a reset, not a close (RFC 1122 4.2.2.13; tcp(7)): a killed rank whose peers had
        // sent it a word reads as ECONNRESET on their side. Either way the peer is gone, and callers
        // that name the rank that stopped (the collectives' departure words) must see it as such.
        std::io::ErrorKind::UnexpectedEof
        | std::io::ErrorKind::ConnectionReset
        | std::io::ErrorKind::ConnectionAborted => PerfError::PeerClosed { peer: peer.into(), during },
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => PerfError::PeerSilent {
            peer: peer.into(),
            waited: stream.read_timeout().ok().flatten().unwrap_or_default(),
        },
        _ => PerfError::Io { peer: peer.into(), during, cause: source },
    })
}

/// The server's constraints: any field the server operator fixed must match the client's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerConstraints {
    pub operation: Option<crate::Operation>,
    pub test: Option<crate::TestKind>,
    pub transport: Option<crate::TransportKind>,
    pub size: Option<u64>,
    pub iterations: Option<u64>,
    /// The ticket a client must present (a server started for one burn-in step); `None`: any
    /// client within the limits (a `perf server` an operator started by hand).
    pub ticket: Option<String>,
    /// How long the client may take to send its hello (a stranger that connects and says
    /// nothing holds the server no longer); `None`: the session's timeout.
    pub hello_timeout: Option<std::time::Duration>,
}

/// Equal, in time that does not depend on where two tickets first differ.
pub(crate) fn same_ticket(presented: &str, expected: &str) -> bool {
    let (a, b) = (presented.as_bytes(), expected.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Check a client's Hello against this server: magic, version, then every fixed parameter, naming
/// the first that differs.
pub fn check_hello(frame: &Frame, constraints: &ServerConstraints) -> Result<RunParameters, PerfError> {
    let Frame::Hello { magic, version, parameters, ticket, .. } = frame else {
        return Err(PerfError::Handshake { peer: "client".into(), reason: "expected a hello frame".into() });
    };
    if magic != MAGIC {
        return Err(PerfError::Handshake { peer: "client".into(), reason: format!("unknown protocol {magic:?}") });
    }
    if *version != PROTOCOL_VERSION {
        return Err(PerfError::Mismatch {
            field: "protocol version",
            client: version.to_string(),
            server: PROTOCOL_VERSION.to_string(),
        });
    }
    if let Some(expected) = &constraints.ticket {
        if !ticket.as_deref().is_some_and(|presented| same_ticket(presented, expected)) {
            return Err(PerfError::NoTicket { peer: "client".into() });
        }
    }
    fn differ<T: PartialEq + std::fmt::Debug>(
        field: &'static str,
        client: &T,
        server: Option<&T>,
    ) -> Result<(), PerfError> {
        match server {
            Some(server) if server != client => {
                Err(PerfError::Mismatch { field, client: format!("{client:?}"), server: format!("{server:?}") })
            }
            _ => Ok(()),
        }
    }
    differ("operation", &parameters.operation, constraints.operation.as_ref())?;
    differ("test", &parameters.test, constraints.test.as_ref())?;
    differ("transport", &parameters.transport, constraints.transport.as_ref())?;
    differ("message size", &parameters.size, constraints.size.as_ref())?;
    if constraints.iterations.is_some() {
        differ("iterations", &parameters.iterations, Some(&constraints.iterations))?;
    }
    check_limits(parameters)?;
    Ok(parameters.clone())
}

/// What a server serves at most, whoever asks: the client's CLI ranges (perftest's) and a ceiling on
/// the memory one session may make this side allocate and register (about two message buffers per
/// connection and direction).
pub mod limits {
    pub const MAX_QUEUE_PAIRS: u32 = 64;
    pub const MAX_TX_DEPTH: u32 = 8192;
    pub const MAX_MESSAGE_BYTES: u64 = 1 << 30;
    pub const MAX_SESSION_BUFFER_BYTES: u64 = 4 << 30;
    pub const MAX_POST_LIST: u32 = 64;
}

/// How a refusal names what the client asked for ("64 queue pairs").
type Naming = fn(u64) -> String;

/// Refuse, by name and before anything is allocated or registered, parameters no server should
/// accept from the network: a count, size or depth beyond [`limits`], or their product.
pub fn check_limits(parameters: &RunParameters) -> Result<(), PerfError> {
    let refuse = |what: String| Err(PerfError::Handshake { peer: "client".into(), reason: what });
    // Each bounded field, and how the refusal names what the client asked for.
    let bounded: [(u64, u64, Naming); 4] = [
        (u64::from(parameters.queue_pairs), u64::from(limits::MAX_QUEUE_PAIRS), |n| format!("{n} queue pairs")),
        (u64::from(parameters.tx_depth), u64::from(limits::MAX_TX_DEPTH), |n| format!("tx depth {n}")),
        (parameters.size, limits::MAX_MESSAGE_BYTES, |n| format!("{n}-byte messages")),
        (u64::from(parameters.post_list), u64::from(limits::MAX_POST_LIST), |n| format!("post lists of {n}")),
    ];
    for (asked, limit, named) in bounded {
        if asked == 0 || asked > limit {
            return refuse(format!("the client asks for {}; this server serves 1 to {limit}", named(asked)));
        }
    }
    let directions = if parameters.bidirectional { 2 } else { 1 };
    let buffers = u64::from(parameters.queue_pairs) * directions * 2 * parameters.size;
    if buffers > limits::MAX_SESSION_BUFFER_BYTES {
        return refuse(format!(
            "the client's {} queue pairs x {}-byte messages need {buffers} bytes of buffers; this server \
             allocates at most {} per session",
            parameters.queue_pairs,
            parameters.size,
            limits::MAX_SESSION_BUFFER_BYTES
        ));
    }
    Ok(())
}

pub fn hello(parameters: &RunParameters, endpoints: Vec<serde_json::Value>, ticket: Option<&str>) -> Frame {
    Frame::Hello {
        magic: MAGIC.to_string(),
        version: PROTOCOL_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        parameters: parameters.clone(),
        endpoints,
        ticket: ticket.map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Operation, TestKind};

    /// A peer that exits without reading what was sent to it resets the connection; reading from it
    /// then is the peer closed, as a plain close is (the collective test that killed rank 1 of three
    /// guests had rank 0 read ECONNRESET on rank 1's control connection).
    #[test]
    fn a_peer_that_reset_the_connection_is_a_peer_closed() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let mut ours = TcpStream::connect(listener.local_addr().expect("address")).expect("connect");
        let (theirs, _) = listener.accept().expect("accept");
        ours.write_all(b"unread by the peer").expect("send");
        std::thread::sleep(std::time::Duration::from_millis(50));
        drop(theirs);
        ours.set_read_timeout(Some(std::time::Duration::from_secs(5))).expect("timeout");
        let error = read_message::<Frame>(&mut ours, "rank 1 (10.77.0.12)", "barrier").expect_err("the peer is gone");
        assert!(
            matches!(&error, PerfError::PeerClosed { peer, during: "barrier" } if peer == "rank 1 (10.77.0.12)"),
            "{error:?}"
        );
    }

    #[test]
    fn frames_round_trip_as_json() {
        let frame = hello(&RunParameters::default(), vec![serde_json::json!({"qpn": 17})], None);
        let text = serde_json::to_vec(&frame).expect("encode");
        assert_eq!(decode::<Frame>(&text, "peer").expect("decode"), frame);
        assert!(decode::<Frame>(b"{\"frame\":\"hello\"}", "peer").is_err());
        assert!(decode::<Frame>(b"\x00\x01garbage", "peer").is_err());
    }

    /// A hostile or mistaken client cannot make the server allocate or register what it likes.
    #[test]
    fn counts_sizes_and_depths_beyond_the_limits_are_refused_by_name() {
        let constraints = ServerConstraints::default();
        for (parameters, named) in [
            (RunParameters { queue_pairs: 100_000, ..RunParameters::default() }, "100000 queue pairs"),
            (RunParameters { tx_depth: 1 << 20, ..RunParameters::default() }, "tx depth 1048576"),
            (RunParameters { size: 1 << 40, ..RunParameters::default() }, "1099511627776-byte messages"),
            (RunParameters { queue_pairs: 64, size: 1 << 30, ..RunParameters::default() }, "bytes of buffers"),
        ] {
            let error = check_hello(&hello(&parameters, vec![], None), &constraints).expect_err("refused").to_string();
            assert!(error.contains(named), "{error}");
        }
        assert!(check_hello(&hello(&RunParameters::default(), vec![], None), &constraints).is_ok());
    }

    #[test]
    fn mismatches_name_the_field() {
        let mut client = RunParameters { size: 4096, ..RunParameters::default() };
        let constraints = ServerConstraints { size: Some(65536), ..ServerConstraints::default() };
        let error = check_hello(&hello(&client, vec![], None), &constraints).expect_err("size differs");
        assert_eq!(
            error.to_string(),
            "client and server parameters differ: message size is 4096 on the client but 65536 on the server"
        );
        client.size = 65536;
        client.operation = Operation::Read;
        let constraints = ServerConstraints {
            operation: Some(Operation::Write),
            test: Some(TestKind::Bandwidth),
            ..ServerConstraints::default()
        };
        let error = check_hello(&hello(&client, vec![], None), &constraints).expect_err("op differs");
        assert!(error.to_string().contains("operation is Read on the client but Write on the server"), "{error}");
    }

    #[test]
    fn other_versions_and_protocols_are_refused() {
        let Frame::Hello { parameters, endpoints, tool_version, .. } = hello(&RunParameters::default(), vec![], None)
        else {
            unreachable!("hello builds a hello frame")
        };
        let old = Frame::Hello {
            magic: MAGIC.into(),
            version: 0,
            tool_version: tool_version.clone(),
            parameters: parameters.clone(),
            endpoints: endpoints.clone(),
            ticket: None,
        };
        let error = check_hello(&old, &ServerConstraints::default()).expect_err("version");
        assert!(error.to_string().contains("protocol version is 0 on the client but 1 on the server"), "{error}");
        let stranger =
            Frame::Hello { magic: "iperf".into(), version: 1, tool_version, parameters, endpoints, ticket: None };
        assert!(check_hello(&stranger, &ServerConstraints::default()).is_err());
    }

    /// A server started for one step serves only the holder of its ticket: none, another or a
    /// prefix of it is refused, and the refusal comes before the parameters are even looked at.
    #[test]
    fn a_server_with_a_ticket_refuses_every_other_client() {
        let ticket = "ab".repeat(32);
        let constraints = ServerConstraints { ticket: Some(ticket.clone()), ..ServerConstraints::default() };
        let oversized = RunParameters { queue_pairs: 100_000, ..RunParameters::default() };
        for presented in [None, Some("cd".repeat(32)), Some(ticket[..62].to_string()), Some(format!("{ticket}00"))] {
            let error =
                check_hello(&hello(&oversized, vec![], presented.as_deref()), &constraints).expect_err("refused");
            assert!(matches!(error, PerfError::NoTicket { .. }), "{presented:?}: {error}");
        }
        let accepted = check_hello(&hello(&RunParameters::default(), vec![], Some(&ticket)), &constraints);
        assert!(accepted.is_ok(), "{accepted:?}");
        assert!(same_ticket("abc", "abc") && !same_ticket("abc", "abd") && !same_ticket("abc", "ab"));
    }
}
