//! Horovod's stall inspector: the ranks a collective waits for.
//!
//! Horovod's coordinator (rank 0) warns when a tensor was submitted by some ranks and not by the
//! others for longer than HOROVOD_STALL_CHECK_TIME_SECONDS (60 s by default). The warning has had
//! three forms:
//! - `horovod/common/stall_inspector.cc` (0.16 and later): "One or more tensors were submitted to be
//!   reduced, gathered or broadcasted by subset of ranks ..." then `Missing ranks:` and one line per
//!   missing rank, `3: [tensor, ...]` (`3!: [...]` once the rank is past the shutdown time);
//! - `horovod/common/operations.cc` (0.13 to 0.15): one line per stalled tensor, `NAME [missing ranks: 1, 3]`;
//! - older releases: `NAME [ready ranks: 0, 1, 3]`, the ranks that did submit it.
//!
//! Every form names the ranks that did not reach the collective: the rank-missing diagnosis.

use std::collections::{BTreeMap, BTreeSet};

use super::lines::numbered_lines;
use crate::triage::{Evidence, Fact};

/// Evidence lines kept per missing rank: the first few tensors say it; the rest repeat it.
const EVIDENCE_PER_RANK: usize = 3;

/// Ranks above this are not believed (a garbled line); Horovod jobs are far smaller.
const MAX_RANK: u64 = 1 << 20;

pub fn parse(file: &str, text: &str) -> Vec<Fact> {
    if !(text.contains("issing ranks") || text.contains("[ready ranks:")) {
        return Vec::new();
    }
    // rank -> (tensors it is missing from, evidence)
    let mut missing: BTreeMap<u64, (usize, Vec<Evidence>)> = BTreeMap::new();
    let mut note = |rank: u64, evidence: Evidence| {
        let entry = missing.entry(rank).or_default();
        entry.0 += 1;
        if entry.1.len() < EVIDENCE_PER_RANK {
            entry.1.push(evidence);
        }
    };
    let mut ready_lines: Vec<(BTreeSet<u64>, Evidence)> = Vec::new();
    let mut listing = false;
    for (line_no, raw) in numbered_lines(text) {
        let evidence = || Evidence::new(file, line_no, raw);
        let trimmed = raw.trim();
        if listing {
            if let Some(rank) = listed_rank(trimmed) {
                note(rank, evidence());
                continue;
            }
            listing = false;
        }
        if trimmed.ends_with("Missing ranks:") {
            listing = true;
            continue;
        }
        if let Some(ranks) = bracketed(raw, "[missing ranks:") {
            for rank in ranks {
                note(rank, evidence());
            }
        } else if let Some(ready) = bracketed(raw, "[ready ranks:") {
            ready_lines.push((ready.into_iter().collect(), evidence()));
        }
    }
    // A ready list names who came; those below the highest rank that came and are not in it did not.
    // (A missing rank above every ready one cannot be told from these lines.)
    for (ready, evidence) in ready_lines {
        let Some(&highest) = ready.iter().next_back() else { continue };
        for rank in (0..highest).filter(|rank| !ready.contains(rank)) {
            note(rank, evidence.clone());
        }
    }
    missing
        .into_iter()
        .map(|(rank, (tensors, evidence))| {
            let mut fact = Fact::new("horovod.missing_ranks")
                .attr("rank", rank)
                .attr("tensors", tensors)
                .attr("text", format!("Horovod's stall inspector: {tensors} stalled tensor(s) wait for rank {rank}"));
            for evidence in evidence {
                fact = fact.evidence(evidence);
            }
            fact
        })
        .collect()
}

/// `3: [tensor, ...]` or `3!: [...]` under `Missing ranks:`: the rank.
fn listed_rank(line: &str) -> Option<u64> {
    let (rank, rest) = line.split_once(':')?;
    let rank = rank.strip_suffix('!').unwrap_or(rank);
    if !rest.trim_start().starts_with('[') || rank.is_empty() || !rank.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    rank.parse().ok().filter(|rank| *rank < MAX_RANK)
}

/// The ranks of `[missing ranks: 1, 3]` (or `[ready ranks: ...]`) anywhere in the line; `None` when
/// the bracket is absent or holds anything but ranks.
fn bracketed(line: &str, opening: &str) -> Option<Vec<u64>> {
    let inside = line.split_once(opening)?.1.split_once(']')?.0;
    inside
        .split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(|part| part.parse::<u64>().ok().filter(|rank| *rank < MAX_RANK))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranks(facts: &[Fact]) -> Vec<(String, String)> {
        facts
            .iter()
            .map(|f| (f.get("rank").unwrap_or("").to_string(), f.get("tensors").unwrap_or("").to_string()))
            .collect()
    }

    /// stall_inspector.cc's form (horovod 0.16+), as a 2021 bug report printed it.
    #[test]
    fn the_stall_inspectors_list_of_missing_ranks() {
        let text = "[2021-02-02 21:19:07.345988: W horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 10 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock. \nMissing ranks:\n0: [HorovodAllreduce_grads_0]\n3!: [HorovodAllreduce_grads_1, HorovodAllreduce_grads_2]\nTraceback (most recent call last):\n";
        let facts = parse("f", text);
        assert_eq!(ranks(&facts), [("0".into(), "1".into()), ("3".into(), "1".into())]);
        assert_eq!(facts[1].evidence[0].line, 4);
    }

    /// horovod#1012 (operations.cc's form, Open MPI labels): one rank missing from every tensor.
    #[test]
    fn tensors_that_each_name_their_missing_ranks() {
        let text = "[1,0]<stderr>:[2019-04-13 13:53:31.851506: W horovod/common/operations.cc:588] HorovodBroadcast_dense_1_bias_Momentum_0 [missing ranks: 1]\n\
                    [2019-04-13 13:53:31.851547: W horovod/common/operations.cc:588] HorovodBroadcast_global_step_0 [missing ranks: 1, 2]\n";
        assert_eq!(ranks(&parse("f", text)), [("1".into(), "2".into()), ("2".into(), "1".into())]);
    }

    /// horovod#530: the oldest form lists the ranks that came; the gap is the one that did not.
    #[test]
    fn the_rank_absent_from_every_ready_list() {
        let text = "HorovodBroadcast_InceptionV3_weights_0 [ready ranks: 5, 6, 3, 1, 4, 0], \n\
                    HorovodBroadcast_InceptionV3_beta_0 [ready ranks: 5, 6, 3, 1, 4, 0], \n";
        assert_eq!(ranks(&parse("f", text)), [("2".into(), "2".into())]);
        // Every rank below the highest came: which rank is missing cannot be told.
        assert!(parse("f", "T_0 [ready ranks: 0, 1, 2]\n").is_empty());
    }

    #[test]
    fn prose_and_garbled_brackets_name_no_rank() {
        for text in [
            "the missing ranks were found later\n",
            "T_0 [missing ranks: one]\n",
            "T_0 [missing ranks: 99999999999]\n",
            "Missing ranks:\nnot a rank: [x]\n",
            "T_0 [missing ranks: 1\n",
        ] {
            assert!(parse("f", text).is_empty(), "{text}");
        }
    }
}
