//! `fabricdoctor topo`, computed from sysfs alone, must agree with what `nvidia-smi topo -m` printed on
//! the real machines the fixtures model (../shared/realworld/topo-*). NV# cells (NVLink) need the NVIDIA
//! driver and are not compared; every PCIe relation is.

use std::collections::BTreeMap;

use crate::support::{fixture, realworld, run, stderr};

/// Cells of an `nvidia-smi topo -m` printout: (row label, column label) -> relation. Space- or
/// TAB-separated; rows cut short (a truncated paste) contribute the cells they have.
fn parse_nvidia_smi(text: &str) -> BTreeMap<(String, String), String> {
    let mut cells = BTreeMap::new();
    let mut header: Vec<String> = Vec::new();
    for line in text.lines() {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens.first() == Some(&"GPU0") && header.is_empty() {
            header = tokens
                .iter()
                .take_while(|t| t.starts_with("GPU") || t.starts_with("NIC"))
                .map(|t| t.to_string())
                .collect();
            continue;
        }
        let Some(row) = tokens.first().filter(|t| header.contains(&t.to_string())) else { continue };
        for (column, cell) in header.iter().zip(tokens.iter().skip(1)) {
            let known =
                ["X", "PIX", "PXB", "PHB", "NODE", "SYS"].contains(cell) || cell.starts_with("NV") && cell.len() > 2;
            if known {
                cells.insert((row.to_string(), column.clone()), cell.to_string());
            }
        }
    }
    cells
}

fn fabricdoctor_cells(fixture_name: &str) -> BTreeMap<(String, String), String> {
    let root = fixture(fixture_name);
    let output = run(&["topo", "--json", "--root", root.to_str().expect("path")]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    let topology = &report["topology"];
    let labels: Vec<String> = ["gpus", "nics"]
        .iter()
        .flat_map(|k| {
            topology[k].as_array().expect("devices").iter().map(|d| d["label"].as_str().expect("label").to_string())
        })
        .collect();
    let mut cells = BTreeMap::new();
    for (i, row) in topology["matrix"].as_array().expect("matrix").iter().enumerate() {
        for (j, cell) in row.as_array().expect("row").iter().enumerate() {
            cells.insert((labels[i].clone(), labels[j].clone()), cell.as_str().expect("cell").to_string());
        }
    }
    cells
}

fn assert_matches(realworld_file: &str, fixture_name: &str, minimum_cells: usize) {
    let Some(path) = realworld(realworld_file) else { return };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("failed to read {}: {e}", path.display()));
    let expected = parse_nvidia_smi(&text);
    let actual = fabricdoctor_cells(fixture_name);
    let mut compared = 0;
    let mut wrong = Vec::new();
    for ((row, column), cell) in &expected {
        if cell.starts_with("NV") {
            continue;
        }
        compared += 1;
        match actual.get(&(row.clone(), column.clone())) {
            Some(ours) if ours == cell => {}
            // fabricdoctor prints `?` where a NUMA node is unknown; nvidia-smi prints SYS there (and
            // NODE or SYS is all that can be known), so either of its answers agrees with `?`.
            Some(ours) if ours == "?" && (cell == "SYS" || cell == "NODE") => {}
            ours => wrong.push(format!("{row}/{column}: nvidia-smi {cell}, fabricdoctor {ours:?}")),
        }
    }
    assert!(wrong.is_empty(), "{realworld_file} vs {fixture_name}:\n{}", wrong.join("\n"));
    assert!(compared >= minimum_cells, "only {compared} cells compared for {realworld_file}");
}

#[test]
fn hgx_h100_matches_nvidia_smi_of_sglang_30401() {
    // 16x16 minus the 56 NV18 GPU pairs.
    assert_matches("topo-04-sglang30401-hgx-h100-8nic-pix.txt", "hgx-h100", 200);
}

#[test]
fn dgx_a100_matches_nvidia_smi_of_the_epyc_7742_node() {
    assert_matches("topo-03-oyanghd-dgxa100-epyc7742-10nic-pxb-tabsep.txt", "dgx-a100", 250);
}

#[test]
fn hgx_h100_with_six_nics_matches_the_partial_output_of_nccl_1357() {
    assert_matches("topo-06-nccl1357-hgx-h100-6nic-only4-pix.txt", "hgx-h100-6nic", 49);
}

#[test]
fn the_parser_reads_truncated_and_tab_separated_printouts() {
    let cells = parse_nvidia_smi("\tGPU0\tNIC0\nGPU0\t X \tPIX\nNIC0\tPIX\t X \n");
    assert_eq!(cells.get(&("GPU0".into(), "NIC0".into())).map(String::as_str), Some("PIX"));
    let cells =
        parse_nvidia_smi("        GPU0    GPU1    NIC0\nGPU0     X      NV18    SYS\nGPU1    NV18     X      NV");
    assert_eq!(cells.len(), 5, "{cells:?}");
}
