//! Host settings that break RDMA and NCCL: locked-memory limit, /dev/shm size, the GPUDirect
//! peer-memory module, and IOMMU translation.

use crate::{human_bytes, unreadable, Check, Finding, Inputs, Policy, Verdict};

/// 1 PiB: more memory than any node has, so a locked-memory limit at or above it never stops a
/// registration.
const EFFECTIVELY_UNLIMITED_BYTES: u64 = 1 << 50;

#[derive(Debug)]
pub struct Memlock;

impl Check for Memlock {
    fn id(&self) -> &'static str {
        "host.memlock"
    }
    fn doc_short(&self) -> &'static str {
        "RLIMIT_MEMLOCK below unlimited (RDMA memory registration fails)"
    }
    fn doc_long(&self) -> &'static str {
        "Reads the locked-memory limit (proc/self/limits, proc(5)). ibv_reg_mr pins host memory and is \
         charged against RLIMIT_MEMLOCK; with a finite limit (often 64 KiB or 8 MiB) registration of NCCL \
         and MPI buffers fails with ENOMEM/'Cannot allocate memory'. Fail below host.memlock_min_bytes \
         (default: unlimited required, as rdma-core and NCCL document). Fix: `ulimit -l unlimited`, \
         /etc/security/limits.conf memlock, systemd LimitMEMLOCK=infinity, docker --ulimit memlock=-1. \
         The limit is that of the fabricdoctor process: run it the way jobs run."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, policy: &Policy) -> Vec<Finding> {
        let limit = match &inputs.node.host.memlock {
            Ok(limit) => limit,
            Err(error) => return vec![unreadable(self.id(), "node", error)],
        };
        let show = |b: Option<u64>| match b {
            None => "unlimited".into(),
            Some(bytes) if bytes >= EFFECTIVELY_UNLIMITED_BYTES => format!("{bytes} bytes (effectively unlimited)"),
            Some(bytes) => human_bytes(bytes),
        };
        let expected = policy
            .host
            .memlock_min_bytes
            .map(|m| format!(">= {}", human_bytes(m)))
            .unwrap_or_else(|| "unlimited".into());
        let ok = memlock_sufficient(limit.soft_bytes, policy);
        let finding = if ok {
            Finding::new(self.id(), Verdict::Pass, "node", format!("locked-memory limit {}", show(limit.soft_bytes)))
        } else {
            Finding::new(
                self.id(),
                Verdict::Fail,
                "node",
                format!(
                    "locked-memory limit {}: RDMA memory registration of large buffers fails; set it to unlimited",
                    show(limit.soft_bytes)
                ),
            )
        };
        vec![finding
            .evidence(format!(
                "proc/self/limits: Max locked memory soft {} hard {}",
                show(limit.soft_bytes),
                show(limit.hard_bytes)
            ))
            .expected(expected)
            .observed(show(limit.soft_bytes))]
    }
}

#[derive(Debug)]
pub struct SharedMemory;

impl Check for SharedMemory {
    fn id(&self) -> &'static str {
        "host.devshm"
    }
    fn doc_short(&self) -> &'static str {
        "/dev/shm missing or smaller than policy (NCCL SHM transport fails)"
    }
    fn doc_long(&self) -> &'static str {
        "Reads the /dev/shm mount (proc/self/mountinfo, or proc/mounts in a tree that holds only that) and its size (statvfs live; the size= option or \
         tmpfs's half-of-RAM default in a snapshot). NCCL's SHM transport and PyTorch put segments \
         there; Docker's 64 MiB default makes NCCL fail with 'posix_fallocate failed' or bus errors \
         (NVIDIA/nccl#290). Fail below host.devshm_min_bytes (default 1 GiB) or when not mounted. Fix: \
         docker --shm-size=... or --ipc=host; Kubernetes: an emptyDir with medium Memory on /dev/shm."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, policy: &Policy) -> Vec<Finding> {
        let memory = match &inputs.node.host.shared_memory {
            Ok(memory) => memory,
            Err(error) => return vec![unreadable(self.id(), "/dev/shm", error)],
        };
        let minimum = policy.host.devshm_min_bytes;
        let expected = format!(">= {}", human_bytes(minimum));
        if !memory.mounted {
            return vec![
                Finding::new(self.id(), Verdict::Fail, "/dev/shm", "nothing is mounted on /dev/shm").expected(expected)
            ];
        }
        let Some(size) = memory.size_bytes else {
            return vec![Finding::new(
                self.id(),
                Verdict::Skip,
                "/dev/shm",
                "size of /dev/shm could not be determined",
            )
            .evidence(format!("filesystem {}", memory.fs_type.as_deref().unwrap_or("unknown")))];
        };
        let source = memory.size_source.as_deref().unwrap_or("unknown");
        let finding = if size >= minimum {
            Finding::new(self.id(), Verdict::Pass, "/dev/shm", format!("{} available", human_bytes(size)))
        } else {
            Finding::new(
                self.id(),
                Verdict::Fail,
                "/dev/shm",
                format!("only {}: NCCL's shared-memory transport fails (posix_fallocate); raise it (docker --shm-size, --ipc=host)", human_bytes(size)),
            )
        };
        vec![finding
            .evidence(format!(
                "{} of {} bytes (from {source})",
                memory.fs_type.as_deref().unwrap_or("filesystem"),
                size
            ))
            .expected(expected)
            .observed(human_bytes(size))]
    }
}

#[derive(Debug)]
pub struct PeerMemory;

const PEER_MEMORY_MODULES: [&str; 2] = ["nvidia_peermem", "nv_peer_mem"];

impl Check for PeerMemory {
    fn id(&self) -> &'static str {
        "host.peermem"
    }
    fn doc_short(&self) -> &'static str {
        "GPUDirect RDMA peer-memory module (nvidia_peermem) not loaded on a GPU+RDMA node"
    }
    fn doc_long(&self) -> &'static str {
        "On a node with NVIDIA GPUs and RDMA devices, looks for nvidia_peermem (or the older \
         nv_peer_mem) in proc/modules. Without it the RDMA stack cannot register GPU memory through \
         peer memory; NCCL then uses DMA-BUF when kernel (>= 5.12), driver and NIC support it, or \
         silently stages through host memory (NCCL INFO shows no GDRDMA): warn. Fix: `modprobe \
         nvidia_peermem` (and add it to /etc/modules-load.d)."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        let nvidia_gpus = inputs.node.gpus().iter().filter(|g| g.vendor == 0x10de).count();
        if nvidia_gpus == 0 {
            return vec![Finding::new(self.id(), Verdict::Skip, "node", "no NVIDIA GPU on this node")];
        }
        if inputs.node.rdma_devices().is_empty() {
            return vec![Finding::new(self.id(), Verdict::Skip, "node", "no RDMA device on this node")];
        }
        let modules = match &inputs.node.host.modules {
            Ok(modules) => modules,
            Err(error) => return vec![unreadable(self.id(), "node", error)],
        };
        let loaded: Vec<&str> =
            PEER_MEMORY_MODULES.iter().copied().filter(|m| modules.iter().any(|x| x == m)).collect();
        let finding = if loaded.is_empty() {
            Finding::new(
                self.id(),
                Verdict::Warn,
                "node",
                "nvidia_peermem not loaded: GPUDirect RDMA needs it (or DMA-BUF support); otherwise NCCL stages through host memory",
            )
            .observed("not loaded")
        } else {
            Finding::new(self.id(), Verdict::Pass, "node", format!("{} loaded", loaded.join(", ")))
                .observed(loaded.join(", "))
        };
        vec![finding
            .evidence(format!(
                "{nvidia_gpus} NVIDIA GPUs, {} RDMA devices; proc/modules",
                inputs.node.rdma_devices().len()
            ))
            .expected("nvidia_peermem")]
    }
}

#[derive(Debug)]
pub struct Iommu;

impl Check for Iommu {
    fn id(&self) -> &'static str {
        "host.iommu"
    }
    fn doc_short(&self) -> &'static str {
        "IOMMU translating DMA (not passthrough) on a GPU/RDMA node"
    }
    fn doc_long(&self) -> &'static str {
        "Reads the IOMMU units (sys/class/iommu) and the default domain type of every IOMMU group \
         (sys/kernel/iommu_groups/*/type, Documentation/ABI/testing/sysfs-kernel-iommu_groups). \
         'identity' is passthrough: pass. 'DMA'/'DMA-FQ' translate every DMA: GPUDirect peer-to-peer \
         traffic goes through the IOMMU, which costs bandwidth or breaks it (NCCL's documentation asks \
         for iommu=pt or the IOMMU off): warn. The kernel command line is shown as evidence."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        let iommu = match &inputs.node.host.iommu {
            Ok(iommu) => iommu,
            Err(error) => return vec![unreadable(self.id(), "node", error)],
        };
        let cmdline: Vec<String> = inputs
            .node
            .host
            .cmdline
            .as_ref()
            .map(|c| {
                c.split_whitespace()
                    .filter(|p| p.starts_with("iommu") || p.contains("_iommu") || p.starts_with("pcie_acs_override"))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let evidence = format!(
            "units: [{}], {} groups, default domain types: [{}], cmdline: [{}]",
            iommu.units.join(", "),
            iommu.group_count,
            iommu.default_domain_types.join(", "),
            cmdline.join(" ")
        );
        let translated: Vec<&str> =
            iommu.default_domain_types.iter().map(String::as_str).filter(|t| t.starts_with("DMA")).collect();
        let finding = if iommu.units.is_empty() && iommu.group_count == 0 {
            Finding::new(self.id(), Verdict::Pass, "node", "no IOMMU active: DMA is not translated")
        } else if !translated.is_empty() {
            Finding::new(
                self.id(),
                Verdict::Warn,
                "node",
                format!("IOMMU translates DMA (domain type {}): GPUDirect peer traffic pays for translation or fails; boot with iommu=pt", translated.join("/")),
            )
        } else if iommu.default_domain_types.is_empty() {
            Finding::new(
                self.id(),
                Verdict::Skip,
                "node",
                "IOMMU groups exist but their domain type is not reported (kernel < 5.11)",
            )
        } else {
            Finding::new(self.id(), Verdict::Pass, "node", "IOMMU in passthrough (identity) mode")
        };
        vec![finding.evidence(evidence).expected("passthrough or off")]
    }
}

/// Whether a locked-memory limit (`None`: unlimited) lets RDMA register what NCCL and MPI need,
/// under `host.memlock_min_bytes` (unlimited required when unset). One judgement for `check`
/// (proc/self/limits) and for limits that triage reads from pasted `ulimit` output.
pub fn memlock_sufficient(soft_bytes: Option<u64>, policy: &Policy) -> bool {
    match (soft_bytes, policy.host.memlock_min_bytes) {
        (None, _) => true,
        // A limit beyond any node's memory cannot stop a registration: captures taken by other
        // tools (or containers that map RLIM_INFINITY to 2^64-1) hold such numbers instead of
        // the kernel's "unlimited".
        (Some(soft), _) if soft >= EFFECTIVELY_UNLIMITED_BYTES => true,
        (Some(soft), Some(minimum)) => soft >= minimum,
        (Some(_), None) => false,
    }
}
