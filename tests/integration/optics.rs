//! Transceiver health from module memory, end to end: `check --only optics` over the fixture trees
//! that carry CMIS module pages (tests/fixtures/optics-hot, optics-dead-lane and the healthy 8x400G
//! hgx-h100), `counters` printing and exporting the readings, a node without modules, and damaged
//! pages that must be errors naming the interface and the page.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{binary, check_json, fixture, stdout, verdicts};

fn optics(report: &serde_json::Value) -> Vec<(String, String, String)> {
    verdicts(report)
        .into_iter()
        .filter(|(id, ..)| id.starts_with("optics."))
        .map(|(id, verdict, subject, _)| (id, verdict, subject))
        .collect()
}

fn not_passing(report: &serde_json::Value) -> Vec<(String, String, String)> {
    optics(report).into_iter().filter(|(_, verdict, _)| verdict != "pass").collect()
}

#[test]
fn the_healthy_8x400g_node_passes_every_optics_check() {
    let (report, _) = check_json(&fixture("hgx-h100"), &["--only", "optics"]);
    let found = optics(&report);
    // 8 modules x (temperature, alarms) + 8 x 4 lanes (power) + one inventory.
    assert_eq!(found.len(), 8 + 8 + 32 + 1, "{found:?}");
    assert!(not_passing(&report).is_empty(), "{:?}", not_passing(&report));
    let inventory = verdicts(&report).into_iter().find(|(id, ..)| id == "optics.inventory").expect("inventory");
    assert!(inventory.3.contains("8 modules, all NVIDIA MMA4Z00-NS400"), "{}", inventory.3);
    assert!(found.iter().any(|(id, _, subject)| id == "optics.power" && subject == "ibp25s0 (mlx5_0) lane 4"));
}

#[test]
fn a_hot_optic_fails_at_the_protocol_ceiling_below_its_own_alarm() {
    let (report, code) = check_json(&fixture("optics-hot"), &["--only", "optics"]);
    assert_eq!(code, 1);
    assert_eq!(
        not_passing(&report),
        [("optics.temperature".to_string(), "fail".to_string(), "ibp93s0 (mlx5_3)".to_string())]
    );
    let finding = report["findings"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["id"] == "optics.temperature" && f["verdict"] == "fail"))
        .expect("the hot optic");
    assert!(
        finding["message"].as_str().is_some_and(|m| m.contains("72.0 C") && m.contains("70 C ceiling")),
        "{finding}"
    );
    assert_eq!(finding["action"], "fix-config");
    // A site that allows 75 C still gets the module's own warning (past its 70 C warning limit).
    let dir = tempfile::tempdir().expect("tempdir");
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "[optics]\nmax_temperature_c = 75\n").expect("policy");
    let (report, _) =
        check_json(&fixture("optics-hot"), &["--only", "optics.temperature", "--policy", policy.to_str().unwrap()]);
    assert_eq!(
        not_passing(&report),
        [("optics.temperature".to_string(), "warn".to_string(), "ibp93s0 (mlx5_3)".to_string())]
    );
}

#[test]
fn a_dead_receive_lane_is_named_with_its_latched_alarm() {
    let (report, code) = check_json(&fixture("optics-dead-lane"), &["--only", "optics"]);
    assert_eq!(code, 1);
    assert_eq!(
        not_passing(&report),
        [
            ("optics.power".to_string(), "fail".to_string(), "ibp171s0 (mlx5_5) lane 2".to_string()),
            ("optics.alarms".to_string(), "fail".to_string(), "ibp171s0 (mlx5_5)".to_string()),
        ]
    );
    let text = serde_json::to_string(&report).expect("json");
    assert!(text.contains("no receive light"), "{text}");
    assert!(text.contains("rx power low alarm lane 2"), "{text}");
}

#[test]
fn a_node_without_modules_skips_each_check_once_with_the_reason() {
    // faulty-node's ports carry no module pages: nothing passes unseen.
    let (report, _) = check_json(&fixture("faulty-node"), &["--only", "optics"]);
    let found = optics(&report);
    assert_eq!(found.len(), 4, "{found:?}");
    for (id, verdict, subject) in &found {
        assert_eq!((verdict.as_str(), subject.as_str()), ("skip", "node"), "{id}");
    }
    let text = serde_json::to_string(&report).expect("json");
    assert!(text.contains("no transceiver module could be read"), "{text}");
}

#[test]
fn counters_print_and_export_the_module_readings() {
    let root = fixture("optics-dead-lane");
    let output = binary().args(["counters", "--root", root.to_str().unwrap()]).output().expect("run");
    let text = stdout(&output);
    assert!(text.contains("ibp171s0 optics: OSFP NVIDIA MMA4Z00-NS400 46.5 C 3.31 V"), "{text}");
    assert!(text.lines().any(|l| l.trim_start().starts_with("lane 2") && l.contains("RX    -inf dBm")), "{text}");
    let output =
        binary().args(["counters", "--root", root.to_str().unwrap(), "--format", "prometheus"]).output().expect("run");
    let page = stdout(&output);
    let lines: Vec<std::io::Result<String>> = page.lines().map(|l| Ok(l.to_string())).collect();
    prometheus_parse::Scrape::parse(lines.into_iter()).expect("valid Prometheus text");
    assert!(page.contains("fabricdoctor_optics_temperature_celsius{netdev=\"ibp59s0\"} 46.5"), "{page}");
    assert!(page.contains("fabricdoctor_optics_rx_power_dbm{lane=\"2\",netdev=\"ibp171s0\"} -Inf"), "{page}");
    assert!(page.contains("fabricdoctor_optics_tx_bias_milliamperes{lane=\"1\",netdev=\"ibp25s0\"} 7.2"), "{page}");
    let output = binary().args(["counters", "--root", root.to_str().unwrap(), "--json"]).output().expect("run");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(json["optics"].as_array().map(Vec::len), Some(8));
}

/// A private copy of hgx-h100 whose mlx5_0 module page `page` is rewritten by `damage`.
fn damaged(tag: &str, page: &str, damage: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("optics-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let status = Command::new("cp").arg("-a").arg(fixture("hgx-h100")).arg(&root).status().expect("cp");
    assert!(status.success());
    let path = root.join("ethtool/ibp25s0/module-eeprom").join(page);
    let mut bytes = std::fs::read(&path).expect("page");
    damage(&mut bytes);
    std::fs::write(&path, bytes).expect("write");
    root
}

/// What a test does to a page's bytes.
type Damage = Box<dyn FnOnce(&mut Vec<u8>)>;

/// The one error of a damaged tree and how many modules were still judged to pass.
fn error_of(root: &Path) -> (String, usize) {
    let (report, code) = check_json(root, &["--only", "optics.temperature"]);
    assert_eq!(code, 1, "an error verdict makes the exit code 1");
    let errors: Vec<(String, String, String, String)> =
        verdicts(&report).into_iter().filter(|(_, verdict, ..)| verdict == "error").collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].2, "ibp25s0 (mlx5_0)");
    let passed = verdicts(&report).iter().filter(|(_, verdict, ..)| verdict == "pass").count();
    (errors[0].3.clone(), passed)
}

#[test]
fn truncated_unknown_and_corrupt_pages_are_errors_naming_the_interface_and_page() {
    // (tag, page, damage, error, modules judged): a monitor page or the identifier page makes the
    // module unjudgeable; a bad identity checksum (a recoded optic) is reported while its
    // temperature, on the lower page, is still judged.
    let cases: [(&str, &str, Damage, &str, usize); 3] = [
        ("truncated", "page-11h", Box::new(|b: &mut Vec<u8>| b.truncate(77)), "page-11h: 77 bytes, not 128", 7),
        ("identifier", "lower", Box::new(|b: &mut Vec<u8>| b[0] = 0x42), "lower: unknown identifier 0x42", 7),
        ("checksum", "page-00h", Box::new(|b: &mut Vec<u8>| b[20] ^= 0x01), "page-00h: checksum of bytes 128-221", 8),
    ];
    for (tag, page, damage, says, judged) in cases {
        let root = damaged(tag, page, damage);
        let (message, passed) = error_of(&root);
        assert!(message.contains("ibp25s0") && message.contains(says), "{tag}: {message}");
        assert_eq!(passed, judged, "{tag}");
        let _ = std::fs::remove_dir_all(&root);
    }
}
