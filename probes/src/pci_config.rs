//! Decoding of PCI configuration space: the PCI Express capability and the AER and ACS extended
//! capabilities, as `lspci -vvv` shows them.
//!
//! Register layouts follow the PCI Express Base Specification 6.0: §7.5.3 (PCI Express Capability
//! Structure), §7.8.4 (Advanced Error Reporting), §7.7.11 (ACS Extended Capability); the capability list
//! walk follows PCI Local Bus Specification 3.0 §6.7. The sysfs `config` file is 4096 bytes when read
//! as root but only the first 64 bytes (the standard header) for other users (drivers/pci/pci-sysfs.c,
//! `pci_read_config`), so everything past the header is `None` in that case: unknown, never assumed.

use serde::Serialize;

use crate::error::ParseError;

/// PCI Express Device/Port Type (PCIe Capabilities register bits 7:4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PortType {
    Endpoint,
    LegacyEndpoint,
    RootPort,
    SwitchUpstream,
    SwitchDownstream,
    PcieToPciBridge,
    PciToPcieBridge,
    RootComplexIntegratedEndpoint,
    RootComplexEventCollector,
    Other(u8),
}

impl PortType {
    fn from_bits(bits: u8) -> Self {
        match bits {
            0 => PortType::Endpoint,
            1 => PortType::LegacyEndpoint,
            4 => PortType::RootPort,
            5 => PortType::SwitchUpstream,
            6 => PortType::SwitchDownstream,
            7 => PortType::PcieToPciBridge,
            8 => PortType::PciToPcieBridge,
            9 => PortType::RootComplexIntegratedEndpoint,
            10 => PortType::RootComplexEventCollector,
            other => PortType::Other(other),
        }
    }
}

/// A PCIe link rate as a generation: 1 = 2.5 GT/s ... 6 = 64 GT/s (the encoding of Link Capabilities
/// "Max Link Speed", Link Status "Current Link Speed" and Link Control 2 "Target Link Speed" as an
/// index into the Supported Link Speeds Vector).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct LinkGeneration(pub u8);

impl LinkGeneration {
    /// Transfer rate in GT/s.
    pub fn gigatransfers(self) -> Option<f64> {
        match self.0 {
            1 => Some(2.5),
            2 => Some(5.0),
            3 => Some(8.0),
            4 => Some(16.0),
            5 => Some(32.0),
            6 => Some(64.0),
            _ => None,
        }
    }
}

/// The PCI Express capability (id 0x10) fields that decide RDMA and GPUDirect performance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExpressCapability {
    pub offset: u16,
    pub port_type: PortType,
    /// Device Capabilities bits 2:0: largest TLP payload the function supports, in bytes.
    pub max_payload_supported: u32,
    pub extended_tag_supported: bool,
    /// Device Control bits 7:5: Max Payload Size programmed, in bytes.
    pub max_payload: u32,
    /// Device Control bits 14:12: Max Read Request Size, in bytes.
    pub max_read_request: u32,
    pub relaxed_ordering: bool,
    pub extended_tag: bool,
    pub no_snoop: bool,
    /// Link Capabilities: max speed and width the port supports (absent on root complex integrated endpoints).
    pub link_capability_speed: Option<LinkGeneration>,
    pub link_capability_width: Option<u8>,
    /// Link Status: what the link trained to.
    pub link_status_speed: Option<LinkGeneration>,
    pub link_status_width: Option<u8>,
    /// Link Control 2 bits 3:0 (capability version 2 only): the speed the port is asked to train to;
    /// firmware or `setpci` can cap it below capability.
    pub target_link_speed: Option<LinkGeneration>,
}

/// Advanced Error Reporting (extended capability 0x0001) status registers. Bits latch until cleared,
/// so a set bit says an error happened since the last clear, not that it is happening now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AdvancedErrorReporting {
    pub offset: u16,
    pub uncorrectable_status: u32,
    pub uncorrectable_mask: u32,
    pub uncorrectable_severity: u32,
    pub correctable_status: u32,
    pub correctable_mask: u32,
}

/// Access Control Services (extended capability 0x000D) capability and control bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AccessControlServices {
    pub offset: u16,
    pub capability: AcsBits,
    pub control: AcsBits,
}

/// The ACS bit layout shared by the ACS Capability and ACS Control registers (§7.7.11.2/3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AcsBits {
    pub source_validation: bool,
    pub translation_blocking: bool,
    pub request_redirect: bool,
    pub completion_redirect: bool,
    pub upstream_forwarding: bool,
    pub egress_control: bool,
    pub direct_translated: bool,
}

impl AcsBits {
    /// The bits of an ACS Capability or Control register value (as `setpci ECAP_ACS+6.w` prints it).
    pub fn from_bits(bits: u16) -> Self {
        AcsBits {
            source_validation: bits & 1 != 0,
            translation_blocking: bits & (1 << 1) != 0,
            request_redirect: bits & (1 << 2) != 0,
            completion_redirect: bits & (1 << 3) != 0,
            upstream_forwarding: bits & (1 << 4) != 0,
            egress_control: bits & (1 << 5) != 0,
            direct_translated: bits & (1 << 6) != 0,
        }
    }

    /// The `lspci -vvv` rendering ("SrcValid+ TransBlk- ReqRedir+ ..."), used in evidence.
    pub fn lspci_flags(&self) -> String {
        let flag = |name: &str, on: bool| format!("{name}{}", if on { '+' } else { '-' });
        [
            flag("SrcValid", self.source_validation),
            flag("TransBlk", self.translation_blocking),
            flag("ReqRedir", self.request_redirect),
            flag("CmpltRedir", self.completion_redirect),
            flag("UpstreamFwd", self.upstream_forwarding),
            flag("EgressCtrl", self.egress_control),
            flag("DirectTrans", self.direct_translated),
        ]
        .join(" ")
    }
}

/// What could be decoded from one function's config space.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigSpace {
    pub vendor: u16,
    pub device: u16,
    /// Header type bits 6:0: 0 endpoint, 1 PCI-to-PCI bridge.
    pub header_type: u8,
    /// How many bytes the kernel let us read (64 without root, 256 on conventional PCI, 4096 on PCIe).
    pub readable_bytes: usize,
    /// `None` when the capability lies beyond what was readable, or the function has none.
    pub express: Option<ExpressCapability>,
    pub aer: Option<AdvancedErrorReporting>,
    pub acs: Option<AccessControlServices>,
}

impl ConfigSpace {
    /// True when only the standard header was readable (not root): capabilities are unknown, not absent.
    pub fn is_truncated(&self) -> bool {
        self.readable_bytes < 256
    }
}

const CAPABILITY_LIST: u16 = 0x34;
const STATUS: u16 = 0x06;
const STATUS_CAPABILITY_LIST: u16 = 1 << 4;
const CAP_ID_EXPRESS: u8 = 0x10;
const EXT_CAP_ID_AER: u16 = 0x0001;
const EXT_CAP_ID_ACS: u16 = 0x000d;
/// Extended capabilities start at 0x100 in PCIe config space (§7.6.3).
const EXTENDED_START: u16 = 0x100;

/// Decode a function's configuration space (the sysfs `config` file's bytes).
pub fn parse_config_space(bytes: &[u8]) -> Result<ConfigSpace, ParseError> {
    let config = Bytes(bytes);
    let vendor = config.u16(0x00).ok_or_else(|| ParseError::new(format!("only {} bytes", bytes.len())))?;
    let device = config.u16(0x02).ok_or_else(|| ParseError::new(format!("only {} bytes", bytes.len())))?;
    if vendor == 0xffff {
        return Err(ParseError::new("vendor id 0xffff: the function does not respond (removed or in reset)"));
    }
    let header_type = config.u8(0x0e).map(|h| h & 0x7f).unwrap_or(0);
    let mut space =
        ConfigSpace { vendor, device, header_type, readable_bytes: bytes.len(), express: None, aer: None, acs: None };
    if bytes.len() <= 0x40 {
        return Ok(space);
    }
    let status = config.u16(STATUS).unwrap_or(0);
    if status & STATUS_CAPABILITY_LIST != 0 {
        if let Some(offset) = find_capability(&config, CAP_ID_EXPRESS) {
            space.express = decode_express(&config, offset);
        }
    }
    if space.express.is_some() && bytes.len() > EXTENDED_START as usize {
        for (id, offset) in extended_capabilities(&config) {
            match id {
                EXT_CAP_ID_AER if space.aer.is_none() => space.aer = decode_aer(&config, offset),
                EXT_CAP_ID_ACS if space.acs.is_none() => space.acs = decode_acs(&config, offset),
                _ => {}
            }
        }
    }
    Ok(space)
}

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&self, offset: u16) -> Option<u8> {
        self.0.get(offset as usize).copied()
    }
    fn u16(&self, offset: u16) -> Option<u16> {
        let o = offset as usize;
        Some(u16::from_le_bytes([*self.0.get(o)?, *self.0.get(o + 1)?]))
    }
    fn u32(&self, offset: u16) -> Option<u32> {
        let o = offset as usize;
        let b = self.0.get(o..o + 4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// Walk the classic capability list. Pointers are dword aligned (low two bits reserved) and at least
/// 0x40; a hostile or corrupted list can loop, so the walk is bounded (at most 48 entries fit).
fn find_capability(config: &Bytes<'_>, wanted: u8) -> Option<u16> {
    let mut pointer = config.u8(CAPABILITY_LIST)? & 0xfc;
    for _ in 0..48 {
        if pointer < 0x40 {
            return None;
        }
        let id = config.u8(pointer as u16)?;
        if id == wanted {
            return Some(pointer as u16);
        }
        pointer = config.u8(pointer as u16 + 1)? & 0xfc;
    }
    None
}

/// Walk the extended capability list from 0x100: header = id (15:0), version (19:16), next (31:20).
fn extended_capabilities(config: &Bytes<'_>) -> Vec<(u16, u16)> {
    let mut found = Vec::new();
    let mut visited = std::collections::BTreeSet::new();
    let mut offset = EXTENDED_START;
    // Next pointers may point backwards (NVIDIA GPUs: 100 -> 250 -> 258 -> 128 -> 420; PLX switch ports
    // put ACS at 0xf24 after a link back to 0x138), so follow every link as pciutils does and stop only
    // at the end, on garbage or on a revisit; 4096 bytes hold at most 1024 dwords.
    for _ in 0..1024 {
        if !visited.insert(offset) {
            break;
        }
        let Some(header) = config.u32(offset) else {
            break;
        };
        if header == 0 || header == 0xffff_ffff {
            break;
        }
        found.push(((header & 0xffff) as u16, offset));
        let next = ((header >> 20) & 0xffc) as u16;
        if next < EXTENDED_START {
            break;
        }
        offset = next;
    }
    found
}

fn payload_bytes(code: u32) -> u32 {
    // 000b = 128 bytes ... 101b = 4096 bytes; 110b/111b are reserved (§7.5.3.3/§7.5.3.4).
    128u32 << code.min(5)
}

fn decode_express(config: &Bytes<'_>, offset: u16) -> Option<ExpressCapability> {
    let capabilities = config.u16(offset + 0x02)?;
    let version = capabilities & 0xf;
    let port_type = PortType::from_bits(((capabilities >> 4) & 0xf) as u8);
    let device_capabilities = config.u32(offset + 0x04)?;
    let device_control = config.u16(offset + 0x08)?;
    let has_link = !matches!(port_type, PortType::RootComplexIntegratedEndpoint | PortType::RootComplexEventCollector);
    let link_capabilities = if has_link { config.u32(offset + 0x0c) } else { None };
    let link_status = if has_link { config.u16(offset + 0x12) } else { None };
    // Link Control 2 exists from capability version 2 on (§7.5.3.19).
    let link_control2 = if has_link && version >= 2 { config.u16(offset + 0x30) } else { None };
    let generation = |bits: u32| (bits != 0).then_some(LinkGeneration(bits as u8));
    Some(ExpressCapability {
        offset,
        port_type,
        max_payload_supported: payload_bytes(device_capabilities & 0x7),
        extended_tag_supported: device_capabilities & (1 << 5) != 0,
        max_payload: payload_bytes(((device_control >> 5) & 0x7) as u32),
        max_read_request: payload_bytes(((device_control >> 12) & 0x7) as u32),
        relaxed_ordering: device_control & (1 << 4) != 0,
        extended_tag: device_control & (1 << 8) != 0,
        no_snoop: device_control & (1 << 11) != 0,
        link_capability_speed: link_capabilities.and_then(|l| generation(l & 0xf)),
        link_capability_width: link_capabilities.map(|l| ((l >> 4) & 0x3f) as u8),
        link_status_speed: link_status.and_then(|l| generation((l & 0xf) as u32)),
        link_status_width: link_status.map(|l| ((l >> 4) & 0x3f) as u8),
        // A Target Link Speed of 0 is a hardwired field of a 2.5 GT/s-only component (§7.5.3.19), as
        // lspci prints it.
        target_link_speed: link_control2.map(|l| LinkGeneration(((l & 0xf) as u8).max(1))),
    })
}

fn decode_aer(config: &Bytes<'_>, offset: u16) -> Option<AdvancedErrorReporting> {
    Some(AdvancedErrorReporting {
        offset,
        uncorrectable_status: config.u32(offset + 0x04)?,
        uncorrectable_mask: config.u32(offset + 0x08)?,
        uncorrectable_severity: config.u32(offset + 0x0c)?,
        correctable_status: config.u32(offset + 0x10)?,
        correctable_mask: config.u32(offset + 0x14)?,
    })
}

fn decode_acs(config: &Bytes<'_>, offset: u16) -> Option<AccessControlServices> {
    Some(AccessControlServices {
        offset,
        capability: AcsBits::from_bits(config.u16(offset + 0x04)?),
        control: AcsBits::from_bits(config.u16(offset + 0x06)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal PCIe endpoint: PM cap at 0x40 -> Express cap at 0x60; AER at 0x100 -> ACS at 0x148.
    fn endpoint(device_control: u16, link_status: u16, acs_control: u16) -> Vec<u8> {
        let mut c = vec![0u8; 4096];
        c[0..2].copy_from_slice(&0x15b3u16.to_le_bytes());
        c[2..4].copy_from_slice(&0x1021u16.to_le_bytes());
        c[0x06] = 0x10; // status: capability list
        c[0x34] = 0x40;
        c[0x40] = 0x01; // power management
        c[0x41] = 0x60;
        c[0x60] = 0x10;
        c[0x61] = 0x00;
        c[0x62..0x64].copy_from_slice(&0x0002u16.to_le_bytes()); // v2 endpoint
        c[0x64..0x68].copy_from_slice(&(0x2u32 | 1 << 5).to_le_bytes()); // MPS 512 supported, ExtTag
        c[0x68..0x6a].copy_from_slice(&device_control.to_le_bytes());
        c[0x6c..0x70].copy_from_slice(&(5u32 | 16 << 4).to_le_bytes()); // 32 GT/s x16
        c[0x72..0x74].copy_from_slice(&link_status.to_le_bytes());
        c[0x90..0x92].copy_from_slice(&5u16.to_le_bytes()); // LnkCtl2 target 32 GT/s
        let aer_header = 0x0001u32 | 1 << 16 | 0x148 << 20;
        c[0x100..0x104].copy_from_slice(&aer_header.to_le_bytes());
        c[0x110..0x114].copy_from_slice(&(1u32 << 6).to_le_bytes()); // BadTLP latched
        let acs_header = 0x000du32 | 1 << 16;
        c[0x148..0x14c].copy_from_slice(&acs_header.to_le_bytes());
        c[0x14c..0x14e].copy_from_slice(&0x5fu16.to_le_bytes());
        c[0x14e..0x150].copy_from_slice(&acs_control.to_le_bytes());
        c
    }

    #[test]
    fn decodes_payload_read_request_link_and_acs() {
        // MPS 256 (code 1 << 5), MRRS 4096 (code 5 << 12), RlxdOrd, ExtTag; link 16 GT/s x8.
        let control = 1 << 5 | 5 << 12 | 1 << 4 | 1 << 8;
        let space = parse_config_space(&endpoint(control, 4 | 8 << 4, 0b1101)).expect("parse");
        let express = space.express.expect("express");
        assert_eq!(express.port_type, PortType::Endpoint);
        assert_eq!((express.max_payload_supported, express.max_payload, express.max_read_request), (512, 256, 4096));
        assert!(express.relaxed_ordering && express.extended_tag && !express.no_snoop);
        assert_eq!(express.link_capability_speed, Some(LinkGeneration(5)));
        assert_eq!((express.link_status_speed, express.link_status_width), (Some(LinkGeneration(4)), Some(8)));
        assert_eq!(express.target_link_speed, Some(LinkGeneration(5)));
        assert_eq!(space.aer.expect("aer").correctable_status, 1 << 6);
        let acs = space.acs.expect("acs");
        assert_eq!(
            acs.control.lspci_flags(),
            "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd- EgressCtrl- DirectTrans-"
        );
    }

    #[test]
    fn the_64_byte_header_of_a_non_root_read_leaves_capabilities_unknown() {
        let full = endpoint(0, 0, 0);
        let space = parse_config_space(&full[..64]).expect("parse");
        assert!(space.is_truncated());
        assert_eq!(space.express, None);
        assert_eq!((space.vendor, space.device), (0x15b3, 0x1021));
    }

    #[test]
    fn backward_extended_capability_links_are_followed() {
        // Regression (found comparing with pciutils): PLX downstream ports chain AER at 0xfb4 back to
        // 0x138 and reach ACS at 0xf24; the walk used to stop at the first backward link.
        let mut c = endpoint(0, 0, 0);
        let aer = 0x0001u32 | 1 << 16 | 0xf24 << 20;
        c[0x100..0x104].copy_from_slice(&aer.to_le_bytes());
        c[0x148..0x150].fill(0);
        let acs = 0x000du32 | 1 << 16 | 0x138 << 20;
        c[0xf24..0xf28].copy_from_slice(&acs.to_le_bytes());
        c[0xf2a..0xf2c].copy_from_slice(&0x000cu16.to_le_bytes());
        let vendor_specific = 0x000bu32 | 1 << 16; // at 0x138, ends the list
        c[0x138..0x13c].copy_from_slice(&vendor_specific.to_le_bytes());
        let space = parse_config_space(&c).expect("parse");
        let acs = space.acs.expect("ACS behind a backward link");
        assert!(acs.control.request_redirect && acs.control.completion_redirect);
        assert!(space.aer.is_some());
    }

    #[test]
    fn a_looping_capability_list_terminates() {
        let mut c = endpoint(0, 0, 0);
        c[0x41] = 0x40; // PM cap points at itself; the Express cap is unreachable
        let space = parse_config_space(&c).expect("parse");
        assert_eq!(space.express, None);
        let mut c = endpoint(0, 0, 0);
        let looping = 0x000du32 | 0x100 << 20; // ACS header pointing back at AER
        c[0x148..0x14c].copy_from_slice(&looping.to_le_bytes());
        assert!(parse_config_space(&c).expect("parse").aer.is_some());
    }

    #[test]
    fn garbage_and_short_input_are_errors_or_unknown_never_panics() {
        assert!(parse_config_space(&[]).is_err());
        assert!(parse_config_space(&[0xff; 4096]).is_err());
        for len in 0..300 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 % 251) as u8).collect();
            let _ = parse_config_space(&bytes);
        }
    }
}
