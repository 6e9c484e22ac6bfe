//! `fabricdoctor triage` over every real-world output in ../shared/realworld (each file's header is
//! its answer key: the expected diagnosis, or none where the header says nothing is established) and
//! over the synthetic fixtures in tests/fixtures/triage; `fabricdoctor playbook`.

use std::path::Path;

use serde::Deserialize;

use crate::support::{fixture, realworld, run, stderr, stdout};

/// The JSON contract, strictly: an unknown key fails the test.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Report {
    schema_version: u32,
    inputs: Vec<InputSummary>,
    diagnoses: Vec<Diagnosis>,
    observations: Vec<serde_json::Value>,
    #[expect(dead_code, reason = "part of the contract; checked by deserialization")]
    ranks: Vec<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "fields are part of the contract; deserialization checks them")]
struct InputSummary {
    file: String,
    kinds: Vec<String>,
    lines: usize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "fields are part of the contract; deserialization checks them")]
struct Diagnosis {
    id: String,
    playbook: String,
    cause: String,
    confidence: String,
    evidence: Vec<Evidence>,
    facts: Vec<String>,
    next_steps: Vec<String>,
    #[serde(default)]
    undetermined: Option<String>,
    #[serde(default)]
    collect: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Evidence {
    file: String,
    line: usize,
    text: String,
}

fn triage(path: &Path) -> (Report, i32) {
    let output = run(&["triage", "--json", path.to_str().unwrap()]);
    let code = output.status.code().unwrap_or(-1);
    let report: Report = serde_json::from_str(&stdout(&output))
        .unwrap_or_else(|e| panic!("triage --json {} is not the contract: {e}\n{}", path.display(), stderr(&output)));
    assert_eq!(report.schema_version, 1);
    (report, code)
}

/// A real-world answer key, or `None` (SKIP printed) in a lone clone.
#[track_caller]
fn realworld_file(name: &str) -> Option<std::path::PathBuf> {
    realworld(name)
}

fn ids(report: &Report) -> Vec<&str> {
    report.diagnoses.iter().map(|d| d.id.as_str()).collect()
}

fn observation<'a>(report: &'a Report, id: &str) -> Vec<&'a serde_json::Value> {
    report.observations.iter().filter(|o| o["id"] == id).collect()
}

/// The top diagnosis, its confidence, and that its evidence quotes real lines of the input.
fn assert_top<'a>(report: &'a Report, id: &str, confidence: &str) -> &'a Diagnosis {
    let top = report.diagnoses.first().unwrap_or_else(|| panic!("no diagnosis, expected {id}"));
    assert_eq!(top.id, id, "diagnoses: {:?}", ids(report));
    assert_eq!(top.confidence, confidence, "{id}");
    assert!(!top.evidence.is_empty() && !top.next_steps.is_empty());
    for evidence in &top.evidence {
        if evidence.line > 0 {
            let text = std::fs::read(&evidence.file).unwrap_or_default();
            let text = String::from_utf8_lossy(&text);
            let line = text.lines().nth(evidence.line - 1).unwrap_or("");
            assert!(
                line.contains(evidence.text.trim_end_matches(" [...]").trim()),
                "{}:{} quoted wrong",
                evidence.file,
                evidence.line
            );
        }
    }
    top
}

#[test]
fn every_realworld_file_has_an_expectation() {
    let Some(dir) = realworld("") else { return };
    let covered = [
        "nccl-01",
        "nccl-06",
        "nccl-08",
        "nccl-13",
        "fr-01",
        "topo-03",
        "topo-04",
        "topo-06",
        "lspci-01",
        "lspci-02",
        "lspci-07",
        "lspci-11",
        "ctr-01",
        "ctr-03",
        "gids-01",
        "ibvdevinfo-01",
        "perf-01",
        "perf-03",
    ];
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name == "INDEX.md" {
            continue;
        }
        assert!(covered.iter().any(|c| name.starts_with(&format!("{c}-"))), "{name} has no triage expectation here");
    }
}

#[test]
fn nccl_01_error_4_is_gpudirect_broken_by_acs_not_confirmed() {
    let Some(path) = realworld_file("nccl-01-nccl928-h100-ib-err4-vendor81-acs.log") else { return };
    let (report, code) = triage(&path);
    assert_eq!(code, 1);
    let top = assert_top(&report, "gpudirect-acs-iommu", "medium");
    assert!(top.facts.iter().any(|f| f.contains("IBV_WC_LOC_PROT_ERR") && f.contains("81 (0x51)")), "{:?}", top.facts);
    assert!(top.next_steps.iter().any(|s| s.contains("NCCL_NET_GDR_LEVEL=0")));
}

#[test]
fn nccl_06_devshm_too_small() {
    let Some(path) = realworld_file("nccl-06-nccl290-docker-devshm-posix-fallocate.log") else { return };
    let (report, code) = triage(&path);
    assert_eq!(code, 1);
    let top = assert_top(&report, "shm-too-small", "high");
    assert!(top.next_steps.iter().any(|s| s.contains("--shm-size")));
    assert_eq!(ids(&report), ["shm-too-small"], "nothing else is established");
}

#[test]
fn nccl_08_collective_mismatch_is_not_a_network_fault() {
    let Some(path) = realworld_file("nccl-08-nccl969-ib-collective-mismatch.log") else { return };
    let (report, code) = triage(&path);
    assert_eq!(code, 1);
    let top = assert_top(&report, "collective-mismatch", "high");
    assert!(top.cause.contains("not a network fault"));
    assert!(top.facts.iter().any(|f| f.contains("local_size=496640") && f.contains("remote_size=65536")));
    assert_eq!(ids(&report), ["collective-mismatch"]);
}

#[test]
fn nccl_13_error_12_on_roce_is_the_gid_index() {
    let Some(path) = realworld_file("nccl-13-nccl426-v100-roce-bond-err12-gid-index.log") else { return };
    let (report, code) = triage(&path);
    assert_eq!(code, 1);
    let top = assert_top(&report, "roce-gid-index", "high");
    assert!(top.facts.iter().any(|f| f.contains("IBV_WC_RETRY_EXC_ERR") && f.contains("129 (0x81)")));
    assert!(top.next_steps.iter().any(|s| s.contains("NCCL_IB_GID_INDEX")));
    // Lossy fabric stays a lower-ranked alternative: no counters were given.
    let lossy = report.diagnoses.iter().find(|d| d.id == "roce-retry-exhausted").unwrap();
    assert_eq!(lossy.confidence, "low");
}

#[test]
fn fr_01_size_mismatch_names_culprits_and_leaves_the_cause_open() {
    let Some(path) = realworld_file("fr-01-pytorch140563-fr-analyzer-size-mismatch.txt") else { return };
    let (report, code) = triage(&path);
    assert_eq!(code, 1);
    let top = assert_top(&report, "collective-mismatch", "high");
    let undetermined = top.undetermined.as_deref().unwrap();
    assert!(undetermined.contains("22, 110"), "{undetermined}");
    assert!(undetermined.contains("not why"));
    assert!(top.facts.iter().any(|f| f.contains("SIZE_OR_SYNTAX_MISMATCH") && f.contains("default_pg")));
    assert!(!top.collect.is_empty());
    assert_eq!(ids(&report), ["collective-mismatch"], "no network cause may be claimed");
}

#[test]
fn lspci_01_idle_gpu_downgrade_is_not_a_fault() {
    let Some(path) = realworld_file("lspci-01-stelline-coyote2-rtx6000ada-idle-2.5gts-downgraded.txt") else { return };
    let (report, code) = triage(&path);
    assert_eq!(code, 0, "{:?}", ids(&report));
    assert!(report.diagnoses.is_empty());
    let speed = observation(&report, "pcie.link.speed");
    assert_eq!(speed.len(), 1);
    assert_eq!(speed[0]["verdict"], "warn");
    assert!(speed[0]["message"].as_str().unwrap().contains("recheck under load"));
    assert_eq!(observation(&report, "pcie.link.width")[0]["verdict"], "pass");
    assert_eq!(observation(&report, "pcie.aer")[0]["verdict"], "pass");
}

#[test]
fn lspci_02_healthy_connectx7() {
    let Some(path) = realworld_file("lspci-02-stelline-coyote2-connectx7-gen5x16-mps512-mrrs512.txt") else { return };
    let (report, code) = triage(&path);
    assert_eq!(code, 0, "{:?}", ids(&report));
    for id in ["pcie.link.speed", "pcie.link.width", "pcie.mps", "pcie.acs", "pcie.aer"] {
        let found = observation(&report, id);
        assert_eq!(found.len(), 2, "{id}: both cards");
        assert!(found.iter().all(|f| f["verdict"] == "pass"), "{id}: {found:?}");
    }
    // MRRS 512 is reported as-is against the policy (4096), a warning, not a diagnosis.
    assert!(observation(&report, "pcie.mrrs").iter().all(|f| f["verdict"] == "warn" && f["observed"] == "512 bytes"));
}

#[test]
fn lspci_07_mps_clamped_is_reported_not_judged() {
    let Some(path) = realworld_file("lspci-07-l2fwdnv6-connectx6dx-mps256-mrrs4096.txt") else { return };
    let (report, code) = triage(&path);
    assert_eq!(code, 0);
    let mps = observation(&report, "pcie.mps");
    assert_eq!(mps[0]["verdict"], "skip");
    assert!(mps[0]["message"].as_str().unwrap().contains("256 bytes of 512"));
    assert_eq!(observation(&report, "pcie.mrrs")[0]["verdict"], "pass");
}

#[test]
fn lspci_11_acs_redirect_breaks_gpudirect() {
    let Some(path) = realworld_file("lspci-11-nccl304-plx-acsctl-enabled-gdr-crash.txt") else { return };
    let (report, code) = triage(&path);
    assert_eq!(code, 1);
    let top = assert_top(&report, "gpudirect-acs-iommu", "medium");
    assert!(top.evidence.iter().any(|e| e.text.contains("ReqRedir+")));
    let acs = observation(&report, "pcie.acs");
    assert!(
        acs.iter().any(|f| f["verdict"] == "fail") && acs.iter().any(|f| f["verdict"] == "pass"),
        "broken and fixed state"
    );
}

#[test]
fn ctr_01_retransmissions_point_at_a_lossy_fabric() {
    let Some(path) = realworld_file("ctr-01-nccl394-mlx5-roce-hw_counters-errors.txt") else { return };
    let (report, code) = triage(&path);
    assert_eq!(code, 1);
    let top = assert_top(&report, "roce-retry-exhausted", "medium");
    assert!(top.facts.iter().any(|f| f.contains("local_ack_timeout_err 91316") && f.contains("packet_seq_err 929974")));
    assert_eq!(observation(&report, "counters.congestion")[0]["verdict"], "pass");
    let retransmission = &observation(&report, "counters.retransmission")[0];
    assert!(!retransmission["message"].as_str().unwrap().contains("lifespan"));
}

#[test]
fn ctr_03_saturated_counters_and_historical_flaps() {
    let Some(path) = realworld_file("ctr-03-gpud943-cx7-ib-port-counters-saturated.txt") else { return };
    let (report, code) = triage(&path);
    assert_eq!(code, 1);
    let top = assert_top(&report, "link-flap", "medium");
    assert!(top.facts.iter().any(|f| f.contains("link_downed 255") && f.contains("nic=mlx5_1")));
    let saturated = observation(&report, "counters.saturated")[0]["message"].as_str().unwrap().to_string();
    for counter in ["port_xmit_wait 4294967295", "port_xmit_discards 65535", "link_downed 255"] {
        assert!(saturated.contains(counter), "{saturated}");
    }
}

#[test]
fn gids_01_sparse_table_rocev2_is_index_7() {
    let Some(path) = realworld_file("gids-01-nccl1538-k8s-sparse-gid-table-index4-7.txt") else { return };
    let (report, code) = triage(&path);
    assert_eq!(code, 0);
    let gids = observation(&report, "rdma.gid.rocev2");
    assert_eq!(gids.len(), 3, "mlx5_0..2 (mlx5_3's v2 row is cut off in the paste)");
    for gid in gids {
        let message = gid["message"].as_str().unwrap();
        assert!(message.contains("index 7") && message.contains("starts at index 4"), "{message}");
    }
    assert_eq!(observation(&report, "rdma.gid.subnets").len(), 1);
}

#[test]
fn ibvdevinfo_01_ports_down_firmware_and_mtu() {
    let Some(path) = realworld_file("ibvdevinfo-01-stelline-coyote2-cx7-fw-mismatch-portdown.txt") else { return };
    let (report, code) = triage(&path);
    assert_eq!(code, 1);
    assert_top(&report, "nic-port-down", "medium");
    assert_eq!(observation(&report, "rdma.port.state").iter().filter(|f| f["verdict"] == "fail").count(), 4);
    let firmware = observation(&report, "rdma.firmware")[0]["message"].as_str().unwrap().to_string();
    assert!(firmware.contains("28.41.1000") && firmware.contains("28.43.2566"));
    assert_eq!(observation(&report, "rdma.mtu").len(), 2, "mlx5_0/1 at 1024");
}

#[test]
fn topologies_are_judged_like_the_live_check() {
    let Some(path) = realworld_file("topo-04-sglang30401-hgx-h100-8nic-pix.txt") else { return };
    let (report, code) = triage(&path);
    assert_eq!(code, 0);
    assert!(observation(&report, "topo.gpu_nic.affinity").iter().all(|f| f["verdict"] == "pass"));
    let rails = &observation(&report, "topo.rails")[0];
    assert_eq!(rails["verdict"], "pass");
    assert!(rails["evidence"][0].as_str().unwrap().contains("GPU7->mlx5_7 (PIX)"));

    let Some(path) = realworld_file("topo-03-oyanghd-dgxa100-epyc7742-10nic-pxb-tabsep.txt") else { return };
    let (report, code) = triage(&path);
    assert_eq!(code, 0);
    assert!(observation(&report, "topo.gpu_nic.affinity")
        .iter()
        .all(|f| f["message"].as_str().unwrap().contains("PXB")));
    assert!(observation(&report, "topo.nic.far")[0]["message"].as_str().unwrap().contains("mlx5_8, mlx5_9"));

    let Some(path) = realworld_file("topo-06-nccl1357-hgx-h100-6nic-only4-pix.txt") else { return };
    let (report, code) = triage(&path);
    assert_eq!(code, 0);
    let rails = &observation(&report, "topo.rails")[0];
    assert_eq!(rails["verdict"], "warn");
    assert!(rails["message"].as_str().unwrap().contains("4 rails for 8 GPUs"), "{rails}");
    assert!(rails["message"].as_str().unwrap().contains("GPU1, GPU3, GPU5"));
}

/// nccl-tests compares every element with its exact expected value: a nonzero #wrong is corruption.
/// The second input is fabricdoctor's own AllReduce with one corrupted element injected per rank
/// (`perf allreduce --np 2 -b 1M -e 4M -f 4 --inject-corruption 1`), which prints the same columns.
#[test]
fn wrong_elements_in_a_result_table_are_data_corruption() {
    let (report, code) = triage(&fixture("triage/nccl-tests-wrong.txt"));
    assert_eq!(code, 1);
    let top = assert_top(&report, "collective-data-corruption", "high");
    assert!(
        top.cause.contains("at 67108864 bytes (float), #wrong out-of-place 7, in-place 0")
            && top.cause.contains("at 268435456 bytes (float), #wrong out-of-place 31, in-place 12"),
        "{}",
        top.cause
    );
    assert!(top.evidence.iter().any(|e| e.text.contains("Out of bounds values : 50 FAILED")));
    assert_eq!(report.diagnoses.len(), 1, "{:?}", ids(&report));

    let (report, code) = triage(&fixture("triage/fabricdoctor-allreduce-corrupted.txt"));
    assert_eq!(code, 1);
    assert_top(&report, "collective-data-corruption", "high");
}

#[test]
fn healthy_runs_produce_no_diagnosis() {
    let mut healthy = vec![fixture("triage/healthy-nccl-info.log")];
    healthy.extend(realworld_file("perf-01-a3mega-2x8h100-all_reduce_perf-healthy.txt"));
    healthy.extend(realworld_file("perf-03-tf22077-ib_write_bw-mlx4-roce-gid2.txt"));
    for path in healthy {
        let (report, code) = triage(&path);
        assert_eq!(code, 0, "{}: {:?}", path.display(), ids(&report));
        assert!(report.diagnoses.is_empty());
    }
    let (report, _) = triage(&fixture("triage/healthy-nccl-info.log"));
    assert_eq!(report.inputs[0].kinds, ["nccl-log"]);
}

#[test]
fn synthetic_causes() {
    let cases: &[(&str, &str, &str, &[&str])] = &[
        ("acs-silent-hang.txt", "gpudirect-acs-iommu", "high", &["ReqRedir+"]),
        ("cross-nic-rail-only.log", "cross-nic-rail", "medium", &["mlx5_1", "mlx5_0"]),
        ("gpu-xid-behind-network-error.log", "gpu-lost", "high", &["Xid 79", "gpu-d03", "0000:9b:00"]),
        ("gpu-xid-dbe-behind-network-error.log", "gpu-fault", "high", &["Xid 48", "gpu-d03"]),
        ("socket-ifname-docker0.log", "socket-ifname", "high", &["docker0"]),
        ("version-mismatch.log", "version-env-mismatch", "high", &["2.18.5", "2.21.5"]),
        ("link-flap-dmesg.txt", "link-flap", "medium", &["ens1f0np0"]),
        ("roce-rtr-no-route.log", "roce-gid-index", "high", &["No route to host"]),
        ("ras-rank-missing.txt", "rank-missing", "medium", &["rank 21", "10.60.0.23", "GPU 5"]),
        ("fr-dumps", "collective-mismatch", "high", &["2"]),
        ("iommu-fault-gdr.txt", "gpudirect-acs-iommu", "high", &["IBV_WC_LOC_PROT_ERR", "DMAR"]),
        ("watchdog-only.log", "hang-undetermined", "low", &["SeqNum=77012", "not established"]),
        ("pcie-aer-dmesg.txt", "pcie-aer", "high", &["0000:18:00.0", "Uncorrected"]),
        ("nic-link-degraded-lspci.txt", "pcie-link-degraded", "high", &["18:00.0", "width"]),
        ("ethtool-S-port-drops.txt", "roce-retry-exhausted", "medium", &["rx_discards_phy 184223", "ens1f0np0"]),
    ];
    for (name, id, confidence, words) in cases {
        let (report, code) = triage(&fixture(&format!("triage/{name}")));
        assert_eq!(code, 1, "{name}");
        let top = assert_top(&report, id, confidence);
        let text = format!("{} {:?} {:?} {:?}", top.cause, top.facts, top.evidence, top.undetermined);
        for word in *words {
            assert!(text.contains(word), "{name}: {word:?} not in {text}");
        }
    }
}

#[test]
fn a_gpu_fault_outranks_the_network_errors_it_causes() {
    for (name, id) in
        [("gpu-xid-behind-network-error.log", "gpu-lost"), ("gpu-xid-dbe-behind-network-error.log", "gpu-fault")]
    {
        let (report, _) = triage(&fixture(&format!("triage/{name}")));
        assert_eq!(report.diagnoses[0].id, id, "{name}");
        for later in &report.diagnoses[1..] {
            assert_ne!(later.confidence, "high", "{name}: {} should rank below {id}", later.id);
        }
    }
}

/// A GPU lost from the bus, however it shows (Xid 79 is above), is the diagnosis, ranked above the
/// network errors that follow it: a Surprise Down on the GPU's port, or nvidia-smi failing to reach it.
#[test]
fn a_lost_gpu_is_named_from_the_bus_or_nvidia_smi() {
    let network = "gpu-d01:4411:4502 [2] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.50.0.13<51234> with status=12 opcode=0 len=0 vendor err 129 (Send)\n";
    for (lost, words) in [
        (
            "[Mon Nov 22 14:01:55 2026] pcieport 0000:97:01.0: AER: Uncorrected (Fatal) error received: 0000:9b:00.0\n[Mon Nov 22 14:01:55 2026] pcieport 0000:97:01.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver ID)\n[Mon Nov 22 14:01:55 2026] pcieport 0000:97:01.0:    [ 5] SDES                   (First)\n[Mon Nov 22 14:01:55 2026] pcieport 0000:97:01.0: AER: Surprise Down Error received: 0000:9b:00.0\n",
            &["Surprise Down", "0000:9b:00.0"][..],
        ),
        ("Unable to determine the device handle for GPU0000:9B:00.0: Unknown Error\n", &["device handle", "0000:9b:00.0"][..]),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("paste.txt");
        std::fs::write(&path, format!("{lost}{network}")).expect("write");
        let (report, _) = triage(&path);
        let top = assert_top(&report, "gpu-lost", "high");
        let text = format!("{} {:?}", top.cause, top.evidence);
        for word in words {
            assert!(text.contains(word), "{word:?} not in {text}");
        }
        for later in &report.diagnoses[1..] {
            assert_ne!(later.confidence, "high", "{} should rank below the lost GPU", later.id);
        }
    }
}

#[test]
fn undetermined_hang_lists_what_to_collect() {
    let (report, code) = triage(&fixture("triage/watchdog-only.log"));
    assert_eq!(code, 1);
    assert_eq!(ids(&report), ["hang-undetermined"]);
    let diagnosis = &report.diagnoses[0];
    assert!(diagnosis.collect.iter().any(|c| c.contains("NCCL_DEBUG=INFO")));
    assert!(diagnosis.collect.iter().any(|c| c.contains("flight recorder")));
}

#[test]
fn unrecognised_input_is_said_not_passed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "the job was slow yesterday\n").unwrap();
    let (report, code) = triage(&path);
    assert_eq!(code, 0);
    assert_eq!(report.inputs[0].kinds, ["unrecognised"]);
    let skipped = observation(&report, "triage.input");
    assert_eq!(skipped[0]["verdict"], "skip", "{skipped:?}");
}

#[test]
fn rank_missing_joins_rank_host_gpu_nic_and_counters() {
    let (report, code) = triage(&fixture("triage/hang-rank-missing"));
    assert_eq!(code, 1);
    let top = assert_top(&report, "rank-missing", "medium");
    assert!(top.cause.contains("rank 5 on gpu-b02, GPU 1, NIC mlx5_1"), "{}", top.cause);
    assert!(top.evidence.iter().any(|e| e.text.contains("mlx5_1/ports/1/hw_counters/req_cqe_error:37")));
    assert!(top.evidence.iter().any(|e| e.text.contains("last enqueued NCCL work: 4807")));
}

#[test]
fn flight_recorder_dumps_show_who_diverged_and_who_is_behind() {
    let (report, _) = triage(&fixture("triage/fr-dumps"));
    assert!(report.inputs.iter().all(|i| i.kinds == ["pytorch-flight-recorder-dump"]));
    let mismatch = &report.diagnoses[0];
    assert!(mismatch.facts.iter().any(|f| f.contains("rank=2") && f.contains("[[1025]]")), "{:?}", mismatch.facts);
    let behind = report.diagnoses.iter().find(|d| d.id == "rank-missing").unwrap();
    assert!(behind.facts.iter().any(|f| f.contains("rank=3") && f.contains("last_seq=3")), "{:?}", behind.facts);
}

#[test]
fn unreadable_inputs_exit_2_naming_them() {
    let output = run(&["triage", "/nonexistent/nccl.log"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("/nonexistent/nccl.log"), "{}", stderr(&output));
    let output = run(&["triage", "/nonexistent-dir/"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("/nonexistent-dir"), "{}", stderr(&output));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("truncated.pkl"), b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00}\x94(").unwrap();
    let output = run(&["triage", "--json", dir.path().to_str().unwrap()]);
    // A truncated pickle is reported as an unreadable input observation, the rest still triaged.
    assert!(stdout(&output).contains("unreadable flight recorder dump"), "{}", stdout(&output));
}

#[test]
fn stdin_and_non_utf8_input() {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = crate::support::binary()
        .args(["triage", "--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut log = b"gpu2-ru7:2143:2561 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device \xff\xfe\n".to_vec();
    log.extend_from_slice(b"\x00\x01garbage\n");
    child.stdin.take().unwrap().write_all(&log).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let report: Report = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report.diagnoses[0].id, "shm-too-small");
    assert_eq!(report.diagnoses[0].evidence[0].file, "-");
}

#[test]
fn playbooks_list_show_and_override() {
    let output = run(&["playbook", "list"]);
    assert_eq!(output.status.code(), Some(0));
    for name in ["nccl-hang", "nccl-slow", "link-flap"] {
        assert!(stdout(&output).contains(name));
    }
    let output = run(&["playbook", "show", "nccl-hang"]);
    assert!(stdout(&output).contains("roce-gid-index") && stdout(&output).contains("next steps:"));
    let output = run(&["playbook", "show", "nope"]);
    assert_eq!(output.status.code(), Some(2));

    // An operator's copy replaces the embedded playbook of the same name.
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"nccl-hang\"\ntitle = \"site\"\ndescription = \"site rules\"\n[[rule]]\nid = \"site-shm\"\ncause = \"site cause\"\nconfidence = \"low\"\nany_of = [\"nccl.shm_failed\"]\nnext_steps = [\"page the site team for {host}\"]\n";
    std::fs::write(dir.path().join("nccl-hang.toml"), text).unwrap();
    let Some(log) = realworld_file("nccl-06-nccl290-docker-devshm-posix-fallocate.log") else { return };
    let output = run(&["triage", "--json", "--playbook-dir", dir.path().to_str().unwrap(), log.to_str().unwrap()]);
    let report: Report = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(ids(&report), ["site-shm"]);
    assert_eq!(report.diagnoses[0].next_steps, ["page the site team for gpu2-ru7"]);
    std::fs::write(dir.path().join("broken.toml"), "name = ").unwrap();
    let output = run(&["playbook", "list", "--playbook-dir", dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("broken.toml"));
}
