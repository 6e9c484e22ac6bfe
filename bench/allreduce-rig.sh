#!/usr/bin/env bash
# Benchmark: `fabricdoctor perf allreduce` against OpenMPI's MPI_Allreduce on a 4-host rig of network
# namespaces whose links are shaped to a rate R, in the same run, and prints busbw / R for each and their ratio.
# Goals (issue #5): fabricdoctor busbw >= 0.90 R for sizes >= 64 MiB, and >= 1.2x OpenMPI.
# Goals (issue #17): at every size from 4 B to 256 MiB, fabricdoctor `--algo auto` time <= OpenMPI's default
# MPI_Allreduce time and busbw >= OpenMPI's forced ring; >= 0.93 R at 64-256 MiB. The script prints the
# algorithm the cost model chose per size, its predicted busbw, and the crossover size.
#
#   bash bench/allreduce-rig.sh                     # R = 1 Gbit/s, 3 rounds, medians
#   RATE=500mbit ROUNDS=1 bash bench/allreduce-rig.sh
#   MPI_ONLY=1 bash bench/allreduce-rig.sh          # rig + OpenMPI only (no fabricdoctor)
#   FD_ARGS="--channels 4" bash bench/allreduce-rig.sh
#
# Environment: RATE (tc rate, kbit/mbit/gbit; default 1gbit), ROUNDS (3), FABRICDOCTOR (binary; default
# target/release/fabricdoctor, rebuilt with cargo), FD_ARGS (extra `perf allreduce` arguments, split on
# spaces), RUN_LIMIT_S (bound on each collective run; 600), MPI_ONLY, FD_ONLY (skip OpenMPI: for quick
# comparisons of fabricdoctor's own settings, no ratios), RAW_DIR (when set, every run's raw output
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
# Two sweeps per tool and round: 4 B .. 64 KiB (x4) with 10 warm-up + 50 timed iterations (a small size's time
# is tens of microseconds, so it needs many), and 256 KiB .. 256 MiB (x4) with 2 + 5; float sum, out-of-place
# for both tools. SMALL_ONLY=1 or LARGE_ONLY=1 runs one of them.
# Needs root (namespaces, tc). Installs openmpi-bin and libopenmpi-dev when missing (Debian packages).
set -euo pipefail
shopt -s extglob
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
SMALL=(-b 4 -e 64K -f 4 -n 50 -w 10)
LARGE=(-b 256K -e 256M -f 4 -n 5 -w 2)
SWEEPS=()
[[ -n ${LARGE_ONLY:-} ]] || SWEEPS+=(small)
[[ -n ${SMALL_ONLY:-} ]] || SWEEPS+=(large)
sweep_args() { if [[ $1 == small ]]; then echo "${SMALL[@]}"; else echo "${LARGE[@]}"; fi; }

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

run_mpi() { # NAME SWEEP [MCA...]: one OpenMPI sweep into $out/NAME.txt, tried twice
  # mpirun on this rig sometimes exits at start with no output at all (seen once in 2 of 12 runs of
  # a 3-round sweep), which would throw away the rounds already measured: one retry, said on stderr.
  if ! run_mpi_once "$@"; then
    echo "allreduce-rig: OpenMPI run $1 failed ($(tail -c 300 "$out/$1.err" | tr '\n' ' ')); trying it once more" >&2
    run_mpi_once "$@" || { cat "$out/$1.txt" "$out/$1.err" >&2; die "OpenMPI run $1 failed twice"; }
  fi
}

run_mpi_once() { # NAME SWEEP [MCA...]
  local name=$1 sweep
  read -r -a sweep <<<"$(sweep_args "$2")"
  shift 2
  # mpi_yield_when_idle: every namespace looks like its own node, so ranks would otherwise busy-poll on the 2
  # shared cores and results collapse 3-20x (bench-notes.md). In the background with `wait`, because bash runs
  # a trap only after a foreground child ends: INT or TERM then cleans up at once instead of after RUN_LIMIT_S.
  # -a 3 times each size by its slowest rank, for both tools (nccl-tests' default -a 1 averages ranks).
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ip netns exec "${hosts[0]}" \
    timeout -k 10 "$RUN_LIMIT_S" mpirun --allow-run-as-root -np "$NHOSTS" --hostfile "$out/hostfile" \
    --mca plm_rsh_agent "$out/agent" --mca plm_rsh_no_tree_spawn 1 \
    --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include "$SUBNET" --mca oob_tcp_if_include "$SUBNET" \
    --mca mpi_yield_when_idle 1 "$@" "$out/mpi_allreduce" "${sweep[@]}" -a 3 >"$out/$name.txt" 2>"$out/$name.err" &
  wait $!
}

run_fd() { # NAME SWEEP: every rank in its own namespace, started together; rank 0's JSON into $out/NAME.json
  local name=$1 port=$((20000 + RANDOM % 20000)) i failed= sweep
  read -r -a sweep <<<"$(sweep_args "$2")"
  local pids=()
  for ((i = 0; i < NHOSTS; i++)); do
    ip netns exec "${hosts[i]}" timeout -k 10 "$RUN_LIMIT_S" "$FABRICDOCTOR" perf allreduce \
      --hosts "$(IFS=,; echo "${addrs[*]}")" --rank "$i" --port "$port" "${sweep[@]}" -a 3 "${fd_args[@]}" --json \
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
  for sweep in "${SWEEPS[@]}"; do
    if [[ -z ${FD_ONLY:-} ]]; then
      run_mpi "mpi-default-$sweep-$round" "$sweep"
      # Algorithm 4 of coll_tuned's allreduce is ring (ompi_info --param coll tuned --level 9).
      run_mpi "mpi-ring-$sweep-$round" "$sweep" --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4
    fi
    [[ -n $MPI_ONLY ]] || run_fd "fd-$sweep-$round" "$sweep"
  done
done

if [[ -n ${FD_ONLY:-} ]]; then
  for f in "$out"/fd-{small,large}-+([0-9]).json; do
    [[ -e $f ]] || continue
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for r in d["rows"]: print(r["bytes"], r["algorithm"], round(r["out_of_place"]["time_us"],1), round(r["out_of_place"]["busbw_gbytes_per_second"]/0.125,3), round((r.get("predicted_busbw_gbytes_per_second") or 0)/0.125,3))' "$f"
  done
  exit 0
fi
python3 - "$out" "$ROUNDS" "$rate_bps" "$RATE" "${MPI_ONLY:+mpi-only}" "${SWEEPS[@]}" <<'PY'
import json, statistics, sys
out, rounds, rate_bps, rate, mpi_only = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
sweeps = sys.argv[6:]
rate_gBps = rate_bps / 8 / 1e9  # busbw is in GB/s (1e9 bytes/s), as in nccl-tests
MIB = 1 << 20

def mpi(name, r):
    rows = {}
    for sweep in sweeps:
        for line in open(f"{out}/{name}-{sweep}-{r}.txt"):
            if line.startswith("#") or not line.strip():
                continue
            f = line.split()
            if int(f[7]) != 0:
                sys.exit(f"allreduce-rig: {name}-{sweep}-{r}: {f[7]} wrong elements at size {f[0]}")
            rows[int(f[0])] = (float(f[4]), float(f[6]))
    return rows

def fd(r):
    rows = {}
    for sweep in sweeps:
        doc = json.load(open(f"{out}/fd-{sweep}-{r}.json"))
        for row in doc["rows"]:
            m = row["out_of_place"]
            if m["wrong"] != 0 or row["in_place"]["wrong"] != 0:
                sys.exit(f"allreduce-rig: fd-{sweep}-{r}: wrong elements at size {row['bytes']}")
            rows[row["bytes"]] = (m["time_us"], m["busbw_gbytes_per_second"], row["algorithm"],
                                  row.get("predicted_busbw_gbytes_per_second", 0.0))
    return rows

def medians(runs):
    out = {}
    for size in runs[0]:
        values = [run[size] for run in runs]
        columns = []
        for i in range(len(values[0])):
            column = [v[i] for v in values]
            columns.append(statistics.median(column) if isinstance(column[0], float) else max(set(column), key=column.count))
        out[size] = tuple(columns)
    return out

def label(size):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            return f"{size >> shift}{unit}"
    return f"{size}B"

default = medians([mpi("mpi-default", r) for r in range(1, rounds + 1)])
ring = medians([mpi("mpi-ring", r) for r in range(1, rounds + 1)])
ours = None if mpi_only else medians([fd(r) for r in range(1, rounds + 1)])
print(f"allreduce, 4 ranks, float sum, out-of-place, slowest rank's time; R = {rate} ({rate_gBps:.4f} GB/s)")
if ours is not None:
    doc = json.load(open(f"{out}/fd-{sweeps[-1]}-1.json"))
    model = doc.get("model") or {}
    print(f"fabricdoctor {doc['tool_version']}: {doc['transport']}, {doc['channels']} channels, --algo "
          f"{doc['spec'].get('algorithm', 'ring')}; cost model of round 1: ring {model.get('ring_step_us', 0):.1f} us per step, "
          f"tree {model.get('tree_step_us') or 0:.1f} us per step, {model.get('bandwidth_gbytes_per_second', 0) / rate_gBps:.3f} R per link")
print(f"median of {rounds} rounds; time in us; busbw / R; 'time x' is fabricdoctor's time over OpenMPI default's "
      "(<= 1 is the goal), 'vs ring' its busbw over OpenMPI forced ring's (>= 1)")
head = f"{'size':>8} {'ompi-def us':>11} {'ompi-ring':>9}"
print(head if ours is None else head + f" {'fd us':>9} {'fd busbw':>8} {'algo':>5} {'predicted':>9} {'time x':>7} {'vs ring':>7}")
crossover = None
for size in sorted(default):
    line = f"{label(size):>8} {default[size][0]:>11.1f} {ring[size][1] / rate_gBps:>9.3f}"
    if ours is not None:
        time, busbw, algorithm, predicted = ours[size]
        if algorithm == "ring" and crossover is None:
            crossover = size
        vs_ring = f"{busbw / ring[size][1]:>6.2f}x" if ring[size][1] > 0 else "      -"
        line += (f" {time:>9.1f} {busbw / rate_gBps:>8.3f} {algorithm:>5} {predicted / rate_gBps:>9.3f}"
                 f" {time / default[size][0]:>6.2f}x {vs_ring}")
    print(line)
if ours is not None:
    print(f"crossover chosen by the model: ring from {label(crossover) if crossover else 'no size of the sweep'}")
PY
