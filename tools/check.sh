#!/usr/bin/env bash
# Builds and runs the whole test suite, as CI does: the format and layer checks, the slot protocol's SPIN
# model (tools/check_slot_model.sh: its core configurations), a normal build (CUDA
# device code as PTX: no GPU needed to build it, and ptxas is most of nvcc's time), the suite under
# ASan+UBSan (all of it but the applications' tests, tests/apps, which the normal build runs), the topic stress and the file cache's protocol under ThreadSanitizer, and
# apps/custom_operator built out of tree against the installed xeflow (pkg-config, then CMake), the kill -9
# checker of checkpoint and resume (tools/kill9_check.py). GPU tests
# skip visibly on machines without a GPU. Ends with a "N passed, N failed, N skipped" line counting doctest
# test cases over every run and the checks around them (format, layers, kernel headers, out of tree).
#
# --long: the stress tests at full size (XF_LONG=1, tests/support/topic_fixture.hpp; four times the default
# frames, outside the sanitizers), as before a change to the topic protocol lands; tests/apps under
# ASan+UBSan too; the slot protocol model's whole matrix (capacities 1–3, both publishing sides, progress,
# every mutation); the kill -9 checker on a 64 MiB stream instead of 16 MiB; the Debian packages built,
# unpacked and built against (tools/build-debs.sh); and every fuzz target (tests/fuzz) run by libFuzzer
# under ASan+UBSan for XF_FUZZ_SECONDS each (default 60). Every build replays the fuzz corpora as an
# ordinary test (fuzz_replay).
set -euo pipefail
cd "$(dirname "$0")/.."
for arg in "$@"; do
  case $arg in
    --long) export XF_LONG=1 ;;
    *) echo "usage: tools/check.sh [--long]" >&2; exit 2 ;;
  esac
done
# Open MPI: the two-rank test of framework/mpi (mpirun -n 2) in the normal build. Graphviz: every topology's
# graph rendered by dot (topology_graphs). python3-jsonschema: the topology schema checked. prometheus-cpp
# and civetweb: xeflow-run --metrics; libcurl: its test scrapes it. SPIN: the slot protocol's model
# (tools/check_slot_model.sh).
bash tools/install-deps.sh clang clang-format cmake lld libopenmpi-dev openmpi-bin graphviz python3-jsonschema python3-yaml \
  prometheus-cpp-dev libcivetweb-dev libcurl4-openssl-dev spin
jobs=$(nproc)
status=0
steps_passed=0
steps_failed=0
export PATH="$PATH:/usr/local/cuda/bin"  # nvcc, where the toolkit installs it
begin=$SECONDS

step() {  # name, command...: runs it, prints its time, remembers a failure
  local name=$1 start=$SECONDS; shift
  echo "=== $name"
  if "$@"; then
    steps_passed=$((steps_passed + 1))
  else
    echo "=== $name: FAILED"
    steps_failed=$((steps_failed + 1))
    status=1
  fi
  echo "=== $name: $((SECONDS - start)) s"
}

# Build dir -> the pid of its meson setup, running in the background (configure_early).
declare -A configuring=()

# build dir, meson setup args...: configures a build that comes later, in the background (CC and CXX as the
# caller sets them), its output in the build dir's setup.log. meson setup is mostly one core's work: the
# sanitizer builds configure beside the normal build's own setup, on the core that it leaves idle.
configure_early() {
  local dir=$1 root=$PWD; shift
  [ -d "$dir" ] && return 0
  mkdir -p "$dir"
  # From inside the build dir: meson runs cmake --system-information in its working directory, and two
  # setups at once must not share one.
  (cd "$dir" && exec meson setup . "$root" "$@") > "$dir/setup.log" 2>&1 &
  configuring[$dir]=$!
}

# build dir: waits for its configure_early's setup to end (once: later calls return its status) and prints
# its output the first time.
declare -A configured_status=()
configured_early() {
  local dir=$1
  if [ -n "${configuring[$dir]:-}" ] && [ -z "${configured_status[$dir]:-}" ]; then
    configured_status[$dir]=0
    wait "${configuring[$dir]}" || configured_status[$dir]=1
    cat "$dir/setup.log"
  fi
  return "${configured_status[$dir]:-0}"
}

# name, build dir, ninja targets ("" builds everything), meson setup args...: configures (unless
# configure_early does) and builds.
build_suite() {
  local name=$1 dir=$2 targets=$3; shift 3
  echo "=== $name: build ($dir)"
  local start=$SECONDS configured=true
  if [ -n "${configuring[$dir]:-}" ]; then
    configured_early "$dir" || configured=false
  elif [ ! -d "$dir" ]; then
    meson setup "$dir" "$@" || configured=false
  fi
  # shellcheck disable=SC2086  # targets is a word list
  if ! $configured || ! ninja -C "$dir" -j "$jobs" $targets; then
    echo "=== $name: build FAILED after $((SECONDS - start)) s"
    steps_failed=$((steps_failed + 1))
    status=1
    return 1
  fi
  echo "=== $name: built in $((SECONDS - start)) s"
}

# name, build dir, meson test args...: runs the suite (when its build succeeded) and prints its doctest
# summaries. Suites run alone: beside a build, their many-threaded stress tests spin on two busy cores and
# the whole took longer (measured: README).
run_tests() {
  local name=$1 dir=$2 start=$SECONDS; shift 2
  [ -f "$dir/build.ninja" ] || return 0
  echo "=== $name: test"
  meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes "$jobs" "$@" || status=1
  echo "=== $name: tested in $((SECONDS - start)) s"
  grep -h "^\[doctest\] test cases:" "$dir/meson-logs/testlog.txt" | sed "s/^/[$name] /" || true
}

# Editing a header that a kernel file includes must rebuild the kernel's object (meson before 1.4 asks nvcc
# for no dependency file; meson.build's xf_kernel_objects does): touch an operator's header, ask ninja what
# it would rebuild, and put the header's time back.
kernel_headers_tracked() {
  local dir=$1 header=operators/transforms/scale.hpp stamp plan
  stamp=$(mktemp)
  touch -r "$header" "$stamp"
  touch "$header"
  plan=$(ninja -C "$dir" -n 2>&1 || true)
  touch -r "$stamp" "$header"
  rm -f "$stamp"
  if grep -q "operators/libxeflow_builtin_kernel.a.p/" <<<"$plan"; then
    echo "touching $header rebuilds the built-in kernel's object"
  else
    echo "touching $header does not rebuild the built-in kernel's object (operators/builtin_kernel.cu):"
    echo "$plan" | head -20
    return 1
  fi
}

# Every topology in topologies/ drawn by `xeflow-run --graph dot` and rendered by Graphviz's dot: an error of
# either, or anything dot warns about, fails the step, and so does a missing dot (installed above: the step
# must not pass by skipping). Mermaid has no validator in Debian: tests/framework/launch reads it back.
# Run in a scratch directory holding aes.key, the key file aes128_file.yaml names: validation reads it.
topology_graphs() {
  local dir=$1 root=$PWD scratch rendered=0 failed=0 t warnings
  if ! command -v dot > /dev/null; then
    echo "Graphviz's dot is not installed (the graphviz package: tools/install-deps.sh graphviz)"
    return 1
  fi
  scratch=$(mktemp -d)
  head -c 16 /dev/urandom > "$scratch/aes.key"
  for t in "$root"/topologies/*.yaml; do
    if (cd "$scratch" && "$root/$dir/tools/xeflow-run" "$t" --graph dot > graph.dot) &&
      warnings=$(dot -Tsvg -o /dev/null "$scratch/graph.dot" 2>&1) && [ -z "$warnings" ]; then
      rendered=$((rendered + 1))
    else
      echo "${t#"$root"/}: xeflow-run --graph dot | dot -Tsvg failed ${warnings:-}"
      failed=$((failed + 1))
    fi
    warnings=""
  done
  rm -rf "$scratch"
  echo "$rendered topologies rendered by dot, $failed failed"
  [ "$failed" = 0 ] && [ "$rendered" -gt 0 ]
}

step "format (tools/check_format.sh)" bash tools/check_format.sh
step "layers (tools/check_layers.py)" python3 tools/check_layers.py
step "slot protocol model (SPIN)" bash tools/check_slot_model.sh

# What makes this fit in CI's minutes on two cores (measured: README, under its second command): device code
# as unoptimised PTX (-Dgpu_code=ptx -Dcuda_args=-G: ptxas is 90 % of a fused kernel's compile, and NVVM's
# optimiser two thirds of the rest; CI has no GPU to run device code on);
# unity builds (the headers parsed once per eight sources, not once per source); line tables instead of
# full debug info (backtraces keep file:line), and no debug info under ASan+UBSan (line tables were 12 % of
# that build; UBSan's reports carry file:line without them, and ASan's still name each frame's function);
# building only what the tests run and what installs; optimisation levels chosen for compile time, since
# code generation is most of it: clang at -O0 for the normal build and ASan+UBSan (the operators' unity
# file in 16 s, against 35 s with g++ at -Og and 34 s with clang at -O1; g++ takes three times as long for
# ASan+UBSan), and clang as nvcc's host compiler (-ccbin: a kernel file's host half in 7.5 s instead of
# 12.8 s) — g++ still compiles apps/custom_operator out of tree below, and every release build;
# ThreadSanitizer at -O1 (its stress tests run long at -O0); and LLVM's linker, lld, for every build: it
# links a sanitized test program in a fifth of GNU ld's time.
unity=(-Dunity=on -Dunity_size=8)
export CC_LD=lld CXX_LD=lld
device_code=(-Dgpu_code=ptx)
# Options only where CUDA is; nvcc links the programs with CUDA in them, through g++.
command -v nvcc > /dev/null && device_code+=("-Dcuda_args=-G -ccbin=clang++" -Dcuda_link_args=-Xcompiler=-fuse-ld=lld)
# Without MPI under the sanitizers: Open MPI's start-up leaks by LeakSanitizer's count, and its test adds
# little there to CI's minutes that the normal build has not checked.
sanitized=(-Dcuda=disabled -Dmpi=disabled -Db_lundef=false "${unity[@]}")
# The applications' tests (generators, CPU references, their end-to-end runs) under ASan+UBSan with --long
# only: they were a sixth of that build and its tests, and the normal build runs them.
asan_apps=(-Dapp_tests=false)
[ "${XF_LONG:-0}" = 1 ] && asan_apps=()
asan_setup=("${sanitized[@]}" -Doptimization=0 -Ddebug=false -Db_sanitize=address,undefined "${asan_apps[@]}")
tsan_setup=("${sanitized[@]}" -Doptimization=1 -Ddebug=true -Dcpp_args=-gline-tables-only -Db_sanitize=thread)
normal_setup=(-Ddebug=true -Doptimization=0 "${device_code[@]}" "${unity[@]}"
  -Dcpp_args=-gline-tables-only --prefix="$PWD/build-check/prefix")
# Each test runs in one build, not two: the host-only suites under ASan+UBSan (clang), and in the normal
# build (CUDA, MPI) what needs CUDA or MPI or is not built under the sanitizers — the GPU suite
# (skipped visibly without a GPU), framework (device probes, provenance), launcher (--version's CUDA and
# MPI; under ASan+UBSan too), mpi, ranks, the applications and baselines. The normal build compiles only those tests' programs
# and the installed ones (tools/test_targets.py): running the host tests in both builds cost CI minutes
# (README) and checked the same code twice.
normal_skips=(config datatype e2e files fuzz operators shared topics)
# ASan+UBSan builds and runs only its suites' programs: the framework suite and the GPU suite (which would
# only skip there) are the normal build's (60 of the build's 580 CPU-seconds went to programs it did not run).
asan_suites=("${normal_skips[@]}" launcher)
[ "${XF_LONG:-0}" = 1 ] && asan_suites+=(apps)
CC=clang CXX=clang++ configure_early build-asan "${asan_setup[@]}"
CC=clang CXX=clang++ configure_early build-tsan "${tsan_setup[@]}"
normal_targets="libxeflow.a tools/xeflow-run tools/xeflow-tune tools/xeflow-table"
if [ ! -d build-check ]; then
  echo "=== normal: configure (build-check)"
  CC=clang CXX=clang++ meson setup build-check "${normal_setup[@]}" || true
fi
if [ -f build-check/build.ninja ]; then
  normal_targets+=" $(python3 tools/test_targets.py build-check "${normal_skips[@]/#/--no-suite=}")"
fi
if CC=clang CXX=clang++ build_suite normal build-check "$normal_targets" "${normal_setup[@]}"; then
  step "kernel headers tracked" kernel_headers_tracked build-check
  step "topology graphs (xeflow-run --graph dot | dot -Tsvg)" topology_graphs build-check
fi
run_tests normal build-check "${normal_skips[@]/#/--no-suite=}"
asan_targets=meson-test-prereq
if configured_early build-asan && [ -f build-asan/build.ninja ]; then
  asan_targets="$(python3 tools/test_targets.py build-asan "${asan_suites[@]/#/--suite=}")"
fi
CC=clang CXX=clang++ build_suite asan+ubsan build-asan "$asan_targets" "${asan_setup[@]}" || true
# UBSan's reports end the process: by default UBSan prints one and goes on, and the test passes over it.
# The tools the tests start inherit this.
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 run_tests asan+ubsan build-asan "${asan_suites[@]/#/--suite=}"
# Only the lock-free protocols run under ThreadSanitizer (the topic stress, the file cache's parts): build
# just their programs, which link the topics and file cache libraries alone.
tsan_targets="tests/topics/topic_driver_test tests/topics/topic_protocol_test
  tests/topics/topic_lifecycle_test tests/framework/files/files_test"
CC=clang CXX=clang++ build_suite tsan build-tsan "$tsan_targets" "${tsan_setup[@]}" || true
run_tests tsan build-tsan topic_driver topic_protocol topic_lifecycle files

# apps/custom_operator out of tree, against the normal build installed into build-check/prefix (no root):
# with nvcc (the installed nvcc_flags) and the C++ compiler through pkg-config, and with CMake
# (find_package(xeflow), its kernel file as plain C++ through XEFLOW_HOST_KERNEL: nvcc was checked by the
# first), both at once; each launcher then runs its topology on the host executor. nvcc gets -G besides the
# installed flags, as in the normal build: the kernel file's PTX in 10 s instead of 23 s.
out_of_tree() {
  local prefix=$PWD/build-check/prefix out=$PWD/build-out-of-tree app=$PWD/apps/custom_operator pkg_status=0
  meson install -C build-check --quiet --no-rebuild
  rm -rf "$out" && mkdir -p "$out/pkg-config"
  PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name xeflow.pc)") bash -euo pipefail -c '
    app=$1
    cd "$2"
    c++ $(pkg-config --cflags xeflow) -c "$app/main.cpp" -o main.o &
    main_build=$!
    if [ "$(pkg-config --variable=have_cuda xeflow)" = true ]; then
      "$(pkg-config --variable=nvcc xeflow)" $(pkg-config --variable=nvcc_flags xeflow) -G \
        -c "$app/custom_kernel.cu" -o custom_kernel.o
    else
      c++ $(pkg-config --cflags xeflow) -x c++ -c "$app/custom_kernel.cu" -o custom_kernel.o
    fi
    wait $main_build
    c++ main.o custom_kernel.o $(pkg-config --libs xeflow) -o xeflow-custom
    ./xeflow-custom "$app/custom.yaml" --host -q > run.log
    echo "pkg-config: $(head -1 run.log)"' _ "$app" "$out/pkg-config" &
  local pkg_build=$!
  # (Inside step's `if`, set -e is off: each command's status is checked here.)
  local cmake_status=0
  { cmake -S "$app" -B "$out/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DXEFLOW_HOST_KERNEL=ON > "$out/cmake.log" 2>&1 &&
    cmake --build "$out/cmake" -j "$jobs" >> "$out/cmake.log" 2>&1 &&
    "$out/cmake/xeflow-custom" "$app/custom.yaml" --host -q > "$out/cmake/run.log"; } || cmake_status=$?
  if [ "$cmake_status" = 0 ]; then
    echo "CMake: $(head -1 "$out/cmake/run.log")"
  else
    echo "CMake: FAILED ($cmake_status):"
    tail -30 "$out/cmake.log"
  fi
  wait "$pkg_build" || pkg_status=$?
  [ "$cmake_status" = 0 ] && return $pkg_status
  return "$cmake_status"
}
step "out of tree (apps/custom_operator: pkg-config, CMake)" out_of_tree
# The JSON Schema editors check topologies with (xeflow-run --schema): valid draft-07, every topology of the
# repository valid under it, typical mistakes flagged (python3-jsonschema).
step "topology schema (tools/check_schema.py)" python3 tools/check_schema.py build-check/tools/xeflow-run
# Checkpoint and resume (docs/checkpoint.md): 30 runs of topologies/checkpoint_file.yaml killed with SIGKILL
# at random moments (seeded), each resumed until it completes, then one ended by SIGTERM and one by a full
# disk; every output compared byte for byte with an uninterrupted run's. Host executor, a 16 MiB stream
# (--long: 64 MiB): a round costs two or three process starts, so the stream's size is what CI can spare.
kill9_bytes=16MiB
[ "${XF_LONG:-0}" = 1 ] && kill9_bytes=64MiB
step "kill -9 and resume (tools/kill9_check.py, $kill9_bytes)" python3 tools/kill9_check.py \
  --run build-check/tools/xeflow-run --host --bytes "$kill9_bytes" --rounds 30 --seed 36

# --long: the Debian packages (tools/build-debs.sh: a second, release build, which is why it waits for
# --long), unpacked into a clean prefix, and apps/custom_operator built against them with pkg-config and
# run. (dpkg -x, not an install: the machine's own /usr stays as it was.)
debian_packages() {
  local out=$PWD/build-debs root=$PWD/build-debs/root app=$PWD/apps/custom_operator deb
  # (Inside step's `if`, set -e is off: each command's status is checked here.)
  rm -rf "$out" && mkdir -p "$out" || return 1
  bash tools/build-debs.sh "$out" > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; return 1; }
  mkdir -p "$root" "$out/app" || return 1
  for deb in "$out"/xeflow_*.deb "$out"/libxeflow-dev_*.deb; do dpkg -x "$deb" "$root" || return 1; done
  "$root/usr/bin/xeflow-run" --version || return 1
  "$root/usr/bin/xeflow-run" topologies/pingpong.yaml --host -q \
    --set operators.source.params.total_bytes=64MiB > /dev/null || return 1
  local pc=(--define-variable=prefix="$root/usr" xeflow)
  PKG_CONFIG_PATH=$(dirname "$(find "$root" -name xeflow.pc)") || return 1
  export PKG_CONFIG_PATH
  c++ $(pkg-config --cflags "${pc[@]}") -c "$app/main.cpp" -o "$out/app/main.o" || return 1
  c++ $(pkg-config --cflags "${pc[@]}") -x c++ -c "$app/custom_kernel.cu" -o "$out/app/custom_kernel.o" || return 1
  c++ "$out/app/main.o" "$out/app/custom_kernel.o" $(pkg-config --libs "${pc[@]}") -o "$out/app/xeflow-custom" ||
    return 1
  "$out/app/xeflow-custom" "$app/custom.yaml" --host -q --set operators.source.params.total_bytes=64MiB \
    --set operators.sum.params.expect_frames=1024 > /dev/null || return 1
  echo "the packages unpack and run, and apps/custom_operator builds against them and runs"
}
if [ "${XF_LONG:-0}" = 1 ]; then
  bash tools/install-deps.sh debhelper
  step "Debian packages (tools/build-debs.sh, --long)" debian_packages
fi

# --long: each fuzz target of tests/fuzz/targets.txt, built with libFuzzer (clang, -Dfuzz=true, ASan+UBSan
# at -O1: the fuzzer's executions per second matter more than the build's minutes here), run for
# XF_FUZZ_SECONDS from its seeds (its corpus and the folders the manifest names) with a scratch corpus for
# what it finds. A crash, a sanitizer's report, an input slower than 10 s or a process above 2 GiB fails
# the target; the input is kept in build-fuzz/fuzz-runs/<target>/ (crash-*, timeout-*, oom-*) with the log:
# replay it with `build-fuzz/tests/fuzz/<target> FILE`, and once fixed, add it to the target's corpus as
# a regression (README, "Fuzzing"). Not in the default run: the build alone is minutes, and a fuzzer needs
# minutes to reach past its seeds. One line a target: runs, coverage (libFuzzer's cov: edges), result.
fuzz_targets() {
  local dir=build-fuzz seconds=${XF_FUZZ_SECONDS:-60} failed=0 target max_len seeds names=() work code runs cov
  if [ ! -d "$dir" ]; then
    CC=clang CXX=clang++ meson setup "$dir" -Dcuda=disabled -Dmpi=disabled -Dmetrics=disabled -Dfuzz=true \
      -Dapp_tests=false -Db_sanitize=address,undefined -Db_lundef=false -Doptimization=1 -Ddebug=true \
      -Dcpp_args=-gline-tables-only "${unity[@]}" > "$dir.setup.log" 2>&1 || { tail -30 "$dir.setup.log"; return 1; }
  fi
  while read -r target max_len seeds; do names+=("tests/fuzz/$target"); done < <(grep -v '^#' tests/fuzz/targets.txt)
  ninja -C "$dir" -j "$jobs" "${names[@]}" > "$dir/fuzz-build.log" 2>&1 || { tail -40 "$dir/fuzz-build.log"; return 1; }
  while read -r target max_len seeds; do
    work=$dir/fuzz-runs/$target
    rm -rf "$work" && mkdir -p "$work/corpus"
    code=0
    # UBSan's reports end the run (by default UBSan prints and goes on, which libFuzzer would not count).
    # The outer timeout: libFuzzer's -timeout report runs in a signal handler, and when the alarm lands
    # inside ASan's allocator (an input that allocates without end) the report's own malloc deadlocks, and
    # the fuzzer would wait for ever (seen on the loader's yaml-cpp loop); exit 137 then is such an input.
    # shellcheck disable=SC2086  # seeds is a word list of folders
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 timeout -s KILL $((seconds + 60)) \
      "$dir/tests/fuzz/$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len="$max_len" \
      -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" "tests/fuzz/corpus/$target" $seeds \
      > "$work/log" 2>&1 < /dev/null || code=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$work/log" | tail -1 | cut -d' ' -f2)
    if [ "$code" = 0 ]; then
      echo "fuzz $target: ${runs:-?} runs in ${seconds} s, coverage ${cov:-?} edges: ok"
    else
      echo "fuzz $target: ${runs:-?} runs, coverage ${cov:-?} edges: FAILED (exit $code; $work/log, input in $work/):"
      grep -m1 -A12 -E '^==[0-9]+==ERROR|runtime error|ALARM|out-of-memory|invariant broken' "$work/log" || tail -20 "$work/log"
      failed=$((failed + 1))
    fi
  done < <(grep -v '^#' tests/fuzz/targets.txt)
  [ "$failed" = 0 ]
}
if [ "${XF_LONG:-0}" = 1 ]; then
  step "fuzz targets (tests/fuzz, libFuzzer, --long)" fuzz_targets
fi

echo "=== check.sh: $((SECONDS - begin)) s"
# A test program that ends without doctest's summary (a crash, a sanitizer's abort, a timeout) counts as
# one failure, named: its cases cannot be counted, and it must not vanish from the totals.
python3 - "$steps_passed" "$steps_failed" <<'PY'
import json, re, sys
passed, failed, skipped = int(sys.argv[1]), int(sys.argv[2]), 0
pattern = r"\[doctest\] test cases:\s*(\d+) \|\s*(\d+) passed \|\s*(\d+) failed \|\s*(\d+) skipped"
for log in ["build-check", "build-asan", "build-tsan"]:
    try:
        lines = open(f"{log}/meson-logs/testlog.json").read().splitlines()
    except OSError:
        continue
    for line in lines:
        test = json.loads(line)
        counts = list(re.finditer(pattern, test.get("stdout") or ""))
        for m in counts:
            passed += int(m.group(2)); failed += int(m.group(3)); skipped += int(m.group(4))
        if test.get("result") not in ("OK", "SKIP", "EXPECTEDFAIL") and not any(int(m.group(3)) for m in counts):
            failed += 1
            print(f"{log}: {test.get('name')}: {test.get('result')} without doctest's count of failures")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
exit $status
