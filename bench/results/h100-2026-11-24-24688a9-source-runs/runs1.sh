#!/bin/bash
# Scratch (untracked): GPU suites at the new commit, then the file source's runs on the device (file_scan
# with a null sink over a 4 GiB file), cold and warm.
set -u
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
meson setup build-gpu -Dbuildtype=release > $OUT/setup.log 2>&1 || { tail -30 $OUT/setup.log; exit 1; }
timeout 330 ninja -C build-gpu > $OUT/build.log 2>&1 || { tail -40 $OUT/build.log; exit 1; }
echo "built at $(el) s"
timeout -s INT 160 meson test -C build-gpu --no-rebuild --suite gpu --suite files > $OUT/gpu-tests.log 2>&1; echo "gpu suites rc=$? at $(el) s"
grep -E "^ *[0-9]+/[0-9]+ |^Ok:|^Fail:|^Skipped:" $OUT/gpu-tests.log | grep -v " OK " | tail -12
cp build-gpu/meson-logs/testlog.txt $OUT/gpu-testlog.txt 2>/dev/null
D=/var/tmp/xeflow-file-bench; mkdir -p $D; F=$D/fs-4g.bin
for i in 0 1 2 3; do dd if=/dev/urandom of=$F bs=1M count=1024 seek=$((i*1024)) conv=notrunc status=none & done; wait; sync
echo "file at $(el) s: $(stat -c %s $F)"
sed -e "s#path: data.bin#path: $F#" -e 's#verify: {class: verify_sink, threads: 2, inputs: \[scaled\]}#count: {class: null_sink, inputs: [scaled]}#' topologies/file_scan.yaml > fs-bench.yaml
X=build-gpu/tools/xeflow-run
run() {  # mode tag sets...
  local mode=$1 tag=$2; shift 2
  [ $(el) -lt 560 ] || { echo "skip $mode $tag"; return; }
  local direct=auto; [ $mode = warm ] && direct=off
  local sets=(--set runtime.file_cache.size=2GiB --set runtime.file_cache.direct=$direct)
  for s in "$@"; do sets+=(--set "$s"); done
  timeout -s INT 40 $X fs-bench.yaml -q --stats json "${sets[@]}" > $OUT/last.json 2>$OUT/last.err || { echo "FAIL $mode $tag"; tail -3 $OUT/last.err; return; }
  python3 - "$mode" "$tag" "$ROUND" >> $OUT/source.jsonl <<'PY'
import json, os, sys
d = json.load(open(os.environ["OUT"] + "/last.json"))
print(json.dumps({"mode": sys.argv[1], "tag": sys.argv[2], "round": int(sys.argv[3]), "stats": d}))
fc = d["file_cache"]; t = d["topics"][0]
print(f"{sys.argv[1]} {sys.argv[3]} {sys.argv[2]:8} {d['executor'][:12]} {t['bytes'] / d['stream_seconds'] / 1e9:6.2f} GB/s  requests {fc['requests']} ahead {fc['ahead_pages']}/{fc['ahead_hits']} status {d['status']}", file=sys.stderr)
PY
}
P64="runtime.file_cache.page_size=64KiB"
grid() {
  run $1 A-run1 $P64 runtime.file_cache.readahead=64KiB
  run $1 B-run16 $P64 runtime.file_cache.readahead=1MiB runtime.file_cache.max_request=1088KiB
  run $1 F-run16off $P64 runtime.file_cache.readahead=1MiB runtime.file_cache.max_request=1088KiB runtime.file_cache.readahead_mode=off
  run $1 C-run16c256 $P64 runtime.file_cache.readahead=1MiB runtime.file_cache.max_request=1088KiB topics.frames.capacity=256 topics.scaled.capacity=256
  run $1 D-run2 runtime.file_cache.readahead=128KiB
  run $1 E-run1 runtime.file_cache.readahead=64KiB
}
ROUND=1 grid cold
cat $F > /dev/null
ROUND=1 grid warm
ROUND=2 grid cold
ROUND=2 grid warm
echo "done at $(el) s"
