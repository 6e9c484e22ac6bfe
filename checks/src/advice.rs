//! What to do about a finding, and whose it is: the `action` and `owner` every finding carries, so a
//! scheduler, a drain script or an on-call engineer can act on it without reading the message
//! (issue #20). The vocabulary follows what fleet health agents already name per fault (gpud's
//! RepairActionType, NVSentinel's RecommendedAction), cut to what fabric faults need.
//!
//! The mapping is by finding id and is the same for warn and fail (a warn is the same fault, less
//! sure or less severe); pass and skip need nothing, and an error (the check could not look) is a
//! recheck by the node's owner. README "What to do about a finding" documents the table.

use serde::{Deserialize, Serialize};

use crate::finding::Verdict;

/// What to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Nothing: the finding passed, or was skipped for a reason it states.
    #[default]
    None,
    /// Run the check again (a transient reading, a check that could not look).
    Recheck,
    /// Reset the GPU (`nvidia-smi -r`) or reboot the node to clear it.
    ResetGpu,
    /// Reboot the node.
    Reboot,
    /// Reseat the card or riser (a link that trained narrow or slow, PCIe errors).
    Reseat,
    /// Replace the cable or the optic (a port down, link errors, a high bit error rate).
    ReplaceCableOrOptic,
    /// Replace the NIC.
    ReplaceNic,
    /// Fix a setting of the host, the NIC or the job (limits, PCIe and RoCE settings, firmware).
    FixConfig,
    /// Hand it to the fabric team (switches, congestion, the spine).
    EscalateFabric,
    /// Look at the application (its collectives, its configuration).
    CheckApplication,
}

impl Action {
    pub fn name(self) -> &'static str {
        match self {
            Action::None => "none",
            Action::Recheck => "recheck",
            Action::ResetGpu => "reset-gpu",
            Action::Reboot => "reboot",
            Action::Reseat => "reseat",
            Action::ReplaceCableOrOptic => "replace-cable-or-optic",
            Action::ReplaceNic => "replace-nic",
            Action::FixConfig => "fix-config",
            Action::EscalateFabric => "escalate-fabric",
            Action::CheckApplication => "check-application",
        }
    }
}

/// Whose it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Owner {
    /// The node's administrator (the host, its GPUs, NICs and settings).
    #[default]
    Node,
    /// The fabric team (cables, optics, switches, QoS, congestion).
    Fabric,
    /// Whoever runs the job (its placement, its settings, its code).
    User,
}

impl Owner {
    pub fn name(self) -> &'static str {
        match self {
            Owner::Node => "node",
            Owner::Fabric => "fabric",
            Owner::User => "user",
        }
    }
}

use Action::*;
use Owner::*;

/// Every finding id with what a warn or fail of it asks for. Ids are matched exactly; a test keeps
/// this table and the check registry in step.
pub const TABLE: &[(&str, Action, Owner)] = &[
    ("probe.read", Recheck, Node),
    ("pcie.link.speed", Reseat, Node),
    ("pcie.link.width", Reseat, Node),
    ("pcie.mps", FixConfig, Node),
    ("pcie.mrrs", FixConfig, Node),
    ("pcie.acs", FixConfig, Node),
    ("pcie.aer", Reseat, Node),
    ("topo.gpu_nic.affinity", FixConfig, Node),
    ("topo.rails", ReplaceCableOrOptic, Fabric),
    ("rdma.port.state", ReplaceCableOrOptic, Fabric),
    ("rdma.port.rate", ReplaceCableOrOptic, Fabric),
    ("rdma.gid.rocev2", FixConfig, Node),
    ("rdma.mtu", FixConfig, Node),
    // Triage: devices a container or VM lists but cannot open; if the job needs them, the
    // container's device list is the setting to fix.
    ("rdma.device.open", FixConfig, Node),
    ("rdma.fw.consistency", FixConfig, Node),
    ("host.memlock", FixConfig, Node),
    ("host.devshm", FixConfig, Node),
    ("host.peermem", FixConfig, Node),
    ("host.iommu", FixConfig, Node),
    ("pfc.storm", EscalateFabric, Fabric),
    ("pfc.lossless_drops", EscalateFabric, Fabric),
    ("pfc.config", FixConfig, Node),
    ("ecn.config", FixConfig, Node),
    ("ecn.cnp_ignored", FixConfig, Node),
    ("rdma.retransmit", EscalateFabric, Fabric),
    ("ib.port.errors", ReplaceCableOrOptic, Fabric),
    ("ib.congestion", EscalateFabric, Fabric),
    ("link.flap", ReplaceCableOrOptic, Fabric),
    // Held across samples by `serve` (link_history.rs).
    ("link.flapping", ReplaceCableOrOptic, Fabric),
    ("link.dropped", ReplaceCableOrOptic, Fabric),
    ("phy.ber", ReplaceCableOrOptic, Fabric),
    // A hot optic is the rack's airflow or the module; its owner is the node's.
    ("optics.temperature", FixConfig, Node),
    ("optics.power", ReplaceCableOrOptic, Fabric),
    ("optics.alarms", ReplaceCableOrOptic, Fabric),
    ("optics.inventory", None, Fabric),
    ("gpu.xid", ResetGpu, Node),
    ("gpu.ecc", ResetGpu, Node),
    ("gpu.remap", ResetGpu, Node),
    ("gpu.nvlink", ResetGpu, Node),
    ("gpu.pcie.replay", Reseat, Node),
    // Clocks held down by power or temperature: look again once the node is cool and idle;
    // persistent slowdown is the node's cooling or power, which its owner checks.
    ("gpu.throttle", Recheck, Node),
    ("gpu.persistence", FixConfig, Node),
    ("profile.inventory", Reseat, Node),
    ("profile.pcie", Reseat, Node),
    // Burn-in.
    ("burnin.pair.failed", Recheck, Fabric),
    ("burnin.pair.below_expected", EscalateFabric, Fabric),
    ("burnin.pair.tolerance", Recheck, Fabric),
    ("burnin.pair.transient", Recheck, Fabric),
    ("burnin.pairwise.skipped", None, User),
    ("burnin.fabric.below_expected", EscalateFabric, Fabric),
    ("burnin.loopback.failed", Recheck, Node),
    ("burnin.loopback.below_expected", FixConfig, Node),
    ("burnin.isolation.host", Reseat, Node),
    ("burnin.isolation.link", ReplaceCableOrOptic, Fabric),
    ("burnin.isolation.unresolved", EscalateFabric, Fabric),
    ("burnin.host.lost", Reboot, Node),
    ("burnin.host.excluded", Recheck, Node),
    ("burnin.counters.growth", ReplaceCableOrOptic, Fabric),
    ("burnin.counters.unreadable", FixConfig, Node),
    ("burnin.data.validation", ReplaceNic, Node),
    ("burnin.data.collective", ReplaceNic, Node),
    ("burnin.baseline.regression", EscalateFabric, Fabric),
    ("burnin.congestion.loss", EscalateFabric, Fabric),
    ("burnin.congestion.order", EscalateFabric, Fabric),
    ("burnin.congestion.unobservable", FixConfig, Node),
    ("burnin.expectation.unknown", FixConfig, User),
    ("burnin.rails.concurrent_drop", EscalateFabric, Fabric),
    ("burnin.traffic.lossless", EscalateFabric, Fabric),
];

/// The action and owner of a finding `id` with `verdict`. An id outside [`TABLE`] (a finding a
/// newer agent sent) asks for a recheck by the node's owner when it did not pass.
pub fn advise(id: &str, verdict: Verdict) -> (Action, Owner) {
    let entry = TABLE.iter().find(|(known, _, _)| *known == id).map(|&(_, action, owner)| (action, owner));
    let owner = entry.map_or(Node, |(_, owner)| owner);
    match verdict {
        Verdict::Pass | Verdict::Skip => (None, owner),
        Verdict::Error => (Recheck, Node),
        Verdict::Warn | Verdict::Fail => entry.unwrap_or((Recheck, Node)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every registered check has its own row, and no row is listed twice.
    #[test]
    fn every_check_in_the_registry_has_an_action() {
        for check in crate::registry() {
            assert!(TABLE.iter().any(|(id, _, _)| *id == check.id()), "{} has no action", check.id());
        }
        let mut ids: Vec<&str> = TABLE.iter().map(|(id, _, _)| *id).collect();
        ids.sort_unstable();
        let before = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), before, "an id is listed twice");
    }

    #[test]
    fn only_what_did_not_pass_asks_for_something() {
        assert_eq!(advise("link.flap", Verdict::Fail), (ReplaceCableOrOptic, Fabric));
        assert_eq!(advise("link.flap", Verdict::Warn), (ReplaceCableOrOptic, Fabric));
        assert_eq!(advise("link.flap", Verdict::Pass), (None, Fabric));
        assert_eq!(advise("link.flap", Verdict::Skip), (None, Fabric));
        assert_eq!(advise("gpu.xid", Verdict::Error), (Recheck, Node));
        assert_eq!(advise("something.new", Verdict::Fail), (Recheck, Node));
        let json = serde_json::to_string(&(ReplaceCableOrOptic, Fabric)).expect("json");
        assert_eq!(json, r#"["replace-cable-or-optic","fabric"]"#);
        assert_eq!(ReplaceCableOrOptic.name(), "replace-cable-or-optic");
    }
}
