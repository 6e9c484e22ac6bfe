#!/bin/bash
# Final check of the merged binary on the GPU machine: check (with GPU checks and --load), HTML,
# a local burn-in whose host checks include the GPU, and a GPU-staged AllReduce.
set -u
FD=$PWD/.device/fabricdoctor
cd "$OUT"
nvidia-smi --query-gpu=name,pcie.link.gen.current,pcie.link.width.current,ecc.mode.current,persistence_mode --format=csv > nvidia-smi.csv 2>&1
timeout 120 $FD check --load --json -o check-load.json > check-load.txt 2>&1; echo "check --load exit $?" >> summary.txt
timeout 60 $FD check --html check.html > check.txt 2>&1; echo "check --html exit $?" >> summary.txt
grep -E "gpu\.|pcie.link" check.txt | head -30 >> summary.txt
timeout 200 $FD burnin --local 3 --duration 40s --playbook $OLDPWD/.device/shared-machine.toml --report-dir burnin > burnin.txt 2>&1; echo "burnin exit $?" >> summary.txt
tail -20 burnin.txt >> summary.txt
cp burnin/summary.md burnin-summary.md 2>/dev/null; cp burnin/report.html burnin-report.html 2>/dev/null
timeout 120 $FD perf allreduce --np 2 --gpu 0 -b 1M -e 64M -f 4 -c 1 > allreduce-gpu.txt 2>&1; echo "allreduce --gpu exit $?" >> summary.txt
tail -12 allreduce-gpu.txt >> summary.txt
cat summary.txt
