//! Topology checks: each GPU should have a NIC close to it (PIX/PXB), and GPUs should spread over the
//! NICs (one rail each) rather than crowd onto one while another idles.

use crate::topology::Relation;
use crate::{unreadable, Check, Finding, Inputs, Policy, Verdict};

fn preconditions(id: &str, inputs: &Inputs<'_>) -> Option<Vec<Finding>> {
    if let Err(error) = &inputs.node.pci {
        return Some(vec![unreadable(id, "node", error)]);
    }
    if inputs.topology.gpus.is_empty() {
        return Some(vec![Finding::new(id, Verdict::Skip, "node", "no GPU on this node")]);
    }
    if inputs.topology.nics.is_empty() {
        let why = match &inputs.node.rdma {
            Err(error) => format!("no RDMA NIC with a PCI function ({error})"),
            Ok(_) => "no RDMA NIC with a PCI function on this node".to_string(),
        };
        return Some(vec![Finding::new(id, Verdict::Skip, "node", why)]);
    }
    None
}

#[derive(Debug)]
pub struct GpuNicAffinity;

impl Check for GpuNicAffinity {
    fn id(&self) -> &'static str {
        "topo.gpu_nic.affinity"
    }
    fn doc_short(&self) -> &'static str {
        "A GPU whose closest RDMA NIC is across the host bridge interconnect (NODE) or the socket link (SYS)"
    }
    fn doc_long(&self) -> &'static str {
        "Computes, from sysfs alone, each GPU's relation to every RDMA NIC as nvidia-smi topo -m does \
         (PIX, PXB, PHB, NODE, SYS) and judges the closest. NCCL uses GPUDirect RDMA only up to \
         NCCL_NET_GDR_LEVEL (default PXB on most systems); farther, traffic is staged through host \
         memory and crosses the CPU interconnect. Policy: warn at topology.affinity_warn_at (default \
         NODE), fail at topology.affinity_fail_at (default SYS). A NIC whose NUMA node is unknown \
         (numa_node -1 and local_cpulist spanning nodes) counts as SYS to devices on other host bridges."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, policy: &Policy) -> Vec<Finding> {
        if let Some(findings) = preconditions(self.id(), inputs) {
            return findings;
        }
        let topology = &inputs.topology;
        let warn_at = policy.topology.affinity_warn_at;
        let fail_at = policy.topology.affinity_fail_at;
        topology
            .gpus
            .iter()
            .enumerate()
            .filter_map(|(g, gpu)| {
                let (best, nics) = topology.best_nics(g)?;
                let names: Vec<&str> = nics.iter().map(|&n| topology.nics[n].name.as_str()).collect();
                let verdict = if best >= fail_at {
                    Verdict::Fail
                } else if best >= warn_at {
                    Verdict::Warn
                } else {
                    Verdict::Pass
                };
                let message = match verdict {
                    Verdict::Pass => format!("closest NIC {} ({best})", names.join(", ")),
                    _ => format!(
                        "closest NIC is {best} ({}): GPUDirect RDMA traffic must cross {}",
                        names.join(", "),
                        if best == Relation::Sys { "the CPU socket interconnect" } else { "the CPU's host bridges" }
                    ),
                };
                let numa = gpu.numa_node.map(|n| n.to_string()).unwrap_or_else(|| "unknown".into());
                Some(
                    Finding::new(self.id(), verdict, format!("{} ({})", gpu.label, gpu.address), message)
                        .evidence(format!("GPU NUMA node {numa}; relations: {}", relations_row(inputs, g)))
                        .expected(format!("closer than {warn_at}"))
                        .observed(best.to_string()),
                )
            })
            .collect()
    }
}

fn relations_row(inputs: &Inputs<'_>, gpu: usize) -> String {
    let topology = &inputs.topology;
    (0..topology.nics.len())
        .map(|n| format!("{} {}", topology.nics[n].name, topology.gpu_nic(gpu, n)))
        .collect::<Vec<_>>()
        .join(", ")
}

#[derive(Debug)]
pub struct Rails;

impl Check for Rails {
    fn id(&self) -> &'static str {
        "topo.rails"
    }
    fn doc_short(&self) -> &'static str {
        "GPU-to-NIC rails: fewer close NICs than GPUs, or GPUs sharing a NIC while another idles"
    }
    fn doc_long(&self) -> &'static str {
        "Assigns each GPU its rail NIC (closest pairs first, a NIC once while unused NICs remain, as \
         NCCL's topology search does on rail-optimised nodes). Warns when GPUs share a NIC while another \
         NIC has no GPU (bandwidth left idle; often a NIC in the wrong slot or NCCL_IB_HCA leaving one out) \
         and when fewer GPUs than present have a NIC behind their own PCIe switch (PIX/PXB): those GPUs' \
         inter-node traffic must go through another GPU (PXN) or the CPU. Rails that are not \
         index-aligned (GPU2 on mlx5_5) are information only."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        if let Some(findings) = preconditions(self.id(), inputs) {
            return findings;
        }
        let topology = &inputs.topology;
        let rails = &topology.rails;
        let map: Vec<String> = rails.iter().map(|r| format!("{}->{} ({})", r.gpu, r.nic_device, r.relation)).collect();
        let mut load = vec![0usize; topology.nics.len()];
        for rail in rails {
            if let Some(n) = topology.nics.iter().position(|nic| nic.label == rail.nic) {
                load[n] += 1;
            }
        }
        let shared: Vec<&str> =
            (0..load.len()).filter(|&n| load[n] > 1).map(|n| topology.nics[n].name.as_str()).collect();
        // A NIC with no GPU and no GPU within a switch of it is a storage or management NIC, not an idle rail.
        let idle: Vec<&str> = (0..load.len())
            .filter(|&n| load[n] == 0)
            .filter(|&n| (0..topology.gpus.len()).any(|g| topology.gpu_nic(g, n) < Relation::Sys))
            .map(|n| topology.nics[n].name.as_str())
            .collect();
        let close: Vec<&str> = rails.iter().filter(|r| r.relation.within_switch()).map(|r| r.gpu.as_str()).collect();
        let far: Vec<&str> = rails.iter().filter(|r| !r.relation.within_switch()).map(|r| r.gpu.as_str()).collect();
        let aligned = rails.iter().all(|r| r.gpu.trim_start_matches("GPU") == r.nic.trim_start_matches("NIC"));
        let mut problems = Vec::new();
        if !shared.is_empty() && !idle.is_empty() {
            problems.push(format!(
                "GPUs share {} while {} carries no GPU's traffic",
                shared.join(", "),
                idle.join(", ")
            ));
        }
        if !far.is_empty() {
            problems.push(format!(
                "{} rails for {} GPUs: no NIC behind the PCIe switch of {}",
                close.len(),
                topology.gpus.len(),
                far.join(", ")
            ));
        }
        let finding = if problems.is_empty() {
            let note = if aligned { "" } else { " (rails not index-aligned: information only)" };
            Finding::new(
                self.id(),
                Verdict::Pass,
                "node",
                format!("{} GPUs on {} rails{note}", topology.gpus.len(), close.len()),
            )
        } else {
            Finding::new(self.id(), Verdict::Warn, "node", problems.join("; "))
        };
        vec![finding
            .evidence(format!("rail map: {}", map.join(", ")))
            .expected(format!("{} rails within a PCIe switch", topology.gpus.len()))
            .observed(format!("{} rails within a PCIe switch", close.len()))]
    }
}
