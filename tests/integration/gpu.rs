//! GPU checks end to end: the snapshot of a real H100 node (tests/fixtures/gpu-h100-device, taken with
//! `fabricdoctor snapshot` on the workplace's GPU machine, NVML reading and NVRM kernel-log lines
//! included), an Xid planted in a copy of it, and the no-driver paths every CI machine takes.

use std::path::Path;
use std::process::Command;

use crate::support::{assert_verdict, check_json, fixture, run, stderr, verdicts};

const GPU_CHECKS: [&str; 7] =
    ["gpu.xid", "gpu.ecc", "gpu.remap", "gpu.nvlink", "gpu.pcie.replay", "gpu.throttle", "gpu.persistence"];

/// True when this machine has the NVIDIA driver's user-space libraries (then the no-driver paths
/// cannot be exercised, and the tests say so).
fn driver_installed(library: &str) -> bool {
    ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/nvidia/lib64", "/lib"]
        .iter()
        .any(|dir| Path::new(dir).join(library).exists())
}

#[test]
fn the_h100_snapshot_is_judged_from_its_recorded_nvml_reading() {
    let (report, code) = check_json(&fixture("gpu-h100-device"), &["--only", "gpu.", "--only", "pcie.link"]);
    assert_eq!(code, 0, "{:#?}", verdicts(&report));
    for id in GPU_CHECKS.iter().filter(|id| **id != "gpu.nvlink") {
        assert_verdict(&report, id, "pass", "0000:00:06.0 (GPU0)");
    }
    // A PCIe H100 has no NVLink: NVML says "not supported", which is a skip, never a pass.
    assert_verdict(&report, "gpu.nvlink", "skip", "0000:00:06.0 (GPU0)");
    let persistence = verdicts(&report).into_iter().find(|(id, ..)| id == "gpu.persistence").expect("finding");
    assert_eq!(persistence.3, "persistence mode on");
    let evidence = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["id"] == "gpu.persistence")
        .map(|f| f["evidence"][0].as_str().unwrap_or_default().to_string())
        .expect("evidence");
    assert_eq!(evidence, "NVIDIA H100 80GB HBM3, driver 580.159.04, NUMA node 0 (LocalCpulist)");
}

#[test]
fn an_xid_79_in_the_kernel_log_fails_the_gpu() {
    let dir = tempfile::tempdir().expect("tempdir");
    let copy = dir.path().join("node");
    let status = Command::new("cp")
        .args(["-a", fixture("gpu-h100-device").to_str().unwrap(), copy.to_str().unwrap()])
        .status()
        .expect("cp");
    assert!(status.success());
    let kmsg = copy.join("dev/kmsg");
    let mut log = std::fs::read_to_string(&kmsg).expect("kmsg");
    log.push_str("3,900,7153128406,-;NVRM: Xid (PCI:0000:00:06): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n");
    std::fs::write(&kmsg, log).expect("write");
    let (report, code) = check_json(&copy, &["--only", "gpu.xid"]);
    assert_eq!(code, 1, "a Fail verdict exits 1");
    assert_verdict(&report, "gpu.xid", "fail", "0000:00:06.0 (GPU0)");
    let (_, _, _, message) = verdicts(&report).into_iter().next().expect("finding");
    assert_eq!(message, "Xid 79 (GPU has fallen off the bus)");
}

#[test]
fn a_capture_without_gpu_readings_skips_and_never_passes() {
    let (report, code) = check_json(&fixture("hgx-h100"), &["--only", "gpu."]);
    assert_eq!(code, 0);
    for (id, verdict, _, message) in verdicts(&report) {
        assert_eq!(verdict, "skip", "{id}: {message}");
        assert!(message.contains("not in this capture"), "{id}: {message}");
    }
}

#[test]
fn without_the_driver_every_gpu_check_skips_saying_so() {
    if driver_installed("libnvidia-ml.so.1") {
        crate::support::loud_eprintln!(
            "SKIP: libnvidia-ml.so.1 is installed on this machine: the no-driver path cannot be tested here"
        );
        return;
    }
    let output = run(&["check", "--json", "--only", "gpu.", "--no-sample"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    let findings = verdicts(&report);
    let ids: Vec<&str> = findings.iter().map(|(id, ..)| id.as_str()).collect();
    assert_eq!(ids, GPU_CHECKS);
    for (id, verdict, subject, message) in &findings {
        assert_eq!(
            (verdict.as_str(), subject.as_str(), message.as_str()),
            ("skip", "node", "no NVIDIA driver"),
            "{id}"
        );
    }
}

#[test]
fn perf_gpu_without_the_driver_is_a_clear_error() {
    if driver_installed("libcuda.so.1") {
        crate::support::loud_eprintln!(
            "SKIP: libcuda.so.1 is installed on this machine: the no-driver path cannot be tested here"
        );
        return;
    }
    let output = run(&["perf", "client", "127.0.0.1", "--transport", "tcp", "--gpu", "0", "--port", "1"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--gpu 0: no NVIDIA driver: libcuda.so.1"), "{}", stderr(&output));
    let output = run(&["perf", "server", "--transport", "tcp", "--gpu", "3", "--once", "--port", "0"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--gpu 3: no NVIDIA driver"), "{}", stderr(&output));
}

#[test]
fn allreduce_gpu_without_the_driver_fails_every_rank_at_once() {
    if driver_installed("libcuda.so.1") {
        crate::support::loud_eprintln!(
            "SKIP: libcuda.so.1 is installed on this machine: the no-driver path cannot be tested here"
        );
        return;
    }
    let started = std::time::Instant::now();
    let output = run(&["perf", "allreduce", "--np", "2", "--gpu", "0", "-b", "1K", "-e", "1K", "--timeout", "20s"]);
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(text.contains("rank 0: --gpu 0: no NVIDIA driver") && text.contains("rank 1: --gpu 0"), "{text}");
    // Each rank refuses before the rendezvous: nobody waits out the 20 s timeout.
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "took {:?}", started.elapsed());
}

#[test]
fn load_needs_the_live_node() {
    let output = run(&["check", "--load", "--root", fixture("gpu-h100-device").to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--load loads this node's GPU links; it cannot run on a capture"));
}
