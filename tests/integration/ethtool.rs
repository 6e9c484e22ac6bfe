//! Real-kernel tests of the ethtool ioctl reader (`probes::ethtool`) and the DCB netlink reader
//! (`probes::dcb`), on devices created for the test in a throwaway network namespace.
//!
//! The namespace test needs root and iproute2 (`ip`, `tc`). The parent test builds the namespace, then
//! runs this same test binary inside it (`ip netns exec NS <this binary> --exact ethtool::inside_namespace
//! --ignored`), so every socket the readers open belongs to the namespace; a guard deletes the namespace
//! (and with it every device in it) even when an assertion fails. Without root or `ip` it prints a loud
//! SKIP line, or fails when FABRICDOCTOR_REQUIRE_NETNS=1.
//!
//! What the kernel offers to count with: veth's ethtool statistics are `peer_ifindex` and per-queue XDP
//! counters (drivers/net/veth.c, `veth_get_ethtool_stats`), which only move on veth's NAPI path (XDP or
//! GRO enabled), not for ordinary traffic. So the pair shows that names and values are read and paired
//! (each end's `peer_ifindex` is the other end's ifindex), and an ifb device (drivers/net/ifb.c) that
//! the veth's ingress is redirected to (`tc ... mirred egress redirect`) shows counters growing with
//! packets the test sends: its `rx_queue_0_packets`/`tx_queue_0_packets` count every redirected packet.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use fabricdoctor_probes::dcb::{read_pfc, DcbError};
use fabricdoctor_probes::ethtool::{format_stats_text, parse_stats_text, read_stats, EthtoolError};

/// Set (to the namespace name) for the child run inside the namespace; its absence makes the inner test
/// a no-op when someone runs ignored tests directly.
const INNER_ENV: &str = "FABRICDOCTOR_ETHTOOL_NETNS";
/// "1" when the parent could set up the ifb redirect, so the child checks counter growth.
const INNER_IFB_ENV: &str = "FABRICDOCTOR_ETHTOOL_NETNS_IFB";
/// The line the child prints when every assertion held, so a child that ran no test cannot pass.
const INNER_DONE: &str = "ethtool-netns: all inner assertions held";

const VETH_A: &str = "fd-veth-a";
const VETH_B: &str = "fd-veth-b";
const IFB: &str = "fd-ifb";
/// TEST-NET-1 (RFC 5737): never routed, and private to the namespace anyway.
const ADDRESS_A: &str = "192.0.2.1";
const BROADCAST: &str = "192.0.2.255";
const PACKETS_SENT: u64 = 3;
const CHILD_TIMEOUT: Duration = Duration::from_secs(60);

#[test]
fn loopback_has_no_statistics_and_no_dcb() {
    // Loopback's ethtool_ops have no get_sset_count (drivers/net/loopback.c), and it has no dcbnl_ops.
    let error = read_stats("lo").expect_err("lo has no ethtool statistics");
    assert!(error.is_no_statistics(), "{error}");
    assert_eq!(error.to_string(), "lo has no ethtool statistics (its driver does not support ETHTOOL_GSSET_INFO)");
    let error = read_pfc("lo").expect_err("lo has no DCB");
    assert!(matches!(error, DcbError::NoDcbSupport { .. }), "{error}");
}

#[test]
fn missing_interface_is_not_found_for_both_readers() {
    let name = "fd-missing0";
    let error = read_stats(name).expect_err("no such interface");
    assert!(matches!(error, EthtoolError::InterfaceNotFound { .. }), "{error}");
    assert_eq!(error.to_string(), "ethtool ETHTOOL_GSSET_INFO on fd-missing0: no such interface");
    let error = read_pfc(name).expect_err("no such interface");
    assert!(matches!(error, DcbError::InterfaceNotFound { .. }), "{error}");
}

#[test]
fn veth_and_ifb_statistics_in_a_network_namespace() {
    let Some(namespace) = Namespace::create_or_skip() else {
        return;
    };
    namespace.ip(&["link", "add", "name", VETH_A, "type", "veth", "peer", "name", VETH_B]);
    namespace.ip(&["link", "add", "name", IFB, "type", "ifb"]);
    for device in ["lo", VETH_A, VETH_B, IFB] {
        namespace.ip(&["link", "set", "dev", device, "up"]);
    }
    namespace.ip(&["address", "add", &format!("{ADDRESS_A}/24"), "dev", VETH_A]);
    // Everything arriving on the B end goes through the ifb device (u32 matching every packet).
    let redirected = namespace.try_tc(&["qdisc", "add", "dev", VETH_B, "handle", "ffff:", "ingress"]).and_then(|()| {
        namespace.try_tc(&[
            "filter", "add", "dev", VETH_B, "parent", "ffff:", "protocol", "all", "u32", "match", "u32", "0", "0",
            "action", "mirred", "egress", "redirect", "dev", IFB,
        ])
    });
    if let Err(problem) = &redirected {
        assert!(!required(), "tc redirect to ifb failed but FABRICDOCTOR_REQUIRE_NETNS=1: {problem}");
        crate::support::loud_eprintln!("SKIP (part): counter growth not checked, tc redirect to ifb failed: {problem}");
    }

    let exe = std::env::current_exe().expect("test binary path");
    let mut child = Command::new("ip")
        .args(["netns", "exec", &namespace.name])
        .arg(exe)
        .args(["--exact", "ethtool::inside_namespace", "--ignored", "--nocapture", "--test-threads=1"])
        .env(INNER_ENV, &namespace.name)
        .env(INNER_IFB_ENV, if redirected.is_ok() { "1" } else { "0" })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ip netns exec runs");
    let deadline = Instant::now() + CHILD_TIMEOUT;
    while child.try_wait().expect("wait for the child").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().expect("child output");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("--- inside {} ---\n{stdout}{stderr}--- end ---", namespace.name);
    assert!(output.status.success(), "the test inside the namespace failed ({})", output.status);
    assert!(stdout.contains(INNER_DONE), "the test inside the namespace did not run");
}

/// Runs only inside the namespace built by `veth_and_ifb_statistics_in_a_network_namespace`.
#[test]
#[ignore = "helper: run by veth_and_ifb_statistics_in_a_network_namespace inside its network namespace"]
fn inside_namespace() {
    let Ok(namespace) = std::env::var(INNER_ENV) else {
        crate::support::loud_eprintln!("SKIP: inside_namespace only runs inside the namespace its parent test builds");
        return;
    };
    println!("namespace {namespace}");

    // veth: names and values are read and paired.
    let stats_a = read_stats(VETH_A).expect("veth A statistics");
    let stats_b = read_stats(VETH_B).expect("veth B statistics");
    let names: Vec<&str> = stats_a.iter().map(|(name, _)| name.as_str()).collect();
    println!("{VETH_A}: {} statistics: {}", stats_a.len(), names.join(" "));
    assert_eq!(value(&stats_a, "peer_ifindex"), ifindex(VETH_B), "{VETH_A}'s peer_ifindex is {VETH_B}'s ifindex");
    assert_eq!(value(&stats_b, "peer_ifindex"), ifindex(VETH_A), "{VETH_B}'s peer_ifindex is {VETH_A}'s ifindex");
    assert_eq!(parse_stats_text(&format_stats_text(VETH_A, &stats_a)).expect("parse"), stats_a);

    // Neither veth nor loopback implements DCB or has statistics (loopback).
    let error = read_pfc(VETH_A).expect_err("veth has no DCB");
    assert!(matches!(error, DcbError::NoDcbSupport { .. }), "{error}");
    assert!(error.is_unsupported());
    println!("{VETH_A} PFC: {error}");
    let error = read_stats("lo").expect_err("lo has no statistics");
    assert!(error.is_no_statistics(), "{error}");
    println!("lo: {error}");

    if std::env::var(INNER_IFB_ENV).as_deref() == Ok("1") {
        counters_grow_with_traffic();
    }
    println!("{INNER_DONE}");
}

/// Broadcasts from the A end arrive on B and are redirected through the ifb: its ethtool counters grow by
/// at least the packets sent (the kernel's own IPv6 neighbour discovery may add more), and agree with the
/// kernel's netdev statistics in sysfs, read just before and just after.
fn counters_grow_with_traffic() {
    let before = read_stats(IFB).expect("ifb statistics");
    println!("{IFB} before: {before:?}");
    let socket = std::net::UdpSocket::bind((ADDRESS_A, 0)).expect("bind on the A end");
    socket.set_broadcast(true).expect("SO_BROADCAST");
    for _ in 0..PACKETS_SENT {
        socket.send_to(b"fabricdoctor ethtool test", (BROADCAST, 9)).expect("send a broadcast");
    }
    // ifb forwards from a tasklet: wait (bounded) until the packets show.
    let deadline = Instant::now() + Duration::from_secs(5);
    let grown = |stats: &[(String, u64)], name: &str| value(stats, name).saturating_sub(value(&before, name));
    let after = loop {
        let sysfs_rx_before = sysfs_statistic(IFB, "rx_packets");
        let sysfs_tx_before = sysfs_statistic(IFB, "tx_packets");
        let stats = read_stats(IFB).expect("ifb statistics");
        let sysfs_rx_after = sysfs_statistic(IFB, "rx_packets");
        let sysfs_tx_after = sysfs_statistic(IFB, "tx_packets");
        // ifb_stats64 sums the same per-queue counters ethtool reports (one queue here).
        let rx = value(&stats, "rx_queue_0_packets");
        let tx = value(&stats, "tx_queue_0_packets");
        assert!(
            (sysfs_rx_before..=sysfs_rx_after).contains(&rx),
            "ethtool rx {rx}, sysfs {sysfs_rx_before}..={sysfs_rx_after}"
        );
        assert!(
            (sysfs_tx_before..=sysfs_tx_after).contains(&tx),
            "ethtool tx {tx}, sysfs {sysfs_tx_before}..={sysfs_tx_after}"
        );
        let done =
            grown(&stats, "rx_queue_0_packets") >= PACKETS_SENT && grown(&stats, "tx_queue_0_packets") >= PACKETS_SENT;
        if done || Instant::now() > deadline {
            break stats;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    println!("{IFB} after: {after:?}");
    for name in ["rx_queue_0_packets", "tx_queue_0_packets"] {
        assert!(
            grown(&after, name) >= PACKETS_SENT,
            "{name} grew by {} after {PACKETS_SENT} packets",
            grown(&after, name)
        );
    }
    assert!(value(&after, "rx_queue_0_bytes") > value(&before, "rx_queue_0_bytes"));
}

/// The value of the only statistic called `name`.
#[track_caller]
fn value(stats: &[(String, u64)], name: &str) -> u64 {
    let matching: Vec<u64> = stats.iter().filter(|(n, _)| n == name).map(|(_, v)| *v).collect();
    assert_eq!(matching.len(), 1, "{name} in {stats:?}");
    matching[0]
}

fn ifindex(device: &str) -> u64 {
    sysfs_number(&Path::new("/sys/class/net").join(device).join("ifindex"))
}

fn sysfs_statistic(device: &str, name: &str) -> u64 {
    sysfs_number(&Path::new("/sys/class/net").join(device).join("statistics").join(name))
}

fn sysfs_number(path: &Path) -> u64 {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    text.trim().parse().unwrap_or_else(|e| panic!("{}: {text:?}: {e}", path.display()))
}

fn required() -> bool {
    std::env::var("FABRICDOCTOR_REQUIRE_NETNS").is_ok_and(|v| v == "1")
}

/// A network namespace that exists for the life of this value; dropping it (also while unwinding from a
/// failed assertion) deletes it and every device in it.
struct Namespace {
    name: String,
}

impl Namespace {
    /// Create `fd-eth-<pid>-<n>`, or print why not and return `None` (failing instead when
    /// FABRICDOCTOR_REQUIRE_NETNS=1).
    fn create_or_skip() -> Option<Namespace> {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let skip = |reason: String| {
            assert!(!required(), "network namespace test required (FABRICDOCTOR_REQUIRE_NETNS=1) but {reason}");
            crate::support::loud_eprintln!("SKIP: ethtool/DCB network namespace test: {reason}");
            None
        };
        if !is_root() {
            return skip("not running as root (needs CAP_SYS_ADMIN and CAP_NET_ADMIN for ip netns)".into());
        }
        if Command::new("ip").arg("-V").output().is_err() {
            return skip("`ip` (iproute2) not found".into());
        }
        let name = format!("fd-eth-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
        let output = Command::new("ip").args(["netns", "add", &name]).output().expect("ip runs");
        if !output.status.success() {
            return skip(format!("`ip netns add {name}` failed: {}", String::from_utf8_lossy(&output.stderr).trim()));
        }
        Some(Namespace { name })
    }

    /// `ip -n NS ARGS`, which must succeed.
    #[track_caller]
    fn ip(&self, args: &[&str]) {
        let output = Command::new("ip").args(["-n", &self.name]).args(args).output().expect("ip runs");
        assert!(
            output.status.success(),
            "ip -n {} {}: {}",
            self.name,
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// `tc -n NS ARGS`; an error says why (tc missing, or the kernel lacks a module).
    fn try_tc(&self, args: &[&str]) -> Result<(), String> {
        let output = Command::new("tc")
            .args(["-n", &self.name])
            .args(args)
            .output()
            .map_err(|e| format!("tc (iproute2) not runnable: {e}"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!("tc {}: {}", args.join(" "), String::from_utf8_lossy(&output.stderr).trim()))
        }
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        match Command::new("ip").args(["netns", "delete", &self.name]).output() {
            Ok(output) if output.status.success() => {}
            Ok(output) => eprintln!(
                "WARNING: could not delete network namespace {}: {}",
                self.name,
                String::from_utf8_lossy(&output.stderr).trim()
            ),
            Err(error) => eprintln!("WARNING: could not delete network namespace {}: {error}", self.name),
        }
    }
}

/// Effective uid 0, from /proc/self/status ("Uid: real effective saved fs").
fn is_root() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        .is_some_and(|effective| effective == "0")
}
