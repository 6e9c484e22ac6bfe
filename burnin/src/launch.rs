//! Starting agents: `--local N` children on loopback with a random token, `--launcher ssh` remote
//! agents whose token goes over ssh's stdin (never on a command line, where `ps` would show it),
//! SLURM node lists (rank 0 coordinates, the other ranks run agents), and hostfiles. A started agent
//! lives as long as its stdin: when the coordinator dies (even by SIGKILL) the pipe closes and the
//! agent exits.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use crate::coordinator::HostSpec;
use crate::BurninError;

/// Agents this process started; killed and reaped on drop.
#[derive(Debug, Default)]
pub struct Agents {
    children: Vec<(Child, Option<ChildStdin>)>,
}

impl Agents {
    /// Process ids of the children (the burn-in benchmark samples their RSS).
    pub fn pids(&self) -> Vec<u32> {
        self.children.iter().map(|(c, _)| c.id()).collect()
    }

    /// Kill child `index` (tests use it to lose an agent).
    pub fn kill(&mut self, index: usize) {
        if let Some((child, _)) = self.children.get_mut(index) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Agents {
    fn drop(&mut self) {
        for (child, stdin) in &mut self.children {
            drop(stdin.take());
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The line an agent prints on stdout once it listens (read by `--local`).
pub const LISTENING: &str = "fabricdoctor agent: listening on ";

/// Start `count` agents of `program` on 127.0.0.1 (ephemeral ports) with `token`; each logs to
/// `log_dir/agent-local-N.log` (appended) so the coordinator's terminal stays readable.
pub fn local(
    program: &Path,
    count: usize,
    token: &str,
    log_dir: &Path,
) -> Result<(Vec<HostSpec>, Agents), BurninError> {
    let mut agents = Agents::default();
    let mut hosts = Vec::new();
    std::fs::create_dir_all(log_dir).map_err(|e| BurninError::Io(format!("cannot create {}", log_dir.display()), e))?;
    for index in 0..count {
        let log_path = log_dir.join(format!("agent-local-{index}.log"));
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| BurninError::Io(format!("cannot open {}", log_path.display()), e))?;
        let mut child = Command::new(program)
            .args(["agent", "--listen", "127.0.0.1:0", "--lifeline"])
            .env("FABRICDOCTOR_TOKEN", token)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .map_err(|e| BurninError::Io(format!("cannot start {} agent", program.display()), e))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        agents.children.push((child, stdin));
        let address = read_listening(stdout, Duration::from_secs(20))
            .map_err(|reason| BurninError::Run(format!("local agent {index}: {reason}")))?;
        hosts.push(HostSpec::new(format!("local-{index}"), address));
    }
    Ok((hosts, agents))
}

fn read_listening(stdout: Option<std::process::ChildStdout>, wait: Duration) -> Result<String, String> {
    let stdout = stdout.ok_or("no stdout")?;
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let result = reader.read_line(&mut line).map(|_| line);
        let _ = sender.send(result);
        // Keep draining so the agent never blocks on a full pipe.
        let mut sink = String::new();
        while reader.read_line(&mut sink).is_ok_and(|n| n > 0) {
            sink.clear();
        }
    });
    match receiver.recv_timeout(wait) {
        Ok(Ok(line)) => line
            .trim()
            .strip_prefix(LISTENING)
            .map(str::to_string)
            .ok_or_else(|| format!("exited or said {:?} instead of its address", line.trim())),
        Ok(Err(e)) => Err(format!("cannot read its address: {e}")),
        Err(_) => Err(format!("no address within {} s", wait.as_secs())),
    }
}

/// Start an agent on each host over ssh: `ssh -o BatchMode=yes HOST AGENT agent --listen
/// 0.0.0.0:PORT --token-stdin --lifeline`, the token as the first line of stdin.
pub fn ssh(
    ssh: &str,
    agent_command: &str,
    hosts: &[HostSpec],
    port: u16,
    token: &str,
) -> Result<(Vec<HostSpec>, Agents), BurninError> {
    let mut agents = Agents::default();
    let mut started = Vec::new();
    for host in hosts {
        let target = host.address.rsplit_once(':').map(|(h, _)| h).unwrap_or(&host.address).to_string();
        let mut child = Command::new(ssh)
            .args(["-o", "BatchMode=yes", &target, agent_command, "agent"])
            .args(["--listen", &format!("0.0.0.0:{port}"), "--token-stdin", "--lifeline"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| BurninError::Io(format!("cannot run {ssh} for {target}"), e))?;
        let mut stdin = child.stdin.take();
        if let Some(pipe) = stdin.as_mut() {
            pipe.write_all(format!("{token}\n").as_bytes())
                .and_then(|_| pipe.flush())
                .map_err(|e| BurninError::Io(format!("cannot send the token to the agent on {target}"), e))?;
        }
        let stdout = child.stdout.take();
        agents.children.push((child, stdin));
        let address = read_listening(stdout, Duration::from_secs(60))
            .map_err(|reason| BurninError::Run(format!("agent on {target} over ssh: {reason}")))?;
        // The agent reports 0.0.0.0:PORT; the coordinator reaches it by the host's name.
        let port = address.rsplit_once(':').map(|(_, p)| p.to_string()).unwrap_or_else(|| port.to_string());
        started.push(HostSpec { address: format!("{target}:{port}"), ..host.clone() });
    }
    Ok((started, agents))
}

/// Hosts from `--hosts a,b:7300` or a hostfile (one per line; `#` comments; MPI-style `slots=`
/// suffixes ignored), each with `port` unless it names one.
pub fn parse_hosts(text: &str, port: u16, source: &str) -> Result<Vec<HostSpec>, BurninError> {
    let mut hosts: Vec<HostSpec> = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        // `leaf=NAME` names the leaf switch (or rack) of the line's hosts; other attributes are ignored.
        let mut leaf = None;
        for attribute in line.split([',', ' ', '\t']).filter_map(|e| e.strip_prefix("leaf=")) {
            if attribute.is_empty() || attribute.len() > 64 || attribute.chars().any(|c| c.is_control()) {
                return Err(BurninError::Run(format!("{source}:{}: not a leaf name: {attribute:?}", number + 1)));
            }
            leaf = Some(attribute.to_string());
        }
        for entry in line.split([',', ' ', '\t']).filter(|e| !e.is_empty()) {
            if entry.contains('=') {
                continue;
            }
            if entry.chars().any(|c| c.is_control()) || entry.len() > 255 {
                return Err(BurninError::Run(format!("{source}:{}: not a host name: {entry:?}", number + 1)));
            }
            let address = if entry.starts_with('[') || entry.matches(':').count() == 1 {
                entry.to_string()
            } else if entry.contains(':') {
                format!("[{entry}]:{port}")
            } else {
                format!("{entry}:{port}")
            };
            let name = address.rsplit_once(':').map(|(h, _)| h.trim_matches(['[', ']'])).unwrap_or(entry).to_string();
            if hosts.iter().any(|h| h.address == address) {
                return Err(BurninError::Run(format!("{source}:{}: {entry} is listed twice", number + 1)));
            }
            hosts.push(HostSpec { name, address, leaf: leaf.clone() });
        }
    }
    // Names must be unique: several agents on one machine get their port appended.
    let names: Vec<String> = hosts.iter().map(|h| h.name.clone()).collect();
    for host in &mut hosts {
        if names.iter().filter(|n| **n == host.name).count() > 1 {
            host.name = host.address.clone();
        }
    }
    if hosts.is_empty() {
        return Err(BurninError::Run(format!("{source}: no hosts")));
    }
    Ok(hosts)
}

/// Inside a SLURM step: (this task's rank, the step's nodes) from SLURM_PROCID and
/// SLURM_STEP_NODELIST (or SLURM_JOB_NODELIST), expanded by the collectives' node-list parser.
pub fn slurm(env: &dyn Fn(&str) -> Option<String>) -> Result<Option<(usize, Vec<String>)>, BurninError> {
    let Some(rank) = env("SLURM_PROCID") else { return Ok(None) };
    let rank: usize =
        rank.trim().parse().map_err(|_| BurninError::Run(format!("SLURM_PROCID={rank:?} is not a rank")))?;
    let list = env("SLURM_STEP_NODELIST")
        .or_else(|| env("SLURM_JOB_NODELIST"))
        .ok_or_else(|| BurninError::Run("SLURM_PROCID is set but no SLURM_STEP_NODELIST/SLURM_JOB_NODELIST".into()))?;
    let nodes = fabricdoctor_perf::collective::nodelist::expand(&list)
        .map_err(|e| BurninError::Run(format!("SLURM node list {list:?}: {e}")))?;
    Ok(Some((rank, nodes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_lists_and_hostfiles_parse() {
        let hosts =
            parse_hosts("node1\nnode2:7300 # spare port\n\n# comment\nnode3 slots=8\n", 7207, "hosts").expect("parse");
        let addresses: Vec<&str> = hosts.iter().map(|h| h.address.as_str()).collect();
        assert_eq!(addresses, ["node1:7207", "node2:7300", "node3:7207"]);
        assert_eq!(hosts[1].name, "node2");
        let same_machine = parse_hosts("127.0.0.1:9001,127.0.0.1:9002", 7207, "--hosts").expect("parse");
        assert_eq!(same_machine[0].name, "127.0.0.1:9001", "names stay unique");
        assert!(parse_hosts("a,a", 7207, "--hosts").is_err());
        assert!(parse_hosts("# nothing\n", 7207, "hostfile").is_err());
        assert_eq!(parse_hosts("fe80::1", 7207, "x").expect("v6")[0].address, "[fe80::1]:7207");
    }

    #[test]
    fn a_hostfile_line_names_the_leaf_of_its_hosts() {
        let hosts = parse_hosts(
            "node1 node2 leaf=L1 slots=8
node3 leaf=L2
node4
",
            7207,
            "hosts",
        )
        .expect("parse");
        let leaves: Vec<Option<&str>> = hosts.iter().map(|h| h.leaf.as_deref()).collect();
        assert_eq!(leaves, [Some("L1"), Some("L1"), Some("L2"), None]);
        let error = parse_hosts("node1 leaf=\n", 7207, "hosts").expect_err("empty leaf").to_string();
        assert!(error.contains("hosts:1: not a leaf name"), "{error}");
    }

    #[test]
    fn slurm_ranks_and_node_lists() {
        let env = |key: &str| match key {
            "SLURM_PROCID" => Some("2".to_string()),
            "SLURM_STEP_NODELIST" => Some("gpu[01-03,07]".to_string()),
            _ => None,
        };
        let (rank, nodes) = slurm(&env).expect("slurm").expect("inside slurm");
        assert_eq!(rank, 2);
        assert_eq!(nodes, ["gpu01", "gpu02", "gpu03", "gpu07"]);
        assert!(slurm(&|_| None).expect("outside").is_none());
        assert!(slurm(&|k| (k == "SLURM_PROCID").then(|| "x".to_string())).is_err());
    }
}
