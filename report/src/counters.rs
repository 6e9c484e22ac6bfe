//! Rendering of counter observations: a text table (values, or deltas and rates), the JSON document
//! of `fabricdoctor counters --json`, and Prometheus text exposition for node_exporter's textfile
//! collector (format: prometheus.io/docs/instrumenting/exposition_formats, version 0.0.4).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use fabricdoctor_checks::optics::milliwatts_to_dbm;
use fabricdoctor_probes::counters::{Counter, CounterObservation, CounterSource, DeltaStatus};
use fabricdoctor_probes::transceiver::ModuleReading;
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
    /// The fabric ports' transceiver readings (module temperature, supply, per-lane powers).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub optics: Vec<OpticsRow>,
}

/// A gauge family of the optics export: name, help, and the value of one row.
type Family<T> = (&'static str, &'static str, fn(&T) -> Option<f64>);

/// One fabric port's module, as `counters` prints and exports it.
#[derive(Debug, Clone, Serialize)]
pub struct OpticsRow {
    pub netdev: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supply_v: Option<f64>,
    pub lanes: Vec<OpticsLane>,
    /// Why there is no reading (no module, a bad page).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct OpticsLane {
    pub lane: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rx_power_mw: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tx_power_mw: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tx_bias_ma: Option<f64>,
}

impl OpticsRow {
    pub fn of(reading: &ModuleReading) -> OpticsRow {
        match &reading.module {
            Ok(module) => OpticsRow {
                netdev: reading.netdev.clone(),
                module: Some(format!("{} {} {}", module.identifier_name, module.vendor, module.part_number)),
                temperature_c: module.temperature_c,
                supply_v: module.supply_v,
                lanes: module
                    .lanes
                    .iter()
                    .filter(|l| l.in_use)
                    .map(|l| OpticsLane {
                        lane: l.number,
                        rx_power_mw: l.rx_power_mw,
                        tx_power_mw: l.tx_power_mw,
                        tx_bias_ma: l.tx_bias_ma,
                    })
                    .collect(),
                error: None,
            },
            Err(error) => OpticsRow {
                netdev: reading.netdev.clone(),
                module: None,
                temperature_c: None,
                supply_v: None,
                lanes: Vec::new(),
                error: Some(error.to_string()),
            },
        }
    }
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
            optics: Vec::new(),
        }
    }

    /// The same report with the fabric ports' module readings.
    pub fn with_optics(mut self, readings: &[ModuleReading]) -> CountersReport {
        self.optics = readings.iter().map(OpticsRow::of).collect();
        self
    }

    fn optics_text(&self, out: &mut String) {
        for row in &self.optics {
            match (&row.module, &row.error) {
                (Some(module), _) => {
                    let temperature = row.temperature_c.map(|t| format!(" {t:.1} C")).unwrap_or_default();
                    let supply = row.supply_v.map(|v| format!(" {v:.2} V")).unwrap_or_default();
                    let _ = writeln!(out, "{} optics: {module}{temperature}{supply}", row.netdev);
                    for lane in &row.lanes {
                        let dbm = |mw: Option<f64>| {
                            mw.map_or("n/a".to_string(), |mw| format!("{:.2} dBm", milliwatts_to_dbm(mw)))
                        };
                        let bias = lane.tx_bias_ma.map_or("n/a".to_string(), |ma| format!("{ma:.2} mA"));
                        let _ = writeln!(
                            out,
                            "  lane {}  RX {:>11}  TX {:>11}  bias {:>9}",
                            lane.lane,
                            dbm(lane.rx_power_mw),
                            dbm(lane.tx_power_mw),
                            bias
                        );
                    }
                }
                (None, Some(error)) => {
                    let _ = writeln!(out, "{} optics: {error}", row.netdev);
                }
                (None, None) => {}
            }
        }
    }

    /// `fabricdoctor_optics_*` gauges: module temperature and supply, and per lane the optical
    /// powers (dBm; no light is -Inf, which the exposition format allows) and the bias current.
    fn optics_prometheus(&self, out: &mut String) {
        let modules: Vec<&OpticsRow> = self.optics.iter().filter(|r| r.module.is_some()).collect();
        if modules.is_empty() {
            return;
        }
        let value = |v: f64| if v == f64::NEG_INFINITY { "-Inf".to_string() } else { format!("{v}") };
        let module_families: [Family<OpticsRow>; 2] = [
            ("fabricdoctor_optics_temperature_celsius", "Transceiver module temperature", |r| r.temperature_c),
            ("fabricdoctor_optics_supply_volts", "Transceiver module supply voltage", |r| r.supply_v),
        ];
        for (name, help, get) in module_families {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} gauge");
            for row in &modules {
                if let Some(v) = get(row) {
                    let _ = writeln!(out, "{name}{{netdev=\"{}\"}} {}", escape_label(&row.netdev), value(v));
                }
            }
        }
        let lane_families: [Family<OpticsLane>; 3] = [
            ("fabricdoctor_optics_rx_power_dbm", "Transceiver lane receive optical power", |l| {
                l.rx_power_mw.map(milliwatts_to_dbm)
            }),
            ("fabricdoctor_optics_tx_power_dbm", "Transceiver lane transmit optical power", |l| {
                l.tx_power_mw.map(milliwatts_to_dbm)
            }),
            ("fabricdoctor_optics_tx_bias_milliamperes", "Transceiver lane laser bias current", |l| l.tx_bias_ma),
        ];
        for (name, help, get) in lane_families {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} gauge");
            for row in &modules {
                for lane in &row.lanes {
                    if let Some(v) = get(lane) {
                        let _ = writeln!(
                            out,
                            "{name}{{lane=\"{}\",netdev=\"{}\"}} {}",
                            lane.lane,
                            escape_label(&row.netdev),
                            value(v)
                        );
                    }
                }
            }
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
        self.optics_text(&mut out);
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
        self.optics_prometheus(&mut out);
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
