#!/bin/bash
# Record: xeflow-file-kernels at 1024 threads by default: its GPU tests and xeflow-file-read's.
set -u
T0=$(date +%s)
meson setup build-gpu -Dbuildtype=release > $OUT/setup.log 2>&1 || { tail -30 $OUT/setup.log; exit 1; }
timeout 400 ninja -C build-gpu apps/file_kernels/xeflow-file-kernels apps/file_baseline/xeflow-file-read tests/apps/file_kernels_test tests/apps/file_baseline_test > $OUT/build.log 2>&1 || timeout 300 ninja -C build-gpu > $OUT/build2.log 2>&1 || { tail -40 $OUT/build2.log; exit 1; }
echo "built at $(( $(date +%s) - T0 )) s"
meson test -C build-gpu --no-rebuild file_kernels file_baseline > $OUT/tests.log 2>&1; echo "tests rc=$?"
tail -8 $OUT/tests.log; cp build-gpu/meson-logs/testlog.txt $OUT/testlog.txt
grep -E "test cases:|assertions:" $OUT/testlog.txt
