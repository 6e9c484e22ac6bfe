#!/usr/bin/env bash
# snapshot-example.sh - GUEST-side script template for running a host-built fabricdoctor in the
# topology guest (for when `fabricdoctor snapshot` exists):
#
#   cargo build --release
#   tests/vm/run-topology-guest.sh --copy target/release/fabricdoctor tests/vm/snapshot-example.sh OUTDIR
#
# --copy puts the binary in /mnt/host/bin, which run-topology-guest.sh's wrapper puts first on PATH.
# A binary built on the Debian 12 host (glibc 2.36) runs as is in the Debian 12 guest. rxe0 is up
# already ($FD_VM_RXE_NETDEV, $FD_VM_RXE_IP, $FD_VM_RXE_GID_INDEX); $FD_VM_OUT is OUTDIR on the host.
set -euo pipefail
command -v fabricdoctor > /dev/null ||
  { echo "no fabricdoctor in the share: pass --copy target/release/fabricdoctor" >&2; exit 3; }
fabricdoctor --version || true
fabricdoctor snapshot "$FD_VM_OUT/snap"
# ground truth next to it, for comparing what fabricdoctor recorded with what the kernel/pciutils say
lspci -tv > "$FD_VM_OUT/lspci-tv.txt"
lspci -vvv > "$FD_VM_OUT/lspci-vvv.txt"
