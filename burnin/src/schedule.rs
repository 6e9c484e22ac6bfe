//! Pairwise schedules by the circle method (round-robin tournament, Kirkman 1847; e.g. Knuth TAOCP
//! 7.2.1.4): with n hosts (plus one "bye" when n is odd) there are n-1 rounds (n rounds when odd) in
//! which every host is in at most one pair, and every unordered pair meets exactly once.

/// Rounds of disjoint pairs over hosts `0..hosts`. Each pair is `(a, b)` with `a < b`.
pub fn circle_rounds(hosts: usize) -> Vec<Vec<(usize, usize)>> {
    if hosts < 2 {
        return Vec::new();
    }
    // Odd counts get a phantom host; whoever meets it sits the round out (the bye).
    let slots = if hosts % 2 == 0 { hosts } else { hosts + 1 };
    let mut ring: Vec<usize> = (0..slots).collect();
    let mut rounds = Vec::with_capacity(slots - 1);
    for _ in 0..slots - 1 {
        let mut round = Vec::with_capacity(slots / 2);
        for i in 0..slots / 2 {
            let (a, b) = (ring[i], ring[slots - 1 - i]);
            if a < hosts && b < hosts {
                round.push((a.min(b), a.max(b)));
            }
        }
        rounds.push(round);
        // Keep slot 0 fixed and rotate the others one place.
        let last = ring.pop().unwrap_or(0);
        ring.insert(1, last);
    }
    rounds
}

/// Rounds by leaf over hosts `0..leaves.len()` (`leaves[i]` the leaf of host i): first every pair
/// within each leaf (the leaves' circle rounds side by side, so a round loads every leaf's
/// downlinks at once), then, for each round of the circle method over the leaves, host k of one leaf
/// with host k + `shift` (modulo its size) of its partner leaf (k in leaf order), which crosses the
/// spine on every leaf-to-leaf path. Hosts beyond the smaller leaf's size sit those cross rounds
/// out. The coordinator shifts by the pass (soak passes), so over as many passes as a leaf has
/// hosts every host meets every host of every other leaf. Pairs are `(a, b)` with `a < b`, every
/// host in at most one pair per round.
pub fn leaf_rounds(leaves: &[&str], shift: usize) -> Vec<Vec<(usize, usize)>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut position: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (host, leaf) in leaves.iter().enumerate() {
        let index = *position.entry(leaf).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[index].push(host);
    }
    let ordered = |a: usize, b: usize| (a.min(b), a.max(b));
    let mut rounds: Vec<Vec<(usize, usize)>> = Vec::new();
    let within: Vec<Vec<Vec<(usize, usize)>>> = groups.iter().map(|g| circle_rounds(g.len())).collect();
    let deepest = within.iter().map(Vec::len).max().unwrap_or(0);
    for round in 0..deepest {
        let pairs: Vec<(usize, usize)> = groups
            .iter()
            .zip(&within)
            .flat_map(|(group, rounds)| {
                rounds.get(round).into_iter().flatten().map(|&(a, b)| ordered(group[a], group[b]))
            })
            .collect();
        rounds.push(pairs);
    }
    for leaf_round in circle_rounds(groups.len()) {
        let pairs: Vec<(usize, usize)> = leaf_round
            .iter()
            .flat_map(|&(x, y)| {
                let (from, to) = (&groups[x], &groups[y]);
                // k + shift modulo the partner's size is a different host for each k below it.
                (0..from.len().min(to.len())).map(move |k| ordered(from[k], to[(k + shift) % to.len()]))
            })
            .collect();
        if !pairs.is_empty() {
            rounds.push(pairs);
        }
    }
    rounds
}

/// Pair each of `candidates` with a partner from `partners` it has not met (`met(candidate,
/// partner)`), each partner used once: one retest round in which every host is in one pair at most.
/// Candidates with no fresh partner left are returned in the second list.
pub fn fresh_partners(
    candidates: &[usize],
    partners: &[usize],
    met: impl Fn(usize, usize) -> bool,
) -> (Vec<(usize, usize)>, Vec<usize>) {
    let mut free: Vec<usize> = partners.iter().copied().filter(|p| !candidates.contains(p)).collect();
    let mut pairs = Vec::new();
    let mut unpaired = Vec::new();
    for &candidate in candidates {
        match free.iter().position(|&p| !met(candidate, p)) {
            Some(index) => pairs.push((candidate, free.remove(index))),
            None => unpaired.push(candidate),
        }
    }
    (pairs, unpaired)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn leaf_rounds_meet_every_pair_of_a_leaf_and_every_leaf_pair_once_per_position() {
        // Three leaves of 4, 4 and 3 hosts, interleaved in the host list.
        let leaves = ["a", "b", "a", "c", "b", "a", "c", "b", "a", "c", "b"];
        let rounds = leaf_rounds(&leaves, 0);
        let mut seen = BTreeSet::new();
        for round in &rounds {
            let mut busy = BTreeSet::new();
            for &(a, b) in round {
                assert!(a < b && busy.insert(a) && busy.insert(b), "host twice in {round:?}");
                assert!(seen.insert((a, b)), "{a}-{b} met twice");
            }
        }
        let within = |leaf: &str| {
            let hosts: Vec<usize> = (0..leaves.len()).filter(|&h| leaves[h] == leaf).collect();
            hosts.iter().flat_map(|&a| hosts.iter().filter(move |&&b| a < b).map(move |&b| (a, b))).collect::<Vec<_>>()
        };
        for leaf in ["a", "b", "c"] {
            assert!(within(leaf).iter().all(|p| seen.contains(p)), "leaf {leaf} not all-pairs");
        }
        // Cross pairs: host k of a leaf with host k of each other leaf (a and b: 4 each; c: 3).
        let cross = seen.iter().filter(|(a, b)| leaves[*a] != leaves[*b]).count();
        assert_eq!(cross, 4 + 3 + 3);
        // Rounds: 3 within (4 hosts), 3 across (3 leaves, odd: one sits out each round).
        assert_eq!(rounds.len(), 6);
        // 4,096 hosts in 128 leaves of 32: 31 + 127 rounds instead of 4,095.
        let fleet: Vec<String> = (0..4096).map(|h| format!("leaf{}", h / 32)).collect();
        let names: Vec<&str> = fleet.iter().map(String::as_str).collect();
        let rounds = leaf_rounds(&names, 0);
        assert_eq!(rounds.len(), 31 + 127);
        assert!(rounds.iter().all(|r| r.len() == 2048));
    }

    #[test]
    fn shifted_passes_meet_every_cross_leaf_pair_once_over_a_leafs_size() {
        // Leaves of 4, 4 and 3 hosts: four passes meet every pair across leaves a and b once, and
        // each pass still has every host in one pair per round at most.
        let leaves = ["a", "b", "a", "c", "b", "a", "c", "b", "a", "c", "b"];
        let mut across = BTreeSet::new();
        for shift in 0..4 {
            let rounds = leaf_rounds(&leaves, shift);
            for round in &rounds {
                let mut busy = BTreeSet::new();
                assert!(round.iter().all(|&(a, b)| busy.insert(a) && busy.insert(b)), "shift {shift}: {round:?}");
            }
            assert_eq!(rounds.len(), 6, "a shift changes who meets, not how many rounds");
            for &(a, b) in rounds.iter().flatten() {
                if [leaves[a], leaves[b]] == ["a", "b"] || [leaves[a], leaves[b]] == ["b", "a"] {
                    assert!(across.insert((a, b)), "shift {shift}: {a}-{b} met in an earlier pass");
                }
            }
        }
        assert_eq!(across.len(), 16, "every host of leaf a with every host of leaf b");
    }

    fn assert_round_robin(hosts: usize) {
        let rounds = circle_rounds(hosts);
        let mut seen = BTreeSet::new();
        for (index, round) in rounds.iter().enumerate() {
            let mut busy = BTreeSet::new();
            for &(a, b) in round {
                assert!(a < b && b < hosts, "n={hosts}: bad pair ({a},{b})");
                assert!(busy.insert(a) && busy.insert(b), "n={hosts}: a host twice in round {index}: {round:?}");
                assert!(seen.insert((a, b)), "n={hosts}: pair ({a},{b}) twice");
            }
            // Every host plays each round, except the one with the bye when n is odd.
            assert_eq!(busy.len(), hosts - hosts % 2, "n={hosts} round {index}: {round:?}");
        }
        assert_eq!(seen.len(), hosts * (hosts - 1) / 2, "n={hosts}: every pair exactly once");
        let expected_rounds = if hosts % 2 == 0 { hosts - 1 } else { hosts };
        assert_eq!(rounds.len(), expected_rounds);
    }

    #[test]
    fn every_pair_meets_once_and_no_host_twice_per_round() {
        for hosts in 2..=17 {
            assert_round_robin(hosts);
        }
        assert!(circle_rounds(0).is_empty());
        assert!(circle_rounds(1).is_empty());
    }

    #[test]
    fn odd_counts_give_each_host_exactly_one_bye() {
        let rounds = circle_rounds(5);
        let mut byes = vec![0; 5];
        for round in &rounds {
            for (host, count) in byes.iter_mut().enumerate() {
                if !round.iter().any(|&(a, b)| a == host || b == host) {
                    *count += 1;
                }
            }
        }
        assert_eq!(byes, vec![1; 5]);
    }

    #[test]
    fn retest_partners_are_fresh_and_used_once() {
        let met = |a: usize, b: usize| (a, b) == (1, 0) || (a, b) == (1, 2);
        let (pairs, unpaired) = fresh_partners(&[1, 3], &[0, 1, 2, 3, 4], met);
        assert_eq!(pairs, vec![(1, 4), (3, 0)]);
        assert!(unpaired.is_empty());
        let (pairs, unpaired) = fresh_partners(&[1], &[0, 2], met);
        assert!(pairs.is_empty());
        assert_eq!(unpaired, vec![1]);
    }
}
