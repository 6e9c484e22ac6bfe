//! `fabricdoctor`: find out why an RDMA/GPU cluster fabric is slow, broken or hung.
//! The binary is thin: parse arguments, resolve them against the environment, run a command from the
//! library crates, print, and map the outcome to an exit code. It is the only crate that prints.

mod agent;
mod args;
mod burnin;
mod check;
mod collective;
mod counters;
mod exit;
mod gpu;
mod output;
mod perf;
mod playbook;
mod report;
mod sampling;
mod serve;
mod slurm;
mod snapshot;
mod source;
mod topo;
mod triage;

use clap::Parser;

fn main() {
    let cli = args::Cli::parse_from(std::env::args_os());
    let code = match run(cli) {
        Ok(code) => code,
        Err(error) => {
            if output::is_broken_pipe(&error) {
                exit::SUCCESS
            } else {
                // One write for the whole line: ranks of a local collective share their parent's
                // stderr, and eprintln! writes a formatted line piece by piece, so two ranks' errors
                // interleaved mid-line. A pipe keeps a write of up to PIPE_BUF bytes whole (pipe(7)).
                let line = format!("fabricdoctor: error: {error:#}\n");
                let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
                exit::TOOL_ERROR
            }
        }
    };
    std::process::exit(code);
}

fn run(cli: args::Cli) -> anyhow::Result<i32> {
    match cli.command {
        args::Command::Check(args) => check::run(args),
        args::Command::Topo(args) => topo::run(args),
        args::Command::Counters(args) => counters::run(args),
        args::Command::Snapshot(args) => snapshot::run(args),
        args::Command::Perf(command) => perf::run(command),
        args::Command::Triage(args) => triage::run(args),
        args::Command::Playbook(command) => playbook::run(command),
        args::Command::Report(command) => report::run(command),
        args::Command::Burnin(args) => burnin::run(args),
        args::Command::Agent(args) => agent::run(args),
        args::Command::Slurm(args::SlurmCommand::HealthCheck(args)) => slurm::health_check(args),
        args::Command::Slurm(args::SlurmCommand::Prolog(args)) => slurm::prolog(args),
        args::Command::Serve(args) => serve::run(args),
        args::Command::Completions { shell } => {
            let mut command = <args::Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut command, "fabricdoctor", &mut std::io::stdout());
            Ok(exit::SUCCESS)
        }
        args::Command::Manpage => {
            let command = <args::Cli as clap::CommandFactory>::command();
            let mut page = Vec::new();
            clap_mangen::Man::new(command).render(&mut page)?;
            output::emit(&String::from_utf8_lossy(&page))?;
            Ok(exit::SUCCESS)
        }
    }
}
