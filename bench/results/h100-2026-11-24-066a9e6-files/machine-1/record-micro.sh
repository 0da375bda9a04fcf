#!/bin/bash
# Record: issue 6's micro, random and replacement sections at 066a9e6 (I/O threads derived).
set -u
T0=$(date +%s)
date -u
ninja -C build-gpu apps/file_baseline/xeflow-file-read > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
B=$(( (560 - ($(date +%s) - T0)) / 60 ))
timeout -s INT $(( 580 - ($(date +%s) - T0) )) python3 bench/file_bench.py run --build build-gpu --commit 066a9e6 --sections micro,random,replacement --time-budget $B --timeout 120 --out $OUT/fb --tag micro2 > $OUT/micro2.log 2>&1
echo "file_bench rc=$? at $(( $(date +%s) - T0 )) s"
grep -v "^file " $OUT/micro2.log | tail -60
