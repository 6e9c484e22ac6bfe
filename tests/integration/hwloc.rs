//! Real captures that another project made: the Linux test trees of open-mpi/hwloc (44 machines over
//! 15 years of kernels, reduced to the files fabricdoctor reads by `scripts/hwloc-fixtures.py`; see
//! `tests/fixtures/hwloc/README.md`). For each: `check` and `topo` run to the end, no error comes
//! from a value format a real kernel produces (a file the capture left out is a skip or an error
//! that says so), and every PCI function is placed on the NUMA node hwloc's own expected output puts
//! it on (hwloc is the peer; its expected outputs are its test oracle).

use std::collections::BTreeMap;

use crate::support::{loud_eprintln, repository, run, stderr, stdout};

/// Trees whose expected output hwloc was told to produce against sysfs, so sysfs and hwloc
/// disagree on purpose: the tree's test sets HWLOC_PCI_LOCALITY, or its local_cpus was edited by
/// hand to differ from local_cpulist (hwloc follows local_cpus). fabricdoctor follows sysfs.
const FORCED_LOCALITY: [(&str, &str); 3] = [
    ("40intel64-2g2n4c+pcilocality", "the test forces PCI locality with HWLOC_PCI_LOCALITY"),
    ("fakepcilocalities", "the test forces PCI locality with HWLOC_PCI_LOCALITY"),
    ("2pa-pcidomain32bits", "local_cpus was edited by hand to disagree with local_cpulist"),
];

#[test]
fn hwloc_captures_give_no_false_error_and_agree_on_numa_locality() {
    let dir = repository().join("tests/fixtures/hwloc");
    let mut trees: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("hwloc-expected.json").exists())
        .collect();
    trees.sort();
    assert!(trees.len() >= 40, "{} hwloc trees", trees.len());
    let mut problems = Vec::new();
    let mut rows = Vec::new();
    for tree in &trees {
        let name = tree.file_name().expect("name").to_string_lossy().into_owned();
        let root = tree.to_str().expect("utf-8 path");
        let output = run(&["check", "--json", "--root", root]);
        if !matches!(output.status.code(), Some(0 | 1)) {
            problems.push(format!("{name}: check exited {:?}: {}", output.status.code(), stderr(&output)));
            continue;
        }
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("check JSON");
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for finding in report["findings"].as_array().expect("findings") {
            let verdict = finding["verdict"].as_str().unwrap_or_default().to_string();
            let message = finding["message"].as_str().unwrap_or_default();
            // A file the capture left out is reported as such; anything else is a value the probes
            // could not read, which a real kernel's output must never cause.
            if verdict == "error" && !message.contains("not in this capture") {
                problems.push(format!("{name}: {} {}: {message}", finding["id"], finding["subject"]));
            }
            *counts.entry(verdict).or_default() += 1;
        }
        let output = run(&["topo", "--json", "--root", root]);
        let (mut compared, mut agree) = (0, 0);
        if output.status.code() == Some(0) {
            let topology: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("topo JSON");
            let expected: serde_json::Value =
                serde_json::from_slice(&std::fs::read(tree.join("hwloc-expected.json")).expect("expected"))
                    .expect("json");
            let hwloc_numa: BTreeMap<&str, Vec<u64>> = expected["pci_devices"]
                .as_array()
                .expect("pci_devices")
                .iter()
                .filter_map(|d| {
                    let nodes = d["numa_nodes"].as_array()?.iter().filter_map(|n| n.as_u64()).collect();
                    Some((d["busid"].as_str()?, nodes))
                })
                .collect();
            // Every PCI function's locality, not only GPUs and NICs (few trees hold either).
            let devices = topology["pci_locality"].as_array().cloned().expect("pci_locality");
            for device in devices {
                let Some(address) = device["address"].as_str() else { continue };
                let Some(nodes) = hwloc_numa.get(address) else { continue };
                // One node each, the same; or hwloc spreads the device over several nodes and
                // fabricdoctor calls its node unknown (neither pins it to one).
                let verdict = match (device["numa_node"].as_u64(), nodes.as_slice()) {
                    (Some(ours), [theirs]) if ours == *theirs => Ok(()),
                    (None, [_, _, ..]) => Ok(()),
                    (ours, theirs) => Err(format!(
                        "{name}: {address} on NUMA node {}, hwloc says {theirs:?}",
                        ours.map_or("unknown".to_string(), |n| n.to_string())
                    )),
                };
                compared += 1;
                match verdict {
                    Ok(()) => agree += 1,
                    Err(problem) if !FORCED_LOCALITY.iter().any(|(tree, _)| *tree == name) => problems.push(problem),
                    Err(_) => {}
                }
            }
        } else {
            problems.push(format!("{name}: topo exited {:?}: {}", output.status.code(), stderr(&output)));
        }
        let count = |v: &str| counts.get(v).copied().unwrap_or(0);
        rows.push(format!(
            "| {name} | {} | {} | {} | {} | {} | {agree}/{compared} |",
            count("pass"),
            count("warn"),
            count("fail"),
            count("error"),
            count("skip")
        ));
    }
    let table = format!(
        "| tree | pass | warn | fail | error | skip | PCI functions on hwloc's NUMA node |\n|---|---|---|---|---|---|---|\n{}\n",
        rows.join("\n")
    );
    loud_eprintln!("{table}");
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
    // tests/README.md carries the table; FABRICDOCTOR_BLESS=1 rewrites it after a change of verdicts.
    let readme_path = repository().join("tests/README.md");
    let readme = std::fs::read_to_string(&readme_path).expect("tests/README.md");
    let (start, end) = ("<!-- hwloc-table -->\n", "<!-- /hwloc-table -->");
    let (Some(a), Some(b)) = (readme.find(start), readme.find(end)) else {
        panic!("tests/README.md has no hwloc table markers")
    };
    let current = &readme[a + start.len()..b];
    if std::env::var_os("FABRICDOCTOR_BLESS").is_some() {
        let updated = format!("{}{}{}{}", &readme[..a], start, table, &readme[b..]);
        std::fs::write(&readme_path, updated).expect("write tests/README.md");
    } else {
        assert_eq!(current, table, "tests/README.md's hwloc table is out of date: rerun with FABRICDOCTOR_BLESS=1");
    }
}
