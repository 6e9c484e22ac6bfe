//! `fabricdoctor agent`: bind the given address, print it, serve authenticated burn-in coordinators.

use std::io::Write as _;
use std::net::{IpAddr, TcpListener};
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{bail, Context};
use fabricdoctor_burnin::agent::{default_rails, serve, AgentConfig};
use fabricdoctor_burnin::auth::Token;
use fabricdoctor_burnin::launch::LISTENING;
use fabricdoctor_burnin::protocol::{validate_device, RailAddress};

use crate::args::{AgentArgs, TokenArgs};
use crate::exit;

/// The shared token: --token-file, else $FABRICDOCTOR_TOKEN.
pub fn token(args: &TokenArgs) -> anyhow::Result<Token> {
    if let Some(path) = &args.token_file {
        return Ok(read_token_file(path)?.0);
    }
    match std::env::var("FABRICDOCTOR_TOKEN") {
        Ok(text) => Ok(Token::from_text(&text, "FABRICDOCTOR_TOKEN")?),
        Err(_) => bail!("no token: give --token-file FILE or set FABRICDOCTOR_TOKEN (the same on every host)"),
    }
}

/// The token in `path`, and its text. A file that others can read or write is refused: whoever
/// reads the token can run steps on every agent (ssh refuses private keys the same way).
pub fn read_token_file(path: &Path) -> anyhow::Result<(Token, String)> {
    let metadata = std::fs::metadata(path).with_context(|| format!("failed to read token file {}", path.display()))?;
    let mode = metadata.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        bail!(
            "token file {} is open to group or others (mode {mode:04o}): chmod 600 {}",
            path.display(),
            path.display()
        );
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("failed to read token file {}", path.display()))?;
    let token = Token::from_text(&text, &path.display().to_string())?;
    Ok((token, text.trim().to_string()))
}

/// `--generate-token`: 256 random bits as hex, into a new file readable by its owner only (created
/// with that mode, so the token is never readable by others, not even briefly), else on stdout.
fn generate_token(path: Option<&Path>) -> anyhow::Result<i32> {
    let (_, text) = Token::random()?;
    let Some(path) = path else {
        println!("{text}");
        return Ok(exit::SUCCESS);
    };
    let mut file =
        std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path).with_context(|| {
            format!("failed to create token file {} (an existing one is not replaced)", path.display())
        })?;
    writeln!(file, "{text}").with_context(|| format!("failed to write token file {}", path.display()))?;
    eprintln!("fabricdoctor agent: wrote a new token to {} (mode 0600); copy it to every host", path.display());
    Ok(exit::SUCCESS)
}

fn rails(args: &AgentArgs, listen: std::net::SocketAddr) -> anyhow::Result<Vec<RailAddress>> {
    if args.rail.is_empty() {
        return Ok(default_rails(listen));
    }
    args.rail
        .iter()
        .map(|text| {
            let (name, rest) =
                text.split_once('=').with_context(|| format!("--rail {text}: expected NAME=IP or NAME=IP@DEVICE"))?;
            let (address, device) = match rest.split_once('@') {
                Some((address, device)) => (address, Some(device)),
                None => (rest, None),
            };
            let address: IpAddr = address.parse().with_context(|| format!("--rail {text}: {address} is not an IP"))?;
            // Letters, digits and `_.:-` only: a cross-rail link is named "RAIL->RAIL", so no rail's
            // own name may hold a '>' (or anything a report, a path or a shell would read twice).
            let allowed = |c: char| c.is_ascii_alphanumeric() || "_.:-".contains(c);
            if name.is_empty() || name.len() > 64 || !name.chars().all(allowed) {
                bail!("--rail {text}: the name must be 1 to 64 of letters, digits and _.:-");
            }
            if let Some(device) = device {
                validate_device(device).map_err(|e| anyhow::anyhow!("--rail {text}: {e}"))?;
            }
            Ok(RailAddress { name: name.to_string(), address, device: device.map(str::to_string), link: None })
        })
        .collect()
}

/// Exit when standard input closes (the coordinator that started us is gone).
fn watch_lifeline(stop: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        let mut line = String::new();
        while std::io::stdin().read_line(&mut line).is_ok_and(|n| n > 0) {
            line.clear();
        }
        stop.store(true, Ordering::Relaxed);
        eprintln!("fabricdoctor agent: standard input closed; exiting");
        std::process::exit(exit::SUCCESS);
    });
}

pub fn run(args: AgentArgs) -> anyhow::Result<i32> {
    if args.generate_token {
        return generate_token(args.token.token_file.as_deref());
    }
    let listen = args.listen.context("--listen ADDR is required")?;
    let token = if args.token_stdin {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).context("failed to read the token from standard input")?;
        Token::from_text(&line, "standard input")?
    } else {
        token(&args.token)?
    };
    let rails = rails(&args, listen)?;
    let listener = TcpListener::bind(listen).with_context(|| format!("failed to listen on {listen}"))?;
    let local = listener.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGTERM, Arc::clone(&stop))
        .context("failed to install a signal handler")?;
    // An agent started by a coordinator shares its terminal: Ctrl-C is for the coordinator, which
    // stops between steps and needs its agents until then (they exit with its lifeline).
    let interrupt = if args.lifeline { Arc::new(AtomicBool::new(false)) } else { Arc::clone(&stop) };
    signal_hook::flag::register(signal_hook::consts::SIGINT, interrupt)
        .context("failed to install a signal handler")?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{LISTENING}{local}")?;
    stdout.flush()?;
    eprintln!("fabricdoctor agent: listening on {local}; rails {}", describe(&rails));
    if args.lifeline {
        watch_lifeline(Arc::clone(&stop));
    }
    let mut config = AgentConfig::new(token, rails, Arc::new(|line: String| eprintln!("fabricdoctor agent: {line}")));
    config.max_connections = args.max_connections as usize;
    serve(listener, config, stop)?;
    Ok(exit::SUCCESS)
}

pub fn describe(rails: &[RailAddress]) -> String {
    rails
        .iter()
        .map(|r| match &r.device {
            Some(device) => format!("{}={}@{device}", r.name, r.address),
            None => format!("{}={}", r.name, r.address),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// An agent for this process's own host inside a SLURM step (rank 0 runs it beside the coordinator;
/// the other ranks run only it, until the coordinator leaves).
pub fn slurm_agent(token: Token, port: u16, exit_after_session: bool) -> anyhow::Result<Arc<AtomicBool>> {
    let listen: std::net::SocketAddr = ([0, 0, 0, 0], port).into();
    let listener = TcpListener::bind(listen).with_context(|| format!("failed to listen on {listen}"))?;
    let stop = Arc::new(AtomicBool::new(false));
    let mut config = AgentConfig::new(
        token,
        default_rails(listen),
        Arc::new(|line: String| eprintln!("fabricdoctor agent: {line}")),
    );
    config.exit_after_session = exit_after_session;
    let flag = Arc::clone(&stop);
    if exit_after_session {
        serve(listener, config, flag)?;
    } else {
        std::thread::spawn(move || serve(listener, config, flag));
    }
    Ok(stop)
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;

    fn agent_args(rail: &str) -> AgentArgs {
        let cli =
            crate::args::Cli::try_parse_from(["fabricdoctor", "agent", "--listen", "127.0.0.1:0", "--rail", rail])
                .expect("parse");
        match cli.command {
            crate::args::Command::Agent(args) => args,
            _ => unreachable!("agent"),
        }
    }

    /// A cross-rail link is labelled "RAIL->RAIL": a rail whose own name held '>' would read as one.
    #[test]
    fn a_rail_name_is_letters_digits_and_a_few_marks() {
        let listen = "127.0.0.1:0".parse().expect("address");
        let good = rails(&agent_args("mlx5_0:1=10.0.0.1"), listen).expect("a plain name");
        assert_eq!(good[0].name, "mlx5_0:1");
        for bad in ["rail0->rail1=10.0.0.1", "a b=10.0.0.1", "=10.0.0.1", "r/1=10.0.0.1"] {
            let error = rails(&agent_args(bad), listen).expect_err(bad).to_string();
            assert!(error.contains("letters, digits and _.:-"), "{bad}: {error}");
        }
    }
}
