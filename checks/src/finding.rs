//! What a check says: a verdict about one subject, with the evidence behind it.

use serde::{Deserialize, Serialize};

use crate::advice::{advise, Action, Owner};

/// A check's judgement. `Skip` and `Error` mean the check could not look; they are never a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Skip,
    Warn,
    Error,
    Fail,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Skip => "skip",
            Verdict::Warn => "warn",
            Verdict::Error => "error",
            Verdict::Fail => "fail",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding. `id` is the check's stable id ("pcie.link.width"); CI gates allow-list by it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    pub id: String,
    pub verdict: Verdict,
    /// What the finding is about: "0000:17:00.0 (mlx5_0)", "GPU3", "mlx5_2 port 1", "node".
    pub subject: String,
    pub message: String,
    /// What to do about it and whose it is ([`crate::advice`]; by id and verdict). Absent in
    /// reports from before they existed: none, node.
    #[serde(default)]
    pub action: Action,
    #[serde(default)]
    pub owner: Owner,
    /// The readings that support the verdict, each naming its source.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<String>,
}

impl Finding {
    pub fn new(id: &str, verdict: Verdict, subject: impl Into<String>, message: impl Into<String>) -> Finding {
        let (action, owner) = advise(id, verdict);
        Finding {
            id: id.to_string(),
            verdict,
            subject: subject.into(),
            message: message.into(),
            action,
            owner,
            evidence: Vec::new(),
            expected: None,
            observed: None,
        }
    }

    /// Change the verdict, and with it what to do.
    pub fn set_verdict(&mut self, verdict: Verdict) {
        self.verdict = verdict;
        (self.action, self.owner) = advise(&self.id, verdict);
    }

    pub fn evidence(mut self, line: impl Into<String>) -> Finding {
        self.evidence.push(line.into());
        self
    }

    pub fn expected(mut self, expected: impl Into<String>) -> Finding {
        self.expected = Some(expected.into());
        self
    }

    pub fn observed(mut self, observed: impl Into<String>) -> Finding {
        self.observed = Some(observed.into());
        self
    }
}
