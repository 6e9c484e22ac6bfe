//! RDMA devices and ports from `sys/class/infiniband` (kernel ABI
//! `Documentation/ABI/stable/sysfs-class-infiniband`): firmware, GUIDs, port state and rate, link
//! layer, and the GID table with each entry's type and netdev — what `ibv_devinfo` and `show_gids` print.

use std::net::Ipv6Addr;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{ParseError, ProbeError, ProbeErrorKind};
use crate::pci::{optional, PciAddress};
use crate::root::SysRoot;
use crate::Reading;

#[derive(Debug, Clone, Serialize)]
pub struct RdmaDevice {
    pub name: String,
    pub node_path: PathBuf,
    pub fw_ver: Option<String>,
    pub node_guid: Option<String>,
    pub node_type: Option<String>,
    /// Part number as the driver names it ("MT4129" for ConnectX-7).
    pub hca_type: Option<String>,
    pub board_id: Option<String>,
    /// The PCI function carrying the device's traffic: its `device` link, or for software devices
    /// (rxe, siw), which have none, the PCI function of the netdev they run over.
    pub pci_address: Option<PciAddress>,
    /// True for software devices: the PCI function is the netdev's, and there is no firmware.
    pub software: bool,
    /// Netdevs of the PCI function (`device/net/*`) or, for rxe, the `parent` netdev.
    pub netdevs: Vec<String>,
    pub ports: Vec<RdmaPort>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RdmaPort {
    pub number: u32,
    pub state: Reading<PortState>,
    pub phys_state: Reading<PortState>,
    pub rate: Reading<PortRate>,
    pub link_layer: Reading<LinkLayer>,
    /// Populated GID entries only; the kernel fills the table from the netdev's addresses (RoCE) or the
    /// port GUID (InfiniBand).
    pub gids: Vec<GidEntry>,
}

/// "4: ACTIVE" -> (4, "ACTIVE"); the same shape for `state` and `phys_state` (drivers/infiniband/core/sysfs.c).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortState {
    pub code: u32,
    pub name: String,
}

/// "400 Gb/sec (4X NDR)" -> 400.0 Gb/s, width 4X, speed NDR.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PortRate {
    pub gbps: f64,
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkLayer {
    InfiniBand,
    Ethernet,
    Unspecified,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum GidType {
    /// "IB/RoCE v1": InfiniBand GIDs, and RoCE v1 (Ethernet frames, not routable).
    #[serde(rename = "IB/RoCE v1")]
    IbRoceV1,
    /// "RoCE v2": UDP/IP encapsulated, routable; what NCCL_IB_GID_INDEX should name on RoCE fabrics.
    #[serde(rename = "RoCE v2")]
    RoceV2,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GidEntry {
    pub index: u32,
    pub gid: Ipv6Addr,
    pub gid_type: Option<GidType>,
    pub netdev: Option<String>,
}

impl GidEntry {
    /// The IPv4 address of an IPv4-mapped GID (::ffff:a.b.c.d), as RoCE puts IPv4 addresses in the table.
    pub fn ipv4(&self) -> Option<std::net::Ipv4Addr> {
        self.gid.to_ipv4_mapped()
    }
}

pub fn parse_port_state(text: &str) -> Result<PortState, ParseError> {
    let (code, name) = text.trim().split_once(':').ok_or_else(|| ParseError::new("expected \"N: NAME\""))?;
    let code = code.trim().parse().map_err(|_| ParseError::new("state code is not a number"))?;
    Ok(PortState { code, name: name.trim().to_string() })
}

pub fn parse_port_rate(text: &str) -> Result<PortRate, ParseError> {
    let text = text.trim();
    let (number, rest) = text.split_once(' ').ok_or_else(|| ParseError::new("expected \"N Gb/sec (...)\""))?;
    if !rest.starts_with("Gb/sec") {
        return Err(ParseError::new("expected Gb/sec"));
    }
    let gbps = number.parse().map_err(|_| ParseError::new("rate is not a number"))?;
    Ok(PortRate { gbps, text: text.to_string() })
}

pub fn parse_link_layer(text: &str) -> Result<LinkLayer, ParseError> {
    match text.trim() {
        "InfiniBand" => Ok(LinkLayer::InfiniBand),
        "Ethernet" => Ok(LinkLayer::Ethernet),
        "Unspecified" => Ok(LinkLayer::Unspecified),
        other => Err(ParseError::new(format!("unknown link layer {other:?}"))),
    }
}

pub fn parse_gid(text: &str) -> Result<Ipv6Addr, ParseError> {
    text.trim().parse().map_err(|_| ParseError::new("expected a GID in IPv6 notation"))
}

pub fn parse_gid_type(text: &str) -> Result<GidType, ParseError> {
    match text.trim() {
        "IB/RoCE v1" => Ok(GidType::IbRoceV1),
        "RoCE v2" => Ok(GidType::RoceV2),
        other => Err(ParseError::new(format!("unknown GID type {other:?}"))),
    }
}

/// Read every RDMA device; one that cannot be read is left out and its error pushed to `unreadable`.
pub fn read_rdma_devices(root: &SysRoot, unreadable: &mut Vec<ProbeError>) -> Result<Vec<RdmaDevice>, ProbeError> {
    let names = root.read_dir("sys/class/infiniband")?;
    let mut devices = Vec::with_capacity(names.len());
    for name in names {
        match read_rdma_device(root, &name) {
            Ok(device) => devices.push(device),
            Err(error) => unreadable.push(error),
        }
    }
    Ok(devices)
}

fn read_rdma_device(root: &SysRoot, name: &str) -> Result<RdmaDevice, ProbeError> {
    let dir = root.resolve(Path::new("sys/class/infiniband").join(name))?;
    // Software devices print an empty fw_ver; empty, "N/A" and "(null)" attributes are "not
    // reported" (see `value`).
    let text = |attribute: &str| -> Result<Option<String>, ProbeError> {
        Ok(optional(root.read_string(dir.join(attribute)))?
            .as_deref()
            .and_then(crate::value::known)
            .map(str::to_string))
    };
    let pci_address = match optional(root.read_link(dir.join("device")))? {
        Some(_) => root.resolve(dir.join("device"))?.file_name().and_then(|n| PciAddress::parse(&n.to_string_lossy())),
        None => None,
    };
    // Software RDMA (rxe, siw) has no PCI function of its own and names its netdev in `parent`. A
    // hardware adapter in a capture that left out the PCI tree has no `device` link either, but it
    // is not software: it keeps its hca_type, board_id and firmware.
    let parent = text("parent")?;
    let software = pci_address.is_none() && (parent.is_some() || name.starts_with("rxe") || name.starts_with("siw"));
    let mut netdevs = Vec::new();
    if pci_address.is_some() {
        if let Some(names) = optional(root.read_dir(dir.join("device/net")))? {
            netdevs.extend(names);
        }
    } else if let Some(parent) = parent {
        netdevs.push(parent);
    }
    let mut ports = Vec::new();
    for port in root.read_dir(dir.join("ports"))? {
        let Ok(number) = port.parse::<u32>() else {
            continue;
        };
        ports.push(read_port(root, &dir.join("ports").join(&port), number)?);
    }
    ports.sort_by_key(|p| p.number);
    Ok(RdmaDevice {
        name: name.to_string(),
        node_path: dir.clone(),
        fw_ver: text("fw_ver")?,
        node_guid: text("node_guid")?,
        node_type: text("node_type")?,
        hca_type: text("hca_type")?,
        board_id: text("board_id")?,
        software,
        pci_address,
        netdevs,
        ports,
    })
}

fn parsed<T>(root: &SysRoot, path: PathBuf, parse: fn(&str) -> Result<T, ParseError>) -> Reading<T> {
    let text = root.read_string(&path)?;
    parse(&text).map_err(|e| ProbeError::malformed(&path, &text, e))
}

fn read_port(root: &SysRoot, dir: &Path, number: u32) -> Result<RdmaPort, ProbeError> {
    Ok(RdmaPort {
        number,
        state: parsed(root, dir.join("state"), parse_port_state),
        phys_state: parsed(root, dir.join("phys_state"), parse_port_state),
        rate: parsed(root, dir.join("rate"), parse_port_rate),
        link_layer: parsed(root, dir.join("link_layer"), parse_link_layer),
        gids: read_gid_table(root, dir)?,
    })
}

/// The populated GID entries of a port. Unpopulated entries read as all zeros; their `gid_attrs`
/// files fail with EINVAL on real kernels (and are absent in captures), which means "empty entry".
fn read_gid_table(root: &SysRoot, port_dir: &Path) -> Result<Vec<GidEntry>, ProbeError> {
    let Some(indexes) = optional(root.read_dir(port_dir.join("gids")))? else {
        return Ok(Vec::new());
    };
    let mut indexes: Vec<u32> = indexes.iter().filter_map(|i| i.parse().ok()).collect();
    indexes.sort_unstable();
    let mut entries = Vec::new();
    for index in indexes {
        let gid = parsed(root, port_dir.join(format!("gids/{index}")), parse_gid)?;
        if gid.is_unspecified() {
            continue;
        }
        let attribute = |kind: &str| -> Result<Option<String>, ProbeError> {
            match root.read_string(port_dir.join(format!("gid_attrs/{kind}/{index}"))) {
                Ok(text) => Ok(Some(text.trim().to_string())),
                Err(e) if e.is_not_found() || matches!(e.kind, ProbeErrorKind::Io(_)) => Ok(None),
                Err(e) => Err(e),
            }
        };
        let gid_type = match attribute("types")? {
            Some(text) => Some(
                parse_gid_type(&text)
                    .map_err(|e| ProbeError::malformed(port_dir.join(format!("gid_attrs/types/{index}")), &text, e))?,
            ),
            None => None,
        };
        let netdev = attribute("ndevs")?.filter(|n| !n.is_empty());
        entries.push(GidEntry { index, gid, gid_type, netdev });
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_attributes_parse_as_the_kernel_prints_them() {
        assert_eq!(parse_port_state("4: ACTIVE\n"), Ok(PortState { code: 4, name: "ACTIVE".into() }));
        assert_eq!(parse_port_state("5: LinkUp\n").map(|s| s.code), Ok(5));
        assert!(parse_port_state("ACTIVE").is_err());
        let rate = parse_port_rate("400 Gb/sec (4X NDR)\n").expect("rate");
        assert_eq!(rate.gbps, 400.0);
        assert_eq!(parse_port_rate("2.5 Gb/sec (1X SDR)").map(|r| r.gbps), Ok(2.5));
        assert!(parse_port_rate("fast").is_err());
        assert_eq!(parse_link_layer("Ethernet\n"), Ok(LinkLayer::Ethernet));
        assert_eq!(parse_gid_type("RoCE v2\n"), Ok(GidType::RoceV2));
    }

    #[test]
    fn ipv4_mapped_gids_give_the_address() {
        let gid = parse_gid("0000:0000:0000:0000:0000:ffff:0a00:0001\n").expect("gid");
        let entry = GidEntry { index: 3, gid, gid_type: Some(GidType::RoceV2), netdev: None };
        assert_eq!(entry.ipv4(), Some(std::net::Ipv4Addr::new(10, 0, 0, 1)));
    }
}
