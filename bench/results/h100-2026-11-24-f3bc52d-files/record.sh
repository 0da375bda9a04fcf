#!/bin/bash
# Scratch (untracked): issue 6's e2e section at the 1 MiB io_chunk default.
set -u
T0=$(date +%s)
meson setup build-gpu -Dbuildtype=release > $OUT/setup.log 2>&1 || { tail -30 $OUT/setup.log; exit 1; }
timeout 300 ninja -C build-gpu apps/file_kernels/xeflow-file-kernels apps/file_baseline/xeflow-file-baseline apps/file_baseline/xeflow-file-read > $OUT/build.log 2>&1 || { tail -40 $OUT/build.log; exit 1; }
echo "built at $(( $(date +%s) - T0 )) s"
B=$(( (560 - ($(date +%s) - T0)) / 60 ))
timeout -s INT $(( 575 - ($(date +%s) - T0) )) python3 bench/file_bench.py run --build build-gpu --sections e2e --time-budget $B --timeout 120 --out $OUT/fb --tag e2e2 > $OUT/e2e2.log 2>&1
echo "file_bench rc=$? at $(( $(date +%s) - T0 )) s"
grep -v "^file " $OUT/e2e2.log | tail -45
