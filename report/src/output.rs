//! Writing a report file through a temporary file beside it and a rename: a reader never sees half a
//! report, and a crash never loses the previous one (rename(2) replaces atomically within one
//! filesystem). Shared by every command that writes reports (`check -o`, `burnin --report-dir`, ...).

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// A step of [`write_atomically`] failed.
#[derive(Debug, thiserror::Error)]
#[error("cannot {step} {}", path.display())]
pub struct WriteError {
    step: &'static str,
    path: PathBuf,
    #[source]
    source: std::io::Error,
}

/// Write `bytes` to `path` (mode 0644) through a temporary file in the same directory and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_atomically_with(path, |out| out.write_all(bytes))
}

/// As [`write_atomically`], with the content streamed by `write` through a buffer: a report of
/// hundreds of megabytes is never held whole in memory.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), WriteError> {
    let fail = |step, source| WriteError { step, path: path.to_path_buf(), source };
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut temporary = tempfile::NamedTempFile::new_in(dir).map_err(|e| fail("create a temporary file beside", e))?;
    // tempfile creates 0600 files; a report is for every operator on the node and for CI, as a plain
    // create with the usual umask 022 would make it.
    use std::os::unix::fs::PermissionsExt as _;
    temporary
        .as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o644))
        .map_err(|e| fail("set the permissions of", e))?;
    {
        let mut buffered = std::io::BufWriter::with_capacity(1 << 20, temporary.as_file_mut());
        write(&mut buffered).and_then(|()| buffered.flush()).map_err(|e| fail("write", e))?;
    }
    temporary.as_file().sync_all().map_err(|e| fail("sync", e))?;
    temporary.persist(path).map_err(|e| fail("replace", e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_files_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("report.json");
        write_atomically(&path, b"first").expect("write");
        write_atomically(&path, b"second").expect("replace");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "second");
        assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 1, "no temporary file left behind");
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(std::fs::metadata(&path).expect("stat").permissions().mode() & 0o777, 0o644);
        let error = write_atomically(&dir.path().join("missing/report.json"), b"x").expect_err("no such directory");
        assert!(error.to_string().contains("missing/report.json"), "{error}");
    }
}
