#!/bin/bash
# Record: the e2e5 machine — tuned with room for readahead (max-request > the tile's read),
# warm, against tuned as recorded and cpu-io N=4; then the micro's cold 4 KiB points twice more.
set -u
T0=$(date +%s)
K=build-gpu/apps/file_kernels/xeflow-file-kernels
D=/var/tmp/xeflow-file-bench
TUNED="--input gpufs --io-threads 16 --page 64KiB --readahead 1MiB --max-request 1MiB"
for rep in 1 2; do
for k in conv2d gesummv mvt; do
  f=$(ls $D/xeflow-e2e-$k-*.f32 | head -1)
  for v in "tuned|$TUNED" "mr2m|--input gpufs --io-threads 16 --page 64KiB --readahead 1MiB --max-request 2MiB" "ra2m|--input gpufs --io-threads 16 --page 64KiB --readahead 2MiB --max-request 4MiB" "def|--input gpufs" "cpu4|--input cpu-io --io-threads 4"; do
    name=${v%%|*}; args=${v#*|}
    out=$($K $k $f $args --direct off --no-verify --json 2>$OUT/err.txt) || { echo "$k $name FAILED"; tail -3 $OUT/err.txt; continue; }
    echo "{\"rep\":$rep,\"variant\":\"$name\",\"result\":$out}" >> $OUT/grid.jsonl
    python3 -c "import json,sys;j=json.loads(sys.argv[1]);print('$rep $k $name %.2f GB/s ahead %s/%s req %s'%(j['gbps'],j.get('ahead_pages'),j.get('ahead_hits'),j.get('requests')))" "$out"
  done
done
done
echo "grid at $(( $(date +%s) - T0 )) s"
B=$(( (540 - ($(date +%s) - T0)) / 60 ))
for t in a b; do
  timeout -s INT $(( 570 - ($(date +%s) - T0) )) python3 bench/file_bench.py run --build build-gpu --commit 066a9e6 --sections micro --modes cold --configs 4k+ra64k,64k --requests 4KiB --time-budget $B --timeout 100 --no-plot --out $OUT/fb --tag micro-cold-$t > $OUT/micro-cold-$t.log 2>&1
  echo "micro-cold-$t rc=$? at $(( $(date +%s) - T0 )) s"
  grep -E "^  4k|^  64k|/ 64k.*cold +4KiB" $OUT/micro-cold-$t.log
done
