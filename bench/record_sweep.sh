#!/usr/bin/env bash
# One call of a recorded sweep on the device machine: builds COMMIT from `git archive` (so edits in the
# working tree never leak into a recording), then runs part PART of `stream_bench.py plan` into $OUT.
# The link ceilings are measured once per machine instance: on the call that had to build (a fresh
# machine), since a warm machine keeps build-sweep-<commit>/ between calls. The run writes into a scratch
# folder (its generated topologies are many files, and each is kept inside the sweep's JSON anyway) and
# only the JSON files are copied to $OUT, also when the run fails or is interrupted.
#
#   bash bench/record_sweep.sh COMMIT PART BUDGET_MIN [stream_bench run options...]
#   PART 0 = no --part (use with --skip-done DIR to finish what earlier parts left)
# BUDGET_MIN is the whole call's: a build and the ceilings (a fresh machine) come out of it, since the run's
# own --time-budget starts after them (on 2026-11-24 two fresh-machine calls with 5.5 min ran into the
# device tool's limit and lost most of their part). Give the tool's timeout_s about BUDGET_MIN·60 + 90.
set -euo pipefail
# The device machine's copy of .git is the checkout the session started from: a commit made since then
# travels as a bundle (`git bundle create .carry/NAME.bundle START..HEAD`, with `carry: [".carry"]`).
if ! git cat-file -e "$1^{commit}" 2>/dev/null; then
  for b in .carry/*.bundle; do [[ -e $b ]] && git bundle unbundle "$b" >/dev/null; done
fi
commit=$(git rev-parse "$1") part=$2 budget=$3 call_budget=$3
shift 3
started=$SECONDS
out=${OUT:?set OUT to the folder the results go to}
tree=build-sweep-${commit:0:7}
ceiling=off
if [[ ! -x $tree/build/tools/xeflow-run ]]; then
  rm -rf "$tree" && mkdir -p "$tree"
  git archive "$commit" | tar -x -C "$tree"
  (cd "$tree" && meson setup build -Dbuildtype=release >/dev/null && ninja -C build >/dev/null)
  ceiling=on
fi
# What is left for the points: the budget less the build so far and, on a fresh machine, ~2 min of ceilings.
budget=$(awk -v b="$budget" -v built=$((SECONDS - started)) -v ceil="$ceiling" \
  'BEGIN { left = b - built / 60 - (ceil == "on" ? 2 : 0); printf "%.1f", left < 0.5 ? 0.5 : left }')
echo "record_sweep: $budget min left for the points"
tag=part$part
selection=(--part "$part")
if [[ $part == 0 ]]; then tag=rest; selection=(); fi
tag=${TAG:-$tag}
root=$PWD
cd "$tree"
# --skip-done paths given relative to the repository root still resolve from the archive's tree.
args=()
for a in "$@"; do
  if [[ -e $root/$a && ! -e $a ]]; then args+=("$root/$a"); else args+=("$a"); fi
done
scratch=$PWD/results-$tag
rm -rf "$scratch"
trap 'cp "$scratch"/*.json "$out"/ 2>/dev/null || true' EXIT
# --time-budget only decides which points start: one may still run past it by up to its own --timeout (on
# 2026-11-24 the 16 KiB `+index` ablation point took 6.5 min and the device tool killed the call, this copy
# with it). So the run is stopped, as by Ctrl-C (the JSON keeps every finished point), 45 s after the
# call's budget: before the tool's limit (BUDGET_MIN·60 + 90) and with time left for the copy.
deadline=$(awk -v b="$call_budget" -v spent=$((SECONDS - started)) 'BEGIN { d = b * 60 + 45 - spent; printf "%d", d < 60 ? 60 : d }')
timeout -s TERM "$deadline" python3 bench/stream_bench.py run --build build --out "$scratch" --no-steady "${selection[@]}" \
  --tag "$tag" --time-budget "$budget" --ceiling "$ceiling" --commit "$commit" "${args[@]}"
