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
    pub out_of_place: Measurement,
    pub in_place: Measurement,
}
