#!/usr/bin/env python3
"""Turn hwloc's Linux test captures into reduced node trees for fabricdoctor.

hwloc (https://github.com/open-mpi/hwloc, BSD-3-Clause) keeps, under tests/hwloc/linux/ and
tests/hwloc/x86+linux/, tarballs of sysfs/procfs trees that hwloc-gather-topology captured on real
machines (and a few hand-edited or QEMU ones) over some fifteen years of kernels, each with the output
lstopo must print for it (*.console or *.xml, named by a *.test file). This script

  1. reads every such tarball out of a local git mirror of hwloc (no network: `git show`),
  2. extracts it in a temporary directory,
  3. walks it the way fabricdoctor's probes walk a node (probes/src/{pci,numa,netdev,rdma,counters,
     host}.rs through root.rs's in-root link resolution) and copies ONLY what that walk touches:
     the files it reads, the symbolic links it crosses or lists (kept as links, target spelled as in
     the capture), and the directories it lists,
  4. writes the reduced tree to tests/fixtures/hwloc/<tree>/ together with hwloc-expected.json,
     the device locality hwloc's expected output gives for that capture,
  5. writes tests/fixtures/hwloc/README.md (tree table, oddities) and hwloc's COPYING.

Standard library only. Deterministic for a given hwloc commit. Touches nothing outside the output
directory (default: tests/fixtures/hwloc next to this script's repository).

    python3 scripts/hwloc-fixtures.py --mirror /work/.mirror/open-mpi+hwloc/repo
    python3 scripts/hwloc-fixtures.py --mirror DIR --only 32intel64-2p8co2t+8ve   # one tree
    python3 scripts/hwloc-fixtures.py --check                 # sanity-check what is there
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Dict, List, Optional, Set, Tuple

REPOSITORY = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPOSITORY / "tests" / "fixtures" / "hwloc"
DEFAULT_MIRROR = Path("/work/.mirror/open-mpi+hwloc/repo")
HWLOC_URL = "https://github.com/open-mpi/hwloc"
TEST_DIRS = ("tests/hwloc/linux", "tests/hwloc/x86+linux")
TARBALL_SUFFIXES = (".tar.bz2", ".tar.gz", ".tar.xz", ".tgz")
FORMAT = "fabricdoctor.hwloc-expected/1"

MAX_FILE_BYTES = 64 * 1024  # larger files are left out
MAX_CONFIG_BYTES = 4 * 1024  # binary PCI `config` kept only up to this size
DEFAULT_BUDGET = 8_000_000  # bytes for all trees together

# --------------------------------------------------------------------------------------------------
# What the probes read (fabricdoctor probes/src, read through SysRoot). Keep in step with the Rust.
# --------------------------------------------------------------------------------------------------

# pci.rs read_functions/read_function/read_link_attributes/read_aer: for every entry of
# sys/bus/pci/devices whose name parses as a PCI address, resolved through its link.
PCI_FILES = (
    "vendor", "device", "class", "subsystem_vendor", "subsystem_device", "numa_node", "local_cpulist",
    "current_link_speed", "current_link_width", "max_link_speed", "max_link_width",
    "aer_dev_correctable", "aer_dev_nonfatal", "aer_dev_fatal", "config",
)
PCI_LINKS = ("driver",)  # read_link: only the target's last component (driver name) is used
# numa.rs read_numa_nodes: sys/devices/system/node/nodeN/cpulist for every nodeN entry.
NODE_FILES = ("cpulist",)
# netdev.rs read_net_device + counters.rs read_netdev: every entry of sys/class/net.
NET_FILES = ("mtu", "operstate", "speed", "type", "address", "carrier_changes")
NET_LINKS = ("device",)
NET_COUNTER_DIRS = ("statistics",)  # every file in it
NET_ECN_DIRS = ("ecn/roce_np", "ecn/roce_rp")  # files, and enable/<prio>
# rdma.rs read_rdma_device/read_port/read_gid_table + counters.rs read_sample/port_netdevs.
IB_FILES = ("fw_ver", "node_guid", "node_type", "hca_type", "board_id", "parent")
IB_LINKS = ("device",)
IB_PORT_FILES = ("state", "phys_state", "rate", "link_layer")
IB_PORT_COUNTER_DIRS = ("counters", "hw_counters")  # every file in them
# host.rs read_host_settings, counters.rs (uptime), gpu/xid.rs (kmsg), gpu.rs (nvml reading).
HOST_FILES = (
    "proc/sys/kernel/hostname", "proc/sys/kernel/osrelease", "proc/modules", "proc/cmdline",
    "proc/self/limits", "proc/meminfo", "proc/self/mountinfo", "proc/mounts", "proc/uptime",
    "dev/kmsg", "nvml/gpus.json",
)
HOST_LISTED_DIRS = ("sys/class/iommu", "sys/kernel/iommu_groups")  # + iommu_groups/N/type
# Extra inputs hwloc used where the probes' own file is missing (old kernels): only with
# --keep-fallbacks, so that a fallback in the probes can be tested on these trees.
FALLBACK_PCI_FILES = ("local_cpus",)
FALLBACK_NODE_FILES = ("cpumap",)

MAX_SYMLINK_HOPS = 40


def probe_file_list() -> List[str]:
    """The node paths the probes read, as documented in the README (patterns)."""
    rows = ["sys/bus/pci/devices/ (listed)"]
    rows += [f"sys/bus/pci/devices/<addr>/{f}" for f in PCI_FILES]
    rows += [f"sys/bus/pci/devices/<addr>/{f} (link, read_link)" for f in PCI_LINKS]
    rows += ["sys/devices/system/node/ (listed)", "sys/devices/system/node/node<N>/cpulist"]
    rows += ["sys/class/net/ (listed)"] + [f"sys/class/net/<if>/{f}" for f in NET_FILES]
    rows += ["sys/class/net/<if>/device (link, read_link + resolved)", "sys/class/net/<if>/statistics/* (listed, every file)"]
    rows += ["sys/class/net/<if>/ecn/roce_np/*, ecn/roce_rp/* (listed; enable/<prio>)",
             "sys/kernel/debug/mlx5/<addr of device>/cc_params/* (listed)"]
    rows += ["sys/class/infiniband/ (listed)"] + [f"sys/class/infiniband/<dev>/{f}" for f in IB_FILES]
    rows += ["sys/class/infiniband/<dev>/device (link, read_link + resolved)",
             "sys/class/infiniband/<dev>/device/net/ (listed)",
             "sys/class/infiniband/<dev>/ports/ (listed)"]
    rows += [f"sys/class/infiniband/<dev>/ports/<N>/{f}" for f in IB_PORT_FILES]
    rows += ["sys/class/infiniband/<dev>/ports/<N>/gids/<i> (listed, every entry)",
             "sys/class/infiniband/<dev>/ports/<N>/gid_attrs/types/<i>, gid_attrs/ndevs/<i> (gid_attrs/ndevs listed)",
             "sys/class/infiniband/<dev>/ports/<N>/counters/*, hw_counters/* (listed, every file but `lifespan`)"]
    rows += ["sys/class/iommu/ (listed)", "sys/kernel/iommu_groups/ (listed)", "sys/kernel/iommu_groups/<g>/type"]
    rows += list(HOST_FILES)
    rows += ["ethtool/<if>/statistics, dcb/<if>/pfc (written by `fabricdoctor snapshot`; never in hwloc trees)"]
    return rows


# --------------------------------------------------------------------------------------------------
# git mirror access
# --------------------------------------------------------------------------------------------------


class Mirror:
    def __init__(self, git_dir: Path, rev: str):
        self.git_dir = git_dir
        self.commit = self.git("rev-parse", rev + "^{commit}").decode().strip()

    def git(self, *args: str) -> bytes:
        return subprocess.run(
            ["git", "--git-dir", str(self.git_dir), *args], check=True, stdout=subprocess.PIPE
        ).stdout

    def ls(self, *dirs: str) -> List[str]:
        return self.git("ls-tree", "-r", "--name-only", self.commit, "--", *dirs).decode().splitlines()

    def show(self, path: str) -> bytes:
        return self.git("show", f"{self.commit}:{path}")

    def added(self, path: str) -> Optional[str]:
        """Date of the oldest commit adding a tarball of this name in any directory, .tar.gz or .tar.bz2
        (tests moved from tests/linux/ and switched from gzip to bzip2 in 2010): the capture is at least
        that old. Captures renamed before that are dated by the rename."""
        name = PurePosixPath(path).name
        stem = re.sub(r"\.(tar\.(bz2|gz|xz)|tgz)$", "", name)
        out = self.git("log", "--diff-filter=A", "--format=%ad %h", "--date=short", self.commit, "--",
                       f"*/{stem}.tar.gz", f"*/{stem}.tar.bz2", f"*/{stem}.tgz")
        lines = [l for l in out.decode().split("\n") if l.strip()]
        # and the history of the file itself, through renames (32em64t-2n8c+1mic -> ...+dimms)
        out = self.git("log", "--follow", "--diff-filter=A", "--format=%ad %h", "--date=short", self.commit, "--", path)
        lines += [l for l in out.decode().split("\n") if l.strip()]
        return sorted(lines)[0] if lines else None


@dataclass
class HwlocTest:
    path: str  # tests/hwloc/linux/foo.test
    source: str
    target: str
    options: str
    env: List[str]
    exclude: Optional[str]
    comment: List[str]

    @property
    def name(self) -> str:
        return PurePosixPath(self.path).name[: -len(".test")]


def parse_test(path: str, text: str) -> Optional[HwlocTest]:
    fields: Dict[str, List[str]] = {}
    comment = []
    for line in text.splitlines():
        if line.startswith("#"):
            comment.append(line[1:].strip())
            continue
        m = re.match(r"^(\w+):\s*(.*)$", line)
        if m:
            fields.setdefault(m.group(1), []).append(m.group(2).strip())
    if "source" not in fields or "target" not in fields:
        return None  # e.g. allowed/test1.test (synthetic + fsroot)
    return HwlocTest(
        path=path,
        source=fields["source"][0],
        target=fields["target"][0],
        options=fields.get("options", [""])[0],
        env=fields.get("env", []),
        exclude=fields.get("exclude", [None])[0],
        comment=comment,
    )


def primary_test(stem: str, tests: List[HwlocTest]) -> Optional[HwlocTest]:
    """The test whose name is the tarball's; else the one with no env override; else the first."""
    if not tests:
        return None
    for t in tests:
        if t.name == stem:
            return t
    for t in sorted(tests, key=lambda t: t.name):
        if not t.env:
            return t
    return sorted(tests, key=lambda t: t.name)[0]


# --------------------------------------------------------------------------------------------------
# The probe walk over an extracted tree (root.rs semantics)
# --------------------------------------------------------------------------------------------------

Node = Tuple[str, ...]  # node path components, e.g. ("sys", "class", "net")


def normalize(parts) -> Node:
    out: List[str] = []
    for p in parts:
        if p in ("", "."):
            continue
        if p == "..":
            if out:
                out.pop()
            continue
        out.append(p)
    return tuple(out)


def node(path: str) -> Node:
    return normalize(path.split("/"))


def text(n: Node) -> str:
    return "/".join(n)


@dataclass
class Walk:
    root: Path
    files: Set[Node] = field(default_factory=set)
    dirs: Set[Node] = field(default_factory=set)
    links: Dict[Node, str] = field(default_factory=dict)
    listed: Set[Node] = field(default_factory=set)  # directories the probes list (read_dir)
    skipped: List[Tuple[str, str]] = field(default_factory=list)  # (node path, why)
    cache: Dict[Node, Node] = field(default_factory=dict)

    def host(self, n: Node) -> Path:
        return self.root.joinpath(*n) if n else self.root

    def lstat_kind(self, n: Node) -> Optional[str]:
        try:
            st = os.lstat(self.host(n))
        except OSError:
            return None
        import stat as S

        if S.S_ISLNK(st.st_mode):
            return "link"
        if S.S_ISDIR(st.st_mode):
            return "dir"
        if S.S_ISREG(st.st_mode):
            return "file"
        return "other"

    def resolve(self, n: Node, hops: int = 0) -> Node:
        if n in self.cache:
            return self.cache[n]
        real: Node = ()
        for comp in normalize(n):
            cand = real + (comp,)
            if cand in self.cache:
                real = self.cache[cand]
                continue
            if cand == ("proc", "self"):
                real = cand
                continue
            if self.lstat_kind(cand) == "link":
                if hops >= MAX_SYMLINK_HOPS:
                    raise RuntimeError(f"symlink loop at {text(n)}")
                target = os.readlink(self.host(cand))
                self.links[cand] = target
                joined = node(target) if target.startswith("/") else real + tuple(target.split("/"))
                resolved = self.resolve(normalize(joined), hops + 1)
                self.cache[cand] = resolved
                real = resolved
            else:
                real = cand
        self.cache[n] = real
        return real

    def read(self, n: Node) -> Optional[bytes]:
        """read_string/read_bytes: record the real file; None when absent (NotInCapture)."""
        real = self.resolve(n)
        if self.lstat_kind(real) != "file":
            return None
        size = os.lstat(self.host(real)).st_size
        if size > MAX_FILE_BYTES:
            self.skipped.append((text(real), f"{size} bytes > {MAX_FILE_BYTES}"))
            return None
        if real[-1] == "config" and size > MAX_CONFIG_BYTES:
            self.skipped.append((text(real), f"binary config of {size} bytes > {MAX_CONFIG_BYTES}"))
            return None
        self.files.add(real)
        return self.host(real).read_bytes()

    def read_link(self, n: Node) -> Optional[str]:
        parent = self.resolve(n[:-1])
        link = parent + (n[-1],)
        if self.lstat_kind(link) != "link":
            return None
        target = os.readlink(self.host(link))
        self.links[link] = target
        return target

    def read_dir(self, n: Node, keep_files: bool = False) -> Optional[List[str]]:
        """read_dir: record the directory and its link/dir entries (as root.rs does when recording).
        keep_files: also keep regular-file entries, for directories whose every name the probes act on
        (sys/class/net: a `bonding_masters` file is read as an interface)."""
        real = self.resolve(n)
        if self.lstat_kind(real) != "dir":
            return None
        self.dirs.add(real)
        self.listed.add(real)
        names = sorted(os.listdir(self.host(real)))
        for name in names:
            entry = real + (name,)
            kind = self.lstat_kind(entry)
            if kind == "link":
                self.links[entry] = os.readlink(self.host(entry))
            elif kind == "dir":
                self.dirs.add(entry)
            elif kind == "file" and keep_files:
                self.read(entry)
        return names


PCI_ADDRESS = re.compile(r"^([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$")


def is_pci_address(name: str) -> bool:
    m = PCI_ADDRESS.match(name)
    return bool(m) and int(m.group(3), 16) < 32


def probe_walk(root: Path, keep_fallbacks: bool) -> Walk:
    w = Walk(root)
    pci_files = PCI_FILES + (FALLBACK_PCI_FILES if keep_fallbacks else ())
    node_files = NODE_FILES + (FALLBACK_NODE_FILES if keep_fallbacks else ())

    # pci.rs
    for name in w.read_dir(node("sys/bus/pci/devices")) or []:
        if not is_pci_address(name):
            continue
        d = w.resolve(node(f"sys/bus/pci/devices/{name}"))
        for f in pci_files:
            w.read(d + (f,))
        for f in PCI_LINKS:
            w.read_link(d + (f,))

    # numa.rs
    for name in w.read_dir(node("sys/devices/system/node")) or []:
        if re.fullmatch(r"node\d+", name):
            for f in node_files:
                w.read(node(f"sys/devices/system/node/{name}/{f}"))

    # netdev.rs + counters.rs
    for name in w.read_dir(node("sys/class/net"), keep_files=True) or []:
        base = node(f"sys/class/net/{name}")
        for f in NET_FILES:
            w.read(base + (f,))
        for f in NET_LINKS:
            if w.read_link(base + (f,)) is not None:
                w.resolve(base + (f,))
        for sub in NET_COUNTER_DIRS:
            for entry in w.read_dir(base + (sub,)) or []:
                w.read(base + (sub, entry))
        for sub in NET_ECN_DIRS:
            for entry in w.read_dir(base + tuple(sub.split("/"))) or []:
                if entry == "enable":
                    for prio in w.read_dir(base + tuple(sub.split("/")) + ("enable",)) or []:
                        w.read(base + tuple(sub.split("/")) + ("enable", prio))
                else:
                    w.read(base + tuple(sub.split("/")) + (entry,))
        device = w.resolve(base + ("device",))
        if device and device != base + ("device",):
            cc = node(f"sys/kernel/debug/mlx5/{device[-1]}/cc_params")
            for entry in w.read_dir(cc) or []:
                w.read(cc + (entry,))

    # rdma.rs + counters.rs
    for name in w.read_dir(node("sys/class/infiniband"), keep_files=True) or []:
        d = w.resolve(node(f"sys/class/infiniband/{name}"))
        for f in IB_FILES:
            w.read(d + (f,))
        for f in IB_LINKS:
            if w.read_link(d + (f,)) is not None:
                w.resolve(d + (f,))
        w.read_dir(d + ("device", "net"))
        for port in w.read_dir(d + ("ports",)) or []:
            if not port.isdigit():
                continue
            p = d + ("ports", port)
            for f in IB_PORT_FILES:
                w.read(p + (f,))
            for index in w.read_dir(p + ("gids",)) or []:
                w.read(p + ("gids", index))
                for kind in ("types", "ndevs"):
                    w.read(p + ("gid_attrs", kind, index))
            w.read_dir(p + ("gid_attrs", "ndevs"))
            for sub in IB_PORT_COUNTER_DIRS:
                for entry in w.read_dir(p + (sub,)) or []:
                    if entry != "lifespan":
                        w.read(p + (sub, entry))

    # host.rs, counters.rs, gpu
    for f in HOST_FILES:
        w.read(node(f))
    w.read_dir(node("sys/class/iommu"), keep_files=True)
    for group in w.read_dir(node("sys/kernel/iommu_groups")) or []:
        w.read(node(f"sys/kernel/iommu_groups/{group}/type"))
    return w


def acted_on(rel: Node) -> bool:
    """Whether a probe acts on this directory's name when it lists the parent."""
    parent, name = text(rel[:-1]), rel[-1]
    if parent == "sys/devices/system/node":
        return bool(re.fullmatch(r"node\d+", name))
    if parent == "sys/bus/pci/devices":
        return is_pci_address(name)
    if rel[-2:-1] == ("ports",):
        return name.isdigit()
    return parent in ("sys/class/net", "sys/class/infiniband", "sys/class/iommu", "sys/kernel/iommu_groups")


def write_reduced(w: Walk, out: Path) -> List[str]:
    """Copy what the walk touched into `out`. Returns notes (empty directories given a .gitkeep)."""
    notes = []
    out.mkdir(parents=True)
    # The directories links point to, when they exist in the capture, must exist in the copy too.
    for link in list(w.links):
        target = w.cache.get(link)
        if target is None:
            try:
                target = w.resolve(link)
            except RuntimeError:
                continue
        if w.lstat_kind(target) == "dir":
            w.dirs.add(target)
    for d in sorted(w.dirs):
        (out.joinpath(*d)).mkdir(parents=True, exist_ok=True)
    for f in sorted(w.files):
        dest = out.joinpath(*f)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(w.host(f), dest)
        os.chmod(dest, 0o644)
    for link, target in sorted(w.links.items()):
        dest = out.joinpath(*link)
        dest.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(dest):
            continue
        os.symlink(target, dest)
    # Trees where no probe found anything under sys/ (no NUMA, PCI, net): keep an empty sys/ so the
    # tree still reads as a capture (a .gitkeep, which no probe lists).
    if not (out / "sys").exists():
        (out / "sys").mkdir()
        (out / "sys" / ".gitkeep").write_bytes(b"")
        notes.append("nothing the probes read under sys/: sys/ holds only a .gitkeep")
    # git keeps no empty directory. An empty directory whose NAME a probe acts on (a NUMA `nodeN` of
    # a kernel without `cpulist`) gets a .gitkeep, which no probe lists; other empty directories
    # (`node/power`, listed but ignored) are dropped. An empty directory a probe lists would show
    # the .gitkeep as an entry: reported instead (none at the commit documented in the README).
    for dirpath, dirnames, filenames in sorted(os.walk(out, topdown=False)):
        if os.listdir(dirpath):
            continue
        rel = tuple(Path(dirpath).relative_to(out).parts)
        if not rel:
            continue
        if rel in w.listed:
            notes.append(f"empty listed directory {text(rel)} (absent from a git checkout)")
        elif acted_on(rel):
            (Path(dirpath) / ".gitkeep").write_bytes(b"")
            notes.append(f"empty directory {text(rel)} kept with a .gitkeep")
        else:
            os.rmdir(dirpath)
    for dirpath, dirnames, filenames in os.walk(out):
        os.chmod(dirpath, 0o755)
    return notes


# --------------------------------------------------------------------------------------------------
# hwloc's expected output -> locality
# --------------------------------------------------------------------------------------------------

MEMORY_TYPES = ("NUMANode", "MemCache")
IO_TYPES = ("HostBridge", "PCIBridge", "PCI", "PCIDev", "Bridge", "OSDev")
OSDEV_V3 = [(1, "Storage"), (2, "Memory"), (4, "GPU"), (8, "CoProc"), (16, "Network"), (32, "OpenFabrics"), (64, "DMA")]
OSDEV_V2 = {0: "Storage", 1: "GPU", 2: "Network", 3: "OpenFabrics", 4: "DMA", 5: "CoProc", 6: "Memory"}
OSDEV_KEPT = ("Network", "OpenFabrics", "GPU", "CoProc")


@dataclass
class Obj:
    type: str
    logical: Optional[int] = None
    os_index: Optional[int] = None
    subtype: Optional[str] = None
    busid: Optional[str] = None
    pci_id: Optional[str] = None
    pci_class: Optional[str] = None
    name: Optional[str] = None
    osdev_types: List[str] = field(default_factory=list)
    cpuset: Optional[Set[int]] = None  # from XML; computed for console
    nodeset: Optional[Set[int]] = None
    xml_cpuset: Optional[Set[int]] = None
    xml_nodeset: Optional[Set[int]] = None
    parent: Optional["Obj"] = None
    children: List["Obj"] = field(default_factory=list)
    infos: Dict[str, str] = field(default_factory=dict)

    @property
    def is_memory(self) -> bool:
        return self.type in MEMORY_TYPES

    @property
    def is_io(self) -> bool:
        return self.type in IO_TYPES

    @property
    def is_misc(self) -> bool:
        return self.type == "Misc"

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def label(self) -> OrderedDict:
        d = OrderedDict(type=self.type)
        if self.subtype:
            d["subtype"] = self.subtype
        if self.logical is not None:
            d["logical_index"] = self.logical
        if self.os_index is not None:
            d["os_index"] = self.os_index
        return d


CONSOLE_LINE = re.compile(r"^(\s*)([A-Za-z][A-Za-z0-9]*)((?:\[[^\]]*\]|\([^)]*\))*)(?: L#(\d+))?(?: \((.*)\))?(?: \"(.*)\")?\s*$")


def parse_console(text_: str) -> Tuple[Obj, Dict[str, str]]:
    roots: List[Obj] = []
    stack: List[Tuple[int, Obj]] = []
    infos: Dict[str, str] = {}
    # split on \n only: DMI strings can hold a carriage return (8em64t-2s2ca2c-buggynuma)
    for line in text_.split("\n"):
        if re.match(r"^\s*(Special )?depth ", line):
            break
        if not line.strip():
            continue
        m = CONSOLE_LINE.match(line)
        if not m:
            raise ValueError(f"unparsed console line: {line!r}")
        indent, typ, decor, logical, attrs, name = m.groups()
        obj = Obj(type=typ)
        if typ.startswith("Group"):
            obj.type = "Group"
        obj.logical = int(logical) if logical is not None else None
        obj.name = name
        brackets = re.findall(r"\[([^\]]*)\]", decor or "")
        parens = re.findall(r"\(([^)]*)\)", decor or "")
        if brackets:
            obj.osdev_types = brackets[0].split(",")
        if parens:
            obj.subtype = parens[0]
        attrs = attrs or ""
        pm = re.match(r"P#(\d+)", attrs)
        if pm:
            obj.os_index = int(pm.group(1))
        for key in ("busid", "id"):
            km = re.search(rf"(?:^| ){key}=(\S+)", attrs)
            if km:
                setattr(obj, "busid" if key == "busid" else "pci_id", km.group(1))
        cm = re.search(r"(?:^| )class=([0-9a-fA-F]{4})", attrs)
        if cm:
            obj.pci_class = cm.group(1).lower()
        depth = len(indent)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            obj.parent = stack[-1][1]
            obj.parent.children.append(obj)
        else:
            roots.append(obj)
        stack.append((depth, obj))
    for line in text_.split("\n"):
        if line.startswith("Topology infos:"):
            for km in re.finditer(r'(\w+)=("([^"]*)"|\S+)', line[len("Topology infos:"):]):
                infos[km.group(1)] = km.group(3) if km.group(3) is not None else km.group(2)
    if len(roots) != 1:
        raise ValueError(f"{len(roots)} root objects in console output")
    return roots[0], infos


def parse_bitmap(value: Optional[str]) -> Optional[Set[int]]:
    if value is None:
        return None
    v = value.strip()
    if v.startswith("0xf...f"):
        v = v[len("0xf...f"):].lstrip(",")
        if not v:
            return set()
    words = [w for w in v.split(",") if w]
    number = 0
    for w in words:
        number = (number << 32) | int(w, 16)
    out, bit = set(), 0
    while number:
        if number & 1:
            out.add(bit)
        number >>= 1
        bit += 1
    return out


def parse_xml(data: bytes) -> Tuple[Obj, Dict[str, str]]:
    top = ET.fromstring(data)
    version = top.get("version", "2.0")
    infos: Dict[str, str] = {}

    def convert(elem, parent: Optional[Obj]) -> Obj:
        typ = elem.get("type")
        obj = Obj(type=typ, parent=parent)
        if typ == "Bridge":
            obj.type = "HostBridge" if elem.get("bridge_type", "").startswith("0-") else "PCIBridge"
        if typ == "PCIDev":
            obj.type = "PCI"
        osi = elem.get("os_index")
        if osi is not None and typ not in IO_TYPES:
            obj.os_index = int(osi)
        obj.subtype = elem.get("subtype")
        obj.busid = elem.get("pci_busid")
        pci_type = elem.get("pci_type")
        if pci_type:
            pm = re.match(r"([0-9a-fA-F]{4}) \[([0-9a-fA-F]{4}:[0-9a-fA-F]{4})\]", pci_type)
            if pm:
                obj.pci_class, obj.pci_id = pm.group(1).lower(), pm.group(2).lower()
        obj.name = elem.get("name")
        if typ == "OSDev":
            t = int(elem.get("osdev_type", "-1"))
            if version.startswith("2"):
                obj.osdev_types = [OSDEV_V2.get(t, str(t))]
            else:
                obj.osdev_types = [n for bit, n in OSDEV_V3 if t & bit] or [str(t)]
        obj.xml_cpuset = parse_bitmap(elem.get("cpuset"))
        obj.xml_nodeset = parse_bitmap(elem.get("nodeset"))
        for child in elem:
            if child.tag == "object":
                obj.children.append(convert(child, obj))
            elif child.tag == "info" and parent is None:
                infos[child.get("name")] = child.get("value")
        return obj

    objects = [e for e in top if e.tag == "object"]
    if len(objects) != 1:
        raise ValueError(f"{len(objects)} root objects in XML")
    root = convert(objects[0], None)
    # logical indexes, per type, in depth-first order (how lstopo numbers them)
    counters: Counter = Counter()
    for o in root.walk():
        key = "Bridge" if o.type in ("HostBridge", "PCIBridge") else o.type
        o.logical = counters[key]
        counters[key] += 1
    return root, infos


def compute_sets(root: Obj) -> None:
    """cpusets from PUs below (console has no cpusets), nodesets as hwloc's propagate_nodeset does."""

    def cpus(o: Obj) -> Set[int]:
        s: Set[int] = set()
        if o.type == "PU" and o.os_index is not None:
            s.add(o.os_index)
        for c in o.children:
            if not c.is_memory and not c.is_io and not c.is_misc:
                s |= cpus(c)
        o.cpuset = s
        return s

    cpus(root)

    def memory_nodes(o: Obj) -> Set[int]:
        s = set()
        for c in o.children:
            if c.is_memory:
                if c.type == "NUMANode" and c.os_index is not None:
                    s.add(c.os_index)
                s |= memory_nodes_below(c)
        return s

    def memory_nodes_below(m: Obj) -> Set[int]:
        s = set()
        for c in m.children:
            if c.is_memory:
                if c.type == "NUMANode" and c.os_index is not None:
                    s.add(c.os_index)
                s |= memory_nodes_below(c)
        return s

    def propagate(o: Obj, inherited: Set[int]) -> Set[int]:
        ns = set(inherited) | memory_nodes(o)
        below = set()
        for c in o.children:
            if not c.is_memory and not c.is_io and not c.is_misc:
                below |= propagate(c, ns)
        o.nodeset = ns | below
        return o.nodeset

    propagate(root, set())
    # memory objects: the locality (cpuset) of the normal object they hang under
    for o in root.walk():
        if o.is_memory:
            p = o.parent
            while p is not None and (p.is_memory or p.is_io):
                p = p.parent
            o.cpuset = set(p.cpuset) if p is not None else set()


def cpulist(cpus: Optional[Set[int]]) -> str:
    if not cpus:
        return ""
    xs = sorted(cpus)
    out, start, prev = [], xs[0], xs[0]
    for x in xs[1:] + [None]:
        if x is not None and x == prev + 1:
            prev = x
            continue
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
        if x is not None:
            start = prev = x
    return ",".join(out)


def busid_key(busid: str):
    m = PCI_ADDRESS.match(busid)
    if not m:
        return (1 << 40, busid)
    return tuple(int(g, 16) for g in m.groups())


def attach_point(o: Obj) -> Obj:
    p = o.parent
    while p is not None and (p.is_io or p.is_memory or p.is_misc):
        p = p.parent
    return p


def locality(o: Obj, use_xml: bool) -> OrderedDict:
    a = attach_point(o)
    cs = a.xml_cpuset if use_xml and a.xml_cpuset is not None else a.cpuset
    ns = a.xml_nodeset if use_xml and a.xml_nodeset is not None else a.nodeset
    return OrderedDict(attached_to=a.label(), cpulist=cpulist(cs), numa_nodes=sorted(ns or []))


def expected_from(root: Obj, use_xml: bool) -> OrderedDict:
    compute_sets(root)
    out = OrderedDict()
    numa = [o for o in root.walk() if o.type == "NUMANode"]
    pus = [o for o in root.walk() if o.type == "PU"]
    out["numa_node_count"] = len(numa)
    out["numa_nodes"] = [
        OrderedDict(
            os_index=n.os_index,
            subtype=n.subtype,
            cpulist=cpulist(n.xml_cpuset if use_xml and n.xml_cpuset is not None else n.cpuset),
            attached_to=attach_point(n).label(),
        )
        for n in sorted(numa, key=lambda n: n.os_index if n.os_index is not None else -1)
    ]
    for n in out["numa_nodes"]:
        if n["subtype"] is None:
            del n["subtype"]
    out["pu_count"] = len(pus)
    out["pus"] = cpulist({p.os_index for p in pus if p.os_index is not None})
    pci = []
    for o in root.walk():
        if o.type in ("PCI", "PCIBridge") and o.busid:
            d = OrderedDict(busid=o.busid, kind="bridge" if o.type == "PCIBridge" else "device")
            d["class"] = o.pci_class
            d["id"] = o.pci_id
            d.update(locality(o, use_xml))
            pci.append(d)
    out["pci_devices"] = sorted(pci, key=lambda d: busid_key(d["busid"]))
    osdevs = []
    for o in root.walk():
        if o.type == "OSDev" and any(t in OSDEV_KEPT for t in o.osdev_types):
            d = OrderedDict(name=o.name, types=o.osdev_types)
            if o.subtype:
                d["subtype"] = o.subtype
            parent_pci = o.parent if o.parent is not None and o.parent.type in ("PCI", "PCIBridge") else None
            d["pci_busid"] = parent_pci.busid if parent_pci else None
            d.update(locality(o, use_xml))
            osdevs.append(d)
    out["os_devices"] = sorted(osdevs, key=lambda d: d["name"] or "")
    return out


def check_xml_sets(root: Obj) -> List[str]:
    """Our console rules (cpuset from PUs, hwloc's nodeset propagation) against the XML's own sets."""
    compute_sets(root)
    bad = []
    for o in root.walk():
        if o.is_io or o.is_misc or o.is_memory:
            continue
        if o.xml_cpuset is not None and o.xml_cpuset != o.cpuset:
            bad.append(f"cpuset of {o.type} L#{o.logical}: xml {cpulist(o.xml_cpuset)} ours {cpulist(o.cpuset)}")
        if o.xml_nodeset is not None and o.xml_nodeset != o.nodeset:
            bad.append(f"nodeset of {o.type} L#{o.logical}: xml {sorted(o.xml_nodeset)} ours {sorted(o.nodeset)}")
    return bad


def parse_cpulist_text(value: str) -> Set[int]:
    out: Set[int] = set()
    for part in value.replace("\0", "").strip().split(","):
        if not part:
            continue
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def parse_mask_text(value: str) -> Set[int]:
    """A kernel cpumask ("00000000,000000ff": 32-bit words, most significant first)."""
    number = 0
    for word in value.replace("\0", "").strip().split(","):
        number = (number << 32) | int(word or "0", 16)
    return {bit for bit in range(number.bit_length()) if number >> bit & 1}


def sysfs_agreement(capture: Path, doc: dict) -> List[str]:
    """Compare hwloc's locality of each PCI device with what the capture's sysfs says: hwloc reads
    `local_cpus` (a mask); the probes read `local_cpulist` and `numa_node`."""
    notes: List[str] = []
    devices = doc.get("pci_devices") or []
    if not devices:
        return notes
    w = Walk(capture)
    same, differ, cpus_vs_list, no_list, numa_differ = [], [], [], [], []
    for d in devices:
        real = w.resolve(node(f"sys/bus/pci/devices/{d['busid']}"))
        base = w.host(real)
        hw = parse_cpulist_text(d["cpulist"])
        lst = base / "local_cpulist"
        mask = base / "local_cpus"
        lst_set = parse_cpulist_text(lst.read_text()) if lst.is_file() and lst.read_text().strip() else None
        mask_set = parse_mask_text(mask.read_text()) if mask.is_file() and mask.read_text().strip() else None
        if lst_set is None:
            no_list.append(d["busid"])
        elif lst_set == hw:
            same.append(d["busid"])
        else:
            differ.append(f"{d['busid']} local_cpulist={cpulist(lst_set)} hwloc={d['cpulist']}")
        if lst_set is not None and mask_set is not None and lst_set != mask_set:
            cpus_vs_list.append(f"{d['busid']} local_cpus={mask.read_text().strip()} ({cpulist(mask_set)}) local_cpulist={cpulist(lst_set)}")
        nn = base / "numa_node"
        if nn.is_file() and nn.read_text().strip() not in ("", "-1"):
            if [int(nn.read_text().strip())] != d["numa_nodes"]:
                numa_differ.append(f"{d['busid']} numa_node={nn.read_text().strip()} hwloc={d['numa_nodes']}")
    n = len(devices)
    notes.append(f"hwloc's cpulist equals sysfs local_cpulist for {len(same)}/{n} of its PCI devices")
    if differ:
        notes.append(f"hwloc's cpulist differs from local_cpulist for {len(differ)}/{n}: " + "; ".join(differ[:3]) + (" ..." if len(differ) > 3 else ""))
    if no_list:
        notes.append(f"no local_cpulist for {len(no_list)}/{n} (hwloc read local_cpus): e.g. {no_list[0]}")
    if cpus_vs_list:
        notes.append(f"local_cpus and local_cpulist DISAGREE for {len(cpus_vs_list)} functions (hand-edited capture; hwloc follows local_cpus): " + "; ".join(cpus_vs_list[:3]) + (" ..." if len(cpus_vs_list) > 3 else ""))
    if numa_differ:
        notes.append(f"numa_node differs from hwloc's numa_nodes for {len(numa_differ)}/{n}: " + "; ".join(numa_differ[:3]) + (" ..." if len(numa_differ) > 3 else ""))
    return notes


def io_filter(test: HwlocTest) -> str:
    return "all" if "--whole-io" in test.options.split() else "important (lstopo default: bridges and PCI devices without an OS device or of no interest hidden)"


# --------------------------------------------------------------------------------------------------
# Facts about a capture
# --------------------------------------------------------------------------------------------------


def kernel_of(tree: Path, infos: Dict[str, str]) -> Tuple[Optional[str], Optional[str]]:
    nofile = tree / "proc" / "hwloc-nofile-info"
    if nofile.is_file() and not nofile.is_symlink():
        for line in nofile.read_text(errors="replace").splitlines():
            if line.startswith("OSRelease:"):
                release = line.split(":", 1)[1].strip()
                if release == "dummy":  # anonymised by whoever contributed the capture
                    return None, "proc/hwloc-nofile-info says OSRelease: dummy"
                return release, "proc/hwloc-nofile-info"
    version = tree / "proc" / "version"
    if version.is_file() and not version.is_symlink():
        m = re.match(r"Linux version (\S+)", version.read_text(errors="replace"))
        if m:
            return m.group(1), "proc/version"
    if infos.get("OSRelease"):
        return infos["OSRelease"], "hwloc expected output (OSRelease)"
    return None, None


def architecture_of(tree: Path, infos: Dict[str, str]) -> Optional[str]:
    nofile = tree / "proc" / "hwloc-nofile-info"
    if nofile.is_file():
        for line in nofile.read_text(errors="replace").splitlines():
            if line.startswith("Architecture:"):
                return line.split(":", 1)[1].strip()
    return infos.get("Architecture")


def tree_size(path: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            p = os.path.join(dirpath, f)
            st = os.lstat(p)
            total += st.st_size  # a link counts its target string's length
    return total


# --------------------------------------------------------------------------------------------------
# Oddities a checker may trip on (scanned in the reduced trees)
# --------------------------------------------------------------------------------------------------

ODD_VALUES = ("N/A", "n/a", "(null)", "Unknown", "-1")


def scan_oddities(tree: Path, expected: dict) -> List[str]:
    odd: List[str] = []

    def rel(p: Path) -> str:
        return str(p.relative_to(tree))

    def lex_target(link: Path) -> Optional[Path]:
        target = os.readlink(link)
        base = PurePosixPath(str(link.parent.relative_to(tree)))
        parts = normalize((str(base) + "/" + target).split("/")) if not target.startswith("/") else node(target)
        return tree.joinpath(*parts) if parts else tree

    empties: Dict[str, List[str]] = {}
    values: Dict[str, List[str]] = {}
    for dirpath, dirnames, files in os.walk(tree):
        for f in files:
            p = Path(dirpath) / f
            if p.is_symlink() or f in (".gitkeep", "hwloc-expected.json"):
                continue
            data = p.read_bytes()
            if f == "config":
                continue
            if not data:
                empties.setdefault(f if "gids" not in rel(p) else "gids/*", []).append(rel(p))
                continue
            if b"\0" in data:
                values.setdefault(f"{f} holds a NUL byte", []).append(f"{rel(p)} = {data!r}")
            v = data.decode(errors="replace").strip()
            if v in ODD_VALUES:
                values.setdefault(f"{f} = {v!r}", []).append(rel(p))
    for attr, paths in sorted(empties.items()):
        odd.append(f"empty `{attr}` ({len(paths)}): e.g. {paths[0]}")
    for what, paths in sorted(values.items()):
        odd.append(f"`{what}` ({len(paths)}): e.g. {paths[0]}")

    dangling = []
    for dirpath, dirnames, files in os.walk(tree):
        for f in dirnames + files:
            p = Path(dirpath) / f
            if p.is_symlink() and not p.name == "driver":
                t = lex_target(p)
                if not os.path.lexists(t):
                    dangling.append(f"{rel(p)} -> {os.readlink(p)}")
    slash = []
    for dirpath, dirnames, files in os.walk(tree):
        for f in dirnames + files:
            p = Path(dirpath) / f
            if p.is_symlink() and os.readlink(p).endswith("/"):
                slash.append(f"{rel(p)} -> {os.readlink(p)}")
    if slash:
        odd.append(f"link targets ending in '/' ({len(slash)}): {slash[0]}")
    if dangling:
        odd.append(f"dangling links ({len(dangling)}; target not in the capture): " + "; ".join(sorted(dangling)[:6])
                   + (" ..." if len(dangling) > 6 else ""))
    drivers = [Path(d) / "driver" for d, dn, fl in os.walk(tree) if "driver" in fl or "driver" in dn]
    if drivers and not (tree / "sys/bus/pci/drivers").exists():
        odd.append(f"`driver` links ({len(drivers)}) point to sys/bus/pci/drivers/*, which the capture lacks (read_link only needs the name)")

    pci_dir = tree / "sys/bus/pci/devices"
    if pci_dir.is_dir():
        names = sorted(os.listdir(pci_dir))
        real_dirs = [n for n in names if not (pci_dir / n).is_symlink()]
        if real_dirs:
            odd.append(f"sys/bus/pci/devices entries that are directories, not links ({len(real_dirs)}): {', '.join(real_dirs[:4])}")
        for attr in ("vendor", "device", "class", "numa_node", "local_cpulist", "config", "current_link_speed", "max_link_speed"):
            missing = [n for n in names if not (pci_dir / n / attr).exists()]
            if missing and len(missing) == len(names):
                odd.append(f"no PCI function has `{attr}`")
            elif missing:
                odd.append(f"`{attr}` missing for {len(missing)}/{len(names)} PCI functions, e.g. {missing[0]}")
        numa = Counter()
        sizes = Counter()
        for n in names:
            f = pci_dir / n / "numa_node"
            if f.is_file():
                numa[f.read_text().strip()] += 1
            c = pci_dir / n / "config"
            if c.is_file():
                sizes[c.stat().st_size] += 1
        if numa.get("-1"):
            odd.append(f"numa_node = -1 for {numa['-1']}/{len(names)} PCI functions")
        if sizes:
            odd.append("config sizes: " + ", ".join(f"{s} bytes x{k}" for s, k in sorted(sizes.items())))
        weird_domains = [n for n in names if len(n.split(":")[0]) != 4]
        if weird_domains:
            odd.append(f"PCI domains wider than 4 hex digits: {', '.join(weird_domains)}")

    node_dir = tree / "sys/devices/system/node"
    if node_dir.is_dir():
        nodes = [n for n in sorted(os.listdir(node_dir)) if re.fullmatch(r"node\d+", n)]
        nocpulist = [n for n in nodes if not (node_dir / n / "cpulist").exists()]
        if nocpulist:
            odd.append(f"NUMA node dirs without `cpulist` ({len(nocpulist)}/{len(nodes)}; only `cpumap`, as in older kernels and the hand-made trees): read_numa_nodes fails on the first")
        empty_cpulist = [n for n in nodes if (node_dir / n / "cpulist").is_file() and not (node_dir / n / "cpulist").read_text().strip()]
        if empty_cpulist:
            odd.append(f"CPU-less NUMA nodes (empty cpulist): {', '.join(empty_cpulist)}")
        lists = Counter((node_dir / n / "cpulist").read_text().strip() for n in nodes if (node_dir / n / "cpulist").is_file())
        dup = [l for l, k in lists.items() if k > 1 and l]
        if dup:
            odd.append(f"several NUMA nodes claim the same CPUs ({', '.join(dup)})")
        if expected and expected.get("numa_node_count") is not None and len(nodes) != expected["numa_node_count"]:
            odd.append(f"sysfs has {len(nodes)} NUMA node dirs, hwloc's expected output {expected['numa_node_count']}")
    else:
        odd.append("no sys/devices/system/node (non-NUMA kernel or not captured)")

    net = tree / "sys/class/net"
    if net.is_dir():
        for n in sorted(os.listdir(net)):
            p = net / n
            if not p.is_symlink():
                odd.append(f"sys/class/net/{n} is not a link (a file such as bonding_masters is listed as an interface)")
    ib = tree / "sys/class/infiniband"
    if ib.is_dir():
        for n in sorted(os.listdir(ib)):
            d = ib / n
            if not d.exists():
                odd.append(f"sys/class/infiniband/{n} dangles: rdma.rs read_dir(ports) fails for it")
            elif not (d / "fw_ver").exists():
                odd.append(f"sys/class/infiniband/{n} has no fw_ver")
            if d.exists() and (d / "ports").is_dir():
                for port in sorted(os.listdir(d / "ports")):
                    if not (d / "ports" / port / "gid_attrs").exists():
                        odd.append(f"sys/class/infiniband/{n}/ports/{port} has no gid_attrs (kernel before 4.x)")
    # host.rs: proc/sys/kernel/*, proc/self/{limits,mountinfo}, proc/modules, dev/kmsg, the IOMMU dirs
    # are in no hwloc capture (said once in the README); what differs between trees:
    mounts = tree / "proc/mounts"
    if mounts.is_file():
        if not any(len(l.split()) > 1 and l.split()[1] == "/dev/shm" for l in mounts.read_text(errors="replace").splitlines()):
            odd.append("proc/mounts has no /dev/shm line (the shared-memory probe reads: not mounted)")
    else:
        odd.append("no proc/mounts (nor mountinfo): shared-memory reading NotInCapture")
    if not (tree / "proc/meminfo").is_file():
        odd.append("no proc/meminfo: huge-page reading NotInCapture")
    # node cpulists against hwloc's PUs (hwloc drops CPUs a cgroup/cpuset forbids, and some captures
    # had CPUs removed from sys/devices/system/cpu to shrink them)
    if node_dir.is_dir() and expected and expected.get("pus") is not None:
        cpus: Set[int] = set()
        for n in os.listdir(node_dir):
            f = node_dir / n / "cpulist"
            if re.fullmatch(r"node\d+", n) and f.is_file():
                cpus |= parse_cpulist_text(f.read_text())
        pus = parse_cpulist_text(expected["pus"])
        if cpus and cpus != pus:
            odd.append(f"node cpulists cover CPUs {cpulist(cpus)}, hwloc's PUs are {expected['pus']}")
    return odd


# --------------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------------


@dataclass
class Built:
    name: str
    tarball: str
    top: str
    test: Optional[HwlocTest]
    other_tests: List[HwlocTest]
    tmp: Path  # reduced tree (staging)
    size: int
    counts: Dict[str, int]
    expected: dict
    odd: List[str]
    notes: List[str]
    kernel: Optional[str]
    added: Optional[str]
    arch: Optional[str]


def extract(data: bytes, dest: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        if hasattr(tarfile, "tar_filter"):
            tar.extractall(dest, filter="tar")
        else:  # Python < 3.11.4 / 3.12: hwloc's tarballs hold only relative paths
            tar.extractall(dest)


def tree_root(extracted: Path) -> Tuple[Optional[Path], str]:
    tops = sorted(p for p in extracted.iterdir())
    if len(tops) != 1 or not tops[0].is_dir():
        return None, "tarball does not hold exactly one directory"
    top = tops[0]
    if (top / "fsroot").is_dir():  # tests/hwloc/x86+linux: fsroot/ + cpuid/
        top = top / "fsroot"
    if not (top / "sys").is_dir():
        return None, "no sys/ in the capture"
    return top, ""


def count_devices(tree: Path) -> Dict[str, int]:
    def n(p):
        d = tree / p
        return len(os.listdir(d)) if d.is_dir() else 0

    node_dir = tree / "sys/devices/system/node"
    nodes = len([x for x in os.listdir(node_dir) if re.fullmatch(r"node\d+", x)]) if node_dir.is_dir() else 0
    return {"pci": n("sys/bus/pci/devices"), "net": n("sys/class/net"), "ib": n("sys/class/infiniband"), "numa": nodes}


def build(args) -> int:
    mirror = Mirror(args.mirror, args.rev)
    out: Path = args.out
    paths = mirror.ls(*TEST_DIRS)
    tarballs = [p for p in paths if p.endswith(TARBALL_SUFFIXES)]
    tests: Dict[str, List[HwlocTest]] = {}
    for p in paths:
        if p.endswith(".test"):
            t = parse_test(p, mirror.show(p).decode(errors="replace"))
            if t:
                src = str(PurePosixPath(p).parent / t.source)
                tests.setdefault(src, []).append(t)

    built: List[Built] = []
    left_out: List[Tuple[str, str]] = []
    staging = Path(tempfile.mkdtemp(prefix="hwloc-fixtures-"))
    try:
        for tb in sorted(tarballs):
            stem = PurePosixPath(tb).name
            for suf in TARBALL_SUFFIXES:
                if stem.endswith(suf):
                    stem = stem[: -len(suf)]
            if stem.endswith(".fsroot"):
                stem = stem[: -len(".fsroot")]
            if args.only and stem not in args.only:
                continue
            ex = staging / "x" / stem
            ex.mkdir(parents=True)
            extract(mirror.show(tb), ex)
            root, why = tree_root(ex)
            if root is None:
                left_out.append((tb, why))
                continue
            tlist = sorted(tests.get(tb, []), key=lambda t: t.name)
            test = primary_test(stem, tlist)
            walk = probe_walk(root, args.keep_fallbacks)
            reduced = staging / "r" / stem
            notes = write_reduced(walk, reduced)
            notes += [f"left out {p}: {why}" for p, why in walk.skipped]
            expected_doc, infos = expected_for(mirror, test, tlist, tb, root, stem)
            kernel, kernel_src = kernel_of(root, infos)
            notes_doc = expected_doc.pop("notes", [])
            variants = expected_doc.pop("variants", None)
            expected_doc["kernel"] = kernel
            expected_doc["kernel_source"] = kernel_src
            expected_doc["architecture"] = architecture_of(root, infos)
            if variants:
                expected_doc["variants"] = variants
            expected_doc["notes"] = notes_doc + sysfs_agreement(root, expected_doc)
            exp_path = reduced / "hwloc-expected.json"
            exp_path.write_text(json.dumps(expected_doc, indent=1, ensure_ascii=False) + "\n")
            counts = count_devices(reduced)
            built.append(
                Built(
                    name=stem, tarball=tb, top=str(root.relative_to(ex)), test=test,
                    other_tests=[t for t in tlist if t is not test], tmp=reduced, size=tree_size(reduced),
                    counts=counts, expected=expected_doc, odd=scan_oddities(reduced, expected_doc), notes=notes,
                    kernel=kernel, added=mirror.added(tb), arch=expected_doc["architecture"],
                )
            )
            shutil.rmtree(ex)
            print(f"{stem}: {built[-1].size} bytes, pci={counts['pci']} net={counts['net']} ib={counts['ib']} numa={counts['numa']}", file=sys.stderr)

        # Budget: if over, drop trees that have no device (PCI/net/IB), largest first.
        total = sum(b.size for b in built)
        if total > args.budget:
            for b in sorted(built, key=lambda b: -b.size):
                if total <= args.budget:
                    break
                if b.counts["pci"] or b.counts["net"] or b.counts["ib"]:
                    continue
                built.remove(b)
                left_out.append((b.tarball, f"size budget: {b.size} bytes and no PCI/network/InfiniBand device"))
                total -= b.size

        out.mkdir(parents=True, exist_ok=True)
        for b in built:
            final = out / b.name
            tmp = out / f".{b.name}.building"
            if tmp.exists():
                shutil.rmtree(tmp)
            shutil.copytree(b.tmp, tmp, symlinks=True)
            if final.exists() or final.is_symlink():
                shutil.rmtree(final)
            tmp.rename(final)
        if not args.only:
            # trees of an earlier run whose tarball is gone
            for d in sorted(out.iterdir()):
                if d.is_dir() and not d.name.startswith(".") and d.name not in {b.name for b in built}:
                    shutil.rmtree(d)
            (out / "COPYING").write_bytes(mirror.show("COPYING"))
            (out / "README.md").write_text(readme(mirror, built, left_out, args))
        print(f"{len(built)} trees, {sum(b.size for b in built)} bytes; left out: {len(left_out)}", file=sys.stderr)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return check(out) if not args.only else 0


def expected_for(mirror: Mirror, test: Optional[HwlocTest], tlist: List[HwlocTest], tb: str, root: Path, stem: str):
    doc = OrderedDict(format=FORMAT, tree=stem)
    src = OrderedDict(repository=HWLOC_URL, commit=mirror.commit, tarball=tb)
    doc["hwloc"] = src
    infos: Dict[str, str] = {}
    if test is None:
        doc["notes"] = ["no hwloc test names this tarball: no expected output"]
        return doc, infos
    base = PurePosixPath(test.path).parent
    target = str(base / test.target)
    src["test"] = test.path
    src["expected_output"] = target
    src["lstopo_options"] = test.options or "-v -"
    src["env"] = test.env
    src["io_filter"] = io_filter(test)
    if test.comment:
        src["description"] = " ".join(test.comment)
    data = mirror.show(target)
    use_xml = target.endswith(".xml")
    obj, infos = parse_xml(data) if use_xml else parse_console(data.decode())
    notes = []
    if use_xml:
        bad = check_xml_sets(obj)
        if bad:
            notes.append("hwloc's XML sets differ from ones recomputed from its tree (XML sets used): " + "; ".join(bad[:3]))
    doc.update(expected_from(obj, use_xml))
    if any("HWLOC_PCI_LOCALITY" in e for e in test.env):
        notes.append("PCI locality in this expected output is FORCED by HWLOC_PCI_LOCALITY (see hwloc.env), not derived from sysfs")
    if any("HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES" in e for e in test.env):
        notes.append("GPU NUMA nodes kept by HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES")
    variants = []
    for t in tlist:
        if t is test:
            continue
        tgt = str(PurePosixPath(t.path).parent / t.target)
        v = OrderedDict(test=t.path, expected_output=tgt, lstopo_options=t.options or "-v -", env=t.env)
        try:
            d = mirror.show(tgt)
            vo, _ = parse_xml(d) if tgt.endswith(".xml") else parse_console(d.decode())
            e = expected_from(vo, tgt.endswith(".xml"))
            v["numa_node_count"] = e["numa_node_count"]
            v["pu_count"] = e["pu_count"]
        except Exception as error:  # a variant we cannot parse is only informative
            v["error"] = str(error)
        variants.append(v)
    if variants:
        doc["variants"] = variants
    doc["notes"] = notes
    return doc, infos


def readme(mirror: Mirror, built: List[Built], left_out: List[Tuple[str, str]], args) -> str:
    L = []
    w = L.append
    total = sum(b.size for b in built)
    w("# hwloc's Linux test captures, reduced to what fabricdoctor reads")
    w("")
    w("Each directory here is a node tree (`sys/`, `proc/`, sometimes `dev/`) cut out of one of the Linux")
    w("test captures of [hwloc](https://github.com/open-mpi/hwloc): the tarballs under `tests/hwloc/linux/` and")
    w("`tests/hwloc/x86+linux/` that `hwloc-gather-topology` took on real machines (and a few QEMU or")
    w("hand-edited ones, named `fake*`) over some fifteen years of kernels. `fabricdoctor check --root DIR` and")
    w("`fabricdoctor topo --root DIR` read them like any capture.")
    w("")
    w(f"- Source: hwloc repository {HWLOC_URL}, commit `{mirror.commit}`.")
    w("- License: the trees and the expected outputs they are compared with are hwloc's test data, under hwloc's")
    w("  BSD-3-Clause license; its `COPYING` (copyright notices and license text) is copied next to this file.")
    w("- Nothing here is edited by hand: `scripts/hwloc-fixtures.py` writes every file, this README included.")
    w("- A tree is named after its tarball (the `.test`/`.console` names), not after the directory inside")
    w("  it, which sometimes differs (both are in the table below).")
    w("")
    w("## Regenerate")
    w("")
    w("```")
    w("# a bare git mirror of https://github.com/open-mpi/hwloc (git clone --mirror ...)")
    w(f"python3 scripts/hwloc-fixtures.py --mirror /work/.mirror/open-mpi+hwloc/repo --rev {mirror.commit[:12]}")
    w("python3 scripts/hwloc-fixtures.py --check        # the sanity checks alone")
    w("```")
    w("")
    w("Python 3 standard library and `git` only. The script extracts each tarball in a temporary directory,")
    w("walks it the way the probes walk a node (the same link resolution as `probes/src/root.rs`), and copies")
    w("what that walk touched. `--keep-fallbacks` also keeps `nodeN/cpumap` and PCI `local_cpus`, the files")
    w("hwloc itself reads where older kernels lack `cpulist`/`local_cpulist`.")
    w("")
    w("## What is kept")
    w("")
    w("Only the files the probes read, the links they cross or list, and the directories they list:")
    w("")
    for row in probe_file_list():
        w(f"- `{row}`")
    w("")
    w("Rules:")
    w("")
    w("- Links stay links, with the target spelled as in the capture (`sys/bus/pci/devices/0000:00:03.0 ->")
    w("  ../../../devices/pci0000:00/0000:00:03.0`, `sys/class/net/eth0 -> ../../devices/.../net/eth0`). A link")
    w("  whose target the capture never held (`lo -> ../../devices/virtual/net/lo`, `driver ->")
    w("  .../bus/pci/drivers/igb`) is kept dangling, as the probes see it in the capture.")
    w("- Empty files stay empty: hwloc-gather-topology stores a read that failed (EINVAL: `speed` of a link")
    w("  that is down) as an empty file.")
    w(f"- Files over {MAX_FILE_BYTES} bytes, and binary `config` files over {MAX_CONFIG_BYTES} bytes, are left out (none")
    w("  was, at this commit: captures were taken without root, so every `config` holds the 64 bytes a")
    w("  non-root reader gets).")
    w("- A directory left empty gets a `.gitkeep` where a probe acts on its name (NUMA `nodeN/` dirs of")
    w("  kernels that had no `cpulist`), so that a git checkout still has it; a tree where no probe found")
    w("  anything under `sys/` keeps a `sys/.gitkeep`. No probe lists a directory holding a `.gitkeep`.")
    w("- Files no probe reads (hwloc's `proc/cpuinfo`, `sys/devices/system/cpu`, DMI, block devices, ...)")
    w("  are not kept. No hwloc capture holds `proc/sys/kernel/{hostname,osrelease}`, `proc/self/limits`,")
    w("  `proc/self/mountinfo`, `proc/modules`, `proc/uptime`, `dev/kmsg`, `sys/class/iommu` or")
    w("  `sys/kernel/iommu_groups`: those readings are NotInCapture on every tree.")
    w("")
    w("## hwloc-expected.json")
    w("")
    w("Next to each tree, what hwloc's expected output for that capture (the `target` of the `.test` named")
    w("after the tarball: `*.console` from `lstopo -v`, or `*.xml`) says about device locality:")
    w("")
    w("```")
    w("{")
    w(f'  "format": "{FORMAT}",')
    w('  "tree": "32em64t-2n8c+dax+nvme+mic+dimms",')
    w('  "hwloc": { "repository", "commit", "tarball", "test", "expected_output",')
    w('             "lstopo_options", "env": [lines of the .test], "io_filter", "description" },')
    w('  "numa_node_count": 2,               // NUMANode objects in hwloc\'s output')
    w('  "numa_nodes": [ { "os_index": 0, "cpulist": "0-7", "attached_to": {...} } ],')
    w('  "pu_count": 16, "pus": "0-15",       // PU objects (os indexes) in hwloc\'s output')
    w('  "pci_devices": [ { "busid": "0000:82:00.0", "kind": "device" | "bridge", "class": "0280",')
    w('                     "id": "15b3:1003", "attached_to": {"type": "Package", "logical_index": 1,')
    w('                     "os_index": 1}, "cpulist": "8-15", "numa_nodes": [1] } ],')
    w('  "os_devices": [ { "name": "ib0", "types": ["Network"], "pci_busid": "0000:82:00.0",')
    w('                    "attached_to": {...}, "cpulist": "8-15", "numa_nodes": [1] } ],')
    w('  "kernel": "…" | null, "kernel_source": "proc/hwloc-nofile-info" | "proc/version" | …,')
    w('  "architecture": "x86_64" | null,')
    w('  "variants": [ { "test", "expected_output", "lstopo_options", "env", "numa_node_count", "pu_count" } ],')
    w('  "notes": [ "…" ]')
    w("}")
    w("```")
    w("")
    w("- `attached_to` is the first non-I/O ancestor of the device in hwloc's tree (the object its host bridge")
    w("  hangs from: a Package, a Group, or the Machine when hwloc found no locality). `cpulist` is that")
    w("  object's cpuset, `numa_nodes` its nodeset: the NUMA nodes attached to it, to its ancestors and below it,")
    w("  as hwloc's `propagate_nodeset()` computes them. For `.xml` outputs both come from the XML's own")
    w("  `cpuset`/`nodeset`; for `.console` outputs they are recomputed from the printed tree (PUs below the")
    w("  object; the rule above). That recomputation gives exactly the XML's own sets on every XML output")
    w("  used here (the script compares them and says so in `notes` if they ever differ).")
    w("- `os_devices` lists hwloc OS devices of types Network, OpenFabrics, GPU and CoProc only (not block,")
    w("  DMA or DAX devices, whose sysfs the probes do not read).")
    w("- `io_filter`: console outputs use lstopo's default filter (only \"important\" PCI devices and bridges")
    w("  are shown), so `pci_devices` is a subset of `sys/bus/pci/devices`; `--whole-io` outputs list every")
    w("  function.")
    w("- `numa_node_count`, `pu_count` and `pus` are hwloc's view, which can differ from the `nodeN`")
    w("  directories and their `cpulist`s: hwloc drops what the capture's cgroup/cpuset forbids (the")
    w("  `*-cpusets`, `*-cgroup*` and `4fake-4gr1nu1pu` trees; the probes do not read cgroups), merges nodes")
    w("  with identical CPUs (`8em64t-2s2ca2c-buggynuma`), hides CPU-less nodes it cannot place")
    w("  (`fakememinitiators-*`) and NVIDIA GPU memory nodes unless `HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES=1`")
    w("  (`nvidiagpunumanodes`; see its `variants`), and invents one node on kernels without")
    w("  `sys/devices/system/node`.")
    w("- Two trees' PCI localities are forced by `HWLOC_PCI_LOCALITY` in their `.test` (`hwloc.env`): there")
    w("  hwloc's answer is not derived from sysfs (`notes` says so).")
    w("- hwloc places a device by its `local_cpus` mask, never by `numa_node`; the probes read")
    w("  `numa_node` and `local_cpulist`. `notes` compares hwloc's `cpulist` with each device's")
    w("  `local_cpulist` and flags hand-edited captures where `local_cpus` and `local_cpulist` disagree.")
    w("")
    w(f"## Trees ({len(built)}, {total} bytes)")
    w("")
    w("| tree | hwloc tarball (top dir) | kernel | arch | in hwloc since | PCI | net | IB | NUMA dirs / hwloc | PUs | bytes |")
    w("|---|---|---|---|---|---|---|---|---|---|---|")
    for b in built:
        exp = b.expected
        w(
            f"| `{b.name}` | `{b.tarball.split('tests/hwloc/')[1]}` (`{b.top}`) | {b.kernel or '?'} | {b.arch or '?'} | "
            f"{(b.added or '?').split(' ')[0]} | {b.counts['pci']} | {b.counts['net']} | {b.counts['ib']} | "
            f"{b.counts['numa']} / {exp.get('numa_node_count', '?')} | {exp.get('pu_count', '?')} | {b.size} |"
        )
    w("")
    w("PCI, net, IB: entries of `sys/bus/pci/devices`, `sys/class/net`, `sys/class/infiniband` (links, some")
    w("dangling). \"in hwloc since\": oldest commit adding the tarball (following renames, and under its name as")
    w("a .tar.gz before 2010); the capture is at")
    w("least that old. Kernel: `OSRelease` of `proc/hwloc-nofile-info` or `proc/version` in the capture, else")
    w("hwloc's expected output; `?` where none says (most pre-2013 captures).")
    w("")
    w("## Left out")
    w("")
    if left_out:
        for tb, why in left_out:
            w(f"- `{tb}`: {why}")
    else:
        w("- nothing")
    w("")
    w("## Oddities a checker may trip on")
    w("")
    for b in built:
        items = b.odd + [n for n in b.notes if not n.startswith("empty directory")] + b.expected.get("notes", [])
        gitkeeps = [n for n in b.notes if n.startswith("empty directory")]
        if gitkeeps:
            items.append(f"{len(gitkeeps)} empty directories kept with a .gitkeep")
        if not items:
            continue
        w(f"- `{b.name}`:")
        for item in items:
            w(f"  - {item}")
    w("")
    return "\n".join(L)


# --------------------------------------------------------------------------------------------------
# Sanity checks
# --------------------------------------------------------------------------------------------------


def check(out: Path) -> int:
    problems: List[str] = []
    trees = sorted(d for d in out.iterdir() if d.is_dir() and not d.name.startswith("."))
    for t in trees:
        if not (t / "sys").is_dir():
            problems.append(f"{t.name}: no sys/")
        for dirpath, dirnames, files in os.walk(t):
            for f in dirnames + files:
                p = Path(dirpath) / f
                if not p.is_symlink():
                    continue
                target = os.readlink(p)
                if target.startswith("/"):
                    problems.append(f"{t.name}: absolute link {p.relative_to(t)} -> {target}")
                    continue
                parts = list(p.parent.relative_to(t).parts)
                depth_ok = True
                for comp in target.split("/"):
                    if comp == "..":
                        if not parts:
                            depth_ok = False
                            break
                        parts.pop()
                    elif comp not in ("", "."):
                        parts.append(comp)
                if not depth_ok:
                    problems.append(f"{t.name}: link escapes the tree: {p.relative_to(t)} -> {target}")
        exp_path = t / "hwloc-expected.json"
        if not exp_path.is_file():
            problems.append(f"{t.name}: no hwloc-expected.json")
            continue
        exp = json.loads(exp_path.read_text())
        for d in exp.get("pci_devices", []):
            if not os.path.lexists(t / "sys/bus/pci/devices" / d["busid"]):
                problems.append(f"{t.name}: hwloc PCI {d['busid']} not in sys/bus/pci/devices")
            elif not (t / "sys/bus/pci/devices" / d["busid"]).exists():
                problems.append(f"{t.name}: sys/bus/pci/devices/{d['busid']} dangles")
        for d in exp.get("os_devices", []):
            # hwloc 3 gives an OpenFabrics device both types (osdev_type 48 = Network|OpenFabrics)
            if "OpenFabrics" not in d["types"] and "Network" in d["types"] and not os.path.lexists(t / "sys/class/net" / d["name"]):
                problems.append(f"{t.name}: hwloc network device {d['name']} not in sys/class/net")
            if "OpenFabrics" in d["types"] and not os.path.lexists(t / "sys/class/infiniband" / d["name"]):
                problems.append(f"{t.name}: hwloc OpenFabrics device {d['name']} not in sys/class/infiniband")
            if d.get("pci_busid") and not os.path.lexists(t / "sys/bus/pci/devices" / d["pci_busid"]):
                problems.append(f"{t.name}: {d['name']}'s PCI parent {d['pci_busid']} not in the tree")
        if not exp.get("pu_count"):
            problems.append(f"{t.name}: expected output has no PU")
        # closure: the probe walk over the kept tree reads every kept file and finds every file it
        # read in the capture (links and all)
        w = probe_walk(t, keep_fallbacks=True)
        kept = set()
        for dirpath, dirnames, files in os.walk(t):
            for f in files:
                p = Path(dirpath) / f
                if not p.is_symlink() and f not in (".gitkeep", "hwloc-expected.json"):
                    kept.add(tuple(p.relative_to(t).parts))
        for extra in sorted(kept - w.files)[:5]:
            problems.append(f"{t.name}: {text(extra)} is kept but no probe reads it")
    size = sum(tree_size(t) for t in trees)
    print(f"check: {len(trees)} trees, {size} bytes, {len(problems)} problems", file=sys.stderr)
    for p in problems:
        print("  " + p, file=sys.stderr)
    return 1 if problems else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR, help="bare git dir of open-mpi/hwloc")
    ap.add_argument("--rev", default="HEAD", help="hwloc commit to read (default HEAD)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help="bytes for all trees together")
    ap.add_argument("--keep-fallbacks", action="store_true", help="also keep nodeN/cpumap and PCI local_cpus")
    ap.add_argument("--only", nargs="*", help="rebuild only these trees (README left as is)")
    ap.add_argument("--check", action="store_true", help="only sanity-check the output directory")
    args = ap.parse_args()
    if args.check:
        return check(args.out)
    return build(args)


if __name__ == "__main__":
    sys.exit(main())
