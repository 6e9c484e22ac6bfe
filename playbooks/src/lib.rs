//! Playbooks as data and the code that evaluates them. `triage` reads NCCL/PyTorch logs and pasted
//! tool outputs into facts; the playbooks (TOML files under `playbooks/triage/`, embedded in the
//! binary, overridable from a directory) turn facts into ranked diagnoses with next steps.

pub mod fact;
pub mod playbook;
pub mod triage;

pub use playbook::{Confidence, Playbook, PlaybookError, Rule, FACTS};
pub use triage::{triage, Diagnosis, Evidence, Fact, Input, TriageReport};
