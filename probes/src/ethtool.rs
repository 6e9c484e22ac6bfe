//! A netdev's driver statistics (`ethtool -S`) read through the kernel's ethtool ioctl, plus the text form
//! `ethtool -S` prints, in which a snapshot stores them so `--root` analyses see the same numbers.
//!
//! The ioctl interface is specified by `include/uapi/linux/ethtool.h` and implemented by
//! `net/ethtool/ioctl.c`; ethtool(8) reads driver statistics the same way (ethtool netlink has no request
//! for the driver-private `ETH_SS_STATS` values).

#![expect(
    unsafe_code,
    reason = "the ethtool interface is an ioctl whose argument points at a command buffer: one unsafe call \
              (ioctl_ethtool); everything else in this module is safe code"
)]

use std::fmt;
use std::os::fd::{AsRawFd, OwnedFd};

use nix::errno::Errno;
use nix::sys::socket::{socket, AddressFamily, SockFlag, SockType};

use crate::error::ParseError;

/// `ETHTOOL_GSTRINGS`: get a string set (include/uapi/linux/ethtool.h).
const ETHTOOL_GSTRINGS: u32 = 0x0000_001b;
/// `ETHTOOL_GSTATS`: get the driver's statistics values.
const ETHTOOL_GSTATS: u32 = 0x0000_001d;
/// `ETHTOOL_GSSET_INFO`: get the sizes of string sets.
const ETHTOOL_GSSET_INFO: u32 = 0x0000_0037;
/// `ETHTOOL_GMODULEINFO`: the plugged module's memory map type and size (`struct ethtool_modinfo`).
const ETHTOOL_GMODULEINFO: u32 = 0x0000_0042;
/// `ETHTOOL_GMODULEEEPROM`: the module's memory as one flat image (`struct ethtool_eeprom`).
const ETHTOOL_GMODULEEEPROM: u32 = 0x0000_0043;
/// `sizeof(struct ethtool_modinfo)`: `cmd`, `type`, `eeprom_len`, `reserved[8]` (u32 each).
const MODINFO_LEN: usize = 44;
/// `sizeof(struct ethtool_eeprom)`: `cmd`, `magic`, `offset`, `len` (u32 each); `data[]` follows.
const EEPROM_HEADER_LEN: usize = 16;
/// The largest flat image the module ioctls give: `ETH_MODULE_SFF_8636_MAX_LEN` (lower page and
/// upper pages 00h-03h). A driver claiming more is refused rather than trusted with a buffer.
pub const MAX_MODULE_IMAGE: usize = 640;
/// `enum ethtool_stringset`: `ETH_SS_STATS` names the values `ETHTOOL_GSTATS` returns.
const ETH_SS_STATS: u32 = 1;
/// `ETH_GSTRING_LEN`: every string of a set is a fixed 32-byte field, NUL-padded (not always terminated).
const ETH_GSTRING_LEN: usize = 32;
/// `IFNAMSIZ` (include/uapi/linux/if.h): interface names are at most 15 bytes plus the terminating NUL.
pub(crate) const IFNAMSIZ: usize = 16;

/// `sizeof(struct ethtool_sset_info)`: `cmd`, `reserved` (u32 each), `sset_mask` (u64); `data[]` follows.
const SSET_INFO_HEADER_LEN: usize = 16;
/// `sizeof(struct ethtool_gstrings)`: `cmd`, `string_set`, `len` (u32 each); `data[]` follows.
const GSTRINGS_HEADER_LEN: usize = 12;
/// `sizeof(struct ethtool_stats)`: `cmd`, `n_stats` (u32 each); `u64 data[]` follows.
const GSTATS_HEADER_LEN: usize = 8;

/// The most statistics accepted from one driver. mlx5 with 256 channels reports about ten thousand, so this
/// leaves room while bounding what a confused driver can make us allocate.
pub const MAX_STATISTICS: u32 = 1 << 16;

/// The header line `ethtool -S` prints before the statistics (ethtool(8), `do_gnicstats` in ethtool.c).
const STATS_TEXT_HEADER: &str = "NIC statistics:";
/// ethtool(8) indents every statistic by five spaces.
const STATS_TEXT_INDENT: &str = "     ";

/// One step of reading statistics, named as in include/uapi/linux/ethtool.h so that errors say which
/// request the kernel refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EthtoolCommand {
    /// Opening the `AF_INET`/`SOCK_DGRAM` socket the ioctl is issued on.
    OpenSocket,
    /// `ETHTOOL_GSSET_INFO`: how many `ETH_SS_STATS` strings the driver has.
    GetStringSetInfo,
    /// `ETHTOOL_GSTRINGS` of `ETH_SS_STATS`: the statistics' names.
    GetStrings,
    /// `ETHTOOL_GSTATS`: the statistics' values.
    GetStatistics,
    /// `ETHTOOL_GMODULEINFO`: the module's memory map type and size.
    GetModuleInfo,
    /// `ETHTOOL_GMODULEEEPROM`: the module's memory.
    GetModuleEeprom,
}

impl fmt::Display for EthtoolCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EthtoolCommand::OpenSocket => "socket(AF_INET, SOCK_DGRAM)",
            EthtoolCommand::GetStringSetInfo => "ETHTOOL_GSSET_INFO",
            EthtoolCommand::GetStrings => "ETHTOOL_GSTRINGS",
            EthtoolCommand::GetStatistics => "ETHTOOL_GSTATS",
            EthtoolCommand::GetModuleInfo => "ETHTOOL_GMODULEINFO",
            EthtoolCommand::GetModuleEeprom => "ETHTOOL_GMODULEEEPROM",
        })
    }
}

/// Why a netdev's ethtool statistics could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EthtoolError {
    /// The name cannot be passed to the kernel (empty, longer than 15 bytes, or holding a NUL byte).
    #[error("{interface:?} is not a network interface name: {reason}")]
    InvalidInterfaceName { interface: String, reason: &'static str },
    /// ENODEV: no interface of that name in this network namespace.
    #[error("ethtool {command} on {interface}: no such interface")]
    InterfaceNotFound { interface: String, command: EthtoolCommand },
    /// The driver has no statistics (EOPNOTSUPP, or `ETH_SS_STATS` missing from `ETHTOOL_GSSET_INFO`'s
    /// answer). Loopback, bridges and tunnels are like this: it is a fact about the driver, not a failure.
    #[error("{interface} has no ethtool statistics (its driver does not support {command})")]
    NoStatistics { interface: String, command: EthtoolCommand },
    /// EPERM or EACCES (the read commands need no capability, so a security module refused).
    #[error("ethtool {command} on {interface}: permission denied ({errno})")]
    PermissionDenied { interface: String, command: EthtoolCommand, errno: Errno },
    /// Any other errno.
    #[error("ethtool {command} on {interface} failed: {errno}")]
    Failed { interface: String, command: EthtoolCommand, errno: Errno },
    /// The driver claims more statistics than [`MAX_STATISTICS`].
    #[error("ethtool {command} on {interface}: the driver reports {count} statistics, more than the {limit} accepted")]
    TooManyStatistics { interface: String, command: EthtoolCommand, count: u64, limit: u32 },
    /// The number of statistics changed between requests on both tries (drivers size per-queue statistics
    /// by the channel count, which `ethtool -L` changes), so names and values could not be paired.
    #[error(
        "ethtool {command} on {interface} returned {returned} entries where {announced} were announced, \
         on both tries (channels reconfigured while reading?)"
    )]
    CountChanged { interface: String, command: EthtoolCommand, announced: u32, returned: u32 },
}

impl EthtoolError {
    /// True for [`EthtoolError::NoStatistics`]: the driver has none, which checks report as Skip.
    pub fn is_no_statistics(&self) -> bool {
        matches!(self, EthtoolError::NoStatistics { .. })
    }

    /// True for [`EthtoolError::InterfaceNotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, EthtoolError::InterfaceNotFound { .. })
    }

    fn from_errno(interface: &str, command: EthtoolCommand, errno: Errno) -> Self {
        let interface = interface.to_string();
        match errno {
            Errno::ENODEV => EthtoolError::InterfaceNotFound { interface, command },
            Errno::EOPNOTSUPP => EthtoolError::NoStatistics { interface, command },
            Errno::EPERM | Errno::EACCES => EthtoolError::PermissionDenied { interface, command, errno },
            _ => EthtoolError::Failed { interface, command, errno },
        }
    }
}

/// The driver statistics of `interface` (in the calling thread's network namespace), as `ethtool -S` shows
/// them: names in the driver's order, duplicates kept (some drivers repeat a name per queue).
///
/// Three ioctls, as ethtool(8) does: `ETHTOOL_GSSET_INFO` for the count, `ETHTOOL_GSTRINGS` for the names,
/// `ETHTOOL_GSTATS` for the values. A driver that resizes its statistics in between (channel count change)
/// gets one retry, then [`EthtoolError::CountChanged`].
pub fn read_stats(interface: &str) -> Result<Vec<(String, u64)>, EthtoolError> {
    let name = kernel_interface_name(interface)
        .map_err(|reason| EthtoolError::InvalidInterfaceName { interface: interface.to_string(), reason })?;
    // ethtool(8) issues its ioctls on an AF_INET datagram socket: the socket only names the network
    // namespace; SIOCETHTOOL is handled by dev_ioctl() for every protocol family.
    let socket = socket(AddressFamily::Inet, SockType::Datagram, SockFlag::SOCK_CLOEXEC, None)
        .map_err(|errno| EthtoolError::from_errno(interface, EthtoolCommand::OpenSocket, errno))?;
    read_stats_through(interface, &mut |command_buffer| ioctl_ethtool(&socket, &name, command_buffer))
}

/// The module's memory through the ioctl interface older kernels (before ethtool netlink's
/// `MODULE_EEPROM_GET`, Linux 5.13) offer: `ETHTOOL_GMODULEINFO` for the map (`ETH_MODULE_SFF_8079`
/// 256 bytes, `SFF_8472` 512: A0h then A2h, `SFF_8436`/`SFF_8636` 256 or 640: the lower page then
/// upper pages 00h-03h), then `ETHTOOL_GMODULEEEPROM` for that many bytes. Returns the map type and
/// the image. `EOPNOTSUPP` (no module, or a driver without module access) is
/// [`EthtoolError::NoStatistics`]'s sibling here: [`EthtoolError::Failed`] with that errno.
pub fn read_module_image(interface: &str) -> Result<(u32, Vec<u8>), EthtoolError> {
    let name = kernel_interface_name(interface)
        .map_err(|reason| EthtoolError::InvalidInterfaceName { interface: interface.to_string(), reason })?;
    let socket = socket(AddressFamily::Inet, SockType::Datagram, SockFlag::SOCK_CLOEXEC, None)
        .map_err(|errno| EthtoolError::from_errno(interface, EthtoolCommand::OpenSocket, errno))?;
    let failed = |command| move |errno| EthtoolError::Failed { interface: interface.to_string(), command, errno };
    let mut info = [0u8; MODINFO_LEN];
    info[..4].copy_from_slice(&ETHTOOL_GMODULEINFO.to_ne_bytes());
    ioctl_ethtool(&socket, &name, &mut info).map_err(failed(EthtoolCommand::GetModuleInfo))?;
    let kind = u32::from_ne_bytes([info[4], info[5], info[6], info[7]]);
    let length = u32::from_ne_bytes([info[8], info[9], info[10], info[11]]) as usize;
    if length == 0 || length > MAX_MODULE_IMAGE {
        return Err(EthtoolError::Failed {
            interface: interface.to_string(),
            command: EthtoolCommand::GetModuleInfo,
            errno: Errno::ERANGE,
        });
    }
    let mut eeprom = vec![0u8; EEPROM_HEADER_LEN + length];
    eeprom[..4].copy_from_slice(&ETHTOOL_GMODULEEEPROM.to_ne_bytes());
    eeprom[12..16].copy_from_slice(&(length as u32).to_ne_bytes());
    ioctl_ethtool(&socket, &name, &mut eeprom).map_err(failed(EthtoolCommand::GetModuleEeprom))?;
    Ok((kind, eeprom.split_off(EEPROM_HEADER_LEN)))
}

/// The three-request exchange and every check of the answers, over any `SIOCETHTOOL` (the kernel's, or a
/// simulated driver in the tests).
fn read_stats_through(interface: &str, ioctl: &mut EthtoolIoctl<'_>) -> Result<Vec<(String, u64)>, EthtoolError> {
    let mut reader = StatsReader { ioctl, interface };
    match reader.read_once()? {
        Attempt::Consistent(stats) => Ok(stats),
        Attempt::CountChanged { .. } => match reader.read_once()? {
            Attempt::Consistent(stats) => Ok(stats),
            Attempt::CountChanged { command, announced, returned } => {
                Err(EthtoolError::CountChanged { interface: interface.to_string(), command, announced, returned })
            }
        },
    }
}

/// `SIOCETHTOOL` on one interface: fills the command buffer, or returns the errno.
type EthtoolIoctl<'a> = dyn FnMut(&mut [u8]) -> Result<(), Errno> + 'a;

/// The NUL-padded `ifr_name` the kernel expects. Rejects what the kernel would silently misread: an
/// embedded NUL ends the name early (so "eth0\0x" would read eth0) and a 16th byte would not fit.
pub(crate) fn kernel_interface_name(interface: &str) -> Result<[u8; IFNAMSIZ], &'static str> {
    if interface.is_empty() {
        return Err("empty");
    }
    if interface.len() >= IFNAMSIZ {
        return Err("longer than 15 bytes (IFNAMSIZ)");
    }
    if interface.bytes().any(|b| b == 0) {
        return Err("contains a NUL byte");
    }
    let mut name = [0u8; IFNAMSIZ];
    name[..interface.len()].copy_from_slice(interface.as_bytes());
    Ok(name)
}

/// The outcome of one GSSET_INFO/GSTRINGS/GSTATS round.
enum Attempt {
    Consistent(Vec<(String, u64)>),
    /// `command` returned `returned` entries after GSSET_INFO (or GSTRINGS) announced `announced`.
    CountChanged {
        command: EthtoolCommand,
        announced: u32,
        returned: u32,
    },
}

struct StatsReader<'a, 'b> {
    ioctl: &'a mut EthtoolIoctl<'b>,
    interface: &'a str,
}

impl StatsReader<'_, '_> {
    fn read_once(&mut self) -> Result<Attempt, EthtoolError> {
        let Some(count) = self.statistics_count()? else {
            return Err(EthtoolError::NoStatistics {
                interface: self.interface.to_string(),
                command: EthtoolCommand::GetStringSetInfo,
            });
        };
        if count == 0 {
            // The driver has the string set but it is empty: nothing to fetch (the kernel would WARN).
            return Ok(Attempt::Consistent(Vec::new()));
        }
        self.check_bound(EthtoolCommand::GetStringSetInfo, count)?;
        let names = self.names()?;
        let names_count = u32::try_from(names.len()).unwrap_or(u32::MAX);
        if names_count != count {
            let command = EthtoolCommand::GetStrings;
            return Ok(Attempt::CountChanged { command, announced: count, returned: names_count });
        }
        let values = self.values()?;
        let values_count = u32::try_from(values.len()).unwrap_or(u32::MAX);
        if values_count != names_count {
            let command = EthtoolCommand::GetStatistics;
            return Ok(Attempt::CountChanged { command, announced: names_count, returned: values_count });
        }
        Ok(Attempt::Consistent(names.into_iter().zip(values).collect()))
    }

    /// `ETHTOOL_GSSET_INFO` for `ETH_SS_STATS`: `None` when the driver has no such set.
    ///
    /// The kernel (ethtool_get_sset_info in net/ethtool/ioctl.c) answers with the subset of the requested
    /// mask the driver supports and one u32 count per bit of that subset, after the header.
    fn statistics_count(&mut self) -> Result<Option<u32>, EthtoolError> {
        let requested_mask = 1u64 << ETH_SS_STATS;
        // Room for the header and one count: we ask for one set, the kernel writes at most one count.
        let mut buffer = vec![0u8; SSET_INFO_HEADER_LEN + 4];
        buffer[0..4].copy_from_slice(&ETHTOOL_GSSET_INFO.to_ne_bytes());
        buffer[8..16].copy_from_slice(&requested_mask.to_ne_bytes());
        self.ioctl(EthtoolCommand::GetStringSetInfo, &mut buffer)?;
        let returned_mask = u64::from_ne_bytes(array_at(&buffer, 8));
        if returned_mask & requested_mask == 0 {
            return Ok(None);
        }
        Ok(Some(u32::from_ne_bytes(array_at(&buffer, SSET_INFO_HEADER_LEN))))
    }

    /// `ETHTOOL_GSTRINGS` of `ETH_SS_STATS`: the names, in the driver's order.
    fn names(&mut self) -> Result<Vec<String>, EthtoolError> {
        let command = EthtoolCommand::GetStrings;
        let mut buffer = vec![0u8; GSTRINGS_HEADER_LEN + MAX_STATISTICS as usize * ETH_GSTRING_LEN];
        buffer[0..4].copy_from_slice(&ETHTOOL_GSTRINGS.to_ne_bytes());
        buffer[4..8].copy_from_slice(&ETH_SS_STATS.to_ne_bytes());
        self.ioctl(command, &mut buffer)?;
        // The kernel overwrites `len` with the count it actually wrote.
        let count = u32::from_ne_bytes(array_at(&buffer, 8));
        self.check_bound(command, count)?;
        let end = GSTRINGS_HEADER_LEN + count as usize * ETH_GSTRING_LEN;
        Ok(buffer[GSTRINGS_HEADER_LEN..end].chunks_exact(ETH_GSTRING_LEN).map(statistic_name).collect())
    }

    /// `ETHTOOL_GSTATS`: the values, in the order of the names.
    fn values(&mut self) -> Result<Vec<u64>, EthtoolError> {
        let command = EthtoolCommand::GetStatistics;
        let mut buffer = vec![0u8; GSTATS_HEADER_LEN + MAX_STATISTICS as usize * 8];
        buffer[0..4].copy_from_slice(&ETHTOOL_GSTATS.to_ne_bytes());
        self.ioctl(command, &mut buffer)?;
        // The kernel overwrites `n_stats` with the count it actually wrote.
        let count = u32::from_ne_bytes(array_at(&buffer, 4));
        self.check_bound(command, count)?;
        let end = GSTATS_HEADER_LEN + count as usize * 8;
        Ok(buffer[GSTATS_HEADER_LEN..end].chunks_exact(8).map(|value| u64::from_ne_bytes(array_at(value, 0))).collect())
    }

    fn check_bound(&self, command: EthtoolCommand, count: u32) -> Result<(), EthtoolError> {
        if count > MAX_STATISTICS {
            return Err(EthtoolError::TooManyStatistics {
                interface: self.interface.to_string(),
                command,
                count: count.into(),
                limit: MAX_STATISTICS,
            });
        }
        Ok(())
    }

    /// Issue `SIOCETHTOOL` with `ifr_data` pointing at `command_buffer` (a `struct ethtool_*` whose first
    /// u32 is the command).
    fn ioctl(&mut self, command: EthtoolCommand, command_buffer: &mut [u8]) -> Result<(), EthtoolError> {
        (self.ioctl)(command_buffer).map_err(|errno| EthtoolError::from_errno(self.interface, command, errno))
    }
}

/// The one unsafe call of this module.
///
/// The caller sizes `command_buffer` for the largest answer it accepts: the kernel does not read the length
/// fields we pass but writes as many entries as the driver reports at the time of the call
/// (ethtool_get_strings and ethtool_get_stats in net/ethtool/ioctl.c), so GSTRINGS and GSTATS buffers hold
/// [`MAX_STATISTICS`] entries rather than the count learnt a moment before.
fn ioctl_ethtool(socket: &OwnedFd, name: &[u8; IFNAMSIZ], command_buffer: &mut [u8]) -> Result<(), Errno> {
    // `struct ifreq` (include/uapi/linux/if.h): the name, then a union of which SIOCETHTOOL reads
    // `ifr_data`, a user pointer to the command structure.
    let mut request = libc::ifreq {
        ifr_name: name.map(|byte| byte as libc::c_char),
        ifr_ifru: libc::__c_anonymous_ifr_ifru { ifru_data: command_buffer.as_mut_ptr().cast() },
    };
    // SAFETY: `request` is a valid, live `ifreq` whose `ifr_name` is NUL-terminated (kernel_interface_name
    // leaves the 16th byte zero). `ifr_data` points at `command_buffer`, which is exclusively borrowed for
    // the call and sized for what the command writes: GSSET_INFO writes its 16-byte header and one u32 per
    // requested set (we request one). GSTRINGS and GSTATS write their header and the driver's current
    // count of entries; the callers size these buffers for MAX_STATISTICS entries, not for the count
    // GSSET_INFO reported (already checked against that bound), so a driver that grows in between still
    // fits. Only a driver jumping past 65536 statistics between two calls could overrun it: the trust
    // ethtool(8) places in the kernel, with far more headroom than its exactly-sized buffers.
    // GMODULEINFO writes exactly `struct ethtool_modinfo` (44 bytes, the buffer's size);
    // GMODULEEEPROM writes the 16-byte header and `len` bytes after it, where `len` is the value we
    // put in the header and sized the buffer for (the kernel refuses offset + len past the module's
    // eeprom_len, net/ethtool/ioctl.c ethtool_get_any_eeprom).
    let result = unsafe { libc::ioctl(socket.as_raw_fd(), libc::SIOCETHTOOL as _, &mut request) };
    if result < 0 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

/// One 32-byte `ETH_GSTRING_LEN` field: the bytes before the first NUL, or all 32 when a driver fills the
/// field completely (the kernel does not guarantee termination). Invalid UTF-8 is replaced, not rejected.
fn statistic_name(field: &[u8]) -> String {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    String::from_utf8_lossy(&field[..end]).into_owned()
}

/// `N` bytes at `offset` of a buffer this module sized itself (offsets are compile-time header layout).
fn array_at<const N: usize>(bytes: &[u8], offset: usize) -> [u8; N] {
    let mut array = [0u8; N];
    array.copy_from_slice(&bytes[offset..offset + N]);
    array
}

/// Parse `ethtool -S` output: an optional `NIC statistics:` header, then one `name: value` line per
/// statistic, indented. The value follows the *last* `": "` because some drivers put spaces, brackets or
/// colons in names (`tx_queue_0_packets`, `rx_pcs_symbol_err_phy`, cxgb4's `TxOctetsOK         `).
///
/// Rules: blank lines are skipped; lines starting with `#` in the first column are comments (ethtool never
/// prints one: its statistics are indented); an unindented line ending in `:` without `": "` is a group
/// header (`NIC statistics:`, ethtool's `--all-groups` headers); every other line must be a statistic
/// with an unsigned decimal value. Leading indentation is not part of the name; trailing spaces are.
pub fn parse_stats_text(text: &str) -> Result<Vec<(String, u64)>, ParseError> {
    let mut stats = Vec::new();
    for (index, raw_line) in text.lines().enumerate() {
        let line_number = index + 1;
        let line = raw_line.trim_end_matches(['\r', '\n']);
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        let line = line.trim_start_matches([' ', '\t']);
        let Some((name, value)) = line.rsplit_once(": ") else {
            if !indented && line.trim_end().ends_with(':') {
                continue;
            }
            return Err(ParseError::new(format!(
                "line {line_number}: expected \"name: value\" or a header ending in ':', found {line:?}"
            )));
        };
        let value = value.trim_end();
        if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ParseError::new(format!(
                "line {line_number}: value of {name:?} is not an unsigned decimal number: {value:?}"
            )));
        }
        let value = value.parse::<u64>().map_err(|error| {
            ParseError::new(format!("line {line_number}: value of {name:?} out of range ({error}): {value:?}"))
        })?;
        stats.push((name.to_string(), value));
    }
    Ok(stats)
}

/// Write statistics as `ethtool -S <interface>` prints them, after one `#` comment line naming the interface
/// and the source, so a snapshot file reads like the tool's output and [`parse_stats_text`] reads it back.
///
/// Names are written as the driver gave them, except control characters (which would break the line
/// format; no driver uses them) become U+FFFD. Leading spaces of a name cannot survive the round trip
/// either (they read as indentation); no driver's names start with one.
pub fn format_stats_text(interface: &str, stats: &[(String, u64)]) -> String {
    let mut text = format!("# ethtool -S {interface} (SIOCETHTOOL ETHTOOL_GSTRINGS/ETHTOOL_GSTATS)\n");
    text.push_str(STATS_TEXT_HEADER);
    text.push('\n');
    for (name, value) in stats {
        let name: String = name.chars().map(|c| if c.is_control() { char::REPLACEMENT_CHARACTER } else { c }).collect();
        text.push_str(STATS_TEXT_INDENT);
        text.push_str(&name);
        text.push_str(": ");
        text.push_str(&value.to_string());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(pairs: &[(&str, u64)]) -> Vec<(String, u64)> {
        pairs.iter().map(|(name, value)| (name.to_string(), *value)).collect()
    }

    #[test]
    fn parses_ethtool_output_with_and_without_header() {
        let with_header = "NIC statistics:\n     rx_packets: 12\n     tx_packets: 0\n";
        assert_eq!(parse_stats_text(with_header).expect("parse"), stats(&[("rx_packets", 12), ("tx_packets", 0)]));
        let without_header = "     rx_packets: 12\ntx_packets: 7\n";
        assert_eq!(parse_stats_text(without_header).expect("parse"), stats(&[("rx_packets", 12), ("tx_packets", 7)]));
    }

    #[test]
    fn value_follows_the_last_colon_space_and_names_keep_spaces_brackets_and_duplicates() {
        let text = "NIC statistics:\n     TxOctetsOK         : 5\n     rx_queue[0]: packets: 9\n     \
                    peer_ifindex: 3\n     peer_ifindex: 4\n";
        assert_eq!(
            parse_stats_text(text).expect("parse"),
            stats(&[("TxOctetsOK         ", 5), ("rx_queue[0]: packets", 9), ("peer_ifindex", 3), ("peer_ifindex", 4)])
        );
    }

    #[test]
    fn all_groups_headers_comments_blank_lines_and_crlf_are_accepted() {
        let text = "# captured\r\nNIC statistics:\r\n     rx_bytes: 1\r\n\r\nStandard stats for eth0:\r\n\
                    eth-mac-FramesTransmittedOK: 2\r\n";
        assert_eq!(
            parse_stats_text(text).expect("parse"),
            stats(&[("rx_bytes", 1), ("eth-mac-FramesTransmittedOK", 2)])
        );
    }

    #[test]
    fn u64_max_survives() {
        let text = format!("     rx_bits_phy: {}\n", u64::MAX);
        assert_eq!(parse_stats_text(&text).expect("parse"), stats(&[("rx_bits_phy", u64::MAX)]));
    }

    #[test]
    fn malformed_lines_are_errors_naming_the_line() {
        for (text, needle) in [
            ("NIC statistics:\n     rx_packets: twelve\n", "line 2"),
            ("     rx_packets:12\n", "line 1"),
            ("     rx_packets: -1\n", "not an unsigned decimal"),
            ("     rx_packets: +1\n", "not an unsigned decimal"),
            ("     rx_packets: 1.5\n", "not an unsigned decimal"),
            ("     rx_packets: 18446744073709551616\n", "out of range"),
            ("     rx_packets: \n", "not an unsigned decimal"),
            ("     rx_packets:\n", "line 1"),
            ("no stats available\n", "line 1"),
        ] {
            let error = parse_stats_text(text).expect_err(text);
            assert!(error.reason.contains(needle), "{text:?}: {error}");
        }
    }

    #[test]
    fn empty_text_is_no_statistics_not_an_error() {
        assert_eq!(parse_stats_text("").expect("parse"), Vec::new());
        assert_eq!(parse_stats_text("NIC statistics:\n").expect("parse"), Vec::new());
    }

    #[test]
    fn format_writes_ethtool_layout_and_round_trips() {
        let original = stats(&[
            ("peer_ifindex", 7),
            ("rx_queue_0_xdp_packets", 0),
            ("TxOctetsOK         ", 5),
            ("rx_prio3_pause", u64::MAX),
            ("odd: name", 1),
            ("#hash", 2),
            ("[bracket] name", 3),
            ("peer_ifindex", 7),
            ("", 9),
        ]);
        let text = format_stats_text("veth0", &original);
        assert!(text.starts_with("# ethtool -S veth0 (SIOCETHTOOL"), "{text}");
        assert!(text.contains("\nNIC statistics:\n     peer_ifindex: 7\n     rx_queue_0_xdp_packets: 0\n"), "{text}");
        assert_eq!(parse_stats_text(&text).expect("parse"), original);
        assert_eq!(parse_stats_text(&format_stats_text("lo", &[])).expect("parse"), Vec::new());
    }

    #[test]
    fn control_characters_in_names_cannot_break_the_format() {
        let text = format_stats_text("eth0", &stats(&[("bad\nname: 5", 1), ("ok", 2)]));
        assert_eq!(parse_stats_text(&text).expect("parse"), stats(&[("bad\u{fffd}name: 5", 1), ("ok", 2)]));
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        // A deterministic sweep over awkward inputs: truncations of a valid file and byte soup.
        let valid = format_stats_text("eth0", &stats(&[("rx_packets", 12), ("tx: x", 3)]));
        for end in 0..=valid.len() {
            if valid.is_char_boundary(end) {
                let _ = parse_stats_text(&valid[..end]);
            }
        }
        for text in [":", ": ", " : ", "\t: 1", ":\n:", "a: 1: ", " \u{0}: 1", "::::", "NIC statistics: 5 x"] {
            let _ = parse_stats_text(text);
        }
    }

    #[test]
    fn names_are_cut_at_the_first_nul_or_taken_whole_and_lossily() {
        let mut field = [0u8; ETH_GSTRING_LEN];
        field[..10].copy_from_slice(b"rx_packets");
        assert_eq!(statistic_name(&field), "rx_packets");
        let full = [b'x'; ETH_GSTRING_LEN];
        assert_eq!(statistic_name(&full), "x".repeat(32));
        let mut invalid = [0u8; ETH_GSTRING_LEN];
        invalid[..3].copy_from_slice(&[b'a', 0xff, b'b']);
        assert_eq!(statistic_name(&invalid), "a\u{fffd}b");
    }

    /// A driver behind a simulated `SIOCETHTOOL` that answers as net/ethtool/ioctl.c does: it ignores the
    /// lengths we pass and writes as many entries as the driver reports at that moment. Writing past our
    /// buffer would panic here (slice bounds), so these tests also check the buffer sizes.
    struct SimulatedDriver {
        /// The statistics count at each successive request; the last one repeats.
        counts: Vec<u32>,
        requests: usize,
        has_statistics: bool,
        statistics_errno: Option<Errno>,
    }

    impl SimulatedDriver {
        fn new(counts: &[u32]) -> Self {
            SimulatedDriver { counts: counts.to_vec(), requests: 0, has_statistics: true, statistics_errno: None }
        }

        fn name(index: usize) -> Vec<u8> {
            match index % 3 {
                0 => b"rx_packets".to_vec(),
                // A field filled completely, without a terminating NUL.
                1 => vec![b'x'; ETH_GSTRING_LEN],
                _ => format!("tx_queue_{index}_packets").into_bytes(),
            }
        }

        fn ioctl(&mut self, buffer: &mut [u8]) -> Result<(), Errno> {
            let count = self.counts[self.requests.min(self.counts.len() - 1)];
            self.requests += 1;
            let put = |buffer: &mut [u8], offset: usize, bytes: &[u8]| {
                buffer[offset..offset + bytes.len()].copy_from_slice(bytes);
            };
            match u32::from_ne_bytes(array_at(buffer, 0)) {
                ETHTOOL_GSSET_INFO => {
                    let requested = u64::from_ne_bytes(array_at(buffer, 8));
                    let supported = if self.has_statistics { requested & (1 << ETH_SS_STATS) } else { 0 };
                    put(buffer, 8, &supported.to_ne_bytes());
                    if supported != 0 {
                        put(buffer, SSET_INFO_HEADER_LEN, &count.to_ne_bytes());
                    }
                }
                ETHTOOL_GSTRINGS => {
                    if !self.has_statistics {
                        return Err(Errno::EOPNOTSUPP);
                    }
                    put(buffer, 8, &count.to_ne_bytes());
                    for index in 0..count as usize {
                        let mut field = [0u8; ETH_GSTRING_LEN];
                        let name = Self::name(index);
                        field[..name.len()].copy_from_slice(&name);
                        put(buffer, GSTRINGS_HEADER_LEN + index * ETH_GSTRING_LEN, &field);
                    }
                }
                ETHTOOL_GSTATS => {
                    if let Some(errno) = self.statistics_errno {
                        return Err(errno);
                    }
                    put(buffer, 4, &count.to_ne_bytes());
                    for index in 0..count as usize {
                        put(buffer, GSTATS_HEADER_LEN + index * 8, &(index as u64 * 10 + 1).to_ne_bytes());
                    }
                }
                other => panic!("unexpected ethtool command {other:#x}"),
            }
            Ok(())
        }

        fn read(&mut self) -> Result<Vec<(String, u64)>, EthtoolError> {
            read_stats_through("eth0", &mut |buffer| self.ioctl(buffer))
        }
    }

    #[test]
    fn names_and_values_are_paired_in_driver_order_with_duplicates_and_unterminated_names() {
        let mut driver = SimulatedDriver::new(&[4]);
        let expected =
            stats(&[("rx_packets", 1), (&"x".repeat(32), 11), ("tx_queue_2_packets", 21), ("rx_packets", 31)]);
        assert_eq!(driver.read().expect("read"), expected);
        assert_eq!(driver.requests, 3);
    }

    #[test]
    fn a_count_that_changes_once_is_retried() {
        // GSSET_INFO says 3, GSTRINGS returns 4 (channels added); the retry sees 4 everywhere.
        let mut driver = SimulatedDriver::new(&[3, 4]);
        assert_eq!(driver.read().expect("read").len(), 4);
        assert_eq!(driver.requests, 5);
    }

    #[test]
    fn a_count_that_keeps_changing_is_an_error() {
        let mut driver = SimulatedDriver::new(&[1, 2, 3, 4, 5, 6]);
        assert_eq!(
            driver.read(),
            Err(EthtoolError::CountChanged {
                interface: "eth0".into(),
                command: EthtoolCommand::GetStrings,
                announced: 3,
                returned: 4
            })
        );
        // Names and values differing in number is caught too.
        let mut driver = SimulatedDriver::new(&[2, 2, 3, 2, 2, 3]);
        let error = driver.read().expect_err("values changed");
        assert!(matches!(error, EthtoolError::CountChanged { command: EthtoolCommand::GetStatistics, .. }), "{error}");
        assert_eq!(
            error.to_string(),
            "ethtool ETHTOOL_GSTATS on eth0 returned 3 entries where 2 were announced, on both tries \
             (channels reconfigured while reading?)"
        );
    }

    #[test]
    fn counts_beyond_the_bound_are_refused_before_fetching() {
        let mut driver = SimulatedDriver::new(&[MAX_STATISTICS + 1]);
        let error = driver.read().expect_err("too many");
        assert!(matches!(error, EthtoolError::TooManyStatistics { count: 65537, .. }), "{error}");
        assert_eq!(driver.requests, 1);
        // The bound itself is accepted, and the buffers hold it.
        assert_eq!(SimulatedDriver::new(&[MAX_STATISTICS]).read().expect("read").len(), MAX_STATISTICS as usize);
    }

    #[test]
    fn drivers_without_statistics_are_no_statistics() {
        let mut driver = SimulatedDriver::new(&[3]);
        driver.has_statistics = false;
        let error = driver.read().expect_err("no statistics");
        assert_eq!(
            error,
            EthtoolError::NoStatistics { interface: "eth0".into(), command: EthtoolCommand::GetStringSetInfo }
        );
        let mut driver = SimulatedDriver::new(&[3]);
        driver.statistics_errno = Some(Errno::EOPNOTSUPP);
        let error = driver.read().expect_err("no statistics");
        assert!(matches!(error, EthtoolError::NoStatistics { command: EthtoolCommand::GetStatistics, .. }));
        let mut driver = SimulatedDriver::new(&[0]);
        assert_eq!(driver.read().expect("empty set"), Vec::new());
        assert_eq!(driver.requests, 1, "an empty set is not fetched");
    }

    #[test]
    fn interface_names_the_kernel_would_misread_are_rejected() {
        assert!(kernel_interface_name("eth0").is_ok());
        assert!(kernel_interface_name("fifteen-bytes-x").is_ok());
        assert!(kernel_interface_name("sixteen-bytes-xx").is_err());
        assert!(kernel_interface_name("").is_err());
        assert!(kernel_interface_name("eth0\0x").is_err());
        let error = read_stats("eth0\0x").expect_err("NUL");
        assert!(matches!(error, EthtoolError::InvalidInterfaceName { .. }), "{error}");
        assert_eq!(error.to_string(), "\"eth0\\0x\" is not a network interface name: contains a NUL byte");
    }

    #[test]
    fn errno_maps_to_the_variant_checks_act_on() {
        let command = EthtoolCommand::GetStatistics;
        assert!(EthtoolError::from_errno("eth9", command, Errno::ENODEV).is_not_found());
        assert!(EthtoolError::from_errno("lo", command, Errno::EOPNOTSUPP).is_no_statistics());
        let denied = EthtoolError::from_errno("eth0", command, Errno::EPERM);
        assert!(matches!(denied, EthtoolError::PermissionDenied { .. }), "{denied}");
        let other = EthtoolError::from_errno("eth0", command, Errno::EIO);
        assert_eq!(other.to_string(), "ethtool ETHTOOL_GSTATS on eth0 failed: EIO: I/O error");
    }
}
