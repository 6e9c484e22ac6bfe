//! `nvidia-smi topo -m` text (space- or TAB-separated, with or without legends), judged by the same
//! affinity and rail functions the live `topo.*` checks use.

use std::collections::BTreeMap;

use fabricdoctor_checks::topo::{affinity_judgement, rails_judgement};
use fabricdoctor_checks::topology::assign_rails;
use fabricdoctor_checks::{Finding, Policy, Relation, Verdict};

use super::analysis::Analysis;
use super::lines::numbered_lines;
use crate::fact::{Evidence, Fact};

#[derive(Debug, Clone)]
pub struct TopoMatrix {
    pub gpus: Vec<String>,
    /// (label "NIC0", device "mlx5_0" from the NIC legend, else the label).
    pub nics: Vec<(String, String)>,
    /// gpu_nic[g][n]
    pub gpu_nic: Vec<Vec<Relation>>,
    pub evidence: Vec<Evidence>,
    /// GPU rows cut short (a truncated paste): left out of the verdicts.
    pub incomplete_rows: Vec<String>,
    /// GPUs the header names (a cut-short row still counts as a GPU of the node).
    pub header_gpus: usize,
}

fn relation(cell: &str) -> Option<Relation> {
    Some(match cell {
        "X" => Relation::Same,
        "PIX" => Relation::Pix,
        "PXB" => Relation::Pxb,
        "PHB" => Relation::Phb,
        "NODE" => Relation::Node,
        "SYS" => Relation::Sys,
        _ => return None,
    })
}

fn is_label(token: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    token.strip_prefix("GPU").is_some_and(digits)
        || token.strip_prefix("NIC").is_some_and(digits)
        || token.starts_with("mlx") && token.contains('_')
}

pub fn parse(file: &str, text: &str) -> Option<TopoMatrix> {
    let lines: Vec<(usize, &str)> = numbered_lines(text).collect();
    let header_at = lines.iter().position(|(_, l)| {
        let tokens: Vec<&str> = l.split_whitespace().collect();
        tokens.first() == Some(&"GPU0") && tokens.iter().filter(|t| is_label(t)).count() >= 2
    })?;
    let columns: Vec<&str> = lines[header_at].1.split_whitespace().take_while(|t| is_label(t)).collect();
    let gpu_columns: Vec<usize> = (0..columns.len()).filter(|&i| columns[i].starts_with("GPU")).collect();
    let nic_columns: Vec<usize> = (0..columns.len()).filter(|&i| !columns[i].starts_with("GPU")).collect();
    if nic_columns.is_empty() {
        return None;
    }
    let mut legend: BTreeMap<String, String> = BTreeMap::new();
    for (_, line) in &lines {
        if let Some((label, device)) = line.trim().split_once(": ") {
            if label.starts_with("NIC") && is_label(label) {
                legend.insert(label.to_string(), device.trim().to_string());
            }
        }
    }
    let mut matrix = TopoMatrix {
        gpus: Vec::new(),
        nics: nic_columns
            .iter()
            .map(|&i| {
                (columns[i].to_string(), legend.get(columns[i]).cloned().unwrap_or_else(|| columns[i].to_string()))
            })
            .collect(),
        gpu_nic: Vec::new(),
        evidence: vec![Evidence::new(file, lines[header_at].0, lines[header_at].1)],
        incomplete_rows: Vec::new(),
        header_gpus: gpu_columns.len(),
    };
    for (line_no, line) in &lines[header_at + 1..] {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some(label) = tokens.first().filter(|t| t.starts_with("GPU") && is_label(t)) else { continue };
        let cells = &tokens[1..];
        let row: Option<Vec<Relation>> = nic_columns.iter().map(|&i| cells.get(i).and_then(|c| relation(c))).collect();
        match row {
            Some(row) if cells.len() >= columns.len() => {
                matrix.gpus.push(label.to_string());
                matrix.gpu_nic.push(row);
                matrix.evidence.push(Evidence::new(file, *line_no, line));
            }
            _ => matrix.incomplete_rows.push(label.to_string()),
        }
    }
    (!matrix.gpus.is_empty()).then_some(matrix)
}

pub fn analyze(matrix: &TopoMatrix, analysis: &mut Analysis) {
    let policy = Policy::default();
    let relation =
        |g: usize, n: usize| matrix.gpu_nic.get(g).and_then(|row| row.get(n)).copied().unwrap_or(Relation::Sys);
    let cite = |g: usize| super::counters::cite(&matrix.evidence[g + 1]);
    for (g, gpu) in matrix.gpus.iter().enumerate() {
        let Some(best) = (0..matrix.nics.len()).map(|n| relation(g, n)).min() else { continue };
        let names: Vec<&str> =
            (0..matrix.nics.len()).filter(|&n| relation(g, n) == best).map(|n| matrix.nics[n].1.as_str()).collect();
        let (verdict, message) =
            affinity_judgement(best, &names, policy.topology.affinity_warn_at, policy.topology.affinity_fail_at);
        analysis.observations.push(Finding::new("topo.gpu_nic.affinity", verdict, gpu, message).evidence(cite(g)));
        // Every NIC on the other CPU socket: NCCL does not use GPUDirect RDMA that far by default
        // (NCCL_NET_GDR_LEVEL), which the NCCL reader weighs against its channels.
        if best == Relation::Sys {
            analysis.push(
                Fact::new("topo.gpu_nic_sys")
                    .attr("gpu", gpu)
                    .attr("nic", names.join(", "))
                    .evidence(matrix.evidence[g + 1].clone()),
            );
        }
    }
    let rails = assign_rails(&matrix.gpus, &matrix.nics, relation);
    let mut finding =
        rails_judgement("topo.rails", matrix.header_gpus.max(matrix.gpus.len()), &matrix.nics, &rails, relation);
    if !matrix.incomplete_rows.is_empty() {
        finding
            .message
            .push_str(&format!(" (rows {} cut short in this paste: not judged)", matrix.incomplete_rows.join(", ")));
    }
    analysis.observations.push(finding);
    let far: Vec<&str> = (0..matrix.nics.len())
        .filter(|&n| (0..matrix.gpus.len()).all(|g| relation(g, n) == Relation::Sys))
        .map(|n| matrix.nics[n].1.as_str())
        .collect();
    if !far.is_empty() && far.len() < matrix.nics.len() {
        analysis.observations.push(Finding::new(
            "topo.nic.far",
            Verdict::Warn,
            "node",
            format!(
                "{} SYS from every GPU (storage or management NICs?): leave them out of NCCL_IB_HCA so no rank's traffic crosses the socket link",
                far.join(", ")
            ),
        ));
    }
    for rail in &rails {
        if let Ok(index) = rail.gpu.trim_start_matches("GPU").parse::<u32>() {
            analysis.ranks.rails.insert(index, rail.nic_device.clone());
        }
    }
}

/// The GPU-to-GPU part of `nvidia-smi topo -m`, read from its rows alone (a paste that lost the
/// header keeps them): a row is `GPUi` followed by its cells, with `X` in column i. Only the pairs
/// whose two rows are both present are read.
fn gpu_rows(text: &str) -> BTreeMap<usize, (usize, &str, Vec<String>)> {
    let mut rows = BTreeMap::new();
    for (line_no, line) in numbered_lines(text) {
        let mut tokens = line.split_whitespace();
        let Some(index) = tokens.next().and_then(|t| t.strip_prefix("GPU")).and_then(|t| t.parse::<usize>().ok())
        else {
            continue;
        };
        let cells: Vec<String> = tokens.take(index.saturating_add(64)).map(str::to_string).collect();
        if index < 1024 && cells.get(index).map(String::as_str) == Some("X") {
            rows.insert(index, (line_no, line, cells));
        }
    }
    rows
}

/// A cell that says NVLink joins the pair ("NV18": bonded NVLinks, nvidia-smi(1) topo legend).
fn is_nvlink(cell: &str) -> bool {
    cell.strip_prefix("NV").is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// GPUs that `topo -m` shows joined to no other GPU by NVLink while every pair of at least three
/// others is (vllm-project/vllm#16336: seven B200 at NV18 to each other, GPU2 at NODE and SYS to
/// all): a baseboard whose GPUs are all built onto one NVLink fabric, where this GPU's links are
/// down. A node whose GPUs are only partly joined (bridged pairs of PCIe cards) is no such board.
pub fn gpus_left_off_nvlink(file: &str, text: &str) -> Vec<Fact> {
    if !text.contains("NV") {
        return Vec::new();
    }
    let rows = gpu_rows(text);
    let present: Vec<usize> = rows.keys().copied().collect();
    let cell = |i: usize, j: usize| rows.get(&i).and_then(|(_, _, cells)| cells.get(j)).map(String::as_str);
    let joined = |i: usize| present.iter().any(|&j| j != i && cell(i, j).is_some_and(is_nvlink));
    let (on, off): (Vec<usize>, Vec<usize>) = present.iter().partition(|&&i| joined(i));
    let full_mesh = on.iter().all(|&i| on.iter().all(|&j| i == j || cell(i, j).is_some_and(is_nvlink)));
    // The GPU left off reaches the others over PCIe: its cells are relations, not garbage.
    let over_pcie = off.iter().all(|&i| on.iter().all(|&j| cell(i, j).and_then(relation).is_some()));
    if on.len() < 3 || off.is_empty() || off.len() >= on.len() || !full_mesh || !over_pcie {
        return Vec::new();
    }
    off.iter()
        .map(|&i| {
            let (line_no, line, _) = &rows[&i];
            Fact::new("gpu.nvlink_inactive")
                .attr("gpu", i)
                .attr("links", "all")
                .evidence(Evidence::new(file, *line_no, line))
        })
        .collect()
}

/// `nvidia-smi topo -p2p n`: whether CUDA can use NVLink between each pair of GPUs ("OK"), or why
/// not ("NS" not supported, "CNS"/"GNS"/"TNS" chipset, GPU or topology not supported, "U" unknown;
/// nvidia-smi(1)). The capability letter comes from the command line above the matrix; without it
/// the matrix could be PCIe reads or writes, and is not judged.
#[derive(Debug, Clone)]
pub struct NvlinkPeerMatrix {
    pub gpus: usize,
    /// Pairs (either order counted once) that report OK.
    pub ok_pairs: usize,
    pub pairs: usize,
    pub evidence: Vec<Evidence>,
}

pub fn parse_nvlink_peers(file: &str, text: &str) -> Option<NvlinkPeerMatrix> {
    let lines: Vec<(usize, &str)> = numbered_lines(text).collect();
    let command_at = lines
        .iter()
        .position(|(_, l)| l.split_whitespace().collect::<Vec<_>>().windows(2).any(|w| w == ["-p2p", "n"]))?;
    let header_at = command_at
        + 1
        + lines[command_at + 1..].iter().position(|(_, l)| {
            let tokens: Vec<&str> = l.split_whitespace().collect();
            tokens.first() == Some(&"GPU0") && tokens.len() >= 2 && tokens.iter().all(|t| is_label(t))
        })?;
    let gpus = lines[header_at].1.split_whitespace().count();
    let mut cells: Vec<Vec<String>> = Vec::new();
    let mut evidence = vec![Evidence::new(file, lines[command_at].0, lines[command_at].1)];
    for (line_no, line) in &lines[header_at + 1..] {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some(label) = tokens.first().filter(|t| t.starts_with("GPU") && is_label(t)) else { break };
        let row = &tokens[1..];
        if row.len() != gpus
            || !row.iter().all(|c| ["X", "OK", "NS", "CNS", "GNS", "TNS", "U"].contains(c))
            || *label != format!("GPU{}", cells.len())
        {
            return None;
        }
        cells.push(row.iter().map(|c| c.to_string()).collect());
        if evidence.len() < 4 {
            evidence.push(Evidence::new(file, *line_no, line));
        }
    }
    if cells.len() != gpus || gpus < 2 {
        return None;
    }
    let pairs = gpus * (gpus - 1) / 2;
    let ok_pairs =
        (0..gpus).flat_map(|a| (a + 1..gpus).map(move |b| (a, b))).filter(|&(a, b)| cells[a][b] == "OK").count();
    Some(NvlinkPeerMatrix { gpus, ok_pairs, pairs, evidence })
}

/// Whether the input says these GPUs have NVLink: a health tool's table with an "NVLINK SUPPORTED"
/// column of true, or SXM-module GPUs by their product names ("A100-SXM4-80GB", "H100 80GB HBM3":
/// the SXM parts are the ones on NVLink baseboards).
pub fn says_nvlink_present(text: &str) -> bool {
    let mut supported_column: Option<usize> = None;
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if let Some(column) = cells.iter().position(|c| c.eq_ignore_ascii_case("NVLINK SUPPORTED")) {
            supported_column = Some(column);
            continue;
        }
        if supported_column.is_some_and(|column| cells.get(column) == Some(&"true")) {
            return true;
        }
        let product = line.contains("NVIDIA") && (line.contains("SXM") || line.contains("HBM3"));
        if product && line.trim_start().starts_with('|') {
            return true;
        }
    }
    false
}

/// No pair of NVLink GPUs can use NVLink for peer access: on an eight-GPU NVSwitch baseboard that is
/// the switch fabric not set up (the fabric manager not running or failing), not eight bad GPUs;
/// on smaller direct-NVLink boards it is the links themselves.
pub fn analyze_nvlink_peers(matrix: &NvlinkPeerMatrix, nvlink_present: bool, analysis: &mut Analysis) {
    if matrix.ok_pairs > 0 || !nvlink_present {
        if matrix.ok_pairs == 0 {
            analysis.observations.push(Finding::new(
                "topo.nvlink_p2p",
                Verdict::Skip,
                "node",
                "no GPU pair can use NVLink (topo -p2p n), and nothing in the input says these GPUs have NVLink: normal for PCIe GPUs without bridges",
            ));
        }
        return;
    }
    let mut fact = Fact::new("gpu.nvlink_p2p_missing")
        .attr("gpus", matrix.gpus)
        .attr("pairs", matrix.pairs)
        .attr("scope", if matrix.gpus >= 8 { "switch" } else { "links" })
        .attr(
            "what",
            format!("none of the {} GPU pairs can use NVLink for peer access (nvidia-smi topo -p2p n)", matrix.pairs),
        )
        .attr("text", format!("topo -p2p n: 0 of {} GPU pairs OK", matrix.pairs));
    for evidence in &matrix.evidence {
        fact = fact.evidence(evidence.clone());
    }
    analysis.push(fact);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legend_names_nics_and_cut_rows_are_kept_apart() {
        let text = "\tGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\n\
                    GPU0\t X \tNV18\tPIX\tSYS\t0-47\t0\n\
                    GPU1\tNV18\t X \tSYS\n\
                    NIC0\tPIX\tSYS\t X \tSYS\n\nNIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n";
        let matrix = parse("f", text).unwrap_or_else(|| panic!("not parsed"));
        assert_eq!(matrix.gpus, ["GPU0"]);
        assert_eq!(matrix.incomplete_rows, ["GPU1"]);
        assert_eq!(matrix.nics[1], ("NIC1".to_string(), "mlx5_1".to_string()));
        assert_eq!(matrix.gpu_nic[0], [Relation::Pix, Relation::Sys]);
        assert_eq!(matrix.header_gpus, 2);
        let mut analysis = Analysis::default();
        analyze(&matrix, &mut analysis);
        assert_eq!(analysis.ranks.rails.get(&0).map(String::as_str), Some("mlx5_0"));
        assert!(!analysis.has("topo.gpu_nic_sys"), "GPU0 has a PIX NIC");
        // nccl-tests#293: the only NIC on the other socket.
        let far = "        GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID\nGPU0     X      SYS     SYS     24-47,72-95     1               N/A\nGPU1    SYS      X      SYS     24-47,72-95     1               N/A\nNIC0    SYS     SYS      X\n\nNIC Legend:\n\n  NIC0: mlx5_0\n";
        let matrix = parse("f", far).unwrap_or_else(|| panic!("not parsed"));
        let mut analysis = Analysis::default();
        analyze(&matrix, &mut analysis);
        let sys: Vec<_> = analysis.facts.iter().filter(|f| f.name == "topo.gpu_nic_sys").collect();
        assert_eq!(
            sys.iter().map(|f| (f.get("gpu"), f.get("nic"))).collect::<Vec<_>>(),
            [(Some("GPU0"), Some("mlx5_0")), (Some("GPU1"), Some("mlx5_0"))]
        );
    }

    /// gpud#1221: eight SXM H100s, every NVLink pair "NS"; the same matrix of PCIe GPUs says
    /// nothing, and one OK pair is no fabric-wide failure.
    #[test]
    fn an_nvlink_peer_matrix_without_any_pair_is_judged_only_on_nvlink_gpus() {
        let mut text = String::from(
            "nvidia-smi topo -p2p n\n        GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7\n",
        );
        for row in 0..8 {
            let cells: Vec<&str> = (0..8).map(|col| if col == row { "X" } else { "NS" }).collect();
            text.push_str(&format!(" GPU{row}   {}\n", cells.join("      ")));
        }
        let matrix = parse_nvlink_peers("f", &text).expect("a matrix");
        assert_eq!((matrix.gpus, matrix.pairs, matrix.ok_pairs), (8, 28, 0));
        let sxm = "|   0  NVIDIA H100 80GB HBM3          On  |   00000000:04:00.0 Off |                    0 |";
        assert!(says_nvlink_present(sxm));
        assert!(!says_nvlink_present("|   0  NVIDIA H100 PCIe               On  |   00000000:04:00.0 Off |"));
        let table = "| GPU UUID | GPU BUS ID | NVLINK ENABLED | NVLINK SUPPORTED | NVLINK P2P OK |\n| GPU-0 | 0000:85:00.0 | true | true | false |";
        assert!(says_nvlink_present(table));
        let mut analysis = Analysis::default();
        analyze_nvlink_peers(&matrix, true, &mut analysis);
        assert!(analysis.has("gpu.nvlink_p2p_missing"));
        assert_eq!(analysis.facts[0].get("scope"), Some("switch"));
        let mut analysis = Analysis::default();
        analyze_nvlink_peers(&matrix, false, &mut analysis);
        assert!(analysis.facts.is_empty(), "PCIe GPUs without bridges have no NVLink to miss");
        let one_pair = text.replacen("NS", "OK", 1).replacen(" GPU1   NS", " GPU1   OK", 1);
        let matrix = parse_nvlink_peers("f", &one_pair).expect("a matrix");
        assert_eq!(matrix.ok_pairs, 1);
        assert!(parse_nvlink_peers("f", &text.replace("-p2p n", "-p2p r")).is_none(), "reads, not NVLink");
        assert!(parse_nvlink_peers("f", &text.replace(" GPU7 ", " GPU9 ")).is_none(), "rows out of order");
    }

    /// vllm-project/vllm#16336 (its header cut off): GPU2 reaches the other B200s over PCIe only.
    /// Bridged pairs of PCIe cards, or a healthy board, show no GPU left off.
    #[test]
    fn a_gpu_left_off_the_nvlink_of_its_board() {
        let rows = "GPU0     X      NV18    NODE    NV18    NV18    PXB     NODE    0-55    0\n\
            GPU1    NV18     X      NODE    NV18    NV18    NODE    PXB     0-55    0\n\
            GPU2    NODE    NODE     X      NODE    SYS     NODE    NODE    0-55    0\n\
            GPU3    NV18    NV18    NODE     X      NV18    NODE    NODE    0-55    0\n\
            GPU4    NV18    NV18    SYS     NV18     X      SYS     SYS     56-111  1\n";
        let found = gpus_left_off_nvlink("f", rows);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].get("gpu"), found[0].get("links")), (Some("2"), Some("all")));
        assert_eq!(found[0].evidence[0].line, 3);
        assert!(found[0].evidence[0].text.starts_with("GPU2    NODE    NODE     X"), "{:?}", found[0].evidence);
        let healthy = rows
            .replace("NODE     X      NODE    SYS", "NV18     X      NV18    NV18")
            .replace("GPU0     X      NV18    NODE", "GPU0     X      NV18    NV18");
        let healthy = healthy.replace("GPU1    NV18     X      NODE", "GPU1    NV18     X      NV18");
        let healthy = healthy.replace("NV18    NV18    NODE     X", "NV18    NV18    NV18     X");
        let healthy = healthy.replace("NV18    NV18    SYS     NV18     X", "NV18    NV18    NV18    NV18     X");
        assert!(gpus_left_off_nvlink("f", &healthy).is_empty(), "{healthy}");
        let bridged = "GPU0     X      NV4     SYS     SYS\nGPU1    NV4      X      SYS     SYS\nGPU2    SYS     SYS      X      NV4\nGPU3    SYS     SYS     NV4      X\n";
        assert!(gpus_left_off_nvlink("f", bridged).is_empty());
    }

    #[test]
    fn text_without_a_matrix_is_not_a_topology() {
        assert!(parse("f", "GPU0 is hot\nNIC0: mlx5_0\n").is_none());
    }
}
