//! Triage: read every input (NCCL_DEBUG logs, PyTorch watchdog and flight-recorder output, NCCL RAS,
//! lspci, topo -m, ibv_devinfo, show_gids, counters, dmesg), turn what they say into facts with the
//! file:line they came from, join ranks to hosts, GPUs and NICs, and evaluate the playbooks' rules.
//! Parsers are pure (`&str` in, records out) and never fail on malformed text: what they do not
//! recognise is left out, never guessed.

mod analysis;
mod bandwidth;
pub mod catalogue;
pub mod counters;
pub mod dcgm;
pub mod decode;
mod error_families;
pub mod horovod;
pub mod ibstat;
pub mod join;
pub mod kernel;
mod lines;
pub mod lspci;
pub mod nccl;
pub mod nccl_tests;
pub mod nvidia_smi;
pub mod optics;
pub mod pickle;
pub mod prefix;
pub mod process;
pub mod pytorch;
pub mod rdma;
pub mod report;
#[cfg(test)]
mod robustness;
mod storage;
pub mod subnet_manager;
pub mod tools;
pub mod topo;
mod unexplained;

use fabricdoctor_checks::Finding;

pub use crate::fact::{Evidence, Fact, UNKNOWN_HOST};
pub use analysis::{Analysis, InputSummary};
pub use lines::numbered_lines;
pub use report::{Diagnosis, TriageReport};

use crate::playbook::Playbook;

/// One input: a file (or stdin) read whole. Text is decoded lossily: logs copied from terminals carry
/// stray bytes, and a diagnosis should not be refused for them.
#[derive(Debug, Clone)]
pub struct Input {
    /// The name evidence cites: the path as given, or "-" for stdin.
    pub name: String,
    pub bytes: Vec<u8>,
}

impl Input {
    pub fn new(name: impl Into<String>, bytes: Vec<u8>) -> Input {
        Input { name: name.into(), bytes }
    }
}

/// Parse every input, join across them, and evaluate `playbooks`.
pub fn triage(inputs: &[Input], playbooks: &[Playbook]) -> TriageReport {
    let analysis = analyze(inputs);
    report::evaluate(analysis, playbooks)
}

/// Parse every input into facts and observations and join ranks across inputs.
pub fn analyze(inputs: &[Input]) -> Analysis {
    let mut analysis = Analysis::default();
    let mut nccl_logs = Vec::new();
    let mut pytorch_records = Vec::new();
    let mut rdma_records = rdma::RdmaRecords::default();
    let mut counter_records = Vec::new();
    // Every text input as the analyzers read it, for the lines none of them explained.
    let mut texts: Vec<(String, String)> = Vec::new();
    // Inputs whose lines had prefixes, with the host each pdsh/clush label named.
    let mut relabelled: Vec<prefix::Relabelled> = Vec::new();
    // Whether an nccl-tests header listed the job's ranks.
    let mut nccl_tests_header = false;
    for input in inputs {
        let mut kinds = Vec::new();
        if pickle::looks_like_pickle(&input.bytes) {
            match pytorch::parse_flight_recorder_dump(&input.name, &input.bytes) {
                Ok(dump) => {
                    kinds.push("pytorch-flight-recorder-dump");
                    pytorch_records.push(pytorch::PytorchRecords::from_dump(dump));
                }
                Err(error) => {
                    analysis.observations.push(Finding::new(
                        "triage.input",
                        fabricdoctor_checks::Verdict::Error,
                        input.name.clone(),
                        format!("unreadable flight recorder dump: {error}"),
                    ));
                    kinds.push("unreadable-pickle");
                }
            }
            analysis.inputs.push(InputSummary {
                file: input.name.clone(),
                kinds: kinds.iter().map(|k| k.to_string()).collect(),
                lines: 0,
            });
            continue;
        }
        let original = String::from_utf8_lossy(&input.bytes);
        // Output copied from a web page (a forum, a FAQ, a mail archive) carries no-break spaces
        // (U+00A0) where the program printed spaces, often between every word: the readers see
        // spaces, and evidence still quotes the line as given.
        let spaced: std::borrow::Cow<str> = if original.contains('\u{a0}') {
            std::borrow::Cow::Owned(original.replace('\u{a0}', " "))
        } else {
            std::borrow::Cow::Borrowed(&original)
        };
        let (text, hosts, labels) = prefix::strip_input(&spaced);
        if !labels.is_empty() {
            analysis.ranks.labels.insert(input.name.clone(), labels);
        }
        if matches!(text, std::borrow::Cow::Owned(_)) || matches!(spaced, std::borrow::Cow::Owned(_)) {
            relabelled.push(prefix::Relabelled { name: input.name.clone(), original: original.to_string(), hosts });
        }
        let name = input.name.as_str();
        let log = nccl::parse(name, &text);
        if !log.is_empty() {
            kinds.push("nccl-log");
        }
        nccl_logs.push(log);
        let torch = pytorch::parse_text(name, &text);
        kinds.extend(torch.kinds());
        pytorch_records.push(torch);
        let ras = kernel::parse_ras(name, &text);
        if !ras.is_empty() {
            kinds.push("nccl-ras");
        }
        analysis.facts.extend(ras.facts);
        let rdma_found = rdma::parse(name, &text);
        kinds.extend(rdma_found.kinds());
        rdma_records.extend(rdma_found);
        let sm_failures = subnet_manager::failures(name, &text);
        if !sm_failures.is_empty() {
            kinds.push("opensm-log");
        }
        analysis.facts.extend(sm_failures);
        let unhealthy_ports = subnet_manager::parse(name, &text);
        if !unhealthy_ports.is_empty() {
            kinds.push("sm-unhealthy-ports");
            subnet_manager::analyze(&unhealthy_ports, &mut analysis);
        }
        let counters_found = counters::parse(name, &text);
        if !counters_found.is_empty() {
            kinds.push("counters");
        }
        counter_records.extend(counters_found);
        let devices = lspci::parse(name, &text);
        if !devices.is_empty() {
            kinds.push("lspci");
            lspci::analyze(&devices, &mut analysis);
        }
        if let Some(matrix) = topo::parse(name, &text) {
            kinds.push("nvidia-smi-topo");
            topo::analyze(&matrix, &mut analysis);
        }
        let left_off_nvlink = topo::gpus_left_off_nvlink(name, &text);
        if !left_off_nvlink.is_empty() {
            if !kinds.contains(&"nvidia-smi-topo") {
                kinds.push("nvidia-smi-topo");
            }
            analysis.facts.extend(left_off_nvlink);
        }
        if let Some(matrix) = topo::parse_nvlink_peers(name, &text) {
            kinds.push("nvidia-smi-topo-p2p");
            topo::analyze_nvlink_peers(&matrix, topo::says_nvlink_present(&text), &mut analysis);
        }
        let dcgm_facts = dcgm::parse(name, &text);
        analysis.observations.extend(dcgm::could_not_run(&dcgm_facts));
        analysis.observations.extend(bandwidth::below_port_rate(name, &text));
        for (kind, recognised, facts) in [
            ("ibstat", ibstat::recognised(&text), ibstat::parse(name, &text)),
            ("nvidia-smi", nvidia_smi::recognised(&text), nvidia_smi::parse(name, &text)),
            ("dcgm-diag", dcgm::recognised(&text), dcgm_facts),
            ("dcgm-dmon", dcgm::dmon_recognised(&text), dcgm::dmon(name, &text)),
            ("optics", optics::recognised(&text), optics::parse(name, &text)),
        ] {
            if recognised {
                kinds.push(kind);
            }
            analysis.facts.extend(facts);
        }
        let signatures = tools::parse(name, &text);
        if !signatures.is_empty() {
            kinds.push("tool-messages");
        }
        analysis.facts.extend(signatures);
        let stalled = horovod::parse(name, &text);
        if !stalled.is_empty() {
            kinds.push("horovod-stall");
        }
        analysis.facts.extend(stalled);
        let deaths = process::parse(name, &text);
        if !deaths.is_empty() {
            kinds.push("process-exit");
        }
        analysis.facts.extend(deaths);
        let kernel_events = kernel::parse_kernel(name, &text);
        if !kernel_events.is_empty() {
            kinds.push("kernel-log");
        }
        analysis.facts.extend(kernel_events);
        let storage_events = storage::parse(name, &text);
        if !storage_events.is_empty() {
            kinds.push("gpudirect-storage");
        }
        analysis.facts.extend(storage_events);
        let ranks_header = join::parse_nccl_tests_ranks(name, &text, &mut analysis.ranks);
        nccl_tests_header |= ranks_header;
        // nccl-tests' own report of a failed NCCL call ("Test NCCL failure common.cu:345
        // 'unhandled system error'") names the tests even where the paste keeps neither the rank
        // header nor a result row.
        if ranks_header || nccl_tests::has_rows(&text) || text.contains("Test NCCL failure ") {
            kinds.push("nccl-tests");
            analysis.facts.extend(nccl_tests::parse(name, &text));
        }
        if kinds.is_empty() {
            kinds.push("unrecognised");
            analysis.observations.push(Finding::new(
                "triage.input",
                fabricdoctor_checks::Verdict::Skip,
                name,
                "nothing in this input was recognised (not an NCCL/PyTorch log, RAS report, kernel log or a supported tool output): it was not analysed",
            ));
        }
        analysis.inputs.push(InputSummary {
            file: name.to_string(),
            kinds: kinds.iter().map(|k| k.to_string()).collect(),
            lines: text.lines().count(),
        });
        texts.push((name.to_string(), text.into_owned()));
    }
    // nccl-tests lists every rank of the job with its host ("#  Rank  0 Group  0 Pid ... on node7
    // device  0").
    if nccl_tests_header {
        let every_rank: Vec<u64> = analysis.ranks.ranks.keys().copied().collect();
        if let Some(fact) = analysis.ranks.single_host(every_rank) {
            analysis.push(fact);
        }
    }
    nccl::analyze(&nccl_logs, &mut analysis);
    pytorch::analyze(&pytorch_records, &mut analysis);
    rdma::analyze(&rdma_records, &nccl_logs, &mut analysis);
    rdma::ports_the_tests_did_not_use(&texts, &mut analysis);
    counters::analyze(&counter_records, &mut analysis);
    join::enrich(&mut analysis, &counter_records);
    name_gpu_faults(&mut analysis);
    unexplained::record(&mut analysis, &texts, &relabelled);
    prefix::restore_evidence(&mut analysis, &relabelled);
    analysis
}

/// Each GPU fault in one phrase (`what`), whichever tool reported it, so the gpu-fault diagnosis
/// can name them all in one sentence: a kernel Xid, nvidia-smi's memory and NVLink state, or a
/// failed DCGM test.
fn name_gpu_faults(analysis: &mut Analysis) {
    for fact in &mut analysis.facts {
        let get = |key: &str| fact.get(key).unwrap_or("?").to_string();
        let what = match fact.name.as_str() {
            "gpu.xid" | "gpu.ecc" => format!("Xid {}: {} on {}", get("xid"), get("meaning"), get("bus_id")),
            "gpu.remap_pending" => format!("row remapping pending on GPU {}", get("gpu")),
            "gpu.remap_failed" => format!("row remapping failure on GPU {}", get("gpu")),
            "gpu.retired_pages_pending" => format!("page retirement pending on GPU {}", get("gpu")),
            "gpu.ecc_uncorrectable" => {
                format!("{} uncorrectable ECC error(s) ({}) on GPU {}", get("count"), get("where"), get("gpu"))
            }
            "gpu.nvlink_inactive" => format!("NVLink link(s) {} inactive on GPU {}", get("links"), get("gpu")),
            "nvswitch.error" => get("what"),
            "dcgm.fail" => format!("dcgmi diag test {} failed on GPU {}", get("test"), get("gpu")),
            _ => continue,
        };
        fact.attrs.entry("what".to_string()).or_insert(what);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::playbook::Confidence;

    /// A launcher's labels and a collector's timestamps change nothing but the quoted evidence: the
    /// same facts with the same attributes, and the evidence is the line as given.
    /// The first diagnosis triage gives one input.
    fn top(text: String) -> Option<String> {
        let report = triage(&[Input::new("log", text.into_bytes())], &crate::playbook::Playbook::embedded());
        report.diagnoses.first().map(|d| d.id.clone())
    }

    /// MPICH's FAQ as its web page gives it: no-break spaces between the words of the error stack
    /// are read as spaces, and the evidence quotes the line as pasted.
    #[test]
    fn a_line_pasted_from_a_web_page_with_no_break_spaces_mpich_faq() {
        let pasted =
            "MPID_nem_tcp_connpoll(1830)...........:\u{a0}Communication\u{a0}error\u{a0}with\u{a0}rank\u{a0}1:\n";
        let report = triage(&[Input::new("log", pasted.as_bytes().to_vec())], &crate::playbook::Playbook::embedded());
        let first = report.diagnoses.first().expect("a diagnosis");
        assert_eq!(first.id, "network-unreachable");
        assert!(first.evidence.iter().any(|e| e.text.contains('\u{a0}')), "{:?}", first.evidence);
    }

    /// system76/firmware-open#66 and microsoft/pai#3537: nvidia-smi that cannot reach the driver
    /// says no driver is loaded, not which cause kept it out (a BAR left unassigned, GPUs gone from
    /// the bus); it is no CUDA driver older than the runtime.
    #[test]
    fn nvidia_smi_without_a_driver_is_no_driver_older_than_the_runtime_system76() {
        let smi = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n";
        assert_eq!(top(smi.to_string()).as_deref(), Some("errors-not-understood"));
        let old = "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).\n";
        assert_eq!(top(format!("{smi}{old}")).as_deref(), Some("cuda-driver-mismatch"));
    }

    /// linux-pci list, a ConnectX under DPC (heldout123): an uncorrected PCIe error at the port above
    /// the NIC came first, and the NIC's "PCI channel offline" followed from the recovery. The same
    /// NIC lines without the PCIe error are the NIC's own fault.
    #[test]
    fn a_nic_gone_offline_after_an_uncorrected_pcie_error_is_the_pcie_error_linux_pci_dpc() {
        let aer = "[ 81.029598] pcieport 0004:00:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, (Receiver ID)\n";
        let nic = "[ 81.083307] mlx5_core 0004:01:00.0: mlx5_error_sw_reset:252:(pid 1618): PCI channel offline, stop waiting for NIC IFC\n[ 82.395040] mlx5_core 0004:01:00.1: print_health:819:(pid 0): Fatal error detected\n";
        assert_eq!(top(format!("{aer}{nic}")).as_deref(), Some("pcie-aer"));
        assert_eq!(top(nic.to_string()).as_deref(), Some("nic-hw-fault"));
    }

    /// linux-rdma list, Soft-RoCE on a Wi-Fi netdev (heldout122): ibv_rc_pingpong used GID index 0,
    /// a link-local address the interface did not hold, and could not bring its queue pair to RTR
    /// on an Ethernet port (ibstat). The same failure on an InfiniBand port is no GID index.
    #[test]
    fn a_queue_pair_that_failed_on_a_link_local_gid_over_roce_is_the_gid_index_linux_rdma_rxe() {
        let port = |layer: &str| {
            format!("CA 'rxe0'\n        Port 1:\n                State: Active\n                Physical state: LinkUp\n                Link layer: {layer}\n")
        };
        let pingpong = ">ibv_rc_pingpong -d rxe0 -g 0\n  local address:  LID 0x0000, QPN 0x000015, PSN 0x015dd8, GID\nfe80::4a51:c5ff:fef6:e159\nFailed to modify QP to RTR\nCouldn't connect to remote QP\n";
        assert_eq!(top(format!("{}{pingpong}", port("Ethernet"))).as_deref(), Some("roce-gid-index"));
        assert_ne!(top(format!("{}{pingpong}", port("InfiniBand"))).as_deref(), Some("roce-gid-index"));
    }

    /// Hugging Face Accelerate's troubleshooting guide (heldout124): its debug mode names processes
    /// that passed tensors of different shapes to one broadcast.
    #[test]
    fn processes_that_passed_different_shapes_to_a_collective_mismatch_accelerate_docs() {
        let text = "accelerate.utils.operations.DistributedOperationException:\n\nCannot apply desired operation due to shape mismatches. All shapes across devices must be valid.\n\nOperation: `accelerate.utils.operations.broadcast`\nInput shapes:\n  - Process 0: [1, 5]\n  - Process 1: [1, 2, 5]\n";
        assert_eq!(top(text.to_string()).as_deref(), Some("collective-mismatch"));
        let valid = "Operation: `accelerate.utils.operations.broadcast`\nInput shapes:\n  - Process 0: [1, 5]\n";
        assert_eq!(top(valid.to_string()), None);
    }

    /// PyTorch's distributed documentation (heldout130): c10d's shape check before an all-reduce
    /// found the ranks' tensors differ.
    #[test]
    fn ranks_whose_shapes_c10d_found_different_mismatch_pytorch_docs() {
        let text = "    work = default_pg.allreduce([tensor], opts)\nRuntimeError: Error when verifying shape tensors for collective ALLREDUCE on rank 0. This likely indicates that input shapes into the collective are mismatched across ranks. Got shapes:  10\n[ torch.LongTensor{1} ]\n";
        assert_eq!(top(text.to_string()).as_deref(), Some("collective-mismatch"));
    }

    /// NVIDIA's dual DGX Spark guide (heldout130): the second port pair is down by design, and the
    /// benchmarks ran on the ports that are up. The same down ports with no test beside them are
    /// reported as down.
    #[test]
    fn ports_the_tests_did_not_run_on_are_no_diagnosis_dgx_spark_guide() {
        let ports = "rocep1s0f0 port 1 ==> enp1s0f0np0 (Up)\nrocep1s0f1 port 1 ==> enp1s0f1np1 (Down)\n";
        let test = "nvidia@spark-bd26:~$ ib_write_bw -d rocep1s0f0 -i 1 -p 12000 -F --report_gbits 192.168.200.12\n";
        assert_eq!(top(format!("{ports}{test}")), None);
        assert_eq!(top(ports.to_string()).as_deref(), Some("nic-port-down"));
        let on_the_down_port = "ib_write_bw -d rocep1s0f1 192.168.200.12\n";
        assert_eq!(top(format!("{ports}{on_the_down_port}")).as_deref(), Some("nic-port-down"));
    }

    /// linux-rdma list, irdma deadlocked on rtnl (heldout122): hung-task reports are errors, even
    /// where no playbook reads them, never "no diagnosis".
    #[test]
    fn tasks_the_kernel_reports_hung_are_quoted_as_errors_linux_rdma_irdma() {
        let text = "[  257.719496] INFO: task kworker/87:0:470 blocked for more than 122 seconds.\n[  257.726423]       Tainted: G            E      6.1.4-0.gdc.el9.x86_64 #1\n";
        assert_eq!(top(text.to_string()).as_deref(), Some("errors-not-understood"));
        // rwth-i6/returnn#1480: the report's first line cut, its stack dump's header kept; a task
        // in any other state (SysRq's list of every task) is no error.
        let stack = "[  +0.000049] task:python3.11      state:D stack:    0 pid:15277 ppid: 15257 flags:0x00000002\n[  +0.000006] Call Trace:\n";
        assert_eq!(top(stack.to_string()).as_deref(), Some("errors-not-understood"));
        assert_eq!(top(stack.replace("state:D", "state:S")), None);
    }

    /// meta-pytorch/torchcomms#1350 (heldout125) and the linux-rdma list's MLNX_OFED user space over
    /// an upstream kernel (heldout122): CTRAN finding no InfiniBand device, and perftest unable to
    /// query the device it opened, are no usable RDMA device.
    #[test]
    fn no_infiniband_device_for_ctran_and_a_device_perftest_cannot_query_are_missing() {
        let ctran = "E0331 CtranIb.cc:101] CTRAN-IB: Found 0 InfiniBand device(s) but 1 required (NCCL_CTRAN_IB_DEVICES_PER_RANK). Set NCCL_CTRAN_BACKENDS=nvl,socket to use alternative backends.\n";
        assert_eq!(top(ctran.to_string()).as_deref(), Some("rdma-device-missing"));
        let perftest = "$ /usr/bin/ib_write_bw -d mlx5_0\nCouldn't get device attributes\nUnable to create QP.\n";
        assert_eq!(top(perftest.to_string()).as_deref(), Some("rdma-device-missing"));
        assert_eq!(top("CTRAN-IB: Found 2 InfiniBand device(s)\n".to_string()), None);
    }

    /// Timez-zx/nccl-tests' baseline log (heldout110): NCCL leaving GPUDirect RDMA off on a job
    /// whose two ranks share one host cost it nothing; on a job across hosts it is the diagnosis.
    #[test]
    fn gpudirect_off_on_a_one_host_job_is_no_diagnosis_timezzx() {
        let log = |nodes: u32| {
            format!("mew0:64904:64920 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\nmew0:64904:64920 [0] NCCL INFO comm 0x55b6aa64a990 rank 0 nRanks 2 nNodes {nodes} localRanks {} localRank 0 MNNVL 0\n", 3 - nodes)
        };
        assert_eq!(top(log(1)), None);
        assert_eq!(top(log(2)).as_deref(), Some("gdr-disabled"));
    }

    #[test]
    fn prefixed_lines_give_the_same_facts_and_quote_the_original() {
        let plain = "node7:1234:1250 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.7<0>\n\
                     node7:1234:1250 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.8<33468> with error 12, opcode 0, len 0, vendor err 129 (Send)\n";
        let labelled: String =
            plain.lines().map(|l| format!("[1,3]<stdout>:2024-05-01T10:00:01.123Z \x1b[31m{l}\x1b[0m\n")).collect();
        let facts = |text: &str| analyze(&[Input::new("job.log", text.as_bytes().to_vec())]).facts;
        let (expected, got) = (facts(plain), facts(&labelled));
        assert!(!expected.is_empty());
        assert_eq!(
            expected.iter().map(|f| (&f.name, &f.attrs)).collect::<Vec<_>>(),
            got.iter().map(|f| (&f.name, &f.attrs)).collect::<Vec<_>>()
        );
        let warn = got.iter().find(|f| f.name == "nccl.wc_error").expect("wc error fact");
        assert!(warn.evidence[0].text.starts_with("[1,3]<stdout>:2024-05-01T10:00:01.123Z"), "{:?}", warn.evidence);
    }

    /// NERSC podman-nccl-testing (heldout75) and aws-ofi-nccl#584: aws-ofi-nccl refusing a GPU
    /// buffer is GPUDirect RDMA unavailable where libfabric said it could not start its CUDA memory
    /// interface, and a plugin and libfabric that do not go together where it did not.
    #[test]
    fn a_gpu_buffer_libfabric_cannot_register_is_gpudirect_off_only_without_its_cuda_interface() {
        let refused = "nid004048:1379601:1379824 [2] register_mr_buffers:647 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 3. RC: -22, Error: Invalid argument\n";
        let hmem = "libfabric:2023029:1726869858::core:core:ofi_hmem_init():339<warn> Failed to initialize hmem iface FI_HMEM_CUDA: No data available\n";
        assert_eq!(top(format!("{hmem}{refused}")).as_deref(), Some("gdr-disabled"));
        assert_eq!(top(refused.to_string()).as_deref(), Some("version-env-mismatch"));
    }

    /// nccl#257: nccl-tests with every rank on one host never touches the network, so libibverbs
    /// failing to load there is not the diagnosis; the same line in a job across hosts is.
    #[test]
    fn an_rdma_device_missing_on_a_single_host_job_is_not_the_diagnosis() {
        let header = "# Using devices\n#   Rank  0 Pid  15833 on jupyter device  0 [0x02] GeForce GTX 1080 Ti\n#   Rank  1 Pid  15833 on jupyter device  1 [0x03] GeForce GTX 1080 Ti\n";
        let warn = "jupyter:15833:15833 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n";
        assert_ne!(top(format!("{header}{warn}")).as_deref(), Some("rdma-device-missing"));
        let two_hosts = header.replace("Rank  1 Pid  15833 on jupyter", "Rank  1 Pid  15833 on other");
        assert_eq!(top(format!("{two_hosts}{warn}")).as_deref(), Some("rdma-device-missing"));
    }

    /// A fault read from the input whose rule wants a fact the input does not give (an address
    /// handle that failed, on a port nothing says is RoCE) is not passed over in silence: its line
    /// is quoted as an error no playbook explains. The single-host case above stays quiet: its rule
    /// was ruled out, not left wanting.
    #[test]
    fn a_fault_whose_rule_wants_context_is_still_quoted() {
        let line = "[1] [h:1:0] ib_device.c:1332 UCX  ERROR   ibv_create_ah(dlid=3 sl=0 port=1 src_path_bits=0 dgid=fe80::248a:703:9a:1234 sgid_index=0) for UD mlx5 connect on mlx5_0 failed: No such device\n";
        let report = triage(&[Input::new("ucx.log", line.as_bytes().to_vec())], &Playbook::embedded());
        let ids: Vec<&str> = report.diagnoses.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["errors-not-understood"]);
        assert!(report.diagnoses[0].cause.contains("ibv_create_ah"), "{}", report.diagnoses[0].cause);
        let roce = line.replace("fe80::248a:703:9a:1234", "fe80::5aa2:e1ff:fefe:c130");
        let report = triage(&[Input::new("ucx.log", roce.into_bytes())], &Playbook::embedded());
        assert_eq!(report.diagnoses.first().map(|d| d.id.as_str()), Some("roce-gid-index"));
    }

    /// linux-rdma/perftest#393: a queue pair that could not reach RTR, with nothing to say why,
    /// is read into a fact no rule looks at in that form; its lines are still quoted.
    #[test]
    fn a_fault_no_rule_looks_at_is_still_quoted() {
        let text = "Failed to modify QP 122273 to RTR\n Unable to Connect the HCA's through the link\n";
        let report = triage(&[Input::new("perftest.txt", text.as_bytes().to_vec())], &Playbook::embedded());
        let ids: Vec<&str> = report.diagnoses.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["errors-not-understood"]);
        assert!(
            report.diagnoses[0].cause.contains("Failed to modify QP 122273 to RTR"),
            "{}",
            report.diagnoses[0].cause
        );
    }

    /// pdsh/clush name the host in their label; a kernel line that names none takes it.
    #[test]
    fn a_host_label_names_the_host_of_a_kernel_line() {
        let text = "node7: [ 12.5] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n\
                    node7: [ 12.6] nvidia 0000:3b:00.0: something else\n";
        let analysis = analyze(&[Input::new("dmesg-all", text.as_bytes().to_vec())]);
        let xid = analysis.facts.iter().find(|f| f.get("xid") == Some("79")).expect("xid fact");
        assert_eq!(xid.get("host"), Some("node7"));
    }

    /// Never silent: a log whose errors no playbook knows gets a diagnosis that quotes them, and
    /// an unrecognised input an observation naming their lines.
    #[test]
    fn errors_no_playbook_knows_are_quoted_not_hidden() {
        let text = "step 1200 loss 2.31\nterminate called after throwing an instance of 'c10::Error'\n  what():  shard 3 index: read error\nstep 1201\nSegmentation fault (core dumped)\n";
        let report = triage(&[Input::new("train.out", text.as_bytes().to_vec())], &Playbook::embedded());
        let top = report.diagnoses.first().expect("a diagnosis, not silence");
        assert_eq!(top.id, "errors-not-understood");
        assert_eq!(top.evidence.iter().map(|e| e.line).collect::<Vec<_>>(), vec![2, 3, 5]);
        assert!(top.cause.contains("throwing an instance of 'c10::Error'"), "{}", top.cause);
        let observation = report.observations.iter().find(|o| o.verdict == fabricdoctor_checks::Verdict::Warn);
        assert!(
            observation.is_some_and(|o| o.message.ends_with("look like errors: 2, 3, 5")),
            "{:?}",
            report.observations
        );
        // Healthy text stays without a diagnosis.
        let quiet = triage(&[Input::new("train.out", b"step 1 loss 2.0\n".to_vec())], &Playbook::embedded());
        assert!(quiet.diagnoses.is_empty());
    }

    /// Regression: the real-world captures carry annotated headers (`# ROOT CAUSE ... -x
    /// NCCL_IB_GID_INDEX=3`, `#   AER: DevSta shows ...`); read as input, they produced an env
    /// setting and a PCIe AER diagnosis that the output itself does not show. Output pasted as
    /// shell comments, with nothing above it or below the output that has begun, is read.
    #[test]
    fn annotated_paste_comments_are_not_read_as_faults() {
        let annotation = "# fixed by: mpirun -x NCCL_IB_GID_INDEX=3 ...\n#   AER: UESta UnsupReq+\n\n#\tNVRM: Xid (PCI:0000:3b:00): 79, x\n";
        let text = format!("{annotation}step 1200 loss 2.31\n");
        let analysis = analyze(&[Input::new("notes.txt", text.into_bytes())]);
        assert!(analysis.facts.is_empty(), "{:?}", analysis.facts);
        let xid = "# NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n";
        assert!(analyze(&[Input::new("pasted", xid.as_bytes().to_vec())]).has("gpu.xid"), "a paste made of comments");
        let text = format!("$ dmesg | grep NVRM\n{xid}");
        assert!(analyze(&[Input::new("pasted", text.into_bytes())]).has("gpu.xid"), "a comment under the command");
        let text = "Nov 22 10:00:01 node7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n";
        assert!(analyze(&[Input::new("dmesg", text.as_bytes().to_vec())]).has("gpu.xid"));
    }

    /// An error line no reader knows word for word, from a library the playbooks never read, is
    /// named by the family its words speak of, first and at low
    /// confidence, with the errors-not-understood diagnosis after it; a rule read in full keeps the
    /// first place, and the family is not added beside it.
    #[test]
    fn an_unknown_line_is_named_by_its_family_only_when_no_rule_read_the_input() {
        let ze = "[0] ERROR: xccl allreduce: device out of memory (2147483648 bytes requested)\n";
        let ids = |text: &str| -> Vec<(String, Confidence)> {
            triage(&[Input::new("log", text.as_bytes().to_vec())], &Playbook::embedded())
                .diagnoses
                .into_iter()
                .map(|d| (d.id, d.confidence))
                .collect()
        };
        let got = ids(ze);
        assert_eq!(got[0], ("gpu-resource-limit".to_string(), Confidence::Low), "{got:?}");
        assert!(got.iter().any(|(id, _)| id == "errors-not-understood"), "{got:?}");
        let read = "node7:1234:1250 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.8<33468> with error 12, opcode 0, len 0, vendor err 129 (Send)\n";
        let got = ids(&format!("{read}{ze}"));
        assert!(got.iter().all(|(id, _)| id != "gpu-resource-limit"), "{got:?}");
    }

    /// nccl-tests#36 (heldout73): the tests' "Test NCCL failure" lines are read as NCCL's result
    /// where the paste keeps neither the rank header nor a result row.
    #[test]
    fn a_test_failure_line_alone_names_the_tests() {
        let text =
            "pkb-1: Test NCCL failure common.cu:345 'unhandled system error'\n .. pkb-1: Test failure common.cu:393\n";
        let analysis = analyze(&[Input::new("log", text.as_bytes().to_vec())]);
        assert!(analysis.inputs[0].kinds.iter().any(|k| k == "nccl-tests"), "{:?}", analysis.inputs);
        assert!(analysis.facts.iter().any(|f| f.name == "nccl.error" && f.get("source") == Some("nccl-tests")));
    }
}
