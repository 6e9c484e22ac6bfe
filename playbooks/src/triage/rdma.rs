//! `ibv_devinfo` and `show_gids` outputs: port state, link layer, firmware, MTU, and the GID table
//! (which index is RoCE v2 over IPv4, the one NCCL must use between subnets).

use std::collections::{BTreeMap, BTreeSet};

use fabricdoctor_checks::{Finding, Policy, Verdict};

use super::analysis::Analysis;
use super::counters::cite;
use super::lines::numbered_lines;
use super::nccl::NcclLog;
use crate::fact::{Evidence, Fact};

#[derive(Debug, Clone, Default)]
pub struct DevicePort {
    pub device: String,
    pub firmware: Option<(String, Evidence)>,
    pub part_id: Option<String>,
    pub port: u32,
    pub state: Option<(String, Evidence)>,
    pub active_mtu: Option<(u32, Evidence)>,
    pub link_layer: Option<(String, Evidence)>,
}

#[derive(Debug, Clone)]
pub struct Gid {
    pub device: String,
    pub port: u32,
    pub index: u32,
    pub gid: String,
    pub ipv4: Option<String>,
    pub version: String,
    pub netdev: Option<String>,
    pub evidence: Evidence,
}

#[derive(Debug, Clone, Default)]
pub struct RdmaRecords {
    pub ports: Vec<DevicePort>,
    pub gids: Vec<Gid>,
    /// The path MTU a verbs test was started with, from its command line pasted beside the ports.
    pub requested_mtu: Option<(u32, Evidence)>,
    /// ibv_devinfo's "Failed to open device" lines: devices it listed but could not open.
    pub unopened: Vec<Evidence>,
}

impl RdmaRecords {
    pub fn kinds(&self) -> Vec<&'static str> {
        let mut kinds = Vec::new();
        if !self.ports.is_empty() {
            kinds.push("ibv_devinfo");
        }
        if !self.gids.is_empty() {
            kinds.push("show_gids");
        }
        kinds
    }

    pub fn extend(&mut self, other: RdmaRecords) {
        self.ports.extend(other.ports);
        self.gids.extend(other.gids);
        if other.requested_mtu.is_some() {
            self.requested_mtu = other.requested_mtu;
        }
        self.unopened.extend(other.unopened);
    }
}

fn value_of<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.trim().strip_prefix(key).map(str::trim)
}

pub fn parse(file: &str, text: &str) -> RdmaRecords {
    let mut records = RdmaRecords::default();
    let mut device: Option<String> = None;
    let mut firmware: Option<(String, Evidence)> = None;
    let mut part_id: Option<String> = None;
    for (line_no, raw) in numbered_lines(text) {
        let evidence = || Evidence::new(file, line_no, raw);
        if let Some(mtu) = requested_test_mtu(raw.trim()) {
            records.requested_mtu = Some((mtu, evidence()));
            continue;
        }
        if raw.trim() == "Failed to open device" {
            records.unopened.push(evidence());
            continue;
        }
        if let Some(name) = value_of(raw, "hca_id:") {
            device = Some(name.to_string());
            firmware = None;
            part_id = None;
            continue;
        }
        if let Some(current) = &device {
            if let Some(fw) = value_of(raw, "fw_ver:") {
                firmware = Some((fw.to_string(), evidence()));
            } else if let Some(part) = value_of(raw, "vendor_part_id:") {
                part_id = Some(part.to_string());
            } else if let Some(port) = value_of(raw, "port:").and_then(|p| p.parse::<u32>().ok()) {
                records.ports.push(DevicePort {
                    device: current.clone(),
                    firmware: firmware.clone(),
                    part_id: part_id.clone(),
                    port,
                    ..DevicePort::default()
                });
            } else if let Some(port) = records.ports.last_mut().filter(|p| &p.device == current) {
                if let Some(state) = value_of(raw, "state:") {
                    port.state = Some((state.split_whitespace().next().unwrap_or("").to_string(), evidence()));
                } else if let Some(mtu) = value_of(raw, "active_mtu:") {
                    if let Some(bytes) = mtu.split_whitespace().next().and_then(|m| m.parse().ok()) {
                        port.active_mtu = Some((bytes, evidence()));
                    }
                } else if let Some(layer) = value_of(raw, "link_layer:") {
                    port.link_layer = Some((layer.to_string(), evidence()));
                }
            }
        }
        let fields: Vec<&str> = raw.split_whitespace().collect();
        if fields.len() >= 5 {
            let (Ok(port), Ok(index)) = (fields[1].parse::<u32>(), fields[2].parse::<u32>()) else { continue };
            let gid = fields[3];
            if gid.split(':').count() != 8 {
                continue;
            }
            let rest = &fields[4..];
            let Some(version_at) = rest.iter().position(|f| *f == "v1" || *f == "v2") else { continue };
            let ipv4 = rest[..version_at].first().map(|s| s.to_string());
            records.gids.push(Gid {
                device: fields[0].to_string(),
                port,
                index,
                gid: gid.to_string(),
                ipv4,
                version: rest[version_at].to_string(),
                netdev: rest.get(version_at + 1).map(|s| s.to_string()),
                evidence: evidence(),
            });
        }
    }
    records
}

/// The verbs tests (perftest's, and rdma-core's pingpong examples) whose command lines name the
/// device they ran on.
const VERBS_TESTS: [&str; 13] = [
    "ib_write_bw",
    "ib_write_lat",
    "ib_read_bw",
    "ib_read_lat",
    "ib_send_bw",
    "ib_send_lat",
    "ib_atomic_bw",
    "ib_atomic_lat",
    "ibv_rc_pingpong",
    "ibv_uc_pingpong",
    "ibv_ud_pingpong",
    "ibv_srq_pingpong",
    "ibv_xsrq_pingpong",
];

/// The RDMA devices a text's verbs tests ran on: the device after `-d`, `--ib-dev=` or `--ib-dev`
/// on a test's command line (`ib_write_bw -d mlx5_0 ...`), and perftest's own header (` Device :
/// mlx5_0`).
fn devices_tested(text: &str) -> BTreeSet<&str> {
    // One scan of the text finds the lines worth reading (most inputs hold no such test).
    static NAMES: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let names = NAMES.get_or_init(|| {
        let alternation = VERBS_TESTS.map(regex::escape).join("|");
        regex::Regex::new(&format!(r"(?m)^\s*Device\s*:|{alternation}")).expect("literal names compile")
    });
    let mut devices = BTreeSet::new();
    let mut last_line_end = 0;
    for found in names.find_iter(text) {
        if found.start() < last_line_end {
            continue;
        }
        let start = text[..found.start()].rfind('\n').map_or(0, |at| at + 1);
        let end = text[found.start()..].find('\n').map_or(text.len(), |at| found.start() + at);
        last_line_end = end;
        let trimmed = text[start..end].trim();
        if let Some(device) = trimmed.strip_prefix("Device").map(str::trim_start).and_then(|r| r.strip_prefix(':')) {
            // perftest's header puts two fields on a line ("Device : mlx5_0   Transport type : IB").
            if let Some(device) = device.split_whitespace().next() {
                devices.insert(device);
            }
            continue;
        }
        let mut words =
            trimmed.split_whitespace().skip_while(|word| !VERBS_TESTS.iter().any(|test| word.ends_with(test)));
        if words.next().is_none() {
            continue;
        }
        while let Some(word) = words.next() {
            let device = match word {
                "-d" | "--ib-dev" => words.next(),
                _ => word.strip_prefix("--ib-dev="),
            };
            if let Some(device) = device {
                devices.insert(device);
            }
        }
    }
    devices
}

/// A port that is not Active on a device other than those the input's verbs tests ran on, where
/// they named at least one: a port left uncabled beside the ones in use (a DGX Spark's second port
/// pair, NVIDIA's dual-Spark guide), or another adapter's, is no cause of what the tests showed.
/// It stays reported (`rdma.auxiliary_port_down`), not diagnosed.
pub fn ports_the_tests_did_not_use(texts: &[(String, String)], analysis: &mut Analysis) {
    for (name, text) in texts {
        let tested = devices_tested(text);
        if tested.is_empty() {
            continue;
        }
        for fact in analysis.facts.iter_mut().filter(|fact| fact.name == "rdma.port_down") {
            let from_this_input = fact.evidence.first().is_some_and(|evidence| &evidence.file == name);
            if from_this_input && fact.get("nic").is_some_and(|nic| !tested.contains(nic)) {
                fact.name = "rdma.auxiliary_port_down".to_string();
            }
        }
    }
}

pub fn analyze(records: &RdmaRecords, logs: &[NcclLog], analysis: &mut Analysis) {
    let policy = Policy::default();
    let mut firmware_by_part: BTreeMap<String, BTreeMap<String, Vec<(String, Evidence)>>> = BTreeMap::new();
    for port in &records.ports {
        let subject = format!("{} port {}", port.device, port.port);
        if let Some((state, evidence)) = &port.state {
            if state == "PORT_ACTIVE" {
                analysis
                    .observations
                    .push(Finding::new("rdma.port.state", Verdict::Pass, &subject, "ACTIVE").evidence(cite(evidence)));
            } else {
                analysis.observations.push(
                    Finding::new(
                        "rdma.port.state",
                        Verdict::Fail,
                        &subject,
                        format!("{state}: no RDMA traffic possible on this port"),
                    )
                    .evidence(cite(evidence)),
                );
                analysis.push(
                    Fact::new("rdma.port_down")
                        .attr("nic", &port.device)
                        .attr("port", port.port)
                        .attr("state", state)
                        .evidence(evidence.clone()),
                );
            }
        }
        if let Some((layer, evidence)) = &port.link_layer {
            if layer.eq_ignore_ascii_case("Ethernet") {
                analysis.push(Fact::new("rdma.roce").attr("nic", &port.device).evidence(evidence.clone()));
                if let Some((mtu, mtu_evidence)) = &port.active_mtu {
                    if *mtu < policy.rdma.roce_min_active_mtu {
                        analysis.observations.push(
                            Finding::new(
                                "rdma.mtu",
                                Verdict::Warn,
                                &subject,
                                format!(
                                    "RoCE active MTU {mtu}, below {}: the netdev MTU limits it (set the interface MTU to 9000 or more, or 4200+)",
                                    policy.rdma.roce_min_active_mtu
                                ),
                            )
                            .evidence(cite(mtu_evidence)),
                        );
                    }
                }
            }
        }
        if let (Some((fw, evidence)), Some(part)) = (&port.firmware, &port.part_id) {
            firmware_by_part
                .entry(part.clone())
                .or_default()
                .entry(fw.clone())
                .or_default()
                .push((port.device.clone(), evidence.clone()));
        }
    }
    for (part, versions) in &firmware_by_part {
        if versions.len() > 1 {
            let listed: Vec<String> = versions
                .iter()
                .map(|(fw, devices)| {
                    let mut names: Vec<&str> = devices.iter().map(|d| d.0.as_str()).collect();
                    names.dedup();
                    format!("{fw} on {}", names.join(", "))
                })
                .collect();
            let mut finding = Finding::new(
                "rdma.firmware",
                Verdict::Warn,
                format!("vendor_part_id {part}"),
                format!("same adapter model runs different firmware: {}", listed.join("; ")),
            );
            for devices in versions.values() {
                finding = finding.evidence(cite(&devices[0].1));
            }
            analysis.observations.push(finding);
        }
    }
    unopened_devices(records, analysis);
    path_mtu(records, analysis);
    gids(records, logs, analysis);
}

/// ibv_devinfo lists every device the kernel shows (sysfs) and opens each in turn, printing "Failed
/// to open device" for one it cannot open (rdma-core libibverbs/examples/devinfo.c). A container or
/// VM given some of the host's devices (one SR-IOV virtual function, a device plugin's share) sees
/// the rest listed without their device files. Beside a device that opened, those failures are the
/// devices this process was not given: reported for the operator to confirm, not a fault.
fn unopened_devices(records: &RdmaRecords, analysis: &mut Analysis) {
    if records.unopened.is_empty() || records.ports.is_empty() {
        return;
    }
    let mut opened: Vec<&str> = records.ports.iter().map(|p| p.device.as_str()).collect();
    opened.dedup();
    let opened = opened.join(", ");
    let count = records.unopened.len();
    let mut fact = Fact::new("rdma.devices_not_given").attr("count", count).attr("opened", &opened);
    // Every line is cited, so none is left among the unexplained errors.
    for evidence in &records.unopened {
        fact = fact.evidence(evidence.clone());
    }
    analysis.push(fact);
    analysis.observations.push(
        Finding::new(
            "rdma.device.open",
            Verdict::Warn,
            "ibv_devinfo",
            format!(
                "{count} listed devices could not be opened, {opened} could: devices of the host not given to this container or VM (confirm they are not the ones the job needs)"
            ),
        )
        .evidence(cite(&records.unopened[0])),
    );
}

/// A queue pair's path MTU above what the port carries: on RoCE the port's active MTU follows
/// the interface MTU (1024 behind a 1500-byte Ethernet MTU), and frames built for the larger path
/// MTU never arrive, so the first message exhausts its retries (status 12) on a clean fabric.
fn path_mtu(records: &RdmaRecords, analysis: &mut Analysis) {
    let Some((requested, command)) = &records.requested_mtu else { return };
    let below = records
        .ports
        .iter()
        .filter_map(|port| port.active_mtu.as_ref())
        .filter(|(mtu, _)| mtu < requested)
        .min_by_key(|(mtu, _)| *mtu);
    if let Some((active, port)) = below {
        analysis.push(
            Fact::new("rdma.mtu_above_port")
                .attr("requested", requested)
                .attr("active", active)
                .evidence(command.clone())
                .evidence(port.clone()),
        );
    }
}

/// The path MTU a verbs test was started with: rdma-core's `ibv_*_pingpong -m 4096` or
/// `--mtu=4096`, perftest's `ib_*_bw -m 4096` (both name the option the same).
fn requested_test_mtu(line: &str) -> Option<u32> {
    if !(line.contains("_pingpong")
        || line.contains("ib_write_")
        || line.contains("ib_read_")
        || line.contains("ib_send_"))
    {
        return None;
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    let program = words.iter().position(|w| {
        let name = w.rsplit('/').next().unwrap_or(w);
        (name.starts_with("ibv_") && name.ends_with("_pingpong"))
            || name.starts_with("ib_write_")
            || name.starts_with("ib_read_")
            || name.starts_with("ib_send_")
    })?;
    let args = &words[program + 1..];
    args.iter().enumerate().find_map(|(i, arg)| match *arg {
        "-m" | "--mtu" => args.get(i + 1)?.parse().ok(),
        _ => arg.strip_prefix("--mtu=")?.parse().ok(),
    })
}

/// ibv_modify_qp's errors that only resolving a RoCE address gives: no net device behind the source
/// GID (ENODEV), or the peer's address unreachable from it (ENETUNREACH, EHOSTUNREACH) or not
/// answering (ETIMEDOUT). InfiniBand ports are LID-routed and resolve nothing at RTR.
fn address_resolution_failed(error: &str) -> bool {
    ["No such device", "Network is unreachable", "No route to host", "Connection timed out"]
        .iter()
        .any(|e| error.ends_with(e))
}

fn is_ipv4_mapped(gid: &str) -> bool {
    gid.to_ascii_lowercase().starts_with("0000:0000:0000:0000:0000:ffff:")
}

fn gids(records: &RdmaRecords, logs: &[NcclLog], analysis: &mut Analysis) {
    let mut rocev2: BTreeMap<String, &Gid> = BTreeMap::new();
    let mut lowest: BTreeMap<String, u32> = BTreeMap::new();
    for gid in &records.gids {
        let low = lowest.entry(gid.device.clone()).or_insert(gid.index);
        *low = (*low).min(gid.index);
        if gid.version == "v2" && is_ipv4_mapped(&gid.gid) {
            rocev2.entry(gid.device.clone()).or_insert(gid);
        }
    }
    for (device, gid) in &rocev2 {
        let sparse = lowest.get(device).is_some_and(|l| *l > 0);
        let note = if sparse {
            format!(
                "; the table starts at index {} (sparse: other entries belong to the host or other containers), so do not assume index 3",
                lowest.get(device).copied().unwrap_or(0)
            )
        } else {
            String::new()
        };
        analysis.observations.push(
            Finding::new(
                "rdma.gid.rocev2",
                Verdict::Pass,
                format!("{device} port {}", gid.port),
                format!(
                    "RoCE v2 IPv4 GID at index {} ({}){note}: NCCL_IB_GID_INDEX={} selects it",
                    gid.index,
                    gid.ipv4.as_deref().unwrap_or("no address shown"),
                    gid.index
                ),
            )
            .evidence(cite(&gid.evidence)),
        );
        analysis.push(
            Fact::new("rdma.rocev2_gid")
                .attr("nic", device)
                .attr("gid_index", gid.index)
                .attr("sparse", sparse)
                .evidence(gid.evidence.clone()),
        );
    }
    let subnets: BTreeSet<String> = rocev2
        .values()
        .filter_map(|g| g.ipv4.as_ref())
        .filter_map(|ip| ip.rsplit_once('.').map(|(net, _)| format!("{net}.0/24")))
        .collect();
    if subnets.len() > 1 && subnets.len() == rocev2.len() {
        let mut fact =
            Fact::new("rdma.per_rail_subnets").attr("subnets", subnets.iter().cloned().collect::<Vec<_>>().join(", "));
        for gid in rocev2.values() {
            fact = fact.evidence(gid.evidence.clone());
        }
        analysis.observations.push(Finding::new(
            "rdma.gid.subnets",
            Verdict::Pass,
            "node",
            format!(
                "each NIC in its own subnet ({}): per-rail L3 addressing, typical of rail-optimised fabrics",
                fact.get("subnets").unwrap_or("")
            ),
        ));
        analysis.push(fact);
    }
    // The GID index NCCL used: set explicitly, or its default.
    let gid_settings: Vec<&super::nccl::Setting> =
        logs.iter().flat_map(|l| l.settings.iter()).filter(|s| s.name == "NCCL_IB_GID_INDEX").collect();
    // ibv_modify_qp failing with ENODEV ("No such device") says RoCE as plainly as a link-layer
    // line: ib_core returns it when the source GID entry has no net device behind it
    // (drivers/infiniband/core/verbs.c, ib_resolve_unicast_gid_dmac -> rdma_read_gid_attr_ndev_rcu),
    // a path only RoCE address handles take; the GID index names an empty or vanished entry. The
    // same resolution failing to reach the peer's address says it too (address_resolution_failed).
    let roce_evidence: Vec<Evidence> = analysis
        .facts
        .iter()
        .filter(|f| {
            f.name == "rdma.roce"
                || f.name == "nccl.roce"
                || (f.name == "nccl.qp_connect_failed" && f.get("error").is_some_and(address_resolution_failed))
                // The same resolution timing out or finding no route (tools.rs reads it).
                || (f.name == "rdma.qp_rtr_failed" && f.get("reason") == Some("address"))
        })
        .filter_map(|f| f.evidence.first().cloned())
        .collect();
    let roce = !roce_evidence.is_empty();
    if roce {
        // One fact for "the fabric is RoCE", whichever input said so (ibv_devinfo or NCCL's NET/IB list).
        let mut fact = Fact::new("roce").attr("meaning", "the RDMA link layer is Ethernet (RoCE)");
        for evidence in roce_evidence.into_iter().take(4) {
            fact = fact.evidence(evidence);
        }
        analysis.push(fact);
    }
    let retry_errors = analysis.facts.iter().any(|f| f.name == "nccl.wc_error" && f.get("status") == Some("12"))
        || analysis.has("nccl.qp_connect_failed");
    // NCCL_IB_GID_INDEX is NCCL's setting: its absence says something only where NCCL is the verbs
    // user (UCX, MPI and perftest choose or take their GID index otherwise).
    let nccl_speaks = logs.iter().any(|log| !log.is_empty());
    // A failing queue pair that NCCL shows on the IPv4-mapped RoCE v2 GID had the index it needed,
    // set or not.
    let routable_gid_used = analysis.has("nccl.gid_routable");
    if roce && retry_errors {
        if gid_settings.is_empty() && nccl_speaks && !routable_gid_used {
            analysis.push(
                Fact::new("nccl.gid_index_unset")
                    .attr("meaning", "no log line or launcher command given sets NCCL_IB_GID_INDEX"),
            );
        }
        for setting in &gid_settings {
            for (device, gid) in &rocev2 {
                if setting.value != gid.index.to_string() {
                    analysis.push(
                        Fact::new("nccl.gid_index_wrong")
                            .attr("nic", device)
                            .attr("gid_index", gid.index)
                            .attr("configured", &setting.value)
                            .evidence(setting.evidence.clone())
                            .evidence(gid.evidence.clone()),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn show_gids_rows_with_and_without_address() {
        let text = "mlx5_0\t1\t4\tfe80:0000:0000:0000:c025:a1ff:fe31:2e81\t\t\tv1\tnet1\nmlx5_0\t1\t7\t0000:0000:0000:0000:0000:ffff:0a9c:8184\t10.156.129.132  \tv2\tnet1\nmlx5_3\t1\t7\t0000:0000:0000:0000:0000:ffff:0a9c:8d84\t10.156.14\n";
        let records = parse("f", text);
        assert_eq!(records.gids.len(), 2);
        assert_eq!(records.gids[1].ipv4.as_deref(), Some("10.156.129.132"));
        assert_eq!(records.gids[0].ipv4, None);
    }

    /// hustcat/k8s-rdma-device-plugin#8: a container given one SR-IOV virtual function runs
    /// ibv_devinfo; the other functions are listed but cannot be opened. Every such line is cited,
    /// so none is left as an unexplained error; with no device opened nothing is said.
    #[test]
    fn devices_listed_but_not_opened_beside_one_that_opened_were_not_given() {
        let text = "Failed to open device\nFailed to open device\nhca_id: mlx4_2\n        fw_ver:                         2.40.7000\n        phys_port_cnt:                  1\n                port:   1\n                        state:                  PORT_ACTIVE (4)\n                        link_layer:             InfiniBand\n\nFailed to open device\n";
        let records = parse("devinfo.txt", text);
        assert_eq!(records.unopened.iter().map(|e| e.line).collect::<Vec<_>>(), [1, 2, 10]);
        let mut analysis = Analysis::default();
        analyze(&records, &[], &mut analysis);
        let given = analysis.facts.iter().find(|f| f.name == "rdma.devices_not_given").expect("fact");
        assert_eq!((given.get("count"), given.get("opened")), (Some("3"), Some("mlx4_2")));
        assert_eq!(given.evidence.len(), 3);
        assert!(analysis.observations.iter().any(|o| o.id == "rdma.device.open" && o.verdict == Verdict::Warn));
        let alone = parse("devinfo.txt", "Failed to open device\nFailed to open device\n");
        let mut analysis = Analysis::default();
        analyze(&alone, &[], &mut analysis);
        assert!(!analysis.has("rdma.devices_not_given"), "no device opened: not this reading");
    }

    /// NVIDIA/nccl-tests#185: NCCL's modify_qp finds no route to its peer's GID, which says RoCE.
    #[test]
    fn a_queue_pair_whose_address_cannot_be_resolved_is_on_roce() {
        let roce = |error: &str| {
            let mut analysis = Analysis::default();
            let line = Evidence::new("log", 1, &format!("h:1:2 [0] misc/ibvwrap.cc:187 NCCL WARN {error}"));
            analysis.push(Fact::new("nccl.qp_connect_failed").attr("error", error).evidence(line));
            analyze(&RdmaRecords::default(), &[], &mut analysis);
            analysis.has("roce")
        };
        assert!(roce("Call to ibv_modify_qp failed with error Network is unreachable"));
        assert!(roce("No such device"));
        assert!(!roce("Call to ibv_modify_qp failed with error Invalid argument"));
    }

    #[test]
    fn a_verbs_tests_path_mtu_above_the_ports_active_mtu() {
        // live4thee's RoCE post: a pingpong asked for MTU 4096 on a port whose active MTU is 1024.
        let text = "$ ibv_srq_pingpong -d mlx5_bond_0 -g 3 -n 100 -q 2 -m 4096 node-2\nFailed status transport retry counter exceeded (12) for wr_id 2\nhca_id: mlx5_bond_0\n        port:   1\n                state:                  PORT_ACTIVE (4)\n                active_mtu:             1024 (3)\n";
        let mtu_fact = |text: &str| {
            let mut analysis = Analysis::default();
            analyze(&parse("f", text), &[], &mut analysis);
            analysis.facts.into_iter().find(|f| f.name == "rdma.mtu_above_port")
        };
        let above = mtu_fact(text).expect("mtu fact");
        assert_eq!((above.get("requested"), above.get("active")), (Some("4096"), Some("1024")));
        assert!(mtu_fact(&text.replace("-m 4096", "-m 1024")).is_none());
        assert_eq!(requested_test_mtu("ib_write_bw -d mlx5_0 --mtu=2048 10.0.0.1"), Some(2048));
        assert_eq!(requested_test_mtu("make -m 4096"), None);
    }
}
