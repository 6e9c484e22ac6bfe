//! GPU memory for the generator and for `check --load`, through the CUDA driver API bound at run time
//! from libcuda.so.1 (prototypes from `cuda.h`, CUDA Driver API reference, CUDA 12/13). Only what
//! fabricdoctor needs: device buffers, pinned host buffers, synchronous and stream copies, and a
//! dma-buf handle of a device buffer for GPUDirect RDMA (`cuMemGetHandleForAddressRange`).
#![expect(unsafe_code, reason = "the CUDA driver API is a C library reached through dlopen")]

use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void, CStr, CString};
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use fabricdoctor_probes::dynlib::Library;

type CuResult = c_int;
type CuDevice = c_int;
type CuContext = *mut c_void;
type CuStream = *mut c_void;
type DevicePointer = c_ulonglong;

const CUDA_SUCCESS: CuResult = 0;
/// cuda.h `CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED`.
const ATTRIBUTE_DMA_BUF_SUPPORTED: c_int = 124;
/// cuda.h `CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD`.
const RANGE_HANDLE_DMA_BUF_FD: c_int = 1;
/// cuda.h `CU_MEMHOSTALLOC_PORTABLE`: pinned for every context, not only the allocating one.
const HOST_ALLOC_PORTABLE: c_uint = 1;
/// cuda.h `CU_STREAM_NON_BLOCKING`.
const STREAM_NON_BLOCKING: c_uint = 1;

/// What went wrong with the GPU or the CUDA driver, naming the call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GpuError {
    #[error("no NVIDIA driver: {0}")]
    NoDriver(String),
    #[error("GPU {ordinal} does not exist: the CUDA driver sees {count} GPU(s)")]
    NoSuchGpu { ordinal: u32, count: u32 },
    #[error("{call} failed: {message} (CUDA error {code})")]
    Call { call: &'static str, code: i32, message: String },
}

struct Api {
    init: unsafe extern "C" fn(c_uint) -> CuResult,
    error_string: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    device_count: unsafe extern "C" fn(*mut c_int) -> CuResult,
    device_get: unsafe extern "C" fn(*mut CuDevice, c_int) -> CuResult,
    device_by_pci_bus_id: unsafe extern "C" fn(*mut CuDevice, *const c_char) -> CuResult,
    device_name: unsafe extern "C" fn(*mut c_char, c_int, CuDevice) -> CuResult,
    device_pci_bus_id: unsafe extern "C" fn(*mut c_char, c_int, CuDevice) -> CuResult,
    device_attribute: unsafe extern "C" fn(*mut c_int, c_int, CuDevice) -> CuResult,
    primary_context_retain: unsafe extern "C" fn(*mut CuContext, CuDevice) -> CuResult,
    primary_context_release: unsafe extern "C" fn(CuDevice) -> CuResult,
    context_set_current: unsafe extern "C" fn(CuContext) -> CuResult,
    memory_alloc: unsafe extern "C" fn(*mut DevicePointer, usize) -> CuResult,
    memory_free: unsafe extern "C" fn(DevicePointer) -> CuResult,
    host_alloc: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> CuResult,
    host_free: unsafe extern "C" fn(*mut c_void) -> CuResult,
    copy_host_to_device: unsafe extern "C" fn(DevicePointer, *const c_void, usize) -> CuResult,
    copy_device_to_host: unsafe extern "C" fn(*mut c_void, DevicePointer, usize) -> CuResult,
    copy_host_to_device_async: unsafe extern "C" fn(DevicePointer, *const c_void, usize, CuStream) -> CuResult,
    copy_device_to_host_async: unsafe extern "C" fn(*mut c_void, DevicePointer, usize, CuStream) -> CuResult,
    stream_create: unsafe extern "C" fn(*mut CuStream, c_uint) -> CuResult,
    stream_synchronize: unsafe extern "C" fn(CuStream) -> CuResult,
    stream_destroy: unsafe extern "C" fn(CuStream) -> CuResult,
    /// CUDA 11.7 and newer drivers only.
    range_handle: Option<unsafe extern "C" fn(*mut c_void, DevicePointer, usize, c_int, c_ulonglong) -> CuResult>,
}

impl Api {
    fn bind(library: &Library) -> Result<Api, fabricdoctor_probes::dynlib::LoadError> {
        // SAFETY: each type is the cuda.h prototype of the symbol named beside it (the _v2 entry
        // points are what cuda.h's macros map the plain names to on 64-bit builds).
        unsafe {
            Ok(Api {
                init: library.function(c"cuInit")?,
                error_string: library.function(c"cuGetErrorString")?,
                device_count: library.function(c"cuDeviceGetCount")?,
                device_get: library.function(c"cuDeviceGet")?,
                device_by_pci_bus_id: library.function(c"cuDeviceGetByPCIBusId")?,
                device_name: library.function(c"cuDeviceGetName")?,
                device_pci_bus_id: library.function(c"cuDeviceGetPCIBusId")?,
                device_attribute: library.function(c"cuDeviceGetAttribute")?,
                primary_context_retain: library.function(c"cuDevicePrimaryCtxRetain")?,
                primary_context_release: library.function(c"cuDevicePrimaryCtxRelease_v2")?,
                context_set_current: library.function(c"cuCtxSetCurrent")?,
                memory_alloc: library.function(c"cuMemAlloc_v2")?,
                memory_free: library.function(c"cuMemFree_v2")?,
                host_alloc: library.function(c"cuMemHostAlloc")?,
                host_free: library.function(c"cuMemFreeHost")?,
                copy_host_to_device: library.function(c"cuMemcpyHtoD_v2")?,
                copy_device_to_host: library.function(c"cuMemcpyDtoH_v2")?,
                copy_host_to_device_async: library.function(c"cuMemcpyHtoDAsync_v2")?,
                copy_device_to_host_async: library.function(c"cuMemcpyDtoHAsync_v2")?,
                stream_create: library.function(c"cuStreamCreate")?,
                stream_synchronize: library.function(c"cuStreamSynchronize")?,
                stream_destroy: library.function(c"cuStreamDestroy_v2")?,
                range_handle: library.function(c"cuMemGetHandleForAddressRange").ok(),
            })
        }
    }

    fn check(&self, call: &'static str, code: CuResult) -> Result<(), GpuError> {
        if code == CUDA_SUCCESS {
            return Ok(());
        }
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: text is a valid out-pointer; the string returned is static.
        let known = unsafe { (self.error_string)(code, &mut text) } == CUDA_SUCCESS && !text.is_null();
        let message = if known {
            // SAFETY: non-null, NUL-terminated static string (above).
            unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
        } else {
            "unknown error".into()
        };
        Err(GpuError::Call { call, code, message })
    }
}

/// The CUDA driver, bound and initialised once per process.
fn driver() -> Result<&'static Api, GpuError> {
    static DRIVER: OnceLock<Result<Api, GpuError>> = OnceLock::new();
    DRIVER
        .get_or_init(|| {
            let library =
                Library::open(&["libcuda.so.1", "libcuda.so"]).map_err(|e| GpuError::NoDriver(e.to_string()))?;
            let api = Api::bind(&library).map_err(|e| GpuError::NoDriver(e.to_string()))?;
            // SAFETY: cuInit takes flags that must be 0.
            let code = unsafe { (api.init)(0) };
            // CUDA_ERROR_NO_DEVICE (100) and a missing kernel module (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
            // CUDA_ERROR_UNKNOWN at init) both mean there is no GPU to use.
            api.check("cuInit", code).map_err(|e| GpuError::NoDriver(e.to_string()))?;
            Ok(api)
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// One GPU, with its primary context retained (the context CUDA runtime programs share).
#[derive(Debug)]
pub struct Gpu {
    pub ordinal: u32,
    pub name: String,
    /// "0000:00:06.0", lower case like sysfs.
    pub pci_bus_id: String,
    pub dmabuf_supported: bool,
    device: CuDevice,
    context: ContextHandle,
}

#[derive(Debug)]
struct ContextHandle(CuContext);
// SAFETY: a CUDA context may be made current on any thread (cuCtxSetCurrent); the handle is a token.
unsafe impl Send for ContextHandle {}
// SAFETY: as above; the handle is never mutated.
unsafe impl Sync for ContextHandle {}

impl Gpu {
    /// GPU `ordinal` in the CUDA driver's numbering (CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER apply).
    pub fn open(ordinal: u32) -> Result<Arc<Gpu>, GpuError> {
        let api = driver()?;
        let mut count: c_int = 0;
        // SAFETY: valid out-pointer.
        api.check("cuDeviceGetCount", unsafe { (api.device_count)(&mut count) })?;
        if ordinal >= count.max(0) as u32 {
            return Err(GpuError::NoSuchGpu { ordinal, count: count.max(0) as u32 });
        }
        let mut device: CuDevice = 0;
        // SAFETY: valid out-pointer; ordinal is below the count.
        api.check("cuDeviceGet", unsafe { (api.device_get)(&mut device, ordinal as c_int) })?;
        Gpu::with_device(api, ordinal, device)
    }

    /// The GPU at a PCI address ("0000:3b:00.0"), for `check --load`.
    pub fn open_at(pci_bus_id: &str) -> Result<Arc<Gpu>, GpuError> {
        let api = driver()?;
        let address = CString::new(pci_bus_id).map_err(|_| GpuError::Call {
            call: "cuDeviceGetByPCIBusId",
            code: 1,
            message: "address contains NUL".into(),
        })?;
        let mut device: CuDevice = 0;
        // SAFETY: valid out-pointer and NUL-terminated address.
        api.check("cuDeviceGetByPCIBusId", unsafe { (api.device_by_pci_bus_id)(&mut device, address.as_ptr()) })?;
        // A CUdevice handle is the device's ordinal (cuda.h: "typedef int CUdevice"; cuDeviceGet(&d, i) gives i).
        Gpu::with_device(api, device as u32, device)
    }

    fn with_device(api: &'static Api, ordinal: u32, device: CuDevice) -> Result<Arc<Gpu>, GpuError> {
        let mut name = [0 as c_char; 256];
        // SAFETY: the buffer is writable for its stated length.
        api.check("cuDeviceGetName", unsafe { (api.device_name)(name.as_mut_ptr(), name.len() as c_int, device) })?;
        let mut bus_id = [0 as c_char; 64];
        // SAFETY: as above.
        api.check("cuDeviceGetPCIBusId", unsafe {
            (api.device_pci_bus_id)(bus_id.as_mut_ptr(), bus_id.len() as c_int, device)
        })?;
        let mut dmabuf: c_int = 0;
        // SAFETY: valid out-pointer; an unknown attribute on an old driver is an error, read as "no".
        let dmabuf_code = unsafe { (api.device_attribute)(&mut dmabuf, ATTRIBUTE_DMA_BUF_SUPPORTED, device) };
        let mut context: CuContext = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        api.check("cuDevicePrimaryCtxRetain", unsafe { (api.primary_context_retain)(&mut context, device) })?;
        Ok(Arc::new(Gpu {
            ordinal,
            name: text(&name),
            pci_bus_id: text(&bus_id).to_ascii_lowercase(),
            dmabuf_supported: dmabuf_code == CUDA_SUCCESS && dmabuf == 1 && api.range_handle.is_some(),
            device,
            context: ContextHandle(context),
        }))
    }

    /// Make this GPU's context current on the calling thread (each thread has its own current context).
    fn enter(&self) -> Result<&'static Api, GpuError> {
        let api = driver()?;
        // SAFETY: the context was retained by this Gpu and is released only on drop.
        api.check("cuCtxSetCurrent", unsafe { (api.context_set_current)(self.context.0) })?;
        Ok(api)
    }

    /// `size` bytes of GPU memory, rounded up to a whole page (dma-buf export needs page granularity).
    pub fn alloc(self: &Arc<Self>, size: usize) -> Result<DeviceBuffer, GpuError> {
        let api = self.enter()?;
        let rounded = size.div_ceil(page_size()) * page_size();
        let mut pointer: DevicePointer = 0;
        // SAFETY: valid out-pointer.
        api.check("cuMemAlloc", unsafe { (api.memory_alloc)(&mut pointer, rounded.max(page_size())) })?;
        Ok(DeviceBuffer { gpu: Arc::clone(self), pointer, size, allocated: rounded.max(page_size()) })
    }

    /// `size` bytes of page-locked host memory the GPU's copy engines reach directly.
    pub fn alloc_pinned(self: &Arc<Self>, size: usize) -> Result<PinnedBuffer, GpuError> {
        let api = self.enter()?;
        let mut pointer: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        api.check("cuMemHostAlloc", unsafe { (api.host_alloc)(&mut pointer, size.max(1), HOST_ALLOC_PORTABLE) })?;
        // SAFETY: CUDA returned size bytes of writable memory; zero them so they are initialised.
        unsafe { std::ptr::write_bytes(pointer.cast::<u8>(), 0, size) };
        Ok(PinnedBuffer { gpu: Arc::clone(self), pointer: pointer.cast(), size })
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        if let Ok(api) = driver() {
            // SAFETY: releases the reference taken in with_device.
            unsafe { (api.primary_context_release)(self.device) };
        }
    }
}

/// Device memory; freed on drop.
#[derive(Debug)]
pub struct DeviceBuffer {
    gpu: Arc<Gpu>,
    pointer: DevicePointer,
    size: usize,
    allocated: usize,
}

impl DeviceBuffer {
    pub fn len(&self) -> usize {
        self.size
    }

    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// The device address (for registration with the NIC).
    pub fn device_address(&self) -> u64 {
        self.pointer
    }

    /// Copy `source` to the start of the buffer (synchronous: returns when the GPU has the data).
    pub fn copy_from_host(&mut self, source: &[u8]) -> Result<(), GpuError> {
        let api = self.gpu.enter()?;
        let length = source.len().min(self.size);
        // SAFETY: source is readable for length bytes; the device buffer holds at least length bytes.
        api.check("cuMemcpyHtoD", unsafe { (api.copy_host_to_device)(self.pointer, source.as_ptr().cast(), length) })
    }

    /// Copy the start of the buffer into `target` (synchronous).
    pub fn copy_to_host(&self, target: &mut [u8]) -> Result<(), GpuError> {
        let api = self.gpu.enter()?;
        let length = target.len().min(self.size);
        // SAFETY: target is writable for length bytes; the device buffer holds at least length bytes.
        api.check("cuMemcpyDtoH", unsafe {
            (api.copy_device_to_host)(target.as_mut_ptr().cast(), self.pointer, length)
        })
    }

    /// A dma-buf file descriptor for the whole buffer, for ibv_reg_dmabuf_mr (GPUDirect RDMA without
    /// nvidia-peermem; Linux 5.12+, CUDA 11.7+, open kernel modules).
    pub fn dmabuf(&self) -> Result<OwnedFd, GpuError> {
        let api = self.gpu.enter()?;
        let Some(range_handle) = api.range_handle else {
            return Err(GpuError::Call {
                call: "cuMemGetHandleForAddressRange",
                code: 0,
                message: "not in this CUDA driver".into(),
            });
        };
        let mut fd: c_int = -1;
        // SAFETY: fd is a valid out-pointer for an int; the range is the whole page-rounded allocation.
        api.check("cuMemGetHandleForAddressRange", unsafe {
            range_handle((&mut fd as *mut c_int).cast(), self.pointer, self.allocated, RANGE_HANDLE_DMA_BUF_FD, 0)
        })?;
        // SAFETY: CUDA returned a new file descriptor that this process now owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if let Ok(api) = self.gpu.enter() {
            // SAFETY: pointer came from cuMemAlloc and is freed once.
            unsafe { (api.memory_free)(self.pointer) };
        }
    }
}

/// Pinned host memory; freed on drop.
#[derive(Debug)]
pub struct PinnedBuffer {
    gpu: Arc<Gpu>,
    pointer: *mut u8,
    size: usize,
}

// SAFETY: the buffer is plain memory owned by this value; CUDA allows freeing it from any thread.
unsafe impl Send for PinnedBuffer {}

impl PinnedBuffer {
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: pointer is valid for size initialised bytes (zeroed at allocation) for self's life.
        unsafe { std::slice::from_raw_parts(self.pointer, self.size) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.pointer, self.size) }
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        if let Ok(api) = self.gpu.enter() {
            // SAFETY: pointer came from cuMemHostAlloc and is freed once.
            unsafe { (api.host_free)(self.pointer.cast()) };
        }
    }
}

/// Bandwidth of a link load: bytes each way while both directions ran at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadFigures {
    pub host_to_device_gbps: f64,
    pub device_to_host_gbps: f64,
    pub seconds: f64,
}

/// Keep the GPU's PCIe link busy in both directions (pinned host <-> device copies on two streams)
/// for about `duration`, calling `sample` while copies are in flight (to read the link's trained
/// speed then: an idle GPU link drops to 2.5 GT/s within moments of the last transfer).
pub fn load_link(gpu: &Arc<Gpu>, duration: Duration, mut sample: impl FnMut()) -> Result<LoadFigures, GpuError> {
    const CHUNK: usize = 64 << 20;
    let mut host_source = gpu.alloc_pinned(CHUNK)?;
    host_source.as_mut_slice().fill(0x5a);
    let mut host_target = gpu.alloc_pinned(CHUNK)?;
    let device_target = gpu.alloc(CHUNK)?;
    let device_source = gpu.alloc(CHUNK)?;
    let api = gpu.enter()?;
    let streams = [Stream::new(api)?, Stream::new(api)?];
    let started = Instant::now();
    let mut chunks = 0u64;
    while started.elapsed() < duration {
        // SAFETY: both buffers outlive the copies (the streams are synchronised below before any
        // buffer is dropped or reused); sizes are the buffers' own.
        api.check("cuMemcpyHtoDAsync", unsafe {
            (api.copy_host_to_device_async)(device_target.pointer, host_source.pointer.cast(), CHUNK, streams[0].0)
        })?;
        // SAFETY: as above.
        api.check("cuMemcpyDtoHAsync", unsafe {
            (api.copy_device_to_host_async)(
                host_target.as_mut_slice().as_mut_ptr().cast(),
                device_source.pointer,
                CHUNK,
                streams[1].0,
            )
        })?;
        sample();
        for stream in &streams {
            // SAFETY: the stream was created by Stream::new.
            api.check("cuStreamSynchronize", unsafe { (api.stream_synchronize)(stream.0) })?;
        }
        chunks += 1;
    }
    let seconds = started.elapsed().as_secs_f64();
    let gbps = (chunks * CHUNK as u64) as f64 / seconds / 1e9;
    Ok(LoadFigures { host_to_device_gbps: gbps, device_to_host_gbps: gbps, seconds })
}

struct Stream(CuStream);

impl Stream {
    fn new(api: &Api) -> Result<Stream, GpuError> {
        let mut stream: CuStream = std::ptr::null_mut();
        // SAFETY: valid out-pointer; a context is current (the caller entered the GPU).
        api.check("cuStreamCreate", unsafe { (api.stream_create)(&mut stream, STREAM_NON_BLOCKING) })?;
        Ok(Stream(stream))
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if let Ok(api) = driver() {
            // SAFETY: the stream came from cuStreamCreate and is destroyed once.
            unsafe { (api.stream_destroy)(self.0) };
        }
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).ok().filter(|s| *s > 0).unwrap_or(4096)
}

fn text(buffer: &[c_char]) -> String {
    let bytes: Vec<u8> = buffer.iter().take_while(|c| **c != 0).map(|c| *c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The GPU to test on, or `None` (with a loud SKIP) where there is no driver. With
    /// FABRICDOCTOR_REQUIRE_GPU=1 (set on the GPU machine) a missing GPU fails the test.
    fn test_gpu(test: &str) -> Option<Arc<Gpu>> {
        match Gpu::open(0) {
            Ok(gpu) => Some(gpu),
            Err(error) if std::env::var_os("FABRICDOCTOR_REQUIRE_GPU").is_some() => {
                panic!("{test}: FABRICDOCTOR_REQUIRE_GPU is set but GPU 0 cannot be opened: {error}")
            }
            Err(error) => {
                eprintln!("SKIP: {test}: no GPU here ({error})");
                None
            }
        }
    }

    #[test]
    fn data_survives_a_round_trip_through_gpu_memory() {
        let Some(gpu) = test_gpu("data_survives_a_round_trip_through_gpu_memory") else { return };
        let size = (3 << 20) + 17;
        let mut pinned = gpu.alloc_pinned(size).expect("pinned");
        for (i, byte) in pinned.as_mut_slice().iter_mut().enumerate() {
            *byte = (i % 251) as u8;
        }
        let mut device = gpu.alloc(size).expect("device");
        device.copy_from_host(pinned.as_slice()).expect("to GPU");
        let mut back = vec![0u8; size];
        device.copy_to_host(&mut back).expect("from GPU");
        assert!(back == pinned.as_slice(), "data changed on its way through GPU memory");
        assert!(gpu.pci_bus_id.len() == 12 && gpu.pci_bus_id.contains(':'), "{}", gpu.pci_bus_id);
    }

    #[test]
    fn a_device_buffer_exports_a_dmabuf_where_the_driver_supports_it() {
        let Some(gpu) = test_gpu("a_device_buffer_exports_a_dmabuf_where_the_driver_supports_it") else { return };
        let device = gpu.alloc(1 << 21).expect("device");
        match (gpu.dmabuf_supported, device.dmabuf()) {
            (true, Ok(fd)) => {
                use std::os::fd::AsRawFd;
                assert!(fd.as_raw_fd() >= 0);
            }
            (true, Err(error)) => panic!("the GPU says it supports dma-buf but export failed: {error}"),
            (false, result) => eprintln!("SKIP: no dma-buf support on this GPU/driver ({result:?})"),
        }
    }

    #[test]
    fn loading_the_link_moves_data_both_ways_and_samples_during_the_copies() {
        let Some(gpu) = test_gpu("loading_the_link_moves_data_both_ways_and_samples_during_the_copies") else {
            return;
        };
        let mut samples = 0;
        let figures = load_link(&gpu, Duration::from_millis(300), || samples += 1).expect("load");
        assert!(samples >= 1 && figures.seconds >= 0.3, "{samples} samples in {figures:?}");
        assert!(figures.host_to_device_gbps > 1.0, "{figures:?}");
    }

    /// Where CI runs there is no NVIDIA driver: opening a GPU must say so, not crash.
    #[test]
    fn without_a_driver_opening_a_gpu_is_a_named_error() {
        if Library::open(&["libcuda.so.1"]).is_ok() {
            eprintln!("SKIP: libcuda.so.1 is installed here; the no-driver path cannot be exercised");
            return;
        }
        let error = Gpu::open(0).expect_err("no driver");
        assert!(matches!(error, GpuError::NoDriver(_)), "{error}");
        assert!(error.to_string().starts_with("no NVIDIA driver: libcuda.so.1 or libcuda.so not found"), "{error}");
    }
}
