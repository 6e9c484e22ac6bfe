//! `snapshot` captures exactly what the probes read: analysing the capture gives the same findings.

use std::path::Path;

use crate::support::{check_json, comparable, run, stderr};

fn snapshot_of(root: Option<&Path>, out: &Path) {
    let mut args = vec!["snapshot".to_string(), out.display().to_string()];
    if let Some(root) = root {
        args.push("--root".into());
        args.push(root.display().to_string());
    }
    let output = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(output.status.code(), Some(0), "snapshot failed: {}", stderr(&output));
}

#[test]
fn check_on_a_snapshot_of_this_node_equals_check_live() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tree = dir.path().join("tree");
    snapshot_of(None, &tree);
    let live = run(&["check", "--json", "--no-sample"]);
    let live: serde_json::Value = serde_json::from_slice(&live.stdout).expect("json");
    let (captured, _) = check_json(&tree, &[]);
    assert_eq!(comparable(&live), comparable(&captured));
    assert_eq!(live["hosts"][0]["hostname"], captured["hosts"][0]["hostname"]);
    assert!(tree.join("proc/self/limits").is_file(), "proc/self is kept by name, not by PID");
}

#[test]
fn tar_gz_snapshots_round_trip() {
    let dir = tempfile::tempdir().expect("tempdir");
    let archive = dir.path().join("node.tar.gz");
    snapshot_of(None, &archive);
    let live = run(&["check", "--json", "--no-sample"]);
    let live: serde_json::Value = serde_json::from_slice(&live.stdout).expect("json");
    let (captured, _) = check_json(&archive, &[]);
    assert_eq!(comparable(&live), comparable(&captured));
}

#[test]
fn snapshot_refuses_a_non_empty_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("precious.txt"), "keep me").expect("write");
    let output = run(&["snapshot", dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("is not empty"));
    assert_eq!(std::fs::read_to_string(dir.path().join("precious.txt")).expect("kept"), "keep me");
}
