#!/usr/bin/env bash
# Model-checks the topic's slot protocol (topics/model/slot_protocol.pml) with SPIN: for each configuration
# it generates the verifier (spin -a), compiles pan.c with gcc and runs it, printing one line (states,
# memory, time, result). A configuration of the protocol as written must end with no error and nothing
# unreached but the memory process's end; each mutation (a -DBUG_... that breaks one ordering or step)
# must end with the counterexample its line names, so that a model that checks nothing cannot pass.
# Exits 1 when any line fails.
#
# Default (CI, tools/check.sh): capacities 1 and 2, two CPU source publishers, a CPU and a GPU subscriber
# group, and one mutation (a commit without release order) — a few seconds. --long (or XF_LONG=1):
# capacities 1–3 with CPU and with GPU publishers, map publishers, groups on either side, two workers in a
# group, the progress check (busy polls, non-progress cycles under weak fairness) and every mutation.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
model=topics/model/slot_protocol.pml
long=${XF_LONG:-0}
for arg in "$@"; do
  case $arg in
    --long) long=1 ;;
    *) echo "usage: tools/check_slot_model.sh [--long]" >&2; exit 2 ;;
  esac
done
for tool in spin gcc; do
  command -v "$tool" > /dev/null || { echo "check_slot_model: $tool is not installed (tools/install-deps.sh)"; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
checked=0
# Configurations run side by side, one a core: each is one process (spin, gcc, then pan), and the default
# set takes half the time on CI's two cores.
parallel=$(nproc)

# name, expected ("ok", or the counterexample: "assertion violated", "invalid end state", "non-progress
# cycle"), mode ("safety": assertions and end states; "progress": -DNP, weak fairness), model -D flags...:
# starts the configuration in the background; its line goes to its folder's `report`.
verify() {
  local dir
  dir=$work/$(printf '%03d' "$checked")
  checked=$((checked + 1))
  mkdir -p "$dir"
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  verify_in "$dir" "$@" > "$dir/report" 2>&1 &
}

# folder, then verify's arguments: builds and runs one configuration there, prints its line, and leaves a
# `failed` file when it fails.
verify_in() {
  local dir=$1 name=$2 expect=$3 mode=$4
  shift 4
  local cflags=(-w -DCOLLAPSE) args=(-m200000) opt=-O0 hash=-w20
  case $mode in
    safety) cflags+=(-DSAFETY) ;;
    # -DNFAIR=3: room for weak fairness over the model's processes; -l: non-progress cycles, -f: fair.
    progress) cflags+=(-DNP -DNFAIR=3); args+=(-l -f) ;;
  esac
  # gcc -O1 takes half a second longer than -O0 and halves the search: worth it from a million states
  # (capacity 2) on; a mutation stops at its first counterexample. The hash table grows with the states.
  if [ "$expect" = ok ]; then
    [[ " $* " == *" -DCAP=2 "* ]] && opt=-O1 hash=-w22
    [[ " $* " == *" -DCAP=3 "* ]] && opt=-O2 hash=-w25
    [ "$mode" = progress ] && hash=-w22
  fi
  args+=("$hash")
  local start=$EPOCHREALTIME
  # A copy beside pan: spin -t looks for the counterexample's trail next to the model it is given.
  cp "$root/$model" "$dir/"
  if ! (cd "$dir" && spin "$@" -a "${model##*/}" > spin.log 2>&1 && gcc "$opt" "${cflags[@]}" -o pan pan.c \
    > gcc.log 2>&1); then
    echo "FAILED  $name: the verifier did not build"
    cat "$dir/spin.log" "$dir/gcc.log" 2> /dev/null | tail -20
    touch "$dir/failed"
    return
  fi
  local built=$EPOCHREALTIME
  (cd "$dir" && ./pan "${args[@]}" > pan.log 2>&1) || true
  local done_at=$EPOCHREALTIME log="$dir/pan.log"
  local errors states memory found unreached problem=""
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$log" | head -1)
  states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$log" | head -1)
  memory=$(sed -n 's/^ *\([0-9.]*\).*total actual memory usage.*/\1/p' "$log" | head -1)
  found=$(sed -n 's/^pan:1: \(.*\) (at depth.*/\1/p' "$log" | head -1)
  # Statements SPIN never reached, but the memory process's end (it waits for stores forever).
  unreached=$(awk '/^unreached in /{p=$0; next} /^\t.*state [0-9]+, "/{ if (!(p ~ /proctype memory/ &&
    $0 ~ /"-end-"/)) print p ": " $0 }' "$log")
  if [ -z "$errors" ]; then
    problem="no result from pan"
  elif grep -q "max search depth too small" "$log"; then
    problem="search depth too small (-m)"
  elif [ "$expect" = ok ]; then
    if [ "$errors" != 0 ]; then
      problem="$found"
    elif [ -n "$unreached" ]; then
      problem="unreached code"
    fi
  elif [ "$errors" = 0 ] || [[ "$found" != "$expect"* ]]; then
    problem="expected a counterexample ($expect), got ${found:-none}"
  fi
  local result="ok"
  [ "$expect" != ok ] && result="caught: $found"
  [ -n "$problem" ] && result="FAILED: $problem"
  printf '%-8s %-58s %10s states %8s MB  build %5.1f s  verify %5.1f s  %s\n' \
    "$([ -z "$problem" ] && echo ok || echo FAILED)" "$name" "${states:-?}" "${memory:-?}" \
    "$(awk "BEGIN{print $built - $start}")" "$(awk "BEGIN{print $done_at - $built}")" "$result"
  if [ -n "$problem" ]; then
    touch "$dir/failed"
    [ -n "$unreached" ] && echo "$unreached"
    grep -E "^pan:[0-9]|errors:" "$log" | head -5
    echo "  (log kept: $log)"
    [ "${errors:-0}" != 0 ] && echo "  (the counterexample: cd $dir && spin -t -p $* ${model##*/})"
  fi
  return 0
}

# GPU_GROUPS is a bit mask: bit g set puts subscriber group g on the GPU. The longest runs start first.
cpu_gpu="-DGPU_GROUPS=2"
if [ "$long" = 1 ]; then
  verify "cap=3 pubs=2 cpu groups=cpu+gpu" ok safety -DCAP=3 -DPUB_GPU=0 $cpu_gpu
  verify "cap=3 pubs=2 gpu groups=cpu+gpu" ok safety -DCAP=3 -DPUB_GPU=1 $cpu_gpu
fi
verify "cap=2 pubs=2 cpu groups=cpu+gpu" ok safety -DCAP=2 -DPUB_GPU=0 $cpu_gpu
verify "cap=1 pubs=2 cpu groups=cpu+gpu" ok safety -DCAP=1 -DPUB_GPU=0 $cpu_gpu
if [ "$long" = 1 ]; then
  for cap in 1 2; do
    verify "cap=$cap pubs=2 gpu groups=cpu+gpu" ok safety -DCAP=$cap -DPUB_GPU=1 $cpu_gpu
  done
  for pub in 0 1; do
    side=$([ $pub = 1 ] && echo gpu || echo cpu)
    verify "cap=2 pubs=2 $side groups=cpu+cpu" ok safety -DCAP=2 -DPUB_GPU=$pub -DGPU_GROUPS=0
    verify "cap=2 pubs=2 $side groups=gpu+gpu" ok safety -DCAP=2 -DPUB_GPU=$pub -DGPU_GROUPS=3
    verify "progress cap=1 pubs=2 $side groups=cpu+gpu" ok progress -DCAP=1 -DPUB_GPU=$pub -DBUSY_WAIT $cpu_gpu
    verify "cap=2 map pubs=2 $side groups=cpu+gpu" ok safety -DCAP=2 -DPUB_GPU=$pub -DPUB_MAP=1 $cpu_gpu
    # Two workers in the CPU group (capacity 2 would be 22 million states).
    verify "cap=1 pubs=2 $side groups=cpu(2 workers)+gpu" ok safety -DCAP=1 -DPUB_GPU=$pub -DWORKERS=2 $cpu_gpu
  done
fi

# Mutations: each must be caught.
verify "mutation: commit without release" "assertion violated" safety -DCAP=1 -DBUG_PLAIN_COMMIT $cpu_gpu
if [ "$long" = 1 ]; then
  verify "mutation: no end of stream stored (deadlock)" "invalid end state" safety -DCAP=1 -DBUG_CLOSE_NEVER \
    $cpu_gpu
  verify "mutation: GPU commit without the round's fence" "assertion violated" safety -DCAP=1 -DPUB_GPU=1 \
    -DBUG_NO_PUBLISH_FENCE $cpu_gpu
  verify "mutation: subscriber release without order" "assertion violated" safety -DCAP=2 -DBUG_PLAIN_RELEASE \
    $cpu_gpu
  verify "mutation: poll without acquire" "assertion violated" safety -DCAP=2 -DBUG_NO_ACQUIRE $cpu_gpu
  verify "mutation: release before the frame is read" "assertion violated" safety -DCAP=2 -DBUG_EARLY_RELEASE \
    $cpu_gpu
  verify "mutation: slot_free one occupant early (heap)" "assertion violated" safety -DCAP=2 \
    -DBUG_SLOT_FREE_EARLY $cpu_gpu
  verify "mutation: slot_free one occupant early (GPU, frame lost)" "invalid end state" safety -DCAP=1 \
    -DPUB_GPU=1 -DBUG_SLOT_FREE_EARLY $cpu_gpu
  verify "mutation: the first closer ends the stream" "assertion violated" safety -DCAP=2 -DBUG_CLOSE_FIRST \
    $cpu_gpu
  verify "mutation: no end of stream stored (livelock)" "non-progress cycle" progress -DCAP=1 -DBUSY_WAIT \
    -DBUG_CLOSE_NEVER $cpu_gpu
  verify "mutation: take split in two (2 workers)" "assertion violated" safety -DCAP=1 -DWORKERS=2 \
    -DBUG_TAKE_SPLIT $cpu_gpu
fi
wait
failed=0
for dir in "$work"/*/; do
  cat "$dir/report"
  [ -e "$dir/failed" ] && failed=$((failed + 1))
done
[ "$failed" != 0 ] && trap - EXIT  # the logs and counterexamples stay for a look
echo "slot protocol model: $checked configurations, $failed failed"
[ "$failed" = 0 ]
