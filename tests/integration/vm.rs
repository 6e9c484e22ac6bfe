//! Real-kernel tests. The committed capture tests/fixtures/qemu-q35-rxe was written by a real 6.1
//! kernel with a real PCIe/NUMA topology and Soft-RoCE, and runs everywhere. The live guest test
//! boots that guest (tests/vm) and checks that `check` inside it equals `check --root` of its
//! snapshot. It runs when FABRICDOCTOR_VM_TESTS=1 (CI, as root, after tests/vm/build-guest.sh) and
//! skips loudly otherwise.

use fabricdoctor_checks::topology::{relation_between, Relation};
use fabricdoctor_probes::pci::PciAddress;
use fabricdoctor_probes::{NodeSnapshot, SysRoot};

use crate::support::{assert_verdict, check_json, comparable, fixture, repository};

fn address(text: &str) -> PciAddress {
    PciAddress::parse(text).expect("address")
}

#[test]
fn real_kernel_capture_gives_nvidia_smi_relations() {
    let node = NodeSnapshot::probe(&SysRoot::captured(fixture("qemu-q35-rxe")));
    let relation = |a: &str, b: &str| {
        let (fa, fb) = (node.function(address(a)).expect("a"), node.function(address(b)).expect("b"));
        relation_between(&node, fa.address, node.numa_of(fa).0, fb.address, node.numa_of(fb).0)
    };
    assert_eq!(relation("0000:43:00.0", "0000:44:00.0"), Relation::Pix);
    assert_eq!(relation("0000:43:00.0", "0000:47:00.0"), Relation::Pxb);
    assert_eq!(relation("0000:48:00.0", "0000:43:00.0"), Relation::Phb);
    assert_eq!(relation("0000:61:00.0", "0000:43:00.0"), Relation::Node);
    assert_eq!(relation("0000:81:00.0", "0000:43:00.0"), Relation::Sys);
    assert_eq!(relation("0000:81:00.0", "0000:82:00.0"), Relation::Phb);
    // Real sysfs quirks: XIO3130 downstream ports report "Unknown" max speed; the kernel gave the
    // expander-bridge functions numa_node -1 but the devices behind them their node.
    let downstream = node.function(address("0000:42:00.0")).expect("downstream port");
    assert_eq!(downstream.link.max_speed, None);
    assert_eq!(node.function(address("0000:81:00.0")).and_then(|f| f.numa_node), Some(1));
}

#[test]
fn real_kernel_capture_reads_soft_roce() {
    let (report, _) = check_json(&fixture("qemu-q35-rxe"), &[]);
    assert_verdict(&report, "rdma.port.state", "pass", "rxe0 port 1");
    assert_verdict(&report, "rdma.gid.rocev2", "pass", "rxe0 port 1");
    assert_verdict(&report, "rdma.mtu", "warn", "rxe0 port 1");
    // rxe0 has no PCI function: its PCIe link is that of its netdev's NIC (virtio-net at 48:00.0).
    assert_verdict(&report, "pcie.link.width", "pass", "0000:48:00.0 (rxe0)");
    assert_verdict(&report, "rdma.fw.consistency", "skip", "node");
    assert_verdict(&report, "probe.read", "pass", "node");
}

#[test]
fn guest_check_equals_check_of_its_snapshot() {
    if std::env::var("FABRICDOCTOR_VM_TESTS").as_deref() != Ok("1") {
        crate::support::loud_eprintln!(
            "SKIP: real-kernel guest test: set FABRICDOCTOR_VM_TESTS=1 (as root, after tests/vm/build-guest.sh; \
             scripts/test-all.sh does both)"
        );
        return;
    }
    let _guests = crate::support::one_guest_run_at_a_time();
    let out = tempfile::tempdir().expect("tempdir");
    let status = std::process::Command::new("bash")
        .arg(repository().join("tests/vm/run-topology-guest.sh"))
        .args(["--timeout", "420", "--copy", env!("CARGO_BIN_EXE_fabricdoctor")])
        .arg(repository().join("tests/vm/check-guest.sh"))
        .arg(out.path())
        .status()
        .expect("run-topology-guest.sh runs");
    let console = std::fs::read_to_string(out.path().join("vm-guest.log")).unwrap_or_default();
    assert!(status.success(), "guest run failed ({status}); guest log:\n{console}");
    let live: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("live.json")).expect("live.json")).expect("json");
    let (captured, _) = check_json(&out.path().join("snap"), &[]);
    assert_eq!(comparable(&live), comparable(&captured));
    assert_verdict(&live, "rdma.gid.rocev2", "pass", "rxe0 port 1");
    assert_eq!(live["hosts"][0]["hostname"], "fdguest");
    // Soft-RoCE's hardware counters, sampled twice one second apart by `counters --interval` inside
    // the guest: the interval comes from the guest's proc/uptime.
    let counters: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("counters.json")).expect("counters.json")).expect("json");
    let interval = counters["interval_seconds"].as_f64().expect("interval");
    assert!((0.9..5.0).contains(&interval), "interval {interval}");
    let rows = counters["counters"].as_array().expect("rows");
    assert!(
        rows.iter()
            .any(|r| r["source"] == "hardware_counters" && r["subject"] == "rxe0 port 1" && r["name"] == "sent_pkts"),
        "rxe0 hardware counters missing: {rows:?}"
    );
}
