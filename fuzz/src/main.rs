//! `fabricdoctor-fuzz`: mutation fuzzing, on stable Rust, of every decoder that reads what a
//! network peer or a file hands fabricdoctor (issue #19). cargo-fuzz needs a nightly toolchain this
//! project's machines cannot fetch, so this is the same loop without coverage feedback: seeds (valid
//! messages built here, and the regression corpus in `fuzz/corpus/<target>/`) mutated by bit flips,
//! boundary bytes and numbers, insertions, deletions, duplications, splices and truncations, each
//! input run under `catch_unwind`. A panic is a failure: the input is written to
//! `fuzz/crashes/<target>-<n>` and the run exits 1, so the input can join the corpus once fixed.
//!
//! Usage: `fabricdoctor-fuzz [--inputs N] [--seed S] [--target NAME]...` (default: every target,
//! 1,000,000 inputs each); `--target NAME --input-at N` writes input N of that run to stdout (to
//! reproduce a crash, a hang or a memory blow-up). `scripts/test-all.sh` runs it in CI.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::Instant;

mod targets;

/// xorshift64*: reproducible from the seed, which every report prints.
#[derive(Debug)]
pub struct Random(u64);

impl Random {
    pub fn new(seed: u64) -> Random {
        Random(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
}

/// Bytes a decoder treats specially: NUL, the sign bits, the all-ones byte, JSON's delimiters.
const BOUNDARY_BYTES: &[u8] = b"\x00\x01\x7f\x80\xff\"\\{}[]:,-.0e";
/// Numbers at the edges of the integer types a message field may hold, and floats that are no
/// number at all.
const BOUNDARY_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "255",
    "256",
    "65535",
    "65536",
    "2147483647",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "1e308",
    "-1e308",
    "1.5",
    "NaN",
];

/// One mutation of `input`, drawn with `random`; `seeds` gives splice partners.
pub fn mutate(input: &mut Vec<u8>, seeds: &[Vec<u8>], random: &mut Random) {
    let len = input.len();
    match random.below(9) {
        0 if len > 0 => {
            let at = random.below(len);
            input[at] ^= 1 << random.below(8);
        }
        1 if len > 0 => {
            let at = random.below(len);
            input[at] = BOUNDARY_BYTES[random.below(BOUNDARY_BYTES.len())];
        }
        2 => {
            let at = random.below(len + 1);
            let count = 1 + random.below(16);
            for _ in 0..count {
                input.insert(at, random.next_u64() as u8);
            }
        }
        3 if len > 0 => {
            let at = random.below(len);
            let end = (at + 1 + random.below(32)).min(len);
            input.drain(at..end);
        }
        4 if len > 0 => {
            let at = random.below(len);
            let end = (at + 1 + random.below(64)).min(len);
            let copy: Vec<u8> = input[at..end].to_vec();
            let to = random.below(input.len() + 1);
            input.splice(to..to, copy);
        }
        5 if !seeds.is_empty() => {
            let other = &seeds[random.below(seeds.len())];
            let cut = random.below(len + 1);
            let from = random.below(other.len() + 1);
            input.truncate(cut);
            input.extend_from_slice(&other[from..]);
        }
        6 => input.truncate(random.below(len + 1)),
        7 => {
            // A number in the text replaced by a boundary one (counts, sizes, ranks, lengths).
            let digits: Vec<usize> = (0..len).filter(|&i| input[i].is_ascii_digit()).collect();
            if let Some(&start) = digits.get(random.below(digits.len())) {
                let end = (start..len).find(|&i| !input[i].is_ascii_digit()).unwrap_or(len);
                let number = BOUNDARY_NUMBERS[random.below(BOUNDARY_NUMBERS.len())];
                input.splice(start..end, number.bytes());
            }
        }
        _ => {
            // A frame's 4-byte length prefix set to a boundary (where the input has one).
            if len >= 4 {
                let value = [0u32, 1, 3, 4, 4096, 1 << 20, u32::MAX][random.below(7)];
                input[..4].copy_from_slice(&value.to_be_bytes());
            }
        }
    }
}

/// A decoder under test: its name, its seeds, and the function that must return on any input.
#[derive(Debug)]
pub struct Target {
    pub name: &'static str,
    pub seeds: fn() -> Vec<Vec<u8>>,
    pub run: fn(&[u8]),
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// The target's built seeds and its regression corpus (`fuzz/corpus/<target>/*`).
fn seeds_of(target: &Target) -> Vec<Vec<u8>> {
    let mut seeds = (target.seeds)();
    if let Ok(entries) = std::fs::read_dir(corpus_dir().join(target.name)) {
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        seeds.extend(paths.iter().filter_map(|p| std::fs::read(p).ok()));
    }
    seeds.push(Vec::new());
    seeds
}

/// What a run of one target came to.
#[derive(Debug)]
pub struct Outcome {
    pub inputs: u64,
    pub seconds: f64,
    /// The first input that panicked, with the panic's message.
    pub crash: Option<(Vec<u8>, String)>,
}

/// The inputs of a run, in order: every seed as it is, then mutants (1 to 8 mutations of a seed).
/// The same target and seed give the same sequence, so `--input-at N` replays the Nth input.
struct Inputs {
    seeds: Vec<Vec<u8>>,
    random: Random,
    n: u64,
}

impl Inputs {
    fn new(target: &Target, seed: u64) -> Inputs {
        let name = target.name.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
        Inputs { seeds: seeds_of(target), random: Random::new(seed ^ name), n: 0 }
    }

    fn next_into(&mut self, input: &mut Vec<u8>) {
        input.clear();
        let n = self.n as usize;
        self.n += 1;
        input.extend_from_slice(&self.seeds[n % self.seeds.len()]);
        if n >= self.seeds.len() {
            for _ in 0..1 + self.random.below(8) {
                mutate(input, &self.seeds, &mut self.random);
            }
        }
    }
}

/// The input number `index` (from 1) of a run, as [`fuzz`] would make it.
pub fn input_at(target: &Target, seed: u64, index: u64) -> Vec<u8> {
    let mut inputs = Inputs::new(target, seed);
    let mut input = Vec::new();
    for _ in 0..index.max(1) {
        inputs.next_into(&mut input);
    }
    input
}

/// Run `target` on `inputs` inputs.
pub fn fuzz(target: &Target, inputs: u64, seed: u64) -> Outcome {
    let mut generator = Inputs::new(target, seed);
    let started = Instant::now();
    let mut input = Vec::new();
    for n in 0..inputs {
        generator.next_into(&mut input);
        if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(|| (target.run)(&input))) {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic without a message".into());
            return Outcome { inputs: n + 1, seconds: started.elapsed().as_secs_f64(), crash: Some((input, message)) };
        }
    }
    Outcome { inputs, seconds: started.elapsed().as_secs_f64(), crash: None }
}

fn main() {
    let mut inputs: u64 = 1_000_000;
    let mut seed: u64 = 0x5eed;
    let mut chosen: Vec<String> = Vec::new();
    let mut input_index: Option<u64> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next().unwrap_or_else(|| {
                eprintln!("fabricdoctor-fuzz: {name} needs a value");
                std::process::exit(2)
            })
        };
        match arg.as_str() {
            "--inputs" => inputs = parse_number(&value("--inputs"), "--inputs"),
            "--seed" => seed = parse_number(&value("--seed"), "--seed"),
            "--target" => chosen.push(value("--target")),
            "--input-at" => input_index = Some(parse_number(&value("--input-at"), "--input-at")),
            "--list" => {
                for target in targets::all() {
                    println!("{}", target.name);
                }
                return;
            }
            other => {
                eprintln!(
                    "fabricdoctor-fuzz: unknown argument {other:?} (--inputs N, --seed S, --target NAME, --list)"
                );
                std::process::exit(2);
            }
        }
    }
    let all = targets::all();
    if let Some(unknown) = chosen.iter().find(|c| !all.iter().any(|t| t.name == c.as_str())) {
        eprintln!("fabricdoctor-fuzz: no target {unknown:?} (--list names them)");
        std::process::exit(2);
    }
    if let Some(index) = input_index {
        // Replay: write input number `index` of the one chosen target to standard output.
        let [name] = chosen.as_slice() else {
            eprintln!("fabricdoctor-fuzz: --input-at needs exactly one --target");
            std::process::exit(2);
        };
        let target = all.iter().find(|t| t.name == name.as_str()).unwrap_or_else(|| unreachable!("checked above"));
        use std::io::Write as _;
        let _ = std::io::stdout().write_all(&input_at(target, seed, index));
        return;
    }
    // Panics are caught and reported once, with the input; the default hook would print each.
    std::panic::set_hook(Box::new(|_| {}));
    let mut failed = false;
    for target in all.iter().filter(|t| chosen.is_empty() || chosen.iter().any(|c| c == t.name)) {
        let outcome = fuzz(target, inputs, seed);
        let rate = outcome.inputs as f64 / outcome.seconds.max(1e-9);
        match &outcome.crash {
            None => println!(
                "{:<20} {:>9} inputs in {:>6.1} s ({:>8.0}/s), seed {seed:#x}: no panic",
                target.name, outcome.inputs, outcome.seconds, rate
            ),
            Some((input, message)) => {
                failed = true;
                let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("crashes");
                let path = dir.join(format!("{}-{}", target.name, outcome.inputs));
                let saved = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&path, input));
                println!(
                    "{:<20} PANIC after {} inputs, seed {seed:#x}: {message}; input ({} bytes) {}",
                    target.name,
                    outcome.inputs,
                    input.len(),
                    match saved {
                        Ok(()) => format!("saved to {}", path.display()),
                        Err(error) => format!("not saved: {error}"),
                    }
                );
            }
        }
    }
    if failed {
        std::process::exit(1);
    }
}

fn parse_number(text: &str, name: &str) -> u64 {
    let text = text.replace('_', "");
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.unwrap_or_else(|_| {
        eprintln!("fabricdoctor-fuzz: {name} {text:?} is not a number");
        std::process::exit(2)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every target survives its seeds and a few thousand mutants in the test profile (the CI run
    /// in scripts/test-all.sh takes each to 1,000,000 in the fuzz profile); the regression corpus
    /// is part of the seeds.
    #[test]
    fn every_target_survives_a_short_run() {
        for target in targets::all() {
            let outcome = fuzz(&target, 3_000, 7);
            assert!(outcome.crash.is_none(), "{}: {:?}", target.name, outcome.crash);
            assert_eq!(outcome.inputs, 3_000);
        }
    }

    /// The fuzzer finds a panic a decoder would have: it is not a loop that cannot fail.
    #[test]
    fn a_panicking_decoder_is_caught_with_its_input() {
        fn fragile(bytes: &[u8]) {
            if bytes.len() > 3 && bytes[0] != b'{' {
                panic!("fragile decoder");
            }
        }
        let target = Target { name: "fragile", seeds: || vec![b"{\"a\":1}".to_vec()], run: fragile };
        std::panic::set_hook(Box::new(|_| {}));
        let outcome = fuzz(&target, 10_000, 1);
        let _ = std::panic::take_hook();
        let (input, message) = outcome.crash.expect("a crash is found");
        assert!(message.contains("fragile decoder"));
        assert!(input.len() > 3 && input[0] != b'{');
    }

    #[test]
    fn mutations_stay_within_their_input() {
        let mut random = Random::new(3);
        let seeds = vec![b"{\"rank\":3,\"world\":4}".to_vec(), vec![0, 0, 0, 4, b'{', b'}']];
        for _ in 0..100_000 {
            let mut input = seeds[random.below(2)].clone();
            for _ in 0..8 {
                mutate(&mut input, &seeds, &mut random);
            }
            assert!(input.len() < 4096);
        }
    }
}
