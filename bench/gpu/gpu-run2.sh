#!/bin/bash
# GPU verification run 2: allreduce with GPU buffers vs host buffers, live check vs its snapshot.
F=.device/fabricdoctor
exec > >(tee $OUT/log.txt) 2>&1
set -x
$F perf allreduce --np 2 -b 1M -e 64M -f 4 > $OUT/allreduce-host.txt; echo "host allreduce rc=$?"
$F perf allreduce --np 2 -b 1M -e 64M -f 4 --gpu 0 > $OUT/allreduce-gpu.txt; echo "gpu allreduce rc=$?"
$F perf allreduce --np 2 -b 1M -e 4M -f 4 --gpu 0 --json > $OUT/allreduce-gpu.json; echo "gpu allreduce json rc=$?"
$F perf allreduce --np 2 -b 1M -e 1M --gpu 0 --inject-corruption 1 | tail -4; echo "gpu allreduce corrupted rc=$? (expect 1)"
cat $OUT/allreduce-host.txt $OUT/allreduce-gpu.txt
timeout 120 $F perf server --transport tcp --gpu 0 --port 18515 --sessions 1 &
sleep 1
$F perf client 127.0.0.1 --transport tcp --gpu 0 --bidirectional --validate --size 4194304 --iters 1000 > $OUT/perf-gpu-bidir.txt; echo "gpu bidir rc=$?"
wait %1  # a plain `wait` also waits for the tee process substitution (bash 5.1+) and hangs
cat $OUT/perf-gpu-bidir.txt
