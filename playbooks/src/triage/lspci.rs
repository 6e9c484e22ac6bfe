//! `lspci -vvv` text, decoded into the same fields the live probes read from config space and judged
//! by the same functions the `pcie.*` checks use, so a pasted lspci gets the verdicts `fabricdoctor
//! check` would give (without what lspci does not show: the upstream port's limits).

use fabricdoctor_checks::pcie::{
    acs_redirects, latched_aer_judgement, link_speed_judgement, link_width_judgement, read_request_judgement,
};
use fabricdoctor_checks::{Finding, Policy, Verdict};
use fabricdoctor_probes::pci_config::{AcsBits, AdvancedErrorReporting, LinkGeneration};

use super::analysis::Analysis;
use super::lines::numbered_lines;
use crate::fact::{Evidence, Fact};

#[derive(Debug, Clone, Default)]
pub struct LspciDevice {
    /// "21:00.0", or "ACSCtl line N" for bare register lines quoted without their device.
    pub address: String,
    pub description: String,
    /// From `Capabilities: [..] Express (v2) Root Port (Slot+)`: "Root Port", "Downstream Port", ...
    pub port_type: Option<String>,
    pub link_capability: Option<(LinkGeneration, u8)>,
    pub link_status: Option<(LinkGeneration, u8, Evidence)>,
    pub max_payload_supported: Option<u32>,
    pub max_payload: Option<(u32, Evidence)>,
    pub max_read_request: Option<(u32, Evidence)>,
    pub acs_control: Option<(AcsBits, Evidence)>,
    pub uncorrectable_status: Option<(u32, Evidence)>,
    pub uncorrectable_mask: Option<u32>,
    pub correctable_status: Option<u32>,
}

impl LspciDevice {
    pub fn is_gpu(&self) -> bool {
        let d = self.description.to_ascii_lowercase();
        (d.contains("vga compatible controller") || d.contains("3d controller")) && d.contains("nvidia")
            || d.contains("display controller") && d.contains("nvidia")
    }

    /// A device whose header the paste left out: its class (GPU, NIC, bridge) is unknown.
    pub fn is_headerless(&self) -> bool {
        self.description == HEADERLESS
    }

    pub fn is_nic(&self) -> bool {
        let d = self.description.to_ascii_lowercase();
        d.contains("ethernet controller") || d.contains("infiniband controller") || d.contains("network controller")
    }

    fn label(&self) -> String {
        let kind = if self.is_gpu() {
            "GPU"
        } else if self.is_nic() {
            "NIC"
        } else if self.description.to_ascii_lowercase().contains("bridge") {
            "bridge"
        } else {
            "device"
        };
        format!("{} ({kind})", self.address)
    }
}

/// "16GT/s" -> generation 4.
fn generation(rate: &str) -> Option<LinkGeneration> {
    let rate = rate.trim().trim_end_matches(',').trim_end_matches("GT/s");
    Some(LinkGeneration(match rate {
        "2.5" => 1,
        "5" => 2,
        "8" => 3,
        "16" => 4,
        "32" => 5,
        "64" => 6,
        _ => return None,
    }))
}

/// `Speed 16GT/s, Width x16` (LnkCap/LnkSta).
fn speed_width(text: &str) -> Option<(LinkGeneration, u8)> {
    let speed = text.split("Speed ").nth(1)?.split([',', ' ']).next()?;
    let width = text.split("Width x").nth(1)?.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()?;
    Some((generation(speed)?, width))
}

fn bytes_after(text: &str, key: &str) -> Option<u32> {
    text.split(key).nth(1)?.split_whitespace().next()?.parse().ok()
}

/// `SrcValid+ TransBlk- ReqRedir+ ...` flags as ACS bits (PCIe Base Spec §7.7.11.3 names).
fn acs_bits(text: &str) -> AcsBits {
    let on = |name: &str| text.contains(&format!("{name}+"));
    AcsBits {
        source_validation: on("SrcValid"),
        translation_blocking: on("TransBlk"),
        request_redirect: on("ReqRedir"),
        completion_redirect: on("CmpltRedir"),
        upstream_forwarding: on("UpstreamFwd"),
        egress_control: on("EgressCtrl"),
        direct_translated: on("DirectTrans"),
    }
}

/// AER Uncorrectable Error Status register bits by lspci name (PCIe Base Spec §7.8.4.2).
fn uncorrectable_bits(text: &str) -> u32 {
    const BITS: &[(&str, u32)] = &[
        ("DLP", 4),
        ("SDES", 5),
        ("TLP", 12),
        ("FCP", 13),
        ("CmpltTO", 14),
        ("CmpltAbrt", 15),
        ("UnxCmplt", 16),
        ("RxOF", 17),
        ("MalfTLP", 18),
        ("ECRC", 19),
        ("UnsupReq", 20),
        ("ACSViol", 21),
    ];
    flags_to_bits(text, BITS)
}

/// AER Correctable Error Status register bits (§7.8.4.5).
fn correctable_bits(text: &str) -> u32 {
    const BITS: &[(&str, u32)] =
        &[("RxErr", 0), ("BadTLP", 6), ("BadDLLP", 7), ("Rollover", 8), ("Timeout", 12), ("AdvNonFatalErr", 13)];
    flags_to_bits(text, BITS)
}

fn flags_to_bits(text: &str, bits: &[(&str, u32)]) -> u32 {
    text.split_whitespace()
        .filter_map(|flag| flag.strip_suffix('+'))
        .filter_map(|name| bits.iter().find(|(n, _)| *n == name).map(|(_, b)| 1u32 << b))
        .fold(0, |a, b| a | b)
}

fn is_device_header(line: &str) -> Option<(&str, &str)> {
    let (address, rest) = line.split_once(' ')?;
    let short = address.rsplit_once(':').map(|(_, s)| s).unwrap_or(address);
    let ok = address.len() >= 7
        && address.contains(':')
        && short.len() == 4
        && short.as_bytes()[2] == b'.'
        && address.chars().all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.');
    ok.then_some((address, rest))
}

/// Fields of the PCI Express capability as `lspci -vvv` prints them (pciutils ls-caps.c).
const EXPRESS_FIELDS: [&str; 8] =
    ["LnkCap:", "LnkSta:", "LnkCtl:", "DevCap:", "DevCtl:", "DevSta:", "UESta:", "CESta:"];

/// What a device quoted without its header line is called.
const HEADERLESS: &str = "lspci lines quoted without their device header";

pub fn parse(file: &str, text: &str) -> Vec<LspciDevice> {
    let mut devices: Vec<LspciDevice> = Vec::new();
    let mut current: Option<LspciDevice> = None;
    let mut after_devctl = false;
    for (line_no, raw) in numbered_lines(text) {
        let line = raw.trim().trim_matches('`').trim();
        let evidence = || Evidence::new(file, line_no, raw);
        if !raw.starts_with(char::is_whitespace) {
            if let Some((address, rest)) = is_device_header(line) {
                devices.extend(current.take());
                let mut device = LspciDevice {
                    address: address.to_string(),
                    description: rest.to_string(),
                    ..LspciDevice::default()
                };
                // `0002:01:00.0 LnkCap: Speed 32GT/s, Width x4 LnkSta: Speed 32GT/s, Width x2
                // (downgraded)`: one line per device, as a loop over `lspci -s ADDRESS -vvv | grep
                // Lnk` prints it; the device's class is not given.
                if let Some((capability, status)) =
                    rest.split_once("LnkCap:").and_then(|(_, fields)| fields.split_once("LnkSta:"))
                {
                    device.description = HEADERLESS.into();
                    device.link_capability = speed_width(capability);
                    device.link_status = speed_width(status).map(|(speed, width)| (speed, width, evidence()));
                }
                current = Some(device);
                after_devctl = false;
                continue;
            }
        }
        if let Some(flags) = line.strip_prefix("ACSCtl:") {
            let bits = acs_bits(flags);
            match current.as_mut() {
                Some(device) => device.acs_control = Some((bits, evidence())),
                None => devices.push(LspciDevice {
                    address: format!("ACSCtl line {line_no}"),
                    description: "ACS control register quoted without its device".into(),
                    acs_control: Some((bits, evidence())),
                    ..LspciDevice::default()
                }),
            }
            continue;
        }
        // A paste cut by its poster (no `21:00.0 ...` header line, only part of the Express
        // capability) still says what its link and registers are: its lines belong to a device
        // named by where the paste starts.
        if current.is_none() && EXPRESS_FIELDS.iter().any(|field| line.starts_with(field)) {
            current = Some(LspciDevice {
                address: format!("line {line_no}"),
                description: HEADERLESS.into(),
                ..LspciDevice::default()
            });
        }
        let Some(device) = current.as_mut() else { continue };
        if let Some(rest) = line.split_once("Express (").and_then(|(_, r)| r.split_once(") ")).map(|(_, t)| t) {
            device.port_type = Some(rest.split([',', '(']).next().unwrap_or(rest).trim().to_string());
        } else if let Some(rest) = line.strip_prefix("LnkCap:") {
            device.link_capability = speed_width(rest);
        } else if let Some(rest) = line.strip_prefix("LnkSta:") {
            device.link_status = speed_width(rest).map(|(s, w)| (s, w, evidence()));
        } else if let Some(rest) = line.strip_prefix("DevCap:") {
            device.max_payload_supported = bytes_after(rest, "MaxPayload ");
        } else if line.starts_with("DevCtl:") {
            after_devctl = true;
        } else if after_devctl && line.contains("MaxReadReq") {
            device.max_payload = bytes_after(line, "MaxPayload ").map(|b| (b, evidence()));
            device.max_read_request = bytes_after(line, "MaxReadReq ").map(|b| (b, evidence()));
            after_devctl = false;
        } else if let Some(rest) = line.strip_prefix("UESta:") {
            device.uncorrectable_status = Some((uncorrectable_bits(rest), evidence()));
        } else if let Some(rest) = line.strip_prefix("UEMsk:") {
            device.uncorrectable_mask = Some(uncorrectable_bits(rest));
        } else if let Some(rest) = line.strip_prefix("CESta:") {
            device.correctable_status = Some(correctable_bits(rest));
        }
    }
    devices.extend(current);
    devices
}

fn cite(evidence: &Evidence) -> String {
    super::counters::cite(evidence)
}

pub fn analyze(devices: &[LspciDevice], analysis: &mut Analysis) {
    let policy = Policy::default();
    for device in devices {
        let subject = device.label();
        if let (Some((cap_speed, cap_width)), Some((speed, width, evidence))) =
            (device.link_capability, &device.link_status)
        {
            // Without the header the device may be a GPU, whose link slows when idle: a lower
            // speed is then a recheck under load, not a verdict.
            let (verdict, message) = link_speed_judgement(*speed, cap_speed, device.is_gpu() || device.is_headerless());
            analysis
                .observations
                .push(Finding::new("pcie.link.speed", verdict, &subject, message).evidence(cite(evidence)));
            if verdict == Verdict::Fail {
                analysis.push(
                    Fact::new("pcie.link_degraded")
                        .attr("device", &device.address)
                        .attr("what", "speed")
                        .evidence(evidence.clone()),
                );
            }
            let (verdict, message) = link_width_judgement(*width, cap_width);
            analysis
                .observations
                .push(Finding::new("pcie.link.width", verdict, &subject, message).evidence(cite(evidence)));
            if verdict == Verdict::Fail {
                analysis.push(
                    Fact::new("pcie.link_degraded")
                        .attr("device", &device.address)
                        .attr("what", "width")
                        .evidence(evidence.clone()),
                );
            }
        }
        if let (Some(supported), Some((payload, evidence))) = (device.max_payload_supported, &device.max_payload) {
            let (verdict, message) = if payload < &supported {
                (
                    Verdict::Skip,
                    format!(
                        "MaxPayload {payload} bytes of {supported} the device supports: the limit is the lowest in its root port's hierarchy, which this lspci does not show (capture lspci -vvv of the bridges above it, or run `fabricdoctor check` on the host)"
                    ),
                )
            } else {
                (Verdict::Pass, format!("MaxPayload {payload} bytes, the most the device supports"))
            };
            analysis.observations.push(Finding::new("pcie.mps", verdict, &subject, message).evidence(cite(evidence)));
        }
        if device.is_nic() {
            if let Some((mrrs, evidence)) = &device.max_read_request {
                let (verdict, message) = read_request_judgement(*mrrs, policy.pcie.nic_min_read_request_bytes);
                analysis.observations.push(
                    Finding::new("pcie.mrrs", verdict, &subject, message)
                        .evidence(cite(evidence))
                        .expected(format!(">= {} bytes", policy.pcie.nic_min_read_request_bytes))
                        .observed(format!("{mrrs} bytes")),
                );
            }
        }
        if let Some((bits, evidence)) = &device.acs_control {
            let root_port = device.port_type.as_deref() == Some("Root Port");
            if acs_redirects(bits) && root_port {
                // Root ports commonly redirect for IOMMU isolation. GPU-NIC traffic between root
                // ports crosses the root complex anyway; inside a switch below this port, the
                // switch's downstream ports decide (PCIe Base Spec §6.12).
                analysis.observations.push(
                    Finding::new(
                        "pcie.acs",
                        Verdict::Pass,
                        &subject,
                        "ACS redirect on a root port (IOMMU isolation): not on the peer path of a GPU and a NIC that share a switch; check the switch's downstream ports",
                    )
                    .evidence(cite(evidence)),
                );
            } else if acs_redirects(bits) {
                analysis.observations.push(
                    Finding::new(
                        "pcie.acs",
                        Verdict::Fail,
                        &subject,
                        "ACS redirect enabled: peer-to-peer TLPs (GPUDirect RDMA) through this port are sent to the root complex/IOMMU instead of across the switch",
                    )
                    .evidence(cite(evidence))
                    .expected("ReqRedir- CmpltRedir-")
                    .observed(bits.lspci_flags()),
                );
                analysis
                    .push(Fact::new("pcie.acs_redirect").attr("device", &device.address).evidence(evidence.clone()));
            } else {
                analysis.observations.push(
                    Finding::new("pcie.acs", Verdict::Pass, &subject, "ACS redirect off").evidence(cite(evidence)),
                );
            }
        }
        if let Some((status, evidence)) = &device.uncorrectable_status {
            let aer = AdvancedErrorReporting {
                offset: 0,
                uncorrectable_status: *status,
                uncorrectable_mask: device.uncorrectable_mask.unwrap_or(0),
                uncorrectable_severity: 0,
                correctable_status: device.correctable_status.unwrap_or(0),
                correctable_mask: 0,
            };
            let (verdict, message) = latched_aer_judgement(&aer);
            analysis.observations.push(Finding::new("pcie.aer", verdict, &subject, message).evidence(cite(evidence)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A paste cut before its device header (only the link lines) is still read: its width is
    /// judged, and its speed only warns, since the device could be an idle GPU.
    #[test]
    fn a_fragment_without_its_device_header_is_read() {
        let text = "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported\n\t\tLnkSta:\tSpeed 8GT/s (downgraded), Width x8 (downgraded)\n";
        let devices = parse("paste.txt", text);
        assert_eq!(devices.len(), 1);
        assert!(devices[0].is_headerless());
        let mut analysis = Analysis::default();
        analyze(&devices, &mut analysis);
        let degraded: Vec<&str> =
            analysis.facts.iter().filter(|f| f.name == "pcie.link_degraded").filter_map(|f| f.get("what")).collect();
        assert_eq!(degraded, ["width"]);
        assert!(analysis.observations.iter().any(|o| o.id == "pcie.link.speed" && o.verdict == Verdict::Warn));
    }

    #[test]
    fn device_blocks_and_bare_register_lines() {
        let text = "17:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n\
                    \tDevCap:\tMaxPayload 512 bytes, PhantFunc 0\n\
                    \tDevCtl:\tCorrErr+ NonFatalErr+ FatalErr+ UnsupReq-\n\
                    \t\tMaxPayload 256 bytes, MaxReadReq 4096 bytes\n\
                    \tLnkCap:\tPort #0, Speed 32GT/s, Width x16\n\
                    \tLnkSta:\tSpeed 16GT/s (downgraded), Width x8 (downgraded)\n\
                    \tUESta:\tDLP- SDES- TLP- FCP- CmpltTO+ UnsupReq+\n\
                    \tUEMsk:\tDLP- SDES- TLP- FCP- CmpltTO- UnsupReq+\n\
                    `ACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-`\n";
        let devices = parse("f", text);
        assert_eq!(devices.len(), 1, "the indented ACSCtl belongs to the device above");
        let nic = &devices[0];
        assert!(nic.is_nic() && !nic.is_gpu());
        assert_eq!(nic.link_capability, Some((LinkGeneration(5), 16)));
        assert_eq!(nic.link_status.as_ref().map(|s| (s.0, s.1)), Some((LinkGeneration(4), 8)));
        assert_eq!(nic.max_payload_supported, Some(512));
        assert_eq!(nic.max_payload.as_ref().map(|p| p.0), Some(256));
        assert_eq!(nic.max_read_request.as_ref().map(|p| p.0), Some(4096));
        assert_eq!(nic.uncorrectable_status.as_ref().map(|s| s.0), Some((1 << 14) | (1 << 20)));
        assert_eq!(nic.uncorrectable_mask, Some(1 << 20));
        assert!(nic.acs_control.as_ref().is_some_and(|a| acs_redirects(&a.0)));
        let bare =
            parse("f", "`ACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-`\n");
        assert_eq!(bare.len(), 1);
        assert!(bare[0].acs_control.as_ref().is_some_and(|a| !acs_redirects(&a.0)));
    }

    /// A full `lspci -vvv` of a healthy server shows ACS redirect on its root ports (IOMMU isolation);
    /// that must not read as GPUDirect broken, which is about switch downstream ports.
    #[test]
    fn acs_redirect_on_a_root_port_is_not_a_gpudirect_fault() {
        let root = "00:01.1 PCI bridge: Intel Corporation Device 1bbd (rev 11) (prog-if 00 [Normal decode])\n\
                    \tCapabilities: [40] Express (v2) Root Port (Slot+), MSI 00\n\
                    \t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n";
        let devices = parse("f", root);
        assert_eq!(devices[0].port_type.as_deref(), Some("Root Port"));
        let mut analysis = Analysis::default();
        analyze(&devices, &mut analysis);
        assert!(!analysis.has("pcie.acs_redirect"));
        let downstream = root.replace("Root Port (Slot+)", "Downstream Port (Slot+)");
        let mut analysis = Analysis::default();
        analyze(&parse("f", &downstream), &mut analysis);
        assert!(analysis.has("pcie.acs_redirect"));
    }

    /// A forum post's one line per device (NVIDIA developer forums, an ASUS GX10's second
    /// ConnectX-7 wired with two lanes): each line is a device with its link.
    #[test]
    fn one_line_per_device_with_its_link_capability_and_status() {
        let text = "0000:01:00.0 LnkCap: Speed 32GT/s, Width x4 LnkSta: Speed 32GT/s, Width x4\n\
                    0002:01:00.0 LnkCap: Speed 32GT/s, Width x4 LnkSta: Speed 32GT/s, Width x2 (downgraded)\n";
        let devices = parse("f", text);
        assert_eq!(devices.len(), 2);
        assert_eq!(devices[1].address, "0002:01:00.0");
        assert_eq!(devices[1].link_capability, Some((LinkGeneration(5), 4)));
        assert_eq!(devices[1].link_status.as_ref().map(|(s, w, e)| (*s, *w, e.line)), Some((LinkGeneration(5), 2, 2)));
        let mut analysis = Analysis::default();
        analyze(&devices, &mut analysis);
        let degraded: Vec<_> = analysis.facts.iter().filter(|f| f.name == "pcie.link_degraded").collect();
        assert_eq!(degraded.len(), 1, "{:?}", analysis.facts);
        assert_eq!((degraded[0].get("device"), degraded[0].get("what")), (Some("0002:01:00.0"), Some("width")));
    }

    #[test]
    fn a_degraded_nic_link_is_a_fact_but_a_gpu_link_only_a_warning() {
        let nic = "17:00.0 Ethernet controller: Mellanox Technologies MT2910\n\tLnkCap:\tPort #0, Speed 32GT/s, Width x16\n\tLnkSta:\tSpeed 16GT/s (downgraded), Width x16\n";
        let mut analysis = Analysis::default();
        analyze(&parse("f", nic), &mut analysis);
        assert!(analysis.has("pcie.link_degraded"));
        let gpu =
            nic.replace("Ethernet controller: Mellanox Technologies MT2910", "3D controller: NVIDIA Corporation GH100");
        let mut analysis = Analysis::default();
        analyze(&parse("f", &gpu), &mut analysis);
        assert!(!analysis.has("pcie.link_degraded"));
        assert_eq!(analysis.observations[0].verdict, Verdict::Warn);
    }
}
