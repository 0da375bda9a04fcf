#!/bin/bash
# Scratch (untracked): issue 6's cold-gap suspect — the I/O threads' pread size (io_chunk).
set -u
T0=$(date +%s)
left() { echo $(( 575 - ($(date +%s) - T0) )); }
{ lsblk -o NAME,SIZE,ROTA,SCHED,MIN-IO,OPT-IO,PHY-SEC 2>&1; for f in max_sectors_kb max_hw_sectors_kb nr_requests read_ahead_kb scheduler nr_hw_queues; do echo "$f: $(cat /sys/block/vda/queue/$f 2>/dev/null)"; done; ls /sys/block/vda/mq 2>/dev/null | wc -l; nproc; } > $OUT/disk.txt 2>&1
meson setup build-gpu -Dbuildtype=release > $OUT/setup.log 2>&1 || { tail -30 $OUT/setup.log; exit 1; }
timeout 300 ninja -C build-gpu apps/file_kernels/xeflow-file-kernels apps/file_baseline/xeflow-file-baseline apps/file_baseline/xeflow-file-read tests/apps/file_kernels_test > $OUT/build.log 2>&1 || { tail -40 $OUT/build.log; exit 1; }
echo "built at $(( $(date +%s) - T0 )) s"
(cd build-gpu && XF_FILE_KERNELS=$PWD/apps/file_kernels/xeflow-file-kernels timeout 150 tests/apps/file_kernels_test) > $OUT/file_kernels_test.log 2>&1; echo "file_kernels_test rc=$? at $(( $(date +%s) - T0 )) s"; tail -4 $OUT/file_kernels_test.log
D=/var/tmp/xeflow-file-bench; mkdir -p $D
K=build-gpu/apps/file_kernels/xeflow-file-kernels
file_of() { case $1 in gesummv) echo $D/e2e-gesummv.f32;; *) echo $D/e2e-$1.f32;; esac; }
for k in conv2d gesummv mvt; do $K $k $(file_of $k) --generate > /dev/null || exit 1; done; sync
echo "generated at $(( $(date +%s) - T0 )) s"
TUNED="--input gpufs --page 64KiB --readahead 1MiB --max-request 1MiB --direct on"
run() {  # tag kernel args...
  local tag=$1 k=$2; shift 2
  [ "$(left)" -gt 15 ] || { echo "skip $tag $k (time)"; return; }
  local j; j=$(timeout -s INT 60 $K $k $(file_of $k) --json "$@" 2>$OUT/last.err) || { echo "FAIL $tag $k"; tail -3 $OUT/last.err; return; }
  echo "{\"tag\":\"$tag\",\"round\":$ROUND,\"result\":$j}" >> $OUT/grid.jsonl
  python3 -c "import json,sys; r=json.loads(sys.argv[1]); print(f\"$ROUND $tag $k {r['gbps']:.2f} GB/s verified={r['verified']}\")" "$j"
}
grid() {
  for k in conv2d gesummv mvt; do
    run base4 $k --input cpu-io --io-threads 4 --direct on --no-verify
    run t16c128 $k $TUNED --io-threads 16 --no-verify
    if [ $ROUND = 1 ]; then run t16c1m $k $TUNED --io-threads 16 --io-chunk 1MiB; else run t16c1m $k $TUNED --io-threads 16 --io-chunk 1MiB --no-verify; fi
    run t4c1m $k $TUNED --io-threads 4 --io-chunk 1MiB --no-verify
    run t4c1m-il $k $TUNED --io-threads 4 --io-chunk 1MiB --tile-order interleaved --no-verify
    run t16c1m-il $k $TUNED --io-threads 16 --io-chunk 1MiB --tile-order interleaved --no-verify
  done
}
ROUND=1 grid
if [ "$(left)" -gt 90 ]; then
  timeout -s INT $(( $(left) - 60 )) python3 bench/file_bench.py run --build build-gpu --sections ceiling --ceiling-block 128KiB --out $OUT/ceiling --tag c128k --no-plot > $OUT/ceiling.log 2>&1; echo "ceiling rc=$?"; grep -E "ceiling" $OUT/ceiling.log | tail -5
fi
ROUND=2 grid
echo "done at $(( $(date +%s) - T0 )) s"
