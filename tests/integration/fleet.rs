//! fabricdoctor in the fleet's own machinery (issue #20): what every finding asks for (action and
//! owner), in every format; node-problem-detector's custom plugin contract; the deploy/ files.

use crate::support::{binary, fixture, repository, stdout};

/// The faulty fixture node: every non-passing finding names an action other than none and an
/// owner, in JSON, Markdown, JUnit and text alike.
#[test]
fn every_finding_says_what_to_do_and_whose_it_is_in_every_format() {
    let root = fixture("faulty-node");
    let output = binary().args(["check", "--no-sample", "--json", "--root"]).arg(&root).output().expect("runs");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    let findings = report["findings"].as_array().expect("findings");
    let down = findings.iter().find(|f| f["id"] == "rdma.port.state" && f["verdict"] == "fail").expect("port down");
    assert_eq!((down["action"].as_str(), down["owner"].as_str()), (Some("replace-cable-or-optic"), Some("fabric")));
    let memlock = findings.iter().find(|f| f["id"] == "host.memlock").expect("memlock");
    assert_eq!((memlock["action"].as_str(), memlock["owner"].as_str()), (Some("fix-config"), Some("node")));
    for finding in findings {
        let quiet = matches!(finding["verdict"].as_str(), Some("pass" | "skip"));
        assert_eq!(finding["action"] == "none", quiet, "{finding}");
    }
    let render = |format: &str| {
        let output =
            binary().args(["check", "--no-sample", "--format", format, "--root"]).arg(&root).output().expect("runs");
        stdout(&output)
    };
    let markdown = render("markdown");
    assert!(markdown.contains("| verdict | check | subject | message | action | owner | evidence |"), "{markdown}");
    assert!(markdown.contains("| replace-cable-or-optic | fabric |"), "{markdown}");
    let junit = render("junit");
    assert!(junit.contains("action: replace-cable-or-optic, owner: fabric"), "{junit}");
    let text = render("text");
    assert!(text.contains("action: fix-config (owner: node)"), "{text}");
}

/// node-problem-detector's custom plugin contract (kubernetes/node-problem-detector
/// pkg/custompluginmonitor): exit 0 OK, 1 a problem, 2 unknown, and one line of output.
#[test]
fn npd_format_follows_the_custom_plugin_contract() {
    let npd = |root: &str, only: &[&str]| {
        let mut command = binary();
        command.args(["check", "--no-sample", "--format", "npd", "--root"]).arg(fixture(root));
        for id in only {
            command.args(["--only", id]);
        }
        let output = command.output().expect("runs");
        (output.status.code(), stdout(&output))
    };
    let (code, line) = npd("hgx-h100", &["rdma.port.state"]);
    assert_eq!(code, Some(0), "{line}");
    assert!(line.starts_with("ok: "), "{line}");
    let (code, line) = npd("faulty-node", &["rdma.port.state"]);
    assert_eq!(code, Some(1), "{line}");
    assert!(line.starts_with("replace-cable-or-optic: rdma.port.state mlx5_2 port 1"), "{line}");
    // Counter checks on a capture without samples could not look: unknown, never OK.
    let (code, line) = npd("faulty-node", &["pfc.storm"]);
    assert_eq!(code, Some(2), "{line}");
    assert!(line.starts_with("unknown: "), "{line}");
    for (_, line) in [npd("faulty-node", &[]), npd("hgx-h100", &["pcie"])] {
        assert_eq!(line.lines().count(), 1, "one line: {line}");
    }
}

/// deploy/node-problem-detector: the custom plugin monitor parses, every condition has a rule, and
/// every rule runs `check --format npd` with --only ids that select a registered check.
#[test]
fn the_npd_monitor_config_runs_checks_that_exist() {
    let path = repository().join("deploy/node-problem-detector/fabricdoctor-monitor.json");
    let text = std::fs::read_to_string(&path).expect("monitor config");
    let config: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(config["plugin"], "custom");
    for key in ["invoke_interval", "timeout", "max_output_length", "concurrency"] {
        assert!(!config["pluginConfig"][key].is_null(), "pluginConfig.{key}");
    }
    let listed = stdout(&binary().args(["check", "--list"]).output().expect("runs"));
    let registered: Vec<&str> = listed.lines().filter(|l| !l.starts_with(' ') && !l.is_empty()).collect();
    let conditions = config["conditions"].as_array().expect("conditions");
    let rules = config["rules"].as_array().expect("rules");
    assert!(conditions.len() >= 3);
    for condition in conditions {
        let kind = condition["type"].as_str().expect("type");
        assert!(condition["reason"].is_string() && condition["message"].is_string(), "{condition}");
        let rule = rules.iter().find(|r| r["condition"] == kind).unwrap_or_else(|| panic!("no rule for {kind}"));
        assert_eq!(rule["type"], "permanent");
        let args: Vec<&str> = rule["args"].as_array().expect("args").iter().filter_map(|a| a.as_str()).collect();
        assert_eq!(&args[..3], ["check", "--format", "npd"], "{rule}");
        let only: Vec<&str> = args.windows(2).filter(|w| w[0] == "--only").map(|w| w[1]).collect();
        assert!(!only.is_empty(), "{rule}");
        for id in only {
            assert!(registered.iter().any(|r| r.starts_with(id)), "{kind}: --only {id} selects no check");
        }
    }
    for wanted in ["RDMAPortDown", "PCIeLinkDegraded", "GPUDirectBlockedByACS"] {
        assert!(conditions.iter().any(|c| c["type"] == wanted), "{wanted}");
    }
}

/// Every burn-in finding id written in the coordinator's source has its own action (checks'
/// `advice::TABLE`), so a new id cannot ship asking only for a generic recheck.
#[test]
fn every_burnin_finding_id_has_an_action() {
    let table = std::fs::read_to_string(repository().join("checks/src/advice.rs")).expect("advice table");
    let mut missing = Vec::new();
    let mut seen = 0;
    for entry in walk(&repository().join("burnin/src")) {
        let text = std::fs::read_to_string(&entry).unwrap_or_default();
        for piece in text.split("\"burnin.").skip(1) {
            let Some(end) = piece.find('"') else { continue };
            let id = format!("burnin.{}", &piece[..end]);
            if id.ends_with('.') || !id.chars().all(|c| c.is_ascii_lowercase() || c == '.' || c == '_') {
                continue;
            }
            seen += 1;
            if !table.contains(&format!("(\"{id}\",")) {
                missing.push(format!("{id} ({})", entry.display()));
            }
        }
    }
    assert!(seen > 20, "found only {seen} burn-in ids");
    assert!(missing.is_empty(), "burn-in ids without an action: {missing:?}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}
