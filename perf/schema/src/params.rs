//! What a run measures. Both sides must agree on these; the handshake compares them field by field.

use serde::{Deserialize, Serialize};

/// The RDMA operation measured (perftest: ib_write_*, ib_read_*, ib_send_*).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    Write,
    Read,
    Send,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestKind {
    #[serde(rename = "bw")]
    Bandwidth,
    #[serde(rename = "lat")]
    Latency,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    Verbs,
    Tcp,
}

/// The names the CLI's `--transport` takes and reports print.
impl std::fmt::Display for TransportKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TransportKind::Verbs => "verbs",
            TransportKind::Tcp => "tcp",
        })
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Operation::Write => "write",
            Operation::Read => "read",
            Operation::Send => "send",
        })
    }
}

/// perftest's inline size when `-I` is not given (perftest_resources.c, ctx_set_max_inline, with
/// perftest_parameters.h's DEF_INLINE_WRITE = 220 and DEF_INLINE_SEND_RC_UC = 236): latency tests
/// send WRITE and SEND payloads inline, bandwidth tests and READ never.
pub fn default_inline(operation: Operation, test: TestKind) -> u32 {
    match (test, operation) {
        (TestKind::Latency, Operation::Write) => 220,
        (TestKind::Latency, Operation::Send) => 236,
        _ => 0,
    }
}

/// Parameters of one run; sizes are swept by running several of these.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunParameters {
    pub operation: Operation,
    pub test: TestKind,
    pub transport: TransportKind,
    /// Message size in bytes.
    pub size: u64,
    /// Iterations per size (perftest -n); `None` in duration mode.
    pub iterations: Option<u64>,
    /// Duration mode (perftest -D), milliseconds.
    pub duration_ms: Option<u64>,
    pub bidirectional: bool,
    /// Queue pairs (TCP: connections) used in parallel (perftest -q).
    pub queue_pairs: u32,
    /// Messages in flight per queue pair (perftest -t).
    pub tx_depth: u32,
    /// Inline threshold in bytes (perftest -I); verbs only.
    pub inline_size: u32,
    /// Send verifiable messages and check every one that arrives (crate::integrity).
    pub validate: bool,
    /// The run's stream seed for validation, chosen at random by the client for each run so a
    /// message of an earlier run (a stale buffer) is told apart; 0 when not validating.
    #[serde(default)]
    pub validation_seed: u64,
    /// Verbs: the GRH traffic class (perftest --tclass; NCCL_IB_TC) and service level (perftest --sl;
    /// NCCL_IB_SL) of both ends' queue pairs; `None`: each side's own default (0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic_class: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_level: Option<u8>,
    /// Verbs bandwidth: work requests per ibv_post_send call (perftest -l); 1 posts each alone.
    #[serde(default = "one")]
    pub post_list: u32,
}

fn one() -> u32 {
    1
}

impl Default for RunParameters {
    fn default() -> Self {
        RunParameters {
            operation: Operation::Write,
            test: TestKind::Bandwidth,
            transport: TransportKind::Tcp,
            size: 65536,
            iterations: Some(5000),
            duration_ms: None,
            bidirectional: false,
            queue_pairs: 1,
            tx_depth: 128,
            inline_size: 0,
            validate: false,
            validation_seed: 0,
            traffic_class: None,
            service_level: None,
            post_list: 1,
        }
    }
}
