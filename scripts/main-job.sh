#!/usr/bin/env bash
# The main job on a fresh machine: build fabricdoctor, check this node, capture it, and show what the
# tool finds on a faulty GPU/RDMA node (a fixture) — so even a machine without RDMA or GPUs shows real
# work. Reports land in ${OUT:-out/} (JSON, JUnit XML, Markdown, snapshot).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out}
command -v cargo >/dev/null || { echo "main-job: cargo not found; install Rust (https://rustup.rs)" >&2; exit 2; }
# The verbs binding (sideway -> rdma-mummy-sys) builds with cmake and libclang.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  need=()
  command -v cmake >/dev/null || need+=(cmake)
  ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 || need+=(libclang-dev)
  [ ${#need[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi
cargo build --release -q || exit 2
fd=target/release/fabricdoctor
mkdir -p "$OUT"

echo "== fabricdoctor check (this node)"
$fd check
status=$?
$fd check --json -o "$OUT/check.json"
$fd check --format junit -o "$OUT/check-junit.xml"
$fd check --format markdown -o "$OUT/check.md"
$fd check --no-sample --html "$OUT/check.html" >/dev/null
echo
echo "== fabricdoctor burnin --local 4 --duration 45s (four agents on this machine over loopback: check,"
echo "   loopback, pairwise matrix, isolation, all-to-all, AllReduce, soak, sign-off; a real run, compressed)"
# The shared-machine playbook is the default protocol with tolerances for 'hosts' that compete for
# one machine's CPUs (tests/fixtures/burnin/shared-machine.toml says why).
rm -rf "$OUT/burnin"
$fd burnin --local 4 --duration 45s --playbook tests/fixtures/burnin/shared-machine.toml --report-dir "$OUT/burnin"
burnin_status=$?
echo "exit code of 'burnin': $burnin_status (0 signed off, 1 findings, 2 could not run)"
echo
echo "== fabricdoctor counters --interval 1s (this node's RDMA ports and netdevs: deltas and rates)"
$fd counters --interval 1s --count 1 --all | head -40
$fd counters --format prometheus -o "$OUT/fabricdoctor.prom"
rm -rf "$OUT/snapshot.tar.gz"
$fd snapshot "$OUT/snapshot.tar.gz"

echo
echo "== fabricdoctor topo (HGX H100 fixture, tests/fixtures/hgx-h100)"
$fd topo --root tests/fixtures/hgx-h100

echo
echo "== fabricdoctor check on a faulty node (tests/fixtures/faulty-node): what failures look like"
$fd check --root tests/fixtures/faulty-node | grep -v '^PASS'

echo
echo
echo "== counter checks on two captures of a RoCE node in a PFC pause storm (tests/fixtures/counters/pfc-storm)"
$fd check --root tests/fixtures/counters/pfc-storm/after --before tests/fixtures/counters/pfc-storm/before \
  --only pfc --only ecn --only rdma.retransmit | grep -v '^PASS'

echo
echo "== fabricdoctor triage on a hung job's NCCL logs from three hosts (tests/fixtures/triage/hang-rank-missing)"
$fd triage tests/fixtures/triage/hang-rank-missing | head -40

echo "reports of this node: $OUT/check.json $OUT/check-junit.xml $OUT/check.md $OUT/check.html $OUT/fabricdoctor.prom $OUT/snapshot.tar.gz"
echo "burn-in reports: $OUT/burnin/{report.json,report.html,summary.md,junit.xml,events.jsonl}"
echo "exit code of 'check' on this node: $status (0 no fail, 1 a fail/error verdict, 2 tool error)"
# The job itself succeeded if the tool ran; the node's verdict is in the exit code above and the reports.
[ "$status" -le 1 ] && [ "$burnin_status" -le 1 ]
