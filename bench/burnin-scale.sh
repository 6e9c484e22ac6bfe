#!/usr/bin/env bash
# Burn-in isolation at fleet scale, on simulated fabrics (`fabricdoctor burnin --simulate MODEL`):
# the real coordinator, schedule, isolation and reports over a model of hosts, rails and leaves
# with ±NOISE run-to-run noise and injected faults. For each host count, SEEDS runs with 1 to 10
# faults (run s gets 1 + s mod 10) of the kinds below at random hosts, rails and severities, and
# SEEDS fault-free runs; prints one line per size:
#
#   hosts N precision P recall R rounds K sim_time T coordinator_rss M false_positive_runs F runs U report_mb J page_mb H cpu_per_round_ms C wall W
#
#   precision, recall  over every pinned fault of the faulted runs (simulation.json's score: a
#                      suspect naming the injected host, host and rail, or path)
#   rounds             isolation retest rounds per injected fault (first pass, every rail), mean
#   sim_time           simulated seconds from the start to the end of the first pass's isolation, mean
#   coordinator_rss    the coordinator's peak resident set, MiB, largest of the size's runs
#   false_positive_runs  fault-free runs that named any suspect
#   report_mb, page_mb   the largest report.json and report.html of the size's runs, MB (above 128
#                      hosts the pairs are summarised and every pair is in pairs.jsonl beside them)
#   cpu_per_round_ms   the coordinator's CPU time (user + system) over a whole run divided by the
#                      pair rounds of its first pass (every rail's), mean over the size's runs: an
#                      upper bound on what one round costs the coordinator, the other phases included
#   wall               the size's wall time, seconds
#
# Environment: SIZES ("64 256"), SEEDS (20), RAILS (1), NOISE (0.03), DURATION (the burn-in's
# --duration; its pair tests scale with it; default 10m), KINDS (slow_host slow_nic bad_cable
# bad_leaf_port slow_path flapping), PLAYBOOK (a playbook file for every run, e.g. one with
# pairwise.pairing = "leaf"; a slow path between two hosts that pairing never meets is not measured,
# so leave slow_path out of KINDS then), FABRICDOCTOR (binary; built with cargo when not given),
# RAW_DIR (keep every run's directory).
set -euo pipefail
cd "$(dirname "$0")/.."

SIZES=${SIZES:-64 256}
SEEDS=${SEEDS:-20}
RAILS=${RAILS:-1}
NOISE=${NOISE:-0.03}
DURATION=${DURATION:-10m}
KINDS=${KINDS:-slow_host slow_nic bad_cable bad_leaf_port slow_path flapping}
FABRICDOCTOR=${FABRICDOCTOR:-target/release/fabricdoctor}
RAW_DIR=${RAW_DIR:-}
PLAYBOOK=${PLAYBOOK:-}
playbook_args=()
if [[ -n $PLAYBOOK ]]; then playbook_args=(--playbook "$PLAYBOOK"); fi

die() { echo "burnin-scale: $*" >&2; exit 2; }
command -v python3 >/dev/null || die "python3 is needed to draw the faults and add up the scores"
[[ -x /usr/bin/time ]] || die "/usr/bin/time (package time) is needed for the coordinator's peak RSS"
if [[ $FABRICDOCTOR == target/release/fabricdoctor ]]; then cargo build --release -q; fi
[[ -x $FABRICDOCTOR ]] || die "FABRICDOCTOR=$FABRICDOCTOR is not executable"

work=$(mktemp -d /tmp/fd-burnin-scale-XXXXXX)
trap 'rm -rf "$work"' EXIT

# The model of one run: `model HOSTS SEED FAULTS` on stdout.
model() {
  python3 - "$1" "$2" "$3" "$RAILS" "$NOISE" "$KINDS" <<'EOF'
import random, sys
hosts, seed, faults, rails, noise, kinds = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6].split()
draw = random.Random(seed * 7919 + hosts)
print(f"hosts = {hosts}\nrails = {rails}\nhosts_per_leaf = 32\nnoise = {noise}\nseed = {seed}")
# Faults on distinct hosts: two faults at one host would be one suspect.
used = draw.sample(range(hosts), min(hosts, 2 * faults))
for index in range(faults):
    kind = kinds[(seed + index) % len(kinds)]
    host, rail = used[2 * index], draw.randrange(rails)
    # Severities a burn-in should catch: below its 0.93 tolerance with room for the noise.
    fraction = round(draw.uniform(0.3, 0.85), 2)
    print("[[faults]]")
    print(f'kind = "{kind}"')
    if kind == "slow_path":
        print(f"a = {host}\nb = {used[2 * index + 1]}\nrail = {rail}\nfraction = {fraction}")
    elif kind == "flapping":
        print(f"host = {host}\nrail = {rail}\nperiod_s = 20.0\ndown_s = 12.0")
    elif kind == "slow_host":
        print(f"host = {host}\nfraction = {fraction}")
    else:
        print(f"host = {host}\nrail = {rail}\nfraction = {fraction}")
EOF
}

for hosts in $SIZES; do
  started=$(date +%s)
  for seed in $(seq 1 "$SEEDS"); do
    for faults in $((1 + seed % 10)) 0; do
      run="$work/h$hosts-s$seed-f$faults"
      mkdir -p "$run"
      model "$hosts" "$seed" "$faults" >"$run/model.toml"
      # Exit 1 is a burn-in that found something: expected whenever faults were injected.
      /usr/bin/time -f '%M %U %S' -o "$run/time" "$FABRICDOCTOR" burnin --simulate "$run/model.toml" \
        "${playbook_args[@]}" --duration "$DURATION" --report-dir "$run/report" >"$run/out.txt" 2>"$run/err.txt" || true
      [[ -s $run/report/simulation.json ]] || die "run $run ended without simulation.json: $(tail -3 "$run/err.txt")"
    done
  done
  python3 - "$work" "$hosts" "$(( $(date +%s) - started ))" <<'EOF'
import glob, json, os, sys
work, hosts, wall = sys.argv[1], int(sys.argv[2]), sys.argv[3]
found = false = missed = injected = 0
rounds = []
times = []
rss = []
report_mb, page_mb = [], []
false_runs = runs = 0
cpu_per_round = []
for run in sorted(glob.glob(f"{work}/h{hosts}-s*-f*")):
    runs += 1
    faults = int(run.rsplit("-f", 1)[1])
    score = json.load(open(f"{run}/report/simulation.json"))["score"]
    peak_kib, user_s, system_s = open(f"{run}/time").read().split()[-3:]
    rss.append(int(peak_kib) / 1024)
    pair_rounds = 0
    for line in open(f"{run}/report/events.jsonl"):
        if '"phase_started"' in line:
            event = json.loads(line)
            if event.get("phase") == "pairwise" and event.get("iteration") == 0:
                pair_rounds = event.get("steps_total") or 0
                break
    if pair_rounds:
        cpu_per_round.append(1000 * (float(user_s) + float(system_s)) / pair_rounds)
    report_mb.append(os.path.getsize(f"{run}/report/report.json") / 1e6)
    page_mb.append(os.path.getsize(f"{run}/report/report.html") / 1e6)
    if faults == 0:
        false_runs += bool(score["false_suspects"])
        continue
    found += score["found"]
    false += len(score["false_suspects"])
    injected += score["found"] + len(score["missed"])
    used, end = 0, None
    for line in open(f"{run}/report/events.jsonl"):
        event = json.loads(line)
        if event.get("event") == "step" and event.get("step", "").startswith("isolation#0/"):
            used += event.get("rounds") or 0
            end = event.get("offset_s")
    rounds.append(used / faults)
    if end is not None:
        times.append(end)
precision = found / (found + false) if found + false else 1.0
recall = found / injected if injected else 1.0
mean = lambda values: sum(values) / len(values) if values else float("nan")
print(f"hosts {hosts} precision {precision:.4f} recall {recall:.4f} rounds {mean(rounds):.2f} "
      f"sim_time {mean(times):.0f} coordinator_rss {max(rss):.0f} false_positive_runs {false_runs} runs {runs} "
      f"report_mb {max(report_mb):.1f} page_mb {max(page_mb):.1f} cpu_per_round_ms {mean(cpu_per_round):.1f} wall {wall}")
EOF
  if [[ -n $RAW_DIR ]]; then mkdir -p "$RAW_DIR" && cp -r "$work"/h"$hosts"-* "$RAW_DIR"/; fi
done
