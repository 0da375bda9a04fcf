#!/bin/bash
# Record: another machine — the link's ceilings, then the e2e section at 066a9e6 again.
set -u
T0=$(date +%s)
date -u
meson setup build-gpu -Dbuildtype=release > $OUT/setup.log 2>&1 || { tail -30 $OUT/setup.log; exit 1; }
timeout 360 ninja -C build-gpu apps/file_kernels/xeflow-file-kernels apps/file_baseline/xeflow-file-baseline apps/file_baseline/xeflow-file-read bench/link_ceiling/xeflow-ceiling > $OUT/build.log 2>&1 || { tail -40 $OUT/build.log; exit 1; }
echo "built at $(( $(date +%s) - T0 )) s"
build-gpu/bench/link_ceiling/xeflow-ceiling --only zero-copy-read,copy-h2d --repeats 5 --json $OUT/ceiling.json --commit 066a9e6 > $OUT/ceiling.log 2>&1
echo "ceiling rc=$? at $(( $(date +%s) - T0 )) s"; tail -6 $OUT/ceiling.log
B=$(( (555 - ($(date +%s) - T0)) / 60 ))
timeout -s INT $(( 580 - ($(date +%s) - T0) )) python3 bench/file_bench.py run --build build-gpu --commit 066a9e6 --sections e2e --time-budget $B --timeout 120 --out $OUT/fb --tag e2e5 > $OUT/e2e5.log 2>&1
echo "file_bench rc=$? at $(( $(date +%s) - T0 )) s"
grep -A40 "^end to end" $OUT/e2e5.log
