//! The few NVML functions fabricdoctor reads, bound at run time from libnvidia-ml.so.1. Prototypes and
//! constants are those of `nvml.h` (NVML API Reference, r580); every call's failure is kept as NVML's
//! own message so a finding can say why a value is missing.
#![expect(unsafe_code, reason = "NVML is a C library reached through dlopen")]

use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void, CStr};

use crate::dynlib::{Library, LoadError};

use super::{
    EccReadings, Field, GpuInventory, GpuReadings, NvLinkReading, NvmlReading, PcieReadings, RemapReadings,
    RetiredPages,
};

type Return = c_int;
type Device = *mut c_void;

const SUCCESS: Return = 0;
const ERROR_INVALID_ARGUMENT: Return = 2;
const ERROR_NOT_SUPPORTED: Return = 3;
const ERROR_INSUFFICIENT_SIZE: Return = 7;
const ERROR_DRIVER_NOT_LOADED: Return = 9;
const ERROR_LIBRARY_NOT_FOUND: Return = 12;
const ERROR_GPU_IS_LOST: Return = 15;
/// nvml.h `NVML_NVLINK_MAX_LINKS` (18 on Hopper and newer drivers).
const NVLINK_MAX_LINKS: c_uint = 18;

/// nvml.h `nvmlPciInfo_t` (the v3 layout `nvmlDeviceGetPciInfo_v3` fills).
#[repr(C)]
struct PciInfo {
    bus_id_legacy: [c_char; 16],
    domain: c_uint,
    bus: c_uint,
    device: c_uint,
    pci_device_id: c_uint,
    pci_sub_system_id: c_uint,
    bus_id: [c_char; 32],
}

struct Api {
    init: unsafe extern "C" fn() -> Return,
    error_string: unsafe extern "C" fn(Return) -> *const c_char,
    driver_version: unsafe extern "C" fn(*mut c_char, c_uint) -> Return,
    count: unsafe extern "C" fn(*mut c_uint) -> Return,
    handle_by_index: unsafe extern "C" fn(c_uint, *mut Device) -> Return,
    name: unsafe extern "C" fn(Device, *mut c_char, c_uint) -> Return,
    uuid: unsafe extern "C" fn(Device, *mut c_char, c_uint) -> Return,
    pci_info: unsafe extern "C" fn(Device, *mut PciInfo) -> Return,
    ecc_mode: unsafe extern "C" fn(Device, *mut c_int, *mut c_int) -> Return,
    total_ecc_errors: unsafe extern "C" fn(Device, c_int, c_int, *mut c_ulonglong) -> Return,
    remapped_rows: unsafe extern "C" fn(Device, *mut c_uint, *mut c_uint, *mut c_uint, *mut c_uint) -> Return,
    retired_pages: unsafe extern "C" fn(Device, c_int, *mut c_uint, *mut c_ulonglong) -> Return,
    retired_pages_pending: unsafe extern "C" fn(Device, *mut c_int) -> Return,
    nvlink_state: unsafe extern "C" fn(Device, c_uint, *mut c_int) -> Return,
    nvlink_error_counter: unsafe extern "C" fn(Device, c_uint, c_int, *mut c_ulonglong) -> Return,
    pcie_replay_counter: unsafe extern "C" fn(Device, *mut c_uint) -> Return,
    current_link_generation: unsafe extern "C" fn(Device, *mut c_uint) -> Return,
    max_link_generation: unsafe extern "C" fn(Device, *mut c_uint) -> Return,
    current_link_width: unsafe extern "C" fn(Device, *mut c_uint) -> Return,
    max_link_width: unsafe extern "C" fn(Device, *mut c_uint) -> Return,
    clock_event_reasons: unsafe extern "C" fn(Device, *mut c_ulonglong) -> Return,
    persistence_mode: unsafe extern "C" fn(Device, *mut c_int) -> Return,
    temperature: unsafe extern "C" fn(Device, c_int, *mut c_uint) -> Return,
}

impl Api {
    fn bind(library: &Library) -> Result<Api, LoadError> {
        // SAFETY: each type below is the prototype nvml.h declares for the symbol named beside it.
        unsafe {
            Ok(Api {
                init: library.function(c"nvmlInit_v2")?,
                error_string: library.function(c"nvmlErrorString")?,
                driver_version: library.function(c"nvmlSystemGetDriverVersion")?,
                count: library.function(c"nvmlDeviceGetCount_v2")?,
                handle_by_index: library.function(c"nvmlDeviceGetHandleByIndex_v2")?,
                name: library.function(c"nvmlDeviceGetName")?,
                uuid: library.function(c"nvmlDeviceGetUUID")?,
                pci_info: library.function(c"nvmlDeviceGetPciInfo_v3")?,
                ecc_mode: library.function(c"nvmlDeviceGetEccMode")?,
                total_ecc_errors: library.function(c"nvmlDeviceGetTotalEccErrors")?,
                remapped_rows: library.function(c"nvmlDeviceGetRemappedRows")?,
                retired_pages: library.function(c"nvmlDeviceGetRetiredPages")?,
                retired_pages_pending: library.function(c"nvmlDeviceGetRetiredPagesPendingStatus")?,
                nvlink_state: library.function(c"nvmlDeviceGetNvLinkState")?,
                nvlink_error_counter: library.function(c"nvmlDeviceGetNvLinkErrorCounter")?,
                pcie_replay_counter: library.function(c"nvmlDeviceGetPcieReplayCounter")?,
                current_link_generation: library.function(c"nvmlDeviceGetCurrPcieLinkGeneration")?,
                max_link_generation: library.function(c"nvmlDeviceGetMaxPcieLinkGeneration")?,
                current_link_width: library.function(c"nvmlDeviceGetCurrPcieLinkWidth")?,
                max_link_width: library.function(c"nvmlDeviceGetMaxPcieLinkWidth")?,
                // Renamed from nvmlDeviceGetCurrentClocksThrottleReasons in r535; the old name remains.
                clock_event_reasons: library
                    .function(c"nvmlDeviceGetCurrentClocksEventReasons")
                    .or_else(|_| library.function(c"nvmlDeviceGetCurrentClocksThrottleReasons"))?,
                persistence_mode: library.function(c"nvmlDeviceGetPersistenceMode")?,
                temperature: library.function(c"nvmlDeviceGetTemperature")?,
            })
        }
    }

    fn message(&self, code: Return) -> String {
        // SAFETY: nvmlErrorString returns a static NUL-terminated string for any code.
        let text = unsafe { (self.error_string)(code) };
        if text.is_null() {
            format!("NVML error {code}")
        } else {
            // SAFETY: non-null and NUL-terminated (above).
            unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
        }
    }

    /// One field from an NVML return code: NOT_SUPPORTED is a property of the GPU, not a failure.
    fn field<T>(&self, code: Return, value: impl FnOnce() -> T) -> Field<T> {
        match code {
            SUCCESS => Field::Value(value()),
            other => self.failure(other),
        }
    }

    /// The field for a call that did not succeed.
    fn failure<T>(&self, code: Return) -> Field<T> {
        match code {
            ERROR_NOT_SUPPORTED => Field::NotSupported,
            other => Field::Error(self.message(other)),
        }
    }
}

/// Read every GPU NVML lists. A missing library or an unloaded kernel driver is "no NVIDIA driver"
/// (a reading, not an error); any other failure to initialise is an error with NVML's message.
pub fn read_inventory() -> Result<NvmlReading, String> {
    let library = match Library::open(&["libnvidia-ml.so.1", "libnvidia-ml.so"]) {
        Ok(library) => library,
        Err(error) => return Ok(NvmlReading::NoDriver { reason: error.to_string() }),
    };
    let api = Api::bind(&library).map_err(|e| e.to_string())?;
    // SAFETY: nvmlInit_v2 takes nothing; it may be called more than once (reference counted).
    let code = unsafe { (api.init)() };
    match code {
        SUCCESS => {}
        ERROR_DRIVER_NOT_LOADED | ERROR_LIBRARY_NOT_FOUND => {
            return Ok(NvmlReading::NoDriver { reason: format!("nvmlInit: {}", api.message(code)) })
        }
        other => return Err(format!("nvmlInit: {}", api.message(other))),
    }
    // NVML is left initialised: nvmlShutdown while another thread (check --load's CUDA) still runs
    // is allowed, but the process ends soon after and the driver cleans up.
    let mut version = [0 as c_char; 96];
    // SAFETY: the buffer is writable for its stated length.
    let driver_version = unsafe { (api.driver_version)(version.as_mut_ptr(), version.len() as c_uint) };
    let driver_version = (driver_version == SUCCESS).then(|| text(&version));
    let mut count: c_uint = 0;
    // SAFETY: count is a valid out-pointer.
    let code = unsafe { (api.count)(&mut count) };
    if code != SUCCESS {
        return Err(format!("nvmlDeviceGetCount: {}", api.message(code)));
    }
    let devices = (0..count).map(|index| read_device(&api, index)).collect();
    Ok(NvmlReading::Read(GpuInventory { driver_version, devices }))
}

fn read_device(api: &Api, index: c_uint) -> GpuReadings {
    let mut device: Device = std::ptr::null_mut();
    // SAFETY: device is a valid out-pointer.
    let code = unsafe { (api.handle_by_index)(index, &mut device) };
    if code != SUCCESS {
        // A GPU that fell off the bus still counts but has no handle (NVML_ERROR_GPU_IS_LOST).
        return GpuReadings::unreachable(index, api.message(code), code == ERROR_GPU_IS_LOST);
    }
    let mut pci = PciInfo {
        bus_id_legacy: [0; 16],
        domain: 0,
        bus: 0,
        device: 0,
        pci_device_id: 0,
        pci_sub_system_id: 0,
        bus_id: [0; 32],
    };
    // SAFETY: device came from NVML; pci is a valid nvmlPciInfo_t.
    let pci_code = unsafe { (api.pci_info)(device, &mut pci) };
    let pci_bus_id = (pci_code == SUCCESS).then(|| format!("{:04x}:{:02x}:{:02x}.0", pci.domain, pci.bus, pci.device));
    GpuReadings {
        index,
        // SAFETY (both): string_field passes a buffer writable for `length` bytes; device came from NVML.
        name: string_field(api, |buffer, length| unsafe { (api.name)(device, buffer, length) }).value(),
        uuid: string_field(api, |buffer, length| unsafe { (api.uuid)(device, buffer, length) }).value(),
        pci_bus_id,
        lost: false,
        ecc: read_ecc(api, device),
        remap: read_remap(api, device),
        retired_pages: read_retired_pages(api, device),
        nvlink: read_nvlink(api, device),
        pcie: read_pcie(api, device),
        clock_event_reasons: {
            let mut reasons: c_ulonglong = 0;
            // SAFETY: valid handle and out-pointer.
            let code = unsafe { (api.clock_event_reasons)(device, &mut reasons) };
            api.field(code, || reasons)
        },
        persistence_mode: {
            let mut mode: c_int = 0;
            // SAFETY: valid handle and out-pointer.
            let code = unsafe { (api.persistence_mode)(device, &mut mode) };
            api.field(code, || mode == 1)
        },
        temperature_c: {
            let mut celsius: c_uint = 0;
            // SAFETY: valid handle and out-pointer; sensor 0 is NVML_TEMPERATURE_GPU.
            let code = unsafe { (api.temperature)(device, 0, &mut celsius) };
            api.field(code, || celsius)
        },
    }
}

fn string_field(api: &Api, call: impl FnOnce(*mut c_char, c_uint) -> Return) -> Field<String> {
    let mut buffer = [0 as c_char; 96];
    let code = call(buffer.as_mut_ptr(), buffer.len() as c_uint);
    api.field(code, || text(&buffer))
}

fn read_ecc(api: &Api, device: Device) -> Field<EccReadings> {
    let (mut current, mut pending): (c_int, c_int) = (0, 0);
    // SAFETY: valid handle and out-pointers.
    let code = unsafe { (api.ecc_mode)(device, &mut current, &mut pending) };
    if code != SUCCESS {
        return api.failure(code);
    }
    // nvmlMemoryErrorType_t: 0 corrected, 1 uncorrected; nvmlEccCounterType_t: 0 volatile, 1 aggregate.
    let counter = |error_type: c_int, counter_type: c_int| -> Field<u64> {
        let mut value: c_ulonglong = 0;
        // SAFETY: valid handle and out-pointer.
        let code = unsafe { (api.total_ecc_errors)(device, error_type, counter_type, &mut value) };
        api.field(code, || value)
    };
    Field::Value(EccReadings {
        enabled: current == 1,
        pending_enabled: pending == 1,
        volatile_corrected: counter(0, 0),
        volatile_uncorrected: counter(1, 0),
        aggregate_corrected: counter(0, 1),
        aggregate_uncorrected: counter(1, 1),
    })
}

fn read_remap(api: &Api, device: Device) -> Field<RemapReadings> {
    let (mut correctable, mut uncorrectable, mut pending, mut failed): (c_uint, c_uint, c_uint, c_uint) = (0, 0, 0, 0);
    // SAFETY: valid handle and out-pointers.
    let code = unsafe { (api.remapped_rows)(device, &mut correctable, &mut uncorrectable, &mut pending, &mut failed) };
    api.field(code, || RemapReadings {
        correctable_rows: correctable,
        uncorrectable_rows: uncorrectable,
        pending: pending != 0,
        failure_occurred: failed != 0,
    })
}

fn read_retired_pages(api: &Api, device: Device) -> Field<RetiredPages> {
    // nvmlPageRetirementCause_t: 0 multiple single-bit ECC errors, 1 double-bit ECC error. A count of 0
    // with a null array asks for the count only (returns SUCCESS or INSUFFICIENT_SIZE with the count).
    let count = |cause: c_int| -> Result<u32, Return> {
        let mut count: c_uint = 0;
        // SAFETY: a zero count with a null array is the documented way to query the size.
        let code = unsafe { (api.retired_pages)(device, cause, &mut count, std::ptr::null_mut()) };
        match code {
            SUCCESS | ERROR_INSUFFICIENT_SIZE => Ok(count),
            other => Err(other),
        }
    };
    let (single_bit, double_bit) = match (count(0), count(1)) {
        (Ok(single), Ok(double)) => (single, double),
        (Err(code), _) | (_, Err(code)) => return api.failure(code),
    };
    let mut pending: c_int = 0;
    // SAFETY: valid handle and out-pointer.
    let code = unsafe { (api.retired_pages_pending)(device, &mut pending) };
    Field::Value(RetiredPages {
        single_bit_ecc: single_bit,
        double_bit_ecc: double_bit,
        pending: api.field(code, || pending == 1),
    })
}

fn read_nvlink(api: &Api, device: Device) -> Field<Vec<NvLinkReading>> {
    let mut links = Vec::new();
    for link in 0..NVLINK_MAX_LINKS {
        let mut active: c_int = 0;
        // SAFETY: valid handle and out-pointer.
        let code = unsafe { (api.nvlink_state)(device, link, &mut active) };
        match code {
            SUCCESS => {}
            // Past the GPU's last link; or a GPU without NVLink at all.
            ERROR_INVALID_ARGUMENT | ERROR_NOT_SUPPORTED if !links.is_empty() => break,
            ERROR_NOT_SUPPORTED | ERROR_INVALID_ARGUMENT => return Field::NotSupported,
            other => return Field::Error(format!("link {link}: {}", api.message(other))),
        }
        // nvmlNvLinkErrorCounter_t: 0 DL_REPLAY, 1 DL_RECOVERY, 2 DL_CRC_FLIT, 3 DL_CRC_DATA.
        let counter = |kind: c_int| -> Field<u64> {
            let mut value: c_ulonglong = 0;
            // SAFETY: valid handle and out-pointer.
            let code = unsafe { (api.nvlink_error_counter)(device, link, kind, &mut value) };
            api.field(code, || value)
        };
        links.push(NvLinkReading {
            link,
            active: active == 1,
            replay_errors: counter(0),
            recovery_errors: counter(1),
            crc_flit_errors: counter(2),
            crc_data_errors: counter(3),
        });
    }
    Field::Value(links)
}

fn read_pcie(api: &Api, device: Device) -> Field<PcieReadings> {
    let value = |call: unsafe extern "C" fn(Device, *mut c_uint) -> Return| -> Field<u32> {
        let mut value: c_uint = 0;
        // SAFETY: valid handle and out-pointer; every function passed has this prototype.
        let code = unsafe { call(device, &mut value) };
        api.field(code, || value)
    };
    let replay_counter = value(api.pcie_replay_counter);
    Field::Value(PcieReadings {
        replay_counter,
        current_generation: value(api.current_link_generation),
        max_generation: value(api.max_link_generation),
        current_width: value(api.current_link_width),
        max_width: value(api.max_link_width),
    })
}

fn text(buffer: &[c_char]) -> String {
    let bytes: Vec<u8> = buffer.iter().take_while(|c| **c != 0).map(|c| *c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}
