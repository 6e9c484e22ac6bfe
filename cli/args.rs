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
    /// Copy exactly the files the probes read into a directory or .tar.gz, for `--root` elsewhere.
    Snapshot(SnapshotArgs),
    /// Print a shell completion script.
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff).
    Manpage,
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

    /// Lowest verdict that makes the exit code 1.
    #[arg(long, value_enum, default_value_t = FailOn::Fail, help_heading = "Exit code")]
    pub fail_on: FailOn,
}

#[derive(Debug, Args)]
pub struct TopoArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Print the matrix, legend and rail map as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Output: a directory (created; must be empty) or a file ending in .tar.gz / .tgz.
    #[arg(value_name = "OUT")]
    pub out: PathBuf,
    #[command(flatten)]
    pub source: SourceArgs,
}
