//! The `nvidia-smi topo -m` matrix, its legend, and the rail map, as text.

use std::fmt::Write as _;

use fabricdoctor_checks::topology::Relation;
use fabricdoctor_checks::Topology;
use fabricdoctor_probes::node::NumaSource;

/// Legend lines in the order nvidia-smi prints them.
pub const LEGEND_ORDER: [Relation; 6] =
    [Relation::Same, Relation::Sys, Relation::Node, Relation::Phb, Relation::Pxb, Relation::Pix];

/// Space-aligned like `nvidia-smi topo -m`: a header row, one row per GPU then NIC with CPU and NUMA
/// affinity for GPUs, then the legend, the NIC legend and the rail map.
pub fn matrix_text(topology: &Topology) -> String {
    let mut out = String::new();
    let labels: Vec<&str> = topology.devices().map(|d| d.label.as_str()).collect();
    if labels.is_empty() {
        out.push_str("No GPU or RDMA NIC found.\n");
        return out;
    }
    let cell = |s: &str| format!("{s:<8}");
    out.push_str(&" ".repeat(8));
    for label in &labels {
        out.push_str(&cell(label));
    }
    out.push_str("CPU Affinity    NUMA Affinity\n");
    for (i, device) in topology.devices().enumerate() {
        out.push_str(&cell(&device.label));
        for relation in &topology.matrix[i] {
            let text = if *relation == Relation::Same { " X" } else { relation.as_str() };
            out.push_str(&cell(text));
        }
        if i < topology.gpus.len() {
            let numa = match (device.numa_node, device.numa_source) {
                (Some(node), NumaSource::NumaNode) => node.to_string(),
                (Some(node), _) => format!("{node} (from cpulist)"),
                (None, _) => "N/A".to_string(),
            };
            let _ = write!(out, "{:<16}{numa}", device.cpu_affinity.as_deref().unwrap_or("N/A"));
        }
        let trimmed = out.trim_end_matches(' ').len();
        out.truncate(trimmed);
        out.push('\n');
    }
    out.push_str("\nLegend:\n\n");
    for relation in LEGEND_ORDER {
        let _ = writeln!(out, "  {:<4} = {}", relation.as_str(), relation.legend());
    }
    if topology.matrix.iter().flatten().any(|relation| *relation == Relation::Unknown) {
        let _ = writeln!(out, "  {:<4} = {}", Relation::Unknown.as_str(), Relation::Unknown.legend());
    }
    out.push_str("  (NVLink is not shown: it needs the NVIDIA driver; GPU pairs show their PCIe relation.)\n");
    if !topology.nics.is_empty() {
        out.push_str("\nNIC Legend:\n\n");
        for nic in &topology.nics {
            let _ = writeln!(out, "  {}: {}", nic.label, nic.name);
        }
    }
    if !topology.rails.is_empty() {
        out.push_str("\nRail map (GPU -> NIC):\n\n");
        for rail in &topology.rails {
            let alternatives = if rail.alternatives.is_empty() {
                String::new()
            } else {
                format!("  (also {}: {})", rail.relation, rail.alternatives.join(", "))
            };
            let _ = writeln!(
                out,
                "  {:<5} -> {:<6} {:<10} {}{alternatives}",
                rail.gpu, rail.nic, rail.nic_device, rail.relation
            );
        }
    }
    out
}
