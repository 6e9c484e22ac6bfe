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

/// The verdict on a GPU's closest NIC relation under the policy thresholds.
fn affinity_verdict(best: Relation, warn_at: Relation, fail_at: Relation) -> Verdict {
    // `?` is NODE or SYS: it gets what NODE would get, the least it can be, unless that is a pass
    // that SYS would not get (then it was not seen well enough to pass).
    if best == Relation::Unknown {
        let near = affinity_verdict(Relation::Node, warn_at, fail_at);
        let far = affinity_verdict(Relation::Sys, warn_at, fail_at);
        return if near == Verdict::Pass && far != Verdict::Pass { Verdict::Skip } else { near };
    }
    if best >= fail_at {
        Verdict::Fail
    } else if best >= warn_at {
        Verdict::Warn
    } else {
        Verdict::Pass
    }
}

/// The verdict and message on a GPU whose closest NICs (`names`) are at relation `best`. Shared by the
/// live check and `triage` (pasted `nvidia-smi topo -m`), so both say the same.
pub fn affinity_judgement(best: Relation, names: &[&str], warn_at: Relation, fail_at: Relation) -> (Verdict, String) {
    let verdict = affinity_verdict(best, warn_at, fail_at);
    let message = match verdict {
        _ if best == Relation::Unknown => format!(
            "closest NIC {} is across the CPU's host bridges, and a NUMA node is unknown, so NODE or SYS \
             cannot be told (numa_node -1 and no local_cpulist/local_cpus inside one node): GPUDirect \
             RDMA traffic crosses at least the host bridges",
            names.join(", ")
        ),
        Verdict::Pass => format!("closest NIC {} ({best})", names.join(", ")),
        _ => format!(
            "closest NIC is {best} ({}): GPUDirect RDMA traffic must cross {}",
            names.join(", "),
            if best == Relation::Sys { "the CPU socket interconnect" } else { "the CPU's host bridges" }
        ),
    };
    (verdict, message)
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
         NODE), fail at topology.affinity_fail_at (default SYS). A device whose NUMA node is unknown \
         (numa_node -1 and local_cpulist spanning nodes) is `?` (NODE or SYS) to devices on other host \
         bridges: it gets NODE's verdict (the least it can be), or a skip where NODE would pass and SYS not."
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
                let (verdict, message) = affinity_judgement(best, &names, warn_at, fail_at);
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
        let nics: Vec<(String, String)> = topology.nics.iter().map(|n| (n.label.clone(), n.name.clone())).collect();
        vec![rails_judgement(self.id(), topology.gpus.len(), &nics, &topology.rails, |g, n| topology.gpu_nic(g, n))]
    }
}

/// The rails verdict for `gpu_count` GPUs, `nics` (label, device name) and their assigned `rails`;
/// `relation(g, n)` is GPU `g`'s relation to NIC `n`. Shared by the live check and `triage` (a pasted
/// `nvidia-smi topo -m`).
pub fn rails_judgement(
    id: &str,
    gpu_count: usize,
    nics: &[(String, String)],
    rails: &[crate::topology::Rail],
    relation: impl Fn(usize, usize) -> Relation,
) -> Finding {
    let map: Vec<String> = rails.iter().map(|r| format!("{}->{} ({})", r.gpu, r.nic_device, r.relation)).collect();
    let mut load = vec![0usize; nics.len()];
    for rail in rails {
        if let Some(n) = nics.iter().position(|nic| nic.0 == rail.nic) {
            load[n] += 1;
        }
    }
    let shared: Vec<&str> = (0..load.len()).filter(|&n| load[n] > 1).map(|n| nics[n].1.as_str()).collect();
    let idle: Vec<&str> = (0..load.len())
        .filter(|&n| load[n] == 0)
        .filter(|&n| (0..gpu_count).any(|g| relation(g, n) < Relation::Sys))
        .map(|n| nics[n].1.as_str())
        .collect();
    let close: Vec<&str> = rails.iter().filter(|r| r.relation.within_switch()).map(|r| r.gpu.as_str()).collect();
    let far: Vec<&str> = rails.iter().filter(|r| !r.relation.within_switch()).map(|r| r.gpu.as_str()).collect();
    let aligned = rails.iter().all(|r| r.gpu.trim_start_matches("GPU") == r.nic.trim_start_matches("NIC"));
    let mut problems = Vec::new();
    if !shared.is_empty() && !idle.is_empty() {
        problems.push(format!("GPUs share {} while {} carries no GPU's traffic", shared.join(", "), idle.join(", ")));
    }
    if !far.is_empty() {
        problems.push(format!(
            "{} rails for {} GPUs: no NIC behind the PCIe switch of {}",
            close.len(),
            gpu_count,
            far.join(", ")
        ));
    }
    let finding = if problems.is_empty() {
        let note = if aligned { "" } else { " (rails not index-aligned: information only)" };
        Finding::new(id, Verdict::Pass, "node", format!("{gpu_count} GPUs on {} rails{note}", close.len()))
    } else {
        Finding::new(id, Verdict::Warn, "node", problems.join("; "))
    };
    finding
        .evidence(format!("rail map: {}", map.join(", ")))
        .expected(format!("{gpu_count} rails within a PCIe switch"))
        .observed(format!("{} rails within a PCIe switch", close.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `?` (NUMA node unknown across host bridges) gets NODE's verdict, never a pass that SYS would fail.
    #[test]
    fn an_unknown_relation_is_judged_by_what_it_must_be_at_least() {
        let judge = |warn_at, fail_at| affinity_judgement(Relation::Unknown, &["mlx5_0"], warn_at, fail_at);
        let (verdict, message) = judge(Relation::Node, Relation::Sys);
        assert_eq!(verdict, Verdict::Warn);
        assert!(message.contains("NODE or SYS cannot be told"), "{message}");
        assert_eq!(judge(Relation::Node, Relation::Node).0, Verdict::Fail);
        assert_eq!(judge(Relation::Sys, Relation::Sys).0, Verdict::Skip);
        assert_eq!(affinity_judgement(Relation::Sys, &["mlx5_0"], Relation::Node, Relation::Sys).0, Verdict::Fail);
    }
}
