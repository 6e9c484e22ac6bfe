//! `fabricdoctor topo`.

use fabricdoctor_checks::Topology;
use fabricdoctor_probes::NodeSnapshot;
use fabricdoctor_report::topo::matrix_text;
use fabricdoctor_report::TopologyReport;

use crate::args::TopoArgs;
use crate::exit;
use crate::output::emit;
use crate::source::Source;

pub fn run(args: TopoArgs) -> anyhow::Result<i32> {
    let source = Source::resolve(&args.source)?;
    let node = NodeSnapshot::probe(&source.root);
    if let Err(error) = &node.pci {
        anyhow::bail!("cannot compute the topology: {error}");
    }
    let topology = Topology::from_node(&node);
    if args.json {
        let report = TopologyReport::new(source.host_info(&node.host), topology);
        emit(&(serde_json::to_string_pretty(&report)? + "\n"))?;
    } else {
        emit(&matrix_text(&topology))?;
    }
    Ok(exit::SUCCESS)
}
