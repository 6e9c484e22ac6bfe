//! Taking counter samples: two on the live node a short interval apart, one from a capture, or a
//! pair made of an earlier capture (`--before`) and the node or a later capture.

use std::path::Path;
use std::time::{Duration, Instant};

use fabricdoctor_probes::counters::{read_sample, CounterObservation, CounterSample};

use crate::args::SourceArgs;
use crate::source::Source;

/// Observe counters of `source`: against `before` when given, else over `interval` when the source
/// is live and an interval is asked for, else one sample.
pub fn observe(
    source: &Source,
    before: Option<&Path>,
    interval: Option<Duration>,
) -> anyhow::Result<CounterObservation> {
    if let Some(path) = before {
        let earlier = Source::resolve(&SourceArgs { root: Some(path.to_path_buf()) })?;
        let first = read_sample(&earlier.root);
        let second = read_sample(&source.root);
        return Ok(CounterObservation::new(Some(first), second, None));
    }
    match interval {
        Some(interval) if source.root.is_live() => Ok(sample_twice(source, interval)),
        _ => Ok(CounterObservation::new(None, read_sample(&source.root), None)),
    }
}

/// Two samples `interval` apart; the measured time is the fallback when proc/uptime is unreadable.
pub fn sample_twice(source: &Source, interval: Duration) -> CounterObservation {
    let started = Instant::now();
    let first = read_sample(&source.root);
    std::thread::sleep(interval);
    let second: CounterSample = read_sample(&source.root);
    CounterObservation::new(Some(first), second, Some(started.elapsed().as_secs_f64()))
}
