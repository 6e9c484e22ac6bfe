//! Multi-host burn-in: the agent that runs typed test steps on each host, the coordinator that runs
//! the playbook (check, loopback, pairwise matrix by the circle method, all-to-all, ring AllReduce,
//! soak, sign-off) over the agents, isolation of slow pairs to a host, NIC or link, and the reports.
//! Measurements come from fabricdoctor_perf and node health from fabricdoctor_checks; this crate only
//! orchestrates them.

pub mod agent;
pub mod auth;
pub mod client;
pub mod coordinator;
pub mod counters;
pub mod expectations;
pub mod isolation;
pub mod launch;
pub mod lossless;
pub mod plan;
pub mod playbook;
pub mod preflight;
pub mod protocol;
pub mod schedule;
pub mod simulation;

/// Errors of the burn-in layer; each names the input or peer.
#[derive(Debug, thiserror::Error)]
pub enum BurninError {
    #[error("token: {0}")]
    Token(String),
    #[error("authentication: {0}")]
    Auth(String),
    #[error("protocol: {0}")]
    Protocol(String),
    #[error("protocol: frame of {length} bytes exceeds the limit of {max} (not a fabricdoctor burn-in peer?)")]
    Oversized { length: u32, max: u32 },
    #[error("{0}: {1}")]
    Io(String, #[source] std::io::Error),
    #[error(transparent)]
    Write(#[from] fabricdoctor_report::output::WriteError),
    #[error("playbook {0}")]
    Playbook(String),
    #[error("{0}")]
    Run(String),
}
