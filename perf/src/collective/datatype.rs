//! Element types and reduction operators of the collectives, on little-endian byte buffers (what the
//! wire carries), plus the deterministic fill and expected values the data check uses.

pub use fabricdoctor_perf_schema::collective::{DataType, ReduceOp};

/// bfloat16 is the top half of an f32; round to nearest even when narrowing (as frameworks do).
pub fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits((bits as u32) << 16)
}

pub fn f32_to_bf16(value: f32) -> u16 {
    let bits = value.to_bits();
    if value.is_nan() {
        return ((bits >> 16) | 0x40) as u16;
    }
    let rounding = 0x7fff + ((bits >> 16) & 1);
    (bits.wrapping_add(rounding) >> 16) as u16
}

/// `destination[i] = op(destination[i], source[i])` element-wise; both hold whole elements. The type
/// and operator are chosen once per call so the element loop is a plain, vectorisable function.
pub fn reduce_into(destination: &mut [u8], source: &[u8], data_type: DataType, op: ReduceOp) {
    reduce(destination, None, source, data_type, op);
}

/// `destination = first op source`, element-wise, in one pass: an out-of-place collective reduces
/// this rank's input and a peer's data straight into the output, without copying the input there
/// first.
pub fn reduce_from(destination: &mut [u8], first: &[u8], source: &[u8], data_type: DataType, op: ReduceOp) {
    reduce(destination, Some(first), source, data_type, op);
}

fn reduce(destination: &mut [u8], first: Option<&[u8]>, source: &[u8], data_type: DataType, op: ReduceOp) {
    match (data_type, op) {
        (DataType::F32, ReduceOp::Sum) => {
            apply::<4>(destination, first, source, |a, b| (f32::from_le_bytes(a) + f32::from_le_bytes(b)).to_le_bytes())
        }
        (DataType::F32, ReduceOp::Max) => apply::<4>(destination, first, source, |a, b| {
            f32::from_le_bytes(a).max(f32::from_le_bytes(b)).to_le_bytes()
        }),
        (DataType::F32, ReduceOp::Min) => apply::<4>(destination, first, source, |a, b| {
            f32::from_le_bytes(a).min(f32::from_le_bytes(b)).to_le_bytes()
        }),
        (DataType::F64, ReduceOp::Sum) => {
            apply::<8>(destination, first, source, |a, b| (f64::from_le_bytes(a) + f64::from_le_bytes(b)).to_le_bytes())
        }
        (DataType::F64, ReduceOp::Max) => apply::<8>(destination, first, source, |a, b| {
            f64::from_le_bytes(a).max(f64::from_le_bytes(b)).to_le_bytes()
        }),
        (DataType::F64, ReduceOp::Min) => apply::<8>(destination, first, source, |a, b| {
            f64::from_le_bytes(a).min(f64::from_le_bytes(b)).to_le_bytes()
        }),
        (DataType::I32, ReduceOp::Sum) => apply::<4>(destination, first, source, |a, b| {
            i32::from_le_bytes(a).wrapping_add(i32::from_le_bytes(b)).to_le_bytes()
        }),
        (DataType::I32, ReduceOp::Max) => apply::<4>(destination, first, source, |a, b| {
            i32::from_le_bytes(a).max(i32::from_le_bytes(b)).to_le_bytes()
        }),
        (DataType::I32, ReduceOp::Min) => apply::<4>(destination, first, source, |a, b| {
            i32::from_le_bytes(a).min(i32::from_le_bytes(b)).to_le_bytes()
        }),
        (DataType::Bf16, op) => apply::<2>(destination, first, source, |a, b| {
            let (x, y) = (bf16_to_f32(u16::from_le_bytes(a)), bf16_to_f32(u16::from_le_bytes(b)));
            let r = match op {
                ReduceOp::Sum => x + y,
                ReduceOp::Max => x.max(y),
                ReduceOp::Min => x.min(y),
            };
            f32_to_bf16(r).to_le_bytes()
        }),
    }
}

#[inline(always)]
fn apply<const WIDTH: usize>(
    destination: &mut [u8],
    first: Option<&[u8]>,
    source: &[u8],
    combine: impl Fn([u8; WIDTH], [u8; WIDTH]) -> [u8; WIDTH],
) {
    let element = |x: &[u8]| {
        let mut value = [0u8; WIDTH];
        value.copy_from_slice(x);
        value
    };
    match first {
        None => {
            for (d, s) in destination.chunks_exact_mut(WIDTH).zip(source.chunks_exact(WIDTH)) {
                d.copy_from_slice(&combine(element(d), element(s)));
            }
        }
        Some(first) => {
            for ((d, f), s) in
                destination.chunks_exact_mut(WIDTH).zip(first.chunks_exact(WIDTH)).zip(source.chunks_exact(WIDTH))
            {
                d.copy_from_slice(&combine(element(f), element(s)));
            }
        }
    }
}

/// The value rank `rank` contributes at element `index`: a pseudo-random small integer (0..=4) per
/// rank and element, as nccl-tests fills each rank with its own random data, so no two ranks hold
/// the same data and no shift of a rank's data matches another position: a slice delivered to the
/// wrong rank, or at the wrong offset, is counted in #wrong. Small integers are exact in every
/// supported type, and sums of up to 64 ranks stay exact even in bfloat16 (integers up to 256).
pub fn input_value(rank: usize, index: usize) -> i64 {
    // splitmix64's finalizer (Steele, Lea, Flood, OOPSLA 2014) over (rank, index).
    let mut x = ((rank as u64) << 40) ^ (index as u64) ^ 0x9E37_79B9_7F4A_7C15;
    x ^= x >> 30;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    (x % 5) as i64
}

/// The reduction of every rank's input at `index`.
pub fn expected_value(ranks: usize, index: usize, op: ReduceOp) -> i64 {
    let values = (0..ranks).map(|rank| input_value(rank, index));
    match op {
        ReduceOp::Sum => values.sum(),
        ReduceOp::Max => values.max().unwrap_or(0),
        ReduceOp::Min => values.min().unwrap_or(0),
    }
}

pub fn encode(value: i64, data_type: DataType, out: &mut [u8]) {
    match data_type {
        DataType::F32 => out.copy_from_slice(&(value as f32).to_le_bytes()),
        DataType::F64 => out.copy_from_slice(&(value as f64).to_le_bytes()),
        DataType::I32 => out.copy_from_slice(&(value as i32).to_le_bytes()),
        DataType::Bf16 => out.copy_from_slice(&f32_to_bf16(value as f32).to_le_bytes()),
    }
}

/// Fill `buffer` (elements `first..`) with `value(element index)`.
pub fn fill(buffer: &mut [u8], data_type: DataType, first: usize, value: impl Fn(usize) -> i64) {
    for (i, element) in buffer.chunks_exact_mut(data_type.size()).enumerate() {
        encode(value(first + i), data_type, element);
    }
}

/// Elements of `buffer` (starting at element `first`) that differ from `value(index)`.
pub fn count_wrong(buffer: &[u8], data_type: DataType, first: usize, value: impl Fn(usize) -> i64) -> u64 {
    let mut expected = vec![0u8; data_type.size()];
    buffer
        .chunks_exact(data_type.size())
        .enumerate()
        .filter(|(i, element)| {
            encode(value(first + i), data_type, &mut expected);
            *element != expected.as_slice()
        })
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounds_to_nearest_even_and_keeps_small_integers() {
        for value in [0.0f32, 1.0, 3.0, 255.0, 256.0, -7.0] {
            assert_eq!(bf16_to_f32(f32_to_bf16(value)), value);
        }
        // 257 is not representable: it rounds to the even neighbour 256.
        assert_eq!(bf16_to_f32(f32_to_bf16(257.0)), 256.0);
        assert!(bf16_to_f32(f32_to_bf16(f32::NAN)).is_nan());
    }

    /// The former input `(7r + 3i) mod 5` gave ranks r and r+5 the same data, so a slice sent to the
    /// wrong one of them passed the check. Each rank's data must differ from every other rank's and
    /// from every shift of itself.
    #[test]
    fn no_two_ranks_and_no_shift_share_the_input() {
        let old = |rank: usize, index: usize| ((rank * 7 + index * 3) % 5) as i64;
        assert!((0..64).all(|i| old(2, i) == old(7, i)), "the old input could not tell rank 2 from rank 7");
        let block = 64;
        for a in 0..16 {
            for b in 0..16 {
                for shift in 0..4 {
                    if a == b && shift == 0 {
                        continue;
                    }
                    let same = (0..block).all(|i| input_value(a, i) == input_value(b, i + shift));
                    assert!(!same, "rank {a} and rank {b} shifted by {shift} hold the same block");
                }
            }
        }
    }

    /// A misrouted AllGather: the block that should come from rank 2 arrives with rank 7's data. The
    /// data check counts every element of it that differs.
    #[test]
    fn a_block_from_the_wrong_rank_is_counted_wrong() {
        let data_type = DataType::F32;
        let (world, per_block) = (8, 256);
        let mut gathered = vec![0u8; world * per_block * data_type.size()];
        for owner in 0..world {
            let sender = if owner == 2 { 7 } else { owner };
            let range = owner * per_block * data_type.size()..(owner + 1) * per_block * data_type.size();
            fill(&mut gathered[range], data_type, owner * per_block, |i| input_value(sender, i));
        }
        let wrong = count_wrong(&gathered, data_type, 0, |i| input_value(i / per_block, i));
        let differing = (2 * per_block..3 * per_block).filter(|&i| input_value(2, i) != input_value(7, i)).count();
        assert!(differing > per_block / 2, "{differing}");
        assert_eq!(wrong as usize, differing);
    }

    #[test]
    fn every_type_and_op_reduces_element_wise() {
        for data_type in [DataType::F32, DataType::F64, DataType::I32, DataType::Bf16] {
            for op in [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min] {
                let count = 37;
                let mut accumulated = vec![0u8; count * data_type.size()];
                fill(&mut accumulated, data_type, 0, |i| input_value(0, i));
                for rank in 1..8 {
                    let mut other = vec![0u8; count * data_type.size()];
                    fill(&mut other, data_type, 0, |i| input_value(rank, i));
                    // Out of place gives what copying the base and reducing in place gives.
                    let mut from = vec![0xeeu8; other.len()];
                    reduce_from(&mut from, &accumulated, &other, data_type, op);
                    reduce_into(&mut accumulated, &other, data_type, op);
                    assert_eq!(from, accumulated, "{data_type:?} {op:?}");
                }
                assert_eq!(
                    count_wrong(&accumulated, data_type, 0, |i| expected_value(8, i, op)),
                    0,
                    "{data_type:?} {op:?}"
                );
                // A corrupted element is counted.
                accumulated[data_type.size() * 5] ^= 0x40;
                assert_eq!(
                    count_wrong(&accumulated, data_type, 0, |i| expected_value(8, i, op)),
                    1,
                    "{data_type:?} {op:?}"
                );
            }
        }
    }
}
