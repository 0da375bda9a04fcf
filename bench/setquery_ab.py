#!/usr/bin/env python3
"""A/B of one runtime setting on Set Query: merges setquery_bench.py runs made with the setting one way (A)
and the other (B), one output folder per ring size (--capacity N; 0: the table resident), into one JSON,
prints each family's pass under both with B's speedup, and plots the speedups. Make the runs alternately on
one machine (A then B for each ring), so that both see the same machine in the same state.

  for cap in 0 32 128 256; do for s in off on; do
    python3 bench/setquery_bench.py --build build-rel --table bench.xft --passes 16 --reps 3 \\
        --contenders xeflow --capacity $cap --set runtime.spread_warps=$s --out s${s}_c$cap
  done; done
  python3 bench/setquery_ab.py --name setquery_spread --a "spread off" s*off_c* --b "spread on" s*on_c* \\
      --out bench/results/setquery
"""
import argparse
import json
import math
import os

from setquery_rings import FAMILIES, entry, pyplot


def load(folder):
    with open(os.path.join(folder, "setquery.json")) as f:
        d = json.load(f)
    capacity = int(d["command"].split("--capacity")[1].split()[0]) if "--capacity" in d["command"] else 0
    return d, [entry(capacity, x) for x in d["xeflow"]]


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def ring_name(capacity):
    return "resident" if capacity == 0 else f"ring {capacity}"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--name", required=True, help="the recording's name: NAME.json and NAME.png")
    p.add_argument("--a", nargs="+", required=True, metavar="X", help="A's label, then its output folders")
    p.add_argument("--b", nargs="+", required=True, metavar="X", help="B's label, then its output folders")
    p.add_argument("--out", required=True, help="folder for NAME.json and NAME.png")
    args = p.parse_args()
    if len(args.a) < 2 or len(args.b) < 2:
        p.error("--a and --b each take a label and at least one folder")
    labels = {"a": args.a[0], "b": args.b[0]}
    docs, at = [], {}
    for side, folders in (("a", args.a[1:]), ("b", args.b[1:])):
        for folder in folders:
            d, entries = load(folder)
            docs.append(d)
            for e in entries:
                key = (e["family"], e["mode"], e["capacity"])
                if (side,) + key in at:
                    p.error(f"{folder}: a second {side.upper()} run of {key}")
                at[(side,) + key] = e
    pairs = []
    for (side, fam, mode, cap), e in sorted(at.items()):
        if side == "a" and ("b", fam, mode, cap) in at:
            pairs.append({"family": fam, "mode": mode, "capacity": cap, "a": e, "b": at[("b", fam, mode, cap)],
                          "b_speedup": e["steady_pass_ms"] / at[("b", fam, mode, cap)]["steady_pass_ms"]})
    unpaired = [k for k in at if (("b" if k[0] == "a" else "a"),) + k[1:] not in at]
    if not pairs:
        p.error("no family, mode and ring was run both ways")
    first = docs[0]
    merged = {"benchmark": args.name, "labels": labels, "device": first["device"],
              "commits": sorted({d["commit"] for d in docs}), "dates": [d["date"] for d in docs],
              "commands": [d["command"] for d in docs],
              "command": "bench/setquery_ab.py " + " ".join(
                  ["--name", args.name, "--a"] + args.a + ["--b"] + args.b + ["--out", args.out]),
              "rows": first["rows"], "frames": first["frames"], "passes": first["passes"], "pairs": pairs,
              "unpaired": [list(k) for k in unpaired]}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, args.name + ".json"), "w") as f:
        json.dump(merged, f, indent=1)

    capacities = sorted({q["capacity"] for q in pairs})
    modes = [m for m in ("dma", "mapped") if any(q["mode"] == m for q in pairs)]
    families = [f for f in FAMILIES if any(q["family"] == f for q in pairs)]
    by = {(q["family"], q["mode"], q["capacity"]): q for q in pairs}
    print(f"{first['device']}, {first['rows']} rows ({first['frames']} frames), commits "
          f"{', '.join(merged['commits'])}")
    print(f"ms a pass (median): A = {labels['a']}, B = {labels['b']}; B's speedup; in brackets the share of a "
          "block's warps a busy round ran, A/B")
    for mode in modes:
        for cap in capacities:
            print(f"-- {mode}, {ring_name(cap)}")
            ups = []
            for fam in families:
                q = by.get((fam, mode, cap))
                if not q:
                    continue
                ups.append(q["b_speedup"])
                wa, wb = (100 * (q[s]["warps_placed_share"] or 0) for s in ("a", "b"))
                same = "" if q["a"]["answers"] == q["b"]["answers"] else f"  answers differ: {q['b']['answers']}"
                print(f"   {fam:5} {q['a']['steady_pass_ms']:9.2f} {q['b']['steady_pass_ms']:9.2f}"
                      f" {q['b_speedup']:6.2f}x  ({wa:3.0f} % / {wb:3.0f} %)  {q['a']['answers']}{same}")
            print(f"   geomean speedup {geomean(ups):.2f}x")
    if unpaired:
        print("run one way only:", ", ".join("/".join(map(str, k)) for k in unpaired))
    plt = pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(1, len(modes), figsize=(6 * len(modes), 4.5), squeeze=False)
    width = 0.8 / len(capacities)
    for col, mode in enumerate(modes):
        ax = axes[0][col]
        for i, cap in enumerate(capacities):
            xs = [k + (i - (len(capacities) - 1) / 2) * width for k in range(len(families))]
            ys = [by[(f, mode, cap)]["b_speedup"] if (f, mode, cap) in by else 0 for f in families]
            ax.bar(xs, ys, width, label=ring_name(cap))
        ax.axhline(1, color="black", linewidth=0.8)
        ax.set_xticks(range(len(families)))
        ax.set_xticklabels(families)
        ax.set_ylabel(f"{labels['b']}: speedup over {labels['a']}")
        ax.set_title(f"{mode}: a pass of {first['rows']} rows")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"Set Query, {labels['a']} vs {labels['b']} — {first['device']}, "
                 f"commit {', '.join(merged['commits'])}", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, args.name + ".png"), dpi=110)
    print(f"wrote {args.out}/{args.name}.json and {args.name}.png")


if __name__ == "__main__":
    main()
