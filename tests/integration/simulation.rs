//! `fabricdoctor burnin --simulate MODEL`: the real coordinator (schedule, isolation, reports,
//! resume) over a simulated fabric of 64 hosts with two rails, four leaves per rail and ±3 % noise.
//! A fault-free fabric signs off with no suspect; each kind of fault is pinned on the host, NIC or
//! path it was injected into and nothing else is blamed; a host that dies is reported lost; a
//! fabric-wide shortfall is caught by the absolute expectation, not blamed on a host.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use fabricdoctor_burnin::plan::plan_with_setup;
use fabricdoctor_burnin::playbook::{Playbook, DEFAULT_PLAYBOOK};
use fabricdoctor_report::burnin::{BurninReport, HostStatus, SignOffVerdict};

use crate::support::{stderr, stdout};

const FABRIC: &str = "hosts = 64\nrails = 2\nhosts_per_leaf = 16\nrail_gbps = 400.0\nnoise = 0.03\n";

/// Run a simulated burn-in of `duration` on `model` (the fabric above plus `faults`, TOML) into
/// a fresh report directory; returns the output, the report and simulation.json.
fn simulate(faults: &str, seed: u64, duration: &str) -> (Output, BurninReport, serde_json::Value, tempfile::TempDir) {
    let parent = tempfile::tempdir().expect("tempdir");
    let model = parent.path().join("fabric.toml");
    std::fs::write(&model, format!("{FABRIC}seed = {seed}\n{faults}")).expect("write the model");
    let dir = parent.path().join("run");
    let output = Command::new(env!("CARGO_BIN_EXE_fabricdoctor"))
        .args(["burnin", "--simulate"])
        .arg(&model)
        .args(["--duration", duration, "--report-dir"])
        .arg(&dir)
        .output()
        .expect("fabricdoctor runs");
    let report = read(&dir, &output);
    let text = std::fs::read_to_string(dir.join("simulation.json"))
        .unwrap_or_else(|e| panic!("simulation.json: {e}\n{}", describe(&output)));
    let simulation: serde_json::Value = serde_json::from_str(&text).expect("simulation.json is JSON");
    (output, report, simulation, parent)
}

/// Write `model` under `parent` and run a simulated burn-in of it with `args` into `parent/run`;
/// returns the output and the report directory.
pub(crate) fn run_simulated(parent: &Path, model: &str, args: &[&str]) -> (Output, PathBuf) {
    let path = parent.join("fabric.toml");
    std::fs::write(&path, model).expect("write the model");
    let dir = parent.join("run");
    let output = Command::new(env!("CARGO_BIN_EXE_fabricdoctor"))
        .args(["burnin", "--simulate"])
        .arg(&path)
        .args(args)
        .arg("--report-dir")
        .arg(&dir)
        .output()
        .expect("fabricdoctor runs");
    (output, dir)
}

/// `burnin --resume DIR --simulate MODEL`.
fn resume_simulated(dir: &Path, model: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fabricdoctor"))
        .args(["burnin", "--resume"])
        .arg(dir)
        .arg("--simulate")
        .arg(model)
        .output()
        .expect("fabricdoctor runs")
}

fn read(dir: &Path, output: &Output) -> BurninReport {
    let text = std::fs::read_to_string(dir.join("report.json"))
        .unwrap_or_else(|e| panic!("report.json: {e}\n{}", describe(output)));
    BurninReport::from_json(&text).expect("report.json follows the burn-in schema")
}

fn describe(output: &Output) -> String {
    let err = stderr(output);
    let lines: Vec<&str> = err.lines().collect();
    format!(
        "exit {:?}\nstdout:\n{}\nstderr (tail):\n{}",
        output.status.code(),
        stdout(output),
        lines[lines.len().saturating_sub(20)..].join("\n")
    )
}

#[test]
fn a_fault_free_simulated_fabric_of_64_hosts_signs_off() {
    let (output, report, simulation, _dir) = simulate("", 7, "10m");
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert_eq!(report.signoff.verdict, SignOffVerdict::Pass, "{:?}", report.signoff.reasons);
    assert!(report.suspects.is_empty(), "{:?}", report.suspects);
    assert_eq!(report.run.launcher, "simulated");
    assert_eq!(report.hosts.len(), 64);
    assert!(report.hosts.iter().all(|h| h.status == HostStatus::Ok));
    // Every pair of each rail was measured, each direction once per pass.
    for matrix in &report.pairs {
        assert_eq!(matrix.hosts.len(), 64, "{}", matrix.rail);
        assert!(matrix.pairs.len() >= 64 * 63, "{}: {} directed pairs", matrix.rail, matrix.pairs.len());
    }
    // Ten minutes of protocol ran in simulated time, not in the test's time.
    let simulated = simulation["simulated_s"].as_f64().expect("simulated_s");
    assert!(simulated >= 600.0, "{simulated} s simulated");
    assert_eq!(simulation["score"]["precision"], 1.0);
    // A congestion pulse's 63 senders share the target's 400 Gb/s link: together they get at most
    // the link (and noise), not 63 links.
    assert!(!report.congestion.is_empty());
    for pulse in &report.congestion {
        let aggregate = pulse.aggregate_gbps.expect("an aggregate");
        assert!((300.0..400.0 * 1.03).contains(&aggregate), "{}: {aggregate} Gb/s", pulse.target);
    }
    // `--plan` follows the coordinator's schedule: with the simulation's cost of a step (its tests,
    // no setup) it predicts when the first pass ends, within its guess of the check phase (10 s).
    let first_pass = report
        .phases
        .iter()
        .find(|p| p.name == "allreduce" && p.iteration == 0)
        .and_then(|p| p.end_offset_s)
        .expect("the first pass ended");
    let playbook = Playbook::parse(DEFAULT_PLAYBOOK, "default").expect("default playbook");
    let planned = plan_with_setup(64, 2, 16, &playbook, Duration::from_secs(600), 0.0).first_pass_s;
    assert!((planned - first_pass).abs() <= 0.03 * first_pass + 10.0, "planned {planned:.0} s, ran {first_pass:.0} s");
}

#[test]
fn every_kind_of_fault_is_pinned_where_it_was_injected_and_nowhere_else() {
    // The example model users start from: one fault of each kind that isolation pins, and a
    // host that dies.
    let example = std::fs::read_to_string(crate::support::repository().join("playbooks/simulation/example.toml"))
        .expect("playbooks/simulation/example.toml");
    let faults = &example[example.find("[[faults]]").expect("the example injects faults")..];
    let (output, report, simulation, _dir) = simulate(faults, 11, "10m");
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert_eq!(report.signoff.verdict, SignOffVerdict::Fail);
    let score = &simulation["score"];
    assert_eq!(score["missed"], serde_json::json!([]), "{}", describe(&output));
    assert_eq!(score["false_suspects"], serde_json::json!([]), "{}", describe(&output));
    assert_eq!(score["found"], 6);
    // The dead host is lost, not a suspect.
    let dead = report.hosts.iter().find(|h| h.name == "sim0062").expect("sim0062");
    assert_eq!(dead.status, HostStatus::Lost, "{dead:?}");
    assert!(stdout(&output).contains("precision 1.000, recall 1.000"), "{}", describe(&output));
}

#[test]
fn a_fabric_wide_shortfall_fails_the_expectation_and_blames_no_host() {
    let faults = "[[faults]]\nkind = \"shortfall\"\nfraction = 0.5\n";
    let (output, report, _simulation, _dir) = simulate(faults, 5, "5m");
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert!(report.suspects.is_empty(), "{:?}", report.suspects);
    assert!(
        report.findings.iter().any(|f| f.id == "burnin.fabric.below_expected"),
        "{:?}",
        report.findings.iter().map(|f| &f.id).collect::<Vec<_>>()
    );
}

#[test]
fn a_bad_model_is_refused_by_its_key_before_anything_runs() {
    let parent = tempfile::tempdir().expect("tempdir");
    for (text, expected) in [
        ("hosts = 1\n", "hosts = 1 outside 2..=4096"),
        ("hosts = 8\nnoise = 0.7\n", "noise = 0.7"),
        ("hosts = 8\n[[faults]]\nkind = \"slow_host\"\nhost = 8\nfraction = 0.5\n", "faults[0]: host 8 of 8 hosts"),
        ("hosts = 8\n[[faults]]\nkind = \"melted\"\nhost = 1\n", "unknown variant"),
        ("hosts = 8\nspeed = 3\n", "unknown field"),
    ] {
        let model = parent.path().join("model.toml");
        std::fs::write(&model, text).expect("write");
        let output = Command::new(env!("CARGO_BIN_EXE_fabricdoctor"))
            .args(["burnin", "--simulate"])
            .arg(&model)
            .arg("--report-dir")
            .arg(parent.path().join("run"))
            .output()
            .expect("fabricdoctor runs");
        assert_eq!(output.status.code(), Some(2), "{text}: {}", describe(&output));
        let err = stderr(&output);
        assert!(err.contains(expected) && err.contains("model.toml"), "{text}: {err}");
        assert!(!parent.path().join("run").join("report.json").exists());
    }
}

/// A simulated run stopped by SIGINT in its pairwise phase resumes with its model and finishes
/// without repeating a step; without the model, the resume is refused by name.
#[test]
fn a_stopped_simulated_run_resumes_with_its_model() {
    let parent = tempfile::tempdir().expect("tempdir");
    let model = parent.path().join("fabric.toml");
    std::fs::write(
        &model,
        format!(
            "{FABRIC}seed = 2\n[[faults]]\nkind = \"slow_nic\"\nhost = 9\nrail = 0\nfraction = 0.5\n\
             [[faults]]\nkind = \"dies\"\nhost = 20\nat_s = 700.0\n"
        ),
    )
    .expect("write the model");
    let dir = parent.path().join("run");
    let mut child = Command::new(env!("CARGO_BIN_EXE_fabricdoctor"))
        .args(["burnin", "--simulate"])
        .arg(&model)
        .args(["--duration", "10m", "--report-dir"])
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("fabricdoctor starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !std::fs::read_to_string(dir.join("events.jsonl"))
        .unwrap_or_default()
        .contains("\"step\":\"pairwise#0/rail0/r3\"")
    {
        assert!(std::time::Instant::now() < deadline, "the pairwise phase never started");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-INT", &pid]).status().expect("kill").success());
    let stopped = child.wait().expect("wait");
    assert_eq!(stopped.code(), Some(2), "a stopped run is incomplete");
    let without = Command::new(env!("CARGO_BIN_EXE_fabricdoctor"))
        .args(["burnin", "--resume"])
        .arg(&dir)
        .output()
        .expect("fabricdoctor runs");
    assert_eq!(without.status.code(), Some(2), "{}", describe(&without));
    assert!(stderr(&without).contains("give its fabric model again with --simulate MODEL"), "{}", describe(&without));
    let resumed = resume_simulated(&dir, &model);
    assert_eq!(resumed.status.code(), Some(1), "{}", describe(&resumed));
    let report = read(&dir, &resumed);
    assert_eq!(report.run.resumed, 1);
    assert!(report.run.complete);
    assert!(stdout(&resumed).contains("precision 1.000, recall 1.000"), "{}", describe(&resumed));
    let text = std::fs::read_to_string(dir.join("events.jsonl")).expect("events");
    let mut steps = std::collections::BTreeSet::new();
    // The run was stopped after 14 s of simulated time (round r3): the host that dies at 700 s of
    // the run is lost at its next request after 700 s (a round is about 2.4 s here), not 700 s
    // after the resume.
    let lost_at: Vec<f64> = text
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|e| e["event"] == "host_status" && e["host"] == "sim0020" && e["status"] == "lost")
        .filter_map(|e| e["offset_s"].as_f64())
        .collect();
    assert!(lost_at.len() == 1 && (700.0..710.0).contains(&lost_at[0]), "sim0020 lost at {lost_at:?} s");
    for line in text.lines() {
        let event: serde_json::Value = serde_json::from_str(line).expect("event");
        if event["event"] == "step" {
            let step = event["step"].as_str().expect("step key").to_string();
            assert!(steps.insert(step.clone()), "step {step} ran twice");
        }
    }
}

/// Above 128 hosts report.json summarises each rail: its outliers worst first, quantiles, a
/// histogram and leaf × leaf tiles; every pair goes to pairs.jsonl, which `--resume` reads back.
#[test]
fn a_fleet_sized_report_keeps_the_outliers_and_a_summary_and_the_full_table_beside_it() {
    let parent = tempfile::tempdir().expect("tempdir");
    let (output, dir) = run_simulated(
        parent.path(),
        "hosts = 160\nrails = 1\nhosts_per_leaf = 32\nnoise = 0.03\nseed = 3\n\
         [[faults]]\nkind = \"bad_cable\"\nhost = 70\nrail = 0\nfraction = 0.5\n",
        &["--duration", "5m"],
    );
    let model = parent.path().join("fabric.toml");
    assert_eq!(output.status.code(), Some(1), "the cable is found: {}", describe(&output));
    let report = read(&dir, &output);
    assert_eq!(report.schema_version, 3);
    let matrix = &report.pairs[0];
    let summary = matrix.summary.as_ref().unwrap_or_else(|| panic!("rail {} is not summarised", matrix.rail));
    assert!(matrix.bw_gbps.is_empty() && matrix.hosts.is_empty(), "no dense matrix above 128 hosts");
    assert!(summary.pairs >= 160 * 159, "{} pairs", summary.pairs);
    // The bad cable's pairs, and only pairs through sim0070, are the outliers, worst first.
    assert!(!matrix.pairs.is_empty());
    assert!(
        matrix.pairs.iter().all(|p| p.client == "sim0070" || p.server == "sim0070"),
        "{:?}",
        matrix.pairs.iter().find(|p| p.client != "sim0070" && p.server != "sim0070")
    );
    let groups: Vec<&str> = summary.groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(groups, ["leaf0", "leaf1", "leaf2", "leaf3", "leaf4"], "grouped by the model's leaves");
    let tile = summary.tiles[2][0].as_ref().expect("leaf2 -> leaf0 measured");
    assert!(tile.worst_pair.as_deref().is_some_and(|p| p.starts_with("sim0070->")), "{tile:?}");
    // A pulse names its first senders and counts them all; no finding id is listed past 100.
    assert!(!report.congestion.is_empty());
    assert!(report.congestion.iter().all(|p| p.senders.len() <= 8 && p.senders_count == 159), "senders listed");
    for finding in &report.findings {
        let same = report.findings.iter().filter(|f| f.id == finding.id).count();
        assert!(same <= 101, "{} findings of {}", same, finding.id);
    }
    // Every pair is in the table, one per line.
    let table = std::fs::read_to_string(dir.join("pairs.jsonl")).expect("pairs.jsonl");
    assert_eq!(table.lines().count() as u64, summary.pairs);
    // The page draws tiles and the histogram, not a 160 × 160 matrix.
    let page = std::fs::read_to_string(dir.join("report.html")).expect("report.html");
    assert!(page.contains("Every pair of rail rail0") && page.contains("in 5 groups"), "summary on the page");
    assert!(page.contains("Worst pairs of rail rail0"));

    // A report whose table is gone cannot be resumed, and says which file is missing.
    std::fs::remove_file(dir.join("pairs.jsonl")).expect("remove the table");
    let resumed = resume_simulated(&dir, &model);
    assert_ne!(resumed.status.code(), Some(0));
    assert!(stderr(&resumed).contains("pairs.jsonl: cannot read the pair table"), "{}", describe(&resumed));
}

#[test]
fn the_plan_of_a_fleet_says_how_long_one_pass_takes_without_reaching_a_host() {
    let output = Command::new(env!("CARGO_BIN_EXE_fabricdoctor"))
        .args(["burnin", "--plan", "1024", "--rails", "8", "--duration", "72h"])
        .output()
        .expect("fabricdoctor runs");
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let text = stdout(&output);
    assert!(text.contains("burn-in plan: 1024 hosts, 8 rail(s)"), "{text}");
    assert!(text.contains("1023 rounds of up to 512 pairs at once per rail"), "{text}");
    assert!(text.contains("pairing by leaf") && text.contains("takes 62 rounds"), "{text}");
    assert!(text.contains("warning: the first pass alone takes about"), "{text}");
    let refused = Command::new(env!("CARGO_BIN_EXE_fabricdoctor"))
        .args(["burnin", "--plan", "1"])
        .output()
        .expect("fabricdoctor runs");
    assert_eq!(refused.status.code(), Some(2), "{}", describe(&refused));
}

/// The fleet-sized run for CI: 1,024 simulated hosts in 32 leaves, paired by leaf (62 rounds
/// instead of 1,023), five kinds of fault pinned where they were put and nowhere else, a host that
/// dies lost, the report within its budget; and the same fabric without faults signs off. (Every pair at 1,024 hosts is
/// the bench's: bench/burnin-scale.sh.)
#[test]
fn a_fleet_of_1024_simulated_hosts_paired_by_leaf_pins_every_fault_and_signs_off_without() {
    let parent = tempfile::tempdir().expect("tempdir");
    let playbook = leaf_playbook(parent.path(), &[("targets = 0", "targets = 32")]);
    let fabric = "hosts = 1024\nrails = 1\nhosts_per_leaf = 32\nnoise = 0.03\nseed = 11\n";
    let faults = "[[faults]]\nkind = \"slow_host\"\nhost = 17\nfraction = 0.6\n\
                  [[faults]]\nkind = \"slow_nic\"\nhost = 420\nrail = 0\nfraction = 0.5\n\
                  [[faults]]\nkind = \"bad_cable\"\nhost = 300\nrail = 0\nfraction = 0.5\n\
                  [[faults]]\nkind = \"bad_leaf_port\"\nhost = 811\nrail = 0\nfraction = 0.4\n\
                  [[faults]]\nkind = \"flapping\"\nhost = 555\nrail = 0\nperiod_s = 20.0\ndown_s = 12.0\n\
                  [[faults]]\nkind = \"dies\"\nhost = 999\nat_s = 100.0\n";
    // One pass: the shortest duration leaves no time for a soak pass.
    let args = ["--playbook", &playbook.display().to_string(), "--duration", "1m"];
    let faulted = parent.path().join("faulted");
    std::fs::create_dir(&faulted).expect("mkdir");
    let (output, dir) = run_simulated(&faulted, &format!("{fabric}{faults}"), &args);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let simulation: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("simulation.json")).expect("simulation.json"))
            .expect("JSON");
    // Five suspects; the host that died is lost, not a suspect.
    assert_eq!(simulation["score"]["found"], 5, "{}", simulation["score"]);
    assert_eq!(simulation["score"]["precision"], 1.0, "{}", simulation["score"]);
    let report = read(&dir, &output);
    let lost: Vec<&str> =
        report.hosts.iter().filter(|h| h.status == HostStatus::Lost).map(|h| h.name.as_str()).collect();
    assert_eq!(lost, ["sim0999"]);
    let summary = report.pairs[0].summary.as_ref().expect("summarised above 128 hosts");
    assert_eq!(summary.groups.len(), 32, "grouped by the model's leaves");
    let size = |name: &str| std::fs::metadata(dir.join(name)).map(|m| m.len()).unwrap_or(u64::MAX);
    // The budgets are for 4,096 hosts (report.json 100 MB, page 5 MB); a quarter of the
    // hosts stays well under them.
    assert!(size("report.json") < 25_000_000 && size("report.html") < 5_000_000, "report sizes");

    let clean = parent.path().join("clean");
    std::fs::create_dir(&clean).expect("mkdir");
    let (output, dir) = run_simulated(&clean, fabric, &args);
    assert_eq!(output.status.code(), Some(0), "a fault-free fleet signs off: {}", describe(&output));
    let report = read(&dir, &output);
    assert!(report.suspects.is_empty(), "{:?}", report.suspects);
}

/// The default playbook paired by leaf, with `changes` (line text, replacement) made, written to
/// `dir`/leaf.toml.
fn leaf_playbook(dir: &Path, changes: &[(&str, &str)]) -> PathBuf {
    let default = Command::new(env!("CARGO_BIN_EXE_fabricdoctor"))
        .args(["burnin", "--print-playbook"])
        .output()
        .expect("fabricdoctor runs");
    let mut text = stdout(&default);
    for (line, replacement) in [("pairing = \"all\"", "pairing = \"leaf\"")].iter().chain(changes) {
        assert!(text.contains(line), "the default playbook has no `{line}`");
        text = text.replace(line, replacement);
    }
    let path = dir.join("leaf.toml");
    std::fs::write(&path, text).expect("write the playbook");
    path
}

/// A playbook that pairs by leaf measures every pair within a leaf and host k of each leaf with
/// host k of every other, a fraction of all pairs, and still pins a bad cable; hosts with no leaf
/// are refused by name before anything runs.
#[test]
fn pairing_by_leaf_pins_a_bad_cable_with_a_fraction_of_the_pairs() {
    let parent = tempfile::tempdir().expect("tempdir");
    let playbook = leaf_playbook(parent.path(), &[]);
    let (output, dir) = run_simulated(
        parent.path(),
        "hosts = 160\nrails = 1\nhosts_per_leaf = 32\nnoise = 0.03\nseed = 5\n\
         [[faults]]\nkind = \"bad_cable\"\nhost = 45\nrail = 0\nfraction = 0.5\n",
        &["--playbook", &playbook.display().to_string(), "--duration", "5m"],
    );
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let report = read(&dir, &output);
    let simulation: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("simulation.json")).expect("simulation.json"))
            .expect("JSON");
    assert_eq!(simulation["score"]["recall"], 1.0, "{}", simulation["score"]);
    assert_eq!(simulation["score"]["precision"], 1.0, "{}", simulation["score"]);
    // Five leaves of 32: 5 x 496 pairs within, 10 leaf pairs x 32 across, both directions, plus
    // isolation's retests of the cable's host: far fewer than 160 x 159.
    let summary = report.pairs[0].summary.as_ref().expect("summarised");
    assert!(summary.pairs >= 2 * (5 * 496 + 10 * 32), "{} pairs", summary.pairs);
    assert!(summary.pairs < 160 * 159 / 3, "{} pairs", summary.pairs);

    let refused = Command::new(env!("CARGO_BIN_EXE_fabricdoctor"))
        .args(["burnin", "--hosts", "127.0.0.1:9,127.0.0.1:10", "--playbook"])
        .arg(&playbook)
        .args(["--duration", "10s", "--report-dir"])
        .arg(parent.path().join("refused"))
        .env("FABRICDOCTOR_TOKEN", "0123456789abcdef0123456789abcdef")
        .output()
        .expect("fabricdoctor runs");
    assert_eq!(refused.status.code(), Some(2), "{}", describe(&refused));
    assert!(stderr(&refused).contains("no leaf is named for 127.0.0.1:9"), "{}", describe(&refused));
}
