//! Reading a transceiver's memory through the kernel's ethtool netlink interface:
//! `ETHTOOL_MSG_MODULE_EEPROM_GET` (Linux 5.13+, Documentation/networking/ethtool-netlink.rst
//! "MODULE_EEPROM_GET"), which addresses the module by I2C address, bank and page, 128 bytes of a
//! half page at a time: offsets 0-127 are the lower page (always page 0), 128-255 the upper page
//! selected by `page` and `bank`. This is what `ethtool -m` reads. Numbers follow
//! `include/uapi/linux/ethtool_netlink.h` and `include/uapi/linux/genetlink.h`; the kernel side is
//! `net/ethtool/eeprom.c`.

use std::time::Duration;

use nix::errno::Errno;
use nix::sys::socket::SockProtocol;

use crate::netlink::{self, find, parse_attributes, Reply, Request, NLM_F_REQUEST};

/// genetlink's controller (include/uapi/linux/genetlink.h): `GENL_ID_CTRL`, `CTRL_CMD_GETFAMILY`.
const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_CMD_NEWFAMILY: u8 = 1;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;
/// `ETHTOOL_GENL_NAME` and `ETHTOOL_GENL_VERSION`.
const ETHTOOL_GENL_NAME: &str = "ethtool";
const ETHTOOL_GENL_VERSION: u8 = 1;
/// `ETHTOOL_MSG_MODULE_EEPROM_GET` (user to kernel) and its reply (kernel to user).
pub const ETHTOOL_MSG_MODULE_EEPROM_GET: u8 = 31;
pub const ETHTOOL_MSG_MODULE_EEPROM_GET_REPLY: u8 = 32;
/// `ETHTOOL_A_MODULE_EEPROM_*`.
const ATTR_HEADER: u16 = 1;
const ATTR_OFFSET: u16 = 2;
const ATTR_LENGTH: u16 = 3;
const ATTR_PAGE: u16 = 4;
const ATTR_BANK: u16 = 5;
const ATTR_I2C_ADDRESS: u16 = 6;
const ATTR_DATA: u16 = 7;
/// `ETHTOOL_A_HEADER_DEV_NAME`.
const HEADER_DEV_NAME: u16 = 2;
/// `sizeof(struct genlmsghdr)`: cmd, version, reserved.
const GENL_HEADER_LEN: usize = 4;
/// Half a page: the most one request may read (`ETH_MODULE_EEPROM_PAGE_LEN`).
pub const HALF_PAGE: usize = 128;

/// How long to wait for the kernel; a module read is an I2C transfer through the NIC's firmware,
/// which can take a while on a busy or wedged NIC.
const REPLY_TIMEOUT: Duration = Duration::from_secs(5);

/// One half page of module memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HalfPage {
    /// 0x50 (A0h), or 0x51 (A2h: SFF-8472 diagnostics).
    pub i2c_address: u8,
    pub bank: u8,
    pub page: u8,
    /// Bytes 128-255 (the selected page) rather than 0-127 (the lower page).
    pub upper: bool,
}

impl HalfPage {
    pub const fn lower(i2c_address: u8) -> HalfPage {
        HalfPage { i2c_address, bank: 0, page: 0, upper: false }
    }

    pub const fn upper(i2c_address: u8, bank: u8, page: u8) -> HalfPage {
        HalfPage { i2c_address, bank, page, upper: true }
    }

    /// The file name a snapshot stores this half page under (`ethtool/<if>/module-eeprom/<name>`):
    /// `lower`, `page-03h`, `bank-1-page-11h`; SFF-8472's A2h as `a2-lower`, `a2-page-00h`.
    pub fn file_name(&self) -> String {
        let prefix = if self.i2c_address == 0x51 { "a2-" } else { "" };
        if !self.upper {
            return format!("{prefix}lower");
        }
        let bank = if self.bank > 0 { format!("bank-{}-", self.bank) } else { String::new() };
        format!("{prefix}{bank}page-{:02x}h", self.page)
    }

    /// The inverse of [`HalfPage::file_name`].
    pub fn from_file_name(name: &str) -> Option<HalfPage> {
        let (i2c_address, rest) = match name.strip_prefix("a2-") {
            Some(rest) => (0x51, rest),
            None => (0x50, name),
        };
        if rest == "lower" {
            return Some(HalfPage::lower(i2c_address));
        }
        let (bank, rest) = match rest.strip_prefix("bank-") {
            Some(rest) => {
                let (bank, rest) = rest.split_once('-')?;
                (bank.parse().ok()?, rest)
            }
            None => (0, rest),
        };
        let page = rest.strip_prefix("page-")?.strip_suffix('h')?;
        Some(HalfPage::upper(i2c_address, bank, u8::from_str_radix(page, 16).ok()?))
    }
}

/// Why the kernel could not give a half page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModuleReadError {
    /// No such interface, or one without a module (DAC, backplane, no cage): the driver has no
    /// module callbacks (EOPNOTSUPP) or nothing is plugged (ENODEV/EIO from the cage).
    #[error("{interface}: no module could be read ({errno})")]
    NoModule { interface: String, errno: Errno },
    /// The kernel has no ethtool netlink family (before Linux 5.6, or a sandboxed kernel).
    #[error("the kernel has no ethtool netlink family ({0})")]
    NoEthtoolNetlink(Errno),
    #[error("{interface}: permission denied reading the module")]
    PermissionDenied { interface: String },
    #[error("{interface}: {step}: {errno}")]
    Failed { interface: String, step: &'static str, errno: Errno },
    #[error("{interface}: malformed netlink reply: {reason}")]
    Malformed { interface: String, reason: String },
}

/// `CTRL_CMD_GETFAMILY` for "ethtool".
pub fn family_request(sequence: u32) -> Vec<u8> {
    let mut request = Request::new(GENL_ID_CTRL, NLM_F_REQUEST, sequence, &[CTRL_CMD_GETFAMILY, 1, 0, 0]);
    request.attribute(CTRL_ATTR_FAMILY_NAME, format!("{ETHTOOL_GENL_NAME}\0").as_bytes());
    request.finish()
}

/// The family id from `CTRL_CMD_NEWFAMILY`'s reply payload.
pub fn parse_family_reply(payload: &[u8]) -> Result<u16, String> {
    if payload.len() < GENL_HEADER_LEN || payload[0] != CTRL_CMD_NEWFAMILY {
        return Err("not a CTRL_CMD_NEWFAMILY reply".into());
    }
    let attributes = parse_attributes(&payload[GENL_HEADER_LEN..])?;
    let id = find(&attributes, CTRL_ATTR_FAMILY_ID).ok_or("no CTRL_ATTR_FAMILY_ID")?;
    let bytes: [u8; 2] = id.get(..2).and_then(|b| b.try_into().ok()).ok_or("CTRL_ATTR_FAMILY_ID shorter than u16")?;
    Ok(u16::from_ne_bytes(bytes))
}

/// `ETHTOOL_MSG_MODULE_EEPROM_GET` for one half page of `interface`.
pub fn eeprom_request(family: u16, sequence: u32, interface: &str, half: HalfPage) -> Vec<u8> {
    let mut request =
        Request::new(family, NLM_F_REQUEST, sequence, &[ETHTOOL_MSG_MODULE_EEPROM_GET, ETHTOOL_GENL_VERSION, 0, 0]);
    request.nested(ATTR_HEADER, |header| {
        header.attribute(HEADER_DEV_NAME, format!("{interface}\0").as_bytes());
    });
    let offset: u32 = if half.upper { HALF_PAGE as u32 } else { 0 };
    request
        .attribute(ATTR_OFFSET, &offset.to_ne_bytes())
        .attribute(ATTR_LENGTH, &(HALF_PAGE as u32).to_ne_bytes())
        .attribute(ATTR_PAGE, &[if half.upper { half.page } else { 0 }])
        .attribute(ATTR_BANK, &[if half.upper { half.bank } else { 0 }])
        .attribute(ATTR_I2C_ADDRESS, &[half.i2c_address]);
    request.finish()
}

/// The bytes of an `ETHTOOL_MSG_MODULE_EEPROM_GET_REPLY` payload; exactly a half page.
pub fn parse_eeprom_reply(payload: &[u8]) -> Result<Vec<u8>, String> {
    if payload.len() < GENL_HEADER_LEN || payload[0] != ETHTOOL_MSG_MODULE_EEPROM_GET_REPLY {
        return Err("not an ETHTOOL_MSG_MODULE_EEPROM_GET_REPLY".into());
    }
    let attributes = parse_attributes(&payload[GENL_HEADER_LEN..])?;
    let data = find(&attributes, ATTR_DATA).ok_or("no ETHTOOL_A_MODULE_EEPROM_DATA")?;
    if data.len() != HALF_PAGE {
        return Err(format!("{} bytes of module data, not {HALF_PAGE}", data.len()));
    }
    Ok(data.to_vec())
}

/// A live reader of one interface's module: the ethtool family resolved once.
#[derive(Debug)]
pub struct ModuleReader {
    socket: std::os::fd::OwnedFd,
    family: u16,
    interface: String,
}

impl ModuleReader {
    pub fn open(interface: &str) -> Result<ModuleReader, ModuleReadError> {
        let failed =
            |step: &'static str| move |errno| ModuleReadError::Failed { interface: interface.to_string(), step, errno };
        let socket =
            netlink::open(SockProtocol::NetlinkGeneric, REPLY_TIMEOUT).map_err(|(step, errno)| match errno {
                // No generic netlink at all (a sandboxed kernel): no ethtool netlink either.
                Errno::EAFNOSUPPORT | Errno::EPROTONOSUPPORT => ModuleReadError::NoEthtoolNetlink(errno),
                errno => ModuleReadError::Failed { interface: interface.to_string(), step, errno },
            })?;
        let sequence = netlink::next_sequence();
        netlink::send(&socket, &family_request(sequence)).map_err(failed("ask for the ethtool family"))?;
        let payload = receive_answer(&socket, sequence, GENL_ID_CTRL, interface).map_err(|error| match error {
            ModuleReadError::Failed { errno: Errno::ENOENT, .. } => ModuleReadError::NoEthtoolNetlink(Errno::ENOENT),
            ModuleReadError::Failed { errno, step: "kernel", .. } => ModuleReadError::NoEthtoolNetlink(errno),
            other => other,
        })?;
        let family = parse_family_reply(&payload)
            .map_err(|reason| ModuleReadError::Malformed { interface: interface.to_string(), reason })?;
        Ok(ModuleReader { socket, family, interface: interface.to_string() })
    }

    pub fn read(&self, half: HalfPage) -> Result<Vec<u8>, ModuleReadError> {
        let sequence = netlink::next_sequence();
        let request = eeprom_request(self.family, sequence, &self.interface, half);
        netlink::send(&self.socket, &request).map_err(|errno| ModuleReadError::Failed {
            interface: self.interface.clone(),
            step: "send",
            errno,
        })?;
        let payload =
            receive_answer(&self.socket, sequence, self.family, &self.interface).map_err(|error| match error {
                ModuleReadError::Failed { errno, step: "kernel", interface } => match errno {
                    Errno::EPERM | Errno::EACCES => ModuleReadError::PermissionDenied { interface },
                    Errno::EOPNOTSUPP | Errno::ENODEV | Errno::EIO | Errno::EINVAL => {
                        ModuleReadError::NoModule { interface, errno }
                    }
                    errno => ModuleReadError::Failed { interface, step: "kernel", errno },
                },
                other => other,
            })?;
        parse_eeprom_reply(&payload)
            .map_err(|reason| ModuleReadError::Malformed { interface: self.interface.clone(), reason })
    }
}

fn receive_answer(
    socket: &std::os::fd::OwnedFd,
    sequence: u32,
    answer_type: u16,
    interface: &str,
) -> Result<Vec<u8>, ModuleReadError> {
    loop {
        let datagram = netlink::receive(socket).map_err(|errno| ModuleReadError::Failed {
            interface: interface.to_string(),
            step: "receive",
            errno,
        })?;
        let Some(datagram) = datagram else { continue };
        match netlink::parse_reply(&datagram, sequence, answer_type) {
            Ok(Reply::Answer(payload)) => return Ok(payload.to_vec()),
            Ok(Reply::KernelError(errno)) => {
                return Err(ModuleReadError::Failed { interface: interface.to_string(), step: "kernel", errno })
            }
            Ok(Reply::NotOurs) => continue,
            Err(reason) => return Err(ModuleReadError::Malformed { interface: interface.to_string(), reason }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netlink::array_at;

    #[test]
    fn the_request_follows_the_uapi_layout() {
        let request = eeprom_request(27, 9, "eth0", HalfPage::upper(0x50, 1, 0x11));
        // nlmsghdr
        assert_eq!(u32::from_ne_bytes(array_at(&request, 0)) as usize, request.len());
        assert_eq!(u16::from_ne_bytes(array_at(&request, 4)), 27);
        assert_eq!(u16::from_ne_bytes(array_at(&request, 6)), NLM_F_REQUEST);
        assert_eq!(u32::from_ne_bytes(array_at(&request, 8)), 9);
        // genlmsghdr
        assert_eq!(&request[16..20], &[ETHTOOL_MSG_MODULE_EEPROM_GET, 1, 0, 0]);
        let attributes = parse_attributes(&request[20..]).expect("attributes");
        let kinds: Vec<u16> = attributes.iter().map(|(k, _)| *k).collect();
        assert_eq!(kinds, [ATTR_HEADER, ATTR_OFFSET, ATTR_LENGTH, ATTR_PAGE, ATTR_BANK, ATTR_I2C_ADDRESS]);
        // The header is nested, with the flag the kernel's strict policy checks.
        assert_eq!(u16::from_ne_bytes(array_at(&request, 22)), ATTR_HEADER | 0x8000);
        let header = parse_attributes(attributes[0].1).expect("header");
        assert_eq!(header, [(HEADER_DEV_NAME, &b"eth0\0"[..])]);
        assert_eq!(find(&attributes, ATTR_OFFSET), Some(&128u32.to_ne_bytes()[..]));
        assert_eq!(find(&attributes, ATTR_LENGTH), Some(&128u32.to_ne_bytes()[..]));
        assert_eq!(find(&attributes, ATTR_PAGE), Some(&[0x11][..]));
        assert_eq!(find(&attributes, ATTR_BANK), Some(&[1][..]));
        assert_eq!(find(&attributes, ATTR_I2C_ADDRESS), Some(&[0x50][..]));
        // The lower page is always page 0, bank 0, offset 0.
        let lower = eeprom_request(27, 10, "eth0", HalfPage::lower(0x51));
        let attributes = parse_attributes(&lower[20..]).expect("attributes");
        assert_eq!(find(&attributes, ATTR_OFFSET), Some(&0u32.to_ne_bytes()[..]));
        assert_eq!(find(&attributes, ATTR_I2C_ADDRESS), Some(&[0x51][..]));
    }

    fn reply(command: u8, attributes: &[(u16, Vec<u8>)]) -> Vec<u8> {
        let mut message = Request::new(27, 0, 4, &[command, 1, 0, 0]);
        for (kind, payload) in attributes {
            message.attribute(*kind, payload);
        }
        message.finish()
    }

    #[test]
    fn replies_give_exactly_a_half_page_or_an_error() {
        let page: Vec<u8> = (0..128).collect();
        let datagram = reply(ETHTOOL_MSG_MODULE_EEPROM_GET_REPLY, &[(ATTR_DATA, page.clone())]);
        let Ok(Reply::Answer(payload)) = netlink::parse_reply(&datagram, 4, 27) else { panic!("no answer") };
        assert_eq!(parse_eeprom_reply(payload), Ok(page));
        let short = reply(ETHTOOL_MSG_MODULE_EEPROM_GET_REPLY, &[(ATTR_DATA, vec![0; 100])]);
        let Ok(Reply::Answer(payload)) = netlink::parse_reply(&short, 4, 27) else { panic!("no answer") };
        assert!(parse_eeprom_reply(payload).expect_err("short").contains("100 bytes"));
        let other = reply(ETHTOOL_MSG_MODULE_EEPROM_GET_REPLY + 1, &[(ATTR_DATA, vec![0; 128])]);
        let Ok(Reply::Answer(payload)) = netlink::parse_reply(&other, 4, 27) else { panic!("no answer") };
        assert!(parse_eeprom_reply(payload).is_err());
        let family = reply(
            CTRL_CMD_NEWFAMILY,
            &[(CTRL_ATTR_FAMILY_NAME, b"ethtool\0".to_vec()), (CTRL_ATTR_FAMILY_ID, 23u16.to_ne_bytes().to_vec())],
        );
        let Ok(Reply::Answer(payload)) = netlink::parse_reply(&family, 4, 27) else { panic!("no answer") };
        assert_eq!(parse_family_reply(payload), Ok(23));
        // Every cut of a reply is an error or a shorter answer, never a panic.
        for end in 0..datagram.len() {
            if let Ok(Reply::Answer(payload)) = netlink::parse_reply(&datagram[..end], 4, 27) {
                let _ = parse_eeprom_reply(payload);
            }
        }
    }

    #[test]
    fn half_pages_have_stable_file_names() {
        for half in [
            HalfPage::lower(0x50),
            HalfPage::lower(0x51),
            HalfPage::upper(0x50, 0, 0),
            HalfPage::upper(0x50, 0, 3),
            HalfPage::upper(0x50, 1, 0x11),
            HalfPage::upper(0x51, 0, 0),
        ] {
            assert_eq!(HalfPage::from_file_name(&half.file_name()), Some(half), "{}", half.file_name());
        }
        assert_eq!(HalfPage::upper(0x50, 0, 0x11).file_name(), "page-11h");
        assert_eq!(HalfPage::upper(0x51, 0, 0).file_name(), "a2-page-00h");
        assert_eq!(HalfPage::from_file_name("page-zzh"), None);
        assert_eq!(HalfPage::from_file_name("upper"), None);
    }
}
