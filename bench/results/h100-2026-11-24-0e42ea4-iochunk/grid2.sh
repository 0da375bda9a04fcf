#!/bin/bash
# Scratch (untracked): issue 6's cold gap — larger preads (4 MiB) for both sides, and 1 MiB io_chunk warm.
set -u
T0=$(date +%s)
left() { echo $(( 575 - ($(date +%s) - T0) )); }
if [ ! -x build-gpu/apps/file_kernels/xeflow-file-kernels ]; then
  meson setup build-gpu -Dbuildtype=release > $OUT/setup.log 2>&1 || { tail -30 $OUT/setup.log; exit 1; }
  timeout 300 ninja -C build-gpu apps/file_kernels/xeflow-file-kernels > $OUT/build.log 2>&1 || { tail -40 $OUT/build.log; exit 1; }
fi
echo "built at $(( $(date +%s) - T0 )) s"
D=/var/tmp/xeflow-file-bench; mkdir -p $D
K=build-gpu/apps/file_kernels/xeflow-file-kernels
file_of() { echo $D/e2e-$1.f32; }
for k in conv2d gesummv mvt; do [ -f $(file_of $k) ] || $K $k $(file_of $k) --generate > /dev/null || exit 1; done; sync
echo "generated at $(( $(date +%s) - T0 )) s"
TUNED="--input gpufs --page 64KiB "
run() {  # mode tag kernel args...
  local mode=$1 tag=$2 k=$3; shift 3
  [ "$(left)" -gt 15 ] || { echo "skip $tag $k (time)"; return; }
  local direct=on; [ $mode = warm ] && direct=off
  local j; j=$(timeout -s INT 60 $K $k $(file_of $k) --json --direct $direct "$@" 2>$OUT/last.err) || { echo "FAIL $tag $k"; tail -3 $OUT/last.err; return; }
  echo "{\"mode\":\"$mode\",\"tag\":\"$tag\",\"round\":$ROUND,\"result\":$j}" >> $OUT/grid2.jsonl
  python3 -c "import json,sys; r=json.loads(sys.argv[1]); print(f\"$mode $ROUND $tag $k {r['gbps']:.2f} GB/s verified={r['verified']}\")" "$j"
}
V() { [ $ROUND = 1 ] && echo "" || echo "--no-verify"; }
cold() {
  for k in conv2d gesummv mvt; do
    run cold base4 $k --input cpu-io --io-threads 4 --no-verify
    run cold base4-r4m $k --input cpu-io --io-threads 4 --request 4MiB --no-verify
    run cold t16c1m-il $k $TUNED --io-threads 16 --readahead 1MiB --max-request 1MiB --io-chunk 1MiB --tile-order interleaved --no-verify
    run cold t16r4m $k $TUNED --io-threads 16 --readahead 4MiB --max-request 4MiB --io-chunk 4MiB $(V)
    run cold t16q4m-il $k $TUNED --io-threads 16 --request 4MiB --readahead 1MiB --max-request 4MiB --io-chunk 4MiB --tile-order interleaved $(V)
    run cold t4q4m-il $k $TUNED --io-threads 4 --request 4MiB --readahead 1MiB --max-request 4MiB --io-chunk 4MiB --tile-order interleaved --no-verify
  done
}
warm() {
  for k in conv2d gesummv mvt; do
    run warm base4 $k --input cpu-io --io-threads 4 --no-verify
    run warm t16c128 $k $TUNED --io-threads 16 --readahead 1MiB --max-request 1MiB --no-verify
    run warm t16c1m $k $TUNED --io-threads 16 --readahead 1MiB --max-request 1MiB --io-chunk 1MiB --no-verify
    run warm t16q4m-il $k $TUNED --io-threads 16 --request 4MiB --readahead 1MiB --max-request 4MiB --io-chunk 4MiB --tile-order interleaved --no-verify
    run warm def $k --input gpufs --no-verify
    run warm def-c1m $k --input gpufs --io-chunk 1MiB --no-verify
  done
}
ROUND=1 cold
# warm: read each file once so the page cache holds it
for k in conv2d gesummv mvt; do cat $(file_of $k) > /dev/null; done
ROUND=1 warm; ROUND=2 warm
ROUND=2 cold
ROUND=3 warm
echo "done at $(( $(date +%s) - T0 )) s"
