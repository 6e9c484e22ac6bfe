#!/usr/bin/env bash
# Benchmark: `fabricdoctor perf allreduce` against OpenMPI's MPI_Allreduce on a 4-host rig of network
# namespaces whose links are shaped to a rate R, in the same run, and prints busbw / R for each and their ratio.
# Goals (issue #5): fabricdoctor busbw >= 0.90 R for sizes >= 64 MiB, and >= 1.2x OpenMPI.
#
#   bash bench/allreduce-rig.sh                     # R = 1 Gbit/s, 3 rounds, medians
#   RATE=500mbit ROUNDS=1 bash bench/allreduce-rig.sh
#   MPI_ONLY=1 bash bench/allreduce-rig.sh          # rig + OpenMPI only (no fabricdoctor)
#   FD_ARGS="--channels 4" bash bench/allreduce-rig.sh
#
# Environment: RATE (tc rate, kbit/mbit/gbit; default 1gbit), ROUNDS (3), FABRICDOCTOR (binary; default
# target/release/fabricdoctor, rebuilt with cargo), FD_ARGS (extra `perf allreduce` arguments, split on
# spaces), RUN_LIMIT_S (bound on each collective run; 600), MPI_ONLY, RAW_DIR (when set, every run's raw output
# is copied there, also when a run fails).
#
# Rig (one run's names all carry the PID, so concurrent runs and the host's own network are untouched):
#
#   netns fdbench-PID-br:   br0 (bridge) -- p0 p1 p2 p3         <- tbf on pI: ingress to host I
#                                           |  |  |  |  (veth pairs)
#   netns fdbench-PID-hI:   eth0 10.213.0.(I+1)/24              <- tbf on eth0: egress of host I
#
# Every link is shaped in both directions with `tbf rate R burst 128kb latency 10ms`: /work/shared/bench-notes.md
# measured that burst as the one that neither breaks TCP (32kb: retransmits) nor overshoots the real ceiling
# (1mb+), which is 0.956 R at MTU 1500 because tbf counts whole frames. Rank I runs in host I.
#
# Each round runs, in order: OpenMPI default allreduce, OpenMPI forced ring, fabricdoctor; medians over rounds.
# Sizes 1 MiB .. 256 MiB (x4), 2 warm-up + 5 timed iterations, float sum, out-of-place for both tools.
# Needs root (namespaces, tc). Installs openmpi-bin and libopenmpi-dev when missing (Debian packages).
set -euo pipefail
cd "$(dirname "$0")/.."

RATE=${RATE:-1gbit}
ROUNDS=${ROUNDS:-3}
FABRICDOCTOR=${FABRICDOCTOR:-target/release/fabricdoctor}
RUN_LIMIT_S=${RUN_LIMIT_S:-600}
MPI_ONLY=${MPI_ONLY:-}
read -r -a fd_args <<<"${FD_ARGS:-}"
RAW_DIR=${RAW_DIR:-}
NHOSTS=4
SUBNET=10.213.0.0/24
SWEEP=(-b 1M -e 256M -f 4 -n 5 -w 2)

die() { echo "allreduce-rig: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "needs root (network namespaces and tc)"
# R in bits/s, from tc's own unit names (tc(8): kbit, mbit, gbit are 1000-based bits per second).
[[ $RATE =~ ^([0-9]+)(kbit|mbit|gbit)$ ]] || die "RATE must look like 500mbit or 1gbit, got '$RATE'"
case ${BASH_REMATCH[2]} in kbit) mult=1000 ;; mbit) mult=1000000 ;; gbit) mult=1000000000 ;; esac
rate_bps=$((BASH_REMATCH[1] * mult))

if ! command -v mpirun >/dev/null || ! command -v mpicc >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q openmpi-bin libopenmpi-dev >/dev/null
fi
if [[ -z $MPI_ONLY ]]; then
  # The default binary is (re)built like perf-tcp.sh does, so a stale one from before `perf allreduce` is never
  # measured; cargo does nothing when it is up to date. An explicit FABRICDOCTOR is used as given.
  if [[ $FABRICDOCTOR == target/release/fabricdoctor ]]; then cargo build --release -q; fi
  [[ -x $FABRICDOCTOR ]] || die "FABRICDOCTOR=$FABRICDOCTOR is not executable"
  "$FABRICDOCTOR" perf allreduce --help >/dev/null || die "$FABRICDOCTOR has no 'perf allreduce' (MPI_ONLY=1 skips it)"
fi

tag=fdbench-$$
br=$tag-br
hosts=() addrs=()
for ((i = 0; i < NHOSTS; i++)); do hosts+=("$tag-h$i") addrs+=("10.213.0.$((i + 1))"); done
out=$(mktemp -d /tmp/$tag.XXXX)

cleanup() {
  local rc=$? ns pid
  trap - EXIT INT TERM
  # Processes outlive `ip netns del` (it only drops the name), so end ours first: everything in a namespace of
  # this run was started by this script.
  for ns in "${hosts[@]}" "$br"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
  done
  # Deleting a namespace destroys the veth ends in it, and with them their peers; the bridge goes with br.
  for ns in "${hosts[@]}" "$br"; do ip netns del "$ns" 2>/dev/null || true; done
  if [[ -n $RAW_DIR ]]; then
    mkdir -p "$RAW_DIR"
    cp "$out"/*.txt "$out"/*.err "$out"/*.json "$RAW_DIR"/ 2>/dev/null || true
  fi
  rm -rf "$out"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

shape() { # NS DEV: the shaping recipe from bench-notes.md
  ip -n "$1" link set "$2" up
  tc -n "$1" qdisc add dev "$2" root tbf rate "$RATE" burst 128kb latency 10ms
}
ip netns add "$br"
ip -n "$br" link add br0 type bridge
ip -n "$br" link set br0 up
for ((i = 0; i < NHOSTS; i++)); do
  ip netns add "${hosts[i]}"
  ip -n "${hosts[i]}" link set lo up
  ip -n "$br" link add "p$i" type veth peer name eth0 netns "${hosts[i]}"
  ip -n "$br" link set "p$i" master br0
  ip -n "${hosts[i]}" addr add "${addrs[i]}/24" dev eth0
  shape "$br" "p$i"
  shape "${hosts[i]}" eth0
done

# OpenMPI across namespaces (bench-notes.md): mpirun runs in host 0 so remote daemons can reach it; the rsh
# "agent" maps a hostfile address to its namespace instead of ssh-ing to it.
mpicc -O2 -o "$out/mpi_allreduce" bench/mpi_allreduce.c
{
  cat <<'AGENT'
#!/bin/sh
# plm_rsh_agent: $1 is the host (an address of the rig), the rest is the command to start there.
host=$1; shift
case $host in
AGENT
  for ((i = 0; i < NHOSTS; i++)); do echo "  ${addrs[i]}) ns=${hosts[i]} ;;"; done
  cat <<'AGENT'
  *) echo "rig agent: unknown host $host" >&2; exit 1 ;;
esac
exec ip netns exec "$ns" sh -c "$*"
AGENT
} >"$out/agent"
chmod +x "$out/agent"
printf '%s slots=1\n' "${addrs[@]}" >"$out/hostfile"

run_mpi() { # NAME [MCA...]: one OpenMPI sweep into $out/NAME.txt
  local name=$1
  shift
  # mpi_yield_when_idle: every namespace looks like its own node, so ranks would otherwise busy-poll on the 2
  # shared cores and results collapse 3-20x (bench-notes.md). In the background with `wait`, because bash runs
  # a trap only after a foreground child ends: INT or TERM then cleans up at once instead of after RUN_LIMIT_S.
  # -a 3 times each size by its slowest rank, for both tools (nccl-tests' default -a 1 averages ranks).
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ip netns exec "${hosts[0]}" \
    timeout -k 10 "$RUN_LIMIT_S" mpirun --allow-run-as-root -np "$NHOSTS" --hostfile "$out/hostfile" \
    --mca plm_rsh_agent "$out/agent" --mca plm_rsh_no_tree_spawn 1 \
    --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include "$SUBNET" --mca oob_tcp_if_include "$SUBNET" \
    --mca mpi_yield_when_idle 1 "$@" "$out/mpi_allreduce" "${SWEEP[@]}" -a 3 >"$out/$name.txt" 2>"$out/$name.err" &
  if ! wait $!; then
    cat "$out/$name.txt" "$out/$name.err" >&2
    die "OpenMPI run $name failed"
  fi
}

run_fd() { # NAME: every rank in its own namespace, started together; rank 0's JSON into $out/NAME.json
  local name=$1 port=$((20000 + RANDOM % 20000)) i failed=
  local pids=()
  for ((i = 0; i < NHOSTS; i++)); do
    ip netns exec "${hosts[i]}" timeout -k 10 "$RUN_LIMIT_S" "$FABRICDOCTOR" perf allreduce \
      --hosts "$(IFS=,; echo "${addrs[*]}")" --rank "$i" --port "$port" "${SWEEP[@]}" -a 3 "${fd_args[@]}" --json \
      >"$out/$name-$i.json" 2>"$out/$name-$i.err" &
    pids+=($!)
  done
  for ((i = 0; i < NHOSTS; i++)); do wait "${pids[i]}" || failed+=" $i"; done
  if [[ -n $failed ]]; then
    for ((i = 0; i < NHOSTS; i++)); do echo "--- rank $i" >&2; cat "$out/$name-$i.err" >&2; done
    die "fabricdoctor run $name failed (ranks:$failed)"
  fi
  cp "$out/$name-0.json" "$out/$name.json"
}

for ((round = 1; round <= ROUNDS; round++)); do
  run_mpi "mpi-default-$round"
  # Algorithm 4 of coll_tuned's allreduce is ring (ompi_info --param coll tuned --level 9).
  run_mpi "mpi-ring-$round" --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4
  [[ -n $MPI_ONLY ]] || run_fd "fd-$round"
done

python3 - "$out" "$ROUNDS" "$rate_bps" "$RATE" "${MPI_ONLY:+mpi-only}" <<'PY'
import json, statistics, sys
out, rounds, rate_bps, rate, mpi_only = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
rate_gBps = rate_bps / 8 / 1e9  # busbw is in GB/s (1e9 bytes/s), as in nccl-tests
MIB = 1 << 20

def mpi(name, r):
    rows = {}
    for line in open(f"{out}/{name}-{r}.txt"):
        if line.startswith("#") or not line.strip():
            continue
        f = line.split()
        if int(f[7]) != 0:
            sys.exit(f"allreduce-rig: {name}-{r}: {f[7]} wrong elements at size {f[0]}")
        rows[int(f[0])] = float(f[6])
    return rows

def fd(r):
    rows = {}
    for row in json.load(open(f"{out}/fd-{r}.json"))["rows"]:
        m = row["out_of_place"]
        if m["wrong"] != 0 or row["in_place"]["wrong"] != 0:
            sys.exit(f"allreduce-rig: fd-{r}: wrong elements at size {row['bytes']}")
        rows[row["bytes"]] = m["busbw_gbytes_per_second"]
    return rows

def medians(runs):
    return {s: statistics.median(run[s] for run in runs) for s in runs[0]}

default = medians([mpi("mpi-default", r) for r in range(1, rounds + 1)])
ring = medians([mpi("mpi-ring", r) for r in range(1, rounds + 1)])
ours = None if mpi_only else medians([fd(r) for r in range(1, rounds + 1)])
print(f"allreduce, 4 ranks, float sum, out-of-place, slowest rank's time; R = {rate} ({rate_gBps:.4f} GB/s)")
if ours is not None:
    doc = json.load(open(f"{out}/fd-1.json"))
    print(f"fabricdoctor {doc['tool_version']}: {doc['transport']}, {doc['channels']} channels")
print(f"busbw / R, median of {rounds} rounds; ratios are fabricdoctor's busbw over OpenMPI's")
head = f"{'size':>8} {'ompi-default':>12} {'ompi-ring':>10}"
print(head if ours is None else head + f" {'fabricdoctor':>12} {'vs default':>10} {'vs ring':>8}")
for size in sorted(default):
    if size < MIB:
        continue
    line = f"{size // MIB:>5}MiB {default[size] / rate_gBps:>12.3f} {ring[size] / rate_gBps:>10.3f}"
    if ours is not None:
        o = ours[size]
        line += f" {o / rate_gBps:>12.3f} {o / default[size]:>9.2f}x {o / ring[size]:>7.2f}x"
    print(line)
PY
