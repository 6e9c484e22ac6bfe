//! The triage report: ranked diagnoses with their evidence and next steps, observations from the
//! checks, and what each input was read as. Rendered as text here; JSON is serde of the same data.

use std::collections::BTreeSet;

use fabricdoctor_checks::{Finding, Verdict};
use serde::{Deserialize, Serialize};

use super::analysis::Analysis;
pub use super::analysis::InputSummary;
use crate::fact::{Evidence, Fact};
use crate::playbook::{fill_placeholders, fill_prose, Confidence, Playbook, Rule};

/// Version of the JSON shape; bumped on any change of meaning.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Diagnosis {
    /// The rule id: stable, for tooling ("roce-gid-index").
    pub id: String,
    pub playbook: String,
    pub cause: String,
    pub confidence: Confidence,
    pub evidence: Vec<Evidence>,
    /// What the rule's facts say, one line each ("nccl.wc_error: status=12 status_name=...").
    pub facts: Vec<String>,
    pub next_steps: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undetermined: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub collect: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RankLocation {
    pub rank: u64,
    pub host: Option<String>,
    pub gpu: Option<u32>,
    pub nic: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TriageReport {
    pub schema_version: u32,
    pub inputs: Vec<InputSummary>,
    pub diagnoses: Vec<Diagnosis>,
    pub observations: Vec<Finding>,
    pub ranks: Vec<RankLocation>,
}

impl TriageReport {
    pub fn has_diagnosis(&self) -> bool {
        !self.diagnoses.is_empty()
    }
}

fn describe(fact: &Fact) -> String {
    let attrs: Vec<String> =
        fact.attrs.iter().filter(|(k, _)| k.as_str() != "meaning").map(|(k, v)| format!("{k}={v}")).collect();
    let meaning = fact.get("meaning").map(|m| format!(" — {m}")).unwrap_or_default();
    if attrs.is_empty() {
        format!("{}{meaning}", fact.name)
    } else {
        format!("{}: {}{meaning}", fact.name, attrs.join(" "))
    }
}

/// A rule's diagnosis from the facts that support it.
fn diagnose(playbook: &Playbook, rule: &Rule, confidence: Confidence, support: &[&Fact]) -> Diagnosis {
    let mut evidence: Vec<Evidence> = Vec::new();
    let mut seen = BTreeSet::new();
    for fact in support {
        for e in &fact.evidence {
            if seen.insert((e.file.clone(), e.line, e.text.clone())) {
                evidence.push(e.clone());
            }
        }
    }
    const MAX_FACTS: usize = 12;
    let mut facts: Vec<String> = support.iter().take(MAX_FACTS).map(|f| describe(f)).collect();
    if support.len() > MAX_FACTS {
        facts.push(format!("... and {} more", support.len() - MAX_FACTS));
    }
    Diagnosis {
        id: rule.id.clone(),
        playbook: playbook.name.clone(),
        cause: fill_prose(rule.cause.trim(), support),
        confidence,
        evidence: evidence.into_iter().take(40).collect(),
        facts,
        next_steps: rule.next_steps.iter().map(|s| fill_placeholders(s, support)).collect(),
        undetermined: rule.undetermined.as_ref().map(|u| fill_prose(u.trim(), support)),
        collect: rule.collect.iter().map(|c| fill_placeholders(c, support)).collect(),
    }
}

/// The diagnoses of the fault family that the first of the unexplained error lines names, if one
/// does: the rules that fire once its fact is added, and only through it, at low confidence.
fn by_family(facts: &[Fact], unexplained: &[Evidence], playbooks: &[Playbook]) -> Vec<Diagnosis> {
    let mut lines: Vec<&Evidence> = unexplained.iter().collect();
    lines.sort_by(|a, b| (a.file.as_str(), a.line).cmp(&(b.file.as_str(), b.line)));
    lines.dedup_by(|a, b| a.file == b.file && a.line == b.line);
    let Some(named) = super::error_families::first_family(&lines) else { return Vec::new() };
    let mut facts = facts.to_vec();
    facts.push(named);
    let named = facts.last().expect("just pushed");
    let mut diagnoses = Vec::new();
    for playbook in playbooks {
        for rule in playbook.rules.iter().filter(|rule| !rule.fallback && !rule.catch_all) {
            let Some((_, support)) = rule.evaluate(&facts) else { continue };
            if !support.iter().any(|fact| std::ptr::eq(*fact, named)) {
                continue;
            }
            let mut diagnosis = diagnose(playbook, rule, Confidence::Low, &support);
            diagnosis.undetermined = Some(format!(
                "Named from the words of an error line that no playbook reads in full (\"{}\"); confirm with the next steps.",
                named.get("text").unwrap_or_default()
            ));
            diagnoses.push(diagnosis);
        }
    }
    diagnoses
}

pub fn evaluate(analysis: Analysis, playbooks: &[Playbook]) -> TriageReport {
    let mut diagnoses = Vec::new();
    let mut fallbacks = Vec::new();
    let mut catch_alls = Vec::new();
    for playbook in playbooks {
        for rule in &playbook.rules {
            let Some((confidence, support)) = rule.evaluate(&analysis.facts) else { continue };
            let diagnosis = diagnose(playbook, rule, confidence, &support);
            if rule.catch_all {
                catch_alls.push(diagnosis);
            } else if rule.fallback {
                fallbacks.push(diagnosis);
            } else {
                diagnoses.push(diagnosis);
            }
        }
    }
    // Nothing read in full: the first unexplained error line that names a family of faults (the
    // call, status or resource it speaks of) gives the fault it belongs to, ranked first at low
    // confidence, with the undetermined diagnoses after it.
    let read_in_full = !diagnoses.is_empty();
    if diagnoses.is_empty() {
        diagnoses = fallbacks;
    }
    if diagnoses.is_empty() {
        diagnoses = catch_alls;
    }
    let mut unexplained: Vec<Evidence> = analysis
        .facts
        .iter()
        .filter(|fact| fact.name == "input.error_lines")
        .flat_map(|fact| fact.evidence.iter().cloned())
        .collect();
    // Never silent: lines that look like errors, read into facts a rule is diagnosed from but that
    // it could not take up for want of a fact it requires (a RoCE address error where nothing else
    // says the port is RoCE), are errors no playbook explains. Facts that explain lines as
    // harmless (the fabric manager with nothing to manage), and faults a rule was ruled out for
    // (no RDMA device on a single host), keep their lines.
    // The same holds for a fault that rules name only in other forms (a queue pair that could not
    // reach RTR, with nothing to say why): its error lines are not explained by being read. Facts
    // no rule names at all are the readers' explanations (a fabric manager with nothing to manage,
    // a launcher's transport left unused by policy), whose lines stay explained.
    if diagnoses.is_empty() {
        let rules = || playbooks.iter().flat_map(|p| &p.rules);
        let unheeded = analysis
            .facts
            .iter()
            .filter(|fact| rules().any(|rule| rule.names(fact)) && !rules().any(|rule| rule.heeds(fact)));
        let faults: Vec<&Fact> =
            rules().flat_map(|rule| rule.wanting_context(&analysis.facts)).chain(unheeded).collect();
        if let Some(unused) = super::unexplained::unused_error_lines(&faults) {
            unexplained.extend(unused.evidence.iter().cloned());
            let mut facts = analysis.facts.clone();
            facts.push(unused);
            for playbook in playbooks {
                for rule in playbook.rules.iter().filter(|rule| rule.catch_all) {
                    if let Some((confidence, support)) = rule.evaluate(&facts) {
                        diagnoses.push(diagnose(playbook, rule, confidence, &support));
                    }
                }
            }
        }
    }
    diagnoses.sort_by(|a, b| b.confidence.cmp(&a.confidence).then(b.evidence.len().cmp(&a.evidence.len())));
    if !read_in_full {
        let named = by_family(&analysis.facts, &unexplained, playbooks);
        diagnoses.splice(0..0, named);
    }
    let ranks = analysis
        .ranks
        .ranks
        .iter()
        .map(|(rank, entry)| RankLocation {
            rank: *rank,
            host: entry.host.clone(),
            gpu: entry.gpu,
            nic: analysis.ranks.nic(*rank).map(str::to_string),
        })
        .collect();
    TriageReport {
        schema_version: SCHEMA_VERSION,
        inputs: analysis.inputs,
        diagnoses,
        observations: analysis.observations,
        ranks,
    }
}

/// The report as an engineer reads it.
pub fn render_text(report: &TriageReport) -> String {
    let mut out = String::new();
    if report.inputs.len() <= 8 {
        let inputs: Vec<String> =
            report.inputs.iter().map(|i| format!("{} ({})", i.file, i.kinds.join(", "))).collect();
        out.push_str(&format!("inputs: {}\n", inputs.join("; ")));
    } else {
        let mut kinds: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
        for kind in report.inputs.iter().flat_map(|i| i.kinds.iter()) {
            *kinds.entry(kind.as_str()).or_default() += 1;
        }
        let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
        out.push_str(&format!("inputs: {} files ({})\n", report.inputs.len(), kinds.join(", ")));
    }
    if report.diagnoses.is_empty() {
        out.push_str("\nno diagnosis: nothing in the inputs matches a known fault\n");
    }
    for (i, diagnosis) in report.diagnoses.iter().enumerate() {
        out.push_str(&format!(
            "\n{}. {} [{} confidence] ({})\n",
            i + 1,
            diagnosis.id,
            diagnosis.confidence,
            diagnosis.playbook
        ));
        for line in diagnosis.cause.lines() {
            out.push_str(&format!("   {}\n", line.trim()));
        }
        if let Some(undetermined) = &diagnosis.undetermined {
            out.push_str(&format!("   undetermined: {undetermined}\n"));
        }
        out.push_str("   facts:\n");
        for fact in &diagnosis.facts {
            out.push_str(&format!("     - {fact}\n"));
        }
        out.push_str("   evidence:\n");
        for e in &diagnosis.evidence {
            if e.line == 0 {
                out.push_str(&format!("     {}: {}\n", e.file, e.text));
            } else {
                out.push_str(&format!("     {}:{}: {}\n", e.file, e.line, e.text));
            }
        }
        if !diagnosis.collect.is_empty() {
            out.push_str("   collect:\n");
            for item in &diagnosis.collect {
                out.push_str(&format!("     - {item}\n"));
            }
        }
        out.push_str("   next steps:\n");
        for step in &diagnosis.next_steps {
            out.push_str(&format!("     - {step}\n"));
        }
    }
    let notable: Vec<&Finding> = report.observations.iter().filter(|f| f.verdict != Verdict::Pass).collect();
    let passed = report.observations.len() - notable.len();
    if !report.observations.is_empty() {
        out.push_str(&format!("\nobservations from tool outputs ({} notable, {passed} pass):\n", notable.len()));
        for finding in report.observations.iter() {
            out.push_str(&format!(
                "  {:<5} {:<22} {}: {}\n",
                finding.verdict, finding.id, finding.subject, finding.message
            ));
            if finding.verdict != Verdict::Pass {
                for e in &finding.evidence {
                    out.push_str(&format!("        {e}\n"));
                }
            }
        }
    }
    if !report.ranks.is_empty() && report.ranks.len() <= 64 {
        out.push_str("\nranks:\n");
        for rank in &report.ranks {
            out.push_str(&format!(
                "  rank {:<4} host {} GPU {} NIC {}\n",
                rank.rank,
                rank.host.as_deref().unwrap_or("?"),
                rank.gpu.map(|g| g.to_string()).unwrap_or_else(|| "?".into()),
                rank.nic.as_deref().unwrap_or("?")
            ));
        }
    }
    out
}
