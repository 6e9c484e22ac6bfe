//! The TCP transport: the same generator over sockets, for hosts without RDMA and as a baseline.
//! WRITE and SEND are a byte stream of messages; READ is a request (8 bytes: the size) answered by the
//! server with one message. A completion is the kernel accepting a whole message into the socket, so
//! the generator takes the end of a TCP bandwidth run from the server's report (all bytes received),
//! not from the last local completion.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use crate::gpu::{DeviceBuffer, Gpu, PinnedBuffer};

use crate::integrity::{check_region, fill_region, Sender, Stream, Verified, Verifier};
use crate::params::{Operation, RunParameters};
use crate::transport::{Connection, Delivery, Served};
use crate::PerfError;

const READ_CHUNK: usize = 1 << 20;

/// Which end of the connection this is: the two directions of a connection are two integrity
/// streams, told apart by their sender number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The side that dialled (the perf client): sender 0.
    Dialer,
    /// The side that accepted (the perf server): sender 1.
    Acceptor,
}

impl End {
    fn sender(self) -> u32 {
        match self {
            End::Dialer => 0,
            End::Acceptor => 1,
        }
    }

    fn peer(self) -> End {
        match self {
            End::Dialer => End::Acceptor,
            End::Acceptor => End::Dialer,
        }
    }
}

/// Where received bytes go. Validating, whole messages are assembled in place (read straight into a
/// message-sized buffer, no extra copy) and verified as each completes; otherwise a scratch chunk is
/// overwritten and only message boundaries are counted.
#[derive(Debug)]
struct Inbound {
    buffer: Vec<u8>,
    /// Bytes of the current message received so far.
    filled: usize,
    size: usize,
    verifier: Option<Verifier>,
    /// Inside a timed latency round trip: a completed message waits in the buffer for `settle`, so
    /// verification is not measured as latency (the peer sends the next only after our next ping).
    defer: bool,
    unverified: bool,
}

impl Inbound {
    fn new(size: usize, verifier: Option<Verifier>) -> Inbound {
        let length = if verifier.is_some() { size } else { READ_CHUNK.min(size.max(8)).max(8) };
        Inbound { buffer: vec![0u8; length], filled: 0, size, verifier, defer: false, unverified: false }
    }

    /// Where the next read goes: the rest of the current message when validating, else the scratch.
    fn space(&mut self) -> &mut [u8] {
        match self.verifier {
            Some(_) => &mut self.buffer[self.filled..self.size],
            None => &mut self.buffer[..],
        }
    }

    /// Account `n` bytes just read into [`Inbound::space`]; returns the messages it completed.
    fn received(&mut self, n: usize) -> usize {
        match &mut self.verifier {
            Some(verifier) => {
                self.filled += n;
                if self.filled < self.size {
                    return 0;
                }
                if self.defer {
                    self.unverified = true;
                } else {
                    verifier.check(&self.buffer[..self.size]);
                }
                self.filled = 0;
                1
            }
            None => {
                let total = self.filled + n;
                self.filled = total % self.size;
                total / self.size
            }
        }
    }

    /// Verify the message a timed round trip left in the buffer.
    fn settle(&mut self) {
        if std::mem::take(&mut self.unverified) {
            if let Some(verifier) = &mut self.verifier {
                verifier.check(&self.buffer[..self.size]);
            }
        }
    }

    /// True when no byte of a next message has arrived.
    fn at_boundary(&self) -> bool {
        self.filled == 0
    }
}

#[derive(Debug)]
pub struct TcpConnection {
    stream: TcpStream,
    peer: String,
    operation: Operation,
    size: usize,
    depth: usize,
    timeout: Duration,
    /// What this side sends: one message re-sent as is, or (validating) a stream of stamped messages.
    message: Vec<u8>,
    sender: Option<Sender>,
    inbound: Inbound,
    /// Messages completed but not yet reported by `poll`.
    completed: usize,
    /// `--gpu`: the message lives in GPU memory, staged through pinned host memory.
    gpu: Option<GpuStaging>,
    gpu_verified: Verified,
    /// Test hook (`perf client --inject-corruption N`): flip one bit in every Nth message sent, so a
    /// run proves its verification can fail.
    corrupt_every: Option<u64>,
    sent: u64,
}

/// GPU memory behind a socket. Sockets cannot read or write device memory, so every message sent is
/// first copied from the GPU into pinned host memory and every message received is copied into the
/// GPU after it arrived (what NCCL's socket transport does): the bandwidth measured includes both
/// PCIe copies, which is what a GPU job over TCP gets.
#[derive(Debug)]
pub struct GpuStaging {
    device: DeviceBuffer,
    host: PinnedBuffer,
}

impl GpuStaging {
    /// Device and pinned buffers of `size` bytes; the device buffer starts with the region pattern
    /// (both sides fill it without exchanging data), so what is sent comes out of GPU memory.
    pub fn new(gpu: &Arc<Gpu>, size: usize) -> Result<GpuStaging, PerfError> {
        let mut device = gpu.alloc(size)?;
        let mut host = gpu.alloc_pinned(size)?;
        fill_region(host.as_mut_slice());
        device.copy_from_host(host.as_slice())?;
        Ok(GpuStaging { device, host })
    }
}

impl TcpConnection {
    /// Wrap a connected data socket for `parameters`; `end` says which direction this side sends.
    pub fn new(
        stream: TcpStream,
        parameters: &RunParameters,
        timeout: Duration,
        end: End,
    ) -> Result<TcpConnection, PerfError> {
        let peer = stream.peer_addr().map(|a| a.to_string()).unwrap_or_else(|_| "peer".into());
        let io = |source| PerfError::Io { peer: peer.clone(), during: "socket setup", cause: source };
        stream.set_nodelay(true).map_err(io)?;
        stream.set_write_timeout(Some(timeout)).map_err(|source| PerfError::Io {
            peer: peer.clone(),
            during: "socket setup",
            cause: source,
        })?;
        stream.set_read_timeout(Some(timeout)).map_err(|source| PerfError::Io {
            peer: peer.clone(),
            during: "socket setup",
            cause: source,
        })?;
        let size = usize::try_from(parameters.size).ok().filter(|s| *s > 0 && *s <= 1 << 30).ok_or_else(|| {
            PerfError::Unsupported(format!("message size {} must be 1 byte to 1 GiB", parameters.size))
        })?;
        let stream_of = |end: End| Stream::new(parameters.validation_seed, end.sender(), size);
        let (message, sender, verifier) = if parameters.validate {
            (Vec::new(), Some(Sender::new(stream_of(end))), Some(Verifier::new(stream_of(end.peer()))))
        } else {
            (vec![0u8; size], None, None)
        };
        Ok(TcpConnection {
            stream,
            peer,
            operation: parameters.operation,
            size,
            depth: parameters.tx_depth.max(1) as usize,
            timeout,
            message,
            sender,
            inbound: Inbound::new(size, verifier),
            completed: 0,
            gpu: None,
            gpu_verified: Verified::default(),
            corrupt_every: None,
            sent: 0,
        })
    }

    /// Keep the message in `gpu`'s memory. READ responses arrive in pieces spanning messages on the
    /// requesting side, so that side supports WRITE and SEND only.
    pub fn with_gpu(mut self, gpu: &Arc<Gpu>, requester: bool) -> Result<TcpConnection, PerfError> {
        if requester && self.operation == Operation::Read {
            return Err(PerfError::Unsupported(
                "--gpu over TCP measures write and send; read responses are not staged into the GPU".into(),
            ));
        }
        self.gpu = Some(GpuStaging::new(gpu, self.size)?);
        Ok(self)
    }

    /// Flip one bit in the middle of every `every`th message sent (a test hook; 0 means never).
    pub fn with_corruption(mut self, every: Option<u64>) -> TcpConnection {
        self.corrupt_every = every.filter(|n| *n > 0);
        self
    }

    fn io_error(&self, during: &'static str, source: std::io::Error) -> PerfError {
        match source.kind() {
            ErrorKind::WouldBlock | ErrorKind::TimedOut => {
                PerfError::PeerSilent { peer: self.peer.clone(), waited: self.timeout }
            }
            ErrorKind::UnexpectedEof | ErrorKind::ConnectionReset | ErrorKind::BrokenPipe => {
                PerfError::PeerClosed { peer: self.peer.clone(), during }
            }
            _ => PerfError::Io { peer: self.peer.clone(), during, cause: source },
        }
    }

    fn send_message(&mut self, during: &'static str) -> Result<(), PerfError> {
        self.sent += 1;
        if self.corrupt_every.is_some_and(|every| self.sent % every == 0) {
            let mut message = match &mut self.sender {
                Some(sender) => sender.next_message().to_vec(),
                None => self.message.clone(),
            };
            let middle = message.len() / 2;
            message[middle] ^= 0x01;
            return self.stream.write_all(&message).map_err(|e| self.io_error(during, e));
        }
        let result = match (&mut self.gpu, &mut self.sender) {
            (Some(stage), _) => {
                stage.device.copy_to_host(stage.host.as_mut_slice())?;
                self.stream.write_all(stage.host.as_slice())
            }
            (None, Some(sender)) => self.stream.write_all(sender.next_message()),
            (None, None) => self.stream.write_all(&self.message),
        };
        result.map_err(|e| self.io_error(during, e))
    }

    /// Receive one whole message into pinned memory, copy it into the GPU and, when validating, copy
    /// it back out and check it: the data checked is the data that reached GPU memory. Returns false
    /// when the peer finished cleanly before the message's first byte and `end_allowed`.
    fn receive_to_gpu(&mut self, during: &'static str, end_allowed: bool) -> Result<bool, PerfError> {
        let Some(stage) = &mut self.gpu else { return Ok(true) };
        let mut filled = 0;
        while filled < self.size {
            let result = self.stream.read(&mut stage.host.as_mut_slice()[filled..]);
            match result {
                Ok(0) if filled == 0 && end_allowed => return Ok(false),
                Ok(0) => return Err(PerfError::PeerClosed { peer: self.peer.clone(), during }),
                Ok(n) => filled += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io_error(during, e)),
            }
        }
        let Some(stage) = &mut self.gpu else { return Ok(true) };
        stage.device.copy_from_host(stage.host.as_slice())?;
        if self.inbound.verifier.is_some() {
            stage.host.as_mut_slice().fill(0);
            stage.device.copy_to_host(stage.host.as_mut_slice())?;
            let (wrong, _) = check_region(stage.host.as_slice());
            self.gpu_verified.messages += 1;
            self.gpu_verified.bytes += self.size as u64;
            self.gpu_verified.wrong_bytes += wrong;
        }
        Ok(true)
    }

    fn send_request(&mut self) -> Result<(), PerfError> {
        let request = (self.size as u64).to_be_bytes();
        self.stream.write_all(&request).map_err(|e| self.io_error("read request", e))
    }

    /// Receive exactly one message (verifying it when validating). With `end_allowed`, the peer
    /// closing before the message's first byte returns false instead of an error.
    fn receive_message(&mut self, during: &'static str, end_allowed: bool) -> Result<bool, PerfError> {
        if self.gpu.is_some() {
            return self.receive_to_gpu(during, end_allowed);
        }
        loop {
            let got = match self.stream.read(self.inbound.space()) {
                Ok(0) if end_allowed && self.inbound.at_boundary() => return Ok(false),
                Ok(0) => return Err(PerfError::PeerClosed { peer: self.peer.clone(), during }),
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io_error(during, e)),
            };
            // Without validation a read may run into the next message (the byte stream has no
            // boundaries); the peer of a ping-pong or a counted stream never sends ahead, so a
            // completed message is always this one.
            if self.inbound.received(got) > 0 {
                return Ok(true);
            }
        }
    }

    fn receive_request(&mut self) -> Result<bool, PerfError> {
        let mut request = [0u8; 8];
        match self.stream.read_exact(&mut request) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(false),
            Err(e) => return Err(self.io_error("read request", e)),
        }
        let asked = u64::from_be_bytes(request);
        if asked != self.size as u64 {
            return Err(PerfError::Mismatch {
                field: "message size",
                client: asked.to_string(),
                server: self.size.to_string(),
            });
        }
        Ok(true)
    }

    /// What this side verified of what it received.
    pub fn verified(&self) -> Verified {
        let mut verified = self.gpu_verified;
        if let Some(verifier) = &self.inbound.verifier {
            verified.add(&verifier.verified);
        }
        verified
    }
}

impl Connection for TcpConnection {
    fn depth(&self) -> usize {
        self.depth
    }

    fn post(&mut self) -> Result<(), PerfError> {
        match self.operation {
            Operation::Write | Operation::Send => {
                self.send_message("bandwidth send")?;
                self.completed += 1;
            }
            Operation::Read => self.send_request()?,
        }
        Ok(())
    }

    fn poll(&mut self, wait: Duration) -> Result<usize, PerfError> {
        if self.operation == Operation::Read {
            // Drain whatever responses have arrived, waiting at most `wait` for the first bytes.
            self.stream
                .set_read_timeout(Some(wait.max(Duration::from_micros(1))))
                .map_err(|e| self.io_error("poll", e))?;
            let mut first = true;
            loop {
                let result = self.stream.read(self.inbound.space());
                match result {
                    Ok(0) => {
                        let _ = self.stream.set_read_timeout(Some(self.timeout));
                        return Err(PerfError::PeerClosed { peer: self.peer.clone(), during: "read responses" });
                    }
                    Ok(n) => {
                        self.completed += self.inbound.received(n);
                        if first {
                            self.stream.set_nonblocking(true).map_err(|e| self.io_error("poll", e))?;
                            first = false;
                        }
                    }
                    Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => {
                        let _ = self.stream.set_nonblocking(false);
                        return Err(self.io_error("read responses", e));
                    }
                }
            }
            self.stream.set_nonblocking(false).map_err(|e| self.io_error("poll", e))?;
            self.stream.set_read_timeout(Some(self.timeout)).map_err(|e| self.io_error("poll", e))?;
        }
        Ok(std::mem::take(&mut self.completed))
    }

    fn finish(&mut self) -> Result<(), PerfError> {
        match self.stream.shutdown(Shutdown::Write) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotConnected => Ok(()),
            Err(e) => Err(self.io_error("finish", e)),
        }
    }

    fn serve(&mut self, expected: Option<u64>) -> Result<Served, PerfError> {
        let mut served = 0u64;
        // The peer may pause between sizes or while the client sets up; only silence longer than
        // the timeout is an error, and EOF (the client's finish) ends the test.
        loop {
            if expected.is_some_and(|e| served >= e) {
                return Ok(Served::Counted(served));
            }
            match self.operation {
                Operation::Write | Operation::Send if self.gpu.is_some() => {
                    if !self.receive_to_gpu("bandwidth receive", true)? {
                        return Ok(Served::Counted(served));
                    }
                    served += 1;
                }
                Operation::Write | Operation::Send => match self.stream.read(self.inbound.space()) {
                    Ok(0) if self.inbound.at_boundary() => return Ok(Served::Counted(served)),
                    Ok(0) => {
                        return Err(PerfError::PeerClosed { peer: self.peer.clone(), during: "bandwidth receive" })
                    }
                    Ok(n) => served += self.inbound.received(n) as u64,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(e) => return Err(self.io_error("bandwidth receive", e)),
                },
                Operation::Read => {
                    if !self.receive_request()? {
                        return Ok(Served::Counted(served));
                    }
                    self.send_message("read response")?;
                    served += 1;
                }
            }
        }
    }

    fn ping(&mut self) -> Result<(), PerfError> {
        match self.operation {
            Operation::Write | Operation::Send => self.send_message("latency ping")?,
            Operation::Read => self.send_request()?,
        }
        // The clock runs around this call: the reply is verified in `settle`.
        self.inbound.defer = true;
        let received = self.receive_message("latency reply", false).map(|_| ());
        self.inbound.defer = false;
        received
    }

    fn settle(&mut self) {
        self.inbound.settle();
    }

    fn pong(&mut self) -> Result<(), PerfError> {
        match self.operation {
            Operation::Write | Operation::Send => {
                self.receive_message("latency ping", false)?;
                self.send_message("latency reply")
            }
            Operation::Read => {
                if !self.receive_request()? {
                    return Err(PerfError::PeerClosed { peer: self.peer.clone(), during: "latency read request" });
                }
                self.send_message("latency read response")
            }
        }
    }

    fn describe(&self) -> String {
        let local = self.stream.local_addr().map(|a| a.to_string()).unwrap_or_default();
        match &self.gpu {
            Some(stage) => format!(
                "tcp {local} -> {}, GPU {} ({}) staged through pinned host memory",
                self.peer,
                stage.device.gpu().ordinal,
                stage.device.gpu().pci_bus_id
            ),
            None => format!("tcp {local} -> {}", self.peer),
        }
    }

    fn delivery(&self) -> Delivery {
        Delivery::Local
    }

    fn validation_errors(&self) -> u64 {
        self.verified().errors()
    }

    fn verified(&self) -> Verified {
        TcpConnection::verified(self)
    }

    fn first_corruption(&self) -> Option<String> {
        self.inbound.verifier.as_ref().and_then(|v| v.first.as_ref()).map(|c| c.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn pair(parameters: &RunParameters) -> (TcpConnection, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let raw = TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let (accepted, _) = listener.accept().expect("accept");
        (TcpConnection::new(accepted, parameters, Duration::from_secs(2), End::Acceptor).expect("connection"), raw)
    }

    #[test]
    fn validation_counts_corrupted_bytes_and_lost_messages_and_names_the_first() {
        let parameters = RunParameters { size: 64, validate: true, validation_seed: 42, ..RunParameters::default() };
        let (mut server, mut raw) = pair(&parameters);
        let mut sender = Sender::new(Stream::new(42, End::Dialer.sender(), 64));
        let good = sender.next_message().to_vec();
        let mut bad = sender.next_message().to_vec();
        bad[40] ^= 0xff;
        bad[63] ^= 0x01;
        let _skipped = sender.next_message().to_vec();
        let after_loss = sender.next_message().to_vec();
        for message in [&good, &bad, &after_loss] {
            raw.write_all(message).expect("write");
        }
        raw.shutdown(Shutdown::Write).expect("shutdown");
        assert_eq!(server.serve(None).expect("serve"), Served::Counted(3));
        let verified = server.verified();
        assert_eq!((verified.messages, verified.bytes), (3, 192));
        assert_eq!(verified.wrong_bytes, 2);
        assert_eq!(verified.sequence_errors, 1, "message 2 never arrived");
        let first = server.first_corruption().expect("named");
        assert!(first.starts_with("message 1: 2 byte(s) wrong, first at offset 40"), "{first}");
    }

    #[test]
    fn without_validation_reads_may_span_messages_and_are_counted() {
        let parameters = RunParameters { size: 10, ..RunParameters::default() };
        let (mut server, mut raw) = pair(&parameters);
        raw.write_all(&[0u8; 35]).expect("write");
        raw.write_all(&[0u8; 5]).expect("write");
        raw.shutdown(Shutdown::Write).expect("shutdown");
        assert_eq!(server.serve(None).expect("serve"), Served::Counted(4));
    }

    #[test]
    fn a_truncated_message_is_the_peer_closing_not_a_count() {
        let parameters = RunParameters { size: 64, ..RunParameters::default() };
        let (mut server, mut raw) = pair(&parameters);
        raw.write_all(&[0u8; 100]).expect("write");
        raw.shutdown(Shutdown::Write).expect("shutdown");
        assert!(matches!(server.serve(None), Err(PerfError::PeerClosed { .. })));
    }

    #[test]
    fn a_read_request_for_another_size_is_a_named_mismatch() {
        let parameters = RunParameters { size: 64, operation: Operation::Read, ..RunParameters::default() };
        let (mut server, mut raw) = pair(&parameters);
        raw.write_all(&128u64.to_be_bytes()).expect("write");
        let error = server.serve(Some(1)).expect_err("mismatch");
        assert!(error.to_string().contains("message size is 128 on the client but 64 on the server"), "{error}");
    }
}
