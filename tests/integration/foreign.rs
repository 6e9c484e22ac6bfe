//! `check --root` on trees that other tools captured, or older kernels wrote (issue #23): values the
//! kernel or the capture tool really leaves behind give no false verdict and no error, and what was
//! not captured is skipped by name, never passed. Each tree is the minimal real-shaped one for its
//! kind, written as hwloc-gather-topology and older kernels leave them.

use std::path::Path;

use crate::support::{assert_verdict, check_json, verdicts};

/// Write `files` (path, content) under `root`; a path ending in '/' is a directory.
fn tree(root: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        let full = root.join(path);
        if path.ends_with('/') {
            std::fs::create_dir_all(&full).expect("directory");
            continue;
        }
        std::fs::create_dir_all(full.parent().expect("parent")).expect("parent directory");
        std::fs::write(&full, content).expect("file");
    }
}

fn errors(report: &serde_json::Value) -> Vec<(String, String, String, String)> {
    verdicts(report).into_iter().filter(|(_, verdict, ..)| verdict == "error").collect()
}

/// Findings of one check, for messages.
fn of(report: &serde_json::Value, id: &str) -> Vec<(String, String, String, String)> {
    verdicts(report).into_iter().filter(|(i, ..)| i == id).collect()
}

const LIMITS_2_64: &str = "Limit                     Soft Limit           Hard Limit           Units     \n\
                           Max locked memory         18446744073709551615 18446744073709551615 bytes     \n";

#[test]
fn values_real_kernels_and_capture_tools_leave_give_no_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    tree(
        dir.path(),
        &[
            // A down link: the kernel's EINVAL read of `speed`, stored as an empty file.
            ("sys/class/net/eth0/speed", ""),
            ("sys/class/net/eth0/mtu", "1500\n"),
            ("sys/class/net/eth0/operstate", "down\n"),
            ("sys/class/net/eth0/type", "1\n"),
            ("sys/class/net/eth0/address", "52:54:00:12:34:56\n"),
            ("sys/class/net/eth0/statistics/rx_bytes", "0\n"),
            // The bonding driver's plain file beside the interfaces.
            ("sys/class/net/bonding_masters", "bond0\n"),
            // A device without a performance-management agent (older kernels print this).
            ("sys/class/infiniband/siw0/parent", "eth0\n"),
            ("sys/class/infiniband/siw0/node_type", "4: iWARP\n"),
            ("sys/class/infiniband/siw0/ports/1/state", "4: ACTIVE\n"),
            ("sys/class/infiniband/siw0/ports/1/counters/symbol_error", "N/A (no PMA)\n"),
            ("sys/class/infiniband/siw0/ports/1/counters/port_rcv_errors", "N/A (no PMA)\n"),
            ("sys/class/infiniband/siw0/ports/1/counters/link_downed", "N/A (no PMA)\n"),
            ("proc/self/limits", LIMITS_2_64),
            ("dev/", ""),
        ],
    );
    let (report, _) = check_json(dir.path(), &[]);
    assert!(errors(&report).is_empty(), "{:#?}", errors(&report));
    // A limit of 2^64 bytes is unlimited in effect.
    assert_verdict(&report, "host.memlock", "pass", "node");
    // No IOMMU directory in the capture: not looked at, so not passed.
    assert_verdict(&report, "host.iommu", "skip", "node");
    assert!(of(&report, "host.iommu")[0].3.contains("not in this capture"), "{:?}", of(&report, "host.iommu"));
}

/// Two adapters of different models whose capture has no PCI tree (only `hca_type`), and two whose
/// model is unknown: none is judged against another model's rate; firmware that was not captured
/// is skipped by name, not called consistent.
#[test]
fn adapters_without_pci_parents_are_not_judged_against_other_models() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = |device: &str, rate: &str| {
        vec![
            (format!("sys/class/infiniband/{device}/ports/1/state"), "4: ACTIVE\n".to_string()),
            (format!("sys/class/infiniband/{device}/ports/1/phys_state"), "5: LinkUp\n".to_string()),
            (format!("sys/class/infiniband/{device}/ports/1/rate"), rate.to_string()),
            (format!("sys/class/infiniband/{device}/ports/1/link_layer"), "InfiniBand\n".to_string()),
        ]
    };
    let mut files: Vec<(String, String)> = Vec::new();
    files.extend(port("mlx4_0", "40 Gb/sec (4X QDR)\n"));
    files.push(("sys/class/infiniband/mlx4_0/hca_type".into(), "MT26428\n".into()));
    files.push(("sys/class/infiniband/mlx4_0/fw_ver".into(), "2.9.1000\n".into()));
    files.extend(port("mlx5_0", "100 Gb/sec (4X EDR)\n"));
    files.push(("sys/class/infiniband/mlx5_0/hca_type".into(), "MT4115\n".into()));
    files.push(("sys/class/infiniband/mlx5_0/fw_ver".into(), "12.28.2006\n".into()));
    // Model and firmware unknown: neither hca_type, board_id nor fw_ver captured.
    files.extend(port("hfi1_0", "100 Gb/sec (4X EDR)\n"));
    files.extend(port("qib0", "40 Gb/sec (4X QDR)\n"));
    files.push(("proc/self/limits".into(), LIMITS_2_64.into()));
    let borrowed: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    tree(dir.path(), &borrowed);
    let (report, _) = check_json(dir.path(), &[]);
    assert!(errors(&report).is_empty(), "{:#?}", errors(&report));
    let rates = of(&report, "rdma.port.rate");
    assert!(rates.iter().all(|(_, verdict, ..)| verdict != "fail"), "{rates:#?}");
    assert_verdict(&report, "rdma.port.rate", "pass", "mlx4_0");
    assert_verdict(&report, "rdma.port.rate", "pass", "mlx5_0");
    assert_verdict(&report, "rdma.port.rate", "skip", "hfi1_0");
    assert_verdict(&report, "rdma.port.rate", "skip", "qib0");
    let firmware = of(&report, "rdma.fw.consistency");
    assert!(firmware.iter().all(|(_, _, _, message)| !message.contains("unknown")), "{firmware:#?}");
    assert_verdict(&report, "rdma.fw.consistency", "skip", "hfi1_0, qib0");
}

/// A capture with only `local_cpus` (the hex mask older kernels print) and two GPUs under one host
/// bridge name: their NUMA nodes come from the mask, and GPUs on different nodes are SYS, not PHB.
#[test]
fn numa_from_the_local_cpus_mask_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut files: Vec<(String, String)> = Vec::new();
    for (address, mask) in [("0000:00:02.0", "00000000,0000ffff\n"), ("0000:00:03.0", "00000000,ffff0000\n")] {
        let device = format!("sys/devices/pci0000:00/{address}");
        files.push((format!("{device}/class"), "0x030200\n".into()));
        files.push((format!("{device}/vendor"), "0x10de\n".into()));
        files.push((format!("{device}/device"), "0x2330\n".into()));
        files.push((format!("{device}/local_cpus"), mask.into()));
    }
    files.push(("sys/devices/system/node/node0/cpulist".into(), "0-15\n".into()));
    files.push(("sys/devices/system/node/node1/cpulist".into(), "16-31\n".into()));
    files.push(("proc/self/limits".into(), LIMITS_2_64.into()));
    let borrowed: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    tree(dir.path(), &borrowed);
    let links = dir.path().join("sys/bus/pci/devices");
    std::fs::create_dir_all(&links).expect("bus directory");
    for address in ["0000:00:02.0", "0000:00:03.0"] {
        std::os::unix::fs::symlink(format!("../../../devices/pci0000:00/{address}"), links.join(address))
            .expect("link");
    }
    let output = crate::support::run(&["topo", "--root", dir.path().to_str().expect("utf-8")]);
    let text = crate::support::stdout(&output);
    let row = |gpu: &str| {
        text.lines().find(|l| l.starts_with(gpu)).unwrap_or_default().split_whitespace().collect::<Vec<_>>()
    };
    assert_eq!(row("GPU0")[..3], ["GPU0", "X", "SYS"], "{text}");
    assert!(row("GPU1").contains(&"16-31"), "{text}");
}

/// A capture without `sys/bus/pci` (a container's view, a partial copy) still has its NUMA nodes:
/// `topo` says the PCI tree is missing and shows them, instead of failing.
#[test]
fn topo_without_the_pci_tree_shows_the_numa_nodes() {
    let dir = tempfile::tempdir().expect("tempdir");
    tree(
        dir.path(),
        &[
            ("sys/devices/system/node/node0/cpulist", "0-15\n"),
            ("sys/devices/system/node/node1/cpulist", "16-31\n"),
            ("proc/self/limits", LIMITS_2_64),
        ],
    );
    let output = crate::support::run(&["topo", "--root", dir.path().to_str().expect("utf-8")]);
    assert_eq!(output.status.code(), Some(0), "{}", crate::support::stderr(&output));
    assert!(crate::support::stderr(&output).contains("no PCI devices in this capture"));
    let text = crate::support::stdout(&output);
    assert!(text.contains("16-31"), "{text}");
}
