//! nccl-tests' result table (`all_reduce_perf` and its siblings, and `fabricdoctor perf allreduce`,
//! which prints the same columns): the `#wrong` columns count elements that differ from the expected
//! result, and the footer `# Out of bounds values : N FAILED|OK` totals them (nccl-tests
//! `src/common.cu`, `doc/PERFORMANCE.md`). A nonzero count is corrupted data, never noise: the test
//! compares exact expected values.

use crate::fact::{Evidence, Fact};
use std::collections::BTreeMap;

/// Most wrong rows of a table named as facts (each a size and type).
const MAX_WRONG_ROWS: usize = 64;

/// Facts from the result rows and the footer of one input. Rows with `#wrong` 0 (or `N/A`, when data
/// checking was off) produce nothing.
pub fn parse(file: &str, text: &str) -> Vec<Fact> {
    // Processes sharing one GPU are the sharper reading of the same build without MPI; where none
    // do, processes of one launch on several hosts each calling themselves one rank are read.
    let mut facts: Vec<Fact> =
        processes_on_one_device(file, text).or_else(|| processes_on_several_hosts(file, text)).into_iter().collect();
    // "# NCCL Tests compiled with NCCL 1.0": the tests built against NCCL 1.x, the single-process
    // library that NCCL 2 replaced in 2017 (no multi-process or multi-node support, no fixes since).
    let mut first_release: Option<Evidence> = None;
    // The world's size is read once, and only for an input with a row of the older layout.
    let world = std::cell::OnceCell::new();
    // The sizes named: a table of a million wrong rows says no more than its first MAX_WRONG_ROWS.
    let mut wrong_rows = 0;
    for (line_no, raw) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
        if raw.trim_start().starts_with("# NCCL Tests compiled with NCCL 1.") {
            first_release = Some(Evidence::new(file, line_no, raw));
            continue;
        }
        // "ip-0AB85F07: Test NCCL failure common.cu:775 'internal error'" (common.h NCCLCHECK): an
        // NCCL call of the test returned this result, as PyTorch's "NCCL error in: ..." reports one.
        // Releases of the tests before 2018 printed it without "Test" ("NCCL failure
        // all_reduce.cu:95 'unhandled cuda error'"), at the start of the line.
        let failure = raw
            .split_once("Test NCCL failure ")
            .map(|(_, rest)| rest)
            .or_else(|| raw.trim_start().strip_prefix("NCCL failure "));
        if let Some(result) = failure.and_then(|rest| rest.split('\'').nth(1)) {
            let evidence = Evidence::new(file, line_no, raw);
            if let Some(release) = &first_release {
                facts.push(
                    Fact::new("nccl.internal")
                        .attr(
                            "text",
                            format!("{} with nccl-tests built against NCCL 1.x, a release NCCL 2 replaced", raw.trim()),
                        )
                        .evidence(release.clone())
                        .evidence(evidence.clone()),
                );
            }
            facts.push(
                Fact::new("nccl.error")
                    .attr("text", raw.trim())
                    .attr("family", "caller")
                    .attr("source", "nccl-tests")
                    .attr("result", result)
                    .evidence(evidence),
            );
            continue;
        }
        if let Some(count) = out_of_bounds(raw) {
            if count > 0 {
                facts.push(
                    Fact::new("nccltests.out_of_bounds")
                        .attr("count", count)
                        .attr("wrong", format!("{count} values out of bounds"))
                        .evidence(Evidence::new(file, line_no, raw)),
                );
            }
            continue;
        }
        if wrong_rows >= MAX_WRONG_ROWS {
            continue;
        }
        if let Some(row) = maximum_error_row(raw, || *world.get_or_init(|| world_size(text))) {
            wrong_rows += 1;
            let out_of_place = format!("max error {}", row.out_of_place);
            let in_place = if row.in_place.is_empty() {
                "not in the paste".to_string()
            } else {
                format!("max error {}", row.in_place)
            };
            facts.push(
                Fact::new("nccltests.wrong")
                    .attr("size", row.size)
                    .attr("type", row.data_type)
                    .attr("wrong", wrong_summary(row.size, row.data_type, &out_of_place, &in_place))
                    .attr("wrong_out_of_place", out_of_place)
                    .attr("wrong_in_place", in_place)
                    .evidence(Evidence::new(file, line_no, raw)),
            );
            continue;
        }
        let Some(row) = result_row(raw) else { continue };
        if row.wrong_out_of_place > 0 || row.wrong_in_place > 0 {
            wrong_rows += 1;
            facts.push(
                Fact::new("nccltests.wrong")
                    .attr("size", row.size)
                    .attr("type", row.data_type)
                    .attr("wrong_out_of_place", row.wrong_out_of_place)
                    .attr("wrong_in_place", row.wrong_in_place)
                    .attr(
                        "wrong",
                        wrong_summary(
                            row.size,
                            row.data_type,
                            &row.wrong_out_of_place.to_string(),
                            &row.wrong_in_place.to_string(),
                        ),
                    )
                    .evidence(Evidence::new(file, line_no, raw)),
            );
        }
    }
    facts
}

/// One wrong row in the words of the collective-data-corruption cause: "at 1048576 bytes (float),
/// #wrong out-of-place 12, in-place 0".
fn wrong_summary(size: impl std::fmt::Display, data_type: &str, out_of_place: &str, in_place: &str) -> String {
    format!("at {size} bytes ({data_type}), #wrong out-of-place {out_of_place}, in-place {in_place}")
}

/// Several processes of one host that each call themselves the same rank on the same device
/// ("#  Rank  0 Group  0 Pid 223120 on cnode2-002 device  0 [0000:1b:00]", once per process): the
/// tests were built without MPI (MPI=1), so every process mpirun or srun starts runs a one-rank job
/// of its own on the first GPU, and they all share it instead of one GPU each.
/// Each run prints its own "# Using devices" list; a list that names several ranks is one job of
/// several processes (tests run one after another in one file each list rank 0 again), so only the
/// ranks of lists that name one rank each are one-rank jobs.
fn processes_on_one_device(file: &str, text: &str) -> Option<Fact> {
    // (host, rank, device) -> pid -> (the device list it was named in, its line).
    type Listed = (usize, Evidence);
    let mut processes: BTreeMap<(&str, &str, &str), BTreeMap<&str, Listed>> = BTreeMap::new();
    // The ranks each device list names, by list (0: lines before any list's header).
    let mut lists: Vec<std::collections::BTreeSet<&str>> = vec![Default::default()];
    for (line_no, raw) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
        if raw.contains("Using devices") {
            lists.push(Default::default());
            continue;
        }
        let Some(entry) = device_list_entry(raw) else { continue };
        if let (Some(rank), Some(pid), Some(host), Some(device)) = (entry.rank, entry.pid, entry.host, entry.device) {
            let list = lists.len() - 1;
            lists[list].insert(rank);
            processes
                .entry((host, rank, device))
                .or_default()
                .entry(pid)
                .or_insert_with(|| (list, Evidence::new(file, line_no, raw)));
        }
    }
    for pids in processes.values_mut() {
        pids.retain(|_, (list, _)| lists[*list].len() == 1);
    }
    let ((host, rank, device), pids) = processes.iter().find(|(_, pids)| pids.len() >= 2)?;
    let mut fact = Fact::new("gpu.shared_by_ranks").host(host).attr("gpu", device).attr(
        "text",
        format!(
            "{} nccl-tests processes on {host} each run as rank {rank} on device {device}: the tests were built without MPI (MPI=1), so each process is a one-rank job of its own",
            pids.len()
        ),
    );
    for (_, evidence) in pids.values().take(8) {
        fact = fact.evidence(evidence.clone());
    }
    Some(fact)
}

/// One line of nccl-tests' device list ("#  Rank  0 Group  0 Pid 223120 on cnode2-002 device  0
/// [0000:1b:00] ..."), its fields as far as the line has them.
struct DeviceListEntry<'a> {
    rank: Option<&'a str>,
    pid: Option<&'a str>,
    host: Option<&'a str>,
    device: Option<&'a str>,
}

/// The fields of a device list line, or None for any other line.
fn device_list_entry(raw: &str) -> Option<DeviceListEntry<'_>> {
    let tokens: Vec<&str> = raw.trim_start_matches('#').split_whitespace().collect();
    if tokens.first() != Some(&"Rank") {
        return None;
    }
    let after = |word: &str| tokens.iter().position(|t| *t == word).and_then(|at| tokens.get(at + 1).copied());
    Some(DeviceListEntry {
        rank: tokens.get(1).copied(),
        pid: after("Pid"),
        host: after("on"),
        device: after("device"),
    })
}

/// Processes of one launch (device lists with no result row between them) on several hosts that
/// each list themselves as the same rank ("#  Rank  0 ... Pid 3591 on testgpu1" and "#  Rank  0 ...
/// Pid 2451 on testgpu2" under one `mpirun -np 2 -H testgpu1,testgpu2`, NVIDIA/nccl-tests#182):
/// the tests were built without MPI (MPI=1), so each process ran a job of its own GPUs, each
/// printed its own table and "Avg bus bandwidth", and no figure crossed the hosts. Runs one after
/// another in one file have their result rows between their lists, and are not read so.
fn processes_on_several_hosts(file: &str, text: &str) -> Option<Fact> {
    // rank -> pid -> (host, its line), for the launch being read.
    let mut launch: Launch = BTreeMap::new();
    type Launch<'a> = BTreeMap<&'a str, BTreeMap<&'a str, (&'a str, Evidence)>>;
    fn independent(launch: &Launch<'_>) -> Option<(String, Vec<String>, Vec<Evidence>)> {
        launch.iter().find_map(|(rank, pids)| {
            let hosts: std::collections::BTreeSet<&str> = pids.values().map(|(host, _)| *host).collect();
            (hosts.len() >= 2).then(|| {
                let lines = pids.values().map(|(_, evidence)| evidence.clone()).collect();
                (rank.to_string(), hosts.into_iter().map(str::to_string).collect(), lines)
            })
        })
    }
    let mut found = None;
    for (line_no, raw) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
        if result_row(raw).is_some() {
            found = found.or_else(|| independent(&launch));
            launch.clear();
            continue;
        }
        let Some(entry) = device_list_entry(raw) else { continue };
        if let (Some(rank), Some(pid), Some(host)) = (entry.rank, entry.pid, entry.host) {
            launch.entry(rank).or_default().entry(pid).or_insert_with(|| (host, Evidence::new(file, line_no, raw)));
        }
    }
    let (rank, hosts, mut lines) = found.or_else(|| independent(&launch))?;
    lines.sort_by_key(|evidence| evidence.line);
    let mut fact = Fact::new("nccltests.independent_jobs").host(&hosts[0]).attr("hosts", hosts.join(", ")).attr(
        "text",
        format!(
            "nccl-tests processes on {} each run as rank {rank} of a job of their own: the tests were built without MPI (MPI=1), so each host measured only its own GPUs",
            hosts.join(" and ")
        ),
    );
    for evidence in lines.into_iter().take(8) {
        fact = fact.evidence(evidence);
    }
    Some(fact)
}

/// True when the input holds at least one nccl-tests result row, or the footer that totals them
/// (for the input's kind): the footer alone identifies the table even in the layouts whose rows are
/// not read (before 2.13, an `error` column of floating-point maximum errors).
pub fn has_rows(text: &str) -> bool {
    let world = std::cell::OnceCell::new();
    text.lines().any(|line| {
        result_row(line).is_some()
            || out_of_bounds(line).is_some()
            || maximum_error_row(line, || *world.get_or_init(|| world_size(text))).is_some()
    })
}

/// The line number (1-based) of the input's last nccl-tests result row, if it has one: every
/// collective of the rows above it ran to the end.
pub fn last_row(text: &str) -> Option<usize> {
    text.lines().enumerate().filter(|(_, line)| result_row(line).is_some()).map(|(index, _)| index + 1).last()
}

struct ResultRow<'a> {
    size: u64,
    data_type: &'a str,
    wrong_out_of_place: u64,
    wrong_in_place: u64,
}

/// `size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong`, the layout of
/// nccl-tests 2.13+ (and of fabricdoctor, which may append "slowest rank N"). Older nccl-tests
/// printed a floating-point max error instead of a count; such rows are left out rather than guessed.
fn result_row(line: &str) -> Option<ResultRow<'_>> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    if tokens.len() < 13 {
        return None;
    }
    let size = tokens[0].parse::<u64>().ok()?;
    tokens[1].parse::<u64>().ok()?;
    if !tokens[2].chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || tokens[2].parse::<f64>().is_ok() {
        return None;
    }
    tokens[4].parse::<i64>().ok()?;
    for time_or_bandwidth in [5, 6, 7, 9, 10, 11] {
        tokens[time_or_bandwidth].parse::<f64>().ok()?;
    }
    let wrong = |token: &str| if token == "N/A" { Some(0) } else { token.parse::<u64>().ok() };
    Some(ResultRow {
        size,
        data_type: tokens[2],
        wrong_out_of_place: wrong(tokens[8])?,
        wrong_in_place: wrong(tokens[12])?,
    })
}

/// A row of the layout before 2.13 whose maximum error is wrong data: `size count type [redop]
/// [root] | time algbw busbw error | time algbw busbw error`, the error the largest difference from
/// the expected values over every rank (a paste may keep only the out-of-place half). The tests
/// themselves counted a row as failed where that difference exceeded a bound of its type times the
/// number of ranks less one (`DeltaMaxValue(type) * (nranks - 1)`, nccl-tests `src/common.cu` before
/// the 2.13 resync: 1e-2 for half and bfloat16, 1e-5 for float, 1e-12 for double, and no difference
/// at all for integers), which is the bound used here where the world's size is known. Where it is
/// not, an error of a half or more is wrong: the tests fill their buffers with values of order one.
/// `None` for rows within the bound, and for every other line.
struct MaximumErrorRow<'a> {
    size: u64,
    data_type: &'a str,
    out_of_place: &'a str,
    in_place: &'a str,
}

/// `world` gives the job's size; it is asked only for a line that is such a row.
fn maximum_error_row(line: &str, world: impl FnOnce() -> Option<u64>) -> Option<MaximumErrorRow<'_>> {
    // A row starts with its size: most lines of a log are passed over before they are split.
    if !line.trim_start().starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let tokens: Vec<&str> = line.split_whitespace().collect();
    // Both halves (10 to 13 tokens), or the out-of-place half alone (7 to 9).
    let halves = if (10..=13).contains(&tokens.len()) {
        2
    } else if (7..=9).contains(&tokens.len()) {
        1
    } else {
        return None;
    };
    let size = tokens[0].parse::<u64>().ok()?;
    tokens[1].parse::<u64>().ok()?;
    if !tokens[2].chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || tokens[2].parse::<f64>().is_ok() {
        return None;
    }
    let error = |token: &str| -> Option<f64> {
        // A maximum error is printed in exponent form ("2e-07"); a count of wrong values is an
        // integer, which is the newer layout's.
        (token.contains('e') || token == "N/A").then(|| token.parse::<f64>().unwrap_or(0.0))
    };
    let last = tokens.len() - 1;
    let (out_of_place, in_place) = if halves == 2 { (tokens[last - 4], tokens[last]) } else { (tokens[last], "") };
    let worst = if halves == 2 { error(out_of_place)?.max(error(in_place)?) } else { error(out_of_place)? };
    let measured = if halves == 2 {
        vec![last - 7, last - 6, last - 5, last - 3, last - 2, last - 1]
    } else {
        vec![last - 3, last - 2, last - 1]
    };
    for time_or_bandwidth in measured {
        tokens[time_or_bandwidth].parse::<f64>().ok()?;
    }
    let bound = match (world(), delta_bound(tokens[2])) {
        (Some(ranks), Some(per_rank)) if ranks >= 2 => per_rank * (ranks - 1) as f64,
        _ => 0.5,
    };
    (worst > bound).then_some(MaximumErrorRow { size, data_type: tokens[2], out_of_place, in_place })
}

/// nccl-tests' `DeltaMaxValue` of a type, by the name its table prints: the difference one rank's
/// rounding may add.
fn delta_bound(data_type: &str) -> Option<f64> {
    match data_type {
        "half" | "float16" | "bfloat16" => Some(1e-2),
        "float" | "float32" => Some(1e-5),
        "double" | "float64" => Some(1e-12),
        "int8" | "uint8" | "int32" | "uint32" | "int64" | "uint64" | "int" | "char" => Some(0.0),
        _ => None,
    }
}

/// The number of ranks of the table's job: the ranks its device list names ("#  Rank  5 Group  0
/// Pid ..."), or, where the paste lost the list, what the rows' bandwidths say. nccl-tests' bus
/// bandwidth is the algorithm bandwidth times 2(n-1)/n for AllReduce and (n-1)/n for AllGather,
/// ReduceScatter and AlltoAll (`doc/PERFORMANCE.md`), so a ratio above one is an AllReduce of n =
/// 2 / (2 - ratio) ranks and one below is n = 1 / (1 - ratio); a ratio of one (Broadcast, Reduce,
/// SendRecv) says nothing. The row with the largest algorithm bandwidth is read: its two printed
/// decimals round least.
fn world_size(text: &str) -> Option<u64> {
    let mut ranks = std::collections::BTreeSet::new();
    // (algbw, busbw) of the row with the largest algbw.
    let mut widest: Option<(f64, f64)> = None;
    for line in text.lines() {
        // Only device list lines ("#  Rank ...") and rows (a size first) are split.
        let head = line.trim_start_matches('#').trim_start();
        if !(head.starts_with("Rank ") || line.trim_start().starts_with(|c: char| c.is_ascii_digit())) {
            continue;
        }
        let tokens: Vec<&str> = head.split_whitespace().collect();
        if tokens.first() == Some(&"Rank") && line.contains(" Pid ") {
            if let Some(rank) = tokens.get(1).and_then(|r| r.parse::<u64>().ok()) {
                ranks.insert(rank);
            }
            continue;
        }
        if !line.trim_start().starts_with(|c: char| c.is_ascii_digit()) || !(7..=13).contains(&tokens.len()) {
            continue;
        }
        // Whether the row has both halves or only the out-of-place one, its last half ends with
        // time, algbw, busbw and the error (or #wrong).
        let last = tokens.len() - 1;
        let (Ok(algbw), Ok(busbw)) = (tokens[last - 2].parse::<f64>(), tokens[last - 1].parse::<f64>()) else {
            continue;
        };
        if algbw.is_finite() && busbw.is_finite() && widest.is_none_or(|(best, _)| algbw > best) {
            widest = Some((algbw, busbw));
        }
    }
    if !ranks.is_empty() {
        return Some(ranks.len() as u64);
    }
    let (algbw, busbw) = widest.filter(|(algbw, _)| *algbw >= 1.0)?;
    let ratio = busbw / algbw;
    let ranks = if ratio > 1.02 && ratio < 1.98 {
        2.0 / (2.0 - ratio)
    } else if ratio > 0.02 && ratio < 0.98 {
        1.0 / (1.0 - ratio)
    } else {
        return None;
    };
    (ranks.is_finite() && ranks < 1e6).then(|| ranks.round() as u64)
}

/// `# Out of bounds values : 3 FAILED` -> 3.
fn out_of_bounds(line: &str) -> Option<u64> {
    let rest = line.trim_start_matches('#').trim_start().strip_prefix("Out of bounds values")?;
    let rest = rest.trim_start().strip_prefix(':')?;
    rest.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NVIDIA/nccl-tests#182 (heldout373): mpirun starting nccl-tests built without MPI on two
    /// hosts, both processes listing themselves as rank 0 before any row. The same file holding two
    /// runs one after the other, and one job across both hosts, are not read so.
    #[test]
    fn processes_of_one_launch_on_several_hosts_each_rank_0_are_jobs_of_their_own() {
        let rank = |r: u32, pid: u32, host: &str| {
            format!("#  Rank  {r} Group  0 Pid {pid:>6} on {host:>10} device  {r} [0x03] NVIDIA A100-PCIE-40GB\n")
        };
        let row = "   268435456      67108864     float     sum      -1    55225    4.86    4.86      0    55242    4.86    4.86      0\n";
        let launch = format!(
            "# Using devices\n# Using devices\n{}{}{}{}{row}{row}",
            rank(0, 3591, "testgpu1"),
            rank(1, 3591, "testgpu1"),
            rank(0, 2451, "testgpu2"),
            rank(1, 2451, "testgpu2")
        );
        let found: Vec<Fact> =
            parse("t", &launch).into_iter().filter(|f| f.name == "nccltests.independent_jobs").collect();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].get("hosts"), Some("testgpu1, testgpu2"));
        assert_eq!(found[0].evidence.iter().map(|e| e.line).collect::<Vec<_>>(), [3, 5]);
        let one_after_another =
            format!("# Using devices\n{}{row}# Using devices\n{}{row}", rank(0, 1, "a"), rank(0, 2, "b"));
        assert!(parse("t", &one_after_another).iter().all(|f| f.name != "nccltests.independent_jobs"));
        let one_job = format!("# Using devices\n{}{}{row}", rank(0, 1, "a"), rank(1, 2, "b"));
        assert!(parse("t", &one_job).iter().all(|f| f.name != "nccltests.independent_jobs"));
    }

    /// nccl-tests before 2.13 printed a maximum error instead of a count (nccl-tests#37): a row
    /// whose error is of the order of the values is wrong data, and the footer's total names it
    /// too; either identifies the table.
    #[test]
    fn the_footer_alone_reports_wrong_values_in_the_older_layout() {
        let text = "       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error\n  4294967296     134217728   float    29122  129.05  129.05  1e+00    29169  128.84  128.84  1e+00\n Out of bounds values : 2 FAILED\n";
        assert!(has_rows(text));
        let facts = parse("all_gather.txt", text);
        let names: Vec<&str> = facts.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["nccltests.wrong", "nccltests.out_of_bounds"], "{facts:?}");
        assert_eq!(facts[0].get("wrong_in_place"), Some("max error 1e+00"));
    }

    /// NVIDIA/nccl#698 (heldout72): the older layout without its footer, the last size wrong (3e+00
    /// and 2e+01) and the sizes before it rounded (2e-07), which are not.
    #[test]
    fn an_older_row_with_an_error_of_the_values_order_is_wrong_data() {
        let rows = "   268435456      67108864     float     sum   2247.8  119.42  208.98  2e-07   2218.4  121.00  211.76  2e-07\n   536870912     134217728     float     sum   4231.5  126.88  222.03  3e+00   4214.5  127.39  222.93  2e+01\n";
        assert!(has_rows(rows));
        let facts = parse("f", rows);
        assert_eq!(facts.len(), 1, "{facts:?}");
        assert_eq!(
            (facts[0].get("size"), facts[0].get("wrong_out_of_place")),
            (Some("536870912"), Some("max error 3e+00"))
        );
        assert!(parse("f", rows.lines().next().unwrap_or_default()).is_empty());
    }

    /// microsoft/msccl#27 (heldout277): rows of the older layout cut after their out-of-place half,
    /// whose float errors (9e-02) exceed the bound nccl-tests itself applied for the world the
    /// bandwidths give (busbw/algbw 1.67: an AllReduce of 6 ranks, 5 x 1e-5), while the sizes above
    /// keep the rounding of their kind (2e-07). The same error in a table of integers is wrong too,
    /// and one of a 10,000-rank float job whose list names its ranks is within its bound (0.1).
    #[test]
    fn an_older_error_above_the_bound_of_its_type_and_world_is_wrong_data() {
        let rows = "         192            48     float     sum    29.73    0.01    0.01  9e-02\n\
                    1536           384     float     sum    24.35    0.06    0.11  2e-07\n\
                   49152         12288     float     sum    30.66    1.60    2.67  5e-07\n";
        assert_eq!(world_size(rows), Some(6));
        let facts = parse("f", rows);
        assert_eq!(facts.len(), 1, "{facts:?}");
        assert_eq!(facts[0].get("size"), Some("192"));
        assert_eq!(facts[0].get("wrong_in_place"), Some("not in the paste"));
        assert!(has_rows(rows));
        // Without the row that gives the world, 9e-02 is below the half that marks wrong values.
        assert!(parse("f", rows.lines().next().unwrap_or_default()).is_empty());
        let ranks: String =
            (0..10_000).map(|r| format!("#  Rank {r:>3} Group  0 Pid {r} on node device  0 [0x1b] A100\n")).collect();
        assert!(parse("f", &format!("{ranks}{rows}")).is_empty());
        let integers = rows.replace("float", "int32");
        assert_eq!(parse("f", &integers).len(), 3);
    }

    const HEALTHY: &str = "\
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
     1048576        262144     float     sum      -1    203.2    5.16    9.68      0    207.2    5.06    9.49      0
# Out of bounds values : 0 OK
";

    #[test]
    fn a_healthy_table_gives_no_fact() {
        assert!(parse("t", HEALTHY).is_empty());
        assert!(has_rows(HEALTHY));
    }

    #[test]
    fn wrong_elements_and_the_failed_footer_are_facts() {
        let text = "\
    67108864      16777216     float     sum      -1   1261.6   53.20   99.74     12   1270.2   52.83   99.06      0
 1048576  262144  bfloat16  sum  -1  699.0  1.50  1.50  0  776.0  1.35  1.35  3   slowest rank 1
# Out of bounds values : 15 FAILED
";
        let facts = parse("t", text);
        assert_eq!(facts.len(), 3, "{facts:?}");
        assert_eq!(facts[0].get("wrong_out_of_place"), Some("12"));
        assert_eq!(facts[0].get("size"), Some("67108864"));
        assert_eq!(facts[1].get("type"), Some("bfloat16"));
        assert_eq!(facts[1].get("wrong_in_place"), Some("3"));
        assert_eq!(facts[2].name, "nccltests.out_of_bounds");
        assert_eq!(facts[2].get("count"), Some("15"));
        assert_eq!(facts[2].evidence[0].line, 3);
    }

    #[test]
    fn older_float_error_columns_and_other_tables_are_not_read_as_counts() {
        // nccl-tests before #wrong: a max error column ("0e+00"); and an ib_write_bw row.
        let old = "     1048576        262144     float     sum    203.2    5.16    9.68  0e+00    207.2    5.06    9.49  5e-07\n";
        let perftest = " 65536      5000           4541.67            4539.64		   0.072634\n";
        assert!(parse("t", old).is_empty() && !has_rows(old));
        assert!(parse("t", perftest).is_empty() && !has_rows(perftest));
    }

    /// NVIDIA/nccl-tests#5: the tests' failure line before 2018, and a build against NCCL 1.x.
    #[test]
    fn an_old_failure_line_and_an_nccl_1_build() {
        let line = "NCCL failure all_reduce.cu:95 'unhandled cuda error'\n";
        let facts = parse("t", line);
        assert_eq!(facts.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["nccl.error"]);
        assert_eq!(facts[0].get("result"), Some("unhandled cuda error"));
        let old = format!("# NCCL Tests compiled with NCCL 1.0\n{line}");
        let facts = parse("t", &old);
        assert_eq!(facts.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["nccl.internal", "nccl.error"]);
        assert!(parse("t", "# NCCL Tests compiled with NCCL 2.18\n").is_empty());
    }

    /// xxrjun/nccl-tests-cluster (README's troubleshooting): every process of a launch calling
    /// itself rank 0 on device 0 is nccl-tests built without MPI; one rank per process of one job
    /// is not.
    #[test]
    fn processes_that_each_call_themselves_rank_0_share_the_gpu() {
        let line = |pid: u32, host: &str| {
            format!("#  Rank  0 Group  0 Pid {pid} on {host} device  0 [0000:1b:00] NVIDIA H100 80GB HBM3\n")
        };
        let alone =
            format!("{}{}{}", line(223120, "cnode2-002"), line(223121, "cnode2-002"), line(256267, "cnode2-001"));
        let facts = parse("t", &alone);
        assert_eq!(facts.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["gpu.shared_by_ranks"]);
        assert_eq!((facts[0].get("host"), facts[0].get("gpu")), (Some("cnode2-002"), Some("0")));
        let one_job = format!("{}{}", line(1, "n1"), line(1, "n2").replace("Rank  0", "Rank  1"));
        assert!(parse("t", &one_job).is_empty());
        // xxrjun/nccl-tests-cluster's example-cluster01 (heldout115): two tests of one pair in one
        // file, each listing ranks 0 to 3, rank 0 on the same GPU of the same host in both.
        let header = "# Using devices\n";
        let run = |pid: u32| {
            format!("{header}{}{}", line(pid, "cnode3-004"), line(pid + 1, "cnode3-009").replace("Rank  0", "Rank  1"))
        };
        assert!(parse("t", &format!("{}{}", run(1400477), run(1401875))).is_empty());
        let launched_alone = format!("{header}{}{header}{}", line(223120, "cnode2-002"), line(223121, "cnode2-002"));
        assert_eq!(parse("t", &launched_alone)[0].name, "gpu.shared_by_ranks");
    }
}
