//! Playbooks: rules and next steps as data. A playbook is a TOML file (the embedded ones live in
//! `playbooks/triage/`); each rule names the facts it needs, the facts that raise or lower its
//! confidence, its cause, and next-step commands with `{placeholders}` filled from the facts.
//!
//! Patterns are a fact name, optionally with attributes that must match exactly (case-insensitive):
//! `nccl.wc_error{status=12}`. A rule fires when every `requires` pattern and at least one `any_of`
//! pattern (when given) match, and no `unless` pattern does. Its confidence starts at `confidence`,
//! rises a step for each `strengthened_by` pattern that matches and falls a step for each
//! `weakened_by` one. A `fallback` rule fires only when no other rule did.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::fact::Fact;

/// The playbooks shipped in the binary: (file name, text).
pub const EMBEDDED: &[(&str, &str)] = &[
    ("nccl-hang.toml", include_str!("../triage/nccl-hang.toml")),
    ("nccl-slow.toml", include_str!("../triage/nccl-slow.toml")),
    ("link-flap.toml", include_str!("../triage/link-flap.toml")),
    ("nccl-data.toml", include_str!("../triage/nccl-data.toml")),
];

/// Every fact the analyzers produce: (name, attributes, what produces it). Rules may name only these;
/// `playbook list` prints them for operators writing rules.
pub const FACTS: &[(&str, &str, &str)] = &[
    (
        "nccltests.wrong",
        "size type wrong_out_of_place wrong_in_place wrong",
        "nccl-tests (or `fabricdoctor perf allreduce`) result row with a nonzero #wrong",
    ),
    ("nccltests.out_of_bounds", "count wrong", "nccl-tests footer '# Out of bounds values : N FAILED'"),
    (
        "transfer.wrong_values",
        "wrong text",
        "a program's own check of data it moved between GPUs or ranks: nvbandwidth's 'Invalid value when checking the pattern', an element reported incorrect with its value against the expected one ('241th item is incorrect! (240.000000 != 480.000000)')",
    ),
    (
        "nccl.wc_error",
        "status status_name meaning vendor_err host gpu peer",
        "NCCL WARN 'Got completion ... error N ... vendor err V'",
    ),
    ("nccl.collective_mismatch", "local_size remote_size host peer", "NCCL WARN 'collective mismatch error'"),
    (
        "nccl.shm_failed",
        "host text",
        "NCCL WARN on /dev/shm segments (posix_fallocate, shared memory segment), or a rank's SIGBUS inside libnccl",
    ),
    ("nccl.qp_connect_failed", "error host", "NCCL WARN 'ibv_modify_qp failed' (QP cannot reach RTR/RTS)"),
    ("nccl.socket_connect_failed", "error host", "NCCL WARN socket/bootstrap connect failures"),
    (
        "nccl.socket_iface_suspect",
        "iface host used_by same_address",
        "Bootstrap 'Using' whose first interface, or a NET/Socket list or channel with any interface, is docker*, lo, veth*, br-*, ..., or a failed bootstrap over an IPoIB OOB interface (used_by bootstrap|transport), or Gloo's mesh on loopback (used_by gloo), or one bootstrap address on two hosts (same_address=yes)",
    ),
    (
        "nccl.bootstrap_failed",
        "host",
        "NCCL INFO return-code trace through bootstrap.cc ('bootstrap.cc:270 -> 2'): a bootstrap call failed",
    ),
    ("nccl.cuda_error", "error host", "NCCL WARN 'Cuda failure'"),
    (
        "nccl.iommu_warning",
        "host",
        "RCCL WARN 'Missing \"iommu=pt\" from kernel command line' (advice printed at init)",
    ),
    (
        "nccl.duplicate_gpu",
        "text host",
        "NCCL WARN 'Duplicate GPU detected': two ranks on one CUDA device (or two ranks of one commId whose Init lines name one host and busId)",
    ),
    (
        "kernel.cpu_topology_warning",
        "meaning",
        "the kernel's warning that a virtual machine's CPU topology does not hold (topology_sane, llc-sibling): the hypervisor's, not a fault",
    ),
    (
        "mpi.openib_not_used",
        "meaning",
        "Open MPI 4.0+'s openib BTL leaving InfiniBand ports to UCX, and its warning that follows (not a fault)",
    ),
    ("nccl.port_error", "host", "NCCL WARN 'Got async event : port error' (IBV_EVENT_PORT_ERR)"),
    ("nccl.gpu_out_of_memory", "text host", "NCCL WARN 'Cuda failure 'out of memory'', 'Failed to CUDA calloc'"),
    (
        "gpu.out_of_memory",
        "text",
        "CUDA's out-of-memory code by name (cudaErrorMemoryAllocation, CUDA_ERROR_OUT_OF_MEMORY) or 'CUDA error: 2', from MPI, UCX, TensorFlow or a program",
    ),
    (
        "gpu.peer_mappings_exhausted",
        "text",
        "CUDA's 'peer mapping resources exhausted' (cudaErrorTooManyPeers): a GPU has no peer-access slot left",
    ),
    (
        "host.open_files_exhausted",
        "text",
        "a call refused with EMFILE ('Too many open files'): the process reached its open-file limit (RLIMIT_NOFILE)",
    ),
    (
        "gpu.bar1_exhausted",
        "text",
        "the GPU's BAR1 aperture full: a mapping of GPU memory for the NIC or a storage path refused for want of BAR1 space (cuFile 'Inc-bar-usage failed'), or the driver out of address space to map it (NVRM 'can't alloc VA space for mapping')",
    ),
    (
        "gpu.ipc_refused",
        "text",
        "CUDA or HIP IPC refused (cudaIpcGetMemHandle, hipIpcGetMemHandle, cuIpcGetMemHandle failed, 'failed to open CUDA IPC handle')",
    ),
    (
        "process.shm_full",
        "text",
        "a program's own shared memory in /dev/shm refused (multiprocessing semaphores with ENOSPC, PyTorch DataLoader's 'insufficient shared memory')",
    ),
    ("nccl.cuda_version", "text host", "NCCL WARN on a CUDA driver older than the runtime NCCL was built for"),
    ("nccl.memlock", "text host", "NCCL WARN ibv_reg_mr/register memory failing with ENOMEM (locked-memory limit)"),
    (
        "nccl.registration_unsupported",
        "text host",
        "NCCL WARN ibv_reg_dmabuf_mr/register memory refused (not supported, invalid argument)",
    ),
    ("nccl.internal", "text host", "NCCL WARN on NCCL's own protocol ('Message truncated')"),
    ("nccl.crashed", "text host", "a process killed inside libnccl: the kernel's segfault, general protection or invalid opcode line, or a SIGSEGV report whose backtrace runs through libnccl"),
    ("nccl.no_algorithm", "text host", "NCCL WARN 'no algorithm/protocol available' (NCCL_ALGO/NCCL_PROTO leave nothing usable)"),
    (
        "nccl.protocol_forced",
        "text with",
        "NCCL_PROTO set to LL128 or LL (with=wrong_results when the same inputs show wrong results)",
    ),
    (
        "network.host_unreachable",
        "text",
        "ssh 'connect to host H port 22: Connection refused/No route to host', a host name that does not resolve",
    ),
    (
        "process.died",
        "text rank host signal local_rank",
        "Ray raylet 'A worker died or was killed', 'The actor died unexpectedly'; torchrun's first failed rank ended by SIGKILL/SIGSEGV/SIGBUS/SIGILL/SIGFPE; the kernel's or Slurm's OOM killer ending a training process",
    ),
    (
        "nvswitch.error",
        "what text",
        "fabricmanager.log '[ERROR] ... detected NVSwitch fatal/non-fatal error N ... port P', or the kernel's 'nvidia-nvswitchN: SXid (PCI:...): N' (an SXid)",
    ),
    (
        "fabricmanager.error",
        "text",
        "fabricmanager.log '[ERROR]' line other than a switch error (fabric or NVLS multicast team setup failed)",
    ),
    (
        "nccl.ib_hca_mixed",
        "nics host",
        "NCCL's NET/IB list holds InfiniBand rails and RoCE ports together (NCCL_IB_HCA takes in another fabric)",
    ),
    (
        "nccl.p2p_off_over_nvlink",
        "setting",
        "nvidia-smi nvlink -s shows links up, and NCCL_P2P_LEVEL=LOC or NCCL_P2P_DISABLE=1 keeps NCCL off them",
    ),
    (
        "nccltests.independent_jobs",
        "hosts text host",
        "nccl-tests processes of one launch on several hosts each listing themselves as the same rank (built without MPI=1)",
    ),
    (
        "process.different_collectives",
        "text",
        "py-spy dumps whose processes' main threads stand in different torch.distributed collectives (one in all_reduce, another in reduce_scatter_tensor)",
    ),
    (
        "process.waiting_in_collective",
        "text",
        "py-spy dumps with threads standing inside a torch.distributed collective (distributed_c10d.py), how many of the dumped threads",
    ),
    (
        "pytorch.collective_sizes_unfit",
        "text",
        "ProcessGroupNCCL refusing a collective whose tensors do not fit the size of its group (an all-gather's output not world_size times its input)",
    ),
    (
        "mpi.cuda_hooks_without_mpi",
        "text",
        "IBM Spectrum MPI's CUDA hook library, loaded by jsrun, in a program that is not linked with MPI (its PAMI symbols missing)",
    ),
    (
        "pytorch.params_differ",
        "text",
        "DistributedDataParallel finding a parameter whose size or stride differs from rank 0's (verify_params_across_processes): the ranks built different models",
    ),
    (
        "pytorch.store_libuv_unbuilt",
        "text",
        "c10d's TCPStore asking for the libuv backend in a PyTorch build without libuv (PyTorch 2.4's default, its Windows wheels): USE_LIBUV=0 mends it",
    ),
    (
        "ucx.setting_unfit",
        "text",
        "UCX refusing a setting the fabric does not offer (adaptive routing off where every service level has it), so its transport does not open",
    ),
    (
        "process.mpi_group_crashed",
        "text",
        "a backtrace through PyTorch's creation of an MPI process group (createProcessGroupMPI): its ranks not in MPI's world, a launch without mpirun",
    ),
    (
        "nccl.network_not_found",
        "network text",
        "NCCL's 'Error: network X not found' (NCCL_NET names a network no plugin it found provides) where the loader refused no plugin",
    ),
    (
        "process.stack_waiting",
        "text",
        "a debugger's stack whose innermost frame is a wait (pthread_cond_wait, sched_yield, poll, ...) in an input that holds no crash, with the caller that waits",
    ),
    (
        "ucx.transports_without_cuda",
        "setting",
        "UCX (NIXL's agent) takes GPU memory for host memory ('VRAM memory is detected as host by UCX') where the input sets UCX_TLS to a list without a CUDA transport",
    ),
    (
        "nccl.topology_file",
        "text host",
        "NCCL WARN importing NCCL_TOPO_FILE/NCCL_GRAPH_FILE ('XML Import'); a loaded topology file whose NVLink paths differ by direction",
    ),
    ("nccl.nvls_failed", "text host", "NCCL WARN from transport/nvls.cc (NVLink SHARP setup)"),
    ("nccl.network_unreachable", "host", "NCCL WARN socket connect 'No route to host' / 'Network is unreachable'"),
    (
        "rdma.device_missing",
        "text host",
        "no RDMA device usable: NCCL 'NET/IB : No device found', 'ibv_open_device failed', libibverbs ABI/driver warnings, no libfabric provider (NET/OFI, fi_getinfo, EFA)",
    ),
    (
        "nccl.gdr_disabled",
        "nic host why",
        "NCCL INFO 'NET/IB : GPU Direct RDMA Disabled for HCA n 'mlx5_x'' (no peer-memory support found), aws-ofi-nccl's GDR disabled, or no channel with GDRDMA where every NIC is SYS from the GPU",
    ),
    (
        "nccl.remote_closed",
        "peer host seen_by rank text",
        "NCCL WARN 'Connection closed by remote peer' / 'Broken pipe' on a socket: the process at the other end is gone",
    ),
    (
        "nic.hw_fault",
        "device how host",
        "kernel: mlx5_core health compromised, firmware assert syndrome, fatal error, PCI channel offline",
    ),
    ("nccl.single_host", "host ranks", "nccl-tests' rank list puts every rank of the job on one host"),
    (
        "nccl.device_failed",
        "nic port state text host",
        "NCCL WARN 'ncclIbResiliencyHandleDeviceFailure: Device N marked as failed' (port error or fatal device event)",
    ),
    (
        "optics.out_of_range",
        "level quantity what nic",
        "ethtool -m / mlxlink -m reading beyond the module's own warning or alarm threshold",
    ),
    ("optics.no_light", "lane what nic", "ethtool -m / mlxlink -m receive power at or below -30 dBm (no light)"),
    (
        "pcie.p2p_stalled",
        "pair latency_us device",
        "cuda-samples p2pBandwidthLatencyTest: P2P=Enabled write latency between two GPUs of a millisecond or more (a working PCIe path takes microseconds)",
    ),
    (
        "job.completed",
        "text",
        "the job's own word that it finished well: MLPerf's run_stop with status success, nccl-tests' 'Out of bounds values : 0 OK', torchrun's 'worker group successfully finished' (a job that says so did not hang)",
    ),
    (
        "rdma.mtu_above_port",
        "requested active",
        "a verbs test run with a path MTU (`ibv_*_pingpong -m`, perftest `-m`/`--mtu`) above the active_mtu ibv_devinfo shows for the port",
    ),
    (
        "optics.module_error",
        "nic what",
        "the kernel's mlx5 'Port module event[error]: module N, Cable error, <kind>' (a cable or module error the cage reported)",
    ),
    ("optics.alarm_flag", "flag what nic", "ethtool -m latched alarm flag 'On'"),
    ("optics.hot", "value what nic", "module temperature at or above 70 C (the burn-in protocol's ceiling)"),
    ("mlxlink.recommendation", "text what nic", "mlxlink troubleshooting 'Recommendation' other than 'No issue was observed'"),
    ("mlxlink.effective_errors", "count what nic", "mlxlink 'Effective Physical Errors' above 0 (errors left after FEC)"),
    (
        "pytorch.error",
        "family source kind text",
        "a failure string of PyTorch's c10d/flight recorder (playbooks/catalogue/pytorch-messages.tsv) no other fact explains",
    ),
    (
        "pytorch.store_unreachable",
        "family source kind text",
        "c10d TCPStore/socket failing to connect or timing out (the rendezvous address or port is not reachable)",
    ),
    (
        "network.store_port_unusable",
        "port text",
        "the port a rendezvous store (c10d TCPStore, HCCL's listen port) must listen on is held by another process or may not be bound (EADDRINUSE, EACCES)",
    ),
    (
        "perftest.connect_failed",
        "text",
        "perftest client 'Couldn't connect to HOST:18515' (its out-of-band TCP connection to the server)",
    ),
    (
        "rdma.memlock",
        "text",
        "ibv_create_cq/ibv_reg_mr/ibv_create_qp, a libfabric provider or openib failing with 'Cannot allocate memory' (UCX, MPI, perftest, EFA)",
    ),
    (
        "gpu.nvlink_p2p_missing",
        "gpus pairs scope what text",
        "nvidia-smi topo -p2p n with no GPU pair OK on GPUs the input says have NVLink (scope switch: eight or more GPUs)",
    ),
    ("gpu.inforom_corrupted", "gpu what", "nvidia-smi 'WARNING: infoROM is corrupted at gpu BUS'"),
    (
        "gpu.fabric_unhealthy",
        "gpu text what",
        "nvidia-smi -q Fabric > Health: Summary Unhealthy or Limited Capacity, or Bandwidth Degraded",
    ),
    (
        "rdma.address_failed",
        "text",
        "libfabric fi_av_insert inserting no address, or ibv_create_ah failing (the peer's address handle)",
    ),
    (
        "host.memlock_low",
        "text",
        "`ulimit -a` 'max locked memory' or /proc/PID/limits below what check's host.memlock requires (unlimited)",
    ),
    ("nccl.ib_not_used", "host", "NCCL INFO 'NET/IB : No device found.' (normal on single-host or TCP-only jobs)"),
    ("rdma.qp_rtr_failed", "gid reason", "a verbs test's 'Failed to modify QP to RTR' (gid=zero after an all-zero GID; reason=address when the peer's address did not answer: timed out, no route)"),
    (
        "gpu.driver_mismatch",
        "text library_version driver_version",
        "CUDA 'driver version is insufficient for CUDA runtime version', NVML 'Driver/library version mismatch'",
    ),
    (
        "rdma.sm_unconfigured",
        "nic port lid sm_lid guid reading what",
        "IB port in Init with its link up: no subnet manager configured it (ibstat, ibstatus, ibv_devinfo, perftest); reading=node-guid: devices whose node GUID is 0, SR-IOV VFs never given one (ibv_devices, ibv_devinfo, ibstat)",
    ),
    (
        "rdma.auxiliary_port_down",
        "nic port state physical_state link_layer",
        "an Ethernet port down beside Active InfiniBand rails (a front-end NIC, not a rail), or a port of a device the input's verbs tests did not run on",
    ),
    (
        "rdma.devices_not_given",
        "count opened",
        "ibv_devinfo 'Failed to open device' beside devices that opened (devices not given to this container or VM)",
    ),
    ("gpu.remap_pending", "gpu correctable_rows uncorrectable_rows what", "nvidia-smi -q Remapped Rows Pending: Yes (reset needed)"),
    ("gpu.remap_failed", "gpu what", "nvidia-smi -q Remapping Failure Occurred: Yes (no spare rows left)"),
    ("gpu.retired_pages_pending", "gpu what", "nvidia-smi -q Retired Pages Pending: Yes"),
    ("gpu.ecc_uncorrectable", "gpu count where what", "nvidia-smi -q non-zero uncorrectable ECC count"),
    ("gpu.slowdown", "gpu reason", "nvidia-smi -q HW Slowdown / HW Thermal / HW Power Brake / SW Thermal clocks event Active"),
    ("gpu.nvlink_inactive", "gpu uuid links what", "nvidia-smi nvlink -s: links <inactive> while others are up"),
    ("gpu.pcie_degraded", "gpu what performance_state", "nvidia-smi -q PCIe generation or width below Max at P0"),
    ("dcgm.fail", "test gpu entity text what", "dcgmi diag failure per GPU"),
    ("dcgm.warning", "test gpu entity text", "dcgmi diag warning"),
    ("dcgm.skipped", "test of skipped", "dcgmi diag test skipped for every GPU (no verdict: a skip is no pass)"),
    (
        "dcgm.test_error",
        "test gpu entity text",
        "dcgmi diag test that failed with DCGM's 'internal error during the test': it could not run, no verdict on the GPU",
    ),
    (
        "gpu.cuda_hardware_error",
        "what",
        "CUDA runtime 'uncorrectable ECC error encountered' (214), 'uncorrectable NVLink error was detected' (220)",
    ),
    ("gpu.fabric_not_ready", "text", "CUDA 'system not yet initialized' (cudaErrorSystemNotReady: fabric manager)"),
    (
        "nccl.error",
        "text host family source result",
        "any other NCCL WARN, with the part of NCCL that printed it (NCCL's message catalogue); XLA's 'NCCL operation ... failed: RESULT' (family caller)",
    ),
    ("nccl.env", "name value", "'NCCL_X set by environment to Y', or -x/export NCCL_X=Y on a launcher line"),
    ("nccl.env_mismatch", "name values", "one NCCL_* setting with different values across ranks"),
    ("nccl.version_mismatch", "what values", "different 'NCCL version' across ranks"),
    (
        "peers.mismatch",
        "what values",
        "a library's own word that its peers run different releases or settings (Open MPI's 'Data unpack would read past end of buffer' in orte_init, DAOS's 'fabric provider ... does not match system provider')",
    ),
    ("nccl.driver_mismatch", "what values", "different 'cudaDriverVersion' across ranks"),
    (
        "nccl.rank_missing",
        "rank nranks comm state host gpu nic",
        "a rank without Init COMPLETE while most of its communicator completed",
    ),
    ("nccl.roce", "host", "'NET/IB : Using ... /RoCE'"),
    ("topo.gpu_nic_sys", "gpu nic", "nvidia-smi topo -m: every NIC is SYS from this GPU (on the other CPU socket)"),
    ("nccl.gid_routable", "host gid", "a failed completion's queue pair used the IPv4-mapped RoCE v2 GID (the right index)"),
    (
        "rdma.queue_pair_delivered",
        "work_request",
        "a failed work request's index past its send queue's length (UCX's 'RC QP ... wqe[837]'): the queue pair had delivered work before",
    ),
    (
        "nccl.cross_nic",
        "channel from_rank to_rank send_nic recv_nic host peer",
        "a channel sent on one NIC index and received on another",
    ),
    ("nccl.gid_index_unset", "", "RoCE status 12/RTR failure and no NCCL_IB_GID_INDEX anywhere in the inputs"),
    (
        "nccl.gid_index_wrong",
        "nic gid_index configured host gid",
        "NCCL_IB_GID_INDEX differs from the RoCE v2 IPv4 index in show_gids, or a queue pair that failed used a link-local RoCE GID",
    ),
    (
        "rdma.gid_tables_differ",
        "indices",
        "pasted GID tables keep their IPv4 RoCE GID at different indexes",
    ),
    (
        "rdma.gid_add_failed",
        "nic port gid_index text host",
        "the kernel's RDMA core could not add a RoCE GID to a port's table (cache.c: 'add_roce_gid GID add failed port=1 index=0', 'unable to add gid ... error=-22')",
    ),
    (
        "rdma.gid_table_empty",
        "meaning",
        "show_gids 'n_gids_found=0': no net device with an address is bound to the RoCE port in this namespace",
    ),
    (
        "gpu.hardware_error",
        "what",
        "a GPU driver's report of an uncorrectable hardware error of the GPU (amdgpu's 'uncorrectable hardware error(ERREVENT_ATHUB_INTERRUPT) detected!')",
    ),
    (
        "collective.group_mismatch",
        "text",
        "a collective library's refusal of a member whose device type or group size differs from its group's (TensorFlow's 'is joining a group with incompatible device type')",
    ),
    (
        "collective.timeout",
        "library text",
        "a communication library's own timeout waiting for its peers (DeepEP's 'timeout (dispatch CPU)')",
    ),
    (
        "rdma.no_suitable_gid",
        "text",
        "a verbs user that chooses its GID by type found none on a RoCE port ('No suitable GID found on mlx5_bond_1/')",
    ),
    (
        "sm.failed",
        "what",
        "OpenSM's log: errors (level 0x01 'ERR') and then 'Exiting SM': the subnet manager gave up",
    ),
    ("roce", "", "the link layer is Ethernet (ibv_devinfo or NCCL's NET/IB list)"),
    (
        "pytorch.watchdog_timeout",
        "rank seq op timeout_ms host gpu nic",
        "ProcessGroupNCCL 'Watchdog caught collective operation timeout'",
    ),
    (
        "pytorch.rank_behind",
        "rank last_seq max_seq host gpu nic",
        "a rank whose last enqueued/recorded sequence is below the others'",
    ),
    (
        "pytorch.op_mismatch",
        "seq ops",
        "ranks timing out on one sequence number with different OpType/NumelIn, or c10d's 'Detected mismatch between collectives'",
    ),
    (
        "fr.mismatch",
        "rank error_type detail collective op group state host gpu nic",
        "flight recorder analyzer 'Culprit rank', or dumps disagreeing on a collective",
    ),
    ("fr.missing_ranks", "ranks collective op group", "flight recorder analyzer 'missing ranks'"),
    (
        "jax.missing_tasks",
        "rank barrier text",
        "XLA's coordination service (JAX, TensorFlow): a task named under 'timed out task names' of a barrier other than shutdown, or a start-up barrier that timed out",
    ),
    (
        "gpu.shared_by_ranks",
        "gpu text",
        "nvidia-smi's process table: several compute processes hold one GPU, each also holding a GPU of its own",
    ),
    (
        "gpu.held_by_stopped_process",
        "gpu text",
        "nvidia-smi's process table: a process that `ps` in the same paste shows stopped (state T) holds GPU memory",
    ),
    (
        "horovod.missing_ranks",
        "rank tensors text",
        "Horovod's stall inspector: 'Missing ranks:' (or 'Stalled ranks:'), '[missing ranks: N]' or a rank absent from '[ready ranks: ...]'",
    ),
    (
        "horovod.mismatched_tensors",
        "rank tensors text",
        "Horovod's stall inspector: two ranks each missing a tensor the other is not (both submitted what the other never did)",
    ),
    ("ras.rank_missing", "rank gpu host", "NCCL RAS 'Rank N -- GPU ... on node ...' under INCOMPLETE"),
    ("ras.process_missing", "gpu host", "NCCL RAS 'Process ... on node ...' under INCOMPLETE"),
    ("ras.process_dead", "gpu host", "NCCL RAS 'Process ... on node ...' under DEAD"),
    ("ras.mismatch", "status", "NCCL RAS communicator group with MISMATCH errors"),
    ("ras.error", "text", "NCCL RAS initialization or asynchronous errors"),
    ("rdma.roce", "nic", "ibv_devinfo link_layer: Ethernet"),
    (
        "rdma.infiniband",
        "lid nics host",
        "a verbs test's own end of its connection at a nonzero LID ('local address: LID 0x0013'), an NCCL NET/IB list whose every device is /IB, or a verbs user's 'async event client reregistration': the ports are InfiniBand",
    ),
    (
        "rdma.port_down",
        "nic port state physical_state",
        "ibv_devinfo, ibstat/ibstatus or perftest port state other than Active",
    ),
    ("rdma.rocev2_gid", "nic gid_index sparse", "show_gids RoCE v2 IPv4-mapped GID"),
    ("rdma.per_rail_subnets", "subnets", "show_gids: each NIC's RoCE v2 address in its own /24"),
    ("roce.loss", "nic counters", "hw_counters local_ack_timeout_err/packet_seq_err, or ethtool rx/tx_discards_phy"),
    ("roce.congestion", "nic counters", "hw_counters np_cnp_sent/np_ecn_marked_roce_packets/rp_cnp_handled"),
    (
        "link.flap",
        "nic counters count host how",
        "link_downed/link_error_recovery/link_down_events_phy counters, kernel 'Link down', or a verbs user's 'async event port error'",
    ),
    ("pcie.acs_redirect", "device", "lspci ACSCtl with ReqRedir+ or CmpltRedir+, or setpci ACS Control words with bit 2 or 3"),
    ("pcie.link_degraded", "device what", "lspci LnkSta below LnkCap on a NIC or bridge (not a GPU)"),
    ("pcie.aer_event", "severity device host", "kernel 'AER:' / 'PCIe Bus Error:' lines"),
    ("iommu.fault", "host", "kernel DMAR/AMD-Vi/SMMU fault lines"),
    ("rdma.registration_limit", "device host", "the NIC's fixed tables full: mlx5 CREATE_MKEY or CREATE_QP failing with status limits exceeded, UCX's registration ENOMEM without its memlock hint, libfabric's fi_mr_reg ENOSPC, GPFS's 'Try increasing device MTTs'"),
    ("libfabric.cuda_memory_unavailable", "", "libfabric 'Failed to initialize hmem iface FI_HMEM_CUDA'"),
    ("rdma.device_skipped", "host text", "NCCL WARN 'Unable to open device' on a host where NET/IB then lists others"),
    ("gpu.xid", "xid meaning bus_id host what", "kernel 'NVRM: Xid' with a hardware/driver Xid"),
    (
        "gpu.xid_application",
        "xid reported meaning bus_id host",
        "kernel 'NVRM: Xid' usually caused by the application (13, 31, 43, 45); CUDA error 700 (an illegal memory access) or a kernel's device-side assert where a program or NCCL reports it; ROCm's GPU memory access fault",
    ),
    (
        "gpu.xid_attention",
        "xid meaning bus_id host",
        "kernel 'NVRM: Xid' the GPU handled (recorded row remap, contained error): watch it (NVIDIA's Xid catalog)",
    ),
    ("gpu.ecc", "xid meaning bus_id host what", "Xid 48, 63, 64, 92, 94, 95, 140 (GPU memory errors)"),
    (
        "gpu.lost",
        "how bus_id host",
        "Xid 79/119/120, the driver's 'fallen off the bus', nvidia-smi 'Unable to determine the device handle', NV_ERR_GPU_IS_LOST (status 0x0000000f) or NVML error 15, PCIe Surprise Down",
    ),
    (
        "nccl.ib_hca_matches_nothing",
        "host value text",
        "NCCL_IB_HCA set (by environment, or echoed 'set to') where NET/IB : No device found",
    ),
    (
        "pytorch.store_closed",
        "rank text",
        "a TCPStore connection that broke ('Broken pipe', 'TCPStore server has shut down too early'): the store's process, rank 0, is gone",
    ),
    (
        "gloo.peer_closed",
        "host peer rank text",
        "Gloo's TCP transport 'Connection closed by peer [ADDR]:PORT' (gloo/transport/tcp/pair.cc)",
    ),
    (
        "input.error_lines",
        "file count first",
        "lines of a log that look like errors (WARN, error, failed, timeout, Xid, AER) and that no other fact explains",
    ),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }

    fn step(self, delta: i32) -> Confidence {
        let level = (self as i32 + delta).clamp(0, 2);
        match level {
            0 => Confidence::Low,
            1 => Confidence::Medium,
            _ => Confidence::High,
        }
    }
}

impl std::fmt::Display for Confidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Playbook {
    /// "nccl-hang": what `playbook show` takes.
    pub name: String,
    pub title: String,
    pub description: String,
    #[serde(default, rename = "rule")]
    pub rules: Vec<Rule>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// The cause id diagnoses carry ("roce-gid-index"); stable, for tooling.
    pub id: String,
    pub cause: String,
    pub confidence: Confidence,
    #[serde(default)]
    pub requires: Vec<String>,
    #[serde(default)]
    pub any_of: Vec<String>,
    #[serde(default)]
    pub unless: Vec<String>,
    #[serde(default)]
    pub strengthened_by: Vec<String>,
    #[serde(default)]
    pub weakened_by: Vec<String>,
    /// Fires only when no other rule, fallbacks included, did: the last word before silence.
    #[serde(default)]
    pub catch_all: bool,
    #[serde(default)]
    pub fallback: bool,
    /// What the evidence cannot settle, said in the diagnosis ("why rank 22 issued a different ...").
    #[serde(default)]
    pub undetermined: Option<String>,
    /// What to collect when the evidence cannot settle the cause.
    #[serde(default)]
    pub collect: Vec<String>,
    pub next_steps: Vec<String>,
}

/// A fact pattern: name plus required attribute values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    pub name: String,
    pub attrs: Vec<(String, String)>,
}

impl Pattern {
    /// Parse `name` or `name{key=value,key=value}`.
    pub fn parse(text: &str) -> Result<Pattern, String> {
        let text = text.trim();
        let (name, rest) = match text.find('{') {
            Some(open) => (&text[..open], Some(&text[open + 1..])),
            None => (text, None),
        };
        let valid_name = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
        if !valid_name {
            return Err(format!("bad fact name in pattern {text:?}"));
        }
        let mut attrs = Vec::new();
        if let Some(rest) = rest {
            let inner = rest.strip_suffix('}').ok_or_else(|| format!("pattern {text:?} lacks a closing '}}'"))?;
            for pair in inner.split(',').filter(|p| !p.trim().is_empty()) {
                let (key, value) =
                    pair.split_once('=').ok_or_else(|| format!("pattern {text:?}: {pair:?} is not key=value"))?;
                attrs.push((key.trim().to_string(), value.trim().to_string()));
            }
        }
        Ok(Pattern { name: name.to_string(), attrs })
    }

    pub fn matches(&self, fact: &Fact) -> bool {
        fact.name == self.name
            && self.attrs.iter().all(|(k, v)| fact.get(k).is_some_and(|actual| actual.eq_ignore_ascii_case(v)))
    }
}

/// A playbook that could not be used, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum PlaybookError {
    #[error("failed to read playbook directory {path}: {source}")]
    ReadDir { path: PathBuf, source: std::io::Error },
    #[error("failed to read playbook {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("invalid playbook {name}: {message}")]
    Invalid { name: String, message: String },
}

impl Playbook {
    /// Parse and validate one playbook; `name` (a file name or path) names it in errors.
    pub fn from_toml(text: &str, name: &str) -> Result<Playbook, PlaybookError> {
        let invalid = |message: String| PlaybookError::Invalid { name: name.to_string(), message };
        let playbook: Playbook = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
        for rule in &playbook.rules {
            for pattern in rule.patterns() {
                let parsed = Pattern::parse(pattern).map_err(|m| invalid(format!("rule {}: {m}", rule.id)))?;
                // A misspelt fact would make the rule silently never fire.
                if !FACTS.iter().any(|(name, _, _)| *name == parsed.name) {
                    return Err(invalid(format!(
                        "rule {}: no analyzer produces fact {:?} (`fabricdoctor playbook list` shows the facts)",
                        rule.id, parsed.name
                    )));
                }
            }
            if rule.requires.is_empty() && rule.any_of.is_empty() {
                return Err(invalid(format!("rule {} has neither requires nor any_of: it would always fire", rule.id)));
            }
        }
        Ok(playbook)
    }

    /// The embedded playbooks.
    pub fn embedded() -> Vec<Playbook> {
        // The embedded files are validated by the tests (`embedded_playbooks_parse`); one that failed
        // would be left out rather than take the binary down.
        EMBEDDED.iter().filter_map(|(name, text)| Playbook::from_toml(text, name).ok()).collect()
    }

    /// The embedded playbooks, with those in `dir` (`*.toml`) replacing embedded ones of the same name
    /// and adding new ones: operators extend the rules without rebuilding.
    ///
    /// The embedded playbooks keep their order (a replaced one its place), and added ones follow in
    /// their files' order: triage breaks a tie between diagnoses of equal confidence and evidence
    /// by that order, so the binary ranks as the corpus test measures.
    pub fn load(dir: Option<&Path>) -> Result<Vec<Playbook>, PlaybookError> {
        let mut playbooks = Playbook::embedded();
        if let Some(dir) = dir {
            let entries =
                std::fs::read_dir(dir).map_err(|source| PlaybookError::ReadDir { path: dir.to_path_buf(), source })?;
            let mut paths: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect();
            paths.sort();
            for path in paths {
                let text = std::fs::read_to_string(&path)
                    .map_err(|source| PlaybookError::Read { path: path.clone(), source })?;
                let playbook = Playbook::from_toml(&text, &path.display().to_string())?;
                match playbooks.iter_mut().find(|p| p.name == playbook.name) {
                    Some(embedded) => *embedded = playbook,
                    None => playbooks.push(playbook),
                }
            }
        }
        Ok(playbooks)
    }

    /// The playbook as a runbook an engineer reads: each cause, what shows it, and what to do.
    pub fn render_runbook(&self) -> String {
        let mut out = format!("{} — {}\n\n{}\n", self.name, self.title, self.description.trim());
        for rule in &self.rules {
            out.push_str(&format!("\n## {} ({} confidence)\n{}\n", rule.id, rule.confidence, rule.cause.trim()));
            let list = |label: &str, items: &[String], out: &mut String| {
                if !items.is_empty() {
                    out.push_str(&format!("  {label}: {}\n", items.join(", ")));
                }
            };
            list("needs all of", &rule.requires, &mut out);
            list("needs one of", &rule.any_of, &mut out);
            list("ruled out by", &rule.unless, &mut out);
            list("more likely with", &rule.strengthened_by, &mut out);
            list("less likely with", &rule.weakened_by, &mut out);
            if rule.fallback {
                out.push_str("  only when no other cause is found\n");
            }
            if let Some(undetermined) = &rule.undetermined {
                out.push_str(&format!("  undetermined: {}\n", undetermined.trim()));
            }
            if !rule.collect.is_empty() {
                out.push_str("  collect:\n");
                for item in &rule.collect {
                    out.push_str(&format!("    - {item}\n"));
                }
            }
            out.push_str("  next steps:\n");
            for step in &rule.next_steps {
                out.push_str(&format!("    - {step}\n"));
            }
        }
        out
    }
}

impl Rule {
    fn patterns(&self) -> impl Iterator<Item = &String> {
        self.requires
            .iter()
            .chain(&self.any_of)
            .chain(&self.unless)
            .chain(&self.strengthened_by)
            .chain(&self.weakened_by)
    }

    /// Whether one of this rule's patterns (what it needs, is diagnosed from, is ruled out,
    /// strengthened or weakened by) has `fact`'s name, whatever attributes it asks for.
    pub fn names(&self, fact: &Fact) -> bool {
        self.patterns().filter_map(|text| Pattern::parse(text).ok()).any(|pattern| pattern.name == fact.name)
    }

    /// Whether any of this rule's patterns matches `fact`.
    pub fn heeds(&self, fact: &Fact) -> bool {
        self.patterns().filter_map(|text| Pattern::parse(text).ok()).any(|pattern| pattern.matches(fact))
    }

    /// The facts this rule is diagnosed from (its `any_of`) when it did not fire only for want of
    /// a fact it `requires` (the port's RoCE link layer, say), nothing having ruled it out: faults
    /// read from the inputs that no diagnosis will name. Empty when the rule fired, was ruled out
    /// (`unless`: a single host for a missing RDMA device) or found none of its facts.
    pub fn wanting_context<'a>(&self, facts: &'a [Fact]) -> Vec<&'a Fact> {
        let parse =
            |texts: &[String]| -> Vec<Pattern> { texts.iter().filter_map(|t| Pattern::parse(t).ok()).collect() };
        let present = |pattern: &Pattern| facts.iter().any(|f| pattern.matches(f));
        let ruled_out = parse(&self.unless).iter().any(present);
        let wanting = parse(&self.requires).iter().any(|pattern| !present(pattern));
        if ruled_out || !wanting {
            return Vec::new();
        }
        let any_of = parse(&self.any_of);
        facts.iter().filter(|f| any_of.iter().any(|pattern| pattern.matches(f))).collect()
    }

    /// Evaluate against `facts`: the confidence and the facts that support it, or None.
    pub fn evaluate<'a>(&self, facts: &'a [Fact]) -> Option<(Confidence, Vec<&'a Fact>)> {
        let parse =
            |texts: &[String]| -> Vec<Pattern> { texts.iter().filter_map(|t| Pattern::parse(t).ok()).collect() };
        let matching = |pattern: &Pattern| -> Vec<&'a Fact> { facts.iter().filter(|f| pattern.matches(f)).collect() };
        let mut support: Vec<&'a Fact> = Vec::new();
        for pattern in parse(&self.requires) {
            let found = matching(&pattern);
            if found.is_empty() {
                return None;
            }
            support.extend(found);
        }
        let any_of = parse(&self.any_of);
        if !any_of.is_empty() {
            let found: Vec<&Fact> = any_of.iter().flat_map(&matching).collect();
            if found.is_empty() {
                return None;
            }
            support.extend(found);
        }
        if parse(&self.unless).iter().any(|p| !matching(p).is_empty()) {
            return None;
        }
        let mut delta = 0;
        for pattern in parse(&self.strengthened_by) {
            let found = matching(&pattern);
            if !found.is_empty() {
                delta += 1;
                support.extend(found);
            }
        }
        for pattern in parse(&self.weakened_by) {
            if !matching(&pattern).is_empty() {
                delta -= 1;
            }
        }
        // Each fact once, however many patterns found it: told apart by where it lives, so that a
        // rule supported by thousands of facts (a log of one error per rank and retry) is not
        // compared pairwise.
        let mut seen = std::collections::HashSet::new();
        support.retain(|f| seen.insert(std::ptr::from_ref::<Fact>(f)));
        Some((self.confidence.step(delta), support))
    }
}

/// Fill `{key}` placeholders from the facts' attributes (the first fact that has the key with a
/// value); an unknown key stays visible as `<key>` so the operator sees what to substitute in a command.
pub fn fill_placeholders(template: &str, facts: &[&Fact]) -> String {
    fill(template, facts, |key| format!("<{key}>"))
}

/// Fill placeholders in prose (a cause): an unknown key reads "unknown".
pub fn fill_prose(template: &str, facts: &[&Fact]) -> String {
    fill(template, facts, |_| "unknown".to_string())
}

/// The distinct values a `{key*}` placeholder lists before it counts the rest.
const MAX_LISTED_VALUES: usize = 64;

/// The values the facts give a key, in order. A reader that could not tell a value leaves it empty:
/// that reads as unknown too, never as a blank in a sentence or a command ("grep -i ").
fn present_values<'a>(facts: &'a [&'a Fact], key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    facts.iter().filter_map(move |f| f.get(key)).filter(|v| !v.trim().is_empty())
}

fn fill(template: &str, facts: &[&Fact], unknown: impl Fn(&str) -> String) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close)
                if after[..close].chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '*') && close > 0 =>
            {
                let key = &after[..close];
                if let Some(key) = key.strip_suffix('*') {
                    // {key*}: every distinct value, in the facts' order ("22, 110"); past 64 of them
                    // (a hostile paste of 100,000 distinct failures) a count of the rest.
                    let mut values: Vec<&str> = Vec::new();
                    let mut seen = std::collections::HashSet::new();
                    for value in present_values(facts, key) {
                        if seen.insert(value) && seen.len() <= MAX_LISTED_VALUES {
                            values.push(value);
                        }
                    }
                    out.push_str(if values.is_empty() { "unknown" } else { "" });
                    out.push_str(&values.join(", "));
                    if seen.len() > values.len() {
                        out.push_str(&format!(" and {} more", seen.len() - values.len()));
                    }
                } else {
                    match present_values(facts, key).next() {
                        Some(value) => out.push_str(value),
                        None => out.push_str(&unknown(key)),
                    }
                }
                rest = &after[close + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_playbooks_parse() {
        for (name, text) in EMBEDDED {
            let playbook = Playbook::from_toml(text, name).unwrap_or_else(|e| panic!("{e}"));
            assert!(!playbook.rules.is_empty(), "{name} has no rules");
        }
        let ids: Vec<String> = Playbook::embedded().iter().flat_map(|p| p.rules.iter().map(|r| r.id.clone())).collect();
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(ids.len(), unique.len(), "rule ids must be unique across playbooks: {ids:?}");
    }

    /// Next steps name fabricdoctor's own commands: the check ids they select must exist.
    #[test]
    fn next_steps_name_real_check_ids() {
        let ids: Vec<&str> = fabricdoctor_checks::registry().iter().map(|c| c.id()).collect();
        for playbook in Playbook::embedded() {
            for rule in &playbook.rules {
                for step in &rule.next_steps {
                    for selected in step.split("--only ").skip(1) {
                        let prefix = selected.split(|c: char| c.is_whitespace() || c == '`').next().unwrap_or("");
                        assert!(
                            ids.iter().any(|id| id.starts_with(prefix)),
                            "{}: --only {prefix} selects no check",
                            rule.id
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn patterns_match_name_and_attributes() {
        let fact = Fact::new("nccl.wc_error").attr("status", "12").attr("host", "node1");
        assert!(Pattern::parse("nccl.wc_error").map(|p| p.matches(&fact)).unwrap_or(false));
        assert!(Pattern::parse("nccl.wc_error{status=12}").map(|p| p.matches(&fact)).unwrap_or(false));
        assert!(!Pattern::parse("nccl.wc_error{status=4}").map(|p| p.matches(&fact)).unwrap_or(true));
        assert!(Pattern::parse("bad name{").is_err());
        assert!(Pattern::parse("x{a}").is_err());
    }

    #[test]
    fn confidence_steps_and_clamps() {
        let rule: Rule = toml::from_str(
            r#"id = "r"
cause = "c"
confidence = "low"
any_of = ["a", "b"]
strengthened_by = ["a", "b"]
weakened_by = ["c"]
next_steps = ["ssh {host}"]"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let a = Fact::new("a").attr("host", "n1");
        let b = Fact::new("b");
        assert_eq!(rule.evaluate(std::slice::from_ref(&a)).map(|r| r.0), Some(Confidence::Medium));
        assert_eq!(rule.evaluate(&[a.clone(), b.clone()]).map(|r| r.0), Some(Confidence::High));
        assert_eq!(rule.evaluate(&[a.clone(), Fact::new("c")]).map(|r| r.0), Some(Confidence::Low));
        assert!(rule.evaluate(&[Fact::new("c")]).is_none());
        assert_eq!(fill_placeholders("ssh {host} {nic} {x", &[&a]), "ssh n1 <nic> {x");
        assert_eq!(fill_placeholders("{host*} {rank*}", &[&a, &Fact::new("a").attr("host", "n2")]), "n1, n2 unknown");
        // A reader that could not tell a value leaves it empty: unknown, as if absent.
        let blank = Fact::new("a").attr("device", "").attr("host", "n3");
        assert_eq!(fill_placeholders("grep -i {device} on {host}", &[&blank]), "grep -i <device> on n3");
        assert_eq!(fill_prose("The NIC {device} failed", &[&blank]), "The NIC unknown failed");
        assert_eq!(fill_placeholders("{device*}", &[&blank, &a]), "unknown");
        let many: Vec<Fact> = (0..100).map(|n| Fact::new("a").attr("gpu", n)).collect();
        let listed = fill_prose("GPUs {gpu*}", &many.iter().collect::<Vec<_>>());
        assert!(listed.starts_with("GPUs 0, 1, 2") && listed.ends_with(", 63 and 36 more"), "{listed}");
    }

    #[test]
    fn a_misspelt_fact_is_rejected() {
        let text = "name = \"p\"\ntitle = \"t\"\ndescription = \"d\"\n[[rule]]\nid = \"r\"\ncause = \"c\"\nconfidence = \"low\"\nany_of = [\"nccl.wc_eror\"]\nnext_steps = []\n";
        let error = Playbook::from_toml(text, "p.toml").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains("nccl.wc_eror") && error.contains("p.toml"), "{error}");
    }

    #[test]
    fn a_rule_that_always_fires_is_rejected() {
        let text = "name = \"p\"\ntitle = \"t\"\ndescription = \"d\"\n[[rule]]\nid = \"r\"\ncause = \"c\"\nconfidence = \"low\"\nnext_steps = []\n";
        assert!(matches!(Playbook::from_toml(text, "p.toml"), Err(PlaybookError::Invalid { .. })));
    }

    /// Triage breaks ties by playbook order, so the binary (which loads) and the corpus test (which
    /// takes the embedded playbooks) must see one order: a replaced playbook keeps its place and an
    /// added one comes after.
    #[test]
    fn loaded_playbooks_keep_the_embedded_order() {
        let names = |playbooks: &[Playbook]| playbooks.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
        let embedded = names(&Playbook::embedded());
        let loaded = Playbook::load(None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(names(&loaded), embedded);
        let dir = std::env::temp_dir().join(format!("fabricdoctor-playbook-order-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let site = "name = \"a-site\"\ntitle = \"t\"\ndescription = \"d\"\n[[rule]]\nid = \"site-rule\"\ncause = \"c\"\nconfidence = \"low\"\nany_of = [\"nccl.wc_error\"]\nnext_steps = []\n";
        std::fs::write(dir.join("a-site.toml"), site).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.join("nccl-slow.toml"), EMBEDDED[1].1).unwrap_or_else(|e| panic!("{e}"));
        let loaded = Playbook::load(Some(&dir));
        std::fs::remove_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let mut expected = embedded.clone();
        expected.push("a-site".to_string());
        assert_eq!(names(&loaded.unwrap_or_else(|e| panic!("{e}"))), expected);
    }
}
