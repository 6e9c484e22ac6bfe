//! `fabricdoctor counters`.

use std::time::Instant;

use fabricdoctor_probes::counters::{read_sample, CounterObservation};
use fabricdoctor_probes::host::read_host_settings;
use fabricdoctor_probes::rdma::read_rdma_devices;
use fabricdoctor_probes::transceiver::read_fabric_modules;
use fabricdoctor_report::counters::CountersReport;

use crate::args::{CountersArgs, CountersFormat};
use crate::exit;
use crate::output::emit;
use crate::sampling::observe;
use crate::source::Source;
use fabricdoctor_report::output::write_atomically;

pub fn run(args: CountersArgs) -> anyhow::Result<i32> {
    let source = Source::resolve(&args.source)?;
    let host = source.host_info(&read_host_settings(&source.root));
    let format = if args.json { CountersFormat::Json } else { args.format };
    // The fabric ports' modules, read once per run (each read is an I2C transfer through the NIC).
    let mut unreadable = Vec::new();
    let devices = read_rdma_devices(&source.root, &mut unreadable).unwrap_or_default();
    let optics = read_fabric_modules(&source.root, &devices);
    let render = |observation: &CounterObservation| -> anyhow::Result<String> {
        let report = CountersReport::new(host.clone(), observation).with_optics(&optics);
        Ok(match format {
            CountersFormat::Text => report.text(args.all),
            CountersFormat::Json => serde_json::to_string_pretty(&report)? + "\n",
            CountersFormat::Prometheus => report.prometheus(),
        })
    };
    let write = |text: &str| -> anyhow::Result<()> {
        match &args.output {
            Some(path) => Ok(write_atomically(path, text.as_bytes())?),
            None => emit(text),
        }
    };
    let Some(interval) = args.interval else {
        write(&render(&observe(&source, args.before.as_deref(), None)?)?)?;
        return Ok(exit::SUCCESS);
    };
    if !source.root.is_live() {
        anyhow::bail!("--interval samples the live node; with --root, diff two captures with --before instead");
    }
    // Each interval's second sample is the next one's first, so no counting time is lost between them.
    let rounds = if args.watch { u64::MAX } else { args.count.unwrap_or(1) };
    let mut previous = read_sample(&source.root);
    let mut started = Instant::now();
    for _ in 0..rounds {
        std::thread::sleep(interval);
        let current = read_sample(&source.root);
        let measured = started.elapsed().as_secs_f64();
        started = Instant::now();
        let observation = CounterObservation::new(Some(previous), current.clone(), Some(measured));
        write(&render(&observation)?)?;
        previous = current;
    }
    Ok(exit::SUCCESS)
}
