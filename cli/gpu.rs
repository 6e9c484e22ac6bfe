//! `--gpu N` of `perf client/server` and the collectives: opening the GPU once per run and the
//! report's account of where the buffers live.

use std::sync::Arc;

use anyhow::Context;
use fabricdoctor_perf::gpu::Gpu;
use fabricdoctor_report::perf::GpuBuffers;

/// How `--gpu` buffers reach the wire over TCP: sockets only read host memory.
pub const STAGED_PINNED_HOST: &str = "staged-pinned-host";

/// Open `--gpu N` once for the whole run; a node without the NVIDIA driver is an error naming the flag.
pub fn open_gpu(gpu: Option<u32>) -> anyhow::Result<Option<Arc<Gpu>>> {
    gpu.map(|ordinal| Gpu::open(ordinal).with_context(|| format!("--gpu {ordinal}"))).transpose()
}

/// The report's account of this side's GPU buffers.
pub fn gpu_buffers(gpu: &Option<Arc<Gpu>>, memory_path: &str) -> Option<GpuBuffers> {
    gpu.as_ref().map(|gpu| GpuBuffers {
        gpu: gpu.ordinal,
        name: gpu.name.clone(),
        pci_bus_id: gpu.pci_bus_id.clone(),
        memory_path: memory_path.to_string(),
    })
}
