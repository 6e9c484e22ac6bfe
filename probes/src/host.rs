//! Host settings that break RDMA and NCCL when wrong: locked-memory limit, /dev/shm size, the GPUDirect
//! peer-memory module, the IOMMU mode, the kernel command line and huge pages.

use std::path::PathBuf;

use procfs_core::process::{LimitValue, Limits, MountInfos};
use procfs_core::{FromRead, Meminfo};
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
        hostname: root
            .read_string("proc/sys/kernel/hostname")
            .map(|s| s.trim().to_string()),
        kernel_release: root
            .read_string("proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string()),
        memlock: read_memlock(root),
        shared_memory: read_shared_memory(root),
        modules: root
            .read_string("proc/modules")
            .map(|text| parse_modules(&text)),
        cmdline: root
            .read_string("proc/cmdline")
            .map(|s| s.trim().to_string()),
        hugepages: read_meminfo(root).map(|m| HugePages {
            total: m.hugepages_total.unwrap_or(0),
            free: m.hugepages_free.unwrap_or(0),
            page_size_bytes: m.hugepagesize,
        }),
        iommu: read_iommu(root),
    }
}

fn read_memlock(root: &SysRoot) -> Reading<MemlockLimit> {
    let path = "proc/self/limits";
    let text = root.read_string(path)?;
    let limits =
        Limits::from_read(text.as_bytes()).map_err(|e| ProbeError::malformed(path, &text, e))?;
    let bytes = |value: LimitValue| match value {
        LimitValue::Unlimited => None,
        LimitValue::Value(v) => Some(v),
    };
    Ok(MemlockLimit {
        soft_bytes: bytes(limits.max_locked_memory.soft_limit),
        hard_bytes: bytes(limits.max_locked_memory.hard_limit),
    })
}

fn read_meminfo(root: &SysRoot) -> Reading<Meminfo> {
    let path = "proc/meminfo";
    let text = root.read_string(path)?;
    Meminfo::from_read(text.as_bytes()).map_err(|e| ProbeError::malformed(path, &text, e))
}

/// /dev/shm from the mount table: the last mount on the path wins (later mounts shadow earlier ones).
/// On the live node the size comes from statvfs; in a capture from the `size=` option, or tmpfs's
/// default of half of RAM when none was given (Documentation/filesystems/tmpfs.rst).
fn read_shared_memory(root: &SysRoot) -> Reading<SharedMemory> {
    let path = "proc/self/mountinfo";
    let text = root.read_string(path)?;
    let mounts = MountInfos::from_read(text.as_bytes())
        .map_err(|e| ProbeError::malformed(path, &text, e))?;
    let Some(mount) = mounts
        .0
        .iter()
        .rev()
        .find(|m| m.mount_point == std::path::Path::new("/dev/shm"))
    else {
        return Ok(SharedMemory {
            mounted: false,
            fs_type: None,
            size_bytes: None,
            size_source: None,
        });
    };
    let mut memory = SharedMemory {
        mounted: true,
        fs_type: Some(mount.fs_type.clone()),
        size_bytes: None,
        size_source: None,
    };
    if root.is_live() {
        if let Ok(stat) = nix::sys::statvfs::statvfs("/dev/shm") {
            memory.size_bytes = Some(stat.blocks() * stat.fragment_size());
            memory.size_source = Some("statvfs".into());
            return Ok(memory);
        }
    }
    if let Some(Some(size)) = mount.super_options.get("size") {
        memory.size_bytes = parse_tmpfs_size(size);
        memory.size_source = Some("mount option size=".into());
    } else if mount.fs_type == "tmpfs" {
        memory.size_bytes = read_meminfo(root).ok().map(|m| m.mem_total / 2);
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
    text.lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

fn read_iommu(root: &SysRoot) -> Reading<Iommu> {
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
    Ok(Iommu {
        units,
        group_count: groups.len(),
        default_domain_types: types.into_iter().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tmpfs_sizes_parse_with_suffixes() {
        assert_eq!(parse_tmpfs_size("65536k"), Some(64 << 20));
        assert_eq!(parse_tmpfs_size("1g"), Some(1 << 30));
        assert_eq!(parse_tmpfs_size("4096"), Some(4096));
        assert_eq!(parse_tmpfs_size("lots"), None);
        assert_eq!(parse_tmpfs_size("99999999999999999999g"), None);
    }

    #[test]
    fn modules_are_the_first_field() {
        let text =
            "nvidia_peermem 16384 0 - Live 0x0000000000000000 (POE)\nmlx5_ib 458752 0 - Live 0x0\n";
        assert_eq!(parse_modules(text), ["nvidia_peermem", "mlx5_ib"]);
    }
}
