//! The verbs transport on its own, without the generator or the CLI: a server and a client exchange
//! `VerbsEndpointInfo` over TCP (one JSON line each way), connect one RC queue pair and run a
//! bandwidth or latency test, printing one JSON line. Used to exercise the transport in the Soft-RoCE
//! guest (tests/vm/perf-guest.sh) and as the smallest example of the API.
//!
//!     verbs_pingpong server [--port P] [--device rxe0]
//!     verbs_pingpong client HOST [--port P] [--device rxe0] [--gid-index N]
//!                    [--op write|read|send] [--test bw|lat] [--size N] [--iters N] [--depth N] [--inline N]
//!                    [--validate]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use fabricdoctor_perf::accounting::Accounting;
use fabricdoctor_perf::transport::Connection;
use fabricdoctor_perf::verbs::{VerbsEndpoint, VerbsEndpointInfo, VerbsOptions};
use fabricdoctor_perf::Operation;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Plan {
    operation: Operation,
    latency: bool,
    size: usize,
    iterations: u64,
    depth: usize,
    inline_size: u32,
    validate: bool,
}

struct Args {
    role: String,
    host: String,
    port: u16,
    device: Option<String>,
    gid_index: Option<u32>,
    plan: Plan,
}

fn parse() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let role = args.next().ok_or("usage: verbs_pingpong server|client [HOST] [options]")?;
    let mut parsed = Args {
        host: String::new(),
        port: 18600,
        device: None,
        gid_index: None,
        plan: Plan {
            operation: Operation::Write,
            latency: false,
            size: 65536,
            iterations: 1000,
            depth: 128,
            inline_size: 0,
            validate: false,
        },
        role,
    };
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        let number = |text: String| text.parse::<u64>().map_err(|e| format!("{text}: {e}"));
        match arg.as_str() {
            "--port" => parsed.port = number(value()?)? as u16,
            "--device" => parsed.device = Some(value()?),
            "--gid-index" => parsed.gid_index = Some(number(value()?)? as u32),
            "--op" => {
                parsed.plan.operation = match value()?.as_str() {
                    "write" => Operation::Write,
                    "read" => Operation::Read,
                    "send" => Operation::Send,
                    other => return Err(format!("unknown op {other}")),
                }
            }
            "--test" => parsed.plan.latency = value()? == "lat",
            "--size" => parsed.plan.size = number(value()?)? as usize,
            "--iters" => parsed.plan.iterations = number(value()?)?,
            "--depth" => parsed.plan.depth = number(value()?)? as usize,
            "--inline" => parsed.plan.inline_size = number(value()?)? as u32,
            "--validate" => parsed.plan.validate = true,
            host if !host.starts_with('-') && parsed.host.is_empty() => parsed.host = host.to_string(),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(parsed)
}

fn options(args: &Args, plan: &Plan) -> VerbsOptions {
    VerbsOptions {
        device: args.device.clone(),
        port: 1,
        gid_index: args.gid_index,
        operation: plan.operation,
        size: plan.size,
        depth: if plan.latency { 1 } else { plan.depth },
        inline_size: plan.inline_size,
        validate: plan.validate,
        validation_seed: 1,
        sender: u32::from(args.role == "server"),
        timeout: Duration::from_secs(10),
        traffic: Default::default(),
        inline_note: None,
        inline_fallback: false,
        post_list: 1,
        corrupt_every: None,
    }
}

fn send_line<T: Serialize>(stream: &mut TcpStream, value: &T) -> Result<(), String> {
    let mut line = serde_json::to_string(value).map_err(|e| e.to_string())?;
    line.push('\n');
    stream.write_all(line.as_bytes()).map_err(|e| format!("side channel: {e}"))
}

fn read_line<T: for<'de> Deserialize<'de>>(reader: &mut BufReader<TcpStream>) -> Result<T, String> {
    let mut line = String::new();
    reader.read_line(&mut line).map_err(|e| format!("side channel: {e}"))?;
    serde_json::from_str(&line).map_err(|e| format!("side channel: {e} in {line:?}"))
}

fn server(args: &Args) -> Result<(), String> {
    let listener = TcpListener::bind(("0.0.0.0", args.port)).map_err(|e| format!("bind: {e}"))?;
    let (stream, _) = listener.accept().map_err(|e| format!("accept: {e}"))?;
    let mut writer = stream.try_clone().map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream);
    let plan: Plan = read_line(&mut reader)?;
    let endpoint = VerbsEndpoint::open(&options(args, &plan)).map_err(|e| e.to_string())?;
    eprintln!("server: {}", endpoint.describe());
    let remote: VerbsEndpointInfo = read_line(&mut reader)?;
    let info = endpoint.local_info();
    // Connect before answering, so the client never sends to a queue pair that is not ready.
    let mut connection = endpoint.connect(&remote).map_err(|e| e.to_string())?;
    send_line(&mut writer, &info)?;
    let served = if plan.latency {
        for _ in 0..plan.iterations {
            connection.pong().map_err(|e| e.to_string())?;
        }
        plan.iterations
    } else {
        let served = connection.serve(Some(plan.iterations)).map_err(|e| e.to_string())?;
        Accounting::reported(served, Some(plan.iterations))
    };
    let _done: serde_json::Value = read_line(&mut reader)?;
    let report = serde_json::json!({ "messages": served, "validation_errors": connection.validation_errors() });
    send_line(&mut writer, &report)
}

fn client(args: &Args) -> Result<(), String> {
    let plan = &args.plan;
    // The server may still be starting (a slow guest): retry for a few seconds.
    let deadline = Instant::now() + Duration::from_secs(20);
    let stream = loop {
        match TcpStream::connect((args.host.as_str(), args.port)) {
            Ok(stream) => break stream,
            Err(e) if Instant::now() < deadline => {
                eprintln!("client: {e}; retrying");
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => return Err(format!("connect: {e}")),
        }
    };
    let mut writer = stream.try_clone().map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream);
    send_line(&mut writer, plan)?;
    let endpoint = VerbsEndpoint::open(&options(args, plan)).map_err(|e| e.to_string())?;
    let header = endpoint.describe();
    send_line(&mut writer, &endpoint.local_info())?;
    let remote: VerbsEndpointInfo = read_line(&mut reader)?;
    let mut connection = endpoint.connect(&remote).map_err(|e| e.to_string())?;
    let mut result = serde_json::json!({
        "op": plan.operation, "test": if plan.latency { "lat" } else { "bw" }, "size": plan.size,
        "iterations": plan.iterations, "connection": connection.describe(), "endpoint": header,
    });
    if plan.latency {
        let mut samples = Vec::with_capacity(plan.iterations as usize);
        for _ in 0..plan.iterations {
            let start = Instant::now();
            connection.ping().map_err(|e| e.to_string())?;
            samples.push(start.elapsed().as_secs_f64() * 1e6);
        }
        samples.sort_by(f64::total_cmp);
        // perftest reports half the round trip for WRITE and SEND, the whole one for READ.
        let halve = if plan.operation == Operation::Read { 1.0 } else { 2.0 };
        let median = samples[samples.len() / 2] / halve;
        let average = samples.iter().sum::<f64>() / samples.len() as f64 / halve;
        result["lat_typical_us"] = median.into();
        result["lat_avg_us"] = average.into();
        result["lat_min_us"] = (samples[0] / halve).into();
    } else {
        let (mut posted, mut completed, mut in_flight) = (0u64, 0u64, 0usize);
        let start = Instant::now();
        while completed < plan.iterations {
            while posted < plan.iterations && in_flight < connection.depth() {
                connection.post().map_err(|e| e.to_string())?;
                posted += 1;
                in_flight += 1;
            }
            let done = connection.poll(Duration::from_micros(200)).map_err(|e| e.to_string())?;
            completed += done as u64;
            in_flight -= done;
        }
        let seconds = start.elapsed().as_secs_f64();
        let bytes = completed as f64 * plan.size as f64;
        result["bw_avg_gbps"] = (bytes * 8.0 / seconds / 1e9).into();
        result["bw_avg_mib_s"] = (bytes / seconds / (1 << 20) as f64).into();
        result["msg_rate_mpps"] = (completed as f64 / seconds / 1e6).into();
    }
    connection.finish().map_err(|e| e.to_string())?;
    send_line(&mut writer, &serde_json::json!({ "done": true }))?;
    let report: serde_json::Value = read_line(&mut reader)?;
    result["server"] = report;
    result["client_validation_errors"] = connection.validation_errors().into();
    println!("{result}");
    Ok(())
}

fn main() {
    let outcome = parse().and_then(|args| match args.role.as_str() {
        "server" => server(&args),
        "client" => client(&args),
        other => Err(format!("unknown role {other}")),
    });
    if let Err(error) = outcome {
        eprintln!("verbs_pingpong: {error}");
        std::process::exit(1);
    }
}
