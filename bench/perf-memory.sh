#!/usr/bin/env bash
# Benchmark: memory of long perf runs. Peak RSS (GNU time's %M) of `perf client --test lat` and of a
# bandwidth run on loopback TCP, for a short and a long duration: the long run must stay under 50 MB
# and about where the short one is (latency keeps at most 10^6 exact samples, then a fixed histogram;
# bandwidth keeps at most 10^5 timeline marks).
#
#   bash bench/perf-memory.sh            # 10 s and 10 min (FD_LONG=600)
#   FD_LONG=120 bash bench/perf-memory.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v /usr/bin/time >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q time
cargo build --release -q
fd=target/release/fabricdoctor
port=$((20000 + RANDOM % 20000))
long=${FD_LONG:-600}
cleanup() { kill $(jobs -p) 2>/dev/null || true; }
trap cleanup EXIT
$fd perf server --bind 127.0.0.1 --port $port --transport tcp 2>/dev/null &
sleep 1
rss() {
  /usr/bin/time -f '%M' "$fd" perf client 127.0.0.1 --port $port --transport tcp --json "$@" 2>&1 >/dev/null | tail -n1
}
for seconds in 10 "$long"; do
  lat=$(rss --test lat --size 8 -D "${seconds}s")
  bw=$(rss --op write --size 65536 -D "${seconds}s")
  echo "-D ${seconds}s: latency peak RSS $((lat / 1024)) MiB, bandwidth peak RSS $((bw / 1024)) MiB (goal < 50 MB)"
done
