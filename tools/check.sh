#!/usr/bin/env bash
# Builds and runs the whole test suite, as CI does: a normal build, the whole suite under ASan+UBSan, and
# the topic stress and the file cache's protocol under ThreadSanitizer. GPU tests skip visibly on machines
# without a GPU. Ends with a "N passed, N failed" line counting doctest test cases over every run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh clang
jobs=$(nproc)
status=0

# name, build dir, ninja targets ("" builds everything), meson setup args..., -- meson test args...
run_suite() {
  local name=$1 dir=$2 targets=$3; shift 3
  local setup=() test=()
  while (($#)) && [ "$1" != "--" ]; do setup+=("$1"); shift; done
  (($#)) && shift
  test=("$@")
  echo "=== $name: build ($dir)"
  [ -d "$dir" ] || meson setup "$dir" "${setup[@]}"
  local start=$SECONDS
  # shellcheck disable=SC2086  # targets is a word list
  ninja -C "$dir" -j "$jobs" $targets
  echo "=== $name: built in $((SECONDS - start)) s; test"
  start=$SECONDS
  if ! meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes "$jobs" "${test[@]}"; then
    status=1
  fi
  echo "=== $name: tested in $((SECONDS - start)) s"
  grep -h "^\[doctest\] test cases:" "$dir/meson-logs/testlog.txt" | sed "s/^/[$name] /" || true
}

run_suite normal build-check "" -Dbuildtype=debugoptimized --
run_suite asan+ubsan build-asan "" -Dcuda=disabled -Db_sanitize=address,undefined -Db_lundef=false \
  -Dbuildtype=debugoptimized --
# Only the lock-free protocols run under ThreadSanitizer (the topic stress, the file cache): build just
# their programs.
tsan_targets="tests/topics/topic_driver_test tests/topics/topic_protocol_test tests/topics/topic_lifecycle_test
  tests/framework/files/files_test"
CC=clang CXX=clang++ run_suite tsan build-tsan "$tsan_targets" -Dcuda=disabled -Db_sanitize=thread -Db_lundef=false \
  -Dbuildtype=debugoptimized -- --suite topics --suite files

python3 - <<'PY'
import glob, re
passed = failed = skipped = 0
for log in ["build-check", "build-asan", "build-tsan"]:
    try:
        text = open(f"{log}/meson-logs/testlog.txt").read()
    except OSError:
        continue
    for m in re.finditer(r"\[doctest\] test cases:\s*(\d+) \|\s*(\d+) passed \|\s*(\d+) failed \|\s*(\d+) skipped", text):
        passed += int(m.group(2)); failed += int(m.group(3)); skipped += int(m.group(4))
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
exit $status
