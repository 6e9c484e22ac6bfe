//! AllReduce by recursive doubling, the latency-bound algorithm MPI libraries use for small
//! messages (Thakur, Rabenseifner and Gropp, "Optimization of Collective Communication Operations in
//! MPICH", IJHPCA 2005, section 4.3): in step k every rank exchanges its whole buffer with rank XOR
//! 2^k and reduces what it received, so after log2(n) steps every rank holds the full reduction.
//! Where n is not a power of two, the first 2r ranks (r = n - 2^floor(log2 n)) fold in pairs
//! before the exchanges (the even rank hands its buffer to the odd one and waits) and the odd rank
//! hands the result back after them: two extra steps, as in MPICH.
//!
//! Ring AllReduce takes 2(n-1) steps of n-th of the buffer each; recursive doubling takes log2(n)
//! steps of the whole buffer. Below the size where the two cost models cross, the latency term
//! dominates and doubling wins ([`fabricdoctor_perf_schema::collective::CostModel::choose`]).

use super::datatype::{reduce_into, DataType, ReduceOp};
use super::link::{exchange, Receiver, Sender};
use super::SLICE_BYTES;
use crate::PerfError;

/// What one rank does in recursive doubling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// Before the exchanges: hand the buffer to this rank and wait for the result from it (this
    /// rank takes no part in the exchanges).
    pub folds_into: Option<usize>,
    /// Before the exchanges: reduce this rank's buffer into ours; after them, send it the result.
    pub folded_from: Option<usize>,
    /// The partner of each exchange step, in order.
    pub exchanges: Vec<usize>,
}

/// The schedule of `rank` among `world` ranks.
pub fn schedule(rank: usize, world: usize) -> Schedule {
    let mut plan = Schedule { folds_into: None, folded_from: None, exchanges: Vec::new() };
    if world <= 1 || rank >= world {
        return plan;
    }
    let power = 1usize << (usize::BITS - 1 - world.leading_zeros());
    let remainder = world - power;
    // Ranks below 2r pair up: even folds into odd. The odd ones and every rank from 2r on take
    // part in the exchanges, renumbered 0..power.
    let virtual_rank = if rank < 2 * remainder {
        if rank % 2 == 0 {
            plan.folds_into = Some(rank + 1);
            return plan;
        }
        plan.folded_from = Some(rank - 1);
        rank / 2
    } else {
        rank - remainder
    };
    let real = |virtual_rank: usize| {
        if virtual_rank < remainder {
            2 * virtual_rank + 1
        } else {
            virtual_rank + remainder
        }
    };
    let mut mask = 1;
    while mask < power {
        plan.exchanges.push(real(virtual_rank ^ mask));
        mask <<= 1;
    }
    plan
}

/// Every rank `rank` exchanges data with in recursive doubling: the links it needs (the relation
/// is symmetric, so each pair opens one connection).
pub fn partners(rank: usize, world: usize) -> Vec<usize> {
    let plan = schedule(rank, world);
    let mut peers: Vec<usize> = plan.folds_into.into_iter().chain(plan.folded_from).chain(plan.exchanges).collect();
    peers.sort_unstable();
    peers.dedup();
    peers
}

/// Messages up to this size are sent before receiving, on this thread: both partners' whole
/// message fits in what the link holds without the other side reading (TCP: the socket buffers,
/// tcp(7) tcp_wmem/tcp_rmem defaults of 16 KiB and 128 KiB; verbs: one of the peer's receive
/// slots), so neither can block the other, and no thread is started on the latency-bound path.
const INLINE_BYTES: usize = 16 * 1024;

/// One rank of the communicator, with its mesh links by peer.
pub(crate) struct Links<'a> {
    pub(crate) senders: &'a mut [Option<Box<dyn Sender>>],
    pub(crate) receivers: &'a mut [Option<Box<dyn Receiver>>],
    pub(crate) labels: &'a [String],
    pub(crate) rank: usize,
    pub(crate) world: usize,
}

/// The error for a partner without a link (the communicator was opened without the doubling mesh).
fn missing(labels: &[String], peer: usize) -> PerfError {
    PerfError::Transport(format!("no link to {} for recursive doubling", super::name_of(labels, peer)))
}

impl Links<'_> {
    fn sender(&mut self, peer: usize) -> Result<&mut (dyn Sender + 'static), PerfError> {
        let labels = self.labels;
        self.senders.get_mut(peer).and_then(|s| s.as_deref_mut()).ok_or_else(|| missing(labels, peer))
    }

    fn receiver(&mut self, peer: usize) -> Result<&mut (dyn Receiver + 'static), PerfError> {
        let labels = self.labels;
        self.receivers.get_mut(peer).and_then(|r| r.as_deref_mut()).ok_or_else(|| missing(labels, peer))
    }

    fn send(&mut self, peer: usize, bytes: &[u8]) -> Result<(), PerfError> {
        let sender = self.sender(peer)?;
        bytes.chunks(SLICE_BYTES).try_for_each(|slice| sender.send(slice))?;
        sender.flush()
    }

    fn receive(&mut self, peer: usize, into: &mut [u8]) -> Result<(), PerfError> {
        let receiver = self.receiver(peer)?;
        into.chunks_mut(SLICE_BYTES).try_for_each(|slice| receiver.receive(slice))
    }

    /// Send `outgoing` to `peer` while receiving as many bytes from it into `incoming`.
    fn exchange(&mut self, peer: usize, outgoing: &[u8], incoming: &mut [u8]) -> Result<(), PerfError> {
        if outgoing.len() <= INLINE_BYTES {
            self.send(peer, outgoing)?;
            return self.receive(peer, incoming);
        }
        let labels = self.labels;
        let sender = self.senders.get_mut(peer).and_then(|s| s.as_deref_mut()).ok_or_else(|| missing(labels, peer))?;
        let receiver =
            self.receivers.get_mut(peer).and_then(|r| r.as_deref_mut()).ok_or_else(|| missing(labels, peer))?;
        exchange(sender, receiver, outgoing, incoming, SLICE_BYTES)
    }
}

/// Recursive-doubling AllReduce of `buffer` in place. `scratch` is reused between calls (resized
/// to the buffer), so the data path allocates nothing once warm.
pub(crate) fn all_reduce(
    links: &mut Links<'_>,
    buffer: &mut [u8],
    scratch: &mut Vec<u8>,
    data_type: DataType,
    op: ReduceOp,
) -> Result<(), PerfError> {
    let plan = schedule(links.rank, links.world);
    if let Some(odd) = plan.folds_into {
        links.send(odd, buffer)?;
        return links.receive(odd, buffer);
    }
    scratch.resize(buffer.len(), 0);
    let incoming = &mut scratch[..buffer.len()];
    if let Some(even) = plan.folded_from {
        links.receive(even, incoming)?;
        reduce_into(buffer, incoming, data_type, op);
    }
    for &partner in &plan.exchanges {
        links.exchange(partner, buffer, incoming)?;
        // Both partners reduce the same two operands (in swapped order; sum, min and max are
        // commutative in IEEE 754), so every rank ends with the same bits.
        reduce_into(buffer, incoming, data_type, op);
    }
    if let Some(even) = plan.folded_from {
        links.send(even, buffer)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricdoctor_perf_schema::collective::doubling_steps;

    /// Simulate the schedule on plain integers: every rank must end with the sum of all inputs,
    /// every exchange must be mutual (both name each other at the same step), and folds must pair.
    #[test]
    fn every_rank_count_from_2_to_17_reduces_everything_with_mutual_partners() {
        for world in 2..=17usize {
            let plans: Vec<Schedule> = (0..world).map(|r| schedule(r, world)).collect();
            let mut values: Vec<u64> = (0..world).map(|r| 1u64 << r).collect();
            for (rank, plan) in plans.iter().enumerate() {
                if let Some(odd) = plan.folds_into {
                    assert_eq!(plans[odd].folded_from, Some(rank), "world {world}: fold of {rank}");
                    assert!(plan.exchanges.is_empty());
                }
            }
            for (rank, plan) in plans.iter().enumerate() {
                if let Some(even) = plan.folded_from {
                    values[rank] |= values[even];
                }
            }
            let steps = plans.iter().map(|p| p.exchanges.len()).max().unwrap_or(0);
            for step in 0..steps {
                let before = values.clone();
                for (rank, plan) in plans.iter().enumerate() {
                    if let Some(&partner) = plan.exchanges.get(step) {
                        assert_eq!(plans[partner].exchanges.get(step), Some(&rank), "world {world} step {step}");
                        values[rank] = before[rank] | before[partner];
                    }
                }
            }
            for (rank, plan) in plans.iter().enumerate() {
                if let Some(even) = plan.folded_from {
                    values[even] = values[rank];
                }
            }
            let all = (1u64 << world) - 1;
            assert!(values.iter().all(|&v| v == all), "world {world}: {values:?}");
            let active_steps = steps + if world.is_power_of_two() { 0 } else { 2 };
            assert_eq!(active_steps, doubling_steps(world), "world {world}");
        }
    }

    #[test]
    fn partners_are_few_and_symmetric() {
        for world in 1..=33usize {
            for rank in 0..world {
                let mine = partners(rank, world);
                assert!(mine.len() <= doubling_steps(world).max(1), "world {world} rank {rank}: {mine:?}");
                for &peer in &mine {
                    assert_ne!(peer, rank);
                    assert!(partners(peer, world).contains(&rank), "world {world}: {rank} and {peer}");
                }
            }
        }
        assert_eq!(partners(0, 4), [1, 2]);
        assert_eq!(partners(3, 4), [1, 2]);
        // 5 ranks: 0 folds into 1; 1, 2, 3, 4 exchange as virtual 0..4.
        assert_eq!(schedule(0, 5), Schedule { folds_into: Some(1), folded_from: None, exchanges: vec![] });
        assert_eq!(schedule(1, 5), Schedule { folds_into: None, folded_from: Some(0), exchanges: vec![2, 3] });
        assert_eq!(schedule(4, 5).exchanges, [3, 2]);
    }
}
