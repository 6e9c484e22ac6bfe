//! `fabricdoctor serve`: a Prometheus exporter. One thread re-runs the checks every interval,
//! diffs the counters over the interval, holds each port's flap and drop state
//! (`fabricdoctor_checks::link_history`), and publishes the rendered results; the HTTP side only
//! ever hands out the last published results, so a scrape never waits for a check run (a probe
//! that hangs on a dead device hangs the runner, never the scrape; `/healthz` then says so).
//!
//! HTTP is HTTP/1.1 with one request per connection (RFC 9112; Prometheus' scraper and curl both
//! accept `Connection: close`). Every peer is bounded: the request head is read for at most
//! [`READ_TIMEOUT`] and [`MAX_HEAD_BYTES`], and at most `--max-connections` are served at once.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use fabricdoctor_burnin::agent::ConnectionPlace;
use fabricdoctor_checks::link_history::{LinkHistory, LinkReading, LinkRules, DROPPED, FLAPPING};
use fabricdoctor_checks::{evaluate_selected, registry, Inputs, Policy};
use fabricdoctor_probes::counters::{read_sample, CounterObservation, CounterSample};
use fabricdoctor_probes::gpu::GpuObservation;
use fabricdoctor_probes::NodeSnapshot;
use fabricdoctor_report::counters::CountersReport;
use fabricdoctor_report::exporter::{metrics, CheckRun};
use fabricdoctor_report::output::write_atomically;
use fabricdoctor_report::Report;

use crate::args::{CheckArgs, ServeArgs};
use crate::check::{load_policy, refuse_foreign_profile, selects};
use crate::exit;
use crate::source::Source;

/// How long a peer may take to send its request head.
const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a peer may take to take the response.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// A scrape's request head is a few hundred bytes; anything this long is not one.
const MAX_HEAD_BYTES: usize = 8192;

/// What the HTTP side hands out: the last finished run, rendered once.
#[derive(Debug, Default)]
struct Published {
    metrics: String,
    report_json: String,
    /// When the last run finished (None before the first).
    finished: Option<Instant>,
    /// The last run's error, when it did not finish.
    last_error: Option<String>,
}

/// The exporter's own series before any run finished, so a scrape shows the exporter is up.
fn starting_metrics() -> String {
    "# HELP fabricdoctor_check_runs_total Check runs finished since the exporter started\n\
     # TYPE fabricdoctor_check_runs_total counter\nfabricdoctor_check_runs_total 0\n"
        .to_string()
}

pub fn run(args: ServeArgs) -> anyhow::Result<i32> {
    if let Some(path) = &args.textfile {
        if path.extension().and_then(|e| e.to_str()) != Some("prom") {
            anyhow::bail!("--textfile {}: node_exporter's textfile collector reads only *.prom files", path.display());
        }
    }
    // Bind first: a taken port is the commonest way to fail, and it must fail before anything else.
    let listener =
        TcpListener::bind(&args.listen).with_context(|| format!("cannot listen on {} (--listen)", args.listen))?;
    let check_args = serve_check_args(&args)?;
    let policy = load_policy(&check_args)?;
    let source = Source::resolve(&args.selection.source)?;
    let interval = args.interval;
    let rules = LinkRules {
        window_seconds: args.flap_window.as_secs_f64(),
        flap_threshold: args.flap_threshold,
        drop_after_seconds: args.drop_after.as_secs_f64(),
    };
    let published = Arc::new(Mutex::new(Arc::new(Published { metrics: starting_metrics(), ..Published::default() })));
    eprintln!(
        "fabricdoctor serve: listening on {} (/metrics, /healthz, /report.json), checks every {}",
        listener.local_addr().map_or(args.listen.clone(), |a| a.to_string()),
        humantime::format_duration(interval)
    );
    let runner = {
        let published = Arc::clone(&published);
        let only = args.selection.only.clone();
        let textfile = args.textfile.clone();
        std::thread::Builder::new()
            .name("check-runner".into())
            .spawn(move || Runner::new(source, policy, only, rules, textfile).run_forever(interval, &published))
            .context("cannot start the check runner thread")?
    };
    let busy = Arc::new(AtomicUsize::new(0));
    let limit = args.max_connections as usize;
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        if runner.is_finished() {
            anyhow::bail!("the check runner stopped");
        }
        let current = published
            .lock()
            .map(|p| Arc::clone(&p))
            .map_err(|_| anyhow::anyhow!("the published results are poisoned"))?;
        let Some(slot) = ConnectionPlace::take(&busy, limit) else {
            let mut stream = stream;
            let _ = stream.set_write_timeout(Some(Duration::from_millis(200)));
            let _ = respond(&mut stream, "HEAD", 503, "text/plain", "too many connections\n", &[]);
            continue;
        };
        // A failed spawn drops the closure, and with it the slot.
        let _ = std::thread::Builder::new().name("scrape".into()).spawn(move || {
            let mut stream = stream;
            serve_connection(&mut stream, &current, interval);
            // The slot is free before the peer sees its connection close: a peer that connects
            // again at once (a scraper's next scrape) must not find it still held.
            drop(slot);
            drop(stream);
        });
    }
    Ok(exit::SUCCESS)
}

/// The check run serve makes each interval: its selection, policy and profile; counters are
/// sampled by the runner across the interval, not by a 2 s wait inside the run. The held link
/// state (link.flapping, link.dropped) is serve's own, not a registered check, and is left out.
fn serve_check_args(args: &ServeArgs) -> anyhow::Result<CheckArgs> {
    let registered: Vec<String> = args
        .selection
        .only
        .iter()
        .filter(|id| ![FLAPPING, DROPPED].iter().any(|held| held.starts_with(id.as_str())))
        .cloned()
        .collect();
    args.selection.check_args(&registered, false).context("serve arguments")
}

/// The check-running side: everything that persists between runs.
struct Runner {
    source: Source,
    policy: Policy,
    only: Vec<String>,
    /// The part of `only` that selects registered checks, and whether any run at all: `--only
    /// link.flapping` selects none (an empty list to evaluate_selected would run them all).
    registered: Vec<String>,
    run_registered: bool,
    links: LinkHistory,
    previous: Option<(CounterSample, Instant)>,
    textfile: Option<std::path::PathBuf>,
    started: Instant,
    runs_total: u64,
    run_errors_total: u64,
}

impl Runner {
    fn new(
        source: Source,
        policy: Policy,
        only: Vec<String>,
        rules: LinkRules,
        textfile: Option<std::path::PathBuf>,
    ) -> Runner {
        let registered: Vec<String> =
            only.iter().filter(|s| registry().iter().any(|c| c.id().starts_with(s.as_str()))).cloned().collect();
        let run_registered = only.is_empty() || !registered.is_empty();
        Runner {
            source,
            policy,
            only,
            registered,
            run_registered,
            links: LinkHistory::new(rules),
            previous: None,
            textfile,
            started: Instant::now(),
            runs_total: 0,
            run_errors_total: 0,
        }
    }

    fn run_forever(mut self, interval: Duration, published: &Mutex<Arc<Published>>) {
        loop {
            let began = Instant::now();
            let outcome = self.run_once(began);
            let previous = published.lock().map(|p| Arc::clone(&p)).unwrap_or_default();
            let next = match outcome {
                Ok(next) => next,
                Err(error) => {
                    self.run_errors_total += 1;
                    eprintln!("fabricdoctor serve: check run failed: {error:#}");
                    // The last good results stay up; /healthz reports the failure.
                    Published {
                        metrics: previous.metrics.clone(),
                        report_json: previous.report_json.clone(),
                        finished: previous.finished,
                        last_error: Some(format!("{error:#}")),
                    }
                }
            };
            if let Some(path) = &self.textfile {
                if let Err(error) = write_atomically(path, next.metrics.as_bytes()) {
                    eprintln!("fabricdoctor serve: {error}");
                }
            }
            if let Ok(mut slot) = published.lock() {
                *slot = Arc::new(next);
            }
            std::thread::sleep(interval.saturating_sub(began.elapsed()));
        }
    }

    fn run_once(&mut self, began: Instant) -> anyhow::Result<Published> {
        let mut node = NodeSnapshot::probe(&self.source.root);
        if selects(&self.only, "optics.") {
            node.read_optics(&self.source.root);
        }
        refuse_foreign_profile(&self.policy, &node)?;
        let sample = read_sample(&self.source.root);
        let measured = self.previous.as_ref().map(|(_, at)| at.elapsed().as_secs_f64());
        let observation =
            CounterObservation::new(self.previous.take().map(|(sample, _)| sample), sample.clone(), measured);
        self.previous = Some((sample, Instant::now()));
        let gpu = selects(&self.only, "gpu.").then(|| GpuObservation::probe(&self.source.root));
        let inputs = Inputs::new(&node).with_counters(Some(&observation)).with_gpu(gpu.as_ref());
        let selected = |id: &str| self.only.is_empty() || self.only.iter().any(|s| id.starts_with(s.as_str()));
        let mut findings =
            if self.run_registered { evaluate_selected(&inputs, &self.policy, &self.registered) } else { Vec::new() };
        self.links.observe(self.started.elapsed().as_secs_f64(), &link_readings(&node, &observation));
        findings.extend(self.links.findings().into_iter().filter(|f| selected(&f.id)));
        let host = self.source.host_info(&node.host);
        let report = Report::new("serve", vec![host.clone()], findings);
        self.runs_total += 1;
        let states = self.links.states();
        let run = CheckRun {
            report: &report,
            links: &states,
            finished_unix_seconds: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64()),
            duration_seconds: began.elapsed().as_secs_f64(),
            runs_total: self.runs_total,
            run_errors_total: self.run_errors_total,
        };
        let mut text = metrics(&run);
        text.push_str(&CountersReport::new(host, &observation).prometheus());
        Ok(Published {
            metrics: text,
            report_json: serde_json::to_string_pretty(&report)? + "\n",
            finished: Some(Instant::now()),
            last_error: None,
        })
    }
}

/// Each RDMA port's state and `link_downed` counter (PortCounters, or hw_counters on Soft-RoCE).
fn link_readings(node: &NodeSnapshot, observation: &CounterObservation) -> Vec<LinkReading> {
    let Ok(devices) = &node.rdma else { return Vec::new() };
    let mut readings = Vec::new();
    for device in devices {
        for port in &device.ports {
            let counters = observation.after.ports.iter().find(|p| p.device == device.name && p.port == port.number);
            let link_downed = counters.and_then(|c| {
                c.counters
                    .iter()
                    .chain(c.hw_counters.iter())
                    .flatten()
                    .find(|counter| counter.name == "link_downed")
                    .map(|counter| counter.value)
            });
            readings.push(LinkReading {
                subject: format!("{} port {}", device.name, port.number),
                // IB port states (sysfs `state`): 4 is ACTIVE.
                active: port.state.as_ref().ok().map(|state| state.code == 4),
                link_downed,
            });
        }
    }
    readings
}

/// A request's method and path, from its head (RFC 9112 3: request-line = method SP target SP version).
#[derive(Debug, PartialEq, Eq)]
pub struct RequestLine {
    pub method: String,
    pub path: String,
}

/// Why a request head was refused, with the status to answer.
#[derive(Debug, PartialEq, Eq)]
pub struct BadRequest {
    pub status: u16,
    pub reason: &'static str,
}

pub fn parse_request_line(head: &[u8]) -> Result<RequestLine, BadRequest> {
    let bad = |reason| BadRequest { status: 400, reason };
    let line_end = head.iter().position(|&b| b == b'\n').ok_or(bad("no request line"))?;
    let line = std::str::from_utf8(&head[..line_end]).map_err(|_| bad("request line is not UTF-8"))?;
    let mut parts = line.trim_end_matches('\r').split(' ');
    let (Some(method), Some(target), Some(version), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad("request line is not METHOD TARGET VERSION"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(BadRequest { status: 505, reason: "only HTTP/1.x is served" });
    }
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(bad("malformed method"));
    }
    let path = target.split(['?', '#']).next().unwrap_or("");
    if !path.starts_with('/') {
        return Err(bad("request target is not a path"));
    }
    Ok(RequestLine { method: method.to_string(), path: path.to_string() })
}

/// Read the request head: up to the blank line, within the byte and time bounds.
fn read_head(stream: &mut TcpStream) -> Result<Vec<u8>, BadRequest> {
    let mut head = Vec::with_capacity(512);
    let mut buffer = [0u8; 1024];
    let deadline = Instant::now() + READ_TIMEOUT;
    loop {
        if head.windows(4).any(|w| w == b"\r\n\r\n") || head.windows(2).any(|w| w == b"\n\n") {
            return Ok(head);
        }
        if head.len() > MAX_HEAD_BYTES {
            return Err(BadRequest { status: 431, reason: "request head too large" });
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return Err(BadRequest { status: 408, reason: "request head not sent in time" });
        }
        match stream.read(&mut buffer) {
            Ok(0) => return Err(BadRequest { status: 400, reason: "connection closed before the request head ended" }),
            Ok(n) => head.extend_from_slice(&buffer[..n]),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Err(BadRequest { status: 408, reason: "request head not sent in time" }),
        }
    }
}

fn serve_connection(stream: &mut TcpStream, published: &Published, interval: Duration) {
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let request = match read_head(stream).and_then(|head| parse_request_line(&head)) {
        Ok(request) => request,
        Err(bad) => {
            let _ = respond(stream, "GET", bad.status, "text/plain", &format!("{}\n", bad.reason), &[]);
            return;
        }
    };
    if request.method != "GET" && request.method != "HEAD" {
        let _ = respond(stream, "GET", 405, "text/plain", "only GET and HEAD\n", &[("Allow", "GET, HEAD")]);
        return;
    }
    let method = request.method.as_str();
    let _ = match request.path.as_str() {
        "/metrics" => respond(stream, method, 200, "text/plain; version=0.0.4; charset=utf-8", &published.metrics, &[]),
        "/report.json" if published.report_json.is_empty() => {
            respond(stream, method, 503, "text/plain", "no check run has finished yet\n", &[])
        }
        "/report.json" => respond(stream, method, 200, "application/json", &published.report_json, &[]),
        "/healthz" => {
            let (status, text) = health(published, interval);
            respond(stream, method, status, "text/plain", &text, &[])
        }
        "/" => respond(
            stream,
            method,
            200,
            "text/html; charset=utf-8",
            "<html><body><h1>fabricdoctor serve</h1><a href=\"/metrics\">/metrics</a> \
             <a href=\"/healthz\">/healthz</a> <a href=\"/report.json\">/report.json</a></body></html>\n",
            &[],
        ),
        _ => respond(stream, method, 404, "text/plain", "not found: /metrics, /healthz, /report.json\n", &[]),
    };
}

/// 200 while the last run finished in time and without error; 503 with the reason otherwise.
fn health(published: &Published, interval: Duration) -> (u16, String) {
    let Some(finished) = published.finished else {
        return match &published.last_error {
            Some(error) => (503, format!("the check run failed: {error}\n")),
            None => (503, "starting: no check run has finished yet\n".to_string()),
        };
    };
    if let Some(error) = &published.last_error {
        return (503, format!("the last check run failed: {error}\n"));
    }
    // A run that takes two intervals longer than it should is stuck (a probe hung on a device).
    let age = finished.elapsed();
    if age > interval * 3 {
        return (
            503,
            format!("stale: the last check run finished {} s ago (interval {} s)\n", age.as_secs(), interval.as_secs()),
        );
    }
    (200, format!("ok: last check run finished {} s ago\n", age.as_secs()))
}

fn respond(
    stream: &mut TcpStream,
    method: &str,
    status: u16,
    content_type: &str,
    body: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Error",
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    if method != "HEAD" {
        stream.write_all(body.as_bytes())?;
    }
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_lines_are_parsed_and_malformed_ones_refused() {
        let line = parse_request_line(b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n").expect("valid");
        assert_eq!(line, RequestLine { method: "GET".into(), path: "/metrics".into() });
        assert_eq!(parse_request_line(b"GET /metrics HTTP/2\r\n\r\n").map_err(|e| e.status), Err(505));
        for head in [
            &b"GET /metrics\r\n\r\n"[..],
            b"GET  /metrics HTTP/1.1\r\n",
            b"get / HTTP/1.1\r\n",
            b"GET http://x/ HTTP/1.1\r\n",
            b"\xff\xfe\r\n",
            b"no newline",
        ] {
            assert_eq!(parse_request_line(head).map_err(|e| e.status), Err(400), "{head:?}");
        }
    }

    #[test]
    fn health_says_why_it_is_not_ok() {
        let interval = Duration::from_secs(60);
        assert_eq!(health(&Published::default(), interval).0, 503);
        let fresh = Published { finished: Some(Instant::now()), ..Published::default() };
        assert_eq!(health(&fresh, interval).0, 200);
        let failed =
            Published { finished: Some(Instant::now()), last_error: Some("boom".into()), ..Published::default() };
        let (status, text) = health(&failed, interval);
        assert_eq!((status, text.contains("boom")), (503, true));
        let stale =
            Published { finished: Instant::now().checked_sub(Duration::from_secs(200)), ..Published::default() };
        let (status, text) = health(&stale, interval);
        assert_eq!((status, text.starts_with("stale")), (503, true), "{text}");
    }
}
