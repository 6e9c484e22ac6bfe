//! SLURM's compressed host lists ("node[01-04,07],gpu-a[1-2]", `scontrol show hostnames`): expanded in
//! order, zero padding kept, so `srun -N4 fabricdoctor perf allreduce` finds its peers.

/// Expand a SLURM node list.
pub fn expand(list: &str) -> Result<Vec<String>, String> {
    let mut hosts = Vec::new();
    for item in split_top_level(list)? {
        hosts.extend(expand_one(&item)?);
    }
    Ok(hosts)
}

/// Split on commas that are not inside brackets.
fn split_top_level(list: &str) -> Result<Vec<String>, String> {
    let mut items = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in list.trim().chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                if !current.is_empty() {
                    items.push(std::mem::take(&mut current));
                }
                continue;
            }
            _ => {}
        }
        if !(0..=1).contains(&depth) {
            return Err(format!("unbalanced brackets in node list {list:?}"));
        }
        current.push(c);
    }
    if depth != 0 {
        return Err(format!("unbalanced brackets in node list {list:?}"));
    }
    if !current.is_empty() {
        items.push(current);
    }
    Ok(items)
}

/// Expand one "prefix[ranges]suffix" (one bracket group; SLURM allows several, handled recursively).
fn expand_one(item: &str) -> Result<Vec<String>, String> {
    let Some(open) = item.find('[') else {
        return Ok(vec![item.to_string()]);
    };
    let close = item[open..].find(']').map(|i| open + i).ok_or_else(|| format!("missing ] in {item:?}"))?;
    let (prefix, ranges, rest) = (&item[..open], &item[open + 1..close], &item[close + 1..]);
    let mut out = Vec::new();
    for range in ranges.split(',') {
        let (first, last) = range.split_once('-').unwrap_or((range, range));
        let bad = || format!("bad range {range:?} in {item:?}");
        let width = first.len();
        let start: u64 = first.parse().map_err(|_| bad())?;
        let end: u64 = last.parse().map_err(|_| bad())?;
        if end < start || end - start > 100_000 {
            return Err(bad());
        }
        for number in start..=end {
            for tail in expand_one(rest)? {
                out.push(format!("{prefix}{number:0width$}{tail}"));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::expand;

    #[test]
    fn slurm_node_lists_expand_in_order_with_padding() {
        assert_eq!(expand("node[01-04,07]").expect("list"), ["node01", "node02", "node03", "node04", "node07"]);
        assert_eq!(expand("a1,b[8-10],c").expect("list"), ["a1", "b8", "b9", "b10", "c"]);
        assert_eq!(
            expand("rack[1-2]-gpu[1-2]").expect("list"),
            ["rack1-gpu1", "rack1-gpu2", "rack2-gpu1", "rack2-gpu2"]
        );
        assert_eq!(expand("single").expect("list"), ["single"]);
        for bad in ["node[1-", "node]1[", "node[4-2]", "node[a-b]", "node[1-9999999]"] {
            assert!(expand(bad).is_err(), "{bad}");
        }
    }
}
