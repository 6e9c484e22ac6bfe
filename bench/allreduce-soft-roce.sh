#!/usr/bin/env bash
# Benchmark: `fabricdoctor perf allreduce` over verbs (Soft-RoCE) against perftest's `ib_write_bw`
# between the same QEMU guests in the same boot, one rank per guest in a ring of three guests
# (tests/vm/run-ring-guests.sh); the same AllReduce over TCP, and optionally an older fabricdoctor
# binary over verbs (BASELINE), alternate round by round, so every variant shares the guests, the
# emulated NICs and the host's load.
#
#   bash bench/allreduce-soft-roce.sh                  # 3 rounds, 64 KiB to 4 MiB (x4), medians
#   ROUNDS=5 SIZES="-b 4M -e 4M" bash bench/allreduce-soft-roce.sh
#   BASELINE=/path/to/old/fabricdoctor bash bench/allreduce-soft-roce.sh
#
# Two ib_write_bw references, 256 KiB messages (the collectives' slice), after the rounds:
#   pair  rank 0 to rank 1 while rank 2 idles (5 s): what one link gives when nothing else runs;
#   ring  every rank writing to its right neighbour while its left one writes to it, all at once (10 s):
#         the load a ring AllReduce puts on every guest (each sends and receives), the same links.
# The script ends with the ratio of the verbs AllReduce's busbw at the largest size to each:
#   verbs-allreduce/ib_write_bw-ring: <ratio>
#   verbs-allreduce/ib_write_bw: <ratio>        (the pair; issue #17's figure)
#
# Under TCG (no KVM here) every variant runs in emulated CPUs, rxe's kernel threads included: the
# figures are functional timing, ratios within one run, never a statement about RDMA hardware.
#
# RATE=24mbit shapes what every guest receives (run-ring-guests.sh --rate, a deep tc-tbf queue), so
# that the shaped link, not the emulated CPUs, limits both tools; perftest then runs with fabricdoctor's
# link settings (-t 4: as many writes in flight as a link has slots; -u 18: the same ACK timeout), so
# neither tool's in-flight data outruns the queue into drops and retransmission timeouts.
#
# Environment: ROUNDS (3), SIZES (-b/-e/-f arguments; "-b 64K -e 4M -f 4"), ITERS (-n; 5), FD_ARGS (more
# `perf allreduce` arguments for every variant, e.g. "--channels 1"), FABRICDOCTOR (binary; default
# target/release/fabricdoctor, rebuilt with cargo), BASELINE (another binary, run as verbs-baseline),
# RAW_DIR (keep the guests' outputs). Needs root and the guest cache (tests/vm/build-guest.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
SIZES=${SIZES:--b 64K -e 4M -f 4}
ITERS=${ITERS:-5}
FD_ARGS=${FD_ARGS:-}
FABRICDOCTOR=${FABRICDOCTOR:-target/release/fabricdoctor}
[ "$FABRICDOCTOR" = target/release/fabricdoctor ] && cargo build --release -q
OUT=${RAW_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/fd-soft-roce-bench.XXXXXX")}
[ -n "${RAW_DIR:-}" ] || trap 'rm -rf "$OUT"' EXIT
mkdir -p "$OUT"

VARIANTS="verbs tcp"
COPIES=(--copy "$FABRICDOCTOR")
SHAPE=()
PERFTEST_ARGS=""
if [ -n "${RATE:-}" ]; then
  SHAPE=(--rate "$RATE")
  PERFTEST_ARGS="-t 4 -u 18"
fi
if [ -n "${BASELINE:-}" ]; then
  cp "$BASELINE" "$OUT/fabricdoctor-baseline"
  COPIES+=(--copy "$OUT/fabricdoctor-baseline")
  VARIANTS="verbs tcp verbs-baseline"
fi

GUEST=$OUT/bench-guest.sh
cat > "$GUEST" <<GUEST_EOF
#!/usr/bin/env bash
# Guest side: $ROUNDS rounds of every variant; rank 0 keeps each run's JSON; then ib_write_bw.
set -uo pipefail
for round in \$(seq 1 $ROUNDS); do
  index=0
  for variant in $VARIANTS; do
    index=\$((index + 1))
    port=\$((18700 + 4 * round + index))
    binary=fabricdoctor
    args=(--transport verbs -d rxe0 -x "\$FD_VM_RXE_GID_INDEX")
    case \$variant in
      tcp) args=(--transport tcp) ;;
      verbs-baseline) binary=fabricdoctor-baseline ;;
    esac
    timeout 600 \$binary perf allreduce "\${args[@]}" $SIZES $FD_ARGS -n $ITERS -w 1 -c 1 --timeout 120s --json \\
      --hosts "\$FD_VM_HOSTS" --rank "\$FD_VM_RANK" --port \$port \\
      > "\$FD_VM_OUT/\$round-\$variant.json" 2> "\$FD_VM_OUT/\$round-\$variant.err"
    echo "round \$round \$variant: exit code \$?"
  done
done
rdma statistic show link rxe0/1 > "\$FD_VM_OUT/rxe-counters.txt" 2>&1
IFS=, read -r -a hosts <<< "\$FD_VM_HOSTS"
guests=\${#hosts[@]}
right=\${hosts[\$(( (FD_VM_RANK + 1) % guests ))]}
# client HOST PORT SECONDS OUTPUT: ib_write_bw to HOST, retried until its server listens.
client() {
  for _ in \$(seq 1 100); do
    timeout 60 ib_write_bw -d rxe0 -x "\$FD_VM_RXE_GID_INDEX" -F -s 262144 $PERFTEST_ARGS -D "\$3" -p "\$2" "\$1" > "\$4" 2>&1 && return
    sleep 0.5
  done
}
server() { timeout 120 ib_write_bw -d rxe0 -x "\$FD_VM_RXE_GID_INDEX" -F -s 262144 $PERFTEST_ARGS -D "\$2" -p "\$1" > "\$3" 2>&1; }
# pair: rank 0 writes to rank 1 while rank 2 idles.
case \$FD_VM_RANK in
  1) server 18600 5 "\$FD_VM_OUT/ib_write_bw-pair-server.txt" ;;
  0) client "\${hosts[1]}" 18600 5 "\$FD_VM_OUT/ib_write_bw.txt" ;;
esac
# Every guest waits until the pair is done (the ring would otherwise overlap it): rank 1 finishes with
# its server; a marker port would need more plumbing than this bounded wait.
sleep 8
# ring: every rank serves its left neighbour and writes to its right one, all at once; 10 s, so that
# the three, which start within a second or two of each other, overlap for most of it.
server 18601 10 "\$FD_VM_OUT/ib_write_bw-ring-server.txt" &
client "\$right" 18601 10 "\$FD_VM_OUT/ib_write_bw-ring.txt"
wait
GUEST_EOF

bash tests/vm/run-ring-guests.sh --guests 3 --timeout 3000 "${SHAPE[@]}" "${COPIES[@]}" "$GUEST" "$OUT/guests"

echo "rxe counters of rank 0 after the runs: $(cat "$OUT/guests/guest-0/rxe-counters.txt" | tr '\n' ' ')"
python3 - "$OUT/guests" "$ROUNDS" "$VARIANTS" <<'PY'
import json, statistics, sys
guests, rounds, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
busbw = {}  # (variant, bytes) -> [busbw GB/s]
wrong = 0
for r in range(1, rounds + 1):
    for variant in variants:
        report = json.load(open(f"{guests}/guest-0/{r}-{variant}.json"))
        for row in report["rows"]:
            busbw.setdefault((variant, row["bytes"]), []).append(row["out_of_place"]["busbw_gbytes_per_second"])
            wrong += row["out_of_place"]["wrong"] + row["in_place"]["wrong"]
print(f"AllReduce f32 sum, 3 ranks (one per TCG guest), out-of-place busbw, median of {rounds} rounds (MB/s)")
print(f"{'size':>10}" + "".join(f"{v:>16}" for v in variants))
sizes = sorted({b for (_, b) in busbw})
for size in sizes:
    print(f"{size:>10}" + "".join(f"{statistics.median(busbw[(v, size)]) * 1000:>16.2f}" for v in variants))
print(f"#wrong over every run: {wrong}")

def ib_write_bw(path):
    """perftest's BW average (MiB/s: perftest divides by 2^20) of one run, in MB/s; None if it did not run."""
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return None
    for i, line in enumerate(lines):
        if i and lines[i - 1].strip().startswith("#bytes"):
            fields = line.split()
            if len(fields) >= 4:
                return float(fields[3]) * 1.048576
    return None

pair = ib_write_bw(f"{guests}/guest-0/ib_write_bw.txt")
ring = [ib_write_bw(f"{guests}/guest-{g}/ib_write_bw-ring.txt") for g in range(3)]
print(f"ib_write_bw pair, rank 0 -> rank 1, 256 KiB, 5 s: {pair} MB/s")
print(f"ib_write_bw ring, every rank -> its right neighbour at once: {ring} MB/s")
largest = sizes[-1]
verbs = statistics.median(busbw[("verbs", largest)]) * 1000
if "verbs-baseline" in variants:
    base = statistics.median(busbw[("verbs-baseline", largest)]) * 1000
    print(f"verbs/verbs-baseline at {largest} bytes: {verbs / base:.2f}")
ring_ok = [r for r in ring if r]
if len(ring_ok) == 3:
    print(f"verbs-allreduce/ib_write_bw-ring: {verbs / min(ring_ok):.2f} (the slowest of the three links)")
print(f"verbs-allreduce/ib_write_bw: {verbs / pair:.2f}" if pair else "verbs-allreduce/ib_write_bw: n/a (ib_write_bw did not run)")
PY
