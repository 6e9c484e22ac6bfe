//! The root-path seam: every probe reads the node through a [`SysRoot`], so the live node, a captured
//! snapshot and a test fixture are read by exactly the same code.
//!
//! Paths given to a `SysRoot` are node paths such as `sys/class/infiniband/mlx5_0/ports/1/state`: relative,
//! with the first component naming the tree (`sys`, `proc` or `dev`). Symbolic links are resolved inside
//! the root, never against the machine's real `/sys`, so a snapshot's relative links (sysfs uses them for
//! `sys/bus/pci/devices/*`, `sys/class/*/*` and every `device` link) keep pointing into the snapshot.
//! When recording is on, the root remembers every file, directory and link it touched: that set is what
//! `fabricdoctor snapshot` copies.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use crate::error::{ProbeError, ProbeErrorKind};

/// Link resolution gives up after this many hops, as the kernel does (`MAXSYMLINKS` = 40, path_resolution(7)).
const MAX_SYMLINK_HOPS: usize = 40;

/// Where the node's `sys`, `proc` and `dev` trees are, and whether they are the running kernel's own.
#[derive(Debug)]
pub struct SysRoot {
    sys: PathBuf,
    proc: PathBuf,
    dev: PathBuf,
    live: bool,
    /// In a capture: node paths the capturing run looked for on the live node and did not find
    /// ([`ABSENT_PATHS`]), so their absence is a fact about the node, not a gap in the capture.
    absent_on_node: BTreeSet<PathBuf>,
    /// Resolved real node paths of node paths already walked, so a link is read once per run.
    resolved: Mutex<HashMap<PathBuf, PathBuf>>,
    recorder: Option<Mutex<Recording>>,
}

/// What the probes touched, in node paths, for `snapshot`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Recording {
    /// Regular files read (real paths, links already resolved).
    pub files: BTreeSet<PathBuf>,
    /// Directories listed (so that empty ones exist in the copy).
    pub dirs: BTreeSet<PathBuf>,
    /// Symbolic links crossed: link path -> link target exactly as stored.
    pub links: BTreeMap<PathBuf, PathBuf>,
    /// Readings with no file behind them on the live node (ethtool and DCB netlink replies), stored
    /// as files at these node paths (outside sys/proc/dev) so that a capture reads them back.
    pub synthesized: BTreeMap<PathBuf, Vec<u8>>,
    /// Node paths looked for and not found (live, or recorded absent in the capture being read),
    /// written to [`ABSENT_PATHS`] so that a capture tells "the node has none" from "not copied".
    pub absent: BTreeSet<PathBuf>,
}

/// Where a snapshot lists, one node path per line, what the probes looked for and the node lacked.
pub const ABSENT_PATHS: &str = "snapshot/absent-paths";

impl SysRoot {
    /// The running node. The only place the real mount points are named.
    pub fn live() -> Self {
        Self::from_parts(PathBuf::from("/sys"), PathBuf::from("/proc"), PathBuf::from("/dev"), true)
    }

    /// A captured tree (snapshot or fixture) holding `sys/`, `proc/` and `dev/` below `dir`.
    pub fn captured(dir: impl AsRef<Path>) -> Self {
        let dir = dir.as_ref();
        let mut root = Self::from_parts(dir.join("sys"), dir.join("proc"), dir.join("dev"), false);
        // Captures made by other tools have no list: every missing path is then "not in capture".
        if let Ok(list) = std::fs::read_to_string(dir.join(ABSENT_PATHS)) {
            root.absent_on_node = list
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .map(|line| normalize(Path::new(line)).into_iter().collect())
                .collect();
        }
        root
    }

    /// A tree read as if it were the running node (tests of what a live run records).
    #[cfg(test)]
    pub(crate) fn live_at(dir: &Path) -> Self {
        Self::from_parts(dir.join("sys"), dir.join("proc"), dir.join("dev"), true)
    }

    fn from_parts(sys: PathBuf, proc: PathBuf, dev: PathBuf, live: bool) -> Self {
        SysRoot {
            sys,
            proc,
            dev,
            live,
            absent_on_node: BTreeSet::new(),
            resolved: Mutex::new(HashMap::new()),
            recorder: None,
        }
    }

    /// Start remembering every path read, for `snapshot`.
    pub fn with_recording(mut self) -> Self {
        self.recorder = Some(Mutex::new(Recording::default()));
        self
    }

    /// A read failure at a node path. In a capture a missing file is [`ProbeErrorKind::NotInCapture`]:
    /// the node may well have it, the tool that made the capture did not copy it, and a message such
    /// as "needs root" would send the operator after the wrong thing.
    fn io_error(&self, node_path: impl Into<PathBuf>, error: std::io::Error) -> ProbeError {
        let error = ProbeError::io(node_path, error);
        match error.kind {
            ProbeErrorKind::NotFound if self.known_absent(&error.path) => error,
            ProbeErrorKind::NotFound if !self.live => ProbeError { kind: ProbeErrorKind::NotInCapture, ..error },
            _ => error,
        }
    }

    /// Whether the node itself lacks `node_path`: live, that it does not exist; in a capture, that the
    /// capturing run recorded it as absent. A capture that merely does not hold it answers false.
    pub fn known_absent(&self, node_path: impl AsRef<Path>) -> bool {
        let node_path = node_path.as_ref();
        let absent = if self.live {
            self.resolve(node_path).map(|real| !self.host_path(&real).exists()).unwrap_or(true)
        } else {
            let normalized: PathBuf = normalize(node_path).into_iter().collect();
            self.absent_on_node.contains(&normalized)
        };
        if absent {
            self.record_absent(node_path);
        }
        absent
    }

    fn record_absent(&self, node_path: &Path) {
        if let Some(recorder) = &self.recorder {
            lock(recorder).absent.insert(normalize(node_path).into_iter().collect());
        }
    }

    /// "Absent" for a fact a probe found in none of the places it looked (several files or an
    /// interface): NotInCapture in a capture, as for a single file.
    pub fn absent(&self, node_path: impl Into<PathBuf>) -> ProbeError {
        self.io_error(node_path, std::io::ErrorKind::NotFound.into())
    }

    /// True when reading the running kernel (some facts, such as `statvfs` of /dev/shm, exist only there).
    pub fn is_live(&self) -> bool {
        self.live
    }

    /// Remember a reading that has no file on the live node (an ioctl or netlink reply) under a node
    /// path outside sys/proc/dev, so `snapshot` writes it and a capture reads it with `read_string`.
    pub fn record_synthesized(&self, node_path: impl AsRef<Path>, content: impl Into<Vec<u8>>) {
        if let Some(recorder) = &self.recorder {
            lock(recorder).synthesized.insert(node_path.as_ref().to_path_buf(), content.into());
        }
    }

    /// What has been recorded so far (empty when recording is off).
    pub fn recording(&self) -> Recording {
        self.recorder.as_ref().map(|r| lock(r).clone()).unwrap_or_default()
    }

    /// The filesystem path of a node path, without resolving links.
    pub fn host_path(&self, node_path: &Path) -> PathBuf {
        let mut components = node_path.components();
        let first = components.next();
        let rest = components.as_path();
        match first {
            Some(Component::Normal(tree)) if tree == "sys" => self.sys.join(rest),
            Some(Component::Normal(tree)) if tree == "proc" => self.proc.join(rest),
            Some(Component::Normal(tree)) if tree == "dev" => self.dev.join(rest),
            // Only the three trees exist in a node; anything else lives under sys's parent in a capture.
            _ => self.sys.parent().map(|p| p.join(node_path)).unwrap_or_else(|| node_path.to_path_buf()),
        }
    }

    /// Resolve every symbolic link in `node_path` inside the root, returning the real node path.
    pub fn resolve(&self, node_path: impl AsRef<Path>) -> Result<PathBuf, ProbeError> {
        let node_path = node_path.as_ref();
        if let Some(hit) = lock(&self.resolved).get(node_path) {
            return Ok(hit.clone());
        }
        let real = self.resolve_uncached(node_path, 0)?;
        lock(&self.resolved).insert(node_path.to_path_buf(), real.clone());
        Ok(real)
    }

    fn resolve_uncached(&self, node_path: &Path, hops: usize) -> Result<PathBuf, ProbeError> {
        let mut real = PathBuf::new();
        let mut components = normalize(node_path).into_iter();
        for component in components.by_ref() {
            let candidate = real.join(&component);
            if let Some(hit) = lock(&self.resolved).get(&candidate) {
                real = hit.clone();
                continue;
            }
            // proc/self names the reading process, whose PID means nothing elsewhere: keep the name (the
            // kernel resolves it on the live node) so captures hold proc/self/limits, not proc/4711/limits.
            if candidate == Path::new("proc/self") {
                real = candidate;
                continue;
            }
            let host = self.host_path(&candidate);
            match std::fs::symlink_metadata(&host) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    if hops >= MAX_SYMLINK_HOPS {
                        return Err(ProbeError { path: node_path.to_path_buf(), kind: ProbeErrorKind::SymlinkLoop });
                    }
                    let target = std::fs::read_link(&host).map_err(|e| self.io_error(&candidate, e))?;
                    if let Some(recorder) = &self.recorder {
                        lock(recorder).links.insert(candidate.clone(), target.clone());
                    }
                    // Absolute targets name the node's own root; relative ones are relative to the link's dir.
                    let joined = if target.is_absolute() {
                        target.strip_prefix("/").unwrap_or(&target).to_path_buf()
                    } else {
                        real.join(&target)
                    };
                    let resolved = self.resolve_uncached(&joined, hops + 1)?;
                    lock(&self.resolved).insert(candidate, resolved.clone());
                    real = resolved;
                }
                // Missing components are reported by the read that follows, with the full path.
                _ => real = candidate,
            }
        }
        Ok(real)
    }

    /// Read a text file (sysfs attributes end in a newline; it is kept, parsers trim).
    pub fn read_string(&self, node_path: impl AsRef<Path>) -> Result<String, ProbeError> {
        let bytes = self.read_bytes(node_path.as_ref())?;
        String::from_utf8(bytes).map_err(|e| {
            ProbeError::malformed(node_path.as_ref(), &String::from_utf8_lossy(e.as_bytes()), "not UTF-8 text")
        })
    }

    /// Read a file's bytes (PCI config space is binary).
    pub fn read_bytes(&self, node_path: impl AsRef<Path>) -> Result<Vec<u8>, ProbeError> {
        let node_path = node_path.as_ref();
        let real = self.resolve(node_path)?;
        let bytes = std::fs::read(self.host_path(&real)).map_err(|e| self.io_error(node_path, e))?;
        if let Some(recorder) = &self.recorder {
            lock(recorder).files.insert(real);
        }
        Ok(bytes)
    }

    /// Read a record device such as `dev/kmsg` (Documentation/ABI/testing/dev-kmsg): every record
    /// available now, one per line, without waiting for more (non-blocking reads until EAGAIN). A
    /// record the kernel overwrote while reading (EPIPE) is skipped. Not recorded: the caller decides
    /// what of it a snapshot keeps (`record_synthesized`).
    pub fn read_records(&self, node_path: impl AsRef<Path>) -> Result<String, ProbeError> {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let node_path = node_path.as_ref();
        let real = self.resolve(node_path)?;
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(self.host_path(&real))
            .map_err(|e| self.io_error(node_path, e))?;
        let mut text = Vec::new();
        // A kmsg record is at most about 1 KiB of text plus its dictionary; a short buffer is EINVAL.
        let mut record = vec![0u8; 16 * 1024];
        loop {
            match file.read(&mut record) {
                // A regular file (a capture) ends; the device never returns 0.
                Ok(0) => break,
                Ok(n) => {
                    text.extend_from_slice(&record[..n]);
                    if text.last() != Some(&b'\n') {
                        text.push(b'\n');
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
                Err(e) => return Err(self.io_error(node_path, e)),
            }
        }
        Ok(String::from_utf8_lossy(&text).into_owned())
    }

    /// Read a link's target exactly as stored, e.g. `../../../0000:17:00.0`.
    pub fn read_link(&self, node_path: impl AsRef<Path>) -> Result<PathBuf, ProbeError> {
        let node_path = node_path.as_ref();
        let parent = node_path.parent().unwrap_or(Path::new(""));
        let name = node_path.file_name().unwrap_or_default();
        let link = self.resolve(parent)?.join(name);
        let target = std::fs::read_link(self.host_path(&link)).map_err(|e| self.io_error(node_path, e))?;
        if let Some(recorder) = &self.recorder {
            lock(recorder).links.insert(link, target.clone());
        }
        Ok(target)
    }

    /// The names in a directory, sorted, so every run and every snapshot lists in the same order.
    pub fn read_dir(&self, node_path: impl AsRef<Path>) -> Result<Vec<String>, ProbeError> {
        let node_path = node_path.as_ref();
        let real = self.resolve(node_path)?;
        let entries = std::fs::read_dir(self.host_path(&real)).map_err(|e| self.io_error(node_path, e))?;
        let mut names = Vec::new();
        let mut listed_links = Vec::new();
        let mut listed_dirs = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| self.io_error(node_path, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            // A capture must list the same names: entries that are links or directories are kept even
            // when no probe reads inside them (sys/class/iommu/dmar0 is only counted, never read).
            if self.recorder.is_some() {
                match entry.file_type() {
                    Ok(kind) if kind.is_symlink() => {
                        if let Ok(target) = std::fs::read_link(entry.path()) {
                            listed_links.push((real.join(&name), target));
                        }
                    }
                    Ok(kind) if kind.is_dir() => listed_dirs.push(real.join(&name)),
                    _ => {}
                }
            }
            names.push(name);
        }
        names.sort();
        if let Some(recorder) = &self.recorder {
            let mut recording = lock(recorder);
            recording.dirs.insert(real);
            recording.dirs.extend(listed_dirs);
            recording.links.extend(listed_links);
        }
        Ok(names)
    }

    /// Whether a node path exists (after resolving links).
    pub fn exists(&self, node_path: impl AsRef<Path>) -> bool {
        let node_path = node_path.as_ref();
        let exists = self.resolve(node_path).map(|real| self.host_path(&real).exists()).unwrap_or(false);
        if !exists
            && (self.live || self.absent_on_node.contains(&normalize(node_path).into_iter().collect::<PathBuf>()))
        {
            self.record_absent(node_path);
        }
        exists
    }
}

/// Lexically normalise a relative node path: drop `.`, apply `..`, ignore a leading `/`.
fn normalize(path: &Path) -> Vec<std::ffi::OsString> {
    let mut out: Vec<std::ffi::OsString> = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(name) => out.push(name.to_os_string()),
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    out
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock only means another probe thread panicked; the data (paths) is still consistent.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn relative_links_resolve_inside_the_root_and_are_recorded() {
        let dir = tempfile::tempdir().expect("tempdir");
        let device = dir.path().join("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0");
        std::fs::create_dir_all(&device).expect("mkdir");
        std::fs::write(device.join("vendor"), "0x15b3\n").expect("write");
        std::fs::create_dir_all(dir.path().join("sys/bus/pci/devices")).expect("mkdir");
        symlink(
            "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0",
            dir.path().join("sys/bus/pci/devices/0000:01:00.0"),
        )
        .expect("symlink");

        let root = SysRoot::captured(dir.path()).with_recording();
        let vendor = root.read_string("sys/bus/pci/devices/0000:01:00.0/vendor").expect("read");
        assert_eq!(vendor, "0x15b3\n");
        let recording = root.recording();
        assert!(recording.files.contains(Path::new("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/vendor")));
        assert_eq!(
            recording.links.get(Path::new("sys/bus/pci/devices/0000:01:00.0")),
            Some(&PathBuf::from("../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0"))
        );
    }

    #[test]
    fn a_link_loop_is_an_error_not_a_hang() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("sys/class")).expect("mkdir");
        symlink("b", dir.path().join("sys/class/a")).expect("symlink");
        symlink("a", dir.path().join("sys/class/b")).expect("symlink");
        let root = SysRoot::captured(dir.path());
        let error = root.read_string("sys/class/a/x").expect_err("loop");
        assert!(matches!(error.kind, ProbeErrorKind::SymlinkLoop), "{error}");
    }

    #[test]
    fn records_are_read_to_the_end_without_blocking() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("dev")).expect("mkdir");
        std::fs::write(dir.path().join("dev/kmsg"), "6,1,0,-;one\n6,2,5,-;two\n").expect("write");
        let root = SysRoot::captured(dir.path());
        assert_eq!(root.read_records("dev/kmsg").expect("read"), "6,1,0,-;one\n6,2,5,-;two\n");
        assert!(root.read_records("dev/nothing").expect_err("absent").is_not_found());
    }

    #[test]
    fn missing_files_name_the_node_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = SysRoot::captured(dir.path());
        let error = root.read_string("sys/class/infiniband/mlx5_0/fw_ver").expect_err("missing");
        assert!(error.is_not_found() && error.is_not_in_capture());
        assert_eq!(error.to_string(), "failed to read sys/class/infiniband/mlx5_0/fw_ver: not in this capture");
    }
}
