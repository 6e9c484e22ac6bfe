//! Network interfaces (`sys/class/net/*`, kernel ABI `Documentation/ABI/testing/sysfs-class-net`):
//! the netdevs RoCE runs over and IPoIB interfaces.

use std::path::Path;

use serde::Serialize;

use crate::error::ProbeError;
use crate::pci::{optional, PciAddress};
use crate::root::SysRoot;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NetDevice {
    pub name: String,
    pub mtu: Option<u32>,
    /// RFC 2863 operational state as the kernel prints it ("up", "down", "lowerlayerdown", ...).
    pub operstate: Option<String>,
    /// Link speed in Mb/s; `None` when the driver does not know it (link down: the read fails with
    /// EINVAL or reports -1).
    pub speed_mbps: Option<u32>,
    /// ARPHRD_* type: 1 Ethernet, 32 InfiniBand (include/uapi/linux/if_arp.h).
    pub link_type: Option<u32>,
    pub address: Option<String>,
    /// The PCI function behind the interface, if any (virtual interfaces have none).
    pub pci_address: Option<PciAddress>,
}

/// The interfaces under `sys/class/net`. Not every entry is one: the bonding driver adds the plain
/// file `bonding_masters` (Documentation/networking/bonding.rst), so a regular file is left out.
pub fn interface_names(root: &SysRoot) -> Result<Vec<String>, ProbeError> {
    let names = root.read_dir("sys/class/net")?;
    Ok(names.into_iter().filter(|n| !root.host_path(&Path::new("sys/class/net").join(n)).is_file()).collect())
}

/// Read every netdev; one that cannot be read is left out and its error pushed to `unreadable`.
pub fn read_net_devices(root: &SysRoot, unreadable: &mut Vec<ProbeError>) -> Result<Vec<NetDevice>, ProbeError> {
    let names = match interface_names(root) {
        Ok(names) => names,
        Err(error) if error.is_not_found() => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let mut devices = Vec::with_capacity(names.len());
    for name in names {
        match read_net_device(root, &name) {
            Ok(device) => devices.push(device),
            Err(error) => unreadable.push(error),
        }
    }
    Ok(devices)
}

pub fn read_net_device(root: &SysRoot, name: &str) -> Result<NetDevice, ProbeError> {
    let dir = Path::new("sys/class/net").join(name);
    let text = |attribute: &str| -> Result<Option<String>, ProbeError> {
        match root.read_string(dir.join(attribute)) {
            Ok(text) => Ok(crate::value::known(&text).map(str::to_string)),
            Err(error) if error.is_not_found() => Ok(None),
            // `speed` and `duplex` fail with EINVAL while the link is down (net/core/net-sysfs.c).
            Err(error) if matches!(error.kind, crate::error::ProbeErrorKind::Io(_)) && attribute == "speed" => Ok(None),
            Err(error) => Err(error),
        }
    };
    let number = |attribute: &str| -> Result<Option<i64>, ProbeError> {
        let Some(value) = text(attribute)? else {
            return Ok(None);
        };
        value
            .parse::<i64>()
            .map(Some)
            .map_err(|_| ProbeError::malformed(dir.join(attribute), &value, "expected a number"))
    };
    let pci_address = optional(root.read_link(dir.join("device")))?.and_then(|target| {
        // A virtio NIC's `device` is the virtioN device, whose parent directory is the PCI function.
        let resolved = root.resolve(dir.join("device")).ok()?;
        resolved
            .ancestors()
            .filter_map(|p| p.file_name())
            .find_map(|n| PciAddress::parse(&n.to_string_lossy()))
            .or_else(|| target.file_name().and_then(|n| PciAddress::parse(&n.to_string_lossy())))
    });
    Ok(NetDevice {
        name: name.to_string(),
        mtu: number("mtu")?.and_then(|v| u32::try_from(v).ok()),
        operstate: text("operstate")?,
        speed_mbps: number("speed")?.and_then(|v| u32::try_from(v).ok()),
        link_type: number("type")?.and_then(|v| u32::try_from(v).ok()),
        address: text("address")?,
        pci_address,
    })
}
