//! RDMA-relevant counters: InfiniBand port counters (PMA), RDMA hardware counters (mlx5 names),
//! netdev statistics through ethtool, and the congestion-control configuration (PFC, ECN/DCQCN) that
//! decides what those counters mean. Plus the pure arithmetic of deltas between two samples, which must
//! survive resets, 32-bit wraparound and saturated legacy counters.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{ParseError, ProbeError, ProbeErrorKind};
use crate::pci::optional;
use crate::rdma::{parse_link_layer, LinkLayer};
use crate::root::SysRoot;
use crate::Reading;

/// One counter as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Counter {
    pub name: String,
    /// The raw value as the kernel reports it (see [`CounterKind`] for its width and [`Counter::unit`]).
    pub value: u64,
}

/// Where a counter comes from; it decides width, unit and naming.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CounterSource {
    /// `sys/class/infiniband/*/ports/*/counters/*`: IBTA PortCounters/PortCountersExtended (PMA).
    PortCounters,
    /// `sys/class/infiniband/*/ports/*/hw_counters/*`: driver counters (mlx5: Q and congestion counters).
    HardwareCounters,
    /// ethtool statistics of a netdev (ETHTOOL_GSTATS).
    Ethtool,
    /// The kernel's generic netdev statistics (`sys/class/net/<if>/statistics/*`,
    /// Documentation/ABI/testing/sysfs-class-net-statistics) and `carrier_changes`.
    Netdev,
}

/// How a counter behaves at its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CounterKind {
    /// Stops at 2^bits - 1 ("saturates") and stays there until reset: IBTA vol. 1 §16.1.3.5
    /// PortCounters fields are 4 to 32 bits wide and do not wrap.
    Saturating { bits: u32 },
    /// Wraps to zero after 2^bits - 1 (mlx5 Q counters are 32-bit firmware fields).
    Wrapping { bits: u32 },
    /// 64-bit: a decrease means the counter was reset.
    Wide,
}

/// The width and behaviour of a counter, from its source and name.
pub fn counter_kind(source: CounterSource, name: &str) -> CounterKind {
    match source {
        // Field widths of the IBTA PortCounters attribute (vol. 1, table 247); the kernel names
        // them in drivers/infiniband/core/sysfs.c. Data and packet counters use PortCountersExtended
        // (64-bit) when the HCA supports it, else the 32-bit legacy fields, which saturate.
        CounterSource::PortCounters => match name {
            "symbol_error"
            | "port_rcv_errors"
            | "port_rcv_remote_physical_errors"
            | "port_rcv_switch_relay_errors"
            | "port_xmit_discards"
            | "VL15_dropped" => CounterKind::Saturating { bits: 16 },
            "link_error_recovery" | "link_downed" | "port_xmit_constraint_errors" | "port_rcv_constraint_errors" => {
                CounterKind::Saturating { bits: 8 }
            }
            "local_link_integrity_errors" | "excessive_buffer_overrun_errors" => CounterKind::Saturating { bits: 4 },
            "port_xmit_wait" | "port_xmit_data" | "port_rcv_data" | "port_xmit_packets" | "port_rcv_packets" => {
                CounterKind::Saturating { bits: 32 }
            }
            _ => CounterKind::Wide,
        },
        // mlx5 Q counters are 32-bit fields of QUERY_Q_COUNTER (drivers/infiniband/hw/mlx5/counters.c).
        CounterSource::HardwareCounters => match name {
            "out_of_buffer"
            | "out_of_sequence"
            | "duplicate_request"
            | "rnr_nak_retry_err"
            | "packet_seq_err"
            | "implied_nak_seq_err"
            | "local_ack_timeout_err"
            | "resp_local_length_error"
            | "resp_cqe_error"
            | "req_cqe_error"
            | "req_remote_invalid_request"
            | "req_remote_access_errors"
            | "resp_remote_access_errors"
            | "resp_cqe_flush_error"
            | "req_cqe_flush_error"
            | "roce_adp_retrans"
            | "roce_adp_retrans_to"
            | "roce_slow_restart"
            | "roce_slow_restart_cnps"
            | "roce_slow_restart_trans"
            | "rx_write_requests"
            | "rx_read_requests"
            | "rx_atomic_requests" => CounterKind::Wrapping { bits: 32 },
            _ => CounterKind::Wide,
        },
        CounterSource::Ethtool | CounterSource::Netdev => CounterKind::Wide,
    }
}

impl Counter {
    /// `port_xmit_data`/`port_rcv_data` count 4-octet words (IBTA vol. 1 §16.1.3.5); everything is
    /// reported in bytes, packets or events.
    pub fn words_to_bytes(source: CounterSource, name: &str) -> bool {
        source == CounterSource::PortCounters && matches!(name, "port_xmit_data" | "port_rcv_data")
    }

    /// The value in the counter's unit (bytes for the data words).
    pub fn scaled(source: CounterSource, name: &str, value: u64) -> u64 {
        if Self::words_to_bytes(source, name) {
            value.saturating_mul(4)
        } else {
            value
        }
    }
}

/// Counters of one RDMA port.
#[derive(Debug, Clone, Serialize)]
pub struct PortCounters {
    pub device: String,
    pub port: u32,
    pub link_layer: Option<LinkLayer>,
    /// `None` when the directory does not exist (software devices have no PMA counters).
    pub counters: Option<Vec<Counter>>,
    pub hw_counters: Option<Vec<Counter>>,
}

/// ECN (DCQCN) enablement per priority and the parameters, from the mlx5 sysfs interface
/// `sys/class/net/<if>/ecn/roce_np|roce_rp/` (enable/<prio> and parameter files).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct EcnConfig {
    /// Priorities on which the notification point (receiver: marks -> CNPs) is enabled.
    pub notification_point: Vec<u8>,
    /// Priorities on which the reaction point (sender: CNP -> rate cut) is enabled.
    pub reaction_point: Vec<u8>,
    pub parameters: BTreeMap<String, String>,
}

/// Priority flow control as DCB reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PfcSetting {
    pub enabled_priorities: Vec<u8>,
    pub trust: Option<String>,
}

/// Counters and congestion configuration of one netdev.
#[derive(Debug, Clone, Serialize)]
pub struct NetdevCounters {
    pub netdev: String,
    /// RDMA devices whose traffic uses this netdev (RoCE).
    pub rdma_devices: Vec<String>,
    /// Generic statistics and `carrier_changes` (link up/down transitions counted by the kernel).
    pub kernel_statistics: Option<Vec<Counter>>,
    pub statistics: Reading<Vec<Counter>>,
    pub pfc: Reading<PfcSetting>,
    pub ecn: Reading<EcnConfig>,
    /// DCQCN firmware parameters from debugfs (`sys/kernel/debug/mlx5/<pci>/cc_params/*`), root only.
    pub cc_params: Reading<BTreeMap<String, String>>,
}

/// Everything counted at one moment.
#[derive(Debug, Clone, Serialize)]
pub struct CounterSample {
    /// Seconds since boot (`proc/uptime`), the clock of intervals between samples and snapshots.
    pub uptime_seconds: Reading<f64>,
    pub ports: Vec<PortCounters>,
    pub netdevs: Vec<NetdevCounters>,
    /// Counter files that could not be read or parsed; reported, never dropped silently.
    pub unreadable: Vec<ProbeError>,
}

/// Parse a sysfs counter file: one unsigned decimal number. Counters a device does not report
/// ("N/A", "N/A (no PMA)", an empty file in a capture) are `Ok(None)` (see `value`).
pub fn parse_counter(text: &str) -> Result<Option<u64>, ParseError> {
    let Some(value) = crate::value::known(text) else {
        return Ok(None);
    };
    value.parse().map(Some).map_err(|_| ParseError::new("expected an unsigned decimal counter"))
}

/// Parse `proc/uptime` ("12345.67 23456.78"): the first field.
pub fn parse_uptime(text: &str) -> Result<f64, ParseError> {
    let first = text.split_whitespace().next().unwrap_or("");
    first.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0).ok_or_else(|| ParseError::new("expected seconds"))
}

/// `hw_counters/lifespan` is the counter cache lifetime in milliseconds, a setting, not a counter
/// (drivers/infiniband/core/sysfs.c `lifespan`).
const NOT_COUNTERS: [&str; 1] = ["lifespan"];

fn read_counter_dir(
    root: &SysRoot,
    dir: &Path,
    unreadable: &mut Vec<ProbeError>,
) -> Result<Option<Vec<Counter>>, ProbeError> {
    let Some(names) = optional(root.read_dir(dir))? else {
        return Ok(None);
    };
    let mut counters = Vec::with_capacity(names.len());
    for name in names.into_iter().filter(|n| !NOT_COUNTERS.contains(&n.as_str())) {
        let path = dir.join(&name);
        match root.read_string(&path) {
            Ok(text) => match parse_counter(&text) {
                Ok(Some(value)) => counters.push(Counter { name, value }),
                Ok(None) => {}
                Err(error) => unreadable.push(ProbeError::malformed(&path, &text, error)),
            },
            Err(error) => unreadable.push(error),
        }
    }
    Ok(Some(counters))
}

/// Read every counter of the node: all RDMA ports and all netdevs.
pub fn read_sample(root: &SysRoot) -> CounterSample {
    let mut unreadable = Vec::new();
    let mut ports = Vec::new();
    let mut roce_devices: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let devices = match root.read_dir("sys/class/infiniband") {
        Ok(devices) => devices,
        Err(error) if error.is_not_found() => Vec::new(),
        Err(error) => {
            unreadable.push(error);
            Vec::new()
        }
    };
    for device in devices {
        let device_dir = PathBuf::from("sys/class/infiniband").join(&device);
        let port_names = match root.read_dir(device_dir.join("ports")) {
            Ok(names) => names,
            Err(error) => {
                unreadable.push(error);
                continue;
            }
        };
        for port in port_names {
            let Ok(number) = port.parse::<u32>() else {
                continue;
            };
            let port_dir = device_dir.join("ports").join(&port);
            let link_layer = root.read_string(port_dir.join("link_layer")).ok().and_then(|t| parse_link_layer(&t).ok());
            let mut read = |sub: &str| match read_counter_dir(root, &port_dir.join(sub), &mut unreadable) {
                Ok(counters) => counters,
                Err(error) => {
                    unreadable.push(error);
                    None
                }
            };
            let counters = read("counters");
            let hw_counters = read("hw_counters");
            if link_layer == Some(LinkLayer::Ethernet) {
                for netdev in port_netdevs(root, &device_dir, &port_dir) {
                    roce_devices.entry(netdev).or_default().push(device.clone());
                }
            }
            ports.push(PortCounters { device: device.clone(), port: number, link_layer, counters, hw_counters });
        }
    }
    let netdevs = match crate::netdev::interface_names(root) {
        Ok(names) => names
            .into_iter()
            .map(|netdev| {
                let rdma_devices = roce_devices.remove(&netdev).unwrap_or_default();
                read_netdev(root, &netdev, rdma_devices, &mut unreadable)
            })
            .collect(),
        Err(error) if error.is_not_found() => Vec::new(),
        Err(error) => {
            unreadable.push(error);
            Vec::new()
        }
    };
    let uptime_seconds = root
        .read_string("proc/uptime")
        .and_then(|text| parse_uptime(&text).map_err(|e| ProbeError::malformed("proc/uptime", &text, e)));
    CounterSample { uptime_seconds, ports, netdevs, unreadable }
}

/// The netdevs a RoCE port's GID entries name, else the PCI function's netdevs, else rxe's `parent`.
fn port_netdevs(root: &SysRoot, device_dir: &Path, port_dir: &Path) -> Vec<String> {
    let mut names = std::collections::BTreeSet::new();
    if let Ok(indexes) = root.read_dir(port_dir.join("gid_attrs/ndevs")) {
        for index in indexes.iter().take(16) {
            if let Ok(name) = root.read_string(port_dir.join("gid_attrs/ndevs").join(index)) {
                let name = name.trim();
                if !name.is_empty() {
                    names.insert(name.to_string());
                }
            }
        }
    }
    if names.is_empty() {
        if let Ok(list) = root.read_dir(device_dir.join("device/net")) {
            names.extend(list);
        } else if let Ok(parent) = root.read_string(device_dir.join("parent")) {
            names.insert(parent.trim().to_string());
        }
    }
    names.into_iter().collect()
}

fn read_netdev(
    root: &SysRoot,
    netdev: &str,
    rdma_devices: Vec<String>,
    unreadable: &mut Vec<ProbeError>,
) -> NetdevCounters {
    let dir = PathBuf::from("sys/class/net").join(netdev);
    let mut kernel_statistics = read_counter_dir(root, &dir.join("statistics"), unreadable).unwrap_or_else(|error| {
        unreadable.push(error);
        None
    });
    // carrier_changes reads EINVAL on some virtual devices; absent or unreadable means unknown.
    if let Ok(text) = root.read_string(dir.join("carrier_changes")) {
        match parse_counter(&text) {
            Ok(Some(value)) => {
                kernel_statistics.get_or_insert_with(Vec::new).push(Counter { name: "carrier_changes".into(), value })
            }
            Ok(None) => {}
            Err(error) => unreadable.push(ProbeError::malformed(dir.join("carrier_changes"), &text, error)),
        }
    }
    NetdevCounters {
        netdev: netdev.to_string(),
        rdma_devices,
        kernel_statistics,
        statistics: read_statistics(root, netdev),
        pfc: read_pfc(root, netdev),
        ecn: read_ecn(root, netdev),
        cc_params: read_cc_params(root, netdev),
    }
}

/// ECN settings from `sys/class/net/<if>/ecn/{roce_np,roce_rp}`: `enable/<prio>` holds 0 or 1; the other
/// files of each directory are DCQCN parameters.
fn read_ecn(root: &SysRoot, netdev: &str) -> Reading<EcnConfig> {
    let base = PathBuf::from("sys/class/net").join(netdev).join("ecn");
    let mut config = EcnConfig::default();
    let mut found = false;
    for (role, enabled) in [("roce_np", &mut config.notification_point), ("roce_rp", &mut config.reaction_point)] {
        let dir = base.join(role);
        let Some(entries) = optional(root.read_dir(&dir))? else {
            continue;
        };
        found = true;
        for entry in entries {
            if entry == "enable" {
                for priority in root.read_dir(dir.join("enable"))? {
                    let Ok(number) = priority.parse::<u8>() else {
                        continue;
                    };
                    let path = dir.join("enable").join(&priority);
                    let text = root.read_string(&path)?;
                    match text.trim() {
                        "1" => enabled.push(number),
                        "0" => {}
                        _ => return Err(ProbeError::malformed(&path, &text, "expected 0 or 1")),
                    }
                }
                enabled.sort_unstable();
            } else if let Some(value) = optional(root.read_string(dir.join(&entry)))? {
                config.parameters.insert(format!("{role}/{entry}"), value.trim().to_string());
            }
        }
    }
    if !found {
        return Err(root.absent(base));
    }
    Ok(config)
}

/// DCQCN parameters of mlx5 firmware in debugfs, found through the netdev's PCI function.
fn read_cc_params(root: &SysRoot, netdev: &str) -> Reading<BTreeMap<String, String>> {
    let device = root.resolve(PathBuf::from("sys/class/net").join(netdev).join("device"))?;
    let address = device.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let dir = PathBuf::from("sys/kernel/debug/mlx5").join(address).join("cc_params");
    let mut parameters = BTreeMap::new();
    for name in root.read_dir(&dir)? {
        let value = root.read_string(dir.join(&name))?;
        parameters.insert(name, value.trim().to_string());
    }
    Ok(parameters)
}

/// Node path of the ethtool statistics file a snapshot writes for `netdev` (outside sys/proc/dev:
/// the live kernel has no such file, it answers an ioctl).
pub fn ethtool_stats_path(netdev: &str) -> PathBuf {
    PathBuf::from("ethtool").join(netdev).join("statistics")
}

/// Node path of the DCB PFC file a snapshot writes for `netdev`.
pub fn dcb_pfc_path(netdev: &str) -> PathBuf {
    PathBuf::from("dcb").join(netdev).join("pfc")
}

/// Delta of one counter between two samples, and how it was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeltaStatus {
    /// after - before.
    Counted,
    /// The counter wrapped at its width once: after + 2^bits - before.
    Wrapped,
    /// The value went down: the counter was reset; the delta is at least `after`.
    Reset,
    /// The counter sits at its maximum: growth cannot be measured until it is reset.
    Saturated,
    /// Only one sample has the counter.
    Missing,
}

/// The change of a counter from `before` to `after`. Saturation wins over everything (a pinned
/// legacy counter hides any growth); a decrease is a wrap only for wrapping counters whose before
/// value was in the upper half of the range (a reset otherwise).
pub fn counter_delta(kind: CounterKind, before: Option<u64>, after: Option<u64>) -> (Option<u64>, DeltaStatus) {
    let (Some(before), Some(after)) = (before, after) else {
        return (None, DeltaStatus::Missing);
    };
    if is_saturated(kind, after) {
        return (None, DeltaStatus::Saturated);
    }
    if after >= before {
        return (Some(after - before), DeltaStatus::Counted);
    }
    match kind {
        CounterKind::Wrapping { bits } if bits < 64 && before >= 1u64 << (bits - 1) && after < 1u64 << bits => {
            (Some((1u64 << bits) - before + after), DeltaStatus::Wrapped)
        }
        _ => (Some(after), DeltaStatus::Reset),
    }
}

/// True when a saturating counter sits exactly at its maximum. A value above the legacy maximum
/// proves the kernel reads the 64-bit PortCountersExtended field instead (data and packet counters
/// of every current HCA), which does not saturate in practice.
pub fn is_saturated(kind: CounterKind, value: u64) -> bool {
    matches!(kind, CounterKind::Saturating { bits } if bits < 64 && value == (1u64 << bits) - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_count_wrap_reset_and_saturate() {
        let wide = CounterKind::Wide;
        assert_eq!(counter_delta(wide, Some(10), Some(15)), (Some(5), DeltaStatus::Counted));
        assert_eq!(counter_delta(wide, Some(10), Some(3)), (Some(3), DeltaStatus::Reset));
        let q32 = CounterKind::Wrapping { bits: 32 };
        assert_eq!(counter_delta(q32, Some(u32::MAX as u64 - 4), Some(5)), (Some(10), DeltaStatus::Wrapped));
        // A small counter going down was reset, not wrapped.
        assert_eq!(counter_delta(q32, Some(100), Some(5)), (Some(5), DeltaStatus::Reset));
        // Real capture (ctr-03): port_xmit_wait pinned at 2^32-1, port_xmit_discards at 65535,
        // link_downed at 255: saturated, never a silent zero delta.
        let wait = counter_kind(CounterSource::PortCounters, "port_xmit_wait");
        assert_eq!(counter_delta(wait, Some(4294967295), Some(4294967295)), (None, DeltaStatus::Saturated));
        let discards = counter_kind(CounterSource::PortCounters, "port_xmit_discards");
        assert_eq!(counter_delta(discards, Some(65000), Some(65535)), (None, DeltaStatus::Saturated));
        assert!(is_saturated(counter_kind(CounterSource::PortCounters, "link_downed"), 255));
        assert!(!is_saturated(counter_kind(CounterSource::PortCounters, "link_downed"), 254));
        // Regression: ctr-03's port_xmit_data (205143497464492 words) is a 64-bit extended counter,
        // not a saturated 32-bit one.
        let data = counter_kind(CounterSource::PortCounters, "port_xmit_data");
        assert_eq!(
            counter_delta(data, Some(205143497464492), Some(205143498464492)),
            (Some(1_000_000), DeltaStatus::Counted)
        );
        assert_eq!(counter_delta(wide, None, Some(1)), (None, DeltaStatus::Missing));
    }

    #[test]
    fn counter_files_parse_or_fail_clearly() {
        assert_eq!(parse_counter("91316\n"), Ok(Some(91316)));
        assert_eq!(parse_counter("N/A\n"), Ok(None));
        assert_eq!(parse_counter("N/A (no PMA)\n"), Ok(None));
        assert!(parse_counter("-1\n").is_err());
        assert!(parse_counter("lots\n").is_err());
        assert_eq!(parse_uptime("350735.47 234388.90\n"), Ok(350735.47));
        assert!(parse_uptime("").is_err());
        assert!(parse_uptime("NaN 1").is_err());
    }

    #[test]
    fn data_words_are_reported_in_bytes() {
        assert_eq!(Counter::scaled(CounterSource::PortCounters, "port_xmit_data", 205143497464492), 820573989857968);
        assert_eq!(Counter::scaled(CounterSource::HardwareCounters, "port_xmit_data", 3), 3);
    }
}

/// One or two samples of the node's counters, and the seconds between them.
#[derive(Debug, Clone, Serialize)]
pub struct CounterObservation {
    pub before: Option<CounterSample>,
    pub after: CounterSample,
    /// From `proc/uptime` of both samples when present, else the sampler's own clock.
    pub interval_seconds: Option<f64>,
}

/// A counter seen in the observation, with its change when there were two samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CounterChange {
    pub source: CounterSource,
    /// "mlx5_0 port 1" or a netdev name.
    pub subject: String,
    pub name: String,
    pub before: Option<u64>,
    pub after: u64,
    /// `None` with one sample, or when the change cannot be measured (saturated).
    pub delta: Option<u64>,
    /// `None` with one sample.
    pub status: Option<DeltaStatus>,
    pub kind: CounterKind,
}

impl CounterChange {
    /// Growth per second over the interval.
    pub fn rate(&self, interval_seconds: Option<f64>) -> Option<f64> {
        let seconds = interval_seconds.filter(|s| *s > 0.0)?;
        Some(self.delta? as f64 / seconds)
    }

    /// Saturated now (in the last sample), whatever the sampling.
    pub fn saturated(&self) -> bool {
        is_saturated(self.kind, self.after)
    }
}

impl CounterObservation {
    /// Interval from the two samples' `proc/uptime`, falling back to `measured` (the sampler's clock).
    pub fn new(before: Option<CounterSample>, after: CounterSample, measured: Option<f64>) -> CounterObservation {
        let from_uptime = match (&before, &after.uptime_seconds) {
            (Some(before), Ok(end)) => before.uptime_seconds.as_ref().ok().map(|start| end - start),
            _ => None,
        };
        let interval_seconds = from_uptime.filter(|s| *s > 0.0).or(measured);
        CounterObservation { before, after, interval_seconds }
    }

    /// Every counter of the last sample, paired with the first sample's value.
    pub fn changes(&self) -> Vec<CounterChange> {
        let mut earlier: BTreeMap<(CounterSource, String, String), u64> = BTreeMap::new();
        if let Some(before) = &self.before {
            for (source, subject, counter) in flatten(before) {
                earlier.insert((source, subject, counter.name.clone()), counter.value);
            }
        }
        flatten(&self.after)
            .map(|(source, subject, counter)| {
                let kind = counter_kind(source, &counter.name);
                let before = earlier.get(&(source, subject.clone(), counter.name.clone())).copied();
                let (delta, status) = if self.before.is_some() {
                    let (delta, status) = counter_delta(kind, before, Some(counter.value));
                    (delta, Some(status))
                } else {
                    (None, None)
                };
                CounterChange {
                    source,
                    subject,
                    name: counter.name.clone(),
                    before,
                    after: counter.value,
                    delta,
                    status,
                    kind,
                }
            })
            .collect()
    }
}

fn flatten(sample: &CounterSample) -> impl Iterator<Item = (CounterSource, String, &Counter)> {
    let ports = sample.ports.iter().flat_map(|port| {
        let subject = format!("{} port {}", port.device, port.port);
        let pma = port.counters.iter().flatten().map({
            let subject = subject.clone();
            move |c| (CounterSource::PortCounters, subject.clone(), c)
        });
        let hardware =
            port.hw_counters.iter().flatten().map(move |c| (CounterSource::HardwareCounters, subject.clone(), c));
        pma.chain(hardware)
    });
    let netdevs = sample.netdevs.iter().flat_map(|netdev| {
        let kernel =
            netdev.kernel_statistics.iter().flatten().map(move |c| (CounterSource::Netdev, netdev.netdev.clone(), c));
        let ethtool =
            netdev.statistics.iter().flatten().map(move |c| (CounterSource::Ethtool, netdev.netdev.clone(), c));
        kernel.chain(ethtool)
    });
    ports.chain(netdevs)
}

/// A reading with no file behind it on the live node (an ioctl or netlink reply): asked live and
/// recorded at `path` in the text form `format` writes, read back from `path` with `parse` in a capture.
fn live_or_recorded<T>(
    root: &SysRoot,
    path: &Path,
    live: impl FnOnce() -> Result<T, ProbeError>,
    format: impl FnOnce(&T) -> String,
    parse: impl FnOnce(&str) -> Result<T, ParseError>,
) -> Reading<T> {
    if root.is_live() {
        let value = live()?;
        root.record_synthesized(path, format(&value));
        Ok(value)
    } else {
        let text = root.read_string(path)?;
        parse(&text).map_err(|e| ProbeError::malformed(path, &text, e))
    }
}

/// ethtool statistics (SIOCETHTOOL on the live node, `ethtool -S` text in a capture). A driver
/// without statistics (loopback) is "not found".
fn read_statistics(root: &SysRoot, netdev: &str) -> Reading<Vec<Counter>> {
    let path = ethtool_stats_path(netdev);
    let pairs = live_or_recorded(
        root,
        &path,
        || crate::ethtool::read_stats(netdev).map_err(|error| ethtool_error(&path, error)),
        |pairs| crate::ethtool::format_stats_text(netdev, pairs),
        crate::ethtool::parse_stats_text,
    )?;
    Ok(pairs.into_iter().map(|(name, value)| Counter { name, value }).collect())
}

/// PFC from DCB netlink (live) or its recorded text (capture). A driver without DCB is "not found".
fn read_pfc(root: &SysRoot, netdev: &str) -> Reading<PfcSetting> {
    let path = dcb_pfc_path(netdev);
    let config = live_or_recorded(
        root,
        &path,
        || crate::dcb::read_pfc(netdev).map_err(|error| dcb_error(&path, error)),
        |config| crate::dcb::format_pfc_text(netdev, config),
        crate::dcb::parse_pfc_text,
    )?;
    Ok(PfcSetting { enabled_priorities: config.enabled_priorities, trust: config.trust.map(|t| t.join(",")) })
}

/// An ethtool failure as a probe error at the statistics' node path: no statistics (loopback, drivers
/// without ETHTOOL_GSTATS) and a vanished interface are "not found", denial is a permission error.
fn ethtool_error(path: &Path, error: crate::ethtool::EthtoolError) -> ProbeError {
    let kind = if error.is_no_statistics() || error.is_not_found() {
        ProbeErrorKind::NotFound
    } else if matches!(error, crate::ethtool::EthtoolError::PermissionDenied { .. }) {
        ProbeErrorKind::PermissionDenied
    } else {
        ProbeErrorKind::Io(error.to_string())
    };
    ProbeError { path: path.to_path_buf(), kind }
}

/// A DCB failure as a probe error: a driver without DCB (veth, lo, many NICs) or without IEEE PFC is
/// "not found"; a vanished interface too.
fn dcb_error(path: &Path, error: crate::dcb::DcbError) -> ProbeError {
    let kind = match &error {
        error if error.is_unsupported() => ProbeErrorKind::NotFound,
        crate::dcb::DcbError::InterfaceNotFound { .. } => ProbeErrorKind::NotFound,
        crate::dcb::DcbError::PermissionDenied { .. } => ProbeErrorKind::PermissionDenied,
        other => ProbeErrorKind::Io(other.to_string()),
    };
    ProbeError { path: path.to_path_buf(), kind }
}
