#!/usr/bin/env bash
# The main job on a fresh machine: build fabricdoctor, check this node, capture it, and show what the
# tool finds on a faulty GPU/RDMA node (a fixture) — so even a machine without RDMA or GPUs shows real
# work. Reports land in ${OUT:-out/} (JSON, JUnit XML, Markdown, snapshot).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out}
# shellcheck source=scripts/setup.sh
. scripts/setup.sh
setup_build_tools
cargo build --release -q
# The binary where cargo put it (CARGO_TARGET_DIR moves it).
fd="${CARGO_TARGET_DIR:-target}/release/fabricdoctor"
mkdir -p "$OUT"

# Runs a fabricdoctor command whose exit code is a verdict (0 no fail, 1 findings) and stops the job
# only on 2 and above (the tool could not run). The code goes to the variable named first.
verdict() {
  local into=$1 code=0
  shift
  "$@" || code=$?
  printf -v "$into" '%s' "$code"
  if [ "$code" -ge 2 ]; then
    echo "main-job: '$*' could not run (exit $code)" >&2
    exit "$code"
  fi
}

echo "== fabricdoctor check (this node)"
verdict status $fd check
verdict _ $fd check --json -o "$OUT/check.json"
verdict _ $fd check --format junit -o "$OUT/check-junit.xml"
verdict _ $fd check --format markdown -o "$OUT/check.md"
verdict _ $fd check --no-sample --html "$OUT/check.html" >/dev/null
echo
echo "== fabricdoctor burnin --local 4 --duration 45s (four agents on this machine over loopback: check,"
echo "   loopback, pairwise matrix, isolation, all-to-all, AllReduce, soak, sign-off; a real run, compressed)"
# The shared-machine playbook is the default protocol with tolerances for 'hosts' that compete for
# one machine's CPUs (tests/fixtures/burnin/shared-machine.toml says why).
rm -rf "$OUT/burnin"
verdict burnin_status $fd burnin --local 4 --duration 45s --playbook tests/fixtures/burnin/shared-machine.toml --report-dir "$OUT/burnin"
echo "exit code of 'burnin': $burnin_status (0 signed off, 1 findings, 2 could not run)"
echo
echo "== fabricdoctor counters --interval 1s (this node's RDMA ports and netdevs: what moved in one second)"
$fd counters --interval 1s --count 1
$fd counters --format prometheus -o "$OUT/fabricdoctor.prom"
rm -rf "$OUT/snapshot.tar.gz"
$fd snapshot "$OUT/snapshot.tar.gz"

echo
echo "== fabricdoctor topo (HGX H100 fixture, tests/fixtures/hgx-h100)"
$fd topo --root tests/fixtures/hgx-h100

echo
echo "== fabricdoctor check on a faulty node (tests/fixtures/faulty-node): what failures look like"
verdict _ $fd check --root tests/fixtures/faulty-node --hide-pass

echo
echo "== counter checks on two captures of a RoCE node in a PFC pause storm (tests/fixtures/counters/pfc-storm)"
verdict _ $fd check --root tests/fixtures/counters/pfc-storm/after --before tests/fixtures/counters/pfc-storm/before \
  --only pfc --only ecn --only rdma.retransmit --hide-pass

echo
echo "== fabricdoctor triage on a hung job's NCCL logs from three hosts (tests/fixtures/triage/hang-rank-missing)"
verdict _ $fd triage tests/fixtures/triage/hang-rank-missing

echo
echo "reports of this node: $OUT/check.json $OUT/check-junit.xml $OUT/check.md $OUT/check.html $OUT/fabricdoctor.prom $OUT/snapshot.tar.gz"
echo "burn-in reports: $OUT/burnin/{report.json,report.html,summary.md,junit.xml,events.jsonl}"
echo "exit code of 'check' on this node: $status (0 no fail, 1 a fail/error verdict, 2 tool error)"
# The job itself succeeded when every command ran; the node's verdicts are in the exit codes above
# and in the reports.
