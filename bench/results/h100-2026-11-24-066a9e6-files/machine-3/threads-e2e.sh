#!/bin/bash
# Record: the e2e section with the kernels' blocks at 1024 threads (both inputs) against 512
# (the tool's default), warm, on one machine; then cold at 1024.
set -u
T0=$(date +%s)
date -u
meson setup build-gpu -Dbuildtype=release > $OUT/setup.log 2>&1 || { tail -30 $OUT/setup.log; exit 1; }
timeout 300 ninja -C build-gpu apps/file_kernels/xeflow-file-kernels apps/file_baseline/xeflow-file-baseline apps/file_baseline/xeflow-file-read > $OUT/build.log 2>&1 || { tail -40 $OUT/build.log; exit 1; }
echo "built at $(( $(date +%s) - T0 )) s"
for v in "t512-warm|warm|512" "t1024-warm|warm|1024" "t1024-cold|cold|1024"; do
  IFS='|' read tag mode th <<< "$v"
  [ $(( $(date +%s) - T0 )) -gt 500 ] && break
  timeout -s INT $(( 580 - ($(date +%s) - T0) )) python3 bench/file_bench.py run --build build-gpu --commit 066a9e6 --sections e2e --modes $mode --e2e-arg=--threads=$th --timeout 100 --no-plot --out $OUT/fb --tag $tag > $OUT/$tag.log 2>&1
  echo "$tag rc=$? at $(( $(date +%s) - T0 )) s"
  grep -A12 "^end to end" $OUT/$tag.log | grep -E "$mode|kernel"; grep "geomean" $OUT/$tag.log | grep -E "N=4|N=16"
done
