//! The PCI config-space decoder (`fabricdoctor_probes::pci_config`) must read config bytes the way
//! pciutils' `lspci -vvv` does. Three sources of bytes: every fixture `config` file, written as an
//! `lspci -xxxx` dump and decoded by the host's `lspci -F`; the `lspci -xxxx`/`lspci -vvv` pair a real
//! kernel produced in the QEMU q35 guest (tests/vm/reference, no pciutils needed on the host); and two
//! real devices whose extended capability lists link backwards.
//!
//! Compared, under the names lspci prints (pciutils ls-caps.c and ls-ecaps.c; registers per the PCI
//! Express Base Specification 6.0): the Express capability's offset and Device/Port Type (§7.5.3.2);
//! DevCap MaxPayload and ExtTag (§7.5.3.3); DevCtl MaxPayload, MaxReadReq, RlxdOrd, ExtTag, NoSnoop
//! (§7.5.3.4); LnkCap Speed and Width (§7.5.3.6); LnkSta Speed and Width (§7.5.3.8); LnkCtl2 Target Link
//! Speed (§7.5.3.19); the AER offset and every UESta/UEMsk/UESvrt/CESta/CEMsk bit (§7.8.4.2-6); the ACS
//! offset and every ACSCap/ACSCtl bit (§7.7.11.2-3).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use fabricdoctor_probes::pci_config::{
    parse_config_space, AccessControlServices, AcsBits, AdvancedErrorReporting, ConfigSpace, ExpressCapability,
    LinkGeneration, PortType,
};

use crate::support::{realworld, repository};

// ------------------------------------------------------------------------------------------------
// Fields in lspci's words: one table per capability, read by both sides of the comparison
// ------------------------------------------------------------------------------------------------

/// Field -> value as lspci spells it: "DevCtl MaxReadReq" -> "512", "ACSCtl ReqRedir" -> "+".
type Fields = BTreeMap<String, String>;

/// How lspci shows a field inside a register's text: the token after some words ("MaxPayload 256
/// bytes", "Target Link Speed: 16GT/s,"), or a flag ("RlxdOrd+").
#[derive(Debug, Clone, Copy)]
enum Shown {
    After(&'static str),
    Flag(&'static str),
}

impl Shown {
    fn name(self) -> &'static str {
        match self {
            Shown::After(words) => words.trim_end_matches(':'),
            Shown::Flag(name) => name,
        }
    }
}

/// One Express capability field: the lspci register label, how lspci shows it, and the decoder's value
/// in lspci's spelling (`None`: the decoder has no value, e.g. no link registers).
struct ExpressField {
    register: &'static str,
    shown: Shown,
    decoded: fn(&ExpressCapability) -> Option<String>,
}

/// ls-caps.c cap_express_dev(), cap_express_link(), cap_express_link2().
const EXPRESS_FIELDS: [ExpressField; 12] = [
    ExpressField {
        register: "DevCap",
        shown: Shown::After("MaxPayload"),
        decoded: |e| Some(e.max_payload_supported.to_string()),
    },
    ExpressField {
        register: "DevCap",
        shown: Shown::Flag("ExtTag"),
        decoded: |e| Some(sign(e.extended_tag_supported)),
    },
    ExpressField {
        register: "DevCtl",
        shown: Shown::After("MaxPayload"),
        decoded: |e| Some(e.max_payload.to_string()),
    },
    ExpressField {
        register: "DevCtl",
        shown: Shown::After("MaxReadReq"),
        decoded: |e| Some(e.max_read_request.to_string()),
    },
    ExpressField { register: "DevCtl", shown: Shown::Flag("RlxdOrd"), decoded: |e| Some(sign(e.relaxed_ordering)) },
    ExpressField { register: "DevCtl", shown: Shown::Flag("ExtTag"), decoded: |e| Some(sign(e.extended_tag)) },
    ExpressField { register: "DevCtl", shown: Shown::Flag("NoSnoop"), decoded: |e| Some(sign(e.no_snoop)) },
    // A width is decoded whenever the link register exists; the speed may still be "unknown".
    ExpressField {
        register: "LnkCap",
        shown: Shown::After("Speed"),
        decoded: |e| e.link_capability_width.map(|_| speed(e.link_capability_speed)),
    },
    ExpressField { register: "LnkCap", shown: Shown::After("Width"), decoded: |e| e.link_capability_width.map(width) },
    ExpressField {
        register: "LnkSta",
        shown: Shown::After("Speed"),
        decoded: |e| e.link_status_width.map(|_| speed(e.link_status_speed)),
    },
    ExpressField { register: "LnkSta", shown: Shown::After("Width"), decoded: |e| e.link_status_width.map(width) },
    ExpressField {
        register: "LnkCtl2",
        shown: Shown::After("Target Link Speed:"),
        decoded: |e| e.target_link_speed.map(|target| speed(Some(target))),
    },
];

/// Uncorrectable error bits (§7.8.4.2) under the names of ls-ecaps.c cap_aer(). The last ten are named
/// only by pciutils 3.10 and later.
const UNCORRECTABLE_ERRORS: &[(&str, u32)] = &[
    ("DLP", 4),
    ("SDES", 5),
    ("TLP", 12),
    ("FCP", 13),
    ("CmpltTO", 14),
    ("CmpltAbrt", 15),
    ("UnxCmplt", 16),
    ("RxOF", 17),
    ("MalfTLP", 18),
    ("ECRC", 19),
    ("UnsupReq", 20),
    ("ACSViol", 21),
    ("UncorrIntErr", 22),
    ("BlockedTLP", 23),
    ("AtomicOpBlocked", 24),
    ("TLPBlockedErr", 25),
    ("PoisonTLPBlocked", 26),
    ("DMWrReqBlocked", 27),
    ("IDECheck", 28),
    ("MisIDETLP", 29),
    ("PCRC_CHECK", 30),
    ("TLPXlatBlocked", 31),
];

/// Correctable error bits (§7.8.4.5); CorrIntErr and HeaderOF are named by pciutils 3.10 and later.
const CORRECTABLE_ERRORS: &[(&str, u32)] = &[
    ("RxErr", 0),
    ("BadTLP", 6),
    ("BadDLLP", 7),
    ("Rollover", 8),
    ("Timeout", 12),
    ("AdvNonFatalErr", 13),
    ("CorrIntErr", 14),
    ("HeaderOF", 15),
];

/// Bits that older pciutils (3.9, Debian 12) does not print: not comparable when absent.
const AER_BITS_NAMED_SINCE_PCIUTILS_3_10: &[&str] = &[
    "UncorrIntErr",
    "BlockedTLP",
    "AtomicOpBlocked",
    "TLPBlockedErr",
    "PoisonTLPBlocked",
    "DMWrReqBlocked",
    "IDECheck",
    "MisIDETLP",
    "PCRC_CHECK",
    "TLPXlatBlocked",
    "CorrIntErr",
    "HeaderOF",
];

/// The AER registers the decoder reads: lspci label, the decoder's value, the bits lspci names in it.
type AerRegister = (&'static str, fn(&AdvancedErrorReporting) -> u32, &'static [(&'static str, u32)]);

const AER_REGISTERS: [AerRegister; 5] = [
    ("UESta", |a| a.uncorrectable_status, UNCORRECTABLE_ERRORS),
    ("UEMsk", |a| a.uncorrectable_mask, UNCORRECTABLE_ERRORS),
    ("UESvrt", |a| a.uncorrectable_severity, UNCORRECTABLE_ERRORS),
    ("CESta", |a| a.correctable_status, CORRECTABLE_ERRORS),
    ("CEMsk", |a| a.correctable_mask, CORRECTABLE_ERRORS),
];

/// An ACS register: lspci label and the decoder's bits.
type AcsRegister = (&'static str, fn(&AccessControlServices) -> AcsBits);

/// An ACS bit: lspci name and the decoder's value.
type AcsFlag = (&'static str, fn(&AcsBits) -> bool);

/// ACS Capability and Control (§7.7.11.2/3), as ls-ecaps.c cap_acs() labels them.
const ACS_REGISTERS: [AcsRegister; 2] = [("ACSCap", |a| a.capability), ("ACSCtl", |a| a.control)];

/// The ACS bits in lspci's order and spelling.
const ACS_FLAGS: [AcsFlag; 7] = [
    ("SrcValid", |b| b.source_validation),
    ("TransBlk", |b| b.translation_blocking),
    ("ReqRedir", |b| b.request_redirect),
    ("CmpltRedir", |b| b.completion_redirect),
    ("UpstreamFwd", |b| b.upstream_forwarding),
    ("EgressCtrl", |b| b.egress_control),
    ("DirectTrans", |b| b.direct_translated),
];

/// Capability titles lspci prints after "Capabilities: [offset]".
const EXPRESS_TITLE: &str = "Express (";
const AER_TITLE: &str = "Advanced Error Reporting";
const ACS_TITLE: &str = "Access Control Services";

fn key(register: &str, name: &str) -> String {
    format!("{register} {name}")
}

fn sign(on: bool) -> String {
    if on { "+" } else { "-" }.to_string()
}

/// A link speed as ls-caps.c link_speed() prints it: "2.5GT/s", "5GT/s", ... "64GT/s", else "unknown".
fn speed(generation: Option<LinkGeneration>) -> String {
    generation.and_then(LinkGeneration::gigatransfers).map_or_else(|| "unknown".to_string(), |gt| format!("{gt}GT/s"))
}

fn width(lanes: u8) -> String {
    format!("x{lanes}")
}

/// Device/Port Type as ls-caps.c cap_express() names it (the "(Slot+)" suffix is not part of the type).
fn port_type_name(port_type: PortType) -> String {
    match port_type {
        PortType::Endpoint => "Endpoint".to_string(),
        PortType::LegacyEndpoint => "Legacy Endpoint".to_string(),
        PortType::RootPort => "Root Port".to_string(),
        PortType::SwitchUpstream => "Upstream Port".to_string(),
        PortType::SwitchDownstream => "Downstream Port".to_string(),
        PortType::PcieToPciBridge => "PCI-Express to PCI/PCI-X Bridge".to_string(),
        PortType::PciToPcieBridge => "PCI/PCI-X to PCI-Express Bridge".to_string(),
        PortType::RootComplexIntegratedEndpoint => "Root Complex Integrated Endpoint".to_string(),
        PortType::RootComplexEventCollector => "Root Complex Event Collector".to_string(),
        PortType::Other(code) => format!("Unknown type {code}"),
    }
}

/// What the decoder read from one function, in lspci's words.
fn decoded_fields(space: &ConfigSpace) -> Fields {
    let mut fields = Fields::new();
    if let Some(express) = &space.express {
        fields.insert(key("Express", "offset"), format!("{:x}", express.offset));
        fields.insert(key("Express", "port type"), port_type_name(express.port_type));
        for field in &EXPRESS_FIELDS {
            if let Some(value) = (field.decoded)(express) {
                fields.insert(key(field.register, field.shown.name()), value);
            }
        }
    }
    if let Some(aer) = &space.aer {
        fields.insert(key("AER", "offset"), format!("{:x}", aer.offset));
        for (register, value, bits) in AER_REGISTERS {
            for &(name, bit) in bits {
                fields.insert(key(register, name), sign(value(aer) & 1 << bit != 0));
            }
        }
    }
    if let Some(acs) = &space.acs {
        fields.insert(key("ACS", "offset"), format!("{:x}", acs.offset));
        for (register, bits) in ACS_REGISTERS {
            for (name, on) in ACS_FLAGS {
                fields.insert(key(register, name), sign(on(&bits(acs))));
            }
        }
    }
    fields
}

/// What lspci printed for the same fields. A field whose register lspci printed but whose token is
/// missing becomes a visible "<not in ...>" value, so a format change fails instead of going unchecked.
fn lspci_fields(function: &LspciFunction) -> Fields {
    let mut fields = Fields::new();
    if let Some(express) = function.capability(EXPRESS_TITLE) {
        fields.insert(key("Express", "offset"), format!("{:x}", express.offset));
        fields.insert(key("Express", "port type"), express_port_type(&express.title));
        for field in &EXPRESS_FIELDS {
            if let Some(text) = express.register(field.register) {
                let value = match field.shown {
                    Shown::After(words) => token_after(text, words).map(|v| {
                        // ls-caps.c prints "unknown" in LnkCap/LnkSta but "Unknown" in LnkCtl2.
                        if v.eq_ignore_ascii_case("unknown") {
                            "unknown".to_string()
                        } else {
                            v.to_string()
                        }
                    }),
                    Shown::Flag(name) => flag(text, name),
                };
                let value = value.unwrap_or_else(|| format!("<not in {:?}>", text));
                fields.insert(key(field.register, field.shown.name()), value);
            }
        }
    }
    if let Some(aer) = function.capability(AER_TITLE) {
        fields.insert(key("AER", "offset"), format!("{:x}", aer.offset));
        for (register, _, bits) in AER_REGISTERS {
            let Some(text) = aer.register(register) else { continue };
            for &(name, _) in bits {
                match flag(text, name) {
                    Some(value) => {
                        fields.insert(key(register, name), value);
                    }
                    None if AER_BITS_NAMED_SINCE_PCIUTILS_3_10.contains(&name) => {}
                    None => {
                        fields.insert(key(register, name), format!("<not in {:?}>", text));
                    }
                }
            }
        }
    }
    if let Some(acs) = function.capability(ACS_TITLE) {
        fields.insert(key("ACS", "offset"), format!("{:x}", acs.offset));
        for (register, _) in ACS_REGISTERS {
            let Some(text) = acs.register(register) else { continue };
            for (name, _) in ACS_FLAGS {
                let value = flag(text, name).unwrap_or_else(|| format!("<not in {:?}>", text));
                fields.insert(key(register, name), value);
            }
        }
    }
    fields
}

/// Why lspci leaves a field out by design, so its absence is not a disagreement.
fn lspci_omits(field: &str, address: &str, space: &ConfigSpace) -> Option<&'static str> {
    let (register, name) = field.split_once(' ')?;
    // ls-caps.c cap_express_link2() prints LnkCap2/LnkCtl2 of an (legacy) endpoint only when it is
    // device 0 function 0.
    let endpoint =
        space.express.as_ref().is_some_and(|e| matches!(e.port_type, PortType::Endpoint | PortType::LegacyEndpoint));
    let function_zero = address.rsplit(':').next() == Some("00.0");
    if register == "LnkCtl2" && endpoint && !function_zero {
        return Some("LnkCtl2 of an endpoint function other than 00.0");
    }
    let aer_register = AER_REGISTERS.iter().any(|(r, ..)| *r == register);
    (aer_register && AER_BITS_NAMED_SINCE_PCIUTILS_3_10.contains(&name)).then_some("AER bits named since pciutils 3.10")
}

/// The capability a field belongs to, by the `offset` field that stands for the whole capability.
fn capability_of(field: &str) -> &'static str {
    let register = field.split_once(' ').map_or(field, |(register, _)| register);
    if register == "AER" || AER_REGISTERS.iter().any(|(r, ..)| *r == register) {
        "AER"
    } else if register == "ACS" || ACS_REGISTERS.iter().any(|(r, _)| *r == register) {
        "ACS"
    } else {
        "Express"
    }
}

/// "Express (v2) Root Port (Slot+), MSI 00" -> "Root Port"; newer pciutils ends with ", IntMsgNum 0".
fn express_port_type(title: &str) -> String {
    let after_version = title.split_once(") ").map_or(title, |(_, rest)| rest);
    let port = after_version.split(',').next().unwrap_or_default().trim();
    port.trim_end_matches(" (Slot+)").trim_end_matches(" (Slot-)").to_string()
}

/// The token after `words` in a register's text, without trailing punctuation:
/// ("Speed 16GT/s, Width x16", "Speed") -> "16GT/s".
fn token_after<'a>(text: &'a str, words: &str) -> Option<&'a str> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let wanted: Vec<&str> = words.split_whitespace().collect();
    let at = tokens.windows(wanted.len()).position(|window| window == wanted.as_slice())?;
    tokens.get(at + wanted.len()).map(|t| t.trim_end_matches([',', ';']))
}

/// "+" or "-" of a flag such as "RlxdOrd+" in a register's text.
fn flag(text: &str, name: &str) -> Option<String> {
    text.split_whitespace()
        .map(|t| t.trim_end_matches([',', ';']))
        .find_map(|t| t.strip_prefix(name).filter(|rest| *rest == "+" || *rest == "-").map(str::to_string))
}

// ------------------------------------------------------------------------------------------------
// lspci's two output formats: `-x`..`-xxxx` hex dumps and `-vvv` text
// ------------------------------------------------------------------------------------------------

/// "BB:DD.F" or "DDDD:BB:DD.F" (lspci -D), the device names lspci prints and lib/dump.c accepts.
fn is_pci_address(text: &str) -> bool {
    let hex = |s: &str, len: usize| s.len() == len && s.chars().all(|c| c.is_ascii_hexdigit());
    let parts: Vec<&str> = text.split(':').collect();
    let (domain_ok, bus, slot) = match parts.as_slice() {
        [bus, slot] => (true, *bus, *slot),
        [domain, bus, slot] => (hex(domain, 4), *bus, *slot),
        _ => return false,
    };
    let Some((device, function)) = slot.split_once('.') else { return false };
    domain_ok && hex(bus, 2) && hex(device, 2) && function.len() == 1 && function.as_bytes()[0].is_ascii_digit()
}

/// One function as `lspci -xxxx` prints it (lspci.c show_hex_dump: "%02x:" then " %02x" per byte, 16
/// a row), which pciutils' lib/dump.c reads back for `lspci -F`. dump.c needs the space after the
/// address, keeps exactly the bytes given, and lspci walks extended capabilities only when all 4096
/// bytes are there, so the whole file is written.
fn hex_dump(address: &str, config: &[u8]) -> String {
    let mut text = format!("{address} config space written by tests/integration/pciutils.rs\n");
    for (row, bytes) in config.chunks(16).enumerate() {
        let _ = write!(text, "{:02x}:", row * 16);
        for byte in bytes {
            let _ = write!(text, " {byte:02x}");
        }
        text.push('\n');
    }
    text.push('\n');
    text
}

/// The functions of an `lspci -x`/`-xxx`/`-xxxx` dump, in file order.
fn parse_hex_dump(text: &str) -> Vec<(String, Vec<u8>)> {
    let mut functions: Vec<(String, Vec<u8>)> = Vec::new();
    for line in text.lines() {
        let Some((head, rest)) = line.split_once(' ') else { continue };
        if is_pci_address(head) {
            functions.push((head.to_string(), Vec::new()));
            continue;
        }
        let Some(offset) = head.strip_suffix(':').and_then(|o| usize::from_str_radix(o, 16).ok()) else { continue };
        let (address, bytes) = functions.last_mut().expect("a hex row before any device line");
        assert_eq!(offset, bytes.len(), "{address}: hex rows out of order at {line:?}");
        bytes.extend(rest.split_whitespace().map(|b| u8::from_str_radix(b, 16).expect("hex byte")));
    }
    functions
}

/// One function's block of `lspci -vvv` output.
#[derive(Debug)]
struct LspciFunction {
    address: String,
    capabilities: Vec<LspciCapability>,
}

/// One "Capabilities: [offset] Title" section: its registers as (label, text with continuation lines).
#[derive(Debug)]
struct LspciCapability {
    offset: u16,
    title: String,
    registers: Vec<(String, String)>,
}

impl LspciFunction {
    fn capability(&self, title_prefix: &str) -> Option<&LspciCapability> {
        self.capabilities.iter().find(|c| c.title.starts_with(title_prefix))
    }
}

impl LspciCapability {
    fn register(&self, label: &str) -> Option<&str> {
        self.registers.iter().find(|(l, _)| l == label).map(|(_, text)| text.as_str())
    }

    /// "Capabilities: [54] Express (v2) Root Port ..." or "Capabilities: [100 v2] Advanced Error Reporting".
    fn from_header(line: &str) -> Option<Self> {
        let (inside, title) = line.strip_prefix("Capabilities: [")?.split_once(']')?;
        let offset = u16::from_str_radix(inside.split_whitespace().next()?, 16).ok()?;
        Some(LspciCapability { offset, title: title.trim().to_string(), registers: Vec::new() })
    }
}

/// Nesting depth of an lspci line: the device line at 0, its properties and capabilities at 1, a
/// capability's registers at 2, their continuation lines at 3 (one tab each, ls-caps.c). Captures pasted
/// into documents have the tabs expanded, so depth counts columns.
fn depth(line: &str) -> usize {
    let mut columns = 0;
    for c in line.chars() {
        match c {
            '\t' => columns = (columns / 8 + 1) * 8,
            ' ' => columns += 1,
            _ => break,
        }
    }
    columns / 8
}

/// The functions of `lspci -vvv` output by address.
fn parse_lspci_verbose(text: &str) -> BTreeMap<String, LspciFunction> {
    let mut functions = BTreeMap::new();
    let mut function: Option<LspciFunction> = None;
    // Registers belong to the capability opened last, until a device property ("Kernel driver in
    // use: ...", or "BridgeCtl:" before any capability) comes at depth 1.
    let mut in_capability = false;
    for line in text.lines() {
        let content = line.trim();
        if content.is_empty() {
            continue;
        }
        let depth = depth(line);
        if depth == 0 {
            if let Some(done) = function.take() {
                functions.insert(done.address.clone(), done);
            }
            let address = content.split_whitespace().next().filter(|a| is_pci_address(a));
            function = address.map(|a| LspciFunction { address: a.to_string(), capabilities: Vec::new() });
            in_capability = false;
            continue;
        }
        let Some(function) = function.as_mut() else { continue };
        if depth == 1 {
            let capability = LspciCapability::from_header(content);
            in_capability = capability.is_some();
            function.capabilities.extend(capability);
            continue;
        }
        let Some(capability) = function.capabilities.last_mut().filter(|_| in_capability) else { continue };
        if depth == 2 {
            if let Some((label, text)) = content.split_once(':') {
                capability.registers.push((label.trim().to_string(), text.trim().to_string()));
            }
        } else if let Some((_, text)) = capability.registers.last_mut() {
            text.push(' ');
            text.push_str(content);
        }
    }
    if let Some(done) = function {
        functions.insert(done.address.clone(), done);
    }
    functions
}

// ------------------------------------------------------------------------------------------------
// Comparison
// ------------------------------------------------------------------------------------------------

/// One source's tally: what was compared, and every disagreement with the function it came from.
#[derive(Debug, Default)]
struct Agreement {
    functions: usize,
    with_express: usize,
    with_aer: usize,
    with_acs: usize,
    compared: BTreeMap<String, usize>,
    left_out_by_lspci: BTreeMap<&'static str, usize>,
    disagreements: Vec<String>,
}

impl Agreement {
    /// Decode `config` and compare every field with lspci's block for the same function.
    fn compare(&mut self, subject: &str, config: &[u8], lspci: Option<&LspciFunction>) {
        self.functions += 1;
        let Some(lspci) = lspci else {
            self.disagreements.push(format!("{subject}: lspci did not list the function"));
            return;
        };
        let space = match parse_config_space(config) {
            Ok(space) => space,
            Err(error) => {
                self.disagreements.push(format!("{subject}: decoder failed: {error}"));
                return;
            }
        };
        self.with_express += usize::from(space.express.is_some());
        self.with_aer += usize::from(space.aer.is_some());
        self.with_acs += usize::from(space.acs.is_some());
        let decoded = decoded_fields(&space);
        let shown = lspci_fields(lspci);
        // A capability only one side found is one disagreement, not one per register bit.
        let one_sided: BTreeSet<&str> = ["Express", "AER", "ACS"]
            .into_iter()
            .filter(|c| decoded.contains_key(&key(c, "offset")) != shown.contains_key(&key(c, "offset")))
            .collect();
        let fields: BTreeSet<&String> = decoded.keys().chain(shown.keys()).collect();
        for field in fields {
            if one_sided.contains(capability_of(field)) && !field.ends_with(" offset") {
                continue;
            }
            let omitted = lspci_omits(field, &lspci.address, &space);
            match (decoded.get(field), shown.get(field), omitted) {
                (Some(ours), Some(theirs), _) if ours == theirs => {
                    *self.compared.entry(field.clone()).or_default() += 1
                }
                (Some(_), None, Some(reason)) => *self.left_out_by_lspci.entry(reason).or_default() += 1,
                (ours, theirs, _) => self.disagreements.push(format!(
                    "{subject}: {field}: decoder {}, lspci {}",
                    ours.map_or("has no value", String::as_str),
                    theirs.map_or("shows nothing", String::as_str)
                )),
            }
        }
    }

    fn report(&self, source: &str) -> String {
        let values: usize = self.compared.values().sum();
        let mut text = format!(
            "pciutils agreement, {source}: {} functions ({} with Express, {} AER, {} ACS); {values} field values \
             equal over {} distinct fields; left out by lspci by design: {:?}; {} disagreements",
            self.functions,
            self.with_express,
            self.with_aer,
            self.with_acs,
            self.compared.len(),
            self.left_out_by_lspci,
            self.disagreements.len()
        );
        for (field, count) in &self.compared {
            let _ = write!(text, "\n  {field}: {count}");
        }
        text
    }

    #[track_caller]
    fn assert_no_disagreement(&self, source: &str) {
        eprintln!("{}", self.report(source));
        assert!(
            self.disagreements.is_empty(),
            "parse_config_space and lspci disagree on {} field value(s) ({source}):\n{}",
            self.disagreements.len(),
            self.disagreements.join("\n")
        );
    }
}

// ------------------------------------------------------------------------------------------------
// The host's pciutils
// ------------------------------------------------------------------------------------------------

/// The host's `lspci`: on PATH, or in /usr/sbin and /sbin where some distributions keep it out of a
/// normal user's PATH. `None` skips loudly, or fails when CI asked for pciutils
/// (FABRICDOCTOR_REQUIRE_PCIUTILS=1).
fn lspci_or_skip(test: &str) -> Option<PathBuf> {
    let path_dirs = std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect::<Vec<_>>()).unwrap_or_default();
    let found = path_dirs
        .into_iter()
        .chain(["/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|d| d.join("lspci"))
        .find(|p| p.is_file());
    if found.is_none() {
        let required = std::env::var("FABRICDOCTOR_REQUIRE_PCIUTILS").is_ok_and(|v| v == "1");
        assert!(!required, "lspci (pciutils) not found but FABRICDOCTOR_REQUIRE_PCIUTILS=1: install pciutils ({test})");
        crate::support::loud_eprintln!("SKIP: lspci (pciutils) not found; install pciutils ({test} compared nothing)");
    }
    found
}

/// lspci's decoding of a dump: `lspci -vvv -D -F FILE` (lspci(8): -F reads "the list of devices and
/// values of their configuration registers from the given file produced by an earlier run of lspci -x").
fn lspci_decode(lspci: &Path, dump: &str) -> (String, BTreeMap<String, LspciFunction>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("config-space.lspci");
    std::fs::write(&file, dump).expect("write dump");
    let output = Command::new(lspci).args(["-vvv", "-D", "-F"]).arg(&file).output().expect("lspci runs");
    assert!(output.status.success(), "lspci -F failed: {}", String::from_utf8_lossy(&output.stderr));
    let version = Command::new(lspci).arg("--version").output().expect("lspci --version");
    let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
    (version, parse_lspci_verbose(&String::from_utf8_lossy(&output.stdout)))
}

// ------------------------------------------------------------------------------------------------
// Source 1: the fixtures' config files, decoded by the host's lspci
// ------------------------------------------------------------------------------------------------

/// Every `config` file of every fixture tree: (fixture, sysfs address, path), from
/// tests/fixtures/<machine>/sys/devices/**/<address>/config. Symlinks are not followed.
fn fixture_config_files() -> BTreeMap<String, Vec<(String, PathBuf)>> {
    fn walk(dir: &Path, found: &mut Vec<(String, PathBuf)>) {
        for entry in std::fs::read_dir(dir).expect("read fixture dir").map(|e| e.expect("dir entry")) {
            let kind = entry.file_type().expect("file type");
            let path = entry.path();
            if kind.is_dir() {
                walk(&path, found);
            } else if kind.is_file() && entry.file_name() == "config" {
                let address = path.parent().and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or_default();
                assert!(is_pci_address(address), "{}: not under a PCI function directory", path.display());
                found.push((address.to_string(), path));
            }
        }
    }
    let mut fixtures = BTreeMap::new();
    for entry in std::fs::read_dir(repository().join("tests/fixtures")).expect("tests/fixtures") {
        let machine = entry.expect("dir entry").path();
        let devices = machine.join("sys/devices");
        if devices.is_dir() {
            let mut found = Vec::new();
            walk(&devices, &mut found);
            found.sort();
            let name = machine.file_name().and_then(|n| n.to_str()).expect("fixture name").to_string();
            fixtures.insert(name, found);
        }
    }
    fixtures
}

#[test]
fn decoder_agrees_with_lspci_on_every_fixture_config_space() {
    let Some(lspci) = lspci_or_skip("decoder_agrees_with_lspci_on_every_fixture_config_space") else { return };
    let fixtures = fixture_config_files();
    let mut agreement = Agreement::default();
    let mut version = String::new();
    let mut files = 0;
    for (fixture, configs) in &fixtures {
        let mut dump = String::new();
        let mut bytes = BTreeMap::new();
        for (address, path) in configs {
            let config = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            dump += &hex_dump(address, &config);
            bytes.insert(address.clone(), (path, config));
        }
        // The dump parser used on the QEMU reference must read our own dumps back byte for byte.
        for (address, parsed) in parse_hex_dump(&dump) {
            assert_eq!(parsed, bytes[&address].1, "{fixture} {address}: hex dump round trip");
        }
        let (lspci_version, listed) = lspci_decode(&lspci, &dump);
        version = lspci_version;
        for (address, (path, config)) in &bytes {
            let relative = path.strip_prefix(repository()).unwrap_or(path.as_path());
            agreement.compare(&format!("{fixture} {address} ({})", relative.display()), config, listed.get(address));
            files += 1;
        }
    }
    agreement.assert_no_disagreement(&format!("fixtures, {version}"));
    // Not vacuous: every config file was compared, and the PCIe capabilities were really decoded.
    assert_eq!(agreement.functions, files);
    assert!(files > 50, "only {files} fixture config files found under tests/fixtures/*/sys/devices");
    assert!(agreement.with_express > 50, "only {} functions with an Express capability", agreement.with_express);
    assert!(agreement.with_aer > 20 && agreement.with_acs > 10, "too few AER/ACS capabilities: {agreement:?}");
}

// ------------------------------------------------------------------------------------------------
// Source 2: a real kernel's lspci in the QEMU q35 guest (tests/vm/capture-reference.sh)
// ------------------------------------------------------------------------------------------------

fn read_reference_or_skip(name: &str) -> Option<String> {
    let path = repository().join("tests/vm/reference").join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(error) => {
            crate::support::loud_eprintln!(
                "SKIP: {} missing ({error}); produce it with tests/vm/capture-reference.sh",
                path.display()
            );
            None
        }
    }
}

#[test]
fn decoder_agrees_with_lspci_in_the_qemu_q35_reference_guest() {
    let (Some(dump), Some(verbose)) =
        (read_reference_or_skip("lspci-xxxx.txt"), read_reference_or_skip("lspci-vvv.txt"))
    else {
        return;
    };
    let functions = parse_hex_dump(&dump);
    let listed = parse_lspci_verbose(&verbose);
    let mut agreement = Agreement::default();
    for (address, config) in &functions {
        agreement.compare(
            &format!("QEMU guest {address} (tests/vm/reference/lspci-xxxx.txt)"),
            config,
            listed.get(address),
        );
    }
    agreement.assert_no_disagreement("QEMU q35 guest, tests/vm/reference");
    // PROVENANCE.txt: one function of each kind, 12 in all; 9 of them PCI Express.
    assert!(functions.len() >= 10, "only {} functions in lspci-xxxx.txt", functions.len());
    assert_eq!(agreement.functions, functions.len());
    assert!(agreement.with_express >= 8, "only {} functions with an Express capability", agreement.with_express);
}

// ------------------------------------------------------------------------------------------------
// Source 3: extended capability lists that link backwards, as real devices have them
// ------------------------------------------------------------------------------------------------

/// A config space built register by register.
struct SyntheticConfig(Vec<u8>);

impl SyntheticConfig {
    fn new(vendor: u16, device: u16, class: u32, header_type: u8) -> Self {
        let mut config = SyntheticConfig(vec![0; 4096]);
        config.put(0x00, u32::from(device) << 16 | u32::from(vendor), 4);
        config.put(0x06, 0x0010, 2); // Status: Capabilities List
        config.put(0x08, class << 8, 4);
        config.put(0x0e, u32::from(header_type), 1);
        config
    }

    fn put(&mut self, offset: usize, value: u32, bytes: usize) {
        self.0[offset..offset + bytes].copy_from_slice(&value.to_le_bytes()[..bytes]);
    }

    /// The Express capability (version 2) as the only classic capability, with DevCap, DevCtl, LnkCap,
    /// LnkSta and LnkCtl2 at their §7.5.3 offsets.
    fn express(&mut self, at: usize, port_type: u32, [devcap, devctl, lnkcap, lnksta, lnkctl2]: [u32; 5]) {
        self.put(0x34, at as u32, 1);
        self.put(at, (2 | port_type << 4) << 16 | 0x10, 4);
        for (register, value, bytes) in
            [(0x04, devcap, 4), (0x08, devctl, 2), (0x0c, lnkcap, 4), (0x12, lnksta, 2), (0x30, lnkctl2, 2)]
        {
            self.put(at + register, value, bytes);
        }
    }

    /// Extended capability headers, (offset, id, version), each linking to the next in the order given:
    /// id in bits 15:0, version in 19:16, next offset in 31:20 (§7.6.3).
    fn extended_chain(&mut self, chain: &[(usize, u32, u32)]) {
        for (i, &(offset, id, version)) in chain.iter().enumerate() {
            let next = chain.get(i + 1).map_or(0, |&(n, ..)| n as u32);
            self.put(offset, id | version << 16 | next << 20, 4);
        }
    }
}

const EXT_VIRTUAL_CHANNEL: u32 = 0x0002;
const EXT_POWER_BUDGETING: u32 = 0x0004;
const EXT_DEVICE_SERIAL_NUMBER: u32 = 0x0003;
const EXT_VENDOR_SPECIFIC: u32 = 0x000b;
const EXT_SECONDARY_PCIE: u32 = 0x0019;
const EXT_MULTICAST: u32 = 0x0012;
const EXT_LTR: u32 = 0x0018;
const EXT_L1_PM_SUBSTATES: u32 = 0x001e;
const EXT_AER: u32 = 0x0001;
const EXT_ACS: u32 = 0x000d;

/// GPU #0 of ../shared/realworld/lspci-01 (NVIDIA RTX 6000 Ada, 01:00.0) as far as the decoder reads it.
/// lspci walked its extended capabilities as [100] Virtual Channel, [250] LTR, [258] L1 PM Substates,
/// [128] Power Budgeting, [420] AER, [600] Vendor Specific: 0x258 links back to 0x128.
fn rtx_6000_ada() -> Vec<u8> {
    let mut config = SyntheticConfig::new(0x10de, 0x26b1, 0x030000, 0);
    // DevCap MaxPayload 256 ExtTag+; DevCtl RlxdOrd+ ExtTag+ NoSnoop+ MaxPayload 256 MaxReadReq 512;
    // LnkCap 16GT/s x16; LnkSta 2.5GT/s x16 (idle); LnkCtl2 target 16GT/s.
    config.express(
        0x78,
        1,
        [1 | 1 << 5, 0x7 | 1 << 4 | 1 << 5 | 1 << 8 | 1 << 11 | 2 << 12, 4 | 16 << 4, 1 | 16 << 4, 4],
    );
    config.extended_chain(&[
        (0x100, EXT_VIRTUAL_CHANNEL, 1),
        (0x250, EXT_LTR, 1),
        (0x258, EXT_L1_PM_SUBSTATES, 1),
        (0x128, EXT_POWER_BUDGETING, 1),
        (0x420, EXT_AER, 2),
        (0x600, EXT_VENDOR_SPECIFIC, 1),
    ]);
    config.put(0x420 + 0x08, 1 << 20, 4); // UEMsk: UnsupReq+
    config.put(0x420 + 0x0c, 1 << 4 | 1 << 5 | 1 << 13 | 1 << 14 | 1 << 16 | 1 << 17 | 1 << 18, 4); // UESvrt
    config.0
}

/// A Broadcom/PLX PEX 8724 downstream port (02:01.0) from a public `lspci -vvv` capture: [100] Device
/// Serial Number, [fb4] AER, [138] Power Budgeting, [10c] Secondary PCIe, [148] Virtual Channel,
/// [e00] Multicast, [f24] ACS, [b70] Vendor Specific. The same layout is why nccl#304's fix
/// (../shared/realworld/lspci-11) writes ACSCtl with `setpci f2a.w=0000`. ACSCtl here is that issue's
/// broken state: SrcValid+ ReqRedir+ CmpltRedir+ UpstreamFwd+.
fn pex_8724_downstream_port() -> Vec<u8> {
    let mut config = SyntheticConfig::new(0x10b5, 0x8724, 0x060400, 1);
    // DevCap MaxPayload 2048; DevCtl RlxdOrd+ NoSnoop+ MaxPayload 256 MaxReadReq 128; 8GT/s x8 trained.
    config.express(0x68, 6, [4, 1 << 4 | 1 << 11 | 1 << 5, 3 | 8 << 4, 3 | 8 << 4, 3]);
    config.extended_chain(&[
        (0x100, EXT_DEVICE_SERIAL_NUMBER, 1),
        (0xfb4, EXT_AER, 1),
        (0x138, EXT_POWER_BUDGETING, 1),
        (0x10c, EXT_SECONDARY_PCIE, 1),
        (0x148, EXT_VIRTUAL_CHANNEL, 1),
        (0xe00, EXT_MULTICAST, 1),
        (0xf24, EXT_ACS, 1),
        (0xb70, EXT_VENDOR_SPECIFIC, 1),
    ]);
    config.put(0xfb4 + 0x0c, 1 << 4 | 1 << 5 | 1 << 13 | 1 << 17 | 1 << 18, 4); // UESvrt
    config.put(0xf24 + 0x04, 0x7f, 2); // ACSCap: all seven
    config.put(0xf24 + 0x06, 1 | 1 << 2 | 1 << 3 | 1 << 4, 2); // ACSCtl
    config.0
}

/// Regression: the extended capability list is a linked list, not a sorted one (PCIe 6.0 §7.6.3 only
/// asks that Next Capability Offset be 0 or at least 0x100), and real devices link backwards. A walk
/// that stops at the first backward link misses the GPU's AER and the PLX port's ACS; the latter turns
/// nccl#304's ACS-redirect fault into "no ACS capability". pciutils' show_ext_caps() follows every link
/// and stops only on a loop.
#[test]
fn decoder_follows_backward_extended_capability_links_like_lspci() {
    let cases = [
        ("0000:01:00.0", "NVIDIA RTX 6000 Ada (lspci-01)", rtx_6000_ada(), Some(0x420), None),
        ("0000:02:01.0", "PLX PEX 8724 downstream port", pex_8724_downstream_port(), Some(0xfb4), Some(0xf24)),
    ];
    // Offsets as the real devices' lspci printed them; needs no pciutils.
    let mut missed = Vec::new();
    for (address, device, config, aer, acs) in &cases {
        let space = parse_config_space(config).expect("decodes");
        let found = (space.aer.as_ref().map(|a| a.offset), space.acs.as_ref().map(|a| a.offset));
        if found != (*aer, *acs) {
            missed.push(format!("{address} {device}: (AER, ACS) offsets {found:x?}, lspci showed {:x?}", (aer, acs)));
        }
    }
    // And every field as the host's lspci decodes the same bytes.
    if let Some(lspci) = lspci_or_skip("decoder_follows_backward_extended_capability_links_like_lspci") {
        let dump: String = cases.iter().map(|(address, _, config, ..)| hex_dump(address, config)).collect();
        let (version, listed) = lspci_decode(&lspci, &dump);
        let mut agreement = Agreement::default();
        for (address, device, config, ..) in &cases {
            agreement.compare(&format!("{address} {device}"), config, listed.get(*address));
        }
        eprintln!("{}", agreement.report(&format!("backward-linked extended capabilities, {version}")));
        missed.extend(agreement.disagreements);
    }
    assert!(missed.is_empty(), "the decoder stops at a backward extended capability link:\n{}", missed.join("\n"));
}

// ------------------------------------------------------------------------------------------------
// The parsers themselves, on text lspci printed
// ------------------------------------------------------------------------------------------------

#[test]
fn lspci_text_parsers_read_tabs_pasted_spaces_and_both_address_forms() {
    let Some(path) = realworld("lspci-01-stelline-coyote2-rtx6000ada-idle-2.5gts-downgraded.txt") else { return };
    let captured = std::fs::read_to_string(&path).expect("lspci-01 reads");
    let gpu = &parse_lspci_verbose(&captured)["01:00.0"];
    let shown = lspci_fields(gpu);
    for (field, value) in [
        ("Express offset", "78"),
        ("Express port type", "Legacy Endpoint"),
        ("DevCap MaxPayload", "256"),
        ("DevCtl MaxReadReq", "512"),
        ("LnkCap Speed", "16GT/s"),
        ("LnkSta Speed", "2.5GT/s"),
        ("LnkSta Width", "x16"),
        ("LnkCtl2 Target Link Speed", "16GT/s"),
        ("AER offset", "420"),
        ("UEMsk UnsupReq", "+"),
    ] {
        assert_eq!(shown.get(field).map(String::as_str), Some(value), "{field} in lspci-01");
    }
    assert!(is_pci_address("0000:17:00.1") && is_pci_address("40:00.0") && !is_pci_address("00:"));
    assert_eq!(token_after("Target Link Speed: 2.5GT/s, EnterCompliance-", "Target Link Speed:"), Some("2.5GT/s"));
    assert_eq!(express_port_type("Express (v2) Downstream Port (Slot+), IntMsgNum 0"), "Downstream Port");
}
