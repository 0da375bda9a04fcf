#!/bin/bash
# Record: issue 6's e2e section at 066a9e6 (block_read's readahead stops at a block's band).
set -u
T0=$(date +%s)
date -u
ninja -C build-gpu apps/file_kernels/xeflow-file-kernels apps/file_baseline/xeflow-file-baseline > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
rm -f /var/tmp/xeflow-file-bench/xeflow-file-bench-10GiB.bin  # the micro file: room for the e2e files
B=$(( (560 - ($(date +%s) - T0)) / 60 ))
timeout -s INT $(( 580 - ($(date +%s) - T0) )) python3 bench/file_bench.py run --build build-gpu --commit 066a9e6 --sections e2e --time-budget $B --timeout 120 --out $OUT/fb --tag e2e4 > $OUT/e2e4.log 2>&1
echo "file_bench rc=$? at $(( $(date +%s) - T0 )) s"
grep -v "^file " $OUT/e2e4.log | tail -45
