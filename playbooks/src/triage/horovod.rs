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
//! Horovod 0.18 and 0.19 printed the stall inspector's list under `Stalled ranks:`, with the same
//! lines (`horovod/common/stall_inspector.cc` of those releases).
//!
//! Every form names the ranks that did not reach a collective: the rank-missing diagnosis, unless
//! the ranks diverged. A rank listed as missing a tensor is one that never submitted it, while
//! some other rank did; a rank that died, or stopped before a collective, is missing what the
//! others submitted and the others miss nothing of it. Two ranks of which each is missing a
//! tensor the other is not have each submitted what the other did not: both are alive, blocked
//! in collectives the other never joins, the "different ranks are trying to submit different
//! tensors" of the warning itself (horovod/horovod#1652: a different graph on each rank). That is
//! a collective mismatch. A list that Horovod cut (" ...", past five tensors) does not say what a
//! rank is not missing, so only whole lists are compared.

use std::collections::{BTreeMap, BTreeSet};

use super::lines::numbered_lines;
use crate::triage::{Evidence, Fact};

/// Evidence lines kept per missing rank: the first few tensors say it; the rest repeat it.
const EVIDENCE_PER_RANK: usize = 3;

/// Ranks above this are not believed (a garbled line); Horovod jobs are far smaller.
const MAX_RANK: u64 = 1 << 20;

/// Tensor names kept per rank for the divergence test; past it the rank's list counts as cut.
const MAX_NAMES_PER_RANK: usize = 64;

/// Ranks compared pairwise for divergence; a stall that lists more says its first ranks' story.
const MAX_COMPARED_RANKS: usize = 64;

/// Ranks kept from one input: a stall of more (a hostile or garbled list) is told by its first ones.
const MAX_RANKS_KEPT: usize = 1024;

pub fn parse(file: &str, text: &str) -> Vec<Fact> {
    if !(text.contains("issing ranks") || text.contains("Stalled ranks:") || text.contains("[ready ranks:")) {
        return Vec::new();
    }
    let mut missing: BTreeMap<u64, MissingRank> = BTreeMap::new();
    let mut note = |rank: u64, tensors: Option<Vec<&str>>, evidence: Evidence| {
        if missing.len() >= MAX_RANKS_KEPT && !missing.contains_key(&rank) {
            return;
        }
        let entry = missing.entry(rank).or_default();
        entry.tensors += 1;
        if entry.evidence.len() < EVIDENCE_PER_RANK {
            entry.evidence.push(evidence);
        }
        match tensors {
            Some(names) if !entry.cut => {
                let room = MAX_NAMES_PER_RANK + 1 - entry.names.len();
                entry.names.extend(names.into_iter().take(room).map(str::to_string));
                entry.cut = entry.names.len() > MAX_NAMES_PER_RANK;
            }
            _ => entry.cut = true,
        }
    };
    let mut ready_lines: Vec<(BTreeSet<u64>, Evidence)> = Vec::new();
    let mut listing = false;
    for (line_no, raw) in numbered_lines(text) {
        let evidence = || Evidence::new(file, line_no, raw);
        let trimmed = raw.trim();
        if listing {
            if let Some((rank, tensors)) = listed_rank(trimmed) {
                note(rank, tensors, evidence());
                continue;
            }
            listing = false;
        }
        if stall_list_heading(trimmed) {
            listing = true;
            continue;
        }
        if let Some(ranks) = bracketed(raw, "[missing ranks:") {
            let tensor =
                raw.split_once("[missing ranks:").and_then(|(before, _)| before.split_whitespace().next_back());
            for rank in ranks {
                note(rank, tensor.map(|name| vec![name]), evidence());
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
            note(rank, None, evidence.clone());
        }
    }
    let diverged = diverged_ranks(&missing);
    missing
        .into_iter()
        .map(|(rank, entry)| {
            let tensors = entry.tensors;
            let mut fact = if diverged.contains(&rank) {
                Fact::new("horovod.mismatched_tensors").attr("rank", rank).attr("tensors", tensors).attr(
                    "text",
                    format!("Horovod's stall inspector: rank {rank} waits in collectives on tensors that other ranks never submit, and never submits theirs"),
                )
            } else {
                Fact::new("horovod.missing_ranks")
                    .attr("rank", rank)
                    .attr("tensors", tensors)
                    .attr("text", format!("Horovod's stall inspector: {tensors} stalled tensor(s) wait for rank {rank}"))
            };
            for evidence in entry.evidence {
                fact = fact.evidence(evidence);
            }
            fact
        })
        .collect()
}

/// What the stall inspector says of one rank: how many stalled tensors wait for it, the names of
/// those tensors while the list is whole, and the evidence.
#[derive(Default)]
struct MissingRank {
    tensors: usize,
    names: BTreeSet<String>,
    /// The names are not all there: Horovod cut the list, the form names no tensor, or the cap.
    cut: bool,
    evidence: Vec<Evidence>,
}

/// The ranks of which each is missing a tensor that another such rank is not (see the module's
/// comment), compared over the first `MAX_COMPARED_RANKS` ranks whose lists are whole.
fn diverged_ranks(missing: &BTreeMap<u64, MissingRank>) -> BTreeSet<u64> {
    let whole: Vec<(u64, &BTreeSet<String>)> = missing
        .iter()
        .filter(|(_, entry)| !entry.cut && !entry.names.is_empty())
        .map(|(rank, entry)| (*rank, &entry.names))
        .take(MAX_COMPARED_RANKS)
        .collect();
    let mut diverged = BTreeSet::new();
    for (index, (rank, names)) in whole.iter().enumerate() {
        for (other, other_names) in &whole[index + 1..] {
            if !names.is_subset(other_names) && !other_names.is_subset(names) {
                diverged.insert(*rank);
                diverged.insert(*other);
            }
        }
    }
    diverged
}

/// The heading of the stall inspector's list: `Missing ranks:` (or 0.18's `Stalled ranks:`).
pub(crate) fn stall_list_heading(line: &str) -> bool {
    let line = line.trim_end();
    line.ends_with("Missing ranks:") || line.ends_with("Stalled ranks:")
}

/// Whether a line is one of the list's, `3: [tensor, ...]` (what the normaliser must not take for
/// srun's label).
pub(crate) fn stall_list_line(line: &str) -> bool {
    listed_rank(line.trim()).is_some()
}

/// `3: [tensor, ...]` or `3!: [...]` under `Missing ranks:` (or `Stalled ranks:`): the rank, and the
/// tensors when the list is whole (`None` when Horovod cut it with " ..."), at most one past the
/// names a rank keeps.
fn listed_rank(line: &str) -> Option<(u64, Option<Vec<&str>>)> {
    let (rank, rest) = line.split_once(':')?;
    let rank = rank.strip_suffix('!').unwrap_or(rank);
    let inside = rest.trim_start().strip_prefix('[')?;
    if rank.is_empty() || !rank.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let rank = rank.parse().ok().filter(|rank| *rank < MAX_RANK)?;
    let tensors = inside.strip_suffix(']').filter(|list| !list.ends_with("...")).map(|list| {
        list.split(',').map(str::trim).filter(|name| !name.is_empty()).take(MAX_NAMES_PER_RANK + 1).collect()
    });
    Some((rank, tensors))
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
        let text = "[2021-02-02 21:19:07.345988: W horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 10 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock. \nMissing ranks:\n0: [HorovodAllreduce_grads_0]\n3!: [HorovodAllreduce_grads_0, HorovodAllreduce_grads_1]\nTraceback (most recent call last):\n";
        let facts = parse("f", text);
        assert_eq!(ranks(&facts), [("0".into(), "1".into()), ("3".into(), "1".into())]);
        assert!(facts.iter().all(|f| f.name == "horovod.missing_ranks"));
        assert_eq!(facts[1].evidence[0].line, 4);
    }

    /// horovod/horovod#1652 (Horovod 0.18's `Stalled ranks:` heading): each rank waits on a
    /// broadcast the other never submits, a different graph on each rank.
    #[test]
    fn two_ranks_each_missing_what_the_other_submitted_diverged_horovod1652() {
        let text = "[2020-01-17 08:20:34. 24110: W horovod/common/operations.cc:779] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. \n\
                    Stalled ranks:\n\
                    0: [HorovodBroadcast_acm_vggface2_kernel_0]\n\
                    1: [HorovodBroadcast_acm_webface_kernel_0]\n";
        let facts = parse("f", text);
        assert_eq!(ranks(&facts), [("0".into(), "1".into()), ("1".into(), "1".into())]);
        assert!(facts.iter().all(|f| f.name == "horovod.mismatched_tensors"), "{facts:?}");
        // One rank missing all the other is missing, and more: a rank behind, not a divergence.
        let behind = "Stalled ranks:\n0: [T_a]\n1: [T_a, T_b]\n";
        assert!(parse("f", behind).iter().all(|f| f.name == "horovod.missing_ranks"));
        // A list Horovod cut does not say what the rank is not missing.
        let cut = "Missing ranks:\n0: [T_a, T_b, T_c, T_d, T_e, T_f ...]\n1: [T_g]\n";
        assert!(parse("f", cut).iter().all(|f| f.name == "horovod.missing_ranks"));
        // The per-tensor form says the same thing tensor by tensor.
        let per_tensor = "W horovod/common/operations.cc:588] T_a [missing ranks: 0]\nW horovod/common/operations.cc:588] T_b [missing ranks: 1]\n";
        assert!(parse("f", per_tensor).iter().all(|f| f.name == "horovod.mismatched_tensors"));
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
