#!/usr/bin/env bash
# run-topology-guest.sh - boot the fabricdoctor test guest (built by build-guest.sh) on an emulated
# multi-NUMA PCIe topology with a Soft-RoCE device, run SCRIPT inside it, collect its output.
#
#   tests/vm/run-topology-guest.sh [--copy FILE]... [--timeout SEC] SCRIPT OUTDIR
#
#   SCRIPT   bash script run as root inside the guest (cwd /mnt/host). Everything it writes under
#            /mnt/host/out (also in $FD_VM_OUT) ends up in OUTDIR. Before it starts, the guest has
#            rxe0 on the NIC with MAC 52:54:00:fd:00:01, address 10.77.0.2/24 (an address that exists
#            only inside the guest: that NIC hangs off a QEMU hub with no other port).
#   OUTDIR   host directory (created; must be empty if it exists). Besides the script's files it
#            receives vm-console.log (serial console), vm-guest.log (stdout+stderr of the guest-side
#            wrapper and SCRIPT), vm-qemu.log (QEMU's own stderr), vm-run.txt (command line, versions,
#            durations, exit code).
#   --copy FILE  copy FILE into the share's bin/ (guest: /mnt/host/bin, first on PATH), e.g. a
#            host-built `target/release/fabricdoctor` (Debian 12 / glibc 2.36 binaries run there).
#   --timeout SEC  wall-clock bound for the whole guest run (default $FD_VM_TIMEOUT or 600); QEMU is
#            killed when it expires and the exit code is 124.
#
# Exit code: SCRIPT's exit code; 90 if the guest could not set up rxe0; 124 on timeout; 125 if the
# guest gave no result (see vm-console.log); 2 on usage/setup errors on the host.
#
# Env: FABRICDOCTOR_VM_CACHE (default /var/tmp/fabricdoctor-vm), FD_VM_TIMEOUT, FD_VM_APPEND (extra
# kernel command line, e.g. "pci=pcie_bus_perf" or "loglevel=7"), FD_VM_QEMU_EXTRA (extra QEMU args,
# word-split).
#
# The topology (see README.md for the tree the guest sees and the expected PIX/PXB/PHB/NODE/SYS
# relations). References: QEMU docs/pcie.txt ("PCI EXPRESS GUIDELINES": on q35 put PCIe endpoints
# behind pcie-root-ports, not on pcie.0; switches = x3130-upstream + xio3130-downstream; pxb-pcie
# buses accept only root ports) and docs/pci_expander_bridge.txt (pxb: a light-weight host bridge in
# the same PCI domain, with its own bus_nr range and an optional numa_node that the guest sees as the
# _PXM of its ACPI PNP0A08 device, i.e. the PCI devices' numa_node in sysfs).
set -euo pipefail

die() { echo "run-topology-guest.sh: error: $*" >&2; exit 2; }
log() { echo "run-topology-guest.sh: $*" >&2; }

COPY=()
TIMEOUT=${FD_VM_TIMEOUT:-600}
while [ $# -gt 0 ]; do
  case "$1" in
    --copy) [ $# -ge 2 ] || die "--copy needs a FILE"; COPY+=("$2"); shift 2;;
    --timeout) [ $# -ge 2 ] || die "--timeout needs SEC"; TIMEOUT=$2; shift 2;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0;;
    --) shift; break;;
    -*) die "unknown option $1 (see --help)";;
    *) break;;
  esac
done
[ $# -eq 2 ] || die "usage: run-topology-guest.sh [--copy FILE]... [--timeout SEC] SCRIPT OUTDIR"
SCRIPT=$1 OUTDIR=$2
[ -f "$SCRIPT" ] || die "SCRIPT $SCRIPT is not a file"
[[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive number of seconds"
for f in "${COPY[@]}"; do [ -f "$f" ] || die "--copy $f: not a file"; done

CACHE=${FABRICDOCTOR_VM_CACHE:-/var/tmp/fabricdoctor-vm}
for f in vmlinuz initrd.cpio guest.env .lock; do
  [ -e "$CACHE/$f" ] || die "$CACHE/$f missing: run tests/vm/build-guest.sh (as root) first"
done
command -v qemu-system-x86_64 > /dev/null || die "qemu-system-x86_64 not installed: run tests/vm/build-guest.sh"

mkdir -p "$OUTDIR"
[ -z "$(ls -A "$OUTDIR")" ] || die "OUTDIR $OUTDIR is not empty"
OUTDIR=$(readlink -f "$OUTDIR")

# Shared lock on the cache for the whole run: build-guest.sh takes it exclusively, so a rebuild
# waits instead of replacing the kernel/initramfs under a starting guest.
exec 9< "$CACHE/.lock"
flock -s -w 1800 9 || die "cache $CACHE is locked by a build"

# Per-run private state: a temp dir holding the 9p share. Removed (and QEMU killed) on any exit.
RUN=$(mktemp -d "${TMPDIR:-/tmp}/fdvm.XXXXXX")
QPID=
# shellcheck disable=SC2317  # invoked by the trap
cleanup() {
  local rc=$?
  if [ -n "$QPID" ] && kill -0 "$QPID" 2> /dev/null; then
    kill "$QPID" 2> /dev/null || true      # timeout(1) forwards it to QEMU
    sleep 1; kill -KILL "$QPID" 2> /dev/null || true
  fi
  rm -rf "$RUN"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

SHARE=$RUN/share
mkdir -p "$SHARE/out" "$SHARE/bin"
cp "$SCRIPT" "$SHARE/script.sh"
for f in "${COPY[@]}"; do cp "$f" "$SHARE/bin/"; chmod a+rx "$SHARE/bin/$(basename "$f")"; done

RXE_MAC=52:54:00:fd:00:01
RXE_IP=10.77.0.2

# Guest-side wrapper, started by the guest's /init (kernel parameter fd.script=fd-harness.sh).
# It belongs to this script rather than to the initramfs because it depends on the topology below
# (which NIC carries rxe). The netdev gets its IPv4 address before `rdma link add`, and the wrapper
# then waits until the IPv4-mapped RoCE v2 GID is in the table (GIDs are filled in from netdev/inet
# events, not synchronously), so that SCRIPT always starts with the complete GID table.
cat > "$SHARE/fd-harness.sh" <<EOF
#!/bin/bash
set -uo pipefail
RXE_MAC=$RXE_MAC RXE_IP=$RXE_IP
EOF
cat "$(dirname "${BASH_SOURCE[0]}")/rxe-harness.sh" >> "$SHARE/fd-harness.sh"

# ---------------------------------------------------------------------------------------- topology
# Bus numbers in the comments are what the guest enumerates (SeaBIOS assigns them depth first below
# each root bus); slot addresses are fixed here so that BDFs are stable across runs.
#
# pcie.0 (bus 00, main q35 host bridge, no NUMA affinity -> numa_node -1)
#   00:03.0 virtio-9p-pci            the host share (on the root bus: plain PCI, no Express cap)
#   00:10.0 pxb-pcie  bus_nr=0x40 numa_node=0   "host bridge A" (socket 0)
#   00:11.0 pxb-pcie  bus_nr=0x60 numa_node=0   "host bridge B" (socket 0, for NODE)
#   00:12.0 pxb-pcie  bus_nr=0x80 numa_node=1   "host bridge C" (socket 1, for SYS)
# bus 40 (pxb A):
#   40:00.0 pcie-root-port rpA0  16 GT/s x16
#     41:00.0 x3130-upstream usw0
#       42:00.0 xio3130-downstream dsp0 -> 43:00.0 e1000e  (MAC 52:54:00:fd:00:02)   } PIX
#       42:01.0 xio3130-downstream dsp1 -> 44:00.0 nvme    (serial fd-pix-nvme)      }
#       42:02.0 xio3130-downstream dsp2 -> 45:00.0 x3130-upstream usw1
#                                            46:00.0 xio3130-downstream dsp3 -> 47:00.0 nvme (fd-pxb-nvme)
#   40:01.0 pcie-root-port rpA1  8 GT/s x2 (deliberately narrow)
#     48:00.0 virtio-net-pci (MAC 52:54:00:fd:00:01) = rxe0's netdev, 10.77.0.2/24
# bus 60 (pxb B):
#   60:00.0 pcie-root-port rpB0  16 GT/s x16 -> 61:00.0 nvme (fd-node-nvme)
# bus 80 (pxb C, NUMA node 1):
#   80:00.0 pcie-root-port rpC0  32 GT/s x16 -> 81:00.0 igb (82576, SR-IOV capable; MAC ..:03)
#   80:01.0 pcie-root-port rpC1  16 GT/s x8  -> 82:00.0 nvme (fd-sys-nvme)
#
# Every NIC gets its own QEMU hub (hubport) with no other port: no traffic leaves the guest, and
# QEMU does not warn about NICs without a peer. romfile= disables option ROMs (no PXE, and no need
# for the ipxe-qemu package). NVMe controllers have no namespace (no drive/backing file needed).
# shellcheck disable=SC2054  # the commas are QEMU's option syntax, not array separators
TOPO=(
  -device virtio-9p-pci,bus=pcie.0,addr=0x3,fsdev=host0,mount_tag=host0
  -device pxb-pcie,id=pxbA,bus=pcie.0,addr=0x10,bus_nr=0x40,numa_node=0
  -device pxb-pcie,id=pxbB,bus=pcie.0,addr=0x11,bus_nr=0x60,numa_node=0
  -device pxb-pcie,id=pxbC,bus=pcie.0,addr=0x12,bus_nr=0x80,numa_node=1

  -device pcie-root-port,id=rpA0,bus=pxbA,addr=0x0,chassis=1,x-speed=16,x-width=16
  -device x3130-upstream,id=usw0,bus=rpA0
  -device xio3130-downstream,id=dsp0,bus=usw0,addr=0x0,chassis=10,slot=0
  -device xio3130-downstream,id=dsp1,bus=usw0,addr=0x1,chassis=11,slot=0
  -device xio3130-downstream,id=dsp2,bus=usw0,addr=0x2,chassis=12,slot=0
  -netdev hubport,id=n2,hubid=2
  -device e1000e,bus=dsp0,netdev=n2,mac=52:54:00:fd:00:02,romfile=
  -device nvme,bus=dsp1,serial=fd-pix-nvme
  -device x3130-upstream,id=usw1,bus=dsp2
  -device xio3130-downstream,id=dsp3,bus=usw1,addr=0x0,chassis=13,slot=0
  -device nvme,bus=dsp3,serial=fd-pxb-nvme
  -device pcie-root-port,id=rpA1,bus=pxbA,addr=0x1,chassis=2,x-speed=8,x-width=2
  -netdev hubport,id=n1,hubid=1
  -device "virtio-net-pci,bus=rpA1,netdev=n1,mac=$RXE_MAC,romfile="

  -device pcie-root-port,id=rpB0,bus=pxbB,addr=0x0,chassis=3,x-speed=16,x-width=16
  -device nvme,bus=rpB0,serial=fd-node-nvme

  -device pcie-root-port,id=rpC0,bus=pxbC,addr=0x0,chassis=4,x-speed=32,x-width=16
  -netdev hubport,id=n3,hubid=3
  -device igb,bus=rpC0,netdev=n3,mac=52:54:00:fd:00:03,romfile=
  -device pcie-root-port,id=rpC1,bus=pxbC,addr=0x1,chassis=5,x-speed=16,x-width=8
  -device nvme,bus=rpC1,serial=fd-sys-nvme
)

# Machine: q35 (PCIe), TCG single-threaded (multi-threaded TCG has aborted during enumeration of
# many emulated PCIe devices on these machines; KVM is unusable here, see the Soft-RoCE notes),
# 2 vCPUs in 2 NUMA nodes with 512 MiB each, one socket per node like a 2-socket server (with the
# default 1 socket x 2 cores the kernel warns in topology_sane() that CPU 1 shares a package/LLC with
# CPU 0 across NUMA nodes). -nodefaults: no default NIC/VGA/etc., so the PCI
# tree holds only the q35 built-ins (00:00.0 MCH, 00:1f.{0,2,3} ICH9 LPC/SATA/SMBus) and ours.
# shellcheck disable=SC2054
QEMU=(
  qemu-system-x86_64 -name "$(basename "$RUN")"
  -machine q35 -accel tcg,thread=single -cpu max -smp 2,sockets=2,cores=1,threads=1 -m 1G
  -object memory-backend-ram,id=mem0,size=512M -numa node,nodeid=0,cpus=0,memdev=mem0
  -object memory-backend-ram,id=mem1,size=512M -numa node,nodeid=1,cpus=1,memdev=mem1
  -nodefaults -no-user-config -display none -vga none -no-reboot
  -serial "file:$OUTDIR/vm-console.log" -monitor none
  -kernel "$CACHE/vmlinuz" -initrd "$CACHE/initrd.cpio"
  -append "console=ttyS0 panic=-1 loglevel=4 fd.name=fdguest fd.script=fd-harness.sh ${FD_VM_APPEND:-}"
  -fsdev "local,id=host0,path=$SHARE,security_model=none"
  "${TOPO[@]}"
)
# shellcheck disable=SC2206
[ -n "${FD_VM_QEMU_EXTRA:-}" ] && QEMU+=(${FD_VM_QEMU_EXTRA})

{
  echo "date: $(date -u +%FT%TZ)"
  echo "script: $(readlink -f "$SCRIPT")"
  echo "copied: ${COPY[*]:-}"
  echo "timeout_s: $TIMEOUT"
  cat "$CACHE/guest.env"
  printf 'qemu:'; printf ' %q' "${QEMU[@]}"; echo
} > "$OUTDIR/vm-run.txt"

log "booting guest (timeout ${TIMEOUT}s, console: $OUTDIR/vm-console.log)"
T0=$(date +%s%N)
# timeout(1) bounds the run; -k: SIGKILL 10 s after the SIGTERM if QEMU ignores it.
timeout -k 10 "$TIMEOUT" "${QEMU[@]}" < /dev/null > "$OUTDIR/vm-qemu.log" 2>&1 &
QPID=$!
set +e
wait "$QPID"
QRC=$?
set -e
QPID=
MS=$(( ($(date +%s%N) - T0) / 1000000 ))
SECS=$(printf '%d.%d' $((MS / 1000)) $((MS % 1000 / 100)))

# Collect: what SCRIPT wrote, plus the wrapper's log.
cp -a "$SHARE/out/." "$OUTDIR/"
[ -f "$SHARE/fd-harness.sh.log" ] && cp "$SHARE/fd-harness.sh.log" "$OUTDIR/vm-guest.log"

if [ "$QRC" = 124 ] || [ "$QRC" = 137 ]; then
  RC=124; WHY="timeout after ${TIMEOUT}s (QEMU killed)"
elif [ -s "$SHARE/fd-harness.sh.rc" ]; then
  RC=$(tr -dc 0-9 < "$SHARE/fd-harness.sh.rc"); WHY="guest script exit code $RC"
  [ "$RC" = 90 ] && WHY="guest could not set up rxe0 (see vm-guest.log)"
elif RCL=$(grep -ao 'FD-VM-RC=[0-9]*' "$OUTDIR/vm-console.log" 2> /dev/null | tail -n1) && [ -n "$RCL" ]; then
  RC=${RCL#FD-VM-RC=}; WHY="guest script exit code $RC (from the console; the share had no .rc)"
else
  RC=125; WHY="guest gave no result (QEMU exit $QRC; see vm-console.log, vm-qemu.log)"
fi
{ echo "qemu_exit: $QRC"; echo "wall_s: $SECS"; echo "result: $RC ($WHY)"; } >> "$OUTDIR/vm-run.txt"
log "$WHY; wall ${SECS}s; output in $OUTDIR"
exit "$RC"
