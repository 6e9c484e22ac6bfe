//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fabricdoctor"));
    command.env_remove("NO_COLOR");
    command
}

pub fn run(args: &[&str]) -> Output {
    binary().args(args).output().expect("fabricdoctor runs")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture(name: &str) -> PathBuf {
    repository().join("tests/fixtures").join(name)
}

/// `eprintln!` that the test harness does not capture: a SKIP line must show even when the test
/// passes (cargo test hides what passing tests print through the print macros, not what they write
/// to the stderr handle).
macro_rules! loud_eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
pub(crate) use loud_eprintln;

/// The shared real-world outputs beside the repository (../shared/realworld): `None`, with a loud
/// SKIP line, in a lone clone that has no such folder; a failure instead when
/// FABRICDOCTOR_REQUIRE_REALWORLD=1 (CI sets it), so the answer keys cannot be skipped there.
#[track_caller]
pub fn realworld(name: &str) -> Option<PathBuf> {
    let dir = repository().join("../shared/realworld");
    if !dir.is_dir() {
        let caller = std::panic::Location::caller();
        assert!(
            std::env::var("FABRICDOCTOR_REQUIRE_REALWORLD").as_deref() != Ok("1"),
            "FABRICDOCTOR_REQUIRE_REALWORLD=1 but {} is missing (needed by {caller})",
            dir.display()
        );
        loud_eprintln!(
            "SKIP: ../shared/realworld not present ({caller}; set FABRICDOCTOR_REQUIRE_REALWORLD=1 to fail instead)"
        );
        return None;
    }
    let path = dir.join(name);
    assert!(name.is_empty() || path.exists(), "{} is missing from ../shared/realworld", path.display());
    Some(path)
}

pub fn write(root: &Path, relative: &str, content: impl AsRef<[u8]>) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, content).expect("write");
}

/// The check report of a tree as JSON.
pub fn check_json(root: &Path, extra: &[&str]) -> (serde_json::Value, i32) {
    let mut args = vec!["check", "--json", "--root", root.to_str().expect("utf-8 path")];
    args.extend_from_slice(extra);
    let output = run(&args);
    let code = output.status.code().expect("exit code");
    let value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("invalid JSON ({e}); stderr: {}", stderr(&output)));
    (value, code)
}

/// Findings as (id, verdict, subject) triples, for answer-key assertions.
pub fn verdicts(report: &serde_json::Value) -> Vec<(String, String, String, String)> {
    report["findings"]
        .as_array()
        .expect("findings array")
        .iter()
        .map(|f| {
            let text = |k: &str| f[k].as_str().unwrap_or_default().to_string();
            (text("id"), text("verdict"), text("subject"), text("message"))
        })
        .collect()
}

/// Assert a finding with this id and verdict exists whose subject contains `subject`.
#[track_caller]
pub fn assert_verdict(report: &serde_json::Value, id: &str, verdict: &str, subject: &str) {
    let all = verdicts(report);
    assert!(
        all.iter().any(|(i, v, s, _)| i == id && v == verdict && s.contains(subject)),
        "expected {id} {verdict} on {subject}; findings of {id}: {:#?}",
        all.iter().filter(|(i, ..)| i == id).collect::<Vec<_>>()
    );
}

/// Assert no finding of `id` has a verdict in `verdicts` (e.g. a healthy node has no fail).
#[track_caller]
pub fn assert_none(report: &serde_json::Value, id_prefix: &str, bad: &[&str]) {
    let all = verdicts(report);
    let offending: Vec<_> =
        all.iter().filter(|(i, v, ..)| i.starts_with(id_prefix) && bad.contains(&v.as_str())).collect();
    assert!(offending.is_empty(), "unexpected {bad:?} for {id_prefix}: {offending:#?}");
}

/// Findings without the fields that legitimately differ between the live node and a capture: the
/// /dev/shm size's provenance (statvfs live, the mount option in a capture) is evidence only.
pub fn comparable(report: &serde_json::Value) -> Vec<serde_json::Value> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            let mut f = f.clone();
            if f["id"] == "host.devshm" {
                f.as_object_mut().expect("object").remove("evidence");
            }
            f
        })
        .collect()
}

/// Held by each test that boots QEMU guests, so guests of different tests never share the CPUs at
/// once: under TCG a guest runs several times slower beside others, and the guests' own time limits
/// (perf runs, rendezvous) are sized for a machine the guests have to themselves.
pub fn one_guest_run_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static GUESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    // A test that panicked while holding it leaves it poisoned; the lock itself is still good.
    GUESTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A free TCP port on loopback, for a server a test starts a moment later (the test owns the
/// machine's loopback only for its run).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}
