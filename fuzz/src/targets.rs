//! The decoders under test, each with seeds built from real messages (what the peers write) or
//! the repository's fixtures (what the files hold).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use fabricdoctor_burnin::auth::{hex, AgentHandshake, CoordinatorHandshake, Session, Token};
use fabricdoctor_burnin::protocol::{
    read_frame, read_sealed, write_frame, Auth, CollectiveKind, DataTransport, MeasureSpec, RailAddress, RailTarget,
    Request, Response, TrafficSpec, MAGIC, MAX_FRAME, MAX_UNAUTHENTICATED_FRAME, PROTOCOL_VERSION,
};
use fabricdoctor_perf::handshake::{check_hello, check_limits, decode_frame, hello, Frame, ServerConstraints};
use fabricdoctor_perf::RunParameters;
use fabricdoctor_playbooks::triage::pickle;
use fabricdoctor_playbooks::{Input, Playbook};

use crate::Target;

pub fn all() -> Vec<Target> {
    vec![
        Target { name: "burnin-frame", seeds: burnin_frame_seeds, run: burnin_frame },
        Target { name: "burnin-handshake", seeds: handshake_seeds, run: burnin_handshake },
        Target { name: "burnin-sealed", seeds: sealed_seeds, run: burnin_sealed },
        Target { name: "perf-hello", seeds: perf_hello_seeds, run: perf_hello },
        Target { name: "collective-hello", seeds: collective_seeds, run: collective_hello },
        Target { name: "pci-config", seeds: pci_config_seeds, run: pci_config },
        Target { name: "module-eeprom", seeds: module_eeprom_seeds, run: module_eeprom },
        Target { name: "sysfs-text", seeds: sysfs_seeds, run: sysfs_text },
        Target { name: "triage", seeds: triage_seeds, run: triage },
        Target { name: "pickle", seeds: pickle_seeds, run: pickle_reader },
    ]
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn frame_of<T: serde::Serialize>(message: &T) -> Vec<u8> {
    let mut bytes = Vec::new();
    let _ = write_frame(&mut bytes, message);
    bytes
}

fn spec() -> MeasureSpec {
    MeasureSpec {
        traffic: TrafficSpec { traffic_class: Some(106), service_level: Some(3), gid_index: Some(3) },
        bandwidth_ms: 500,
        message_bytes: 65536,
        queue_pairs: 2,
        tx_depth: 4,
        latency_iterations: 300,
        latency_bytes: 64,
        validate: true,
        transport: DataTransport::Verbs,
    }
}

fn requests() -> Vec<Request> {
    let ticket = "ab".repeat(32);
    vec![
        Request::Ping {},
        Request::Check { profile: None },
        Request::SampleCounters {},
        Request::Loopback { rail: "rail0".into(), spec: spec() },
        Request::Serve {
            rail: "rail0".into(),
            sessions: 2,
            timeout_s: 30,
            transport: DataTransport::Tcp,
            traffic: TrafficSpec::default(),
            ticket_nonce: "0f".repeat(16),
        },
        Request::Measure {
            server: "10.0.0.2".parse().expect("ip"),
            port: 40000,
            spec: spec(),
            timeout_s: 30,
            rail: Some("rail1".into()),
            ticket: ticket.clone(),
        },
        Request::MeasureRails {
            targets: vec![RailTarget {
                rail: "rail0".into(),
                server: "10.0.0.2".parse().expect("ip"),
                port: 40001,
                ticket: ticket.clone(),
            }],
            spec: spec(),
            timeout_s: 30,
        },
        Request::ReservePort { rail: "rail0".into() },
        Request::Collective {
            collective: CollectiveKind::Allreduce,
            rank: 3,
            world: 4,
            master: "10.0.0.1".parse().expect("ip"),
            master_port: 29500,
            bytes: 1 << 20,
            iterations: 2,
            timeout_s: 30,
            transport: DataTransport::Tcp,
            traffic: TrafficSpec::default(),
            rail: Some("rail0".into()),
            ticket,
        },
    ]
}

fn burnin_frame_seeds() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = requests().iter().map(frame_of).collect();
    seeds.push(frame_of(&Auth::Hello { magic: MAGIC.into(), version: PROTOCOL_VERSION, nonce: "01".repeat(32) }));
    seeds.push(frame_of(&Auth::Challenge { nonce: "02".repeat(32) }));
    seeds.push(frame_of(&Auth::Proof { proof: "03".repeat(32) }));
    seeds.push(frame_of(&Auth::Welcome {
        hostname: "node7".into(),
        tool_version: "0.1.0".into(),
        rails: vec![RailAddress {
            name: "rail0".into(),
            address: "10.0.0.7".parse().expect("ip"),
            device: None,
            link: None,
        }],
        limits: fabricdoctor_burnin::protocol::AgentLimits::of_this_build(8),
    }));
    seeds.push(frame_of(&Response::Serving { port: 40000 }));
    seeds.push(frame_of(&Response::Error { reason: "no rail".into() }));
    seeds
}

/// The agent's and the coordinator's readers of every message the other side may send, and the
/// bounds an agent checks before it runs a step.
fn burnin_frame(bytes: &[u8]) {
    if let Ok(request) = read_frame::<Request>(&mut &bytes[..], MAX_FRAME) {
        let _ = request.validate();
    }
    let _ = read_frame::<Auth>(&mut &bytes[..], MAX_UNAUTHENTICATED_FRAME);
    let _ = read_frame::<Response>(&mut &bytes[..], MAX_FRAME);
}

fn token() -> Token {
    Token::from_text("fuzzing-token-0123456789abcdef", "fuzz").expect("token")
}

fn handshake_seeds() -> Vec<Vec<u8>> {
    vec![hex(&[1; 32]).into_bytes(), hex(&[2; 32]).into_bytes(), b"zz".to_vec(), "é".repeat(32).into_bytes()]
}

/// Each side's handshake on whatever text the other side sent as its nonce or proof.
fn burnin_handshake(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let mut agent = AgentHandshake::new(token(), [2; 32]);
    let _ = agent.verify(&text);
    let _ = agent.challenge(&text);
    let _ = agent.verify(&text);
    let _ = CoordinatorHandshake::new(token(), [1; 32]).respond(&text);
}

/// A coordinator's and an agent's session as after a real handshake.
fn sessions() -> (Session, Session) {
    let coordinator = CoordinatorHandshake::new(token(), [1; 32]);
    let mut agent = AgentHandshake::new(token(), [2; 32]);
    let nonce = agent.challenge(&coordinator.nonce()).expect("challenge");
    let (proof, coordinator_session) = coordinator.respond(&nonce).expect("respond");
    (coordinator_session, agent.verify(&proof).expect("verify"))
}

fn sealed_seeds() -> Vec<Vec<u8>> {
    requests()
        .iter()
        .map(|request| {
            let (mut coordinator, _) = sessions();
            let mut frame = frame_of(request);
            let tag = coordinator.seal(&frame[4..]);
            frame.extend_from_slice(&tag);
            frame
        })
        .collect()
}

/// The agent's reader of the coordinator's sealed steps (length, body, tag, then the body).
fn burnin_sealed(bytes: &[u8]) {
    let (_, mut agent) = sessions();
    let _ = read_sealed::<Request>(&mut &bytes[..], &mut agent, MAX_FRAME);
}

fn perf_hello_seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    let parameters = RunParameters { queue_pairs: 4, size: 65536, ..RunParameters::default() };
    let endpoints = vec![serde_json::json!({ "qpn": 17, "psn": 99, "gid": "fe80::1", "rkey": 5, "address": 4096 })];
    for frame in [
        hello(&parameters, endpoints.clone(), Some(&"ab".repeat(32))),
        hello(&parameters, endpoints, None),
        Frame::Accept {
            version: 1,
            tool_version: "0.1.0".into(),
            endpoints: vec![serde_json::json!({ "port": 4000 })],
        },
        Frame::Done { messages: 1000 },
        Frame::Reject { reason: "no".into() },
    ] {
        let mut bytes = Vec::new();
        let _ = fabricdoctor_perf::handshake::write_message(&mut bytes, "fuzz", &frame);
        seeds.push(bytes);
    }
    seeds
}

/// A perf server's reading of a client's first frame: decode, then the checks that come before
/// anything is allocated (ticket, version, every bound).
fn perf_hello(bytes: &[u8]) {
    let Ok(frame) = decode_frame::<Frame>(bytes, "fuzz") else { return };
    let ticketed = ServerConstraints { ticket: Some("ab".repeat(32)), ..ServerConstraints::default() };
    for constraints in [ServerConstraints::default(), ticketed] {
        if let Ok(parameters) = check_hello(&frame, &constraints) {
            let _ = check_limits(&parameters);
        }
    }
}

fn collective_seeds() -> Vec<Vec<u8>> {
    let ticket = "ab".repeat(32);
    [
        format!(r#"{{"message":"join","rank":1,"world":4,"data_port":40000,"fingerprint":"job","ticket":"{ticket}"}}"#),
        r#"{"message":"table","hosts":[null,"10.0.0.2","10.0.0.3","10.0.0.4"],"ports":[1,2,3,4]}"#.to_string(),
        format!(r#"{{"rank":3,"channel":1,"ticket":"{ticket}"}}"#),
        r#"{"rank":99,"channel":0}"#.to_string(),
        r#"{"message":"abort","rank":2,"reason":"boom"}"#.to_string(),
    ]
    .iter()
    .map(|body| {
        let mut bytes = (body.len() as u32).to_be_bytes().to_vec();
        bytes.extend_from_slice(body.as_bytes());
        bytes
    })
    .collect()
}

/// What a collective's rank 0 reads from whoever connects: joins, tables and data hellos.
fn collective_hello(bytes: &[u8]) {
    let _ = fabricdoctor_perf::collective::judge_peer_message(bytes);
}

fn files_named(dir: &Path, name: &str, limit: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if out.len() >= limit {
            return;
        }
        if path.is_dir() {
            files_named(&path, name, limit, out);
        } else if path.file_name().is_some_and(|n| n == name) {
            out.push(path);
        }
    }
}

fn pci_config_seeds() -> Vec<Vec<u8>> {
    let mut paths = Vec::new();
    for machine in ["hgx-h100", "gpu-h100-device", "dgx-a100", "faulty-node"] {
        files_named(&repository().join("tests/fixtures").join(machine), "config", paths.len() + 6, &mut paths);
    }
    paths.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

/// PCI configuration space as sysfs hands it (64, 256 or 4096 bytes, or anything a capture holds):
/// the capability walks must stay bounded whatever the pointers say.
fn pci_config(bytes: &[u8]) {
    let _ = fabricdoctor_probes::pci_config::parse_config_space(bytes);
}

/// The half pages a module decode reads, in the order [`module_eeprom`] splits its input into.
const MODULE_PAGES: [&str; 8] =
    ["lower", "page-00h", "page-01h", "page-02h", "page-03h", "page-11h", "a2-lower", "a2-page-00h"];

fn module_eeprom_seeds() -> Vec<Vec<u8>> {
    // The fixtures' CMIS modules, and the real dumps of tests/optics in their canonical form.
    let mut seeds = Vec::new();
    let module = repository().join("tests/fixtures/hgx-h100/ethtool/ibp25s0/module-eeprom");
    let mut fixture = Vec::new();
    for name in MODULE_PAGES {
        fixture.extend(std::fs::read(module.join(name)).unwrap_or_else(|_| vec![0; 128]));
    }
    seeds.push(fixture);
    let Ok(entries) = std::fs::read_dir(repository().join("tests/optics")) else { return seeds };
    for entry in entries.flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path()) else { continue };
        let Some(pages) = text.split("\n--- pages\n").nth(1) else { continue };
        let mut by_name = std::collections::BTreeMap::new();
        let mut current = String::new();
        for line in pages.lines() {
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                current = name.to_string();
            } else {
                let bytes = line.split_whitespace().filter_map(|b| u8::from_str_radix(b, 16).ok());
                by_name.entry(current.clone()).or_insert_with(Vec::new).extend(bytes);
            }
        }
        let mut seed = Vec::new();
        for name in MODULE_PAGES {
            seed.extend(by_name.get(name).cloned().unwrap_or_else(|| vec![0; 128]));
        }
        seeds.push(seed);
    }
    seeds
}

/// Module memory as the kernel or a capture hands it: 128-byte half pages in [`MODULE_PAGES`]
/// order, the last possibly short or missing; and the same bytes as an ethtool netlink reply.
/// Decoding must give a module or an error naming a page, whatever the identifier, the checksums
/// or the lane counts say.
fn module_eeprom(bytes: &[u8]) {
    use fabricdoctor_probes::module_eeprom::HalfPage;
    use fabricdoctor_probes::transceiver::{decode, pages_after, ModuleMemory};
    let mut memory = ModuleMemory::default();
    for (name, chunk) in MODULE_PAGES.iter().zip(bytes.chunks(128)) {
        if let Some(half) = HalfPage::from_file_name(name) {
            memory.pages.insert(half, chunk.to_vec());
        }
    }
    let _ = decode(&memory);
    let _ = pages_after(&bytes[..bytes.len().min(128)]);
    let _ = fabricdoctor_probes::module_eeprom::parse_eeprom_reply(bytes);
}

fn sysfs_seeds() -> Vec<Vec<u8>> {
    [
        "4: ACTIVE\n",
        "400 Gb/sec (4X NDR)\n",
        "InfiniBand\n",
        "fe80:0000:0000:0000:0c42:a103:0003:6f2e\n",
        "RoCE v2\n",
        "32.0 GT/s PCIe\n",
        "16\n",
        "0x15b3\n",
        "0-15,32-47\n",
        "RxErr 2\nBadTLP 0\nTOTAL_ERR_COR 2\n",
        "Max locked memory         unlimited            unlimited            bytes\n",
        "MemTotal:       1056512 kB\nMemFree:        1000000 kB\n",
        "shm /dev/shm tmpfs rw,nosuid,nodev,size=65536k 0 0\n",
        "36 35 0:32 / /dev/shm rw,nosuid shared:9 - tmpfs shm rw,size=65536k\n",
        "nvidia_peermem 16384 0 - Live 0x0000000000000000\n",
        "12345.67 8910.11\n",
        "18446744073709551615\n",
        "NIC statistics:\n     rx_prio3_pause: 10\n",
        "PFC configuration:\n\tpriority    0   1   2   3\n\tenabled     0   0   0   1\n",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect()
}

/// Every text parser of the probes on the same bytes (a capture or a sysfs file may hold anything).
fn sysfs_text(bytes: &[u8]) {
    use fabricdoctor_probes::{counters, dcb, ethtool, host, numa, pci, rdma};
    let text = String::from_utf8_lossy(bytes);
    let text = text.as_ref();
    let _ = counters::parse_counter(text);
    let _ = counters::parse_uptime(text);
    let _ = dcb::parse_pfc_text(text);
    let _ = ethtool::parse_stats_text(text);
    let _ = fabricdoctor_probes::gpu::parse_nvml_reading(text);
    let _ = host::parse_memlock(text);
    let _ = host::parse_meminfo(text);
    let _ = host::parse_mountinfo(text);
    let _ = host::parse_mounts(text);
    let _ = host::parse_tmpfs_size(text);
    let _ = host::parse_modules(text);
    let _ = numa::parse_cpulist(text);
    let _ = pci::parse_hex(text);
    let _ = pci::parse_link_speed(text);
    let _ = pci::parse_link_width(text);
    let _ = pci::parse_aer_counters(text);
    let _ = rdma::parse_port_state(text);
    let _ = rdma::parse_port_rate(text);
    let _ = rdma::parse_link_layer(text);
    let _ = rdma::parse_gid(text);
    let _ = rdma::parse_gid_type(text);
}

fn playbooks() -> &'static [Playbook] {
    static PLAYBOOKS: OnceLock<Vec<Playbook>> = OnceLock::new();
    PLAYBOOKS.get_or_init(|| Playbook::load(None).unwrap_or_default())
}

fn triage_seeds() -> Vec<Vec<u8>> {
    let dir = repository().join("tests/fixtures/triage");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect())
        .unwrap_or_default();
    paths.sort();
    // Small inputs keep a million runs within CI time; a mutant of one is as hostile as any.
    paths.iter().filter_map(|p| std::fs::read(p).ok()).filter(|b| b.len() <= 8192).collect()
}

/// Triage end to end on one pasted input: detection of its kind, every analyser, the rules and
/// the text rendering.
fn triage(bytes: &[u8]) {
    let report = fabricdoctor_playbooks::triage(&[Input::new("input", bytes.to_vec())], playbooks());
    let _ = fabricdoctor_playbooks::triage::report::render_text(&report);
}

fn pickle_seeds() -> Vec<Vec<u8>> {
    let mut paths = Vec::new();
    files_named(&repository().join("tests/fixtures/triage/fr-dumps"), "nccl_trace_rank_0", 4, &mut paths);
    files_named(&repository().join("tests/fixtures/triage/fr-dumps"), "nccl_trace_rank_1", 4, &mut paths);
    paths.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

/// PyTorch flight-recorder dumps (pickle protocol 2-5), read by fabricdoctor's own bounded reader.
fn pickle_reader(bytes: &[u8]) {
    let _ = pickle::parse(bytes);
}
