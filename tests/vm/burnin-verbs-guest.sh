#!/usr/bin/env bash
# burnin-verbs-guest.sh - GUEST-side script: a burn-in over Soft-RoCE (--transport verbs) with one
# agent per guest, the coordinator in guest 0.
#
#   tests/vm/run-ring-guests.sh --guests 3 --copy target/debug/fabricdoctor tests/vm/burnin-verbs-guest.sh OUT
#
# The integration test tests/integration/burnin.rs runs this and judges OUT/guest-*/. In each guest:
#   agent.err          the agent's log (rail "rxe" on this guest's address: guest 1 names the device,
#                      rxe=IP@rxe0; the others leave it to the agent, which finds rxe0 by its GID table)
#   environment.txt    versions, ibv_devinfo
# Guest 0 also runs the coordinator (a small playbook: short pair tests and collectives, no soak) and
# leaves burnin/ (report.json, events.jsonl, ...), burnin.out/.err and burnin.rc (its exit code).
# Timing under TCG is functional: the figures say the path works, not how fast a NIC is.
#
# Exit code: 0 when the steps ran (the host test judges report.json), 3 when the guest has no RDMA
# device (the host test then fails: it never passes without one).
set -uo pipefail

out=${FD_VM_OUT:?run me through run-ring-guests.sh}
rank=${FD_VM_RANK:?}
hosts=${FD_VM_HOSTS:?}
ip=${FD_VM_RXE_IP:?}

log() { echo "burnin-verbs-guest: $(cut -d' ' -f1 /proc/uptime)s guest $rank: $*"; }

fd_require_rxe0 burnin-verbs-guest  # from rxe-harness.sh: exit 3 without an RDMA device
{
  echo "kernel: $(uname -r)"
  echo "fabricdoctor: $(fabricdoctor --version 2>&1)"
  echo "hosts: $hosts guest: $rank"
  ibv_devinfo -d rxe0 2>&1
} > "$out/environment.txt"

# A test token, the same in every guest (the guests' segment is private to this run).
export FABRICDOCTOR_TOKEN=fabricdoctor-vm-burnin-test-token
rail="rxe=$ip"
[ "$rank" = 1 ] && rail="rxe=$ip@rxe0"
fabricdoctor agent --listen "$ip:7207" --rail "$rail" > "$out/agent.out" 2> "$out/agent.err" &
agent=$!
log "agent on $ip:7207, rail $rail"

if [ "$rank" = 0 ]; then
  cat > "$out/playbook.toml" << 'EOF'
name = "vm-verbs"
description = "short pair tests and collectives over Soft-RoCE under TCG"
[policy]
exclude_on = "fail"
exclude_checks = ["pcie.link", "pcie.aer", "rdma.port", "ib.port.errors", "link.flap", "phy.ber"]
stop_when_lost_fraction = 0.5
step_timeout_s = 60
[check]
enabled = true
[loopback]
enabled = true
[pairwise]
enabled = true
fraction = 0.002
min_ms = 400
max_ms = 400
message_bytes = 65536
queue_pairs = 1
tx_depth = 4
latency_iterations = 200
latency_bytes = 64
validate = true
[alltoall]
enabled = true
bytes = 196608
iterations = 2
[allreduce]
enabled = true
bytes = 196608
iterations = 2
[soak]
enabled = false
interval_s = 0.0
# Isolation and counter judgement off in effect: TCG timing and rxe retransmits say nothing of a fabric.
[isolation]
bandwidth_fraction = 0.01
latency_multiple = 1000.0
max_rounds = 1
confirmations = 1
[signoff]
fail_on_counters = []
EOF
  list=$(echo "$hosts" | sed 's/,/:7207,/g; s/$/:7207/')
  log "coordinator: burnin --transport verbs --hosts $list"
  start=$(date +%s%N)
  timeout 400 fabricdoctor burnin --hosts "$list" --transport verbs --duration 5s --connect-timeout 300s \
    --playbook "$out/playbook.toml" --report-dir "$out/burnin" > "$out/burnin.out" 2> "$out/burnin.err"
  rc=$?
  echo "$rc" > "$out/burnin.rc"
  echo $(( ($(date +%s%N) - start) / 1000000 )) > "$out/burnin.ms"
  log "coordinator: exit code $rc"
else
  # Serve until guest 0's coordinator has come and gone (its connection closes), at most 400 s.
  for _ in $(seq 1 4000); do
    grep -q "coordinator disconnected" "$out/agent.err" 2> /dev/null && break
    sleep 0.1
  done
fi
kill "$agent" 2> /dev/null
wait "$agent" 2> /dev/null
exit 0
