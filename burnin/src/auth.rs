//! Mutual challenge-response between coordinator and agent over a shared token (HMAC-SHA256, RFC
//! 2104 / FIPS 198-1). Each side sends a fresh random nonce; each proves knowledge of the token by
//! the HMAC of both nonces under its own role label, so the token never crosses the wire, an old
//! proof does not answer a new challenge (replay), and an agent's proof is no coordinator's proof
//! (reflection). The coordinator proves itself first: an agent gives an unauthenticated peer only a
//! random nonce, nothing computed from the token that could be attacked offline (issue #19). The
//! agent proves itself with its first frame, the welcome, sealed under the session key that only a
//! holder of the token can derive (key confirmation, as TLS 1.3's Finished); the coordinator sends no
//! step before that seal has been checked. Verification is constant-time (`hmac`'s `verify_slice`,
//! built on `subtle`).

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::BurninError;

/// Random bytes per nonce (256 bits, the HMAC-SHA256 output size).
pub const NONCE_BYTES: usize = 32;
/// A shorter token is refused: it could be guessed offline from one recorded handshake.
pub const MIN_TOKEN_BYTES: usize = 16;

const COORDINATOR_LABEL: &[u8] = b"fabricdoctor-burnin coordinator v1";
/// The session key's label: HMAC-SHA256 keyed by the token over this label and both nonces is a
/// PRF (RFC 2104 section 5; the KDF of RFC 5869 and NIST SP 800-108 is HMAC over a label and
/// context), so the key is fresh per session and says nothing of the token or of other sessions.
const SESSION_LABEL: &[u8] = b"fabricdoctor-burnin session key v1";
/// The label of a data session's ticket ([`Session::ticket`]).
const TICKET_LABEL: &[u8] = b"fabricdoctor-burnin data ticket v1";
/// Bytes of a frame's tag (the whole HMAC-SHA256 output).
pub const TAG_BYTES: usize = 32;

/// The shared secret. Its Debug form never shows it.
#[derive(Clone)]
pub struct Token(Vec<u8>);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Token({} bytes)", self.0.len())
    }
}

impl Token {
    /// A token from a file's or variable's text (surrounding whitespace and the final newline are
    /// not part of it). `source` names where it came from for the error.
    pub fn from_text(text: &str, source: &str) -> Result<Token, BurninError> {
        let token = text.trim();
        if token.len() < MIN_TOKEN_BYTES {
            return Err(BurninError::Token(format!(
                "{source}: the token must be at least {MIN_TOKEN_BYTES} characters (found {})",
                token.len()
            )));
        }
        Ok(Token(token.as_bytes().to_vec()))
    }

    /// A fresh random token (64 hex characters) for clusters this process starts itself.
    pub fn random() -> Result<(Token, String), BurninError> {
        let text = hex(&random_bytes::<32>()?);
        Ok((Token(text.as_bytes().to_vec()), text))
    }

    fn mac(&self, label: &[u8], first: &[u8], second: &[u8]) -> Hmac<Sha256> {
        // HMAC accepts keys of any length (RFC 2104 section 2); new_from_slice cannot fail for it.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0).unwrap_or_else(|_| unreachable!());
        mac.update(label);
        mac.update(&(first.len() as u32).to_be_bytes());
        mac.update(first);
        mac.update(second);
        mac
    }

    fn prove(&self, label: &[u8], first: &[u8], second: &[u8]) -> String {
        hex(&self.mac(label, first, second).finalize().into_bytes())
    }

    fn verify(&self, label: &[u8], first: &[u8], second: &[u8], proof_hex: &str) -> bool {
        match unhex(proof_hex) {
            Some(proof) => self.mac(label, first, second).verify_slice(&proof).is_ok(),
            None => false,
        }
    }
}

/// `N` bytes from the OS random source.
pub fn random_bytes<const N: usize>() -> Result<[u8; N], BurninError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| BurninError::Token(format!("no random numbers from the OS: {e}")))?;
    Ok(bytes)
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok()).collect()
}

fn nonce_of(text: &str, who: &str) -> Result<Vec<u8>, BurninError> {
    unhex(text)
        .filter(|n| n.len() == NONCE_BYTES)
        .ok_or_else(|| BurninError::Auth(format!("{who} sent a malformed nonce")))
}

/// The agent's half of one handshake.
#[derive(Debug)]
pub struct AgentHandshake {
    token: Token,
    agent_nonce: [u8; NONCE_BYTES],
    coordinator_nonce: Option<Vec<u8>>,
}

impl AgentHandshake {
    pub fn new(token: Token, agent_nonce: [u8; NONCE_BYTES]) -> AgentHandshake {
        AgentHandshake { token, agent_nonce, coordinator_nonce: None }
    }

    /// Answer the coordinator's nonce with ours, and nothing derived from the token.
    pub fn challenge(&mut self, coordinator_nonce_hex: &str) -> Result<String, BurninError> {
        let coordinator_nonce = nonce_of(coordinator_nonce_hex, "the coordinator")?;
        self.coordinator_nonce = Some(coordinator_nonce);
        Ok(hex(&self.agent_nonce))
    }

    /// Check the coordinator's proof over our fresh nonce; the session's frames are then
    /// authenticated with the key both sides derive.
    pub fn verify(&self, proof_hex: &str) -> Result<Session, BurninError> {
        let coordinator_nonce =
            self.coordinator_nonce.as_ref().ok_or_else(|| BurninError::Auth("proof before the challenge".into()))?;
        if self.token.verify(COORDINATOR_LABEL, &self.agent_nonce, coordinator_nonce, proof_hex) {
            Ok(Session::new(&self.token, coordinator_nonce, &self.agent_nonce, Side::Agent))
        } else {
            Err(BurninError::Auth("the coordinator's proof does not match this agent's token".into()))
        }
    }
}

/// The coordinator's half of one handshake.
#[derive(Debug)]
pub struct CoordinatorHandshake {
    token: Token,
    coordinator_nonce: [u8; NONCE_BYTES],
}

impl CoordinatorHandshake {
    pub fn new(token: Token, coordinator_nonce: [u8; NONCE_BYTES]) -> CoordinatorHandshake {
        CoordinatorHandshake { token, coordinator_nonce }
    }

    pub fn nonce(&self) -> String {
        hex(&self.coordinator_nonce)
    }

    /// Prove ourselves over the agent's nonce; with the session whose frames are authenticated with
    /// the key both sides derive. The agent is not proven yet: its first sealed frame (the welcome)
    /// proves it, and an impostor's fails [`Session::open`].
    pub fn respond(&self, agent_nonce_hex: &str) -> Result<(String, Session), BurninError> {
        let agent_nonce = nonce_of(agent_nonce_hex, "the agent")?;
        if agent_nonce == self.coordinator_nonce {
            return Err(BurninError::Auth("the agent echoed our nonce (reflection)".into()));
        }
        let session = Session::new(&self.token, &self.coordinator_nonce, &agent_nonce, Side::Coordinator);
        Ok((self.token.prove(COORDINATOR_LABEL, &agent_nonce, &self.coordinator_nonce), session))
    }
}

/// Which end of a session: the sender of a frame is part of what its tag covers, so a frame cannot
/// be sent back to the side that wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Coordinator,
    Agent,
}

impl Side {
    fn byte(self) -> u8 {
        match self {
            Side::Coordinator => b'C',
            Side::Agent => b'A',
        }
    }

    fn peer(self) -> Side {
        match self {
            Side::Coordinator => Side::Agent,
            Side::Agent => Side::Coordinator,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Side::Coordinator => "coordinator",
            Side::Agent => "agent",
        }
    }
}

/// The integrity of one authenticated session: every frame after the handshake carries
/// HMAC-SHA256(session key, sender || sequence number || body). Sequence numbers count each
/// direction's frames from 0 and are not sent: a replayed, reordered, dropped or reflected frame is
/// checked against the wrong number or sender and fails. The session is not encrypted.
pub struct Session {
    key: [u8; 32],
    side: Side,
    sent: u64,
    received: u64,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("side", &self.side)
            .field("sent", &self.sent)
            .field("received", &self.received)
            .finish()
    }
}

impl Session {
    fn new(token: &Token, coordinator_nonce: &[u8], agent_nonce: &[u8], side: Side) -> Session {
        let key = token.mac(SESSION_LABEL, coordinator_nonce, agent_nonce).finalize().into_bytes();
        Session { key: key.into(), side, sent: 0, received: 0 }
    }

    fn tag(&self, sender: Side, sequence: u64, body: &[u8]) -> Hmac<Sha256> {
        // Any key length is valid for HMAC (RFC 2104 section 2).
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key).unwrap_or_else(|_| unreachable!());
        mac.update(&[sender.byte()]);
        mac.update(&sequence.to_be_bytes());
        mac.update(body);
        mac
    }

    /// The ticket of one data session an agent serves (a burn-in step's perf server): HMAC under
    /// this session's key of the rail and the step's nonce, which both ends of the session compute
    /// alone. The coordinator hands it to the measuring agent; the serving agent refuses a data
    /// connection without it before allocating anything, so a stranger who connects first cannot
    /// take the step's session (issue #19).
    pub fn ticket(&self, rail: &str, nonce: &str) -> String {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key).unwrap_or_else(|_| unreachable!());
        mac.update(TICKET_LABEL);
        mac.update(&(rail.len() as u32).to_be_bytes());
        mac.update(rail.as_bytes());
        mac.update(nonce.as_bytes());
        hex(&mac.finalize().into_bytes())
    }

    /// The tag of our next frame.
    pub fn seal(&mut self, body: &[u8]) -> [u8; TAG_BYTES] {
        let tag = self.tag(self.side, self.sent, body).finalize().into_bytes().into();
        self.sent += 1;
        tag
    }

    /// Check the peer's next frame (in constant time: `verify_slice`, crate subtle). A bad tag is an
    /// error naming the frame; the caller closes the session.
    pub fn open(&mut self, body: &[u8], tag: &[u8]) -> Result<(), BurninError> {
        let sender = self.side.peer();
        if self.tag(sender, self.received, body).verify_slice(tag).is_err() {
            return Err(BurninError::Auth(format!(
                "frame {} from the {} failed its integrity check (altered, injected, replayed, reordered or \
                 reflected); closing the session",
                self.received,
                sender.name()
            )));
        }
        self.received += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(text: &str) -> Token {
        Token::from_text(text, "test").expect("token")
    }

    const GOOD: &str = "0123456789abcdef-shared";

    #[test]
    fn both_sides_with_the_token_agree() {
        let coordinator = CoordinatorHandshake::new(token(GOOD), [1; NONCE_BYTES]);
        let mut agent = AgentHandshake::new(token(GOOD), [2; NONCE_BYTES]);
        let nonce = agent.challenge(&coordinator.nonce()).expect("challenge");
        let (answer, mut coordinator_session) = coordinator.respond(&nonce).expect("answer");
        let mut agent_session = agent.verify(&answer).expect("coordinator proven");
        assert!(!answer.contains(GOOD), "the token never crosses the wire");
        // The agent proves itself with its sealed welcome.
        let welcome = agent_session.seal(b"welcome");
        coordinator_session.open(b"welcome", &welcome).expect("agent proven");
    }

    /// Issue #19: the agent answered every stranger with a proof over the token, material for an
    /// offline guess. Now its answer is its nonce alone: the same whatever its token.
    #[test]
    fn an_unauthenticated_peer_gets_nothing_derived_from_the_token() {
        let mut one = AgentHandshake::new(token(GOOD), [2; NONCE_BYTES]);
        let mut other = AgentHandshake::new(token("a-different-token-123"), [2; NONCE_BYTES]);
        let hello = hex(&[9; NONCE_BYTES]);
        assert_eq!(one.challenge(&hello).expect("one"), other.challenge(&hello).expect("other"));
        assert_eq!(one.challenge(&hello).expect("one"), hex(&[2; NONCE_BYTES]));
    }

    #[test]
    fn a_wrong_token_is_refused_on_either_side() {
        // The agent refuses a coordinator proving a different token (before giving anything)...
        let coordinator = CoordinatorHandshake::new(token("a-different-token-123"), [1; NONCE_BYTES]);
        let mut agent = AgentHandshake::new(token(GOOD), [2; NONCE_BYTES]);
        let nonce = agent.challenge(&coordinator.nonce()).expect("challenge");
        let (answer, _) = coordinator.respond(&nonce).expect("answer");
        assert!(agent.verify(&answer).is_err());
        // ...and the coordinator refuses an agent that cannot seal under the token's session key.
        let coordinator = CoordinatorHandshake::new(token(GOOD), [1; NONCE_BYTES]);
        let (_, mut coordinator_session) = coordinator.respond(&hex(&[2; NONCE_BYTES])).expect("answer");
        let mut impostor =
            Session::new(&token("a-different-token-123"), &[1; NONCE_BYTES], &[2; NONCE_BYTES], Side::Agent);
        let welcome = impostor.seal(b"welcome");
        assert!(coordinator_session.open(b"welcome", &welcome).is_err(), "an impostor's welcome accepted");
    }

    #[test]
    fn a_recorded_proof_does_not_answer_a_new_challenge() {
        let coordinator = CoordinatorHandshake::new(token(GOOD), [1; NONCE_BYTES]);
        let mut first = AgentHandshake::new(token(GOOD), [2; NONCE_BYTES]);
        let nonce = first.challenge(&coordinator.nonce()).expect("challenge");
        let (recorded, _) = coordinator.respond(&nonce).expect("proof");
        first.verify(&recorded).expect("genuine session");
        // An eavesdropper replays the same hello and proof to a new session (fresh agent nonce).
        let mut second = AgentHandshake::new(token(GOOD), [3; NONCE_BYTES]);
        second.challenge(&coordinator.nonce()).expect("challenge");
        assert!(second.verify(&recorded).is_err(), "replayed proof accepted");
    }

    #[test]
    fn an_echoed_nonce_is_refused() {
        // Reflection: a peer sends the coordinator its own nonce back hoping for a proof to reuse.
        let coordinator = CoordinatorHandshake::new(token(GOOD), [5; NONCE_BYTES]);
        assert!(coordinator.respond(&coordinator.nonce()).is_err());
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        let mut agent = AgentHandshake::new(token(GOOD), [2; NONCE_BYTES]);
        assert!(agent.verify("00").is_err(), "proof before challenge");
        assert!(agent.challenge("zz").is_err());
        assert!(agent.challenge(&"ab".repeat(31)).is_err(), "short nonce");
        assert!(agent.challenge("é").is_err());
        agent.challenge(&hex(&[7; NONCE_BYTES])).expect("challenge");
        for proof in ["", "0", "not hex at all", &"00".repeat(32), &"ff".repeat(4096)] {
            assert!(agent.verify(proof).is_err(), "{proof:?}");
        }
        let coordinator = CoordinatorHandshake::new(token(GOOD), [1; NONCE_BYTES]);
        for nonce in ["", "zz", "é", &"ab".repeat(31)] {
            assert!(coordinator.respond(nonce).is_err(), "{nonce:?}");
        }
        assert!(Token::from_text("short\n", "FABRICDOCTOR_TOKEN").is_err());
        assert_eq!(format!("{:?}", token(GOOD)), "Token(23 bytes)");
        assert_eq!(unhex("0aFf"), Some(vec![10, 255]));
    }

    /// Both ends of one session, as after a real handshake.
    fn sessions() -> (Session, Session) {
        let coordinator = CoordinatorHandshake::new(token(GOOD), [1; NONCE_BYTES]);
        let mut agent = AgentHandshake::new(token(GOOD), [2; NONCE_BYTES]);
        let nonce = agent.challenge(&coordinator.nonce()).expect("challenge");
        let (answer, coordinator_session) = coordinator.respond(&nonce).expect("answer");
        (coordinator_session, agent.verify(&answer).expect("coordinator proven"))
    }

    /// Both ends of a session derive the same ticket for a rail and nonce; another nonce, rail or
    /// session gives another.
    #[test]
    fn both_ends_derive_one_ticket_per_step() {
        let (coordinator, agent) = sessions();
        let ticket = coordinator.ticket("rail0", "00aa");
        assert_eq!(ticket, agent.ticket("rail0", "00aa"));
        assert_eq!(ticket.len(), 64);
        assert_ne!(ticket, agent.ticket("rail0", "00ab"));
        assert_ne!(ticket, agent.ticket("rail1", "00aa"));
        let other = {
            let coordinator = CoordinatorHandshake::new(token(GOOD), [3; NONCE_BYTES]);
            coordinator.respond(&hex(&[4; NONCE_BYTES])).expect("answer").1
        };
        assert_ne!(ticket, other.ticket("rail0", "00aa"));
    }

    #[test]
    fn frames_in_order_pass_in_both_directions() {
        let (mut coordinator, mut agent) = sessions();
        for body in [&b"{\"step\":\"ping\"}"[..], b"{\"step\":\"check\"}"] {
            let tag = coordinator.seal(body);
            agent.open(body, &tag).expect("coordinator's frame");
            let answer = b"{\"answer\":\"pong\"}";
            let tag = agent.seal(answer);
            coordinator.open(answer, &tag).expect("agent's frame");
        }
    }

    #[test]
    fn a_tampered_body_is_refused() {
        let (mut coordinator, mut agent) = sessions();
        let tag = coordinator.seal(br#"{"step":"serve","rail":"a","sessions":1,"timeout_s":5}"#);
        let error =
            agent.open(br#"{"step":"serve","rail":"a","sessions":4,"timeout_s":5}"#, &tag).expect_err("altered");
        assert!(error.to_string().contains("frame 0 from the coordinator failed its integrity check"), "{error}");
        // A truncated or missing tag, too.
        let (mut coordinator, mut agent) = sessions();
        let tag = coordinator.seal(b"{}");
        assert!(agent.open(b"{}", &tag[..16]).is_err());
        assert!(agent.open(b"{}", &[]).is_err());
    }

    #[test]
    fn a_replayed_or_reordered_frame_is_refused() {
        let (mut coordinator, mut agent) = sessions();
        let first = coordinator.seal(b"first");
        agent.open(b"first", &first).expect("first");
        // The same frame again: checked as frame 1, it fails.
        assert!(agent.open(b"first", &first).is_err(), "replay accepted");
        let (mut coordinator, mut agent) = sessions();
        let _first = coordinator.seal(b"first");
        let second = coordinator.seal(b"second");
        assert!(agent.open(b"second", &second).is_err(), "reordered frame accepted");
        // A frame of another session (same token, other nonces) does not pass either.
        let (mut other, _) = {
            let coordinator = CoordinatorHandshake::new(token(GOOD), [3; NONCE_BYTES]);
            let mut agent = AgentHandshake::new(token(GOOD), [4; NONCE_BYTES]);
            let nonce = agent.challenge(&coordinator.nonce()).expect("challenge");
            let (answer, session) = coordinator.respond(&nonce).expect("proof");
            (session, agent.verify(&answer).expect("verify"))
        };
        let (_, mut agent) = sessions();
        let foreign = other.seal(b"ping");
        assert!(agent.open(b"ping", &foreign).is_err(), "another session's frame accepted");
    }

    #[test]
    fn a_reflected_frame_is_refused() {
        // The coordinator's own frame sent back to it as if the agent had written it.
        let (mut coordinator, _agent) = sessions();
        let body = b"{\"step\":\"ping\"}";
        let tag = coordinator.seal(body);
        let error = coordinator.open(body, &tag).expect_err("reflected");
        assert!(error.to_string().contains("from the agent"), "{error}");
    }

    #[test]
    fn a_frame_tagged_for_the_other_direction_is_refused() {
        // The agent's frame 0 tagged as if the coordinator had sent it: right key, number and body,
        // wrong direction.
        let (coordinator, mut agent) = sessions();
        let body = b"{\"answer\":\"pong\"}";
        let wrong = coordinator.tag(Side::Agent, 0, body).finalize().into_bytes();
        assert!(agent.open(body, &wrong).is_err(), "the agent accepted a frame tagged as its own");
        let mut coordinator = coordinator;
        let from_agent_as_coordinator = agent.tag(Side::Coordinator, 0, body).finalize().into_bytes();
        assert!(coordinator.open(body, &from_agent_as_coordinator).is_err());
    }
}
