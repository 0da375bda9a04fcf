#!/bin/bash
# Record: what bounds gpufs-tuned warm at ~42 GB/s — more blocks (requests in flight), fewer
# threads a block, more request slots — against tuned as recorded and cpu-io N=4/16.
set -u
T0=$(date +%s)
date -u
meson setup build-gpu -Dbuildtype=release > $OUT/setup.log 2>&1 || { tail -30 $OUT/setup.log; exit 1; }
timeout 300 ninja -C build-gpu apps/file_kernels/xeflow-file-kernels > $OUT/build.log 2>&1 || { tail -40 $OUT/build.log; exit 1; }
echo "built at $(( $(date +%s) - T0 )) s"
K=build-gpu/apps/file_kernels/xeflow-file-kernels
D=/var/tmp/xeflow-e2e; mkdir -p $D
for k in conv2d gesummv mvt; do $K $k $D/$k.f32 --generate > /dev/null || exit 1; cat $D/$k.f32 > /dev/null; done
echo "generated at $(( $(date +%s) - T0 )) s"
TUNED="--input gpufs --io-threads 16 --page 64KiB --readahead 1MiB --max-request 1MiB"
for rep in 1 2; do
for k in conv2d gesummv mvt; do
  for v in "tuned|$TUNED" "b396|$TUNED --blocks 396" "b528|$TUNED --blocks 528" "b528t256|$TUNED --blocks 528 --threads 256" "b264t1024|$TUNED --threads 1024" "slots8|$TUNED --io-slots 8" "cpu4|--input cpu-io --io-threads 4" "cpu16|--input cpu-io --io-threads 16"; do
    name=${v%%|*}; args=${v#*|}
    [ $(( $(date +%s) - T0 )) -gt 560 ] && break 3
    out=$($K $k $D/$k.f32 $args --direct off --no-verify --json 2>$OUT/err.txt) || { echo "$k $name FAILED"; tail -3 $OUT/err.txt; continue; }
    echo "{\"rep\":$rep,\"variant\":\"$name\",\"result\":$out}" >> $OUT/grid.jsonl
    python3 -c "import json,sys;j=json.loads(sys.argv[1]);io=j.get('io') or [];b=sum(t['busy_ns'] for t in io)/max(1,len(io))/1e9/j['seconds'];print('$rep $k $name %.2f GB/s io busy %.0f%%'%(j['gbps'],100*b))" "$out"
  done
done
done
echo "grid at $(( $(date +%s) - T0 )) s"
