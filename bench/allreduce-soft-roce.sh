#!/usr/bin/env bash
# Benchmark: `fabricdoctor perf allreduce` over verbs (Soft-RoCE) against the same over TCP, one rank
# per QEMU guest in a ring of three guests (tests/vm/run-ring-guests.sh), both in the same boot and
# alternating round by round, so they share the guests, the emulated NICs and the host's load.
#
#   bash bench/allreduce-soft-roce.sh                  # 3 rounds, 64 KiB to 4 MiB (x4), medians
#   ROUNDS=5 SIZES="-b 1M -e 1M" bash bench/allreduce-soft-roce.sh
#
# Under TCG (no KVM here) both transports run in emulated CPUs, rxe's kernel threads included: the
# figures are functional timing, a ratio within one run, never a statement about RDMA hardware.
#
# Environment: ROUNDS (3), SIZES (-b/-e/-f arguments; "-b 64K -e 4M -f 4"), ITERS (-n; 5), FD_ARGS (more
# `perf allreduce` arguments for both transports, e.g. "--channels 1"), FABRICDOCTOR
# (binary; default target/release/fabricdoctor, rebuilt with cargo), RAW_DIR (keep the guests' outputs).
# Needs root and the guest cache (tests/vm/build-guest.sh).
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

GUEST=$OUT/bench-guest.sh
cat > "$GUEST" <<GUEST_EOF
#!/usr/bin/env bash
# Guest side: $ROUNDS rounds of verbs then TCP; rank 0 keeps each run's JSON.
set -uo pipefail
for round in \$(seq 1 $ROUNDS); do
  for transport in verbs tcp; do
    port=\$((18700 + 2 * round))
    args=(--transport \$transport)
    if [ \$transport = verbs ]; then args+=(-d rxe0 -x "\$FD_VM_RXE_GID_INDEX"); else port=\$((port + 1)); fi
    timeout 600 fabricdoctor perf allreduce "\${args[@]}" $SIZES $FD_ARGS -n $ITERS -w 1 -c 1 --timeout 120s --json \\
      --hosts "\$FD_VM_HOSTS" --rank "\$FD_VM_RANK" --port \$port \\
      > "\$FD_VM_OUT/\$round-\$transport.json" 2> "\$FD_VM_OUT/\$round-\$transport.err"
    echo "round \$round \$transport: exit code \$?"
  done
done
rdma statistic show link rxe0/1 > "\$FD_VM_OUT/rxe-counters.txt" 2>&1
# The rig's point-to-point ceiling: perftest's ib_write_bw from rank 0 to rank 1, 256 KiB messages
# (the collectives' slice), 5 s, while rank 2 idles.
host1=\$(echo "\$FD_VM_HOSTS" | cut -d, -f2)
case \$FD_VM_RANK in
  1) timeout 120 ib_write_bw -d rxe0 -x "\$FD_VM_RXE_GID_INDEX" -F -s 262144 -D 5 > "\$FD_VM_OUT/ib_write_bw.txt" 2>&1 ;;
  0) for _ in \$(seq 1 100); do
       timeout 60 ib_write_bw -d rxe0 -x "\$FD_VM_RXE_GID_INDEX" -F -s 262144 -D 5 "\$host1" \\
         > "\$FD_VM_OUT/ib_write_bw.txt" 2>&1 && break
       sleep 0.5
     done ;;
esac
GUEST_EOF

bash tests/vm/run-ring-guests.sh --guests 3 --timeout 3000 --copy "$FABRICDOCTOR" "$GUEST" "$OUT/guests"

python3 - "$OUT/guests/guest-0" "$ROUNDS" <<'PY'
import json, statistics, sys
guest, rounds = sys.argv[1], int(sys.argv[2])
busbw = {}  # (transport, bytes) -> [busbw GB/s]
wrong = 0
for r in range(1, rounds + 1):
    for transport in ("verbs", "tcp"):
        report = json.load(open(f"{guest}/{r}-{transport}.json"))
        for row in report["rows"]:
            busbw.setdefault((transport, row["bytes"]), []).append(row["out_of_place"]["busbw_gbytes_per_second"])
            wrong += row["out_of_place"]["wrong"] + row["in_place"]["wrong"]
print(f"AllReduce f32 sum, 3 ranks (one per TCG guest), out-of-place busbw, median of {rounds} rounds (MB/s)")
print(f"{'size':>10} {'verbs':>10} {'tcp':>10} {'verbs/tcp':>10}")
for size in sorted({b for (_, b) in busbw}):
    v = statistics.median(busbw[("verbs", size)]) * 1000
    t = statistics.median(busbw[("tcp", size)]) * 1000
    print(f"{size:>10} {v:>10.2f} {t:>10.2f} {v / t if t else float('nan'):>9.2f}x")
print(f"#wrong over every run: {wrong}")
lines = open(f"{guest}/ib_write_bw.txt").read().splitlines()
result = next((l for i, l in enumerate(lines) if i and lines[i - 1].strip().startswith("#bytes")), "")
print(f"ib_write_bw rank 0 -> rank 1, 256 KiB, 5 s (#bytes #iterations BW peak BW average MsgRate, MiB/s): {result.strip()}")
PY
echo "rxe counters of rank 0 after the runs: $(cat "$OUT/guests/guest-0/rxe-counters.txt")"
