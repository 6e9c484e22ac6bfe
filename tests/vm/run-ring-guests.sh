#!/usr/bin/env bash
# run-ring-guests.sh - boot N fabricdoctor test guests (built by build-guest.sh), each with its own
# Soft-RoCE device on one shared Ethernet segment, run SCRIPT in every guest at once, collect outputs.
# This is the multi-host harness: the collectives' ranks run one per guest, as on separate hosts (rxe
# does not carry traffic between network namespaces of one guest, see ../shared/softroce/README.md).
#
#   tests/vm/run-ring-guests.sh [--guests N] [--copy FILE]... [--timeout SEC] SCRIPT OUTDIR
#
#   SCRIPT   bash script run as root in every guest (cwd /mnt/host). Before it starts, guest i has rxe0
#            on its NIC with address 10.77.0.(11+i)/24 and the RoCE v2 GID of that address. Env:
#            FD_VM_RANK (i, from 0), FD_VM_GUESTS (N), FD_VM_HOSTS (every guest's address, comma-separated,
#            in rank order), FD_VM_RXE_IP, FD_VM_RXE_GID_INDEX, FD_VM_RXE_NETDEV, FD_VM_OUT.
#   OUTDIR   host directory (created; must be empty). Guest i's files land in OUTDIR/guest-i/, with its
#            vm-console.log, vm-guest.log (the wrapper's and SCRIPT's output) and rc (SCRIPT's exit code).
#   --guests N   number of guests (default 3).
#   --copy FILE  copy FILE into every guest's /mnt/host/bin (first on PATH).
#   --timeout SEC  wall-clock bound for the whole run (default $FD_VM_TIMEOUT or 600).
#   --rate RATE    shape what every guest receives to RATE (tc units, e.g. 24mbit) with a token bucket
#                  (tc-tbf(8)) on its tap device, deep enough (1 s of traffic) that a burst queues
#                  instead of being dropped: the link, not the emulated CPUs, then limits a benchmark.
#
# Kernel command line: `no_timer_check` (Documentation/admin-guide/kernel-parameters.txt: "disables the
# code which tests for broken timer IRQ sources"): with three TCG guests on a loaded 2-core host, one
# guest's boot-time check of the IO-APIC timer failed and the kernel panicked ("IO-APIC + timer doesn't
# work!"); the emulated timer is fine, only too slow for the check.
#
# Network: the guests' NICs are tap devices on a bridge inside a network namespace created for this run
# (fdring-PID, deleted on exit with everything in it); QEMU runs in that namespace, so no guest traffic
# touches the host's own network. Each guest: TCG, 1 vCPU, $FD_VM_MEMORY (default 512M) of memory.
#
# Exit code: 0 when every guest's SCRIPT exited 0; otherwise the first non-zero guest code in rank
# order (90: rxe setup failed in that guest; 125: a guest gave no result); 124 on timeout; 2 on
# usage/setup errors on the host.
set -euo pipefail

die() { echo "run-ring-guests.sh: error: $*" >&2; exit 2; }
log() { echo "run-ring-guests.sh: $*" >&2; }

GUESTS=3
RATE=
COPY=()
TIMEOUT=${FD_VM_TIMEOUT:-600}
MEMORY=${FD_VM_MEMORY:-512M}
while [ $# -gt 0 ]; do
  case "$1" in
    --guests) [ $# -ge 2 ] || die "--guests needs N"; GUESTS=$2; shift 2;;
    --copy) [ $# -ge 2 ] || die "--copy needs a FILE"; COPY+=("$2"); shift 2;;
    --timeout) [ $# -ge 2 ] || die "--timeout needs SEC"; TIMEOUT=$2; shift 2;;
    --rate) [ $# -ge 2 ] || die "--rate needs a RATE"; RATE=$2; shift 2;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0;;
    -*) die "unknown option $1 (see --help)";;
    *) break;;
  esac
done
[ $# -eq 2 ] || die "usage: run-ring-guests.sh [--guests N] [--copy FILE]... [--timeout SEC] SCRIPT OUTDIR"
SCRIPT=$1 OUTDIR=$2
[ -f "$SCRIPT" ] || die "SCRIPT $SCRIPT is not a file"
[[ "$GUESTS" =~ ^[1-8]$ ]] || die "--guests must be 1 to 8"
[[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive number of seconds"
[ -z "$RATE" ] || [[ "$RATE" =~ ^[1-9][0-9]*(kbit|mbit|gbit)$ ]] || die "--rate must be like 24mbit (kbit, mbit, gbit)"
for f in "${COPY[@]}"; do [ -f "$f" ] || die "--copy $f: not a file"; done
[ "$(id -u)" = 0 ] || die "needs root (network namespace, bridge and tap devices)"

CACHE=${FABRICDOCTOR_VM_CACHE:-/var/tmp/fabricdoctor-vm}
for f in vmlinuz initrd.cpio guest.env .lock; do
  [ -e "$CACHE/$f" ] || die "$CACHE/$f missing: run tests/vm/build-guest.sh (as root) first"
done
command -v qemu-system-x86_64 > /dev/null || die "qemu-system-x86_64 not installed: run tests/vm/build-guest.sh"

mkdir -p "$OUTDIR"
[ -z "$(ls -A "$OUTDIR")" ] || die "OUTDIR $OUTDIR is not empty"
OUTDIR=$(readlink -f "$OUTDIR")

# A rebuild of the cache waits for us (build-guest.sh takes this lock exclusively).
exec 9< "$CACHE/.lock"
flock -s -w 1800 9 || die "cache $CACHE is locked by a build"

RUN=$(mktemp -d "${TMPDIR:-/tmp}/fdring.XXXXXX")
NS=fdring-$$
PIDS=()
# shellcheck disable=SC2317  # invoked by the trap
cleanup() {
  local rc=$?
  for pid in "${PIDS[@]}"; do kill "$pid" 2> /dev/null || true; done
  sleep 1
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2> /dev/null || true; done
  ip netns del "$NS" 2> /dev/null || true
  rm -rf "$RUN"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ip netns add "$NS" || die "cannot create network namespace $NS"
ip -n "$NS" link add br0 type bridge
ip -n "$NS" link set br0 up
HOSTS=
for i in $(seq 0 $((GUESTS - 1))); do
  HOSTS=${HOSTS:+$HOSTS,}10.77.0.$((11 + i))
done

for i in $(seq 0 $((GUESTS - 1))); do
  SHARE=$RUN/share-$i
  mkdir -p "$SHARE/out" "$SHARE/bin"
  cp "$SCRIPT" "$SHARE/script.sh"
  for f in "${COPY[@]}"; do cp "$f" "$SHARE/bin/"; chmod a+rx "$SHARE/bin/$(basename "$f")"; done
  # Guest-side wrapper, started by the guest's /init (fd.script=fd-harness.sh): this guest's NIC,
  # address and rank, then the common rxe setup (rxe-harness.sh) that runs SCRIPT.
  cat > "$SHARE/fd-harness.sh" <<EOF
#!/bin/bash
set -uo pipefail
RXE_MAC=52:54:00:fd:01:$(printf '%02x' "$i") RXE_IP=10.77.0.$((11 + i))
export FD_VM_RANK=$i FD_VM_GUESTS=$GUESTS FD_VM_HOSTS=$HOSTS
EOF
  cat "$(dirname "${BASH_SOURCE[0]}")/rxe-harness.sh" >> "$SHARE/fd-harness.sh"
  ip -n "$NS" tuntap add dev "tap$i" mode tap
  ip -n "$NS" link set "tap$i" master br0 up
  if [ -n "$RATE" ]; then
    # The tap's egress is the guest's ingress. burst: 64 KiB (a few MTU-sized frames per token refill
    # at these rates); latency: 1 s of queue before tbf drops (RC retransmits a dropped packet only
    # after its ACK timeout, so drops would measure the timeout, not the link).
    ip netns exec "$NS" tc qdisc add dev "tap$i" root tbf rate "$RATE" burst 64kb latency 1s
  fi
done

{
  echo "date: $(date -u +%FT%TZ)"
  echo "script: $(readlink -f "$SCRIPT")"
  echo "guests: $GUESTS ($HOSTS), memory $MEMORY each, 1 vCPU, TCG"
  echo "copied: ${COPY[*]:-}"
  echo "timeout_s: $TIMEOUT"
  cat "$CACHE/guest.env"
} > "$OUTDIR/vm-run.txt"

log "booting $GUESTS guests in $NS (timeout ${TIMEOUT}s)"
T0=$(date +%s%N)
for i in $(seq 0 $((GUESTS - 1))); do
  mkdir -p "$OUTDIR/guest-$i"
  # shellcheck disable=SC2054  # the commas are QEMU's option syntax
  ip netns exec "$NS" timeout -k 10 "$TIMEOUT" qemu-system-x86_64 -name "fdring-$$-$i" \
    -machine q35 -accel tcg -cpu max -smp 1 -m "$MEMORY" \
    -nodefaults -no-user-config -display none -vga none -no-reboot \
    -serial "file:$OUTDIR/guest-$i/vm-console.log" -monitor none \
    -kernel "$CACHE/vmlinuz" -initrd "$CACHE/initrd.cpio" \
    -append "console=ttyS0 panic=-1 loglevel=4 no_timer_check fd.name=fdring$i fd.script=fd-harness.sh" \
    -fsdev "local,id=host0,path=$RUN/share-$i,security_model=none" \
    -device virtio-9p-pci,fsdev=host0,mount_tag=host0 \
    -netdev "tap,id=n0,ifname=tap$i,script=no,downscript=no" \
    -device "virtio-net-pci,netdev=n0,mac=52:54:00:fd:01:$(printf '%02x' "$i"),romfile=" \
    < /dev/null > "$OUTDIR/guest-$i/vm-qemu.log" 2>&1 &
  PIDS+=($!)
done

RC=0
TIMED_OUT=0
for i in $(seq 0 $((GUESTS - 1))); do
  set +e
  wait "${PIDS[$i]}"
  QRC=$?
  set -e
  SHARE=$RUN/share-$i
  cp -a "$SHARE/out/." "$OUTDIR/guest-$i/"
  [ -f "$SHARE/fd-harness.sh.log" ] && cp "$SHARE/fd-harness.sh.log" "$OUTDIR/guest-$i/vm-guest.log"
  if [ "$QRC" = 124 ] || [ "$QRC" = 137 ]; then
    GRC=124; TIMED_OUT=1
  elif [ -s "$SHARE/fd-harness.sh.rc" ]; then
    GRC=$(tr -dc 0-9 < "$SHARE/fd-harness.sh.rc")
  else
    GRC=125
  fi
  echo "$GRC" > "$OUTDIR/guest-$i/rc"
  log "guest $i: exit code $GRC (QEMU exit $QRC)"
  [ "$RC" = 0 ] && RC=$GRC
done
PIDS=()
MS=$(( ($(date +%s%N) - T0) / 1000000 ))
[ "$TIMED_OUT" = 1 ] && RC=124
{ echo "wall_ms: $MS"; echo "result: $RC"; } >> "$OUTDIR/vm-run.txt"
log "done in ${MS} ms, exit code $RC; output in $OUTDIR"
exit "$RC"
