//! The coordinator-agent protocol: length-prefixed JSON frames (a 4-byte big-endian length, then
//! the JSON body — the wire format of `fabricdoctor_perf::handshake`, here generic over any reader
//! and with a bound chosen per connection state: small before authentication, larger after; after
//! the handshake each frame ends with its HMAC-SHA256 tag, crate::auth::Session), the
//! authentication messages, and the closed set of test steps an agent runs. A step carries typed
//! parameters with bounds; nothing names a command, a file or an address to bind.

use std::io::{Read, Write};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use fabricdoctor_report::burnin::{CounterCategories, CounterDelta};
use fabricdoctor_report::Report;

use crate::auth::{Session, TAG_BYTES};
use crate::BurninError;

pub const MAGIC: &str = "fabricdoctor-burnin";
/// Bumped when a message's meaning changes; coordinator and agent must agree.
pub const PROTOCOL_VERSION: u32 = 3;
/// Before authentication only the hello messages are valid; they are a few hundred bytes.
pub const MAX_UNAUTHENTICATED_FRAME: u32 = 4 << 10;
/// After: a check report with a topology is the largest message (tens of KiB on an 8-GPU node).
pub const MAX_FRAME: u32 = 4 << 20;

/// Write one frame.
pub fn write_frame<T: Serialize>(stream: &mut impl Write, message: &T) -> Result<(), BurninError> {
    let body = serde_json::to_vec(message).map_err(|e| BurninError::Protocol(format!("cannot encode: {e}")))?;
    let length = u32::try_from(body.len())
        .ok()
        .filter(|l| *l <= MAX_FRAME)
        .ok_or_else(|| BurninError::Protocol(format!("message of {} bytes exceeds {MAX_FRAME}", body.len())))?;
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&length.to_be_bytes());
    frame.extend_from_slice(&body);
    stream.write_all(&frame).map_err(|e| BurninError::Io("write".into(), e))?;
    stream.flush().map_err(|e| BurninError::Io("write".into(), e))
}

/// Read one frame of at most `max` bytes and decode it. A longer length is refused before anything
/// is allocated; a body that is not the expected message is a protocol error naming the problem.
pub fn read_frame<T: DeserializeOwned>(stream: &mut impl Read, max: u32) -> Result<T, BurninError> {
    let mut length = [0u8; 4];
    stream.read_exact(&mut length).map_err(|e| BurninError::Io("read".into(), e))?;
    let length = u32::from_be_bytes(length);
    if length > max {
        return Err(BurninError::Oversized { length, max });
    }
    let mut body = vec![0u8; length as usize];
    stream.read_exact(&mut body).map_err(|e| BurninError::Io("read".into(), e))?;
    serde_json::from_slice(&body).map_err(|e| BurninError::Protocol(format!("malformed message: {e}")))
}

/// Write one frame of an authenticated session: the length of the body, the body, then its tag
/// (crate::auth::Session; the length counts the body only).
pub fn write_sealed<T: Serialize>(
    stream: &mut impl Write,
    session: &mut Session,
    message: &T,
) -> Result<(), BurninError> {
    let body = serde_json::to_vec(message).map_err(|e| BurninError::Protocol(format!("cannot encode: {e}")))?;
    let length = u32::try_from(body.len())
        .ok()
        .filter(|l| *l <= MAX_FRAME)
        .ok_or_else(|| BurninError::Protocol(format!("message of {} bytes exceeds {MAX_FRAME}", body.len())))?;
    let tag = session.seal(&body);
    let mut frame = Vec::with_capacity(4 + body.len() + TAG_BYTES);
    frame.extend_from_slice(&length.to_be_bytes());
    frame.extend_from_slice(&body);
    frame.extend_from_slice(&tag);
    stream.write_all(&frame).map_err(|e| BurninError::Io("write".into(), e))?;
    stream.flush().map_err(|e| BurninError::Io("write".into(), e))
}

/// Read one frame of an authenticated session and check its tag before decoding anything: a frame
/// that fails is `BurninError::Auth` (the caller logs it and closes the session).
pub fn read_sealed<T: DeserializeOwned>(
    stream: &mut impl Read,
    session: &mut Session,
    max: u32,
) -> Result<T, BurninError> {
    let mut length = [0u8; 4];
    stream.read_exact(&mut length).map_err(|e| BurninError::Io("read".into(), e))?;
    let length = u32::from_be_bytes(length);
    if length > max {
        return Err(BurninError::Oversized { length, max });
    }
    let mut frame = vec![0u8; length as usize + TAG_BYTES];
    stream.read_exact(&mut frame).map_err(|e| BurninError::Io("read".into(), e))?;
    let (body, tag) = frame.split_at(length as usize);
    session.open(body, tag)?;
    serde_json::from_slice(body).map_err(|e| BurninError::Protocol(format!("malformed message: {e}")))
}

/// Authentication, in order: Hello (coordinator), Challenge (agent), Proof (coordinator), Welcome
/// or Refused (agent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "message", rename_all = "snake_case", deny_unknown_fields)]
pub enum Auth {
    Hello {
        magic: String,
        version: u32,
        nonce: String,
    },
    /// The agent's nonce, and nothing derived from the token: the coordinator proves first.
    Challenge {
        nonce: String,
    },
    Proof {
        proof: String,
    },
    Welcome {
        hostname: String,
        tool_version: String,
        rails: Vec<RailAddress>,
        /// What this agent will do for one step; it refuses more, by name, before allocating.
        limits: AgentLimits,
    },
    Refused {
        reason: String,
    },
}

/// An agent's rail: a name, the address its data listeners bind and, for measurements over verbs,
/// the RDMA device that carries it (`None`: the device whose GID table holds the address).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RailAddress {
    pub name: String,
    pub address: std::net::IpAddr,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The rail's physical link rate as the agent read it when the coordinator connected, so the
    /// coordinator can expect an absolute figure (`None` from agents of an earlier version).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<RailLink>,
}

/// A rail's link rate, or why it has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RailLink {
    /// 10^9 bits per second; `None` when the rail has no physical rate (a virtual interface, a link
    /// whose speed the driver does not know).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gbps: Option<f64>,
    /// Where the rate was read ("mlx5_0 port 1 rate 400 Gb/sec (4X NDR)", "eth2 speed 100000 Mb/s"),
    /// or why there is none.
    pub detail: String,
}

/// The data path of a burn-in's measurements: TCP sockets, or RDMA verbs on the rail's device. The
/// control connections and the collectives' rendezvous are TCP either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataTransport {
    #[default]
    Tcp,
    Verbs,
}

impl DataTransport {
    pub fn name(self) -> &'static str {
        match self {
            DataTransport::Tcp => "tcp",
            DataTransport::Verbs => "verbs",
        }
    }
}

/// Check an RDMA device name as it appears under /sys/class/infiniband (`mlx5_0`, `rxe0`): a short
/// name of letters, digits, `_`, `-` and `.`, never a path.
pub fn validate_device(name: &str) -> Result<(), String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if name.is_empty() || name.len() > limits::MAX_NAME || !name.chars().all(allowed) || name.starts_with('.') {
        return Err(format!("RDMA device name {name:?}: expected 1 to {} of [A-Za-z0-9_.-]", limits::MAX_NAME));
    }
    Ok(())
}

/// How one pair (or a host with itself) is measured: a bandwidth test in duration mode, then a
/// latency test, both over the perf generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasureSpec {
    /// The class of service of the verbs queue pairs (ignored over TCP).
    #[serde(default)]
    pub traffic: TrafficSpec,
    pub bandwidth_ms: u64,
    pub message_bytes: u64,
    pub queue_pairs: u32,
    /// Messages in flight per connection (perftest -t); each holds a buffer of message_bytes.
    pub tx_depth: u32,
    pub latency_iterations: u64,
    pub latency_bytes: u64,
    pub validate: bool,
    #[serde(default)]
    pub transport: DataTransport,
}

/// The traffic class, service level and GID index the playbook (or NCCL_IB_TC, NCCL_IB_SL,
/// NCCL_IB_GID_INDEX on the coordinator) asks for, so burn-in traffic rides the queue a training job's
/// NCCL traffic rides; `None` keeps the agent's default (class 0, SL 0, the rail's RoCE v2 GID).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrafficSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic_class: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_level: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gid_index: Option<u32>,
}

/// Limits a step's parameters must be within; an agent refuses anything else.
pub mod limits {
    pub const MAX_MEASURE_MS: u64 = 10 * 60 * 1000;
    pub const MAX_MESSAGE_BYTES: u64 = 64 << 20;
    pub const MAX_QUEUE_PAIRS: u32 = 16;
    pub const MAX_TX_DEPTH: u32 = 1024;
    /// Buffers a bandwidth test may hold on each side.
    pub const MAX_BUFFER_BYTES: u64 = 1 << 30;
    pub const MAX_LATENCY_ITERATIONS: u64 = 1_000_000;
    pub const MAX_COLLECTIVE_BYTES: u64 = 256 << 20;
    pub const MAX_COLLECTIVE_ITERATIONS: u32 = 1000;
    pub const MAX_WORLD: usize = 4096;
    pub const MAX_TIMEOUT_S: u64 = 3600;
    pub const MAX_NAME: usize = 64;
    /// Rails measured at once by one step (HGX nodes have 8 compute NICs; 16 leaves room).
    pub const MAX_RAILS: usize = 16;
}

/// What an agent will do for one step, announced in its welcome so a coordinator can see a run
/// the agent would refuse before it starts; the agent enforces the same figures on every step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentLimits {
    pub max_queue_pairs: u32,
    pub max_message_bytes: u64,
    pub max_tx_depth: u32,
    /// Memory one side of a step may register (pin): message_bytes x tx_depth x queue_pairs.
    pub max_buffer_bytes: u64,
    pub max_collective_bytes: u64,
    /// Coordinator sessions open at once (`agent --max-connections`).
    pub max_sessions: u32,
}

impl AgentLimits {
    /// This build's limits ([`limits`]), with the agent's session count.
    pub fn of_this_build(max_sessions: u32) -> AgentLimits {
        AgentLimits {
            max_queue_pairs: limits::MAX_QUEUE_PAIRS,
            max_message_bytes: limits::MAX_MESSAGE_BYTES,
            max_tx_depth: limits::MAX_TX_DEPTH,
            max_buffer_bytes: limits::MAX_BUFFER_BYTES,
            max_collective_bytes: limits::MAX_COLLECTIVE_BYTES,
            max_sessions,
        }
    }

    /// Whether a measurement of `spec` fits; the error names the field, its value and the limit.
    pub fn admit(&self, spec: &MeasureSpec) -> Result<(), String> {
        let max_message = self.max_message_bytes;
        if spec.message_bytes == 0 || spec.message_bytes > max_message {
            return Err(format!("message_bytes {} outside 1..={max_message}", spec.message_bytes));
        }
        if spec.latency_bytes == 0 || spec.latency_bytes > max_message {
            return Err(format!("latency_bytes {} outside 1..={max_message}", spec.latency_bytes));
        }
        if spec.queue_pairs == 0 || spec.queue_pairs > self.max_queue_pairs {
            return Err(format!("queue_pairs {} outside 1..={}", spec.queue_pairs, self.max_queue_pairs));
        }
        if spec.tx_depth == 0 || spec.tx_depth > self.max_tx_depth {
            return Err(format!("tx_depth {} outside 1..={}", spec.tx_depth, self.max_tx_depth));
        }
        let buffers =
            spec.message_bytes.saturating_mul(u64::from(spec.tx_depth)).saturating_mul(u64::from(spec.queue_pairs));
        if buffers > self.max_buffer_bytes {
            return Err(format!(
                "message_bytes x tx_depth x queue_pairs = {buffers} bytes of buffers exceeds {}",
                self.max_buffer_bytes
            ));
        }
        Ok(())
    }
}

impl MeasureSpec {
    pub fn validate(&self) -> Result<(), String> {
        use limits::*;
        if self.bandwidth_ms == 0 || self.bandwidth_ms > MAX_MEASURE_MS {
            return Err(format!("bandwidth_ms {} outside 1..={MAX_MEASURE_MS}", self.bandwidth_ms));
        }
        AgentLimits::of_this_build(0).admit(self)?;
        if self.latency_iterations == 0 || self.latency_iterations > MAX_LATENCY_ITERATIONS {
            return Err(format!("latency_iterations {} outside 1..={MAX_LATENCY_ITERATIONS}", self.latency_iterations));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CollectiveKind {
    Alltoall,
    Allreduce,
}

impl CollectiveKind {
    pub fn name(self) -> &'static str {
        match self {
            CollectiveKind::Alltoall => "alltoall",
            CollectiveKind::Allreduce => "allreduce",
        }
    }
}

/// One rail of a [`Request::MeasureRails`]: measure from this agent's `rail` to a peer serving at
/// `server:port`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RailTarget {
    pub rail: String,
    pub server: std::net::IpAddr,
    pub port: u16,
    /// The serving agent's ticket for this session ([`crate::auth::Session::ticket`]).
    pub ticket: String,
}

/// The steps an agent runs. Anything else does not parse.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    // Empty struct variants, not unit variants: serde's internally tagged unit variants would accept
    // (and ignore) extra keys, and every unknown key must be refused.
    /// Liveness.
    Ping {},
    /// `fabricdoctor check` on the agent's node, with its topology; with the run's `--profile`, the
    /// node is judged against its model too (`profile.inventory`, `profile.pcie`, the compute ports'
    /// rate), as `fabricdoctor check --profile` does on the node itself.
    Check {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        profile: Option<Box<fabricdoctor_checks::profile::NodeProfile>>,
    },
    /// Sample the counters; the answer holds the growth since this connection's previous sample.
    SampleCounters {},
    /// Bandwidth and latency from the host to itself on a rail.
    Loopback { rail: String, spec: MeasureSpec },
    /// Listen on a rail for `sessions` perf sessions (bandwidth then latency) and serve them in the
    /// background; the answer gives the port.
    Serve {
        rail: String,
        sessions: u32,
        timeout_s: u64,
        #[serde(default)]
        transport: DataTransport,
        #[serde(default)]
        traffic: TrafficSpec,
        /// The step's nonce: the agent serves only clients presenting the session's ticket over
        /// it ([`crate::auth::Session::ticket`] of `rail` and this nonce).
        ticket_nonce: String,
    },
    /// Measure against a peer agent that is serving; over verbs from this agent's `rail`.
    Measure {
        server: std::net::IpAddr,
        port: u16,
        spec: MeasureSpec,
        timeout_s: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rail: Option<String>,
        /// The serving agent's ticket for the session.
        ticket: String,
    },
    /// Measure on several rails at once, one peer serving on each (every NIC of the host busy
    /// together, as in training); the answer holds one result per target, in order.
    MeasureRails { targets: Vec<RailTarget>, spec: MeasureSpec, timeout_s: u64 },
    /// A free port on a rail for a collective's rendezvous (rank 0).
    ReservePort { rail: String },
    /// Take part in one collective as `rank` of `world`, rank 0 at `master`.
    Collective {
        collective: CollectiveKind,
        rank: usize,
        world: usize,
        master: std::net::IpAddr,
        master_port: u16,
        bytes: u64,
        iterations: u32,
        timeout_s: u64,
        #[serde(default)]
        transport: DataTransport,
        #[serde(default)]
        traffic: TrafficSpec,
        /// The rail whose device carries the collective over verbs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rail: Option<String>,
        /// The step's secret, the same for every rank: joins and data connections without it are
        /// dropped, so no stranger can take a rank's place.
        ticket: String,
    },
}

impl Request {
    /// Check the bounds; an agent answers a violation with an error and runs nothing.
    pub fn validate(&self) -> Result<(), String> {
        use limits::*;
        let timeout = |t: u64| {
            if t == 0 || t > MAX_TIMEOUT_S {
                Err(format!("timeout_s {t} outside 1..={MAX_TIMEOUT_S}"))
            } else {
                Ok(())
            }
        };
        let rail = |r: &str| {
            if r.is_empty() || r.len() > MAX_NAME {
                Err(format!("rail name of {} bytes", r.len()))
            } else {
                Ok(())
            }
        };
        match self {
            Request::Ping {} | Request::SampleCounters {} | Request::Check { profile: None } => Ok(()),
            Request::Check { profile: Some(profile) } => {
                if profile.name.len() > MAX_NAME || profile.rails.len() > MAX_RAILS {
                    return Err(format!(
                        "profile of {} name bytes and {} rails",
                        profile.name.len(),
                        profile.rails.len()
                    ));
                }
                profile.validate("from the coordinator")
            }
            Request::Loopback { rail: r, spec } => rail(r).and_then(|_| spec.validate()),
            Request::Serve { rail: r, sessions, timeout_s, ticket_nonce, .. } => {
                rail(r)?;
                timeout(*timeout_s)?;
                if !(16..=64).contains(&ticket_nonce.len()) || !ticket_nonce.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(format!(
                        "ticket_nonce of {} characters: expected 16 to 64 hex digits",
                        ticket_nonce.len()
                    ));
                }
                if *sessions == 0 || *sessions > 4 {
                    return Err(format!("sessions {sessions} outside 1..=4"));
                }
                Ok(())
            }
            Request::Measure { port, spec, timeout_s, rail: r, ticket, .. } => {
                if let Some(r) = r {
                    rail(r)?;
                }
                if ticket.len() > MAX_NAME {
                    return Err(format!("ticket of {} bytes", ticket.len()));
                }
                if *port == 0 {
                    return Err("port 0".into());
                }
                timeout(*timeout_s)?;
                spec.validate()
            }
            Request::MeasureRails { targets, spec, timeout_s } => {
                if targets.is_empty() || targets.len() > MAX_RAILS {
                    return Err(format!("{} rails outside 1..={MAX_RAILS}", targets.len()));
                }
                for target in targets {
                    rail(&target.rail)?;
                    if target.port == 0 {
                        return Err(format!("port 0 on rail {}", target.rail));
                    }
                    if target.ticket.len() > MAX_NAME {
                        return Err(format!("ticket of {} bytes on rail {}", target.ticket.len(), target.rail));
                    }
                }
                timeout(*timeout_s)?;
                spec.validate()
            }
            Request::ReservePort { rail: r } => rail(r),
            Request::Collective { rank, world, master_port, bytes, iterations, timeout_s, rail: r, ticket, .. } => {
                timeout(*timeout_s)?;
                if !(16..=MAX_NAME).contains(&ticket.len()) {
                    return Err(format!("ticket of {} bytes outside 16..={MAX_NAME}", ticket.len()));
                }
                if let Some(r) = r {
                    rail(r)?;
                }
                if *world < 2 || *world > MAX_WORLD || rank >= world {
                    return Err(format!("rank {rank} of world {world}"));
                }
                if *master_port == 0 {
                    return Err("master_port 0".into());
                }
                if *bytes == 0 || *bytes > MAX_COLLECTIVE_BYTES {
                    return Err(format!("bytes {bytes} outside 1..={MAX_COLLECTIVE_BYTES}"));
                }
                if *iterations == 0 || *iterations > MAX_COLLECTIVE_ITERATIONS {
                    return Err(format!("iterations {iterations} outside 1..={MAX_COLLECTIVE_ITERATIONS}"));
                }
                Ok(())
            }
        }
    }

    /// A short name for logs.
    pub fn name(&self) -> &'static str {
        match self {
            Request::Ping {} => "ping",
            Request::Check { .. } => "check",
            Request::SampleCounters {} => "sample_counters",
            Request::Loopback { .. } => "loopback",
            Request::Serve { .. } => "serve",
            Request::Measure { .. } => "measure",
            Request::MeasureRails { .. } => "measure_rails",
            Request::ReservePort { .. } => "reserve_port",
            Request::Collective { .. } => "collective",
        }
    }
}

/// What a pair measured.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measured {
    /// Average bandwidth over the duration, Gb/s.
    pub bw_gbps: Option<f64>,
    /// Median one-way latency (half the round trip), microseconds.
    pub lat_us: Option<f64>,
    pub lat_p99_us: Option<f64>,
    /// Wrong bytes plus lost, repeated or reordered messages (0 when all verified).
    pub validation_errors: u64,
    /// Why a part failed (the other part may still have a number).
    pub error: Option<String>,
    /// Bytes both ends verified (validation on).
    #[serde(default)]
    pub verified_bytes: u64,
    /// The first verification failure: which message, offset, expected and actual words.
    #[serde(default)]
    pub corruption: Option<String>,
}

/// One collective over every rank, as rank 0 gathered it (nccl-tests' columns, out-of-place).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectiveSummary {
    /// The slowest rank's time per iteration (what a training step waits for), microseconds.
    pub time_us: f64,
    pub alg_bw_gbps: f64,
    pub bus_bw_gbps: f64,
    /// Wrong elements over all ranks.
    pub wrong: u64,
    pub slowest_rank: usize,
    /// Every rank's time, microseconds.
    pub rank_time_us: Vec<f64>,
    /// The algorithm the step ran with ("ring", "tree", "pairwise"); absent from older agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case", deny_unknown_fields)]
pub enum Response {
    Pong,
    Checked {
        /// `None` when the node could not be probed at all (the error says why).
        report: Option<Box<Report>>,
        topology: Option<serde_json::Value>,
        error: Option<String>,
    },
    Counters {
        /// Seconds since this connection's previous sample (`None` for the first).
        interval_s: Option<f64>,
        totals: CounterCategories,
        deltas: Vec<CounterDelta>,
        /// Counter checks that judged the interval worse than pass (ids `counters.*`).
        findings: Vec<fabricdoctor_checks::Finding>,
        /// Counter files that could not be read.
        unreadable: usize,
        /// Which congestion signals the node has counters for (absent from earlier agents).
        #[serde(default)]
        observable: crate::counters::Observable,
        /// TCP segments retransmitted and sent since the previous sample (proc/net/snmp).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tcp_retransmits: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tcp_segments_sent: Option<u64>,
        /// The fabric ports' module temperatures (absent from earlier agents).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        optics: Vec<crate::counters::ModuleTemperature>,
    },
    Measured(Measured),
    /// One result per target of a `MeasureRails`, in order.
    MeasuredRails {
        results: Vec<Measured>,
    },
    Serving {
        port: u16,
    },
    Port {
        port: u16,
    },
    /// Rank 0 answers with the summary over all ranks; the others with `None`.
    CollectiveDone {
        summary: Option<CollectiveSummary>,
    },
    /// The step was refused or failed; the agent stays up.
    Error {
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> MeasureSpec {
        MeasureSpec {
            traffic: TrafficSpec::default(),
            bandwidth_ms: 500,
            message_bytes: 1 << 20,
            queue_pairs: 2,
            tx_depth: 4,
            latency_iterations: 100,
            latency_bytes: 64,
            validate: true,
            transport: DataTransport::Tcp,
        }
    }

    /// An agent's announced limits refuse an oversized run by the field, its value and the limit,
    /// before anything is allocated; the same figures bound every step it is sent.
    #[test]
    fn oversized_queue_pairs_or_messages_are_refused_by_name() {
        let limits = AgentLimits::of_this_build(8);
        assert_eq!(limits.admit(&spec()), Ok(()));
        let many = MeasureSpec { queue_pairs: 100, ..spec() };
        assert_eq!(limits.admit(&many).expect_err("qps"), "queue_pairs 100 outside 1..=16");
        let huge = MeasureSpec { message_bytes: 1 << 40, ..spec() };
        assert!(limits.admit(&huge).expect_err("size").starts_with("message_bytes 1099511627776 outside"));
        let pinned = MeasureSpec { message_bytes: 64 << 20, tx_depth: 1024, queue_pairs: 16, ..spec() };
        assert!(limits.admit(&pinned).expect_err("memory").contains("bytes of buffers exceeds"));
        let step = Request::Loopback { rail: "default".into(), spec: many };
        assert_eq!(step.validate().expect_err("refused"), "queue_pairs 100 outside 1..=16");
    }

    /// The run's `--profile` travels with the check step, and an agent validates it as a file would
    /// be: a profile that cannot be a node model is refused by the key before anything runs.
    #[test]
    fn a_check_carries_the_profile_and_a_bad_one_is_refused_by_key() {
        let text = "name = \"m\"\n[gpus]\ncount = 8\nmodel = \"H100\"\npcie_generation = 5\npcie_width = 16\n\
                    [nics]\ncount = 8\nrate_gbps = 400.0\npcie_generation = 5\npcie_width = 16\n";
        let profile = fabricdoctor_checks::profile::NodeProfile::from_toml(text, "test").expect("profile");
        let request = Request::Check { profile: Some(Box::new(profile.clone())) };
        let wire = serde_json::to_string(&request).expect("json");
        let back: Request = serde_json::from_str(&wire).expect("parse");
        assert_eq!(back, request);
        assert_eq!(back.validate(), Ok(()));
        // Without a profile the step is the bare check, as older coordinators send it.
        let bare: Request = serde_json::from_str(r#"{"step":"check"}"#).expect("parse");
        assert_eq!(bare, Request::Check { profile: None });
        let mut zero = profile;
        zero.nics.rate_gbps = 0.0;
        let error = Request::Check { profile: Some(Box::new(zero)) }.validate().expect_err("rate 0");
        assert!(error.contains("nics.rate_gbps"), "{error}");
    }

    #[test]
    fn frames_round_trip_and_oversized_lengths_are_refused_before_allocation() {
        let mut wire = Vec::new();
        write_frame(&mut wire, &Request::Ping {}).expect("write");
        let back: Request = read_frame(&mut wire.as_slice(), MAX_FRAME).expect("read");
        assert_eq!(back, Request::Ping {});
        // A 4 GiB length from a stranger is refused by the length alone.
        let hostile = [0xffu8, 0xff, 0xff, 0xff, b'{'];
        let error = read_frame::<Request>(&mut hostile.as_slice(), MAX_FRAME).expect_err("oversized");
        assert!(error.to_string().contains("exceeds"), "{error}");
        // The unauthenticated bound is smaller than a legitimate later message.
        let mut big = Vec::new();
        write_frame(&mut big, &Auth::Refused { reason: "x".repeat(8000) }).expect("write");
        assert!(read_frame::<Auth>(&mut big.as_slice(), MAX_UNAUTHENTICATED_FRAME).is_err());
        // Truncated frames and garbage bodies are errors, not panics.
        assert!(read_frame::<Request>(&mut [0u8, 0].as_slice(), MAX_FRAME).is_err());
        assert!(read_frame::<Request>(&mut [0u8, 0, 0, 9, b'{'].as_slice(), MAX_FRAME).is_err());
        let mut garbage = 3u32.to_be_bytes().to_vec();
        garbage.extend_from_slice(b"]]]");
        assert!(read_frame::<Request>(&mut garbage.as_slice(), MAX_FRAME).is_err());
    }

    #[test]
    fn only_known_steps_parse() {
        for text in [
            r#"{"step":"exec","command":"rm -rf /"}"#,
            r#"{"step":"ping","path":"/etc/shadow"}"#,
            r#"{"step":"check","extra":1}"#,
            r#"{"message":"hello"}"#,
            r#"[1,2,3]"#,
        ] {
            assert!(serde_json::from_str::<Request>(text).is_err(), "{text}");
        }
        let ping: Request = serde_json::from_str(r#"{"step":"ping"}"#).expect("ping");
        assert_eq!(ping, Request::Ping {});
    }

    #[test]
    fn parameters_out_of_bounds_are_refused() {
        assert!(Request::Loopback { rail: "default".into(), spec: spec() }.validate().is_ok());
        let mut huge = spec();
        huge.message_bytes = 1 << 40;
        assert!(Request::Loopback { rail: "default".into(), spec: huge }.validate().is_err());
        let mut forever = spec();
        forever.bandwidth_ms = u64::MAX;
        assert!(Request::Loopback { rail: "default".into(), spec: forever }.validate().is_err());
        assert!(Request::Serve {
            rail: "x".repeat(65),
            sessions: 2,
            timeout_s: 10,
            transport: DataTransport::Verbs,
            traffic: TrafficSpec::default(),
            ticket_nonce: "00".repeat(16),
        }
        .validate()
        .is_err());
        assert!(Request::Serve {
            rail: "default".into(),
            sessions: 99,
            timeout_s: 10,
            transport: DataTransport::Tcp,
            traffic: TrafficSpec::default(),
            ticket_nonce: "00".repeat(16),
        }
        .validate()
        .is_err());
        // A step whose nonce is no nonce is refused by name.
        let serve = |nonce: &str| Request::Serve {
            rail: "default".into(),
            sessions: 2,
            timeout_s: 10,
            transport: DataTransport::Tcp,
            traffic: TrafficSpec::default(),
            ticket_nonce: nonce.into(),
        };
        assert!(serve(&"ab".repeat(16)).validate().is_ok());
        for bad in ["", "abc", "zz".repeat(16).as_str(), "a".repeat(65).as_str()] {
            assert!(serve(bad).validate().expect_err(bad).contains("ticket_nonce"), "{bad}");
        }
        let collective = |rank, world, bytes| Request::Collective {
            collective: CollectiveKind::Allreduce,
            rank,
            world,
            master: "127.0.0.1".parse().expect("ip"),
            master_port: 9000,
            bytes,
            iterations: 2,
            timeout_s: 10,
            transport: DataTransport::Verbs,
            traffic: TrafficSpec::default(),
            rail: Some("default".into()),
            ticket: "ab".repeat(16),
        };
        assert!(collective(1, 4, 1 << 20).validate().is_ok());
        assert!(collective(4, 4, 1 << 20).validate().is_err());
        assert!(collective(0, 4, 1 << 40).validate().is_err());
        assert!(collective(0, 1, 1 << 20).validate().is_err());
    }

    #[test]
    fn device_names_are_short_names_never_paths() {
        for good in ["mlx5_0", "rxe0", "bnxt_re0", "irdma-1.2"] {
            assert_eq!(validate_device(good), Ok(()), "{good}");
        }
        for bad in ["", "../mlx5_0", "mlx5_0/ports", ".hidden", "a b", "é", &"x".repeat(65)] {
            assert!(validate_device(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn steps_that_name_no_transport_are_tcp() {
        let serve: Request =
            serde_json::from_str(r#"{"step":"serve","rail":"r","sessions":1,"timeout_s":5,"ticket_nonce":"0a0b"}"#)
                .expect("serve");
        assert_eq!(
            serve,
            Request::Serve {
                rail: "r".into(),
                sessions: 1,
                timeout_s: 5,
                transport: DataTransport::Tcp,
                traffic: TrafficSpec::default(),
                ticket_nonce: "0a0b".into(),
            }
        );
        let rail: RailAddress = serde_json::from_str(r#"{"name":"r","address":"10.0.0.1"}"#).expect("rail");
        assert_eq!(rail.device, None);
        assert!(serde_json::from_str::<Request>(
            r#"{"step":"serve","rail":"r","sessions":1,"timeout_s":5,"ticket_nonce":"0a0b","transport":"ib"}"#
        )
        .is_err());
    }
}
