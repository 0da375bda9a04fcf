#!/bin/bash
# Record: build at 066a9e6 and run the GPU suites and the file tools' GPU tests.
set -u
T0=$(date +%s)
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader
meson setup build-gpu -Dbuildtype=release > $OUT/setup.log 2>&1 || { tail -30 $OUT/setup.log; exit 1; }
timeout 420 ninja -C build-gpu > $OUT/build.log 2>&1 || { tail -40 $OUT/build.log; exit 1; }
echo "built at $(( $(date +%s) - T0 )) s"
timeout $(( 585 - ($(date +%s) - T0) )) meson test -C build-gpu --no-rebuild --num-processes 2 file_baseline file_kernels files gpu > $OUT/gpu-tests.log 2>&1
echo "tests rc=$? at $(( $(date +%s) - T0 )) s"
tail -15 $OUT/gpu-tests.log
cp build-gpu/meson-logs/testlog.txt $OUT/gpu-testlog.txt
grep -E "test cases:|assertions:" $OUT/gpu-testlog.txt
