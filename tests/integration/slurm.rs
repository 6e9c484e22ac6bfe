//! `fabricdoctor slurm health-check` against a real one-node Slurm cluster on this machine (Debian's
//! munge, slurmctld and slurmd, started by the test on loopback with their own ports, key, socket
//! and state directory; stopped and removed on drop). Needs root and the Slurm daemons; skips
//! loudly without them, and FABRICDOCTOR_REQUIRE_SLURM=1 (CI) makes that a failure.
//!
//! Scenes: the fraction brake refuses to drain the only node; `--dry-run` prints the scontrol
//! update and changes nothing; slurmd's own HealthCheckProgram run drains the node with the
//! `fabricdoctor:` reason on a failing fixture, and resumes it once the fixture passes; a drain by
//! someone else is left alone; `srun -n 4 fabricdoctor perf allreduce` meets through SLURM_*; no
//! scontrol and an unknown node are errors (exit 2); `slurm prolog` as the cluster's Prolog keeps a
//! failing node's job from starting. On four namespace hosts the prolog's gang preflight fails
//! only the slow node; and on four real Slurm nodes (a slurmd per namespace host) `srun -N 4
//! fabricdoctor burnin` signs off and the Prolog drains only the node whose link is shaped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{binary, fixture, free_port, stderr, stdout};

fn have_slurm() -> bool {
    let root = Command::new("id").arg("-u").output().map(|o| o.stdout == b"0\n").unwrap_or(false);
    let daemons = ["slurmctld", "slurmd", "munged", "mungekey", "scontrol", "srun"].iter().all(|d| {
        Command::new("sh").args(["-c", &format!("command -v {d}")]).output().is_ok_and(|o| o.status.success())
    });
    if root && daemons {
        return true;
    }
    if std::env::var("FABRICDOCTOR_REQUIRE_SLURM").as_deref() == Ok("1") {
        panic!("FABRICDOCTOR_REQUIRE_SLURM=1 but no Slurm cluster can be started (root: {root}, daemons: {daemons})");
    }
    crate::support::loud_eprintln!(
        "SKIP: the Slurm tests need root and slurmctld, slurmd, munge (apt-get install slurmctld slurmd munge; \
         FABRICDOCTOR_REQUIRE_SLURM=1 fails instead)"
    );
    false
}

/// Daemons a test started and the directory they keep their keys, state and logs in: killed in
/// reverse order of starting, and the directory removed, on drop.
struct Daemons {
    dir: PathBuf,
    children: Vec<Child>,
}

impl Daemons {
    /// A fresh directory with munged running on a socket inside it; returns the socket.
    fn with_munge(dir: PathBuf) -> (Daemons, PathBuf) {
        let _ = std::fs::remove_dir_all(&dir);
        for sub in ["state", "spool", "munge"] {
            std::fs::create_dir_all(dir.join(sub)).expect("cluster dirs");
        }
        let key = dir.join("munge/munge.key");
        let made = Command::new("mungekey").arg("--create").arg(format!("--keyfile={}", key.display())).output();
        assert!(made.is_ok_and(|o| o.status.success()), "mungekey --create");
        let socket = dir.join("munge/socket");
        let munged = Command::new("munged")
            .arg("--foreground")
            .arg("--force")
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--key-file={}", key.display()))
            .arg(format!("--log-file={}", dir.join("munge/log").display()))
            .arg(format!("--pid-file={}", dir.join("munge/pid").display()))
            .arg(format!("--seed-file={}", dir.join("munge/seed").display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("munged starts");
        wait_for(Duration::from_secs(10), || socket.exists(), "munged's socket");
        (Daemons { dir, children: vec![munged] }, socket)
    }

    /// The named logs of the directory, each under a header.
    fn logs<S: AsRef<str>>(&self, names: &[S]) -> String {
        names
            .iter()
            .map(|f| {
                let f = f.as_ref();
                format!("--- {f}\n{}", std::fs::read_to_string(self.dir.join(f)).unwrap_or_default())
            })
            .collect()
    }
}

impl Drop for Daemons {
    fn drop(&mut self) {
        for child in self.children.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A one-node cluster: munged, slurmctld and slurmd in the foreground, children of the test.
struct Cluster {
    daemons: Daemons,
    conf: PathBuf,
    node: String,
}

/// Where this run's cluster keeps its configuration, keys, state and logs.
fn cluster_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("slurm-{}", std::process::id()))
}

impl Cluster {
    fn start(health_check: &Path, prolog: &Path) -> Cluster {
        let (mut daemons, socket) = Daemons::with_munge(cluster_dir());
        let dir = daemons.dir.clone();
        // The node as slurmd sees this hardware (`slurmd -C`), reached on loopback.
        let probed = Command::new("slurmd").arg("-C").output().expect("slurmd -C");
        let node_line = String::from_utf8_lossy(&probed.stdout)
            .lines()
            .find(|l| l.starts_with("NodeName="))
            .expect("slurmd -C prints the node")
            .to_string();
        let node =
            node_line.split_whitespace().next().and_then(|n| n.strip_prefix("NodeName=")).expect("name").to_string();
        let d = dir.display();
        let conf = dir.join("slurm.conf");
        let text = format!(
            "ClusterName=fdtest\nSlurmctldHost={node}(127.0.0.1)\nSlurmctldPort={}\nSlurmdPort={}\nSlurmUser=root\n\
             SlurmdUser=root\nAuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={}\n\
             StateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\nSlurmctldPidFile={d}/slurmctld.pid\n\
             SlurmdPidFile={d}/slurmd.pid\nSlurmctldLogFile={d}/slurmctld.log\nSlurmdLogFile={d}/slurmd.log\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/none\n\
             SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\nReturnToService=2\nMpiDefault=none\n\
             SwitchType=switch/none\nHealthCheckProgram={}\nHealthCheckInterval=2\nHealthCheckNodeState=ANY\n\
             Prolog={}\n\
             {node_line} NodeAddr=127.0.0.1 State=UNKNOWN\n\
             PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4\n",
            free_port(),
            free_port(),
            socket.display(),
            health_check.display(),
            prolog.display(),
        );
        std::fs::write(&conf, text).expect("slurm.conf");
        for daemon in ["slurmctld", "slurmd"] {
            let child = Command::new(daemon)
                .args(["-D", "-f"])
                .arg(&conf)
                .env("SLURM_CONF", &conf)
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(dir.join(format!("{daemon}.out"))).expect("log"))
                .spawn()
                .unwrap_or_else(|e| panic!("{daemon} starts: {e}"));
            daemons.children.push(child);
            if daemon == "slurmctld" {
                std::thread::sleep(Duration::from_secs(2));
            }
        }
        let cluster = Cluster { daemons, conf, node };
        wait_for(Duration::from_secs(60), || cluster.state().is_some_and(|s| s.starts_with("IDLE")), "the node idle");
        cluster
    }

    fn scontrol(&self, args: &[&str]) -> Output {
        Command::new("scontrol").args(args).env("SLURM_CONF", &self.conf).output().expect("scontrol runs")
    }

    /// The node's State (e.g. "IDLE", "IDLE+DRAIN") and Reason.
    fn node(&self) -> Option<(String, String)> {
        let output = self.scontrol(&["show", "node", &self.node, "--oneliner"]);
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let state = text.split_whitespace().find_map(|p| p.strip_prefix("State="))?.to_string();
        let reason = text.split(" Reason=").nth(1).unwrap_or("").trim().to_string();
        Some((state, reason))
    }

    fn state(&self) -> Option<String> {
        self.node().map(|(state, _)| state)
    }

    fn health_check(&self, root: &Path, extra: &[&str]) -> Output {
        binary()
            .args(["slurm", "health-check", "--node", &self.node, "--root"])
            .arg(root)
            .args(extra)
            .env("SLURM_CONF", &self.conf)
            .output()
            .expect("health-check runs")
    }

    fn logs(&self) -> String {
        self.daemons.logs(&["slurmctld.log", "slurmd.log", "health-check.log", "prolog.log"])
    }
}

fn wait_for(limit: Duration, mut done: impl FnMut() -> bool, what: &str) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "waited {limit:?} for {what}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn health_check_drains_resumes_and_brakes_on_a_real_slurm_node() {
    if !have_slurm() {
        return;
    }
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("slurm-hc-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch");
    // slurmd runs HealthCheckProgram without arguments: a script that judges whichever fixture the
    // test names in `root`, and drains with the brake open (the cluster has one node).
    let root_file = scratch.join("root");
    std::fs::write(&root_file, fixture("hgx-h100").display().to_string()).expect("root file");
    let script = scratch.join("health-check.sh");
    // slurmd starts it with a bare environment: the cluster's configuration and scontrol's
    // directory are named here, as a site's wrapper would where they are not the defaults.
    let log = cluster_dir().join("health-check.log");
    let scontrol_dir = Command::new("sh")
        .args(["-c", "dirname \"$(command -v scontrol)\""])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .expect("scontrol's directory");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexport SLURM_CONF={} PATH={scontrol_dir}:/usr/sbin:/usr/bin:/sbin:/bin\n\
             exec {} slurm health-check --max-drained-fraction 1 --root \"$(cat {})\" >> {} 2>&1\n",
            cluster_dir().join("slurm.conf").display(),
            env!("CARGO_BIN_EXE_fabricdoctor"),
            root_file.display(),
            log.display()
        ),
    )
    .expect("script");
    let made = Command::new("chmod").arg("755").arg(&script).status();
    assert!(made.is_ok_and(|s| s.success()));
    // The job's Prolog: the gang preflight over the job's nodes (here the one node), judging the
    // fixture named in `prolog-root`.
    let prolog_root = scratch.join("prolog-root");
    std::fs::write(&prolog_root, fixture("hgx-h100").display().to_string()).expect("prolog root file");
    let prolog = scratch.join("prolog.sh");
    std::fs::write(
        &prolog,
        format!(
            "#!/bin/sh\nexport SLURM_CONF={} PATH={scontrol_dir}:/usr/sbin:/usr/bin:/sbin:/bin\n\
             exec {} slurm prolog --root \"$(cat {})\" >> {} 2>&1\n",
            cluster_dir().join("slurm.conf").display(),
            env!("CARGO_BIN_EXE_fabricdoctor"),
            prolog_root.display(),
            cluster_dir().join("prolog.log").display()
        ),
    )
    .expect("prolog script");
    let made = Command::new("chmod").arg("755").arg(&prolog).status();
    assert!(made.is_ok_and(|s| s.success()));
    let cluster = Cluster::start(&script, &prolog);
    let faulty = fixture("faulty-node");

    // The brake: draining the only node of its partition would drain 100 % (default limit 10 %).
    let braked = cluster.health_check(&faulty, &[]);
    assert_eq!(braked.status.code(), Some(1), "{}", stderr(&braked));
    assert!(stderr(&braked).contains("NOT drained: 0 of 1 nodes"), "{}", stderr(&braked));
    assert!(!cluster.state().unwrap_or_default().contains("DRAIN"), "the brake drained: {:?}", cluster.node());

    // A dry run says what it would run and changes nothing.
    let dry = cluster.health_check(&faulty, &["--dry-run", "--max-drained-fraction", "1"]);
    assert_eq!(dry.status.code(), Some(1), "{}", stderr(&dry));
    let expected = format!("would run: scontrol update NodeName={} State=DRAIN 'Reason=fabricdoctor: ", cluster.node);
    assert!(stdout(&dry).contains(&expected), "{}", stdout(&dry));
    assert!(!cluster.state().unwrap_or_default().contains("DRAIN"));

    // slurmd's own run of the HealthCheckProgram drains the node with our reason...
    std::fs::write(&root_file, faulty.display().to_string()).expect("root file");
    let drained = || {
        cluster.node().is_some_and(|(state, reason)| state.contains("DRAIN") && reason.starts_with("fabricdoctor: "))
    };
    let deadline = Instant::now() + Duration::from_secs(90);
    while !drained() {
        assert!(Instant::now() < deadline, "not drained after 90 s: {:?}\n{}", cluster.node(), cluster.logs());
        std::thread::sleep(Duration::from_millis(500));
    }
    // ...and resumes it once the node passes again.
    std::fs::write(&root_file, fixture("hgx-h100").display().to_string()).expect("root file");
    let deadline = Instant::now() + Duration::from_secs(90);
    while cluster.state().unwrap_or_default().contains("DRAIN") {
        assert!(Instant::now() < deadline, "not resumed after 90 s: {:?}\n{}", cluster.node(), cluster.logs());
        std::thread::sleep(Duration::from_millis(500));
    }
    // A drain that is not ours stays, even on a passing node.
    let update = cluster.scontrol(&["update", &format!("NodeName={}", cluster.node), "State=DRAIN", "Reason=bad dimm"]);
    assert!(update.status.success(), "{}", String::from_utf8_lossy(&update.stderr));
    let passing = cluster.health_check(&fixture("hgx-h100"), &[]);
    assert_eq!(passing.status.code(), Some(0), "{}", stderr(&passing));
    let (state, reason) = cluster.node().expect("node");
    assert!(state.contains("DRAIN") && reason.starts_with("bad dimm"), "{state} {reason}");
    let resumed = cluster.scontrol(&["update", &format!("NodeName={}", cluster.node), "State=RESUME"]);
    assert!(resumed.status.success());

    // srun's own environment is a rendezvous: four tasks of one job meet through SLURM_*.
    std::fs::write(&root_file, fixture("hgx-h100").display().to_string()).expect("root file");
    let port = free_port().to_string();
    let srun = Command::new("timeout")
        .args(["120", "srun", "-n", "4", "--overcommit"])
        .arg(env!("CARGO_BIN_EXE_fabricdoctor"))
        .args([
            "perf",
            "allreduce",
            "-b",
            "4",
            "-e",
            "64K",
            "-f",
            "16",
            "-n",
            "2",
            "-w",
            "1",
            "--json",
            "--port",
            &port,
        ])
        .env("SLURM_CONF", &cluster.conf)
        .output()
        .expect("srun runs");
    assert!(srun.status.success(), "srun: {}\n{}", stderr(&srun), cluster.logs());
    // Rank 0 prints the report; the other tasks print nothing.
    let report: serde_json::Value = serde_json::from_slice(&srun.stdout).expect("rank 0's JSON");
    assert_eq!(report["ranks"], 4, "{report}");
    assert!(report["rows"].as_array().is_some_and(|rows| rows.iter().all(|r| r["out_of_place"]["wrong"] == 0)));
    let log = std::fs::read_to_string(cluster_dir().join("prolog.log")).unwrap_or_default();
    assert!(log.contains("passes its checks; one node"), "the job's prolog ran and passed:\n{}", cluster.logs());

    // A prolog rejection: the node fails its checks, so its prolog exits 1; Slurm does not start
    // the job, and drains the node with its own reason (slurm.conf(5) Prolog).
    std::fs::write(&prolog_root, faulty.display().to_string()).expect("prolog root file");
    let rejected = Command::new("timeout")
        .args(["60", "srun", "-N", "1", "true"])
        .env("SLURM_CONF", &cluster.conf)
        .output()
        .expect("srun runs");
    assert!(!rejected.status.success(), "the job ran although its prolog failed:\n{}", cluster.logs());
    let deadline = Instant::now() + Duration::from_secs(30);
    while !cluster.state().unwrap_or_default().contains("DRAIN") {
        assert!(
            Instant::now() < deadline,
            "not drained after the prolog failed: {:?}\n{}",
            cluster.node(),
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    let log = std::fs::read_to_string(cluster_dir().join("prolog.log")).unwrap_or_default();
    assert!(log.contains(&format!("{} fails its checks", cluster.node)), "{log}");
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn health_check_without_slurm_or_for_an_unknown_node_is_an_error() {
    let missing = binary()
        .args(["slurm", "health-check", "--scontrol", "/nonexistent/scontrol", "--root"])
        .arg(fixture("hgx-h100"))
        .output()
        .expect("runs");
    assert_eq!(missing.status.code(), Some(2), "{}", stderr(&missing));
    assert!(stderr(&missing).contains("no Slurm client"), "{}", stderr(&missing));
    // A scontrol that knows other nodes only.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("fake-scontrol-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let fake = dir.join("scontrol");
    std::fs::write(&fake, "#!/bin/sh\necho 'NodeName=other State=IDLE Partitions=debug'\n").expect("fake");
    let made = Command::new("chmod").arg("755").arg(&fake).status();
    assert!(made.is_ok_and(|s| s.success()));
    let unknown = binary()
        .args(["slurm", "health-check", "--node", "gpu07", "--scontrol"])
        .arg(&fake)
        .arg("--root")
        .arg(fixture("hgx-h100"))
        .output()
        .expect("runs");
    assert_eq!(unknown.status.code(), Some(2), "{}", stderr(&unknown));
    assert!(stderr(&unknown).contains("Slurm does not know node \"gpu07\""), "{}", stderr(&unknown));
    // A bad brake is refused by name.
    let bad = binary()
        .args(["slurm", "health-check", "--max-drained-fraction", "0", "--scontrol"])
        .arg(&fake)
        .output()
        .expect("runs");
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("--max-drained-fraction"), "{}", stderr(&bad));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The gang preflight on four namespace hosts: host 3's link is shaped to 4 Mbit/s and host 1's
/// node checks fail. Every node runs `slurm prolog` at once, as slurmd runs Prolog on each node of
/// a job; only hosts 1 and 3 exit 1, and every node names host 3 as the bad one.
#[test]
fn prolog_fails_only_the_node_at_fault_and_every_node_names_it() {
    if !crate::burnin::have_root() {
        return;
    }
    let _serial = crate::burnin::serial();
    let cluster = crate::burnin::Cluster::create("prolog");
    cluster.throttle(2, "eth0");
    let addresses: Vec<String> =
        (1..=4).flat_map(|h| ["--address".to_string(), format!("node{h}=10.215.0.{h}")]).collect();
    let children: Vec<Child> = (0..4)
        .map(|host| {
            let root = if host == 0 { fixture("faulty-node") } else { fixture("hgx-h100") };
            Command::new("ip")
                .args(["netns", "exec", &cluster.hosts[host], env!("CARGO_BIN_EXE_fabricdoctor"), "slurm", "prolog"])
                .arg("--root")
                .arg(root)
                .args(["--nodes", "node[1-4]", "--node", &format!("node{}", host + 1), "--job", "4242"])
                .args(["--duration", "300ms", "--round-timeout", "15s", "--timeout", "90s"])
                .args(&addresses)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("prolog starts")
        })
        .collect();
    let outputs: Vec<Output> = children.into_iter().map(|c| c.wait_with_output().expect("prolog ends")).collect();
    let codes: Vec<Option<i32>> = outputs.iter().map(|o| o.status.code()).collect();
    let describe = || {
        outputs
            .iter()
            .enumerate()
            .map(|(i, o)| format!("--- node{}: {:?}\n{}{}", i + 1, o.status.code(), stdout(o), stderr(o)))
            .collect::<String>()
    };
    assert_eq!(codes, [Some(1), Some(0), Some(1), Some(0)], "{}", describe());
    assert!(stdout(&outputs[0]).contains("node1 fails its checks"), "{}", describe());
    for output in &outputs {
        assert!(stdout(output).contains("node3 is bad"), "{}", describe());
        assert!(!stdout(output).contains("node1 is bad") && !stdout(output).contains("the link"), "{}", describe());
    }
    assert!(stdout(&outputs[2]).contains("node3 is bad (this node)"), "{}", describe());
}

#[test]
fn prolog_refuses_peers_of_other_jobs_and_bad_settings() {
    // A lone node has no pairs: the checks decide.
    let lone = binary()
        .args(["slurm", "prolog", "--root"])
        .arg(fixture("hgx-h100"))
        .args(["--nodes", "gpu01", "--node", "gpu01", "--job", "7"])
        .output()
        .expect("run");
    assert_eq!(lone.status.code(), Some(0), "{}", stderr(&lone));
    assert!(stdout(&lone).contains("one node, no pairs"), "{}", stdout(&lone));
    for (args, says) in [
        (&["--nodes", "gpu[01-02", "--node", "gpu01", "--job", "7"][..], "node list"),
        (&["--nodes", "gpu[01-02]", "--node", "gpu09", "--job", "7"], "not in the job's node list"),
        (&["--nodes", "gpu[01-02]", "--node", "gpu01", "--job", "7", "--address", "gpu01=x"], "not an IP address"),
        (&["--nodes", "gpu[01-02]", "--node", "gpu01", "--job", "7", "--min-ratio", "0"], "--min-ratio"),
    ] {
        let output =
            binary().args(["slurm", "prolog"]).args(args).env_remove("SLURM_JOB_NODELIST").output().expect("run");
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains(says), "{args:?}: {}", stderr(&output));
    }
    let output = binary()
        .args(["slurm", "prolog", "--node", "gpu01", "--job", "7"])
        .env_remove("SLURM_JOB_NODELIST")
        .env_remove("SLURM_NODELIST")
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("SLURM_JOB_NODELIST"), "{}", stderr(&output));

    // A peer of another job, and a stranger, are refused by a node waiting for its partner; the
    // node then records its partner as missing and fails the pair.
    let port = free_port();
    let waiting = binary()
        .args(["slurm", "prolog", "--root"])
        .arg(fixture("hgx-h100"))
        .args(["--nodes", "a,b", "--node", "b", "--job", "7", "--port", &port.to_string()])
        .args(["--address", "a=127.0.0.1", "--address", "b=127.0.0.1"])
        .args(["--round-timeout", "3s", "--timeout", "8s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start");
    let ask = |line: &str| -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) {
                use std::io::{Read, Write};
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let _ = stream.write_all(line.as_bytes());
                let mut answer = String::new();
                let _ = stream.read_to_string(&mut answer);
                return answer;
            }
            assert!(Instant::now() < deadline, "the prolog never listened");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    assert!(ask("{\"job\":\"8\",\"from\":\"a\",\"round\":0}\n").contains("job 8 is not job 7"));
    assert!(ask("{\"job\":\"7\",\"from\":\"mallory\",\"round\":0}\n").contains("not a node of this job"));
    assert!(ask(&"x".repeat(4000)).contains("longer than"));
    assert!(ask("GET / HTTP/1.1\r\n\r\n").contains("not a hello"));
    let output = waiting.wait_with_output().expect("ends");
    // Two nodes and a broken pair: both are named, so this one fails too.
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    assert!(stdout(&output).contains("did not connect"), "{}", stdout(&output));
}

/// Four Slurm nodes, one per namespace host of the burn-in rig (10.215.0.1-4), each a real slurmd
/// (`slurmd -N nodeK` in its namespace, with a private /etc/hosts naming the nodes, as DNS would),
/// and slurmctld in the bridge namespace (10.215.0.254). Killed and removed on drop, with the
/// namespaces.
struct MultiCluster {
    // Dropped first: the daemons stop before their namespaces go.
    daemons: Daemons,
    conf: PathBuf,
    rig: crate::burnin::Cluster,
}

impl MultiCluster {
    fn start(prolog: &Path) -> MultiCluster {
        let rig = crate::burnin::Cluster::create("slurm4");
        let (mut daemons, socket) = Daemons::with_munge(
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("slurm4-{}", std::process::id())),
        );
        let dir = daemons.dir.clone();
        let hosts = dir.join("hosts");
        let mut names = String::from("127.0.0.1 localhost\n10.215.0.254 fdctl\n");
        for node in 1..=4 {
            names.push_str(&format!("10.215.0.{node} node{node}\n"));
        }
        std::fs::write(&hosts, names).expect("hosts");
        // slurmctld runs on the host named by SlurmctldHost: this machine's short hostname.
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("hostname");
        let hostname = hostname.trim().split('.').next().unwrap_or("localhost").to_string();
        let d = dir.display();
        let conf = dir.join("slurm.conf");
        let text = format!(
            "ClusterName=fdmulti\nSlurmctldHost={hostname}(10.215.0.254)\nSlurmctldPort={}\nSlurmdPort={}\n\
             SlurmUser=root\nSlurmdUser=root\nAuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={}\n\
             StateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool-%n\nSlurmctldPidFile={d}/slurmctld.pid\n\
             SlurmdPidFile={d}/slurmd-%n.pid\nSlurmctldLogFile={d}/slurmctld.log\nSlurmdLogFile={d}/slurmd-%n.log\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/none\n\
             SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\nReturnToService=2\nMpiDefault=none\n\
             SwitchType=switch/none\nMessageTimeout=60\nProlog={}\nPrologFlags=Alloc\n\
             NodeName=node[1-4] NodeAddr=10.215.0.[1-4] CPUs=2 State=UNKNOWN\n\
             PartitionName=debug Nodes=node[1-4] Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4\n",
            free_port(),
            free_port(),
            socket.display(),
            prolog.display(),
        );
        std::fs::write(&conf, text).expect("slurm.conf");
        let in_namespace = |namespace: &str, command: &str, log: &str| {
            // nsenter, not `ip netns exec`: the latter remounts /sys for the namespace, and slurmd
            // needs the cgroup filesystem under the original /sys.
            Command::new("nsenter")
                .arg(format!("--net=/run/netns/{namespace}"))
                .args(["unshare", "--mount", "--propagation", "private", "sh", "-c"])
                .arg(format!("mount --bind {} /etc/hosts && exec {command}", hosts.display()))
                .env("SLURM_CONF", &conf)
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(dir.join(log)).expect("log"))
                .spawn()
                .expect("daemon starts")
        };
        daemons.children.push(in_namespace(
            &rig.bridge,
            &format!("slurmctld -D -f {}", conf.display()),
            "slurmctld.out",
        ));
        std::thread::sleep(Duration::from_secs(2));
        for node in 1..=4 {
            std::fs::create_dir_all(dir.join(format!("spool-node{node}"))).expect("spool");
            let command = format!("slurmd -D -N node{node} -f {}", conf.display());
            daemons.children.push(in_namespace(&rig.hosts[node - 1], &command, &format!("slurmd-node{node}.out")));
        }
        let cluster = MultiCluster { daemons, conf, rig };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !(1..=4).all(|n| cluster.state(&format!("node{n}")).is_some_and(|s| s.starts_with("IDLE"))) {
            let states: Vec<Option<String>> = (1..=4).map(|n| cluster.state(&format!("node{n}"))).collect();
            assert!(Instant::now() < deadline, "four idle nodes after 60 s: {states:?}\n{}", cluster.logs());
            std::thread::sleep(Duration::from_millis(250));
        }
        cluster
    }

    /// A Slurm client command, run where the controller is reached (the bridge namespace).
    fn client(&self, program: &str) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", &self.rig.bridge, program]).env("SLURM_CONF", &self.conf);
        command
    }

    fn state(&self, node: &str) -> Option<String> {
        let output = self.client("scontrol").args(["show", "node", node, "--oneliner"]).output().ok()?;
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        text.split_whitespace().find_map(|p| p.strip_prefix("State=")).map(str::to_string)
    }

    fn logs(&self) -> String {
        let mut names: Vec<String> = vec!["slurmctld.log".into(), "slurmctld.out".into()];
        for node in 1..=4 {
            names.push(format!("slurmd-node{node}.log"));
            names.push(format!("slurmd-node{node}.out"));
            names.push(format!("prolog-node{node}.log"));
        }
        self.daemons.logs(&names)
    }
}

/// On four real Slurm nodes: `srun -N 4 fabricdoctor burnin` meets through SLURM_* (rank 0
/// coordinates, the others are agents) and signs off, the job's multi-node Prolog passing first;
/// then, with node3's link shaped to 4 Mbit/s, the Prolog of the next job fails on node3 only:
/// Slurm drains node3, and no other node.
#[test]
fn four_slurm_nodes_run_a_burnin_and_their_prolog_drains_only_the_slow_node() {
    if !have_slurm() || !crate::burnin::have_root() {
        return;
    }
    let _serial = crate::burnin::serial();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("slurm4-scripts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let logs = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("slurm4-{}", std::process::id()));
    let scontrol_dir = Command::new("sh")
        .args(["-c", "dirname \"$(command -v scontrol)\""])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .expect("scontrol's directory");
    let prolog = dir.join("prolog.sh");
    std::fs::write(
        &prolog,
        format!(
            "#!/bin/sh\nexport SLURM_CONF={}/slurm.conf PATH={scontrol_dir}:/usr/sbin:/usr/bin:/sbin:/bin\n\
             exec {} slurm prolog --root {} --duration 300ms --round-timeout 15s --timeout 60s \
             >> {}/prolog-$SLURMD_NODENAME.log 2>&1\n",
            logs.display(),
            env!("CARGO_BIN_EXE_fabricdoctor"),
            fixture("hgx-h100").display(),
            logs.display(),
        ),
    )
    .expect("prolog");
    assert!(Command::new("chmod").arg("755").arg(&prolog).status().is_ok_and(|s| s.success()));
    let cluster = MultiCluster::start(&prolog);

    let report_dir = dir.join("burnin");
    let burnin = cluster
        .client("timeout")
        .args(["240", "srun", "-N", "4", "--ntasks-per-node", "1", env!("CARGO_BIN_EXE_fabricdoctor"), "burnin"])
        .args(["--duration", "1s", "--playbook", &crate::burnin::playbook(), "--agent-port", "7311", "--report-dir"])
        .arg(&report_dir)
        .env("FABRICDOCTOR_TOKEN", crate::burnin::TOKEN)
        .output()
        .expect("srun runs");
    assert!(
        burnin.status.success(),
        "srun burnin: {:?}\n{}{}\n{}",
        burnin.status.code(),
        stdout(&burnin),
        stderr(&burnin),
        cluster.logs()
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report_dir.join("report.json")).expect("report.json"))
            .expect("json");
    let hosts: Vec<&str> =
        report["hosts"].as_array().expect("hosts").iter().filter_map(|h| h["name"].as_str()).collect();
    assert_eq!(hosts, ["node1", "node2", "node3", "node4"], "{report}");
    assert_eq!(report["signoff"]["verdict"], "pass", "{}", report["signoff"]);
    for node in 1..=4 {
        let log = std::fs::read_to_string(logs.join(format!("prolog-node{node}.log"))).unwrap_or_default();
        assert!(log.contains("all 6 pairs of the job's 4 nodes"), "node{node}'s prolog:\n{}", cluster.logs());
    }

    // node3's link slows to 4 Mbit/s: the next job's Prolog fails there only.
    cluster.rig.throttle(2, "eth0");
    let rejected = cluster
        .client("timeout")
        .args(["120", "srun", "-N", "4", "--ntasks-per-node", "1", "true"])
        .output()
        .expect("srun runs");
    assert!(!rejected.status.success(), "the job ran although node3's prolog failed:\n{}", cluster.logs());
    let deadline = Instant::now() + Duration::from_secs(60);
    while !cluster.state("node3").unwrap_or_default().contains("DRAIN") {
        assert!(Instant::now() < deadline, "node3 not drained:\n{}", cluster.logs());
        std::thread::sleep(Duration::from_millis(250));
    }
    for node in ["node1", "node2", "node4"] {
        let state = cluster.state(node).unwrap_or_default();
        assert!(!state.contains("DRAIN"), "{node} drained ({state}) for node3's fault:\n{}", cluster.logs());
        let log = std::fs::read_to_string(logs.join(format!("prolog-{node}.log"))).unwrap_or_default();
        assert!(log.contains("node3 is bad (its own prolog fails it)"), "{node}:\n{log}");
    }
    let log = std::fs::read_to_string(logs.join("prolog-node3.log")).unwrap_or_default();
    assert!(log.contains("node3 is bad (this node)"), "{log}");
    drop(cluster);
    let _ = std::fs::remove_dir_all(&dir);
}
