//! Who carries the coordinator's calls to agents. A real agent's call blocks on its network for
//! the length of a measurement, and the pairs of a round must load the fabric together, so each
//! one gets a thread of its own. A simulated agent answers in-process and never blocks: a thread
//! per pair per round then costs more than the answer (at 512 simulated hosts, half the run's CPU
//! went to creating and unmapping threads under `perf record`), so a few workers, one per CPU,
//! take the round in contiguous shares.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Run `work` on every item on at most `workers` scoped threads, each taking a contiguous share.
/// A panicking item gives `None` and the other items of its share still run; results come back
/// in the items' order.
pub(crate) fn on_workers<I: Send, T: Send>(
    items: &mut [I],
    workers: usize,
    work: impl Fn(&mut I) -> T + Sync,
) -> Vec<Option<T>> {
    if items.is_empty() {
        return Vec::new();
    }
    let share = items.len().div_ceil(workers.clamp(1, items.len()));
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks_mut(share)
            .map(|chunk| {
                let count = chunk.len();
                let handle = scope.spawn(move || {
                    chunk.iter_mut().map(|item| catch_unwind(AssertUnwindSafe(|| work(item))).ok()).collect::<Vec<_>>()
                });
                (count, handle)
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|(count, handle)| handle.join().unwrap_or_else(|_| (0..count).map(|_| None).collect()))
            .collect()
    })
}

/// Threads for `calls` calls at once: every call its own thread, or with `share_the_cpus` (simulated
/// agents whose calls do not wait for each other) one per CPU.
pub(crate) fn workers_for(calls: usize, share_the_cpus: bool) -> usize {
    if share_the_cpus {
        std::thread::available_parallelism().map_or(2, |n| n.get()).min(calls.max(1))
    } else {
        calls
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::Mutex;

    #[test]
    fn every_item_runs_once_in_order_on_at_most_the_workers_asked_for() {
        for (items, workers) in [(1, 1), (7, 2), (8, 3), (5, 10), (100, 4)] {
            let threads = Mutex::new(HashSet::new());
            let mut values: Vec<usize> = (0..items).collect();
            let results = on_workers(&mut values, workers, |value| {
                threads.lock().expect("thread set").insert(std::thread::current().id());
                *value += 1;
                *value * 10
            });
            assert_eq!(results, (1..=items).map(|v| Some(v * 10)).collect::<Vec<_>>());
            assert_eq!(values, (1..=items).collect::<Vec<_>>(), "each item once");
            let used = threads.lock().expect("thread set").len();
            assert!(used <= workers.min(items), "{items} items on {used} threads, asked {workers}");
        }
    }

    #[test]
    fn a_panicking_item_loses_only_its_own_result() {
        let mut values: Vec<u32> = (0..6).collect();
        let results = on_workers(&mut values, 2, |value| {
            assert!(*value != 1, "item one fails");
            *value
        });
        assert_eq!(results, vec![Some(0), None, Some(2), Some(3), Some(4), Some(5)]);
    }

    #[test]
    fn real_agents_get_a_thread_per_call_and_simulated_ones_share_the_cpus() {
        assert_eq!(workers_for(2048, false), 2048);
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        assert_eq!(workers_for(2048, true), cpus.min(2048));
        assert_eq!(workers_for(0, true), 1);
    }
}
