//! The command-line contract: exit codes, flags, clear errors for bad input.

use crate::support::{check_json, run, stderr, stdout, write};

#[test]
fn list_documents_every_check() {
    let output = run(&["check", "--list"]);
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    for id in ["pcie.link.width", "pcie.acs", "topo.rails", "rdma.gid.rocev2", "host.devshm", "probe.read"] {
        assert!(text.lines().any(|l| l == id), "{id} missing from --list");
    }
    assert!(text.contains("Source:"), "long documentation is printed");
}

#[test]
fn bad_flags_are_usage_errors_with_exit_2() {
    let output = run(&["check", "--fail-on", "sometimes"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("sometimes"));
    let output = run(&["check", "--only", "pcie.nonsense"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--only pcie.nonsense: no check id starts with it"), "{}", stderr(&output));
}

#[test]
fn a_missing_root_or_policy_names_the_input() {
    let output = run(&["check", "--root", "/nonexistent/fabricdoctor-root"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("/nonexistent/fabricdoctor-root"), "{}", stderr(&output));

    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "policy.toml", "[host]\ndevshm_min = 5\n");
    write(dir.path(), "tree/proc/cmdline", "quiet\n");
    let policy = dir.path().join("policy.toml");
    let tree = dir.path().join("tree");
    let output = run(&["check", "--root", tree.to_str().unwrap(), "--policy", policy.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("invalid policy") && stderr(&output).contains("policy.toml"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_corrupt_snapshot_archive_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "bad.tar.gz", "this is not gzip");
    let archive = dir.path().join("bad.tar.gz");
    let output = run(&["check", "--root", archive.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("not a valid .tar.gz"), "{}", stderr(&output));
}

/// A tree where one device's sysfs file is garbage: that device is reported (probe.read error naming
/// the file), the others are still checked, and nothing panics.
#[test]
fn a_malformed_sysfs_file_is_an_error_finding_not_a_panic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    for (address, vendor) in [("0000:01:00.0", "0x15b3\n"), ("0000:02:00.0", "banana\n")] {
        let device = format!("sys/devices/pci0000:00/0000:00:01.0/{address}");
        write(root, &format!("{device}/vendor"), vendor);
        write(root, &format!("{device}/device"), "0x1021\n");
        write(root, &format!("{device}/class"), "0x020700\n");
        write(root, &format!("{device}/current_link_speed"), "32.0 GT/s PCIe\n");
        write(root, &format!("{device}/max_link_speed"), "32.0 GT/s PCIe\n");
        write(root, &format!("{device}/current_link_width"), "8\n");
        write(root, &format!("{device}/max_link_width"), "16\n");
        std::fs::create_dir_all(root.join("sys/bus/pci/devices")).expect("mkdir");
        std::os::unix::fs::symlink(
            format!("../../../devices/pci0000:00/0000:00:01.0/{address}"),
            root.join(format!("sys/bus/pci/devices/{address}")),
        )
        .expect("symlink");
    }
    write(root, "proc/self/limits", "garbage\n");
    let (report, code) = check_json(root, &[]);
    assert_eq!(code, 1);
    crate::support::assert_verdict(&report, "probe.read", "error", "0000:02:00.0");
    let message = crate::support::verdicts(&report)
        .into_iter()
        .find(|(id, ..)| id == "probe.read")
        .map(|(.., m)| m)
        .expect("probe.read finding");
    assert!(message.contains("0000:02:00.0/vendor") && message.contains("banana"), "{message}");
    // The readable NIC is still checked: its x8-of-x16 link fails.
    crate::support::assert_verdict(&report, "pcie.link.width", "fail", "0000:01:00.0");
    // proc/self/limits is garbage: memlock is an error, not a pass.
    crate::support::assert_verdict(&report, "host.memlock", "error", "node");
}

#[test]
fn fail_on_warn_turns_warnings_into_exit_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Only an IOMMU translating DMA: one warning, nothing failing.
    write(dir.path(), "sys/class/iommu/dmar0/.keep", "");
    write(dir.path(), "sys/kernel/iommu_groups/0/type", "DMA-FQ\n");
    write(dir.path(), "proc/self/limits", "");
    let (report, code) = check_json(dir.path(), &["--only", "host.iommu"]);
    crate::support::assert_verdict(&report, "host.iommu", "warn", "node");
    assert_eq!(code, 0);
    let (_, code) = check_json(dir.path(), &["--only", "host.iommu", "--fail-on", "warn"]);
    assert_eq!(code, 1);
}

#[test]
fn output_file_is_written_and_formats_render() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "tree/proc/cmdline", "quiet\n");
    let tree = dir.path().join("tree");
    let out = dir.path().join("report.xml");
    let output = run(&["check", "--root", tree.to_str().unwrap(), "--format", "junit", "-o", out.to_str().unwrap()]);
    assert!(output.stdout.is_empty());
    let xml = std::fs::read_to_string(&out).expect("report written");
    assert!(xml.starts_with("<?xml") && xml.contains("<testsuite name=\"host.memlock\""), "{xml}");
    let output = run(&["check", "--root", tree.to_str().unwrap(), "--format", "markdown"]);
    assert!(stdout(&output).starts_with("# fabricdoctor check"));
}

#[test]
fn completions_and_manpage_are_generated() {
    assert!(stdout(&run(&["completions", "bash"])).contains("fabricdoctor"));
    assert!(stdout(&run(&["manpage"])).contains(".TH fabricdoctor"));
}

/// From a newcomer's run: `counters --interval 0s` sampled in a busy loop.
#[test]
fn zero_durations_are_refused_by_name() {
    let output = run(&["counters", "--interval", "0s"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("\"0s\" is zero"), "{}", stderr(&output));
    let output = run(&["check", "--sample-interval", "0ms"]);
    assert_eq!(output.status.code(), Some(2));
}

/// `--root` is a capture in every command that has it; the collectives' root rank is `-r/--root-rank`.
#[test]
fn the_root_rank_has_its_own_flag() {
    let output = run(&["perf", "broadcast", "--root", "1", "--np", "2"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--root-rank"), "clap suggests the right flag: {}", stderr(&output));
    let output = run(&["perf", "broadcast", "-r", "5", "--np", "1", "-b", "8", "-e", "8"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("--root-rank 5 but only 1 ranks"), "{}", stderr(&output));
}

/// `perf client --transport verbs` on a node without RDMA devices says so before it connects (here
/// to a port nobody listens on: the error must be about the device, not the connection).
#[test]
fn verbs_without_an_rdma_device_is_named_before_connecting() {
    if std::path::Path::new("/sys/class/infiniband").read_dir().is_ok_and(|mut d| d.next().is_some()) {
        crate::support::loud_eprintln!(
            "SKIP: this machine has RDMA devices; the missing-device message cannot be shown"
        );
        return;
    }
    let output = run(&["perf", "client", "127.0.0.1", "--port", "9", "--transport", "verbs"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--transport verbs: no RDMA devices: kernel has no RDMA support"),
        "{}",
        stderr(&output)
    );
}

/// In a capture, a file the capture does not hold is "not in this capture", never "needs root": the
/// pfc-storm fixture has no debugfs cc_params.
#[test]
fn a_file_missing_from_a_capture_is_named_as_such() {
    let after = crate::support::fixture("counters/pfc-storm/after");
    let before = crate::support::fixture("counters/pfc-storm/before");
    let (report, _) = check_json(&after, &["--before", before.to_str().unwrap(), "--only", "ecn.config"]);
    let messages: Vec<String> = crate::support::verdicts(&report).into_iter().map(|(.., message)| message).collect();
    assert!(messages.iter().any(|m| m.contains("not in this capture")), "{messages:#?}");
    assert!(!messages.iter().any(|m| m.contains("needs root")), "{messages:#?}");
}
