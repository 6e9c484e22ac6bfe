//! A size sweep of one collective as nccl-tests runs it: for each size, warm-up iterations, timed
//! iterations out-of-place then in-place, and data-check passes; rank 0 gathers every rank's time and
//! wrong-element count, reports the slowest rank (the straggler) and the nccl-tests bandwidths.

use std::sync::Arc;
use std::time::Instant;

pub use fabricdoctor_perf_schema::collective::{AlgorithmTrial, Measurement, SizeRow, SweepSpec, TimeAverage};

use super::{check_buffer, prepare_buffer, Algorithm, AlgorithmChoice, Collective, Communicator, CostModel, Mesh};
use crate::gpu::Gpu;
use crate::PerfError;

/// What a sweep found: rank 0's rows (empty on the others) and the cost model every rank used.
#[derive(Debug, Clone)]
pub struct Sweep {
    pub rows: Vec<SizeRow>,
    pub model: Option<CostModel>,
}

/// Run the sweep on this rank. Rank 0 returns the rows; the others return an empty list.
pub fn run_sweep(communicator: &mut Communicator, spec: &SweepSpec) -> Result<Sweep, PerfError> {
    run_sweep_with(communicator, spec, None)
}

/// The algorithm `spec` runs at `bytes`: the forced one, or the model's choice (ring without a
/// model: a single rank). Only AllReduce has a choice.
pub fn algorithm_for(spec: &SweepSpec, model: Option<&CostModel>, ranks: usize, bytes: u64) -> Algorithm {
    match spec.collective {
        Collective::AlltoAll => Algorithm::Pairwise,
        Collective::AllReduce => match (spec.algorithm, model) {
            (AlgorithmChoice::Ring, _) | (AlgorithmChoice::Auto, None) => Algorithm::Ring,
            (AlgorithmChoice::Tree, _) => Algorithm::Tree,
            (AlgorithmChoice::Auto, Some(model)) => model.choose(ranks, bytes),
        },
        _ => Algorithm::Ring,
    }
}

/// [`run_sweep`] with this rank's send and receive buffers in `gpu`'s memory (`--gpu N`).
pub fn run_sweep_with(
    communicator: &mut Communicator,
    spec: &SweepSpec,
    gpu: Option<&Arc<Gpu>>,
) -> Result<Sweep, PerfError> {
    let mut rows = Vec::new();
    let element = spec.data_type.size() as u64;
    let world = communicator.world;
    // The tree is measured where it may run, which is where its links were opened.
    let tree = Mesh::for_collective(spec.collective, spec.algorithm) == Mesh::Doubling;
    let model = communicator.calibrate(tree)?;
    if gpu.is_none() {
        // The working buffers are allocated (and over verbs registered) once, for the largest size.
        let largest = spec.sizes.iter().map(|&size| (size / element * element) as usize).max().unwrap_or(0);
        communicator.reserve_working(largest)?;
    }
    for &size in &spec.sizes {
        let count = (size / element) as usize;
        let bytes = count * element as usize;
        let near_crossover = spec.collective == Collective::AllReduce
            && spec.algorithm == AlgorithmChoice::Auto
            && tree
            && gpu.is_none()
            && model.is_some_and(|m| m.near_crossover(world, bytes as u64, TRIAL_FACTOR));
        let (algorithm, trial) = if near_crossover {
            let (algorithm, trial) = trial_both(communicator, spec, bytes)?;
            (algorithm, Some(trial))
        } else {
            (algorithm_for(spec, model.as_ref(), world, bytes as u64), None)
        };
        let mut measurements = Vec::with_capacity(2);
        for in_place in [false, true] {
            let (time_us, wrong) = match gpu {
                Some(gpu) => measure_on_gpu(communicator, spec, algorithm, bytes, in_place, gpu)?,
                None => measure(communicator, spec, algorithm, bytes, in_place)?,
            };
            let gathered = communicator.gather_results(time_us, wrong)?;
            if let Some(all) = gathered {
                let slowest_rank =
                    all.iter().enumerate().max_by(|a, b| a.1 .0.total_cmp(&b.1 .0)).map(|(rank, _)| rank).unwrap_or(0);
                let times: Vec<f64> = all.iter().map(|(t, _)| *t).collect();
                let time = spec.average.combine(&times);
                let algbw = if time > 0.0 { bytes as f64 / (time * 1e-6) / 1e9 } else { 0.0 };
                measurements.push(Measurement {
                    time_us: time,
                    algbw_gbytes_per_second: algbw,
                    busbw_gbytes_per_second: algbw * spec.collective.bus_factor(communicator.world),
                    wrong: all.iter().map(|(_, w)| w).sum(),
                    rank_time_us: all.iter().map(|(t, _)| *t).collect(),
                    slowest_rank,
                });
            }
        }
        // Only rank 0 gathers; the others have nothing to report.
        if let Ok([out_of_place, in_place]) = <[Measurement; 2]>::try_from(measurements) {
            let predicted_time_us = model.map(|m| m.predict_us(spec.collective, algorithm, world, bytes as u64));
            let predicted_busbw_gbytes_per_second = predicted_time_us
                .filter(|&t| t > 0.0)
                .map(|t| bytes as f64 / (t * 1e-6) / 1e9 * spec.collective.bus_factor(world));
            rows.push(SizeRow {
                bytes: bytes as u64,
                count: count as u64,
                data_type: spec.data_type,
                op: spec.collective.reduces().then_some(spec.op),
                root: if spec.collective == Collective::Broadcast { spec.root as i64 } else { -1 },
                algorithm,
                predicted_time_us,
                predicted_busbw_gbytes_per_second,
                out_of_place,
                in_place,
                trial,
            });
        }
    }
    // Nobody leaves while another rank may still exchange data with it: over verbs a closed connection
    // during a collective means the peer died.
    communicator.barrier()?;
    Ok(Sweep { rows, model })
}

/// Sizes within this factor of the model's crossover are decided by timing both algorithms.
const TRIAL_FACTOR: u64 = 4;
/// A trial: warm-up calls of each algorithm, then rounds of back-to-back calls of each in turn, as
/// many per round as the sweep times (at least `TRIAL_CALLS`): a handful of calls can ride a burst
/// that the sustained loop never gets (a token bucket's, a switch buffer's), and the rig measured
/// tree at 90 µs in 4 calls where 50 took 270 µs each. Each rank keeps its fastest round of each.
const TRIAL_WARMUP: usize = 2;
const TRIAL_ROUNDS: usize = 3;
const TRIAL_CALLS: usize = 4;

/// Time ring and tree AllReduce of `bytes` out of place on the live communicator and agree on the
/// faster (by the slowest rank), as the sweep does where the model is unsure of its choice.
fn trial_both(
    communicator: &mut Communicator,
    spec: &SweepSpec,
    bytes: usize,
) -> Result<(Algorithm, AlgorithmTrial), PerfError> {
    let (rank, world) = (communicator.rank, communicator.world);
    let (input, output) = communicator.working_buffers(bytes)?;
    prepare_buffer(Collective::AllReduce, input, spec.data_type, rank, world, spec.root);
    output.copy_from_slice(input);
    let algorithms = [Algorithm::Ring, Algorithm::Tree];
    let call = |communicator: &mut Communicator, algorithm| {
        communicator.run_working(Collective::AllReduce, algorithm, bytes, false, spec.data_type, spec.op, spec.root)
    };
    for algorithm in algorithms {
        for _ in 0..TRIAL_WARMUP {
            call(communicator, algorithm)?;
        }
    }
    communicator.barrier()?;
    let calls = (spec.iterations as usize).max(TRIAL_CALLS);
    let mut fastest = [f64::INFINITY; 2];
    for _ in 0..TRIAL_ROUNDS {
        for (index, algorithm) in algorithms.into_iter().enumerate() {
            let started = Instant::now();
            for _ in 0..calls {
                call(communicator, algorithm)?;
            }
            fastest[index] = fastest[index].min(started.elapsed().as_secs_f64() * 1e6 / calls as f64);
        }
    }
    let (tree, ring_time_us, tree_time_us) = communicator.agree_on_tree(fastest[0], fastest[1])?;
    let algorithm = if tree { Algorithm::Tree } else { Algorithm::Ring };
    Ok((algorithm, AlgorithmTrial { ring_time_us, tree_time_us }))
}

/// Average time of one collective on this rank (warm-up excluded) and its wrong elements over the
/// data-check passes, which run the same way (in or out of place) as the timed calls.
///
/// The buffers are the communicator's working memory (registered with the adapter over verbs). Out
/// of place, the result goes to a separate buffer (nccl-tests' recvbuff): AllReduce's ring and
/// AlltoAll read the input where it is; the other collectives copy it to the output inside the
/// call, so the copy is part of the measured time as in a real out-of-place call.
fn measure(
    communicator: &mut Communicator,
    spec: &SweepSpec,
    algorithm: Algorithm,
    bytes: usize,
    in_place: bool,
) -> Result<(f64, u64), PerfError> {
    let (rank, world) = (communicator.rank, communicator.world);
    let prepare = |communicator: &mut Communicator| -> Result<(), PerfError> {
        let (input, output) = communicator.working_buffers(bytes)?;
        prepare_buffer(spec.collective, input, spec.data_type, rank, world, spec.root);
        output.copy_from_slice(input);
        Ok(())
    };
    let once = |communicator: &mut Communicator| {
        communicator.run_working(spec.collective, algorithm, bytes, in_place, spec.data_type, spec.op, spec.root)
    };
    prepare(communicator)?;
    for _ in 0..spec.warmup {
        once(communicator)?;
    }
    communicator.barrier()?;
    let started = Instant::now();
    for _ in 0..spec.iterations {
        once(communicator)?;
    }
    let time_us = started.elapsed().as_secs_f64() * 1e6 / spec.iterations.max(1) as f64;
    let mut wrong = 0;
    for _ in 0..spec.check_passes {
        prepare(communicator)?;
        once(communicator)?;
        let (_, output) = communicator.working_buffers(bytes)?;
        if spec.corrupt_rank == Some(rank) {
            if let Some(byte) = output.last_mut() {
                *byte ^= 0x5a;
            }
        }
        wrong += check_buffer(spec.collective, output, spec.data_type, spec.op, rank, world, spec.root);
    }
    Ok((time_us, wrong))
}

/// [`measure`] with the send and receive buffers in GPU memory. The ring reduces on the host, so each
/// call copies the GPU's send buffer into pinned host memory, runs there and copies the result into
/// the GPU's receive buffer (staged, as NCCL's socket transport stages through host memory): the time
/// includes both PCIe copies. The data check reads the result back out of GPU memory.
fn measure_on_gpu(
    communicator: &mut Communicator,
    spec: &SweepSpec,
    algorithm: Algorithm,
    bytes: usize,
    in_place: bool,
    gpu: &Arc<Gpu>,
) -> Result<(f64, u64), PerfError> {
    let (rank, world) = (communicator.rank, communicator.world);
    let mut staging = gpu.alloc_pinned(bytes)?;
    let mut send = gpu.alloc(bytes)?;
    let mut receive = gpu.alloc(bytes)?;
    prepare_buffer(spec.collective, staging.as_mut_slice(), spec.data_type, rank, world, spec.root);
    send.copy_from_host(staging.as_slice())?;
    receive.copy_from_host(staging.as_slice())?;
    let once = |communicator: &mut Communicator,
                staging: &mut crate::gpu::PinnedBuffer,
                send: &crate::gpu::DeviceBuffer,
                receive: &mut crate::gpu::DeviceBuffer|
     -> Result<(), PerfError> {
        if in_place {
            receive.copy_to_host(staging.as_mut_slice())?;
        } else {
            send.copy_to_host(staging.as_mut_slice())?;
        }
        communicator.run(spec.collective, algorithm, staging.as_mut_slice(), spec.data_type, spec.op, spec.root)?;
        receive.copy_from_host(staging.as_slice())?;
        Ok(())
    };
    for _ in 0..spec.warmup {
        once(communicator, &mut staging, &send, &mut receive)?;
    }
    communicator.barrier()?;
    let started = Instant::now();
    for _ in 0..spec.iterations {
        once(communicator, &mut staging, &send, &mut receive)?;
    }
    let time_us = started.elapsed().as_secs_f64() * 1e6 / spec.iterations.max(1) as f64;
    let mut wrong = 0;
    let mut result = vec![0u8; bytes];
    for _ in 0..spec.check_passes {
        prepare_buffer(spec.collective, staging.as_mut_slice(), spec.data_type, rank, world, spec.root);
        send.copy_from_host(staging.as_slice())?;
        receive.copy_from_host(staging.as_slice())?;
        staging.as_mut_slice().fill(0);
        once(communicator, &mut staging, &send, &mut receive)?;
        receive.copy_to_host(&mut result)?;
        if spec.corrupt_rank == Some(rank) {
            if let Some(byte) = result.last_mut() {
                *byte ^= 0x5a;
            }
        }
        wrong += check_buffer(spec.collective, &result, spec.data_type, spec.op, rank, world, spec.root);
    }
    Ok((time_us, wrong))
}

/// nccl-tests' text: header, one row per size (out-of-place then in-place), footer.
/// Beside nccl-tests' columns: the algorithm of each size and the model's predicted busbw, so a row
/// well below what the links allow stands out; the model itself is in the footer.
pub fn render_rows(
    rows: &[SizeRow],
    collective: Collective,
    world: usize,
    description: &str,
    model: Option<&CostModel>,
) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "# fabricdoctor perf {}: {world} ranks, {description}", collective.name().to_lowercase());
    let _ = writeln!(out, "#");
    let _ = writeln!(out, "#                                                              out-of-place                       in-place                   model");
    let _ = writeln!(out, "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong   algo   busbw");
    let _ = writeln!(out, "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)                (GB/s)");
    let mut wrong = 0;
    let mut busbw_sum = 0.0;
    for row in rows {
        let op = row.op.map(|o| o.name()).unwrap_or("none");
        let _ = write!(
            out,
            "{:>12}  {:>12}  {:>8}  {:>6}  {:>6}",
            row.bytes,
            row.count,
            row.data_type.nccl_name(),
            op,
            row.root
        );
        for m in [&row.out_of_place, &row.in_place] {
            let _ = write!(
                out,
                "  {:>7.1}  {:>6.2}  {:>6.2}  {:>5}",
                m.time_us, m.algbw_gbytes_per_second, m.busbw_gbytes_per_second, m.wrong
            );
            wrong += m.wrong;
        }
        let predicted = row.predicted_busbw_gbytes_per_second.map(|b| format!("{b:.2}")).unwrap_or_else(|| "-".into());
        let _ = write!(out, "  {:>5}  {:>6}", row.algorithm.name(), predicted);
        let _ = writeln!(out, "   slowest rank {}", row.out_of_place.slowest_rank);
        busbw_sum += (row.out_of_place.busbw_gbytes_per_second + row.in_place.busbw_gbytes_per_second) / 2.0;
    }
    let _ = writeln!(out, "# Out of bounds values : {wrong} {}", if wrong == 0 { "OK" } else { "FAILED" });
    let average = if rows.is_empty() { 0.0 } else { busbw_sum / rows.len() as f64 };
    let _ = writeln!(out, "# Avg bus bandwidth    : {average:.4} ");
    if let Some(model) = model {
        let _ = write!(out, "# Cost model           : ring {:.1} us per step", model.ring_step_us);
        if let Some(tree) = model.tree_step_us {
            let _ = write!(out, ", tree {tree:.1} us per step");
        }
        let _ = write!(out, ", {:.3} GB/s per link", model.bandwidth_gbytes_per_second);
        if collective == Collective::AllReduce {
            match model.crossover_bytes(world) {
                Some(bytes) => {
                    let _ = write!(out, "; ring from {bytes} B, tree below");
                }
                None => {
                    let _ = write!(out, "; tree at every size");
                }
            }
        }
        let _ = writeln!(out);
    }
    for row in rows {
        if let Some(trial) = row.trial {
            let _ = writeln!(
                out,
                "# Trial (model unsure): {} B ring {:.1} us, tree {:.1} us: {}",
                row.bytes,
                trial.ring_time_us,
                trial.tree_time_us,
                row.algorithm.name()
            );
        }
    }
    out
}

/// nccl-tests' size syntax: a number with an optional K, M or G (powers of 1024).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (digits, multiplier) = match text.chars().last() {
        Some('K' | 'k') => (&text[..text.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&text[..text.len() - 1], 1 << 20),
        Some('G' | 'g') => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(multiplier))
        .ok_or_else(|| format!("{text:?} is not a size such as 8, 64K, 16M or 1G"))
}

/// The sweep from `minimum` to `maximum` multiplying by `factor` (nccl-tests -b/-e/-f).
pub fn sizes(minimum: u64, maximum: u64, factor: u64) -> Vec<u64> {
    let mut sizes = Vec::new();
    let mut size = minimum.max(1);
    while size <= maximum {
        sizes.push(size);
        if factor <= 1 {
            break;
        }
        size = match size.checked_mul(factor) {
            Some(next) => next,
            None => break,
        };
    }
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_nccl_tests_syntax() {
        assert_eq!(parse_size("8"), Ok(8));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("99999999999G").is_err());
        assert_eq!(sizes(8, 64, 2), [8, 16, 32, 64]);
        assert_eq!(sizes(1 << 20, 1 << 20, 2), [1 << 20]);
        assert_eq!(sizes(8, 100, 1), [8]);
    }
}
