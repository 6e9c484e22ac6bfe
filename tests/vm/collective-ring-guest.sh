#!/usr/bin/env bash
# collective-ring-guest.sh - GUEST-side script: fabricdoctor's collectives with one rank per guest, over
# Soft-RoCE (--transport verbs) and over TCP on the same guests, then a rank killed mid-run.
#
#   tests/vm/run-ring-guests.sh --guests 3 --copy target/debug/fabricdoctor tests/vm/collective-ring-guest.sh OUT
#
# The integration test tests/integration/collective.rs runs this and judges OUT/guest-*/. In each guest:
#   runs.tsv           name, exit code, milliseconds taken, end (epoch ms), command: a line per run
#   kill.at, stall.at  rank 1: when it killed or stopped its rank (epoch ms; the guests' clocks come
#                      from QEMU's RTC at boot and agree only to about a second)
#   NAME.json/.err     stdout (rank 0: the JSON report) and stderr of each run
#   environment.txt    versions, ibv_devinfo
# Runs, in order (every rank runs each one; ranks meet at rank 0, port per run):
#   verbs-allreduce    AllReduce f32 sum over verbs, 4 KiB to 1 MiB, data-checked (-c 1)
#   verbs-alltoall     AlltoAll over verbs (the full mesh: two queue pairs per pair of ranks)
#   verbs-broadcast    Broadcast from rank 1 over verbs
#   tcp-allreduce      the same AllReduce over TCP, for comparison on the same guests
#   verbs-allreduce-tree, verbs-allreduce-ring
#                      AllReduce over verbs with each algorithm forced (--algo), 4 B to 256 KiB
#   kill-allreduce     AllReduce over verbs with many iterations; rank 1 kills itself once the run
#                      is under way; the others must stop on their own, naming rank 1
#   stall-allreduce    the same with rank 1 stopped (SIGSTOP) instead: the others give up within
#                      their --timeout (10 s); rank 1 records when in stall.at
#   local-*            guest 0 only: AllReduce, AllGather, ReduceScatter with 4 local ranks (--np 4)
#                      over its rxe0, bf16, odd counts
# Timing under TCG is functional: compare verbs with TCP only within one run.
#
# Exit code: 0 when every step ran (the host test judges the results), 3 when the guest has no RDMA
# device (the host test then fails: it never passes without one).
set -uo pipefail

out=${FD_VM_OUT:?run me through run-ring-guests.sh}
rank=${FD_VM_RANK:?}
hosts=${FD_VM_HOSTS:?}
gid=${FD_VM_RXE_GID_INDEX:?}

log() { echo "collective-ring-guest: $(cut -d' ' -f1 /proc/uptime)s rank $rank: $*"; }

fd_require_rxe0 collective-ring-guest  # from rxe-harness.sh: exit 3 without an RDMA device
{
  echo "kernel: $(uname -r)"
  echo "fabricdoctor: $(fabricdoctor --version 2>&1)"
  echo "hosts: $hosts rank: $rank gid_index: $gid"
  ibv_devinfo -d rxe0 2>&1
} > "$out/environment.txt"

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# run NAME LIMIT ARGS...: fabricdoctor perf ARGS with this rank's rendezvous flags.
run() {
  local name=$1 limit=$2; shift 2
  local start; start=$(now_ms)
  log "$name"
  timeout "$limit" fabricdoctor perf "$@" --hosts "$hosts" --rank "$rank" > "$out/$name.json" 2> "$out/$name.err"
  local rc=$?
  local end; end=$(now_ms)
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$rc" "$((end - start))" "$end" "$*" >> "$out/runs.tsv"
  log "$name: exit code $rc"
}

verbs=(--transport verbs -d rxe0 -x "$gid")
# The first run waits for the slowest guest to boot: a long rendezvous timeout.
run verbs-allreduce 300 allreduce "${verbs[@]}" --port 18600 -b 4K -e 1M -f 4 -n 2 -w 1 -c 1 --timeout 120s --json
run verbs-alltoall 200 alltoall "${verbs[@]}" --port 18601 -b 3K -e 768K -f 16 -n 2 -w 1 -c 1 --timeout 60s --json
run verbs-broadcast 200 broadcast "${verbs[@]}" --port 18602 -b 4K -e 1M -f 16 -n 2 -w 1 -c 1 --root-rank 1 \
  --timeout 60s --json
run tcp-allreduce 200 allreduce --transport tcp --port 18603 -b 4K -e 1M -f 4 -n 2 -w 1 -c 1 --timeout 60s --json
# Each AllReduce algorithm forced over verbs, 4 B (fewer elements than ranks) to 256 KiB: recursive
# doubling with 3 ranks folds rank 0 into rank 1 and back.
for algo in tree ring; do
  port=$([ "$algo" = tree ] && echo 18606 || echo 18607)
  run "verbs-allreduce-$algo" 200 allreduce "${verbs[@]}" --port "$port" --algo "$algo" -b 4 -e 256K -f 8 -n 2 -w 1 \
    -c 1 --timeout 60s --json
done

# disrupt NAME SIGNAL TIMEOUT: an AllReduce over verbs that rank 1 disrupts. Rank 1 starts like the
# others, waits until the collective runs (its connection to rank 0 and two data connections per
# channel are up, then 6 s more: the queue pairs are set up over those connections after they open,
# and a CI run whose host was busy with other builds saw the 3 s this waited before end inside that
# set-up, where rank 0 names the rank it waits on), records the time in NAME.at and sends SIGNAL to
# its own rank. The
# others run with --timeout TIMEOUT and must stop on their own. After SIGSTOP, rank 1 kills its
# stopped rank once the others are surely done.
disrupt() {
  local name=$1 signal=$2 limit=$3 port=$4
  local args=(allreduce "${verbs[@]}" --port "$port" -b 1M -e 1M -n 100000 -w 0 -c 0 --timeout "$limit")
  if [ "$rank" != 1 ]; then
    run "$name-allreduce" 120 "${args[@]}"
    return
  fi
  local start; start=$(now_ms)
  fabricdoctor perf "${args[@]}" --hosts "$hosts" --rank "$rank" > "$out/$name-allreduce.json" \
    2> "$out/$name-allreduce.err" &
  local pid=$!
  for _ in $(seq 1 600); do
    [ "$(ss -Htn state established 2> /dev/null | grep -c .)" -ge 5 ] && break
    sleep 0.1
  done
  sleep 6
  now_ms > "$out/$name.at"
  kill "-$signal" "$pid"
  log "$name-allreduce: rank 1 sent SIG$signal"
  [ "$signal" = STOP ] && { sleep 40; kill -KILL "$pid"; }
  wait "$pid"
  local rc=$? end; end=$(now_ms)
  printf '%s\t%s\t%s\t%s\t%s\n' "$name-allreduce" "$rc" "$((end - start))" "$end" "SIG$signal by the test" \
    >> "$out/runs.tsv"
}
# Rank kill: SIGKILL, no chance to say goodbye; the others notice its closed connections.
disrupt kill KILL 20s 18604
# Rank stall: SIGSTOP, alive with its connections open but silent; the others give up after 10 s.
disrupt stall STOP 10s 18605

# Four local ranks in guest 0 over its own rxe0 (the device loops the traffic back): odd counts,
# counts smaller than the ranks, bf16, and the per-rank layouts of AllGather and ReduceScatter split
# over two channels.
if [ "$rank" = 0 ]; then
  local_args=(--np 4 "${verbs[@]}" -b 2 -e 3K -f 3 --dtype bf16 -n 1 -w 0 -c 1 --timeout 60s --json)
  for collective in allreduce allgather reducescatter; do
    name=local-$collective
    start=$(now_ms)
    log "$name"
    timeout 200 fabricdoctor perf "$collective" "${local_args[@]}" > "$out/$name.json" 2> "$out/$name.err"
    rc=$?
    end=$(now_ms)
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$rc" "$((end - start))" "$end" "${local_args[*]}" >> "$out/runs.tsv"
  done
fi
exit 0
