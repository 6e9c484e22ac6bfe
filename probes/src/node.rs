//! Everything the probes read about one node, gathered once: the input of every check and of `topo`.

use serde::Serialize;

use crate::host::{read_host_settings, HostSettings};
use crate::netdev::{read_net_devices, NetDevice};
use crate::numa::{node_of_cpus, parse_cpulist, read_numa_nodes, NumaNode};
use crate::pci::{read_functions, PciAddress, PciFunction};
use crate::rdma::{read_rdma_devices, RdmaDevice};
use crate::root::SysRoot;
use crate::transceiver::{read_fabric_modules, ModuleReading};
use crate::{ProbeError, Reading};

#[derive(Debug, Clone, Serialize)]
pub struct NodeSnapshot {
    pub pci: Reading<Vec<PciFunction>>,
    pub numa: Reading<Vec<NumaNode>>,
    /// `Err(NotFound)` when `sys/class/infiniband` is absent: no RDMA driver loaded (or no kernel support).
    pub rdma: Reading<Vec<RdmaDevice>>,
    pub net: Reading<Vec<NetDevice>>,
    pub host: HostSettings,
    /// The transceiver modules of the fabric ports (the netdevs of hardware RDMA devices), read
    /// through ethtool netlink or from a capture's `ethtool/<if>/module-eeprom/` files. `None`
    /// until [`NodeSnapshot::read_optics`]: each module read is I2C traffic through the NIC's
    /// firmware, which `topo` or `check --only pcie` have no use for.
    pub optics: Option<Vec<ModuleReading>>,
    /// Devices left out because one of their files could not be read or parsed.
    pub unreadable: Vec<ProbeError>,
}

/// Where a device's NUMA node came from; operators need to know when it was inferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NumaSource {
    /// The device's `numa_node` file.
    NumaNode,
    /// `numa_node` was -1; `local_cpulist` fits inside one node.
    LocalCpulist,
    /// Neither says: the firmware gave no proximity information.
    Unknown,
}

impl NodeSnapshot {
    pub fn probe(root: &SysRoot) -> NodeSnapshot {
        let mut unreadable = Vec::new();
        let mut node = NodeSnapshot {
            pci: read_functions(root, &mut unreadable),
            numa: read_numa_nodes(root),
            rdma: read_rdma_devices(root, &mut unreadable),
            net: read_net_devices(root, &mut unreadable),
            host: read_host_settings(root),
            optics: None,
            unreadable,
        };
        node.attach_software_rdma_to_netdevs();
        node
    }

    /// Read the fabric ports' transceiver modules (once; a second call reads them again).
    pub fn read_optics(&mut self, root: &SysRoot) {
        self.optics = Some(read_fabric_modules(root, self.rdma_devices()));
    }

    /// Soft-RoCE (rxe) and siw devices have no PCI function of their own; their traffic leaves through
    /// the NIC of the netdev they are bound to (the `parent` attribute), whose PCIe link and place in
    /// the topology are what matter.
    fn attach_software_rdma_to_netdevs(&mut self) {
        let net = self.net.as_deref().unwrap_or(&[]);
        if let Ok(devices) = &mut self.rdma {
            for device in devices.iter_mut().filter(|d| d.software) {
                device.pci_address =
                    device.netdevs.iter().find_map(|n| net.iter().find(|x| &x.name == n).and_then(|x| x.pci_address));
            }
        }
    }

    pub fn pci_functions(&self) -> &[PciFunction] {
        self.pci.as_deref().unwrap_or(&[])
    }

    pub fn rdma_devices(&self) -> &[RdmaDevice] {
        self.rdma.as_deref().unwrap_or(&[])
    }

    pub fn function(&self, address: PciAddress) -> Option<&PciFunction> {
        let functions = self.pci_functions();
        functions.binary_search_by_key(&address, |f| f.address).ok().map(|i| &functions[i])
    }

    /// GPUs in PCI address order, which is the order `nvidia-smi` numbers them in with
    /// CUDA_DEVICE_ORDER=PCI_BUS_ID (and its default enumeration on current drivers).
    pub fn gpus(&self) -> Vec<&PciFunction> {
        self.pci_functions().iter().filter(|f| f.is_gpu()).collect()
    }

    pub fn net_device(&self, name: &str) -> Option<&NetDevice> {
        self.net.as_deref().unwrap_or(&[]).iter().find(|n| n.name == name)
    }

    /// The NUMA node of a function, falling back to its `local_cpulist` when `numa_node` is -1.
    pub fn numa_of(&self, function: &PciFunction) -> (Option<u32>, NumaSource) {
        if let Some(node) = function.numa_node {
            return (Some(node), NumaSource::NumaNode);
        }
        let nodes = self.numa.as_deref().unwrap_or(&[]);
        let inferred = function
            .local_cpulist
            .as_deref()
            .and_then(|list| parse_cpulist(list).ok())
            .and_then(|cpus| node_of_cpus(nodes, &cpus));
        match inferred {
            Some(node) => (Some(node), NumaSource::LocalCpulist),
            None => (None, NumaSource::Unknown),
        }
    }
}
