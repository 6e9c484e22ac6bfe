//! Writing what the probes read (a [`Recording`]) as a tree that `SysRoot::captured` reads back, into a
//! directory; the CLI packs it as .tar.gz when asked. Links are recreated as links, so topology
//! (the nesting of `sys/devices/pci*`) survives the copy.

use std::io;
use std::path::{Path, PathBuf};

use crate::root::{Recording, SysRoot, ABSENT_PATHS};

/// Why a snapshot could not be written.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("failed to write {path}: {source}", path = .path.display())]
    Write { path: PathBuf, source: io::Error },
    #[error("failed to read {path} for the snapshot: {source}", path = .path.display())]
    Read { path: PathBuf, source: io::Error },
}

/// Copy every recorded file, directory and link from `root` into `out` (which must be empty or absent).
/// Returns how many files were copied.
pub fn write_tree(root: &SysRoot, recording: &Recording, out: &Path) -> Result<usize, SnapshotError> {
    let write_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SnapshotError::Write { path, source }
    };
    for dir in &recording.dirs {
        let target = out.join(dir);
        std::fs::create_dir_all(&target).map_err(write_error(&target))?;
    }
    // Links first, shallowest first, so that files reached through them land in the link's target.
    let mut links: Vec<(&PathBuf, &PathBuf)> = recording.links.iter().collect();
    links.sort_by_key(|(link, _)| link.components().count());
    for (link, target) in links {
        let at = out.join(link);
        if at.symlink_metadata().is_ok() {
            continue;
        }
        if let Some(parent) = at.parent() {
            std::fs::create_dir_all(parent).map_err(write_error(parent))?;
        }
        std::os::unix::fs::symlink(target, &at).map_err(write_error(&at))?;
    }
    let mut copied = 0;
    for file in &recording.files {
        let source = root.host_path(file);
        let bytes = std::fs::read(&source)
            .map_err(|source_error| SnapshotError::Read { path: file.clone(), source: source_error })?;
        let at = out.join(file);
        if let Some(parent) = at.parent() {
            std::fs::create_dir_all(parent).map_err(write_error(parent))?;
        }
        std::fs::write(&at, bytes).map_err(write_error(&at))?;
        copied += 1;
    }
    for (path, content) in &recording.synthesized {
        let at = out.join(path);
        if let Some(parent) = at.parent() {
            std::fs::create_dir_all(parent).map_err(write_error(parent))?;
        }
        std::fs::write(&at, content).map_err(write_error(&at))?;
        copied += 1;
    }
    if !recording.absent.is_empty() {
        let at = out.join(ABSENT_PATHS);
        if let Some(parent) = at.parent() {
            std::fs::create_dir_all(parent).map_err(write_error(parent))?;
        }
        let mut list = String::new();
        for path in &recording.absent {
            list.push_str(&path.to_string_lossy());
            list.push('\n');
        }
        std::fs::write(&at, list).map_err(write_error(&at))?;
    }
    for tree in ["sys", "proc", "dev"] {
        let dir = out.join(tree);
        std::fs::create_dir_all(&dir).map_err(write_error(&dir))?;
    }
    Ok(copied)
}
