//! GPU and NIC affinity computed from sysfs alone, in the terms of `nvidia-smi topo -m`
//! (X, PIX, PXB, PHB, NODE, SYS), and the GPU-to-NIC rail map derived from it.
//!
//! The PCIe path between two functions is read from the nesting of their sysfs directories: functions
//! under different host bridges (`pciDDDD:BB`) meet in the CPU (NODE when both are local to one NUMA
//! node, SYS when they are local to different ones, and `?` when either's node is unknown: NODE or
//! SYS cannot be told, and guessing SYS would fail a GPU on a single-socket host); under one host bridge with no common bridge
//! they meet in the host bridge (PHB); otherwise the bridges of the path are counted, a PCIe switch
//! being an upstream port plus its downstream ports: three bridges or fewer is one switch (PIX), more is
//! several (PXB). NVLink (NV#) needs the NVIDIA driver and is not shown: GPU pairs get their PCIe relation.

use std::fmt;

use fabricdoctor_probes::node::NumaSource;
use fabricdoctor_probes::pci::{PciAddress, PciFunction};
use fabricdoctor_probes::NodeSnapshot;
use serde::{Deserialize, Serialize};

/// Distance between two PCI functions, closest first (so `min` is the best NIC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Relation {
    #[serde(rename = "X")]
    Same,
    #[serde(rename = "PIX")]
    Pix,
    #[serde(rename = "PXB")]
    Pxb,
    #[serde(rename = "PHB")]
    Phb,
    #[serde(rename = "NODE")]
    Node,
    /// Across host bridges with a NUMA node unknown: NODE or SYS. Ordered between them, as the
    /// closest it can be is NODE and the farthest SYS.
    #[serde(rename = "?")]
    Unknown,
    #[serde(rename = "SYS")]
    Sys,
}

impl Relation {
    pub fn as_str(self) -> &'static str {
        match self {
            Relation::Same => "X",
            Relation::Pix => "PIX",
            Relation::Pxb => "PXB",
            Relation::Phb => "PHB",
            Relation::Node => "NODE",
            Relation::Unknown => "?",
            Relation::Sys => "SYS",
        }
    }

    /// The legend line `nvidia-smi topo -m` prints for the relation.
    pub fn legend(self) -> &'static str {
        match self {
            Relation::Same => "Self",
            Relation::Sys => {
                "Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)"
            }
            Relation::Node => {
                "Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node"
            }
            Relation::Phb => "Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)",
            Relation::Pxb => "Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)",
            Relation::Pix => "Connection traversing at most a single PCIe bridge",
            Relation::Unknown => "Connection across PCIe Host Bridges whose NUMA node is unknown: NODE or SYS",
        }
    }

    /// True when peer traffic between the two stays inside PCIe switches (GPUDirect RDMA's good case).
    pub fn within_switch(self) -> bool {
        matches!(self, Relation::Pix | Relation::Pxb)
    }
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A GPU or NIC as a row of the matrix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopologyDevice {
    /// "GPU0", "NIC3".
    pub label: String,
    pub address: PciAddress,
    /// RDMA device name for NICs ("mlx5_0"); the model for GPUs.
    pub name: String,
    pub numa_node: Option<u32>,
    pub numa_source: NumaSource,
    pub cpu_affinity: Option<String>,
    /// The host bridge the device hangs off ("pci0000:16"), for drawing the PCIe tree.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_bridge: Option<String>,
    /// Bridges from the root port down to the device's parent (the sysfs nesting), for drawing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub upstream: Vec<PciAddress>,
}

/// Where one PCI function sits: its NUMA node and how that was learnt. `topo --json` lists every
/// function (NVMe drives and other NICs matter for GPUDirect Storage and for pinning, too).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionLocality {
    pub address: PciAddress,
    /// 24-bit class code as lspci prints it ("0x030200" is a 3D controller).
    pub class: String,
    pub numa_node: Option<u32>,
    pub numa_source: NumaSource,
}

/// The locality of every PCI function of `node`, in address order (empty when the PCI tree is unknown).
pub fn pci_locality(node: &NodeSnapshot) -> Vec<FunctionLocality> {
    let Ok(functions) = &node.pci else { return Vec::new() };
    let mut out: Vec<FunctionLocality> = functions
        .iter()
        .map(|function| {
            let (numa_node, numa_source) = node.numa_of(function);
            FunctionLocality {
                address: function.address,
                class: format!("{:#08x}", function.class),
                numa_node,
                numa_source,
            }
        })
        .collect();
    out.sort_by_key(|f| f.address);
    out
}

/// One GPU's rail: the NIC it should use and how close that NIC is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rail {
    pub gpu: String,
    pub nic: String,
    pub nic_device: String,
    pub relation: Relation,
    /// Other NICs at the same (best) distance.
    pub alternatives: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Topology {
    pub gpus: Vec<TopologyDevice>,
    pub nics: Vec<TopologyDevice>,
    /// `matrix[i][j]` between `devices()[i]` and `devices()[j]` (GPUs first, then NICs).
    pub matrix: Vec<Vec<Relation>>,
    pub rails: Vec<Rail>,
}

impl Topology {
    pub fn from_node(node: &NodeSnapshot) -> Topology {
        let describe = |function: &PciFunction, label: String, name: String| {
            let (numa_node, numa_source) = node.numa_of(function);
            TopologyDevice {
                label,
                address: function.address,
                name,
                numa_node,
                numa_source,
                cpu_affinity: function.local_cpulist.clone(),
                host_bridge: Some(function.host_bridge.clone()),
                upstream: function.upstream.clone(),
            }
        };
        let gpus: Vec<TopologyDevice> =
            node.gpus().into_iter().enumerate().map(|(i, f)| describe(f, format!("GPU{i}"), f.model_name())).collect();
        let mut rdma: Vec<(&str, PciAddress)> =
            node.rdma_devices().iter().filter_map(|d| Some((d.name.as_str(), d.pci_address?))).collect();
        rdma.sort_by(|a, b| natural_cmp(a.0, b.0));
        let nics: Vec<TopologyDevice> = rdma
            .iter()
            .filter_map(|(name, address)| node.function(*address).map(|f| (name, f)))
            .enumerate()
            .map(|(i, (name, f))| describe(f, format!("NIC{i}"), name.to_string()))
            .collect();
        let all: Vec<&TopologyDevice> = gpus.iter().chain(nics.iter()).collect();
        let matrix = all
            .iter()
            .map(|a| {
                all.iter().map(|b| relation_between(node, a.address, a.numa_node, b.address, b.numa_node)).collect()
            })
            .collect();
        let mut topology = Topology { gpus, nics, matrix, rails: Vec::new() };
        topology.rails = topology.assign_rails();
        topology
    }

    pub fn devices(&self) -> impl Iterator<Item = &TopologyDevice> {
        self.gpus.iter().chain(self.nics.iter())
    }

    pub fn gpu_nic(&self, gpu: usize, nic: usize) -> Relation {
        self.matrix[gpu][self.gpus.len() + nic]
    }

    /// The closest relation from a GPU to any NIC, and the NICs at that distance.
    pub fn best_nics(&self, gpu: usize) -> Option<(Relation, Vec<usize>)> {
        let best = (0..self.nics.len()).map(|n| self.gpu_nic(gpu, n)).min()?;
        Some((best, (0..self.nics.len()).filter(|&n| self.gpu_nic(gpu, n) == best).collect()))
    }

    /// This node's rails (see [`assign_rails`]).
    fn assign_rails(&self) -> Vec<Rail> {
        let gpus: Vec<String> = self.gpus.iter().map(|g| g.label.clone()).collect();
        let nics: Vec<(String, String)> = self.nics.iter().map(|n| (n.label.clone(), n.name.clone())).collect();
        assign_rails(&gpus, &nics, |g, n| self.gpu_nic(g, n))
    }
}

/// Pair GPUs with NICs, closest pairs first (all PIX pairs before any PXB pair, ...), each NIC once
/// while unused NICs remain; then GPUs left over share the least-loaded of their closest NICs.
/// This is the mapping NCCL's topology search converges to on rail-optimised nodes. `nics` are
/// (label, device name) pairs; `relation(g, n)` is GPU `g`'s relation to NIC `n`. Shared by the live
/// topology and `triage` (a pasted `nvidia-smi topo -m`).
pub fn assign_rails(
    gpus: &[String],
    nics: &[(String, String)],
    relation: impl Fn(usize, usize) -> Relation,
) -> Vec<Rail> {
    if nics.is_empty() {
        return Vec::new();
    }
    let best_nics = |g: usize| -> Option<Vec<usize>> {
        let best = (0..nics.len()).map(|n| relation(g, n)).min()?;
        Some((0..nics.len()).filter(|&n| relation(g, n) == best).collect())
    };
    let mut pairs: Vec<(Relation, usize, usize)> = (0..gpus.len())
        .flat_map(|g| (0..nics.len()).map(move |n| (g, n)))
        .map(|(g, n)| (relation(g, n), g, n))
        .collect();
    pairs.sort();
    let mut chosen: Vec<Option<usize>> = vec![None; gpus.len()];
    let mut load = vec![0usize; nics.len()];
    for &(_, g, n) in &pairs {
        if chosen[g].is_none() && load[n] == 0 {
            chosen[g] = Some(n);
            load[n] += 1;
        }
    }
    for (g, choice) in chosen.iter_mut().enumerate() {
        if choice.is_none() {
            if let Some(candidates) = best_nics(g) {
                let n = candidates.iter().copied().min_by_key(|&n| (load[n], n)).unwrap_or(0);
                *choice = Some(n);
                load[n] += 1;
            }
        }
    }
    chosen
        .iter()
        .enumerate()
        .filter_map(|(g, n)| {
            let n = (*n)?;
            let rel = relation(g, n);
            let alternatives = (0..nics.len())
                .filter(|&other| other != n && relation(g, other) == rel)
                .map(|other| nics[other].0.clone())
                .collect();
            Some(Rail {
                gpu: gpus[g].clone(),
                nic: nics[n].0.clone(),
                nic_device: nics[n].1.clone(),
                relation: rel,
                alternatives,
            })
        })
        .collect()
}

/// The relation between two functions of `node` (see the module documentation for the rule).
pub fn relation_between(
    node: &NodeSnapshot,
    a: PciAddress,
    a_numa: Option<u32>,
    b: PciAddress,
    b_numa: Option<u32>,
) -> Relation {
    if a == b {
        return Relation::Same;
    }
    let (Some(fa), Some(fb)) = (node.function(a), node.function(b)) else {
        return Relation::Unknown;
    };
    // Devices local to different NUMA nodes talk across the SMP interconnect whatever their bus
    // numbering says (nvidia-smi topo -m: SYS); older kernels and captures can show both under one
    // host bridge name.
    if let (Some(x), Some(y)) = (a_numa, b_numa) {
        if x != y {
            return Relation::Sys;
        }
    }
    if fa.host_bridge != fb.host_bridge {
        return match (a_numa, b_numa) {
            (Some(x), Some(y)) if x == y => Relation::Node,
            _ => Relation::Unknown,
        };
    }
    match path_bridges(fa, fb) {
        None => Relation::Phb,
        Some(bridges) if bridges <= 3 => Relation::Pix,
        Some(_) => Relation::Pxb,
    }
}

/// How many PCI bridges a peer transfer between two functions crosses when they share a bridge
/// (`None` when they meet only in the host bridge): the common bridge plus those below it on each side.
pub fn path_bridges(a: &PciFunction, b: &PciFunction) -> Option<usize> {
    let common = common_bridges(a, b);
    (common > 0).then(|| (a.upstream.len() - common) + (b.upstream.len() - common) + 1)
}

/// Length of the shared prefix of the two upstream chains.
pub fn common_bridges(a: &PciFunction, b: &PciFunction) -> usize {
    a.upstream.iter().zip(b.upstream.iter()).take_while(|(x, y)| x == y).count()
}

/// The bridges a peer transfer between `a` and `b` passes through: the lowest common bridge and
/// everything below it on both sides. Empty when they share no bridge.
pub fn bridges_between(a: &PciFunction, b: &PciFunction) -> Vec<PciAddress> {
    let common = common_bridges(a, b);
    if common == 0 {
        return Vec::new();
    }
    let mut bridges = vec![a.upstream[common - 1]];
    bridges.extend_from_slice(&a.upstream[common..]);
    bridges.extend_from_slice(&b.upstream[common..]);
    bridges
}

/// "mlx5_2" before "mlx5_10", as people count.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let split = |s: &str| {
        let digits = s.len() - s.chars().rev().take_while(|c| c.is_ascii_digit()).count();
        (s[..digits].to_string(), s[digits..].parse::<u64>().ok())
    };
    split(a).cmp(&split(b)).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relations_order_from_closest_to_farthest() {
        assert!(Relation::Pix < Relation::Pxb && Relation::Pxb < Relation::Phb);
        assert!(Relation::Phb < Relation::Node && Relation::Node < Relation::Sys);
        // `?` is NODE or SYS: a NIC known to be NODE is preferred, one known to be SYS is not.
        assert!(Relation::Node < Relation::Unknown && Relation::Unknown < Relation::Sys);
    }

    #[test]
    fn device_names_sort_naturally() {
        let mut names = vec!["mlx5_10", "mlx5_2", "mlx5_0", "rxe0"];
        names.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(names, ["mlx5_0", "mlx5_2", "mlx5_10", "rxe0"]);
    }
}
