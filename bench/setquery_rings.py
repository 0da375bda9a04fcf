#!/usr/bin/env python3
"""Merges setquery_bench.py runs of one table through rings of different sizes (--capacity N, one output
folder per N) into one JSON, prints a table, and plots a pass's time and the kernel's state against the
ring's frames: what a ring smaller than the table costs, and where it stops mattering.

  for cap in 32 64 128 256; do
    python3 bench/setquery_bench.py --build build-rel --table bench.xft --passes 16 --reps 3 \\
        --contenders xeflow --capacity $cap --out ring$cap
  done
  python3 bench/setquery_rings.py ring32 ring64 ring128 ring256 --out bench/results/setquery
"""
import argparse
import json
import os

FAMILIES = ["Q1", "Q2A", "Q2B", "Q3A", "Q3B", "Q4A", "Q4B"]


def entry(capacity, x):
    run = x.get("steady_run", {})
    shares = run.get("kernel_cycle_shares", {})
    stream = run.get("stream_s") or 0
    return {"capacity": capacity, "family": x["family"], "mode": x["mode"], "queries": x["queries"],
            "steady_pass_ms": x["steady_pass_s"] * 1e3, "answers": x["answers"],
            "kernel_cycle_shares": shares, "fence_us": run.get("fence_us"),
            "items_per_frame": run.get("items_per_frame"), "items_per_busy_round": run.get("items_per_busy_round"),
            "warps_placed_share": run.get("warps_placed_share"), "busy_round_us": run.get("busy_round_us"),
            "source_blocked_share": share(run.get("source_blocked_s"), stream),
            "bridge_busy_share": share(run.get("bridge_busy_s"), stream)}


def pyplot():
    """matplotlib's pyplot, drawing to files; None (saying so) where matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot)")
        return None
    return plt


def share(seconds, stream):
    return seconds / stream if seconds is not None and stream else None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", help="setquery_bench.py output folders, one per --capacity")
    p.add_argument("--out", required=True, help="folder for setquery_rings.json and setquery_rings.png")
    args = p.parse_args()
    docs = []
    for folder in args.runs:
        with open(os.path.join(folder, "setquery.json")) as f:
            docs.append(json.load(f))
    entries = []
    for d in docs:
        capacity = int(d["command"].split("--capacity")[1].split()[0])
        entries += [entry(capacity, x) for x in d["xeflow"]]
    first = docs[0]
    merged = {"benchmark": "setquery_rings", "device": first["device"], "commit": first["commit"],
              "dates": [d["date"] for d in docs], "commands": [d["command"] for d in docs],
              "command": "bench/setquery_rings.py " + " ".join(args.runs), "rows": first["rows"],
              "frames": first["frames"], "passes": first["passes"], "entries": entries}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "setquery_rings.json"), "w") as f:
        json.dump(merged, f, indent=1)
    capacities = sorted({e["capacity"] for e in entries})
    modes = [m for m in ("dma", "mapped") if any(e["mode"] == m for e in entries)]
    families = [f for f in FAMILIES if any(e["family"] == f for e in entries)]
    at = {(e["family"], e["mode"], e["capacity"]): e for e in entries}
    print(f"{first['device']}, {first['rows']} rows ({first['frames']} frames), commit {first['commit']}")
    print("ms a pass (median); in brackets: the share of a block's warps a busy round ran")
    print(f"{'family':8} {'mode':7}" + "".join(f"{'ring ' + str(c):>18}" for c in capacities))
    for fam in families:
        for mode in modes:
            cells = []
            for c in capacities:
                e = at.get((fam, mode, c))
                cells.append(f"{e['steady_pass_ms']:9.2f} ({100 * (e['warps_placed_share'] or 0):3.0f} %)"
                             if e else " " * 18)
            print(f"{fam:8} {mode:7}" + "".join(f"{c:>18}" for c in cells))
    plt = pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(2, len(modes), figsize=(6 * len(modes), 8), squeeze=False)
    for col, mode in enumerate(modes):
        for fam in families:
            cs = [c for c in capacities if (fam, mode, c) in at]
            axes[0][col].plot(cs, [at[(fam, mode, c)]["steady_pass_ms"] for c in cs], marker="o", label=fam)
            axes[1][col].plot(cs, [100 * (at[(fam, mode, c)]["warps_placed_share"] or 0) for c in cs],
                              marker="o", label=fam)
        axes[0][col].set_title(f"{mode}: a pass of {first['rows']} rows")
        axes[0][col].set_ylabel("ms a pass (median)")
        axes[1][col].set_ylabel("% of a block's warps a busy round ran")
        for r in (0, 1):
            axes[r][col].set_xscale("log", base=2)
            axes[r][col].set_xticks(capacities)
            axes[r][col].set_xticklabels([str(c) for c in capacities])
            axes[r][col].set_xlabel("ring: the topic's frames")
            axes[r][col].grid(alpha=0.3)
        axes[0][col].legend(fontsize=7)
    fig.suptitle(f"Set Query through a ring of frames — {first['device']}, commit {first['commit']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "setquery_rings.png"), dpi=110)
    print(f"wrote {args.out}/setquery_rings.json and setquery_rings.png")


if __name__ == "__main__":
    main()
