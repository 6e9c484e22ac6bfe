//! `fabricdoctor perf server|client`.

use std::net::TcpListener;
use std::sync::Arc;

use anyhow::Context;
use fabricdoctor_perf::generator::{run_client_size, serve_session, ClientOptions, DataPath, Side, TcpDataPath};
use fabricdoctor_perf::gpu::Gpu;
use fabricdoctor_perf::handshake::ServerConstraints;
use fabricdoctor_perf::verbs::VerbsDataPath;
use fabricdoctor_perf::{Operation, RunParameters, TestKind, TransportKind};
use fabricdoctor_report::perf::{bandwidth_table, latency_table, PerfReport};

use crate::args::{
    PerfClientArgs, PerfCommand, PerfCommonArgs, PerfOperation, PerfServerArgs, PerfTest, PerfTransport,
};
use crate::exit;
use crate::gpu::{gpu_buffers, open_gpu, STAGED_PINNED_HOST};
use crate::output::emit;

pub fn run(command: PerfCommand) -> anyhow::Result<i32> {
    use fabricdoctor_perf::collective::Collective;
    match command {
        PerfCommand::Server(args) => server(args),
        PerfCommand::Client(args) => client(args),
        PerfCommand::Allreduce(args) => crate::collective::run(Collective::AllReduce, "allreduce", args),
        PerfCommand::Allgather(args) => crate::collective::run(Collective::AllGather, "allgather", args),
        PerfCommand::Reducescatter(args) => crate::collective::run(Collective::ReduceScatter, "reducescatter", args),
        PerfCommand::Alltoall(args) => crate::collective::run(Collective::AlltoAll, "alltoall", args),
        PerfCommand::Broadcast(args) => crate::collective::run(Collective::Broadcast, "broadcast", args),
    }
}

fn operation(op: PerfOperation) -> Operation {
    match op {
        PerfOperation::Write => Operation::Write,
        PerfOperation::Read => Operation::Read,
        PerfOperation::Send => Operation::Send,
    }
}

fn test_kind(test: PerfTest) -> TestKind {
    match test {
        PerfTest::Bw => TestKind::Bandwidth,
        PerfTest::Lat => TestKind::Latency,
    }
}

/// verbs where this node has an RDMA device, else TCP (issue #4: verbs is the default where it can run).
fn transport(common: &PerfCommonArgs) -> TransportKind {
    match common.transport {
        Some(PerfTransport::Verbs) => TransportKind::Verbs,
        Some(PerfTransport::Tcp) => TransportKind::Tcp,
        None => {
            let root = fabricdoctor_probes::SysRoot::live();
            match root.read_dir("sys/class/infiniband") {
                Ok(devices) if !devices.is_empty() => TransportKind::Verbs,
                _ => TransportKind::Tcp,
            }
        }
    }
}

/// `--transport verbs` on a node whose kernel lists no RDMA device fails here, by name, rather than
/// after the control connection when the verbs library finds nothing to open.
fn require_rdma_device(kind: TransportKind) -> anyhow::Result<()> {
    if kind != TransportKind::Verbs {
        return Ok(());
    }
    let root = fabricdoctor_probes::SysRoot::live();
    match root.read_dir("sys/class/infiniband") {
        Ok(devices) if !devices.is_empty() => Ok(()),
        // The same words as the verbs layer's own message (perf::verbs::protocol), said earlier.
        _ => anyhow::bail!(
            "--transport verbs: no RDMA devices: kernel has no RDMA support or no driver loaded \
             (/sys/class/infiniband is empty or missing); load the NIC's RDMA driver, or measure over \
             --transport tcp"
        ),
    }
}

/// Why `--gpu` is refused over verbs: registering GPU memory with the NIC (ibv_reg_dmabuf_mr) is
/// not implemented, and staging would need every verbs buffer access (latency polling, validation)
/// to go through copies.
const GPU_OVER_VERBS: &str =
    "--gpu over verbs is not implemented (GPUDirect RDMA registration); use --transport tcp, which stages \
     GPU buffers through pinned host memory";

/// The data path of one side for a transport.
fn data_path(
    side: Side,
    kind: TransportKind,
    common: &PerfCommonArgs,
    gpu: &Option<Arc<Gpu>>,
) -> Result<Box<dyn DataPath>, fabricdoctor_perf::PerfError> {
    match kind {
        TransportKind::Tcp => Ok(Box::new(TcpDataPath::new(side, common.timeout).with_gpu(gpu.clone()))),
        TransportKind::Verbs if gpu.is_some() => Err(fabricdoctor_perf::PerfError::Unsupported(GPU_OVER_VERBS.into())),
        TransportKind::Verbs => Ok(Box::new(
            VerbsDataPath::new(
                side,
                common.verbs.device.clone(),
                common.verbs.ib_port,
                common.verbs.gid_index,
                common.timeout,
            )
            .with_traffic(common.verbs.traffic()),
        )),
    }
}

fn server(args: PerfServerArgs) -> anyhow::Result<i32> {
    let kind = transport(&args.common);
    let listener = TcpListener::bind((args.bind.as_str(), args.common.port))
        .with_context(|| format!("failed to listen on {}:{}", args.bind, args.common.port))?;
    let constraints = ServerConstraints {
        operation: args.op.map(operation),
        test: args.test.map(test_kind),
        transport: args.common.transport.map(|_| kind),
        size: args.size,
        iterations: args.iters,
        ..ServerConstraints::default()
    };
    let sessions = if args.once { Some(1) } else { args.sessions };
    let gpu = open_gpu(args.common.gpu)?;
    if args.common.transport == Some(PerfTransport::Verbs) && gpu.is_some() {
        anyhow::bail!(GPU_OVER_VERBS);
    }
    if args.common.transport.is_some() {
        require_rdma_device(kind)?;
    }
    let offered = match args.common.transport {
        Some(_) => kind.to_string(),
        // Without --transport the client chooses; verbs is offered only where a device exists.
        None if kind == TransportKind::Verbs => "verbs or tcp (the client chooses)".to_string(),
        None => "tcp".to_string(),
    };
    eprintln!("fabricdoctor perf server: listening on {}; transport: {offered}", listener.local_addr()?);
    if let Some(buffers) = gpu_buffers(&gpu, STAGED_PINNED_HOST) {
        eprintln!(
            "fabricdoctor perf server: buffers on GPU {} ({}, {}), {}",
            buffers.gpu, buffers.name, buffers.pci_bus_id, buffers.memory_path
        );
    }
    let mut served = 0u64;
    let mut failures = 0u64;
    while sessions.is_none_or(|n| served < n) {
        let (control, peer) = listener.accept().context("failed to accept a client")?;
        // The client chooses the transport; a server started with --transport accepts only that one
        // (the handshake's constraints say so by name).
        let mut path_for = |parameters: &RunParameters| -> Result<Box<dyn DataPath>, fabricdoctor_perf::PerfError> {
            data_path(Side::Server, parameters.transport, &args.common, &gpu)
        };
        match serve_session(control, &constraints, args.common.timeout, &mut path_for) {
            Ok(parameters) => eprintln!(
                "fabricdoctor perf server: {peer}: {} {} {} bytes done",
                parameters.operation,
                args_test(parameters.test),
                parameters.size
            ),
            Err(error) => {
                failures += 1;
                eprintln!("fabricdoctor perf server: {peer}: {error}");
            }
        }
        served += 1;
    }
    Ok(if failures > 0 { exit::FINDINGS } else { exit::SUCCESS })
}

/// perftest -a: 2 bytes to 8 MiB in powers of two.
fn all_sizes() -> Vec<u64> {
    (1..=23).map(|power| 1u64 << power).collect()
}

fn client(args: PerfClientArgs) -> anyhow::Result<i32> {
    let kind = transport(&args.common);
    // Flags first: a wrong combination is named even on a host without an RDMA device.
    if args.post_list > 1 && args.test == PerfTest::Lat {
        anyhow::bail!("--post-list applies to bandwidth tests (perftest -l); a latency test has one message in flight");
    }
    if args.bidirectional && args.test == PerfTest::Lat {
        anyhow::bail!("--bidirectional applies to bandwidth tests (perftest -b); latency is a ping-pong already");
    }
    if args.inject_corruption.is_some() && kind == TransportKind::Verbs && args.op != PerfOperation::Send {
        // Framed WRITEs carry their sequence as immediate data and READs bring the server's header:
        // a flipped header bit there is caught only by the end-of-run check of the last message.
        anyhow::bail!("--inject-corruption over verbs corrupts SEND headers: use it with --op send");
    }
    require_rdma_device(kind)?;
    let test = test_kind(args.test);
    let iterations = match (args.iters, args.duration) {
        (_, Some(_)) => None,
        (Some(n), None) => Some(n),
        (None, None) => Some(if test == TestKind::Latency { 1000 } else { 5000 }),
    };
    let template = RunParameters {
        operation: operation(args.op),
        test,
        transport: kind,
        size: args.size,
        iterations,
        duration_ms: args.duration.map(|d| d.as_millis().min(u64::MAX as u128) as u64),
        bidirectional: args.bidirectional,
        queue_pairs: if test == TestKind::Latency { 1 } else { args.qps },
        tx_depth: if test == TestKind::Latency { 1 } else { args.tx_depth },
        inline_size: args.inline.unwrap_or_else(|| fabricdoctor_perf::params::default_inline(operation(args.op), test)),
        validate: args.validate,
        validation_seed: 0,
        // The client's class travels to the server, so both ends of each queue pair use it.
        traffic_class: args.common.verbs.traffic_class,
        service_level: args.common.verbs.service_level,
        post_list: args.post_list,
    };
    let options = ClientOptions {
        server: args.host.clone(),
        port: args.common.port,
        timeout: args.common.timeout,
        local: None,
        ticket: None,
    };
    let sizes = if args.all_sizes { all_sizes() } else { vec![args.size] };
    let gpu = open_gpu(args.common.gpu)?;
    if gpu.is_some() && kind == TransportKind::Verbs {
        anyhow::bail!(GPU_OVER_VERBS);
    }
    if gpu.is_some() && args.op == PerfOperation::Read {
        anyhow::bail!("--gpu over TCP measures write and send; read responses are not staged into the GPU");
    }
    let mut path: Box<dyn DataPath> = match kind {
        TransportKind::Tcp if args.inject_corruption.is_some() => Box::new(
            TcpDataPath::new(Side::Client, args.common.timeout)
                .with_gpu(gpu.clone())
                .with_corruption(args.inject_corruption),
        ),
        TransportKind::Verbs if args.inject_corruption.is_some() => Box::new(
            VerbsDataPath::new(
                Side::Client,
                args.common.verbs.device.clone(),
                args.common.verbs.ib_port,
                args.common.verbs.gid_index,
                args.common.timeout,
            )
            .with_traffic(args.common.verbs.traffic())
            .with_corruption(args.inject_corruption),
        ),
        _ => data_path(Side::Client, kind, &args.common, &gpu)?,
    };
    let mut runs = Vec::new();
    for size in sizes {
        let parameters = RunParameters { size, ..template.clone() };
        let run = run_client_size(&options, &parameters, path.as_mut()).with_context(|| {
            format!(
                "{} {} test of {size} bytes against {}:{}",
                parameters.operation,
                args_test(test),
                args.host,
                args.common.port
            )
        })?;
        runs.push(run);
    }
    let report = PerfReport::new(format!("{}:{}", args.host, args.common.port), template, runs)
        .with_gpu(gpu_buffers(&gpu, STAGED_PINNED_HOST));
    if args.json {
        emit(&(serde_json::to_string_pretty(&report)? + "\n"))?;
    } else if test == TestKind::Latency {
        emit(&latency_table(&report))?;
    } else {
        emit(&bandwidth_table(&report, args.report_gbits))?;
    }
    Ok(exit::SUCCESS)
}

fn args_test(test: TestKind) -> &'static str {
    match test {
        TestKind::Bandwidth => "bandwidth",
        TestKind::Latency => "latency",
    }
}
