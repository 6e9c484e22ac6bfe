//! What a collective sweep measured, as reports carry it: the collective, element type, operator,
//! the sweep's parameters and one row per size (nccl-tests' columns). The sweep itself is
//! `fabricdoctor_perf::collective::sweep`.

use serde::{Deserialize, Serialize};

/// The collective measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Collective {
    AllReduce,
    AllGather,
    ReduceScatter,
    AlltoAll,
    Broadcast,
}

impl Collective {
    /// nccl-tests' bus bandwidth factor for `ranks` ranks.
    pub fn bus_factor(self, ranks: usize) -> f64 {
        let n = ranks as f64;
        match self {
            Collective::AllReduce => 2.0 * (n - 1.0) / n,
            Collective::AllGather | Collective::ReduceScatter | Collective::AlltoAll => (n - 1.0) / n,
            Collective::Broadcast => 1.0,
        }
    }

    pub fn reduces(self) -> bool {
        matches!(self, Collective::AllReduce | Collective::ReduceScatter)
    }

    pub fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "AllReduce",
            Collective::AllGather => "AllGather",
            Collective::ReduceScatter => "ReduceScatter",
            Collective::AlltoAll => "AlltoAll",
            Collective::Broadcast => "Broadcast",
        }
    }
}

/// nccl-tests' `-d` types this tool supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataType {
    F32,
    F64,
    I32,
    Bf16,
}

impl DataType {
    pub fn size(self) -> usize {
        match self {
            DataType::F32 | DataType::I32 => 4,
            DataType::F64 => 8,
            DataType::Bf16 => 2,
        }
    }

    /// The name nccl-tests prints in its `type` column.
    pub fn nccl_name(self) -> &'static str {
        match self {
            DataType::F32 => "float",
            DataType::F64 => "double",
            DataType::I32 => "int32",
            DataType::Bf16 => "bfloat16",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReduceOp {
    Sum,
    Max,
    Min,
}

impl ReduceOp {
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepSpec {
    pub collective: Collective,
    pub sizes: Vec<u64>,
    pub iterations: u32,
    pub warmup: u32,
    pub check_passes: u32,
    pub data_type: DataType,
    pub op: ReduceOp,
    pub root: usize,
    /// Fault injection for tests of the data check: this rank flips one element of every checked
    /// result, which `#wrong` must count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corrupt_rank: Option<usize>,
    /// Which ranks' times make the reported time (nccl-tests -a).
    pub average: TimeAverage,
    /// Which AllReduce algorithm runs each size (`--algo`; NCCL_ALGO's role). Absent in requests
    /// from before it existed: `auto`.
    #[serde(default)]
    pub algorithm: AlgorithmChoice,
}

/// `--algo`: force one AllReduce algorithm, or let the cost model pick per size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlgorithmChoice {
    Ring,
    Tree,
    #[default]
    Auto,
}

/// The algorithm a row ran with (the `"algorithm"` of each JSON row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// Ring steps over each channel's neighbours (AllReduce: reduce-scatter then all-gather;
    /// Broadcast: a pipelined chain around the ring).
    Ring,
    /// AllReduce by recursive doubling (MPICH's latency-bound algorithm): log2(n) exchanges of the
    /// whole buffer with rank XOR 2^k, plus a fold step each way when n is not a power of two.
    Tree,
    /// AlltoAll: at step k every rank sends to rank+k and receives from rank-k.
    Pairwise,
}

impl Algorithm {
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::Tree => "tree",
            Algorithm::Pairwise => "pairwise",
        }
    }
}

/// The α-β cost model measured on the live communicator before the sweep (Hockney's model, as
/// NCCL's tuning and MPI's algorithm selection use it: time = steps x α + bytes on the busiest
/// link x β), with each algorithm's own α.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CostModel {
    /// α of ring: a ring AllReduce of one element per rank, per step (median).
    pub ring_step_us: f64,
    /// α of recursive doubling, measured the same way, per exchange; absent when the tree could
    /// not run (`--algo ring`, or a collective other than AllReduce).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree_step_us: Option<f64>,
    /// 1/β: bytes per second one rank moves to its neighbour while receiving as much from the
    /// other (every channel at once), the slowest rank's, GB/s (10^9 bytes).
    pub bandwidth_gbytes_per_second: f64,
}

impl CostModel {
    fn link_time_us(&self, bytes: f64) -> f64 {
        if self.bandwidth_gbytes_per_second > 0.0 {
            bytes / (self.bandwidth_gbytes_per_second * 1e3)
        } else {
            f64::INFINITY
        }
    }

    /// Predicted time of one `collective` of `bytes` over `ranks` ranks with `algorithm`.
    pub fn predict_us(&self, collective: Collective, algorithm: Algorithm, ranks: usize, bytes: u64) -> f64 {
        if ranks <= 1 {
            return 0.0;
        }
        let n = ranks as f64;
        let size = bytes as f64;
        let alpha = self.ring_step_us;
        match (collective, algorithm) {
            // Recursive doubling sends the whole buffer at each of its steps.
            (_, Algorithm::Tree) => {
                let steps = doubling_steps(ranks) as f64;
                steps * (self.tree_step_us.unwrap_or(alpha) + self.link_time_us(size))
            }
            (Collective::AllReduce, _) => 2.0 * (n - 1.0) * alpha + self.link_time_us(2.0 * (n - 1.0) / n * size),
            (Collective::AllGather | Collective::ReduceScatter | Collective::AlltoAll, _) => {
                (n - 1.0) * alpha + self.link_time_us((n - 1.0) / n * size)
            }
            // A pipelined chain: the first slice crosses n-1 hops, then the rest streams behind it.
            (Collective::Broadcast, _) => (n - 1.0) * alpha + self.link_time_us(size),
        }
    }

    /// The AllReduce algorithm with the lower predicted time for `bytes` (ring on a tie: it is
    /// the one that keeps every link busy).
    pub fn choose(&self, ranks: usize, bytes: u64) -> Algorithm {
        let ring = self.predict_us(Collective::AllReduce, Algorithm::Ring, ranks, bytes);
        let tree = self.predict_us(Collective::AllReduce, Algorithm::Tree, ranks, bytes);
        if tree < ring {
            Algorithm::Tree
        } else {
            Algorithm::Ring
        }
    }

    /// Whether `bytes` lies within `factor` of the model's crossover (either side): where a model of
    /// latency plus bytes over bandwidth is least sure of its choice (a pipelined ring overlaps its
    /// hops with the transfer, a token bucket passes small bursts above its rate), so the sweep
    /// times both algorithms there instead of trusting it. Far from the crossover one algorithm
    /// wins by its structure: tree's log2(n) steps at the smallest sizes, ring's bandwidth term at
    /// the largest.
    pub fn near_crossover(&self, ranks: usize, bytes: u64, factor: u64) -> bool {
        self.crossover_bytes(ranks).is_some_and(|crossover| {
            bytes.saturating_mul(factor) >= crossover && bytes <= crossover.saturating_mul(factor)
        })
    }

    /// The smallest power-of-two size from which the model picks ring (`None`: tree up to 1 TiB).
    pub fn crossover_bytes(&self, ranks: usize) -> Option<u64> {
        (0..=40).map(|shift| 1u64 << shift).find(|&bytes| self.choose(ranks, bytes) == Algorithm::Ring)
    }
}

/// Exchanges of recursive doubling over `ranks` ranks: log2 of the largest power of two not above
/// it, plus a fold in and a fold out when ranks are left over.
pub fn doubling_steps(ranks: usize) -> usize {
    if ranks <= 1 {
        return 0;
    }
    let power = 1usize << (usize::BITS - 1 - ranks.leading_zeros());
    power.trailing_zeros() as usize + if power < ranks { 2 } else { 0 }
}

/// nccl-tests `-a`: 0 = rank 0's time, 1 = the average over ranks (its default), 2 = the minimum,
/// 3 = the maximum (the slowest rank, what a training step waits for).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeAverage {
    RankZero,
    Average,
    Minimum,
    Maximum,
}

impl TimeAverage {
    pub fn from_nccl_tests(code: u8) -> Option<TimeAverage> {
        [TimeAverage::RankZero, TimeAverage::Average, TimeAverage::Minimum, TimeAverage::Maximum]
            .get(code as usize)
            .copied()
    }

    /// The one time to report from every rank's `times`.
    pub fn combine(self, times: &[f64]) -> f64 {
        match self {
            TimeAverage::RankZero => times.first().copied().unwrap_or(0.0),
            TimeAverage::Average => times.iter().sum::<f64>() / times.len().max(1) as f64,
            TimeAverage::Minimum => times.iter().copied().fold(f64::INFINITY, f64::min),
            TimeAverage::Maximum => times.iter().copied().fold(0.0, f64::max),
        }
    }
}

/// One mode (out-of-place or in-place) of one size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measurement {
    /// Time of one collective, averaged over the timed iterations, combined over ranks as `average` says.
    pub time_us: f64,
    /// nccl-tests algbw: size / time, GB/s (10^9 bytes).
    pub algbw_gbytes_per_second: f64,
    /// nccl-tests busbw: algbw x the collective's bus factor.
    pub busbw_gbytes_per_second: f64,
    /// Wrong elements over all ranks and check passes.
    pub wrong: u64,
    pub rank_time_us: Vec<f64>,
    pub slowest_rank: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizeRow {
    pub bytes: u64,
    pub count: u64,
    pub data_type: DataType,
    pub op: Option<ReduceOp>,
    /// -1 as nccl-tests prints for collectives without a root.
    pub root: i64,
    /// The algorithm both modes of this size ran with.
    pub algorithm: Algorithm,
    /// What the cost model predicts for this size and algorithm (absent with one rank).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted_time_us: Option<f64>,
    /// The predicted time as nccl-tests' busbw, to read beside the measured busbw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted_busbw_gbytes_per_second: Option<f64>,
    pub out_of_place: Measurement,
    pub in_place: Measurement,
    /// Where the model was unsure (near its crossover), the short trial of both algorithms that
    /// chose `algorithm` instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trial: Option<AlgorithmTrial>,
}

/// Both AllReduce algorithms timed on the live communicator for one size, the slowest rank's time
/// of each: the faster one runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AlgorithmTrial {
    pub ring_time_us: f64,
    pub tree_time_us: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1 Gbit/s links (0.125 GB/s) with 50 µs per hop: for 4 ranks doubling costs 2(α + Sβ) and ring
    /// 6α + 1.5Sβ, which cross at S = 8α/β = 50,000 B; for 5 ranks (a fold each way) 4(α + Sβ) against
    /// 8α + 1.6Sβ, crossing at 10,417 B.
    #[test]
    fn the_model_picks_tree_below_the_crossover_and_ring_above() {
        let model = CostModel { ring_step_us: 50.0, tree_step_us: Some(50.0), bandwidth_gbytes_per_second: 0.125 };
        assert_eq!(model.choose(4, 8), Algorithm::Tree);
        assert_eq!(model.choose(4, 32 << 10), Algorithm::Tree);
        assert_eq!(model.choose(4, 64 << 10), Algorithm::Ring);
        // Trials within a factor 4 of the crossover (64 KiB), none far from it.
        assert!(model.near_crossover(4, 16 << 10, 4) && model.near_crossover(4, 256 << 10, 4));
        assert!(!model.near_crossover(4, 8 << 10, 4) && !model.near_crossover(4, 64 << 20, 4));
        assert_eq!(model.choose(4, 256 << 20), Algorithm::Ring);
        assert_eq!(model.crossover_bytes(4), Some(64 << 10));
        assert_eq!(model.crossover_bytes(5), Some(16 << 10));
        let ring = model.predict_us(Collective::AllReduce, Algorithm::Ring, 4, 50_000);
        assert!((ring - (300.0 + 75_000.0 / 125.0)).abs() < 1e-6, "{ring}");
        // Two ranks: ring is 2α + Sβ, doubling α + Sβ: doubling at every size.
        assert_eq!(model.crossover_bytes(2), None);
        // No bandwidth measured: nothing finishes, ring is kept.
        let broken = CostModel { ring_step_us: 50.0, tree_step_us: None, bandwidth_gbytes_per_second: 0.0 };
        assert_eq!(broken.choose(4, 1 << 20), Algorithm::Ring);
        // Exchanges that cost twice a ring hop move the crossover down: 2(100 + Sβ) against
        // 300 + 1.5Sβ crosses at 400β⁻¹ = 25,000 B.
        let slow_exchanges = CostModel { tree_step_us: Some(100.0), ..model };
        assert_eq!(slow_exchanges.crossover_bytes(4), Some(32 << 10));
        assert_eq!(slow_exchanges.choose(4, 16 << 10), Algorithm::Tree);
    }

    #[test]
    fn doubling_steps_count_the_folds() {
        let steps: Vec<usize> = (1..=9).map(doubling_steps).collect();
        assert_eq!(steps, [0, 1, 3, 2, 4, 4, 4, 3, 5]);
    }

    /// Requests from agents that predate `--algo` still parse, as auto.
    #[test]
    fn a_spec_without_an_algorithm_is_auto() {
        let text = r#"{"collective":"allreduce","sizes":[8],"iterations":1,"warmup":0,"check_passes":1,
            "data_type":"f32","op":"sum","root":0,"average":"maximum"}"#;
        let spec: SweepSpec = serde_json::from_str(text).expect("spec");
        assert_eq!(spec.algorithm, AlgorithmChoice::Auto);
    }
}
