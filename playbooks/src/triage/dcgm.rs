//! `dcgmi diag -r N` results (NVIDIA Data Center GPU Manager): which diagnostic test failed on which
//! GPU and why, and what the tests warned about.
//!
//! Formats read (NVIDIA DCGM `dcgmi/Diag.cpp`, DCGM 2.x to 4.x; DCGM User Guide, "Diagnostics"):
//! - the table: a `| Diagnostic | Result |` header, category banners (`|-----  Deployment  ---...`,
//!   `+-----  Hardware  ---...`), one row per test (`| GPU Memory | Fail - GPU: 0 |`, `Pass - All`,
//!   `Fail - GPUs: 0, 1` before DCGM 4; `| memory | Fail |` then `| | GPU0: Fail |` per entity from
//!   DCGM 4), and its messages in `Warning`, `Error`, `Info` or `Warning: GPU0` rows, wrapped every
//!   45 characters (`DATA_INFO_TAG_LEN`) into rows whose first column is empty;
//! - the JSON of `dcgmi diag -j` as jsoncpp prints it, one key per line: `test_categories` >
//!   `category`, `tests` > `name`, `results` > (`entity_group`, `entity_id` or `gpu_id`/`gpu_ids`,
//!   `status`, `warnings` > `warning`), and `test_summary` (DCGM 4). A JSON document printed on one
//!   line is not read.

use std::collections::BTreeSet;

use super::lines::numbered_lines;
use crate::fact::{Evidence, Fact};

/// A test result as dcgmi prints it (`HelperDisplayDiagResult`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    Pass,
    Fail,
    Warn,
    Skip,
    NotRun,
}

impl Verdict {
    fn from_word(word: &str) -> Option<Verdict> {
        match word.trim() {
            "Pass" => Some(Verdict::Pass),
            "Fail" => Some(Verdict::Fail),
            "Warn" => Some(Verdict::Warn),
            "Skip" => Some(Verdict::Skip),
            "Not Run" => Some(Verdict::NotRun),
            _ => None,
        }
    }

    fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "Pass",
            Verdict::Fail => "Fail",
            Verdict::Warn => "Warn",
            Verdict::Skip => "Skip",
            Verdict::NotRun => "Not Run",
        }
    }
}

/// What a verdict is about.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Subject {
    /// The test as a whole (DCGM 4's test row, a JSON test summary).
    Test,
    /// `Fail - All` (before DCGM 4).
    AllGpus,
    Gpu(String),
    /// Another entity (`CPU0`, a switch): named as printed.
    Entity(String),
}

impl Subject {
    /// `GPU0`, `CPU1` (DCGM 4's entity rows and message labels).
    fn from_entity(entity: &str) -> Subject {
        match entity.strip_prefix("GPU") {
            Some(index) if !index.is_empty() && index.chars().all(|c| c.is_ascii_digit()) => {
                Subject::Gpu(index.to_string())
            }
            _ => Subject::Entity(entity.to_string()),
        }
    }

    fn apply(&self, fact: Fact) -> Fact {
        match self {
            Subject::Test => fact,
            Subject::AllGpus => fact.attr("gpu", "all"),
            Subject::Gpu(index) => fact.attr("gpu", index),
            Subject::Entity(entity) => fact.attr("entity", entity),
        }
    }
}

#[derive(Debug, Clone)]
struct Outcome {
    subject: Subject,
    verdict: Verdict,
    evidence: Evidence,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    Warning,
    Error,
    Info,
}

/// A Warning/Error/Info message and the rows it was wrapped over.
#[derive(Debug, Clone)]
struct Message {
    label: Label,
    /// From the label (`Warning: GPU0`) or, failing that, the first `GPU n` the text names.
    subject: Subject,
    text: String,
    evidence: Vec<Evidence>,
}

impl Message {
    fn about(&self, subject: &Subject) -> bool {
        match (subject, &self.subject) {
            (Subject::Test | Subject::AllGpus, _) | (_, Subject::Test) => true,
            (wanted, own) => wanted == own,
        }
    }
}

/// One test (or, when a paste starts mid-table, the messages of a category whose test row was cut).
#[derive(Debug, Clone)]
struct TestResult {
    name: String,
    outcomes: Vec<Outcome>,
    messages: Vec<Message>,
}

/// How many characters of a message one row holds (`DATA_INFO_TAG_LEN` in dcgmi/Diag.cpp).
const ROW_CHARACTERS: usize = 45;

/// The first `GPU n` a message names ("GPU 3 has uncorrectable memory errors ...").
fn gpu_named_in(text: &str) -> Subject {
    let mut rest = text;
    while let Some(at) = rest.find("GPU ") {
        let digits: String = rest[at + 4..].chars().take_while(|c| c.is_ascii_digit()).collect();
        if !digits.is_empty() {
            return Subject::Gpu(digits);
        }
        rest = &rest[at + 4..];
    }
    Subject::Test
}

/// A table row's two cells, untrimmed: `| name | info |`.
fn table_row(line: &str) -> Option<(&str, &str)> {
    let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    let (name, info) = inner.split_once('|')?;
    (!info.contains('|')).then_some((name, info))
}

/// A category banner: `|-----  Deployment  --------+---...|` or `+-----  Hardware  ---...+`.
fn banner(line: &str) -> Option<&str> {
    let line = line.trim();
    let rest = line.strip_prefix("|-----").or_else(|| line.strip_prefix("+-----"))?;
    let title = rest.split('+').next()?.trim_matches(|c: char| c == '-' || c.is_whitespace());
    (!title.is_empty()).then_some(title)
}

/// A message row's label: `Warning`, `Error`, `Info`, or DCGM 4's `Warning: GPU0`.
fn message_label(name: &str) -> Option<(Label, Option<Subject>)> {
    let (word, entity) = match name.split_once(':') {
        Some((word, entity)) => (word.trim(), Some(Subject::from_entity(entity.trim()))),
        None => (name, None),
    };
    let label = match word {
        "Warning" => Label::Warning,
        "Error" => Label::Error,
        "Info" => Label::Info,
        _ => return None,
    };
    Some((label, entity))
}

/// The verdicts a result cell gives: `Pass`, `Fail - GPU: 0`, `Fail - GPUs: 0, 1`, `Skip - All`,
/// or DCGM 4's `GPU0: Fail`.
fn outcomes(info: &str) -> Option<Vec<(Subject, Verdict)>> {
    let info = info.trim();
    if let Some(verdict) = Verdict::from_word(info) {
        return Some(vec![(Subject::Test, verdict)]);
    }
    if let Some((word, rest)) = info.split_once(" - ") {
        let verdict = Verdict::from_word(word)?;
        let rest = rest.trim();
        if rest == "All" {
            return Some(vec![(Subject::AllGpus, verdict)]);
        }
        let list = rest.strip_prefix("GPUs:").or_else(|| rest.strip_prefix("GPU:"))?;
        let gpus: Vec<(Subject, Verdict)> = list
            .split(',')
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .map(|g| g.chars().all(|c| c.is_ascii_digit()).then(|| (Subject::Gpu(g.to_string()), verdict)))
            .collect::<Option<_>>()?;
        return (!gpus.is_empty()).then_some(gpus);
    }
    let (entity, word) = info.split_once(": ")?;
    let verdict = Verdict::from_word(word)?;
    let entity_like = entity.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && entity.chars().last().is_some_and(|c| c.is_ascii_digit())
        && !entity.contains(' ');
    entity_like.then(|| vec![(Subject::from_entity(entity), verdict)])
}

/// The tests and deployment checks `dcgmi diag` reports by name (DCGM 2.x-4.x, the plugin names of
/// its diagnostic, `nvvs/plugin_src`, and the software plugin's checks).
const DIAGNOSTIC_TESTS: &[&str] = &[
    "Denylist",
    "Blacklist",
    "NVML Library",
    "CUDA Main Library",
    "CUDA Toolkit Libraries",
    "Permissions and OS-related Blocks",
    "Permissions and OS Blocks",
    "Persistence Mode",
    "Environmental Variables",
    "Environment Variables",
    "Page Retirement/Row Remap",
    "Graphics Processes",
    "Inforom",
    "Fabric Manager",
    "GPU Memory",
    "Memory",
    "Memtest",
    "Memory Bandwidth",
    "Diagnostic",
    "PCIe",
    "SM Stress",
    "Targeted Stress",
    "Targeted Power",
    "Pulse Test",
    "EUD",
    "NCCL Tests",
    "Context Create",
    "Software",
    // DCGM 4 names the rows by plugin (dcgmi/DcgmiOutput and nvvs/plugin_src): `nvbandwidth`,
    // `memory_bandwidth`, `targeted_stress`; the others match the names above once lowercased.
    "nvbandwidth",
];

/// Whether a row's name is a test DCGM runs: DCGM 3's `Targeted Stress` and DCGM 4's
/// `targeted_stress` alike.
fn is_diagnostic_test(name: &str) -> bool {
    let words = |s: &str| s.trim().replace('_', " ").to_ascii_lowercase();
    let name = words(name);
    DIAGNOSTIC_TESTS.iter().any(|test| words(test) == name)
}

/// `dcgmi nvlink --link-status` (dcgmi/Nvlink.cpp): `gpuId N:` then one letter per link, `U` up,
/// `D` down, `X` disabled, `_` not supported. Links down are a fault where other links in the paste
/// are up, or where the diagnostic's metadata names a part built with NVLink ("GPU Device IDs
/// Detected", looked up in the PCI ids database).
fn link_status(file: &str, text: &str) -> Vec<Fact> {
    let mut gpus: Vec<(String, Evidence, Vec<usize>)> = Vec::new();
    let mut any_up = false;
    let mut in_gpus = false;
    let mut nvlink_part = false;
    for (line_no, raw) in numbered_lines(text) {
        let line = raw.trim();
        if let Some((name, info)) = table_row(line) {
            if name.trim() == "GPU Device IDs Detected" {
                nvlink_part |= info
                    .split(',')
                    .filter_map(|id| u16::from_str_radix(id.trim(), 16).ok())
                    .any(|id| super::nvidia_smi::is_nvlink_part(&fabricdoctor_probes::pci::model_name(0x10de, id)));
            }
            continue;
        }
        if line == "GPUs:" {
            in_gpus = true;
            continue;
        }
        if line.starts_with("NvSwitches:") || line.starts_with("Key:") {
            in_gpus = false;
            continue;
        }
        if !in_gpus {
            continue;
        }
        if let Some(id) = line.strip_prefix("gpuId ").and_then(|r| r.strip_suffix(':')) {
            gpus.push((id.trim().to_string(), Evidence::new(file, line_no, raw), Vec::new()));
            continue;
        }
        let letters: Vec<&str> = line.split_whitespace().collect();
        if letters.is_empty() || !letters.iter().all(|l| matches!(*l, "U" | "D" | "X" | "_")) {
            continue;
        }
        any_up |= letters.contains(&"U");
        if let Some((_, evidence, down)) = gpus.last_mut() {
            down.extend(letters.iter().enumerate().filter(|(_, l)| **l == "D").map(|(i, _)| i));
            if !down.is_empty() {
                // The row of letters is the evidence; the gpuId line alone says nothing.
                *evidence = Evidence::new(file, line_no, raw);
            }
        }
    }
    if !(any_up || nvlink_part) {
        return Vec::new();
    }
    gpus.into_iter()
        .filter(|(_, _, down)| !down.is_empty())
        .map(|(gpu, evidence, down)| {
            let links: Vec<String> = down.iter().map(usize::to_string).collect();
            Fact::new("gpu.nvlink_inactive").attr("gpu", gpu).attr("links", links.join(",")).evidence(evidence)
        })
        .collect()
}

/// Whether the text holds `dcgmi diag` output (its table or its JSON): the input's kind is then
/// "dcgm-diag".
pub fn recognised(text: &str) -> bool {
    numbered_lines(text).any(|(_, raw)| {
        let line = raw.trim();
        let header = table_row(line).is_some_and(|(name, info)| name.trim() == "Diagnostic" && info.trim() == "Result");
        let category =
            banner(line).is_some_and(|t| ["Metadata", "Deployment", "Hardware", "Integration", "Stress"].contains(&t));
        let link_status = line == "|  NvLink Link Status  |" || line.starts_with("Key: Up=U, Down=D");
        // A paste cut to a few rows: a test DCGM runs, with its verdict.
        let test_row = table_row(line).is_some_and(|(name, info)| is_diagnostic_test(name) && outcomes(info).is_some());
        header
            || category
            || test_row
            || link_status
            || line.starts_with("\"DCGM Diagnostic\"")
            || line.starts_with("\"DCGM GPU Diagnostic\"")
            || line == "Successfully ran diagnostic for group."
    })
}

/// Whether the text holds a `dcgmi dmon` table that watches the last Xid (field 230, short name
/// XIDER: "#Entity  XIDER ..." then "GPU 1  120").
pub fn dmon_recognised(text: &str) -> bool {
    numbered_lines(text).any(|(_, raw)| dmon_header(raw).is_some_and(|fields| fields.contains(&"XIDER")))
}

/// The field short names of a `dcgmi dmon` header ("#Entity   XIDER   POWER").
fn dmon_header(line: &str) -> Option<Vec<&str>> {
    let rest = line.trim().strip_prefix("#Entity")?;
    Some(rest.split_whitespace().collect())
}

/// `dcgmi dmon` rows with a non-zero last Xid (DCGM_FI_DEV_XID_ERRORS, dcgm_fields.h: the last Xid
/// the GPU raised): each is the same GPU fact as the kernel's NVRM line for that Xid.
pub fn dmon(file: &str, text: &str) -> Vec<Fact> {
    let mut facts = Vec::new();
    let mut column: Option<usize> = None;
    for (line_no, raw) in numbered_lines(text) {
        if let Some(fields) = dmon_header(raw) {
            column = fields.iter().position(|f| *f == "XIDER");
            continue;
        }
        let Some(column) = column else { continue };
        let words: Vec<&str> = raw.split_whitespace().collect();
        // "GPU 1   120": the entity is two words.
        let (Some(&"GPU"), Some(index)) = (words.first(), words.get(1)) else { continue };
        let Some(code) = words.get(2 + column).and_then(|v| v.parse::<u32>().ok()) else { continue };
        if code == 0 {
            continue;
        }
        let evidence = Evidence::new(file, line_no, raw);
        facts.extend(super::kernel::xid_facts(code, &format!("GPU {index}"), crate::fact::UNKNOWN_HOST, &evidence));
    }
    facts
}

/// `dcgm.fail` for each test that failed (per GPU where the output names it), with the messages
/// that say why; `dcgm.warning` for warnings of tests that did not fail. Empty for other text.
pub fn parse(file: &str, text: &str) -> Vec<Fact> {
    let mut facts = link_status(file, text);
    if recognised(text) {
        let tests = table(file, text);
        // How many tests gave a verdict row: a skip of all of them is a run that looked at nothing.
        let judged =
            tests.iter().filter(|t| !t.outcomes.is_empty()).map(|t| t.name.clone()).collect::<BTreeSet<_>>().len();
        let mut skipped = Vec::new();
        for test in tests {
            for fact in test_facts(test) {
                if fact.name == "dcgm.skipped" {
                    skipped.push(fact);
                } else {
                    facts.push(fact);
                }
            }
        }
        // DCGM runs about twenty tests; a paste of more skipped rows names the first 64, each once.
        let mut names = BTreeSet::new();
        skipped.retain(|fact| names.insert(fact.get("test").unwrap_or("").to_string()));
        let count = skipped.len();
        facts.extend(skipped.into_iter().take(MAX_SKIPPED).map(|fact| fact.attr("of", judged).attr("skipped", count)));
    }
    facts.extend(json(file, text));
    dedupe(facts)
}

/// The table, test by test.
fn table(file: &str, text: &str) -> Vec<TestResult> {
    let mut tests: Vec<TestResult> = Vec::new();
    let mut category: Option<String> = None;
    // Whether the last row belongs to a test (not to the metadata, not to a new category).
    let mut in_test = false;
    // Wrapped rows of the message being read: (chunk, whether it filled its row).
    let mut chunks: Vec<(String, bool)> = Vec::new();
    for (line_no, raw) in numbered_lines(text) {
        if let Some(title) = banner(raw) {
            finish_message(&mut tests, &mut chunks);
            category = Some(title.to_string());
            in_test = false;
            continue;
        }
        let Some((name_cell, info_cell)) = table_row(raw) else { continue };
        let evidence = Evidence::new(file, line_no, raw);
        let name = name_cell.trim();
        if name == "Diagnostic" && info_cell.trim() == "Result" {
            continue;
        }
        let cut_test = || TestResult {
            name: category.clone().unwrap_or_else(|| "diagnostic".to_string()),
            outcomes: Vec::new(),
            messages: Vec::new(),
        };
        if let Some((label, subject)) = message_label(name) {
            finish_message(&mut tests, &mut chunks);
            if !in_test {
                // The test row was cut from the paste: the category names the test.
                tests.push(cut_test());
                in_test = true;
            }
            if let Some(test) = tests.last_mut() {
                test.messages.push(Message {
                    label,
                    subject: subject.unwrap_or(Subject::Test),
                    text: String::new(),
                    evidence: vec![evidence],
                });
            }
            chunks.push(chunk(info_cell));
        } else if name.is_empty() {
            if let Some(found) = outcomes(info_cell) {
                finish_message(&mut tests, &mut chunks);
                if !in_test {
                    tests.push(cut_test());
                    in_test = true;
                }
                if let Some(test) = tests.last_mut() {
                    test.outcomes.extend(found.into_iter().map(|(subject, verdict)| Outcome {
                        subject,
                        verdict,
                        evidence: evidence.clone(),
                    }));
                }
            } else if !chunks.is_empty() {
                chunks.push(chunk(info_cell));
                if let Some(message) = tests.last_mut().and_then(|t| t.messages.last_mut()) {
                    message.evidence.push(evidence);
                }
            }
        } else {
            finish_message(&mut tests, &mut chunks);
            match outcomes(info_cell) {
                Some(found) => {
                    tests.push(TestResult {
                        name: name.to_string(),
                        outcomes: found
                            .into_iter()
                            .map(|(subject, verdict)| Outcome { subject, verdict, evidence: evidence.clone() })
                            .collect(),
                        messages: Vec::new(),
                    });
                    in_test = true;
                }
                // Metadata (`DCGM Version`, `Driver Version Detected`).
                None => in_test = false,
            }
        }
    }
    finish_message(&mut tests, &mut chunks);
    tests
}

/// A message row's part of the text: dcgmi cuts messages every 45 characters, mid-word included, and
/// pads each row; a row that kept its padding gives back its 45 characters exactly.
fn chunk(info_cell: &str) -> (String, bool) {
    let inner = info_cell.strip_prefix(' ').unwrap_or(info_cell);
    if inner.chars().count() > ROW_CHARACTERS {
        (inner.chars().take(ROW_CHARACTERS).collect(), true)
    } else {
        (inner.trim_end().to_string(), false)
    }
}

/// Join the rows of the message being read into its text.
fn finish_message(tests: &mut [TestResult], chunks: &mut Vec<(String, bool)>) {
    if chunks.is_empty() {
        return;
    }
    let mut joined = String::new();
    for (text, full) in chunks.drain(..) {
        joined.push_str(&text);
        // A row whose padding the paste trimmed cannot say whether it ended mid-word: a space is
        // the safer guess.
        if !full {
            joined.push(' ');
        }
    }
    let text = joined.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some(message) = tests.last_mut().and_then(|t| t.messages.last_mut()) {
        if message.subject == Subject::Test {
            message.subject = gpu_named_in(&text);
        }
        message.text = text;
    }
}

/// The skipped tests read from one paste (DCGM runs about twenty).
const MAX_SKIPPED: usize = 64;

/// How DCGM words a test that could not run (DCGM_FR_INTERNAL in dcgmlib/dcgm_errors.h).
const INTERNAL_ERROR: &str = "There was an internal error during the test";

/// A test that could not run is no verdict on the GPU, and is not a pass either: an error
/// observation that says so, for each.
pub fn could_not_run(facts: &[Fact]) -> Vec<fabricdoctor_checks::Finding> {
    let skipped: Vec<&Fact> = facts.iter().filter(|f| f.name == "dcgm.skipped").collect();
    let mut findings: Vec<fabricdoctor_checks::Finding> = Vec::new();
    if !skipped.is_empty() {
        // Skip (DCGM_FR_TEST_DISABLED and the like, dcgmlib/dcgm_errors.h): the plugin did not
        // look at the GPU. Where every test skipped, the run says nothing of the GPUs at all.
        let number = |fact: &Fact, key: &str| fact.get(key).and_then(|n| n.parse::<usize>().ok());
        let mut names: Vec<&str> = skipped.iter().take(16).map(|f| f.get("test").unwrap_or("?")).collect();
        let total = number(skipped[0], "skipped").unwrap_or(skipped.len());
        let more = format!("and {} more", total.saturating_sub(names.len()));
        if total > names.len() {
            names.push(&more);
        }
        let every = skipped.iter().all(|f| number(f, "of") == Some(total));
        let mut finding = fabricdoctor_checks::Finding::new(
            "triage.dcgm",
            fabricdoctor_checks::Verdict::Skip,
            "dcgmi diag",
            format!(
                "{} skipped ({}): DCGM gave no verdict on the GPUs for {}; a skip is no pass: see why with `dcgmi diag -r <test> -v`, or run the tests where DCGM supports this GPU",
                if every { "every test" } else { "tests" },
                names.join(", "),
                if every { "this run" } else { "them" }
            ),
        );
        finding.evidence = skipped.iter().flat_map(|f| f.evidence.iter().map(super::counters::cite)).take(8).collect();
        findings.push(finding);
    }
    findings.extend(facts
        .iter()
        .filter(|f| f.name == "dcgm.test_error")
        .map(|f| {
            let test = f.get("test").unwrap_or("?");
            let mut finding = fabricdoctor_checks::Finding::new(
                "triage.dcgm",
                fabricdoctor_checks::Verdict::Error,
                format!("dcgmi diag test {test}"),
                format!(
                    "the test could not run, so its Fail is not a verdict on the GPU: {}; rerun it alone (`dcgmi diag -r {test}`) after fixing DCGM's installation or environment",
                    f.get("text").unwrap_or("")
                ),
            );
            finding.evidence = f.evidence.iter().map(super::counters::cite).collect();
            finding
        }));
    findings
}

/// Facts of one test: its failures with their reasons, its warnings, and messages left over (an
/// `Error` row is printed only for a failure, so it fails the test even when its verdict was cut).
fn test_facts(test: TestResult) -> Vec<Fact> {
    let verdicts: Vec<Verdict> = test.outcomes.iter().map(|o| o.verdict).collect();
    // A skipped test's messages say why it was skipped, not what is wrong; that it gave no verdict
    // is said (dcgm.skipped), since a skip is no pass.
    if !verdicts.is_empty() && verdicts.iter().all(|v| matches!(v, Verdict::Skip | Verdict::NotRun)) {
        let evidence = test.outcomes.iter().map(|o| o.evidence.clone()).take(1).collect();
        return vec![with_evidence(Fact::new("dcgm.skipped").attr("test", &test.name), evidence)];
    }
    let mut used = vec![false; test.messages.len()];
    let mut facts = Vec::new();
    for (verdict, name) in [(Verdict::Fail, "dcgm.fail"), (Verdict::Warn, "dcgm.warning")] {
        let matching: Vec<&Outcome> = test.outcomes.iter().filter(|o| o.verdict == verdict).collect();
        // DCGM 4 prints the test's verdict and then each entity's: the entities' say where.
        let per_entity: Vec<&Outcome> = matching.iter().copied().filter(|o| o.subject != Subject::Test).collect();
        let chosen = if per_entity.is_empty() { matching } else { per_entity };
        for outcome in chosen {
            let mut reasons: Vec<&Message> = Vec::new();
            for (index, message) in test.messages.iter().enumerate() {
                if message.label != Label::Info && message.about(&outcome.subject) {
                    used[index] = true;
                    reasons.push(message);
                }
            }
            let subject = match (&outcome.subject, reasons.as_slice()) {
                // A whole-test verdict whose single reason names its GPU.
                (Subject::Test, [reason]) => reason.subject.clone(),
                (subject, _) => subject.clone(),
            };
            let text = if reasons.is_empty() {
                verdict.word().to_string()
            } else {
                reasons.iter().map(|r| r.text.as_str()).collect::<Vec<_>>().join("; ")
            };
            let mut evidence = vec![outcome.evidence.clone()];
            evidence.extend(reasons.iter().flat_map(|r| r.evidence.iter().cloned()));
            // DCGM_FR_INTERNAL ("There was an internal error during the test: '...'",
            // dcgmlib/dcgm_errors.h): the test's own machinery failed (a helper it could not
            // run, output it could not parse), so its Fail says nothing of the GPU.
            let could_not_run = verdict == Verdict::Fail
                && !reasons.is_empty()
                && reasons.iter().all(|r| r.text.starts_with(INTERNAL_ERROR));
            let name = if could_not_run { "dcgm.test_error" } else { name };
            facts.push(with_evidence(
                subject.apply(Fact::new(name).attr("test", &test.name).attr("text", text)),
                evidence,
            ));
        }
    }
    for (message, used) in test.messages.iter().zip(used) {
        let name = match message.label {
            _ if used => continue,
            Label::Info => continue,
            Label::Error => "dcgm.fail",
            Label::Warning => "dcgm.warning",
        };
        let fact = message.subject.apply(Fact::new(name).attr("test", &test.name).attr("text", &message.text));
        facts.push(with_evidence(fact, message.evidence.clone()));
    }
    facts
}

fn with_evidence(mut fact: Fact, evidence: Vec<Evidence>) -> Fact {
    // A long wrapped message is quoted whole up to a point; its file:line finds the rest.
    for line in evidence.into_iter().take(8) {
        fact = fact.evidence(line);
    }
    fact
}

/// One JSON `"key" : value` line: the key and the value without its trailing comma; a string value
/// is unescaped.
fn json_field(line: &str) -> Option<(&str, JsonValue)> {
    let rest = line.trim().strip_prefix('"')?;
    let (key, rest) = rest.split_once('"')?;
    let value = rest.trim_start().strip_prefix(':')?.trim().trim_end_matches(',').trim_end();
    let value = if value.starts_with('"') {
        JsonValue::Text(serde_json::from_str::<String>(value).ok()?)
    } else if value.starts_with('{') || value.starts_with('[') {
        JsonValue::Container
    } else {
        JsonValue::Text(value.to_string())
    };
    Some((key, value))
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum JsonValue {
    Text(String),
    Container,
}

/// A JSON result: one entity's (or the test summary's) status with its warnings.
#[derive(Debug, Clone)]
struct JsonResult {
    test: String,
    summary: bool,
    subject: Subject,
    verdict: Verdict,
    evidence: Evidence,
    warnings: Vec<(String, Evidence)>,
}

/// `dcgmi diag -j`, read line by line so that a paste cut short still gives the results it shows.
/// jsoncpp prints an object's keys sorted, so an entity's ids come before its status, and the status
/// before its warnings.
fn json(file: &str, text: &str) -> Vec<Fact> {
    if !text.contains("\"test_categories\"") {
        return Vec::new();
    }
    let mut results: Vec<JsonResult> = Vec::new();
    let mut test: Option<String> = None;
    let mut summary = false;
    let mut group: Option<String> = None;
    let mut entity: Option<String> = None;
    for (line_no, raw) in numbered_lines(text) {
        let line = raw.trim();
        if line.ends_with('{') {
            group = None;
            entity = None;
        }
        let Some((key, value)) = json_field(line) else { continue };
        let JsonValue::Text(value) = value else {
            match key {
                "results" => summary = false,
                "test_summary" => summary = true,
                _ => {}
            }
            continue;
        };
        match key {
            "name" => {
                test = Some(value);
                summary = false;
            }
            "entity_group" => group = Some(value),
            "entity_id" | "gpu_id" | "gpu_ids" => entity = Some(value),
            "status" => {
                let (Some(test), Some(verdict)) = (&test, Verdict::from_word(&value)) else { continue };
                let subject = match (&group, &entity) {
                    (_, None) => Subject::Test,
                    (None, Some(id)) => Subject::Gpu(id.clone()),
                    (Some(group), Some(id)) => Subject::from_entity(&format!("{group}{id}")),
                };
                results.push(JsonResult {
                    test: test.clone(),
                    summary,
                    subject,
                    verdict,
                    evidence: Evidence::new(file, line_no, raw),
                    warnings: Vec::new(),
                });
            }
            "warning" | "warnings" => {
                if let Some(result) = results.last_mut() {
                    result.warnings.push((value, Evidence::new(file, line_no, raw)));
                }
            }
            _ => {}
        }
    }
    let entity_verdicts: BTreeSet<(String, Verdict)> =
        results.iter().filter(|r| !r.summary).map(|r| (r.test.clone(), r.verdict)).collect();
    let mut facts = Vec::new();
    for result in results {
        let name = match result.verdict {
            Verdict::Fail => "dcgm.fail",
            Verdict::Warn => "dcgm.warning",
            _ => continue,
        };
        // A test summary repeats its entities' results: it adds a fact only where none was given.
        if result.summary && entity_verdicts.contains(&(result.test.clone(), result.verdict)) {
            continue;
        }
        let text = if result.warnings.is_empty() {
            result.verdict.word().to_string()
        } else {
            result.warnings.iter().map(|(w, _)| w.as_str()).collect::<Vec<_>>().join("; ")
        };
        let subject = match (&result.subject, result.warnings.as_slice()) {
            (Subject::Test, [(only, _)]) => gpu_named_in(only),
            (subject, _) => subject.clone(),
        };
        let mut evidence = vec![result.evidence];
        evidence.extend(result.warnings.into_iter().map(|(_, e)| e));
        facts
            .push(with_evidence(subject.apply(Fact::new(name).attr("test", result.test).attr("text", text)), evidence));
    }
    facts
}

/// The same failure said twice (a table and its JSON in one paste) is one fact with both quotes.
fn dedupe(facts: Vec<Fact>) -> Vec<Fact> {
    use std::collections::hash_map::Entry;
    let mut kept: Vec<Fact> = Vec::new();
    // Where each distinct fact was kept: a hostile paste of 100,000 rows must not compare each row
    // with every fact kept before it.
    let mut index: std::collections::HashMap<(String, std::collections::BTreeMap<String, String>), usize> =
        std::collections::HashMap::new();
    for fact in facts {
        match index.entry((fact.name.clone(), fact.attrs.clone())) {
            Entry::Occupied(at) => {
                let existing = &mut kept[*at.get()];
                for line in fact.evidence {
                    if existing.evidence.len() < 8 && !existing.evidence.contains(&line) {
                        existing.evidence.push(line);
                    }
                }
            }
            Entry::Vacant(place) => {
                place.insert(kept.len());
                kept.push(fact);
            }
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DCGM 4 names its rows by plugin (`targeted_stress`); a run that skipped every test (a GPU
    /// not in DCGM's allowlist) is recognised, gives no fault, and says that it gave no verdict.
    /// A Skip beside a Pass names only the test that skipped.
    #[test]
    fn dcgm4_plugin_rows_that_all_skip_give_no_verdict_and_say_so() {
        let text = "| memory            | Skip |\n| pcie              | Skip |\n| targeted_stress   | Skip |\n";
        assert!(recognised(text));
        let facts = parse("diag.txt", text);
        assert!(facts.iter().all(|f| f.name == "dcgm.skipped"), "{facts:?}");
        let findings = could_not_run(&facts);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].verdict, fabricdoctor_checks::Verdict::Skip);
        assert!(
            findings[0].message.contains("every test skipped (memory, pcie, targeted_stress)"),
            "{}",
            findings[0].message
        );
        let mixed = "| Diagnostic | Result |\n| memory | Pass |\n| | GPU0: Pass |\n| pcie | Skip |\n";
        let findings = could_not_run(&parse("diag.txt", mixed));
        assert!(findings[0].message.starts_with("tests skipped (pcie)"), "{}", findings[0].message);
    }

    /// A paste cut to the failing rows (stas00/ml-engineering, NVIDIA debug chapter), and
    /// `dcgmi nvlink --link-status` with one GPU's links down beside another's up.
    #[test]
    fn dmon_last_xid_120_is_a_lost_gpu_and_zeros_are_nothing() {
        // NVIDIA/DCGM#263 (tests/corpus): `dcgmi dmon -e 230` (the last Xid per GPU).
        let text = "#Entity    XIDER        \nID                      \nGPU 0      0            \nGPU 1      120          \nGPU 2      0            \n";
        assert!(dmon_recognised(text));
        let facts = dmon("dmon.txt", text);
        let names: Vec<(&str, Option<&str>)> = facts.iter().map(|f| (f.name.as_str(), f.get("bus_id"))).collect();
        assert_eq!(names, [("gpu.xid", Some("GPU 1")), ("gpu.lost", Some("GPU 1"))], "{facts:?}");
        assert!(!dmon_recognised("#Entity   POWER\nGPU 0   250\n"), "another field");
    }

    /// NVIDIA/DCGM#253: the pcie test fails because its child's output could not be parsed, and
    /// every GPU passes: DCGM's internal error is no verdict on the GPU, and an error observation
    /// says the test could not run.
    #[test]
    fn a_test_that_failed_with_dcgms_internal_error_could_not_run() {
        let table = "+-----  Integration  -------+------------------------------------------------+\n\
                     | pcie                      | Fail                                           |\n\
                     | Warning                   | There was an internal error during the test:   |\n\
                     |                           | 'Output of child process (11167) couldn't be   |\n\
                     |                           | parsed' Check DCGM and system logs for errors. |\n\
                     |                           | GPU0: Pass                                     |\n";
        let facts = parse("diag.txt", table);
        assert_eq!(facts.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["dcgm.test_error"], "{facts:?}");
        let observations = could_not_run(&facts);
        assert_eq!(observations.len(), 1);
        assert_eq!(observations[0].verdict, fabricdoctor_checks::Verdict::Error);
        assert!(observations[0].message.contains("could not run"), "{:?}", observations[0]);
        // A failure with a reason of the GPU's own stays a failure.
        let failed =
            table.replace("There was an internal error during the test:", "GPU 0 bandwidth 3.1 GB/s is below 5 GB/s ");
        assert!(parse("diag.txt", &failed).iter().any(|f| f.name == "dcgm.fail"));
    }

    #[test]
    fn cut_rows_and_nvlink_link_status() {
        let rows = "| GPU Memory                | Pass - GPUs: 1, 2, 3                           |\n|                           | Fail - GPU: 0                                  |\n";
        assert!(recognised(rows));
        let facts = parse("f", rows);
        assert!(facts.iter().any(|f| f.name == "dcgm.fail" && f.get("gpu") == Some("0")), "{facts:?}");
        let status = "+----------------------+\n|  NvLink Link Status  |\n+----------------------+\nGPUs:\n    gpuId 0:\n        U U U U\n    gpuId 1:\n        U D D U\nNvSwitches:\n    No NvSwitches found.\n";
        assert!(recognised(status));
        let facts = parse("f", status);
        assert_eq!(facts.len(), 1, "{facts:?}");
        assert_eq!((facts[0].get("gpu"), facts[0].get("links")), (Some("1"), Some("1,2")));
        // Every link down and nothing says the GPUs have NVLink: no verdict.
        assert!(parse("f", &status.replace('U', "D")).is_empty());
    }

    /// A fact as (name, test, gpu, text).
    type Row<'a> = (&'a str, Option<&'a str>, Option<&'a str>, Option<&'a str>);

    fn summary(facts: &[Fact]) -> Vec<Row<'_>> {
        facts.iter().map(|f| (f.name.as_str(), f.get("test"), f.get("gpu"), f.get("text"))).collect()
    }

    /// From tests/corpus/cases/dcgm-mlengineering-diag-r3-row-remap-pending.txt (train): the paste
    /// stops after a Deployment `Error` whose test row it cut; the message wraps at 45 characters.
    #[test]
    fn an_error_row_fails_its_test_even_when_the_verdict_was_cut() {
        let text = "+---------------------------+------------------------------------------------+\n| Diagnostic                | Result                                         |\n+===========================+================================================+\n|-----  Deployment  --------+------------------------------------------------|\n| Error                     | GPU 3 has uncorrectable memory errors and row  |\n|                           |  remappings are pending                        |\n";
        assert!(recognised(text));
        let facts = parse("dcgm.txt", text);
        assert_eq!(
            summary(&facts),
            vec![(
                "dcgm.fail",
                Some("Deployment"),
                Some("3"),
                Some("GPU 3 has uncorrectable memory errors and row remappings are pending")
            )]
        );
        assert_eq!(facts[0].evidence.iter().map(|e| e.line).collect::<Vec<_>>(), vec![5, 6]);
    }

    /// DCGM 2.x/3.x layout (dcgmi/Diag.cpp `HelperDisplayGpuResults`): a failing test with its reason
    /// printed as `Warning` and cut mid-word, a passing one, a skipped one with its reason, and a test
    /// that only warned. Messages are DCGM's (dcgmlib/dcgm_errors.h).
    #[test]
    fn dcgm3_table_failures_with_their_reasons() {
        let text = "Successfully ran diagnostic for group.\n+---------------------------+------------------------------------------------+\n| Diagnostic                | Result                                         |\n+===========================+================================================+\n|-----  Metadata  ----------+------------------------------------------------|\n| DCGM Version              | 3.3.8                                          |\n|-----  Deployment  --------+------------------------------------------------|\n| Denylist                  | Pass                                           |\n| Page Retirement/Row Remap | Pass                                           |\n+-----  Integration  -------+------------------------------------------------+\n| PCIe                      | Pass - GPUs: 0, 2                              |\n|                           | Fail - GPU: 1                                  |\n| Warning                   | Detected more than 8 PCIe replays per minute   |\n|                           | for GPU 1 : 13                                 |\n+-----  Hardware  ----------+------------------------------------------------+\n| GPU Memory                | Skip - All                                     |\n| Info                      | Test skipped: not supported on this GPU        |\n+-----  Stress  ------------+------------------------------------------------+\n| Targeted Power            | Pass - GPUs: 0, 1                              |\n|                           | Warn - GPU: 2                                  |\n| Warning                   | Detected clocks event due to power violation   |\n|                           | in GPU 2.                                      |\n+---------------------------+------------------------------------------------+\n";
        assert!(recognised(text));
        let facts = parse("dcgm.txt", text);
        assert_eq!(
            summary(&facts),
            vec![
                (
                    "dcgm.fail",
                    Some("PCIe"),
                    Some("1"),
                    Some("Detected more than 8 PCIe replays per minute for GPU 1 : 13")
                ),
                (
                    "dcgm.warning",
                    Some("Targeted Power"),
                    Some("2"),
                    Some("Detected clocks event due to power violation in GPU 2.")
                ),
                ("dcgm.skipped", Some("GPU Memory"), None, None),
            ]
        );
        assert_eq!(facts[0].evidence.iter().map(|e| e.line).collect::<Vec<_>>(), vec![12, 13, 14]);
    }

    /// DCGM 4 layout (dcgmi/Diag.cpp `HelperDisplayEntityResults`): the test's verdict, then each
    /// GPU's, with `Warning: GPU1` rows.
    #[test]
    fn dcgm4_table_per_entity() {
        let text = "+---------------------------+------------------------------------------------+\n| Diagnostic                | Result                                         |\n+===========================+================================================+\n+-----  Hardware  ----------+------------------------------------------------+\n| memory                    | Fail                                           |\n|                           | GPU0: Pass                                     |\n|                           | GPU1: Fail                                     |\n| Warning: GPU1             | Detected 2 volatile double-bit ECC error(s) i  |\n|                           | n GPU 1.                                       |\n| diagnostic                | Pass                                           |\n|                           | GPU0: Pass                                     |\n|                           | GPU1: Pass                                     |\n+---------------------------+------------------------------------------------+\n";
        let facts = parse("dcgm.txt", text);
        assert_eq!(
            summary(&facts),
            vec![(
                "dcgm.fail",
                Some("memory"),
                Some("1"),
                Some("Detected 2 volatile double-bit ECC error(s) in GPU 1.")
            )]
        );
    }

    /// A whole-test verdict takes its GPU from its one reason.
    #[test]
    fn a_test_verdict_takes_the_gpu_its_reason_names() {
        let text = "| Diagnostic                | Result                                         |\n| software                  | Fail                                           |\n| Warning                   | A pending retired page has been detected in G  |\n|                           | PU 2.                                          |\n";
        let facts = parse("dcgm.txt", text);
        assert_eq!(
            summary(&facts),
            vec![(
                "dcgm.fail",
                Some("software"),
                Some("2"),
                Some("A pending retired page has been detected in GPU 2.")
            )]
        );
    }

    /// A row whose padding the paste trimmed is joined with a space.
    #[test]
    fn trimmed_rows_join_with_a_space() {
        let text = "| Diagnostic | Result |\n| PCIe | Fail - All |\n| Warning | GPU 0's NvLink link 3 is |\n| | currently down |\n";
        let facts = parse("dcgm.txt", text);
        assert_eq!(
            summary(&facts),
            vec![("dcgm.fail", Some("PCIe"), Some("all"), Some("GPU 0's NvLink link 3 is currently down"))]
        );
    }

    /// `dcgmi diag -j` of DCGM 4 (dcgmi/Diag.cpp `HelperJsonBuildOutput`, keys sorted by jsoncpp): the
    /// test summary repeats the entity's failure and adds nothing.
    #[test]
    fn dcgm4_json() {
        let text = r#"{
	"DCGM Diagnostic" : {
		"test_categories" : [
			{
				"category" : "Hardware",
				"tests" : [
					{
						"name" : "memory",
						"results" : [
							{
								"entity_group" : "GPU",
								"entity_group_id" : 1,
								"entity_id" : 0,
								"status" : "Pass"
							},
							{
								"entity_group" : "GPU",
								"entity_group_id" : 1,
								"entity_id" : 1,
								"status" : "Fail",
								"warnings" : [
									{
										"error_category" : 5,
										"error_id" : 95,
										"error_severity" : 2,
										"warning" : "ECC memory for GPU 1 is in a pending state."
									}
								]
							}
						],
						"test_summary" : {
							"status" : "Fail",
							"warnings" : [
								{
									"error_category" : 5,
									"error_id" : 95,
									"error_severity" : 2,
									"warning" : "ECC memory for GPU 1 is in a pending state."
								}
							]
						}
					}
				]
			}
		]
	}
}
"#;
        assert!(recognised(text));
        let facts = parse("dcgm.json", text);
        assert_eq!(
            summary(&facts),
            vec![("dcgm.fail", Some("memory"), Some("1"), Some("ECC memory for GPU 1 is in a pending state."))]
        );
        assert_eq!(facts[0].evidence.iter().map(|e| e.line).collect::<Vec<_>>(), vec![20, 26]);
    }

    /// DCGM 3.x JSON: `gpu_id` and, for deployment tests, the message under `warnings`.
    #[test]
    fn dcgm3_json() {
        let text = "{\n  \"DCGM GPU Diagnostic\" : {\n    \"test_categories\" : [\n      {\n        \"category\" : \"Deployment\",\n        \"tests\" : [\n          {\n            \"name\" : \"Page Retirement/Row Remap\",\n            \"results\" : [\n              {\n                \"gpu_id\" : \"3\",\n                \"status\" : \"Fail\",\n                \"warnings\" : [\n                  {\n                    \"error_id\" : 83,\n                    \"warnings\" : \"GPU 3 had uncorrectable memory errors and row remappings are pending.\"\n                  }\n                ]\n              }\n            ]\n          }\n";
        let facts = parse("dcgm.json", text);
        assert_eq!(
            summary(&facts),
            vec![(
                "dcgm.fail",
                Some("Page Retirement/Row Remap"),
                Some("3"),
                Some("GPU 3 had uncorrectable memory errors and row remappings are pending.")
            )]
        );
    }

    /// Other tools' tables and lines produce nothing: nvidia-smi's summary table, an NCCL log, lspci.
    #[test]
    fn other_tools_produce_nothing() {
        let nvsmi = "| NVIDIA-SMI 384.81                 Driver Version: 384.81                    |\n| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n|   0  Tesla V100-SXM2...  Off  | 00000000:06:00.0 Off |                    0 |\n";
        let nccl = "node7:1234:1250 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\nnode7:1234:1250 [0] NCCL WARN Error : GPU 3 failed\n";
        let lspci = "3b:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x16\n";
        let markdown = "| Warning | GPU 0 is hot |\n| Error | GPU 1 failed |\n";
        for text in [nvsmi, nccl, lspci, markdown] {
            assert!(!recognised(text), "{text}");
            assert!(parse("other.txt", text).is_empty(), "{text}");
        }
    }

    #[test]
    fn malformed_text_never_panics() {
        for text in [
            "| Diagnostic | Result |\n| | |\n| Warning | \n| x | Fail - GPUs: , |\n|||\n| Warning: | é€ |\n|  | ééééééééééééééééééééééééééééééééééééééééééééééééé |",
            "\"test_categories\"\n\"status\" : \"Fail\"\n\"name\" : \"x\n\"warning\" : \"\\",
            "+-----",
            "|-----  +",
        ] {
            let _ = parse("f", text);
            let _ = recognised(text);
        }
    }
}
