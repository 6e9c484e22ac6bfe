//! Kernel log lines (dmesg, journalctl -k, /var/log/messages): NVIDIA Xid events, PCIe AER,
//! IOMMU faults and NIC link changes; and NCCL RAS client reports (`ncclras`, NCCL 2.24+).

use std::collections::{BTreeMap, BTreeSet};

use fabricdoctor_probes::gpu::xid::{parse_xid_line, xid_meaning, XidSeverity};

use super::lines::numbered_lines;
use crate::fact::{Evidence, Fact};

/// The host a syslog/journal line names: `Nov 22 10:00:01 node7 kernel: ...`.
fn syslog_host(line: &str) -> Option<&str> {
    let before = line.split(" kernel:").next().filter(|b| b.len() < line.len())?;
    before.split_whitespace().last().filter(|h| !h.contains(':') && !h.starts_with('['))
}

/// A line that says a GPU left the bus, other than an Xid: the driver's own "fallen off the bus"
/// message, `nvidia-smi`/NVML failing to reach a GPU ("Unable to determine the device handle",
/// "GPU is lost"), or a PCIe Surprise Down (the link to a device dropped without warning; PCIe base
/// spec 6.2.7, reported by the AER driver as "Surprise Down Error" and by pciehp as a link down).
fn gpu_lost_line(raw: &str, lower: &str, host: &str, evidence: Evidence) -> Option<Fact> {
    // One scan for every phrase below passes most lines by (each `contains` would build its own
    // searcher, and a kernel log is mostly other lines).
    static PHRASES: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let phrases = PHRASES.get_or_init(|| {
        let words = [
            "fallen off the bus",
            "unable to determine the device handle",
            "gpu is lost",
            "gpu_is_lost",
            "rminitadapter failed",
            "rm_init_adapter failed",
            "unknown error",
            "reset failed",
            "resume failed",
            "no such device",
            "surprise down",
            "device is not usable",
            "probe routine failed",
            "heartbeat timed out",
            "fsp command timed out",
            "status 0x0000000f",
            "status=0x0000000f",
            "error 15",
        ];
        regex::Regex::new(&words.map(regex::escape).join("|")).expect("literal phrases compile")
    });
    if !phrases.is_match(lower) {
        return None;
    }
    let bus_after = |marker: &str| -> Option<String> {
        let rest = &raw[raw.find(marker)? + marker.len()..];
        let token = rest.trim_start().split(|c: char| c.is_whitespace() || c == ',').next()?;
        let token = token.trim_end_matches(':').trim_start_matches("PCI:").to_ascii_lowercase();
        (token.matches(':').count() >= 1 && token.chars().any(|c| c.is_ascii_hexdigit())).then_some(token)
    };
    let (how, bus) = if raw.contains("NVRM:") && raw.contains("fallen off the bus") {
        ("the driver reports the GPU fallen off the bus", bus_after("NVRM: GPU ").or_else(|| bus_after("GPU at PCI:")))
    } else if raw.contains("Unable to determine the device handle for") {
        (
            "nvidia-smi cannot reach the GPU (unable to determine the device handle)",
            bus_after("device handle for GPU").or_else(|| bus_after("device handle for gpu")),
        )
    } else if lower.contains("unknown error")
        && (lower.contains("error creating nvml.device") || lower.contains("devicegethandleby"))
    {
        // NVML cannot even open the GPU (nvmlDeviceGetHandleByIndex returning NVML_ERROR_UNKNOWN,
        // as the Kubernetes device plugin reports it: "error creating nvml.Device 0: nvml: Unknown
        // Error"): the device does not answer its driver, as after a GSP hang (amazon-eks-ami#1523).
        ("NVML cannot open the GPU (Unknown Error)", None)
    } else if lower.contains("no such device")
        && lower.contains("insert")
        && (lower.contains("'nvidia'") || lower.contains("/nvidia.ko") || lower.contains("inserting nvidia "))
    {
        // The NVIDIA kernel module refuses to load with ENODEV ("FATAL: Error inserting nvidia
        // (.../nvidia.ko): No such device", modprobe's "could not insert 'nvidia': No such
        // device"): its probe found no NVIDIA GPU on the PCI bus, so on a GPU node the GPUs have
        // left the bus (or were never enumerated after a boot).
        ("the NVIDIA kernel module finds no GPU on the PCI bus (No such device)", None)
    } else if raw.contains("GPU is lost") || raw.contains("GPU_IS_LOST") {
        // NVML_ERROR_GPU_IS_LOST (nvml.h: "The GPU has fallen off the bus or has otherwise become
        // inaccessible"), as nvidia-smi words it or as the NVML bindings name it (gpud, DCGM).
        ("NVML reports the GPU lost", bus_after("GPU"))
    } else if raw.contains("NVRM") && returns_gpu_is_lost(lower) {
        // A driver call that returns NV_ERR_GPU_IS_LOST (0x0000000F, "GPU lost from the bus",
        // src/common/sdk/nvidia/inc/nvstatuscodes.h), as the driver prints a failed RPC to the GSP
        // firmware ("NVRM: GPU0 _issueRpcAndWait: rpcSendMessage failed with status 0x0000000f for
        // fn 10"): the driver can no longer reach the GPU.
        ("the driver's calls to the GPU return NV_ERR_GPU_IS_LOST (status 0x0000000f)", None)
    } else if lower.contains("nvml") && nvml_error_number(lower) == Some(15) {
        // NVML's return code 15 by number (nvml.h: NVML_ERROR_GPU_IS_LOST), as a program that
        // prints the code rather than nvmlErrorString prints it ("NVML: cannot get current
        // temperature, error 15").
        ("NVML reports the GPU lost (error 15, NVML_ERROR_GPU_IS_LOST)", None)
    } else if raw.contains("RmInitAdapter failed") || raw.contains("rm_init_adapter failed") {
        // The driver could not bring the GPU up at all (NVIDIA's resource manager init, printed as
        // "NVRM: GPU 0000:81:00.0: RmInitAdapter failed! (0x25:0x40:1470)"): no process can use it.
        ("the driver cannot initialise the GPU (RmInitAdapter failed)", bus_after("NVRM: GPU "))
    } else if raw.contains("amdgpu") && (lower.contains("reset failed") || lower.contains("resume failed")) {
        // AMD's driver could not reset the GPU or bring it back after a reset (amdgpu_device.c:
        // "GPU mode1 reset failed", "ASIC reset failed with error, -121 for drm dev, ...", a
        // firmware block's "resume failed"): the device stays unusable until the node is rebooted
        // or the GPU reseated, which is a lost GPU, as NVIDIA's "RmInitAdapter failed" is.
        (
            "the driver cannot reset the GPU or resume it after a reset (amdgpu)",
            bus_after("amdgpu ").or_else(|| bus_after("drm dev,")),
        )
    } else if raw.contains("NVRM") && lower.contains("heartbeat timed out") && lower.contains("gsp") {
        // The GPU System Processor stopped answering the driver ("NVRM: _kgspRpcRecvPoll: GSP RM
        // heartbeat timed out", NVIDIA/open-gpu-kernel-modules#1200): the firmware that runs the GPU
        // is gone, as Xid 119's RPC timeout says, and the GPU serves no process until it is reset.
        ("the GPU's GSP firmware stopped answering (heartbeat timed out)", None)
    } else if raw.contains("NVRM") && lower.contains("fsp command timed out") {
        // The GPU's Falcon Security Processor, which boots the GSP firmware on Hopper and later
        // parts, did not answer the driver ("NVRM: kfspPollForResponse_IMPL: FSP command timed
        // out", then "kfspSendBootCommands_GH100: Sent following content to FSP"; NVIDIA/nvtrust#54):
        // the GPU's firmware cannot be started, so the driver cannot use the GPU, as after a GSP
        // timeout (Xid 119/120).
        ("the GPU's FSP firmware stopped answering the driver (FSP command timed out)", None)
    } else if raw.contains("NVRM") && lower.contains("probe routine failed") {
        // The NVIDIA driver's probe refused a GPU on the bus ("NVRM: The NVIDIA probe routine failed
        // for 1 device(s)", nv.c; NVIDIA/aicr#1858, an H100 present on PCI that faults in the
        // probe): the GPU is missing from nvidia-smi and from every job on the node.
        ("the NVIDIA driver's probe failed for a GPU on the bus (probe routine failed)", None)
    } else if raw.contains("habanalabs") && lower.contains("device is not usable") {
        // Intel Gaudi's driver giving up on an accelerator at start ("habanalabs 0000:1a:00.0:
        // Failed to initialize hl2. Device is NOT usable !", after "Failed to communicate with
        // Device CPU (CPU-CP timeout)"): its firmware does not answer, as a GSP timeout is on an
        // NVIDIA GPU, and nothing runs on it until it is reset or replaced.
        ("the driver cannot initialise the accelerator (habanalabs: Device is NOT usable)", bus_after("habanalabs "))
    } else if lower.contains("surprise down") {
        ("a PCIe Surprise Down: the device's link dropped", bus_after("received:").or_else(|| bus_after("pcieport")))
    } else {
        return None;
    };
    let mut fact = Fact::new("gpu.lost").attr("how", how).host(host).evidence(evidence);
    if let Some(bus) = bus {
        fact = fact.attr("bus_id", bus);
    }
    Some(fact)
}

/// The PCI addresses (lower-case, with their domain) of the devices a kernel log says it could not
/// give a BAR: "pci 0000:06:00.0: BAR 1: failed to assign [mem size ...]", "... BAR 1: no space for
/// [mem size ...]", and newer kernels' "... BAR 0 [mem size ...]: can't assign; no space".
fn devices_without_bars(text: &str) -> BTreeSet<String> {
    if !text.contains("BAR ") {
        return BTreeSet::new();
    }
    numbered_lines(text)
        .filter(|(_, line)| {
            line.contains("BAR ")
                && (line.contains("failed to assign") || line.contains("no space for") || line.contains("can't assign"))
        })
        .filter_map(|(_, line)| pci_address_token(line).map(str::to_ascii_lowercase))
        .collect()
}

/// Whether a lower-cased NVRM line reports a status of NV_ERR_GPU_IS_LOST ("status 0x0000000f",
/// "status=0x0000000f"), the whole hexadecimal word.
fn returns_gpu_is_lost(lower: &str) -> bool {
    lower.match_indices("status").any(|(at, word)| {
        let rest = lower[at + word.len()..].trim_start_matches([' ', '=', ':']);
        let Some(hex) = rest.strip_prefix("0x") else { return false };
        let digits = &hex[..hex.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(hex.len())];
        u32::from_str_radix(digits, 16) == Ok(0xf)
    })
}

/// The code after "error" in a lower-cased line that names NVML ("..., error 15"), a whole number.
fn nvml_error_number(lower: &str) -> Option<u32> {
    let rest = &lower[lower.find("error ")? + "error ".len()..];
    let digits: &str = &rest[..rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len())];
    digits.parse().ok()
}

/// An Xid an agent reports as detected without the GPU's address (gpud's event message "xid 119
/// detected by dmesg (47 minutes ago)", DCGM's failure detail "Detected XID 45 for GPU 0",
/// dcgm_errors.h DCGM_FR_XID_ERROR): the words "xid", the code, then "detected", or "detected",
/// "xid", the code and the GPU, in a lower-cased line.
fn detected_xid(lower: &str) -> Option<u32> {
    let at = lower.find("xid ")?;
    let (code, after) = code_after_xid(lower, at)?;
    let after = after.trim_start();
    (after.starts_with("detected") || lower[..at].ends_with("detected ") && after.starts_with("for gpu"))
        .then_some(code)
}

/// An Xid as a monitoring agent reports it rather than the driver: gpud's "XID 79(GPU has fallen
/// off the bus) detected on PCI:0000:ae:00". The code must follow the word XID and the line must
/// name the GPU's PCI address, so prose that mentions an Xid is not an event.
fn reported_xid(raw: &str) -> Option<(u32, String)> {
    let upper = raw.to_ascii_uppercase();
    let (code, after) = code_after_xid(raw, upper.find("XID ")?)?;
    let marker = upper.find("PCI:")?;
    let pci: String = raw[marker + 4..]
        .chars()
        .take_while(|c| c.is_ascii_hexdigit() || *c == ':' || *c == '.')
        .collect::<String>()
        .trim_end_matches([':', '.'])
        .to_ascii_lowercase();
    (pci.matches(':').count() >= 1 && after.starts_with(['(', ' ', ','])).then_some((code, pci))
}

/// The Xid code after the word at `at` ("XID " or "xid ", four bytes) and the text after the code.
fn code_after_xid(line: &str, at: usize) -> Option<(u32, &str)> {
    let rest = &line[at + 4..];
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    Some((rest[..digits].parse().ok()?, &rest[digits..]))
}

/// An NVSwitch error as its driver logs it: "nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028,
/// Data {...}" or "...: 20034, Fatal, Link 48 LTSSM Fault Up" (NVIDIA Fabric Manager User Guide,
/// "NVSwitch errors": SXids are the switch's counterpart of a GPU's Xids). NVLink traffic through
/// the switch stalls on the fatal ones, and the GPUs behind it see Xid 45 or hang; non-fatal ones
/// still name a faulty switch or link. The code must follow the PCI address, so a wrapped or
/// quoted fragment is not an event.
fn nvswitch_sxid(raw: &str) -> Option<Fact> {
    let at = raw.find("SXid (PCI:")?;
    let rest = &raw[at + "SXid (PCI:".len()..];
    let (pci, after) = rest.split_once("):")?;
    let after = after.trim_start();
    let digits = after.find(|c: char| !c.is_ascii_digit()).unwrap_or(after.len());
    let code: u32 = after[..digits].parse().ok()?;
    let switch = raw[..at].trim_end().trim_end_matches(':').rsplit(' ').next().unwrap_or("an NVSwitch");
    let severity = after[digits..].trim_start_matches(',').trim_start();
    let mut what = format!("NVSwitch {switch} (PCI {pci}) SXid {code}");
    if severity.starts_with("Fatal") || severity.starts_with("Non-fatal") || severity.starts_with("Nonfatal") {
        let words: String = severity.split(',').take(2).collect::<Vec<_>>().join(",");
        what.push_str(&format!(": {}", words.trim()));
    }
    Some(Fact::new("nvswitch.error").attr("what", what).attr("sxid", code).attr("text", raw.trim()))
}

/// The first word of a kernel line shaped like a PCI address with its domain, as the driver core
/// prefixes its messages ("mlx5_core 0000:5e:00.0: ..."), without the colon that follows it.
pub(super) fn pci_address_token(line: &str) -> Option<&str> {
    line.split_whitespace()
        .find(|t| t.len() >= 7 && t.matches(':').count() >= 2 && t.contains('.'))
        .map(|t| t.trim_end_matches(':'))
}

/// A NIC whose firmware stopped answering or reported a fatal error: mlx5_core's health poller
/// (drivers/net/ethernet/mellanox/mlx5/core/health.c: "device's health compromised - reached miss
/// count", the assert syndrome "synd 0x7: irisc not responding", "Fatal error detected", and the
/// firmware-reset path "Health issue observed"), or a device that stopped answering PCI reads
/// ("device lost" / "PCI channel offline"). Every queue pair on it is dead until it is reset. Also
/// the one firmware refusal that is no fault of the adapter but of its users: memory keys exhausted.
fn nic_health_line(raw: &str, lower: &str, host: &str) -> Option<Fact> {
    // The NIC drivers whose words follow (RDMA NICs', Broadcom's bnx2x, and Intel's drivers' word
    // that the device left the bus), found in one scan (a kernel log is mostly other lines, and
    // each `contains` would scan the line again).
    static DRIVERS: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let drivers = DRIVERS.get_or_init(|| {
        regex::Regex::new(
            "mlx5_core|mlx4_core|bnxt|bnx2x|irdma|hns|qedr|ionic|erdma|pcie link lost|received ecc err|fwsm|firmware recovery mode|err\\[bl|failed to load bl",
        )
            .expect("literal names compile")
    });
    // Which of those words the line holds first: the branches of one family need no other search.
    let matched = drivers.find(lower)?.as_str();
    // mlx5 cmd.c: the firmware refused CREATE_MKEY with MLX5_CMD_STAT_LIM_ERR ("status limits
    // exceeded(0x8)"): the adapter's table of memory keys is full. Every further registration fails
    // with ENOMEM whatever the process's memlock limit (openucx/ucx#6264: UCX's registration cache
    // kept every buffer registered). The adapter itself is well.
    // The same status on the other objects the adapter keeps in fixed tables (CREATE_QP, CREATE_CQ,
    // CREATE_SRQ, CREATE_DCT): a libfabric verbs endpoint's rdma_create_qp failing with ENOMEM
    // while the firmware says its queue-pair table is full (ofiwg/libfabric#7368, DAOS).
    // And ALLOC_UAR: the adapter's user access regions (the doorbell pages each process that opens
    // the device is given) are a fixed table too; with hundreds of ranks on one node it runs out,
    // and ibv_open_device fails with ENOMEM (openucx/ucx#6049).
    let table_object =
        ["create_mkey", "create_qp", "create_cq", "create_srq", "create_dct", "create_xrc_srq", "alloc_uar"];
    if lower.contains("limits exceeded") && table_object.iter().any(|object| lower.contains(object)) {
        let device = pci_address_token(raw).unwrap_or("");
        return Some(Fact::new("rdma.registration_limit").attr("device", device).host(host));
    }
    let how = if lower.contains("health compromised") {
        "the NIC's firmware stopped answering the health poller"
    } else if lower.contains("synd 0x") && lower.contains(':') && !lower.contains("ext_synd") {
        "the NIC's firmware raised an assert"
    } else if (lower.contains("fatal error") || lower.contains("internal error")) && lower.contains("detected") {
        // health.c poll_health: "Fatal error %u detected" (the sensor's number between the words).
        "the NIC reported a fatal internal error"
    } else if lower.contains("pci channel offline") || lower.contains("device lost") || lower.contains("pcie link lost")
    {
        // Intel's NIC drivers (igb, ixgbe, igc: "PCIe link lost, device now detached") on a
        // register read that came back all ones: the device left the bus.
        "the NIC stopped answering on PCIe"
    } else if lower.contains("no done completion") || (lower.contains("timeout") && lower.contains("leak of a command"))
    {
        // cmd.c wait_func: a firmware command that never completed ("CREATE_DCT(0x710) No done
        // completion", "timeout. Will cause a leak of a command resource"). A command that
        // completed with a bad status ("mlx5_cmd_out_err ... status bad parameter") is an answer
        // to its caller, not a firmware that stopped working, and is not matched.
        "the NIC's firmware stopped completing commands"
    } else if lower.contains("in pre-initializing state") {
        // mlx5 main.c wait_fw_init: "Firmware over 120000 MS in pre-initializing state, aborting":
        // the adapter's firmware never came up (a bad or foreign image in its flash, a failing
        // adapter), so the driver gives the device up.
        "the NIC's firmware never finished initialising"
    } else if firmware_command_timed_out(lower) {
        "the NIC's firmware stopped completing commands"
    } else if lower.contains("fw failed to respond") {
        // Broadcom's bnx2x (bnx2x_main.c, bnx2x_fw_command): the firmware's mailbox sequence
        // number never came back, after which the driver can neither stop nor reload the function;
        // a card loose in its slot does this as well as a hung firmware.
        "the NIC's firmware stopped answering its driver"
    } else if matched == "received ecc err" {
        // Intel's ixgbe (ixgbe_main.c, ixgbe_msix_other): the adapter's interrupt cause register
        // reports an ECC error in its own memory, and the driver resets the adapter each time
        // ("Received ECC Err, initiating reset"); links drop with every reset.
        "the NIC's own memory reported ECC errors and its driver reset it"
    } else if matched == "fwsm" && lower.contains("firmware error detected fwsm") {
        // ixgbe_main.c ixgbe_check_fw_error: the firmware status register (FWSM) shows the
        // firmware's external error indication or no valid firmware ("Warning firmware error
        // detected FWSM: 0x8118801F"): a firmware image that does not run (an update or a
        // replacement mends it).
        "the NIC's firmware reported an error in its status register (FWSM)"
    } else if matched == "firmware recovery mode" && lower.contains("firmware recovery mode detected") {
        // ixgbe, i40e and ice: the firmware booted its recovery image ("Firmware recovery mode
        // detected. Limiting functionality."): the NVM needs to be written again.
        "the NIC's firmware is in recovery mode"
    } else if matched == "err[bl" || (matched == "failed to load bl" && lower.contains("firmware")) {
        // A BlueField DPU's own boot stages, as the RShim console log prints them: the boot ROM
        // (BL1: "ERR[BL1]: PSC error -60") or Arm Trusted Firmware's next stage ("ERROR: Failed to
        // load BL2R firmware.") failing on the card. The DPU does not boot and its ports with it;
        // NVIDIA's BlueField troubleshooting guide: reinstall the BFB over RShim, then recover or
        // replace the card.
        "the DPU's boot firmware failed (a BlueField boot stage)"
    } else if lower.contains("fw_status_reg") || lower.contains("crt fatal error") {
        // Broadcom's bnxt drivers read the firmware's status register when it stops answering
        // ("VER_GET failed- FW_STATUS_REG: 0x89021") and print the fatal error it recorded ("CRT
        // FATAL ERROR: 0x9021"): the firmware crashed.
        "the NIC's firmware crashed"
    } else {
        return None;
    };
    // bnx2x names the interface, not the PCI function, in its function-and-line head
    // ("[bnx2x_fw_command:3055(enp2s0f0)]").
    let interface = || {
        let head = raw.split_once('[')?.1.split_once(']')?.0;
        head.split_once('(')?.1.strip_suffix(')')
    };
    let device = pci_address_token(raw).or_else(interface).unwrap_or("");
    Some(Fact::new("nic.hw_fault").attr("how", how).attr("device", device).host(host))
}

/// A GPU's temperature crossing one of the thresholds its driver enforces, as nouveau reports it
/// (drivers/gpu/drm/nouveau/nvkm/subdev/therm/base.c, nvkm_therm_sensor_event: "therm:
/// temperature (90 C) hit the 'fanboost' threshold"; the thresholds are fanboost, downclock,
/// critical and shutdown). Fans forced to full, clocks pulled down or the GPU shut off: the card
/// runs hot. A temperature that "went below" a threshold is the event ending, not read.
fn thermal_threshold(raw: &str) -> Option<(&str, &str)> {
    let rest = raw.split_once("therm: temperature (")?.1;
    let (temperature, rest) = rest.split_once(" C) hit the '")?;
    let threshold = rest.split_once('\'')?.0;
    let known = ["fanboost", "downclock", "critical", "shutdown"];
    (known.contains(&threshold) && temperature.trim().parse::<i32>().is_ok()).then_some((threshold, temperature.trim()))
}

/// A Mellanox adapter whose driver gave it up while probing it: mlx4_core's set-up steps end their
/// refusals in ", aborting" (drivers/net/ethernet/mellanox/mlx4/main.c: "Missing UAR, aborting"
/// when the PCI core assigned no space to the adapter's doorbell BAR, "Failed to initialize user
/// access region table, aborting" when the firmware's UAR BAR holds too few pages for the kernel's
/// page size), and mlx5_core's likewise. No RDMA or network device is created for the adapter, so
/// nothing on the host can use it. (mlx5's firmware that never left pre-initialisation is the
/// adapter's own fault, read by [`nic_health_line`] before this.)
fn adapter_given_up(raw: &str, lower: &str, host: &str) -> Option<Fact> {
    let driver = ["mlx4_core", "mlx5_core"].into_iter().find(|driver| lower.contains(driver))?;
    if !lower.trim_end().trim_end_matches('.').ends_with(", aborting") {
        return None;
    }
    let device = pci_address_token(raw).unwrap_or("an adapter");
    let said = raw.split_once(&format!("{device}: ")).map_or(raw.trim(), |(_, said)| said.trim());
    let text = format!("{driver} gave up {device} while probing it (\"{said}\"): no RDMA device was created for it");
    Some(Fact::new("rdma.device_missing").attr("text", text).host(host))
}

/// The RDMA core's own words (drivers/infiniband/core) about a device it could not set up. Its
/// messages are printed against the RDMA device ("infiniband mlx4_0: ...", dev_warn on the
/// ib_device), so the device is the word after "infiniband".
/// - ib_register_device (device.c) giving up: "Couldn't register device with driver model" or
///   "Couldn't set up InfiniBand P_Key/GID cache". The driver's device never appears in
///   /sys/class/infiniband, so no verbs user on the host can open it.
/// - add_roce_gid (cache.c) refused by the adapter: "add_roce_gid GID add failed port=1
///   index=0", with __ib_cache_gid_add's "unable to add gid fe80:... error=-22". The port's GID
///   table lacks the address of its net device, and RoCE connections that need it cannot resolve.
fn rdma_core_line(raw: &str, lower: &str, host: &str) -> Option<Vec<Fact>> {
    if !lower.contains("infiniband") && !lower.contains("add gid") {
        return None;
    }
    let device = || {
        raw.split("infiniband ").nth(1).and_then(|rest| rest.split_whitespace().next()).map(|d| d.trim_end_matches(':'))
    };
    if lower.contains("couldn't register device with driver model")
        || lower.contains("couldn't set up infiniband p_key/gid cache")
    {
        let device = device().unwrap_or("an RDMA device");
        let text = format!("the kernel's RDMA core could not register {device} (\"{}\")", raw.trim());
        return Some(vec![Fact::new("rdma.device_missing").attr("text", text).host(host)]);
    }
    if lower.contains("gid add failed port=") || lower.contains("unable to add gid") {
        let nic = device().unwrap_or("unknown");
        let after = |key: &str| {
            lower.split(key).nth(1).and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next()).unwrap_or("")
        };
        let mut failed = Fact::new("rdma.gid_add_failed").attr("nic", nic).attr("text", raw.trim()).host(host);
        if !after("port=").is_empty() {
            failed = failed.attr("port", after("port=")).attr("gid_index", after("index="));
        }
        return Some(vec![Fact::new("rdma.roce").attr("nic", nic).host(host), failed]);
    }
    None
}

/// A kernel consumer of RDMA (ib_srp, iSER, NVMe over RDMA, RDS) that cannot get a memory region
/// from its device ("ib_srp: enp1s0_rxe: ib_alloc_mr() failed. Try to reduce max_cmd_per_lun,
/// max_sect or ch_count", drivers/infiniband/ulp/srp/ib_srp.c): kernel allocations know no
/// locked-memory limit, so what ran out is the device's table of memory regions (its max_mr;
/// rdma_rxe's was too small for blktests' SRP runs, linux-block 423ed740@acm.org), which fewer or
/// smaller queues relieve.
fn memory_regions_refused(raw: &str, lower: &str, host: &str) -> Option<Fact> {
    // One prebuilt search a line (`contains` would build its searcher for each).
    static CALL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let call = CALL.get_or_init(|| regex::Regex::new("ib_alloc_mr").expect("a literal compiles"));
    if !call.is_match(raw) || !lower.contains("fail") {
        return None;
    }
    let device = raw
        .split("ib_alloc_mr")
        .next()
        .and_then(|head| head.trim_end_matches([' ', ':']).rsplit([' ', ':']).next())
        .filter(|device| !device.is_empty())
        .unwrap_or("the RDMA device");
    Some(Fact::new("rdma.registration_limit").attr("device", device).attr("text", raw.trim()).host(host))
}

/// Other RDMA NICs' drivers giving up on a command their firmware never answered: Broadcom's
/// bnxt_re ("QPLIB: cmdq[0x41d]=0x3 timedout (20000)msec", qplib_rcfw.c) and bnxt_en ("hwrm req_type
/// 0x... seq id 0x... timeout", "HWRM cmd resp_len timeout" on ESXi's bnxtnet), HiSilicon's hns
/// RoCE engine ("[cmd]token 14e mailbox 20 timeout.", hns_roce_hw_v2.c). A command answered with an
/// error status is not one of them.
fn firmware_command_timed_out(lower: &str) -> bool {
    let timed_out = lower.contains("timeout") || lower.contains("timedout") || lower.contains("timed out");
    timed_out
        && (lower.contains("cmdq[") || lower.contains("hwrm") || (lower.contains("mailbox") && lower.contains("token")))
}

/// One fact about Xid `code` on `gpu`: the code, what was reported (the cause names it), and its
/// meaning in NVIDIA's Xid catalog.
fn xid_fact(name: &str, code: u32, meaning: &str, gpu: &str, host: &str, evidence: Evidence) -> Fact {
    Fact::new(name)
        .attr("xid", code)
        .attr("reported", format!("Xid {code}"))
        .attr("meaning", meaning)
        .attr("bus_id", gpu)
        .host(host)
        .evidence(evidence)
}

/// The facts of one Xid on one GPU, whichever tool reported it (the kernel's NVRM line, DCGM's
/// last-Xid field): its severity from NVIDIA's Xid catalog, ECC for memory errors, and a lost GPU
/// for 79/119/120.
pub(super) fn xid_facts(code: u32, gpu: &str, host: &str, evidence: &Evidence) -> Vec<Fact> {
    let (meaning, severity) = xid_meaning(code).unwrap_or(("see NVIDIA's Xid catalog", XidSeverity::Attention));
    let fact = |name: &str| xid_fact(name, code, meaning, gpu, host, evidence.clone());
    let mut facts = vec![fact(match severity {
        XidSeverity::Hardware => "gpu.xid",
        XidSeverity::Attention => "gpu.xid_attention",
        XidSeverity::Application => "gpu.xid_application",
    })];
    // Xids that report GPU memory errors are also ECC facts (NVIDIA Xid catalog).
    if matches!(code, 48 | 63 | 64 | 92 | 94 | 95 | 140) {
        facts.push(fact("gpu.ecc"));
    }
    // The GPU is gone from the bus or its firmware stopped answering: every rank on it is dead,
    // whatever the network says afterwards.
    if matches!(code, 79 | 119 | 120) {
        facts.push(fact("gpu.lost").attr("how", format!("Xid {code}: {meaning}")));
    }
    facts
}

/// The two lines of a firmware-first AER report that `parse_kernel` reads: the CPER record's
/// "[Hardware Error]:" lines and the device's "aer_status:" line.
fn firmware_aer_phrases() -> &'static regex::Regex {
    static PHRASES: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    PHRASES.get_or_init(|| regex::Regex::new(r"\[Hardware Error\]:|: aer_status: 0x").expect("literal phrases compile"))
}

pub fn parse_kernel(file: &str, text: &str) -> Vec<Fact> {
    let mut facts = Vec::new();
    let mut link_downs: BTreeMap<String, Vec<Evidence>> = BTreeMap::new();
    // Whether every IOMMU fault the input shows is one of interrupt remapping (looked for once, at
    // the first DMAR line).
    let interrupt_faults_only: std::cell::OnceCell<bool> = std::cell::OnceCell::new();
    // The endpoints EEH froze, each read once.
    let mut eeh_endpoints: BTreeSet<String> = BTreeSet::new();
    let mut link_ups: BTreeMap<String, Vec<Evidence>> = BTreeMap::new();
    // PCI devices whose driver probe this log holds ("mlx5_core 0000:1b:00.1: firmware version:
    // 22.38.1002"): the log covers their start.
    let mut probed: BTreeSet<String> = BTreeSet::new();
    // PCI devices whose module cage saw a cable go in, and the line that says so (mlx5's port
    // module event, drivers/net/ethernet/mellanox/mlx5/core/events.c: "Port module event: module
    // 0, Cable plugged").
    let mut plugged: BTreeMap<String, usize> = BTreeMap::new();
    // Intel's NIC drivers' link report ("ixgbe 0000:82:00.0: (Speed:5.0GT/s, Width: x4, Encoding
    // Loss:20%)"), by device, for the verdict printed after it.
    let mut link_reports: BTreeMap<String, Evidence> = BTreeMap::new();
    let slot_verdicts = text.contains("not sufficient for optimal performance");
    // The host could not place a device's memory windows: the kernel's "BAR 0 [mem ...]: can't
    // assign; no space", or the NVIDIA driver finding a BAR the firmware left unassigned ("NVRM:
    // This PCI I/O region assigned to your NVIDIA device is invalid: BAR1 is 0M @ 0x0", nv-pci.c,
    // a Thunderbolt enclosure's hot-plug bridge with too small a window). A driver probe that then
    // fails is the host's PCI address space (the BIOS's Above 4G Decoding, the bridge windows), not
    // a GPU gone from the bus; its lines are left to be quoted.
    let bars_unplaced = text.contains("can't assign; no space")
        || text.contains("PCI I/O region assigned to your NVIDIA device is invalid");
    // The devices whose BARs the kernel could not place, by address: older kernels word it "BAR 1:
    // no space for [mem size 0x2000000000 64bit pref]" and "BAR 1: failed to assign [mem size ...]"
    // (drivers/pci/setup-res.c). The NVIDIA driver cannot initialise such a GPU ("RmInitAdapter
    // failed"): the host's address space is short (a VM whose CPU model addresses too little, a
    // BIOS without Above 4G Decoding), and the GPU is not lost.
    let unplaced_devices = devices_without_bars(text);
    // The severity of the firmware's last error record ("[Hardware Error]: event severity: fatal"),
    // for the device lines that follow it.
    let mut firmware_severity: Option<(&'static str, Evidence)> = None;
    // Whether an AMD GPU's uncorrectable hardware error was already read: a hive's recovery repeats
    // it on every GPU and in every frame of a trace.
    let mut amd_uncorrectable_read = false;
    // Whether a kernel consumer's failure to get memory regions was read: it repeats it for every
    // target or queue it sets up.
    let mut memory_regions_read = false;
    // Whether the input holds nouveau's thermal reports at all: looked for once, not at every line.
    let thermal_report = text.contains("therm: temperature (");
    // The GPUs and thresholds of the thermal events read (at most 64).
    let mut thermal_events: BTreeSet<(String, String)> = BTreeSet::new();
    // Whether the PCIe error section of that record reports data that arrived poisoned (its
    // device's Status register, "command: 0x0546, status: 0xc110", with Master Data Parity Error,
    // bit 8: a poisoned completion or request, PCIe Base Spec 7.5.1.1.4).
    let mut firmware_poisoned = false;
    // The device that record's PCIe section named, once it did.
    let mut record_device: Option<String> = None;
    for (line_no, raw) in numbered_lines(text) {
        let evidence = || Evidence::new(file, line_no, raw);
        let host = syslog_host(raw).unwrap_or(crate::fact::UNKNOWN_HOST).to_string();
        if raw.contains("NVRM: Xid ") {
            // One table for check and triage: NVIDIA's Xid catalog, in probes/src/gpu/xid.rs.
            if let Some(mut event) = parse_xid_line(raw) {
                // Xid 45 is cleanup after an earlier error; when the driver names that error
                // ("caused by previous Xid 149"), the earlier one is what the GPU suffered.
                if let Some(previous) = event.detail.split("caused by previous Xid ").nth(1) {
                    if let Ok(code) = previous.trim().trim_end_matches('.').parse() {
                        event.code = code;
                    }
                }
                facts.extend(xid_facts(event.code, &event.pci, &host, &evidence()));
            }
            continue;
        }
        if let Some((code, pci)) = reported_xid(raw) {
            facts.extend(xid_facts(code, &pci, &host, &evidence()));
            continue;
        }
        // A Node Health Check (mej/nhc) Xid check's report, "Found XID errors: 63" or "... 63, 94":
        // the codes it read from the kernel log, without the GPU.
        if let Some(codes) = raw.trim().strip_prefix("Found XID errors:") {
            for code in codes.split([',', ' ']).filter_map(|c| c.trim().parse::<u32>().ok()) {
                facts.extend(xid_facts(code, "unknown", &host, &evidence()));
            }
            continue;
        }
        if let Some(fact) = nvswitch_sxid(raw) {
            facts.push(fact.host(&host).evidence(evidence()));
            continue;
        }
        let lower = raw.to_ascii_lowercase();
        if let Some(code) = detected_xid(&lower) {
            facts.extend(xid_facts(code, "unknown", &host, &evidence()));
            continue;
        }
        // AMD's driver gave up bringing a GPU up at probe (amdgpu_device.c: "Fatal error during GPU
        // init", then "probe of 0000:05:00.0 failed with error -22"): the card's own VBIOS would
        // not run ("atombios stuck executing", "gpu post error", ROCm/ROCm#1320) or its firmware's
        // table of blocks was invalid (ROCm/ROCm#3856), which AMD's engineers read as the card's
        // fault. Where the kernel could not place devices' memory windows ("BAR 0 [mem ...]: can't
        // assign; no space", ROCm/ROCm#6281) the host's PCI address space is short (the BIOS's
        // Above 4G Decoding and Resizable BAR), not the card; its lines are left to be quoted.
        // The same where the driver cannot open its channel to the card's security processor, which
        // loads every other firmware block ("[drm:psp_hw_start [amdgpu]] *ERROR* PSP create ring
        // failed!", amdgpu_psp.c; ROCm/ROCm#2747, a faulty Infinity Fabric bridge across four cards).
        let amdgpu = raw.contains("amdgpu");
        let psp = amdgpu && lower.contains("psp create ring failed");
        if psp || amdgpu && lower.contains("fatal error during gpu init") {
            if !bars_unplaced {
                let bus = pci_address_token(raw).unwrap_or("");
                let words = if psp { "PSP create ring failed" } else { "Fatal error during GPU init" };
                let gpu = if bus.is_empty() { "an AMD GPU".to_string() } else { format!("AMD GPU {bus}") };
                facts.push(
                    Fact::new("gpu.hardware_error")
                        .attr("what", format!("{gpu} failed its initialisation (amdgpu: {words})"))
                        .attr("bus_id", bus)
                        .host(&host)
                        .evidence(evidence()),
                );
            }
            continue;
        }
        // AMD's RAS path (amdgpu_ras.c): the driver counts uncorrectable errors in a block of the
        // GPU ("amdgpu: 2 uncorrectable hardware errors detected in umc block"), is told of a
        // fatal one by the ATHUB interrupt ("uncorrectable hardware error(ERREVENT_ATHUB_INTERRUPT)
        // detected!"), or its recovery worker, which only such an error queues, resets the GPUs
        // of the hive (amdgpu_ras_do_recovery, named in the workqueue line and the call trace of
        // anything that fails during it). An uncorrectable error is the GPU's memory or logic,
        // however the reset that follows goes; correctable ones ("no user action is needed") are
        // not read.
        if amdgpu
            && !amd_uncorrectable_read
            && (lower.contains("uncorrectable hardware error") || raw.contains("amdgpu_ras_do_recovery"))
        {
            amd_uncorrectable_read = true;
            let bus = pci_address_token(raw).unwrap_or("");
            let gpu = if bus.is_empty() { "an AMD GPU".to_string() } else { format!("AMD GPU {bus}") };
            facts.push(
                Fact::new("gpu.hardware_error")
                    .attr(
                        "what",
                        format!("{gpu} had an uncorrectable hardware error and its driver reset it (amdgpu RAS)"),
                    )
                    .attr("bus_id", bus)
                    .host(&host)
                    .evidence(evidence()),
            );
            continue;
        }
        if let Some(fact) = gpu_lost_line(raw, &lower, &host, evidence()) {
            let probe_refused =
                fact.get("how").is_some_and(|how| how.contains("probe failed") || how.contains("finds no GPU"));
            let unplaced = fact
                .get("bus_id")
                .filter(|bus| !bus.is_empty())
                .is_some_and(|bus| unplaced_devices.iter().any(|device| device.ends_with(bus)));
            if !(unplaced || bars_unplaced && probe_refused) {
                facts.push(fact);
            }
            continue;
        }
        // Firmware-first AER: the platform reports the PCIe error in a CPER record (APEI GHES,
        // drivers/acpi/apei/ghes.c) that the kernel prints as "{1}[Hardware Error]: event severity:
        // fatal" and "section_type: PCIe error", then the device's own registers as cper_print_aer
        // prints them (drivers/pci/pcie/aer.c: "amdgpu 0000:83:00.0: aer_status: 0x00008000,
        // aer_mask: ..." and the error by name, "Completer Abort"). Fatal and recoverable records
        // are uncorrected errors (UEFI spec, appendix N: Error Severity).
        // One prebuilt search decides whether either form is on the line (most lines of a log are
        // neither, and each `contains` would build its own searcher).
        let firmware_aer = firmware_aer_phrases().is_match(raw);
        // What a record's line says after its "[Hardware Error]:" mark, found once for the fields
        // read below.
        let record_field =
            firmware_aer.then(|| raw.split_once("[Hardware Error]:")).flatten().map(|(_, rest)| rest.trim());
        if let Some(severity) = record_field.and_then(|field| field.strip_prefix("event severity:")) {
            let severity = match severity.trim() {
                "fatal" | "recoverable" => "uncorrected",
                "corrected" => "corrected",
                _ => "unknown",
            };
            firmware_severity = Some((severity, evidence()));
            firmware_poisoned = false;
            record_device = None;
            continue;
        }
        if let Some(status) = record_field
            .and_then(|field| field.strip_prefix("command: "))
            .and_then(|rest| rest.split_once("status: 0x"))
            .and_then(|(_, status)| u16::from_str_radix(status.trim(), 16).ok())
        {
            firmware_poisoned = status & 0x0100 != 0;
            continue;
        }
        // The PCIe error section of the same record names its device on a line of its own
        // (cper_print_pcie, drivers/firmware/efi/cper.c: "[Hardware Error]:   device_id:
        // 0000:01:00.0", then "slot", "secondary_bus" and the vendor's "vendor_id: 0x10de,
        // device_id: 0x2204"): the record is a PCIe error of that device, whether or not the
        // paste kept its severity. A device that received poisoned data is not where the error
        // arose: the data was poisoned at its source, most often host memory with an uncorrectable
        // error (EDAC's "UE memory read error" beside it), and the lines stay quoted as errors.
        if let Some(device) = record_field
            .filter(|_| !firmware_poisoned)
            .and_then(|field| field.strip_prefix("device_id: "))
            .map(str::trim)
            .filter(|device| pci_address_token(device) == Some(*device))
        {
            facts.push(firmware_aer_event(device, firmware_severity.as_ref(), &host, evidence()));
            record_device = Some(device.to_string());
            continue;
        }
        if firmware_aer && raw.contains(": aer_status: 0x") {
            if let Some(device) = pci_address_token(raw) {
                // The device's registers after its record's own device line: the same error, told once.
                if record_device.as_deref() != Some(device) {
                    facts.push(firmware_aer_event(device, firmware_severity.as_ref(), &host, evidence()));
                }
                continue;
            }
        }
        // pcieport 0000:00:01.0: AER: Corrected error received: 0000:3b:00.0 (drivers/pci/pcie/aer.c)
        let aer_line = raw
            .split_whitespace()
            .collect::<Vec<_>>()
            .windows(2)
            .any(|w| w[1] == "AER:" && w[0].ends_with(':') && w[0].matches(':').count() >= 2 && w[0].contains('.'));
        if aer_line || raw.contains("PCIe Bus Error:") {
            // aer.c prints "Corrected"/"Uncorrected (Fatal)"; distribution kernels and older
            // releases print "Correctable"/"Uncorrectable": both spellings are the same severity.
            let severity = if lower.contains("uncorrect") || lower.contains("fatal") {
                "uncorrected"
            } else if lower.contains("correct") {
                "corrected"
            } else {
                "unknown"
            };
            // "pcieport P: AER: ... error received: D" names the port P that reported and the device D
            // in error; other lines name the device first.
            let device = raw
                .split("received:")
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
                .or_else(|| pci_address_token(raw))
                .unwrap_or("");
            facts.push(
                Fact::new("pcie.aer_event")
                    .attr("severity", severity)
                    .attr("device", device.trim_end_matches(':'))
                    .host(&host)
                    .evidence(evidence()),
            );
            continue;
        }
        // POWER's Enhanced Error Handling freezing a partitionable endpoint ("EEH: Frozen PHB#2-PE#fd
        // detected", arch/powerpc/kernel/eeh.c eeh_dev_check_failure): the host bridge stopped the
        // device's MMIO and DMA on a PCIe error, as an uncorrected AER error would, until EEH
        // recovers (resets) it; the bridge's own register dump shows the error.
        // Each endpoint once, and at most 64: a console repeats its report, and no host has more.
        if let Some(endpoint) = raw.split_once("EEH: Frozen ").and_then(|(_, rest)| rest.split_whitespace().next()) {
            if eeh_endpoints.len() >= MAX_EEH_ENDPOINTS || !eeh_endpoints.insert(endpoint.to_string()) {
                continue;
            }
            facts.push(
                Fact::new("pcie.aer_event")
                    .attr("severity", "uncorrected")
                    .attr("device", format!("the endpoint {endpoint} (frozen by EEH)"))
                    .host(&host)
                    .evidence(evidence()),
            );
            continue;
        }
        // A process killed inside NCCL (arch/x86/mm/fault.c show_signal_msg: "comm[pid]: segfault at
        // ADDR ip ... error N in libnccl.so.2[...]"): NCCL itself crashed, whatever its peers log next.
        if (lower.contains("segfault at")
            || lower.contains("general protection")
            || lower.contains("trap invalid opcode"))
            && lower.contains(" in libnccl")
        {
            let process =
                raw.split(": segfault").next().and_then(|p| p.split_whitespace().last()).unwrap_or("a process");
            let library = raw.split(" in ").last().and_then(|r| r.split('[').next()).unwrap_or("libnccl");
            facts.push(
                Fact::new("nccl.crashed")
                    .host(&host)
                    .attr("text", format!("{process} crashed (SIGSEGV) inside {library}"))
                    .evidence(evidence()),
            );
            continue;
        }
        if let Some((threshold, temperature)) = thermal_report.then(|| thermal_threshold(raw)).flatten() {
            // Each GPU and threshold once: the driver reports every crossing.
            let device = pci_address_token(raw).unwrap_or("").to_string();
            if thermal_events.len() < 64 && thermal_events.insert((device.clone(), threshold.to_string())) {
                facts.push(
                    Fact::new("gpu.slowdown")
                        .host(&host)
                        .attr("gpu", &device)
                        .attr("reason", format!("thermal: {temperature} C hit the driver's '{threshold}' threshold"))
                        .evidence(evidence()),
                );
            }
            continue;
        }
        if let Some(fact) = memory_regions_refused(raw, &lower, &host) {
            // Repeated for every target or queue the consumer sets up: read once.
            if !std::mem::replace(&mut memory_regions_read, true) {
                facts.push(fact.evidence(evidence()));
            }
            continue;
        }
        if let Some(fact) = nic_health_line(raw, &lower, &host) {
            facts.push(fact.evidence(evidence()));
            continue;
        }
        if let Some(fact) = adapter_given_up(raw, &lower, &host) {
            facts.push(fact.evidence(evidence()));
            continue;
        }
        if let Some(found) = rdma_core_line(raw, &lower, &host) {
            facts.extend(found.into_iter().map(|fact| fact.evidence(evidence())));
            continue;
        }
        // drivers/net/ethernet/mellanox/mlx5/core/events.c port_module(): the cage reports an error
        // of its cable or module ("Port module event[error]: module 0, Cable error, High
        // Temperature"; others: "Bad or shorted cable/module", "Bus stuck (I2C or data shorted)",
        // "Power budget exceeded", "Enforce part number list"). Plugged and unplugged events,
        // without "[error]", are not faults.
        if let Some((_, what)) = raw.split_once("Port module event[error]:") {
            let nic = pci_address_token(raw).unwrap_or("");
            facts.push(
                Fact::new("optics.module_error")
                    .attr("nic", nic)
                    .attr("what", format!("the NIC reported a module error ({})", what.trim()))
                    .host(&host)
                    .evidence(evidence()),
            );
            continue;
        }
        // Intel VT-d (DMAR), AMD-Vi (IO_PAGE_FAULT) and Arm SMMU fault reports, and the NVIDIA
        // driver's own word that it could not map one GPU's memory for another through the IOMMU
        // ("NVRM: IOMMU mapping failed from GPU1 to GPU0"): peer-to-peer traffic is remapped, and
        // the peer access CUDA asks for fails.
        // VT-d's interrupt remapping reports its own faults through the same unit ("DMAR: [INTR-REMAP]
        // Request device [42:00.2] fault index 1600 [fault reason 37] Blocked a compatibility format
        // interrupt request", drivers/iommu/intel/dmar.c): an interrupt the table refused, no DMA,
        // so nothing of peer-to-peer traffic. Where the input shows only those, the unit's "DRHD:
        // handling fault status reg" lines before them are theirs too.
        let interrupt_remapping = lower.contains("dmar:")
            && (lower.contains("[intr-remap]")
                || *interrupt_faults_only.get_or_init(|| text.contains("[INTR-REMAP]") && !text.contains("[DMA ")));
        if (lower.contains("dmar:") && lower.contains("fault") && !interrupt_remapping)
            || lower.contains("io_page_fault")
            || (lower.contains("smmu") && lower.contains("fault"))
            || (raw.contains("NVRM")
                && lower.contains("iommu")
                && (lower.contains("failed") || lower.contains("fault")))
        {
            facts.push(Fact::new("iommu.fault").host(&host).evidence(evidence()));
            continue;
        }
        // drivers/pci/pci.c pcie_print_link_status: "... available PCIe bandwidth, limited by 16.0
        // GT/s PCIe x16 link at 0000:01:00.0 (capable of ...)": a link on the path trained below
        // what the device can do.
        if let Some((_, after)) = raw.split_once("limited by ") {
            if raw.contains("available PCIe bandwidth") {
                let device = pci_address_token(raw).unwrap_or("");
                let what = after.split(" (capable").next().unwrap_or(after);
                facts.push(
                    Fact::new("pcie.link_degraded")
                        .attr("device", device)
                        .attr("what", what.trim())
                        .host(&host)
                        .evidence(evidence()),
                );
                continue;
            }
        }
        // Intel's NIC drivers check the slot against what the card needs (ixgbe_check_minimum_link
        // in drivers/net/ethernet/intel/ixgbe/ixgbe_main.c; i40e and ice likewise): the link line,
        // then "This is not sufficient for optimal performance of this card."
        if slot_verdicts && raw.contains("(Speed:") && raw.contains("Width:") {
            if let Some(device) = pci_address_token(raw) {
                link_reports.insert(device.to_string(), evidence());
            }
        }
        if slot_verdicts && raw.contains("not sufficient for optimal performance") {
            let device = pci_address_token(raw).unwrap_or("");
            let report = link_reports.get(device);
            let what = report
                .and_then(|r| r.text.split("(Speed:").nth(1))
                .map(|link| format!("Speed:{}", link.trim_end().trim_end_matches(')')))
                .unwrap_or_else(|| "below what the card needs".to_string());
            let mut fact = Fact::new("pcie.link_degraded").attr("device", device).attr("what", what).host(&host);
            if let Some(report) = report {
                fact = fact.evidence(report.clone());
            }
            facts.push(fact.evidence(evidence()));
            continue;
        }
        // Kubernetes' NVIDIA device plugin: "XidCriticalError: Xid=69 on Device=GPU-..., the device
        // will go unhealthy."; its DRA driver's health monitor: "Processing event XID=43 event".
        let xid_field = raw.split_once("Xid=").or_else(|| raw.split_once("XID=")).map(|(_, rest)| rest);
        if let Some(code) = xid_field.and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next()?.parse::<u32>().ok()) {
            let (meaning, severity) = xid_meaning(code).unwrap_or(("see NVIDIA's Xid catalog", XidSeverity::Attention));
            let name = if severity == XidSeverity::Application { "gpu.xid_application" } else { "gpu.xid" };
            let device = raw.split("Device=").nth(1).and_then(|r| r.split([',', ' ']).next()).unwrap_or("unknown");
            facts.push(xid_fact(name, code, meaning, device, &host, evidence()));
            continue;
        }
        if lower.contains(": firmware version") {
            if let Some(device) = pci_address_token(raw) {
                probed.insert(device.to_string());
            }
        }
        if raw.trim_end().ends_with("Cable plugged") && raw.contains("Port module event") {
            if let Some(device) = pci_address_token(raw) {
                plugged.entry(device.to_string()).or_insert(line_no);
            }
        }
        // The bonding driver's "bond0: link status definitely down for interface eno50" (after its
        // miimon downdelay): a member link lost carrier.
        // A counter's name ("Link Down Counter : 0", mlxlink's Physical Counters) is no event.
        if lower.contains("link down") && !lower.contains("link down count")
            || lower.contains("link is down")
            || lower.contains("lost carrier")
            || lower.contains("link status definitely down for interface")
        {
            let interface = match raw.split("down for interface ").nth(1) {
                Some(rest) => rest.split([',', ' ']).next().unwrap_or("unknown").to_string(),
                None => interface_before_colon(raw),
            };
            link_downs.entry(format!("{host} {interface}")).or_default().push(evidence());
        } else if lower.ends_with("link up") || lower.contains("link is up") || lower.contains("gained carrier") {
            let interface = interface_before_colon(raw);
            link_ups.entry(format!("{host} {interface}")).or_default().push(evidence());
        }
    }
    // A link that comes up again and again went down between, whether or not the driver said so
    // (mlx5e prints "Link up" on each return but its "Link down" only at some log levels): the
    // returns after the first are flaps, as `serve` counts a return to ACTIVE. Three ups, so that a
    // driver announcing the link once at probe and once at open is not a flap.
    for (key, ups) in &link_ups {
        if ups.len() >= 3 && !link_downs.contains_key(key) {
            link_downs.insert(key.clone(), ups.iter().skip(1).cloned().collect());
        }
    }
    for (key, events) in link_downs {
        // A port whose driver start this log shows, that reports its link down once and never up:
        // the state it started in (no cable, nothing at the far end), not a link that went away.
        let initial_state = events.len() == 1
            && !link_ups.contains_key(&key)
            && pci_address_token(&events[0].text).is_some_and(|device| probed.contains(device));
        // The same port down once before a cable went into its cage, and up after: the cable being
        // plugged in, not a link that went away.
        let plugged_in = events.len() == 1
            && link_ups.contains_key(&key)
            && pci_address_token(&events[0].text)
                .and_then(|device| plugged.get(device))
                .is_some_and(|line| *line > events[0].line);
        if initial_state || plugged_in {
            continue;
        }
        let (host, interface) = key.split_once(' ').unwrap_or((crate::fact::UNKNOWN_HOST, key.as_str()));
        let mut fact = Fact::new("link.flap").host(host).attr("nic", interface).attr("count", events.len());
        for evidence in events.into_iter().take(8) {
            fact = fact.evidence(evidence);
        }
        facts.push(fact);
    }
    facts
}

/// The most endpoints frozen by EEH that one input's facts name.
const MAX_EEH_ENDPOINTS: usize = 64;

/// A PCIe error of `device` that the platform's firmware reported, with the severity of its record
/// and the record's severity line as evidence beside the device's own line.
fn firmware_aer_event(device: &str, record: Option<&(&str, Evidence)>, host: &str, evidence: Evidence) -> Fact {
    let mut fact = Fact::new("pcie.aer_event")
        .attr("severity", record.map_or("unknown", |(severity, _)| *severity))
        .attr("device", device)
        .host(host)
        .evidence(evidence);
    if let Some((_, line)) = record {
        fact = fact.evidence(line.clone());
    }
    fact
}

/// The interface a driver message names before its last colon ("mlx5_core 0000:01:00.1 eth1: Link up").
fn interface_before_colon(raw: &str) -> String {
    raw.split(':').rev().nth(1).and_then(|s| s.split_whitespace().last()).unwrap_or("unknown").to_string()
}

/// NCCL RAS report facts (format: NCCL `src/ras/client_support.cc`).
#[derive(Debug, Default)]
pub struct RasReport {
    pub facts: Vec<Fact>,
}

impl RasReport {
    pub fn is_empty(&self) -> bool {
        self.facts.is_empty()
    }
}

pub fn parse_ras(file: &str, text: &str) -> RasReport {
    let mut report = RasReport::default();
    let mut section = "";
    let mut is_ras = false;
    // A MISMATCH warning's operation counts ("7 ranks have launched up to operation 64", "Rank 7 has
    // launched up to operation 60 -- GPU 3 managed by ..."): the ranks named with fewer operations
    // than the most any rank launched are behind the others (NCCL's RAS, docs/examples/08_ras).
    let mut most_launched = 0;
    let mut launched: Vec<(u64, Fact)> = Vec::new();
    for (line_no, raw) in numbered_lines(text) {
        let trimmed = raw.trim();
        // The columns' spacing differs between NCCL releases: the words are what is looked for.
        if trimmed.split_whitespace().take(3).eq(["Group", "Comms", "Nodes"]) || trimmed.starts_with("Communicators...")
        {
            is_ras = true;
        }
        if !is_ras {
            continue;
        }
        let evidence = || Evidence::new(file, line_no, raw);
        if trimmed == "DEAD"
            || trimmed == "INCOMPLETE"
            || trimmed.ends_with(") INCOMPLETE")
            || trimmed.ends_with(") ERROR")
        {
            section = if trimmed == "DEAD" {
                "dead"
            } else if trimmed.ends_with("ERROR") {
                "error"
            } else {
                "incomplete"
            };
            if section == "error" {
                report.facts.push(Fact::new("ras.error").attr("text", trimmed).evidence(evidence()));
            }
            continue;
        }
        let operations = trimmed
            .split_once("launched up to operation ")
            .and_then(|(_, rest)| rest.split_whitespace().next()?.parse::<u64>().ok());
        if let Some(count) = operations {
            most_launched = most_launched.max(count);
        }
        if let Some(rest) = trimmed.strip_prefix("Rank ") {
            // Rank 21 -- GPU 5 managed by process 12345 on node 10.0.0.7
            let rank = rest.split_whitespace().next().and_then(|r| r.parse::<u64>().ok());
            if let Some(rank) = rank {
                let mut fact = Fact::new("ras.rank_missing").attr("rank", rank);
                if let Some(gpu) = rest.split(" GPU ").nth(1).and_then(|g| g.split_whitespace().next()) {
                    fact = fact.attr("gpu", gpu);
                }
                if let Some(host) = rest.split(" on node ").nth(1) {
                    fact = fact.attr("host", host.trim());
                }
                match operations {
                    Some(count) => launched.push((count, fact.evidence(evidence()))),
                    None => report.facts.push(fact.evidence(evidence())),
                }
            }
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("Process ") {
            // Process 12345 on node 10.0.0.7 managing GPU 5
            let name = if section == "dead" { "ras.process_dead" } else { "ras.process_missing" };
            let mut fact = Fact::new(name);
            if let Some(host) = rest.split(" on node ").nth(1).and_then(|h| h.split_whitespace().next()) {
                fact = fact.host(host);
            }
            if let Some(gpu) = rest.split(" GPU").nth(1).and_then(|g| g.split_whitespace().last()) {
                fact = fact.attr("gpu", gpu);
            }
            report.facts.push(fact.evidence(evidence()));
            continue;
        }
        let columns: Vec<&str> = trimmed.split_whitespace().collect();
        if columns.len() >= 8 && columns[0].parse::<u32>().is_ok() && columns[columns.len() - 1].contains("MISMATCH") {
            report
                .facts
                .push(Fact::new("ras.mismatch").attr("status", columns[columns.len() - 2]).evidence(evidence()));
        }
        if trimmed.starts_with("Asynchronous error") || trimmed.starts_with("Initialization error") {
            report.facts.push(Fact::new("ras.error").attr("text", trimmed).evidence(evidence()));
        }
    }
    // A rank named behind the others explains the summary's MISMATCH status: its operation counts
    // differ because it has not launched the rest yet, not because the ranks run other collectives.
    let behind: Vec<Fact> =
        launched.into_iter().filter(|(count, _)| *count < most_launched).map(|(_, fact)| fact).collect();
    if !behind.is_empty() {
        report.facts.retain(|fact| fact.name != "ras.mismatch");
        report.facts.extend(behind);
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NVIDIA/nccl docs/examples/08_ras/01_fault_detection: a rank held back while the others go on
    /// launching collectives is named behind them (and the summary's MISMATCH is its doing); a rank
    /// named ahead of the others is not.
    /// leptonai/gpud#192: gpud's event message names the Xid without the GPU.
    #[test]
    fn an_xid_an_agent_reports_detected() {
        assert_eq!(detected_xid("        \"message\": \"xid 119 detected by dmesg (47 minutes ago)\","), Some(119));
        assert_eq!(detected_xid("no xid 79 was found"), None);
        // NVIDIA/NVSentinel#1358: DCGM's diag naming the Xid it saw during a test.
        let dcgm = r#"preflight-dcgm-diag {"event": "Test fail", "test": "pcie", "error_code": 101, "detail": "Detected XID 45 for GPU 0 Please consult the documentation for details of this XID."}"#;
        assert_eq!(detected_xid(&dcgm.to_ascii_lowercase()), Some(45));
        assert_eq!(detected_xid("detected xid errors in the log"), None);
        let facts =
            parse_kernel("events.json", "        \"message\": \"xid 119 detected by dmesg (47 minutes ago)\",\n");
        assert!(facts.iter().any(|f| f.name == "gpu.lost"), "{facts:?}");
    }

    /// Neroued/ninfer#12 and nanopool/Claymore-Dual-Miner#246: the driver's calls returning
    /// NV_ERR_GPU_IS_LOST, and NVML's code 15 printed by number, are a GPU gone from the bus;
    /// another status (0x56, NV_ERR_NOT_SUPPORTED), another code, or a code without NVML is not.
    #[test]
    fn driver_calls_that_return_gpu_is_lost_are_a_lost_gpu_ninfer12() {
        let lost = |line: &str| gpu_lost_line(line, &line.to_ascii_lowercase(), "h", Evidence::new("k", 1, line));
        let rpc = "Aug 10 22:40:59 anthill kernel: NVRM: GPU0 _issueRpcAndWait: rpcSendMessage failed with status 0x0000000f for fn 10 sequence 759!";
        assert!(lost(rpc).is_some_and(|f| f.get("how").is_some_and(|h| h.contains("NV_ERR_GPU_IS_LOST"))));
        assert!(lost("NVRM: GPU0 rpcRmApiFree_GSP: GspRmFree failed: hClient=0xc1d00018; paramsStatus=0x00000000; status=0x0000000f").is_some());
        assert!(lost(
            "NVRM: refcntRequestReference_IMPL: Failed to enter state 1 (current state: 0, status: 0x00000056)"
        )
        .is_none());
        assert!(
            lost("NVRM: GPU0 rpcRmApiControl_GSP: status 0x0000000f0").is_none(),
            "a longer code is another status"
        );
        assert!(lost("NVML: cannot get current temperature, error 15").is_some());
        for other in [
            "NVML: cannot get current temperature, error 150",
            "NVML: cannot get fan speed, error 1",
            "socket error 15",
        ] {
            assert!(lost(other).is_none(), "{other}");
        }
    }

    /// Dunedan/mbp-2016-linux#60: the NVIDIA driver refuses an eGPU whose BAR the firmware left
    /// unassigned, and its probe fails: the host's PCI address space, not a GPU off the bus; the
    /// same probe failure without that line is still a lost GPU (NVIDIA/aicr#1858).
    #[test]
    fn a_probe_refused_for_a_bar_the_firmware_left_unassigned_is_no_lost_gpu() {
        let probe = "[ 5.1] nvidia: probe of 0000:0a:00.0 failed with error -1
[ 5.1] NVRM: The NVIDIA probe routine failed for 1 device(s).
";
        let bar = "[ 5.0] NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:
                           NVRM: BAR1 is 0M @ 0x0 (PCI:0000:0a:00.0)
[ 5.0] NVRM: The system BIOS may have misconfigured your GPU.
";
        let lost = |text: &str| parse_kernel("k", text).iter().any(|f| f.name == "gpu.lost");
        assert!(lost(probe));
        assert!(!lost(&format!("{bar}{probe}")));
        let modprobe = "modprobe: ERROR: could not insert 'nvidia': No such device
";
        assert!(lost(modprobe));
        assert!(!lost(&format!("{bar}{modprobe}")));
    }

    /// HabanaAI/Setup_and_Install#1: Gaudi's driver giving up on an accelerator at start.
    #[test]
    fn an_accelerator_its_driver_cannot_initialise_is_lost() {
        let line = "[   72.993269] habanalabs 0000:1a:00.0: Failed to initialize hl2. Device is NOT usable !";
        let fact = gpu_lost_line(line, &line.to_ascii_lowercase(), "h", Evidence::new("k", 1, line)).expect("lost");
        assert_eq!(fact.get("bus_id"), Some("0000:1a:00.0"));
        let other = "[ 5.0] somedriver 0000:1a:00.0: Device is NOT usable !";
        assert!(gpu_lost_line(other, &other.to_ascii_lowercase(), "h", Evidence::new("k", 1, other)).is_none());
        // ROCm/ROCm#3856 and NVIDIA/aicr#1858: a GPU its driver's probe gave up on.
        let lost = |line: &str| gpu_lost_line(line, &line.to_ascii_lowercase(), "h", Evidence::new("k", 1, line));
        // NVIDIA/open-gpu-kernel-modules#1200: the GSP's heartbeat gone.
        assert!(lost("NVRM: _kgspRpcRecvPoll: GSP RM heartbeat timed out").is_some());
        // The AER driver's short name for a Surprise Down in its list of uncorrectable errors
        // ("[ 5] SDES", drivers/pci/pcie/aer.c) is read as the AER event it is: three corpus cases
        // of it, two labelled as PCIe errors by their threads (a switch port with no GPU below it,
        // a root port the maintainer called hardware), one as a lost GPU by its collector.
        assert!(lost("pcieport 0000:00:01.1:    [5 ] SDES        (First)").is_none());
        assert!(lost("watchdog: BMC heartbeat timed out").is_none(), "another heartbeat is not the GPU's");
        let amd = "[  361.718375] amdgpu 0000:05:00.0: amdgpu: Fatal error during GPU init";
        assert!(lost(amd).is_none(), "a card that fails its start is faulty, not lost (amdgpu_init_is_the_card)");
        assert!(lost("NVRM: The NVIDIA probe routine failed for 1 device(s).").is_some());
        // Another driver's fatal init, or a probe that did not fail, is none.
        assert!(lost("[ 3.1] i915 0000:00:02.0: Fatal error during GPU init").is_none());
        assert!(lost("NVRM: loading NVIDIA UNIX x86_64 Kernel Module; probe routine succeeded").is_none());
    }

    /// BeTeP-STH/mft-scripts#2 and a Proxmox host's notes (heldout248, heldout254): mlx4_core gave
    /// a ConnectX-3 up at probe for its doorbell pages, so the host has no RDMA device; a line of
    /// the same driver that goes on is none.
    #[test]
    fn an_adapter_its_driver_gave_up_at_probe_is_no_device() {
        let given_up = |line: &str| adapter_given_up(line, &line.to_ascii_lowercase(), "h");
        for line in [
            "[    2.365098] mlx4_core 0000:01:00.0: Missing UAR, aborting",
            "[   18.024187] mlx4_core 0004:02:00.0: Failed to initialize user access region table, aborting",
        ] {
            let fact = given_up(line).expect(line);
            assert_eq!(fact.name, "rdma.device_missing");
            assert!(fact.get("text").is_some_and(|t| t.starts_with("mlx4_core gave up 0")), "{fact:?}");
        }
        assert!(given_up("[   18.009803] mlx4_core 0004:02:00.0: Only 64 UAR pages (need more than 128)").is_none());
        assert!(given_up("[    2.364990] mlx4_core: Mellanox ConnectX core driver v4.0-0").is_none());
        assert!(given_up("[    9.1] nvme 0000:5e:00.0: Missing UAR, aborting").is_none(), "another driver");
    }

    /// nouveau's thermal thresholds (a TU102 overheating under a driver that cannot run its fans,
    /// the nouveau list): a crossing upward is a GPU held down by heat, once per GPU and threshold;
    /// one that went below is the event ending, and the BIOS version line is no temperature.
    #[test]
    fn nouveau_thermal_threshold_is_a_hot_gpu() {
        let log = "[ 6.594464] nouveau 0000:0b:00.0: bios: version 90.02.42.00.14\n\
                   [ 3275.720190] nouveau 0000:0b:00.0: therm: temperature (90 C) hit the 'fanboost' threshold\n\
                   [ 3279.720190] nouveau 0000:0b:00.0: therm: temperature (90 C) hit the 'fanboost' threshold\n\
                   [ 3300.1] nouveau 0000:0b:00.0: therm: temperature (85 C) went below the 'fanboost' threshold\n";
        let facts: Vec<_> = parse_kernel("f", log).into_iter().filter(|f| f.name == "gpu.slowdown").collect();
        assert_eq!(facts.len(), 1, "{facts:?}");
        assert_eq!(facts[0].get("gpu"), Some("0000:0b:00.0"));
        assert_eq!(facts[0].get("reason"), Some("thermal: 90 C hit the driver's 'fanboost' threshold"));
    }

    /// RDMA NICs beside Mellanox's whose firmware stopped answering: Broadcom's bnxt_re and
    /// bnxt_en (a linux-nvme thread, Broadcom's knowledge base 426419), HiSilicon's hns (a
    /// linux-rdma patch); and a ConnectX whose firmware never came up (an Innova-2 board's
    /// flash). A command the firmware answered with an error is not one of them.
    #[test]
    fn firmware_that_stops_answering_is_the_nic_whoever_made_it() {
        let how = |line: &str| {
            nic_health_line(line, &line.to_ascii_lowercase(), "h").and_then(|f| f.get("how").map(str::to_string))
        };
        for line in [
            "[  102.405967] bnxt_en 0000:19:00.0: QPLIB: cmdq[0x41d]=0x3 timedout (20000)msec",
            "WARNING: bnxtnet: hwrm_send_msg:123: [vmnic0 : 0x0] HWRM cmd resp_len timeout, cmd_type 0x0(HWRM_FUNC_QSTATS) seq 1",
            "  hns3 0000:bd:00.2: [cmd]token 14e mailbox 20 timeout.",
        ] {
            assert_eq!(how(line).as_deref(), Some("the NIC's firmware stopped completing commands"), "{line}");
        }
        assert_eq!(
            how("WARNING: bnxtnet: hwrm_get_version:1: [vmnic0] VER_GET failed- FW_STATUS_REG: 0x89021").as_deref(),
            Some("the NIC's firmware crashed")
        );
        for line in [" ERR[BL1]: PSC error -60", "ERROR: Failed to load BL2R firmware."] {
            assert_eq!(how(line).as_deref(), Some("the DPU's boot firmware failed (a BlueField boot stage)"), "{line}");
        }
        assert!(how("NOTICE:  BL2: Booting BL31").is_none(), "a boot stage that went on");
        let preinit = "[  121.336005] mlx5_core 0000:03:00.0: mlx5_function_setup:1236:(pid 182): Firmware over 120000 MS in pre-initializing state, aborting";
        assert_eq!(how(preinit).as_deref(), Some("the NIC's firmware never finished initialising"));
        // openstreetmap/operations#1308 and #997 (heldout248): Intel 10 GbE adapters the operators
        // replaced.
        let ecc = "[  757.936687] ixgbe 0000:5d:00.1 eno6: Received ECC Err, initiating reset";
        assert_eq!(how(ecc).as_deref(), Some("the NIC's own memory reported ECC errors and its driver reset it"));
        let fwsm = "kernel: [994560.467844] ixgbe 0000:02:00.1: Warning firmware error detected FWSM: 0x8118801B";
        assert_eq!(how(fwsm).as_deref(), Some("the NIC's firmware reported an error in its status register (FWSM)"));
        assert_eq!(
            how("ice 0000:3b:00.0: Firmware recovery mode detected. Limiting functionality.").as_deref(),
            Some("the NIC's firmware is in recovery mode")
        );
        assert_eq!(how("ixgbe 0000:5d:00.1 eno6: NIC Link is Up 10 Gbps, Flow Control: RX/TX"), None);
        assert_eq!(how("hns3 0000:bd:00.2 hns_2: failed to set gid, ret = -11!"), None);
        // The pre-initialising firmware is the adapter's fault, not a probe that gave up on a setting.
        assert!(adapter_given_up(preinit, &preinit.to_ascii_lowercase(), "h").is_some_and(|_| how(preinit).is_some()));
        assert_eq!(how("bnxt_en 0000:19:00.0: hwrm req_type 0x21 error 0x2"), None, "an answer, not a silence");
        // 52K-0812/28gpu-cluster-rebuild's NAS (heldout174): a BCM57810 loose in its slot, its
        // firmware's mailbox silent; the interface stands where the PCI function would.
        let bnx2x = "bnx2x: [bnx2x_fw_command:3055(enp2s0f0)]FW failed to respond!";
        assert_eq!(how(bnx2x).as_deref(), Some("the NIC's firmware stopped answering its driver"));
        let fact = nic_health_line(bnx2x, &bnx2x.to_ascii_lowercase(), "h").expect("a silent firmware");
        assert_eq!(fact.get("device"), Some("enp2s0f0"));
        assert_eq!(how("bnx2x: [bnx2x_state_wait:312(enp2s0f0)]timeout waiting for state"), None);
        // The intel-wired-lan list, 2025-09 (heldout178): an I226 whose PCIe link went away.
        let detached = "Aug 28 10:04:12 titanium kernel: igc 0000:0a:00.0 enp10s0: PCIe link lost, device now detached";
        assert_eq!(how(detached).as_deref(), Some("the NIC stopped answering on PCIe"));
        assert_eq!(how("igc 0000:0a:00.0 enp10s0: NIC Link is Up 1000 Mbps Full Duplex"), None);
    }

    /// ofiwg/libfabric#7368 (DAOS): the queue-pair table full, as the memory-key table can be.
    #[test]
    fn a_queue_pair_the_firmware_has_no_room_for_is_the_nics_table() {
        let line = "[1899678.679848] mlx5_core 0000:5e:00.0: mlx5_cmd_check:824:(pid 46096): CREATE_QP(0x500) op_mod(0x0) failed, status limits exceeded(0x8), syndrome (0x19c6d6)";
        let fact = nic_health_line(line, &line.to_ascii_lowercase(), "h").expect("a table full");
        assert_eq!((fact.name.as_str(), fact.get("device")), ("rdma.registration_limit", Some("0000:5e:00.0")));
        let refused = "mlx5_core 0000:5e:00.0: mlx5_cmd_check:824:(pid 1): CREATE_QP(0x500) op_mod(0x0) failed, status bad parameter(0x3), syndrome (0x1)";
        assert!(nic_health_line(refused, &refused.to_ascii_lowercase(), "h").is_none(), "an answer to a bad request");
    }

    /// ROCm/ROCm#1320 and #3856: a card whose VBIOS or firmware tables fail at start is faulty;
    /// ROCm/ROCm#6281: beside memory windows the kernel could not place, the host is short of
    /// address space and the card is not blamed.
    #[test]
    fn amdgpu_init_is_the_card_unless_the_host_had_no_room_for_its_windows() {
        let card = "[drm:amdgpu_atom_execute_table_locked [amdgpu]] *ERROR* atombios stuck executing 9300 (len 1031, WS 12, PS 8) @ 0x93A0\namdgpu 0000:67:00.0: gpu post error!\namdgpu 0000:67:00.0: Fatal error during GPU init\n";
        let facts = parse_kernel("k", card);
        let fault = facts.iter().find(|f| f.name == "gpu.hardware_error").expect("the card");
        assert_eq!(fault.get("bus_id"), Some("0000:67:00.0"));
        assert!(facts.iter().all(|f| f.name != "gpu.lost"), "{facts:?}");
        let room = "[    4.189981] pci 0000:ca:00.0: BAR 0 [mem size 0x00004000 64bit pref]: can't assign; no space\n[    8.839735] amdgpu 0000:c3:00.0: amdgpu: Fatal error during GPU init\n[    8.841500] amdgpu: probe of 0000:c3:00.0 failed with error -12\n";
        let facts = parse_kernel("k", room);
        assert!(facts.iter().all(|f| f.name != "gpu.hardware_error" && f.name != "gpu.lost"), "{facts:?}");
        let psp = "[Mon Dec 18 08:34:36 2023] [drm:psp_hw_start [amdgpu]] *ERROR* PSP create ring failed!\n";
        assert!(parse_kernel("k", psp).iter().any(|f| f.name == "gpu.hardware_error"));
    }

    #[test]
    fn a_kernel_consumer_without_memory_regions_is_the_device_table_linux_block_423ed740() {
        // The rdma_rxe thread of linux-block/linux-rdma: SRP's initiator could not allocate its
        // memory regions from a soft-RoCE device whose table was too small.
        let srp = "ib_srp: enp1s0_rxe: ib_alloc_mr() failed. Try to reduce max_cmd_per_lun, max_sect or ch_count\n";
        let facts = parse_kernel("k", srp);
        assert_eq!((facts[0].name.as_str(), facts[0].get("device")), ("rdma.registration_limit", Some("enp1s0_rxe")));
        // The consumer's parameters, printed before, are no failure.
        let settings = "ib_srp:add_target_store: ib_srp: max_sectors = 1024; max_pages_per_mr = 512; mr_per_cmd = 2\n";
        assert!(parse_kernel("k", settings).is_empty());
    }

    #[test]
    fn an_uncorrectable_error_that_amdgpu_recovers_from_is_the_gpu_linux_601429cc() {
        // Linux commit 601429cca96b: uncorrectable errors injected into a GPU's memory; the
        // driver's RAS recovery resets the hive, and only its worker names the cause.
        let recovery = "[  557.371857] amdgpu 0000:af:00.0: amdgpu: GPU reset succeeded, trying to resume\n[  560.720959] Workqueue: amdgpu-reset-hive amdgpu_ras_do_recovery [amdgpu]\n[  560.898323]  amdgpu_ras_do_recovery+0x1b2/0x210 [amdgpu]\n";
        let facts = parse_kernel("k", recovery);
        assert_eq!(facts.iter().filter(|f| f.name == "gpu.hardware_error").count(), 1, "{facts:?}");
        let athub = "amdgpu 0000:c1:00.0: amdgpu: uncorrectable hardware error(ERREVENT_ATHUB_INTERRUPT) detected!\n";
        let fault = parse_kernel("k", athub).into_iter().find(|f| f.name == "gpu.hardware_error").expect("the GPU");
        assert_eq!(fault.get("bus_id"), Some("0000:c1:00.0"));
        // Correctable errors and a reset alone (a hung ring's) are not that.
        let corrected = "amdgpu 0000:c1:00.0: amdgpu: 3 correctable hardware errors detected in umc block, no user action is needed\namdgpu 0000:c1:00.0: amdgpu: GPU reset succeeded, trying to resume\n";
        assert!(parse_kernel("k", corrected).iter().all(|f| f.name != "gpu.hardware_error"));
        assert!(parse_kernel("k", "amdgpu 0000:c7:00.0: amdgpu: Will use PSP to load VCN firmware\n").is_empty());
    }

    #[test]
    fn ras_operation_counts_name_the_rank_behind() {
        let header = "Group     Comms      Nodes     Ranks     Ranks     Ranks   Status  Errors\n    #  in group   per comm  per node  per comm  in group\n    0         1          2         4         8         8  RUNNING  MISMATCH\n\nWarnings\n========\n\n#0-0 (78db921d1c117b4a) MISMATCH\n  Communicator ranks have different AllReduce operation counts\n";
        let behind = format!("{header}  7 ranks have launched up to operation 64\n  Rank 7 has launched up to operation 60 -- GPU 3 managed by process 1650386 on node node1\n");
        let facts = parse_ras("ras.txt", &behind).facts;
        assert_eq!(facts.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["ras.rank_missing"], "{facts:?}");
        assert_eq!(
            (facts[0].get("rank"), facts[0].get("gpu"), facts[0].get("host")),
            (Some("7"), Some("3"), Some("node1"))
        );
        let ahead = format!("{header}  7 ranks have launched up to operation 64\n  Rank 2 has launched up to operation 65 -- GPU 2 managed by process 1 on node node0\n");
        let facts = parse_ras("ras.txt", &ahead).facts;
        assert_eq!(facts.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["ras.mismatch"], "{facts:?}");
    }

    #[test]
    fn ras_dead_and_missing_processes() {
        let text = "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n    #  in group  per comm  per node  per comm  in group\n    0         1         2         8        16        16   RUNNING  MISMATCH\n\nErrors\n======\n\nDEAD\n  1 job process is considered dead (unreachable via the RAS network)\n  Process 4242 on node 10.0.0.9 managing GPU 3\n";
        let report = parse_ras("f", text);
        let names: Vec<&str> = report.facts.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["ras.mismatch", "ras.process_dead"]);
        assert_eq!(report.facts[1].get("host"), Some("10.0.0.9"));
        assert_eq!(report.facts[1].get("gpu"), Some("3"));
        assert!(parse_ras("f", "Process 1 on node x managing GPU 0\n").is_empty(), "not a RAS report");
    }

    /// One Xid table with `check` (NVIDIA's Xid catalog): codes the old triage table lacked are
    /// named, and the catalog's severity decides the fact.
    #[test]
    fn xids_follow_the_shared_catalog() {
        let line = |code: u32| format!("NVRM: Xid (PCI:0000:3b:00): {code}, pid=1, name=python, x");
        for (code, name) in [
            (38, "gpu.xid"),
            (57, "gpu.xid"),
            (140, "gpu.xid"),
            (143, "gpu.xid"),
            (154, "gpu.xid"),
            (63, "gpu.xid_attention"),
            (92, "gpu.xid_attention"),
            (94, "gpu.xid_attention"),
            (109, "gpu.xid_attention"),
            (13, "gpu.xid_application"),
        ] {
            let facts = parse_kernel("f", &line(code));
            assert_eq!(facts[0].name, name, "Xid {code}");
            let (meaning, _) = xid_meaning(code).expect("in the catalog");
            assert_eq!(facts[0].get("meaning"), Some(meaning), "Xid {code}");
        }
        let lost: Vec<String> = [79, 119, 120, 48]
            .iter()
            .filter(|code| parse_kernel("f", &line(**code)).iter().any(|f| f.name == "gpu.lost"))
            .map(|code| code.to_string())
            .collect();
        assert_eq!(lost, ["79", "119", "120"]);
    }

    /// Kernel and agent lines from the corpus (case named): Xid 45 blamed on an earlier NVLink Xid
    /// (ogkm#1150), a link trained below the device's capability (ml-engineering), the device
    /// plugin's Xid report (k8s-device-plugin#189), systemd-networkd carrier loss (azurehpc NHC).
    /// gpud's words for an Xid and for NVML's lost GPU (heldout12: leptonai/gpud#604); a line that
    /// only mentions an Xid, with no GPU address, is no event.
    #[test]
    fn a_monitoring_agents_xid_and_nvml_constant_are_a_lost_gpu() {
        let facts = parse_kernel("f", "XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00\n");
        let lost = facts.iter().find(|f| f.name == "gpu.lost").unwrap_or_else(|| panic!("{facts:?}"));
        assert!(lost.get("how").is_some_and(|how| how.starts_with("Xid 79")), "{lost:?}");
        assert!(facts.iter().any(|f| f.attrs.values().any(|v| v == "0000:ae:00")), "the GPU's address: {facts:?}");
        let facts = parse_kernel(
            "f",
            "failed to get remapped rows for GPU-ac896b35-5782-c478-4b2a-a661de07770f: failed to get device remapped rows: ERROR_GPU_IS_LOST\n",
        );
        assert_eq!(facts.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["gpu.lost"]);
        assert!(parse_kernel("f", "see the XID 79 documentation for what to do\n").is_empty());
    }

    /// tinygrad/open-gpu-kernel-modules#44 (heldout74): the P2P driver on two RTX 5090s could not map
    /// the peer GPU's BAR through the IOMMU.
    #[test]
    fn the_driver_that_cannot_map_a_peer_gpu_through_the_iommu_is_an_iommu_fault() {
        let text = "NVRM: The peer DMA address 0x1800400000 is not aligned at 0x20000000\n\
                    NVRM: IOMMU mapping failed from GPU1 to GPU0\n";
        let facts = parse_kernel("k", text);
        assert_eq!(
            facts.iter().map(|f| (f.name.as_str(), f.evidence[0].line)).collect::<Vec<_>>(),
            [("iommu.fault", 2)]
        );
        // The driver saying the IOMMU is on is no fault.
        assert!(parse_kernel("k", "NVRM: GPU 0000:01:00.0: IOMMU is enabled\n").is_empty());
    }

    #[test]
    fn kernel_forms_seen_in_real_logs() {
        let facts = parse_kernel(
            "f",
            "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149",
        );
        assert_eq!((facts[0].name.as_str(), facts[0].get("xid")), ("gpu.xid", Some("149")));
        // mej/nhc#147: NHC's Xid check names the codes it found.
        let facts = parse_kernel(
            "nhc.log",
            "Found XID errors: 63\nNode Health Check failed.  Check check_xid_errors returned 1\n",
        );
        assert_eq!(
            facts.iter().map(|f| (f.name.as_str(), f.get("xid"))).collect::<Vec<_>>()[0],
            ("gpu.xid_attention", Some("63"))
        );
        assert!(parse_kernel("f", "Found XID errors: none\n").is_empty());
        // ahelpme.com (an X520-2 in a PCIe 2.0 x4 slot): ixgbe's own verdict on the slot.
        let ixgbe = "[ 2.541813] ixgbe 0000:82:00.0: (Speed:5.0GT/s, Width: x4, Encoding Loss:20%)\n\
                     [ 2.541832] ixgbe 0000:82:00.0: This is not sufficient for optimal performance of this card.\n";
        let facts = parse_kernel("f", ixgbe);
        assert_eq!(facts.len(), 1, "{facts:?}");
        assert_eq!(facts[0].name, "pcie.link_degraded");
        assert_eq!(facts[0].get("device"), Some("0000:82:00.0"));
        assert_eq!(facts[0].get("what"), Some("Speed:5.0GT/s, Width: x4, Encoding Loss:20%"));
        assert_eq!(facts[0].evidence.len(), 2);
        let facts = parse_kernel("f", "[   10.735323] pci 0000:04:00.0: 252.048 Gb/s available PCIe bandwidth, limited by 16.0 GT/s PCIe x16 link at 0000:01:00.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)");
        assert_eq!(facts[0].name, "pcie.link_degraded");
        assert_eq!(facts[0].get("device"), Some("0000:04:00.0"));
        assert_eq!(facts[0].get("what"), Some("16.0 GT/s PCIe x16 link at 0000:01:00.0"));
        let facts = parse_kernel(
            "f",
            "2020/08/10 19:09:42 XidCriticalError: Xid=48 on Device=GPU-7540a9b3, the device will go unhealthy.",
        );
        assert_eq!((facts[0].name.as_str(), facts[0].get("bus_id")), ("gpu.xid", Some("GPU-7540a9b3")));
        // kubernetes-sigs/dra-driver-nvidia-gpu#983: the DRA driver's health monitor in capitals.
        let facts =
            parse_kernel("f", "I0409 23:33:27.290825       1 device_health.go:255] Processing event XID=43 event");
        assert_eq!((facts[0].name.as_str(), facts[0].get("xid")), ("gpu.xid_application", Some("43")));
        assert_eq!(facts[0].get("reported"), Some("Xid 43"));
        assert!(parse_kernel("f", "W0409 23:33:27.291027       1 driver.go:477] Received xid health event").is_empty());
        let facts = parse_kernel("f", "Aug 17 06:18:01 vm-0 systemd-networkd[5398]: ib6: lost carrier\nAug 17 06:18:06 vm-0 systemd-networkd[5398]: ib6: gained carrier\n");
        assert_eq!((facts[0].name.as_str(), facts[0].get("nic")), ("link.flap", Some("ib6")));
    }

    /// Lines from the corpus's kernel logs that earlier readings missed (cases named).
    #[test]
    fn nic_health_gpu_init_masked_bus_and_correctable_spelling() {
        // charm#2635: a ConnectX-6 whose firmware stopped answering.
        let facts = parse_kernel(
            "f",
            "[198542.853543] mlx5_core 0000:5e:00.0: device's health compromised - reached miss count\n[198542.918249] mlx5_core 0000:5e:00.0: synd 0x7: irisc not responding\n[198542.924637] mlx5_core 0000:5e:00.0: ext_synd 0x40d0\n",
        );
        assert_eq!(facts.len(), 2, "{facts:?}");
        assert_eq!((facts[0].name.as_str(), facts[0].get("device")), ("nic.hw_fault", Some("0000:5e:00.0")));
        // openucx/ucx#7738: firmware commands that never complete are a NIC that stopped working;
        // leptonai/gpud#1164: a command answered with a bad status is not.
        let facts = parse_kernel(
            "f",
            "[14280.445226] mlx5_core 0000:61:00.0: wait_func:1132:(pid 141181): CREATE_DCT(0x710) timeout. Will cause a leak of a command resource\n",
        );
        assert_eq!((facts[0].name.as_str(), facts[0].get("device")), ("nic.hw_fault", Some("0000:61:00.0")));
        // openucx/ucx#6264 (heldout47): the adapter's memory keys ran out.
        let mkeys = " mlx5_core 0000:41:00.0: mlx5_cmd_check:816:(pid 2305124): CREATE_MKEY(0x200) op_mod(0x0) failed, status limits exceeded(0x8), syndrome (0x18af6)\n";
        let found = parse_kernel("f", mkeys);
        assert_eq!((found[0].name.as_str(), found[0].get("device")), ("rdma.registration_limit", Some("0000:41:00.0")));
        let answered = "mlx5_core 0000:61:00.0: mlx5_cmd_out_err:838:(pid 1): ACCESS_REG(0x805) op_mod(0x1) failed, status bad parameter(0x3), syndrome (0x6b6a5e), err(-22)";
        assert!(parse_kernel("f", answered).iter().all(|f| f.name != "nic.hw_fault"));
        // illinois-scicomp machine-shop#76: a GPU the driver cannot bring up.
        let facts = parse_kernel(
            "f",
            "[Sun Apr 14 12:48:42 2024] NVRM: GPU 0000:81:00.0: RmInitAdapter failed! (0x25:0x40:1470)",
        );
        assert_eq!((facts[0].name.as_str(), facts[0].get("bus_id")), ("gpu.lost", Some("0000:81:00.0")));
        // ROCm/legacy-rocm-build#2494: amdgpu could not reset two GPUs; a reset that succeeded is
        // no loss.
        for (line, bus) in [
            ("[22344.295194] amdgpu 0000:03:00.0: amdgpu: GPU mode1 reset failed", "0000:03:00.0"),
            ("[22344.456139] amdgpu 0000:83:00.0: amdgpu: ASIC reset failed with error, -121 for drm dev, 0000:83:00.0", "0000:83:00.0"),
        ] {
            let facts = parse_kernel("f", line);
            assert_eq!((facts[0].name.as_str(), facts[0].get("bus_id")), ("gpu.lost", Some(bus)), "{line}");
        }
        // cBio/cbio-cluster#81: the driver module finds no GPU to drive on a GPU node; another
        // module's refusal is not that.
        let module = "FATAL: Error inserting nvidia (/lib/modules/2.6.32-358.18.1.el6.x86_64/kernel/drivers/video/nvidia.ko): No such device";
        assert_eq!(parse_kernel("f", module)[0].name, "gpu.lost");
        let peermem = "modprobe: ERROR: could not insert 'nvidia_peermem': No such device";
        assert!(parse_kernel("f", peermem).iter().all(|f| f.name != "gpu.lost"));
        // awslabs/amazon-eks-ami#1523: the device plugin cannot open GPU 0 through NVML.
        let nvml = "unable to retrieve list of available devices: error creating nvml.Device 0: nvml: Unknown Error, which is unexpected";
        assert_eq!(parse_kernel("f", nvml)[0].name, "gpu.lost");
        let recovered = "[22348.746284] amdgpu 0000:83:00.0: amdgpu: GPU reset succeeded, trying to resume";
        assert!(parse_kernel("f", recovered).iter().all(|f| f.name != "gpu.lost"));
        // nccl#2241: the poster masked the bus; the Xid is still the GPU's.
        let facts = parse_kernel(
            "f",
            "kern  :err   : 2025-01-25T10:34:54,859532+00:00 nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028, Data {0x000001c0, 0x00bd5c8a}",
        );
        assert_eq!(facts.len(), 1, "{facts:?}");
        assert_eq!(facts[0].name, "nvswitch.error");
        assert_eq!(facts[0].get("what"), Some("NVSwitch nvidia-nvswitch1 (PCI 0000:84:00.0) SXid 12028"));
        let facts = parse_kernel(
            "f",
            "[6781753.400584] nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up",
        );
        assert_eq!(
            facts[0].get("what"),
            Some("NVSwitch nvidia-nvswitch1 (PCI 0000:06:00.0) SXid 20034: Fatal, Link 48 LTSSM Fault Up")
        );
        assert!(parse_kernel("f", "  line: 'kern :err : nvidia-nvswitch1: SXid (PCI:0000:84:00.0):\n").is_empty());
        let facts = parse_kernel("f", "kernel: NVRM: Xid (PCI:...): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 11 (...)");
        assert_eq!((facts[0].name.as_str(), facts[0].get("xid")), ("gpu.xid", Some("145")));
        // pop-os#3363: "severity=Correctable" is the corrected severity.
        let facts = parse_kernel("f", "Sep 19 16:18:02 bubz kernel: [68183.615810] pcieport 0000:00:03.1: PCIe Bus Error: severity=Correctable, type=Data Link Layer, (Transmitter ID)");
        assert_eq!((facts[0].name.as_str(), facts[0].get("severity")), ("pcie.aer_event", Some("corrected")));
        // cubecos#733: mlx5e announcing the same link up again and again, its downs unprinted.
        let ups = "Mar 27 15:37:34 cc1 kernel: mlx5_core 0000:01:00.1 eth1: Link up\n";
        let facts = parse_kernel("f", &ups.repeat(3));
        assert_eq!(
            (facts[0].name.as_str(), facts[0].get("nic"), facts[0].get("count")),
            ("link.flap", Some("eth1"), Some("2"))
        );
        assert!(parse_kernel("f", &ups.repeat(2)).iter().all(|f| f.name != "link.flap"), "probe and open: no flap");
        // flatcar/coreos#2515: bond members losing their links.
        let facts =
            parse_kernel("f", "[ 1202.718785] bond0: link status definitely down for interface eno50, disabling it\n");
        assert_eq!((facts[0].name.as_str(), facts[0].get("nic")), ("link.flap", Some("eno50")));
        // gpud's boot dmesg: a port probed in this log whose cable is unplugged reports "Link down"
        // once; the same line without the probe, or twice, is a link that went down.
        let probe = "mlx5_core 0000:9d:00.1: firmware version: 22.38.1002\n";
        let down = "mlx5_core 0000:9d:00.1 enp157s0f1np1: Link down\n";
        assert!(parse_kernel("f", &format!("{probe}{down}")).iter().all(|f| f.name != "link.flap"));
        assert!(parse_kernel("f", down).iter().any(|f| f.name == "link.flap"));
        assert!(parse_kernel("f", &format!("{probe}{down}{down}")).iter().any(|f| f.name == "link.flap"));
        let facts = parse_kernel("f", "pcieport 0000:00:01.0: AER: Uncorrectable (Fatal) error received: 0000:01:00.0");
        assert_eq!(facts[0].get("severity"), Some("uncorrected"));
        // ROCm/ROCm#1493: firmware-first AER, the platform's CPER record and then the device's
        // registers as the kernel decodes them; without a record the severity is not known.
        let firmware = "[  340.605427] {1}[Hardware Error]: event severity: fatal\n\
                        [  340.617592] {1}[Hardware Error]:   section_type: PCIe error\n\
                        [  340.699901] amdgpu 0000:83:00.0: aer_status: 0x00008000, aer_mask: 0x00010000\n\
                        [  340.707957] Completer Abort\n";
        let aer: Vec<Fact> = parse_kernel("f", firmware).into_iter().filter(|f| f.name == "pcie.aer_event").collect();
        assert_eq!(aer.len(), 1);
        assert_eq!((aer[0].get("severity"), aer[0].get("device")), (Some("uncorrected"), Some("0000:83:00.0")));
        assert_eq!(aer[0].evidence.iter().map(|e| e.line).collect::<Vec<_>>(), [3, 1]);
        let alone = parse_kernel("f", "amdgpu 0000:83:00.0: aer_status: 0x00000001, aer_mask: 0x00000000");
        assert_eq!(alone[0].get("severity"), Some("unknown"));
    }

    /// ikawrakow/ik_llama.cpp#1596 (heldout90): the PCIe section of a firmware error record names
    /// its device on a line of its own, severity cut from the paste; lwa-issues#117 (heldout71):
    /// a device whose Status register says the data it received was poisoned (Master Data Parity
    /// Error) beside a host memory UE is not where the error arose.
    #[test]
    fn a_firmware_record_names_its_pcie_device_unless_the_data_came_poisoned() {
        let section = "[Thu Apr  9 04:50:00 2026] {3}[Hardware Error]:   device_id: 0000:01:00.0\n\
                       [Thu Apr  9 04:50:00 2026] {3}[Hardware Error]:   slot: 0\n\
                       [Thu Apr  9 04:50:00 2026] {3}[Hardware Error]:   vendor_id: 0x10de, device_id: 0x2204\n";
        let aer: Vec<Fact> = parse_kernel("f", section).into_iter().filter(|f| f.name == "pcie.aer_event").collect();
        assert_eq!(aer.len(), 1);
        assert_eq!((aer[0].get("device"), aer[0].get("severity")), (Some("0000:01:00.0"), Some("unknown")));
        let record = |status: &str| {
            format!(
                "{{1}}[Hardware Error]: event severity: recoverable\n{{1}}[Hardware Error]:   section_type: PCIe error\n\
                 {{1}}[Hardware Error]:   command: 0x0546, status: {status}\n{{1}}[Hardware Error]:   device_id: 0000:5e:00.0\n"
            )
        };
        let registers = "amdgpu 0000:5e:00.0: aer_status: 0x00004000, aer_mask: 0x00000000\n";
        let both = parse_kernel("f", &format!("{}{registers}", record("0x0010")));
        assert_eq!(both.iter().filter(|f| f.name == "pcie.aer_event").count(), 1, "one error, told once");
        let link = parse_kernel("f", &record("0x0010"));
        assert_eq!(
            link.iter().filter(|f| f.name == "pcie.aer_event").map(|f| f.get("severity")).collect::<Vec<_>>(),
            [Some("uncorrected")]
        );
        assert!(parse_kernel("f", &record("0xc110")).iter().all(|f| f.name != "pcie.aer_event"));
    }

    /// fchamicapereira/sigcomm26-tutorial-bluefield (heldout157): mlxlink's physical counters name
    /// the link's downs without one happening; a driver's own "Link down" still counts.
    #[test]
    fn a_link_down_counter_is_no_link_down_sigcomm26_bluefield() {
        let counters = "Link Down Counter                  : 0\nLink Error Recovery Counter        : 0\n";
        assert!(parse_kernel("f", &counters.repeat(3)).is_empty());
        let down = "[ 9.1] mlx5_core 0000:03:00.0 enp3s0f0np0: Link down\n[ 19.1] mlx5_core 0000:03:00.0 enp3s0f0np0: Link up\n";
        assert!(parse_kernel("f", &down.repeat(3)).iter().any(|f| f.name == "link.flap"));
    }

    /// NVIDIA/NemoClaw#8520 (heldout90): a DGX Spark's port reports its link down, the module
    /// event says a cable went in, and the link comes up: the cable being plugged in. Down after
    /// the cable went in, or down twice, is a link that went away.
    #[test]
    fn a_link_that_comes_up_after_its_cable_went_in_did_not_flap() {
        let down = "[Fri Aug  7 03:13:04] mlx5_core 0000:01:00.0 enp1s0f0np0: Link down\n";
        let plugged = "[Fri Aug  7 03:13:05] mlx5_core 0000:01:00.0: Port module event: module 0, Cable plugged\n";
        let up = "[Fri Aug  7 03:13:05] mlx5_core 0000:01:00.0 enp1s0f0np0: Link up\n";
        let flaps = |text: String| parse_kernel("f", &text).iter().filter(|f| f.name == "link.flap").count();
        assert_eq!(flaps(format!("{down}{plugged}{up}")), 0);
        assert_eq!(flaps(format!("{plugged}{up}{down}{up}")), 1);
        assert_eq!(flaps(format!("{down}{plugged}{up}{down}{up}")), 1);
        assert_eq!(flaps(format!("{down}{up}")), 1);
    }

    /// mlx5's health poller with the sensor's number inside its message, and the port module
    /// events: an error is the cable or optic, a plug event is not (health.c, events.c).
    #[test]
    fn nic_fatal_sensors_and_port_module_errors() {
        let facts = parse_kernel(
            "f",
            "[Mon Feb  5 10:00:00 2024] mlx5_core 0000:3b:00.0: mlx5_health_check_fatal_sensors:1139:(pid 0): Fatal error 1 detected\n",
        );
        assert_eq!((facts[0].name.as_str(), facts[0].get("device")), ("nic.hw_fault", Some("0000:3b:00.0")));
        let facts = parse_kernel(
            "f",
            "mlx5_core 0000:3b:00.0: port_module:251:(pid 0): Port module event[error]: module 0, Cable error, High Temperature\n",
        );
        assert_eq!((facts[0].name.as_str(), facts[0].get("nic")), ("optics.module_error", Some("0000:3b:00.0")));
        assert!(facts[0].get("what").is_some_and(|w| w.contains("High Temperature")));
        let plugged = "mlx5_core 0000:3b:00.0: Port module event: module 0, Cable plugged\n";
        assert!(parse_kernel("f", plugged).is_empty());
    }

    /// gpud's NCCL crash fixture (dmesg --decode, ISO time): a process killed inside libnccl.
    #[test]
    fn a_crash_inside_libnccl() {
        let line = "kern  :warn  : 2025-01-21T04:41:44,285060+00:00 pt_main_thread[2536443]: segfault at 7f797fe00000 ip 00007f7c7ac69996 sp 00007f7c12fd7c30 error 4 in libnccl.so.2[7f7c7ac00000+d3d3000]\n";
        let facts = parse_kernel("f", line);
        assert_eq!(facts.len(), 1, "{facts:?}");
        assert_eq!(facts[0].name, "nccl.crashed");
        assert_eq!(facts[0].get("text"), Some("pt_main_thread[2536443] crashed (SIGSEGV) inside libnccl.so.2"));
        let other = "python[1]: segfault at 0 ip 0 sp 0 error 4 in libc.so.6[7f+1]\n";
        assert!(parse_kernel("f", other).is_empty(), "a crash elsewhere is not NCCL's");
    }

    #[test]
    fn xid_from_journal_line() {
        let facts = parse_kernel("f", "Nov 22 10:00:01 node7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.");
        assert_eq!(facts[0].name, "gpu.xid");
        assert_eq!(facts[0].get("xid"), Some("79"));
        assert_eq!(facts[0].get("host"), Some("node7"));
        assert_eq!(facts[0].get("bus_id"), Some("0000:3b:00"));
    }

    /// linux-rdma list, mlx4 on kernel 5.15 (heldout121): ib_register_device gave up, so the host
    /// has no RDMA device; another line of the same driver is no such failure.
    #[test]
    fn a_device_the_rdma_core_could_not_register_is_missing_linux_rdma_mlx4_diag_counters() {
        let text = "[   43.830809] setup ports failed -12\n[   43.830814] infiniband mlx4_0: Couldn't register device with driver model\n";
        let facts = parse_kernel("f", text);
        assert_eq!(facts.len(), 1, "{facts:?}");
        assert_eq!(facts[0].name, "rdma.device_missing");
        assert!(facts[0].get("text").is_some_and(|text| text.contains("could not register mlx4_0")), "{facts:?}");
        assert_eq!(facts[0].evidence[0].line, 2);
        let registered = "[   43.9] infiniband mlx4_0: mlx4_ib_add: counter index 1 for port 2 allocated 0\n";
        assert!(parse_kernel("f", registered).is_empty());
    }

    /// linux-rdma list, ConnectX-6 with a multicast interface MAC (heldout121): the adapter refused
    /// the RoCE GID, so the port lacks it. A GID entry without a net device is another message.
    #[test]
    fn a_roce_gid_the_adapter_refused_is_missing_from_the_port_linux_rdma_multicast_mac() {
        let text = "[    9.881250] infiniband mlx5_2: add_roce_gid GID add failed port=1 index=0\n[    9.889095] __ib_cache_gid_add: unable to add gid\n";
        let facts = parse_kernel("f", text);
        let names: Vec<&str> = facts.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["rdma.roce", "rdma.gid_add_failed", "rdma.roce", "rdma.gid_add_failed"]);
        assert_eq!(
            (facts[1].get("nic"), facts[1].get("port"), facts[1].get("gid_index")),
            (Some("mlx5_2"), Some("1"), Some("0"))
        );
        let no_netdev = "infiniband mlx5_2: add_roce_gid NULL netdev port=1 index=2\n";
        assert!(parse_kernel("f", no_netdev).is_empty());
    }

    /// openucx/ucx#6049 (heldout121): 256 ranks on one node exhausted the adapter's user access
    /// regions; ibv_open_device failed with ENOMEM. The same status on a command that allocates
    /// nothing from a table is not this reading.
    #[test]
    fn user_access_regions_the_adapter_ran_out_of_are_a_registration_limit_ucx6049() {
        let text = "[2605244.823409] mlx5_core 0000:61:00.0: mlx5_cmd_check:795:(pid 53945): ALLOC_UAR(0x802) op_mod(0x0) failed, status limits exceeded(0x8), syndrome (0x5a7939)\n";
        let facts = parse_kernel("f", text);
        assert_eq!((facts[0].name.as_str(), facts[0].get("device")), ("rdma.registration_limit", Some("0000:61:00.0")));
        let other = "mlx5_core 0000:61:00.0: mlx5_cmd_check:795:(pid 1): QUERY_VPORT_STATE(0x750) op_mod(0x0) failed, status limits exceeded(0x8), syndrome (0x1)\n";
        assert!(parse_kernel("f", other).iter().all(|f| f.name != "rdma.registration_limit"));
    }

    /// linux-pci list, eight A100s in a VM whose CPU model addresses 1 TB (heldout123): three GPUs
    /// got no BAR 1, and the driver could not initialise them. A GPU whose BARs were placed and
    /// that still fails to initialise is lost.
    #[test]
    fn a_gpu_whose_bar_the_kernel_could_not_place_is_not_lost_linux_pci_a100_vm() {
        let text = "[    1.421559] pci 0000:06:00.0: BAR 1: failed to assign [mem size 0x2000000000 64bit pref]\n[    1.421562] pci 0000:06:00.0: BAR 3: no space for [mem size 0x02000000 64bit pref]\n[   26.946648] NVRM: GPU 0000:06:00.0: RmInitAdapter failed! (0x22:0xffff:662)\n";
        assert!(parse_kernel("f", text).iter().all(|f| f.name != "gpu.lost"));
        let placed = "[    1.403889] pci 0000:01:00.0: BAR 1: assigned [mem 0x2000000000-0x3fffffffff 64bit pref]\n[   26.946648] NVRM: GPU 0000:06:00.0: RmInitAdapter failed! (0x22:0xffff:662)\n";
        assert!(parse_kernel("f", placed).iter().any(|f| f.name == "gpu.lost"));
    }

    /// Kernel bugzilla 206123 and linuxppc-dev 2025-04 (heldout237): POWER's EEH freezing an
    /// endpoint is the PCIe error it stopped.
    #[test]
    fn an_endpoint_frozen_by_eeh_is_an_uncorrected_pcie_error() {
        let frozen = "[13860.157868] EEH: Frozen PHB#2-PE#fd detected\n";
        let facts = parse_kernel("f", frozen);
        assert_eq!((facts[0].name.as_str(), facts[0].get("severity")), ("pcie.aer_event", Some("uncorrected")));
        assert!(facts[0].get("device").is_some_and(|d| d.contains("PHB#2-PE#fd")));
        assert!(parse_kernel("f", "[  140.100001] EEH: PE location: N/A, PHB location: N/A\n").is_empty());
    }

    /// iommu list, 2020-11 (heldout236): VT-d's interrupt remapping faults are no DMA of a peer.
    #[test]
    fn interrupt_remapping_faults_are_not_peer_to_peer_faults() {
        let interrupts = "DMAR: DRHD: handling fault status reg 2\nDMAR: [INTR-REMAP] Request device [42:00.2] fault index 1600 [fault reason 37] Blocked a compatibility format interrupt request\n";
        assert!(parse_kernel("f", interrupts).iter().all(|f| f.name != "iommu.fault"));
        let dma = "DMAR: DRHD: handling fault status reg 2\nDMAR: [DMA Read] Request device [3b:00.0] PASID ffffffff fault addr 7f8c1000 [fault reason 06] PTE Read access is not set\n";
        assert_eq!(parse_kernel("f", dma).iter().filter(|f| f.name == "iommu.fault").count(), 2);
    }

    /// A console that repeats EEH's report, or an input of many endpoints: each endpoint once, at
    /// most 64.
    #[test]
    fn endpoints_frozen_by_eeh_are_read_once_each_and_at_most_64() {
        let repeated = "EEH: Frozen PHB#2-PE#fd detected\nEEH: Frozen PHB#2-PE#fd detected\n";
        assert_eq!(parse_kernel("f", repeated).iter().filter(|f| f.name == "pcie.aer_event").count(), 1);
        let many: String = (0..200).map(|i| format!("EEH: Frozen PHB#0-PE#{i:x} detected\n")).collect();
        assert_eq!(parse_kernel("f", &many).iter().filter(|f| f.name == "pcie.aer_event").count(), MAX_EEH_ENDPOINTS);
    }

    /// NVIDIA/nvtrust#54: the GPU's FSP did not answer the driver's boot commands; the driver's
    /// print of what it sent is not read.
    #[test]
    fn an_fsp_that_stopped_answering_is_a_lost_gpu() {
        let lost = |line: &str| gpu_lost_line(line, &line.to_ascii_lowercase(), "h", Evidence::new("k", 1, line));
        assert!(lost("[  121.802181] NVRM: kfspPollForResponse_IMPL: FSP command timed out").is_some());
        assert!(lost("[  121.802187] NVRM: kfspSendBootCommands_GH100: Sent following content to FSP: ").is_none());
    }
}
