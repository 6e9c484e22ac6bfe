//! `fabricdoctor perf` over the TCP transport: loopback runs of every operation and test with data
//! validation, parameter mismatches named by the handshake, a silent peer ending the run within the
//! timeout, and a run between two network namespaces joined by veth (root only).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{binary, stderr, stdout};

/// A `perf server` on an ephemeral port; killed on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(extra: &[&str], wrap: Option<&[&str]>) -> Server {
        let mut command = match wrap {
            Some(prefix) => {
                let mut command = Command::new(prefix[0]);
                command.args(&prefix[1..]).arg(env!("CARGO_BIN_EXE_fabricdoctor"));
                command
            }
            None => binary(),
        };
        let mut child = command
            .args(["perf", "server", "--port", "0", "--transport", "tcp"])
            .args(extra)
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("server starts");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let first = lines.next().expect("server prints its address").expect("utf-8");
        // The transport is named as the CLI spells it, not as a Rust type ("(Tcp transport)" before).
        assert!(first.ends_with("; transport: tcp"), "{first:?}");
        let port = first
            .split("listening on ")
            .nth(1)
            .and_then(|rest| rest.split([' ', ';']).next())
            .and_then(|address| address.rsplit(':').next())
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("no port in {first:?}"));
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Server { child, port }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn client(host: &str, port: u16, args: &[&str]) -> std::process::Output {
    binary()
        .args(["perf", "client", host, "--port", &port.to_string(), "--transport", "tcp", "--json"])
        .args(args)
        .output()
        .expect("client runs")
}

fn report(output: &std::process::Output) -> serde_json::Value {
    assert_eq!(output.status.code(), Some(0), "client failed: {}", stderr(output));
    serde_json::from_slice(&output.stdout).expect("json report")
}

#[test]
fn every_operation_measures_bandwidth_and_latency_on_loopback_with_validation() {
    let server = Server::start(&[], None);
    for op in ["write", "read", "send"] {
        let bw = report(&client(
            "127.0.0.1",
            server.port,
            &["--op", op, "--size", "65536", "--iters", "2000", "--validate"],
        ));
        let result = &bw["runs"][0]["result"];
        assert!(result["bw_avg_gbps"].as_f64().expect("bw") > 0.01, "{op}: {result}");
        assert!(result["bw_peak_gbps"].as_f64().expect("peak") >= result["bw_avg_gbps"].as_f64().expect("avg") * 0.999);
        assert_eq!(result["iterations"], 2000);
        assert_eq!(bw["runs"][0]["server"]["validation_errors"], 0);
        // The receiving side verified every message: the server for write/send, the client for read.
        let receiver =
            if op == "read" { &bw["runs"][0]["client_verified"] } else { &bw["runs"][0]["server"]["verified"] };
        assert_eq!(receiver["messages"], 2000, "{op}: {receiver}");
        assert_eq!(receiver["bytes"], 2000 * 65536, "{op}: {receiver}");
        let lat = report(&client(
            "127.0.0.1",
            server.port,
            &["--op", op, "--test", "lat", "--size", "8", "--iters", "300", "--validate"],
        ));
        // Each reply was verified, after the round trip's clock stopped (Connection::settle).
        assert_eq!(lat["runs"][0]["client_verified"]["messages"], 300, "{op}: {lat}");
        let result = &lat["runs"][0]["result"];
        let (min, typical, p99) = (
            result["lat_min_us"].as_f64().expect("min"),
            result["lat_typical_us"].as_f64().expect("typ"),
            result["lat_p99_us"].as_f64().expect("p99"),
        );
        assert!(0.0 < min && min <= typical && typical <= p99, "{op}: {result}");
    }
}

/// `--validate` must be able to fail: one flipped bit in every 500th message is caught, and the error
/// names the message, its offset and both words.
#[test]
fn injected_corruption_fails_validation_naming_the_message_and_offset() {
    let server = Server::start(&[], None);
    let output = client(
        "127.0.0.1",
        server.port,
        &["--op", "send", "--size", "65536", "--iters", "1000", "--validate", "--inject-corruption", "500"],
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let error = stderr(&output);
    assert!(error.contains("2 validation errors on the server"), "{error}");
    assert!(error.contains("message 499: 1 byte(s) wrong, first at offset 32768: expected 0x"), "{error}");
}

/// Over verbs the hook corrupts SEND headers only; any other operation is refused by name, before
/// the device is looked for (this host has none), and nothing is connected to.
#[test]
fn injected_corruption_over_verbs_is_refused_for_other_operations() {
    let output = binary()
        .args(["perf", "client", "127.0.0.1", "--port", "9", "--transport", "verbs", "--op", "write"])
        .args(["--validate", "--inject-corruption", "5"])
        .output()
        .expect("client runs");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let error = stderr(&output);
    assert!(error.contains("--inject-corruption over verbs corrupts SEND headers: use it with --op send"), "{error}");
}

#[test]
fn a_size_sweep_and_duration_mode_keep_their_columns() {
    let server = Server::start(&[], None);
    let sweep = report(&client("127.0.0.1", server.port, &["--all-sizes", "--iters", "50", "--op", "send"]));
    let sizes: Vec<u64> =
        sweep["runs"].as_array().expect("runs").iter().map(|r| r["result"]["bytes"].as_u64().expect("bytes")).collect();
    assert_eq!(sizes.first(), Some(&2));
    assert_eq!(sizes.last(), Some(&(8 << 20)));
    let timed = report(&client("127.0.0.1", server.port, &["-D", "1s", "--size", "4096"]));
    let result = &timed["runs"][0]["result"];
    assert!(result["bw_min_interval_gbps"].as_f64().is_some(), "duration mode reports the slowest interval: {result}");
    assert!(result["seconds"].as_f64().expect("seconds") >= 0.9);
    let timed_lat = report(&client("127.0.0.1", server.port, &["-D", "500ms", "--test", "lat", "--size", "8"]));
    assert!(timed_lat["runs"][0]["result"]["lat_p99_9_us"].as_f64().is_some(), "duration mode keeps percentiles");
}

#[test]
fn bidirectional_bandwidth_counts_both_directions() {
    let server = Server::start(&[], None);
    let both = report(&client(
        "127.0.0.1",
        server.port,
        &["-b", "--size", "65536", "--iters", "1500", "--qps", "2", "--validate"],
    ));
    let result = &both["runs"][0]["result"];
    // 2 queue pairs x 1500 iterations each way.
    assert_eq!(result["iterations"], 6000, "{result}");
    assert_eq!(both["runs"][0]["connections"].as_array().expect("connections").len(), 4);
    assert!(result["bw_avg_gbps"].as_f64().expect("bw") > 0.01);
    let refused = client("127.0.0.1", server.port, &["-b", "--test", "lat"]);
    assert_eq!(refused.status.code(), Some(2));
}

#[test]
fn the_text_table_has_perftest_columns() {
    let server = Server::start(&[], None);
    let output = binary()
        .args([
            "perf",
            "client",
            "127.0.0.1",
            "--port",
            &server.port.to_string(),
            "--transport",
            "tcp",
            "--iters",
            "500",
            "--report-gbits",
        ])
        .output()
        .expect("client");
    let text = stdout(&output);
    assert!(text.contains("#bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"), "{text}");
}

#[test]
fn a_server_constraint_mismatch_names_the_field_on_both_sides() {
    let server = Server::start(&["--op", "read", "--size", "4096"], None);
    let output = client("127.0.0.1", server.port, &["--op", "write", "--size", "4096", "--iters", "10"]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("operation is Write on the client but Read on the server"), "{message}");
}

#[test]
fn a_silent_peer_ends_the_run_within_the_timeout_naming_it() {
    // Something that accepts connections but never speaks the protocol.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let holder = std::thread::spawn(move || {
        let connection = listener.accept();
        std::thread::sleep(Duration::from_secs(4));
        drop(connection);
    });
    let started = Instant::now();
    let output = client("127.0.0.1", port, &["--timeout", "1s", "--iters", "10"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
    let message = stderr(&output);
    assert!(message.contains(&format!("127.0.0.1:{port}")) && message.contains("sent no data"), "{message}");
    holder.join().expect("holder");
    // Nothing listening at all: a connect error naming the address.
    let output = client("127.0.0.1", port, &["--timeout", "1s"]);
    assert!(stderr(&output).contains(&format!("cannot connect to 127.0.0.1:{port}")), "{}", stderr(&output));
}

/// Two network namespaces joined by a veth pair, named uniquely per run and always deleted.
struct VethPair {
    names: [String; 2],
}

impl VethPair {
    fn create() -> Option<VethPair> {
        let unique = format!("{}-{}", std::process::id(), Instant::now().elapsed().subsec_nanos() % 10000);
        let names = [format!("fd-perf-a-{unique}"), format!("fd-perf-b-{unique}")];
        let pair = VethPair { names: names.clone() };
        let run = |args: &[&str]| Command::new("ip").args(args).status().map(|s| s.success()).unwrap_or(false);
        let ok = run(&["netns", "add", &names[0]])
            && run(&["netns", "add", &names[1]])
            && run(&[
                "-n", &names[0], "link", "add", "name", "fdpa", "type", "veth", "peer", "name", "fdpb", "netns",
                &names[1],
            ])
            && run(&["-n", &names[0], "addr", "add", "10.211.0.1/24", "dev", "fdpa"])
            && run(&["-n", &names[1], "addr", "add", "10.211.0.2/24", "dev", "fdpb"])
            && run(&["-n", &names[0], "link", "set", "fdpa", "up"])
            && run(&["-n", &names[1], "link", "set", "fdpb", "up"])
            && run(&["-n", &names[0], "link", "set", "lo", "up"])
            && run(&["-n", &names[1], "link", "set", "lo", "up"]);
        ok.then_some(pair)
    }
}

impl Drop for VethPair {
    fn drop(&mut self) {
        for name in &self.names {
            let _ = Command::new("ip").args(["netns", "del", name]).status();
        }
    }
}

#[test]
fn tcp_perf_between_two_network_namespaces() {
    let root = Command::new("id").arg("-u").output().map(|o| o.stdout == b"0\n").unwrap_or(false);
    if !root || Command::new("ip").arg("-V").output().is_err() {
        if std::env::var("FABRICDOCTOR_REQUIRE_NETNS").as_deref() == Ok("1") {
            panic!("FABRICDOCTOR_REQUIRE_NETNS=1 but not root or no `ip`");
        }
        crate::support::loud_eprintln!("SKIP: perf between network namespaces needs root and iproute2");
        return;
    }
    let pair = VethPair::create().expect("namespaces and veth created");
    let server = Server::start(&["--bind", "10.211.0.1"], Some(&["ip", "netns", "exec", &pair.names[0]]));
    let output = Command::new("ip")
        .args(["netns", "exec", &pair.names[1], env!("CARGO_BIN_EXE_fabricdoctor")])
        .args(["perf", "client", "10.211.0.1", "--port", &server.port.to_string(), "--transport", "tcp", "--json"])
        .args(["--size", "65536", "--iters", "3000", "--validate", "--qps", "2"])
        .output()
        .expect("client in namespace");
    let bw = report(&output);
    assert!(bw["runs"][0]["result"]["bw_avg_gbps"].as_f64().expect("bw") > 0.01);
    assert_eq!(bw["runs"][0]["connections"].as_array().expect("connections").len(), 2);
    assert!(bw["runs"][0]["connections"][0].as_str().expect("text").contains("10.211.0.2"));
    drop(server);
    drop(pair);
}
