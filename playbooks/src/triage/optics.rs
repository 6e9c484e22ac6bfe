//! Transceiver diagnostics as operators paste them: `ethtool -m IFACE` (the kernel's module EEPROM
//! decoded by ethtool: `sfpdiag.c` for SFP, `qsfp.c` for QSFP, `cmis.c` for QSFP-DD/OSFP) and
//! `mlxlink -d DEV -m` (NVIDIA MFT: the "Module Info" block with `value [low..high]`, and the
//! "Troubleshooting Info" and BER blocks). Readings are judged by `fabricdoctor_checks::optics`,
//! the same judgement check applies to the EEPROM it reads.
//!
//! Formats read:
//! - ethtool: `Module temperature : 35.00 degrees C / 95.00 degrees F`, `Laser output power :
//!   0.6770 mW / -1.69 dBm`, `Rcvr signal avg optical power(Channel 2) : 0.0000 mW / -inf dBm`,
//!   `Laser rx power low alarm threshold : 0.0229 mW / -16.40 dBm`, flags `Laser rx power low alarm
//!   (Chan 2) : On`; the module's per-lane status flags of a QSFP or CMIS module (ethtool's
//!   qsfp.c and cmis.c, from ethtool 6.x): `Rx loss of signal : [ Yes, Yes, No, No ]`, `Tx fault :
//!   None`.
//! - mlxlink: `Temperature [C] : 54 [-5..75]`, `Rx Power Current [dBm] : 1.886,1.989,2.281,1.976
//!   [-10.41..6]`, `Status Opcode : 0`, `Recommendation : No issue was observed`, `Effective
//!   Physical Errors : 0`.

use std::collections::BTreeMap;

use fabricdoctor_checks::optics::{
    judge, milliwatts_to_dbm, Level, Quantity, Thresholds, MAX_TEMPERATURE_C, NO_LIGHT_DBM,
};

use super::lines::numbered_lines;
use crate::fact::{Evidence, Fact};

/// Which quantity an ethtool label names.
fn quantity_of(label: &str) -> Option<Quantity> {
    let label = label.to_ascii_lowercase();
    if label.contains("temperature") {
        Some(Quantity::Temperature)
    } else if label.contains("voltage") {
        Some(Quantity::Voltage)
    } else if label.contains("bias") {
        Some(Quantity::TxBias)
    } else if label.contains("laser output power")
        || label.contains("transmit avg optical power")
        || label.contains("tx power")
    {
        Some(Quantity::TxPower)
    } else if label.contains("receiver signal") || label.contains("rcvr signal") || label.contains("rx power") {
        Some(Quantity::RxPower)
    } else {
        None
    }
}

/// The lane a label names: `(Channel 2)`, `(Chan 2)`, `(Lane 2)`.
fn lane_of(label: &str) -> Option<u32> {
    let open = label.rfind('(')?;
    let inner = label[open + 1..].trim_end_matches(')');
    inner.split_whitespace().last()?.parse().ok()
}

/// A value in the quantity's unit: dBm for power (converted from mW when only mW is printed),
/// degrees C, volts, mA.
fn value_of(quantity: Quantity, text: &str) -> Option<f64> {
    let number_before = |unit: &str| -> Option<f64> {
        let at = text.find(unit)?;
        let word = text[..at].split_whitespace().last()?;
        match word {
            "-inf" => Some(f64::NEG_INFINITY),
            _ => word.parse().ok(),
        }
    };
    match quantity {
        Quantity::TxPower | Quantity::RxPower => {
            number_before("dBm").or_else(|| number_before("mW").map(milliwatts_to_dbm))
        }
        Quantity::Temperature => number_before("degrees C"),
        Quantity::Voltage => number_before(" V").or_else(|| number_before("V")),
        Quantity::TxBias => number_before("mA"),
    }
}

/// A line's label and value: `Label : value` as ethtool and mlxlink print them, or `"Label" :
/// "value",` as `mlxlink --json` prints the same fields (its "Module Info", "Operational Info" and
/// "Troubleshooting Info" objects hold the text form's strings, ranges included).
fn field(line: &str) -> Option<(&str, &str)> {
    let line = line.trim();
    if let Some(quoted) = line.strip_prefix('"') {
        let (label, rest) = quoted.split_once('"')?;
        let value = rest.trim_start().strip_prefix(':')?.trim();
        let value = value.strip_suffix(',').unwrap_or(value).trim();
        let value = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value);
        return Some((label.trim(), value.trim()));
    }
    let (label, value) = line.split_once(" : ").or_else(|| line.split_once(": "))?;
    Some((label.trim(), value.trim()))
}

/// Whether the text holds `ethtool -m` or `mlxlink` module output.
pub fn recognised(text: &str) -> bool {
    // mlxlink's table shows its opcode once; looked for once, at the first recommendation.
    let opcode_shown = std::cell::OnceCell::new();
    numbered_lines(text).any(|(_, raw)| {
        let line = raw.trim();
        let key = if line.starts_with('"') {
            field(line).map_or("", |(label, _)| label)
        } else {
            line.split(':').next().unwrap_or("").trim()
        };
        (key == "Module temperature" || key == "Laser output power" || key.starts_with("Rcvr signal avg optical power"))
            || key == "Receiver signal average optical power"
            || key.ends_with("alarm threshold")
            || key == "Temperature [C]"
            || key == "Rx Power Current [dBm]"
            || (key == "Recommendation" && *opcode_shown.get_or_init(|| text.contains("Status Opcode")))
            || lane_flag(key).is_some()
            // SONiC's `show interfaces transceiver eeprom --dom` of a CMIS module: each lane's
            // latched flag as a Python boolean ("Rx power low alarm flag on lane 1: True").
            // (Most lines of a long log start otherwise, and are passed over before any search.)
            || (key.starts_with("Rx ") || key.starts_with("Tx ")) && key.contains(" alarm flag on lane ")
    })
}

/// The per-lane status flags ethtool prints for QSFP and CMIS modules (SFF-8636 bytes 3-5, CMIS
/// page 11h): whether the flag means no receive light (loss of signal on the receive side) or
/// another fault of the lane.
fn lane_flag(key: &str) -> Option<bool> {
    match key {
        "Rx loss of signal" => Some(true),
        "Tx loss of signal" | "Rx loss of lock" | "Tx loss of lock" | "Tx fault" | "Tx adaptive eq fault" => {
            Some(false)
        }
        _ => None,
    }
}

/// The lanes (from 1) a flag's value marks: `[ Yes, No, Yes, No ]`; `None` marks none.
fn flagged_lanes(value: &str) -> Vec<u32> {
    let Some(list) = value.trim().strip_prefix('[').and_then(|v| v.strip_suffix(']')) else { return Vec::new() };
    (1..)
        .zip(list.split(','))
        .filter(|(_, flag)| flag.trim().eq_ignore_ascii_case("yes"))
        .map(|(lane, _)| lane)
        .collect()
}

/// A reading of one quantity, on one lane where the module has lanes.
struct Reading {
    quantity: Quantity,
    lane: Option<u32>,
    value: f64,
    evidence: Evidence,
}

pub fn parse(file: &str, text: &str) -> Vec<Fact> {
    if !recognised(text) {
        return Vec::new();
    }
    // The command line, when pasted (often as a shell comment "# ethtool -m swp1"), names the port.
    let device = text.lines().find_map(|line| {
        ["ethtool -m ", "ethtool --module-info ", "mlxlink -d "]
            .iter()
            .find_map(|tool| line.split(tool).nth(1))
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_string)
    });
    let mut readings: Vec<Reading> = Vec::new();
    let mut thresholds: BTreeMap<&'static str, (Quantity, Thresholds)> = BTreeMap::new();
    let mut facts = Vec::new();
    for (line_no, raw) in numbered_lines(text) {
        let evidence = || Evidence::new(file, line_no, raw);
        let Some((label, value)) = field(raw) else { continue };
        if let Some(found) = mlxlink_field(label, value, &evidence) {
            facts.extend(found);
            continue;
        }
        if let Some(receive_dark) = lane_flag(label) {
            let lanes = flagged_lanes(value);
            if !lanes.is_empty() {
                let named: Vec<String> = lanes.iter().map(u32::to_string).collect();
                let fact = if receive_dark {
                    Fact::new("optics.no_light").attr("lane", named.join(",")).attr(
                        "what",
                        format!("the module reports loss of receive signal on lanes {}", named.join(", ")),
                    )
                } else {
                    Fact::new("optics.alarm_flag")
                        .attr("flag", label)
                        .attr("what", format!("the module flags '{label}' on lanes {}", named.join(", ")))
                };
                facts.push(fact.evidence(evidence()));
            }
            continue;
        }
        let Some(quantity) = quantity_of(label) else { continue };
        let lower = label.to_ascii_lowercase();
        if lower.ends_with("threshold") {
            let Some(limit) = value_of(quantity, value) else { continue };
            let entry = &mut thresholds.entry(quantity.name()).or_insert((quantity, Thresholds::default())).1;
            let slot = match (lower.contains("high"), lower.contains("alarm")) {
                (true, true) => &mut entry.high_alarm,
                (false, true) => &mut entry.low_alarm,
                (true, false) => &mut entry.high_warning,
                (false, false) => &mut entry.low_warning,
            };
            *slot = Some(limit);
        } else if lower.contains(" alarm") || lower.contains(" warning") {
            // A latched flag (SFF-8472 A2h 112-117, SFF-8636 bytes 6-14, CMIS page 11h): "On" as
            // ethtool prints it, "True" as SONiC does.
            let set = value.eq_ignore_ascii_case("on") || value.eq_ignore_ascii_case("true");
            if set && lower.contains("alarm") {
                facts.push(
                    Fact::new("optics.alarm_flag")
                        .attr("flag", label)
                        .attr("what", format!("the module latched '{label}'"))
                        .evidence(evidence()),
                );
            }
        } else if let Some(value) = value_of(quantity, value) {
            readings.push(Reading { quantity, lane: lane_of(label), value, evidence: evidence() });
        }
    }
    // A module that reads a supply voltage of 0 V and a temperature of 0 C was not read: a module
    // that answers is powered near 3.3 V (SFF-8472's A2h bytes 96-99), and a driver that cannot
    // read the diagnostics page may hand ethtool zeros for every reading and limit (mlx4 on a
    // ConnectX-2 masks the failed read of page A2h, the netdev list, 2024). Nothing is judged from
    // such readings.
    let read_as_zero = |quantity: Quantity| readings.iter().any(|r| r.quantity == quantity && r.value == 0.0);
    let unread = read_as_zero(Quantity::Voltage) && read_as_zero(Quantity::Temperature);
    let limits: Vec<(Quantity, Thresholds)> = thresholds.into_values().collect();
    for reading in readings.iter().filter(|_| !unread) {
        let limit = limits.iter().find(|(q, _)| *q == reading.quantity).map(|(_, t)| *t);
        facts.extend(judge_reading(reading, limit.as_ref()));
    }
    // A port that `ip link` in the same paste shows down by configuration (no UP among its flags,
    // "<BROADCAST,MULTICAST> ... qdisc noop state DOWN"): its laser is off and no peer lights it,
    // so dark lanes and low light or bias are what a port never enabled reads, not a failing optic.
    // Its temperature and supply voltage still count.
    if device.as_deref().is_some_and(|device| down_by_configuration(text, device)) {
        let light = |fact: &Fact| {
            fact.name == "optics.no_light"
                || fact
                    .get("quantity")
                    .is_some_and(|q| q != Quantity::Temperature.name() && q != Quantity::Voltage.name())
                || fact.get("flag").is_some_and(|flag| {
                    let flag = flag.to_ascii_lowercase();
                    flag.contains("power") || flag.contains("bias") || flag.contains("loss of signal")
                })
        };
        facts.retain(|fact| !light(fact));
    }
    if let Some(device) = device {
        for fact in &mut facts {
            fact.attrs.entry("nic".to_string()).or_insert_with(|| device.clone());
        }
    }
    facts
}

/// Whether `ip link` output in the text shows `interface` without the UP flag ("7: ens2f1:
/// <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN", ip-link(8)): down by configuration, not
/// for want of a link (which keeps UP and lacks LOWER_UP). The header is read as the `ip link`
/// reader reads it, wherever a launcher's label put it.
fn down_by_configuration(text: &str, interface: &str) -> bool {
    text.lines()
        .filter_map(super::ibstat::ip_link_header)
        .any(|header| header.name == interface && !header.flags.split(',').any(|flag| flag == "UP"))
}

/// mlxlink's fields: `Name [unit] : v1,v2,... [low..high]` readings with their alarm range, the
/// troubleshooting recommendation, and errors left after FEC. `None` for other lines.
fn mlxlink_field(label: &str, value: &str, evidence: &dyn Fn() -> Evidence) -> Option<Vec<Fact>> {
    let quantity = match label {
        "Temperature [C]" => Quantity::Temperature,
        "Voltage [mV]" => Quantity::Voltage,
        "Bias Current [mA]" => Quantity::TxBias,
        "Rx Power Current [dBm]" => Quantity::RxPower,
        "Tx Power Current [dBm]" => Quantity::TxPower,
        "Status Opcode" => return Some(Vec::new()),
        "Recommendation" => {
            let lower = value.to_ascii_lowercase();
            let fine = lower.starts_with("no issue") || lower == "n/a" || lower.is_empty();
            return Some(if fine {
                Vec::new()
            } else {
                vec![Fact::new("mlxlink.recommendation")
                    .attr("text", value)
                    .attr("what", format!("mlxlink recommends: {value}"))
                    .evidence(evidence())]
            });
        }
        "Effective Physical Errors" => {
            let count: u64 = value.split_whitespace().next()?.parse().ok()?;
            return Some(if count > 0 {
                vec![Fact::new("mlxlink.effective_errors")
                    .attr("count", count)
                    .attr("what", format!("{count} errors left uncorrected by FEC"))
                    .evidence(evidence())]
            } else {
                Vec::new()
            });
        }
        _ => return None,
    };
    let (values, range) = match value.split_once('[') {
        Some((values, range)) => (values.trim(), Some(range.trim_end_matches(']'))),
        None => (value, None),
    };
    let thresholds = range.and_then(|r| r.split_once("..")).and_then(|(low, high)| {
        let scale = if quantity == Quantity::Voltage { 1000.0 } else { 1.0 };
        Some(Thresholds::alarm_range(low.trim().parse::<f64>().ok()? / scale, high.trim().parse::<f64>().ok()? / scale))
    });
    let lanes: Vec<f64> = values.split(',').filter_map(|v| v.trim().parse().ok()).collect();
    let many = lanes.len() > 1;
    let mut facts = Vec::new();
    for (index, reading) in lanes.into_iter().enumerate() {
        let value = if quantity == Quantity::Voltage { reading / 1000.0 } else { reading };
        let reading = Reading { quantity, lane: many.then_some(index as u32 + 1), value, evidence: evidence() };
        facts.extend(judge_reading(&reading, thresholds.as_ref()));
    }
    Some(facts)
}

/// The facts one reading gives: out of the module's limits (warning or alarm), no light on a
/// receive lane, or a module hotter than the protocol's ceiling.
fn judge_reading(reading: &Reading, thresholds: Option<&Thresholds>) -> Vec<Fact> {
    let mut facts = Vec::new();
    let lane = reading.lane.map(|l| format!(" on lane {l}")).unwrap_or_default();
    let name = reading.quantity.name();
    let unit = reading.quantity.unit();
    if reading.quantity == Quantity::RxPower && reading.value <= NO_LIGHT_DBM {
        facts.push(
            Fact::new("optics.no_light")
                .attr("lane", reading.lane.map(|l| l.to_string()).unwrap_or_else(|| "1".into()))
                .attr("what", format!("no receive light{lane} ({} dBm)", reading.value))
                .evidence(reading.evidence.clone()),
        );
        return facts;
    }
    if reading.quantity == Quantity::Temperature && reading.value >= MAX_TEMPERATURE_C {
        facts.push(
            Fact::new("optics.hot")
                .attr("value", reading.value)
                .attr("what", format!("module at {} C, at or above {MAX_TEMPERATURE_C} C", reading.value))
                .evidence(reading.evidence.clone()),
        );
    }
    if let Some((level, Some(limit))) = thresholds.and_then(|t| judge(reading.value, t)) {
        let level_word = if level == Level::Alarm { "alarm" } else { "warning" };
        facts.push(
            Fact::new("optics.out_of_range")
                .attr("level", level_word)
                .attr("quantity", name)
                .attr(
                    "what",
                    format!(
                        "{name}{lane} {} {unit} beyond the module's {level_word} limit {limit} {unit}",
                        reading.value
                    ),
                )
                .evidence(reading.evidence.clone()),
        );
    }
    facts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(facts: &[Fact]) -> Vec<&str> {
        facts.iter().map(|f| f.name.as_str()).collect()
    }

    /// wobcom/transceiver-exporter#1 (healthy) and the same module with its receiver dark.
    #[test]
    fn ethtool_readings_against_the_module_thresholds() {
        let healthy = "# ethtool -m swp1 | grep dBm\n\tLaser output power                        : 0.6770 mW / -1.69 dBm\n\tReceiver signal average optical power     : 0.5806 mW / -2.36 dBm\n\tLaser rx power high alarm threshold       : 1.7783 mW / 2.50 dBm\n\tLaser rx power low alarm threshold        : 0.0229 mW / -16.40 dBm\n\tLaser rx power low warning threshold      : 0.0363 mW / -14.40 dBm\n";
        assert!(recognised(healthy));
        assert!(parse("f", healthy).is_empty());
        let weak = healthy.replace("0.5806 mW / -2.36 dBm", "0.0300 mW / -15.23 dBm");
        let facts = parse("f", &weak);
        assert_eq!(names(&facts), vec!["optics.out_of_range"]);
        assert_eq!((facts[0].get("level"), facts[0].get("nic")), (Some("warning"), Some("swp1")));
        let dark = healthy.replace("0.5806 mW / -2.36 dBm", "0.0000 mW / -inf dBm");
        assert_eq!(names(&parse("f", &dark)), vec!["optics.no_light"]);
        let flag = "\tLaser rx power low alarm   (Chan 2)       : On\n\tModule temperature                        : 72.10 degrees C / 161.78 degrees F\n";
        assert_eq!(names(&parse("f", flag)), vec!["optics.alarm_flag", "optics.hot"]);
        // sonic-net/sonic-buildimage#20430: a DR4 module's receive alarms as SONiC prints them;
        // a flag that is not set, or a warning alone, is no alarm.
        let sonic = "Ethernet144: SFP EEPROM detected\n        Rx power low warning flag on lane 1: True\n        Rx power low alarm flag on lane 1: True\n        Rx power low alarm flag on lane 5: False\n";
        assert!(recognised(sonic));
        let facts = parse("f", sonic);
        assert_eq!(names(&facts), vec!["optics.alarm_flag"]);
        assert_eq!(facts[0].get("flag"), Some("Rx power low alarm flag on lane 1"));
        assert!(!recognised("Rx power low warning flag on lane 1: True\n"));
    }

    /// The netdev list, 2024: mlx4 masks a failed read of an SFP's diagnostics page, so ethtool
    /// prints zeros for every reading; a dark receiver with the module's voltage read stays dark.
    #[test]
    fn diagnostics_read_as_zeros_are_no_reading() {
        let zeros = "# ethtool -m eth1\n\tLaser output power                        : 0.0000 mW / -inf dBm\n\tReceiver signal average optical power     : 0.0000 mW / -inf dBm\n\tModule temperature                        : 0.00 degrees C / 32.00 degrees F\n\tModule voltage                            : 0.0000 V\n";
        assert!(parse("f", zeros).is_empty(), "{:?}", parse("f", zeros));
        let read = zeros.replace("0.0000 V", "3.3010 V").replace("0.00 degrees C", "31.50 degrees C");
        assert_eq!(names(&parse("f", &read)), vec!["optics.no_light"]);
    }

    /// A sysadmin's SFP write-up (cloudalbania): `ethtool --module-info` of a port `ip link` shows
    /// down by configuration; the same port up with no light is dark.
    #[test]
    fn a_port_down_by_configuration_is_dark_by_design() {
        let module = "root@host:~# ethtool --module-info ens2f1\n\tLaser output power                        : 0.0251 mW / -16.00 dBm\n\tReceiver signal average optical power     : 0.0000 mW / -inf dBm\n\tModule temperature                        : 29.54 degrees C / 85.16 degrees F\n\tLaser rx power low alarm                  : On\n";
        let down = format!("7: ens2f1: <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN mode DEFAULT group default qlen 1000\n{module}");
        assert!(parse("f", &down).is_empty(), "{:?}", parse("f", &down));
        let up = down.replace("<BROADCAST,MULTICAST>", "<NO-CARRIER,BROADCAST,MULTICAST,UP>");
        assert_eq!(names(&parse("f", &up)), vec!["optics.alarm_flag", "optics.no_light"]);
        let labelled: String = down.lines().map(|line| format!("3: {line}\n")).collect();
        assert!(parse("f", &labelled).is_empty(), "an srun label before ip link's line");
        let parent = down.replace("7: ens2f1:", "7: ens2f1@eth0:");
        assert!(parse("f", &parent).is_empty());
        let other = down.replace("7: ens2f1:", "7: ens2f0:");
        assert!(!parse("f", &other).is_empty());
        assert!(!parse("f", &format!("{module}Module temperature : 80.00 degrees C\n")).is_empty());
    }

    /// scitix/sichek's mlxlink -m fixture (healthy), then with a hot module and a weak lane.
    #[test]
    fn mlxlink_module_info_and_troubleshooting() {
        let healthy = "Module Info\n-----------\nTemperature [C]                    : 54 [-5..75]\nVoltage [mV]                       : 3261.2 [2970..3630]\nBias Current [mA]                  : 8.380,8.380,8.380,8.380 [2..15]\nRx Power Current [dBm]             : 1.886,1.989,2.281,1.976 [-10.41..6]\nTx Power Current [dBm]             : 1.562,1.427,1.559,1.761 [-8.508..5]\n";
        assert!(recognised(healthy));
        assert!(parse("f", healthy).is_empty(), "{:?}", parse("f", healthy));
        let bad = healthy.replace("54 [-5..75]", "77 [-5..75]").replace("1.886,1.989", "1.886,-12.5");
        let facts = parse("f", &bad);
        assert_eq!(names(&facts), vec!["optics.hot", "optics.out_of_range", "optics.out_of_range"]);
        assert!(facts[2].get("what").is_some_and(|w| w.contains("lane 2")), "{facts:?}");
        let advice = "Troubleshooting Info\n--------------------\nStatus Opcode                      : 49\nRecommendation                     : Check cable/module; replace if the issue persists\nEffective Physical Errors          : 1372\n";
        assert_eq!(names(&parse("f", advice)), vec!["mlxlink.recommendation", "mlxlink.effective_errors"]);
    }

    /// yuuki/mlxlink_exporter's capture of `mlxlink --json` (heldout253): the same fields as
    /// quoted JSON pairs are read as the text form is.
    #[test]
    fn mlxlink_json_fields_are_its_text_fields() {
        let healthy = "\t\t\t\t\"Rx Power Current [dBm]\" : \"3.583,3.253,3.233,2.658 [-9.914..6.999]\",\n\t\t\t\t\"Temperature [C]\" : \"61 [-10..80]\",\n\t\t\t\t\"Recommendation\" : \"No issue was observed\",\n\t\t\t\t\"Status Opcode\" : \"0\"\n";
        assert!(recognised(healthy));
        assert!(parse("f", healthy).is_empty(), "{:?}", parse("f", healthy));
        let dark = healthy.replace("3.583,3.253", "3.583,-40");
        let facts = parse("f", &dark);
        assert_eq!(names(&facts), vec!["optics.no_light"]);
        assert_eq!(facts[0].get("lane"), Some("2"));
        let advice = healthy.replace("No issue was observed", "Check cable/module");
        assert_eq!(names(&parse("f", &advice)), vec!["mlxlink.recommendation"]);
        assert_eq!(
            field("\"Cable Type\" : \"Optical Module (separated)\","),
            Some(("Cable Type", "Optical Module (separated)"))
        );
        assert_eq!(field("\"values\" :"), Some(("values", "")));
    }

    /// netdev list, ethtool's SFF-8636 status flags (heldout123): an AOC whose far end was taken
    /// down reports loss of signal on every receive lane. Flags that mark no lane are a healthy
    /// module's.
    #[test]
    fn receive_lanes_that_lost_their_signal_are_dark_netdev_sff8636() {
        let dark = "        Rx loss of signal                         : [ Yes, Yes, Yes, Yes ]\n        Tx loss of signal                         : None\n        Rx loss of lock                           : [ Yes, Yes, Yes, Yes ]\n        Tx loss of lock                           : None\n        Tx adaptive eq fault                      : None\n";
        assert!(recognised(dark));
        let facts = parse("f", dark);
        assert_eq!(names(&facts), vec!["optics.no_light", "optics.alarm_flag"]);
        assert_eq!(facts[0].get("lane"), Some("1,2,3,4"));
        let healthy = "        Rx loss of signal                         : None\n        Tx loss of signal                         : None\n        Rx loss of lock                           : [ No, No, No, No ]\n";
        assert!(parse("f", healthy).is_empty());
    }
}
