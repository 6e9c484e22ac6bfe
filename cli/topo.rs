//! `fabricdoctor topo`.

use fabricdoctor_checks::topology::pci_locality;
use fabricdoctor_checks::{run_checks, Policy, Topology};
use fabricdoctor_probes::NodeSnapshot;
use fabricdoctor_report::html::{topology_page, TopologyPicture};
use fabricdoctor_report::topo::matrix_text;
use fabricdoctor_report::TopologyReport;

use crate::args::TopoArgs;
use crate::exit;
use crate::output::emit;
use crate::source::Source;
use fabricdoctor_report::output::write_atomically;

pub fn run(args: TopoArgs) -> anyhow::Result<i32> {
    let source = Source::resolve(&args.source)?;
    let node = NodeSnapshot::probe(&source.root);
    match &node.pci {
        // A capture without the PCI tree still has its NUMA nodes and CPUs: say what is missing
        // and show what can be shown.
        Err(error) if error.is_not_found() && !args.json => {
            eprintln!("fabricdoctor: no PCI devices in this capture ({error}): no GPU/NIC matrix");
            emit(&numa_text(&node))?;
            return Ok(exit::SUCCESS);
        }
        Err(error) if error.is_not_found() => {
            eprintln!("fabricdoctor: no PCI devices in this capture ({error}): the matrix is empty");
        }
        Err(error) => anyhow::bail!("cannot compute the topology: {error}"),
        Ok(_) => {}
    }
    let topology = Topology::from_node(&node);
    if let Some(path) = &args.html {
        // Devices and links are marked from the node's checks (without counter sampling, which needs
        // an interval: `check --html` marks those too).
        let host = source.host_info(&node.host);
        let findings = run_checks(&node, None, &Policy::default(), &[]);
        let picture = TopologyPicture::from_topology(&host.hostname, &topology, &findings);
        write_atomically(path, topology_page(&host, &picture).as_bytes())?;
    }
    if args.json {
        let report = TopologyReport::new(source.host_info(&node.host), topology, pci_locality(&node));
        emit(&(serde_json::to_string_pretty(&report)? + "\n"))?;
    } else {
        emit(&matrix_text(&topology))?;
    }
    Ok(exit::SUCCESS)
}

/// The NUMA nodes and their CPUs, for a node whose PCI tree is unknown.
fn numa_text(node: &NodeSnapshot) -> String {
    match &node.numa {
        Ok(nodes) if !nodes.is_empty() => {
            let mut text = String::from("NUMA node    CPUs\n");
            for numa in nodes {
                text.push_str(&format!(
                    "{:<12} {}\n",
                    numa.id,
                    if numa.cpulist.is_empty() { "(memory only)" } else { &numa.cpulist }
                ));
            }
            text
        }
        Ok(_) => "no NUMA nodes in this capture\n".into(),
        Err(error) => format!("NUMA nodes unknown: {error}\n"),
    }
}
