//! The coordinator's connection to one agent: dial, authenticate (we prove ourselves first; the
//! agent proves itself with its sealed welcome), then one request at a time with a deadline per step.
//! The same connection can lead to a host of a simulated fabric (crate::simulation), which answers
//! the same steps from its model: the coordinator cannot tell the two apart.

use std::io::Read as _;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::auth::{random_bytes, CoordinatorHandshake, Session, Token, TAG_BYTES};
use crate::protocol::{
    read_frame, read_sealed, write_frame, write_sealed, AgentLimits, Auth, RailAddress, Request, Response, MAGIC,
    MAX_FRAME, PROTOCOL_VERSION,
};
use crate::simulation::SimulatedFabric;
use crate::BurninError;

/// An authenticated connection to an agent.
#[derive(Debug)]
pub struct AgentConnection {
    link: Link,
    pub address: String,
    pub hostname: String,
    pub tool_version: String,
    pub rails: Vec<RailAddress>,
    /// What the agent announced it will do for one step.
    pub limits: AgentLimits,
}

/// What carries the steps: an agent's authenticated session, or a host of a simulated fabric.
#[derive(Debug)]
enum Link {
    Session { stream: TcpStream, session: Session },
    Simulated { fabric: Arc<SimulatedFabric>, host: usize },
}

fn resolve(address: &str) -> Result<SocketAddr, BurninError> {
    address
        .to_socket_addrs()
        .map_err(|e| BurninError::Io(format!("cannot resolve agent {address}"), e))?
        .next()
        .ok_or_else(|| BurninError::Run(format!("agent {address}: no address")))
}

/// How a handshake failed: cut off before the agent answered (worth a new connection), or for good.
enum Handshake {
    Cut(BurninError),
    Failed(BurninError),
}

impl Handshake {
    /// `error` described by `describe`: a cut when the connection closed or reset under us (an
    /// agent shuts a handshake down when its deadline passes: agent.rs `Handshakes::expire`).
    fn of(error: BurninError, describe: impl Fn(BurninError) -> BurninError) -> Handshake {
        use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset, UnexpectedEof};
        let cut = matches!(&error, BurninError::Io(_, e) if matches!(e.kind(), UnexpectedEof | ConnectionReset | ConnectionAborted | BrokenPipe));
        if cut {
            Handshake::Cut(describe(error))
        } else {
            Handshake::Failed(describe(error))
        }
    }
}

impl AgentConnection {
    /// Dial `address` (retrying until `wait` has passed: agents may still be starting) and
    /// authenticate with `token`. A handshake the agent cut off before it answered (its deadline for
    /// unauthenticated peers passed on a slow or loaded host, or the connection dropped) is tried
    /// again on a new connection within the same `wait`; a refusal or a bad seal is not.
    pub fn connect(address: &str, token: &Token, wait: Duration) -> Result<AgentConnection, BurninError> {
        let deadline = Instant::now() + wait;
        let socket = resolve(address)?;
        loop {
            let stream = loop {
                match TcpStream::connect_timeout(&socket, Duration::from_secs(5)) {
                    Ok(stream) => break stream,
                    Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
                    Err(e) => return Err(BurninError::Io(format!("cannot reach agent {address}"), e)),
                }
            };
            match Self::authenticate(stream, address, token) {
                Ok(connection) => return Ok(connection),
                Err(Handshake::Cut(_)) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(200)),
                Err(Handshake::Cut(error) | Handshake::Failed(error)) => return Err(error),
            }
        }
    }

    /// One handshake on a new connection.
    fn authenticate(mut stream: TcpStream, address: &str, token: &Token) -> Result<AgentConnection, Handshake> {
        let _ = stream.set_nodelay(true);
        stream.set_read_timeout(Some(Duration::from_secs(15))).ok();
        stream.set_write_timeout(Some(Duration::from_secs(15))).ok();
        let handshake = CoordinatorHandshake::new(token.clone(), random_bytes().map_err(Handshake::Failed)?);
        let on = |e: BurninError| Handshake::of(e, |e| BurninError::Auth(format!("agent {address}: {e}")));
        write_frame(
            &mut stream,
            &Auth::Hello { magic: MAGIC.into(), version: PROTOCOL_VERSION, nonce: handshake.nonce() },
        )
        .map_err(on)?;
        let nonce = match read_frame::<Auth>(&mut stream, MAX_FRAME).map_err(on)? {
            Auth::Challenge { nonce } => nonce,
            Auth::Refused { reason } => {
                return Err(Handshake::Failed(BurninError::Auth(format!("agent {address} refused: {reason}"))))
            }
            other => {
                return Err(Handshake::Failed(BurninError::Auth(format!("agent {address}: unexpected {other:?}"))))
            }
        };
        let (answer, mut session) = match handshake.respond(&nonce) {
            Ok(answer) => answer,
            Err(error) => {
                let _ = write_frame(&mut stream, &Auth::Refused { reason: "malformed challenge".into() });
                return Err(on(error));
            }
        };
        write_frame(&mut stream, &Auth::Proof { proof: answer }).map_err(on)?;
        // The welcome is the agent's first authenticated frame and its proof: sealed under the
        // session key, which only a holder of the token derives.
        let welcome = read_welcome(&mut stream, &mut session).map_err(|e| match e {
            BurninError::Auth(reason) => Handshake::Failed(BurninError::Auth(format!(
                "agent {address}: its welcome does not carry our token's seal (wrong token, or not an agent): {reason}"
            ))),
            other => on(other),
        })?;
        match welcome {
            Auth::Welcome { hostname, tool_version, rails, limits } => Ok(AgentConnection {
                link: Link::Session { stream, session },
                address: address.to_string(),
                hostname,
                tool_version,
                rails,
                limits,
            }),
            Auth::Refused { reason } => {
                Err(Handshake::Failed(BurninError::Auth(format!("agent {address} refused: {reason}"))))
            }
            other => Err(Handshake::Failed(BurninError::Auth(format!("agent {address}: unexpected {other:?}")))),
        }
    }

    /// Host `host` of a simulated fabric, as if its agent had welcomed us.
    pub fn simulated(fabric: Arc<SimulatedFabric>, host: usize) -> AgentConnection {
        let (hostname, rails, limits) = fabric.welcome(host);
        AgentConnection {
            address: format!("simulated:{host}"),
            hostname,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            rails,
            limits,
            link: Link::Simulated { fabric, host },
        }
    }

    /// The ticket this agent expects from clients of the session it serves on `rail` for `nonce`
    /// (the agent derives the same from our shared session key; a simulated host takes any).
    pub fn ticket(&self, rail: &str, nonce: &str) -> String {
        match &self.link {
            Link::Session { session, .. } => session.ticket(rail, nonce),
            Link::Simulated { .. } => format!("simulated-{nonce}"),
        }
    }

    /// Send one step and wait at most `timeout` for its answer. An `Error` answer is returned as
    /// `Ok(Response::Error)`: the agent is alive; transport failures are `Err` (the agent is lost).
    pub fn request(&mut self, request: &Request, timeout: Duration) -> Result<Response, BurninError> {
        let (stream, session) = match &mut self.link {
            Link::Session { stream, session } => (stream, session),
            Link::Simulated { fabric, host } => return fabric.answer(*host, request),
        };
        stream.set_write_timeout(Some(timeout)).ok();
        stream.set_read_timeout(Some(timeout)).ok();
        write_sealed(stream, session, request)
            .map_err(|e| BurninError::Run(format!("agent {}: {} not sent: {e}", self.address, request.name())))?;
        read_sealed(stream, session, MAX_FRAME).map_err(|e| match e {
            BurninError::Auth(reason) => {
                // The session can no longer be trusted: close it (the agent is then lost to the run).
                let _ = stream.shutdown(std::net::Shutdown::Both);
                BurninError::Run(format!("agent {}: {}: {reason}", self.address, request.name()))
            }
            BurninError::Io(_, io)
                if matches!(io.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) =>
            {
                BurninError::Run(format!(
                    "agent {}: no answer to {} within {:.0} s",
                    self.address,
                    request.name(),
                    timeout.as_secs_f64()
                ))
            }
            other => BurninError::Run(format!("agent {}: {}: {other}", self.address, request.name())),
        })
    }
}

/// The agent's answer to our proof: its welcome, sealed, or a refusal without a tag (an agent that
/// refuses our proof derived no session key). A refusal is only believed as the end of the session,
/// which a man in the middle can cause anyway by cutting the connection.
fn read_welcome(stream: &mut TcpStream, session: &mut Session) -> Result<Auth, BurninError> {
    let mut length = [0u8; 4];
    stream.read_exact(&mut length).map_err(|e| BurninError::Io("read".into(), e))?;
    let length = u32::from_be_bytes(length);
    if length > MAX_FRAME {
        return Err(BurninError::Oversized { length, max: MAX_FRAME });
    }
    let mut body = vec![0u8; length as usize];
    stream.read_exact(&mut body).map_err(|e| BurninError::Io("read".into(), e))?;
    let mut tag = [0u8; TAG_BYTES];
    match stream.read_exact(&mut tag) {
        Ok(()) => {
            session.open(&body, &tag)?;
            serde_json::from_slice(&body).map_err(|e| BurninError::Protocol(format!("malformed message: {e}")))
        }
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => match serde_json::from_slice(&body) {
            Ok(refused @ Auth::Refused { .. }) => Ok(refused),
            _ => Err(BurninError::Io("read".into(), e)),
        },
        Err(e) => Err(BurninError::Io("read".into(), e)),
    }
}
