//! The subnet manager's own verdict on ports. OpenSM's health monitor (which UFM runs, with
//! `hm_unhealthy_ports_checks`) lists every port it declared unhealthy, one per line, under the
//! header `# NodeGUID, PortNum, NodeDesc, PeerNodeGUID, PeerPortNum, PeerNodeDesc, {BadCond1,
//! BadCond2, ...}, TimeStamp` (NVIDIA UFM Enterprise User Manual, "Unhealthy Ports"):
//!
//! ```text
//! 0x0011223344550001, 25, "spine-sw-03", 0x0055667788990001, 25, "leaf-sw-38", {FLAPPING}, Fri Mar 20 01:13:40 2026
//! ```
//!
//! A FLAPPING port is one the SM found in Initializing in 5 of its last 10 sweeps: its link keeps
//! going down and training again. Both ends of a link are listed, so links are counted once.
//! The other conditions (REBOOT, UNRESPONSIVE, NOISY, SET_NODE_FAILED, MANUAL, ...) describe the
//! node, not the link, and are reported as observations.

use fabricdoctor_checks::{Finding, Verdict};

use super::analysis::Analysis;
use super::counters::cite;
use super::lines::numbered_lines;
use crate::fact::{Evidence, Fact};

#[derive(Debug, Clone, PartialEq)]
pub struct UnhealthyPort {
    pub node: String,
    pub port: u32,
    pub peer: String,
    pub peer_port: u32,
    pub conditions: Vec<String>,
    pub evidence: Evidence,
}

impl UnhealthyPort {
    fn end(&self) -> String {
        format!("{}/{}", self.node, self.port)
    }

    fn peer_end(&self) -> String {
        format!("{}/{}", self.peer, self.peer_port)
    }
}

/// Splits one report line into its fields: commas separate them, except inside a quoted node
/// description or the braces of the condition list.
fn fields(line: &str) -> Vec<&str> {
    let mut fields = Vec::new();
    let (mut start, mut quoted, mut braces) = (0, false, false);
    for (at, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '{' if !quoted => braces = true,
            '}' if !quoted => braces = false,
            ',' if !quoted && !braces => {
                fields.push(line[start..at].trim());
                start = at + 1;
            }
            _ => {}
        }
    }
    fields.push(line[start..].trim());
    fields
}

fn is_guid(field: &str) -> bool {
    field.strip_prefix("0x").is_some_and(|hex| !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit()))
}

fn unhealthy_port(file: &str, line_no: usize, raw: &str) -> Option<UnhealthyPort> {
    let line = raw.trim();
    if !line.starts_with("0x") || !line.contains('{') {
        return None;
    }
    let fields = fields(line);
    if fields.len() < 7 || !is_guid(fields[0]) || !is_guid(fields[3]) {
        return None;
    }
    let conditions = fields[6].strip_prefix('{')?.strip_suffix('}')?;
    Some(UnhealthyPort {
        node: fields[2].trim_matches('"').to_string(),
        port: fields[1].parse().ok()?,
        peer: fields[5].trim_matches('"').to_string(),
        peer_port: fields[4].parse().ok()?,
        conditions: conditions.split(',').map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect(),
        evidence: Evidence::new(file, line_no, raw),
    })
}

pub fn parse(file: &str, text: &str) -> Vec<UnhealthyPort> {
    if !text.contains('{') {
        return Vec::new();
    }
    numbered_lines(text).filter_map(|(line_no, raw)| unhealthy_port(file, line_no, raw)).collect()
}

/// `link.flap` for every link the SM saw flapping (one fact, each link once), and an observation
/// for every other condition.
pub fn analyze(ports: &[UnhealthyPort], analysis: &mut Analysis) {
    let mut links: Vec<(String, String)> = Vec::new();
    let mut evidence: Vec<Evidence> = Vec::new();
    for port in ports {
        if port.conditions.iter().any(|c| c.eq_ignore_ascii_case("FLAPPING")) {
            let (end, peer) = (port.end(), port.peer_end());
            if !links.iter().any(|(a, b)| (a == &end && b == &peer) || (a == &peer && b == &end)) {
                links.push((end, peer));
                evidence.push(port.evidence.clone());
            }
        }
        let others: Vec<&str> =
            port.conditions.iter().map(String::as_str).filter(|c| !c.eq_ignore_ascii_case("FLAPPING")).collect();
        if !others.is_empty() {
            analysis.observations.push(
                Finding::new(
                    "sm.unhealthy_port",
                    Verdict::Warn,
                    port.end(),
                    format!("the subnet manager declared this port unhealthy: {}", others.join(", ")),
                )
                .evidence(cite(&port.evidence)),
            );
        }
    }
    if links.is_empty() {
        return;
    }
    let named: Vec<String> = links.iter().map(|(a, b)| format!("{a} - {b}")).collect();
    let mut fact = Fact::new("link.flap").attr("nic", named.join(", ")).attr("count", links.len());
    for evidence in evidence.into_iter().take(4) {
        fact = fact.evidence(evidence);
    }
    analysis.push(fact);
}

/// OpenSM's own log (/var/log/opensm.log: "<usec> [<tid>] <level> -> <function>: <message>", the
/// level 0x01 for errors; osm_log.c) when OpenSM gave up: errors, then "Exiting SM" (as OpenSM
/// prints on any exit, a stop included, so the errors before it are what make it a failure). A
/// subnet manager that failed to bind to its port (osm_sm_bind "SM MAD Controller bind failed")
/// configures nothing: the fabric's ports stay in Init, or lose their SM, until another one runs.
pub fn failures(file: &str, text: &str) -> Vec<Fact> {
    // One search of the input instead of one split per line of every other log.
    if !text.contains("Exiting SM") {
        return Vec::new();
    }
    let mut first_error: Option<(Evidence, String)> = None;
    for (line_no, raw) in numbered_lines(text) {
        let Some((level, message)) = raw.split_once(" -> ").and_then(|(head, message)| {
            let level = head.split_whitespace().last()?;
            (level.starts_with("0x") && head.contains('[')).then_some((level, message.trim()))
        }) else {
            continue;
        };
        if level == "0x01" && message.contains(" ERR ") && first_error.is_none() {
            first_error = Some((Evidence::new(file, line_no, raw), message.to_string()));
        }
        if message == "Exiting SM" {
            if let Some((error, text)) = first_error.take() {
                return vec![Fact::new("sm.failed")
                    .attr("what", format!("OpenSM exited after \"{text}\""))
                    .evidence(error)
                    .evidence(Evidence::new(file, line_no, raw))];
            }
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// linux-rdma/opensm#37: after a kernel upgrade OpenSM cannot register its MAD class, fails its
    /// SM bind and exits; a stop without errors is no failure.
    #[test]
    fn opensm_exiting_after_errors_has_failed() {
        let log =
            "  140711 [F0D43740] 0x02 -> osm_vendor_bind: Mgmt class 0x81 binding to port GUID 0x9c63c00300033240\n\
                   \x20 165028 [F0D43740] 0x01 -> osm_vendor_bind: ERR 5426: Unable to register class 129 version 1\n\
                   \x20 165162 [F0D43740] 0x01 -> osm_sm_bind: ERR 2E10: SM MAD Controller bind failed (IB_ERROR)\n\
                   \x20 165630 [F0D43740] 0x80 -> Exiting SM\n";
        let facts = failures("opensm.log", log);
        assert_eq!(facts.len(), 1);
        assert_eq!(facts[0].name, "sm.failed");
        assert!(facts[0].get("what").is_some_and(|w| w.contains("ERR 5426")), "{facts:?}");
        assert_eq!(facts[0].evidence.iter().map(|e| e.line).collect::<Vec<_>>(), [2, 4]);
        let stopped = "Mar 20 01:13:40 123456 [F0D43740] 0x80 -> OpenSM 3.3.23\nMar 20 01:20:00 654321 [F0D43740] 0x80 -> Exiting SM\n";
        assert!(failures("opensm.log", stopped).is_empty());
    }

    /// facebookresearch/gcm's health-check fixture: two links, each listed from both of its ends.
    #[test]
    fn flapping_links_are_counted_once_and_other_conditions_observed() {
        let text = "\
# NodeGUID, PortNum, NodeDesc, PeerNodeGUID, PeerPortNum,  PeerNodeDesc, {BadCond1, BadCond2, ...}, TimeStamp
0x0011223344550001, 25, \"spine-sw-03\", 0x0055667788990001, 25, \"leaf-sw-38\", {FLAPPING}, Fri Mar 20 01:13:40 2026
0x0055667788990002, 37, \"leaf-sw-28\", 0x0011223344550002, 28, \"spine-sw-09\", {FLAPPING}, Tue Mar 17 14:00:37 2026
0x0011223344550002, 28, \"spine-sw-09\", 0x0055667788990002, 37, \"leaf-sw-28\", {FLAPPING}, Tue Mar 17 14:00:37 2026
0x0055667788990001, 25, \"leaf-sw-38\", 0x0011223344550001, 25, \"spine-sw-03\", {FLAPPING}, Fri Mar 20 01:13:40 2026
0x0055667788990009, 3, \"node12 HCA-1, mlx5_0\", 0x0011223344550009, 7, \"leaf-sw-01\", {UNRESPONSIVE, NOISY}, Fri Mar 20 01:13:40 2026
";
        let ports = parse("f", text);
        assert_eq!(ports.len(), 5);
        assert_eq!(ports[4].node, "node12 HCA-1, mlx5_0");
        let mut analysis = Analysis::default();
        analyze(&ports, &mut analysis);
        let flap = analysis.facts.iter().find(|f| f.name == "link.flap").expect("flap");
        assert_eq!(flap.get("count"), Some("2"));
        assert_eq!(flap.get("nic"), Some("spine-sw-03/25 - leaf-sw-38/25, leaf-sw-28/37 - spine-sw-09/28"));
        assert_eq!(analysis.observations.len(), 1);
        // A port listed for another condition only is no flap.
        let mut analysis = Analysis::default();
        analyze(&parse("f", &text.replace("{FLAPPING}", "{REBOOT}")), &mut analysis);
        assert!(!analysis.has("link.flap"));
        // Lines that only look alike: no GUIDs, no braces.
        assert!(parse("f", "0x12, 1, \"a\", 7, 2, \"b\", {X}, now\n").is_empty());
        assert!(parse("f", "0x12, 1, \"a\", 0x13, 2, \"b\", X, now\n").is_empty());
    }
}
