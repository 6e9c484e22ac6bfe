//! Thresholds the checks judge against: built-in defaults a cluster can override with a TOML file
//! (`fabricdoctor check --policy site.toml`). Unknown keys are rejected so a typo cannot silently
//! leave a default in force.

use serde::{Deserialize, Serialize};

use crate::topology::Relation;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    pub pcie: PciePolicy,
    pub topology: TopologyPolicy,
    pub rdma: RdmaPolicy,
    pub host: HostPolicy,
    pub counters: CounterPolicy,
    pub optics: OpticsPolicy,
    /// The node model's profile (`--profile`), not a policy key.
    #[serde(skip)]
    pub profile: Option<crate::profile::NodeProfile>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CounterPolicy {
    /// Share of the interval a priority may spend paused (PFC pause duration) before pfc.storm warns.
    pub pause_share_warn: f64,
    /// The priority RDMA traffic uses when DCB cannot tell (the single PFC-enabled priority otherwise);
    /// 3 is NVIDIA's and most vendors' default RoCE priority.
    pub roce_priority: u8,
    /// Effective (post-FEC) bit error ratio, symbol errors over received bits, above which phy.ber fails.
    pub effective_ber_fail: f64,
    /// Pre-FEC bit error ratio (corrected bits over received bits) above which phy.ber warns: the FEC
    /// is working hard and margin is gone. 1e-5 is conservative for PAM4 (HDR/NDR, 200/400GbE) links.
    pub corrected_ber_warn: f64,
}

impl Default for CounterPolicy {
    fn default() -> Self {
        CounterPolicy { pause_share_warn: 0.10, roce_priority: 3, effective_ber_fail: 1e-12, corrected_ber_warn: 1e-5 }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OpticsPolicy {
    /// Module temperature at which optics.temperature fails whatever the module's own limits: the
    /// burn-in protocol's rule that an optic at 70 C under load means the rack's airflow cannot
    /// sustain line rate.
    pub max_temperature_c: f64,
}

impl Default for OpticsPolicy {
    fn default() -> Self {
        OpticsPolicy { max_temperature_c: crate::optics::MAX_TEMPERATURE_C }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PciePolicy {
    /// Smallest Max Read Request Size for an RDMA NIC. NVIDIA's tuning guide (mlnx_tune) sets 4096;
    /// smaller read requests cut RDMA READ and GPUDirect throughput.
    pub nic_min_read_request_bytes: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TopologyPolicy {
    /// A GPU whose closest NIC is this far or farther gets a warning.
    pub affinity_warn_at: Relation,
    /// ... and a failure at this distance.
    pub affinity_fail_at: Relation,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RdmaPolicy {
    /// Every active port must run at least this rate (Gb/s) when set; otherwise ports are compared
    /// with the fastest port of the same model.
    pub expected_rate_gbps: Option<f64>,
    /// Smallest acceptable active RDMA MTU on RoCE ports (bytes; an IB MTU: 256..4096).
    pub roce_min_active_mtu: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HostPolicy {
    /// Smallest acceptable RLIMIT_MEMLOCK soft limit in bytes; `None` requires "unlimited", which
    /// is what rdma-core and NCCL document.
    pub memlock_min_bytes: Option<u64>,
    /// Smallest acceptable /dev/shm. NCCL's SHM transport and PyTorch DataLoader workers fail in
    /// Docker's 64 MiB default.
    pub devshm_min_bytes: u64,
}

impl Default for PciePolicy {
    fn default() -> Self {
        PciePolicy { nic_min_read_request_bytes: 4096 }
    }
}

impl Default for TopologyPolicy {
    fn default() -> Self {
        TopologyPolicy { affinity_warn_at: Relation::Node, affinity_fail_at: Relation::Sys }
    }
}

impl Default for RdmaPolicy {
    fn default() -> Self {
        RdmaPolicy { expected_rate_gbps: None, roce_min_active_mtu: 4096 }
    }
}

impl Default for HostPolicy {
    fn default() -> Self {
        HostPolicy { memlock_min_bytes: None, devshm_min_bytes: 1 << 30 }
    }
}

/// A policy file that could not be used.
#[derive(Debug, thiserror::Error)]
#[error("invalid policy {source_name}: {message}")]
pub struct PolicyError {
    pub source_name: String,
    pub message: String,
}

impl Policy {
    /// Parse a policy TOML; `source_name` (the file path) names the input in errors.
    pub fn from_toml(text: &str, source_name: &str) -> Result<Policy, PolicyError> {
        toml::from_str(text).map_err(|e| PolicyError { source_name: source_name.to_string(), message: e.to_string() })
    }

    /// Judge against a node model's profile: its checks run, and its NIC rate becomes the expected
    /// rate of the compute NICs' ports unless the policy sets one for every port.
    pub fn with_profile(mut self, profile: crate::profile::NodeProfile) -> Policy {
        self.profile = Some(profile);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_files_keep_the_other_defaults() {
        let policy = Policy::from_toml("[host]\ndevshm_min_bytes = 2147483648\n", "site.toml").expect("valid");
        assert_eq!(policy.host.devshm_min_bytes, 2 << 30);
        assert_eq!(policy.pcie.nic_min_read_request_bytes, 4096);
    }

    #[test]
    fn typos_and_bad_values_name_the_file() {
        let error = Policy::from_toml("[host]\ndevshm_minimum = 1\n", "site.toml").expect_err("typo");
        assert!(error.to_string().starts_with("invalid policy site.toml:"), "{error}");
        assert!(Policy::from_toml("[topology]\naffinity_warn_at = \"FAR\"\n", "p.toml").is_err());
    }

    #[test]
    fn relations_are_spelled_as_nvidia_smi_prints_them() {
        let policy = Policy::from_toml("[topology]\naffinity_warn_at = \"PHB\"\n", "p.toml").expect("valid");
        assert_eq!(policy.topology.affinity_warn_at, Relation::Phb);
    }
}
