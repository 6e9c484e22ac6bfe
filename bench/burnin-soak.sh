#!/usr/bin/env bash
# Compressed burn-in soak: `fabricdoctor burnin --local 4` (agents on loopback) for ${DURATION:-600s}
# with a 1-second soak interval, sampling the resident set size (VmRSS, /proc/PID/status) of the
# coordinator and each agent every ${SAMPLE_S:-5} seconds. Prints each process's growth per hour: the
# growth of the RSS high-water mark between the first and second half of the soak window (after a
# ${WARMUP_S:-60} s warm-up in which allocator arenas and buffers settle, until 10 s before the end,
# when sign-off writes the final reports). Goal: under 1 MB per hour for every process.
# Output: $OUT/rss.csv (t_s,pid,role,rss_kb), $OUT/report/ (the run's reports), and the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-600s}
SAMPLE_S=${SAMPLE_S:-5}
WARMUP_S=${WARMUP_S:-60}
OUT=${OUT:-target/bench-burnin-soak}
cargo build --release -q
fd=target/release/fabricdoctor
rm -rf "$OUT" && mkdir -p "$OUT"
sed -e 's/^interval_s = .*/interval_s = 1.0/' tests/fixtures/burnin/shared-machine.toml > "$OUT/soak.toml"
$fd burnin --local 4 --duration "$DURATION" --playbook "$OUT/soak.toml" --report-dir "$OUT/report" \
  > "$OUT/burnin.out" 2> "$OUT/burnin.err" &
coordinator=$!
echo "t_s,pid,role,rss_kb" > "$OUT/rss.csv"
start=$(date +%s.%N)
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || true; }
while kill -0 "$coordinator" 2>/dev/null; do
  now=$(date +%s.%N)
  t=$(awk -v a="$now" -v b="$start" 'BEGIN { printf "%.1f", a - b }')
  value=$(rss "$coordinator"); [ -n "$value" ] && echo "$t,$coordinator,coordinator,$value" >> "$OUT/rss.csv"
  for child in $(pgrep -P "$coordinator" || true); do
    value=$(rss "$child"); [ -n "$value" ] && echo "$t,$child,agent,$value" >> "$OUT/rss.csv"
  done
  sleep "$SAMPLE_S"
done
set +e
wait "$coordinator"
status=$?
set -e
echo "burnin exit $status ($(head -1 "$OUT/burnin.out"))"
python3 - "$OUT/rss.csv" "$WARMUP_S" "$OUT/report/report.json" <<'PY'
import csv, json, sys
from collections import defaultdict
path, warmup = sys.argv[1], float(sys.argv[2])
# The soak window ends 10 s before --duration: sign-off and the final reports are one-time costs.
end = json.load(open(sys.argv[3]))["run"]["duration_s"] - 10
series = defaultdict(list)
roles = {}
for row in csv.DictReader(open(path)):
    series[row["pid"]].append((float(row["t_s"]), int(row["rss_kb"])))
    roles[row["pid"]] = row["role"]
worst = 0.0
for pid, points in sorted(series.items(), key=lambda p: (roles[p[0]], p[0])):
    late = [(t, r) for t, r in points if warmup <= t <= end]
    if len(late) < 6:
        print(f"{roles[pid]} {pid}: too few samples after warm-up")
        continue
    # RSS dips whenever the allocator returns a step's buffers, so the trend is that of the
    # high-water mark: the largest RSS of the second half against that of the first half.
    half = len(late) // 2
    first, second = late[:half], late[half:]
    mid = lambda part: (part[0][0] + part[-1][0]) / 2
    grown_kb = max(r for _, r in second) - max(r for _, r in first)
    per_hour_mb = grown_kb / (mid(second) - mid(first)) * 3600 / 1024
    worst = max(worst, per_hour_mb)
    print(f"{roles[pid]:11} pid {pid}: RSS high-water {max(r for _, r in first)/1024:.2f} -> "
          f"{max(r for _, r in second)/1024:.2f} MB ({late[0][0]:.0f}-{late[-1][0]:.0f} s), growth {per_hour_mb:+.2f} MB/h")
print(f"worst growth: {worst:+.2f} MB/h (goal < 1 MB/h)")
PY
