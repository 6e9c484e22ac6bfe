//! Verification throughput against memcpy, same process, same buffers: the physical limit of
//! checking a message is touching its bytes once, and a copy touches them twice (read and write),
//! so the goal is a verifier at least 0.8x as fast as memcpy per core. The per-byte pattern check
//! `--validate` used before is measured beside them.
//!
//! Run: `cargo bench -p fabricdoctor-perf --bench integrity` (bench/validate.sh runs it).

use std::hint::black_box;
use std::time::{Duration, Instant};

use fabricdoctor_perf::integrity::{Sender, Stream, Verifier};

/// Runs `work` on `bytes`-sized buffers until `budget` has passed; GB/s (10^9 bytes per second).
fn throughput(bytes: usize, budget: Duration, mut work: impl FnMut()) -> f64 {
    // Warm-up: page faults and caches.
    for _ in 0..3 {
        work();
    }
    let started = Instant::now();
    let mut rounds = 0u64;
    while started.elapsed() < budget {
        work();
        rounds += 1;
    }
    (rounds as f64 * bytes as f64) / started.elapsed().as_secs_f64() / 1e9
}

fn old_pattern_check(bytes: &[u8]) -> u64 {
    bytes.iter().enumerate().filter(|(i, b)| **b != (i.wrapping_mul(31).wrapping_add(7) % 251) as u8).count() as u64
}

fn main() {
    let budget = Duration::from_millis(std::env::var("FD_BENCH_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(1500));
    println!("{:>10} {:>12} {:>12} {:>12} {:>8}", "bytes", "memcpy GB/s", "verify GB/s", "old GB/s", "ratio");
    for size in [64 << 10, 1 << 20, 16 << 20] {
        let stream = Stream::new(0x5eed, 0, size);
        let mut sender = Sender::new(stream);
        let mut verifier = Verifier::new(stream);
        let source = Sender::new(stream).next_message().to_vec();
        let mut destination = vec![0u8; size];
        let memcpy = throughput(size, budget, || {
            destination.copy_from_slice(black_box(&source));
            black_box(&destination);
        });
        let verify = throughput(size, budget, || {
            let message = sender.next_message();
            black_box(verifier.check(black_box(message)));
        });
        assert_eq!(verifier.verified.errors(), 0, "the benchmark's own stream must verify");
        let old = throughput(size, budget / 3, || {
            black_box(old_pattern_check(black_box(&source)));
        });
        println!("{size:>10} {memcpy:>12.2} {verify:>12.2} {old:>12.2} {:>8.2}", verify / memcpy);
    }
}
