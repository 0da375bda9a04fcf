#!/bin/bash
# Scratch (untracked): the GPU suites at the final commit, then the e2e defaults with the derived I/O
# thread count against 4 (the old default) and the baseline.
set -u
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
meson setup build-gpu -Dbuildtype=release > $OUT/setup.log 2>&1 || { tail -30 $OUT/setup.log; exit 1; }
timeout 340 ninja -C build-gpu > $OUT/build.log 2>&1 || { tail -40 $OUT/build.log; exit 1; }
echo "built at $(el) s"
timeout -s INT 160 meson test -C build-gpu --no-rebuild --suite gpu --suite files > $OUT/gpu-tests.log 2>&1; echo "gpu suites rc=$? at $(el) s"
grep -E "^ *[0-9]+/[0-9]+ |^Ok:|^Fail:|^Skipped:" $OUT/gpu-tests.log | tail -6
cp build-gpu/meson-logs/testlog.txt $OUT/gpu-testlog.txt 2>/dev/null
D=/var/tmp/xeflow-file-bench; mkdir -p $D
K=build-gpu/apps/file_kernels/xeflow-file-kernels
file_of() { echo $D/e2e-$1.f32; }
for k in conv2d gesummv mvt; do $K $k $(file_of $k) --generate > /dev/null || exit 1; done; sync
echo "generated at $(el) s"
run() {  # mode tag kernel args...
  local mode=$1 tag=$2 k=$3; shift 3
  [ $(el) -lt 575 ] || { echo "skip $mode $tag $k"; return; }
  local direct=on; [ $mode = warm ] && direct=off
  local j; j=$(timeout -s INT 30 $K $k $(file_of $k) --json --direct $direct "$@" 2>$OUT/last.err) || { echo "FAIL $tag $k"; tail -3 $OUT/last.err; return; }
  echo "{\"mode\":\"$mode\",\"tag\":\"$tag\",\"round\":$ROUND,\"result\":$j}" >> $OUT/defaults.jsonl
  python3 -c "import json,sys; r=json.loads(sys.argv[1]); print(f\"$mode $ROUND $tag $k {r['gbps']:.2f} GB/s io_threads={r['io_threads']} verified={r['verified']}\")" "$j"
}
grid() {
  for k in conv2d gesummv mvt; do
    run $1 base4 $k --input cpu-io --io-threads 4 --no-verify
    run $1 def $k --input gpufs $( [ $ROUND = 1 ] || echo --no-verify )
    run $1 def-4 $k --input gpufs --io-threads 4 --no-verify
  done
}
for k in conv2d gesummv mvt; do cat $(file_of $k) > /dev/null; done
ROUND=1 grid warm
ROUND=2 grid warm
ROUND=1 grid cold
ROUND=3 grid warm
echo "done at $(el) s"
