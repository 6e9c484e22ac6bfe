//! RDMA port checks: state, rate, RoCE v2 GID, MTU, and firmware consistency across same-model devices.

use std::collections::BTreeMap;

use fabricdoctor_probes::rdma::{GidType, LinkLayer, RdmaDevice, RdmaPort};

use crate::{unreadable, Check, Finding, Inputs, Policy, Verdict};

fn no_devices(id: &str, inputs: &Inputs<'_>) -> Option<Vec<Finding>> {
    match &inputs.node.rdma {
        Err(error) if error.is_not_found() => Some(vec![Finding::new(
            id,
            Verdict::Skip,
            "node",
            "no RDMA devices: sys/class/infiniband is absent (no RDMA driver loaded, or no kernel RDMA support)",
        )]),
        Err(error) => Some(vec![unreadable(id, "node", error)]),
        Ok(devices) if devices.is_empty() => {
            Some(vec![Finding::new(id, Verdict::Skip, "node", "no RDMA devices in sys/class/infiniband")])
        }
        Ok(_) => None,
    }
}

fn ports<'a>(inputs: &Inputs<'a>) -> impl Iterator<Item = (&'a RdmaDevice, &'a RdmaPort)> {
    inputs.node.rdma_devices().iter().flat_map(|d| d.ports.iter().map(move |p| (d, p)))
}

fn port_subject(device: &RdmaDevice, port: &RdmaPort) -> String {
    format!("{} port {}", device.name, port.number)
}

/// The netdev a RoCE port runs over: the one its GID entries name, else the device's own.
fn port_netdev<'a>(device: &'a RdmaDevice, port: &'a RdmaPort) -> Option<&'a str> {
    port.gids.iter().find_map(|g| g.netdev.as_deref()).or_else(|| device.netdevs.first().map(String::as_str))
}

/// Devices of one model share firmware and expected rate: the PCI device id when known, else hca_type.
/// The adapter model a device is, from its PCI function (vendor and device ids), else the driver's
/// `hca_type` or the firmware's `board_id` (sysfs-class-infiniband). Devices without one (software
/// RDMA, a capture without the PCI tree or these files) have no model: each is its own, so no
/// device is judged against another it may not be like.
fn model_key(inputs: &Inputs<'_>, device: &RdmaDevice) -> Option<String> {
    if device.software {
        return None;
    }
    match device.pci_address.and_then(|a| inputs.node.function(a)) {
        Some(function) => Some(function.model_name()),
        None => device.hca_type.clone().or_else(|| device.board_id.clone().map(|b| format!("board {b}"))),
    }
}

const ACTIVE: u32 = 4;

#[derive(Debug)]
pub struct PortState;

impl Check for PortState {
    fn id(&self) -> &'static str {
        "rdma.port.state"
    }
    fn doc_short(&self) -> &'static str {
        "RDMA port not ACTIVE"
    }
    fn doc_long(&self) -> &'static str {
        "Reads each RDMA port's logical state and physical state (sys/class/infiniband/*/ports/*/state, \
         phys_state). ACTIVE passes. DOWN fails (no link: cable, transceiver, switch port, or the port is \
         disabled). INIT or ARMED warns: the link is up but on InfiniBand no subnet manager has \
         configured the port yet (check opensm/UFM); traffic cannot flow. Source: \
         Documentation/ABI/stable/sysfs-class-infiniband; IBTA spec vol. 1 §7.2 port states."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        if let Some(findings) = no_devices(self.id(), inputs) {
            return findings;
        }
        ports(inputs)
            .map(|(device, port)| {
                let subject = port_subject(device, port);
                let state = match &port.state {
                    Ok(state) => state,
                    Err(error) => return unreadable(self.id(), subject, error),
                };
                let physical = port
                    .phys_state
                    .as_ref()
                    .map(|s| format!("{}: {}", s.code, s.name))
                    .unwrap_or_else(|e| e.to_string());
                let (verdict, message) = match state.code {
                    ACTIVE => (Verdict::Pass, "ACTIVE".to_string()),
                    1 => (Verdict::Fail, format!("port DOWN (physical state {physical}): no link")),
                    2 | 3 => (
                        Verdict::Warn,
                        format!(
                            "port {}: link is up but not yet configured by a subnet manager; no traffic can flow",
                            state.name
                        ),
                    ),
                    _ => (Verdict::Fail, format!("port state {}: {}", state.code, state.name)),
                };
                Finding::new(self.id(), verdict, subject, message)
                    .evidence(format!("state {}: {}, phys_state {physical}", state.code, state.name))
                    .expected("4: ACTIVE")
                    .observed(format!("{}: {}", state.code, state.name))
            })
            .collect()
    }
}

#[derive(Debug)]
pub struct PortRate;

impl Check for PortRate {
    fn id(&self) -> &'static str {
        "rdma.port.rate"
    }
    fn doc_short(&self) -> &'static str {
        "Active RDMA port slower than the fastest port of the same model (or than policy)"
    }
    fn doc_long(&self) -> &'static str {
        "Reads each active port's rate (ports/*/rate, e.g. '400 Gb/sec (4X NDR)') and compares it with \
         the fastest active port of the same adapter model and link layer on the node, or with \
         rdma.expected_rate_gbps when the policy sets it. Slower: fail — the link negotiated fewer lanes \
         or a lower speed (bad cable or transceiver, switch port configuration). Down ports are \
         rdma.port.state's concern."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, policy: &Policy) -> Vec<Finding> {
        if let Some(findings) = no_devices(self.id(), inputs) {
            return findings;
        }
        let active: Vec<(&RdmaDevice, &RdmaPort)> =
            ports(inputs).filter(|(_, p)| p.state.as_ref().map(|s| s.code == ACTIVE).unwrap_or(false)).collect();
        if active.is_empty() {
            return vec![Finding::new(self.id(), Verdict::Skip, "node", "no active RDMA port to compare")];
        }
        let group = |d: &RdmaDevice, p: &RdmaPort| {
            model_key(inputs, d).map(|model| format!("{model} {:?}", p.link_layer.as_ref().ok()))
        };
        let mut fastest: BTreeMap<String, f64> = BTreeMap::new();
        for (device, port) in &active {
            if let (Ok(rate), Some(group)) = (&port.rate, group(device, port)) {
                let best = fastest.entry(group).or_insert(0.0);
                *best = best.max(rate.gbps);
            }
        }
        active
            .iter()
            .map(|(device, port)| {
                let subject = port_subject(device, port);
                let rate = match &port.rate {
                    Ok(rate) => rate,
                    Err(error) => return unreadable(self.id(), subject, error),
                };
                let model = model_key(inputs, device);
                // A node profile's rate applies to its compute NICs (those carrying a GPU's rail):
                // storage and front-end NICs may run at another rate.
                let from_profile = policy
                    .profile
                    .as_ref()
                    .filter(|_| crate::profile::is_compute_nic(inputs, &device.name))
                    .map(|profile| (profile.nics.rate_gbps, format!("profile {}", profile.name)));
                let explicit = policy.rdma.expected_rate_gbps.map(|rate| (rate, "policy".to_string())).or(from_profile);
                let (expected, source) = match (explicit, group(device, port)) {
                    (Some(explicit), _) => explicit,
                    (None, Some(group)) => {
                        (fastest.get(&group).copied().unwrap_or(rate.gbps), "fastest port of this model".to_string())
                    }
                    (None, None) => {
                        return Finding::new(
                            self.id(),
                            Verdict::Skip,
                            subject,
                            format!(
                                "{}: no adapter model to compare it with (no PCI function, hca_type or board_id); \
                                 set rdma.expected_rate_gbps to judge it",
                                rate.text
                            ),
                        )
                        .observed(format!("{} Gb/sec", rate.gbps))
                    }
                };
                let (verdict, message) = if rate.gbps + 1e-9 >= expected {
                    (Verdict::Pass, rate.text.clone())
                } else {
                    (
                        Verdict::Fail,
                        format!("{} but {expected} Gb/sec expected ({source}): link negotiated down", rate.text),
                    )
                };
                Finding::new(self.id(), verdict, subject, message)
                    .evidence(format!("rate {}; model {}", rate.text, model.as_deref().unwrap_or("unknown")))
                    .expected(format!("{expected} Gb/sec"))
                    .observed(format!("{} Gb/sec", rate.gbps))
            })
            .collect()
    }
}

fn ethernet_ports<'a>(inputs: &Inputs<'a>) -> Vec<(&'a RdmaDevice, &'a RdmaPort)> {
    ports(inputs).filter(|(_, p)| matches!(p.link_layer, Ok(LinkLayer::Ethernet))).collect()
}

#[derive(Debug)]
pub struct RoceV2Gid;

impl Check for RoceV2Gid {
    fn id(&self) -> &'static str {
        "rdma.gid.rocev2"
    }
    fn doc_short(&self) -> &'static str {
        "RoCE port without a RoCE v2 GID for its netdev's IPv4 address"
    }
    fn doc_long(&self) -> &'static str {
        "For each Ethernet (RoCE) port, reads the GID table (ports/*/gids/N, gid_attrs/types/N, \
         gid_attrs/ndevs/N). The kernel adds a 'RoCE v2' entry for each IP address of the port's netdev; \
         the IPv4-mapped one (::ffff:a.b.c.d) is what NCCL_IB_GID_INDEX and perftest -x must name on a \
         routed RoCE fabric (show_gids prints the same table). None at all: fail (RoCE v2 disabled or \
         the netdev has no address, so NCCL picks a v1 or link-local GID and connections time out, \
         NVIDIA/nccl#426 error 12). Only link-local RoCE v2 GIDs: warn (no IPv4 address on the netdev). \
         The message gives the index to use; tables are often sparse (NVIDIA/nccl#1538)."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        if let Some(findings) = no_devices(self.id(), inputs) {
            return findings;
        }
        let roce = ethernet_ports(inputs);
        if roce.is_empty() {
            return vec![Finding::new(self.id(), Verdict::Skip, "node", "no RoCE (Ethernet link layer) ports")];
        }
        roce.iter()
            .map(|(device, port)| {
                let subject = port_subject(device, port);
                let netdev = port_netdev(device, port).unwrap_or("unknown netdev");
                let v2: Vec<_> = port.gids.iter().filter(|g| g.gid_type == Some(GidType::RoceV2)).collect();
                let ipv4: Vec<_> = v2.iter().filter(|g| g.ipv4().is_some()).collect();
                let table: Vec<String> = port
                    .gids
                    .iter()
                    .map(|g| {
                        let kind = match g.gid_type {
                            Some(GidType::RoceV2) => "RoCE v2",
                            Some(GidType::IbRoceV1) => "v1",
                            None => "?",
                        };
                        format!("{}:{} {kind} {}", g.index, g.gid, g.netdev.as_deref().unwrap_or("-"))
                    })
                    .collect();
                let finding = if let Some(first) = ipv4.first() {
                    let address = first.ipv4().map(|a| a.to_string()).unwrap_or_default();
                    Finding::new(
                        self.id(),
                        Verdict::Pass,
                        subject,
                        format!("RoCE v2 GID index {} = {address} on {netdev}: use NCCL_IB_GID_INDEX={} (perftest -x {})", first.index, first.index, first.index),
                    )
                    .observed(format!("index {}", first.index))
                } else if !v2.is_empty() {
                    Finding::new(
                        self.id(),
                        Verdict::Warn,
                        subject,
                        format!("only link-local RoCE v2 GIDs: {netdev} has no IPv4 address, so RoCE v2 traffic cannot be routed"),
                    )
                } else {
                    Finding::new(
                        self.id(),
                        Verdict::Fail,
                        subject,
                        format!("no RoCE v2 GID on {netdev}: NCCL would use a RoCE v1 or link-local GID and fail to connect across subnets"),
                    )
                    .observed("no RoCE v2 entry")
                };
                finding.evidence(format!("GID table: {}", if table.is_empty() { "empty".into() } else { table.join("; ") })).expected("a RoCE v2 GID with the netdev's IPv4 address")
            })
            .collect()
    }
}

/// The active RDMA MTU a RoCE port gets from its netdev MTU: the largest IB MTU that fits after the
/// RoCE headers (GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4 = 96 bytes), as the kernel's
/// `iboe_get_mtu` in include/rdma/ib_addr.h computes it.
pub fn roce_active_mtu(netdev_mtu: u32) -> Option<u32> {
    let payload = netdev_mtu.checked_sub(96)?;
    [4096, 2048, 1024, 512, 256].into_iter().find(|&mtu| payload >= mtu)
}

#[derive(Debug)]
pub struct Mtu;

impl Check for Mtu {
    fn id(&self) -> &'static str {
        "rdma.mtu"
    }
    fn doc_short(&self) -> &'static str {
        "RoCE netdev MTU too small for a 4096-byte RDMA MTU, or inconsistent across ports"
    }
    fn doc_long(&self) -> &'static str {
        "For RoCE ports, the active RDMA MTU follows the netdev MTU minus 96 bytes of RoCE headers \
         (kernel iboe_get_mtu, include/rdma/ib_addr.h): a 1500-byte netdev gives 1024-byte RDMA \
         packets, 4 times the per-packet overhead of 4096 (needs a netdev MTU of at least 4192; 9000 is \
         usual). Warns below rdma.roce_min_active_mtu (default 4096) and when RoCE netdevs of the node \
         differ in MTU (the path MTU is the smallest end's). InfiniBand ports' active MTU is not in \
         sysfs (ibv_query_port reports it): skipped here."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, policy: &Policy) -> Vec<Finding> {
        if let Some(findings) = no_devices(self.id(), inputs) {
            return findings;
        }
        let roce = ethernet_ports(inputs);
        if roce.is_empty() {
            return vec![Finding::new(
                self.id(),
                Verdict::Skip,
                "node",
                "no RoCE ports; InfiniBand active MTU is not exposed in sysfs (needs ibv_query_port)",
            )];
        }
        let mtus: Vec<(String, Option<u32>, &str)> = roce
            .iter()
            .map(|(device, port)| {
                let netdev = port_netdev(device, port).unwrap_or("");
                (port_subject(device, port), inputs.node.net_device(netdev).and_then(|n| n.mtu), netdev)
            })
            .collect();
        let largest = mtus.iter().filter_map(|(_, m, _)| *m).max();
        mtus.into_iter()
            .map(|(subject, mtu, netdev)| {
                let Some(mtu) = mtu else {
                    return Finding::new(self.id(), Verdict::Skip, subject, format!("netdev {netdev:?} or its mtu not found in sys/class/net"));
                };
                let active = roce_active_mtu(mtu).unwrap_or(0);
                let minimum = policy.rdma.roce_min_active_mtu;
                let (verdict, message) = if active < minimum {
                    (Verdict::Warn, format!("{netdev} MTU {mtu} gives RDMA MTU {active}; set the netdev MTU to 9000 (>= {} for {minimum})", minimum + 96))
                } else if largest.is_some_and(|l| l != mtu) {
                    (Verdict::Warn, format!("{netdev} MTU {mtu} differs from other RoCE netdevs ({})", largest.unwrap_or(mtu)))
                } else {
                    (Verdict::Pass, format!("{netdev} MTU {mtu}, RDMA MTU {active}"))
                };
                Finding::new(self.id(), verdict, subject, message)
                    .evidence(format!("sys/class/net/{netdev}/mtu = {mtu}"))
                    .expected(format!("RDMA MTU >= {minimum}"))
                    .observed(format!("RDMA MTU {active}"))
            })
            .collect()
    }
}

#[derive(Debug)]
pub struct FirmwareConsistency;

impl Check for FirmwareConsistency {
    fn id(&self) -> &'static str {
        "rdma.fw.consistency"
    }
    fn doc_short(&self) -> &'static str {
        "RDMA adapters of one model running different firmware"
    }
    fn doc_long(&self) -> &'static str {
        "Groups RDMA devices by adapter model and compares fw_ver (sys/class/infiniband/*/fw_ver). Mixed \
         firmware within a node is a half-finished upgrade: behaviour (congestion control defaults, \
         bug fixes) differs per port, and vendors support fleets on one version: warn, naming the odd \
         devices. Cross-node comparison is done by burn-in."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        if let Some(findings) = no_devices(self.id(), inputs) {
            return findings;
        }
        let mut groups: BTreeMap<String, Vec<(&RdmaDevice, &str)>> = BTreeMap::new();
        if inputs.node.rdma_devices().iter().all(|d| d.software) {
            return vec![Finding::new(
                self.id(),
                Verdict::Skip,
                "node",
                "only software RDMA devices (rxe/siw): no adapter firmware to compare",
            )];
        }
        // Firmware that was not read cannot agree or disagree: those devices get a skip naming them,
        // and only the ones read are compared.
        let adapters: Vec<&RdmaDevice> = inputs.node.rdma_devices().iter().filter(|d| !d.software).collect();
        let read: Vec<(&RdmaDevice, &str)> =
            adapters.iter().filter_map(|d| d.fw_ver.as_deref().map(|version| (*d, version))).collect();
        let unread: Vec<&RdmaDevice> = adapters.iter().copied().filter(|d| d.fw_ver.is_none()).collect();
        let mut findings = Vec::new();
        if !unread.is_empty() {
            let names: Vec<&str> = unread.iter().map(|d| d.name.as_str()).collect();
            findings.push(Finding::new(
                self.id(),
                Verdict::Skip,
                names.join(", "),
                "firmware version not readable (fw_ver missing or empty): not compared",
            ));
        }
        for (device, version) in read {
            let model = model_key(inputs, device).unwrap_or_else(|| format!("{} (model unknown)", device.name));
            groups.entry(model).or_default().push((device, version));
        }
        findings.extend(groups.into_iter().map(|(model, devices)| {
            let mut versions: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for (device, version) in &devices {
                versions.entry(version).or_default().push(&device.name);
            }
            let listing: Vec<String> = versions.iter().map(|(v, names)| format!("{v}: {}", names.join(", "))).collect();
            let subject = format!("{model} x{}", devices.len());
            if versions.len() == 1 {
                let version = versions.keys().next().copied().unwrap_or("unknown");
                Finding::new(self.id(), Verdict::Pass, subject, format!("all at firmware {version}")).observed(version)
            } else {
                let majority =
                    versions.iter().max_by_key(|(_, names)| names.len()).map(|(v, _)| *v).unwrap_or("unknown");
                let odd: Vec<String> = versions
                    .iter()
                    .filter(|(v, _)| **v != majority)
                    .flat_map(|(v, names)| names.iter().map(move |n| format!("{n} at {v}")))
                    .collect();
                Finding::new(
                    self.id(),
                    Verdict::Warn,
                    subject,
                    format!("mixed firmware: {} while the others run {majority}", odd.join(", ")),
                )
                .expected(majority)
                .observed(listing.join("; "))
            }
            .evidence(format!("fw_ver: {}", listing.join("; ")))
        }));
        findings
    }
}

#[cfg(test)]
mod tests {
    use super::roce_active_mtu;

    #[test]
    fn roce_mtu_follows_the_kernel_header_budget() {
        assert_eq!(roce_active_mtu(9000), Some(4096));
        assert_eq!(roce_active_mtu(4192), Some(4096));
        assert_eq!(roce_active_mtu(4191), Some(2048));
        assert_eq!(roce_active_mtu(1500), Some(1024));
        assert_eq!(roce_active_mtu(100), None);
    }
}
