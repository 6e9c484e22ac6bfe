#!/usr/bin/env bash
# capture-reference.sh - regenerate tests/vm/reference/ (small, committed text) from a fresh guest run:
# the guest's `lspci -tv`, `lspci -vvv`, `lspci -xxxx` (pciutils as the reference decoder of the
# config space) and the sysfs view of the same functions.
#
#   tests/vm/capture-reference.sh [KEEP_OUTDIR]
#
# Needs the guest built (tests/vm/build-guest.sh). The full probe output goes to KEEP_OUTDIR if given
# (otherwise a temp dir that is removed).
#
# Size: lspci -xxxx of all 27 functions is ~250 KB (256 rows per PCIe function), so only one function
# per distinct kind is kept (the others differ only in BARs, bus numbers, serials), keeping the
# directory under ~200 KB. lspci -vvv and -tv are kept whole.
set -euo pipefail
HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
REF=$HERE/reference

# One of each: MCH (conventional, 256 B), pxb host bridge function, virtio-9p (plain PCI on pcie.0), root
# ports with three different LnkCaps, switch upstream port, switch downstream port (XIO3130: LnkCap
# "Speed unknown, Width x0"), e1000e, nvme, virtio-net (modern virtio caps), igb (ARI + SR-IOV).
XXXX_KEEP="00:00.0 00:03.0 00:10.0 40:00.0 40:01.0 80:00.0 41:00.0 42:00.0 43:00.0 44:00.0 48:00.0 81:00.0"

if [ $# -ge 1 ]; then OUT=$1; CLEAN=; else OUT=$(mktemp -d "${TMPDIR:-/tmp}/fdvm-ref.XXXXXX"); CLEAN=$OUT; fi
trap '[ -z "$CLEAN" ] || rm -rf "$CLEAN"' EXIT
# (run-topology-guest.sh insists on an empty or new OUTDIR)
"$HERE/run-topology-guest.sh" "$HERE/probe-topology.sh" "$OUT"

mkdir -p "$REF"
cp "$OUT/lspci-tv.txt" "$OUT/lspci-vvv.txt" "$OUT/pci-attrs.tsv" "$REF/"
# keep whole blocks (header line .. blank line) of the chosen functions, in lspci's order
awk -v keep="$XXXX_KEEP" '
  BEGIN { n = split(keep, k, " "); for (i = 1; i <= n; i++) want[k[i]] = 1 }
  $1 ~ /^[0-9a-f][0-9a-f]:[0-9a-f][0-9a-f]\.[0-7]$/ { on = ($1 in want) }
  on' "$OUT/lspci-xxxx.txt" > "$REF/lspci-xxxx.txt"
got=$(grep -cE '^[0-9a-f]{2}:[0-9a-f]{2}\.[0-7] ' "$REF/lspci-xxxx.txt")
[ "$got" = "$(wc -w <<< "$XXXX_KEEP")" ] || { echo "expected $(wc -w <<< "$XXXX_KEEP") functions in lspci-xxxx, got $got" >&2; exit 1; }
{
  echo "Captured $(date -u +%F) by tests/vm/capture-reference.sh (guest: tests/vm/run-topology-guest.sh)."
  echo "lspci-xxxx.txt holds only these functions: $XXXX_KEEP"
  echo
  cat "$OUT/versions.txt"
  grep -E '^FD_VM_(KPKG|QEMU_VERSION)=' "$OUT/vm-run.txt"
} > "$REF/PROVENANCE.txt"
du -ch "$REF"/* | tail -n1
ls -l "$REF"
