#!/usr/bin/env bash
# Benchmark: what `--validate` costs, and whether burn-in pairs measure the link or fabricdoctor.
#   1. verification throughput per core against memcpy on the same buffers (perf/benches/integrity.rs);
#      goal >= 0.8x memcpy
#   2. `perf client --transport tcp --op send --size 1 MiB -D 4s` on loopback with and without
#      --validate, 3 rounds alternating which goes first, medians; goal >= 0.8x
#   3. a `burnin --local 2` pair against `perf client` with the burn-in's pair settings (the default
#      playbook's 1 MiB messages, 2 connections x 4 in flight, validation on) on the same loopback,
#      medians of 3; goal >= 0.8x
#
#   bash bench/validate.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
fd=target/release/fabricdoctor
port=$((20000 + RANDOM % 20000))
out=$(mktemp -d)
cleanup() { kill $(jobs -p) 2>/dev/null || true; rm -rf "$out"; }
trap cleanup EXIT

echo "== 1. verification against memcpy (GB/s, one core)"
cargo bench -q -p fabricdoctor-perf --bench integrity 2>/dev/null | tee "$out/integrity.txt"

$fd perf server --bind 127.0.0.1 --port $port --transport tcp 2>/dev/null &
sleep 1
client() { $fd perf client 127.0.0.1 --port $port --transport tcp --json "$@"; }
for round in 1 2 3; do
  if [ $((round % 2)) = 1 ]; then
    client --op send --size 1048576 -D 4s > "$out/plain-$round.json"
    client --op send --size 1048576 -D 4s --validate > "$out/validate-$round.json"
  else
    client --op send --size 1048576 -D 4s --validate > "$out/validate-$round.json"
    client --op send --size 1048576 -D 4s > "$out/plain-$round.json"
  fi
  client --op write --size 1048576 -q 2 -t 4 -D 2s --validate > "$out/pairlike-$round.json"
  rm -rf "$out/burnin-$round"
  $fd burnin --local 2 --duration 30s --report-dir "$out/burnin-$round" > "$out/burnin-$round.txt" 2>&1 || true
done

python3 - "$out" <<'PY'
import json, statistics, sys
out = sys.argv[1]
def gbps(name, i):
    return json.load(open(f"{out}/{name}-{i}.json"))["runs"][0]["result"]["bw_avg_gbps"]
def median(name):
    return statistics.median(gbps(name, i) for i in range(1, 4))
def burnin(i):
    report = json.load(open(f"{out}/burnin-{i}/report.json"))
    means = [p["bw_mean_gbps"] for m in report["pairs"] for p in m["pairs"] if p.get("bw_mean_gbps")]
    return statistics.median(means)
plain, validate = median("plain"), median("validate")
pairlike = median("pairlike")
pair = statistics.median(burnin(i) for i in range(1, 4))
print(f"== 2. perf client send 1 MiB: {plain:.2f} Gb/s plain, {validate:.2f} Gb/s --validate: {validate / plain:.2}x (goal >= 0.8x)")
print(f"== 3. burn-in pair {pair:.2f} Gb/s, perf client with its settings {pairlike:.2f} Gb/s: {pair / pairlike:.2}x (goal >= 0.8x)")
PY
