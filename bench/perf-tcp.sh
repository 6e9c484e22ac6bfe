#!/usr/bin/env bash
# Benchmark: fabricdoctor's TCP transport against the peers operators use, in the same run, loopback.
#   bandwidth: `perf client --op write --size 131072 -D 5s` vs iperf3 single stream (128 KiB writes, 5 s)
#              goal >= 0.95x
#   latency:   `perf client --test lat --size 14 -D 5s` vs sockperf ping-pong (14-byte messages, 5 s),
#              both one-way (half round trip) averages; goal <= 1.1x
# Three rounds, medians reported. Installs iperf3 and sockperf when missing (Debian packages).
#
#   bash bench/perf-tcp.sh
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in iperf3 sockperf; do
  command -v $tool >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q $tool >/dev/null
done
cargo build --release -q
fd=target/release/fabricdoctor
port=$((20000 + RANDOM % 20000))
out=$(mktemp -d)
cleanup() { kill $(jobs -p) 2>/dev/null || true; rm -rf "$out"; }
trap cleanup EXIT

$fd perf server --bind 127.0.0.1 --port $port --transport tcp 2>/dev/null &
iperf3 -s -p $((port + 1)) >/dev/null 2>&1 &
sockperf sr --tcp -i 127.0.0.1 -p $((port + 2)) >/dev/null 2>&1 &
sleep 1

for round in 1 2 3; do
  $fd perf client 127.0.0.1 --port $port --transport tcp --op write --size 131072 -D 5s --json > "$out/fd-bw-$round.json"
  iperf3 -c 127.0.0.1 -p $((port + 1)) -t 5 -J > "$out/iperf3-$round.json"
  $fd perf client 127.0.0.1 --port $port --transport tcp --test lat --size 14 -D 5s --json > "$out/fd-lat-$round.json"
  sockperf pp --tcp -i 127.0.0.1 -p $((port + 2)) -t 5 -m 14 > "$out/sockperf-$round.txt" 2>&1
done

python3 - "$out" <<'PY'
import json, re, statistics, sys
out = sys.argv[1]
def fd(kind, key, n):
    return statistics.median(json.load(open(f"{out}/fd-{kind}-{i}.json"))["runs"][0]["result"][key] for i in range(1, n + 1))
iperf = statistics.median(json.load(open(f"{out}/iperf3-{i}.json"))["end"]["sum_received"]["bits_per_second"] / 1e9 for i in range(1, 4))
sockperf = statistics.median(float(re.search(r"avg-latency=([0-9.]+)", open(f"{out}/sockperf-{i}.txt").read()).group(1)) for i in range(1, 4))
bw, lat = fd("bw", "bw_avg_gbps", 3), fd("lat", "lat_avg_us", 3)
lat_p50 = fd("lat", "lat_typical_us", 3)
print(f"bandwidth: fabricdoctor {bw:.2f} Gb/s, iperf3 {iperf:.2f} Gb/s, ratio {bw / iperf:.2f}x (goal >= 0.95)")
print(f"latency:   fabricdoctor avg {lat:.2f} us (median {lat_p50:.2f}), sockperf avg {sockperf:.2f} us, ratio {lat / sockperf:.2f}x (goal <= 1.1)")
PY
