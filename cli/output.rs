//! Writing results: standard output (a closed pipe ends the program quietly) or a file replaced
//! atomically, so a reader never sees half a report and a crash never loses the previous one.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

pub fn emit(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}

pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .any(|cause| cause.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe))
}

/// Write `bytes` to `path` through a temporary file in the same directory and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut temporary = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("failed to create a temporary file in {}", dir.display()))?;
    // tempfile creates 0600 files; a report is for every operator on the node, as a plain create
    // with the usual umask 022 would make it.
    use std::os::unix::fs::PermissionsExt as _;
    temporary
        .as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o644))
        .with_context(|| format!("failed to set the permissions of {}", path.display()))?;
    temporary.write_all(bytes).with_context(|| format!("failed to write {}", path.display()))?;
    temporary.as_file().sync_all().with_context(|| format!("failed to sync {}", path.display()))?;
    temporary.persist(path).with_context(|| format!("failed to replace {}", path.display()))?;
    Ok(())
}
