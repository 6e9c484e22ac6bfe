//! Rendering of counter observations: a text table (values, or deltas and rates), the JSON document
//! of `fabricdoctor counters --json`, and Prometheus text exposition for node_exporter's textfile
//! collector (format: prometheus.io/docs/instrumenting/exposition_formats, version 0.0.4).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use fabricdoctor_probes::counters::{Counter, CounterObservation, CounterSource, DeltaStatus};
use serde::Serialize;

use crate::{HostInfo, SCHEMA_VERSION};

/// `fabricdoctor counters --json`: one document per observation.
#[derive(Debug, Clone, Serialize)]
pub struct CountersReport {
    pub schema_version: u32,
    pub tool_version: String,
    pub host: HostInfo,
    /// Seconds between the two samples; absent for a single sample.
    pub interval_seconds: Option<f64>,
    pub counters: Vec<CounterRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CounterRow {
    pub source: CounterSource,
    /// "mlx5_0 port 1" or a netdev.
    pub subject: String,
    pub name: String,
    /// "bytes", "microseconds" or "count".
    pub unit: &'static str,
    /// In `unit` (IB data words already multiplied by 4).
    pub value: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_per_second: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<DeltaStatus>,
    pub saturated: bool,
}

fn unit_of(source: CounterSource, name: &str) -> &'static str {
    if Counter::words_to_bytes(source, name) || name.ends_with("_bytes") || name.contains("_bytes_") {
        "bytes"
    } else if name.ends_with("_duration") {
        "microseconds"
    } else if name.contains("_bits") {
        "bits"
    } else {
        "count"
    }
}

impl CountersReport {
    pub fn new(host: HostInfo, observation: &CounterObservation) -> CountersReport {
        let counters = observation
            .changes()
            .into_iter()
            .map(|change| {
                let scale = |v: u64| Counter::scaled(change.source, &change.name, v);
                let delta = change.delta.map(scale);
                let rate_per_second =
                    observation.interval_seconds.filter(|s| *s > 0.0).and_then(|s| delta.map(|d| d as f64 / s));
                CounterRow {
                    source: change.source,
                    unit: unit_of(change.source, &change.name),
                    value: scale(change.after),
                    before: change.before.map(scale),
                    delta,
                    rate_per_second,
                    status: change.status,
                    saturated: change.saturated(),
                    subject: change.subject,
                    name: change.name,
                }
            })
            .collect();
        CountersReport {
            schema_version: SCHEMA_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            host,
            interval_seconds: observation.interval_seconds,
            counters,
        }
    }

    /// A table per subject. With one sample: every counter and its value. With two: the counters that
    /// changed (or cannot be measured), with delta and rate.
    pub fn text(&self, show_zero: bool) -> String {
        let mut out = String::new();
        let mut by_subject: BTreeMap<&str, Vec<&CounterRow>> = BTreeMap::new();
        for row in &self.counters {
            by_subject.entry(&row.subject).or_default().push(row);
        }
        let sampled_twice = self.counters.iter().any(|r| r.status.is_some());
        for (subject, rows) in by_subject {
            let total = rows.len();
            let rows: Vec<&&CounterRow> = rows
                .iter()
                .filter(|r| show_zero || r.saturated || if sampled_twice { r.delta != Some(0) } else { r.value != 0 })
                .collect();
            if rows.is_empty() {
                // One line says the subject was read, so a quiet port is told apart from a missing one.
                let quiet = if sampled_twice { "none changed" } else { "all zero" };
                let _ = writeln!(out, "{subject}: {total} counters, {quiet}");
                continue;
            }
            let _ = writeln!(out, "{subject}");
            let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0);
            for row in rows {
                let note = if row.saturated { "  SATURATED: reset the counters (perfquery -R)" } else { "" };
                if sampled_twice {
                    let delta = match (row.delta, row.status) {
                        (Some(d), Some(DeltaStatus::Reset)) => format!("+{d} (reset)"),
                        (Some(d), Some(DeltaStatus::Wrapped)) => format!("+{d} (wrapped)"),
                        (Some(d), _) => format!("+{d}"),
                        (None, _) => "n/a".to_string(),
                    };
                    let rate = row.rate_per_second.map(|r| format!("{r:.1}/s")).unwrap_or_default();
                    let _ = writeln!(
                        out,
                        "  {:<width$}  {:>20} {:<12} {:>16} {:>14}{note}",
                        row.name, row.value, row.unit, delta, rate
                    );
                } else {
                    let _ = writeln!(out, "  {:<width$}  {:>20} {}{note}", row.name, row.value, row.unit);
                }
            }
        }
        if out.is_empty() {
            out.push_str("no RDMA port or netdev counters found\n");
        }
        if let Some(seconds) = self.interval_seconds {
            let _ = writeln!(out, "(deltas over {seconds:.1} s)");
        }
        out
    }

    /// Prometheus text exposition: one family per counter name, `fabricdoctor_` prefix, labels
    /// device/port or netdev, and `priority` for per-priority ethtool counters (rx_prio3_pause ->
    /// fabricdoctor_ethtool_rx_prio_pause_total{priority="3"}). Values are the last sample's.
    pub fn prometheus(&self) -> String {
        let mut families: BTreeMap<String, (&'static str, Vec<String>)> = BTreeMap::new();
        for row in &self.counters {
            let (family, mut labels) = match row.source {
                CounterSource::PortCounters | CounterSource::HardwareCounters => {
                    let prefix = if row.source == CounterSource::PortCounters { "ib_port" } else { "rdma_hw" };
                    let (device, port) = row.subject.split_once(" port ").unwrap_or((&row.subject, ""));
                    (format!("{prefix}_{}", row.name), vec![("device", device.to_string()), ("port", port.to_string())])
                }
                CounterSource::Netdev => (format!("netdev_{}", row.name), vec![("netdev", row.subject.clone())]),
                CounterSource::Ethtool => match split_priority(&row.name) {
                    Some((name, priority)) => (
                        format!("ethtool_{name}"),
                        vec![("netdev", row.subject.clone()), ("priority", priority.to_string())],
                    ),
                    None => (format!("ethtool_{}", row.name), vec![("netdev", row.subject.clone())]),
                },
            };
            let unit_suffix = match row.unit {
                "bytes" if !family.ends_with("_bytes") => "_bytes",
                "microseconds" => "_microseconds",
                _ => "",
            };
            let name = format!("fabricdoctor_{}{unit_suffix}_total", sanitize(&family));
            labels.sort();
            let label_text: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{}\"", escape_label(v))).collect();
            let help = match row.source {
                CounterSource::PortCounters => "InfiniBand port counter (sysfs ports/N/counters)",
                CounterSource::HardwareCounters => "RDMA hardware counter (sysfs ports/N/hw_counters)",
                CounterSource::Ethtool => "netdev statistic (ethtool)",
                CounterSource::Netdev => "kernel netdev statistic (sysfs statistics/, carrier_changes)",
            };
            families.entry(name.clone()).or_insert((help, Vec::new())).1.push(format!(
                "{name}{{{}}} {}",
                label_text.join(","),
                row.value
            ));
        }
        let mut out = String::new();
        for (name, (help, samples)) in families {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} counter");
            for sample in samples {
                let _ = writeln!(out, "{sample}");
            }
        }
        out
    }
}

/// "rx_prio3_pause" -> ("rx_prio_pause", 3).
fn split_priority(name: &str) -> Option<(String, u8)> {
    let (head, rest) = name.split_once("_prio")?;
    let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
    let priority: u8 = rest[..digits].parse().ok()?;
    Some((format!("{head}_prio{}", &rest[digits..]), priority))
}

/// Metric names allow [a-zA-Z0-9_:] only.
fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

/// Label values escape backslash, double quote and newline.
pub(crate) fn escape_label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_counters_fold_into_a_label() {
        assert_eq!(split_priority("rx_prio3_pause_duration"), Some(("rx_prio_pause_duration".into(), 3)));
        assert_eq!(split_priority("rx_packets"), None);
        assert_eq!(sanitize("rx-queue_0.xdp"), "rx_queue_0_xdp");
        assert_eq!(escape_label("a\"b\\c"), "a\\\"b\\\\c");
    }
}
