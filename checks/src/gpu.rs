//! GPU health checks over NVML readings and the kernel log's Xid events. Each judges one NVML field
//! group per GPU; a node without the NVIDIA driver gets Skip "no NVIDIA driver" from every one, and a
//! field NVML does not support on a GPU is a Skip naming it, never a pass.

use std::collections::BTreeMap;

use fabricdoctor_probes::gpu::xid::{xid_meaning, XidSeverity};
use fabricdoctor_probes::gpu::{Field, GpuInventory, GpuReadings, NvmlReading, XidEvent};
use fabricdoctor_probes::pci::PciAddress;

use crate::{unreadable, Check, Finding, Inputs, Policy, Verdict};

/// nvml.h `nvmlClocksEventReason*` bits.
const REASON_GPU_IDLE: u64 = 0x1;
const REASON_APPLICATIONS_CLOCKS: u64 = 0x2;
const REASON_SW_POWER_CAP: u64 = 0x4;
const REASON_HW_SLOWDOWN: u64 = 0x8;
const REASON_SYNC_BOOST: u64 = 0x10;
const REASON_SW_THERMAL: u64 = 0x20;
const REASON_HW_THERMAL: u64 = 0x40;
const REASON_HW_POWER_BRAKE: u64 = 0x80;
const REASON_DISPLAY_CLOCKS: u64 = 0x100;

/// DCGM's PCIe health watch flags a replay rate above 8 per minute (`DCGM_LIMIT_MAX_PCIREPLAY_RATE`).
const MAX_PCIE_REPLAYS_PER_MINUTE: f64 = 8.0;

/// The GPUs to judge, or the findings that say why there are none.
fn inventory<'a>(id: &str, inputs: &Inputs<'a>) -> Result<&'a GpuInventory, Vec<Finding>> {
    let Some(observation) = inputs.gpu else {
        return Err(vec![Finding::new(id, Verdict::Skip, "node", "GPU state was not probed in this run")]);
    };
    match &observation.nvml {
        Err(error) => Err(vec![unreadable(id, "node", error)]),
        Ok(NvmlReading::NoDriver { reason }) => {
            Err(vec![Finding::new(id, Verdict::Skip, "node", "no NVIDIA driver").evidence(reason.clone())])
        }
        Ok(NvmlReading::Read(inventory)) if inventory.devices.is_empty() => {
            Err(vec![Finding::new(id, Verdict::Skip, "node", "the NVIDIA driver lists no GPU")])
        }
        Ok(NvmlReading::Read(inventory)) => Ok(inventory),
    }
}

/// "0000:18:00.0 (GPU0)" when the GPU is also on the PCI bus the probes read, else NVML's index.
fn subject(inputs: &Inputs<'_>, gpu: &GpuReadings) -> String {
    match gpu.address() {
        Some(address) if inputs.node.function(address).is_some() => inputs.label(address),
        Some(address) => format!("{address} (NVML GPU {})", gpu.index),
        None => format!("NVML GPU {}", gpu.index),
    }
}

/// Run `judge` on each GPU's field, turning unsupported and unreadable fields into Skip and Error.
fn per_gpu<T>(
    id: &str,
    inputs: &Inputs<'_>,
    what: &str,
    field: impl Fn(&GpuReadings) -> &Field<T>,
    judge: impl Fn(Finding, &GpuReadings, &T) -> Finding,
) -> Vec<Finding> {
    let inventory = match inventory(id, inputs) {
        Ok(inventory) => inventory,
        Err(findings) => return findings,
    };
    inventory
        .devices
        .iter()
        .map(|gpu| {
            let subject = subject(inputs, gpu);
            if gpu.lost {
                return Finding::new(
                    id,
                    Verdict::Fail,
                    subject,
                    "NVML: the GPU is lost (no longer answers on the bus)",
                );
            }
            match field(gpu) {
                Field::Value(value) => judge(Finding::new(id, Verdict::Pass, subject, ""), gpu, value),
                Field::NotSupported => {
                    Finding::new(id, Verdict::Skip, subject, format!("{what} not supported on this GPU"))
                }
                Field::Error(message) => {
                    Finding::new(id, Verdict::Error, subject, format!("NVML could not read {what}: {message}"))
                }
            }
        })
        .collect()
}

fn verdict(mut finding: Finding, verdict: Verdict, message: impl Into<String>) -> Finding {
    finding.set_verdict(verdict);
    finding.message = message.into();
    finding
}

fn count(field: &Field<u64>) -> String {
    match field {
        Field::Value(value) => value.to_string(),
        Field::NotSupported => "n/a".into(),
        Field::Error(message) => format!("unreadable ({message})"),
    }
}

#[derive(Debug)]
pub struct Ecc;

impl Check for Ecc {
    fn id(&self) -> &'static str {
        "gpu.ecc"
    }
    fn doc_short(&self) -> &'static str {
        "GPU memory reported uncorrectable ECC errors, or ECC is off"
    }
    fn doc_long(&self) -> &'static str {
        "Reads each GPU's ECC mode and error counts through NVML (nvmlDeviceGetEccMode, \
         nvmlDeviceGetTotalEccErrors). Uncorrectable errors since the driver loaded (volatile): fail — \
         the data of whatever ran was corrupted or the job was killed (Xid 48/94/95). Uncorrectable \
         errors only in the board's lifetime count (aggregate, kept in the InfoROM): warn, the board \
         has a history. ECC disabled on a data-centre GPU: warn. Corrected counts are evidence only. \
         Skip when NVML does not support ECC on the GPU or there is no NVIDIA driver."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        per_gpu(
            self.id(),
            inputs,
            "ECC",
            |g| &g.ecc,
            |finding, _, ecc| {
                let finding = finding.evidence(format!(
                "ECC {} (pending {}); uncorrectable volatile {}, aggregate {}; corrected volatile {}, aggregate {} \
                 (nvmlDeviceGetTotalEccErrors)",
                if ecc.enabled { "enabled" } else { "disabled" },
                if ecc.pending_enabled { "enabled" } else { "disabled" },
                count(&ecc.volatile_uncorrected),
                count(&ecc.aggregate_uncorrected),
                count(&ecc.volatile_corrected),
                count(&ecc.aggregate_corrected),
            ));
                if !ecc.enabled {
                    return verdict(finding, Verdict::Warn, "ECC is disabled: memory errors go undetected")
                        .expected("ECC enabled")
                        .observed("disabled");
                }
                let volatile = ecc.volatile_uncorrected.get().copied();
                let aggregate = ecc.aggregate_uncorrected.get().copied();
                match (volatile, aggregate) {
                    (Some(v), _) if v > 0 => {
                        verdict(finding, Verdict::Fail, format!("{v} uncorrectable ECC errors since the driver loaded"))
                            .expected("0")
                            .observed(v.to_string())
                    }
                    (_, Some(a)) if a > 0 => verdict(
                        finding,
                        Verdict::Warn,
                        format!("{a} uncorrectable ECC errors in the board's lifetime (none since the driver loaded)"),
                    ),
                    (Some(_), Some(_)) => verdict(finding, Verdict::Pass, "ECC enabled, no uncorrectable errors"),
                    _ => verdict(finding, Verdict::Error, "NVML could not read the uncorrectable error counts"),
                }
            },
        )
    }
}

#[derive(Debug)]
pub struct Remap;

impl Check for Remap {
    fn id(&self) -> &'static str {
        "gpu.remap"
    }
    fn doc_short(&self) -> &'static str {
        "GPU memory row remapping failed or waits for a reset; retired pages pending"
    }
    fn doc_long(&self) -> &'static str {
        "A100 and newer GPUs replace a memory row that had an uncorrectable error with a spare row at the \
         next GPU reset (NVIDIA 'Row Remapping', nvmlDeviceGetRemappedRows). A remap that failed (the \
         bank is out of spare rows): fail — the board needs replacing. A remap pending: warn — reset the \
         GPU (or reboot) before the next job, until then the row's pages are withheld. Older GPUs retire \
         pages instead (nvmlDeviceGetRetiredPages): a retirement pending is a warning for the same \
         reason. Remapped row and retired page counts are evidence."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        let id = self.id();
        let inventory = match inventory(id, inputs) {
            Ok(inventory) => inventory,
            Err(findings) => return findings,
        };
        inventory.devices.iter().map(|gpu| remap_finding(id, inputs, gpu)).collect()
    }
}

fn remap_finding(id: &str, inputs: &Inputs<'_>, gpu: &GpuReadings) -> Finding {
    let subject = subject(inputs, gpu);
    if gpu.lost {
        return Finding::new(id, Verdict::Fail, subject, "NVML: the GPU is lost (no longer answers on the bus)");
    }
    match (&gpu.remap, &gpu.retired_pages) {
        (Field::Value(remap), _) => {
            let finding = Finding::new(id, Verdict::Pass, subject, "").evidence(format!(
                "remapped rows: {} for uncorrectable, {} for correctable errors; pending {}, failure {} \
                 (nvmlDeviceGetRemappedRows)",
                remap.uncorrectable_rows,
                remap.correctable_rows,
                yes_no(remap.pending),
                yes_no(remap.failure_occurred)
            ));
            if remap.failure_occurred {
                verdict(finding, Verdict::Fail, "a row remap failed: the memory bank has no spare rows left")
            } else if remap.pending {
                verdict(finding, Verdict::Warn, "a row remap is pending: reset the GPU to apply it")
            } else {
                verdict(finding, Verdict::Pass, "no row remap pending or failed")
            }
        }
        (Field::NotSupported, Field::Value(pages)) => {
            let finding = Finding::new(id, Verdict::Pass, subject, "").evidence(format!(
                "retired pages: {} for double-bit, {} for multiple single-bit ECC errors (nvmlDeviceGetRetiredPages)",
                pages.double_bit_ecc, pages.single_bit_ecc
            ));
            match &pages.pending {
                Field::Value(true) => {
                    verdict(finding, Verdict::Warn, "a page retirement is pending: reset the GPU to apply it")
                }
                Field::Value(false) => verdict(finding, Verdict::Pass, "no page retirement pending"),
                Field::NotSupported => {
                    verdict(finding, Verdict::Skip, "page retirement status not supported on this GPU")
                }
                Field::Error(message) => {
                    verdict(finding, Verdict::Error, format!("NVML could not read page retirement status: {message}"))
                }
            }
        }
        (Field::NotSupported, Field::NotSupported) => {
            Finding::new(id, Verdict::Skip, subject, "neither row remapping nor page retirement supported on this GPU")
        }
        (Field::Error(message), _) | (_, Field::Error(message)) => {
            Finding::new(id, Verdict::Error, subject, format!("NVML could not read row remapping: {message}"))
        }
    }
}

fn yes_no(value: bool) -> &'static str {
    if value {
        "yes"
    } else {
        "no"
    }
}

#[derive(Debug)]
pub struct NvLink;

impl Check for NvLink {
    fn id(&self) -> &'static str {
        "gpu.nvlink"
    }
    fn doc_short(&self) -> &'static str {
        "NVLink links down or counting CRC, replay or recovery errors"
    }
    fn doc_long(&self) -> &'static str {
        "Reads each NVLink's state and data-link error counters through NVML (nvmlDeviceGetNvLinkState, \
         nvmlDeviceGetNvLinkErrorCounter: replay, recovery, CRC flit, CRC data). Some links down while \
         others are up: fail — GPU-to-GPU traffic (NCCL over NVLink/NVSwitch) loses bandwidth or falls \
         back to PCIe, and Xid 74 usually follows. Every link down: warn (a board whose NVLinks are not \
         connected, or a fabric manager not running). Non-zero error counters: warn — the link is \
         marginal and retrains. Skip on GPUs without NVLink."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        per_gpu(
            self.id(),
            inputs,
            "NVLink",
            |g| &g.nvlink,
            |finding, _, links| {
                let down: Vec<String> = links.iter().filter(|l| !l.active).map(|l| l.link.to_string()).collect();
                let mut errors = Vec::new();
                for link in links.iter().filter(|l| l.active) {
                    let counters = [
                        ("replay", &link.replay_errors),
                        ("recovery", &link.recovery_errors),
                        ("CRC flit", &link.crc_flit_errors),
                        ("CRC data", &link.crc_data_errors),
                    ];
                    let nonzero: Vec<String> = counters
                        .iter()
                        .filter_map(|(name, field)| field.get().filter(|v| **v > 0).map(|v| format!("{name} {v}")))
                        .collect();
                    if !nonzero.is_empty() {
                        errors.push(format!("link {}: {}", link.link, nonzero.join(", ")));
                    }
                }
                let mut finding = finding.evidence(format!(
                    "{} links, {} active (nvmlDeviceGetNvLinkState)",
                    links.len(),
                    links.len() - down.len()
                ));
                for line in &errors {
                    finding = finding.evidence(line.clone());
                }
                if !down.is_empty() && down.len() == links.len() {
                    verdict(
                        finding,
                        Verdict::Warn,
                        "every NVLink is down (not connected, or fabric manager not running)",
                    )
                } else if !down.is_empty() {
                    verdict(finding, Verdict::Fail, format!("NVLink {} down", down.join(", ")))
                        .expected(format!("{} links active", links.len()))
                        .observed(format!("{} active", links.len() - down.len()))
                } else if !errors.is_empty() {
                    verdict(finding, Verdict::Warn, format!("{} links counting data-link errors", errors.len()))
                } else {
                    verdict(finding, Verdict::Pass, format!("{} links active, no errors counted", links.len()))
                }
            },
        )
    }
}

#[derive(Debug)]
pub struct PcieReplay;

impl Check for PcieReplay {
    fn id(&self) -> &'static str {
        "gpu.pcie.replay"
    }
    fn doc_short(&self) -> &'static str {
        "GPU PCIe replay counter growing (a marginal link re-sending packets)"
    }
    fn doc_long(&self) -> &'static str {
        "The GPU counts PCIe link-layer replays (a packet re-sent after a bad LCRC or a missing ACK, PCIe \
         Base Spec §3.6.2; nvmlDeviceGetPcieReplayCounter). The counter is read at the start and end of \
         the sampling window: growth above 8 per minute fails (DCGM's PCIe health watch threshold, \
         DCGM_LIMIT_MAX_PCIREPLAY_RATE), any growth warns — a riser, retimer or slot is marginal. With \
         one reading (a capture, --no-sample) the count since the driver loaded is judged instead: zero \
         passes, more warns. NVML's link generation and width are shown beside sysfs's."
    }
    fn needs_counters(&self) -> bool {
        true
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        let earlier = inputs.gpu.and_then(|o| o.earlier.as_ref());
        per_gpu(
            self.id(),
            inputs,
            "the PCIe replay counter",
            |g| &g.pcie,
            |finding, gpu, pcie| {
                let mut finding = finding.evidence(format!(
                    "NVML link: gen {} of {}, x{} of x{}",
                    field_text(&pcie.current_generation),
                    field_text(&pcie.max_generation),
                    field_text(&pcie.current_width),
                    field_text(&pcie.max_width)
                ));
                let Some(now) = pcie.replay_counter.get().copied() else {
                    return verdict(finding, Verdict::Skip, "PCIe replay counter not supported on this GPU");
                };
                let before = earlier.and_then(|(reading, seconds)| {
                    let Ok(NvmlReading::Read(inventory)) = reading else { return None };
                    let same = inventory.devices.iter().find(|g| g.uuid.is_some() && g.uuid == gpu.uuid)?;
                    let count = same.pcie.get()?.replay_counter.get().copied()?;
                    Some((count, *seconds))
                });
                finding = finding.evidence(format!("replays since the driver loaded: {now}"));
                replay_verdict(finding, now, before)
            },
        )
    }
}

/// Judge replay growth: `before` is the earlier count and the seconds between the readings.
pub fn replay_verdict(finding: Finding, now: u32, before: Option<(u32, Option<f64>)>) -> Finding {
    match before {
        Some((earlier, seconds)) if now >= earlier => {
            let growth = now - earlier;
            let window = seconds.map(|s| format!(" in {s:.1} s")).unwrap_or_default();
            let per_minute = seconds.filter(|s| *s > 0.0).map(|s| f64::from(growth) * 60.0 / s);
            match per_minute {
                _ if growth == 0 => verdict(finding, Verdict::Pass, format!("no PCIe replays{window}")),
                Some(rate) if rate > MAX_PCIE_REPLAYS_PER_MINUTE => verdict(
                    finding,
                    Verdict::Fail,
                    format!("{growth} PCIe replays{window} ({rate:.0}/min, above {MAX_PCIE_REPLAYS_PER_MINUTE}/min)"),
                ),
                _ => verdict(finding, Verdict::Warn, format!("{growth} PCIe replays{window}: the link is marginal")),
            }
        }
        Some((earlier, _)) => verdict(
            finding,
            Verdict::Warn,
            format!("replay counter went back from {earlier} to {now} (driver reloaded?): growth unknown"),
        ),
        None if now == 0 => verdict(finding, Verdict::Pass, "no PCIe replays since the driver loaded"),
        None => verdict(
            finding,
            Verdict::Warn,
            format!("{now} PCIe replays since the driver loaded (one reading: growth not measured)"),
        ),
    }
}

fn field_text<T: std::fmt::Display>(field: &Field<T>) -> String {
    match field {
        Field::Value(value) => value.to_string(),
        Field::NotSupported => "n/a".into(),
        Field::Error(_) => "?".into(),
    }
}

#[derive(Debug)]
pub struct Throttle;

impl Check for Throttle {
    fn id(&self) -> &'static str {
        "gpu.throttle"
    }
    fn doc_short(&self) -> &'static str {
        "GPU clocks held down by hardware slowdown or thermal limits"
    }
    fn doc_long(&self) -> &'static str {
        "Reads the reasons the GPU's clocks are below maximum (nvmlDeviceGetCurrentClocksEventReasons). \
         Hardware slowdown, hardware thermal slowdown or power brake active: fail — the board is \
         overheating, a power supply asserted the brake, or the GPU protects itself; one slow GPU slows \
         every collective it is in. Software thermal slowdown: warn (cooling is marginal). Idle, \
         application clocks, software power cap and sync boost are normal operation and pass."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        per_gpu(
            self.id(),
            inputs,
            "clock event reasons",
            |g| &g.clock_event_reasons,
            |finding, gpu, reasons| {
                let mut finding = finding
                    .evidence(format!("clock event reasons 0x{reasons:x}: {}", reason_names(*reasons).join(", ")));
                if let Some(celsius) = gpu.temperature_c.get() {
                    finding = finding.evidence(format!("GPU temperature {celsius} C"));
                }
                throttle_verdict(finding, *reasons)
            },
        )
    }
}

/// The verdict for a clock event reason mask.
pub fn throttle_verdict(finding: Finding, reasons: u64) -> Finding {
    let hardware = reasons & (REASON_HW_SLOWDOWN | REASON_HW_THERMAL | REASON_HW_POWER_BRAKE);
    if hardware != 0 {
        let names = reason_names(hardware).join(", ");
        verdict(finding, Verdict::Fail, format!("clocks held down by {names}")).observed(names)
    } else if reasons & REASON_SW_THERMAL != 0 {
        verdict(finding, Verdict::Warn, "clocks held down by software thermal slowdown: cooling is marginal")
    } else {
        verdict(finding, Verdict::Pass, "no hardware or thermal slowdown active")
    }
}

fn reason_names(reasons: u64) -> Vec<&'static str> {
    let names = [
        (REASON_GPU_IDLE, "idle"),
        (REASON_APPLICATIONS_CLOCKS, "application clocks setting"),
        (REASON_SW_POWER_CAP, "software power cap"),
        (REASON_HW_SLOWDOWN, "hardware slowdown"),
        (REASON_SYNC_BOOST, "sync boost"),
        (REASON_SW_THERMAL, "software thermal slowdown"),
        (REASON_HW_THERMAL, "hardware thermal slowdown"),
        (REASON_HW_POWER_BRAKE, "hardware power brake"),
        (REASON_DISPLAY_CLOCKS, "display clock setting"),
    ];
    let listed: Vec<&'static str> = names.iter().filter(|(bit, _)| reasons & bit != 0).map(|(_, n)| *n).collect();
    if listed.is_empty() {
        vec!["none"]
    } else {
        listed
    }
}

#[derive(Debug)]
pub struct Persistence;

impl Check for Persistence {
    fn id(&self) -> &'static str {
        "gpu.persistence"
    }
    fn doc_short(&self) -> &'static str {
        "GPU persistence mode off (driver state torn down between jobs)"
    }
    fn doc_long(&self) -> &'static str {
        "Without persistence (nvidia-persistenced, or the legacy persistence mode; \
         nvmlDeviceGetPersistenceMode) the driver deinitialises each GPU when its last client exits: every \
         job start pays seconds of re-initialisation, ECC and row-remap state is re-read, and monitoring \
         that opens the GPU keeps changing its state. Off: warn. On: pass. The evidence names the GPU, \
         the driver version and the NUMA node sysfs gives the GPU."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        let driver = inventory(self.id(), inputs).ok().and_then(|i| i.driver_version.clone());
        per_gpu(
            self.id(),
            inputs,
            "persistence mode",
            |g| &g.persistence_mode,
            |finding, gpu, enabled| {
                let numa = gpu
                    .address()
                    .and_then(|a| inputs.node.function(a))
                    .map(|f| match inputs.node.numa_of(f) {
                        (Some(node), source) => format!("NUMA node {node} ({source:?})"),
                        (None, _) => "NUMA node unknown".to_string(),
                    })
                    .unwrap_or_else(|| "not on the PCI bus read".into());
                let finding = finding.evidence(format!(
                    "{}, driver {}, {numa}",
                    gpu.name.as_deref().unwrap_or("unnamed GPU"),
                    driver.as_deref().unwrap_or("unknown")
                ));
                if *enabled {
                    verdict(finding, Verdict::Pass, "persistence mode on")
                } else {
                    verdict(finding, Verdict::Warn, "persistence mode off: start nvidia-persistenced")
                        .expected("on")
                        .observed("off")
                }
            },
        )
    }
}

#[derive(Debug)]
pub struct Xid;

impl Check for Xid {
    fn id(&self) -> &'static str {
        "gpu.xid"
    }
    fn doc_short(&self) -> &'static str {
        "Xid errors from the NVIDIA driver in the kernel log since boot"
    }
    fn doc_long(&self) -> &'static str {
        "Reads the kernel log (/dev/kmsg; a snapshot keeps the driver's NVRM lines) for 'NVRM: Xid \
         (PCI:dddd:bb:dd): N, ...' reports and judges each GPU by its worst Xid, after the resolution \
         buckets of NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors): hardware Xids (48 DBE, 62 \
         micro-controller halt, 64 remap failure, 74 NVLink, 79 fallen off the bus, 95 uncontained ECC, \
         119/120 GSP) fail; application faults (13, 31, 43, 45) and recorded events (63 row remap, 92, \
         94 contained ECC) warn. The ring buffer holds only recent messages: a long-running node may \
         have lost older Xids (the journal keeps them). Skip without the driver and without Xids."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        let id = self.id();
        let Some(observation) = inputs.gpu else {
            return vec![Finding::new(id, Verdict::Skip, "node", "GPU state was not probed in this run")];
        };
        let no_driver = !matches!(observation.nvml, Ok(NvmlReading::Read(_)));
        let log = match &observation.kernel_log {
            Ok(log) => log,
            // Without the driver there are no Xids to miss: an unreadable log (non-root under
            // kernel.dmesg_restrict) is no reason to warn.
            Err(error) if matches!(observation.nvml, Ok(NvmlReading::NoDriver { .. })) => {
                return vec![Finding::new(id, Verdict::Skip, "node", "no NVIDIA driver").evidence(error.to_string())]
            }
            Err(error) => return vec![unreadable(id, "node", error)],
        };
        let mut by_gpu: BTreeMap<&str, Vec<&XidEvent>> = BTreeMap::new();
        for event in &log.xids {
            by_gpu.entry(event.pci.as_str()).or_default().push(event);
        }
        // The GPUs to report on: NVML's when the driver answers, else those on the PCI bus.
        let mut gpus: Vec<PciAddress> = observation.gpus().iter().filter_map(|g| g.address()).collect();
        if gpus.is_empty() {
            gpus = inputs.node.gpus().iter().map(|f| f.address).collect();
        }
        let mut findings = Vec::new();
        for address in &gpus {
            let key = format!("{:04x}:{:02x}:{:02x}", address.domain, address.bus, address.device);
            let subject = inputs.label(*address);
            match by_gpu.remove(key.as_str()) {
                Some(events) => findings.push(xid_finding(id, subject, &events)),
                None if no_driver => {}
                None => findings.push(
                    Finding::new(id, Verdict::Pass, subject, "no Xid in the kernel log since boot").evidence(format!(
                        "{} NVIDIA driver (NVRM) messages in the kernel log, none an Xid",
                        log.driver_records
                    )),
                ),
            }
        }
        // Xids naming a GPU no longer on the bus (fallen off, or removed) are still reported.
        for (pci, events) in by_gpu {
            findings.push(xid_finding(id, format!("PCI {pci}"), &events));
        }
        if findings.is_empty() {
            let message = if no_driver { "no NVIDIA driver" } else { "no GPU on this node" };
            findings.push(Finding::new(id, Verdict::Skip, "node", message));
        }
        findings
    }
}

/// One GPU's Xids: the worst decides the verdict; the last few lines are the evidence.
pub fn xid_finding(id: &str, subject: String, events: &[&XidEvent]) -> Finding {
    let mut codes: BTreeMap<u32, usize> = BTreeMap::new();
    for event in events {
        *codes.entry(event.code).or_default() += 1;
    }
    let worst = codes
        .keys()
        .map(|code| xid_meaning(*code).map(|(_, severity)| severity).unwrap_or(XidSeverity::Attention))
        .max()
        .unwrap_or(XidSeverity::Attention);
    let summary: Vec<String> = codes
        .iter()
        .map(|(code, n)| {
            let meaning = xid_meaning(*code).map(|(m, _)| m).unwrap_or("see NVIDIA's Xid catalog");
            let times = if *n > 1 { format!(" ×{n}") } else { String::new() };
            format!("Xid {code} ({meaning}){times}")
        })
        .collect();
    let verdict = match worst {
        XidSeverity::Hardware => Verdict::Fail,
        XidSeverity::Attention | XidSeverity::Application => Verdict::Warn,
    };
    let mut finding = Finding::new(id, verdict, subject, summary.join("; "));
    const SHOWN: usize = 5;
    for event in events.iter().skip(events.len().saturating_sub(SHOWN)) {
        finding = finding.evidence(match event.since_boot_us {
            Some(us) => format!("[{:.3} s] {}", us as f64 / 1e6, event.line),
            None => event.line.clone(),
        });
    }
    finding
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricdoctor_probes::gpu::xid::parse_xid_line;
    use fabricdoctor_probes::gpu::{EccReadings, GpuObservation, KernelLog, PcieReadings, RemapReadings};
    use fabricdoctor_probes::NodeSnapshot;

    fn healthy(index: u32, bus: u8) -> GpuReadings {
        let mut gpu = GpuReadings::unreachable(index, String::new(), false);
        gpu.name = Some("NVIDIA H100 80GB HBM3".into());
        gpu.uuid = Some(format!("GPU-{index}"));
        gpu.pci_bus_id = Some(format!("0000:{bus:02x}:00.0"));
        gpu.ecc = Field::Value(EccReadings {
            enabled: true,
            pending_enabled: true,
            volatile_corrected: Field::Value(0),
            volatile_uncorrected: Field::Value(0),
            aggregate_corrected: Field::Value(3),
            aggregate_uncorrected: Field::Value(0),
        });
        gpu.remap = Field::Value(RemapReadings {
            correctable_rows: 0,
            uncorrectable_rows: 0,
            pending: false,
            failure_occurred: false,
        });
        gpu.retired_pages = Field::NotSupported;
        gpu.nvlink = Field::NotSupported;
        gpu.pcie = Field::Value(PcieReadings {
            replay_counter: Field::Value(0),
            current_generation: Field::Value(5),
            max_generation: Field::Value(5),
            current_width: Field::Value(16),
            max_width: Field::Value(16),
        });
        gpu.clock_event_reasons = Field::Value(REASON_GPU_IDLE);
        gpu.persistence_mode = Field::Value(true);
        gpu.temperature_c = Field::Value(32);
        gpu
    }

    fn empty_node() -> NodeSnapshot {
        let dir = tempfile::tempdir().expect("tempdir");
        NodeSnapshot::probe(&fabricdoctor_probes::SysRoot::captured(dir.path()))
    }

    fn observation(gpus: Vec<GpuReadings>, log: &str) -> GpuObservation {
        GpuObservation {
            nvml: Ok(NvmlReading::Read(GpuInventory { driver_version: Some("580.159.04".into()), devices: gpus })),
            earlier: None,
            kernel_log: Ok(fabricdoctor_probes::gpu::xid::parse_kernel_log(log)),
            under_load: None,
        }
    }

    fn run(check: &dyn Check, observation: &GpuObservation) -> Vec<Finding> {
        let node = empty_node();
        let inputs = Inputs::new(&node).with_gpu(Some(observation));
        check.evaluate(&inputs, &Policy::default())
    }

    fn verdicts(findings: &[Finding]) -> Vec<Verdict> {
        findings.iter().map(|f| f.verdict).collect()
    }

    #[test]
    fn without_the_driver_every_gpu_check_skips_with_its_reason() {
        let observation = GpuObservation {
            nvml: Ok(NvmlReading::NoDriver { reason: "libnvidia-ml.so.1 not found".into() }),
            earlier: None,
            kernel_log: Ok(KernelLog::default()),
            under_load: None,
        };
        for check in crate::registry().iter().filter(|c| c.id().starts_with("gpu.")) {
            let findings = run(*check, &observation);
            assert_eq!(verdicts(&findings), vec![Verdict::Skip], "{}", check.id());
            assert_eq!(findings[0].message, "no NVIDIA driver", "{}", check.id());
        }
    }

    #[test]
    fn a_healthy_gpu_passes_every_check_but_nvlink_which_it_lacks() {
        let observation = observation(vec![healthy(0, 0x18)], "");
        for check in crate::registry().iter().filter(|c| c.id().starts_with("gpu.")) {
            let expected = if check.id() == "gpu.nvlink" { Verdict::Skip } else { Verdict::Pass };
            let findings = run(*check, &observation);
            assert_eq!(verdicts(&findings), vec![expected], "{}: {findings:?}", check.id());
        }
    }

    #[test]
    fn uncorrectable_ecc_fails_and_lifetime_only_warns() {
        let mut gpu = healthy(0, 0x18);
        let Field::Value(ecc) = &mut gpu.ecc else { panic!("ecc") };
        ecc.aggregate_uncorrected = Field::Value(2);
        assert_eq!(verdicts(&run(&Ecc, &observation(vec![gpu.clone()], ""))), vec![Verdict::Warn]);
        let Field::Value(ecc) = &mut gpu.ecc else { panic!("ecc") };
        ecc.volatile_uncorrected = Field::Value(1);
        let findings = run(&Ecc, &observation(vec![gpu.clone()], ""));
        assert_eq!(verdicts(&findings), vec![Verdict::Fail]);
        assert_eq!(findings[0].message, "1 uncorrectable ECC errors since the driver loaded");
        let Field::Value(ecc) = &mut gpu.ecc else { panic!("ecc") };
        ecc.enabled = false;
        assert_eq!(verdicts(&run(&Ecc, &observation(vec![gpu], ""))), vec![Verdict::Warn]);
    }

    #[test]
    fn remap_failure_fails_pending_warns_and_old_gpus_use_retired_pages() {
        let mut gpu = healthy(0, 0x18);
        let Field::Value(remap) = &mut gpu.remap else { panic!("remap") };
        remap.pending = true;
        assert_eq!(verdicts(&run(&Remap, &observation(vec![gpu.clone()], ""))), vec![Verdict::Warn]);
        let Field::Value(remap) = &mut gpu.remap else { panic!("remap") };
        remap.failure_occurred = true;
        assert_eq!(verdicts(&run(&Remap, &observation(vec![gpu.clone()], ""))), vec![Verdict::Fail]);
        gpu.remap = Field::NotSupported;
        gpu.retired_pages = Field::Value(fabricdoctor_probes::gpu::RetiredPages {
            single_bit_ecc: 0,
            double_bit_ecc: 1,
            pending: Field::Value(true),
        });
        assert_eq!(verdicts(&run(&Remap, &observation(vec![gpu.clone()], ""))), vec![Verdict::Warn]);
        gpu.retired_pages = Field::NotSupported;
        assert_eq!(verdicts(&run(&Remap, &observation(vec![gpu], ""))), vec![Verdict::Skip]);
    }

    #[test]
    fn one_nvlink_down_fails_all_down_warns_errors_warn() {
        use fabricdoctor_probes::gpu::NvLinkReading;
        let link = |link, active, crc| NvLinkReading {
            link,
            active,
            replay_errors: Field::Value(0),
            recovery_errors: Field::Value(0),
            crc_flit_errors: Field::Value(crc),
            crc_data_errors: Field::NotSupported,
        };
        let mut gpu = healthy(0, 0x18);
        gpu.nvlink = Field::Value(vec![link(0, true, 0), link(1, false, 0)]);
        let findings = run(&NvLink, &observation(vec![gpu.clone()], ""));
        assert_eq!((findings[0].verdict, findings[0].message.as_str()), (Verdict::Fail, "NVLink 1 down"));
        gpu.nvlink = Field::Value(vec![link(0, false, 0), link(1, false, 0)]);
        assert_eq!(verdicts(&run(&NvLink, &observation(vec![gpu.clone()], ""))), vec![Verdict::Warn]);
        gpu.nvlink = Field::Value(vec![link(0, true, 12), link(1, true, 0)]);
        let findings = run(&NvLink, &observation(vec![gpu], ""));
        assert_eq!(findings[0].verdict, Verdict::Warn);
        assert!(findings[0].evidence.contains(&"link 0: CRC flit 12".to_string()), "{:?}", findings[0].evidence);
    }

    #[test]
    fn replay_growth_is_judged_per_minute() {
        let finding = || Finding::new("gpu.pcie.replay", Verdict::Pass, "GPU0", "");
        assert_eq!(replay_verdict(finding(), 10, Some((10, Some(2.0)))).verdict, Verdict::Pass);
        // 1 in 2 s is 30/min: above DCGM's 8/min.
        assert_eq!(replay_verdict(finding(), 11, Some((10, Some(2.0)))).verdict, Verdict::Fail);
        // 1 in 60 s is 1/min: growth, below the threshold.
        assert_eq!(replay_verdict(finding(), 11, Some((10, Some(60.0)))).verdict, Verdict::Warn);
        assert_eq!(replay_verdict(finding(), 0, None).verdict, Verdict::Pass);
        assert_eq!(replay_verdict(finding(), 5, None).verdict, Verdict::Warn);
        assert_eq!(replay_verdict(finding(), 1, Some((5, Some(2.0)))).verdict, Verdict::Warn);
    }

    #[test]
    fn replay_growth_uses_the_earlier_reading_of_the_same_gpu() {
        let before = healthy(0, 0x18);
        let mut after = healthy(0, 0x18);
        let Field::Value(pcie) = &mut after.pcie else { panic!("pcie") };
        pcie.replay_counter = Field::Value(40);
        let mut observation = observation(vec![after], "");
        observation.earlier =
            Some((Ok(NvmlReading::Read(GpuInventory { driver_version: None, devices: vec![before] })), Some(2.0)));
        let findings = run(&PcieReplay, &observation);
        assert_eq!(findings[0].verdict, Verdict::Fail, "{findings:?}");
        assert!(findings[0].message.starts_with("40 PCIe replays in 2.0 s"), "{}", findings[0].message);
    }

    #[test]
    fn hardware_slowdown_fails_software_thermal_warns_power_cap_passes() {
        let finding = || Finding::new("gpu.throttle", Verdict::Pass, "GPU0", "");
        assert_eq!(throttle_verdict(finding(), REASON_HW_SLOWDOWN | REASON_HW_THERMAL).verdict, Verdict::Fail);
        assert_eq!(throttle_verdict(finding(), REASON_HW_POWER_BRAKE).verdict, Verdict::Fail);
        assert_eq!(throttle_verdict(finding(), REASON_SW_THERMAL).verdict, Verdict::Warn);
        assert_eq!(throttle_verdict(finding(), REASON_SW_POWER_CAP | REASON_GPU_IDLE).verdict, Verdict::Pass);
    }

    #[test]
    fn persistence_off_warns_and_a_lost_gpu_fails() {
        let mut gpu = healthy(0, 0x18);
        gpu.persistence_mode = Field::Value(false);
        assert_eq!(verdicts(&run(&Persistence, &observation(vec![gpu], ""))), vec![Verdict::Warn]);
        let lost = GpuReadings::unreachable(1, "GPU is lost".into(), true);
        assert_eq!(verdicts(&run(&Persistence, &observation(vec![lost], ""))), vec![Verdict::Fail]);
        let unreadable = GpuReadings::unreachable(1, "Unknown Error".into(), false);
        assert_eq!(verdicts(&run(&Persistence, &observation(vec![unreadable], ""))), vec![Verdict::Error]);
    }

    #[test]
    fn xids_are_judged_per_gpu_by_the_worst_one() {
        let log = "4,10,5000000,-;NVRM: Xid (PCI:0000:18:00): 13, pid=812, name=python3, Graphics SM Warp Exception\n\
                   4,11,6000000,-;NVRM: Xid (PCI:0000:3b:00): 31, pid=813, name=python3, Ch 00000008, intr 10000000. MMU Fault\n\
                   3,12,7000000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n";
        let observation = observation(vec![healthy(0, 0x18), healthy(1, 0x3b), healthy(2, 0x5c)], log);
        let findings = run(&Xid, &observation);
        assert_eq!(verdicts(&findings), vec![Verdict::Warn, Verdict::Fail, Verdict::Pass], "{findings:?}");
        assert_eq!(
            findings[1].message,
            "Xid 31 (GPU memory page fault (usually an illegal address in the application)); Xid 79 (GPU has fallen off the bus)"
        );
        assert_eq!(findings[1].evidence.len(), 2);
        assert!(findings[1].evidence[1].starts_with("[7.000 s] NVRM: Xid (PCI:0000:3b:00): 79"));
        assert_eq!(findings[2].message, "no Xid in the kernel log since boot");
        assert_eq!(findings[2].evidence, vec!["3 NVIDIA driver (NVRM) messages in the kernel log, none an Xid"]);
    }

    #[test]
    fn xids_of_a_gpu_that_left_the_bus_are_reported_even_without_the_driver() {
        let line = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.";
        let observation = GpuObservation {
            nvml: Ok(NvmlReading::NoDriver { reason: "nvmlInit: Driver Not Loaded".into() }),
            earlier: None,
            kernel_log: Ok(KernelLog { records: 1, driver_records: 1, xids: vec![parse_xid_line(line).expect("xid")] }),
            under_load: None,
        };
        let findings = run(&Xid, &observation);
        assert_eq!(verdicts(&findings), vec![Verdict::Fail]);
        assert_eq!(findings[0].subject, "PCI 0000:3b:00");
    }

    #[test]
    fn without_the_driver_an_unreadable_kernel_log_is_still_a_skip() {
        let observation = GpuObservation {
            nvml: Ok(NvmlReading::NoDriver { reason: "libnvidia-ml.so.1 not found".into() }),
            earlier: None,
            kernel_log: Err(fabricdoctor_probes::ProbeError {
                path: "dev/kmsg".into(),
                kind: fabricdoctor_probes::ProbeErrorKind::PermissionDenied,
            }),
            under_load: None,
        };
        let findings = run(&Xid, &observation);
        assert_eq!(verdicts(&findings), vec![Verdict::Skip]);
        assert_eq!(findings[0].message, "no NVIDIA driver");
    }

    #[test]
    fn an_unreadable_kernel_log_is_a_warning_to_rerun_as_root() {
        let mut observation = observation(vec![healthy(0, 0x18)], "");
        observation.kernel_log = Err(fabricdoctor_probes::ProbeError {
            path: "dev/kmsg".into(),
            kind: fabricdoctor_probes::ProbeErrorKind::PermissionDenied,
        });
        let findings = run(&Xid, &observation);
        assert_eq!(verdicts(&findings), vec![Verdict::Warn]);
        assert!(findings[0].message.contains("re-run as root"));
    }
}
