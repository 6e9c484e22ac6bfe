//! Storage that GPU nodes reach over GPUDirect and RDMA: GPUDirect Storage's own reports
//! (`gdscheck -p`, cuFile's log, the nvidia-fs module's kernel lines) and the kernel clients of
//! file systems over InfiniBand (Lustre's LNet over o2ib).
//!
//! GPUDirect Storage moves file data straight between storage (local NVMe, or a file system over
//! RDMA) and GPU memory through the nvidia-fs module, which maps GPU pages with the same NVIDIA
//! peer-to-peer interface (nvidia_p2p_get_pages) GPUDirect RDMA uses. When nvidia-fs does not load,
//! or no storage driver registers with it, cuFile falls back to its compatibility mode: POSIX reads
//! into host memory and a copy to the GPU, the same staging GPUDirect RDMA being off costs a NIC.

use super::lines::numbered_lines;
use crate::triage::{Evidence, Fact};

/// Storage drivers `gdscheck -p` lists under DRIVER CONFIGURATION ("NVMe : Supported"). When it
/// lists this many and supports none, GPUDirect Storage has no path to any storage.
const DRIVERS_LISTED: usize = 3;

pub fn parse(file: &str, text: &str) -> Vec<Fact> {
    // Most inputs are neither: look for the words first, without copying the input.
    static WORDS: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let words = WORDS.get_or_init(|| {
        // Case-sensitive, in the forms the tools print: a case-insensitive scan of every input
        // costs several times more than finding literals.
        regex::Regex::new(r"nvidia[_-]fs|cufio|DRIVER CONFIGURATION|nvfs|o2ib|LNet|query intf")
            .expect("a fixed pattern compiles")
    });
    if !words.is_match(text) {
        return Vec::new();
    }
    let mut facts = Vec::new();
    let mut gds_off: Option<(String, Evidence)> = None;
    let mut driver_lines = (0usize, 0usize, None::<Evidence>);
    let mut in_driver_configuration = false;
    // cuFile could not tell what the file's volume is ("cufio-udev:67 udev property not found:
    // ID_FS_USAGE dm-0", "cufio-fs:759 error getting volume attributes error for device"): a
    // device-mapper or overlay volume, or a file system GPUDirect Storage does not support.
    let mut volume_unknown = false;
    for (line_no, raw) in numbered_lines(text) {
        let evidence = || Evidence::new(file, line_no, raw);
        let trimmed = raw.trim();
        let lower = trimmed.to_ascii_lowercase();
        if lower.contains("driver configuration:") {
            in_driver_configuration = true;
            continue;
        }
        // gdscheck's table: "NVMe               : Unsupported", "WekaFS : Supported"; its
        // sub-items ("--rdma library : Not Loaded") and the next section end nothing.
        if in_driver_configuration {
            if let Some((name, state)) = trimmed.split_once(" : ").or_else(|| trimmed.split_once(": ")) {
                if !name.starts_with("--") && !name.trim().is_empty() {
                    match state.trim() {
                        "Supported" => driver_lines.0 += 1,
                        "Unsupported" => {
                            driver_lines.1 += 1;
                            driver_lines.2.get_or_insert_with(evidence);
                        }
                        _ => {}
                    }
                }
            } else if trimmed.starts_with("====") && driver_lines.0 + driver_lines.1 > 0 {
                in_driver_configuration = false;
            }
        }
        if lower.contains("cufio")
            && (lower.contains("udev property not found") || lower.contains("error getting volume attributes"))
        {
            volume_unknown = true;
        }
        let reason = if lower.contains("unknown symbol nvidia_p2p_") {
            // nvidia-fs (or any module that maps GPU pages for a device) refused the NVIDIA
            // driver's peer-to-peer symbols ("nvidia_fs: Unknown symbol nvidia_p2p_get_pages (err
            // -2)"): built for another driver, or a GPL module the proprietary driver's symbols are
            // denied to.
            Some("the nvidia-fs module does not load: the NVIDIA driver's peer-to-peer symbols are refused to it")
        } else if lower.contains("failing symbol_get") && lower.contains("nvfs") {
            // A file system's client that cannot hand its DMA operations to nvidia-fs ("failing
            // symbol_get of non-GPLONLY symbol beegfs_v1_register_nvfs_dma_ops"): that file system
            // has no GPUDirect path.
            Some("the file system's client cannot register with nvidia-fs")
        } else if lower.contains("not registered with nvidia-fs") {
            // cuFile (cufio-fs): "NVMe Driver not registered with nvidia-fs!!!".
            Some("a storage driver is not registered with nvidia-fs")
        } else if lower.contains("nvidia-fs.ko driver not loaded") {
            Some("the nvidia-fs module is not loaded")
        } else if lower.contains("gds not supported or disabled")
            || (lower.contains("cufio") && lower.contains("compat"))
        {
            // cuFile's own word that it reads through host memory: "cuFileHandleRegister GDS not
            // supported or disabled by config, using cuFile posix read/write with compat mode
            // enabled", "running in compatible mode".
            Some(COMPATIBILITY_MODE)
        } else {
            None
        };
        if let Some(reason) = reason {
            gds_off.get_or_insert_with(|| (reason.to_string(), evidence()));
            continue;
        }
        // lnetctl unable to configure a network on the interface it was given ("descr: \"couldn't
        // query intf ib0\"", lnet/utils/lnetconfig/liblnetconfig.c: the interface's flags or address
        // could not be read): the IPoIB interface LNet's o2ib network needs is not there or not up
        // (stackhpc/ansible-slurm-appliance#561: lnet.service started before ib0 came up).
        if let Some(interface) =
            trimmed.split_once("couldn't query intf ").map(|(_, rest)| rest.trim_end_matches('"').trim())
        {
            if !interface.is_empty() {
                let down = super::tools::interface_down(interface, "not up: LNet could not query it", evidence());
                facts.push(down.attr("text", trimmed));
                continue;
            }
        }
        if let Some(peer) = lnet_peer_unreachable(trimmed) {
            facts.push(
                Fact::new("network.host_unreachable")
                    .attr("text", trimmed)
                    .attr("peer", peer)
                    .attr("read", "Lustre's LNet cannot reach its server over InfiniBand")
                    .evidence(evidence()),
            );
        }
    }
    // The compatibility mode of a file on a volume cuFile cannot place is that file's storage
    // path, not GPUDirect off on the host: the volume's lines stay quoted as the errors they are.
    if volume_unknown && gds_off.as_ref().is_some_and(|(reason, _)| reason == COMPATIBILITY_MODE) {
        gds_off = None;
    }
    let (supported, unsupported, first_unsupported) = driver_lines;
    if gds_off.is_none() && supported == 0 && unsupported >= DRIVERS_LISTED {
        if let Some(evidence) = first_unsupported {
            gds_off = Some(("gdscheck lists no storage driver that GPUDirect Storage supports".to_string(), evidence));
        }
    }
    if let Some((reason, evidence)) = gds_off {
        facts.insert(
            0,
            Fact::new("nccl.gdr_disabled")
                .attr("nic", format!("GPUDirect Storage's file I/O ({reason})"))
                .attr("text", evidence.text.trim().to_string())
                .evidence(evidence),
        );
    }
    facts
}

/// cuFile's own word that it reads through host memory.
const COMPATIBILITY_MODE: &str = "cuFile runs in its compatibility mode (reads through host memory)";

/// The server an LNet o2ib line says it could not reach: "kiblnd_check_conns()) Timed out tx for
/// 172.31.126.87@o2ib: 403055 seconds" (lnet/klnds/o2iblnd/o2iblnd_cb.c: messages queued to that
/// peer got no completion), or "Timed out RDMA with 10.1.0.5@o2ib".
fn lnet_peer_unreachable(line: &str) -> Option<&str> {
    let rest = line.split_once("Timed out tx for ").or_else(|| line.split_once("Timed out RDMA with "))?.1;
    let peer = rest.split([':', ' ', ',']).next()?;
    peer.contains("@o2ib").then_some(peer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(text: &str) -> Vec<(String, Option<String>)> {
        parse("f", text).into_iter().map(|f| (f.name.clone(), f.get("nic").map(str::to_string))).collect()
    }

    /// NVIDIA/gds-nvidia-fs#41 and #31, ThinkParQ/beegfs#123 (heldout75): nvidia-fs refused the
    /// driver's symbols; cuFile in compatibility mode; a gdscheck that supports no driver; a file
    /// system that cannot register with nvidia-fs.
    #[test]
    fn gpudirect_storage_that_reads_through_host_memory_is_gpudirect_off() {
        let symbols =
            "[ 3927.730583] nvidia_fs: module using GPL-only symbols uses symbols from proprietary module nvidia.\n\
                       [ 3927.730590] nvidia_fs: Unknown symbol nvidia_p2p_dma_unmap_pages (err -2)\n";
        let found = parse("k", symbols);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].name, "nccl.gdr_disabled");
        assert_eq!(found[0].evidence[0].line, 2);
        let compat = " 02-11-2023 11:42:01:926 [pid=3540949 tid=3540949] NOTICE  cufio:1036 cuFileHandleRegister GDS not supported or disabled by config, using cuFile posix read/write with compat mode enabled\n";
        assert!(named(compat)[0].1.as_deref().unwrap_or_default().contains("compatibility mode"));
        // LMCache/LMCache#795 (heldout98): the same mode for a file on a device-mapper volume
        // cuFile cannot place is that file's path, not GPUDirect off; nvidia-fs missing beside it
        // still is.
        let volume = " 09-06-2025 07:01:23:837 [pid=276 tid=454] ERROR  cufio-udev:67 udev property not found: ID_FS_USAGE dm-0\n";
        assert!(named(&format!("{volume}{compat}")).iter().all(|(name, _)| name != "nccl.gdr_disabled"));
        let unloaded = "nvidia_fs: Unknown symbol nvidia_p2p_get_pages (err -2)\n";
        assert!(named(&format!("{volume}{unloaded}")).iter().any(|(name, _)| name == "nccl.gdr_disabled"));
        let table = " =====================\n DRIVER CONFIGURATION:\n =====================\n NVMe               : Unsupported\n NVMeOF             : Unsupported\n SCSI               : Unsupported\n BeeGFS             : Unsupported\n Userspace RDMA     : Unsupported\n --Mellanox PeerDirect : Disabled\n";
        assert_eq!(named(table).len(), 1);
        // A node whose NVMe goes through GPUDirect Storage is fine whatever else it lacks.
        assert!(named(&table.replace("NVMe               : Unsupported", "NVMe               : Supported")).is_empty());
        let client = "[  417.644299] failing symbol_get of non-GPLONLY symbol beegfs_v1_register_nvfs_dma_ops.\n";
        assert_eq!(named(client).len(), 1);
        // nvidia-fs starting is no fault.
        assert!(named("[   27.026470] nvidia_fs: Initializing nvfs driver module\n").is_empty());
    }

    /// cambridge-hpc/jade14 (heldout75): the Lustre client's LNet cannot reach its servers over o2ib.
    #[test]
    fn lnet_transmits_that_time_out_are_a_server_it_cannot_reach() {
        let text = "[Mon Oct 16 09:54:43 2017] LNet: 2431:0:(o2iblnd_cb.c:3174:kiblnd_check_conns()) Timed out tx for 172.31.126.87@o2ib: 403055 seconds\n\
                    [Mon Oct 16 09:54:43 2017] LNet: 2431:0:(o2iblnd_cb.c:3174:kiblnd_check_conns()) Skipped 24 previous similar messages\n";
        let found = parse("k", text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0].name.as_str(), found[0].get("peer")),
            ("network.host_unreachable", Some("172.31.126.87@o2ib"))
        );
        // A TCP network of LNet is not this reading's.
        assert!(parse("k", "LNet: Timed out tx for 10.0.0.1@tcp: 4 seconds\n").is_empty());
    }

    /// stackhpc/ansible-slurm-appliance#561 (tests/corpus): lnetctl could not query the IPoIB
    /// interface its o2ib network is on.
    #[test]
    fn lnetctl_unable_to_query_its_interface_is_that_interface_down() {
        let text = "Feb 05 14:12:46 node lnetctl[3065]:       \tdescr: \"couldn't query intf ib0\"\n";
        let facts = parse("k", text);
        assert_eq!((facts[0].name.as_str(), facts[0].get("nic")), ("rdma.port_down", Some("ib0")));
        assert!(parse("k", "Feb 05 14:12:46 node lnetctl[3065]: add: net o2ib ib0\n").is_empty());
    }
}
