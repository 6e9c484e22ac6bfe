#!/usr/bin/env bash
# check-guest.sh - GUEST-side script of the real-kernel test (tests/integration/vm.rs): runs the
# host-built fabricdoctor live inside the topology guest, then snapshots the guest, so the host can
# check that `check --root SNAPSHOT` equals the live `check` and that the real kernel's sysfs (PCIe
# expander bridges on two NUMA nodes, a switch, narrow links, Soft-RoCE rxe0) is read correctly.
set -euo pipefail
command -v fabricdoctor > /dev/null ||
  { echo "no fabricdoctor in the share: pass --copy target/release/fabricdoctor" >&2; exit 3; }
ulimit -l unlimited
# Exit 1 is a verdict (the guest has findings), not a failure of this script.
# One counter sample, like the capture: growth over an interval cannot be compared with a snapshot.
fabricdoctor check --no-sample --json > "$FD_VM_OUT/live.json" || [ $? -eq 1 ]
fabricdoctor counters --interval 1s --json > "$FD_VM_OUT/counters.json"
fabricdoctor topo --json > "$FD_VM_OUT/topo.json"
fabricdoctor snapshot "$FD_VM_OUT/snap"
lspci -tv > "$FD_VM_OUT/lspci-tv.txt"
