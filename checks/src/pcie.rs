//! PCIe checks: link speed and width against capability, Max Payload Size and Max Read Request Size,
//! ACS redirection between GPUs and NICs, and AER error counters.

use std::collections::BTreeMap;

use fabricdoctor_probes::gpu::LoadedLink;
use fabricdoctor_probes::pci::{PciAddress, PciFunction};
use fabricdoctor_probes::pci_config::{
    AcsBits, AdvancedErrorReporting, ConfigSpace, ExpressCapability, LinkGeneration, PortType,
};
use fabricdoctor_probes::ProbeError;

use crate::{unreadable, Check, Finding, Inputs, Policy, Verdict};

fn no_endpoints(id: &str, inputs: &Inputs<'_>) -> Option<Vec<Finding>> {
    if let Err(error) = &inputs.node.pci {
        return Some(vec![unreadable(id, "node", error)]);
    }
    inputs
        .endpoints
        .is_empty()
        .then(|| vec![Finding::new(id, Verdict::Skip, "node", "no GPU or RDMA NIC on this node: nothing to check")])
}

fn speed_text(speed: Option<LinkGeneration>) -> String {
    match speed.and_then(LinkGeneration::gigatransfers) {
        Some(rate) => format!("{rate} GT/s"),
        None => "unknown".to_string(),
    }
}

fn width_text(width: Option<u8>) -> String {
    width.map(|w| format!("x{w}")).unwrap_or_else(|| "unknown".to_string())
}

/// The functions whose upstream link to check: every GPU and NIC, and every switch upstream port
/// above them (its link is the switch's uplink, which all devices below share). Downstream and root
/// ports are skipped: their link is the same wire as the device below them.
fn link_subjects<'a>(inputs: &Inputs<'a>) -> Vec<&'a PciFunction> {
    let mut subjects: BTreeMap<PciAddress, &PciFunction> = BTreeMap::new();
    for endpoint in &inputs.endpoints {
        subjects.insert(endpoint.address, endpoint);
        for (depth, bridge) in endpoint.upstream.iter().enumerate() {
            let Some(function) = inputs.node.function(*bridge) else {
                continue;
            };
            let is_upstream_port = match express(function) {
                Some(express) => express.port_type == PortType::SwitchUpstream,
                // Without config space: the root port is first, then switches alternate upstream and
                // downstream ports, so odd depths are upstream ports.
                None => depth % 2 == 1,
            };
            if is_upstream_port {
                subjects.insert(function.address, function);
            }
        }
    }
    subjects.into_values().collect()
}

fn express(function: &PciFunction) -> Option<&ExpressCapability> {
    function.config.as_ref().ok().and_then(|c| c.express.as_ref())
}

/// What a link should train to: the lower of the two ends' maxima, or whichever end is known.
fn capability<T: Ord + Copy>(own_max: Option<T>, slot_max: Option<T>) -> Option<T> {
    match (own_max, slot_max) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The `check --load` result for a GPU, when the run loaded its link.
fn under_load<'a>(inputs: &Inputs<'a>, function: &PciFunction) -> Option<Result<&'a LoadedLink, &'a str>> {
    let observation = inputs.gpu?;
    let result = observation.under_load.as_ref()?.iter().find(|l| l.address == function.address)?;
    Some(result.outcome.as_ref().map_err(|reason| reason.as_str()))
}

fn load_evidence(loaded: &Result<&LoadedLink, &str>) -> String {
    match loaded {
        Ok(loaded) => format!(
            "under load ({:.1} s of host<->device copies, {:.1} GB/s host-to-device, {:.1} GB/s device-to-host): \
             {} x{}",
            loaded.seconds,
            loaded.host_to_device_gbps,
            loaded.device_to_host_gbps,
            speed_text(loaded.link.current_speed),
            loaded.link.current_width.map(|w| w.to_string()).unwrap_or_else(|| "?".into())
        ),
        Err(reason) => format!("under load: could not load the link: {reason}"),
    }
}

fn parent<'a>(inputs: &Inputs<'a>, function: &PciFunction) -> Option<&'a PciFunction> {
    function.upstream.last().and_then(|a| inputs.node.function(*a))
}

/// Whether a link below capability belongs to an idle GPU (or the port above one): NVIDIA GPUs drop
/// to 2.5 GT/s when idle to save power and retrain under load (lspci shows "(downgraded)"; real
/// capture: ../shared/realworld lspci-01, 26.8 GB/s host-to-device under load on a 2.5 GT/s-idle link).
fn is_gpu_link(function: &PciFunction) -> bool {
    function.is_gpu()
}

#[derive(Debug)]
pub struct LinkSpeed;
#[derive(Debug)]
pub struct LinkWidth;

impl Check for LinkSpeed {
    fn id(&self) -> &'static str {
        "pcie.link.speed"
    }
    fn doc_short(&self) -> &'static str {
        "PCIe link trained below the speed the device and its slot support"
    }
    fn doc_long(&self) -> &'static str {
        "Compares each GPU's, RDMA NIC's and PCIe switch uplink's current link speed (sysfs \
         current_link_speed) with the lower of its own and its upstream port's maximum (max_link_speed), \
         the speed the link should train to. Below that: fail (a bad riser, slot, retimer or BIOS setting \
         halves bandwidth per generation lost). A GPU below capability is a warning, 'recheck under \
         load': GPUs lower their link speed when idle and retrain when busy; with `check --load` the \
         GPU's link is loaded with host<->device copies and re-read: up to capability passes, still low \
         fails. LnkCtl2's target speed is \
         shown when firmware capped it. Source: Documentation/ABI/testing/sysfs-bus-pci; PCIe Base Spec \
         §7.5.3.6/§7.5.3.8/§7.5.3.19."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        if let Some(findings) = no_endpoints(self.id(), inputs) {
            return findings;
        }
        link_subjects(inputs).into_iter().map(|f| link_speed_finding(self.id(), inputs, f)).collect()
    }
}

fn link_speed_finding(id: &str, inputs: &Inputs<'_>, function: &PciFunction) -> Finding {
    let subject = inputs.label(function.address);
    let own_max = function.link.max_speed;
    let slot_max = parent(inputs, function).and_then(|p| p.link.max_speed);
    let capability = capability(own_max, slot_max);
    let (Some(current), Some(capability)) = (function.link.current_speed, capability) else {
        return Finding::new(id, Verdict::Skip, subject, "link speed not reported by the kernel for this function")
            .observed(speed_text(function.link.current_speed));
    };
    let mut finding_evidence = vec![format!(
        "current_link_speed {}, max_link_speed {} (device), {} (upstream port)",
        speed_text(Some(current)),
        speed_text(own_max),
        speed_text(slot_max)
    )];
    if let Some(target) = express(function).and_then(|e| e.target_link_speed) {
        if target < capability {
            finding_evidence
                .push(format!("LnkCtl2 target link speed {}: the link is told to train low", speed_text(Some(target))));
        }
    }
    let loaded = under_load(inputs, function);
    if let Some(line) = loaded.as_ref().map(load_evidence) {
        finding_evidence.push(line);
    }
    let (verdict, message) = match (&loaded, is_gpu_link(function) && current < capability) {
        (Some(Ok(loaded)), true) if loaded.link.current_speed.is_some_and(|s| s >= capability) => (
            Verdict::Pass,
            format!(
                "{} idle, came up to {} under load: the GPU saves power at idle",
                speed_text(Some(current)),
                speed_text(loaded.link.current_speed)
            ),
        ),
        (Some(Ok(loaded)), true) => (
            Verdict::Fail,
            format!(
                "stayed at {} of {} under host<->device copies: link downgraded",
                speed_text(loaded.link.current_speed),
                speed_text(Some(capability))
            ),
        ),
        (Some(Err(reason)), true) => (
            Verdict::Warn,
            format!(
                "{} of {} idle; the recheck under load could not run: {reason}",
                speed_text(Some(current)),
                speed_text(Some(capability))
            ),
        ),
        _ => link_speed_judgement(current, capability, is_gpu_link(function)),
    };
    let mut finding = Finding::new(id, verdict, subject, message)
        .expected(speed_text(Some(capability)))
        .observed(speed_text(Some(current)));
    finding.evidence = finding_evidence;
    finding
}

/// The verdict on a link's current speed against what it should train to. A GPU below capability is
/// only a warning: GPUs slow their link when idle. Shared by the live check and `triage` (lspci text).
pub fn link_speed_judgement(current: LinkGeneration, capability: LinkGeneration, is_gpu: bool) -> (Verdict, String) {
    if current >= capability {
        (Verdict::Pass, format!("{} at capability", speed_text(Some(current))))
    } else if is_gpu {
        (
            Verdict::Warn,
            format!(
                "{} of {}: GPUs slow their link when idle; recheck under load (fail if it stays low)",
                speed_text(Some(current)),
                speed_text(Some(capability))
            ),
        )
    } else {
        (
            Verdict::Fail,
            format!("trained at {} of {}: link downgraded", speed_text(Some(current)), speed_text(Some(capability))),
        )
    }
}

/// The verdict on a link's current width against what it should train to.
pub fn link_width_judgement(current: u8, capability: u8) -> (Verdict, String) {
    if current >= capability {
        (Verdict::Pass, format!("x{current} at capability"))
    } else {
        (Verdict::Fail, format!("trained at x{current} of x{capability}: lanes missing"))
    }
}

/// The verdict on an RDMA NIC's Max Read Request Size against the policy minimum.
pub fn read_request_judgement(max_read_request: u32, minimum: u32) -> (Verdict, String) {
    if max_read_request < minimum {
        (
            Verdict::Warn,
            format!("MaxReadReq {max_read_request} bytes, below {minimum}: DMA reads are split into more requests"),
        )
    } else {
        (Verdict::Pass, format!("MaxReadReq {max_read_request} bytes"))
    }
}

/// True when ACS would send peer-to-peer TLPs up to the root complex (Request or Completion Redirect).
pub fn acs_redirects(control: &AcsBits) -> bool {
    control.request_redirect || control.completion_redirect
}

/// The verdict on latched AER status registers (no sysfs counters): unmasked uncorrectable bits warn,
/// as latched bits are history since the last clear, not a rate.
pub fn latched_aer_judgement(aer: &AdvancedErrorReporting) -> (Verdict, &'static str) {
    if aer.uncorrectable_status & !aer.uncorrectable_mask != 0 {
        (Verdict::Warn, "uncorrectable error status bits latched (history since last clear)")
    } else {
        (Verdict::Pass, "no unmasked uncorrectable error status latched")
    }
}

impl Check for LinkWidth {
    fn id(&self) -> &'static str {
        "pcie.link.width"
    }
    fn doc_short(&self) -> &'static str {
        "PCIe link trained narrower than the device and its slot support"
    }
    fn doc_long(&self) -> &'static str {
        "Compares each GPU's, RDMA NIC's and PCIe switch uplink's current link width (sysfs \
         current_link_width) with the lower of its own and its upstream port's maximum width. Narrower: \
         fail — an x16 NIC at x8 caps a 400 Gb/s port near 200 Gb/s (Gen5: ~31.5 Gb/s usable per lane); \
         usually a mis-seated card, a damaged lane or a bifurcation setting. Source: \
         Documentation/ABI/testing/sysfs-bus-pci; PCIe Base Spec §7.5.3.6 (LnkCap), §7.5.3.8 (LnkSta)."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        if let Some(findings) = no_endpoints(self.id(), inputs) {
            return findings;
        }
        link_subjects(inputs)
            .into_iter()
            .map(|function| {
                let subject = inputs.label(function.address);
                let own_max = function.link.max_width;
                let slot_max = parent(inputs, function).and_then(|p| p.link.max_width);
                let capability = capability(own_max, slot_max);
                let (Some(current), Some(capability)) = (function.link.current_width, capability) else {
                    return Finding::new(
                        self.id(),
                        Verdict::Skip,
                        subject,
                        "link width not reported by the kernel for this function",
                    );
                };
                let evidence = format!(
                    "current_link_width {}, max_link_width {} (device), {} (upstream port)",
                    width_text(Some(current)),
                    width_text(own_max),
                    width_text(slot_max)
                );
                let loaded = under_load(inputs, function);
                let loaded_width = loaded.as_ref().and_then(|l| l.as_ref().ok()).and_then(|l| l.link.current_width);
                let (verdict, message) = if current < capability && loaded_width.is_some_and(|w| w >= capability) {
                    (Verdict::Pass, format!("x{current} idle, came up to x{capability} under load"))
                } else if let (true, Some(width)) = (current < capability, loaded_width) {
                    (Verdict::Fail, format!("stayed at x{width} of x{capability} under load: lanes missing"))
                } else {
                    link_width_judgement(current, capability)
                };
                let mut finding = Finding::new(self.id(), verdict, subject, message).evidence(evidence);
                if let Some(line) = loaded.as_ref().map(load_evidence) {
                    finding = finding.evidence(line);
                }
                finding.expected(format!("x{capability}")).observed(format!("x{current}"))
            })
            .collect()
    }
}

/// The largest payload every function under `endpoint`'s root port supports (the kernel's
/// `pcie_bus_safe` rule), with the function that limits it; functions whose config is unreadable are
/// left out (the endpoint's own path is known to be readable).
fn hierarchy_max_payload(
    inputs: &Inputs<'_>,
    endpoint: &PciFunction,
    path: &[(&PciFunction, &ExpressCapability)],
) -> (u32, Option<PciAddress>) {
    let root_port = endpoint.upstream.first().copied().unwrap_or(endpoint.address);
    let hierarchy = inputs
        .node
        .pci_functions()
        .iter()
        .filter(|f| f.address == root_port || f.upstream.first() == Some(&root_port))
        .filter_map(|f| express(f).map(|e| (f.address, e.max_payload_supported)));
    let on_path = path.iter().map(|(f, e)| (f.address, e.max_payload_supported));
    match hierarchy.chain(on_path).min_by_key(|(_, supported)| *supported) {
        Some((address, supported)) => (supported, Some(address)),
        None => (128, None),
    }
}

/// The decoded PCIe capability of every function on `endpoint`'s path (bridges first, then itself),
/// or the first reason one is unknown.
enum PathConfig<'a> {
    Known(Vec<(&'a PciFunction, &'a ExpressCapability)>),
    Unknown(Unknown<'a>),
}

/// Why a function's config space fields are unknown.
enum Unknown<'a> {
    /// Config space was cut to the 64-byte header: the process is not root.
    NeedsRoot,
    Unreadable(&'a ProbeError),
}

/// A function's decoded config space, or why it is unknown.
fn decoded(function: &PciFunction) -> Result<&ConfigSpace, Unknown<'_>> {
    match &function.config {
        Ok(config) if config.is_truncated() => Err(Unknown::NeedsRoot),
        Ok(config) => Ok(config),
        Err(error) if error.is_permission_denied() => Err(Unknown::NeedsRoot),
        Err(error) => Err(Unknown::Unreadable(error)),
    }
}

fn path_config<'a>(inputs: &Inputs<'a>, endpoint: &'a PciFunction) -> PathConfig<'a> {
    let mut path = Vec::new();
    let functions = endpoint.upstream.iter().filter_map(|a| inputs.node.function(*a)).chain(std::iter::once(endpoint));
    for function in functions {
        match decoded(function) {
            // A conventional PCI bridge on the path has no PCIe capability and no payload setting.
            Ok(ConfigSpace { express: None, .. }) => {}
            Ok(ConfigSpace { express: Some(express), .. }) => path.push((function, express)),
            Err(why) => return PathConfig::Unknown(why),
        }
    }
    PathConfig::Known(path)
}

const NEEDS_ROOT: &str =
    "config space beyond the 64-byte header is readable only by root: value unknown; re-run as root";

/// Findings for endpoints whose config could not be decoded; one node-level finding when none could.
fn unknown_config_findings(
    id: &str,
    inputs: &Inputs<'_>,
    unknown: Vec<(PciAddress, Unknown<'_>)>,
    total: usize,
) -> Vec<Finding> {
    let needs_root = unknown.iter().filter(|(_, why)| matches!(why, Unknown::NeedsRoot)).count();
    if needs_root == total && total > 1 {
        return vec![Finding::new(id, Verdict::Warn, "node", NEEDS_ROOT)];
    }
    unknown
        .into_iter()
        .map(|(address, why)| match why {
            Unknown::NeedsRoot => Finding::new(id, Verdict::Warn, inputs.label(address), NEEDS_ROOT),
            Unknown::Unreadable(error) => unreadable(id, inputs.label(address), error),
        })
        .collect()
}

#[derive(Debug)]
pub struct MaxPayload;

impl Check for MaxPayload {
    fn id(&self) -> &'static str {
        "pcie.mps"
    }
    fn doc_short(&self) -> &'static str {
        "Max Payload Size below what the whole path supports, or inconsistent along it"
    }
    fn doc_long(&self) -> &'static str {
        "Decodes Device Capabilities (Max_Payload_Size Supported) and Device Control (Max_Payload_Size) \
         from PCI config space for each GPU and RDMA NIC and every bridge up to the root port. Warns \
         when the device's MPS is below what every function under its root port supports (each TLP \
         then carries less data: 128-byte payloads cost ~15% of link bandwidth against 256), or when \
         MPS differs along the path (a bridge may send TLPs larger than the device accepts). The whole \
         root-port hierarchy is the limit, not just the path, because peer-to-peer TLPs between its \
         devices must fit every receiver (the kernel's pcie_bus_safe rule, drivers/pci/probe.c). Needs \
         root: without it the kernel returns only the 64-byte header and the value is unknown. Source: \
         PCIe Base Spec §7.5.3.3/§7.5.3.4; kernel pcie_bus_config (pci=pcie_bus_perf)."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        if let Some(findings) = no_endpoints(self.id(), inputs) {
            return findings;
        }
        let mut findings = Vec::new();
        let mut unknown = Vec::new();
        for endpoint in &inputs.endpoints {
            let path = match path_config(inputs, endpoint) {
                PathConfig::Known(path) => path,
                PathConfig::Unknown(why) => {
                    unknown.push((endpoint.address, why));
                    continue;
                }
            };
            let Some((_, device)) = path.last() else {
                continue;
            };
            let (supported, limiter) = hierarchy_max_payload(inputs, endpoint, &path);
            let inconsistent: Vec<String> = path
                .iter()
                .filter(|(_, e)| e.max_payload != device.max_payload)
                .map(|(f, e)| format!("{} MaxPayload {} bytes", inputs.label(f.address), e.max_payload))
                .collect();
            let evidence: Vec<String> = path
                .iter()
                .map(|(f, e)| {
                    format!(
                        "{}: MaxPayload {} bytes (supports {})",
                        inputs.label(f.address),
                        e.max_payload,
                        e.max_payload_supported
                    )
                })
                .collect();
            let (verdict, message) = if device.max_payload < supported {
                (
                    Verdict::Warn,
                    format!(
                        "MaxPayload {} bytes, but every device and bridge under its root port supports {supported}",
                        device.max_payload
                    ),
                )
            } else if !inconsistent.is_empty() {
                (
                    Verdict::Warn,
                    format!(
                        "MaxPayload {} bytes differs along the path: {}",
                        device.max_payload,
                        inconsistent.join(", ")
                    ),
                )
            } else {
                (Verdict::Pass, format!("MaxPayload {} bytes, the most its hierarchy supports", device.max_payload))
            };
            let evidence: Vec<String> = evidence
                .into_iter()
                .chain(limiter.map(|l| format!("hierarchy limited to {supported} bytes by {}", inputs.label(l))))
                .collect();
            let mut finding = Finding::new(self.id(), verdict, inputs.label(endpoint.address), message)
                .expected(format!("{supported} bytes"))
                .observed(format!("{} bytes", device.max_payload));
            finding.evidence = evidence;
            findings.push(finding);
        }
        findings.extend(unknown_config_findings(self.id(), inputs, unknown, inputs.endpoints.len()));
        findings
    }
}

#[derive(Debug)]
pub struct MaxReadRequest;

impl Check for MaxReadRequest {
    fn id(&self) -> &'static str {
        "pcie.mrrs"
    }
    fn doc_short(&self) -> &'static str {
        "RDMA NIC Max Read Request Size below policy (4096 bytes)"
    }
    fn doc_long(&self) -> &'static str {
        "Decodes Device Control's Max_Read_Request_Size of each RDMA NIC. Below the policy minimum \
         (default 4096 bytes, what NVIDIA's mlnx_tune sets) the NIC splits DMA reads — the data path \
         of RDMA WRITE/SEND and GPUDirect — into more requests: warn. Fix with setpci \
         CAP_EXP+8.w (bits 14:12) or the adapter's firmware setting. Needs root (config space past 64 \
         bytes). Source: PCIe Base Spec §7.5.3.4."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, policy: &Policy) -> Vec<Finding> {
        if let Some(findings) = no_endpoints(self.id(), inputs) {
            return findings;
        }
        let nics: Vec<&PciFunction> = inputs.endpoints.iter().copied().filter(|f| inputs.is_nic(f)).collect();
        if nics.is_empty() {
            return vec![Finding::new(self.id(), Verdict::Skip, "node", "no RDMA NIC on this node")];
        }
        let minimum = policy.pcie.nic_min_read_request_bytes;
        let mut findings = Vec::new();
        let mut unknown = Vec::new();
        for nic in &nics {
            let express = match decoded(nic) {
                Ok(config) => config.express.as_ref(),
                Err(why) => {
                    unknown.push((nic.address, why));
                    continue;
                }
            };
            let subject = inputs.label(nic.address);
            let Some(express) = express else {
                findings.push(Finding::new(
                    self.id(),
                    Verdict::Skip,
                    subject,
                    "no PCI Express capability in config space",
                ));
                continue;
            };
            let (verdict, message) = read_request_judgement(express.max_read_request, minimum);
            findings.push(
                Finding::new(self.id(), verdict, subject, message)
                    .evidence(format!("DevCtl at config offset {:#x}+8", express.offset))
                    .expected(format!(">= {minimum} bytes"))
                    .observed(format!("{} bytes", express.max_read_request)),
            );
        }
        findings.extend(unknown_config_findings(self.id(), inputs, unknown, nics.len()));
        findings
    }
}

#[derive(Debug)]
pub struct AccessControl;

impl Check for AccessControl {
    fn id(&self) -> &'static str {
        "pcie.acs"
    }
    fn doc_short(&self) -> &'static str {
        "ACS request/completion redirect on a bridge between a GPU and a NIC"
    }
    fn doc_long(&self) -> &'static str {
        "For every GPU and NIC that share a PCIe switch (PIX/PXB), decodes the ACS Control register of \
         each bridge between them. Request Redirect or Completion Redirect enabled: fail, naming the \
         bridge — peer-to-peer TLPs (GPUDirect RDMA) are sent up to the root complex and the IOMMU \
         instead of across the switch, which slows NCCL or makes it hang or crash (NVIDIA/nccl#304, \
         #928). Fix: disable ACS in the BIOS, or `setpci -s BRIDGE ECAP_ACS+0x6.w=0000` (not persistent). \
         Needs root. Source: PCIe Base Spec §7.7.11 (ACS Extended Capability)."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        if let Some(findings) = no_endpoints(self.id(), inputs) {
            return findings;
        }
        let topology = &inputs.topology;
        // bridge -> the GPU/NIC pairs whose peer traffic crosses it
        let mut crossings: BTreeMap<PciAddress, Vec<String>> = BTreeMap::new();
        for (g, gpu) in topology.gpus.iter().enumerate() {
            for (n, nic) in topology.nics.iter().enumerate() {
                if !topology.gpu_nic(g, n).within_switch() {
                    continue;
                }
                let (Some(gpu_function), Some(nic_function)) =
                    (inputs.node.function(gpu.address), inputs.node.function(nic.address))
                else {
                    continue;
                };
                for bridge in crate::topology::bridges_between(gpu_function, nic_function) {
                    crossings.entry(bridge).or_default().push(format!("{}<->{}", gpu.label, nic.name));
                }
            }
        }
        if crossings.is_empty() {
            return vec![Finding::new(
                self.id(),
                Verdict::Skip,
                "node",
                "no GPU and NIC share a PCIe switch (no PIX/PXB pair): ACS cannot redirect their peer traffic",
            )];
        }
        let mut findings = Vec::new();
        let mut unknown = Vec::new();
        for (bridge, pairs) in crossings {
            let Some(function) = inputs.node.function(bridge) else {
                continue;
            };
            let subject = inputs.label(bridge);
            let acs = match decoded(function) {
                Ok(config) => config.acs,
                Err(why) => {
                    unknown.push((bridge, why));
                    continue;
                }
            };
            let pairs_text = pairs.join(", ");
            let finding = match acs {
                None => Finding::new(self.id(), Verdict::Pass, subject, format!("no ACS capability: peer traffic of {pairs_text} stays in the switch")),
                Some(acs) if acs_redirects(&acs.control) => Finding::new(
                    self.id(),
                    Verdict::Fail,
                    subject,
                    format!(
                        "ACS redirect enabled on the bridge between {pairs_text}: GPUDirect peer traffic is forced through the root complex/IOMMU; disable ACS (BIOS) or `setpci -s {bridge} ECAP_ACS+0x6.w=0000`"
                    ),
                )
                .evidence(format!("ACSCtl: {} (config offset {:#x})", acs.control.lspci_flags(), acs.offset + 6))
                .expected("ReqRedir- CmpltRedir-")
                .observed(acs.control.lspci_flags()),
                Some(acs) => Finding::new(self.id(), Verdict::Pass, subject, format!("ACS redirect off for {pairs_text}"))
                    .evidence(format!("ACSCtl: {}", acs.control.lspci_flags())),
            };
            findings.push(finding);
        }
        let total = findings.len() + unknown.len();
        findings.extend(unknown_config_findings(self.id(), inputs, unknown, total));
        findings
    }
}

#[derive(Debug)]
pub struct ErrorReporting;

impl Check for ErrorReporting {
    fn id(&self) -> &'static str {
        "pcie.aer"
    }
    fn doc_short(&self) -> &'static str {
        "PCIe AER errors on GPUs, NICs and the bridges above them"
    }
    fn doc_long(&self) -> &'static str {
        "Reads the kernel's AER counters (sysfs aer_dev_fatal, aer_dev_nonfatal, aer_dev_correctable; \
         Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats) of every GPU and RDMA NIC and each \
         bridge above them. Any fatal or non-fatal error: fail (data was lost or the link reset). \
         Correctable errors: warn (the link is retrying: a marginal slot, riser or retimer that may get \
         worse). Without the counters, the AER capability's latched status registers are shown; latched \
         bits record history since the last clear, so uncorrectable bits only warn."
    }
    fn evaluate(&self, inputs: &Inputs<'_>, _policy: &Policy) -> Vec<Finding> {
        if let Some(findings) = no_endpoints(self.id(), inputs) {
            return findings;
        }
        let mut subjects: Vec<&PciFunction> = inputs.endpoints.clone();
        subjects.extend(inputs.bridges_above_endpoints());
        subjects.sort_by_key(|f| f.address);
        subjects.iter().map(|f| aer_finding(self.id(), inputs, f)).collect()
    }
}

fn aer_finding(id: &str, inputs: &Inputs<'_>, function: &PciFunction) -> Finding {
    let subject = inputs.label(function.address);
    if let Some(aer) = &function.aer {
        let nonzero = |counters: &BTreeMap<String, u64>| -> Vec<String> {
            counters.iter().filter(|(_, v)| **v > 0).map(|(k, v)| format!("{k} {v}")).collect()
        };
        let mut finding = if aer.total_fatal + aer.total_nonfatal > 0 {
            Finding::new(
                id,
                Verdict::Fail,
                subject,
                format!(
                    "{} fatal and {} non-fatal uncorrectable errors since boot",
                    aer.total_fatal, aer.total_nonfatal
                ),
            )
        } else if aer.total_correctable > 0 {
            Finding::new(
                id,
                Verdict::Warn,
                subject,
                format!("{} correctable errors since boot: the link is retrying", aer.total_correctable),
            )
        } else {
            Finding::new(id, Verdict::Pass, subject, "no AER errors since boot")
        };
        for (file, counters) in [
            ("aer_dev_fatal", &aer.fatal),
            ("aer_dev_nonfatal", &aer.nonfatal),
            ("aer_dev_correctable", &aer.correctable),
        ] {
            let counted = nonzero(counters);
            if !counted.is_empty() {
                finding = finding.evidence(format!("{file}: {}", counted.join(", ")));
            }
        }
        return finding.observed(format!(
            "fatal {}, non-fatal {}, correctable {}",
            aer.total_fatal, aer.total_nonfatal, aer.total_correctable
        ));
    }
    match function.config.as_ref().ok().and_then(|c| c.aer.as_ref()) {
        Some(aer) => {
            let status = format!(
                "UESta {:#010x} CESta {:#010x} (latched status, no sysfs counters)",
                aer.uncorrectable_status, aer.correctable_status
            );
            let (verdict, message) = latched_aer_judgement(aer);
            Finding::new(id, verdict, subject, message).evidence(status)
        }
        None => Finding::new(id, Verdict::Skip, subject, "no AER counters in sysfs and no readable AER capability"),
    }
}

#[cfg(test)]
mod load_tests {
    use super::*;
    use fabricdoctor_probes::gpu::{GpuObservation, KernelLog, LinkUnderLoad, NvmlReading};
    use fabricdoctor_probes::pci::PciLink;
    use fabricdoctor_probes::{NodeSnapshot, SysRoot};

    /// faulty-node's GPU1 (0000:3a:00.0) sits at 2.5 GT/s of 32 GT/s while idle.
    fn faulty_node() -> NodeSnapshot {
        NodeSnapshot::probe(&SysRoot::captured(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/faulty-node")))
    }

    fn gpu1() -> PciAddress {
        PciAddress::parse("0000:3a:00.0").expect("address")
    }

    fn loaded(speed: u8, width: u8) -> Result<LoadedLink, String> {
        Ok(LoadedLink {
            link: PciLink {
                current_speed: Some(LinkGeneration(speed)),
                current_width: Some(width),
                max_speed: Some(LinkGeneration(5)),
                max_width: Some(16),
            },
            host_to_device_gbps: 48.1,
            device_to_host_gbps: 48.1,
            seconds: 1.5,
        })
    }

    fn speed_finding(outcome: Option<Result<LoadedLink, String>>) -> Finding {
        let node = faulty_node();
        let observation = GpuObservation {
            nvml: Ok(NvmlReading::NoDriver { reason: String::new() }),
            earlier: None,
            kernel_log: Ok(KernelLog::default()),
            under_load: outcome.map(|outcome| vec![LinkUnderLoad { address: gpu1(), outcome }]),
        };
        let inputs = Inputs::new(&node).with_gpu(Some(&observation));
        let findings = LinkSpeed.evaluate(&inputs, &Policy::default());
        findings.into_iter().find(|f| f.subject.starts_with("0000:3a:00.0")).expect("GPU1 finding")
    }

    #[test]
    fn an_idle_gpu_link_is_a_warning_to_recheck_under_load() {
        let finding = speed_finding(None);
        assert_eq!(finding.verdict, Verdict::Warn);
        assert!(finding.message.contains("recheck under load"), "{}", finding.message);
    }

    #[test]
    fn a_gpu_link_that_comes_up_under_load_passes() {
        let finding = speed_finding(Some(loaded(5, 16)));
        assert_eq!(finding.verdict, Verdict::Pass, "{}", finding.message);
        assert_eq!(finding.message, "2.5 GT/s idle, came up to 32 GT/s under load: the GPU saves power at idle");
        assert!(finding.evidence.iter().any(|e| e.starts_with("under load (1.5 s")), "{:?}", finding.evidence);
    }

    #[test]
    fn a_gpu_link_that_stays_low_under_load_fails() {
        let finding = speed_finding(Some(loaded(1, 16)));
        assert_eq!(finding.verdict, Verdict::Fail);
        assert_eq!(finding.message, "stayed at 2.5 GT/s of 32 GT/s under host<->device copies: link downgraded");
    }

    #[test]
    fn a_load_that_could_not_run_keeps_the_warning_and_says_why() {
        let finding = speed_finding(Some(Err("no NVIDIA driver: libcuda.so.1 not found".into())));
        assert_eq!(finding.verdict, Verdict::Warn);
        assert!(
            finding.message.ends_with("could not run: no NVIDIA driver: libcuda.so.1 not found"),
            "{}",
            finding.message
        );
    }
}
