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
