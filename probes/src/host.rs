//! Host settings that break RDMA and NCCL when wrong: locked-memory limit, /dev/shm size, the GPUDirect
//! peer-memory module, the IOMMU mode, the kernel command line and huge pages.

use crate::error::ParseError;
use serde::Serialize;

use crate::error::ProbeError;
use crate::root::SysRoot;
use crate::Reading;

#[derive(Debug, Clone, Serialize)]
pub struct HostSettings {
    pub hostname: Reading<String>,
    pub kernel_release: Reading<String>,
    /// RLIMIT_MEMLOCK of the probing process (`proc/self/limits`, proc(5)); `None` = unlimited.
    pub memlock: Reading<MemlockLimit>,
    pub shared_memory: Reading<SharedMemory>,
    pub modules: Reading<Vec<String>>,
    pub cmdline: Reading<String>,
    pub hugepages: Reading<HugePages>,
    pub iommu: Reading<Iommu>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MemlockLimit {
    /// Soft limit in bytes; `None` means unlimited.
    pub soft_bytes: Option<u64>,
    pub hard_bytes: Option<u64>,
}

/// The tmpfs mounted on /dev/shm, where NCCL's SHM transport and PyTorch put their segments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SharedMemory {
    pub mounted: bool,
    pub fs_type: Option<String>,
    pub size_bytes: Option<u64>,
    /// Where the size came from: "statvfs", "mount option size=", or "tmpfs default (half of MemTotal)".
    pub size_source: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HugePages {
    pub total: u64,
    pub free: u64,
    pub page_size_bytes: Option<u64>,
}

/// IOMMU state. `default_domain_types` are the distinct `sys/kernel/iommu_groups/*/type` values
/// (`Documentation/ABI/testing/sysfs-kernel-iommu_groups`): "identity" means passthrough; "DMA" and
/// "DMA-FQ" mean DMA is translated, which costs GPUDirect peer traffic an IOMMU walk (or blocks it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Iommu {
    /// Hardware IOMMUs the kernel registered (`sys/class/iommu/*`: dmar0, ivhd0, ...).
    pub units: Vec<String>,
    pub group_count: usize,
    pub default_domain_types: Vec<String>,
}

pub fn read_host_settings(root: &SysRoot) -> HostSettings {
    HostSettings {
        hostname: root.read_string("proc/sys/kernel/hostname").map(|s| s.trim().to_string()),
        kernel_release: root.read_string("proc/sys/kernel/osrelease").map(|s| s.trim().to_string()),
        memlock: read_memlock(root),
        shared_memory: read_shared_memory(root),
        modules: root.read_string("proc/modules").map(|text| parse_modules(&text)),
        cmdline: root.read_string("proc/cmdline").map(|s| s.trim().to_string()),
        hugepages: read_meminfo(root).map(|m| HugePages {
            total: m.hugepages_total.unwrap_or(0),
            free: m.hugepages_free.unwrap_or(0),
            page_size_bytes: m.hugepage_size,
        }),
        iommu: read_iommu(root),
    }
}

fn read_memlock(root: &SysRoot) -> Reading<MemlockLimit> {
    let path = "proc/self/limits";
    let text = root.read_string(path)?;
    parse_memlock(&text).map_err(|e| ProbeError::malformed(path, &text, e))
}

/// The "Max locked memory" row of `/proc/PID/limits` (fs/proc/base.c `proc_pid_limits`: a name padded
/// to 26 columns, soft and hard limits as numbers or "unlimited", then the unit).
pub fn parse_memlock(text: &str) -> Result<MemlockLimit, ParseError> {
    let row = text
        .lines()
        .find_map(|line| line.strip_prefix("Max locked memory"))
        .ok_or_else(|| ParseError::new("no \"Max locked memory\" row"))?;
    let mut fields = row.split_whitespace();
    let mut limit = || -> Result<Option<u64>, ParseError> {
        match fields.next() {
            Some("unlimited") => Ok(None),
            Some(number) => {
                number.parse().map(Some).map_err(|_| ParseError::new(format!("limit {number:?} is not a number")))
            }
            None => Err(ParseError::new("\"Max locked memory\" row has no limits")),
        }
    };
    Ok(MemlockLimit { soft_bytes: limit()?, hard_bytes: limit()? })
}

/// The fields of `/proc/meminfo` this tool uses, in bytes (the kernel prints kB = KiB).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meminfo {
    pub mem_total: Option<u64>,
    pub hugepages_total: Option<u64>,
    pub hugepages_free: Option<u64>,
    pub hugepage_size: Option<u64>,
}

pub fn parse_meminfo(text: &str) -> Result<Meminfo, ParseError> {
    let mut info = Meminfo::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else { continue };
        let mut parts = value.split_whitespace();
        let number: u64 = match parts.next().map(str::parse) {
            Some(Ok(number)) => number,
            _ => return Err(ParseError::new(format!("{key} is not a number"))),
        };
        let bytes = if parts.next() == Some("kB") { number.checked_mul(1024) } else { Some(number) };
        match key {
            "MemTotal" => info.mem_total = bytes,
            "HugePages_Total" => info.hugepages_total = Some(number),
            "HugePages_Free" => info.hugepages_free = Some(number),
            "Hugepagesize" => info.hugepage_size = bytes,
            _ => {}
        }
    }
    if info.mem_total.is_none() {
        return Err(ParseError::new("no MemTotal line"));
    }
    Ok(info)
}

fn read_meminfo(root: &SysRoot) -> Reading<Meminfo> {
    let path = "proc/meminfo";
    let text = root.read_string(path)?;
    parse_meminfo(&text).map_err(|e| ProbeError::malformed(path, &text, e))
}

/// One mount from `/proc/PID/mountinfo` (proc(5)): mount point, filesystem type, super options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub mount_point: String,
    pub fs_type: String,
    pub super_options: Vec<(String, Option<String>)>,
}

/// Parse mountinfo lines: "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue".
/// Optional fields end at the " - " separator; octal escapes in paths (\040 for space) are decoded.
pub fn parse_mountinfo(text: &str) -> Result<Vec<Mount>, ParseError> {
    let mut mounts = Vec::new();
    for (number, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let bad = || ParseError::new(format!("line {} is not a mountinfo entry", number + 1));
        let (before, after) = line.split_once(" - ").ok_or_else(bad)?;
        let mount_point = before.split_whitespace().nth(4).ok_or_else(bad)?;
        let mut after = after.split_whitespace();
        let fs_type = after.next().ok_or_else(bad)?;
        let _source = after.next();
        let super_options = mount_options(after.next().unwrap_or(""));
        mounts.push(Mount { mount_point: unescape_octal(mount_point), fs_type: fs_type.to_string(), super_options });
    }
    Ok(mounts)
}

/// Parse `/proc/mounts` lines (the fstab(5) layout, proc(5)): "tmpfs /dev/shm tmpfs rw,nosuid,size=65536k 0 0".
/// Trees made by other tools (sosreport, plain copies of /proc) often hold this file and not mountinfo.
pub fn parse_mounts(text: &str) -> Result<Vec<Mount>, ParseError> {
    let mut mounts = Vec::new();
    for (number, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let mut fields = line.split_whitespace();
        let (Some(_source), Some(mount_point), Some(fs_type)) = (fields.next(), fields.next(), fields.next()) else {
            return Err(ParseError::new(format!("line {} is not a mounts entry", number + 1)));
        };
        let super_options = mount_options(fields.next().unwrap_or(""));
        mounts.push(Mount { mount_point: unescape_octal(mount_point), fs_type: fs_type.to_string(), super_options });
    }
    Ok(mounts)
}

/// The mount table: `proc/self/mountinfo`, or `proc/mounts` where the tree holds only that.
fn read_mount_table(root: &SysRoot) -> Reading<Vec<Mount>> {
    let path = "proc/self/mountinfo";
    match root.read_string(path) {
        Ok(text) => parse_mountinfo(&text).map_err(|e| ProbeError::malformed(path, &text, e)),
        Err(error) if error.is_not_found() => {
            let fallback = "proc/mounts";
            match root.read_string(fallback) {
                Ok(text) => parse_mounts(&text).map_err(|e| ProbeError::malformed(fallback, &text, e)),
                // Name the file that was looked for first: it is the one a capture should hold.
                Err(other) if other.is_not_found() => Err(error),
                Err(other) => Err(other),
            }
        }
        Err(error) => Err(error),
    }
}

/// "rw,nosuid,size=65536k" -> [("rw", None), ("nosuid", None), ("size", Some("65536k"))], as both
/// mount tables print options.
fn mount_options(text: &str) -> Vec<(String, Option<String>)> {
    text.split(',')
        .filter(|o| !o.is_empty())
        .map(|o| match o.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (o.to_string(), None),
        })
        .collect()
}

fn unescape_octal(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() && bytes[i + 1..i + 4].iter().all(|b| (b'0'..=b'7').contains(b)) {
            let value =
                (bytes[i + 1] - b'0') as u32 * 64 + (bytes[i + 2] - b'0') as u32 * 8 + (bytes[i + 3] - b'0') as u32;
            out.push(value as u8);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// /dev/shm from the mount table: the last mount on the path wins (later mounts shadow earlier ones).
/// On the live node the size comes from statvfs; in a capture from the `size=` option, or tmpfs's
/// default of half of RAM when none was given (Documentation/filesystems/tmpfs.rst).
fn read_shared_memory(root: &SysRoot) -> Reading<SharedMemory> {
    let mounts = read_mount_table(root)?;
    let Some(mount) = mounts.iter().rev().find(|m| m.mount_point == "/dev/shm") else {
        return Ok(SharedMemory { mounted: false, fs_type: None, size_bytes: None, size_source: None });
    };
    let mut memory =
        SharedMemory { mounted: true, fs_type: Some(mount.fs_type.clone()), size_bytes: None, size_source: None };
    if root.is_live() {
        if let Ok(stat) = nix::sys::statvfs::statvfs("/dev/shm") {
            memory.size_bytes = Some(stat.blocks() * stat.fragment_size());
            memory.size_source = Some("statvfs".into());
            return Ok(memory);
        }
    }
    if let Some((_, Some(size))) = mount.super_options.iter().find(|(k, _)| k == "size") {
        memory.size_bytes = parse_tmpfs_size(size);
        memory.size_source = Some("mount option size=".into());
    } else if mount.fs_type == "tmpfs" {
        memory.size_bytes = read_meminfo(root).ok().and_then(|m| m.mem_total).map(|total| total / 2);
        memory.size_source = Some("tmpfs default (half of MemTotal)".into());
    }
    Ok(memory)
}

/// tmpfs `size=` as the kernel shows it in mountinfo: a number of bytes with an optional k/m/g suffix
/// (shmem_show_options prints kilobytes, "size=65536k").
pub fn parse_tmpfs_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, multiplier) = match text.chars().last()? {
        'k' | 'K' => (&text[..text.len() - 1], 1u64 << 10),
        'm' | 'M' => (&text[..text.len() - 1], 1 << 20),
        'g' | 'G' => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(multiplier)
}

/// Module names from `proc/modules` (first field of each line).
pub fn parse_modules(text: &str) -> Vec<String> {
    text.lines().filter_map(|line| line.split_whitespace().next()).map(str::to_string).collect()
}

fn read_iommu(root: &SysRoot) -> Reading<Iommu> {
    // A kernel with IOMMU support always has both directories (drivers/iommu/iommu-sysfs.c registers
    // the class, iommu.c creates iommu_groups), empty when no IOMMU is active; live, their absence
    // means no support. A capture without them did not look, so nothing can be concluded, unless
    // the capturing run recorded them absent on the node (a fabricdoctor snapshot does).
    let missing = ["sys/class/iommu", "sys/kernel/iommu_groups"].map(|dir| !root.exists(dir));
    if missing == [true, true]
        && !(root.known_absent("sys/class/iommu") && root.known_absent("sys/kernel/iommu_groups"))
    {
        return Err(root.absent("sys/class/iommu"));
    }
    let units = match root.read_dir("sys/class/iommu") {
        Ok(units) => units,
        Err(error) if error.is_not_found() => Vec::new(),
        Err(error) => return Err(error),
    };
    let groups = match root.read_dir("sys/kernel/iommu_groups") {
        Ok(groups) => groups,
        Err(error) if error.is_not_found() => Vec::new(),
        Err(error) => return Err(error),
    };
    let mut types = std::collections::BTreeSet::new();
    for group in &groups {
        match root.read_string(format!("sys/kernel/iommu_groups/{group}/type")) {
            Ok(kind) => {
                types.insert(kind.trim().to_string());
            }
            // `type` appeared in Linux 5.11; older kernels only have the groups.
            Err(error) if error.is_not_found() => {}
            Err(error) => return Err(error),
        }
    }
    Ok(Iommu { units, group_count: groups.len(), default_domain_types: types.into_iter().collect() })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// live == capture on a node without IOMMU support: live, the missing directories mean "no IOMMU";
    /// a fabricdoctor snapshot of that node records them absent and reads the same; a capture by
    /// another tool that lacks them cannot tell, and says so.
    #[test]
    fn a_snapshot_keeps_the_absence_of_iommu_directories() {
        let node = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(node.path().join("sys/class/net")).expect("mkdir");
        let live = SysRoot::live_at(node.path()).with_recording();
        let seen_live = read_iommu(&live).expect("live: absence is a fact");
        assert_eq!((seen_live.units.len(), seen_live.group_count), (0, 0));

        let capture = tempfile::tempdir().expect("tempdir");
        let out = capture.path().join("snap");
        crate::snapshot::write_tree(&live, &live.recording(), &out).expect("snapshot");
        let seen_captured = read_iommu(&SysRoot::captured(&out)).expect("capture: recorded absent");
        assert_eq!(seen_captured, seen_live);

        // A snapshot of that snapshot keeps the list.
        let again = SysRoot::captured(&out).with_recording();
        read_iommu(&again).expect("read");
        let out2 = capture.path().join("snap2");
        crate::snapshot::write_tree(&again, &again.recording(), &out2).expect("snapshot");
        assert_eq!(read_iommu(&SysRoot::captured(&out2)).expect("recorded absent"), seen_live);

        // Without the list (another tool's capture) the same tree is not looked at.
        std::fs::remove_file(out.join(crate::root::ABSENT_PATHS)).expect("rm");
        let error = read_iommu(&SysRoot::captured(&out)).expect_err("not in capture");
        assert!(matches!(error.kind, crate::error::ProbeErrorKind::NotInCapture), "{error}");
    }

    /// From a newcomer's run: a tree made by another tool held proc/mounts and no mountinfo, and
    /// host.devshm skipped although the size was right there.
    #[test]
    fn shared_memory_is_read_from_proc_mounts_when_mountinfo_is_absent() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("proc")).expect("proc");
        std::fs::write(
            dir.path().join("proc/mounts"),
            "proc /proc proc rw,nosuid 0 0\nshm /dev/shm tmpfs rw,nosuid,nodev,size=65536k 0 0\n",
        )
        .expect("mounts");
        let memory = read_shared_memory(&SysRoot::captured(dir.path())).expect("read from proc/mounts");
        assert!(memory.mounted);
        assert_eq!(memory.size_bytes, Some(64 << 20));
        assert!(parse_mounts("onlyone\n").is_err());
    }

    #[test]
    fn tmpfs_sizes_parse_with_suffixes() {
        assert_eq!(parse_tmpfs_size("65536k"), Some(64 << 20));
        assert_eq!(parse_tmpfs_size("1g"), Some(1 << 30));
        assert_eq!(parse_tmpfs_size("4096"), Some(4096));
        assert_eq!(parse_tmpfs_size("lots"), None);
        assert_eq!(parse_tmpfs_size("99999999999999999999g"), None);
    }

    #[test]
    fn limits_meminfo_and_mountinfo_parse_and_reject_garbage() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max locked memory         65536                unlimited            bytes     \n";
        assert_eq!(parse_memlock(limits), Ok(MemlockLimit { soft_bytes: Some(65536), hard_bytes: None }));
        // Regression: procfs-core 0.17's Limits parser panicked (subtract overflow) on such input.
        for garbage in ["garbage\n", "", "Max locked memory\n", "Max locked memory lots unlimited bytes\n"] {
            assert!(parse_memlock(garbage).is_err(), "{garbage:?}");
        }
        let meminfo =
            parse_meminfo("MemTotal:       24684092 kB\nHugePages_Total:       4\nHugepagesize:    2048 kB\n");
        assert_eq!(meminfo.map(|m| (m.mem_total, m.hugepages_total)), Ok((Some(24684092 * 1024), Some(4))));
        assert!(parse_meminfo("MemTotal: many kB\n").is_err());
        assert!(parse_meminfo("").is_err());
        let mounts = parse_mountinfo(
            "25 24 0:23 / /dev/shm rw,relatime shared:4 - tmpfs tmpfs rw,size=65536k\n\
                                      26 24 0:24 / /mnt/my\\040disk rw - ext4 /dev/sda1 rw\n",
        )
        .expect("mountinfo");
        assert_eq!(mounts[0].super_options[1], ("size".to_string(), Some("65536k".to_string())));
        assert_eq!(mounts[1].mount_point, "/mnt/my disk");
        assert!(parse_mountinfo("garbage\n").is_err());
    }

    #[test]
    fn modules_are_the_first_field() {
        let text = "nvidia_peermem 16384 0 - Live 0x0000000000000000 (POE)\nmlx5_ib 458752 0 - Live 0x0\n";
        assert_eq!(parse_modules(text), ["nvidia_peermem", "mlx5_ib"]);
    }
}
