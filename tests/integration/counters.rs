//! Counter checks over before/after fixture pairs (tests/fixtures/counters/<case>/, answer keys in each
//! README), the single-sample rules, and the `counters` command's JSON and Prometheus outputs.

use std::path::PathBuf;

use crate::support::{assert_none, assert_verdict, fixture, run, stderr, stdout, verdicts};

fn pair(case: &str) -> (PathBuf, PathBuf) {
    let dir = fixture("counters").join(case);
    (dir.join("before"), dir.join("after"))
}

/// `check --root after --before before` restricted to the counter checks (and probe.read).
fn check_pair(case: &str) -> serde_json::Value {
    let (before, after) = pair(case);
    let output = run(&[
        "check",
        "--json",
        "--root",
        after.to_str().unwrap(),
        "--before",
        before.to_str().unwrap(),
        "--only",
        "pfc",
        "--only",
        "ecn",
        "--only",
        "rdma.retransmit",
        "--only",
        "ib.port",
        "--only",
        "ib.congestion",
        "--only",
        "link.flap",
        "--only",
        "phy.ber",
        "--only",
        "probe.read",
    ]);
    assert!(matches!(output.status.code(), Some(0 | 1)), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).expect("json")
}

fn message_of(report: &serde_json::Value, id: &str, verdict: &str) -> String {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["id"] == id && f["verdict"] == verdict)
        .map(|f| format!("{} | {}", f["message"], f["evidence"]))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_healthy_roce_port_passes_every_counter_check() {
    let report = check_pair("roce-healthy");
    assert_none(&report, "", &["warn", "fail", "error"]);
    assert_verdict(&report, "ecn.config", "pass", "ens1f0np0");
    assert_verdict(&report, "pfc.config", "pass", "ens1f0np0");
    assert_verdict(&report, "phy.ber", "pass", "ens1f0np0");
    // The capture has no debugfs: the DCQCN parameters are a skip with the reason, not a pass.
    assert_verdict(&report, "ecn.config", "skip", "cc_params");
}

#[test]
fn retransmissions_growing_from_the_nccl_394_totals_fail() {
    let report = check_pair("roce-retransmit");
    assert_verdict(&report, "rdma.retransmit", "fail", "mlx5_0 port 1");
    let text = message_of(&report, "rdma.retransmit", "fail");
    assert!(text.contains("local_ack_timeout_err 91316 -> 91500 (+184 in 2.0 s)"), "{text}");
    assert!(text.contains("req_transport_retries_exceeded"), "{text}");
}

#[test]
fn totals_without_growth_pass_with_two_samples_and_warn_with_one() {
    let report = check_pair("retransmit-history");
    assert_verdict(&report, "rdma.retransmit", "pass", "mlx5_0 port 1");
    let (_, after) = pair("retransmit-history");
    let (single, _) = crate::support::check_json(&after, &["--only", "rdma.retransmit"]);
    assert_verdict(&single, "rdma.retransmit", "warn", "mlx5_0 port 1");
    let text = message_of(&single, "rdma.retransmit", "warn");
    assert!(
        text.contains("one sample")
            && text.contains("local_ack_timeout_err 91316 (since the counters were last reset)"),
        "{text}"
    );
}

#[test]
fn saturated_legacy_counters_of_gpud_943_warn_instead_of_a_zero_delta() {
    let report = check_pair("ib-saturated");
    assert_verdict(&report, "ib.port.errors", "warn", "mlx5_1 port 1");
    assert_verdict(&report, "link.flap", "warn", "mlx5_1 port 1");
    let text = message_of(&report, "ib.port.errors", "warn");
    for pinned in ["port_xmit_discards saturated at 65535", "perfquery -R"] {
        assert!(text.contains(pinned), "{pinned} missing: {text}");
    }
    // Waiting for credits is congestion, reported beside the traffic, not as a port error (#23).
    assert!(!text.contains("port_xmit_wait"), "{text}");
    assert!(message_of(&report, "ib.congestion", "warn").contains("port_xmit_wait saturated at 4294967295"));
    assert!(message_of(&report, "link.flap", "warn").contains("link_downed saturated at 255"));
}

/// `port_xmit_wait` growing beside the data sent is congestion, judged relative to traffic; the
/// port's error counters stay quiet.
#[test]
fn waiting_for_credits_is_congestion_not_a_port_error() {
    let report = check_pair("ib-congestion");
    assert_verdict(&report, "ib.congestion", "warn", "mlx5_1 port 1");
    let text = message_of(&report, "ib.congestion", "warn");
    assert!(
        text.contains("waited 1000000 ticks") && text.contains("8.0 MB") && text.contains("33.3 % waiting"),
        "{text}"
    );
    assert_verdict(&report, "ib.port.errors", "pass", "mlx5_1 port 1");
}

#[test]
fn growing_ib_errors_and_a_link_down_fail() {
    let report = check_pair("ib-errors");
    assert_verdict(&report, "ib.port.errors", "fail", "mlx5_1 port 1");
    assert_verdict(&report, "link.flap", "fail", "mlx5_1 port 1");
    assert!(message_of(&report, "ib.port.errors", "fail").contains("symbol_error 0 -> 37 (+37 in 2.0 s)"));
}

#[test]
fn pause_storms_and_long_pauses_are_caught() {
    let report = check_pair("pfc-storm");
    assert_verdict(&report, "pfc.storm", "fail", "ens1f0np0");
    assert_verdict(&report, "pfc.storm", "warn", "ens1f0np0");
    assert!(message_of(&report, "pfc.storm", "warn").contains("priority 3 received pauses and was paused 75%"));
}

#[test]
fn drops_on_the_lossless_priority_fail() {
    let report = check_pair("lossless-drops");
    assert_verdict(&report, "pfc.lossless_drops", "fail", "ens1f0np0");
    assert!(message_of(&report, "pfc.lossless_drops", "fail").contains("rx_prio3_buf_discard 0 -> 812"));
}

#[test]
fn congestion_control_misconfiguration_is_named() {
    let report = check_pair("congestion-misconfig");
    assert_verdict(&report, "pfc.config", "warn", "ens1f0np0");
    assert_verdict(&report, "ecn.config", "fail", "ens1f0np0");
    assert_verdict(&report, "ecn.cnp_ignored", "warn", "mlx5_0 port 1");
    let report = check_pair("pfc-off");
    assert!(message_of(&report, "pfc.config", "warn").contains("PFC enabled on no priority"));
}

#[test]
fn bit_error_ratio_over_the_interval_fails() {
    let report = check_pair("phy-ber");
    assert_verdict(&report, "phy.ber", "fail", "ens1f0np0");
    assert!(message_of(&report, "phy.ber", "fail").contains("effective BER 5.00e-11"));
}

#[test]
fn wrapped_and_reset_counters_are_counted_not_lost() {
    let report = check_pair("counter-wrap-and-reset");
    assert!(message_of(&report, "rdma.retransmit", "warn").contains("out_of_sequence 4294967290 -> 10 (+16 in 2.0 s)"));
    assert!(message_of(&report, "pfc.lossless_drops", "fail").contains("100 -> 5 (reset during the interval)"));
}

#[test]
fn a_malformed_counter_file_is_an_error_naming_it() {
    let report = check_pair("malformed");
    assert_verdict(&report, "probe.read", "error", "mlx5_0/ports/1/hw_counters");
    let text = message_of(&report, "probe.read", "error");
    assert!(text.contains("hw_counters/out_of_sequence") && text.contains("garbage"), "{text}");
}

#[test]
fn every_counter_check_id_has_a_fixture_that_makes_it_fail_or_warn() {
    let mut raised = std::collections::BTreeSet::new();
    for case in std::fs::read_dir(fixture("counters")).expect("fixtures") {
        let case = case.expect("entry");
        if !case.path().join("after").is_dir() {
            continue;
        }
        let report = check_pair(&case.file_name().to_string_lossy());
        for (id, verdict, ..) in verdicts(&report) {
            if verdict == "warn" || verdict == "fail" {
                raised.insert(id);
            }
        }
    }
    for id in [
        "pfc.storm",
        "pfc.lossless_drops",
        "pfc.config",
        "ecn.config",
        "ecn.cnp_ignored",
        "rdma.retransmit",
        "ib.port.errors",
        "link.flap",
        "phy.ber",
    ] {
        assert!(raised.contains(id), "no fixture raises {id}");
    }
}

#[test]
fn counters_json_reports_bytes_deltas_and_rates() {
    let (before, after) = pair("ib-saturated");
    let output = run(&["counters", "--json", "--root", after.to_str().unwrap(), "--before", before.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(report["schema_version"], 1);
    assert_eq!(report["interval_seconds"], 2.0);
    let row = |name: &str| {
        report["counters"].as_array().expect("rows").iter().find(|r| r["name"] == name).cloned().expect(name)
    };
    // port_xmit_data counts 4-octet words: reported in bytes, delta 1,000,000 words = 4,000,000 bytes.
    let data = row("port_xmit_data");
    assert_eq!((data["unit"].as_str(), data["delta"].as_u64()), (Some("bytes"), Some(4_000_000)));
    assert_eq!(data["rate_per_second"].as_f64(), Some(2_000_000.0));
    let wait = row("port_xmit_wait");
    assert_eq!((wait["saturated"].as_bool(), wait["status"].as_str()), (Some(true), Some("saturated")));
    assert!(wait.get("delta").is_none(), "a saturated counter has no delta: {wait}");
}

#[test]
fn prometheus_output_parses_back_with_its_labels() {
    let (_, after) = pair("pfc-storm");
    let output = run(&["counters", "--format", "prometheus", "--root", after.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    let lines = text.lines().map(|l| Ok(l.to_string()));
    let scrape = prometheus_parse::Scrape::parse(lines).expect("valid Prometheus text exposition");
    let sample = |metric: &str, label: (&str, &str)| {
        scrape.samples.iter().find(|s| s.metric == metric && s.labels.get(label.0) == Some(label.1)).cloned()
    };
    let pause = sample("fabricdoctor_ethtool_rx_prio_pause_duration_microseconds_total", ("priority", "3"))
        .expect("per-priority pause duration with a priority label");
    assert_eq!(pause.labels.get("netdev"), Some("ens1f0np0"));
    assert!(matches!(pause.value, prometheus_parse::Value::Counter(v) if v == 1_500_000.0));
    let data =
        sample("fabricdoctor_ib_port_port_xmit_data_bytes_total", ("device", "mlx5_0")).expect("IB data in bytes");
    assert_eq!(data.labels.get("port"), Some("1"));
    for sample in &scrape.samples {
        assert!(sample.metric.starts_with("fabricdoctor_"), "{}", sample.metric);
    }
    // Each family is declared once (HELP/TYPE), as the textfile collector requires.
    let types = text.lines().filter(|l| l.starts_with("# TYPE ")).count();
    let families: std::collections::BTreeSet<&str> =
        text.lines().filter_map(|l| l.strip_prefix("# TYPE ")).map(|l| l.split(' ').next().unwrap_or("")).collect();
    assert_eq!(types, families.len());
}

#[test]
fn counters_interval_on_the_live_node_prints_deltas() {
    let output = run(&["counters", "--interval", "200ms", "--count", "2", "--all"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert_eq!(text.matches("(deltas over").count(), 2, "{text}");
    let output = run(&["counters", "--interval", "soon"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("not a duration"), "{}", stderr(&output));
}
