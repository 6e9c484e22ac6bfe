//! `fabricdoctor snapshot OUT`: run every probe with recording on, then copy what they read.

use std::path::Path;

use anyhow::{bail, Context};
use fabricdoctor_probes::snapshot::write_tree;
use fabricdoctor_probes::NodeSnapshot;

use crate::args::SnapshotArgs;
use crate::exit;
use crate::source::{is_archive, Source};

pub fn run(args: SnapshotArgs) -> anyhow::Result<i32> {
    let source = Source::resolve(&args.source)?;
    let root = source.root.with_recording();
    let mut node = NodeSnapshot::probe(&root);
    // The transceivers' pages, so the optics checks judge the copy.
    node.read_optics(&root);
    // Counters and their configuration too, so `check --root` and `counters --root` work on the copy.
    let _ = fabricdoctor_probes::counters::read_sample(&root);
    // NVML's reading (or "no NVIDIA driver") and the driver's kernel-log lines, for the GPU checks.
    let _ = fabricdoctor_probes::gpu::GpuObservation::probe(&root);
    let recording = root.recording();
    let hostname = node.host.hostname.clone().unwrap_or_else(|_| "unknown-host".into());
    let copied = if is_archive(&args.out) {
        let staging = tempfile::tempdir().context("failed to create a temporary directory")?;
        let tree = staging.path().join(format!("fabricdoctor-snapshot-{hostname}"));
        let copied = write_tree(&root, &recording, &tree)?;
        pack(&tree, &args.out)?;
        copied
    } else {
        prepare_directory(&args.out)?;
        write_tree(&root, &recording, &args.out)?
    };
    eprintln!(
        "fabricdoctor: snapshot of {hostname}: {copied} files, {} links, {} directories -> {}",
        recording.links.len(),
        recording.dirs.len(),
        args.out.display()
    );
    Ok(exit::SUCCESS)
}

fn prepare_directory(out: &Path) -> anyhow::Result<()> {
    if out.exists() {
        if !out.is_dir() {
            bail!("snapshot output {} exists and is not a directory", out.display());
        }
        if std::fs::read_dir(out)?.next().is_some() {
            bail!("snapshot output directory {} is not empty", out.display());
        }
    }
    std::fs::create_dir_all(out).with_context(|| format!("failed to create {}", out.display()))
}

/// Pack `tree` as OUT.tar.gz with links kept as links, written through a temporary file and a rename.
fn pack(tree: &Path, out: &Path) -> anyhow::Result<()> {
    let dir = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let temporary = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("failed to create a file in {}", dir.display()))?;
    {
        let encoder = flate2::write::GzEncoder::new(temporary.as_file(), flate2::Compression::default());
        let mut archive = tar::Builder::new(encoder);
        archive.follow_symlinks(false);
        let name = tree.file_name().unwrap_or_default();
        archive.append_dir_all(name, tree).with_context(|| format!("failed to pack {}", tree.display()))?;
        archive.into_inner()?.finish()?;
    }
    temporary.persist(out).with_context(|| format!("failed to write {}", out.display()))?;
    Ok(())
}
