//! `fabricdoctor perf allreduce|allgather|reducescatter|alltoall|broadcast`: resolve who the ranks are
//! (explicit hosts, torchrun environment, SLURM environment, or N local ranks started here), meet,
//! run the sweep, and let rank 0 print.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context};
use fabricdoctor_perf::collective::datatype::{DataType, ReduceOp};
use fabricdoctor_perf::collective::sweep::{parse_size, render_rows, run_sweep_with, sizes, SweepSpec, TimeAverage};
use fabricdoctor_perf::collective::{nodelist, AlgorithmChoice, Collective, Communicator, Mesh, Rendezvous, Transport};
use fabricdoctor_perf::verbs::stream::StreamOptions;
use fabricdoctor_report::perf::CollectiveReport;

use crate::args::{CollectiveAlgorithm, CollectiveArgs, CollectiveOp, CollectiveType, PerfTransport};
use crate::exit;
use crate::output::emit;

const DEFAULT_PORT: u16 = 18516;

/// Who this process is among the ranks.
#[derive(Debug, PartialEq, Eq)]
enum Role {
    /// One rank of a group, meeting at rank 0.
    Rank { rank: usize, world: usize, master_host: String, master_port: u16, source: &'static str },
    /// Start this many local ranks and supervise them.
    Local { ranks: u32 },
}

/// The environment variables rendezvous reads (a parameter, so resolution is testable).
type Environment<'a> = &'a dyn Fn(&str) -> Option<String>;

fn resolve(args: &CollectiveArgs, environment: Environment<'_>) -> anyhow::Result<Role> {
    let port = args.port;
    if let (Some(master), Some(world), Some(rank)) = (&args.master, args.world_size, args.rank) {
        let (host, port) = master.rsplit_once(':').context("--master must be HOST:PORT")?;
        return Ok(Role::Rank {
            rank,
            world,
            master_host: host.to_string(),
            master_port: port.parse().context("--master port")?,
            source: "local launcher",
        });
    }
    let mut hosts = args.hosts.clone();
    if let Some(file) = &args.hostfile {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("failed to read hostfile {}", file.display()))?;
        hosts = text
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
            .map(|l| l.split_whitespace().next().unwrap_or(l).to_string())
            .collect();
        if hosts.is_empty() {
            bail!("hostfile {} lists no hosts", file.display());
        }
    }
    if !hosts.is_empty() {
        let rank = args.rank.context("--hosts/--hostfile need --rank (this process's position in the list)")?;
        if rank >= hosts.len() {
            bail!("--rank {rank} but only {} hosts", hosts.len());
        }
        return Ok(Role::Rank {
            rank,
            world: hosts.len(),
            master_host: hosts[0].clone(),
            master_port: port.unwrap_or(DEFAULT_PORT),
            source: "--hosts",
        });
    }
    let number = |name: &str| -> anyhow::Result<Option<usize>> {
        environment(name)
            .map(|v| v.trim().parse::<usize>().with_context(|| format!("{name}={v:?} is not a number")))
            .transpose()
    };
    if let (Some(master), Some(rank), Some(world)) =
        (environment("MASTER_ADDR"), number("RANK")?, number("WORLD_SIZE")?)
    {
        let master_port = match environment("MASTER_PORT") {
            Some(p) => p.trim().parse().with_context(|| format!("MASTER_PORT={p:?} is not a port"))?,
            None => port.unwrap_or(DEFAULT_PORT),
        };
        return Ok(Role::Rank { rank, world, master_host: master, master_port, source: "torchrun environment" });
    }
    if let (Some(rank), Some(world), Some(list)) =
        (number("SLURM_PROCID")?, number("SLURM_NTASKS")?, environment("SLURM_JOB_NODELIST"))
    {
        let nodes = nodelist::expand(&list).map_err(anyhow::Error::msg)?;
        let master = nodes.first().cloned().context("SLURM_JOB_NODELIST is empty")?;
        return Ok(Role::Rank {
            rank,
            world,
            master_host: master,
            master_port: port.unwrap_or(DEFAULT_PORT),
            source: "SLURM environment",
        });
    }
    Ok(Role::Local { ranks: args.np.unwrap_or(2) })
}

fn spec(collective: Collective, args: &CollectiveArgs) -> anyhow::Result<SweepSpec> {
    let minimum = parse_size(&args.minimum).map_err(anyhow::Error::msg).context("-b/--minbytes")?;
    let maximum = parse_size(&args.maximum).map_err(anyhow::Error::msg).context("-e/--maxbytes")?;
    if minimum > maximum {
        bail!("-b {minimum} is larger than -e {maximum}");
    }
    Ok(SweepSpec {
        collective,
        sizes: sizes(minimum, maximum, args.factor),
        iterations: args.iterations.max(1),
        warmup: args.warmup,
        check_passes: args.check,
        data_type: match args.dtype {
            CollectiveType::F32 => DataType::F32,
            CollectiveType::F64 => DataType::F64,
            CollectiveType::I32 => DataType::I32,
            CollectiveType::Bf16 => DataType::Bf16,
        },
        op: match args.op {
            CollectiveOp::Sum => ReduceOp::Sum,
            CollectiveOp::Max => ReduceOp::Max,
            CollectiveOp::Min => ReduceOp::Min,
        },
        root: args.root_rank,
        corrupt_rank: args.inject_corruption,
        average: TimeAverage::from_nccl_tests(args.average).context("-a/--average takes 0 to 3")?,
        algorithm: match (args.algo, collective) {
            (CollectiveAlgorithm::Auto, _) => AlgorithmChoice::Auto,
            (CollectiveAlgorithm::Ring, _) => AlgorithmChoice::Ring,
            (CollectiveAlgorithm::Tree, Collective::AllReduce) => AlgorithmChoice::Tree,
            (CollectiveAlgorithm::Tree, other) => {
                bail!("--algo tree is an AllReduce algorithm; {} runs ring steps only", other.name())
            }
        },
    })
}

pub fn run(collective: Collective, name: &str, args: CollectiveArgs) -> anyhow::Result<i32> {
    let spec = spec(collective, &args)?;
    match resolve(&args, &|name| std::env::var(name).ok())? {
        Role::Local { ranks } => launch_local(name, ranks),
        Role::Rank { rank, world, master_host, master_port, source } => {
            if spec.root >= world {
                bail!("--root-rank {} but only {world} ranks", spec.root);
            }
            let transport_name = match args.transport {
                PerfTransport::Tcp => "tcp",
                PerfTransport::Verbs => "verbs",
            };
            let rendezvous = Rendezvous {
                rank,
                world,
                master_host: master_host.clone(),
                master_port,
                channels: args.channels as usize,
                timeout: args.timeout,
                fingerprint: serde_json::to_string(&(&spec, args.channels, transport_name))?,
                bind: None,
                ticket: None,
            };
            let transport = match args.transport {
                PerfTransport::Tcp => Transport::Tcp,
                PerfTransport::Verbs => Transport::Verbs(StreamOptions {
                    device: args.verbs.device.clone(),
                    port: args.verbs.ib_port,
                    gid_index: args.verbs.gid_index,
                    timeout: args.timeout,
                    traffic: args.verbs.traffic(),
                }),
            };
            // Before the rendezvous, so a rank without the driver fails at once rather than its peers
            // waiting out their timeout. GPU buffers are staged through host memory around each
            // collective, above the transport, so both transports carry the same host buffers.
            let gpu = crate::gpu::open_gpu(args.gpu).with_context(|| format!("rank {rank}"))?;
            let mesh = Mesh::for_collective(collective, spec.algorithm);
            let mut communicator = Communicator::connect(&rendezvous, mesh, &transport)
                .with_context(|| format!("rank {rank}: rendezvous at {master_host}:{master_port} ({source})"))?;
            let sweep = run_sweep_with(&mut communicator, &spec, gpu.as_ref())
                .with_context(|| format!("rank {rank}: {name} failed"))?;
            let (rows, model) = (sweep.rows, sweep.model);
            let report_wrong: u64 = rows.iter().map(|r| r.out_of_place.wrong + r.in_place.wrong).sum();
            if rank == 0 {
                if args.json {
                    let report = CollectiveReport {
                        schema_version: fabricdoctor_report::SCHEMA_VERSION,
                        tool_version: env!("CARGO_PKG_VERSION").to_string(),
                        collective,
                        ranks: world,
                        hosts: communicator.hosts.clone(),
                        channels: args.channels,
                        transport: transport_name.into(),
                        spec: spec.clone(),
                        model,
                        rows,
                        gpu: crate::gpu::gpu_buffers(&gpu, crate::gpu::STAGED_PINNED_HOST),
                    };
                    emit(&(serde_json::to_string_pretty(&report)? + "\n"))?;
                } else {
                    let mut description = format!(
                        "transport {}, {} channels, rendezvous by {source}",
                        communicator.transport, args.channels
                    );
                    if let Some(buffers) = crate::gpu::gpu_buffers(&gpu, crate::gpu::STAGED_PINNED_HOST) {
                        description.push_str(&format!(
                            ", buffers on GPU {} ({}, {}) {}",
                            buffers.gpu, buffers.name, buffers.pci_bus_id, buffers.memory_path
                        ));
                    }
                    emit(&render_rows(&rows, collective, world, &description, model.as_ref()))?;
                }
                let wrong: u64 = report_wrong;
                return Ok(if wrong > 0 { exit::FINDINGS } else { exit::SUCCESS });
            }
            Ok(exit::SUCCESS)
        }
    }
}

/// Start `ranks` copies of this command as local ranks over loopback; rank 0's output is ours. When one
/// rank fails the others notice within their timeout (their sockets close); the launcher reports every
/// rank that failed.
fn launch_local(name: &str, ranks: u32) -> anyhow::Result<i32> {
    let port = free_master_port()?;
    let executable = std::env::current_exe().context("cannot find this executable to start local ranks")?;
    let forwarded: Vec<String> = std::env::args().skip(1).collect();
    let mut children: Vec<(u32, Child)> = Vec::new();
    for rank in 0..ranks {
        let mut command = Command::new(&executable);
        command
            .args(&forwarded)
            .args([
                "--rank",
                &rank.to_string(),
                "--world-size",
                &ranks.to_string(),
                "--master",
                &format!("127.0.0.1:{port}"),
            ])
            .env_remove("MASTER_ADDR")
            .env_remove("SLURM_PROCID")
            .stdin(Stdio::null())
            .stdout(if rank == 0 { Stdio::inherit() } else { Stdio::null() });
        children.push((rank, command.spawn().with_context(|| format!("failed to start local rank {rank} of {name}"))?));
    }
    let mut failed = Vec::new();
    let mut worst = exit::SUCCESS;
    while !children.is_empty() {
        let mut still = Vec::new();
        for (rank, mut child) in children {
            match child.try_wait()? {
                Some(status) => {
                    let code = status.code().unwrap_or(exit::TOOL_ERROR);
                    if code != exit::SUCCESS {
                        failed.push(format!("rank {rank} exited with {code}"));
                    }
                    worst = worst.max(code);
                }
                None => still.push((rank, child)),
            }
        }
        children = still;
        std::thread::sleep(Duration::from_millis(20));
    }
    if !failed.is_empty() {
        eprintln!("fabricdoctor: local {name}: {}", failed.join(", "));
    }
    Ok(worst)
}

/// A port for rank 0's rendezvous that is free now and that the kernel will not hand out by
/// itself meanwhile: below the ephemeral range (`net.ipv4.ip_local_port_range`, ip-sysctl.rst), from
/// which every bind(0) and every outgoing connection takes its port. A port from bind(0) went back
/// to that pool between our probe and rank 0's bind, and another program's connection could take
/// it ("Address already in use", seen in CI with tests running side by side).
fn free_master_port() -> anyhow::Result<u16> {
    use std::hash::{BuildHasher as _, Hasher as _};
    let ephemeral_low: u16 = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse().ok())
        .unwrap_or(32768);
    const LOWEST: u16 = 10_000;
    if ephemeral_low > LOWEST + 100 {
        for _ in 0..64 {
            // RandomState is seeded from the OS per process: another launcher picks elsewhere.
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u32(std::process::id());
            let candidate = LOWEST + (hasher.finish() % u64::from(ephemeral_low - LOWEST)) as u16;
            if std::net::TcpListener::bind(("127.0.0.1", candidate)).is_ok() {
                return Ok(candidate);
            }
        }
    }
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn the_local_master_port_is_free_and_outside_the_ephemeral_range() {
        let port = free_master_port().expect("a port");
        assert!(std::net::TcpListener::bind(("127.0.0.1", port)).is_ok());
        let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap_or_default();
        if let Some(low) = range.split_whitespace().next().and_then(|l| l.parse::<u16>().ok()) {
            if low > 10_100 {
                assert!(port < low, "{port} is inside the ephemeral range from {low}");
            }
        }
    }

    fn args(extra: &[&str]) -> CollectiveArgs {
        #[derive(Parser)]
        struct Wrapper {
            #[command(flatten)]
            args: CollectiveArgs,
        }
        let mut argv = vec!["test"];
        argv.extend_from_slice(extra);
        Wrapper::parse_from(argv).args
    }

    #[test]
    fn rendezvous_sources_are_tried_in_order() {
        let none = |_: &str| None;
        assert_eq!(resolve(&args(&[]), &none).expect("local"), Role::Local { ranks: 2 });
        let role = resolve(&args(&["--hosts", "a,b,c", "--rank", "2"]), &none).expect("hosts");
        assert_eq!(
            role,
            Role::Rank { rank: 2, world: 3, master_host: "a".into(), master_port: 18516, source: "--hosts" }
        );
        assert!(resolve(&args(&["--hosts", "a,b"]), &none).is_err(), "--hosts needs --rank");
        let torchrun = |name: &str| match name {
            "MASTER_ADDR" => Some("10.0.0.1".to_string()),
            "MASTER_PORT" => Some("29500".to_string()),
            "RANK" => Some("3".to_string()),
            "WORLD_SIZE" => Some("8".to_string()),
            _ => None,
        };
        let role = resolve(&args(&[]), &torchrun).expect("torchrun");
        assert_eq!(
            role,
            Role::Rank {
                rank: 3,
                world: 8,
                master_host: "10.0.0.1".into(),
                master_port: 29500,
                source: "torchrun environment"
            }
        );
        let slurm = |name: &str| match name {
            "SLURM_PROCID" => Some("1".to_string()),
            "SLURM_NTASKS" => Some("5".to_string()),
            "SLURM_JOB_NODELIST" => Some("gpu[07-09,12],login".to_string()),
            _ => None,
        };
        let role = resolve(&args(&["--port", "20000"]), &slurm).expect("slurm");
        assert_eq!(
            role,
            Role::Rank {
                rank: 1,
                world: 5,
                master_host: "gpu07".into(),
                master_port: 20000,
                source: "SLURM environment"
            }
        );
        let broken = |name: &str| (name == "RANK").then(|| "x".to_string()).or_else(|| torchrun(name));
        assert!(resolve(&args(&[]), &broken).is_err());
    }
}
