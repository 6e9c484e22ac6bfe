//! Resolving `--root`: the live node, a captured directory, or a .tar.gz snapshot unpacked into a
//! temporary directory that lives as long as the analysis.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use fabricdoctor_probes::SysRoot;
use fabricdoctor_report::HostInfo;

use crate::args::SourceArgs;

#[derive(Debug)]
pub struct Source {
    pub root: SysRoot,
    pub description: String,
    /// Keeps an unpacked archive alive until the analysis ends.
    _unpacked: Option<tempfile::TempDir>,
}

pub fn is_archive(path: &Path) -> bool {
    let name = path.to_string_lossy();
    name.ends_with(".tar.gz") || name.ends_with(".tgz")
}

impl Source {
    pub fn resolve(args: &SourceArgs) -> anyhow::Result<Source> {
        let Some(path) = &args.root else {
            return Ok(Source { root: SysRoot::live(), description: "live".into(), _unpacked: None });
        };
        if is_archive(path) {
            let unpacked = tempfile::tempdir().context("failed to create a temporary directory")?;
            let file =
                std::fs::File::open(path).with_context(|| format!("failed to open snapshot {}", path.display()))?;
            tar::Archive::new(flate2::read::GzDecoder::new(file))
                .unpack(unpacked.path())
                .with_context(|| format!("failed to unpack snapshot {}: not a valid .tar.gz", path.display()))?;
            let tree = single_tree(unpacked.path())?;
            return Ok(Source {
                root: SysRoot::captured(&tree),
                description: path.display().to_string(),
                _unpacked: Some(unpacked),
            });
        }
        if !path.is_dir() {
            bail!("--root {}: not a directory or .tar.gz snapshot", path.display());
        }
        if !path.join("sys").is_dir() && !path.join("proc").is_dir() {
            bail!(
                "--root {}: no sys/ or proc/ inside; expected a tree written by `fabricdoctor snapshot`",
                path.display()
            );
        }
        Ok(Source { root: SysRoot::captured(path), description: path.display().to_string(), _unpacked: None })
    }

    pub fn host_info(&self, host: &fabricdoctor_probes::host::HostSettings) -> HostInfo {
        HostInfo {
            hostname: host.hostname.clone().unwrap_or_else(|_| "unknown-host".into()),
            kernel_release: host.kernel_release.clone().ok(),
            source: self.description.clone(),
        }
    }
}

/// An archive holds the tree either at its top or inside one directory.
fn single_tree(dir: &Path) -> anyhow::Result<PathBuf> {
    if dir.join("sys").is_dir() || dir.join("proc").is_dir() {
        return Ok(dir.to_path_buf());
    }
    let entries: Vec<PathBuf> =
        std::fs::read_dir(dir)?.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_dir()).collect();
    match entries.as_slice() {
        [only] if only.join("sys").is_dir() || only.join("proc").is_dir() => Ok(only.clone()),
        _ => bail!("snapshot archive holds no sys/ or proc/ tree"),
    }
}
