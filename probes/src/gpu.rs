//! GPU health readings: NVML (loaded at run time from the NVIDIA driver) and Xid events from the
//! kernel log. NVML answers through a library, not a file, so on the live node its reading is also
//! recorded as `nvml/gpus.json` (like ethtool's and DCB's replies) and a snapshot taken on a GPU node
//! is checked elsewhere with `--root`. Probes report; `checks::gpu` judges.

pub mod nvml;
pub mod xid;

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::pci::{PciAddress, PciLink};
use crate::root::SysRoot;
use crate::{ProbeError, ProbeErrorKind, Reading};

pub use xid::{KernelLog, XidEvent};

/// Node path where a snapshot keeps the NVML reading (JSON of [`NvmlReading`]).
pub const NVML_READING_PATH: &str = "nvml/gpus.json";

/// One NVML value, or why NVML could not give it. `NotSupported` is a property of the GPU (retired
/// pages on Hopper, NVLink on PCIe cards), not a failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Field<T> {
    Value(T),
    NotSupported,
    Error(String),
}

impl<T> Field<T> {
    pub fn get(&self) -> Option<&T> {
        match self {
            Field::Value(value) => Some(value),
            _ => None,
        }
    }

    pub fn value(self) -> Option<T> {
        match self {
            Field::Value(value) => Some(value),
            _ => None,
        }
    }
}

/// What NVML said about the node: the GPUs it manages, or that there is no NVIDIA driver to ask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NvmlReading {
    Read(GpuInventory),
    /// libnvidia-ml.so.1 is absent or the kernel module is not loaded (NVML_ERROR_DRIVER_NOT_LOADED).
    NoDriver {
        reason: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuInventory {
    pub driver_version: Option<String>,
    pub devices: Vec<GpuReadings>,
}

/// Everything read about one GPU, in NVML's index order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuReadings {
    pub index: u32,
    pub name: Option<String>,
    pub uuid: Option<String>,
    /// "0000:3b:00.0" (NVML's 8-digit domain shortened to the kernel's 4).
    pub pci_bus_id: Option<String>,
    /// NVML_ERROR_GPU_IS_LOST: the GPU no longer answers on the bus.
    pub lost: bool,
    pub ecc: Field<EccReadings>,
    pub remap: Field<RemapReadings>,
    pub retired_pages: Field<RetiredPages>,
    pub nvlink: Field<Vec<NvLinkReading>>,
    pub pcie: Field<PcieReadings>,
    /// nvmlClocksEventReasons bit mask (nvml.h `nvmlClocksEventReason*`).
    pub clock_event_reasons: Field<u64>,
    pub persistence_mode: Field<bool>,
    pub temperature_c: Field<u32>,
}

impl GpuReadings {
    /// A GPU NVML counts but cannot open: every field carries the reason.
    pub fn unreachable(index: u32, reason: String, lost: bool) -> GpuReadings {
        GpuReadings {
            index,
            name: None,
            uuid: None,
            pci_bus_id: None,
            lost,
            ecc: Field::Error(reason.clone()),
            remap: Field::Error(reason.clone()),
            retired_pages: Field::Error(reason.clone()),
            nvlink: Field::Error(reason.clone()),
            pcie: Field::Error(reason.clone()),
            clock_event_reasons: Field::Error(reason.clone()),
            persistence_mode: Field::Error(reason.clone()),
            temperature_c: Field::Error(reason),
        }
    }

    pub fn address(&self) -> Option<PciAddress> {
        self.pci_bus_id.as_deref().and_then(PciAddress::parse)
    }
}

/// ECC mode and error counts (nvmlDeviceGetEccMode, nvmlDeviceGetTotalEccErrors). Volatile counts
/// reset with the driver; aggregate counts persist in the InfoROM for the life of the board.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EccReadings {
    pub enabled: bool,
    pub pending_enabled: bool,
    pub volatile_corrected: Field<u64>,
    pub volatile_uncorrected: Field<u64>,
    pub aggregate_corrected: Field<u64>,
    pub aggregate_uncorrected: Field<u64>,
}

/// Row remapping (A100 and newer, nvmlDeviceGetRemappedRows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemapReadings {
    pub correctable_rows: u32,
    pub uncorrectable_rows: u32,
    /// A remap waits for the next GPU reset.
    pub pending: bool,
    /// A row could not be remapped (bank out of spare rows).
    pub failure_occurred: bool,
}

/// Dynamic page retirement (Kepler to Turing, nvmlDeviceGetRetiredPages).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetiredPages {
    pub single_bit_ecc: u32,
    pub double_bit_ecc: u32,
    pub pending: Field<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NvLinkReading {
    pub link: u32,
    pub active: bool,
    pub replay_errors: Field<u64>,
    pub recovery_errors: Field<u64>,
    pub crc_flit_errors: Field<u64>,
    pub crc_data_errors: Field<u64>,
}

/// PCIe as the GPU sees it (nvmlDeviceGetPcieReplayCounter, nvmlDeviceGetCurrPcieLinkGeneration...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PcieReadings {
    /// Link-layer replays since the driver loaded (a replay is a TLP re-sent after a bad LCRC or a
    /// missing ACK: the link works but is marginal).
    pub replay_counter: Field<u32>,
    pub current_generation: Field<u32>,
    pub max_generation: Field<u32>,
    pub current_width: Field<u32>,
    pub max_width: Field<u32>,
}

/// NVML on the live node (recorded for snapshots) or the recorded reading in a capture.
pub fn read_nvml(root: &SysRoot) -> Reading<NvmlReading> {
    let path = Path::new(NVML_READING_PATH);
    if root.is_live() {
        let reading = nvml::read_inventory()
            .map_err(|reason| ProbeError { path: "libnvidia-ml.so.1".into(), kind: ProbeErrorKind::Io(reason) })?;
        if let Ok(json) = serde_json::to_vec_pretty(&reading) {
            root.record_synthesized(path, json);
        }
        Ok(reading)
    } else {
        let text = root.read_string(path)?;
        parse_nvml_reading(&text).map_err(|e| ProbeError::malformed(path, &text, e))
    }
}

pub fn parse_nvml_reading(text: &str) -> Result<NvmlReading, crate::ParseError> {
    serde_json::from_str(text).map_err(|e| crate::ParseError::new(format!("not an NVML reading: {e}")))
}

/// A GPU's link while its PCIe link was busy with host<->device copies (`check --load`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkUnderLoad {
    pub address: PciAddress,
    /// The link read from sysfs during the copies (the fastest and widest seen), or why the load
    /// could not run.
    pub outcome: Result<LoadedLink, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadedLink {
    pub link: PciLink,
    pub host_to_device_gbps: f64,
    pub device_to_host_gbps: f64,
    pub seconds: f64,
}

/// Everything the GPU checks look at.
#[derive(Debug, Clone)]
pub struct GpuObservation {
    pub nvml: Reading<NvmlReading>,
    /// An earlier NVML reading and the seconds between the two (counter growth: PCIe replays).
    pub earlier: Option<(Reading<NvmlReading>, Option<f64>)>,
    pub kernel_log: Reading<KernelLog>,
    /// `check --load` results; `None` when no load was asked for.
    pub under_load: Option<Vec<LinkUnderLoad>>,
}

impl GpuObservation {
    /// NVML and the kernel log, once.
    pub fn probe(root: &SysRoot) -> GpuObservation {
        GpuObservation {
            nvml: read_nvml(root),
            earlier: None,
            kernel_log: xid::read_kernel_log(root),
            under_load: None,
        }
    }

    /// The NVML GPUs, or nothing when NVML could not be read.
    pub fn gpus(&self) -> &[GpuReadings] {
        match &self.nvml {
            Ok(NvmlReading::Read(inventory)) => &inventory.devices,
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_round_trips_through_its_snapshot_file() {
        let reading = NvmlReading::Read(GpuInventory {
            driver_version: Some("580.159.04".into()),
            devices: vec![GpuReadings::unreachable(0, "GPU is lost".into(), true)],
        });
        let json = serde_json::to_string(&reading).expect("json");
        assert_eq!(parse_nvml_reading(&json).expect("parse"), reading);
        let none = NvmlReading::NoDriver { reason: "libnvidia-ml.so.1 not found".into() };
        assert_eq!(parse_nvml_reading(&serde_json::to_string(&none).expect("json")).expect("parse"), none);
    }

    /// On a GPU node (FABRICDOCTOR_REQUIRE_GPU=1 there) NVML lists the GPUs with their PCI addresses;
    /// elsewhere the reading is "no NVIDIA driver", never an error.
    #[test]
    fn the_live_reading_lists_gpus_or_says_there_is_no_driver() {
        let reading = nvml::read_inventory().expect("NVML loads or is absent");
        match reading {
            NvmlReading::Read(inventory) => {
                assert!(!inventory.devices.is_empty(), "the driver lists no GPU");
                for gpu in &inventory.devices {
                    assert!(gpu.address().is_some(), "GPU {} has no PCI address: {gpu:?}", gpu.index);
                    assert!(gpu.pcie.get().is_some(), "GPU {} PCIe readings: {:?}", gpu.index, gpu.pcie);
                }
            }
            NvmlReading::NoDriver { reason } => {
                assert!(std::env::var_os("FABRICDOCTOR_REQUIRE_GPU").is_none(), "no driver: {reason}");
                eprintln!("SKIP: no NVIDIA driver here ({reason})");
            }
        }
    }

    #[test]
    fn a_capture_without_an_nvml_reading_is_not_found_and_a_damaged_one_is_malformed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = SysRoot::captured(dir.path());
        assert!(read_nvml(&root).expect_err("absent").is_not_found());
        std::fs::create_dir_all(dir.path().join("nvml")).expect("mkdir");
        std::fs::write(dir.path().join(NVML_READING_PATH), "{\"read\": 3").expect("write");
        let error = read_nvml(&root).expect_err("malformed");
        assert!(matches!(error.kind, ProbeErrorKind::Malformed { .. }), "{error}");
    }
}
