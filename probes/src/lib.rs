//! Typed readings of a node's PCIe, NUMA, RDMA, network and host state. Every read goes through one
//! [`SysRoot`], so the live node, a `fabricdoctor snapshot` and a test fixture are read by the same
//! code. Probes report what they saw (or why they could not look); they never judge it.

pub mod counters;
pub mod dcb;
pub mod dynlib;
pub mod error;
pub mod ethtool;
pub mod gpu;
pub mod host;
pub mod module_eeprom;
pub mod netdev;
mod netlink;
pub mod node;
pub mod numa;
pub mod pci;
pub mod pci_config;
pub mod rdma;
pub mod root;
pub mod snapshot;
pub mod transceiver;
pub mod value;

pub use error::{ParseError, ProbeError, ProbeErrorKind};
pub use node::NodeSnapshot;
pub use root::SysRoot;

/// A value a probe read, or the reason it could not.
pub type Reading<T> = Result<T, ProbeError>;
