#!/bin/bash
# GPU verification run: check (with and without --load), perf loopback TCP with GPU and host buffers.
F=.device/fabricdoctor
exec > >(tee $OUT/log.txt) 2>&1
set -x
nvidia-smi -q > $OUT/nvidia-smi-q.txt 2>&1
$F check --json > $OUT/check.json; echo "check rc=$?"
$F check --only gpu. --only pcie.link
$F check --load --json > $OUT/check-load.json; echo "check --load rc=$?"
$F check --load --only pcie.link --only gpu.pcie --no-sample
# Loopback perf: a GPU server and a host server, each serving its sessions.
timeout 300 $F perf server --transport tcp --gpu 0 --port 18515 --sessions 2 &
GS=$!
timeout 300 $F perf server --transport tcp --port 18516 --sessions 2 &
HS=$!
sleep 2
$F perf client 127.0.0.1 --port 18515 --transport tcp --gpu 0 --validate --size 1048576 --iters 400 --json > $OUT/perf-gpu-validate.json; echo "gpu validate rc=$?"
$F perf client 127.0.0.1 --port 18515 --transport tcp --gpu 0 --size 4194304 --iters 4000 > $OUT/perf-gpu.txt; echo "gpu bw rc=$?"
$F perf client 127.0.0.1 --port 18516 --transport tcp --size 4194304 --iters 4000 > $OUT/perf-host.txt; echo "host bw rc=$?"
$F perf client 127.0.0.1 --port 18516 --transport tcp --validate --size 1048576 --iters 400 | tail -3; echo "host validate rc=$?"
$F perf client 127.0.0.1 --port 18515 --transport tcp --gpu 0 --op read --size 4096 --iters 10; echo "gpu read rc=$?"
wait $GS $HS
cat $OUT/perf-gpu.txt $OUT/perf-host.txt
$F snapshot $OUT/snapshot.tar.gz
