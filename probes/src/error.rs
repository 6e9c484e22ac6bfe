//! The one error type of the probe layer: which file, and what went wrong with it.

use std::fmt;
use std::path::PathBuf;

/// A failure to read or understand one file of the node (kernel sysfs/procfs ABI or PCI config space).
///
/// `path` is the node path ("sys/bus/pci/devices/0000:17:00.0/config"), i.e. relative to the root being
/// analysed, so messages read the same for the live node and for a captured snapshot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("failed to read {path}: {kind}", path = .path.display())]
pub struct ProbeError {
    pub path: PathBuf,
    pub kind: ProbeErrorKind,
}

/// Why a read failed. Checks map these to verdicts: `NotFound` and `NotInCapture` to Skip, `PermissionDenied` to Warn
/// ("re-run as root"), everything else to Error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeErrorKind {
    #[error("not found")]
    NotFound,
    /// Absent from a captured tree (snapshot, fixture, or a tree another tool made): the capture
    /// does not say whether the node has it.
    #[error("not in this capture")]
    NotInCapture,
    #[error("permission denied")]
    PermissionDenied,
    /// Any other I/O failure, kept as its message (the kernel returns EINVAL, EIO, ENODEV from
    /// sysfs attributes whose hardware is absent or in reset).
    #[error("{0}")]
    Io(String),
    #[error("unexpected content {content:?}: {reason}")]
    Malformed { content: String, reason: String },
    #[error("symbolic links nest too deeply")]
    SymlinkLoop,
}

impl ProbeError {
    pub fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        let kind = match error.kind() {
            std::io::ErrorKind::NotFound => ProbeErrorKind::NotFound,
            std::io::ErrorKind::PermissionDenied => ProbeErrorKind::PermissionDenied,
            _ => ProbeErrorKind::Io(error.to_string()),
        };
        ProbeError { path: path.into(), kind }
    }

    pub fn malformed(path: impl Into<PathBuf>, content: &str, reason: impl fmt::Display) -> Self {
        // Keep error messages one line and short even when a file is binary or huge.
        let mut shown: String = content.chars().take(80).collect();
        if shown.len() < content.len() {
            shown.push('…');
        }
        ProbeError { path: path.into(), kind: ProbeErrorKind::Malformed { content: shown, reason: reason.to_string() } }
    }

    /// Absent, on the node or from the capture being read: probes treat both as "the node has none".
    pub fn is_not_found(&self) -> bool {
        matches!(self.kind, ProbeErrorKind::NotFound | ProbeErrorKind::NotInCapture)
    }

    pub fn is_not_in_capture(&self) -> bool {
        matches!(self.kind, ProbeErrorKind::NotInCapture)
    }

    pub fn is_permission_denied(&self) -> bool {
        matches!(self.kind, ProbeErrorKind::PermissionDenied)
    }
}

/// A parse failure of a pure `parse_*` function; the `read_*` wrapper adds the path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct ParseError {
    pub reason: String,
}

impl ParseError {
    pub fn new(reason: impl Into<String>) -> Self {
        ParseError { reason: reason.into() }
    }
}

/// Serialized as `{"path": ..., "error": "..."}` so a report can show why a value is missing.
impl serde::Serialize for ProbeError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut state = serializer.serialize_struct("ProbeError", 2)?;
        state.serialize_field("path", &self.path.display().to_string())?;
        state.serialize_field("error", &self.kind.to_string())?;
        state.end()
    }
}
