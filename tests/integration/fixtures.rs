//! Fixture trees with answer keys (tests/fixtures/*/README.md): each deliberate fault is caught by
//! its check with its verdict, and healthy nodes raise nothing.

use std::path::Path;

use crate::support::{assert_none, assert_verdict, check_json, fixture, repository, run, stderr, verdicts};

#[test]
fn healthy_hgx_h100_passes_every_check_it_can_see() {
    let (report, code) = check_json(&fixture("hgx-h100"), &["--fail-on", "warn"]);
    assert_eq!(code, 0, "{:#?}", verdicts(&report).into_iter().filter(|v| v.1 != "pass").collect::<Vec<_>>());
    assert_none(&report, "", &["warn", "fail", "error"]);
    // InfiniBand ports: RoCE checks could not look, and say so.
    assert_verdict(&report, "rdma.gid.rocev2", "skip", "node");
    // It looked at all 8 GPUs and 8 NICs.
    let links = verdicts(&report).into_iter().filter(|(id, v, ..)| id == "pcie.link.width" && v == "pass").count();
    assert!(links >= 16, "only {links} links checked");
}

#[test]
fn healthy_dgx_a100_passes_with_pxb_rails_and_storage_nics() {
    let (report, code) = check_json(&fixture("dgx-a100"), &["--fail-on", "warn"]);
    assert_eq!(code, 0, "{:#?}", verdicts(&report).into_iter().filter(|v| v.1 != "pass").collect::<Vec<_>>());
    assert_verdict(&report, "topo.rails", "pass", "node");
    assert_verdict(&report, "rdma.gid.rocev2", "pass", "mlx5_8 port 1");
}

#[test]
fn faulty_node_faults_are_each_caught_by_their_check() {
    let (report, code) = check_json(&fixture("faulty-node"), &[]);
    assert_eq!(code, 1);
    let key = [
        ("pcie.link.speed", "warn", "(GPU1)"),
        ("pcie.link.width", "fail", "(mlx5_1)"),
        ("pcie.mps", "warn", "(mlx5_0)"),
        ("pcie.mrrs", "warn", "(mlx5_0)"),
        ("pcie.acs", "fail", "0000:17:00.0"),
        ("pcie.aer", "warn", "(mlx5_1)"),
        ("topo.gpu_nic.affinity", "fail", "GPU3"),
        ("topo.rails", "warn", "node"),
        ("rdma.port.state", "fail", "mlx5_2 port 1"),
        ("rdma.port.rate", "fail", "mlx5_0 port 1"),
        ("rdma.gid.rocev2", "fail", "mlx5_3 port 1"),
        ("rdma.mtu", "warn", "mlx5_3 port 1"),
        ("rdma.fw.consistency", "warn", "ConnectX-6 Dx"),
        ("host.memlock", "fail", "node"),
        ("host.devshm", "fail", "/dev/shm"),
        ("host.peermem", "warn", "node"),
        ("host.iommu", "warn", "node"),
    ];
    for (id, verdict, subject) in key {
        assert_verdict(&report, id, verdict, subject);
    }
    // Only the planted faults: every warn, fail or error is in the key. (The capture holds no counter
    // files, so the counter checks skip, saying so.)
    for (id, verdict, subject, message) in verdicts(&report) {
        if verdict != "pass" && verdict != "skip" {
            assert!(
                key.iter().any(|(i, v, s)| *i == id && *v == verdict && subject.contains(s)),
                "unexpected {verdict} {id} on {subject}: {message}"
            );
        }
    }
    // The healthy GPU links are not mistaken for idle ones, and the ACS finding names the fix.
    assert_verdict(&report, "pcie.link.speed", "pass", "(GPU0)");
    let acs = verdicts(&report).into_iter().find(|(id, v, ..)| id == "pcie.acs" && v == "fail").expect("acs");
    assert!(acs.3.contains("GPU0<->mlx5_0") && acs.3.contains("setpci -s 0000:17:00.0"), "{}", acs.3);
}

#[test]
fn hgx_h100_with_six_nics_flags_the_gpus_without_a_rail() {
    let (report, _) = check_json(&fixture("hgx-h100-6nic"), &[]);
    // Their closest NICs are across host bridges and every NIC's NUMA node is unknown (numa_node -1,
    // local_cpulist spanning both sockets): at least NODE (warn), maybe SYS, and the message says so
    // rather than guessing SYS.
    for gpu in ["GPU1", "GPU3", "GPU5", "GPU7"] {
        assert_verdict(&report, "topo.gpu_nic.affinity", "warn", gpu);
        let finding = verdicts(&report)
            .into_iter()
            .find(|(id, _, subject, _)| id == "topo.gpu_nic.affinity" && subject.starts_with(gpu))
            .expect("finding");
        assert!(finding.3.contains("NODE or SYS cannot be told"), "{}", finding.3);
    }
    for gpu in ["GPU0", "GPU2", "GPU4", "GPU6"] {
        assert_verdict(&report, "topo.gpu_nic.affinity", "pass", gpu);
    }
    let rails = verdicts(&report).into_iter().find(|(id, ..)| id == "topo.rails").expect("rails");
    assert_eq!(rails.1, "warn");
    assert!(rails.3.contains("4 rails for 8 GPUs"), "{}", rails.3);
}

/// Copy a fixture with every config file cut to the 64 bytes a non-root reader gets.
fn as_non_root(source: &Path, target: &Path) {
    let output = std::process::Command::new("cp").arg("-a").arg(source).arg(target).output().expect("cp");
    assert!(output.status.success());
    let mut stack = vec![target.join("sys/devices")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read_dir") {
            let entry = entry.expect("entry");
            let kind = entry.file_type().expect("type");
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() && entry.file_name() == "config" {
                let bytes = std::fs::read(entry.path()).expect("config");
                std::fs::write(entry.path(), &bytes[..64]).expect("truncate");
            }
        }
    }
}

#[test]
fn without_root_config_space_fields_are_unknown_never_passed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tree = dir.path().join("faulty");
    as_non_root(&fixture("faulty-node"), &tree);
    let (report, _) = check_json(&tree, &[]);
    for id in ["pcie.mps", "pcie.mrrs", "pcie.acs"] {
        assert_none(&report, id, &["pass", "fail"]);
        let findings: Vec<_> = verdicts(&report).into_iter().filter(|(i, ..)| i == id).collect();
        assert!(
            !findings.is_empty() && findings.iter().all(|(_, v, _, m)| v == "warn" && m.contains("root")),
            "{findings:#?}"
        );
    }
    // sysfs-based checks still see the faults.
    assert_verdict(&report, "pcie.link.width", "fail", "(mlx5_1)");
}

#[test]
fn a_snapshot_of_a_fixture_gives_the_same_findings() {
    for name in ["hgx-h100", "faulty-node", "dgx-a100"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("snap");
        let root = fixture(name);
        let output = run(&["snapshot", out.to_str().unwrap(), "--root", root.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let (original, _) = check_json(&root, &[]);
        let (captured, _) = check_json(&out, &[]);
        let differences: Vec<String> = original["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .zip(captured["findings"].as_array().expect("findings"))
            .filter(|(a, b)| a != b)
            .map(|(a, b)| format!("fixture: {a}\nsnapshot: {b}"))
            .collect();
        assert!(differences.is_empty(), "{name}:\n{}", differences.join("\n"));
        assert_eq!(original["findings"], captured["findings"], "{name}: finding counts differ");
    }
}

#[test]
fn the_build_host_capture_skips_what_it_cannot_see_and_fails_memlock() {
    let (report, code) = check_json(&fixture("build-host"), &[]);
    assert_eq!(code, 1);
    assert_verdict(&report, "host.memlock", "fail", "node");
    assert_verdict(&report, "host.devshm", "pass", "/dev/shm");
    for id in ["pcie.link.width", "topo.gpu_nic.affinity", "rdma.port.state"] {
        assert_verdict(&report, id, "skip", "node");
    }
}

/// A node model profile: the HGX H100 capture fits its profile; the six-NIC one is two NICs short;
/// a DGX A100 judged by the H100 profile is refused by the key that does not fit; a profile that
/// wants Gen5 fails the A100's Gen4 GPUs and compute NICs but not its storage NICs.
#[test]
fn node_profiles_judge_counts_links_and_refuse_another_model() {
    let profile = |name: &str| repository().join("playbooks/profiles").join(name).display().to_string();
    let h100 = profile("hgx-h100-8x400g.toml");
    let (report, code) = check_json(&fixture("hgx-h100"), &["--profile", &h100]);
    assert_eq!(code, 0, "{report:#}");
    assert_verdict(&report, "profile.inventory", "pass", "GPUs");
    assert_verdict(&report, "profile.pcie", "pass", "mlx5_7");

    let (report, _) = check_json(&fixture("hgx-h100-6nic"), &["--profile", &h100]);
    assert_verdict(&report, "profile.inventory", "fail", "RDMA NICs");

    let output = run(&["check", "--root", fixture("dgx-a100").to_str().expect("utf-8"), "--profile", &h100]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("gpus.model = \"H100\"") && stderr(&output).contains("A100"),
        "{}",
        stderr(&output)
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let gen5 = dir.path().join("a100-gen5.toml");
    let text = std::fs::read_to_string(profile("dgx-a100-8x200g.toml")).expect("profile");
    std::fs::write(&gen5, text.replace("pcie_generation = 4", "pcie_generation = 5")).expect("write");
    let (report, _) = check_json(&fixture("dgx-a100"), &["--profile", gen5.to_str().expect("utf-8")]);
    let pcie: Vec<_> = verdicts(&report).into_iter().filter(|(id, ..)| id == "profile.pcie").collect();
    assert_eq!(pcie.len(), 16, "8 GPUs and the 8 compute NICs, not the storage NICs: {pcie:?}");
    assert!(pcie.iter().all(|(_, verdict, ..)| verdict == "fail"), "{pcie:?}");
    // The profile's 200 Gb/s is the compute ports' expectation; storage ports are judged by model.
    assert_verdict(&report, "rdma.port.rate", "pass", "mlx5_0 port 1");
    let rate = verdicts(&report)
        .into_iter()
        .find(|(id, _, subject, _)| id == "rdma.port.rate" && subject.starts_with("mlx5_8"));
    assert!(rate.is_some_and(|(_, verdict, ..)| verdict == "pass"), "storage NIC judged by the profile's rate");

    let (report, _) = check_json(&fixture("hgx-h100"), &[]);
    assert_verdict(&report, "profile.inventory", "skip", "node");
}
