//! Node-health checks: pure functions from a probe snapshot and a policy to findings, in one registry.
//! Ids are stable (CI gates allow-list them); `fabricdoctor check --list` prints this registry.

pub mod advice;
pub mod counters;
pub mod finding;
pub mod gpu;
pub mod host;
pub mod link_history;
pub mod optics;
pub mod pcie;
pub mod policy;
pub mod profile;
pub mod rdma;
pub mod topo;
pub mod topology;

use std::collections::BTreeSet;

use fabricdoctor_probes::counters::CounterObservation;
use fabricdoctor_probes::gpu::GpuObservation;
use fabricdoctor_probes::pci::{PciAddress, PciFunction};
use fabricdoctor_probes::{NodeSnapshot, ProbeError, ProbeErrorKind};

pub use advice::{Action, Owner};
pub use finding::{Finding, Verdict};
pub use policy::Policy;
pub use topology::{Relation, Topology};

/// One check. `evaluate` is pure: everything it needs is in `Inputs` and `Policy`.
pub trait Check: Sync {
    /// Stable id, e.g. "pcie.link.width".
    fn id(&self) -> &'static str;
    /// One line for `--list`.
    fn doc_short(&self) -> &'static str;
    /// What is checked, why it matters, the verdict rules and the source they come from.
    fn doc_long(&self) -> &'static str;
    fn evaluate(&self, inputs: &Inputs<'_>, policy: &Policy) -> Vec<Finding>;
    /// True for checks that judge counter samples (the run then samples counters).
    fn needs_counters(&self) -> bool {
        false
    }
}

/// Everything a check may look at, derived once per run.
#[derive(Debug)]
pub struct Inputs<'a> {
    pub node: &'a NodeSnapshot,
    pub topology: Topology,
    /// GPUs and RDMA NIC functions: the devices whose PCIe health decides fabric performance.
    pub endpoints: Vec<&'a PciFunction>,
    /// Counter samples, when the run took them (`None`: counter checks skip).
    pub counters: Option<&'a CounterObservation>,
    /// NVML readings, Xid events and `--load` results, when the run probed GPUs (`None`: GPU checks skip).
    pub gpu: Option<&'a GpuObservation>,
}

impl<'a> Inputs<'a> {
    pub fn new(node: &'a NodeSnapshot) -> Inputs<'a> {
        let topology = Topology::from_node(node);
        let nic_addresses: BTreeSet<PciAddress> = node.rdma_devices().iter().filter_map(|d| d.pci_address).collect();
        let endpoints = node
            .pci_functions()
            .iter()
            .filter(|f| f.is_gpu() || nic_addresses.contains(&f.address) || is_mellanox_nic(f))
            .collect();
        Inputs { node, topology, endpoints, counters: None, gpu: None }
    }

    pub fn with_counters(mut self, counters: Option<&'a CounterObservation>) -> Inputs<'a> {
        self.counters = counters;
        self
    }

    pub fn with_gpu(mut self, gpu: Option<&'a GpuObservation>) -> Inputs<'a> {
        self.gpu = gpu;
        self
    }

    /// True when the function is an RDMA NIC (has an RDMA device, or is a Mellanox/NVIDIA network function).
    pub fn is_nic(&self, function: &PciFunction) -> bool {
        is_mellanox_nic(function) || self.node.rdma_devices().iter().any(|d| d.pci_address == Some(function.address))
    }

    /// "0000:17:00.0 (mlx5_0)", "0000:18:00.0 (GPU0)", "0000:16:01.0 (bridge)".
    pub fn label(&self, address: PciAddress) -> String {
        if let Some(gpu) = self.topology.gpus.iter().find(|g| g.address == address) {
            return format!("{address} ({})", gpu.label);
        }
        let rdma: Vec<&str> = self
            .node
            .rdma_devices()
            .iter()
            .filter(|d| d.pci_address == Some(address))
            .map(|d| d.name.as_str())
            .collect();
        if !rdma.is_empty() {
            return format!("{address} ({})", rdma.join(","));
        }
        match self.node.function(address) {
            Some(f) if f.is_bridge() => format!("{address} (bridge)"),
            Some(f) => format!("{address} ({})", f.model_name()),
            None => address.to_string(),
        }
    }

    /// The bridges above any endpoint, each once, in address order.
    pub fn bridges_above_endpoints(&self) -> Vec<&'a PciFunction> {
        let addresses: BTreeSet<PciAddress> = self.endpoints.iter().flat_map(|f| f.upstream.iter().copied()).collect();
        addresses.into_iter().filter_map(|a| self.node.function(a)).collect()
    }
}

/// Mellanox/NVIDIA networking (vendor 0x15b3) Ethernet or InfiniBand controllers, counted as RDMA NICs
/// even when the RDMA driver is not loaded (then `rdma.*` says so).
fn is_mellanox_nic(function: &PciFunction) -> bool {
    function.vendor == 0x15b3 && function.class >> 16 == 0x02
}

/// Every check, in the order they run and are listed.
pub fn registry() -> &'static [&'static dyn Check] {
    &[
        &ProbeInputs,
        &pcie::LinkSpeed,
        &pcie::LinkWidth,
        &pcie::MaxPayload,
        &pcie::MaxReadRequest,
        &pcie::AccessControl,
        &pcie::ErrorReporting,
        &topo::GpuNicAffinity,
        &topo::Rails,
        &rdma::PortState,
        &rdma::PortRate,
        &rdma::RoceV2Gid,
        &rdma::Mtu,
        &rdma::FirmwareConsistency,
        &host::Memlock,
        &host::SharedMemory,
        &host::PeerMemory,
        &host::Iommu,
        &counters::PfcStorm,
        &counters::LosslessDrops,
        &counters::PfcConfig,
        &counters::EcnConfig,
        &counters::CnpIgnored,
        &counters::Retransmit,
        &counters::InfinibandPortErrors,
        &counters::InfinibandCongestion,
        &counters::LinkFlap,
        &counters::BitErrorRatio,
        &optics::Temperature,
        &optics::Power,
        &optics::Alarms,
        &optics::Inventory,
        &gpu::Xid,
        &gpu::Ecc,
        &gpu::Remap,
        &gpu::NvLink,
        &gpu::PcieReplay,
        &gpu::Throttle,
        &gpu::Persistence,
        &profile::Inventory,
        &profile::Pcie,
    ]
}

/// Reports the devices the probes had to leave out, so a malformed file is never silently ignored.
#[derive(Debug)]
pub struct ProbeInputs;

impl Check for ProbeInputs {
    fn id(&self) -> &'static str {
        "probe.read"
    }
    fn doc_short(&self) -> &'static str {
        "A device the probes could not read (malformed or unreadable sysfs file)"
    }
    fn doc_long(&self) -> &'static str {
        "Every PCI function, RDMA device, netdev and counter file that could not be read or parsed is left \
         out of the other checks (so one bad file hides no other device) and reported here as an error \
         naming the file and what was wrong with it. A kernel bug, a device in reset (config space of \
         0xff), or a damaged snapshot are the usual causes."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        let counter_errors = inputs.counters.into_iter().flat_map(|o| o.before.iter().chain(std::iter::once(&o.after)));
        let errors: Vec<&ProbeError> =
            inputs.node.unreadable.iter().chain(counter_errors.flat_map(|sample| sample.unreadable.iter())).collect();
        if errors.is_empty() {
            return vec![Finding::new(
                self.id(),
                Verdict::Pass,
                "node",
                "every device and counter the probes listed was readable",
            )];
        }
        errors
            .into_iter()
            .map(|error| {
                // The directory holding the bad file names the device or port
                // ("sys/.../0000:17:00.0", "sys/class/infiniband/mlx5_0/ports/1/hw_counters").
                let subject = error.path.parent().map(|p| p.display().to_string()).unwrap_or_else(|| "node".into());
                Finding::new(self.id(), Verdict::Error, subject, format!("left out of the checks: {error}"))
            })
            .collect()
    }
}

/// Run every check (or those whose id starts with one of `selected`) over a node and, when sampled,
/// its counters.
pub fn run_checks(
    node: &NodeSnapshot,
    counters: Option<&CounterObservation>,
    policy: &Policy,
    selected: &[String],
) -> Vec<Finding> {
    evaluate_selected(&Inputs::new(node).with_counters(counters), policy, selected)
}

/// Run every check (or those whose id starts with one of `selected`) over prepared inputs.
pub fn evaluate_selected(inputs: &Inputs<'_>, policy: &Policy, selected: &[String]) -> Vec<Finding> {
    registry()
        .iter()
        .filter(|check| selected.is_empty() || selected.iter().any(|s| check.id().starts_with(s.as_str())))
        .flat_map(|check| check.evaluate(inputs, policy))
        .collect()
}

/// A finding for input a check could not read: absent -> Skip, not permitted -> Warn (re-run as root),
/// anything else (malformed, I/O error) -> Error. Never a pass.
pub fn unreadable(id: &str, subject: impl Into<String>, error: &ProbeError) -> Finding {
    let (verdict, message) = match error.kind {
        ProbeErrorKind::NotFound => (Verdict::Skip, format!("nothing to check: {error}")),
        ProbeErrorKind::NotInCapture => (Verdict::Skip, format!("not in this capture: {}", error.path.display())),
        ProbeErrorKind::PermissionDenied => (Verdict::Warn, format!("could not look: {error}; re-run as root")),
        _ => (Verdict::Error, format!("could not look: {error}")),
    };
    Finding::new(id, verdict, subject, message)
}

/// "64 KiB", "1.5 GiB": sizes the way operators read them.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_documented() {
        let mut seen = BTreeSet::new();
        for check in registry() {
            assert!(seen.insert(check.id()), "duplicate id {}", check.id());
            assert!(!check.doc_short().is_empty() && check.doc_long().len() > check.doc_short().len());
        }
        for required in [
            "probe.read",
            "pcie.link.speed",
            "pcie.link.width",
            "pcie.mps",
            "pcie.mrrs",
            "pcie.acs",
            "pcie.aer",
            "topo.gpu_nic.affinity",
            "topo.rails",
            "rdma.port.state",
            "rdma.port.rate",
            "rdma.gid.rocev2",
            "rdma.mtu",
            "rdma.fw.consistency",
            "host.memlock",
            "host.devshm",
            "host.peermem",
            "host.iommu",
            "pfc.storm",
            "pfc.lossless_drops",
            "pfc.config",
            "ecn.config",
            "ecn.cnp_ignored",
            "rdma.retransmit",
            "ib.port.errors",
            "ib.congestion",
            "link.flap",
            "phy.ber",
            "gpu.xid",
            "gpu.ecc",
            "gpu.remap",
            "gpu.nvlink",
            "gpu.pcie.replay",
            "gpu.throttle",
            "gpu.persistence",
        ] {
            assert!(seen.contains(required), "missing {required}");
        }
    }

    #[test]
    fn sizes_read_like_people_write_them() {
        assert_eq!(human_bytes(65536), "64 KiB");
        assert_eq!(human_bytes(3 << 29), "1.5 GiB");
        assert_eq!(human_bytes(12), "12 B");
    }
}
