//! Transceiver identity and digital diagnostics decoded from the module's memory, for the three
//! layouts fabric optics use: SFF-8472 rev 12.4 (SFP; A0h and the diagnostics at A2h), SFF-8636
//! rev 2.10a (QSFP+/QSFP28/QSFP56) and CMIS 5.2 (QSFP-DD, OSFP, QSFP112; 400G and 800G). The
//! identifier byte (SFF-8024 rev 4.11 table 4-1) says which. Each field cites its byte; values are
//! the modules' own units (SFF-8472 9.2 / SFF-8636 6.2.4 / CMIS 8.2.5: temperature s16 in 1/256
//! degC, supply u16 in 100 uV, bias u16 in 2 uA, optical power u16 in 0.1 uW), and the module's
//! own alarm and warning limits come with them.
//!
//! A page that is short or names an identifier this decoder does not know is an error naming that
//! page, and so is a monitor page whose checksum does not add up: no value is taken from a bad page.
//! An identity page with a bad checksum (recoded optics rewrite the vendor fields and often not the
//! checksum) leaves the identity empty and is listed in `bad_pages`, so the monitors on the other
//! pages are still judged and the bad page is still reported.
//! The memory is read live through ethtool netlink ([`crate::module_eeprom`]) or, in a capture,
//! from `ethtool/<if>/module-eeprom/<half page>` files.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::module_eeprom::{HalfPage, ModuleReadError, ModuleReader, HALF_PAGE};
use crate::root::SysRoot;
use crate::{ProbeError, ProbeErrorKind};

/// Which memory map the module follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    Sff8472,
    Sff8636,
    Cmis,
}

/// SFF-8024 table 4-1 identifiers this decoder reads, with their names.
pub fn identifier(byte: u8) -> Option<(Layout, &'static str)> {
    Some(match byte {
        0x03 => (Layout::Sff8472, "SFP/SFP+/SFP28"),
        0x0C => (Layout::Sff8636, "QSFP"),
        0x0D => (Layout::Sff8636, "QSFP+"),
        0x11 => (Layout::Sff8636, "QSFP28"),
        0x18 => (Layout::Cmis, "QSFP-DD"),
        0x19 => (Layout::Cmis, "OSFP"),
        0x1E => (Layout::Cmis, "QSFP+ or later with CMIS"),
        _ => return None,
    })
}

/// A module's own limits for one quantity (SFF-8472 A2h 0-39, SFF-8636 page 03h 128-199, CMIS
/// page 02h 128-199), in the quantity's unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Limits {
    pub high_alarm: f64,
    pub low_alarm: f64,
    pub high_warning: f64,
    pub low_warning: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ModuleLimits {
    pub temperature_c: Option<Limits>,
    pub supply_v: Option<Limits>,
    pub tx_bias_ma: Option<Limits>,
    pub tx_power_mw: Option<Limits>,
    pub rx_power_mw: Option<Limits>,
}

/// One optical lane (channel).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lane {
    /// 1-based, as the specifications and `ethtool -m` number them.
    pub number: u8,
    pub tx_bias_ma: Option<f64>,
    pub tx_power_mw: Option<f64>,
    pub rx_power_mw: Option<f64>,
    /// Loss of signal on receive, as the module flags it.
    pub rx_loss_of_signal: Option<bool>,
    pub tx_fault: Option<bool>,
    /// False for a lane the module has deactivated (CMIS DataPathState 1: not in use).
    pub in_use: bool,
}

/// A latched alarm or warning flag that is set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flag {
    /// "temperature", "supply", "tx_bias", "tx_power", "rx_power".
    pub quantity: &'static str,
    /// "high alarm", "low alarm", "high warning", "low warning".
    pub kind: &'static str,
    pub lane: Option<u8>,
}

impl Flag {
    pub fn is_alarm(&self) -> bool {
        self.kind.ends_with("alarm")
    }
}

/// What the module says about itself.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Module {
    pub layout: Layout,
    pub identifier: u8,
    pub identifier_name: &'static str,
    pub vendor: String,
    pub part_number: String,
    pub revision: String,
    pub serial_number: String,
    /// Whether the module implements diagnostics at all (SFF-8472 A0h 92 bit 6; the others
    /// always have the fields).
    pub diagnostics: bool,
    pub temperature_c: Option<f64>,
    pub supply_v: Option<f64>,
    pub lanes: Vec<Lane>,
    pub limits: ModuleLimits,
    pub flags: Vec<Flag>,
    /// Pages that failed their checksum. Only identity pages may be here (a recoded optic whose
    /// vendor fields were rewritten without the checksum); their fields are left empty, and the
    /// monitors, which live on other pages, are still read. A bad monitor page fails the decode.
    pub bad_pages: Vec<EepromError>,
}

/// A bad page: which half page, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("module page {page}: {reason}")]
pub struct EepromError {
    /// The half page's file name ([`HalfPage::file_name`]).
    pub page: String,
    pub reason: String,
}

fn bad(half: HalfPage, reason: impl Into<String>) -> EepromError {
    EepromError { page: half.file_name(), reason: reason.into() }
}

/// The half pages read from one module.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModuleMemory {
    pub pages: BTreeMap<HalfPage, Vec<u8>>,
}

impl ModuleMemory {
    /// A half page, which must be exactly 128 bytes; `None` when it was not read.
    fn get(&self, half: HalfPage) -> Result<Option<&[u8]>, EepromError> {
        match self.pages.get(&half) {
            None => Ok(None),
            Some(bytes) if bytes.len() == HALF_PAGE => Ok(Some(bytes)),
            Some(bytes) => Err(bad(half, format!("{} bytes, not {HALF_PAGE}", bytes.len()))),
        }
    }

    fn require(&self, half: HalfPage) -> Result<&[u8], EepromError> {
        self.get(half)?.ok_or_else(|| bad(half, "not read"))
    }
}

const A0: u8 = 0x50;
const A2: u8 = 0x51;

/// The half pages to read after the lower page, by layout and by what the lower page advertises.
pub fn pages_after(lower: &[u8]) -> Result<Vec<HalfPage>, EepromError> {
    let half = HalfPage::lower(A0);
    if lower.len() != HALF_PAGE {
        return Err(bad(half, format!("{} bytes, not {HALF_PAGE}", lower.len())));
    }
    let Some((layout, _)) = identifier(lower[0]) else {
        return Err(bad(half, format!("unknown identifier 0x{:02x} (SFF-8024 table 4-1)", lower[0])));
    };
    Ok(match layout {
        // A0h 92 bit 6: digital diagnostics implemented, at A2h.
        Layout::Sff8472 if lower[92] & 0x40 != 0 => vec![HalfPage::lower(A2)],
        Layout::Sff8472 => Vec::new(),
        // SFF-8636 6.2.1 byte 2 bit 2: Flat_mem, only page 00h exists.
        Layout::Sff8636 if lower[2] & 0x04 != 0 => vec![HalfPage::upper(A0, 0, 0)],
        Layout::Sff8636 => vec![HalfPage::upper(A0, 0, 0), HalfPage::upper(A0, 0, 3)],
        // CMIS 8.2.2 byte 2 bit 7: MemoryModel flat, only page 00h exists.
        Layout::Cmis if lower[2] & 0x80 != 0 => vec![HalfPage::upper(A0, 0, 0)],
        Layout::Cmis => vec![
            HalfPage::upper(A0, 0, 0),
            HalfPage::upper(A0, 0, 1),
            HalfPage::upper(A0, 0, 2),
            HalfPage::upper(A0, 0, 0x11),
        ],
    })
}

fn u16_at(page: &[u8], offset: usize) -> u16 {
    u16::from_be_bytes([page[offset], page[offset + 1]])
}

fn temperature(page: &[u8], offset: usize) -> f64 {
    f64::from(i16::from_be_bytes([page[offset], page[offset + 1]])) / 256.0
}

fn supply(page: &[u8], offset: usize) -> f64 {
    f64::from(u16_at(page, offset)) / 10_000.0
}

fn bias(page: &[u8], offset: usize, scale: f64) -> f64 {
    f64::from(u16_at(page, offset)) * 0.002 * scale
}

fn power(page: &[u8], offset: usize) -> f64 {
    f64::from(u16_at(page, offset)) / 10_000.0
}

/// A lane whose laser has neither bias nor output is switched off (TX disabled, or an unused leg
/// of a breakout): it is not in use, and its receiver's darkness says nothing.
fn laser_on(tx_bias_ma: f64, tx_power_mw: Option<f64>) -> bool {
    tx_bias_ma > 0.0 || tx_power_mw.is_some_and(|p| p > 0.0)
}

/// Four limits stored high alarm, low alarm, high warning, low warning, two bytes each.
fn limits(page: &[u8], offset: usize, value: impl Fn(&[u8], usize) -> f64) -> Limits {
    Limits {
        high_alarm: value(page, offset),
        low_alarm: value(page, offset + 2),
        high_warning: value(page, offset + 4),
        low_warning: value(page, offset + 6),
    }
}

/// ASCII fields are space-padded (SFF-8472 4.4, SFF-8636 6.3, CMIS 8.3).
fn text(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| if (0x20..0x7f).contains(&b) { b as char } else { ' ' })
        .collect::<String>()
        .trim()
        .to_string()
}

/// The low 8 bits of the sum of `range` must equal the byte at `at` (SFF-8472 CC_BASE/CC_EXT/
/// CC_DMI, SFF-8636 6.3 CC_BASE/CC_EXT, CMIS 8.3 page 00h byte 222).
fn checksum(half: HalfPage, page: &[u8], range: std::ops::RangeInclusive<usize>, at: usize) -> Result<(), EepromError> {
    let sum = page[range.clone()].iter().fold(0u8, |sum, &b| sum.wrapping_add(b));
    if sum == page[at] {
        Ok(())
    } else {
        let offset = if half.upper { HALF_PAGE } else { 0 };
        Err(bad(
            half,
            format!(
                "checksum of bytes {}-{} is 0x{sum:02x}, byte {} says 0x{:02x}",
                range.start() + offset,
                range.end() + offset,
                at + offset,
                page[at]
            ),
        ))
    }
}

const LEVELS: [&str; 4] = ["high alarm", "low alarm", "high warning", "low warning"];

/// Decode what was read.
pub fn decode(memory: &ModuleMemory) -> Result<Module, EepromError> {
    let lower = memory.require(HalfPage::lower(A0))?;
    let Some((layout, name)) = identifier(lower[0]) else {
        return Err(bad(HalfPage::lower(A0), format!("unknown identifier 0x{:02x} (SFF-8024 table 4-1)", lower[0])));
    };
    let mut module = match layout {
        Layout::Sff8472 => sff8472(memory, lower)?,
        Layout::Sff8636 => sff8636(memory, lower)?,
        Layout::Cmis => cmis(memory, lower)?,
    };
    module.identifier = lower[0];
    module.identifier_name = name;
    Ok(module)
}

fn empty(layout: Layout) -> Module {
    Module {
        layout,
        identifier: 0,
        identifier_name: "",
        vendor: String::new(),
        part_number: String::new(),
        revision: String::new(),
        serial_number: String::new(),
        diagnostics: true,
        temperature_c: None,
        supply_v: None,
        lanes: Vec::new(),
        limits: ModuleLimits::default(),
        flags: Vec::new(),
        bad_pages: Vec::new(),
    }
}

impl Module {
    /// Identity from `page`, unless its checksum failed: then the fields stay empty and the page is
    /// recorded as bad.
    fn identity(&mut self, checked: Result<(), EepromError>, fill: impl FnOnce(&mut Module)) {
        match checked {
            Ok(()) => fill(self),
            Err(error) => self.bad_pages.push(error),
        }
    }
}

/// SFF-8472 rev 12.4: A0h table 4-1 (identity), A2h tables 9-5 (limits), 9-11 (values), 9-12
/// (status), 9-13/9-14 (flags).
fn sff8472(memory: &ModuleMemory, a0: &[u8]) -> Result<Module, EepromError> {
    let lower = HalfPage::lower(A0);
    let mut module = empty(Layout::Sff8472);
    let checked = checksum(lower, a0, 0..=62, 63).and_then(|()| checksum(lower, a0, 64..=94, 95));
    module.identity(checked, |module| {
        module.vendor = text(&a0[20..36]);
        module.part_number = text(&a0[40..56]);
        module.revision = text(&a0[56..60]);
        module.serial_number = text(&a0[68..84]);
    });
    module.diagnostics = a0[92] & 0x40 != 0;
    if !module.diagnostics {
        return Ok(module);
    }
    let half = HalfPage::lower(A2);
    let Some(a2) = memory.get(half)? else {
        return Err(bad(half, "diagnostics advertised (A0h byte 92) but not read"));
    };
    // A0h 92 bit 4: externally calibrated; the raw values then need A2h 56-91's constants, which
    // this decoder does not apply: say so rather than report uncalibrated figures.
    if a0[92] & 0x10 != 0 && a0[92] & 0x20 == 0 {
        return Err(bad(half, "externally calibrated module (A0h byte 92 bit 4): calibration constants not applied"));
    }
    checksum(half, a2, 0..=94, 95)?;
    module.limits = ModuleLimits {
        temperature_c: Some(limits(a2, 0, temperature)),
        supply_v: Some(limits(a2, 8, supply)),
        tx_bias_ma: Some(limits(a2, 16, |p, o| bias(p, o, 1.0))),
        tx_power_mw: Some(limits(a2, 24, power)),
        rx_power_mw: Some(limits(a2, 32, power)),
    };
    module.temperature_c = Some(temperature(a2, 96));
    module.supply_v = Some(supply(a2, 98));
    module.lanes = vec![Lane {
        number: 1,
        tx_bias_ma: Some(bias(a2, 100, 1.0)),
        tx_power_mw: Some(power(a2, 102)),
        rx_power_mw: Some(power(a2, 104)),
        // Byte 110 bit 2 TX_Fault, bit 1 RX_LOS (real-time state).
        rx_loss_of_signal: Some(a2[110] & 0x02 != 0),
        tx_fault: Some(a2[110] & 0x04 != 0),
        in_use: laser_on(bias(a2, 100, 1.0), Some(power(a2, 102))),
    }];
    // A0h 93 bit 7: alarm/warning flags implemented. Bytes 112-113 alarms, 116-117 warnings:
    // temperature high/low (112 bits 7/6), supply (5/4), bias (3/2), TX power (1/0), RX power
    // (113 bits 7/6).
    if a0[93] & 0x80 != 0 {
        for (byte, kind_high, kind_low) in [(112usize, 0usize, 1usize), (116, 2, 3)] {
            let pairs = [
                ("temperature", a2[byte], 7),
                ("supply", a2[byte], 5),
                ("tx_bias", a2[byte], 3),
                ("tx_power", a2[byte], 1),
                ("rx_power", a2[byte + 1], 7),
            ];
            for (quantity, bits, high_bit) in pairs {
                if bits & (1 << high_bit) != 0 {
                    module.flags.push(Flag { quantity, kind: LEVELS[kind_high], lane: None });
                }
                if bits & (1 << (high_bit - 1)) != 0 {
                    module.flags.push(Flag { quantity, kind: LEVELS[kind_low], lane: None });
                }
            }
        }
    }
    Ok(module)
}

/// SFF-8636 rev 2.10a: lower page table 6-2 (status, flags 6.2.3, monitors 6.2.4), upper page
/// 00h table 6-15 (identity), upper page 03h table 6-26 (limits).
fn sff8636(memory: &ModuleMemory, lower: &[u8]) -> Result<Module, EepromError> {
    let identity_half = HalfPage::upper(A0, 0, 0);
    let identity = memory.require(identity_half)?;
    // Page 00h 191 CC_BASE over 128-190, 223 CC_EXT over 192-222 (indices within the half page).
    let mut module = empty(Layout::Sff8636);
    let checked =
        checksum(identity_half, identity, 0..=62, 63).and_then(|()| checksum(identity_half, identity, 64..=94, 95));
    module.identity(checked, |module| {
        module.vendor = text(&identity[20..36]); // 148-163
        module.part_number = text(&identity[40..56]); // 168-183
        module.revision = text(&identity[56..58]); // 184-185
        module.serial_number = text(&identity[68..84]); // 196-211
    });
    // Page 00h byte 220 advertises which monitors exist, but modules set it loosely (an AVAGO
    // QSFP+ with 0x08 there reports temperature and TX power): like `ethtool -m`, read them all.
    module.temperature_c = Some(temperature(lower, 22));
    module.supply_v = Some(supply(lower, 26));
    for lane in 0..4usize {
        let tx_bias_ma = bias(lower, 42 + 2 * lane, 1.0);
        let tx_power_mw = Some(power(lower, 50 + 2 * lane));
        module.lanes.push(Lane {
            number: lane as u8 + 1,
            rx_power_mw: Some(power(lower, 34 + 2 * lane)),
            tx_bias_ma: Some(tx_bias_ma),
            tx_power_mw,
            // Byte 3 bits 3-0 RX LOS lanes 4-1; byte 4 bits 3-0 TX fault lanes 4-1.
            rx_loss_of_signal: Some(lower[3] & (1 << lane) != 0),
            tx_fault: Some(lower[4] & (1 << lane) != 0),
            in_use: laser_on(tx_bias_ma, tx_power_mw),
        });
    }
    // Byte 6 temperature, 7 supply: bits 7-4 high alarm, low alarm, high warning, low warning.
    for (quantity, byte) in [("temperature", lower[6]), ("supply", lower[7])] {
        for (bit, kind) in LEVELS.iter().enumerate() {
            if byte & (0x80 >> bit) != 0 {
                module.flags.push(Flag { quantity, kind, lane: None });
            }
        }
    }
    // Bytes 9-10 RX power, 11-12 TX bias, 13-14 TX power: a nibble per lane, lanes 1 and 2 in
    // the first byte (high nibble lane 1), each nibble high alarm, low alarm, high warning, low
    // warning from its top bit.
    for (quantity, first) in [("rx_power", 9usize), ("tx_bias", 11), ("tx_power", 13)] {
        for lane in 0..4usize {
            let nibble = (lower[first + lane / 2] >> if lane % 2 == 0 { 4 } else { 0 }) & 0x0f;
            for (bit, kind) in LEVELS.iter().enumerate() {
                if nibble & (0x08 >> bit) != 0 {
                    module.flags.push(Flag { quantity, kind, lane: Some(lane as u8 + 1) });
                }
            }
        }
    }
    if let Some(thresholds) = memory.get(HalfPage::upper(A0, 0, 3))? {
        // Page 03h: temperature 128-135, supply 144-151, RX power 176-183, TX bias 184-191,
        // TX power 192-199.
        module.limits = ModuleLimits {
            temperature_c: Some(limits(thresholds, 0, temperature)),
            supply_v: Some(limits(thresholds, 16, supply)),
            rx_power_mw: Some(limits(thresholds, 48, power)),
            tx_bias_ma: Some(limits(thresholds, 56, |p, o| bias(p, o, 1.0))),
            tx_power_mw: Some(limits(thresholds, 64, power)),
        };
    }
    Ok(module)
}

/// CMIS 5.2: lower page table 8-4 (module state 8.2.3, flags 8.2.4, monitors 8.2.5, applications
/// 8.2.12), page 00h table 8-29 (identity), page 01h 8.4 (advertising), page 02h table 8-67
/// (limits), bank 0 page 11h 8.9 (lane flags and monitors).
fn cmis(memory: &ModuleMemory, lower: &[u8]) -> Result<Module, EepromError> {
    let identity_half = HalfPage::upper(A0, 0, 0);
    let identity = memory.require(identity_half)?;
    // Page 00h 222: checksum over 128-221.
    let mut module = empty(Layout::Cmis);
    module.identity(checksum(identity_half, identity, 0..=93, 94), |module| {
        module.vendor = text(&identity[1..17]); // 129-144
        module.part_number = text(&identity[20..36]); // 148-163
        module.revision = text(&identity[36..38]); // 164-165
        module.serial_number = text(&identity[38..54]); // 166-181
    });
    module.temperature_c = Some(temperature(lower, 14));
    module.supply_v = Some(supply(lower, 16));
    // Byte 9: temperature high alarm, low alarm, high warning, low warning in bits 0-3, supply in
    // bits 4-7.
    for (bit, kind) in LEVELS.iter().enumerate() {
        if lower[9] & (1 << bit) != 0 {
            module.flags.push(Flag { quantity: "temperature", kind, lane: None });
        }
        if lower[9] & (0x10 << bit) != 0 {
            module.flags.push(Flag { quantity: "supply", kind, lane: None });
        }
    }
    if lower[2] & 0x80 != 0 {
        // Flat memory: no lane monitors or limits to read.
        return Ok(module);
    }
    // The first application's media lane count (byte 88 bits 3-0); 8 when it says none.
    let media_lanes = match lower[88] & 0x0f {
        0 => 8,
        count => count.min(8),
    };
    // Page 01h byte 160 bits 4-3: TX bias current multiplier 1, 2 or 4.
    let bias_scale = match memory.get(HalfPage::upper(A0, 0, 1))? {
        Some(advertising) => match (advertising[32] >> 3) & 0x03 {
            1 => 2.0,
            2 => 4.0,
            _ => 1.0,
        },
        None => 1.0,
    };
    if let Some(thresholds) = memory.get(HalfPage::upper(A0, 0, 2))? {
        // Page 02h: temperature 128-135, supply 136-143, TX power 176-183, TX bias 184-191,
        // RX power 192-199.
        module.limits = ModuleLimits {
            temperature_c: Some(limits(thresholds, 0, temperature)),
            supply_v: Some(limits(thresholds, 8, supply)),
            tx_power_mw: Some(limits(thresholds, 48, power)),
            tx_bias_ma: Some(limits(thresholds, 56, move |p, o| bias(p, o, bias_scale))),
            rx_power_mw: Some(limits(thresholds, 64, power)),
        };
    }
    let Some(lanes) = memory.get(HalfPage::upper(A0, 0, 0x11))? else { return Ok(module) };
    for lane in 0..usize::from(media_lanes) {
        let bit = 1u8 << lane;
        // Bytes 128-131: DataPathState, a nibble per lane (lane 1 in the low nibble of 128).
        let state = (lanes[lane / 2] >> if lane % 2 == 0 { 0 } else { 4 }) & 0x0f;
        // 154-169 TX power, 170-185 TX bias, 186-201 RX power, two bytes per lane.
        let tx_power_mw = power(lanes, 26 + 2 * lane);
        let tx_bias_ma = bias(lanes, 42 + 2 * lane, bias_scale);
        module.lanes.push(Lane {
            number: lane as u8 + 1,
            tx_power_mw: Some(tx_power_mw),
            tx_bias_ma: Some(tx_bias_ma),
            rx_power_mw: Some(power(lanes, 58 + 2 * lane)),
            // 135 TX fault, 147 RX LOS: a bit per lane (134 is the data path state-changed flag).
            tx_fault: Some(lanes[7] & bit != 0),
            rx_loss_of_signal: Some(lanes[19] & bit != 0),
            // DataPathState 1 is DPDeactivated: the lane is not in use.
            in_use: state != 1 && laser_on(tx_bias_ma, Some(tx_power_mw)),
        });
        // 139-142 TX power, 143-146 TX bias, 149-152 RX power flags: a byte per level (high
        // alarm, low alarm, high warning, low warning), a bit per lane.
        for (quantity, first) in [("tx_power", 11usize), ("tx_bias", 15), ("rx_power", 21)] {
            for (level, kind) in LEVELS.iter().enumerate() {
                if lanes[first + level] & bit != 0 {
                    module.flags.push(Flag { quantity, kind, lane: Some(lane as u8 + 1) });
                }
            }
        }
    }
    Ok(module)
}

/// Node path of the directory a snapshot stores a module's half pages in.
pub fn eeprom_dir(netdev: &str) -> PathBuf {
    PathBuf::from("ethtool").join(netdev).join("module-eeprom")
}

/// The modules behind the netdevs of hardware RDMA devices (the fabric ports), each once. Software
/// devices (rxe, siw) ride on a netdev whose module, if any, belongs to the NIC underneath.
pub fn read_fabric_modules(root: &SysRoot, devices: &[crate::rdma::RdmaDevice]) -> Vec<ModuleReading> {
    let mut netdevs: Vec<&str> =
        devices.iter().filter(|d| !d.software).flat_map(|d| d.netdevs.iter().map(String::as_str)).collect();
    netdevs.sort_unstable();
    netdevs.dedup();
    netdevs.into_iter().map(|netdev| read_module(root, netdev)).collect()
}

/// How one netdev's module was read.
#[derive(Debug, Clone, Serialize)]
pub struct ModuleReading {
    pub netdev: String,
    /// The module, or why there is none to judge: `NotFound` for no module (DAC, backplane,
    /// empty cage, a driver without module access), `Malformed` for a bad page.
    pub module: Result<Module, ProbeError>,
}

/// Read and decode the module behind `netdev`: live through ethtool netlink (recording the half
/// pages for a snapshot), or from a capture's files.
pub fn read_module(root: &SysRoot, netdev: &str) -> ModuleReading {
    let dir = eeprom_dir(netdev);
    let memory = if root.is_live() { read_live(root, netdev, &dir) } else { read_captured(root, &dir) };
    let module = memory.and_then(|memory| {
        decode(&memory).map_err(|error| ProbeError {
            path: dir.join(&error.page),
            kind: ProbeErrorKind::Io(format!("{netdev}: {error}")),
        })
    });
    ModuleReading { netdev: netdev.to_string(), module }
}

fn read_live(root: &SysRoot, netdev: &str, dir: &std::path::Path) -> Result<ModuleMemory, ProbeError> {
    let error = |half: HalfPage, error: ModuleReadError| {
        let kind = match &error {
            ModuleReadError::NoModule { .. } | ModuleReadError::NoEthtoolNetlink(_) => ProbeErrorKind::NotFound,
            ModuleReadError::PermissionDenied { .. } => ProbeErrorKind::PermissionDenied,
            other => ProbeErrorKind::Io(other.to_string()),
        };
        ProbeError { path: dir.join(half.file_name()), kind }
    };
    let first = HalfPage::lower(A0);
    let reader = ModuleReader::open(netdev);
    let lower = match &reader {
        Ok(reader) => reader.read(first),
        Err(error) => Err(error.clone()),
    };
    // A kernel without ethtool netlink, or without MODULE_EEPROM_GET (before 5.13: the unknown
    // command is EOPNOTSUPP, as a driver without module access answers), may still give the module
    // through the older ioctls; a driver without it refuses those too, and that is "no module".
    let lower = match lower {
        Err(
            ModuleReadError::NoEthtoolNetlink(_)
            | ModuleReadError::NoModule { errno: nix::errno::Errno::EOPNOTSUPP, .. },
        ) => {
            return read_ioctl_image(root, netdev, dir).map_err(|e| error(first, e));
        }
        other => other.map_err(|e| error(first, e))?,
    };
    let reader = reader.map_err(|e| error(first, e))?;
    let mut memory = ModuleMemory::default();
    root.record_synthesized(dir.join(first.file_name()), lower.clone());
    let next = pages_after(&lower)
        .map_err(|e| ProbeError { path: dir.join(&e.page), kind: ProbeErrorKind::Io(format!("{netdev}: {e}")) })?;
    memory.pages.insert(first, lower);
    for half in next {
        // A page the module does not have is left out; decode says what it missed.
        if let Ok(bytes) = reader.read(half) {
            root.record_synthesized(dir.join(half.file_name()), bytes.clone());
            memory.pages.insert(half, bytes);
        }
    }
    Ok(memory)
}

/// The ioctl path: one flat image, cut into the half pages the netlink path would have read
/// (SFF-8472: A0h then A2h; SFF-8636: the lower page, then upper pages 00h-03h), recorded alike.
fn read_ioctl_image(root: &SysRoot, netdev: &str, dir: &std::path::Path) -> Result<ModuleMemory, ModuleReadError> {
    let (kind, image) = crate::ethtool::read_module_image(netdev).map_err(|error| match error {
        crate::ethtool::EthtoolError::Failed { errno, .. }
            if matches!(errno, nix::errno::Errno::EOPNOTSUPP | nix::errno::Errno::EIO | nix::errno::Errno::EINVAL) =>
        {
            ModuleReadError::NoModule { interface: netdev.to_string(), errno }
        }
        crate::ethtool::EthtoolError::InterfaceNotFound { .. } => {
            ModuleReadError::NoModule { interface: netdev.to_string(), errno: nix::errno::Errno::ENODEV }
        }
        other => ModuleReadError::Malformed { interface: netdev.to_string(), reason: other.to_string() },
    })?;
    let memory = memory_from_image(kind, &image);
    for (half, bytes) in &memory.pages {
        root.record_synthesized(dir.join(half.file_name()), bytes.clone());
    }
    Ok(memory)
}

/// `ETH_MODULE_SFF_8472` (include/uapi/linux/ethtool.h): A0h and A2h, 256 bytes each.
const ETH_MODULE_SFF_8472: u32 = 0x2;

/// Half pages of a flat image as the module ioctls lay it out.
pub fn memory_from_image(kind: u32, image: &[u8]) -> ModuleMemory {
    let halves: &[HalfPage] = if kind == ETH_MODULE_SFF_8472 {
        &[HalfPage::lower(A0), HalfPage::upper(A0, 0, 0), HalfPage::lower(A2), HalfPage::upper(A2, 0, 0)]
    } else {
        &[
            HalfPage::lower(A0),
            HalfPage::upper(A0, 0, 0),
            HalfPage::upper(A0, 0, 1),
            HalfPage::upper(A0, 0, 2),
            HalfPage::upper(A0, 0, 3),
        ]
    };
    let mut memory = ModuleMemory::default();
    for (half, chunk) in halves.iter().zip(image.chunks(HALF_PAGE)) {
        memory.pages.insert(*half, chunk.to_vec());
    }
    memory
}

fn read_captured(root: &SysRoot, dir: &std::path::Path) -> Result<ModuleMemory, ProbeError> {
    let mut memory = ModuleMemory::default();
    for name in root.read_dir(dir)? {
        let Some(half) = HalfPage::from_file_name(&name) else { continue };
        memory.pages.insert(half, root.read_bytes(dir.join(&name))?);
    }
    if !memory.pages.contains_key(&HalfPage::lower(A0)) {
        return Err(root.absent(dir.join("lower")));
    }
    Ok(memory)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CMIS OSFP with 8 lanes, built by hand: 45.5 C, 3.3 V, lane 3 without light, limits from
    /// page 02h, the high-temperature warning latched.
    pub(crate) fn cmis_memory(temperature_c: f64, dark_lane: Option<usize>) -> ModuleMemory {
        let mut lower = vec![0u8; 128];
        lower[0] = 0x19;
        lower[9] = 0x04; // temperature high warning
        let t = (temperature_c * 256.0) as i16;
        lower[14..16].copy_from_slice(&t.to_be_bytes());
        lower[16..18].copy_from_slice(&33_000u16.to_be_bytes());
        lower[88] = 0x88; // 8 host lanes, 8 media lanes
        let mut identity = vec![0u8; 128];
        identity[0] = 0x19;
        identity[1..17].copy_from_slice(b"NVIDIA          ");
        identity[20..36].copy_from_slice(b"MMS4X00-NS      ");
        identity[38..54].copy_from_slice(b"MT2330FT01234   ");
        identity[94] = identity[0..=93].iter().fold(0u8, |s, &b| s.wrapping_add(b));
        let mut thresholds = vec![0u8; 128];
        for (offset, values) in [
            (0usize, [75.0f64 * 256.0, -5.0 * 256.0, 70.0 * 256.0, 0.0]),
            (8, [36_300.0, 29_700.0, 34_650.0, 31_350.0]),
            (64, [3.9811 * 10_000.0, 0.0447 * 10_000.0, 2.5119 * 10_000.0, 0.0891 * 10_000.0]),
        ] {
            for (i, value) in values.iter().enumerate() {
                let bytes = if offset == 0 { (*value as i16).to_be_bytes() } else { (*value as u16).to_be_bytes() };
                thresholds[offset + 2 * i..offset + 2 * i + 2].copy_from_slice(&bytes);
            }
        }
        let mut lanes = vec![0u8; 128];
        for lane in 0..8 {
            lanes[lane / 2] |= 4 << if lane % 2 == 0 { 0 } else { 4 }; // DPActivated
            let rx = if Some(lane) == dark_lane { 0u16 } else { 8_000 };
            lanes[58 + 2 * lane..60 + 2 * lane].copy_from_slice(&rx.to_be_bytes());
            lanes[26 + 2 * lane..28 + 2 * lane].copy_from_slice(&9_000u16.to_be_bytes());
            lanes[42 + 2 * lane..44 + 2 * lane].copy_from_slice(&4_000u16.to_be_bytes());
        }
        if let Some(lane) = dark_lane {
            lanes[19] |= 1 << lane; // RX LOS
            lanes[22] |= 1 << lane; // RX power low alarm
        }
        let mut memory = ModuleMemory::default();
        memory.pages.insert(HalfPage::lower(A0), lower);
        memory.pages.insert(HalfPage::upper(A0, 0, 0), identity);
        memory.pages.insert(HalfPage::upper(A0, 0, 2), thresholds);
        memory.pages.insert(HalfPage::upper(A0, 0, 0x11), lanes);
        memory
    }

    #[test]
    fn a_hand_built_cmis_module_decodes_with_its_limits_and_flags() {
        let module = decode(&cmis_memory(45.5, Some(2))).expect("decodes");
        assert_eq!((module.layout, module.identifier_name), (Layout::Cmis, "OSFP"));
        assert_eq!((module.vendor.as_str(), module.part_number.as_str()), ("NVIDIA", "MMS4X00-NS"));
        assert_eq!(module.serial_number, "MT2330FT01234");
        assert_eq!(module.temperature_c, Some(45.5));
        assert_eq!(module.supply_v, Some(3.3));
        assert_eq!(module.lanes.len(), 8);
        assert_eq!(module.lanes[0].rx_power_mw, Some(0.8));
        assert_eq!(module.lanes[0].tx_bias_ma, Some(8.0));
        assert_eq!(module.lanes[2].rx_power_mw, Some(0.0));
        assert_eq!(module.lanes[2].rx_loss_of_signal, Some(true));
        let limits = module.limits.temperature_c.expect("limits");
        assert_eq!((limits.high_alarm, limits.high_warning), (75.0, 70.0));
        assert!(module.flags.contains(&Flag { quantity: "temperature", kind: "high warning", lane: None }));
        assert!(module.flags.contains(&Flag { quantity: "rx_power", kind: "low alarm", lane: Some(3) }));
        assert_eq!(module.flags.len(), 2, "{:?}", module.flags);
    }

    /// A case of tests/optics: its file name, its half pages, and its answer key.
    type Case = (String, ModuleMemory, Vec<(String, String)>);

    /// tests/optics/*.txt: real module memory (and one generated CMIS case) with its answer key.
    fn corpus() -> Vec<Case> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/optics");
        let mut cases = Vec::new();
        let mut paths: Vec<_> = std::fs::read_dir(&dir).expect("tests/optics").flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths.into_iter().filter(|p| p.extension().is_some_and(|e| e == "txt")) {
            let text = std::fs::read_to_string(&path).expect("case");
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let expected_text = text.split("\n--- expected\n").nth(1).and_then(|t| t.split("\n--- pages\n").next());
            let expected: Vec<(String, String)> = expected_text
                .expect("an --- expected section")
                .lines()
                .filter(|l| !l.starts_with('#') && l.contains(" = "))
                .filter_map(|l| l.split_once(" = ").map(|(k, v)| (k.to_string(), v.to_string())))
                .collect();
            let pages_text = text.split("\n--- pages\n").nth(1).expect("a --- pages section");
            let mut memory = ModuleMemory::default();
            let mut current: Option<(HalfPage, Vec<u8>)> = None;
            for line in pages_text.lines() {
                if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                    if let Some((half, bytes)) = current.take() {
                        memory.pages.insert(half, bytes);
                    }
                    current = Some((HalfPage::from_file_name(name).expect("page name"), Vec::new()));
                } else if let Some((_, bytes)) = &mut current {
                    bytes.extend(line.split_whitespace().map(|b| u8::from_str_radix(b, 16).expect("hex")));
                }
            }
            if let Some((half, bytes)) = current {
                memory.pages.insert(half, bytes);
            }
            cases.push((name, memory, expected));
        }
        cases
    }

    fn lane_value(module: &Module, key: &str) -> Option<String> {
        let (lane, field) = key.strip_prefix("lane")?.split_once('.')?;
        let lane = module.lanes.iter().find(|l| l.number.to_string() == lane)?;
        Some(match field {
            "tx_bias_ma" => format!("{:?}", lane.tx_bias_ma?),
            "tx_power_mw" => format!("{:?}", lane.tx_power_mw?),
            "rx_power_mw" => format!("{:?}", lane.rx_power_mw?),
            "rx_loss_of_signal" => format!("{}", lane.rx_loss_of_signal?),
            "tx_fault" => format!("{}", lane.tx_fault?),
            _ => return None,
        })
    }

    fn limit_value(module: &Module, key: &str) -> Option<String> {
        let mut parts = key.strip_prefix("limits.")?.split('.');
        let (quantity, level) = (parts.next()?, parts.next()?);
        let limits = match quantity {
            "temperature_c" => module.limits.temperature_c,
            "supply_v" => module.limits.supply_v,
            "tx_bias_ma" => module.limits.tx_bias_ma,
            "tx_power_mw" => module.limits.tx_power_mw,
            "rx_power_mw" => module.limits.rx_power_mw,
            _ => None,
        }?;
        Some(format!(
            "{:?}",
            match level {
                "high_alarm" => limits.high_alarm,
                "low_alarm" => limits.low_alarm,
                "high_warning" => limits.high_warning,
                "low_warning" => limits.low_warning,
                _ => return None,
            }
        ))
    }

    #[test]
    fn real_module_dumps_decode_to_their_answer_keys() {
        let cases = corpus();
        assert!(cases.len() >= 9, "{} cases", cases.len());
        let mut checked = 0;
        for (name, memory, expected) in cases {
            let module = decode(&memory).unwrap_or_else(|e| panic!("{name}: {e}"));
            let flags: Vec<String> = module
                .flags
                .iter()
                .map(|f| {
                    format!("{} {}{}", f.quantity, f.kind, f.lane.map(|l| format!(" lane {l}")).unwrap_or_default())
                })
                .collect();
            for (key, want) in expected {
                let got = match key.as_str() {
                    "identifier" => Some(format!("0x{:02x}", module.identifier)),
                    "vendor" => Some(module.vendor.clone()),
                    "part_number" => Some(module.part_number.clone()),
                    "serial_number" => Some(module.serial_number.clone()),
                    "revision" => Some(module.revision.clone()),
                    "diagnostics" => Some(module.diagnostics.to_string()),
                    "lanes" => Some(module.lanes.iter().filter(|l| l.in_use).count().to_string()),
                    "flags" => Some(module.flags.len().to_string()),
                    "bad_page" => module.bad_pages.iter().any(|e| e.page == want).then(|| want.clone()),
                    "flag" => flags.contains(&want).then(|| want.clone()),
                    "temperature_c" => module.temperature_c.map(|v| format!("{v:?}")),
                    "supply_v" => module.supply_v.map(|v| format!("{v:?}")),
                    key if key.starts_with("lane") => lane_value(&module, key),
                    key => limit_value(&module, key),
                };
                let got = got.unwrap_or_else(|| panic!("{name}: {key} not decoded"));
                match (want.parse::<f64>(), got.parse::<f64>()) {
                    (Ok(want_number), Ok(got_number)) if !want.starts_with("0x") => assert!(
                        (want_number - got_number).abs() <= 0.0005 + want_number.abs() * 1e-4,
                        "{name}: {key} = {got}, the answer key says {want}"
                    ),
                    _ => assert_eq!(got, want, "{name}: {key}"),
                }
                checked += 1;
            }
        }
        assert!(checked > 80, "{checked} values checked");
    }

    #[test]
    fn a_flat_ioctl_image_is_cut_into_the_same_half_pages() {
        for (name, kind) in
            [("sff8472-fs-sfp28-25gsr-85.txt", ETH_MODULE_SFF_8472), ("sff8636-mellanox-mma1b00-ss1.txt", 0x4)]
        {
            let (_, memory, _) = corpus().into_iter().find(|(n, ..)| n == name).expect("case");
            let image: Vec<u8> = memory.pages.values().flatten().copied().collect();
            let cut = memory_from_image(kind, &image);
            assert_eq!(cut, memory, "{name}");
            assert!(decode(&cut).is_ok());
        }
    }

    /// On this machine's kernel: `lo` has no module (EOPNOTSUPP from the driver), and a kernel
    /// without ethtool netlink (or a sandbox without generic netlink) has none to give either:
    /// both are "not found", which the optics checks turn into a skip with the reason.
    #[test]
    fn a_live_netdev_without_a_module_is_not_found() {
        let reading = read_module(&SysRoot::live(), "lo");
        let error = reading.module.expect_err("lo has no module");
        assert_eq!(error.kind, ProbeErrorKind::NotFound, "{error}");
        assert!(error.path.ends_with("ethtool/lo/module-eeprom/lower"), "{}", error.path.display());
    }

    #[test]
    fn bad_pages_are_errors_that_name_the_page() {
        let mut memory = cmis_memory(40.0, None);
        memory.pages.get_mut(&HalfPage::upper(A0, 0, 0)).expect("page")[5] ^= 0xff;
        let module = decode(&memory).expect("the monitors are on other pages");
        assert_eq!(module.bad_pages.len(), 1);
        assert_eq!(module.bad_pages[0].page, "page-00h");
        assert!(module.bad_pages[0].reason.contains("checksum of bytes 128-221"), "{:?}", module.bad_pages);
        assert_eq!((module.vendor.as_str(), module.temperature_c), ("", Some(40.0)), "no identity from a bad page");
        let mut memory = cmis_memory(40.0, None);
        memory.pages.get_mut(&HalfPage::upper(A0, 0, 0x11)).expect("page").truncate(100);
        assert_eq!(decode(&memory).expect_err("short").page, "page-11h");
        let mut memory = cmis_memory(40.0, None);
        memory.pages.get_mut(&HalfPage::lower(A0)).expect("page")[0] = 0x7f;
        assert!(decode(&memory).expect_err("identifier").reason.contains("unknown identifier 0x7f"));
        assert!(decode(&ModuleMemory::default()).expect_err("nothing").reason.contains("not read"));
        assert!(pages_after(&[0x11; 20]).is_err());
        // Every byte of every page flipped in turn: an error or a module, never a panic.
        let memory = cmis_memory(40.0, Some(1));
        for (half, bytes) in &memory.pages {
            for index in 0..bytes.len() {
                let mut damaged = memory.clone();
                damaged.pages.get_mut(half).expect("page")[index] ^= 0xa5;
                let _ = decode(&damaged);
            }
        }
    }
}
