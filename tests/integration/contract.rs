//! The JSON report is an interface: CI gates parse it. These structs mirror the documented schema with
//! `deny_unknown_fields`, so any renamed, removed or unexpected key fails here first.

use serde::Deserialize;

use crate::support::run;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "fields exist to pin the schema")]
struct Report {
    schema_version: u32,
    tool_version: String,
    generated_at: String,
    command: String,
    hosts: Vec<Host>,
    findings: Vec<Finding>,
    summary: Summary,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "fields exist to pin the schema")]
struct Host {
    hostname: String,
    kernel_release: Option<String>,
    source: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "fields exist to pin the schema")]
struct Finding {
    id: String,
    verdict: String,
    subject: String,
    message: String,
    action: String,
    owner: String,
    #[serde(default)]
    evidence: Vec<String>,
    expected: Option<String>,
    observed: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Summary {
    pass: usize,
    warn: usize,
    fail: usize,
    skip: usize,
    error: usize,
}

/// Issue #20's vocabulary of actions, as the JSON spells them.
const ACTIONS: &[&str] = &[
    "none",
    "recheck",
    "reset-gpu",
    "reboot",
    "reseat",
    "replace-cable-or-optic",
    "replace-nic",
    "fix-config",
    "escalate-fabric",
    "check-application",
];

#[test]
fn live_check_json_matches_the_schema() {
    let output = run(&["check", "--json"]);
    let report: Report = serde_json::from_slice(&output.stdout).expect("schema-conformant JSON");
    assert_eq!(report.schema_version, 1);
    assert_eq!(report.command, "check");
    let s = &report.summary;
    assert_eq!(s.pass + s.warn + s.fail + s.skip + s.error, report.findings.len());
    for finding in &report.findings {
        assert!(["pass", "warn", "fail", "skip", "error"].contains(&finding.verdict.as_str()));
        assert!(ACTIONS.contains(&finding.action.as_str()), "{finding:?}");
        assert!(["node", "fabric", "user"].contains(&finding.owner.as_str()), "{finding:?}");
        // What passed or could not be looked at asks for nothing but, for an error, a recheck.
        match finding.verdict.as_str() {
            "pass" | "skip" => assert_eq!(finding.action, "none", "{finding:?}"),
            "error" => assert_eq!(finding.action, "recheck", "{finding:?}"),
            _ => assert_ne!(finding.action, "none", "{finding:?}"),
        }
    }
    let expected_code = if s.fail + s.error > 0 { 1 } else { 0 };
    assert_eq!(output.status.code(), Some(expected_code));
}

/// The layering of STYLE.md: `report` renders data and must build without the verbs stack, so its
/// dependency closure holds neither `fabricdoctor-perf` nor `sideway` (issue #22: rendering a page
/// used to build sideway, cmake and libclang). Read from `cargo tree` (normal dependencies, this
/// host's platform, offline: everything is already fetched for the build).
#[test]
fn the_report_crate_stands_on_data_alone() {
    let output = std::process::Command::new(env!("CARGO"))
        .args(["tree", "-p", "fabricdoctor-report", "-e", "normal", "--prefix", "none", "--offline", "--manifest-path"])
        .arg(crate::support::repository().join("Cargo.toml"))
        .output()
        .expect("cargo tree runs");
    assert!(output.status.success(), "cargo tree: {}", String::from_utf8_lossy(&output.stderr));
    let names: std::collections::BTreeSet<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(names.contains("fabricdoctor-report") && names.contains("fabricdoctor-perf-schema"), "{names:?}");
    for forbidden in ["fabricdoctor-perf", "sideway", "rdma-mummy-sys"] {
        assert!(!names.contains(forbidden), "report depends on {forbidden}: {names:?}");
    }
}

/// ARCHITECTURE.md's table of what each workspace crate may depend on, read from `cargo metadata`
/// (the manifests' declared dependencies, normal and build): a crate that starts importing one
/// above it fails here, and so does one that starts using the verbs bindings outside perf.
#[test]
fn workspace_crates_depend_only_downwards() {
    let allowed: &[(&str, &[&str])] = &[
        ("fabricdoctor-probes", &[]),
        ("fabricdoctor-perf-schema", &[]),
        ("fabricdoctor-checks", &["fabricdoctor-probes"]),
        ("fabricdoctor-perf", &["fabricdoctor-probes", "fabricdoctor-perf-schema"]),
        ("fabricdoctor-report", &["fabricdoctor-probes", "fabricdoctor-checks", "fabricdoctor-perf-schema"]),
        ("fabricdoctor-playbooks", &["fabricdoctor-probes", "fabricdoctor-checks"]),
        (
            "fabricdoctor-burnin",
            &["fabricdoctor-probes", "fabricdoctor-checks", "fabricdoctor-report", "fabricdoctor-perf"],
        ),
        (
            "fabricdoctor-fuzz",
            &["fabricdoctor-probes", "fabricdoctor-perf", "fabricdoctor-burnin", "fabricdoctor-playbooks"],
        ),
    ];
    let output = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline", "--manifest-path"])
        .arg(crate::support::repository().join("Cargo.toml"))
        .output()
        .expect("cargo metadata runs");
    assert!(output.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&output.stderr));
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON");
    let packages = metadata["packages"].as_array().expect("packages");
    let names: Vec<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    for (name, _) in allowed {
        assert!(names.contains(name), "{name} is not a workspace member any more: update ARCHITECTURE.md ({names:?})");
    }
    let mut violations = Vec::new();
    for package in packages {
        let name = package["name"].as_str().unwrap_or_default();
        let dependencies: Vec<&str> = package["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["kind"].is_null() || d["kind"] == "build")
            .filter_map(|d| d["name"].as_str())
            .collect();
        for dependency in &dependencies {
            let verbs_binding = matches!(*dependency, "sideway" | "rdma-mummy-sys");
            if verbs_binding && name != "fabricdoctor-perf" {
                violations.push(format!("{name} -> {dependency} (only perf binds libibverbs)"));
            }
            if !dependency.starts_with("fabricdoctor") || name == "fabricdoctor" {
                continue;
            }
            match allowed.iter().find(|(crate_name, _)| *crate_name == name) {
                Some((_, may)) if may.contains(dependency) => {}
                Some(_) => violations.push(format!("{name} -> {dependency}")),
                None => violations.push(format!("{name} is not in ARCHITECTURE.md's table but uses {dependency}")),
            }
        }
    }
    assert!(violations.is_empty(), "dependencies ARCHITECTURE.md forbids: {violations:#?}");
}
