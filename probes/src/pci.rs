//! PCI functions as sysfs shows them (`sys/bus/pci/devices/*`, kernel ABI
//! `Documentation/ABI/testing/sysfs-bus-pci`): identity, driver, NUMA locality, link speed and width,
//! AER counters, decoded config space, and the chain of bridges up to the host bridge.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{ParseError, ProbeError};
use crate::pci_config::{parse_config_space, ConfigSpace, LinkGeneration};
use crate::root::SysRoot;
use crate::Reading;

/// A PCI function address, domain:bus:device.function ("0000:17:00.0").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(into = "String")]
pub struct PciAddress {
    pub domain: u32,
    pub bus: u8,
    pub device: u8,
    pub function: u8,
}

impl PciAddress {
    pub fn parse(text: &str) -> Option<PciAddress> {
        let (domain, rest) = text.split_once(':')?;
        let (bus, rest) = rest.split_once(':')?;
        let (device, function) = rest.split_once('.')?;
        if domain.len() < 4 || bus.len() != 2 || device.len() != 2 || function.len() != 1 {
            return None;
        }
        let address = PciAddress {
            domain: u32::from_str_radix(domain, 16).ok()?,
            bus: u8::from_str_radix(bus, 16).ok()?,
            device: u8::from_str_radix(device, 16).ok()?,
            function: u8::from_str_radix(function, 16).ok()?,
        };
        (address.device < 32 && address.function < 8).then_some(address)
    }
}

impl fmt::Display for PciAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04x}:{:02x}:{:02x}.{:x}", self.domain, self.bus, self.device, self.function)
    }
}

impl From<PciAddress> for String {
    fn from(address: PciAddress) -> String {
        address.to_string()
    }
}

/// Link speed and width as sysfs reports them (`current_link_speed`, `max_link_speed`, ...). Each is
/// `None` when the file is absent (conventional PCI, old kernels) or says "Unknown" (emulated switch
/// ports), which is what the kernel prints when the Link Capabilities field holds no known rate.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PciLink {
    pub current_speed: Option<LinkGeneration>,
    pub current_width: Option<u8>,
    pub max_speed: Option<LinkGeneration>,
    pub max_width: Option<u8>,
}

/// AER error counters from `aer_dev_correctable`, `aer_dev_nonfatal`, `aer_dev_fatal`
/// (`Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats`): one "Name count" per line, with a
/// `TOTAL_ERR_*` line. Counters survive until reboot, unlike the latched status bits.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AerCounters {
    pub correctable: BTreeMap<String, u64>,
    pub nonfatal: BTreeMap<String, u64>,
    pub fatal: BTreeMap<String, u64>,
    pub total_correctable: u64,
    pub total_nonfatal: u64,
    pub total_fatal: u64,
}

/// One PCI function.
#[derive(Debug, Clone, Serialize)]
pub struct PciFunction {
    pub address: PciAddress,
    /// Real sysfs path of the function ("sys/devices/pci0000:16/0000:16:01.0/0000:17:00.0").
    pub node_path: PathBuf,
    /// The host bridge directory the function hangs off ("pci0000:16").
    pub host_bridge: String,
    /// Bridges from the root port down to the function's parent, in that order.
    pub upstream: Vec<PciAddress>,
    pub vendor: u16,
    pub device: u16,
    /// 24-bit class code (base class, subclass, programming interface).
    pub class: u32,
    pub subsystem_vendor: Option<u16>,
    pub subsystem_device: Option<u16>,
    pub driver: Option<String>,
    /// `numa_node`; `None` when the file says -1 (firmware gave no proximity information).
    pub numa_node: Option<u32>,
    pub local_cpulist: Option<String>,
    pub link: PciLink,
    /// `None` when the kernel has no AER statistics for the function (no AER capability or old kernel).
    pub aer: Option<AerCounters>,
    #[serde(skip)]
    pub config: Reading<ConfigSpace>,
}

impl PciFunction {
    pub fn is_bridge(&self) -> bool {
        self.class >> 8 == 0x0604
    }

    /// NVIDIA or AMD display, 3D or other display controller: a GPU.
    pub fn is_gpu(&self) -> bool {
        matches!(self.vendor, 0x10de | 0x1002) && matches!(self.class >> 8, 0x0300 | 0x0302 | 0x0380)
    }

    /// The vendor and device name from the pci-ids database compiled into the binary.
    pub fn model_name(&self) -> String {
        model_name(self.vendor, self.device)
    }
}

pub fn model_name(vendor: u16, device: u16) -> String {
    match pci_ids::Device::from_vid_pid(vendor, device) {
        Some(known) => format!("{} {}", known.vendor().name(), known.name()),
        None => format!("[{vendor:04x}:{device:04x}]"),
    }
}

/// Parse a hexadecimal sysfs attribute such as `vendor` ("0x15b3\n") or `class` ("0x020700\n").
pub fn parse_hex(text: &str) -> Result<u32, ParseError> {
    let trimmed = text.trim();
    let digits = trimmed.strip_prefix("0x").unwrap_or(trimmed);
    u32::from_str_radix(digits, 16).map_err(|_| ParseError::new("expected a hexadecimal number"))
}

/// Parse `current_link_speed`/`max_link_speed`. The kernel prints "32.0 GT/s PCIe" since 5.x
/// (`pci_speed_string` in drivers/pci/probe.c), older kernels "8 GT/s" or "2.5 GT/s", and "Unknown"
/// for rates it cannot name.
pub fn parse_link_speed(text: &str) -> Result<Option<LinkGeneration>, ParseError> {
    let trimmed = text.trim();
    if trimmed.eq_ignore_ascii_case("unknown") {
        return Ok(None);
    }
    let number = trimmed.split_whitespace().next().unwrap_or("");
    let rate: f64 = number.parse().map_err(|_| ParseError::new("expected a rate such as \"16.0 GT/s PCIe\""))?;
    let generation = match rate {
        r if (r - 2.5).abs() < 0.01 => 1,
        r if (r - 5.0).abs() < 0.01 => 2,
        r if (r - 8.0).abs() < 0.01 => 3,
        r if (r - 16.0).abs() < 0.01 => 4,
        r if (r - 32.0).abs() < 0.01 => 5,
        r if (r - 64.0).abs() < 0.01 => 6,
        _ => return Err(ParseError::new(format!("{rate} GT/s is not a PCIe rate"))),
    };
    Ok(Some(LinkGeneration(generation)))
}

/// Parse `current_link_width`/`max_link_width`; 0 means the width is not known (emulated ports).
pub fn parse_link_width(text: &str) -> Result<Option<u8>, ParseError> {
    let width: u8 = text.trim().parse().map_err(|_| ParseError::new("expected a lane count"))?;
    Ok((width != 0).then_some(width))
}

/// Parse one `aer_dev_*` file into its counters and total.
pub fn parse_aer_counters(text: &str) -> Result<(BTreeMap<String, u64>, u64), ParseError> {
    let mut counters = BTreeMap::new();
    let mut total = None;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut fields = line.split_whitespace();
        let (Some(name), Some(value), None) = (fields.next(), fields.next(), fields.next()) else {
            return Err(ParseError::new(format!("expected \"Name count\", got {line:?}")));
        };
        let count: u64 = value.parse().map_err(|_| ParseError::new(format!("count of {name} is not a number")))?;
        if name.starts_with("TOTAL_ERR_") {
            total = Some(count);
        } else {
            counters.insert(name.to_string(), count);
        }
    }
    // Saturating: two counters near u64::MAX in a capture overflowed a plain sum (found by
    // fabricdoctor-fuzz, target sysfs-text); a saturated total still reads as "errors".
    let total = total.unwrap_or_else(|| counters.values().fold(0u64, |sum, count| sum.saturating_add(*count)));
    Ok((counters, total))
}

/// Read every PCI function of the node, ordered by address. A function whose files cannot be read
/// or parsed is left out and its error pushed to `unreadable`, so one bad device hides no other.
pub fn read_functions(root: &SysRoot, unreadable: &mut Vec<ProbeError>) -> Result<Vec<PciFunction>, ProbeError> {
    let names = root.read_dir("sys/bus/pci/devices")?;
    let mut functions = Vec::with_capacity(names.len());
    for name in names {
        let Some(address) = PciAddress::parse(&name) else {
            continue;
        };
        match read_function(root, address) {
            Ok(function) => functions.push(function),
            Err(error) => unreadable.push(error),
        }
    }
    functions.sort_by_key(|f| f.address);
    Ok(functions)
}

fn read_function(root: &SysRoot, address: PciAddress) -> Result<PciFunction, ProbeError> {
    let link = PathBuf::from(format!("sys/bus/pci/devices/{address}"));
    let node_path = root.resolve(&link)?;
    let (host_bridge, upstream) = bridge_chain(&node_path, address);
    let dir = node_path.clone();
    let hex = |name: &str| -> Result<u32, ProbeError> {
        let path = dir.join(name);
        let text = root.read_string(&path)?;
        parse_hex(&text).map_err(|e| ProbeError::malformed(&path, &text, e))
    };
    let optional_hex = |name: &str| -> Result<Option<u32>, ProbeError> { optional(hex(name)) };
    let vendor = hex("vendor")? as u16;
    let device = hex("device")? as u16;
    let class = hex("class")?;
    let subsystem_vendor = optional_hex("subsystem_vendor")?.map(|v| v as u16);
    let subsystem_device = optional_hex("subsystem_device")?.map(|v| v as u16);
    let driver = optional(root.read_link(dir.join("driver")))?
        .and_then(|target| target.file_name().map(|n| n.to_string_lossy().into_owned()));
    let numa_node = optional(read_numa_node(root, &dir.join("numa_node")))?.flatten();
    // Kernels before 2.6.27 and some capture tools have only `local_cpus`, the same set as a hex
    // mask (Documentation/ABI/testing/sysfs-bus-pci): read it as a list then.
    let local_cpulist =
        match optional(root.read_string(dir.join("local_cpulist")))?.as_deref().and_then(crate::value::known) {
            Some(list) => Some(list.to_string()),
            None => optional(root.read_string(dir.join("local_cpus")))?
                .as_deref()
                .and_then(crate::value::known)
                .and_then(cpumask_to_list),
        };
    let link = read_link_attributes(root, &dir)?;
    let aer = read_aer(root, &dir)?;
    let config = root.read_bytes(dir.join("config")).and_then(|bytes| {
        parse_config_space(&bytes).map_err(|e| ProbeError::malformed(dir.join("config"), &hex_preview(&bytes), e))
    });
    Ok(PciFunction {
        address,
        node_path,
        host_bridge,
        upstream,
        vendor,
        device,
        class,
        subsystem_vendor,
        subsystem_device,
        driver,
        numa_node,
        local_cpulist,
        link,
        aer,
        config,
    })
}

/// Split a resolved device path into its host bridge ("pci0000:16") and the PCI bridges above the
/// function. The kernel names each bridge's directory after its address and nests children inside
/// (drivers/pci/probe.c `pci_setup_device` + device_add), so the path *is* the topology.
pub fn bridge_chain(node_path: &Path, address: PciAddress) -> (String, Vec<PciAddress>) {
    let mut host_bridge = String::new();
    let mut upstream = Vec::new();
    for component in node_path.components() {
        let name = component.as_os_str().to_string_lossy();
        if name.starts_with("pci") && name.len() > 3 && name[3..].contains(':') {
            host_bridge = name.into_owned();
            upstream.clear();
        } else if let Some(bridge) = PciAddress::parse(&name) {
            upstream.push(bridge);
        }
    }
    if upstream.last() == Some(&address) {
        upstream.pop();
    }
    (host_bridge, upstream)
}

/// A cpumask as sysfs prints it ("00000000,ffff0000": 32-bit hex words, most significant first,
/// lib/bitmap.c `bitmap_print_to_pagebuf`) as a cpulist ("16-31"); `None` when it is not one.
pub fn cpumask_to_list(mask: &str) -> Option<String> {
    let words: Vec<u32> =
        mask.trim().split(',').map(|w| u32::from_str_radix(w.trim(), 16).ok()).collect::<Option<_>>()?;
    let mut cpus = Vec::new();
    for (index, word) in words.iter().rev().enumerate() {
        for bit in 0..32 {
            if word & (1 << bit) != 0 {
                cpus.push(index as u32 * 32 + bit);
            }
        }
    }
    let mut ranges: Vec<String> = Vec::new();
    let mut start = None;
    for (i, cpu) in cpus.iter().enumerate() {
        let first = *start.get_or_insert(*cpu);
        if cpus.get(i + 1) != Some(&(cpu + 1)) {
            ranges.push(if first == *cpu { cpu.to_string() } else { format!("{first}-{cpu}") });
            start = None;
        }
    }
    (!ranges.is_empty()).then(|| ranges.join(","))
}

fn read_numa_node(root: &SysRoot, path: &Path) -> Result<Option<u32>, ProbeError> {
    let text = root.read_string(path)?;
    let value: i64 =
        text.trim().parse().map_err(|_| ProbeError::malformed(path, &text, "expected a NUMA node number"))?;
    Ok(u32::try_from(value).ok())
}

/// A function's link as sysfs reports it now (re-read while `check --load` keeps a GPU busy).
pub fn read_link(root: &SysRoot, address: PciAddress) -> Result<PciLink, ProbeError> {
    read_link_attributes(root, &Path::new("sys/bus/pci/devices").join(address.to_string()))
}

fn read_link_attributes(root: &SysRoot, dir: &Path) -> Result<PciLink, ProbeError> {
    let speed = |name: &str| -> Result<Option<LinkGeneration>, ProbeError> {
        let path = dir.join(name);
        let Some(text) = optional(root.read_string(&path))? else {
            return Ok(None);
        };
        parse_link_speed(&text).map_err(|e| ProbeError::malformed(&path, &text, e))
    };
    let width = |name: &str| -> Result<Option<u8>, ProbeError> {
        let path = dir.join(name);
        let Some(text) = optional(root.read_string(&path))? else {
            return Ok(None);
        };
        parse_link_width(&text).map_err(|e| ProbeError::malformed(&path, &text, e))
    };
    Ok(PciLink {
        current_speed: speed("current_link_speed")?,
        current_width: width("current_link_width")?,
        max_speed: speed("max_link_speed")?,
        max_width: width("max_link_width")?,
    })
}

type CountersAndTotal = (BTreeMap<String, u64>, u64);

fn read_aer(root: &SysRoot, dir: &Path) -> Result<Option<AerCounters>, ProbeError> {
    let read = |name: &str| -> Result<Option<CountersAndTotal>, ProbeError> {
        let path = dir.join(name);
        let Some(text) = optional(root.read_string(&path))? else {
            return Ok(None);
        };
        parse_aer_counters(&text).map(Some).map_err(|e| ProbeError::malformed(&path, &text, e))
    };
    let (Some(correctable), Some(nonfatal), Some(fatal)) =
        (read("aer_dev_correctable")?, read("aer_dev_nonfatal")?, read("aer_dev_fatal")?)
    else {
        return Ok(None);
    };
    Ok(Some(AerCounters {
        total_correctable: correctable.1,
        total_nonfatal: nonfatal.1,
        total_fatal: fatal.1,
        correctable: correctable.0,
        nonfatal: nonfatal.0,
        fatal: fatal.0,
    }))
}

/// Turn "file is absent" into `None`; keep every other failure. Absent attributes are normal: they
/// depend on kernel version and on the function (sysfs-bus-pci lists when each appeared).
pub fn optional<T>(reading: Result<T, ProbeError>) -> Result<Option<T>, ProbeError> {
    match reading {
        Ok(value) => Ok(Some(value)),
        Err(error) if error.is_not_found() => Ok(None),
        Err(error) => Err(error),
    }
}

fn hex_preview(bytes: &[u8]) -> String {
    bytes.iter().take(16).map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpumasks_read_as_lists() {
        assert_eq!(cpumask_to_list("00000000,ffff0000\n").as_deref(), Some("16-31"));
        assert_eq!(cpumask_to_list("0000ffff,00000000,00000005").as_deref(), Some("0,2,64-79"));
        assert_eq!(cpumask_to_list("00000000"), None);
        assert_eq!(cpumask_to_list("zz"), None);
    }

    #[test]
    fn addresses_round_trip_and_reject_garbage() {
        let address = PciAddress::parse("0000:17:00.1").expect("valid");
        assert_eq!(address.to_string(), "0000:17:00.1");
        for bad in ["0000:17:00", "17:00.0", "0000:17:20.0", "0000:zz:00.0", "0000:17:00.8", "pci0000:00"] {
            assert_eq!(PciAddress::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn link_speeds_of_old_and_new_kernels_parse() {
        assert_eq!(parse_link_speed("32.0 GT/s PCIe\n"), Ok(Some(LinkGeneration(5))));
        assert_eq!(parse_link_speed("8 GT/s\n"), Ok(Some(LinkGeneration(3))));
        assert_eq!(parse_link_speed("2.5 GT/s PCIe\n"), Ok(Some(LinkGeneration(1))));
        assert_eq!(parse_link_speed("Unknown\n"), Ok(None));
        assert!(parse_link_speed("fast\n").is_err());
        assert!(parse_link_speed("3.0 GT/s\n").is_err());
        assert_eq!(parse_link_width("0\n"), Ok(None));
        assert!(parse_link_width("x16").is_err());
    }

    #[test]
    fn bridge_chain_follows_the_sysfs_nesting() {
        let path = Path::new("sys/devices/pci0000:16/0000:16:01.0/0000:17:00.0/0000:18:02.0/0000:19:00.0");
        let address = PciAddress::parse("0000:19:00.0").expect("valid");
        let (host, chain) = bridge_chain(path, address);
        assert_eq!(host, "pci0000:16");
        let chain: Vec<String> = chain.iter().map(|a| a.to_string()).collect();
        assert_eq!(chain, ["0000:16:01.0", "0000:17:00.0", "0000:18:02.0"]);
    }

    #[test]
    fn aer_counters_use_the_total_line() {
        let text = "RxErr 0\nBadTLP 12\nBadDLLP 0\nTOTAL_ERR_COR 12\n";
        let (counters, total) = parse_aer_counters(text).expect("parse");
        assert_eq!((counters["BadTLP"], total), (12, 12));
        assert!(parse_aer_counters("RxErr many\n").is_err());
        assert!(parse_aer_counters("RxErr 1 2\n").is_err());
    }

    /// fabricdoctor-fuzz (sysfs-text): counters whose sum overflows u64, without a total line.
    #[test]
    fn aer_counters_near_the_limit_saturate_their_total() {
        let text = "RxErr 18446744073709551615\nBadTLP 18446744073709551615\n";
        assert_eq!(parse_aer_counters(text).expect("parse").1, u64::MAX);
    }
}
