//! NUMA nodes and their CPUs (`sys/devices/system/node/nodeN/cpulist`, kernel ABI
//! `Documentation/ABI/stable/sysfs-devices-node`), and the cpulist format ("0-47,96-143").

use std::collections::BTreeSet;

use serde::Serialize;

use crate::error::{ParseError, ProbeError};
use crate::root::SysRoot;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NumaNode {
    pub id: u32,
    pub cpulist: String,
    #[serde(skip)]
    pub cpus: BTreeSet<u32>,
}

/// Parse a kernel cpulist ("0-3,8,10-11"; see `cpulist_parse` in lib/bitmap.c). An empty list is valid
/// (memory-only nodes).
pub fn parse_cpulist(text: &str) -> Result<BTreeSet<u32>, ParseError> {
    let mut cpus = BTreeSet::new();
    // Some captures end the file with a NUL after the newline (hwloc's 128arm-2pa2n8cluster4co).
    for part in crate::value::trim(text).split(',').filter(|p| !p.is_empty()) {
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (a, b),
            None => (part, part),
        };
        let bad = || ParseError::new(format!("{part:?} is not a CPU number or range"));
        let first: u32 = first.parse().map_err(|_| bad())?;
        let last: u32 = last.parse().map_err(|_| bad())?;
        // Bound the range so a corrupt file cannot make us allocate billions of entries.
        if last < first || last - first > 1 << 16 {
            return Err(bad());
        }
        cpus.extend(first..=last);
    }
    Ok(cpus)
}

/// What a node's cpulist reads as when the tree has none.
pub const NOT_CAPTURED: &str = "unknown (no cpulist)";

/// Read the node list. A kernel without NUMA support has no `node` directory: that is an empty list,
/// and callers treat every device as local.
pub fn read_numa_nodes(root: &SysRoot) -> Result<Vec<NumaNode>, ProbeError> {
    let dir = "sys/devices/system/node";
    let names = match root.read_dir(dir) {
        Ok(names) => names,
        Err(error) if error.is_not_found() => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let mut nodes = Vec::new();
    for name in names {
        let Some(id) = name.strip_prefix("node").and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let path = format!("{dir}/{name}/cpulist");
        let text = match root.read_string(&path) {
            Ok(text) => text,
            // Kernels before 2.6.23 had no `cpulist` (only the `cpumap` mask), and captures leave
            // it out: the node exists, its CPUs are unknown.
            Err(error) if error.is_not_found() => {
                nodes.push(NumaNode { id, cpulist: NOT_CAPTURED.into(), cpus: BTreeSet::new() });
                continue;
            }
            Err(error) => return Err(error),
        };
        let cpus = parse_cpulist(&text).map_err(|e| ProbeError::malformed(&path, &text, e))?;
        let cpulist = crate::value::trim(&text).to_string();
        nodes.push(NumaNode { id, cpulist, cpus });
    }
    nodes.sort_by_key(|n| n.id);
    Ok(nodes)
}

/// The node whose CPUs contain all of `cpus`, used when a device's `numa_node` is -1 but its
/// `local_cpulist` is narrower than the whole machine. `None` when the list spans several nodes.
pub fn node_of_cpus(nodes: &[NumaNode], cpus: &BTreeSet<u32>) -> Option<u32> {
    if cpus.is_empty() {
        return None;
    }
    let mut owners = nodes.iter().filter(|n| !n.cpus.is_disjoint(cpus));
    let owner = owners.next()?;
    (owners.next().is_none() && cpus.is_subset(&owner.cpus)).then_some(owner.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpulists_parse_ranges_and_singles() {
        let cpus = parse_cpulist("0-2,8,10-11\n").expect("parse");
        assert_eq!(cpus.into_iter().collect::<Vec<_>>(), [0, 1, 2, 8, 10, 11]);
        assert!(parse_cpulist("\n").expect("empty").is_empty());
        assert!(parse_cpulist("3-1").is_err());
        assert!(parse_cpulist("0-4294967295").is_err());
        assert!(parse_cpulist("a-b").is_err());
    }

    #[test]
    fn a_device_cpulist_maps_to_one_node_or_none() {
        let node = |id, list: &str| NumaNode { id, cpulist: list.into(), cpus: parse_cpulist(list).expect("list") };
        let nodes = [node(0, "0-47,96-143"), node(1, "48-95,144-191")];
        assert_eq!(node_of_cpus(&nodes, &parse_cpulist("48-95,144-191").expect("list")), Some(1));
        assert_eq!(node_of_cpus(&nodes, &parse_cpulist("0-191").expect("list")), None);
    }
}
