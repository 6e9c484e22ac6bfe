//! Statistics of a run, computed as perftest computes them so numbers compare (perftest
//! `src/perftest_resources.c` `print_report_bw` / `print_report_lat`), without its faults: floating
//! microseconds (not integers), percentiles kept in duration mode, and computing kept apart from
//! formatting.
//!
//! Units: Gb/s = 10^9 bits per second; MiB/s = 2^20 bytes per second; MsgRate in Mpps = 10^6
//! messages per second (perftest's definitions).

pub use fabricdoctor_perf_schema::results::{BandwidthResult, LatencyResult};

/// Bytes per second -> Gb/s (10^9 bits).
pub fn gbps(bytes_per_second: f64) -> f64 {
    bytes_per_second * 8.0 / 1e9
}

/// Bytes per second -> MiB/s (2^20 bytes).
pub fn mib_per_second(bytes_per_second: f64) -> f64 {
    bytes_per_second / (1u64 << 20) as f64
}

/// Bidirectional runs (perftest -b report the sum of both directions): add the other direction,
/// received `messages` of `size` bytes over `seconds`, to this side's result. The peak adds the other
/// direction's average (its own peak is not observed here).
pub fn add_direction(mut result: BandwidthResult, size: u64, messages: u64, seconds: f64) -> BandwidthResult {
    if seconds <= 0.0 {
        return result;
    }
    let rate = (size * messages) as f64 / seconds;
    result.iterations += messages;
    result.bw_avg_gbps += gbps(rate);
    result.bw_peak_gbps += gbps(rate);
    result.bw_avg_mib_per_second += mib_per_second(rate);
    result.bw_peak_mib_per_second += mib_per_second(rate);
    result.msg_rate_mpps += messages as f64 / seconds / 1e6;
    result
}

/// Progress marks of a bandwidth run: (seconds since start, messages completed so far).
#[derive(Debug, Clone, Default)]
pub struct CompletionTimeline {
    pub marks: Vec<(f64, u64)>,
    /// Seconds marks are kept apart: 0 until the timeline first reaches [`TIMELINE_MARKS`], then
    /// doubled each time it does, so a run of any length keeps at most that many marks.
    spacing: f64,
}

/// Marks a bandwidth timeline keeps at most (16 bytes each: 1.6 MB however long the run).
pub const TIMELINE_MARKS: usize = 100_000;

impl CompletionTimeline {
    /// Record progress. A mark closer than the current spacing to the one before replaces the last
    /// mark (the latest count is kept); past [`TIMELINE_MARKS`] every other mark is dropped and the
    /// spacing doubles. Averages are unaffected (the first and last marks stay); peaks and interval
    /// minimums keep a resolution of the spacing, which for a run under about 20 s stays 0.
    pub fn record(&mut self, seconds: f64, completed: u64) {
        if let [.., before, last] = self.marks.as_mut_slice() {
            if seconds - before.0 < self.spacing {
                *last = (seconds, completed);
                return;
            }
        }
        self.marks.push((seconds, completed));
        if self.marks.len() >= TIMELINE_MARKS {
            let last = self.marks.len() - 1;
            let kept: Vec<(f64, u64)> =
                self.marks.iter().enumerate().filter(|(i, _)| i % 2 == 1 || *i == last).map(|(_, m)| *m).collect();
            let span = kept.last().map_or(0.0, |m| m.0) - kept.first().map_or(0.0, |m| m.0);
            self.marks = kept;
            self.spacing = (self.spacing * 2.0).max(2.0 * span / TIMELINE_MARKS as f64);
        }
    }
}

/// Average bandwidth over the whole run (first post to last completion), peak over windows of at least
/// `window_messages` completions (perftest's peak is the best short stretch; a window avoids the
/// meaningless peaks of single completion bursts), and the minimum over `interval` windows when
/// asked (duration mode).
pub fn bandwidth(
    size: u64,
    timeline: &CompletionTimeline,
    window_messages: u64,
    interval_seconds: Option<f64>,
) -> Option<BandwidthResult> {
    let &(seconds, iterations) = timeline.marks.last()?;
    if seconds <= 0.0 || iterations == 0 {
        return None;
    }
    let average = (size * iterations) as f64 / seconds;
    // Two pointers over the marks (with the start as a mark): for each end, the shortest stretch that
    // still holds `window` completions.
    let window = window_messages.max(1);
    let marks: Vec<(f64, u64)> = std::iter::once((0.0, 0)).chain(timeline.marks.iter().copied()).collect();
    let mut peak: f64 = average;
    let mut start = 0;
    for end in 1..marks.len() {
        while start + 1 < end && marks[end].1 - marks[start + 1].1 >= window {
            start += 1;
        }
        let ((t0, c0), (t1, c1)) = (marks[start], marks[end]);
        if c1 - c0 >= window && t1 > t0 {
            peak = peak.max((size * (c1 - c0)) as f64 / (t1 - t0));
        }
    }
    let minimum = interval_seconds
        .filter(|s| *s > 0.0)
        .and_then(|s| minimum_interval_rate(timeline, s))
        .map(|rate| gbps(rate * size as f64));
    Some(BandwidthResult {
        bytes: size,
        iterations,
        bw_peak_gbps: gbps(peak),
        bw_avg_gbps: gbps(average),
        bw_peak_mib_per_second: mib_per_second(peak),
        bw_avg_mib_per_second: mib_per_second(average),
        msg_rate_mpps: iterations as f64 / seconds / 1e6,
        bw_min_interval_gbps: minimum,
        seconds,
    })
}

/// Lowest messages-per-second over consecutive `interval`-long windows (the last, partial window is
/// ignored unless it is the only one).
fn minimum_interval_rate(timeline: &CompletionTimeline, interval: f64) -> Option<f64> {
    let mut minimum: Option<f64> = None;
    let (mut window_start, mut count_start) = (0.0, 0u64);
    for &(t, c) in &timeline.marks {
        if t - window_start >= interval {
            let rate = (c - count_start) as f64 / (t - window_start);
            minimum = Some(minimum.map_or(rate, |m: f64| m.min(rate)));
            window_start = t;
            count_start = c;
        }
    }
    minimum.or_else(|| {
        let &(t, c) = timeline.marks.last()?;
        (t > 0.0).then(|| c as f64 / t)
    })
}

/// Percentile by nearest rank on sorted samples (perftest: `delta[(int)(iters * p)]` of the sorted
/// array; nearest-rank with ceil is the standard form and equals it away from the edges).
pub fn percentile(sorted: &[f64], fraction: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (fraction * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// Round trips, in microseconds, kept exactly up to [`EXACT_SAMPLES`] (8 MB) and from then on in
/// a [`Histogram`]: a latency test of any duration needs bounded memory, and percentiles stay within
/// 0.1 % (perftest keeps every sample, so `ib_write_lat -D 3600` grows without bound).
#[derive(Debug, Clone, Default)]
pub struct LatencyRecorder {
    exact: Vec<f64>,
    histogram: Option<Histogram>,
}

/// Samples kept exactly before a recorder switches to its histogram.
pub const EXACT_SAMPLES: usize = 1_000_000;

impl LatencyRecorder {
    pub fn record(&mut self, round_trip_us: f64) {
        match &mut self.histogram {
            Some(histogram) => histogram.record(round_trip_us),
            None if self.exact.len() < EXACT_SAMPLES => self.exact.push(round_trip_us),
            None => {
                let mut histogram = Histogram::default();
                for sample in self.exact.drain(..) {
                    histogram.record(sample);
                }
                self.exact.shrink_to_fit();
                histogram.record(round_trip_us);
                self.histogram = Some(histogram);
            }
        }
    }

    pub fn count(&self) -> u64 {
        match &self.histogram {
            Some(histogram) => histogram.count,
            None => self.exact.len() as u64,
        }
    }

    /// The statistics of everything recorded (see [`latency`]).
    pub fn result(&self, size: u64, halve: bool) -> Option<LatencyResult> {
        match &self.histogram {
            Some(histogram) => histogram.latency(size, halve),
            None => latency(size, &self.exact, halve),
        }
    }
}

/// A log-linear histogram of durations in nanoseconds (the HDR histogram layout, Gil Tene's
/// HdrHistogram): 1024 linear buckets per power of two, so every bucket is at most 1/1024 of its
/// value wide and a value read back (the bucket's middle) is within 0.05 % of what was recorded.
/// Exact below 1.024 µs at 1 ns resolution. Count, sum, sum of squares, minimum and maximum are
/// exact. About 440 KB whatever is recorded.
#[derive(Debug, Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    count: u64,
    sum_us: f64,
    sum_squares_us: f64,
    min_us: f64,
    max_us: f64,
}

const SUB_BUCKET_BITS: u32 = 10;
const SUB_BUCKETS: u64 = 1 << SUB_BUCKET_BITS;

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; Histogram::index(u64::MAX) + 1],
            count: 0,
            sum_us: 0.0,
            sum_squares_us: 0.0,
            min_us: f64::INFINITY,
            max_us: f64::NEG_INFINITY,
        }
    }
}

impl Histogram {
    fn index(nanoseconds: u64) -> usize {
        if nanoseconds < SUB_BUCKETS {
            return nanoseconds as usize;
        }
        let exponent = 63 - nanoseconds.leading_zeros();
        let shift = exponent - SUB_BUCKET_BITS;
        let mantissa = nanoseconds >> shift;
        (SUB_BUCKETS + u64::from(shift) * SUB_BUCKETS + (mantissa - SUB_BUCKETS)) as usize
    }

    /// The middle of bucket `index`, in nanoseconds.
    fn value(index: usize) -> f64 {
        let index = index as u64;
        if index < SUB_BUCKETS {
            return index as f64;
        }
        let shift = (index - SUB_BUCKETS) / SUB_BUCKETS;
        let mantissa = SUB_BUCKETS + (index - SUB_BUCKETS) % SUB_BUCKETS;
        let lower = (mantissa << shift) as f64;
        lower + ((1u64 << shift) as f64 - 1.0) / 2.0
    }

    pub fn record(&mut self, microseconds: f64) {
        let nanoseconds = (microseconds * 1000.0).round().max(0.0) as u64;
        self.counts[Histogram::index(nanoseconds)] += 1;
        self.count += 1;
        self.sum_us += microseconds;
        self.sum_squares_us += microseconds * microseconds;
        self.min_us = self.min_us.min(microseconds);
        self.max_us = self.max_us.max(microseconds);
    }

    /// Nearest-rank percentile (as [`percentile`]), read back as its bucket's middle and kept inside
    /// the exact minimum and maximum.
    pub fn percentile_us(&self, fraction: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((fraction * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0u64;
        for (index, count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return Some((Histogram::value(index) / 1000.0).clamp(self.min_us, self.max_us));
            }
        }
        Some(self.max_us)
    }

    fn latency(&self, size: u64, halve: bool) -> Option<LatencyResult> {
        if self.count == 0 {
            return None;
        }
        let scale = if halve { 0.5 } else { 1.0 };
        let n = self.count as f64;
        let average = self.sum_us / n;
        let variance = (self.sum_squares_us / n - average * average).max(0.0);
        let at = |fraction: f64| self.percentile_us(fraction).map_or(f64::NAN, |v| v * scale);
        Some(LatencyResult {
            bytes: size,
            iterations: self.count,
            lat_min_us: self.min_us * scale,
            lat_max_us: self.max_us * scale,
            lat_typical_us: at(0.5),
            lat_avg_us: average * scale,
            lat_stdev_us: variance.sqrt() * scale,
            lat_p99_us: at(0.99),
            lat_p99_9_us: at(0.999),
        })
    }
}

/// Latency statistics of round-trip samples in microseconds. `halve` reports half the round trip,
/// as perftest does for write and send latency (one-way estimate); read latency is the full trip.
pub fn latency(size: u64, round_trips_us: &[f64], halve: bool) -> Option<LatencyResult> {
    let mut samples: Vec<f64> = round_trips_us.iter().map(|t| if halve { t / 2.0 } else { *t }).collect();
    if samples.is_empty() {
        return None;
    }
    samples.sort_by(|a, b| a.total_cmp(b));
    let n = samples.len() as f64;
    let average = samples.iter().sum::<f64>() / n;
    let variance = samples.iter().map(|t| (t - average).powi(2)).sum::<f64>() / n;
    let median = if samples.len() % 2 == 1 {
        samples[samples.len() / 2]
    } else {
        (samples[samples.len() / 2 - 1] + samples[samples.len() / 2]) / 2.0
    };
    Some(LatencyResult {
        bytes: size,
        iterations: samples.len() as u64,
        lat_min_us: samples[0],
        lat_max_us: samples[samples.len() - 1],
        lat_typical_us: median,
        lat_avg_us: average,
        lat_stdev_us: variance.sqrt(),
        lat_p99_us: percentile(&samples, 0.99).unwrap_or(f64::NAN),
        lat_p99_9_us: percentile(&samples, 0.999).unwrap_or(f64::NAN),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_follow_perftest() {
        assert_eq!(gbps(125_000_000.0), 1.0);
        assert_eq!(mib_per_second(1_048_576.0), 1.0);
    }

    #[test]
    fn latency_statistics_are_exact_and_fractional() {
        let samples: Vec<f64> = (1..=1000).map(|i| i as f64).collect();
        let result = latency(8, &samples, false).expect("stats");
        assert_eq!((result.lat_min_us, result.lat_max_us), (1.0, 1000.0));
        assert_eq!(result.lat_typical_us, 500.5);
        assert_eq!(result.lat_avg_us, 500.5);
        assert_eq!(result.lat_p99_us, 990.0);
        assert_eq!(result.lat_p99_9_us, 999.0);
        assert!((result.lat_stdev_us - 288.6749).abs() < 1e-3, "{}", result.lat_stdev_us);
        // Half round trip for write/send, with sub-microsecond precision kept.
        let half = latency(8, &[3.0, 5.0], true).expect("stats");
        assert_eq!((half.lat_min_us, half.lat_typical_us, half.lat_stdev_us), (1.5, 2.0, 0.5));
        assert!(latency(8, &[], true).is_none());
    }

    #[test]
    fn the_histogram_keeps_percentiles_within_a_tenth_of_a_percent() {
        let samples: Vec<f64> = (1..=200_000).map(|i| 0.5 + (i as f64).powf(1.3) / 1000.0).collect();
        let exact = latency(8, &samples, false).expect("exact");
        let mut histogram = Histogram::default();
        for sample in &samples {
            histogram.record(*sample);
        }
        let approximate = histogram.latency(8, false).expect("histogram");
        assert_eq!(approximate.iterations, exact.iterations);
        assert_eq!((approximate.lat_min_us, approximate.lat_max_us), (exact.lat_min_us, exact.lat_max_us));
        for (name, a, e) in [
            ("median", approximate.lat_typical_us, exact.lat_typical_us),
            ("p99", approximate.lat_p99_us, exact.lat_p99_us),
            ("p99.9", approximate.lat_p99_9_us, exact.lat_p99_9_us),
            ("average", approximate.lat_avg_us, exact.lat_avg_us),
            ("stdev", approximate.lat_stdev_us, exact.lat_stdev_us),
        ] {
            assert!((a - e).abs() <= e * 0.001 + 0.001, "{name}: {a} vs {e}");
        }
    }

    #[test]
    fn a_recorder_switches_to_the_histogram_and_stays_bounded() {
        let mut recorder = LatencyRecorder::default();
        for i in 0..(EXACT_SAMPLES + 10) {
            recorder.record(1.0 + (i % 100) as f64);
        }
        assert!(recorder.histogram.is_some() && recorder.exact.capacity() == 0);
        assert_eq!(recorder.count(), (EXACT_SAMPLES + 10) as u64);
        let result = recorder.result(8, true).expect("stats");
        // Round trips 1..=100 us evenly: the nearest-rank median is 50, halved 25 (within 0.1 %).
        assert!((result.lat_typical_us - 25.0).abs() < 0.025, "{}", result.lat_typical_us);
    }

    #[test]
    fn a_long_timeline_keeps_a_bounded_number_of_marks() {
        let mut timeline = CompletionTimeline::default();
        for i in 0..1_000_000u64 {
            timeline.record(i as f64 * 0.0002, i * 10);
        }
        assert!(timeline.marks.len() < TIMELINE_MARKS, "{}", timeline.marks.len());
        assert_eq!(timeline.marks.last(), Some(&(999_999.0 * 0.0002, 9_999_990)));
        let result = bandwidth(1000, &timeline, 1, Some(20.0)).expect("bandwidth");
        // 10 messages of 1000 bytes every 200 us: 50 MB/s throughout.
        assert!((result.bw_avg_gbps - 0.4).abs() < 0.001, "{}", result.bw_avg_gbps);
    }

    #[test]
    fn percentiles_use_nearest_rank() {
        assert_eq!(percentile(&[1.0], 0.99), Some(1.0));
        assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 0.5), Some(2.0));
        assert_eq!(percentile(&[], 0.5), None);
    }

    #[test]
    fn bandwidth_average_peak_and_interval_minimum() {
        // 1000 messages of 1 MB: 500 in the first second, 100 in the second, 400 in the third.
        let mut timeline = CompletionTimeline::default();
        for (t, c) in [(0.5, 250), (1.0, 500), (1.5, 550), (2.0, 600), (2.5, 800), (3.0, 1000)] {
            timeline.record(t, c);
        }
        let result = bandwidth(1_000_000, &timeline, 100, Some(1.0)).expect("bw");
        assert!((result.bw_avg_gbps - 1000.0 * 8e6 / 3.0 / 1e9).abs() < 1e-9);
        // Best stretch: 250 messages in 0.5 s = 4 Gb/s.
        assert!((result.bw_peak_gbps - 4.0).abs() < 1e-9, "{}", result.bw_peak_gbps);
        // Slowest second: 100 messages = 0.8 Gb/s.
        assert!((result.bw_min_interval_gbps.expect("min") - 0.8).abs() < 1e-9);
        assert!((result.msg_rate_mpps - 1000.0 / 3.0 / 1e6).abs() < 1e-12);
        assert!(bandwidth(8, &CompletionTimeline::default(), 1, None).is_none());
    }
}
