//! What a node of a given model should have (`--profile hgx-h100-8x400g.toml`): its GPUs, its RDMA
//! NICs, their port rate and the PCIe link of each device class. Checks judge a node against it
//! (`profile.inventory`, `profile.pcie`), the RDMA port-rate check takes its rate, and burn-in takes
//! its rate as the pair expectation. Relative checks cannot see a fault every device shares (every
//! GPU behind a Gen4 switch on a Gen5 board); a profile can. Examples ship in `playbooks/profiles/`.

use serde::{Deserialize, Serialize};

use crate::{Check, Finding, Inputs, Policy, Verdict};

/// A node model's expected hardware.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeProfile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub gpus: DeviceClass,
    pub nics: NicClass,
    /// Burn-in rail names this node model uses (`--rail NAME=...` on its agents), in NIC order.
    #[serde(default)]
    pub rails: Vec<String>,
}

/// GPUs of the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceClass {
    pub count: usize,
    /// A word of the PCI device name every GPU must carry ("H100" in "GH100 [H100 SXM5 80GB]").
    pub model: String,
    /// PCIe generation (5 = 32 GT/s) and width each GPU's link must train at.
    pub pcie_generation: u8,
    pub pcie_width: u8,
}

/// RDMA NICs of the model (hardware adapters with a PCI function; software devices are not counted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NicClass {
    pub count: usize,
    /// Each port's rate, Gb/s (sysfs `rate`).
    pub rate_gbps: f64,
    pub pcie_generation: u8,
    pub pcie_width: u8,
}

impl NodeProfile {
    /// The distinct names of `node`'s GPUs that lack the profile's model word (sorted): non-empty
    /// means the profile is for another node model.
    pub fn foreign_gpus(&self, node: &fabricdoctor_probes::NodeSnapshot) -> Vec<String> {
        let model = self.gpus.model.to_ascii_lowercase();
        let mut foreign: Vec<String> = node
            .gpus()
            .iter()
            .map(|g| g.model_name())
            .filter(|name| !name.to_ascii_lowercase().contains(&model))
            .collect();
        foreign.sort();
        foreign.dedup();
        foreign
    }

    /// Parse and check a profile; errors name `source` and the key.
    pub fn from_toml(text: &str, source: &str) -> Result<NodeProfile, String> {
        let profile: NodeProfile = toml::from_str(text).map_err(|e| format!("profile {source}: {}", e.message()))?;
        profile.validate(source)?;
        Ok(profile)
    }

    /// Check the values a profile must hold, whether it came from a file or over the wire (a burn-in
    /// agent receives the coordinator's profile); errors name `source` and the key.
    pub fn validate(&self, source: &str) -> Result<(), String> {
        let profile = self;
        let bad = |key: &str, why: String| Err(format!("profile {source}: {key} {why}"));
        for (key, generation, width) in [
            ("gpus", profile.gpus.pcie_generation, profile.gpus.pcie_width),
            ("nics", profile.nics.pcie_generation, profile.nics.pcie_width),
        ] {
            if !(1..=6).contains(&generation) {
                return bad(&format!("{key}.pcie_generation"), format!("= {generation}: PCIe generations are 1 to 6"));
            }
            if ![1, 2, 4, 8, 12, 16, 32].contains(&width) {
                return bad(&format!("{key}.pcie_width"), format!("= {width}: not a PCIe link width"));
            }
        }
        if profile.gpus.model.trim().is_empty() {
            return bad("gpus.model", "is empty".into());
        }
        if !(profile.nics.rate_gbps > 0.0 && profile.nics.rate_gbps.is_finite()) {
            return bad("nics.rate_gbps", format!("= {}: must be a positive number", profile.nics.rate_gbps));
        }
        if !profile.rails.is_empty() && profile.rails.len() != profile.nics.count {
            return bad("rails", format!("names {} rails for {} NICs", profile.rails.len(), profile.nics.count));
        }
        Ok(())
    }
}

/// A compute NIC: one that carries a GPU's rail (storage and front-end NICs may be of another rate
/// or PCIe generation); on a node without GPUs, every NIC.
pub fn is_compute_nic(inputs: &Inputs<'_>, device: &str) -> bool {
    let rails = &inputs.topology.rails;
    rails.is_empty() || rails.iter().any(|rail| rail.nic_device == device)
}

fn no_profile(id: &str) -> Vec<Finding> {
    vec![Finding::new(id, Verdict::Skip, "node", "no node profile given (--profile FILE)")]
}

/// GPU and NIC counts, the GPU model and, through `rdma.port.rate`, the port rate.
#[derive(Debug)]
pub struct Inventory;

impl Check for Inventory {
    fn id(&self) -> &'static str {
        "profile.inventory"
    }
    fn doc_short(&self) -> &'static str {
        "The node has the GPUs (count, model) and RDMA NICs (count) its profile says"
    }
    fn doc_long(&self) -> &'static str {
        "With --profile: counts the GPUs (NVIDIA/AMD display or 3D controllers) and the hardware RDMA \
         NICs (devices with a PCI function, software rxe/siw left out) and fails when either is short of \
         the profile (a GPU or NIC fell off the bus or was never seated); more NICs than the profile \
         pass (storage and front-end NICs). \
         GPUs whose PCI name lacks the profile's model word are an error naming gpus.model: the profile \
         is for another node model. The profile's NIC rate becomes rdma.port.rate's expected rate for \
         the compute NICs (those carrying a GPU's rail)."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, policy: &Policy) -> Vec<Finding> {
        let Some(profile) = &policy.profile else { return no_profile(self.id()) };
        let node = inputs.node;
        let gpus = node.gpus();
        let foreign = profile.foreign_gpus(node);
        let mut findings = Vec::new();
        if !foreign.is_empty() {
            findings.push(
                Finding::new(
                    self.id(),
                    Verdict::Error,
                    "node",
                    format!(
                        "profile {} (gpus.model = {:?}) is for another node model: this node's GPUs are {}",
                        profile.name,
                        profile.gpus.model,
                        foreign.join(", ")
                    ),
                )
                .expected(format!("GPUs named {}", profile.gpus.model)),
            );
        }
        let nics = node.rdma_devices().iter().filter(|d| !d.software && d.pci_address.is_some()).count();
        for (what, found, expected) in
            [("GPUs", gpus.len(), profile.gpus.count), ("RDMA NICs", nics, profile.nics.count)]
        {
            // More than the profile is allowed (storage and front-end NICs beside the compute ones).
            let verdict = if found < expected { Verdict::Fail } else { Verdict::Pass };
            let message = match verdict {
                Verdict::Fail => format!(
                    "{found} {what}, profile {} expects {expected}: a device is missing (fell off the bus, not \
                     seated, or its driver did not bind)",
                    profile.name
                ),
                _ if found > expected => {
                    format!("{found} {what}: the {expected} of profile {} and {} more", profile.name, found - expected)
                }
                _ => format!("{found} {what}, as profile {} expects", profile.name),
            };
            findings.push(
                Finding::new(self.id(), verdict, what, message)
                    .expected(expected.to_string())
                    .observed(found.to_string()),
            );
        }
        findings
    }
}

/// Each GPU's and NIC's PCIe link against the profile's generation and width.
#[derive(Debug)]
pub struct Pcie;

impl Check for Pcie {
    fn id(&self) -> &'static str {
        "profile.pcie"
    }
    fn doc_short(&self) -> &'static str {
        "Each GPU and RDMA NIC link trains at the PCIe generation and width of the node's profile"
    }
    fn doc_long(&self) -> &'static str {
        "With --profile: each GPU's and hardware RDMA NIC's current link speed and width against the \
         profile's pcie_generation and pcie_width for its class. pcie.link.speed/width compare a link \
         with what the device and its port report they can do; this compares with what the board \
         should do, so a device behind a slower switch (every GPU at Gen4 on a Gen5 board) fails too. \
         NICs judged are the compute NICs: those that carry a GPU's rail (all hardware NICs on a node \
         without GPUs)."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, policy: &Policy) -> Vec<Finding> {
        let Some(profile) = &policy.profile else { return no_profile(self.id()) };
        let node = inputs.node;
        let mut devices: Vec<(String, &fabricdoctor_probes::pci::PciFunction, u8, u8)> = node
            .gpus()
            .into_iter()
            .map(|f| (format!("GPU {}", f.address), f, profile.gpus.pcie_generation, profile.gpus.pcie_width))
            .collect();
        for device in node.rdma_devices().iter().filter(|d| !d.software && is_compute_nic(inputs, &d.name)) {
            if let Some(function) = device.pci_address.and_then(|a| node.function(a)) {
                devices.push((
                    format!("{} ({})", device.name, function.address),
                    function,
                    profile.nics.pcie_generation,
                    profile.nics.pcie_width,
                ));
            }
        }
        if devices.is_empty() {
            return vec![Finding::new(
                self.id(),
                Verdict::Skip,
                "node",
                "no GPU or RDMA NIC with a PCI function to judge",
            )];
        }
        devices
            .into_iter()
            .map(|(subject, function, generation, width)| {
                let expected = format!("Gen{generation} x{width}");
                let (Some(speed), Some(current_width)) = (function.link.current_speed, function.link.current_width)
                else {
                    return Finding::new(self.id(), Verdict::Skip, subject, "link speed or width not readable")
                        .expected(expected);
                };
                let observed = format!("Gen{} x{current_width}", speed.0);
                let verdict = if speed.0 < generation || current_width < width { Verdict::Fail } else { Verdict::Pass };
                let message = if verdict == Verdict::Fail {
                    format!("link at {observed}, profile {} expects {expected}", profile.name)
                } else {
                    format!("link at {observed}")
                };
                Finding::new(self.id(), verdict, subject, message).expected(expected).observed(observed)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H100: &str = include_str!("../../playbooks/profiles/hgx-h100-8x400g.toml");

    #[test]
    fn shipped_profiles_parse_and_bad_ones_are_refused_by_key() {
        let profile = NodeProfile::from_toml(H100, "hgx").expect("parses");
        assert_eq!((profile.gpus.count, profile.nics.count, profile.nics.rate_gbps), (8, 8, 400.0));
        NodeProfile::from_toml(include_str!("../../playbooks/profiles/dgx-a100-8x200g.toml"), "a100").expect("parses");
        let error = NodeProfile::from_toml(&H100.replace("rate_gbps = 400", "rate_gbps = 0"), "x").expect_err("zero");
        assert!(error.contains("nics.rate_gbps"), "{error}");
        let error = NodeProfile::from_toml(&H100.replace("pcie_width = 16", "pcie_width = 3"), "x").expect_err("width");
        assert!(error.contains("pcie_width"), "{error}");
        let error = NodeProfile::from_toml(&H100.replace("count = 8", "count = 8\nspeed = 1"), "x").expect_err("key");
        assert!(error.contains("speed"), "{error}");
    }
}
