//! Judgement of a transceiver's digital diagnostics (DDM/DOM): a reading against the module's own
//! alarm and warning thresholds, and the protocol's temperature ceiling. One place for triage's
//! readings of `ethtool -m` and `mlxlink -m` and for check's reading of the module EEPROM.
//!
//! The thresholds are the module's: SFF-8472 rev 12.4 table 9-5 (SFP, A2h bytes 0-39), SFF-8636
//! rev 2.10a 6.2.5 (QSFP, upper page 03h bytes 128-199) and CMIS 5.2 8.8 (page 02h). A module that
//! does not implement one gives zeros there, which is no threshold at all.

/// What a diagnostic reading measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    Temperature,
    Voltage,
    TxBias,
    TxPower,
    RxPower,
}

impl Quantity {
    pub fn name(self) -> &'static str {
        match self {
            Quantity::Temperature => "module temperature",
            Quantity::Voltage => "supply voltage",
            Quantity::TxBias => "laser bias current",
            Quantity::TxPower => "transmit power",
            Quantity::RxPower => "receive power",
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            Quantity::Temperature => "C",
            Quantity::Voltage => "V",
            Quantity::TxBias => "mA",
            Quantity::TxPower | Quantity::RxPower => "dBm",
        }
    }
}

/// The module's limits for one quantity (in the quantity's unit; optical power in dBm).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Thresholds {
    pub high_alarm: Option<f64>,
    pub low_alarm: Option<f64>,
    pub high_warning: Option<f64>,
    pub low_warning: Option<f64>,
}

impl Thresholds {
    /// A range `[low..high]` as mlxlink prints it: the alarm limits.
    pub fn alarm_range(low: f64, high: f64) -> Thresholds {
        Thresholds { high_alarm: Some(high), low_alarm: Some(low), ..Thresholds::default() }
    }

    /// Whether the module gave any usable limit: all-zero limits mean none was implemented.
    fn usable(&self) -> bool {
        let limits = [self.high_alarm, self.low_alarm, self.high_warning, self.low_warning];
        limits.iter().flatten().any(|v| *v != 0.0) && limits.iter().flatten().all(|v| v.is_finite())
    }
}

/// How far a reading is out of its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Normal,
    Warning,
    Alarm,
}

/// Where a reading stands against the module's thresholds, with the limit it crossed. `None` when
/// the module gave no usable threshold: nothing can be said, which is not "normal".
pub fn judge(value: f64, thresholds: &Thresholds) -> Option<(Level, Option<f64>)> {
    if !thresholds.usable() || !value.is_finite() {
        return None;
    }
    let above = |limit: Option<f64>| limit.filter(|l| value > *l);
    let below = |limit: Option<f64>| limit.filter(|l| value < *l);
    if let Some(limit) = above(thresholds.high_alarm).or_else(|| below(thresholds.low_alarm)) {
        return Some((Level::Alarm, Some(limit)));
    }
    if let Some(limit) = above(thresholds.high_warning).or_else(|| below(thresholds.low_warning)) {
        return Some((Level::Warning, Some(limit)));
    }
    Some((Level::Normal, None))
}

/// The temperature above which, at full load, the rack's airflow is not sufficient for line rate
/// (the burn-in protocol's optics rule: watch OSFP temperatures, act at 70 C). Policy may lower it.
pub const MAX_TEMPERATURE_C: f64 = 70.0;

/// Receive power at or below this is no light at all: SFF-8472/8636 encode 0 mW as the lowest
/// value, which tools print as -inf or -40 dBm.
pub const NO_LIGHT_DBM: f64 = -30.0;

/// Power in mW as dBm (10 log10 P/1mW); 0 mW is no light.
pub fn milliwatts_to_dbm(milliwatts: f64) -> f64 {
    if milliwatts <= 0.0 {
        f64::NEG_INFINITY
    } else {
        10.0 * milliwatts.log10()
    }
}

use fabricdoctor_probes::transceiver::{Limits, Module, ModuleReading};
use fabricdoctor_probes::ProbeErrorKind;

use crate::{Check, Finding, Inputs, Policy, Verdict};

impl From<Limits> for Thresholds {
    fn from(limits: Limits) -> Thresholds {
        Thresholds {
            high_alarm: Some(limits.high_alarm),
            low_alarm: Some(limits.low_alarm),
            high_warning: Some(limits.high_warning),
            low_warning: Some(limits.low_warning),
        }
    }
}

/// Optical power limits in dBm, as the readings are judged.
fn power_thresholds(limits: Limits) -> Thresholds {
    let dbm = |mw: f64| Some(milliwatts_to_dbm(mw));
    Thresholds {
        high_alarm: dbm(limits.high_alarm),
        low_alarm: dbm(limits.low_alarm),
        high_warning: dbm(limits.high_warning),
        low_warning: dbm(limits.low_warning),
    }
}

/// "eth2 (mlx5_0)": the netdev a module sits in, with its RDMA device.
fn module_subject(inputs: &Inputs<'_>, netdev: &str) -> String {
    match inputs.node.rdma_devices().iter().find(|d| d.netdevs.iter().any(|n| n == netdev)) {
        Some(device) => format!("{netdev} ({})", device.name),
        None => netdev.to_string(),
    }
}

/// The modules that could be judged, and a finding for each port that could not be: no module is
/// a skip with its reason, a bad page an error naming it. With no fabric port, or no module read
/// at all for the same reason everywhere, one skip says why (nothing passes unseen).
fn modules<'a>(id: &'static str, inputs: &'a Inputs<'_>) -> (Vec<(String, &'a Module)>, Vec<Finding>) {
    let Some(readings) = &inputs.node.optics else {
        return (
            Vec::new(),
            vec![Finding::new(id, Verdict::Skip, "node", "transceiver modules were not read in this run")],
        );
    };
    let readings: &[ModuleReading] = readings;
    if readings.is_empty() {
        return (
            Vec::new(),
            vec![Finding::new(id, Verdict::Skip, "node", "no fabric port (RDMA netdev) to read a module from")],
        );
    }
    let not_found: Vec<&ModuleReading> = readings
        .iter()
        .filter(|r| matches!(&r.module, Err(e) if matches!(e.kind, ProbeErrorKind::NotFound | ProbeErrorKind::NotInCapture)))
        .collect();
    if not_found.len() == readings.len() {
        let names: Vec<&str> = readings.iter().map(|r| r.netdev.as_str()).collect();
        return (
            Vec::new(),
            vec![Finding::new(
                id,
                Verdict::Skip,
                "node",
                format!(
                    "no transceiver module could be read on {} (DAC or backplane ports, empty cages, or a kernel \
                     without ethtool module access)",
                    names.join(", ")
                ),
            )],
        );
    }
    let mut judged = Vec::new();
    let mut findings = Vec::new();
    for reading in readings {
        let subject = module_subject(inputs, &reading.netdev);
        if let Ok(module) = &reading.module {
            // An identity page that failed its checksum: reported, while the monitors (other
            // pages, checked on their own) are still judged.
            for bad in &module.bad_pages {
                findings.push(Finding::new(id, Verdict::Error, subject.clone(), format!("{}: {bad}", reading.netdev)));
            }
        }
        match &reading.module {
            Ok(module) if !module.diagnostics => findings.push(Finding::new(
                id,
                Verdict::Skip,
                subject,
                format!("{} {} has no digital diagnostics (SFF-8472 A0h byte 92)", module.vendor, module.part_number),
            )),
            Ok(module) => judged.push((subject, module)),
            Err(error) => match error.kind {
                ProbeErrorKind::NotFound | ProbeErrorKind::NotInCapture => {
                    findings.push(Finding::new(id, Verdict::Skip, subject, "no module (DAC, backplane or empty cage)"))
                }
                ProbeErrorKind::PermissionDenied => findings.push(Finding::new(
                    id,
                    Verdict::Warn,
                    subject,
                    format!("{error}: re-run as root (CAP_NET_ADMIN) to read the module"),
                )),
                _ => findings.push(Finding::new(id, Verdict::Error, subject, error.to_string())),
            },
        }
    }
    (judged, findings)
}

fn level_verdict(level: Level) -> Verdict {
    match level {
        Level::Normal => Verdict::Pass,
        Level::Warning => Verdict::Warn,
        Level::Alarm => Verdict::Fail,
    }
}

#[derive(Debug)]
pub struct Temperature;

impl Check for Temperature {
    fn id(&self) -> &'static str {
        "optics.temperature"
    }
    fn doc_short(&self) -> &'static str {
        "Transceiver temperature against the module's limits and the protocol's 70 C ceiling"
    }
    fn doc_long(&self) -> &'static str {
        "Reads each fabric port's module temperature (SFF-8472 A2h 96, SFF-8636 byte 22, CMIS byte 14) \
         and the module's own limits. Above its high-warning limit: warn; above its high-alarm limit: fail. \
         The policy's [optics] max_temperature_c (70 by default, from the burn-in protocol: an optic at 70 C \
         under load means the rack's airflow cannot sustain line rate) is a ceiling beyond the module's \
         own: above it, fail. A module without diagnostics, or a port without a module, skips."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, policy: &Policy) -> Vec<Finding> {
        let (modules, mut findings) = modules(self.id(), inputs);
        let ceiling = policy.optics.max_temperature_c;
        for (subject, module) in modules {
            let Some(celsius) = module.temperature_c else {
                findings.push(Finding::new(self.id(), Verdict::Skip, subject, "the module reports no temperature"));
                continue;
            };
            let against = module.limits.temperature_c.map(Thresholds::from).and_then(|t| judge(celsius, &t));
            let (mut verdict, mut message) = match against {
                Some((level, Some(limit))) => {
                    (level_verdict(level), format!("{celsius:.1} C, past the module's {limit:.1} C limit"))
                }
                Some(_) => (Verdict::Pass, format!("{celsius:.1} C, within the module's limits")),
                None => (Verdict::Pass, format!("{celsius:.1} C (the module gives no limits)")),
            };
            if celsius >= ceiling {
                verdict = Verdict::Fail;
                message = format!(
                    "{celsius:.1} C, at or above the {ceiling:.0} C ceiling: the rack's airflow cannot sustain \
                     line rate (burn-in protocol)"
                );
            }
            let mut finding = Finding::new(self.id(), verdict, subject, message)
                .observed(format!("{celsius:.1} C"))
                .expected(format!("below {ceiling:.0} C and the module's warning limit"))
                .evidence(format!("{} {} serial {}", module.vendor, module.part_number, module.serial_number));
            if let Some(limits) = module.limits.temperature_c {
                finding = finding.evidence(format!(
                    "module limits: warning {:.1} C, alarm {:.1} C",
                    limits.high_warning, limits.high_alarm
                ));
            }
            findings.push(finding);
        }
        findings
    }
}

#[derive(Debug)]
pub struct Power;

impl Check for Power {
    fn id(&self) -> &'static str {
        "optics.power"
    }
    fn doc_short(&self) -> &'static str {
        "Transceiver lanes' RX/TX optical power against the module's limits; a lane without light"
    }
    fn doc_long(&self) -> &'static str {
        "Reads every lane's receive and transmit power (SFF-8472 A2h 102-105, SFF-8636 bytes 34-57, CMIS \
         page 11h 154-201) and judges them in dBm against the module's own limits: past a warning limit \
         warns, past an alarm limit fails. A lane in use with no receive light (loss of signal, or \
         -30 dBm and below) fails and is named: a dirty or broken fiber, or a dead far-end transmitter. \
         Lanes the module has deactivated (CMIS DataPathState) are not judged."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        let (modules, mut findings) = modules(self.id(), inputs);
        for (subject, module) in modules {
            if module.lanes.is_empty() {
                findings.push(Finding::new(self.id(), Verdict::Skip, subject, "the module reports no lane monitors"));
                continue;
            }
            for lane in module.lanes.iter().filter(|l| l.in_use) {
                let lane_subject = format!("{subject} lane {}", lane.number);
                let mut verdict = Verdict::Pass;
                let mut notes = Vec::new();
                let mut observed = Vec::new();
                for (name, value, limits) in [
                    ("RX", lane.rx_power_mw, module.limits.rx_power_mw),
                    ("TX", lane.tx_power_mw, module.limits.tx_power_mw),
                ] {
                    let Some(milliwatts) = value else { continue };
                    let dbm = milliwatts_to_dbm(milliwatts);
                    observed.push(format!("{name} {dbm:.2} dBm"));
                    if name == "RX" && (dbm <= NO_LIGHT_DBM || lane.rx_loss_of_signal == Some(true)) {
                        verdict = Verdict::Fail;
                        notes.push(format!(
                            "no receive light ({dbm:.2} dBm{})",
                            if lane.rx_loss_of_signal == Some(true) { ", loss of signal" } else { "" }
                        ));
                        continue;
                    }
                    if let Some((level, Some(limit))) = limits.map(power_thresholds).and_then(|t| judge(dbm, &t)) {
                        verdict = verdict.max(level_verdict(level));
                        notes.push(format!("{name} {dbm:.2} dBm past the module's {limit:.2} dBm limit"));
                    }
                }
                if observed.is_empty() {
                    continue;
                }
                let message =
                    if notes.is_empty() { "within the module's limits".to_string() } else { notes.join("; ") };
                findings.push(Finding::new(self.id(), verdict, lane_subject, message).observed(observed.join(", ")));
            }
        }
        findings
    }
}

#[derive(Debug)]
pub struct Alarms;

impl Check for Alarms {
    fn id(&self) -> &'static str {
        "optics.alarms"
    }
    fn doc_short(&self) -> &'static str {
        "Transceiver latched alarm and warning flags, and TX faults"
    }
    fn doc_long(&self) -> &'static str {
        "Reads the module's latched flags (SFF-8472 A2h 112-117, SFF-8636 bytes 6-14, CMIS byte 9 and \
         page 11h 134-151): a latched alarm or a transmitter fault fails, a latched warning warns, each \
         naming the quantity and the lane. Latched flags hold an excursion since the last read (reading \
         clears them, as `ethtool -m` does), so they catch what a single reading misses."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        let (modules, mut findings) = modules(self.id(), inputs);
        for (subject, module) in modules {
            let mut verdict = Verdict::Pass;
            let mut notes = Vec::new();
            for flag in &module.flags {
                verdict = verdict.max(if flag.is_alarm() { Verdict::Fail } else { Verdict::Warn });
                let lane = flag.lane.map(|l| format!(" lane {l}")).unwrap_or_default();
                notes.push(format!("{} {}{lane}", flag.quantity.replace('_', " "), flag.kind));
            }
            for lane in module.lanes.iter().filter(|l| l.in_use && l.tx_fault == Some(true)) {
                verdict = Verdict::Fail;
                notes.push(format!("transmitter fault lane {}", lane.number));
            }
            let message = if notes.is_empty() {
                "no latched alarm or warning".to_string()
            } else {
                format!("latched: {}", notes.join(", "))
            };
            findings.push(Finding::new(self.id(), verdict, subject, message));
        }
        findings
    }
}

#[derive(Debug)]
pub struct Inventory;

impl Check for Inventory {
    fn id(&self) -> &'static str {
        "optics.inventory"
    }
    fn doc_short(&self) -> &'static str {
        "Transceiver vendors and parts across the fabric ports, for information"
    }
    fn doc_long(&self) -> &'static str {
        "Lists each fabric port's module (vendor, part number, serial) and says whether the node mixes \
         vendors or parts. A mix is not a fault by itself, but when one port misbehaves it is the first \
         thing to compare, and optics of one part number share their firmware and their failures."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        let (modules, mut findings) = modules(self.id(), inputs);
        if modules.is_empty() {
            return findings;
        }
        let mut parts: Vec<String> = modules.iter().map(|(_, m)| format!("{} {}", m.vendor, m.part_number)).collect();
        parts.sort();
        parts.dedup();
        let message = match parts.as_slice() {
            [one] => format!("{} modules, all {one}", modules.len()),
            many => format!("{} modules of {} kinds (for information): {}", modules.len(), many.len(), many.join(", ")),
        };
        let mut finding = Finding::new(self.id(), Verdict::Pass, "node", message);
        for (subject, module) in &modules {
            finding = finding.evidence(format!(
                "{subject}: {} {} {} rev {} serial {}",
                module.identifier_name, module.vendor, module.part_number, module.revision, module.serial_number
            ));
        }
        findings.push(finding);
        findings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_against_the_module_limits() {
        // wobcom/transceiver-exporter#1: an SFP's receive limits.
        let rx = Thresholds {
            high_alarm: Some(2.5),
            low_alarm: Some(-16.4),
            high_warning: Some(0.5),
            low_warning: Some(-14.4),
        };
        assert_eq!(judge(-2.36, &rx), Some((Level::Normal, None)));
        assert_eq!(judge(-15.0, &rx), Some((Level::Warning, Some(-14.4))));
        assert_eq!(judge(-40.0, &rx), Some((Level::Alarm, Some(-16.4))));
        assert_eq!(judge(1.0, &Thresholds::default()), None);
        let zeros = Thresholds { high_alarm: Some(0.0), low_alarm: Some(0.0), ..Thresholds::default() };
        assert_eq!(judge(1.0, &zeros), None);
        assert_eq!(judge(80.0, &Thresholds::alarm_range(-5.0, 75.0)), Some((Level::Alarm, Some(75.0))));
        assert!((milliwatts_to_dbm(0.5806) - -2.36).abs() < 0.01);
        assert_eq!(milliwatts_to_dbm(0.0), f64::NEG_INFINITY);
    }
}
