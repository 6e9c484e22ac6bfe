//! What triage establishes from its inputs, shared by the parsers that produce it and the playbooks
//! that match on it: a fact, its attributes and the quoted lines that are its evidence.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One quoted line of an input.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    pub file: String,
    /// 1-based; 0 for evidence that is not one line (a record of a binary flight-recorder dump).
    pub line: usize,
    pub text: String,
}

impl Evidence {
    pub fn new(file: &str, line: usize, text: &str) -> Evidence {
        // Long lines (a 128-rank set) are cut so reports stay readable; the file:line finds the rest.
        const MAX: usize = 400;
        let text = text.trim_end();
        let text = if text.len() > MAX {
            let mut end = MAX;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            format!("{} [...]", &text[..end])
        } else {
            text.to_string()
        };
        Evidence { file: file.to_string(), line, text }
    }
}

/// Something an input establishes, named for the playbooks ("nccl.wc_error"), with attributes the
/// rules match on and next steps fill placeholders from ("status" = "12", "host" = "node7").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fact {
    pub name: String,
    pub attrs: BTreeMap<String, String>,
    pub evidence: Vec<Evidence>,
}

impl Fact {
    pub fn new(name: &str) -> Fact {
        Fact { name: name.to_string(), attrs: BTreeMap::new(), evidence: Vec::new() }
    }

    pub fn attr(mut self, key: &str, value: impl ToString) -> Fact {
        self.attrs.insert(key.to_string(), value.to_string());
        self
    }

    pub fn evidence(mut self, evidence: Evidence) -> Fact {
        if !self.evidence.contains(&evidence) {
            self.evidence.push(evidence);
        }
        self
    }

    /// Set the host attribute, unless the input did not name one (then next steps show `<host>`).
    pub fn host(self, host: &str) -> Fact {
        if host == UNKNOWN_HOST || host.is_empty() {
            self
        } else {
            self.attr("host", host)
        }
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.attrs.get(key).map(String::as_str)
    }
}

/// What parsers call a line's host when the line does not name one (dmesg -T, a bare log line).
pub const UNKNOWN_HOST: &str = "unknown-host";
