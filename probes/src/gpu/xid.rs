//! Xid events: the NVIDIA driver's error reports in the kernel log ("NVRM: Xid (PCI:0000:3b:00): 79,
//! pid=..., GPU has fallen off the bus."). Read from `/dev/kmsg` (every record still in the ring
//! buffer, non-blocking, as `dmesg` does) through the root seam; a snapshot keeps only the driver's
//! NVRM lines, in kmsg record form, at `dev/kmsg`. Text from `dmesg`, `journalctl -k` or syslog parses
//! the same way, since only the "NVRM: Xid" part of a line is read.

use std::path::Path;

use serde::Serialize;

use crate::root::SysRoot;
use crate::{ProbeError, Reading};

/// Node path of the kernel log device (Documentation/ABI/testing/dev-kmsg).
pub const KMSG_PATH: &str = "dev/kmsg";

/// One Xid report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct XidEvent {
    /// Xid number (NVIDIA's Xid catalog).
    pub code: u32,
    /// "0000:3b:00": domain, bus and device of the GPU (the driver prints no function number).
    pub pci: String,
    /// Process id the driver attributed the event to; `None` for `pid='<unknown>'` or when absent.
    pub pid: Option<u32>,
    /// Process name (`name=`), when printed.
    pub process: Option<String>,
    /// Everything after the code, pid and name: the driver's own description and details.
    pub detail: String,
    /// Microseconds since boot (kmsg timestamp or dmesg's `[seconds]`), when known.
    pub since_boot_us: Option<u64>,
    /// The whole log line, for evidence.
    pub line: String,
}

/// The Xid events of a kernel log and how much of the log there was to read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct KernelLog {
    /// Log records (lines) read.
    pub records: usize,
    /// Records from the NVIDIA driver ("NVRM:"): the part of the log a snapshot keeps, so this count
    /// is the same live and in a capture.
    pub driver_records: usize,
    pub xids: Vec<XidEvent>,
}

/// Read the kernel log: live from /dev/kmsg (recording only the NVRM lines), or a capture's file.
pub fn read_kernel_log(root: &SysRoot) -> Reading<KernelLog> {
    let path = Path::new(KMSG_PATH);
    let text = if root.is_live() {
        let text = root.read_records(path)?;
        let kept: String = text.lines().filter(|line| line.contains("NVRM:")).map(|line| format!("{line}\n")).collect();
        root.record_synthesized(path, kept);
        text
    } else {
        root.read_string(path).map_err(|error| ProbeError { path: path.to_path_buf(), kind: error.kind })?
    };
    Ok(parse_kernel_log(&text))
}

/// Every Xid event in a kernel log, in log order; other lines are counted and skipped.
pub fn parse_kernel_log(text: &str) -> KernelLog {
    let mut log = KernelLog::default();
    for line in text.lines() {
        // kmsg continuation lines (" SUBSYSTEM=pci") carry dictionary fields, not messages.
        if line.starts_with(' ') || line.trim().is_empty() {
            continue;
        }
        log.records += 1;
        if line.contains("NVRM:") {
            log.driver_records += 1;
        }
        if let Some(event) = parse_xid_line(line) {
            log.xids.push(event);
        }
    }
    log
}

/// One Xid event from a log line, or `None` when the line is no Xid report (or a mangled one).
pub fn parse_xid_line(line: &str) -> Option<XidEvent> {
    let start = line.find("NVRM: Xid (")?;
    let rest = &line[start + "NVRM: Xid (".len()..];
    let (pci, rest) = rest.split_once("):")?;
    // Drivers before r470 printed "(0000:3b:00)"; later ones "(PCI:0000:3b:00)".
    let pci = pci.strip_prefix("PCI:").unwrap_or(pci).trim().to_ascii_lowercase();
    let bus_shaped = pci.split(':').count() == 3 && pci.chars().all(|c| c.is_ascii_hexdigit() || c == ':');
    // Posters often mask the bus ("(PCI:...)", "(PCI:xxxx:xx:xx)"): the event is still the GPU's,
    // on a bus the line no longer says.
    let masked = !pci.is_empty() && pci.chars().all(|c| matches!(c, '.' | 'x' | '*' | ':' | '#'));
    if !bus_shaped && !masked {
        return None;
    }
    let pci = if bus_shaped { pci } else { String::new() };
    let rest = rest.trim_start();
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let code: u32 = rest[..digits].parse().ok()?;
    let mut remainder = rest[digits..].trim_start_matches(',').trim_start();
    let mut pid = None;
    let mut process = None;
    loop {
        if let Some(after) = remainder.strip_prefix("pid=") {
            let (value, next) = split_field(after);
            pid = value.trim_matches('\'').parse().ok();
            remainder = next;
        } else if let Some(after) = remainder.strip_prefix("name=") {
            let (value, next) = split_field(after);
            process = Some(value.to_string()).filter(|name| name != "<unknown>");
            remainder = next;
        } else {
            break;
        }
    }
    Some(XidEvent {
        code,
        pci,
        pid,
        process,
        detail: remainder.trim().to_string(),
        since_boot_us: timestamp_us(line, start),
        line: line[start..].trim_end().to_string(),
    })
}

/// The value of a "key=value, " field and what follows it.
fn split_field(text: &str) -> (&str, &str) {
    match text.split_once(", ") {
        Some((value, next)) => (value, next),
        None => (text.trim_end_matches(','), ""),
    }
}

/// The time of a line: kmsg's "prio,seq,usec,flags;" prefix or dmesg's "[ 1234.567890]".
fn timestamp_us(line: &str, message_start: usize) -> Option<u64> {
    let prefix = &line[..message_start];
    if let Some((header, _)) = prefix.split_once(';') {
        return header.split(',').nth(2)?.parse().ok();
    }
    let inside = prefix.trim_start().strip_prefix('[')?.split_once(']')?.0.trim();
    let (seconds, fraction) = inside.split_once('.').unwrap_or((inside, "0"));
    let seconds: u64 = seconds.parse().ok()?;
    let micros: u64 = format!("{fraction:0<6}").get(..6)?.parse().ok()?;
    Some(seconds * 1_000_000 + micros)
}

/// How bad an Xid is, after NVIDIA's resolution buckets ("Analyzing Xid Errors with the Xid
/// Catalog", docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum XidSeverity {
    /// Bucket RESTART_APP with an application cause (bad address, killed process): the GPU is fine.
    Application,
    /// A recorded event the GPU handled (row remap recorded, contained error): watch it.
    Attention,
    /// RESET_GPU, RESTART_BM or CONTACT_SUPPORT: the GPU (or its link) is faulty until reset or repaired.
    Hardware,
}

/// Meaning and severity of the Xids an operator meets most; `None` for others (shown by number).
pub fn xid_meaning(code: u32) -> Option<(&'static str, XidSeverity)> {
    use XidSeverity::{Application, Attention, Hardware};
    Some(match code {
        8 => ("GPU stopped processing (channel idle timeout)", Attention),
        13 => ("graphics engine exception (usually an out-of-range access in the application)", Application),
        31 => ("GPU memory page fault (usually an illegal address in the application)", Application),
        32 => ("invalid or corrupted push buffer stream", Attention),
        38 => ("driver firmware error", Hardware),
        43 => ("GPU stopped processing: a channel was reset after an application fault", Application),
        45 => ("preemptive cleanup after earlier errors (process killed or a prior fault)", Application),
        48 => ("double-bit ECC error (DBE)", Hardware),
        56 => ("display engine error", Attention),
        57 => ("error programming video memory interface", Hardware),
        61 => ("internal micro-controller breakpoint/warning", Hardware),
        62 => ("internal micro-controller halt", Hardware),
        63 => ("ECC page retirement or row remapping recorded", Attention),
        64 => ("ECC page retirement or row remapping recording failure", Hardware),
        68 => ("video decoder (NVDEC) exception", Attention),
        69 => ("graphics engine class error", Attention),
        74 => ("NVLink error", Hardware),
        79 => ("GPU has fallen off the bus", Hardware),
        92 => ("high single-bit ECC error rate", Attention),
        94 => ("contained ECC error (affected processes were stopped)", Attention),
        95 => ("uncontained ECC error (every process on the GPU was stopped)", Hardware),
        109 => ("context switch timeout", Attention),
        119 => ("GSP RPC timeout (GPU System Processor did not answer)", Hardware),
        120 => ("GSP error", Hardware),
        121 => ("C2C link corrected error", Attention),
        137 => ("NVLink FLA privilege error (an access through NVLink was refused)", Attention),
        140 => ("unrecovered ECC error", Hardware),
        143 => ("GPU initialization failure", Hardware),
        // NVLink unit errors (NVIDIA Xid catalog, Hopper and later): the link's traffic is lost.
        144 => ("NVLink SAW error", Hardware),
        145 => ("NVLink RLW error", Hardware),
        146 => ("NVLink TLW error", Hardware),
        147 => ("NVLink TREX error", Hardware),
        148 => ("NVLink NVLPW_CTRL error", Hardware),
        149 => ("NVLink NETIR error", Hardware),
        150 => ("NVLink MSE error", Hardware),
        154 => ("GPU recovery action changed (reset or reboot required)", Hardware),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fallen_off_the_bus_from_kmsg() {
        // kmsg record form (Documentation/ABI/testing/dev-kmsg), as fabricdoctor reads it live.
        let line = "3,1622,1012345678,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1101234, name=nvc:[driver], GPU has fallen off the bus.";
        let event = parse_xid_line(line).expect("xid");
        assert_eq!(event.code, 79);
        assert_eq!(event.pci, "0000:3b:00");
        assert_eq!(event.pid, Some(1101234));
        assert_eq!(event.process.as_deref(), Some("nvc:[driver]"));
        assert_eq!(event.detail, "GPU has fallen off the bus.");
        assert_eq!(event.since_boot_us, Some(1012345678));
    }

    #[test]
    fn unknown_pid_and_dmesg_timestamps() {
        let line = "[ 7153.128406] NVRM: Xid (PCI:0000:c6:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";
        let event = parse_xid_line(line).expect("xid");
        assert_eq!((event.code, event.pid, event.process), (79, None, None));
        assert_eq!(event.since_boot_us, Some(7_153_128_406));
        assert_eq!(event.detail, "GPU has fallen off the bus.");
    }

    #[test]
    fn channel_and_fault_details_are_kept() {
        let line = "kernel: NVRM: Xid (PCI:0000:18:00): 31, pid=2465, name=python3, Ch 00000008, intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f1c_a0000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ";
        let event = parse_xid_line(line).expect("xid");
        assert_eq!(event.code, 31);
        assert_eq!(event.process.as_deref(), Some("python3"));
        assert!(event.detail.starts_with("Ch 00000008, intr 10000000. MMU Fault"), "{}", event.detail);
        assert_eq!(event.since_boot_us, None);
    }

    #[test]
    fn older_drivers_without_pid_or_pci_prefix() {
        let line = "NVRM: Xid (0000:3B:00): 62, 1afb(2a28) 00000000 00000000";
        let event = parse_xid_line(line).expect("xid");
        assert_eq!((event.code, event.pci.as_str(), event.pid), (62, "0000:3b:00", None));
        assert_eq!(event.detail, "1afb(2a28) 00000000 00000000");
        let contained =
            "NVRM: Xid (PCI:0000:0f:00): 94, pid=3520, name=pt_main_thread, Contained: SM (0x1). RST: No, D-RST: No";
        let event = parse_xid_line(contained).expect("xid");
        assert_eq!(event.code, 94);
        assert_eq!(event.detail, "Contained: SM (0x1). RST: No, D-RST: No");
    }

    #[test]
    fn other_lines_are_counted_not_parsed() {
        let log = "6,1,0,-;Linux version 6.18.44\n SUBSYSTEM=pci\n\
                   4,900,3457887,-;NVRM: Persistence mode is deprecated and will be removed in a future release.\n\
                   4,901,3457890,-;NVRM: Xid (PCI:0000:00:06): garbage\n\
                   4,902,3457999,-;NVRM: Xid (PCI:0000:00:06): 119, pid=812, name=python3, Timeout after 6s of waiting for RPC response from GPU0 GSP!\n";
        let parsed = parse_kernel_log(log);
        assert_eq!((parsed.records, parsed.driver_records), (4, 3));
        assert_eq!(parsed.xids.len(), 1);
        assert_eq!(parsed.xids[0].code, 119);
    }

    #[test]
    fn the_driver_lines_of_a_real_h100_boot_hold_no_xid() {
        // Recorded by `fabricdoctor snapshot` on the workplace's H100 machine (driver 580.159.04); the
        // third record carries kmsg's continuation flag "c".
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/gpu-h100-device/dev/kmsg");
        let log = parse_kernel_log(&std::fs::read_to_string(path).expect("fixture"));
        assert_eq!((log.records, log.driver_records, log.xids.len()), (3, 3, 0));
    }

    #[test]
    fn severities_follow_the_catalog_buckets() {
        assert_eq!(xid_meaning(79).map(|m| m.1), Some(XidSeverity::Hardware));
        assert_eq!(xid_meaning(13).map(|m| m.1), Some(XidSeverity::Application));
        assert_eq!(xid_meaning(63).map(|m| m.1), Some(XidSeverity::Attention));
        assert_eq!(xid_meaning(4242), None);
    }
}
