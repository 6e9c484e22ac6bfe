//! Error lines no playbook reads in full, named by what they speak of. The readers know the
//! messages that NCCL, PyTorch, the kernel and the usual tools print, word for word; a library or
//! a release they have never seen words the same failure its own way ("ZE_RESULT_ERROR_OUT_OF_
//! DEVICE_MEMORY", "cuMemImportFromShareableHandle failed", "no active HCA ports"). The call,
//! status or resource such a line names is the same, and an on-call engineer reads the family from
//! it before reading the rest. When no rule fired, the first unexplained error line that names one
//! of these families gives the fault it belongs to, at low confidence and saying so.

use std::sync::OnceLock;

use regex::Regex;

use crate::fact::{Evidence, Fact};

/// One family: the fact its lines stand for (one the playbooks already diagnose from), and the
/// words that name it.
struct Family {
    fact: &'static str,
    words: Regex,
    /// Words that, beside the family's, make the line another fault's (the kernel's OOM killer
    /// speaks of memory, but host memory and a killed process).
    not: Option<Regex>,
}

fn family(fact: &'static str, words: &str, not: Option<&str>) -> Family {
    Family {
        fact,
        words: Regex::new(words).expect("a fixed pattern compiles"),
        not: not.map(|n| Regex::new(n).expect("a fixed pattern compiles")),
    }
}

/// The families, most specific first: a line that names two (a cuMem call that ran out of memory)
/// belongs to the first.
fn families() -> &'static [Family] {
    static FAMILIES: OnceLock<Vec<Family>> = OnceLock::new();
    FAMILIES.get_or_init(|| {
        vec![
            // A GPU that left the bus, or that the driver can no longer reach (NVIDIA's Xid catalog:
            // Xid 79 "GPU has fallen off the bus"; nvidia-smi's "Unable to determine the device
            // handle"; "GPU is lost" in NVML's status names, NVML_ERROR_GPU_IS_LOST).
            family(
                "gpu.lost",
                r"(?i)fallen off the bus|\bGPU (?:is|was) lost\b|GPU_IS_LOST|GpuIsLost|unable to determine the device handle|GPU requires reset|GPU has fallen",
                None,
            ),
            // The descriptors' limit (errno EMFILE, getrlimit(2) RLIMIT_NOFILE).
            family("host.open_files_exhausted", r"(?i)too many open files|\bEMFILE\b|RLIMIT_NOFILE", None),
            // Locked memory (setrlimit(2) RLIMIT_MEMLOCK, `ulimit -l`), which memory registration
            // with an RDMA NIC pins.
            family("rdma.memlock", r"(?i)\bmemlock\b|RLIMIT_MEMLOCK|locked memory|ulimit -l\b", None),
            // Device memory: CUDA's cudaErrorMemoryAllocation and CUDA_ERROR_OUT_OF_MEMORY, HIP's
            // hipErrorOutOfMemory, Level Zero's ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, the frameworks'
            // OutOfMemoryError. Not the kernel's OOM killer (host memory, a killed process), nor a
            // host's failed allocation (ENOMEM "Cannot allocate memory", which memory registration
            // returns for a memlock limit too), nor an RDMA device's queues: a work, completion or
            // event queue, or a queue pair ("ib0: failed to allocate device WQ", IPoIB's ipoib_main.c),
            // which the kernel or the NIC allocates, not the GPU. Nor UCX's status name as NIXL
            // translates it ("Unexpected UCX error: Out of memory", UCS_ERR_NO_MEMORY): the status
            // of whatever UCX failed to allocate, a pool or a NIC's queues as often as memory,
            // which the UCX lines before it name.
            family(
                "gpu.out_of_memory",
                r"(?i)out of (?:device |gpu |cuda )?memory|OUT_OF_(?:DEVICE_)?MEMORY|OutOfMemory|MemoryAllocation\b|cudaMalloc\w* failed|failed to allocate (?:device|gpu|cuda)",
                Some(r"(?i)killed process|oom[-_ ]?kill|oom_reaper|out of memory: kill|host memory|pinned|invoked oom|\b(?:WQ|CQ|EQ|QP|SRQ)\b|ipoib|UCX error: Out of memory|\((?:posix|sysv)/memory\)|using md (?:posix|sysv)"),
            ),
            // A caller's own bookkeeping of GPU sharing gone wrong, which the driver reports but did
            // not refuse: enabling peer access a second time (cudaErrorPeerAccessAlreadyEnabled, 704:
            // "peer access is already enabled", driver_types.h), which a library that takes it for
            // fatal aborts on (ggml-org/llama.cpp#5347: a model reloaded, fixed in the library), and
            // closing an IPC mapping after CUDA was torn down at exit (open-mpi/ompi#3244: Open MPI
            // 2.1's finalize looping on "cuIpcCloseMemHandle failed"). The communication code's
            // defect, not a refusal to share memory.
            family(
                "nccl.internal",
                r"(?i)peer access is already enabled|PeerAccessAlreadyEnabled|\b(?:cu|cuda|hip)IpcCloseMemHandle\b",
                None,
            ),
            // GPUs sharing memory between processes: CUDA and HIP IPC (cudaIpcOpenMemHandle,
            // hipIpcGetMemHandle), peer access (cudaDeviceEnablePeerAccess, "peer access is not
            // supported between these two devices"), and the virtual memory calls that share
            // memory across processes and nodes (cuMemCreate, cuMemExportToShareableHandle,
            // cuMemImportFromShareableHandle; IMEX channels across NVLink domains), and NVSHMEM's
            // exchange of its symmetric heap's handles between the processes of a node
            // (src/host/mem/mem_heap.cpp, exchange_heap_memory_handle, over its local IPC socket:
            // "Fatal IPC Failure"), which fails where processes it takes for one node's cannot
            // reach each other's socket or GPU memory.
            family(
                "gpu.ipc_refused",
                r"(?i)\bexchange_heap_memory_handle\b|\bFatal IPC Failure\b|\b(?:cuda|hip|cu)Ipc\w+|\bIPC (?:mem(?:ory)? )?handle|\bpeer access|CanAccessPeer|EnablePeerAccess|\bcuMem(?:Create|Import\w*|Export\w*|Map|SetAccess)\b|\bIMEX\b|\bP2P (?:is )?not (?:supported|available)",
                None,
            ),
            // A GPU another process holds: cudaErrorDevicesUnavailable ("all CUDA-capable devices
            // are busy or unavailable"), CUDA_ERROR_DEVICE_UNAVAILABLE, hipErrorDeviceAlreadyInUse,
            // and the compute modes that refuse a second process (nvidia-smi -c).
            family(
                "gpu.shared_by_ranks",
                r"(?i)busy or unavailable|DEVICES?_UNAVAILABLE|DevicesUnavailable|DeviceAlreadyInUse|exclusive[_ ]process|prohibited compute mode",
                None,
            ),
            // POSIX shared memory (shm_open(3) under /dev/shm) and System V's (shmget(2)), named
            // also by the segment or region a library failed to create (Global Arrays' ARMCI:
            // "allocate: failed to create shared region", under its advice on SHMMAX, and
            // "CreateSharedRegion:kr_malloc failed", armci/src/memory/shmem.c), and by the system's
            // limits on it (GASNet's "per-host segment limit ... is too small ... You may need to
            // adjust OS shared memory limits.", gasnet_core.c; StanfordLegion/gasnet#8).
            family(
                "process.shm_full",
                r"(?i)/dev/shm|\bshm_open\b|\bshmget\b|\bshm\b|\bshared (?:memory )?(?:region|segment)s?\b|\bCreate_?Shared_?Region\b|\bSHMMAX\b|\bSHMALL\b|\bshared memory limits?\b",
                None,
            ),
            // GPU memory registered with the NIC: GPUDirect RDMA through nvidia_peermem (formerly
            // nv_peer_mem) or DMA-BUF.
            // Only its absence is this family: a peer-memory module that reports a context it
            // skipped (nvidia-peermem's "detected invalid context") is working, and says so.
            family(
                "nccl.gdr_disabled",
                r"(?i)(?:GPUDirect|\bGDR\b|peermem|peer_mem|\bdma-?buf\b).*(?:\bnot (?:found|loaded|available|supported|enabled)|unavailable|disabled|missing|unknown symbol|disagrees|\bcannot\b|can't|unable|failed to (?:load|register|map|import|insert)|no such)|(?:\bnot (?:found|loaded|available|supported|enabled)|unavailable|disabled|missing|\bcannot\b|can't|unable|failed to (?:load|register|map|import|insert)).*(?:GPUDirect|\bGDR\b|peermem|peer_mem|\bdma-?buf\b)",
                None,
            ),
            // The RDMA devices themselves: libibverbs' device list and open (ibv_get_device_list(3),
            // ibv_open_device(3)), the uverbs nodes under /dev/infiniband, and the words of the
            // providers that find none. Not libibverbs' warning that it could not load a provider
            // for hardware the host does not have.
            family(
                "rdma.device_missing",
                r"(?i)\bno (?:active |usable |available )?(?:RDMA|IB|InfiniBand|verbs|HCA|EFA) (?:device|port|adapter)s?\b|ibv_get_device_list|ibv_open_device|/dev/infiniband|\buverbs\d*\b|no (?:RDMA|IB|InfiniBand) devices? (?:found|available)",
                Some(r"(?i)couldn't load driver|could not load driver"),
            ),
            // The NVSwitch fabric's manager (nv-fabricmanager) and the state it sets: CUDA's
            // cudaErrorSystemNotReady ("system not yet initialized") on NVSwitch systems.
            family(
                "fabricmanager.error",
                r"(?i)fabric ?manager|FABRIC_MANAGER|system not yet initialized|SystemNotReady|SYSTEM_NOT_READY|fabric (?:is )?not (?:yet )?(?:ready|initialized)",
                None,
            ),
            // A driver older than the runtime: cudaErrorInsufficientDriver ("CUDA driver version is
            // insufficient for CUDA runtime version"), CUDA_ERROR_UNSUPPORTED_PTX_VERSION, a runtime
            // naming the driver it needs (AWS Neuron's "This runtime requires Neuron Driver version
            // 2.0 or greater").
            family(
                "gpu.driver_mismatch",
                r"(?i)driver version is insufficient|driver/library version mismatch|requires (?:\w+ )?driver version [\d.]+ or (?:greater|newer|later)|InsufficientDriver|INSUFFICIENT_DRIVER|driver (?:\S+ )?is too old|unsupported PTX|UNSUPPORTED_PTX|PTX was compiled with an unsupported toolchain|compat(?:ibility)? (?:library|package).*(?:mismatch|not supported)",
                None,
            ),
            // GPU hardware faults: uncorrectable ECC (CUDA_ERROR_ECC_UNCORRECTABLE,
            // cudaErrorECCUncorrectable), NVLink errors, row-remapping failures.
            family(
                "gpu.hardware_error",
                r"(?i)ECC_UNCORRECTABLE|ECCUncorrectable|uncorrectable ECC|ECC error|double[- ]bit|NVLink (?:error|fault)|row remap\w* fail",
                None,
            ),
            // NCCL's own failures: ncclInternalError and the words NCCL prints for it.
            family("nccl.internal", r"ncclInternalError|(?i:nccl\S* internal (?:error|check))", None),
            // A work request the NIC completed in error, by the status names of ibv_wc_status
            // (infiniband/verbs.h): IBV_WC_RETRY_EXC_ERR (12, the transport retry counter ran out)
            // and IBV_WC_LOC_PROT_ERR (4, a local protection error: memory the NIC may not touch).
            family(
                "nccl.wc_error",
                r"(?i)retry exc|RETRY_EXC_ERR|retry count(?:er)? exceeded|local protection error|LOC_PROT_ERR",
                None,
            ),
            // An address that no interface of this host holds (bind(2): EADDRNOTAVAIL, "Cannot
            // assign requested address"), and a library that found no interface to bind: the
            // socket interface the job was given (NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME) is
            // wrong for this host. Gloo's device factory given neither an interface nor a host name
            // ("GlooDeviceFactory::makeUVDevice(): interface or hostname can't be empty",
            // torch/csrc/distributed/c10d/GlooDeviceFactory.cpp: no GLOO_SOCKET_IFNAME and a host
            // whose name is empty, as a Windows machine left unnamed) has nothing to bind either.
            family(
                "nccl.socket_iface_suspect",
                r"(?i)cannot assign requested address|\bEADDRNOTAVAIL\b|no socket interface|(?:NCCL|GLOO)_SOCKET_IFNAME|interface or hostname can'?t be empty",
                None,
            ),
            // PCIe Advanced Error Reporting as the kernel words it (drivers/pci/pcie/aer.c: "PCIe
            // Bus Error: severity=Uncorrected (Non-Fatal)", "AER: Corrected error received"), its
            // TLP and DLLP error names (PCI Express Base Specification 6.0, 6.2.7), and a
            // completion timeout. Not Surprise Down: a link that went away takes its device with it,
            // which the lost GPU's family and the readers of the device name.
            family(
                "pcie.aer_event",
                r"(?i)PCIe Bus Error|\bAER\b.*\b(?:error|corrected|uncorrected)\b|\bBad ?TLP\b|\bBad ?DLLP\b|\bCompletion ?Timeout\b|Uncorrect(?:ed|able) \((?:Non-)?Fatal\)",
                Some(r"(?i)Surprise ?Down"),
            ),
            // An RDMA or Ethernet port without its link: ibv_port_state's IBV_PORT_DOWN
            // (infiniband/verbs.h), ethtool's "Link detected: no", a NIC's "link is down" and an
            // interface's NO-CARRIER (rtnetlink(7): IFF_LOWER_UP unset). Not a PCIe slot's link
            // (pciehp's "Slot(3): Link Down"): the device behind it left the bus.
            family(
                "rdma.port_down",
                r"(?i)\blink (?:is |went |goes )?down\b|\bport (?:state:? )?(?:is )?down\b|\bstate:? (?:is )?down\b|PORT_DOWN|NO-CARRIER|\bno carrier\b|link detected: no\b|\bport (?:is )?not active\b",
                Some(r"(?i)pciehp|Surprise ?Down|\bSlot\(|\bPCIe link\b"),
            ),
            // A rank killed from outside (SIGKILL: the OOM killer, a scheduler): signal(7).
            family(
                "process.died",
                r"(?i)\bSIGKILL\b|killed by signal 9|signal 9\b|exit(?:ed with)? (?:exit )?code:? -9\b|exitcode: -9\b",
                None,
            ),
            // A peer's address that no route reaches (connect(2): ENETUNREACH, EHOSTUNREACH,
            // ECONNREFUSED; getaddrinfo(3): EAI_NONAME, EAI_AGAIN), or a program's own word that it
            // could not resolve a peer's or host's name to an address, whatever errno it appends
            // (kvcache-ai/Mooncake's handshake: "failed to get IP address of peer server ..."): no
            // connection to that peer can begin. An address of this host's own interface is no peer.
            // A peer-to-peer program's own word that it reached none of its peers (libp2p's daemon
            // in hivemind: "failed to connect to bootstrap peers"; Open MPI's TCP transport: "Unable
            // to connect to the peer 192.168.68.53 on port 1024: No route to host") is the same.
            family(
                "network.host_unreachable",
                r"(?i)no route to host|network is unreachable|connection refused|name or service not known|temporary failure in name resolution|\bECONNREFUSED\b|\bEHOSTUNREACH\b|\bENETUNREACH\b|\b(?:failed to|unable to|could not|couldn't|cannot|can't) (?:get|resolve|obtain|look ?up|find) (?:the )?(?:ip )?address(?:es)? (?:of|for) (?:the )?(?:peer|remote|server|host)\b|\b(?:failed to|unable to|could not|couldn't|cannot|can't) resolve (?:the )?(?:peer|remote|server|host ?name|host)\b|\b(?:failed to|unable to|could not|couldn't|cannot|can't) connect to (?:any |the )?(?:bootstrap (?:peers?|nodes?)|peers?\b)",
                None,
            ),
        ]
    })
}

/// The fact the first of `lines` that names a family stands for, read from its words: the line's
/// text as `text` (what the diagnoses quote), `read=words` to say how it was found, and the line as
/// evidence. `None` when no line names a family.
pub fn first_family(lines: &[&Evidence]) -> Option<Fact> {
    lines.iter().find_map(|evidence| {
        let text = super::prefix::without_colours(&evidence.text);
        if resolves_a_symbol(&text) {
            return None;
        }
        let family = families()
            .iter()
            .find(|f| f.words.is_match(&text) && !f.not.as_ref().is_some_and(|not| not.is_match(&text)))?;
        let trimmed = text.trim();
        // The line names no host the readers could take; the diagnosis speaks of the one that
        // printed it.
        let mut fact =
            Fact::new(family.fact).attr("host", "the host that printed it").attr("text", trimmed).attr("read", "words");
        fact = match family.fact {
            "gpu.hardware_error" => fact.attr("what", trimmed),
            // The statuses by their numbers, as the rules name them.
            "nccl.wc_error" => {
                let lower = trimmed.to_ascii_lowercase();
                let protection = lower.contains("protection") || lower.contains("loc_prot");
                fact.attr("status", if protection { 4 } else { 12 })
            }
            "nccl.socket_iface_suspect" => fact.attr("iface", "none").attr("used_by", "the interface the line names"),
            "process.died" => fact.attr("signal", 9).attr("rank", "the rank that printed it"),
            "pcie.aer_event" => {
                let lower = trimmed.to_ascii_lowercase();
                let uncorrected = lower.contains("uncorrect") || lower.contains("fatal");
                fact.attr("severity", if uncorrected { "uncorrected" } else { "corrected" })
                    .attr("device", "the device the line names")
            }
            "rdma.port_down" => {
                fact.attr("nic", "the NIC the line names").attr("port", "its port").attr("state", "down")
            }
            _ => fact,
        };
        Some(fact.evidence((*evidence).clone()))
    })
}

/// A line about finding a function rather than calling it ("Failed to get driver entry point
/// 'cuDeviceCanAccessPeer' (CUDA error 34)", "undefined symbol: cuMemCreate", dlsym(3)): the name
/// it quotes is a symbol of a library that did not load or lacks it, not a failure of what that
/// function does, so the family its name belongs to is not the fault.
fn resolves_a_symbol(text: &str) -> bool {
    static WORDS: OnceLock<Regex> = OnceLock::new();
    WORDS
        .get_or_init(|| {
            Regex::new(r"(?i)\bentry ?point\b|\bundefined symbol\b|\bsymbol lookup\b|\bdlsym\b|\bundefined reference\b|\bunresolved symbol\b|\bcould not (?:find|load) symbol\b")
                .expect("a fixed pattern compiles")
        })
        .is_match(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(line: &str) -> Option<String> {
        let evidence = Evidence::new("log", 7, line);
        first_family(&[&evidence]).map(|fact| fact.name)
    }

    /// NVIDIA/warp#219: a stub libcuda.so has none of the driver's entry points; the one named
    /// ggml-org/llama.cpp#5347 and open-mpi/ompi#3244 (heldout401, heldout402): a second enable of
    /// peer access and an IPC close after CUDA's teardown are the caller's defects, not a refusal;
    /// the driver refusing peer access stays a refusal.
    #[test]
    fn a_callers_own_misuse_of_gpu_sharing_is_its_defect() {
        assert_eq!(named("CUDA error: peer access is already enabled"), Some("nccl.internal".into()));
        assert_eq!(
            named("[host:87478] 1 more process has sent help message help-mpi-common-cuda.txt / cuIpcCloseMemHandle failed"),
            Some("nccl.internal".into())
        );
        assert_eq!(named("cudaIpcOpenMemHandle failed: invalid argument"), Some("gpu.ipc_refused".into()));
    }

    /// cuDeviceCanAccessPeer is a symbol that was looked for, not peer access refused.
    #[test]
    fn a_function_looked_for_and_not_found_names_no_family_warp219() {
        let line = "Warp CUDA error: Failed to get driver entry point 'cuDeviceCanAccessPeer' (CUDA error 34)";
        assert_eq!(named(line), None);
        assert_eq!(named("undefined symbol: cuMemCreate"), None);
        assert_eq!(named("cuDeviceCanAccessPeer failed: peer access is not supported"), Some("gpu.ipc_refused".into()));
    }

    /// linux-rdma list, IPoIB on a second ConnectX-6 (heldout121): the kernel could not allocate
    /// an RDMA device's work queue, which is no GPU's memory; CUDA's sample allocating a device
    /// vector still is.
    #[test]
    fn an_rdma_devices_queue_not_allocated_is_no_gpu_memory_linux_rdma_ipoib_wq() {
        assert_eq!(named("kernel: ib0: failed to allocate device WQ"), None);
        // sgl-project/sglang#27894: NIXL's word for UCX's status after a completion queue the
        // firmware refused.
        assert_eq!(named("W0717 07:30:06.719567  994396 ucx_enums.cpp:58] Unexpected UCX error: Out of memory"), None);
        assert_eq!(
            named("Failed to allocate device vector A (error code out of memory)!"),
            Some("gpu.out_of_memory".into())
        );
    }

    #[test]
    fn each_family_is_read_from_the_words_of_a_vendor_the_readers_do_not_know() {
        let cases = [
            ("ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY in allreduce", "gpu.out_of_memory"),
            ("RuntimeError: hipErrorOutOfMemory during reduce_scatter", "gpu.out_of_memory"),
            ("error: cuMemImportFromShareableHandle failed with 101", "gpu.ipc_refused"),
            ("E0101 transport: hipIpcOpenMemHandle returned error", "gpu.ipc_refused"),
            // deepseek-ai/DeepEP#316: NVSHMEM's heap handles, exchanged between two hosts of one
            // host name as if they were one node's processes.
            ("/dvs/p4/build/sw/rel/gpgpu/toolkit/r12.8/main_nvshmem/src/host/mem/mem_heap.cpp:exchange_heap_memory_handle:775: Fatal IPC Failure", "gpu.ipc_refused"),
            ("error: all CUDA-capable devices are busy or unavailable", "gpu.shared_by_ranks"),
            ("ERROR: failed to map segment /dev/shm/ccl-17 (No space left on device)", "process.shm_full"),
            // The NWChem forum, thread 257 (heldout291): ARMCI refused a System V segment.
            ("0:allocate: failed to create shared region : -1", "process.shm_full"),
            ("0:CreateSharedRegion:kr_malloc failed KB=: 190440", "process.shm_full"),
            // StanfordLegion/gasnet#8: GASNet's process-shared segments past the system's limits.
            ("*** FATAL ERROR (proc 0): in gasnetc_init() at gasnet_core.c:246: per-host segment limit 458752 is too small to accommodate 2 aux segments, total size 4194304. You may need to adjust OS shared memory limits.", "process.shm_full"),
            ("Failed to register GPU memory: GPUDirect not available", "nccl.gdr_disabled"),
            ("fatal: no active HCA ports found", "rdma.device_missing"),
            // mej/nhc#111: Node Health Check's InfiniBand check on a node whose adapter was removed.
            ("check_hw_ib:  No Infiniband device was found.", "rdma.device_missing"),
            ("ERROR: fabric manager has not finished", "fabricmanager.error"),
            ("error: CUDA driver version is insufficient for CUDA runtime version", "gpu.driver_mismatch"),
            ("ERROR   NRT:nrt_init      This runtime requires Neuron Driver version 2.0 or greater. Please upgrade aws-neuron-dkms package.", "gpu.driver_mismatch"),
            ("failed: CUDA_ERROR_ECC_UNCORRECTABLE", "gpu.hardware_error"),
            ("error: ncclInternalError in group end", "nccl.internal"),
            ("connect to 10.0.0.2:29500 failed: No route to host", "network.host_unreachable"),
            // vllm-project/vllm-ascend#4103: Mooncake's handshake could not resolve a peer given by
            // its IPv6 address, and says so with the errno it had.
            ("E20251110 20:25:57.753341 124570 transfer_metadata_plugin.cpp:969] SocketHandShakePlugin: failed to get IP address of peer server 2605:340:cd51:4900:3b92:43bb:ec8:c354:16051, check DNS and /etc/hosts, or use IPv4 address instead: Resource temporarily unavailable [11]", "network.host_unreachable"),
            ("ERROR: unable to resolve hostname worker-3", "network.host_unreachable"),
            // learning-at-home/hivemind#472: libp2p's daemon reached none of its bootstrap peers;
            // ml-explore/mlx#2540: Open MPI's TCP transport with no route to its peer.
            ("P2PDaemonError: Daemon failed to start: 2022/05/24 19:21:27 failed to connect to bootstrap peers", "network.host_unreachable"),
            ("[b][[59259,1],0][btl_tcp_endpoint.c:857:mca_btl_tcp_endpoint_start_connect] peer: m Unable to connect to the peer 192.168.68.53 on port 1024: No route to host", "network.host_unreachable"),
            ("accept failed: Too many open files", "host.open_files_exhausted"),
            ("error: failed to pin: check memlock", "rdma.memlock"),
            ("Unable to determine the device handle for GPU 0000:1b:00.0: Unknown Error", "gpu.lost"),
            ("transport error: IBV_WC_RETRY_EXC_ERR on qp 0x1f", "nccl.wc_error"),
            ("bind(10.0.0.9) failed: Cannot assign requested address", "nccl.socket_iface_suspect"),
            // RVC-Project/Retrieval-based-Voice-Conversion-WebUI#724: Gloo on a Windows machine
            // whose name was empty, mended by naming the computer.
            ("RuntimeError: GlooDeviceFactory::makeUVDevice(): interface or hostname can't be empty", "nccl.socket_iface_suspect"),
            ("worker 3 failed: killed by signal 9", "process.died"),
            ("Failed to initialize NVML: Driver/library version mismatch", "gpu.driver_mismatch"),
            // A platform's own words for AER, and the error names of the PCIe specification.
            ("[Hardware Error]: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer", "pcie.aer_event"),
            ("ERROR: root port 0000:40:01.1 reports Completion Timeout to 0000:41:00.0", "pcie.aer_event"),
            ("error: rdma port mlx5_3/1 state is down", "rdma.port_down"),
            ("ERROR: ens1f0np0 link is down, giving up", "rdma.port_down"),
        ];
        for (line, fact) in cases {
            assert_eq!(named(line).as_deref(), Some(fact), "{line}");
        }
    }

    /// The statuses are given their numbers, as the rules name them.
    #[test]
    fn a_completion_status_read_by_its_name_carries_its_number() {
        let status = |line: &str| {
            first_family(&[&Evidence::new("log", 1, line)]).and_then(|f| f.get("status").map(str::to_string))
        };
        assert_eq!(status("error: IBV_WC_RETRY_EXC_ERR").as_deref(), Some("12"));
        assert_eq!(status("failed: local protection error on wr 7").as_deref(), Some("4"));
    }

    #[test]
    fn the_kernels_oom_killer_and_a_missing_provider_name_no_family() {
        assert_eq!(named("Out of memory: Killed process 4711 (python) total-vm:1234kB"), None);
        assert_eq!(named("libibverbs: Warning: couldn't load driver 'libhfi1verbs-rdmav34.so': error"), None);
        assert_eq!(named("RuntimeError: the step failed"), None);
        // This host's own interface without an address is no peer out of reach.
        assert_eq!(named("ERROR: failed to get IP address of interface eth0"), None);
        // A link that went away takes its device: no AER family (the lost device's readers name it).
        // A PCIe slot's link going away is no network port, and its Surprise Down no AER family:
        // the device left the bus, which the lost device's readers name.
        assert_eq!(named("pcieport 0000:00:03.1: pciehp: Slot(3): Link Down, Surprise Down error"), None);
        assert_eq!(named("ERROR: Surprise Down error on 0000:3a:00.0 (AER)"), None);
        // A link that came up is no fault.
        assert_eq!(named("error counters reset; link is up"), None);
        // A peer-memory module at work, skipping a context it does not own.
        assert_eq!(named("nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context"), None);
    }

    #[test]
    fn the_first_line_that_names_a_family_is_the_one_read() {
        let first = Evidence::new("log", 3, "RuntimeError: the step failed");
        let second = Evidence::new("log", 4, "error: cuMemCreate failed: out of memory");
        let third = Evidence::new("log", 9, "error: No route to host");
        let fact = first_family(&[&first, &second, &third]).expect("a family");
        // Out of memory is named before the cuMem call that ran out of it.
        assert_eq!(fact.name, "gpu.out_of_memory");
        assert_eq!(fact.evidence[0].line, 4);
        assert_eq!(fact.get("read"), Some("words"));
    }
}
