//! RDMA port state as `ibstat` and `ibstatus` print it (infiniband-diags, rdma-core), the port blocks
//! of `ibv_devinfo [-v]`, and perftest's refusal to run on a port that is not Active: which ports
//! carry no traffic, and which InfiniBand ports trained a link that no subnet manager configured.
//!
//! Formats read (rdma-core `infiniband-diags/ibstat.c`, `infiniband-diags/scripts/ibstatus`,
//! `libibverbs/examples/devinfo.c`; perftest `perftest_parameters.c`):
//! - `ibstat`: `CA 'mlx5_0'`, then per port `Port 1:` with `State: Active`, `Physical state: LinkUp`,
//!   `Rate: 400`, `Base lid: 75`, `SM lid: 334`, `Port GUID: 0x...`, `Link layer: InfiniBand`.
//! - `ibstatus`: `Infiniband device 'mlx4_0' port 1 status:` with the sysfs spellings `state: 4: ACTIVE`,
//!   `phys state: 5: LinkUp`, `base lid: 0x1` (hexadecimal), `sm lid: 0x1`, `link_layer: InfiniBand`.
//! - `ibv_devinfo`: `hca_id: mlx5_0`, `port: 1`, `state: PORT_INIT (2)`, `port_lid: 65535`,
//!   `sm_lid: 0`, `link_layer: InfiniBand`, and with `-v` `phys_state: LINK_UP (5)`. `rdma.rs` already
//!   turns these port blocks into `rdma.port_down`; this module adds only `rdma.sm_unconfigured` for
//!   them, so a port is not reported down twice.
//! - perftest: ` Port number 1 state is Down` (printed when the port is not `IBV_PORT_ACTIVE`).
//! - `ip link` (ip-link(8)) of an SR-IOV physical function: `4: ens2f0: <BROADCAST,MULTICAST> ...
//!   state DOWN`, then its virtual functions, `vf 0 link/ether ... link-state auto`.

use super::lines::numbered_lines;
use crate::fact::{Evidence, Fact};

/// The logical port state (IBA spec vol. 1, 7.2 "Link states": Down, Initialize, Armed, Active),
/// whichever spelling the tool used: `Initializing` (ibstat), `2: INIT` (sysfs), `PORT_INIT (2)`
/// (ibv_devinfo), `Init` (perftest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PortState {
    Down,
    Initialize,
    Armed,
    Active,
    Unknown,
}

impl PortState {
    fn from_label(label: &str) -> PortState {
        let word = bare_label(label).to_ascii_uppercase();
        match word.strip_prefix("PORT_").unwrap_or(&word) {
            "DOWN" => PortState::Down,
            "INIT" | "INITIALIZE" | "INITIALIZING" => PortState::Initialize,
            "ARMED" => PortState::Armed,
            // ACTIVE_DEFER (sysfs state 5) is Active with traffic briefly held: not a fault.
            "ACTIVE" | "ACTIVE_DEFER" => PortState::Active,
            _ => PortState::Unknown,
        }
    }
}

/// Which tool printed a port: it decides which facts this module may add for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Ibstat,
    Ibstatus,
    IbvDevinfo,
    Perftest,
    /// iproute2's `rdma link` (rdma-link(8)): one line per port, and pasted repeatedly, a port's
    /// states over time.
    RdmaLink,
}

/// One port as a tool printed it, each field with the line that showed it.
#[derive(Debug, Clone)]
struct Port {
    source: Source,
    nic: Option<String>,
    port: u32,
    /// The state as printed, without its numeric code ("Down", "PORT_INIT").
    state: Option<(String, PortState, Evidence)>,
    physical_state: Option<(String, Evidence)>,
    base_lid: Option<(u32, Evidence)>,
    sm_lid: Option<u32>,
    link_layer: Option<String>,
    /// The line that gave the link layer.
    link_layer_line: Option<Evidence>,
    guid: Option<String>,
}

impl Port {
    fn new(source: Source, nic: Option<String>, port: u32) -> Port {
        Port {
            source,
            nic,
            port,
            state: None,
            physical_state: None,
            base_lid: None,
            sm_lid: None,
            link_layer: None,
            link_layer_line: None,
            guid: None,
        }
    }

    fn is_infiniband(&self) -> bool {
        // ibstatus prints "IB" when sysfs has no link_layer file (kernels before RoCE).
        self.link_layer.as_deref().is_some_and(|l| l.eq_ignore_ascii_case("InfiniBand") || l == "IB")
    }

    fn is_ethernet(&self) -> bool {
        self.link_layer.as_deref().is_some_and(|l| l.eq_ignore_ascii_case("Ethernet"))
    }

    fn is_active(&self) -> bool {
        self.state.as_ref().is_some_and(|(_, state, _)| *state == PortState::Active)
    }

    /// The physical link trained (PortPhysicalState LinkUp, IBA vol. 1 5.2/7.2).
    fn physical_link_up(&self) -> Option<bool> {
        self.physical_state.as_ref().map(|(label, _)| {
            let word: String = bare_label(label)
                .chars()
                .filter(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase();
            word == "linkup"
        })
    }

    /// A port in Initialize on an InfiniBand link: the link trained but no subnet manager moved it on
    /// to Armed and Active (IBA vol. 1 7.2: the port leaves Down for Initialize only once its physical
    /// link is LinkUp, and only the SM's PortInfo Set moves it further, 14.4). Without the SM the
    /// port has no LID (0, or 65535 as the kernel reports an unassigned one) and carries no traffic.
    /// Ethernet (RoCE) ports have no SM: their state is Down or Active.
    fn awaits_subnet_manager(&self) -> bool {
        let state = self.state.as_ref().map(|(_, state, _)| *state);
        let initialize = state == Some(PortState::Initialize);
        // Without a physical state shown (ibv_devinfo without -v, perftest), Initialize implies LinkUp.
        if initialize && !self.is_ethernet() && self.physical_link_up() != Some(false) {
            return true;
        }
        // A logical Down over a trained physical link, with no LID: the port of an SR-IOV virtual
        // function whose virtual port the SM has not enabled (the physical port is the PF's; the SM
        // manages each vport's state and LID when virtualization is on, IBA vol. 1 annex A19).
        let unassigned_lid = self.base_lid.as_ref().is_none_or(|(lid, _)| matches!(*lid, 0 | 0xffff));
        state == Some(PortState::Down)
            && self.is_infiniband()
            && self.physical_link_up() == Some(true)
            && unassigned_lid
    }
}

/// The label without the number tools print beside it: `4: ACTIVE` (sysfs), `PORT_INIT (2)`.
fn bare_label(label: &str) -> &str {
    // A poster's mark beside the value ("State: Initializing  <-----", "LinkUp  # here") is no
    // part of it: the tools print one word, or a code and a word, with single spaces.
    let label = label.trim();
    let end = ["  ", "\t", " <", " #"].iter().filter_map(|mark| label.find(mark)).min().unwrap_or(label.len());
    let label = &label[..end];
    let label = match label.split_once(':') {
        Some((code, rest)) if !code.is_empty() && code.chars().all(|c| c.is_ascii_digit()) => rest.trim(),
        _ => label,
    };
    match label.rsplit_once(" (") {
        Some((word, code)) if code.trim_end_matches(')').chars().all(|c| c.is_ascii_digit()) => word.trim(),
        _ => label,
    }
}

/// A LID as printed: decimal (ibstat, ibv_devinfo) or `0x`-prefixed hexadecimal (ibstatus, from
/// sysfs `ports/N/lid`).
fn parse_lid(value: &str) -> Option<u32> {
    let value = value.trim();
    match value.strip_prefix("0x").or_else(|| value.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => value.parse().ok(),
    }
}

/// `CA 'mlx5_0'` (ibstat).
fn ibstat_ca(line: &str) -> Option<&str> {
    let name = line.strip_prefix("CA '")?.strip_suffix('\'')?;
    (!name.is_empty() && !name.contains(char::is_whitespace)).then_some(name)
}

/// `Port 1:` (ibstat).
fn ibstat_port(line: &str) -> Option<u32> {
    line.strip_prefix("Port ")?.strip_suffix(':')?.parse().ok()
}

/// `Infiniband device 'mlx4_0' port 1 status:` (ibstatus).
fn ibstatus_header(line: &str) -> Option<(String, u32)> {
    let rest = line.strip_prefix("Infiniband device '")?;
    let (nic, rest) = rest.split_once('\'')?;
    let port = rest.trim().strip_prefix("port ")?.strip_suffix("status:")?.trim().parse().ok()?;
    Some((nic.to_string(), port))
}

/// ` Port number 1 state is Down` (perftest, when the port is not IBV_PORT_ACTIVE).
fn perftest_refusal(line: &str) -> Option<(u32, &str)> {
    let rest = line.split_once("Port number ")?.1;
    let (port, state) = rest.split_once(" state is ")?;
    let state = state.split_whitespace().next()?;
    Some((port.trim().parse().ok()?, state))
}

/// The device a perftest command line names (`-d mlx5_0`, `--ib-dev=mlx5_0`), if the paste shows it.
fn perftest_device(text: &str) -> Option<String> {
    for (_, raw) in numbered_lines(text) {
        let words: Vec<&str> = raw.split_whitespace().collect();
        let is_perftest = words.iter().any(|w| w.rsplit('/').next().is_some_and(|name| name.starts_with("ib_")));
        if !is_perftest {
            continue;
        }
        for (i, word) in words.iter().enumerate() {
            if let Some(device) = word.strip_prefix("--ib-dev=") {
                return Some(device.to_string());
            }
            if *word == "-d" || *word == "--ib-dev" {
                if let Some(device) = words.get(i + 1) {
                    return Some(device.to_string());
                }
            }
        }
    }
    None
}

/// The CA an `ibstat` command line names (`ibstat mlx5_0 1`): ibstat then prints the port without
/// its `CA '...'` header.
fn ibstat_command_device(line: &str) -> Option<&str> {
    let mut words = line.split_whitespace();
    words.find(|w| w.rsplit('/').next() == Some("ibstat"))?;
    words.next().filter(|device| !device.starts_with('-'))
}

/// An `rdma link` line (rdma-link(8)): `link mlx5_7/1 subnet_prefix ... state DOWN physical_state
/// POLLING`: the device, the port, the state and the physical state.
fn rdma_link(line: &str) -> Option<(&str, u32, &str, Option<&str>)> {
    let mut words = line.split_whitespace();
    if words.next()? != "link" {
        return None;
    }
    let (device, port) = words.next()?.split_once('/')?;
    let port = port.parse().ok()?;
    let words: Vec<&str> = words.collect();
    let after = |key: &str| words.windows(2).find(|pair| pair[0] == key).map(|pair| pair[1]);
    Some((device, port, after("state")?, after("physical_state")))
}

/// Whether the text holds `ibstat` or `ibstatus` output (an ibstat port header followed by its
/// state, or an ibstatus port header): the input's kind is then "ibstat".
pub fn recognised(text: &str) -> bool {
    let mut port_header = false;
    for (_, raw) in numbered_lines(text) {
        let line = raw.trim();
        if ibstatus_header(line).is_some() || (port_header && line.starts_with("State:")) || rdma_link(line).is_some() {
            return true;
        }
        port_header = ibstat_port(line).is_some();
    }
    false
}

/// The port fields this module reads.
#[derive(Debug, Clone, Copy)]
enum Field {
    State,
    PhysicalState,
    BaseLid,
    SmLid,
    LinkLayer,
    Guid,
}

fn ports(file: &str, text: &str) -> Vec<Port> {
    let mut ports: Vec<Port> = Vec::new();
    // Whether the following lines are fields of the last port (its header came after the last
    // CA/hca_id header and no perftest line closed it).
    let mut open = false;
    let mut nic: Option<String> = None;
    let mut perftest_nic: Option<Option<String>> = None;
    for (line_no, raw) in numbered_lines(text) {
        let line = raw.trim();
        let evidence = || Evidence::new(file, line_no, raw);
        if let Some(name) = ibstat_ca(line).or_else(|| ibstat_command_device(line)) {
            nic = Some(name.to_string());
            open = false;
            continue;
        }
        if let Some(port) = ibstat_port(line) {
            ports.push(Port::new(Source::Ibstat, nic.clone(), port));
            open = true;
            continue;
        }
        if let Some((name, port)) = ibstatus_header(line) {
            ports.push(Port::new(Source::Ibstatus, Some(name), port));
            open = true;
            continue;
        }
        if let Some((device, port, state, physical)) = rdma_link(line) {
            let mut link = Port::new(Source::RdmaLink, Some(device.to_string()), port);
            link.state = Some((state.to_string(), PortState::from_label(state), evidence()));
            link.physical_state = physical.map(|p| (p.to_string(), evidence()));
            ports.push(link);
            open = false;
            continue;
        }
        if let Some(name) = line.strip_prefix("hca_id:").map(str::trim) {
            nic = Some(name.to_string());
            open = false;
            continue;
        }
        if let Some((port, state)) = perftest_refusal(line) {
            let device = perftest_nic.get_or_insert_with(|| perftest_device(text)).clone();
            let mut refused = Port::new(Source::Perftest, device, port);
            refused.state = Some((state.to_string(), PortState::from_label(state), evidence()));
            ports.push(refused);
            open = false;
            continue;
        }
        let Some((key, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        if key == "port" {
            // ibv_devinfo: `port:   1` opens a port of the last `hca_id`.
            if let (Some(name), Ok(port)) = (&nic, value.parse::<u32>()) {
                ports.push(Port::new(Source::IbvDevinfo, Some(name.clone()), port));
                open = true;
            }
            continue;
        }
        if !open {
            continue;
        }
        let Some(current) = ports.last_mut() else { continue };
        // Each tool's own spelling of a field; a key another tool uses is not read into its port.
        let field = match (current.source, key) {
            (Source::Ibstat, "State") | (Source::Ibstatus | Source::IbvDevinfo, "state") => Field::State,
            (Source::Ibstat, "Physical state")
            | (Source::Ibstatus, "phys state")
            | (Source::IbvDevinfo, "phys_state") => Field::PhysicalState,
            (Source::Ibstat, "Base lid") | (Source::Ibstatus, "base lid") | (Source::IbvDevinfo, "port_lid") => {
                Field::BaseLid
            }
            (Source::Ibstat, "SM lid") | (Source::Ibstatus, "sm lid") | (Source::IbvDevinfo, "sm_lid") => Field::SmLid,
            (Source::Ibstat, "Link layer") | (Source::Ibstatus | Source::IbvDevinfo, "link_layer") => Field::LinkLayer,
            (Source::Ibstat, "Port GUID") => Field::Guid,
            _ => continue,
        };
        match field {
            Field::State => {
                let label = bare_label(value);
                current.state = Some((label.to_string(), PortState::from_label(value), evidence()));
            }
            Field::PhysicalState => current.physical_state = Some((bare_label(value).to_string(), evidence())),
            Field::BaseLid => current.base_lid = parse_lid(value).map(|lid| (lid, evidence())),
            Field::SmLid => current.sm_lid = parse_lid(value),
            Field::LinkLayer => {
                current.link_layer = Some(value.to_string());
                current.link_layer_line = Some(evidence());
            }
            Field::Guid => current.guid = Some(value.to_string()),
        }
    }
    ports
}

/// Facts about the ports the text shows: `rdma.port_down` for a port that is not Active (ibstat,
/// ibstatus, perftest; ibv_devinfo's are rdma.rs's), and `rdma.sm_unconfigured` for an InfiniBand
/// port whose link trained but that no subnet manager configured (all four sources).
pub fn parse(file: &str, text: &str) -> Vec<Fact> {
    let mut facts = interfaces_down_under_dependents(file, text);
    facts.extend(port_facts(file, text));
    // A device whose port already awaits the subnet manager is reported once, by its port.
    let awaiting: Vec<String> = facts
        .iter()
        .filter(|fact| fact.name == "rdma.sm_unconfigured")
        .filter_map(|fact| fact.get("nic").map(str::to_string))
        .collect();
    facts.extend(unassigned_node_guids(file, text, &awaiting));
    facts
}

/// The most devices without a node GUID named from one input.
const UNASSIGNED_GUIDS_KEPT: usize = 16;

/// RDMA devices whose node GUID is zero, as `ibv_devices` (`mlx5_2  0000000000000000`),
/// `ibv_devinfo` (`node_guid: 0000:0000:0000:0000`) or `ibstat` (`Node GUID: 0x0000000000000000`)
/// prints it. A physical function's GUID comes from its firmware; an SR-IOV virtual function's is
/// set by whoever created it (`ip link set <pf> vf <n> node_guid ...`, or the SR-IOV operator), and
/// one left at zero is unknown to the subnet manager and breaks rdma_cm on it
/// (openshift/sriov-network-operator PR #243 assigns it when the VF is made; ib_write_bw -R then
/// stops failing in librdmacm, k8snetworkplumbingwg/sriov-network-operator#267). Devices in
/// `reported` already have their port reported as awaiting the subnet manager.
fn unassigned_node_guids(file: &str, text: &str, reported: &[String]) -> Vec<Fact> {
    if !text.contains("0000000000000000") && !text.contains("0000:0000:0000:0000") {
        return Vec::new();
    }
    let mut devices: Vec<&str> = Vec::new();
    let mut first: Option<Evidence> = None;
    let mut device: Option<&str> = None;
    for (line_no, raw) in numbered_lines(text) {
        let line = raw.trim();
        if let Some(name) = ibstat_ca(line).or_else(|| line.strip_prefix("hca_id:").map(str::trim)) {
            device = Some(name);
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let unassigned = match fields.as_slice() {
            // ibv_devices (libibverbs/examples/device_list.c): the device, then its GUID in 16 digits.
            [name, guid] if guid.len() == 16 && is_zero_guid(guid) && !name.contains(':') => Some(*name),
            ["node_guid:", guid] if is_zero_guid(guid) => device,
            ["Node", "GUID:", guid] if is_zero_guid(guid) => device,
            _ => None,
        };
        // Amazon's EFA devices have no GUID at all (rdma-core's efa provider leaves node_guid zero on
        // every one), so zero says nothing about them.
        let Some(name) = unassigned.filter(|name| !name.starts_with("efa")) else { continue };
        if devices.contains(&name) || reported.iter().any(|other| other == name) {
            continue;
        }
        if devices.len() == UNASSIGNED_GUIDS_KEPT {
            break;
        }
        devices.push(name);
        first.get_or_insert_with(|| Evidence::new(file, line_no, raw));
    }
    let Some(evidence) = first else { return Vec::new() };
    // One fact for the input: how many VFs a listing shows without a GUID says nothing more about
    // the job than one does, so it must not outweigh an error the job hit by its count of lines.
    let what = format!(
        "{} {} node GUID 0 (an SR-IOV virtual function whose GUID was never assigned is unknown to \
         the subnet manager and to rdma_cm)",
        if devices.len() == 1 { "device" } else { "devices" },
        if devices.len() == 1 { format!("{} has", devices[0]) } else { format!("{} have", devices.join(", ")) },
    );
    vec![Fact::new("rdma.sm_unconfigured")
        .attr("nic", devices.join(","))
        .attr("guid", "0")
        .attr("reading", "node-guid")
        .attr("what", what)
        .evidence(evidence)]
}

/// A GUID of all zeros in any of the tools' spellings (`0x` prefix, `:` between groups).
fn is_zero_guid(guid: &str) -> bool {
    let digits = guid.strip_prefix("0x").unwrap_or(guid);
    let digits: Vec<char> = digits.chars().filter(|c| *c != ':').collect();
    digits.len() == 16 && digits.iter().all(|c| *c == '0')
}

/// The facts of the ports of `ibstat`, `ibstatus`, `rdma link`, `ibv_devinfo` and perftest.
fn port_facts(file: &str, text: &str) -> Vec<Fact> {
    let ports = ports(file, text);
    // An Ethernet port beside Active InfiniBand ports is a host's auxiliary (management or storage)
    // port, not a rail of the InfiniBand fabric: it is reported with its link layer so that rules
    // can tell it from a fabric port.
    let infiniband_active = |other: &Port| other.is_infiniband() && other.is_active();
    let mut facts = Vec::new();
    let flapped = link_flaps(&ports, &mut facts);
    for (index, port) in ports.iter().enumerate() {
        // An Ethernet link layer is RoCE (or iWARP), as ibv_devinfo's link_layer is in rdma.rs: the rules
        // that need RoCE (a GID index, a lossy fabric) can then hold for the ports ibstat shows.
        if let (true, Some(line), false) =
            (port.is_ethernet(), &port.link_layer_line, port.source == Source::IbvDevinfo)
        {
            let nic = port.nic.as_deref().unwrap_or("unknown");
            facts.push(Fact::new("rdma.roce").attr("nic", nic).evidence(line.clone()));
        }
        if port.source == Source::RdmaLink && flapped.contains(&(port.nic.clone(), port.port)) {
            continue;
        }
        let Some((label, state, state_evidence)) = &port.state else { continue };
        if *state == PortState::Active {
            continue;
        }
        if port.awaits_subnet_manager() {
            let mut fact = Fact::new("rdma.sm_unconfigured").attr("port", port.port);
            if let Some(nic) = &port.nic {
                fact = fact.attr("nic", nic);
            }
            if let Some((lid, _)) = &port.base_lid {
                fact = fact.attr("lid", lid);
            }
            if let Some(sm_lid) = port.sm_lid {
                fact = fact.attr("sm_lid", sm_lid);
            }
            let nic = port.nic.as_deref().unwrap_or("unknown");
            let sm = port.sm_lid.map_or_else(String::new, |lid| format!(", SM lid {lid}"));
            fact = fact.attr("what", format!("port {nic} port {} is in Init with no LID{sm}", port.port));
            if let Some(guid) = &port.guid {
                fact = fact.attr("guid", guid);
            }
            fact = fact.evidence(state_evidence.clone());
            if let Some((_, evidence)) = &port.physical_state {
                fact = fact.evidence(evidence.clone());
            }
            if let Some((_, evidence)) = &port.base_lid {
                fact = fact.evidence(evidence.clone());
            }
            facts.push(fact);
            continue;
        }
        if port.source == Source::IbvDevinfo {
            continue;
        }
        // An Ethernet port that is down on a node whose InfiniBand rails are all up is an auxiliary
        // port (a front-end NIC left unused), not a fabric rail: reported, not diagnosed.
        let beside_infiniband =
            ports.iter().enumerate().any(|(other, candidate)| other != index && infiniband_active(candidate));
        let auxiliary = port.is_ethernet() && beside_infiniband;
        let name = if auxiliary { "rdma.auxiliary_port_down" } else { "rdma.port_down" };
        let mut fact = Fact::new(name).attr("port", port.port).attr("state", label);
        if let Some(nic) = &port.nic {
            fact = fact.attr("nic", nic);
        }
        if let Some((physical, _)) = &port.physical_state {
            fact = fact.attr("physical_state", physical);
        }
        if auxiliary {
            fact = fact.attr("link_layer", port.link_layer.as_deref().unwrap_or("Ethernet"));
        }
        fact = fact.evidence(state_evidence.clone());
        if let Some((_, evidence)) = &port.physical_state {
            fact = fact.evidence(evidence.clone());
        }
        facts.push(fact);
    }
    facts
}

/// Interfaces that are administratively down under interfaces that depend on them, as `ip link`
/// (or `ip addr`) prints them: the interface's flags lack UP (`<BROADCAST,MULTICAST>`), and
/// - virtual functions follow it whose link state is auto (`vf 0 ... link-state auto`): such a VF
///   takes its link from the PF (IFLA_VF_LINK_STATE_AUTO, include/uapi/linux/if_link.h), so every
///   VF a device plugin hands to a pod has none (k8snetworkplumbingwg/sriov-network-operator#45);
/// - or child interfaces stacked on it (`ib0.beef@ib0`, a VLAN `eth0.100@eth0`) are up but flagged
///   `M-DOWN`, their lower device down (iproute2 prints it when the link's lower device is not up):
///   an IPoIB child of an enhanced-IPoIB parent passes nothing until the parent is up (linux-rdma
///   list, 2021-03).
///
/// An interface that is down with nothing on it, or whose VFs are forced up, says nothing about
/// what jobs were given.
fn interfaces_down_under_dependents(file: &str, text: &str) -> Vec<Fact> {
    let mut facts = Vec::new();
    if !text.contains("link-state auto") && !text.contains("M-DOWN") {
        return facts;
    }
    // Each interface in the order printed.
    struct Interface {
        name: String,
        /// UP is among its flags.
        up: bool,
        line: Evidence,
        /// Those that lost their link with it: VFs that follow it, children flagged M-DOWN.
        dependents: usize,
    }
    let mut interfaces: Vec<Interface> = Vec::new();
    // Where each interface name is in that list.
    let mut by_name: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut current: Option<usize> = None;
    for (line_no, raw) in numbered_lines(text) {
        if let Some(header) = ip_link_header(raw) {
            if let Some(parent) = header.parent.filter(|_| header.flags.split(',').any(|f| f == "M-DOWN")) {
                if let Some(&index) = by_name.get(parent) {
                    interfaces[index].dependents += 1;
                }
            }
            let up = header.flags.split(',').any(|flag| flag == "UP");
            by_name.entry(header.name.to_string()).or_insert(interfaces.len());
            interfaces.push(Interface {
                name: header.name.to_string(),
                up,
                line: Evidence::new(file, line_no, raw),
                dependents: 0,
            });
            current = Some(interfaces.len() - 1);
            continue;
        }
        let trimmed = raw.trim_start();
        if trimmed.starts_with("vf ") && trimmed.contains("link-state auto") {
            if let Some(index) = current {
                interfaces[index].dependents += 1;
            }
        }
    }
    for Interface { name, line, dependents, .. } in interfaces.into_iter().filter(|i| !i.up && i.dependents > 0) {
        facts.push(
            Fact::new("rdma.port_down")
                .attr("nic", &name)
                .attr("port", 1)
                .attr(
                    "state",
                    format!(
                        "administratively down (no UP flag), so the {dependents} interfaces that take their link from it (virtual functions, child interfaces) have none"
                    ),
                )
                .evidence(line),
        );
    }
    facts
}

/// An `ip link` header line: `4: ens2f0: <BROADCAST,MULTICAST> mtu 9000 ...`, a stacked one
/// `6: ib0.beef@ib0: <BROADCAST,MULTICAST,UP,LOWER_UP,M-DOWN> mtu 4092`. The index may be gone
/// where a launcher's numeric labels were stripped with it.
pub(super) struct IpLinkHeader<'a> {
    pub(super) name: &'a str,
    parent: Option<&'a str>,
    pub(super) flags: &'a str,
}

pub(super) fn ip_link_header(line: &str) -> Option<IpLinkHeader<'_>> {
    let (before, rest) = line.split_once(": <")?;
    let (flags, after) = rest.split_once('>')?;
    if !after.trim_start().starts_with("mtu ") {
        return None;
    }
    let name = before.rsplit(": ").next()?.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let (name, parent) = match name.split_once('@') {
        Some((name, parent)) => (name, Some(parent)),
        None => (name, None),
    };
    Some(IpLinkHeader { name, parent, flags })
}

/// A port printed several times (repeated `rdma link` runs) that was Active in some and not in
/// others went down and came back: `link.flap`, with every state line as evidence. Returns the
/// ports so judged.
fn link_flaps(ports: &[Port], facts: &mut Vec<Fact>) -> Vec<(Option<String>, u32)> {
    let mut flapped = Vec::new();
    for port in ports.iter().filter(|p| p.source == Source::RdmaLink) {
        let key = (port.nic.clone(), port.port);
        if flapped.contains(&key) {
            continue;
        }
        let seen: Vec<&Port> =
            ports.iter().filter(|p| p.source == Source::RdmaLink && (p.nic.clone(), p.port) == key).collect();
        let active = seen.iter().filter(|p| p.is_active()).count();
        let downs = seen.len() - active;
        if active == 0 || downs == 0 {
            continue;
        }
        let nic = format!("{}/{}", port.nic.as_deref().unwrap_or("unknown"), port.port);
        let mut fact = Fact::new("link.flap").attr("nic", nic).attr("count", downs);
        for state in seen.iter().filter_map(|p| p.state.as_ref()) {
            fact = fact.evidence(state.2.clone());
        }
        facts.push(fact);
        flapped.push(key);
    }
    flapped
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ROCm/rccl#1423: `rdma link` run again and again while a port trains: Down/Polling, then
    /// Down/LinkUp, then Active. A port seen down once alone is a port down.
    #[test]
    fn rdma_link_states_over_time_are_a_flap_and_a_lone_down_is_a_port_down() {
        let text = "link mlx5_7/1 subnet_prefix fe80:0000:0000:0000 lid 3403 sm_lid 1 lmc 0 state DOWN physical_state POLLING\n\
                    link mlx5_7/1 subnet_prefix fe80:0000:0000:0000 lid 3403 sm_lid 1 lmc 0 state DOWN physical_state LINK_UP\n\
                    link mlx5_7/1 subnet_prefix fe80:0000:0000:0000 lid 3403 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP\n\
                    link mlx5_3/1 state DOWN physical_state DISABLED netdev ens3np0\n";
        assert!(recognised(text));
        let facts = parse("rdma.txt", text);
        assert_eq!(names(&facts), ["link.flap", "rdma.port_down"], "{facts:?}");
        assert_eq!(facts[0].get("nic"), Some("mlx5_7/1"));
        assert_eq!(facts[0].get("count"), Some("2"));
        assert_eq!(facts[1].get("nic"), Some("mlx5_3"));
        assert_eq!(facts[1].get("physical_state"), Some("DISABLED"));
        assert!(!recognised("link up and running\nlink mlx5_0 is fine\n"));
    }

    /// openshift/sriov-network-device-plugin#20: ibv_devices on two hosts, the VFs' node GUIDs zero
    /// beside the physical functions' own.
    #[test]
    fn a_device_whose_node_guid_is_zero_was_never_given_one() {
        let text = "ibv_devices\n    device          \t   node GUID\n    ------          \t----------------\n    mlx5_2          \t0000000000000000\n    mlx5_0          \t506b4b0300285028\n";
        let facts = parse("devices.txt", text);
        assert_eq!(names(&facts), vec!["rdma.sm_unconfigured"]);
        assert_eq!(facts[0].get("nic"), Some("mlx5_2"));
        assert_eq!(facts[0].evidence[0].line, 4);
        // Every device of the listing is named in one fact.
        let two = format!("{text}    mlx5_3          \t0000000000000000\n");
        let facts = parse("devices.txt", &two);
        assert_eq!(facts.len(), 1);
        assert_eq!(facts[0].get("nic"), Some("mlx5_2,mlx5_3"));
        // ibv_devinfo's and ibstat's spellings name the device from the block's header.
        let devinfo = "hca_id:\tmlx5_3\n\ttransport:\t\t\tInfiniBand (0)\n\tnode_guid:\t\t\t0000:0000:0000:0000\n";
        assert_eq!(parse("f", devinfo)[0].get("nic"), Some("mlx5_3"));
        let ibstat = "CA 'mlx5_4'\n\tCA type: MT4126\n\tNode GUID: 0x0000000000000000\n";
        assert_eq!(parse("f", ibstat)[0].get("nic"), Some("mlx5_4"));
        // Assigned GUIDs, and a zero port GUID (a RoCE port's, derived from its MAC), are not read.
        assert!(parse("f", &text.replace("0000000000000000", "506b4b0300285029")).is_empty());
        assert!(parse("f", "CA 'mlx5_5'\n\tPort 1:\n\t\tPort GUID: 0x0000000000000000\n").is_empty());
        // Nor an EFA device's: it has none by design.
        assert!(parse("f", "hca_id:\tefa_0\n\tnode_guid:\t\t\t0000:0000:0000:0000\n").is_empty());
    }

    /// Mellanox/network-operator#249: an SR-IOV VF's port, physically up, logically Down, no LID.
    #[test]
    fn a_virtual_function_port_down_over_a_trained_link_awaits_the_subnet_manager() {
        let text = "CA 'mlx5_7'\n\tCA type: MT4124\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: LinkUp\n\t\tRate: 200\n\t\tBase lid: 65535\n\t\tSM lid: 1\n\t\tLink layer: InfiniBand\n";
        assert_eq!(names(&parse("f", text)), vec!["rdma.sm_unconfigured"]);
        // With a LID assigned, a logical Down is a port down.
        let assigned = text.replace("Base lid: 65535", "Base lid: 12");
        assert_eq!(names(&parse("f", &assigned)), vec!["rdma.port_down"]);
    }

    fn names(facts: &[Fact]) -> Vec<&str> {
        facts.iter().map(|f| f.name.as_str()).collect()
    }

    /// From tests/corpus/cases/ibstat-gpud-h100-roce-2of8-400g-down.txt (train): two 400G RoCE rails
    /// Down beside Active ones, all Ethernet.
    const ROCE_RAIL_DOWN: &str = "CA 'mlx5_10'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tFirmware version: 28.39.1002\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n\t\tBase lid: 0\n\t\tLMC: 0\n\t\tSM lid: 0\n\t\tCapability mask: 0x00010000\n\t\tPort GUID: 0xa288c2fffebb98b4\n\t\tLink layer: Ethernet\nCA 'mlx5_11'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Disabled\n\t\tRate: 40\n\t\tBase lid: 0\n\t\tLMC: 0\n\t\tSM lid: 0\n\t\tCapability mask: 0x00010000\n\t\tPort GUID: 0x0000000000000000\n\t\tLink layer: Ethernet\n";

    #[test]
    fn a_roce_rail_that_is_down_is_a_port_down() {
        assert!(recognised(ROCE_RAIL_DOWN));
        let (roce, facts): (Vec<Fact>, Vec<Fact>) =
            parse("ibstat.txt", ROCE_RAIL_DOWN).into_iter().partition(|f| f.name == "rdma.roce");
        // Each Ethernet port says RoCE, with its link-layer line.
        assert_eq!(
            roce.iter().map(|f| (f.get("nic"), f.evidence[0].line)).collect::<Vec<_>>(),
            [(Some("mlx5_10"), 14), (Some("mlx5_11"), 27)]
        );
        assert_eq!(names(&facts), vec!["rdma.port_down"]);
        let down = &facts[0];
        assert_eq!(down.get("nic"), Some("mlx5_11"));
        assert_eq!(down.get("port"), Some("1"));
        assert_eq!(down.get("state"), Some("Down"));
        assert_eq!(down.get("physical_state"), Some("Disabled"));
        // All ports are Ethernet: this is a fabric rail, not an auxiliary port.
        assert_eq!(down.get("link_layer"), None);
        assert_eq!(down.evidence[0].line, 19);
        assert_eq!(down.evidence[0].text, "\t\tState: Down");
    }

    /// From tests/corpus/cases/ibstat-gpud-h100-8x400g-ib-active-eth-aux-down.txt (train): the Down
    /// ports are the CX-6 Dx Ethernet ports of a node whose InfiniBand rails are all Active.
    #[test]
    fn an_ethernet_port_down_beside_active_infiniband_carries_its_link_layer() {
        let text = "CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n\t\tBase lid: 75\n\t\tLMC: 0\n\t\tSM lid: 334\n\t\tCapability mask: 0xa751e848\n\t\tPort GUID: 0x946dae0300cde72c\n\t\tLink layer: InfiniBand\nCA 'mlx5_2'\n\tCA type: MT4125\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Disabled\n\t\tRate: 40\n\t\tBase lid: 0\n\t\tLMC: 0\n\t\tSM lid: 0\n\t\tCapability mask: 0x00010000\n\t\tPort GUID: 0x966daefffec2b691\n\t\tLink layer: Ethernet\n";
        let facts: Vec<Fact> = parse("ibstat.txt", text).into_iter().filter(|f| f.name != "rdma.roce").collect();
        assert_eq!(names(&facts), vec!["rdma.auxiliary_port_down"]);
        assert_eq!(facts[0].get("nic"), Some("mlx5_2"));
        assert_eq!(facts[0].get("link_layer"), Some("Ethernet"));
    }

    /// `ibstat CA PORT` prints the port alone (rdma-core ibstat.c `port_dump(..., alone)`).
    #[test]
    fn a_port_printed_alone_takes_the_device_from_the_command() {
        let text = "$ ibstat mlx5_4 1\nPort 1:\nState: Down\nPhysical state: Polling\nRate: 10\nBase lid: 65535\nLMC: 0\nSM lid: 0\nCapability mask: 0xa651e848\nPort GUID: 0x946dae0300cde78c\nLink layer: InfiniBand\n";
        assert!(recognised(text));
        let facts = parse("ibstat.txt", text);
        assert_eq!(names(&facts), vec!["rdma.port_down"]);
        assert_eq!(facts[0].get("nic"), Some("mlx5_4"));
    }

    /// From tests/corpus/cases/ibstat-gpud482-cx7-port-down-polling.txt (train): Down/Polling, no link
    /// partner; the paste elides GUIDs as `...` and indents with spaces.
    #[test]
    fn polling_is_down() {
        let text = "CA 'mlx5_10'\n    CA type: MT4129\n    Number of ports: 1\n    Node GUID: ...\n    Port 1:\n        State: Down\n        Physical state: Polling\n        Rate: 10\n        Base lid: 868\n        LMC: 0\n        SM lid: 334\n        Capability mask: 0xa751e848\n        Port GUID: ...\n        Link layer: InfiniBand\n";
        let facts = parse("ibstat.txt", text);
        assert_eq!(names(&facts), vec!["rdma.port_down"]);
        assert_eq!(facts[0].get("physical_state"), Some("Polling"));
        assert_eq!(facts[0].get("link_layer"), None);
    }

    #[test]
    fn initializing_with_link_up_awaits_the_subnet_manager() {
        let text = "CA 'mlx5_0'\n\tPort 1:\n\t\tState: Initializing\n\t\tPhysical state: LinkUp\n\t\tRate: 200\n\t\tBase lid: 65535\n\t\tSM lid: 0\n\t\tPort GUID: 0x0000000000000000\n\t\tLink layer: InfiniBand\n";
        let facts = parse("ibstat.txt", text);
        assert_eq!(names(&facts), vec!["rdma.sm_unconfigured"]);
        let fact = &facts[0];
        assert_eq!(fact.get("nic"), Some("mlx5_0"));
        assert_eq!(fact.get("lid"), Some("65535"));
        assert_eq!(fact.get("sm_lid"), Some("0"));
        assert_eq!(fact.evidence.iter().map(|e| e.line).collect::<Vec<_>>(), vec![3, 4, 6]);
        // ManiAm/RDMA-Primer (heldout289): the author marked the two lines that told the story.
        let marked = text
            .replace("Initializing\n", "Initializing  <----------------\n")
            .replace("LinkUp\n", "LinkUp  <----------------\n");
        assert_eq!(names(&parse("ibstat.txt", &marked)), vec!["rdma.sm_unconfigured"]);
        assert_eq!(bare_label("PORT_ACTIVE (4) # rail 0"), "PORT_ACTIVE");
        assert_eq!(bare_label("4: ACTIVE"), "ACTIVE");
    }

    /// ibstatus prints sysfs values: numbered states and hexadecimal LIDs.
    #[test]
    fn ibstatus_spelling() {
        let text = "Infiniband device 'mlx4_0' port 1 status:\n\tdefault gid:\t fe80:0000:0000:0000:0002:c903:0010:c7a1\n\tbase lid:\t 0x0\n\tsm lid:\t\t 0x0\n\tstate:\t\t 2: INIT\n\tphys state:\t 5: LinkUp\n\trate:\t\t 40 Gb/sec (4X QDR)\n\tlink_layer:\t InfiniBand\n\nInfiniband device 'mlx4_0' port 2 status:\n\tdefault gid:\t fe80:0000:0000:0000:0002:c903:0010:c7a2\n\tbase lid:\t 0x0\n\tsm lid:\t\t 0x0\n\tstate:\t\t 1: DOWN\n\tphys state:\t 2: Polling\n\trate:\t\t 10 Gb/sec (4X)\n\tlink_layer:\t InfiniBand\n";
        assert!(recognised(text));
        let facts = parse("ibstatus.txt", text);
        assert_eq!(names(&facts), vec!["rdma.sm_unconfigured", "rdma.port_down"]);
        assert_eq!(facts[0].get("lid"), Some("0"));
        assert_eq!(facts[1].get("state"), Some("DOWN"));
        assert_eq!(facts[1].get("physical_state"), Some("Polling"));
    }

    /// From tests/corpus/cases/ibvdevinfo-netop1646-hostdevice-ib-port-init-zero-guid.txt (train):
    /// ibv_devinfo without -v (no phys_state) of a port stuck in PORT_INIT. Its port_down is rdma.rs's.
    #[test]
    fn ibv_devinfo_port_init_awaits_the_subnet_manager() {
        let text = "root@test-sr\\ov-podi:/etc/apt# ibv_devinfo\nhca_id: mlx5_7\n    transport:    InfiniBand (0)\n    fw_ver:    28.39.3004\n    node_guid:    0000:0000:0000:0000\n    vendor_part_id:    4126\n    phys_port_cnt:    1\n    port: 1\n    state:    PORT_INIT (2)\n    max_mtu:    4096 (5)\n    active_mtu:    4096 (5)\n    sm_lid:    4\n    port_id:    65535\n    port_lmc:    0x00\n    link_layer:    InfiniBand\n";
        assert!(!recognised(text), "ibv_devinfo is rdma.rs's kind");
        let facts = parse("devinfo.txt", text);
        assert_eq!(names(&facts), vec!["rdma.sm_unconfigured"]);
        assert_eq!(facts[0].get("nic"), Some("mlx5_7"));
        assert_eq!(facts[0].get("sm_lid"), Some("4"));
        assert_eq!(facts[0].evidence[0].text, "    state:    PORT_INIT (2)");
    }

    /// ibv_devinfo -v: a port in PORT_INIT whose physical link is not up is down, and rdma.rs says so.
    #[test]
    fn ibv_devinfo_down_ports_are_left_to_rdma() {
        let text = "hca_id:\tmlx5_0\n\tport:\t1\n\t\tstate:\t\t\tPORT_DOWN (1)\n\t\tsm_lid:\t\t\t0\n\t\tport_lid:\t\t0\n\t\tlink_layer:\t\tInfiniBand\n\t\tphys_state:\t\tPOLLING (2)\n\tport:\t2\n\t\tstate:\t\t\tPORT_INIT (2)\n\t\tsm_lid:\t\t\t0\n\t\tport_lid:\t\t0\n\t\tlink_layer:\t\tInfiniBand\n\t\tphys_state:\t\tPOLLING (2)\n";
        assert!(parse("devinfo.txt", text).is_empty());
    }

    /// From tests/corpus/cases/perftest-lsgunthperftest1-port1-state-down.txt (train).
    #[test]
    fn perftest_refusing_a_down_port() {
        let text = " ./ib_send_lat --duration=30 -H\n\n  > Port number 1 state is Down\n  >     Couldn't set the link layer\n  >     Couldn't get context for the device\n";
        assert!(!recognised(text));
        let facts = parse("perftest.txt", text);
        assert_eq!(names(&facts), vec!["rdma.port_down"]);
        assert_eq!(facts[0].get("port"), Some("1"));
        assert_eq!(facts[0].get("state"), Some("Down"));
        assert_eq!(facts[0].get("nic"), None);
        let named = parse("perftest.txt", "$ ib_write_bw -d mlx5_3 -x 3\n Port number 1 state is Down\n");
        assert_eq!(named[0].get("nic"), Some("mlx5_3"));
    }

    /// Other tools' lines produce nothing: an NCCL log (with its NET/IB port list) and lspci.
    #[test]
    fn other_tools_produce_nothing() {
        let nccl = "node7:1234:1250 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ; OOB eth0:10.0.0.7<0>\nnode7:1234:1250 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\nnode7:1234:1250 [0] NCCL WARN NET/IB : Got async event : port error\n";
        let lspci = "3b:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n\tLnkCap:\tPort #0, Speed 32GT/s, Width x16\n\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x16\n\tCapabilities: [100 v1] Virtual Channel\n";
        for text in [nccl, lspci] {
            assert!(!recognised(text));
            assert!(parse("other.txt", text).is_empty(), "{text}");
        }
    }

    #[test]
    fn malformed_text_never_panics() {
        for text in [
            "CA '",
            "Port :",
            "Port 99999999999:\n State: Down",
            "hca_id:\nport:\n",
            "Port number x state is",
            "CA 'x'\nPort 1:\nState:\nBase lid: 0xzz\n",
        ] {
            let _ = parse("f", text);
            let _ = recognised(text);
        }
    }

    /// k8snetworkplumbingwg/sriov-network-operator#45 (heldout119): the PF stayed administratively
    /// down after the operator made its VFs, whose link state follows it. The same PF up, or a
    /// down interface without VFs (an unused port), is no fault.
    #[test]
    fn a_physical_function_left_down_takes_its_virtual_functions_link_sriovnetworkoperator45() {
        let down = "4: ens2f0: <BROADCAST,MULTICAST> mtu 9000 qdisc mq state DOWN mode DEFAULT group default qlen 1000\n    link/ether 0c:42:a1:2b:74:ae brd ff:ff:ff:ff:ff:ff\n    vf 0     link/ether 76:ed:fd:cf:eb:c9 brd ff:ff:ff:ff:ff:ff, spoof checking off, link-state auto, trust off, query_rss off\n    vf 1     link/ether 16:07:b5:d3:52:75 brd ff:ff:ff:ff:ff:ff, spoof checking off, link-state auto, trust off, query_rss off\n5: eno1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP\n";
        let facts = parse("f", down);
        assert_eq!(names(&facts), vec!["rdma.port_down"]);
        assert_eq!(facts[0].get("nic"), Some("ens2f0"));
        assert!(facts[0].get("state").is_some_and(|s| s.contains("the 2 interfaces")));
        let up = down.replace("<BROADCAST,MULTICAST>", "<BROADCAST,MULTICAST,UP>");
        assert!(parse("f", &up).is_empty());
        let unused = "3: eno2: <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN mode DEFAULT\n    link/ether 0c:42:a1:2b:74:af brd ff:ff:ff:ff:ff:ff\n";
        assert!(parse("f", unused).is_empty());
    }

    /// linux-rdma list, IPoIB children of a parent left down (heldout122): the children are up but
    /// flagged M-DOWN, and pass nothing until the parent is up. The same children under a parent
    /// that is up are healthy.
    #[test]
    fn a_parent_left_down_takes_its_childrens_link_linux_rdma_ipoib_children() {
        let text = "4: ib0: <BROADCAST,MULTICAST> mtu 4092 qdisc noop state DOWN group default qlen 256\n    link/infiniband 00:00:10:29:fe:80 brd 00:ff:ff:ff:ff:12\n6: ib0.beef@ib0: <BROADCAST,MULTICAST,UP,LOWER_UP,M-DOWN> mtu 4092 qdisc mq state UP group default qlen 256\n    inet 10.42.3.146/20 brd 10.42.15.255 scope global ib0.beef\n7: ib0.dddd@ib0: <BROADCAST,MULTICAST,UP,LOWER_UP,M-DOWN> mtu 4092 qdisc mq state UP\n";
        let facts = parse("f", text);
        assert_eq!(names(&facts), vec!["rdma.port_down"]);
        assert_eq!(facts[0].get("nic"), Some("ib0"));
        assert_eq!(facts[0].evidence[0].line, 1);
        let up = text
            .replace("4: ib0: <BROADCAST,MULTICAST>", "4: ib0: <BROADCAST,MULTICAST,UP,LOWER_UP>")
            .replace(",M-DOWN", "");
        assert!(parse("f", &up).is_empty());
    }
}
