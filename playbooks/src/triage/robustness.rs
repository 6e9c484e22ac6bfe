//! Fuzz-style robustness tests: every parser, through `analyze` and the rule evaluation, over
//! truncated, spliced, mutated and random inputs must return (never panic). Deterministic (a fixed
//! xorshift seed) so a failure reproduces; the corpus is the triage fixtures and, when present beside
//! the clone, ../shared/realworld.

use std::path::{Path, PathBuf};

use super::{analyze, pickle, Input};
use crate::playbook::Playbook;

/// xorshift64*: enough randomness for mutation, reproducible from the seed.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn corpus() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    files_under(&root.join("../tests/fixtures/triage"), &mut paths);
    let realworld = root.join("../../shared/realworld");
    if realworld.is_dir() {
        files_under(&realworld, &mut paths);
    } else {
        assert!(
            std::env::var("FABRICDOCTOR_REQUIRE_REALWORLD").as_deref() != Ok("1"),
            "FABRICDOCTOR_REQUIRE_REALWORLD=1 but {} is missing",
            realworld.display()
        );
        // Written to the stderr handle, not through eprintln!, so the test harness shows it on a pass.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "SKIP: ../shared/realworld not present: the robustness corpus is the repository's fixtures only"
        );
    }
    paths.sort();
    let corpus: Vec<(String, Vec<u8>)> =
        paths.iter().filter_map(|p| Some((p.display().to_string(), std::fs::read(p).ok()?))).collect();
    assert!(corpus.len() >= 10, "robustness corpus missing: tests/fixtures/triage not found from {}", root.display());
    corpus
}

fn run(name: &str, bytes: Vec<u8>, playbooks: &[Playbook]) {
    let inputs = [Input::new(name, bytes)];
    let analysis = analyze(&inputs);
    let _ = super::report::render_text(&super::report::evaluate(analysis, playbooks));
}

#[test]
fn truncated_inputs_never_panic() {
    let playbooks = Playbook::embedded();
    for (name, bytes) in corpus() {
        let step = (bytes.len() / 97).max(1);
        for cut in (0..bytes.len()).step_by(step) {
            run(&name, bytes[..cut].to_vec(), &playbooks);
        }
    }
}

#[test]
fn spliced_and_mutated_lines_never_panic() {
    let playbooks = Playbook::embedded();
    let corpus = corpus();
    let lines: Vec<&[u8]> = corpus.iter().flat_map(|(_, b)| b.split(|c| *c == b'\n')).collect();
    let mut random = Random(0x9E37_79B9_7F4A_7C15);
    let replacements: [&[u8]; 10] = [
        b"99999999999999999999999",
        b"-1",
        b"",
        b"\xff\xfe",
        b" NCCL WARN ",
        b" -> ",
        b"[",
        b"=== ",
        b"Culprit rank ",
        b"nranks 4294967296",
    ];
    for _ in 0..3000 {
        let mut text = Vec::new();
        for _ in 0..random.below(40) + 1 {
            let mut line = lines[random.below(lines.len())].to_vec();
            for _ in 0..random.below(4) {
                let at = random.below(line.len() + 1);
                match random.below(3) {
                    0 => line.truncate(at),
                    1 => {
                        let insert = replacements[random.below(replacements.len())];
                        line.splice(at..at, insert.iter().copied());
                    }
                    _ => {
                        if at < line.len() {
                            line[at] = random.next() as u8;
                        }
                    }
                }
            }
            text.extend_from_slice(&line);
            text.push(b'\n');
        }
        run("spliced", text, &playbooks);
    }
}

#[test]
fn random_bytes_never_panic() {
    let playbooks = Playbook::embedded();
    let mut random = Random(0xD1B5_4A32_D192_ED03);
    for round in 0..2000 {
        let len = random.below(4096);
        let mut bytes: Vec<u8> = (0..len).map(|_| random.next() as u8).collect();
        if round % 2 == 0 && bytes.len() > 2 {
            // Half of them look like pickles, to drive the pickle reader past its first byte.
            bytes[0] = 0x80;
            bytes[1] = 4;
        }
        let _ = pickle::parse(&bytes);
        run("random", bytes, &playbooks);
    }
}

#[test]
fn mutated_flight_recorder_dumps_never_panic() {
    let dumps: Vec<(String, Vec<u8>)> = corpus().into_iter().filter(|(_, b)| pickle::looks_like_pickle(b)).collect();
    assert!(!dumps.is_empty(), "no flight recorder dump in the corpus");
    let mut random = Random(0xA076_1D64_78BD_642F);
    for (_, bytes) in &dumps {
        for cut in 0..bytes.len() {
            let _ = pickle::parse(&bytes[..cut]);
        }
        for _ in 0..2000 {
            let mut mutated = bytes.clone();
            for _ in 0..random.below(6) + 1 {
                let at = random.below(mutated.len());
                mutated[at] = random.next() as u8;
            }
            let _ = pickle::parse(&mutated);
        }
    }
}

#[test]
fn hostile_pickles_stay_within_limits() {
    // "Billion laughs": each step pairs the previous value with itself, doubling it; 64 steps would
    // be 2^64 nodes. The work budget refuses it before the copies are made.
    let mut bytes = vec![0x80, 4, b']', 0x94];
    for step in 0u8..64 {
        bytes.extend_from_slice(&[b'0', b'h', step, b'h', step, 0x86, 0x94]);
    }
    bytes.push(b'.');
    assert_eq!(pickle::parse(&bytes), Err(pickle::PickleError::Limit("work budget")));
    // The same structure, shallow, is read.
    let mut shallow = vec![0x80, 4, b']', 0x94];
    for step in 0u8..4 {
        shallow.extend_from_slice(&[b'0', b'h', step, b'h', step, 0x86, 0x94]);
    }
    shallow.push(b'.');
    assert!(pickle::parse(&shallow).is_ok(), "{:?}", pickle::parse(&shallow));
    // A length far beyond the input is a truncation, not an allocation.
    assert!(matches!(
        pickle::parse(b"\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\x7f"),
        Err(pickle::PickleError::Truncated(_))
    ));
}

/// Every fact the analyzers produce over the corpus is documented in `FACTS` (what `playbook list`
/// shows operators), so a rule can be written for it.
#[test]
fn every_produced_fact_is_documented() {
    let inputs: Vec<Input> = corpus().into_iter().map(|(name, bytes)| Input::new(name, bytes)).collect();
    let analysis = analyze(&inputs);
    for fact in &analysis.facts {
        assert!(
            crate::playbook::FACTS.iter().any(|(name, _, _)| *name == fact.name),
            "fact {} is not in playbook::FACTS",
            fact.name
        );
    }
    assert!(analysis.facts.len() > 20);
}
