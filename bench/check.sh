#!/usr/bin/env bash
# Benchmark: `fabricdoctor check` on the HGX H100 fixture (8 GPUs, 8 ConnectX-7, 58 PCI functions,
# 177 findings). Targets (issue #2): under 50 ms wall and 20 MB peak RSS.
#
# Peer, measured in the same run: reading the same tree with coreutils (`find -type f -exec cat`),
# i.e. the floor cost of the I/O alone, so the ratio shows what parsing, checking and rendering add.
#
#   bash bench/check.sh            # prints hyperfine's table and the peak RSS
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { apt-get install -y -q hyperfine >/dev/null; }
cargo build --release -q
tree=tests/fixtures/hgx-h100
bin=target/release/fabricdoctor
hyperfine --warmup 5 --runs 50 -N \
  --export-json target/bench-check.json \
  "$bin check --root $tree --json" \
  "$bin check --root $tree" \
  "find $tree -type f -exec cat {} +"
rss_kib=$(/usr/bin/time -f '%M' "$bin" check --root "$tree" --json 2>&1 >/dev/null | tail -n1)
echo "peak RSS of check --json on $tree: ${rss_kib} KiB"
python3 - <<'PY'
import json
runs = {r["command"]: r for r in json.load(open("target/bench-check.json"))["results"]}
check = next(r for c, r in runs.items() if c.endswith("--json"))
peer = next(r for c, r in runs.items() if c.startswith("find"))
print(f"check --json: mean {check['mean']*1000:.1f} ms (max {check['max']*1000:.1f} ms); "
      f"I/O floor (find+cat): {peer['mean']*1000:.1f} ms; ratio {check['mean']/peer['mean']:.2f}x")
PY
