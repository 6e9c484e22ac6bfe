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
    }
    let expected_code = if s.fail + s.error > 0 { 1 } else { 0 };
    assert_eq!(output.status.code(), Some(expected_code));
}
