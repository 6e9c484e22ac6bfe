//! Command-line definitions (clap derive). Parsing only validates; `source`/commands resolve against
//! the environment.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(name = "fabricdoctor", version, about = "Find out why an RDMA/GPU cluster fabric is slow, broken or hung")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Node health with verdicts: PCIe, GPU-NIC topology, RDMA ports, host settings.
    Check(CheckArgs),
    /// GPU/NIC affinity matrix as `nvidia-smi topo -m` prints it (from sysfs alone), then the rail map.
    Topo(TopoArgs),
    /// RDMA, PFC/ECN and port counters: values, or deltas and rates over an interval; Prometheus export.
    Counters(CountersArgs),
    /// Bandwidth and latency tests (RDMA WRITE/READ/SEND) over verbs or TCP, perftest-compatible.
    #[command(subcommand)]
    Perf(PerfCommand),
    /// Copy exactly the files the probes read into a directory or .tar.gz, for `--root` elsewhere.
    Snapshot(SnapshotArgs),
    /// Diagnose an NCCL hang or slowdown from logs and pasted tool outputs (files, directories, stdin).
    Triage(TriageArgs),
    /// The triage playbooks (rules and next steps as data) as readable runbooks.
    #[command(subcommand)]
    Playbook(PlaybookCommand),
    /// Render a report written by another command (`check --json`, `burnin`) in another format.
    #[command(subcommand)]
    Report(ReportCommand),
    /// Multi-host burn-in: check, loopback, pairwise matrix, all-to-all, AllReduce, soak, sign-off;
    /// pins slow pairs to a host, NIC or link. Exit 0 signed off, 1 findings, 2 could not run.
    Burnin(BurninArgs),
    /// Run the burn-in agent on this host (steps come from an authenticated `burnin` coordinator).
    Agent(AgentArgs),
    /// Slurm's machinery: the node health check that drains and resumes.
    #[command(subcommand)]
    Slurm(SlurmCommand),
    /// Prometheus exporter: re-run the checks every --interval, hold link flap and drop state
    /// across samples, and serve /metrics, /healthz and /report.json (a scrape never waits for a
    /// check run). Exit 2 when it cannot start (a taken port, a bad policy).
    Serve(ServeArgs),
    /// Print a shell completion script.
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff).
    Manpage,
}

#[derive(Debug, Subcommand)]
pub enum SlurmCommand {
    /// HealthCheckProgram mode: run the fast node checks; on a fail, drain this node with
    /// Reason="fabricdoctor: <id> <subject>"; resume it once it passes, when the drain was
    /// fabricdoctor's own. Exit 0 healthy, 1 failing, 2 could not run (no scontrol, unknown node).
    HealthCheck(HealthCheckArgs),
    /// Prolog mode, the job's gang preflight: run the fast node checks, then measure latency and
    /// TCP bandwidth between every pair of the job's nodes (SLURM_JOB_NODELIST), share the figures
    /// and judge them the same way on every node. Exit 1 on the node at fault only (Slurm drains
    /// the node whose prolog fails and requeues the job), naming it; 0 elsewhere; 2 could not run.
    Prolog(PrologArgs),
}

#[derive(Debug, Args)]
pub struct PrologArgs {
    #[command(flatten)]
    pub checks: NodeCheckArgs,
    /// The job's nodes, as a Slurm host list (default: SLURM_JOB_NODELIST, else SLURM_NODELIST).
    #[arg(long, value_name = "HOSTLIST")]
    pub nodes: Option<String>,
    /// This node's Slurm name (default: SLURMD_NODENAME, else the short hostname).
    #[arg(long, value_name = "NAME")]
    pub node: Option<String>,
    /// The job (default: SLURM_JOB_ID); peers of another job are refused.
    #[arg(long, value_name = "ID")]
    pub job: Option<String>,
    /// TCP port every node of the job listens on for its peers.
    #[arg(long, default_value_t = 18520, value_name = "PORT")]
    pub port: u16,
    /// Where a node is reached, NAME=IP (repeatable); default: its NodeAddr from scontrol, else DNS.
    #[arg(long = "address", value_name = "NAME=IP")]
    pub addresses: Vec<String>,
    /// How long each direction of each pair streams.
    #[arg(long, default_value = "500ms", value_name = "DURATION", value_parser = parse_duration)]
    pub duration: std::time::Duration,
    /// How long a node waits for its partner of a round.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = parse_duration)]
    pub round_timeout: std::time::Duration,
    /// The whole preflight's limit (keep it below slurm.conf's PrologEpilogTimeout).
    #[arg(long, default_value = "120s", value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: std::time::Duration,
    /// A pair below this share of the job's healthy rate (the median of each node's best pair) is
    /// slow. A single TCP stream is bound by a CPU core as much as by the link, so pairs of one
    /// job spread by up to 2x on healthy nodes; the preflight is for gross faults (a port down, a
    /// link trained far below its rate, traffic routed over a management network), and burn-in
    /// for fine ones.
    #[arg(long, default_value_t = 0.25, value_name = "FRACTION")]
    pub min_ratio: f64,
    /// A pair below this many Gbit/s is slow whatever the others do.
    #[arg(long, value_name = "GBPS")]
    pub min_gbps: Option<f64>,
    /// The scontrol that looks up the nodes' addresses.
    #[arg(long, default_value = "scontrol", value_name = "PATH")]
    pub scontrol: String,
}

/// What a long-running or scheduler-driven check run judges: the node (or a capture), which
/// checks, and by what policy and profile. `slurm health-check`, `slurm prolog` and `serve` share
/// it, and turn it into the `check` arguments they run ([`CheckSelection::check_args`]).
#[derive(Debug, Args)]
pub struct CheckSelection {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Run only checks whose id starts with this (repeatable).
    #[arg(long, value_name = "ID")]
    pub only: Vec<String>,
    /// Site policy TOML (as `check --policy`).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Node profile TOML (as `check --profile`).
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
}

impl CheckSelection {
    /// The `check` arguments for this selection, with `only` in place of `--only` and counters
    /// sampled for 2 s or not at all.
    pub fn check_args(&self, only: &[String], sample: bool) -> Result<CheckArgs, clap::Error> {
        #[derive(Parser)]
        struct Wrapper {
            #[command(flatten)]
            check: CheckArgs,
        }
        let mut argv: Vec<std::ffi::OsString> = vec!["check".into()];
        if let Some(root) = &self.source.root {
            argv.extend(["--root".into(), root.clone().into_os_string()]);
        }
        for (flag, path) in [("--policy", &self.policy), ("--profile", &self.profile)] {
            if let Some(path) = path {
                argv.extend([flag.into(), path.clone().into_os_string()]);
            }
        }
        if !sample {
            argv.push("--no-sample".into());
        }
        for id in only {
            argv.extend(["--only".into(), id.into()]);
        }
        Ok(Wrapper::try_parse_from(argv)?.check)
    }
}

/// The node checks a Slurm hook runs: fast ones unless --sample.
#[derive(Debug, Args)]
pub struct NodeCheckArgs {
    #[command(flatten)]
    pub selection: CheckSelection,
    /// Also sample counters for 2 s and run the counter checks (slower). Without it, `--only`
    /// defaults to every check that needs no counter sample.
    #[arg(long)]
    pub sample: bool,
}

#[derive(Debug, Args)]
pub struct HealthCheckArgs {
    #[command(flatten)]
    pub checks: NodeCheckArgs,
    /// This node's Slurm name (default: SLURMD_NODENAME, else the short hostname).
    #[arg(long, value_name = "NAME")]
    pub node: Option<String>,
    /// Refuse to drain when the drained share of this node's partitions would pass this.
    #[arg(long, default_value_t = 0.1, value_name = "FRACTION")]
    pub max_drained_fraction: f64,
    /// Print the scontrol updates instead of running them.
    #[arg(long)]
    pub dry_run: bool,
    /// The scontrol to run.
    #[arg(long, default_value = "scontrol", value_name = "PATH")]
    pub scontrol: String,
    /// Also list every warn, error and fail finding with its action.
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub selection: CheckSelection,
    /// Address to serve on (HOST:PORT). 0.0.0.0 or [::] to be scraped from other hosts.
    #[arg(long, default_value = "127.0.0.1:9478", value_name = "ADDR")]
    pub listen: String,
    /// Time from the start of one check run to the start of the next; counters are diffed over it.
    #[arg(long, default_value = "60s", value_name = "DURATION", value_parser = parse_duration)]
    pub interval: std::time::Duration,
    /// Also write the metrics to FILE (atomically, after every run) for node_exporter's textfile
    /// collector; the name must end in .prom.
    #[arg(long, value_name = "FILE")]
    pub textfile: Option<PathBuf>,
    /// Flaps of a port are counted over this window.
    #[arg(long, default_value = "1h", value_name = "DURATION", value_parser = parse_duration)]
    pub flap_window: std::time::Duration,
    /// This many flaps within the window fail link.flapping (fewer warn).
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub flap_threshold: u32,
    /// A port down this long fails link.dropped.
    #[arg(long, default_value = "4m", value_name = "DURATION", value_parser = parse_duration)]
    pub drop_after: std::time::Duration,
    /// Connections served at once; more are answered 503 at once.
    #[arg(long, default_value_t = 16, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub max_connections: u32,
}

#[derive(Debug, Args)]
pub struct SourceArgs {
    /// Analyse a captured tree (a `snapshot` directory or .tar.gz, or a fixture) instead of this node.
    #[arg(long, value_name = "DIR|FILE.tar.gz")]
    pub root: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Exit 1 on fail or error verdicts (default).
    Fail,
    /// Exit 1 on warnings too.
    Warn,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
    Junit,
    Markdown,
    /// node-problem-detector's custom plugin contract: one short line, exit 0 OK, 1 problem,
    /// 2 unknown (the checks could not look).
    Npd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub source: SourceArgs,

    /// List every check with its documentation and exit.
    #[arg(long, help_heading = "Selection")]
    pub list: bool,
    /// Run only checks whose id starts with this (repeatable): --only pcie --only host.memlock
    #[arg(long, value_name = "ID", help_heading = "Selection")]
    pub only: Vec<String>,
    /// Policy file (TOML) overriding default thresholds.
    #[arg(long, value_name = "FILE", help_heading = "Selection")]
    pub policy: Option<PathBuf>,

    /// Node model profile (TOML, e.g. playbooks/profiles/hgx-h100-8x400g.toml): expected GPUs, NICs,
    /// port rate and PCIe links; runs profile.inventory and profile.pcie and sets the expected port rate.
    #[arg(long, value_name = "FILE", help_heading = "Selection")]
    pub profile: Option<PathBuf>,

    /// Print the versioned JSON report (same as --format json).
    #[arg(long, conflicts_with = "format", help_heading = "Output")]
    pub json: bool,
    #[arg(long, value_enum, default_value_t = OutputFormat::Text, help_heading = "Output")]
    pub format: OutputFormat,
    /// Write the report to FILE (atomically) instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE", help_heading = "Output")]
    pub output: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, help_heading = "Output")]
    pub color: ColorChoice,
    /// Text output: leave out the pass lines (the summary still counts them).
    #[arg(long, help_heading = "Output")]
    pub hide_pass: bool,
    /// Also write a self-contained HTML page (findings, topology picture) to FILE.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub html: Option<PathBuf>,

    /// Lowest verdict that makes the exit code 1.
    #[arg(long, value_enum, default_value_t = FailOn::Fail, help_heading = "Exit code")]
    pub fail_on: FailOn,

    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// Load each GPU's PCIe link with host<->device copies and re-read its speed and width, so an
    /// idle GPU's power-saving link is told apart from a downgraded one (needs the NVIDIA driver).
    #[arg(long, help_heading = "GPU")]
    pub load: bool,
}

/// How counters are sampled for the counter checks.
#[derive(Debug, Args)]
#[command(next_help_heading = "Counter sampling")]
pub struct SamplingArgs {
    /// Take one counter sample only: counter checks judge totals since the last reset.
    #[arg(long, conflicts_with_all = ["sample_interval", "before"])]
    pub no_sample: bool,
    /// Time between the two counter samples on the live node.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_duration)]
    pub sample_interval: std::time::Duration,
    /// An earlier capture (snapshot directory or .tar.gz) to use as the first counter sample.
    #[arg(long, value_name = "DIR|FILE.tar.gz")]
    pub before: Option<PathBuf>,
}

/// Durations as people write them: "2s", "500ms", "10m", "72h". Zero is refused: every duration
/// flag is an interval, a run time or a timeout, and none of them means anything at zero.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let duration =
        humantime::parse_duration(text).map_err(|e| format!("{text:?} is not a duration such as 2s or 500ms: {e}"))?;
    if duration.is_zero() {
        return Err(format!("{text:?} is zero; give a positive duration such as 1s or 500ms"));
    }
    Ok(duration)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CountersFormat {
    Text,
    Json,
    /// Prometheus text exposition (for node_exporter's textfile collector).
    Prometheus,
}

#[derive(Debug, Args)]
pub struct CountersArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Sample every DURATION and print deltas and per-second rates.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub interval: Option<std::time::Duration>,
    /// Number of intervals (default 1 with --interval).
    #[arg(long, value_name = "N", requires = "interval", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    /// Keep sampling until interrupted (needs --interval).
    #[arg(long, requires = "interval", conflicts_with = "count")]
    pub watch: bool,
    /// An earlier capture to diff against (deltas from it to --root or the live node).
    #[arg(long, value_name = "DIR|FILE.tar.gz", conflicts_with = "interval")]
    pub before: Option<PathBuf>,
    /// Print as JSON (same as --format json).
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    #[arg(long, value_enum, default_value_t = CountersFormat::Text)]
    pub format: CountersFormat,
    /// Also list counters that are zero (or did not change).
    #[arg(long)]
    pub all: bool,
    /// Write to FILE (atomically; point node_exporter's textfile collector here) instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TopoArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Print the matrix, legend and rail map as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also write a self-contained HTML page with the topology picture to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// A self-contained HTML page (styles and script inline, no network access) of a report.json.
    Html(ReportHtmlArgs),
}

#[derive(Debug, Args)]
pub struct ReportHtmlArgs {
    /// The report: `check --json` output or a burn-in's report.json.
    #[arg(value_name = "REPORT.json")]
    pub report: PathBuf,
    /// Write the page to FILE (atomically) instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Output: a directory (created; must be empty) or a file ending in .tar.gz / .tgz.
    #[arg(value_name = "OUT")]
    pub out: PathBuf,
    #[command(flatten)]
    pub source: SourceArgs,
}

#[derive(Debug, Subcommand)]
pub enum PerfCommand {
    /// Serve perf clients (one session at a time) until interrupted.
    Server(PerfServerArgs),
    /// Measure against a `perf server`.
    Client(PerfClientArgs),
    /// Ring AllReduce across ranks (nccl-tests all_reduce_perf semantics and columns).
    Allreduce(CollectiveArgs),
    /// AllGather (all_gather_perf).
    Allgather(CollectiveArgs),
    /// ReduceScatter (reduce_scatter_perf).
    Reducescatter(CollectiveArgs),
    /// AlltoAll (alltoall_perf).
    Alltoall(CollectiveArgs),
    /// Broadcast from --root-rank (broadcast_perf).
    Broadcast(CollectiveArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CollectiveOp {
    Sum,
    Max,
    Min,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CollectiveType {
    F32,
    F64,
    I32,
    Bf16,
}

#[derive(Debug, Clone, Args)]
pub struct CollectiveArgs {
    /// Smallest size (nccl-tests -b; K/M/G suffixes are powers of 1024).
    #[arg(long = "minbytes", short = 'b', default_value = "8", help_heading = "Sizes")]
    pub minimum: String,
    /// Largest size (nccl-tests -e).
    #[arg(long = "maxbytes", short = 'e', default_value = "32M", help_heading = "Sizes")]
    pub maximum: String,
    /// Multiply the size by this each step (nccl-tests -f).
    #[arg(long = "stepfactor", short = 'f', default_value_t = 2, help_heading = "Sizes")]
    pub factor: u64,
    /// Timed iterations per size (nccl-tests -n).
    #[arg(long = "iters", short = 'n', default_value_t = 20, help_heading = "Sizes")]
    pub iterations: u32,
    /// Warm-up iterations per size (nccl-tests -w).
    #[arg(long = "warmup-iters", short = 'w', default_value_t = 5, help_heading = "Sizes")]
    pub warmup: u32,
    /// Data-check passes per size and mode (nccl-tests -c).
    #[arg(long = "check", short = 'c', default_value_t = 1, help_heading = "Sizes")]
    pub check: u32,
    #[arg(long, value_enum, default_value_t = CollectiveOp::Sum)]
    pub op: CollectiveOp,
    #[arg(long, value_enum, default_value_t = CollectiveType::F32)]
    pub dtype: CollectiveType,
    /// Root rank of Broadcast (nccl-tests -r). `--root` is a capture everywhere else, so the rank
    /// has its own name.
    #[arg(long = "root-rank", short = 'r', default_value_t = 0)]
    pub root_rank: usize,
    /// Parallel rings over separate connections.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub channels: u32,
    /// AllReduce algorithm (NCCL_ALGO's role): ring, tree (recursive doubling), or auto: per size,
    /// whichever the α-β model measured on the live links at start-up predicts faster.
    #[arg(long, value_enum, default_value_t = CollectiveAlgorithm::Auto)]
    pub algo: CollectiveAlgorithm,
    /// Data path after the TCP rendezvous: tcp, or verbs (RDMA WRITE with immediate over RC queue pairs).
    #[arg(long, value_enum, default_value_t = PerfTransport::Tcp)]
    pub transport: PerfTransport,
    /// Keep every rank's send and receive buffers in the memory of CUDA GPU N (staged through pinned
    /// host memory around each collective); needs the NVIDIA driver.
    #[arg(long, value_name = "N")]
    pub gpu: Option<u32>,
    #[command(flatten)]
    pub verbs: VerbsArgs,
    /// A rank silent for this long stops every rank, naming it.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub timeout: std::time::Duration,
    /// Print the JSON report (rank 0).
    #[arg(long)]
    pub json: bool,

    /// Ranks' hosts in rank order (rank 0 is the rendezvous master); needs --rank.
    #[arg(long, value_delimiter = ',', help_heading = "Rendezvous", conflicts_with = "hostfile")]
    pub hosts: Vec<String>,
    /// File with one host per line (rank order; '#' comments).
    #[arg(long, value_name = "FILE", help_heading = "Rendezvous")]
    pub hostfile: Option<PathBuf>,
    /// This process's rank with --hosts/--hostfile.
    #[arg(long, help_heading = "Rendezvous")]
    pub rank: Option<usize>,
    /// Rendezvous port on rank 0 (default 18516; MASTER_PORT under torchrun).
    #[arg(long, help_heading = "Rendezvous")]
    pub port: Option<u16>,
    /// Start N local ranks over loopback (the default when no hosts are given: 2).
    #[arg(long, help_heading = "Rendezvous", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub np: Option<u32>,
    /// How ranks' times combine (nccl-tests -a): 0 rank 0, 1 average (default), 2 minimum, 3 maximum.
    #[arg(long = "average", short = 'a', default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..=3))]
    pub average: u8,
    /// Test hook: this rank corrupts one element of each checked result (the data check must count it).
    #[arg(long, hide = true)]
    pub inject_corruption: Option<usize>,
    /// Internal: rank 0's address for a locally started rank.
    #[arg(long, hide = true, requires = "rank")]
    pub master: Option<String>,
    /// Internal: world size for a locally started rank.
    #[arg(long, hide = true, requires = "master")]
    pub world_size: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CollectiveAlgorithm {
    Ring,
    Tree,
    Auto,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PerfOperation {
    Write,
    Read,
    Send,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PerfTest {
    /// Bandwidth (ib_*_bw).
    Bw,
    /// Latency (ib_*_lat).
    Lat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PerfTransport {
    Verbs,
    Tcp,
}

/// Which RDMA device, port and GID the verbs transport uses (perf client/server and the collectives).
#[derive(Debug, Clone, Args)]
pub struct VerbsArgs {
    /// RDMA device (verbs; default: the first with an active port).
    #[arg(long, short = 'd', value_name = "DEVICE", help_heading = "Verbs")]
    pub device: Option<String>,
    /// RDMA port number of the device (verbs; perftest -i).
    #[arg(long = "ib-port", short = 'i', default_value_t = 1, help_heading = "Verbs")]
    pub ib_port: u8,
    /// GID index (verbs; perftest -x; default: NCCL_IB_GID_INDEX, else the RoCE v2 GID of the port
    /// netdev's IPv4 address).
    #[arg(long, short = 'x', value_name = "N", env = "NCCL_IB_GID_INDEX", help_heading = "Verbs")]
    pub gid_index: Option<u32>,
    /// GRH traffic class of the queue pairs (verbs; perftest --tclass; default: NCCL_IB_TC, else 0).
    /// On RoCE v2 its upper six bits are the DSCP a lossless fabric maps to its PFC priority.
    #[arg(long = "tclass", short = 'T', value_name = "N", env = "NCCL_IB_TC", help_heading = "Verbs")]
    pub traffic_class: Option<u8>,
    /// Service level of the queue pairs (verbs; perftest --sl; default: NCCL_IB_SL, else 0).
    #[arg(long = "sl", short = 'S', value_name = "N", env = "NCCL_IB_SL", help_heading = "Verbs",
          value_parser = clap::value_parser!(u8).range(0..=15))]
    pub service_level: Option<u8>,
}

impl VerbsArgs {
    /// The traffic class and service level asked for (0 where neither flag nor variable says).
    pub fn traffic(&self) -> fabricdoctor_perf::verbs::Traffic {
        fabricdoctor_perf::verbs::Traffic {
            traffic_class: self.traffic_class.unwrap_or(0),
            service_level: self.service_level.unwrap_or(0),
        }
    }
}

/// Options both sides take.
#[derive(Debug, Args)]
pub struct PerfCommonArgs {
    /// Control port (perftest's default).
    #[arg(long, default_value_t = 18515)]
    pub port: u16,
    /// Data path: verbs (default where an RDMA device exists) or tcp.
    #[arg(long, value_enum)]
    pub transport: Option<PerfTransport>,
    #[command(flatten)]
    pub verbs: VerbsArgs,
    /// Give up on a silent peer after this long.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub timeout: std::time::Duration,
    /// Keep this side's messages in the memory of CUDA GPU N (staged through pinned host memory over
    /// TCP); needs the NVIDIA driver.
    #[arg(long, value_name = "N")]
    pub gpu: Option<u32>,
}

#[derive(Debug, Args)]
pub struct PerfServerArgs {
    #[command(flatten)]
    pub common: PerfCommonArgs,
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0")]
    pub bind: String,
    /// Serve one client session (one message size), then exit.
    #[arg(long)]
    pub once: bool,
    /// Serve N sessions, then exit.
    #[arg(long, value_name = "N", conflicts_with = "once")]
    pub sessions: Option<u64>,
    /// Refuse clients running another operation (the handshake names the difference).
    #[arg(long, value_enum, help_heading = "Constraints")]
    pub op: Option<PerfOperation>,
    #[arg(long, value_enum, help_heading = "Constraints")]
    pub test: Option<PerfTest>,
    #[arg(long, value_name = "BYTES", help_heading = "Constraints")]
    pub size: Option<u64>,
    #[arg(long, value_name = "N", help_heading = "Constraints")]
    pub iters: Option<u64>,
}

#[derive(Debug, Args)]
pub struct PerfClientArgs {
    /// The server's host name or address.
    pub host: String,
    #[command(flatten)]
    pub common: PerfCommonArgs,
    #[arg(long, value_enum, default_value_t = PerfOperation::Write)]
    pub op: PerfOperation,
    #[arg(long, value_enum, default_value_t = PerfTest::Bw)]
    pub test: PerfTest,
    /// Message size in bytes (perftest -s).
    #[arg(long, short = 's', default_value_t = 65536, value_parser = clap::value_parser!(u64).range(1..=1 << 30), conflicts_with = "all_sizes")]
    pub size: u64,
    /// Sweep sizes 2 B to 8 MiB in powers of two (perftest -a).
    #[arg(long, short = 'a')]
    pub all_sizes: bool,
    /// Iterations per size (perftest -n; default 5000 for bandwidth, 1000 for latency).
    #[arg(long, short = 'n', value_parser = clap::value_parser!(u64).range(1..), conflicts_with = "duration")]
    pub iters: Option<u64>,
    /// Run each size for this long instead of a number of iterations (perftest -D).
    #[arg(long, short = 'D', value_parser = parse_duration)]
    pub duration: Option<std::time::Duration>,
    /// Both directions at once (perftest -b).
    #[arg(long, short = 'b')]
    pub bidirectional: bool,
    /// Queue pairs (TCP: connections) in parallel (perftest -q).
    #[arg(long, short = 'q', default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub qps: u32,
    /// Messages in flight per queue pair (perftest -t).
    #[arg(long, short = 't', default_value_t = 128, value_parser = clap::value_parser!(u32).range(1..=8192))]
    pub tx_depth: u32,
    /// Work requests per post call in bandwidth tests (verbs; perftest -l): fewer doorbells per
    /// message, for message rates of small sizes.
    #[arg(long, short = 'l', default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub post_list: u32,
    /// Inline size in bytes (verbs; perftest -I). Default as perftest: 220 for WRITE latency, 236
    /// for SEND latency, 0 for bandwidth and READ (a device that refuses the default gets none).
    #[arg(long, short = 'I', value_name = "BYTES")]
    pub inline: Option<u32>,
    /// Send verifiable messages (header with sequence number, sender, length and a per-run seed;
    /// payload words) and check every one that arrives: flipped bits, lost, repeated, reordered or
    /// stale messages are counted, and the first is named with its offset and words.
    #[arg(long)]
    pub validate: bool,
    /// Test hook: flip one bit in every Nth message sent (TCP; the header of every Nth SEND over
    /// verbs), so `--validate` proves it can fail.
    #[arg(long, value_name = "N", hide = true, requires = "validate")]
    pub inject_corruption: Option<u64>,
    /// Bandwidth in Gb/s (10^9 bits) instead of MiB/s (perftest --report_gbits).
    #[arg(long)]
    pub report_gbits: bool,
    /// Print the JSON report.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TriageArgs {
    /// Logs and tool outputs: files, directories (read recursively) or `-` for stdin (the default
    /// when stdin is not a terminal).
    #[arg(value_name = "FILE|DIR|-")]
    pub inputs: Vec<PathBuf>,
    /// Print the versioned JSON report.
    #[arg(long)]
    pub json: bool,
    /// Load playbooks (*.toml) from this directory too; one named like an embedded playbook replaces it.
    #[arg(long, value_name = "DIR")]
    pub playbook_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum PlaybookCommand {
    /// List the playbooks and their rule ids.
    List {
        #[arg(long, value_name = "DIR")]
        playbook_dir: Option<PathBuf>,
    },
    /// Print one playbook as a runbook.
    Show {
        name: String,
        #[arg(long, value_name = "DIR")]
        playbook_dir: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct TokenArgs {
    /// File holding the shared token (at least 16 characters; readable by its owner only, mode
    /// 0600 or 0400). Default: $FABRICDOCTOR_TOKEN. `fabricdoctor agent --generate-token` makes one.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Launcher {
    /// Agents are already running (`fabricdoctor agent --listen ...` on each host).
    None,
    /// Start the agents over ssh (BatchMode; the token goes over ssh's stdin).
    Ssh,
}

#[derive(Debug, Args)]
pub struct BurninArgs {
    /// Hosts running agents: name or name:port, comma-separated.
    #[arg(long, value_name = "LIST", conflicts_with_all = ["hostfile", "local", "resume"], help_heading = "Hosts")]
    pub hosts: Option<String>,
    /// File with one host (or host:port) per line; `#` comments.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["local", "resume"], help_heading = "Hosts")]
    pub hostfile: Option<PathBuf>,
    /// Run N agents on this machine over loopback (a random token) to see a burn-in work.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=64), conflicts_with = "resume", help_heading = "Hosts")]
    pub local: Option<u32>,
    /// Run on a simulated fabric instead of agents (a TOML model: hosts, rails, leaves, noise and
    /// injected faults; see bench/burnin-scale.sh): nothing is sent on the network, time is
    /// simulated, and the report says "launcher": "simulated". For planning and for testing what a
    /// burn-in pins at thousands of hosts. With --resume, give the run's model again.
    #[arg(long, value_name = "MODEL", conflicts_with_all = ["hosts", "hostfile", "local"], help_heading = "Hosts")]
    pub simulate: Option<PathBuf>,
    /// How agents are started on --hosts/--hostfile.
    #[arg(long, value_enum, default_value_t = Launcher::None, help_heading = "Hosts")]
    pub launcher: Launcher,
    /// Agents' control port where a host names none (and the port `--launcher ssh` and SLURM ranks listen on).
    #[arg(long, value_name = "PORT", default_value_t = 7207, help_heading = "Hosts")]
    pub agent_port: u16,
    /// ssh program for `--launcher ssh`.
    #[arg(long, value_name = "PROGRAM", default_value = "ssh", help_heading = "Hosts")]
    pub ssh_command: String,
    /// The fabricdoctor command on remote hosts for `--launcher ssh`.
    #[arg(long, value_name = "COMMAND", default_value = "fabricdoctor", help_heading = "Hosts")]
    pub agent_command: String,
    /// How long to wait for agents to answer at the start.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration, help_heading = "Hosts")]
    pub connect_timeout: std::time::Duration,
    #[command(flatten)]
    pub token: TokenArgs,

    /// Total run time; phases scale with it and the soak repeats until it has passed (45s, 2h, 72h).
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = parse_duration, conflicts_with = "resume", help_heading = "Protocol")]
    pub duration: std::time::Duration,
    /// An edited copy of the protocol (see playbooks/burnin/default.toml).
    #[arg(long, value_name = "FILE", conflicts_with = "resume", help_heading = "Protocol")]
    pub playbook: Option<PathBuf>,
    /// Print the built-in playbook and exit.
    #[arg(long, help_heading = "Protocol")]
    pub print_playbook: bool,
    /// Print the rounds and the estimated duration of a burn-in of HOSTS hosts (with --rails,
    /// --duration and --playbook) and exit, reaching no host.
    #[arg(long, value_name = "HOSTS", value_parser = clap::value_parser!(u32).range(2..=65536), conflicts_with_all = ["hosts", "hostfile", "local", "simulate", "resume"], help_heading = "Protocol")]
    pub plan: Option<u32>,
    /// Rails per host for --plan.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64), requires = "plan", help_heading = "Protocol")]
    pub rails: u32,
    /// Hosts under each leaf for --plan (a playbook that pairs by leaf).
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=4096), requires = "plan", help_heading = "Protocol")]
    pub hosts_per_leaf: u32,
    /// Compare with an earlier run's report.json and flag regressions.
    #[arg(long, value_name = "FILE", help_heading = "Protocol")]
    pub baseline: Option<PathBuf>,
    /// Data path of the pair tests, loopback and collectives: tcp, or verbs on each rail's RDMA device
    /// (agents' --rail NAME=IP@DEVICE, or the device whose GID table holds IP). --resume keeps the run's.
    #[arg(long, value_enum, default_value_t = PerfTransport::Tcp, help_heading = "Protocol")]
    pub transport: PerfTransport,
    /// Bandwidth every pair should reach in each direction, Gb/s, on every rail: overrides the
    /// playbook's [expectations] and the link rate x efficiency. A pair below it fails
    /// burnin.pair.below_expected; more than half a rail's pairs below, burnin.fabric.below_expected.
    #[arg(long, value_name = "GBPS", value_parser = parse_expectation, allow_negative_numbers = true, conflicts_with = "resume", help_heading = "Protocol")]
    pub expect_pair_gbps: Option<f64>,
    /// Node model profile (TOML, e.g. playbooks/profiles/hgx-h100-8x400g.toml): its NIC rate x the
    /// transport's efficiency is each rail's expectation (below explicit figures), and its rails must
    /// name the run's rails.
    #[arg(long, value_name = "FILE", conflicts_with = "resume", help_heading = "Protocol")]
    pub profile: Option<PathBuf>,
    /// Besides each rail with itself (rail-aware pairing, the default), measure every pair on every
    /// two different rails (rail k of one host with rail j of the other): in a rail-optimized fabric
    /// that traffic crosses the spine. Each direction is a matrix "CLIENT_RAIL->SERVER_RAIL", judged
    /// against the lower of the two rails' expectations x [expectations] cross_rail_fraction (1.0),
    /// and kept out of isolation. Agents send from their rail's address: hosts that route by source
    /// (a table per NIC) keep the traffic on that rail.
    #[arg(long, conflicts_with = "resume", help_heading = "Protocol")]
    pub cross_rail: bool,
    /// Median one-way latency every pair should stay under, microseconds (perftest's t_typical / 2).
    #[arg(long, value_name = "US", value_parser = parse_expectation, allow_negative_numbers = true, conflicts_with = "resume", help_heading = "Protocol")]
    pub expect_latency_us: Option<f64>,

    /// Where events.jsonl, report.json, summary.md and junit.xml go.
    #[arg(long, value_name = "DIR", required_unless_present_any = ["resume", "print_playbook", "plan"], help_heading = "Output")]
    pub report_dir: Option<PathBuf>,
    /// Continue the interrupted run in DIR without repeating finished steps.
    #[arg(long, value_name = "DIR", conflicts_with = "report_dir", help_heading = "Output")]
    pub resume: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct AgentArgs {
    /// Address to listen on (only this one): 10.0.0.5:7207, 0.0.0.0:7207, 127.0.0.1:0.
    #[arg(long, value_name = "ADDR", required_unless_present = "generate_token")]
    pub listen: Option<std::net::SocketAddr>,
    #[command(flatten)]
    pub token: TokenArgs,
    /// Make a token (256 random bits, 64 hex characters) and exit: written to --token-file FILE
    /// (created, mode 0600; an existing file is not replaced), else printed. Copy the same file to
    /// every host.
    #[arg(long, conflicts_with_all = ["token_stdin", "rail", "lifeline"])]
    pub generate_token: bool,
    /// Read the token from the first line of standard input (`--launcher ssh` sends it so).
    #[arg(long, conflicts_with = "token_file")]
    pub token_stdin: bool,
    /// A rail: NAME=IP, the address data tests on that rail bind (repeatable), or NAME=IP@DEVICE with
    /// the RDMA device that carries it over verbs (default: the device whose GID table holds IP).
    /// Default: "default" at the listen address (loopback when it is 0.0.0.0).
    #[arg(long, value_name = "NAME=IP[@DEVICE]")]
    pub rail: Vec<String>,
    /// Exit when standard input closes (agents started by a coordinator die with it).
    #[arg(long, hide = true)]
    pub lifeline: bool,
    /// Simultaneous coordinator connections.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub max_connections: u32,
}

/// An expectation on the command line: a positive, finite number.
fn parse_expectation(text: &str) -> Result<f64, String> {
    let value: f64 = text.trim().parse().map_err(|_| format!("{text:?} is not a number"))?;
    fabricdoctor_burnin::expectations::positive("the expectation", value)
}
