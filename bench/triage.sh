#!/usr/bin/env bash
# Benchmark: `fabricdoctor triage` over the NCCL_DEBUG=INFO logs of a 256-rank job (32 hosts x 8 GPUs,
# one log file per host, 77k lines, 6.4 MB) in which rank 213 never completes init, plus the
# PyTorch watchdog lines of every rank. Goal: under 2 s wall and 500 MB peak RSS, so an on-call
# engineer gets the answer in seconds on a laptop.
#
# Peer, measured in the same run: `grep -c "NCCL WARN"` over the same files, the floor cost of
# reading and scanning the bytes once, so the ratio shows what parsing, joining and rules add.
#
#   bash bench/triage.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { apt-get install -y -q hyperfine >/dev/null; }
cargo build --release -q
dir=target/bench-triage
rm -rf "$dir" && mkdir -p "$dir"
python3 - "$dir" <<'PY'
import sys
out = sys.argv[1]
hosts, per_host, missing = 32, 8, 213
nranks = hosts * per_host
bus = ["18000", "2a000", "3a000", "5d000", "9a000", "ab000", "ba000", "db000"]
for h in range(hosts):
    host = f"gpu-{h:03d}"
    lines = []
    for g in range(per_host):
        rank, pid = h * per_host + g, 40000 + h * per_host + g
        p = lambda m, lvl="INFO": lines.append(f"{host}:{pid}:{pid + 97} [{g}] NCCL {lvl} {m}")
        p(f"Bootstrap : Using ens9f0:10.1.{h}.1<0>")
        p("NCCL version 2.21.5+cuda12.4")
        p("cudaDriverVersion 12040")
        p("NCCL_IB_GID_INDEX set by environment to 3.")
        p("NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [2]mlx5_2:1/RoCE [3]mlx5_3:1/RoCE "
          "[4]mlx5_4:1/RoCE [5]mlx5_5:1/RoCE [6]mlx5_6:1/RoCE [7]mlx5_7:1/RoCE [RO]; OOB ens9f0:10.1.%d.1<0>" % h)
        p(f"ncclCommInitRank comm 0x55{rank:04x} rank {rank} nranks {nranks} cudaDev {g} nvmlDev {g} busId {bus[g]} commId 0xfeedc0de - Init START")
        for c in range(32):
            nxt = (rank + 1) % nranks
            if g == per_host - 1:
                p(f"Channel {c:02d}/0 : {rank}[{g}] -> {nxt}[0] [send] via NET/IB/{g}/GDRDMA")
            else:
                p(f"Channel {c:02d}/0 : {rank}[{g}] -> {nxt}[{g + 1}] via P2P/CUMEM/read")
            if g == 0:
                prv = (rank - 1) % nranks
                p(f"Channel {c:02d}/0 : {prv}[{per_host - 1}] -> {rank}[0] [receive] via NET/IB/{per_host - 1}/GDRDMA")
            for t in range(8):
                p(f"Channel {c:02d}/1 : {rank}[{g}] -> {(rank + 8 * (t + 1)) % nranks}[{g}] via P2P/CUMEM/read")
        p("Connected all rings")
        p("Connected all trees")
        if rank != missing:
            p(f"ncclCommInitRank comm 0x55{rank:04x} rank {rank} nranks {nranks} cudaDev {g} nvmlDev {g} busId {bus[g]} commId 0xfeedc0de localSize 8 used 1073741824 bytes on core 3 - Init COMPLETE")
    open(f"{out}/{host}.log", "w").write("\n".join(lines) + "\n")
with open(f"{out}/watchdog.log", "w") as f:
    for rank in range(nranks):
        seq = 880 if rank == missing else 912
        f.write(f"[rank{rank}]:[E1122 14:02:11.100 ProcessGroupNCCL.cpp:1664] [PG ID 0 PG GUID 0(default_pg) Rank {rank}] "
                f"Timeout at NCCL work: {seq}, last enqueued NCCL work: {seq}, last completed NCCL work: {seq - 1}.\n")
PY
bin=target/release/fabricdoctor
echo "input: $(cat "$dir"/* | wc -l) lines, $(du -sh "$dir" | cut -f1)"
"$bin" triage "$dir" | head -4 || true
hyperfine --warmup 2 --runs 10 -N -i \
  --export-json target/bench-triage.json \
  "$bin triage --json $dir" \
  "grep -c -r NCCL.WARN $dir"
# triage exits 1 when it has a diagnosis (this job has one): that is not a failure of the benchmark.
rss_kib=$( { /usr/bin/time -f '%M' "$bin" triage --json "$dir" >/dev/null || true; } 2>&1 | tail -n1)
echo "peak RSS of triage --json: ${rss_kib} KiB"
# The mean of triage and of the grep floor in a hyperfine export, and their ratio.
summarise() {
  python3 - "$1" "$2" <<'PY'
import json, sys
runs = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
triage = next(r for c, r in runs.items() if "triage" in c)
peer = next(r for c, r in runs.items() if c.startswith("grep"))
print(f"{sys.argv[2]}: triage --json mean {triage['mean']*1000:.0f} ms (max {triage['max']*1000:.0f} ms); "
      f"scan floor (grep): {peer['mean']*1000:.0f} ms; ratio {triage['mean']/peer['mean']:.1f}x")
PY
}
summarise target/bench-triage.json "256-rank job"

# Second input: a 100,000-line kernel log (10 MB) in which every line also names NCCL, so that
# triage looks for NCCL's messages pasted without their prefix on every line (the catalogue match
# of issue #16's untagged lines): the cost of that search against the same grep floor.
kernel=target/bench-triage-kernel.log
python3 - "$kernel" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(100_000):
        f.write(f"[{i * 0.001:12.6f}] mlx5_core 0000:{i % 256:02x}:00.0: NCCL driver message {i} with text {i * 7919 % 1000003}\n")
PY
hyperfine --warmup 1 --runs 5 -N -i \
  --export-json target/bench-triage-kernel.json \
  "$bin triage --json $kernel" \
  "grep -c NCCL.WARN $kernel"
summarise target/bench-triage-kernel.json "kernel log, 100k lines"

# Third input: 100,000 NCCL WARN lines of failed completions (every rank of a large job reporting
# its queue pairs' retries exhausted, each line its own): one rule is supported by 100,000 facts,
# which must cost in proportion to them, not to their pairs.
errors=target/bench-triage-errors.log
python3 - "$errors" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(100_000):
        host, rank = i // 64, i % 64
        f.write(f"gpu-{host:04d}:{1000 + rank}:{2000 + rank} [{rank % 8}] transport/net_ib.cc:1295 NCCL WARN NET/IB : "
                f"Got completion from peer 10.2.{host % 250}.{rank}<{40000 + i % 20000}> with error 12, opcode 0, len 0, vendor err 129 (Send)\n")
PY
hyperfine --warmup 1 --runs 5 -N -i \
  --export-json target/bench-triage-errors.json \
  "$bin triage --json $errors" \
  "grep -c NCCL.WARN $errors"
summarise target/bench-triage-errors.json "100k completion errors"
