#!/usr/bin/env bash
# Checks that every tracked C++ and CUDA source (.hpp .cpp .cuh .cu, outside bench/results) is formatted as
# the repository's .clang-format says; lists the files that are not and exits 1. `--fix` formats them in
# place instead. Uses clang-format from the distribution (Debian 12: 14), or $CLANG_FORMAT.
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format}
mapfile -t files < <(git ls-files -z '*.hpp' '*.cpp' '*.cuh' '*.cu' ':!:bench/results/**' | xargs -0 -r ls -d 2>/dev/null)
if [ "${1:-}" = "--fix" ]; then
  printf '%s\0' "${files[@]}" | xargs -0 -r -P "$(nproc)" -n 16 "$clang_format" --style=file -i
  exit 0
fi
# A file is formatted when clang-format --dry-run has nothing to say about it. One clang-format per 64 files:
# starting one per file was most of this check's time.
report=$(printf '%s\0' "${files[@]}" | xargs -0 -r -P "$(nproc)" -n 64 "$clang_format" --style=file --dry-run 2>&1) ||
  { echo "$report"; echo "clang-format failed"; exit 1; }
unformatted=$(sed -n 's/^\(.*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' <<<"$report" | sort -u)
if [ -n "$unformatted" ]; then
  echo "clang-format ($("$clang_format" --version | sed 's/.*version //')): $(wc -l <<<"$unformatted") of" \
    "${#files[@]} files are not formatted (bash tools/check_format.sh --fix formats them):"
  sed 's/^/  /' <<<"$unformatted"
  exit 1
fi
echo "clang-format: all ${#files[@]} files formatted"
