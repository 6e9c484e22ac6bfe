//! The per-host topology picture: NUMA nodes, host bridges, root ports, PCIe switches, GPUs and NICs
//! as a tree (the sysfs nesting of the devices), the GPU-to-NIC rails with their relation (PIX..SYS)
//! drawn under it, and the devices and links that `check` findings name marked. Positions are
//! computed here and written as inline SVG; [`TopologyPicture`] is plain data so a multi-host report
//! can carry one per host.

use std::collections::HashMap;
use std::fmt::Write as _;

use fabricdoctor_checks::topology::{natural_cmp, Relation};
use fabricdoctor_checks::{Finding, Topology, Verdict};
use serde::{Deserialize, Serialize};

use super::{escape, verdict_class};
use crate::topo::LEGEND_ORDER;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Numa,
    HostBridge,
    RootPort,
    /// A PCIe switch, drawn as its upstream port; its downstream ports are the links below it.
    Switch,
    /// A bridge that is not part of a switch (a PCIe-to-PCI bridge, an odd chain).
    Bridge,
    Gpu,
    Nic,
}

impl NodeKind {
    fn class(self) -> &'static str {
        match self {
            NodeKind::Numa => "numa",
            NodeKind::HostBridge => "hostbridge",
            NodeKind::RootPort => "rootport",
            NodeKind::Switch => "switch",
            NodeKind::Bridge => "bridge",
            NodeKind::Gpu => "gpu",
            NodeKind::Nic => "nic",
        }
    }
}

/// A finding drawn on the picture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mark {
    pub id: String,
    pub verdict: Verdict,
    pub subject: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PictureNode {
    pub kind: NodeKind,
    /// "GPU0", "NIC3", "PCIe switch", "NUMA 1".
    pub label: String,
    /// "mlx5_3", the GPU model, the bridge address.
    pub detail: String,
    /// Index into [`TopologyPicture::nodes`]; parents come before their children.
    pub parent: Option<usize>,
    /// PCI addresses (or host bridge names) the node stands for; findings naming one mark the node.
    pub addresses: Vec<String>,
    /// Names findings use for the device ("mlx5_0", "GPU3").
    pub names: Vec<String>,
    /// Bridges on the link up to the parent that are not drawn (a switch's downstream port).
    pub link_addresses: Vec<String>,
    /// Findings about the node itself.
    pub marks: Vec<Mark>,
    /// Findings about the PCIe link up to the parent (`pcie.link.*`, `pcie.aer`, downstream ports).
    pub link_marks: Vec<Mark>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RailLink {
    pub gpu: String,
    pub nic: String,
    pub nic_device: String,
    pub relation: Relation,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopologyPicture {
    pub hostname: String,
    pub nodes: Vec<PictureNode>,
    pub rails: Vec<RailLink>,
    /// Row and column labels of `matrix` (GPUs then NICs), as `topo` prints them.
    pub labels: Vec<String>,
    pub matrix: Vec<Vec<Relation>>,
}

/// Findings whose subject names a device mark its PCIe link, not the device, when they are about the link.
fn is_link_finding(id: &str) -> bool {
    id.starts_with("pcie.link") || id.starts_with("pcie.aer")
}

/// The words of a finding subject ("GPU3 (0000:9a:00.0)" -> GPU3, 0000:9a:00.0).
fn subject_words(subject: &str) -> impl Iterator<Item = &str> {
    subject
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | '[' | ']' | ',' | ';'))
        .filter(|w| !w.is_empty())
}

/// "NVIDIA Corporation GH100 [H100 SXM5 80GB]" -> "H100 SXM5 80GB": the marketing name pci-ids
/// puts in brackets is what operators call the card.
fn short_model(model: &str) -> &str {
    match (model.rfind('['), model.rfind(']')) {
        (Some(open), Some(close)) if open < close => &model[open + 1..close],
        _ => model,
    }
}

/// The `topology` object of `topo --json` as the page reads it back (a burn-in report embeds one per
/// host). Reports written before `host_bridge`/`upstream` existed draw devices under their NUMA node.
#[derive(Debug, Deserialize)]
struct TopologyDocument {
    gpus: Vec<DeviceDocument>,
    nics: Vec<DeviceDocument>,
    matrix: Vec<Vec<Relation>>,
    #[serde(default)]
    rails: Vec<RailLink>,
}

#[derive(Debug, Deserialize)]
struct DeviceDocument {
    label: String,
    address: String,
    name: String,
    numa_node: Option<u32>,
    #[serde(default)]
    cpu_affinity: Option<String>,
    #[serde(default)]
    host_bridge: Option<String>,
    #[serde(default)]
    upstream: Vec<String>,
}

impl TopologyPicture {
    /// The picture of a node's topology, with the non-passing `findings` (of `check` on the same node)
    /// marked on the devices and links they name.
    pub fn from_topology(hostname: &str, topology: &Topology, findings: &[Finding]) -> TopologyPicture {
        let device = |d: &fabricdoctor_checks::topology::TopologyDevice| DeviceDocument {
            label: d.label.clone(),
            address: d.address.to_string(),
            name: d.name.clone(),
            numa_node: d.numa_node,
            cpu_affinity: d.cpu_affinity.clone(),
            host_bridge: d.host_bridge.clone(),
            upstream: d.upstream.iter().map(|a| a.to_string()).collect(),
        };
        let document = TopologyDocument {
            gpus: topology.gpus.iter().map(device).collect(),
            nics: topology.nics.iter().map(device).collect(),
            matrix: topology.matrix.clone(),
            rails: topology
                .rails
                .iter()
                .map(|r| RailLink {
                    gpu: r.gpu.clone(),
                    nic: r.nic.clone(),
                    nic_device: r.nic_device.clone(),
                    relation: r.relation,
                })
                .collect(),
        };
        build(hostname, document, findings)
    }

    /// The picture of a `topo --json` `topology` object (as a burn-in report carries it).
    pub fn from_topology_json(
        hostname: &str,
        topology: &serde_json::Value,
        findings: &[Finding],
    ) -> Result<TopologyPicture, serde_json::Error> {
        let document = TopologyDocument::deserialize(topology)?;
        Ok(build(hostname, document, findings))
    }

    /// The SVG picture, the rail table and the relation matrix.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if self.nodes.is_empty() {
            out.push_str("<p class=\"note\">No GPU or RDMA NIC found on this host.</p>");
            return out;
        }
        out.push_str(&self.svg());
        out.push_str(&self.matrix_table());
        out
    }

    fn children(&self) -> Vec<Vec<usize>> {
        let mut children = vec![Vec::new(); self.nodes.len()];
        for (i, node) in self.nodes.iter().enumerate() {
            if let Some(parent) = node.parent.filter(|&p| p < self.nodes.len() && p != i) {
                children[parent].push(i);
            }
        }
        // Siblings in PCI address order, so a GPU and the NIC behind the same switch sit side by side.
        for list in &mut children {
            list.sort_by(|&a, &b| {
                let key = |n: &PictureNode| n.addresses.first().cloned().unwrap_or_else(|| n.label.clone());
                key(&self.nodes[a]).cmp(&key(&self.nodes[b]))
            });
        }
        children
    }

    /// Tree layout: leaves on consecutive slots along the bottom row, every other node centred over
    /// its children, one row per depth.
    fn layout(&self) -> (Vec<(f64, f64)>, usize, usize) {
        let children = self.children();
        // Parent links come from a report file: a cycle or a dangling index ends the walk.
        let depth: Vec<usize> = self
            .nodes
            .iter()
            .map(|node| {
                let mut d = 0;
                let mut cursor = node.parent;
                while let Some(parent) = cursor.and_then(|p| self.nodes.get(p)).filter(|_| d < self.nodes.len()) {
                    d += 1;
                    cursor = parent.parent;
                }
                d
            })
            .collect();
        let rows = depth.iter().copied().max().unwrap_or(0) + 1;
        let mut slot = vec![0f64; self.nodes.len()];
        let mut next = 0f64;
        let mut roots: Vec<usize> = (0..self.nodes.len()).filter(|&i| self.nodes[i].parent.is_none()).collect();
        // NUMA nodes in their numeric order ("NUMA 2" before "NUMA 10").
        roots.sort_by(|&a, &b| natural_cmp(&self.nodes[a].label, &self.nodes[b].label));
        for (r, &root) in roots.iter().enumerate() {
            if r > 0 {
                next += 0.5; // a gap between NUMA nodes
            }
            place(root, &children, &mut slot, &mut next);
        }
        let positions = (0..self.nodes.len())
            .map(|i| {
                let row = if matches!(self.nodes[i].kind, NodeKind::Gpu | NodeKind::Nic) { rows - 1 } else { depth[i] };
                (MARGIN + slot[i] * SLOT_WIDTH + BOX_WIDTH / 2.0, MARGIN + row as f64 * ROW_HEIGHT)
            })
            .collect();
        (positions, next.ceil() as usize, rows)
    }

    fn svg(&self) -> String {
        let (positions, slots, rows) = self.layout();
        let width = MARGIN * 2.0 + slots as f64 * SLOT_WIDTH;
        let device_row_bottom = MARGIN + (rows - 1) as f64 * ROW_HEIGHT + BOX_HEIGHT;
        let height = device_row_bottom + RAIL_DEPTH + 24.0;
        let mut out = String::new();
        let _ = write!(
            out,
            "<figure class=\"topology\"><svg class=\"topology\" role=\"img\" viewBox=\"0 0 {width:.0} {height:.0}\" \
             width=\"{width:.0}\" height=\"{height:.0}\" data-host=\"{}\"><title>PCIe topology of {}</title>",
            escape(&self.hostname),
            escape(&self.hostname)
        );
        // Links first, so boxes are drawn over their ends.
        for (i, node) in self.nodes.iter().enumerate() {
            let Some(parent) = node.parent.filter(|&p| p < self.nodes.len()) else { continue };
            let (x1, y1) = positions[parent];
            let (x2, y2) = positions[i];
            let (top, bottom) = (y1 + BOX_HEIGHT, y2);
            let middle = top + (ROW_HEIGHT - BOX_HEIGHT) / 2.0;
            let class = worst(&node.link_marks).map(verdict_class).unwrap_or("v-pass");
            let mut title =
                format!("{} {} — {} {}", self.nodes[parent].label, self.nodes[parent].detail, node.label, node.detail);
            for address in &node.link_addresses {
                let _ = write!(title, "\nvia downstream port {address}");
            }
            for mark in &node.link_marks {
                let _ = write!(title, "\n{}: {} {}: {}", mark.verdict, mark.id, mark.subject, mark.message);
            }
            let _ = write!(
                out,
                "<path class=\"link {class}\" d=\"M{x1:.1} {top:.1}V{middle:.1}H{x2:.1}V{bottom:.1}\"><title>{}</title></path>",
                escape(&title)
            );
        }
        // The SMP interconnect between NUMA nodes.
        let mut numa: Vec<usize> = (0..self.nodes.len()).filter(|&i| self.nodes[i].kind == NodeKind::Numa).collect();
        numa.sort_by(|&a, &b| positions[a].0.total_cmp(&positions[b].0));
        for pair in numa.windows(2) {
            let (x1, y) = positions[pair[0]];
            let (x2, _) = positions[pair[1]];
            let y = y + BOX_HEIGHT / 2.0;
            let _ = write!(
                out,
                "<line class=\"smp\" x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"><title>SMP interconnect \
                 (QPI/UPI/xGMI): GPU and NIC pairs across it are SYS</title></line>",
                x1 + BOX_WIDTH / 2.0,
                x2 - BOX_WIDTH / 2.0
            );
        }
        for (i, node) in self.nodes.iter().enumerate() {
            let (x, y) = positions[i];
            let class = worst(&node.marks).map(verdict_class).unwrap_or("v-pass");
            let mut title = format!("{} {}", node.label, node.detail);
            for address in node.addresses.iter().filter(|a| **a != node.detail) {
                let _ = write!(title, " ({address})");
            }
            for mark in &node.marks {
                let _ = write!(title, "\n{}: {} {}: {}", mark.verdict, mark.id, mark.subject, mark.message);
            }
            let _ = write!(
                out,
                "<g class=\"node {} {class}\"><title>{}</title><rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{BOX_WIDTH}\" \
                 height=\"{BOX_HEIGHT}\" rx=\"4\"/><text x=\"{x:.1}\" y=\"{:.1}\" class=\"label\">{}</text><text x=\"{x:.1}\" \
                 y=\"{:.1}\" class=\"detail\">{}</text></g>",
                node.kind.class(),
                escape(&title),
                x - BOX_WIDTH / 2.0,
                y + 14.0,
                escape(&truncate(&node.label, 16)),
                y + 27.0,
                escape(&truncate(&node.detail, 17)),
            );
        }
        // Rails: an arc under the device row from each GPU to its NIC, coloured by their relation.
        let by_label: HashMap<&str, usize> = self
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| matches!(n.kind, NodeKind::Gpu | NodeKind::Nic))
            .map(|(i, n)| (n.label.as_str(), i))
            .collect();
        for rail in &self.rails {
            let (Some(&g), Some(&n)) = (by_label.get(rail.gpu.as_str()), by_label.get(rail.nic.as_str())) else {
                continue;
            };
            let (x1, x2) = (positions[g].0, positions[n].0);
            let y = device_row_bottom;
            let depth = (RAIL_DEPTH * (0.35 + (x1 - x2).abs() / width)).min(RAIL_DEPTH);
            let middle = (x1 + x2) / 2.0;
            let _ = write!(
                out,
                "<g class=\"rail rel-{}\"><title>rail: {} → {} ({}): {} — {}</title><path d=\"M{x1:.1} {y:.1}Q{middle:.1} \
                 {:.1} {x2:.1} {y:.1}\"/><text x=\"{middle:.1}\" y=\"{:.1}\">{}</text></g>",
                rail.relation.as_str().to_lowercase(),
                escape(&rail.gpu),
                escape(&rail.nic),
                escape(&rail.nic_device),
                rail.relation,
                rail.relation.legend(),
                y + depth * 2.0,
                y + depth + 4.0,
                rail.relation
            );
        }
        out.push_str(
            "</svg><figcaption>PCIe tree from sysfs; curves under the devices are the GPU→NIC rails with \
                      their relation. Red and amber mark devices and links named by failing and warning findings \
                      (hover for the finding).</figcaption></figure>",
        );
        out
    }

    fn matrix_table(&self) -> String {
        let mut out = String::from(
            "<table class=\"relations\"><caption>GPU/NIC relations (as <code>topo</code>)</caption><tr><th></th>",
        );
        for label in &self.labels {
            let _ = write!(out, "<th>{}</th>", escape(label));
        }
        out.push_str("</tr>");
        for (label, row) in self.labels.iter().zip(&self.matrix) {
            let _ = write!(out, "<tr><th>{}</th>", escape(label));
            for relation in row {
                let text = if *relation == Relation::Same { "X" } else { relation.as_str() };
                let _ = write!(out, "<td class=\"rel-{}\">{text}</td>", css_name(*relation));
            }
            out.push_str("</tr>");
        }
        out.push_str("</table><dl class=\"legend\">");
        let unknown_shown = self.matrix.iter().flatten().any(|relation| *relation == Relation::Unknown);
        let shown = LEGEND_ORDER.into_iter().chain(unknown_shown.then_some(Relation::Unknown));
        for relation in shown {
            let _ = write!(
                out,
                "<dt class=\"rel-{}\">{}</dt><dd>{}</dd>",
                css_name(relation),
                relation.as_str(),
                relation.legend()
            );
        }
        out.push_str("</dl>");
        if !self.rails.is_empty() {
            out.push_str("<table class=\"rails\"><caption>Rail map</caption><tr><th>GPU</th><th>NIC</th><th>device</th><th>relation</th></tr>");
            for rail in &self.rails {
                let _ = write!(
                    out,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"rel-{}\">{}</td></tr>",
                    escape(&rail.gpu),
                    escape(&rail.nic),
                    escape(&rail.nic_device),
                    rail.relation.as_str().to_lowercase(),
                    rail.relation
                );
            }
            out.push_str("</table>");
        }
        out
    }
}

fn build(hostname: &str, document: TopologyDocument, findings: &[Finding]) -> TopologyPicture {
    let mut nodes: Vec<PictureNode> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let plain = |kind, label: &str, detail: &str, parent, addresses: Vec<String>| PictureNode {
        kind,
        label: label.to_string(),
        detail: detail.to_string(),
        parent,
        addresses,
        names: Vec::new(),
        link_addresses: Vec::new(),
        marks: Vec::new(),
        link_marks: Vec::new(),
    };
    let gpu_count = document.gpus.len();
    for (i, device) in document.gpus.iter().chain(&document.nics).enumerate() {
        let numa_label = match device.numa_node {
            Some(n) => format!("NUMA {n}"),
            None => "NUMA unknown".to_string(),
        };
        let mut key = numa_label.clone();
        let mut parent = *index.entry(key.clone()).or_insert_with(|| {
            let cpus = device.cpu_affinity.as_deref().map(|c| format!("CPUs {c}")).unwrap_or_default();
            nodes.push(plain(NodeKind::Numa, &numa_label, &cpus, None, Vec::new()));
            nodes.len() - 1
        });
        let mut pending_link: Vec<String> = Vec::new();
        if let Some(bridge) = &device.host_bridge {
            key = format!("{key}/{bridge}");
            let p = parent;
            parent = *index.entry(key.clone()).or_insert_with(|| {
                nodes.push(plain(NodeKind::HostBridge, "host bridge", bridge, Some(p), vec![bridge.clone()]));
                nodes.len() - 1
            });
            let chain = &device.upstream;
            let mut step = 0;
            while step < chain.len() {
                // upstream[0] is the root port; after it a switch is an upstream port followed by one
                // of its downstream ports (PCI Express Base Specification 6.0, section 1.3.3).
                let (kind, label, downstream) = match step {
                    0 => (NodeKind::RootPort, "root port", None),
                    _ if step + 1 < chain.len() => (NodeKind::Switch, "PCIe switch", Some(chain[step + 1].clone())),
                    _ => (NodeKind::Bridge, "bridge", None),
                };
                let address = &chain[step];
                key = format!("{key}/{address}");
                let p = parent;
                let link = std::mem::take(&mut pending_link);
                parent = *index.entry(key.clone()).or_insert_with(|| {
                    let mut made = plain(kind, label, address, Some(p), vec![address.clone()]);
                    made.link_addresses = link;
                    nodes.push(made);
                    nodes.len() - 1
                });
                pending_link = downstream.into_iter().collect();
                step += if kind == NodeKind::Switch { 2 } else { 1 };
            }
        }
        let is_gpu = i < gpu_count;
        let mut names = vec![device.label.clone()];
        if !is_gpu {
            names.push(device.name.clone());
        }
        nodes.push(PictureNode {
            kind: if is_gpu { NodeKind::Gpu } else { NodeKind::Nic },
            label: device.label.clone(),
            detail: if is_gpu { short_model(&device.name).to_string() } else { device.name.clone() },
            parent: Some(parent),
            addresses: vec![device.address.clone()],
            names,
            link_addresses: pending_link,
            marks: Vec::new(),
            link_marks: Vec::new(),
        });
    }
    for finding in findings.iter().filter(|f| matches!(f.verdict, Verdict::Warn | Verdict::Error | Verdict::Fail)) {
        let mark = || Mark {
            id: finding.id.clone(),
            verdict: finding.verdict,
            subject: finding.subject.clone(),
            message: finding.message.clone(),
        };
        let words: Vec<&str> = subject_words(&finding.subject).collect();
        let named = |list: &[String]| list.iter().any(|a| words.contains(&a.as_str()));
        // A finding marks each node at most once, however many of its names the subject gives.
        for picture_node in nodes.iter_mut() {
            let names_node = named(&picture_node.addresses) || named(&picture_node.names);
            if names_node && !is_link_finding(&finding.id) && picture_node.kind != NodeKind::HostBridge {
                picture_node.marks.push(mark());
            } else if (names_node && is_link_finding(&finding.id)) || named(&picture_node.link_addresses) {
                picture_node.link_marks.push(mark());
            }
        }
    }
    TopologyPicture {
        hostname: hostname.to_string(),
        nodes,
        rails: document.rails,
        labels: document.gpus.iter().chain(&document.nics).map(|d| d.label.clone()).collect(),
        matrix: document.matrix,
    }
}

const MARGIN: f64 = 12.0;
const SLOT_WIDTH: f64 = 112.0;
const BOX_WIDTH: f64 = 104.0;
const BOX_HEIGHT: f64 = 34.0;
const ROW_HEIGHT: f64 = 62.0;
const RAIL_DEPTH: f64 = 56.0;

/// Post-order placement: a leaf takes the next slot; a parent sits midway over its first and last child.
fn place(node: usize, children: &[Vec<usize>], slot: &mut [f64], next: &mut f64) {
    if children[node].is_empty() {
        slot[node] = *next;
        *next += 1.0;
        return;
    }
    for &child in &children[node] {
        place(child, children, slot, next);
    }
    let first = slot[children[node][0]];
    let last = slot[children[node][children[node].len() - 1]];
    slot[node] = (first + last) / 2.0;
}

fn worst(marks: &[Mark]) -> Option<Verdict> {
    marks.iter().map(|m| m.verdict).max()
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut cut: String = text.chars().take(max - 1).collect();
        cut.push('…');
        cut
    }
}

/// The class suffix of a relation's cell (`?` is not a class name).
fn css_name(relation: Relation) -> String {
    match relation {
        Relation::Unknown => "unknown".to_string(),
        known => known.as_str().to_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GPU0 and NIC0 behind one switch (root port 15:01.0, switch 16:00.0 with downstream ports
    /// 17:00.0 and 17:01.0), GPU1 on another NUMA node's root port: `topo --json`'s shape.
    fn document() -> serde_json::Value {
        serde_json::json!({
            "gpus": [
                {"label": "GPU0", "address": "0000:18:00.0", "name": "NVIDIA Corporation GH100 [H100 SXM5 80GB]",
                 "numa_node": 0, "numa_source": "numa_node", "cpu_affinity": "0-47",
                 "host_bridge": "pci0000:15", "upstream": ["0000:15:01.0", "0000:16:00.0", "0000:17:00.0"]},
                {"label": "GPU1", "address": "0000:9a:00.0", "name": "<b>GPU</b>", "numa_node": 1,
                 "numa_source": "numa_node", "host_bridge": "pci0000:97", "upstream": ["0000:97:01.0"]}
            ],
            "nics": [
                {"label": "NIC0", "address": "0000:19:00.0", "name": "mlx5_0", "numa_node": 0, "numa_source": "numa_node",
                 "host_bridge": "pci0000:15", "upstream": ["0000:15:01.0", "0000:16:00.0", "0000:17:01.0"]}
            ],
            "matrix": [["X", "SYS", "PIX"], ["SYS", "X", "SYS"], ["PIX", "SYS", "X"]],
            "rails": [
                {"gpu": "GPU0", "nic": "NIC0", "nic_device": "mlx5_0", "relation": "PIX", "alternatives": []},
                {"gpu": "GPU1", "nic": "NIC0", "nic_device": "mlx5_0", "relation": "SYS", "alternatives": []}
            ]
        })
    }

    fn kinds(picture: &TopologyPicture) -> Vec<(NodeKind, &str)> {
        picture.nodes.iter().map(|n| (n.kind, n.detail.as_str())).collect()
    }

    #[test]
    fn the_tree_follows_the_pcie_path_with_switches_drawn_once() {
        let picture = TopologyPicture::from_topology_json("h1", &document(), &[]).expect("topology");
        assert_eq!(
            kinds(&picture),
            [
                (NodeKind::Numa, "CPUs 0-47"),
                (NodeKind::HostBridge, "pci0000:15"),
                (NodeKind::RootPort, "0000:15:01.0"),
                (NodeKind::Switch, "0000:16:00.0"),
                (NodeKind::Gpu, "H100 SXM5 80GB"),
                (NodeKind::Numa, ""),
                (NodeKind::HostBridge, "pci0000:97"),
                (NodeKind::RootPort, "0000:97:01.0"),
                (NodeKind::Gpu, "<b>GPU</b>"),
                (NodeKind::Nic, "mlx5_0"),
            ]
        );
        let nic = &picture.nodes[9];
        assert_eq!(nic.parent, Some(3), "NIC0 under the same switch as GPU0");
        assert_eq!(nic.link_addresses, ["0000:17:01.0"], "through its own downstream port");
        let svg = picture.render();
        assert_eq!(svg.matches("<g class=\"node ").count(), 10);
        assert_eq!(svg.matches("<path class=\"link ").count(), 8, "every node but the two NUMA roots");
        assert!(svg.contains("<g class=\"rail rel-sys\"><title>rail: GPU1 → NIC0"));
        assert!(svg.contains("&lt;b&gt;GPU&lt;/b&gt;") && !svg.contains("<b>GPU</b>"));
    }

    #[test]
    fn findings_mark_the_device_or_its_link_once() {
        let findings = [
            Finding::new("pcie.link.width", Verdict::Fail, "0000:19:00.0 (mlx5_0)", "x8 of x16"),
            Finding::new("rdma.port.state", Verdict::Warn, "mlx5_0 port 1", "down"),
            Finding::new("pcie.acs", Verdict::Fail, "0000:17:00.0 (bridge)", "redirect"),
            Finding::new("topo.gpu_nic.affinity", Verdict::Fail, "GPU1 (0000:9a:00.0)", "SYS"),
            Finding::new("host.memlock", Verdict::Fail, "node", "64 KiB"),
            Finding::new("pcie.mps", Verdict::Pass, "0000:18:00.0 (GPU0)", "ok"),
        ];
        let picture = TopologyPicture::from_topology_json("h1", &document(), &findings).expect("topology");
        let ids = |marks: &[Mark]| marks.iter().map(|m| m.id.clone()).collect::<Vec<_>>();
        let node = |label: &str| picture.nodes.iter().find(|n| n.label == label).expect("node");
        assert_eq!(ids(&node("NIC0").link_marks), ["pcie.link.width"]);
        assert_eq!(ids(&node("NIC0").marks), ["rdma.port.state"]);
        assert_eq!(ids(&node("GPU0").link_marks), ["pcie.acs"], "downstream port 17:00.0 is GPU0's link");
        assert_eq!(ids(&node("GPU1").marks), ["topo.gpu_nic.affinity"]);
        assert!(node("GPU0").marks.is_empty(), "passes mark nothing");
        assert!(picture.nodes.iter().all(|n| !ids(&n.marks).contains(&"host.memlock".to_string())));
        let svg = picture.render();
        assert!(svg.contains("<g class=\"node nic v-warn\">"));
        assert_eq!(svg.matches("<path class=\"link v-fail\"").count(), 2);
    }

    #[test]
    fn reports_without_the_pcie_path_draw_devices_under_their_numa_node() {
        let mut old = document();
        for kind in ["gpus", "nics"] {
            for device in old[kind].as_array_mut().expect("devices") {
                let object = device.as_object_mut().expect("object");
                object.remove("host_bridge");
                object.remove("upstream");
            }
        }
        let picture = TopologyPicture::from_topology_json("h1", &old, &[]).expect("topology");
        assert_eq!(picture.nodes.len(), 5, "two NUMA nodes and three devices");
        assert!(TopologyPicture::from_topology_json("h1", &serde_json::json!({"gpus": 3}), &[]).is_err());
    }

    #[test]
    fn a_picture_with_a_parent_cycle_still_renders() {
        let mut picture = TopologyPicture::from_topology_json("h1", &document(), &[]).expect("topology");
        picture.nodes[0].parent = Some(4);
        picture.nodes[2].parent = Some(99);
        let svg = picture.render();
        assert!(svg.contains("</svg>"));
    }
}
