//! The verbs transport on Soft-RoCE, in the real-kernel guest (tests/vm): `fabricdoctor perf server`
//! and `perf client --transport verbs` over rxe0 for WRITE, READ and SEND bandwidth and latency, the
//! errors without rdma-core and without a device, and perftest's ib_write_bw/ib_write_lat on the same
//! device for comparison (tests/vm/perf-guest.sh). Runs when FABRICDOCTOR_VM_TESTS=1 (CI, as root,
//! after tests/vm/build-guest.sh) and skips loudly otherwise. A guest without an RDMA device fails the
//! test: it never passes without having measured something.
//!
//! Timing under TCG is functional, not performance: the ratios to perftest are printed and written to
//! `$CARGO_TARGET_TMPDIR/perf-guest/compare.json`, not asserted. For numbers worth quoting, build
//! optimized and run more rounds:
//! `FABRICDOCTOR_VM_TESTS=1 FD_PERF_ROUNDS=5 cargo test --release --test integration soft_roce -- --nocapture`.

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::repository;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `runs.tsv`: name -> (exit code, command).
fn runs(out: &Path) -> BTreeMap<String, (i32, String)> {
    read(&out.join("runs.tsv"))
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(3, '\t');
            let name = fields.next()?.to_string();
            let code = fields.next()?.parse().ok()?;
            Some((name, (code, fields.next().unwrap_or_default().to_string())))
        })
        .collect()
}

/// The first (only) size of a `perf client --json` report.
fn fd_result(out: &Path, name: &str) -> serde_json::Value {
    let path = out.join(format!("{name}.json"));
    let report: serde_json::Value = serde_json::from_str(&read(&path))
        .unwrap_or_else(|e| panic!("{name}: not JSON ({e}); stderr: {}", read(&out.join(format!("{name}.err")))));
    let runs = report["runs"].as_array().unwrap_or_else(|| panic!("{name}: no runs in {report}"));
    assert_eq!(runs.len(), 1, "{name}: one size");
    runs[0].clone()
}

fn number(value: &serde_json::Value, key: &str, name: &str) -> f64 {
    value[key].as_f64().unwrap_or_else(|| panic!("{name}: no number {key} in {value}"))
}

/// The result line of a perftest report: the line after the `#bytes` header, as numbers
/// (bandwidth: bytes, iterations, peak, average MiB/s, Mpps; latency: bytes, iterations, t_min,
/// t_max, t_typical, t_avg, t_stdev, 99%, 99.9%).
fn perftest_result(out: &Path, name: &str) -> Vec<f64> {
    let text = read(&out.join(format!("{name}.txt")));
    let mut lines = text.lines().skip_while(|line| !line.trim_start().starts_with("#bytes"));
    lines.next();
    let values: Vec<f64> = lines.next().unwrap_or_default().split_whitespace().filter_map(|t| t.parse().ok()).collect();
    assert!(values.len() >= 5, "{name}: no perftest result line in\n{text}");
    values
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[test]
fn soft_roce_perf_runs_every_operation_and_compares_with_perftest() {
    if std::env::var("FABRICDOCTOR_VM_TESTS").as_deref() != Ok("1") {
        crate::support::loud_eprintln!(
            "SKIP: Soft-RoCE perf guest test (verbs transport vs perftest): set FABRICDOCTOR_VM_TESTS=1 \
             (as root, after tests/vm/build-guest.sh; scripts/test-all.sh does both)"
        );
        return;
    }
    let _guests = crate::support::one_guest_run_at_a_time();
    let out = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("perf-guest");
    let _ = std::fs::remove_dir_all(&out);
    // The guest does not inherit this environment: knobs travel in a file the script sources.
    let knobs: String = ["FD_PERF_ROUNDS", "FD_PERF_BW_ITERS", "FD_PERF_LAT_ITERS"]
        .iter()
        .filter_map(|key| {
            std::env::var(key).ok().filter(|v| v.chars().all(|c| c.is_ascii_digit())).map(|v| format!("{key}={v}\n"))
        })
        .collect();
    let knob_dir = tempfile::tempdir().expect("tempdir");
    let knob_file = knob_dir.path().join("perf-guest.env");
    std::fs::write(&knob_file, knobs).expect("perf-guest.env");
    let status = std::process::Command::new("bash")
        .arg(repository().join("tests/vm/run-topology-guest.sh"))
        .args(["--timeout", "480", "--copy", env!("CARGO_BIN_EXE_fabricdoctor"), "--copy"])
        .arg(&knob_file)
        .arg(repository().join("tests/vm/perf-guest.sh"))
        .arg(&out)
        .status()
        .expect("run-topology-guest.sh runs");
    let guest_log = std::fs::read_to_string(out.join("vm-guest.log")).unwrap_or_default();
    assert_ne!(status.code(), Some(3), "the guest has no RDMA device: nothing was measured\n{guest_log}");
    assert!(status.success(), "guest run failed ({status}); output in {}; guest log:\n{guest_log}", out.display());

    let runs = runs(&out);
    let ran = |name: &str| {
        let (code, command) = runs.get(name).unwrap_or_else(|| panic!("{name} did not run; runs: {runs:?}"));
        let stderr = std::fs::read_to_string(out.join(format!("{name}.err"))).unwrap_or_default();
        assert_eq!(*code, 0, "{name} failed: {command}\n{stderr}");
    };

    // Every operation and test completed with real numbers, and the server saw every message.
    for op in ["write", "read", "send"] {
        let name = format!("fd-{op}-bw");
        ran(&name);
        let run = fd_result(&out, &name);
        assert!(number(&run["result"], "bw_avg_gbps", &name) > 0.0, "{name}: {run}");
        assert_eq!(run["client_messages"], 500, "{name}: {run}");
        assert_eq!(run["server"]["messages"], 500, "{name}: {run}");
        assert!(run["connections"][0].as_str().unwrap_or_default().contains("rxe0:1 RoCE"), "{name}: {run}");

        let name = format!("fd-{op}-lat");
        ran(&name);
        let run = fd_result(&out, &name);
        let typical = number(&run["result"], "lat_typical_us", &name);
        assert!(typical > 0.0 && typical <= number(&run["result"], "lat_max_us", &name), "{name}: {run}");
        assert_eq!(run["result"]["iterations"], 1000, "{name}: {run}");

        // 1001 messages: the unsignaled tail after the last moderated completion completes too, and
        // every byte that arrived matched the pattern.
        let name = format!("fd-{op}-bw-validate");
        ran(&name);
        let run = fd_result(&out, &name);
        assert_eq!(run["client_messages"], 1001, "{name}: {run}");
        assert_eq!(run["server"]["validation_errors"], 0, "{name}: {run}");
        assert_eq!(run["client_validation_errors"], 0, "{name}: {run}");
        // Every message was checked by its receiver, one by one: SEND headers and WRITE immediates on
        // the server (plus the region of the last WRITE at the end), READ headers on the client.
        let (side, messages) = match op {
            "write" => (&run["server"]["verified"], 1002),
            "send" => (&run["server"]["verified"], 1001),
            _ => (&run["client_verified"], 1001),
        };
        assert_eq!(side["messages"], messages, "{name}: every message verified: {run}");
        assert_eq!(side["sequence_errors"], 0, "{name}: {run}");
        assert!(
            run["connections"][0].as_str().unwrap_or_default().contains("messages framed for --validate"),
            "{name}: {run}"
        );

        let name = format!("fd-{op}-lat-validate");
        ran(&name);
        let run = fd_result(&out, &name);
        assert_eq!(run["server"]["validation_errors"], 0, "{name}: {run}");
        assert_eq!(run["client_validation_errors"], 0, "{name}: {run}");
        let checked = run["client_verified"]["messages"].as_u64().unwrap_or(0)
            + run["server"]["verified"]["messages"].as_u64().unwrap_or(0);
        assert!(checked >= 200, "{name}: the replies were checked: {run}");
    }

    // What --validate costs on Soft-RoCE (reported, not judged: under TCG the guest's one CPU runs
    // both the rxe "wire" and the check, so this bounds the cost from above).
    for op in ["write", "send"] {
        let plain = fd_result(&out, &format!("fd-{op}-bw"));
        let name = format!("fd-{op}-bw-64k-validate");
        ran(&name);
        let validated = fd_result(&out, &name);
        assert_eq!(validated["server"]["validation_errors"], 0, "{name}: {validated}");
        let ratio = number(&validated["result"], "bw_avg_gbps", &name)
            / number(&plain["result"], "bw_avg_gbps", &format!("fd-{op}-bw"));
        eprintln!("soft-roce {op} bandwidth at 64 KiB, --validate / plain: {ratio:.2}x");
    }

    // The check can fail: a flipped header bit in every 250th SEND is 4 corrupted headers, the first
    // named by its sequence.
    let (code, command) = runs.get("fd-send-bw-inject").cloned().expect("fd-send-bw-inject ran");
    let injected = read(&out.join("fd-send-bw-inject.err"));
    assert_eq!(code, 2, "{command}: {injected}");
    assert!(injected.contains("4 validation errors on the server"), "{injected}");
    assert!(injected.contains("message 249: header corrupted"), "{injected}");

    // The traffic class reaches the queue pair: the description carries what ibv_query_qp read back
    // first, and what was asked where the provider holds something else. Soft-RoCE keeps the class
    // but not the service level (RoCE carries no SL on the wire; rxe reads back 0), and the
    // description says so rather than echoing the request.
    for name in ["fd-write-bw-tclass", "fd-send-lat-tclass-env"] {
        ran(name);
        let run = fd_result(&out, name);
        let connection = run["connections"][0].as_str().unwrap_or_default();
        assert!(connection.contains(", tclass 106 sl "), "{name}: the class read back: {run}");
        assert!(
            connection.contains("tclass 106 sl 3") || connection.contains("(asked for tclass 106 sl 3)"),
            "{name}: {run}"
        );
        assert_eq!(run["parameters"]["traffic_class"], 106, "{name}: the class travels to the server: {run}");
    }
    for name in ["fd-write-bw-postlist", "fd-send-bw-postlist"] {
        ran(name);
        let run = fd_result(&out, name);
        assert_eq!(run["client_messages"], 2000, "{name}: every message of the post lists completed: {run}");
        assert_eq!(run["parameters"]["post_list"], 16, "{name}: {run}");
        assert_eq!(run["server"]["validation_errors"], 0, "{name}: {run}");
    }
    let name = "fd-send-bw-qps";
    ran(name);
    let run = fd_result(&out, name);
    assert_eq!(run["connections"].as_array().map(Vec::len), Some(4), "{name}: {run}");
    // One send and one receive completion queue for the four queue pairs (perftest's ctx_init).
    assert!(
        run["connections"][0]
            .as_str()
            .unwrap_or_default()
            .contains("completion queues shared by the run's queue pairs"),
        "{name}: {run}"
    );
    assert_eq!(run["server"]["messages"], 1200, "{name}: 300 per queue pair: {run}");
    assert_eq!(run["server"]["validation_errors"], 0, "{name}: {run}");

    // Duration mode (perftest -D): nobody knows the message count in advance. Regression: a one-sided
    // WRITE server reported 0 received messages there, and the client failed the run ("client sent N
    // messages but the server received 0"); found by the burn-in over verbs.
    for op in ["write", "read", "send"] {
        let name = format!("fd-{op}-bw-duration");
        ran(&name);
        let run = fd_result(&out, &name);
        assert!(number(&run["result"], "bw_avg_gbps", &name) > 0.0, "{name}: {run}");
        assert!(run["client_messages"].as_u64().unwrap_or(0) > 0, "{name}: {run}");
    }

    // A server killed mid-run: the client ends on its own (not by the guest's `timeout 120`, exit
    // 124), within its --timeout of 10 s plus slack, and names the peer.
    let (code, _) = runs.get("err-peer-vanished").cloned().expect("err-peer-vanished ran");
    let vanished = read(&out.join("err-peer-vanished.err"));
    let took_ms: u64 = read(&out.join("err-peer-vanished.ms")).trim().parse().expect("milliseconds");
    assert!(code != 0 && code != 124, "exit {code} after the peer vanished: {vanished}");
    assert!(took_ms < 15_000, "the client took {took_ms} ms to notice the vanished peer: {vanished}");
    assert!(vanished.contains("10.77.0.2"), "the error does not name the peer: {vanished}");

    // The errors of issue #4, from the same binary in the same guest.
    let not_installed = read(&out.join("err-not-installed.err"));
    assert!(not_installed.contains("RDMA userspace (rdma-core) not installed"), "{not_installed}");
    let no_device = read(&out.join("err-no-device.err"));
    assert!(no_device.contains("no RDMA devices: kernel has no RDMA support or no driver loaded"), "{no_device}");

    // The comparison with perftest, round by round.
    let rounds: Vec<String> = runs
        .keys()
        .filter_map(|name| name.strip_prefix("cmp-")?.strip_suffix("-fd-write-bw").map(str::to_string))
        .collect();
    assert!(!rounds.is_empty(), "no comparison rounds ran: {runs:?}");
    let (mut fd_bw, mut pt_bw, mut fd_lat, mut pt_lat) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in &rounds {
        for tool in ["fd", "pt"] {
            ran(&format!("cmp-{round}-{tool}-write-bw"));
            ran(&format!("cmp-{round}-{tool}-write-lat"));
        }
        let name = format!("cmp-{round}-fd-write-bw");
        fd_bw.push(number(&fd_result(&out, &name)["result"], "bw_avg_mib_per_second", &name));
        pt_bw.push(perftest_result(&out, &format!("cmp-{round}-pt-write-bw"))[3]);
        let name = format!("cmp-{round}-fd-write-lat");
        fd_lat.push(number(&fd_result(&out, &name)["result"], "lat_typical_us", &name));
        pt_lat.push(perftest_result(&out, &format!("cmp-{round}-pt-write-lat"))[4]);
    }
    for value in fd_bw.iter().chain(&pt_bw).chain(&fd_lat).chain(&pt_lat) {
        assert!(*value > 0.0, "a comparison run measured nothing: bw {fd_bw:?} {pt_bw:?} lat {fd_lat:?} {pt_lat:?}");
    }
    let compare = serde_json::json!({
        "note": "Soft-RoCE under QEMU TCG: functional timing; compare only within this run",
        "write_bw_65536": {
            "fabricdoctor_mib_per_second": fd_bw, "perftest_mib_per_second": pt_bw,
            "ratio_of_medians": median(fd_bw.clone()) / median(pt_bw.clone()),
        },
        "write_lat_8": {
            "fabricdoctor_typical_us": fd_lat, "perftest_typical_us": pt_lat,
            "ratio_of_medians": median(fd_lat.clone()) / median(pt_lat.clone()),
        },
    });
    let text = serde_json::to_string_pretty(&compare).expect("json");
    std::fs::write(out.join("compare.json"), &text).expect("compare.json");
    eprintln!(
        "fabricdoctor vs perftest on rxe0 (same guest, {} rounds; output in {}):\n{text}",
        rounds.len(),
        out.display()
    );

    // Last, so that everything above is checked (and the comparison printed) even when this fails.
    // Both directions at once share one rxe device and two emulated CPUs: the sum cannot be several
    // times one direction's bandwidth (a bound loose enough for TCG's noise).
    let name = "fd-write-bw-bidir";
    ran(name);
    let both = number(&fd_result(&out, name)["result"], "bw_avg_mib_per_second", name);
    let one = number(&fd_result(&out, "fd-write-bw")["result"], "bw_avg_mib_per_second", "fd-write-bw");
    assert!(
        both > 0.0 && both < 4.0 * one,
        "bidirectional WRITE bandwidth {both:.1} MiB/s against {one:.1} MiB/s one way: the reverse direction \
         is timed by the receiving side's serve(), which for one-sided WRITE/READ cannot see the data arrive"
    );
}
