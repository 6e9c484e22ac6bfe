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
//! a collective mismatch. Each rank's tensors are a `std::set<std::string>` (stall_inspector.cc
//! since 0.16), printed in byte order, so a list that Horovod cut (" ...", past six tensors) or
//! that reached the input cut (no closing bracket: a terminal's width, a paste) still says what the
//! rank is not missing among the names that sort before its last (horovod/horovod#2285: ranks 0-7
//! miss a state broadcast that rank 8, whose cut list opens with a gradient's all-reduce, does not).

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
    let mut note = |rank: u64, tensors: Option<Listed>, evidence: Evidence| {
        if missing.len() >= MAX_RANKS_KEPT && !missing.contains_key(&rank) {
            return;
        }
        let entry = missing.entry(rank).or_default();
        entry.tensors += 1;
        if entry.evidence.len() < EVIDENCE_PER_RANK {
            entry.evidence.push(evidence);
        }
        match tensors {
            Some(listed) if !entry.unknown => {
                let room = MAX_NAMES_PER_RANK + 1 - entry.names.len();
                entry.names.extend(listed.names.iter().take(room).map(|name| name.to_string()));
                entry.unknown = entry.names.len() > MAX_NAMES_PER_RANK;
                if let Some(partial) = listed.partial {
                    entry.partials.insert(partial.to_string());
                }
                if !listed.whole {
                    // The last name printed: what sorts before it and is not listed is not missing.
                    let last = listed.partial.or(listed.names.last().copied()).unwrap_or("");
                    let reach = entry.reach.get_or_insert_with(|| last.to_string());
                    if last < reach.as_str() {
                        *reach = last.to_string();
                    }
                }
            }
            _ => entry.unknown = true,
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
                note(rank, tensor.map(|name| Listed { names: vec![name], partial: None, whole: true }), evidence());
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
/// those tensors, and the evidence.
#[derive(Default)]
struct MissingRank {
    tensors: usize,
    /// Whole names the rank is missing.
    names: BTreeSet<String>,
    /// The last names of lists the input cut inside a name: the rank misses a tensor whose name
    /// starts so.
    partials: BTreeSet<String>,
    /// For a list that was cut, the lowest of the last names printed: a name that sorts before it
    /// and is not listed is not missing. `None` while every list of the rank was whole.
    reach: Option<String>,
    /// Nothing can be said of what the rank is not missing: a form that names no tensor, or more
    /// names than are kept.
    unknown: bool,
    evidence: Vec<Evidence>,
}

impl MissingRank {
    /// Whether the rank is known not to miss a tensor named `name` (or, for `prefix`, any tensor
    /// whose name starts with it).
    fn not_missing(&self, name: &str, prefix: bool) -> bool {
        if self.unknown {
            return false;
        }
        let named = |other: &str| if prefix { other.starts_with(name) } else { other == name };
        if self.names.iter().any(|other| named(other))
            || self.partials.iter().any(|partial| partial.starts_with(name) || name.starts_with(partial.as_str()))
        {
            return false;
        }
        match &self.reach {
            None => true,
            Some(reach) => name < reach.as_str() && !(prefix && reach.starts_with(name)),
        }
    }

    /// Whether this rank misses a tensor that `other` is known not to miss.
    fn misses_what_is_not_missed_by(&self, other: &MissingRank) -> bool {
        !self.unknown
            && (self.names.iter().any(|name| other.not_missing(name, false))
                || self.partials.iter().any(|partial| other.not_missing(partial, true)))
    }
}

/// The ranks of which each is missing a tensor that another such rank is not (see the module's
/// comment), compared over the first `MAX_COMPARED_RANKS` ranks that name a tensor.
fn diverged_ranks(missing: &BTreeMap<u64, MissingRank>) -> BTreeSet<u64> {
    let named: Vec<(u64, &MissingRank)> = missing
        .iter()
        .filter(|(_, entry)| !entry.unknown && (!entry.names.is_empty() || !entry.partials.is_empty()))
        .map(|(rank, entry)| (*rank, entry))
        .take(MAX_COMPARED_RANKS)
        .collect();
    let mut diverged = BTreeSet::new();
    for (index, (rank, entry)) in named.iter().enumerate() {
        for (other, other_entry) in &named[index + 1..] {
            if entry.misses_what_is_not_missed_by(other_entry) && other_entry.misses_what_is_not_missed_by(entry) {
                diverged.insert(*rank);
                diverged.insert(*other);
            }
        }
    }
    diverged
}

/// One rank's line of the stall list: the whole names, the last name where the input cut the line
/// inside it, and whether the list is whole (closed, and not cut by Horovod's " ...").
struct Listed<'a> {
    names: Vec<&'a str>,
    partial: Option<&'a str>,
    whole: bool,
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
/// tensors it lists (at most one past the names a rank keeps), whole or cut.
fn listed_rank(line: &str) -> Option<(u64, Option<Listed<'_>>)> {
    let (rank, rest) = line.split_once(':')?;
    let rank = rank.strip_suffix('!').unwrap_or(rank);
    let inside = rest.trim_start().strip_prefix('[')?;
    if rank.is_empty() || !rank.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let rank = rank.parse().ok().filter(|rank| *rank < MAX_RANK)?;
    let closed = inside.strip_suffix(']');
    let (list, horovod_cut) = match closed {
        Some(list) => match list.strip_suffix("...") {
            Some(list) => (list, true),
            None => (list, false),
        },
        None => (inside, false),
    };
    let mut names: Vec<&str> =
        list.split(',').map(str::trim).filter(|name| !name.is_empty()).take(MAX_NAMES_PER_RANK + 1).collect();
    let partial = if closed.is_none() { names.pop() } else { None };
    Some((rank, Some(Listed { names, partial, whole: closed.is_some() && !horovod_cut })))
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
        // A list Horovod cut does not say what the rank misses past its last name...
        let cut = "Missing ranks:\n0: [T_a, T_b, T_c, T_d, T_e, T_f ...]\n1: [T_g]\n";
        assert!(parse("f", cut).iter().all(|f| f.name == "horovod.missing_ranks"));
        // ...but it is printed in order, so what sorts before its last name and is absent is not
        // missing.
        let sorted = "Missing ranks:\n0: [T_a, T_b, T_c, T_d, T_e, T_f ...]\n1: [A_0]\n";
        assert!(parse("f", sorted).iter().all(|f| f.name == "horovod.mismatched_tensors"), "{sorted}");
        // The per-tensor form says the same thing tensor by tensor.
        let per_tensor = "W horovod/common/operations.cc:588] T_a [missing ranks: 0]\nW horovod/common/operations.cc:588] T_b [missing ranks: 1]\n";
        assert!(parse("f", per_tensor).iter().all(|f| f.name == "horovod.mismatched_tensors"));
    }

    /// horovod/horovod#2285 (heldout432): after an elastic scale-up, ranks 0-7 miss the new rank's
    /// state broadcast, and rank 8, whose line the terminal cut, misses a gradient's all-reduce
    /// that sorts after it, so not the broadcast. A cut name that sorts first says nothing of it.
    #[test]
    fn a_list_cut_by_the_input_still_says_what_sorts_before_it() {
        let text = "Fri Sep 18 03:11:09 2020[0]<stderr>:Missing ranks:\n\
                    Fri Sep 18 03:11:09 2020[0]<stderr>:0: [broadcast_object_fn.sz]\n\
                    Fri Sep 18 03:11:09 2020[0]<stderr>:7: [broadcast_object_fn.sz]\n\
                    Fri Sep 18 03:11:09 2020[0]<stderr>:8: [training/DistributedAdadelta_Allreduce/cond/HorovodAllreduce_grad_$\n";
        let (stripped, _, _) = crate::triage::prefix::strip_input(text);
        let facts = parse("f", &stripped);
        assert_eq!(facts.len(), 3, "{facts:?}");
        assert!(facts.iter().all(|f| f.name == "horovod.mismatched_tensors"), "{facts:?}");
        let first = "Missing ranks:\n0: [T_b]\n8: [T_a_grad_$\n";
        assert!(parse("f", first).iter().all(|f| f.name == "horovod.missing_ranks"), "{first}");
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
