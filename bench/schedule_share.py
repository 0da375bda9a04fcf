#!/usr/bin/env python3
"""Prints the schedule-phase recording's tables (schedule share, the phase split, throughput) from its
sweep-*.json files and draws schedule-share.png into that folder (bench/results/stream-schedule/ by default).

  python3 bench/schedule_share.py [RESULTS_DIR]
"""
import json
import os
import statistics
import sys

HERE = (sys.argv[1] if len(sys.argv) > 1
        else os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "stream-schedule"))
PHASES = ["subscribe_cycles", "schedule_cycles", "compute_cycles", "publish_cycles"]


def points(name):
    out = {}
    for p in json.load(open(os.path.join(HERE, name)))["points"]:
        raw, k = p["raw"], p["raw"]["kernel"]
        busy = sum(k[f] for f in PHASES)
        out[(p["size"], p["op"], p["stages"])] = {
            "share": 100 * k["schedule_cycles"] / busy,
            "gbps": raw["operators"][0]["bytes_out"] / raw["stream_seconds"] / 1e9,
            "per_round": {f: k.get(f, 0) / k["busy_rounds"] for f in
                          ["schedule_cycles", "sched_a_cycles", "sched_b1_cycles", "sched_c_cycles"]},
        }
    return out


def runs(*names):
    return [points(n) for n in names]


before = runs("sweep-7503d3c-a.json", "sweep-7503d3c-b.json")
ahead = runs("sweep-ac7e772-loads-ahead-a.json", "sweep-ac7e772-loads-ahead-b.json")
after = runs("sweep-e2d4a70-a.json", "sweep-e2d4a70-b.json", "sweep-5db058e-a.json", "sweep-5db058e-b.json")
keys = sorted(before[0], key=lambda k: (k[0] != "4KiB", k[1], k[2]))


def cell(rs, key, field="share"):
    vals = [r[key][field] for r in rs if key in r]
    return f"{min(vals):.2f}–{max(vals):.2f}" if len(vals) > 1 else f"{vals[0]:.2f}"


print("| point | 7503d3c (2 runs) | loads ahead (ac7e772) | 5db058e (4 runs) |")
print("|---|---|---|---|")
for k in keys:
    print(f"| C(G){k[2]}C {k[1]} {k[0]} | {cell(before, k)} | {cell(ahead, k)} | {cell(after, k)} |")

split = points("sweep-split-exp.json")
print("\nphase split (sweep-split-exp.json), SM cycles per busy round: schedule = A + B1 + B2 + C")
print("| point | schedule | A: costs, partition | B1: clear work-vector | B2: walk items | C: counters, heartbeat |")
print("|---|---|---|---|---|---|")
for k in keys:
    r = split[k]["per_round"]
    b2 = r["schedule_cycles"] - r["sched_a_cycles"] - r["sched_b1_cycles"] - r["sched_c_cycles"]
    print(f"| C(G){k[2]}C {k[1]} {k[0]} | {r['schedule_cycles']:.0f} | {r['sched_a_cycles']:.0f} | "
          f"{r['sched_b1_cycles']:.0f} | {b2:.0f} | {r['sched_c_cycles']:.0f} |")

print("\nthroughput, GB/s (stream), median of the runs")
print("| point | 7503d3c | 5db058e |")
print("|---|---|---|")
for k in keys:
    m = lambda rs: statistics.median(r[k]["gbps"] for r in rs if k in r)
    print(f"| C(G){k[2]}C {k[1]} {k[0]} | {m(before):.2f} | {m(after):.2f} |")

import matplotlib  # noqa: E402
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

fig, ax = plt.subplots(figsize=(11, 4.2))
labels = [f"{k[0]}\n{k[1]} n={k[2]}" for k in keys]
for i, (rs, name, color) in enumerate([(before, "7503d3c (every item walked)", "#c44e52"),
                                       (after, "5db058e (ballot, ready items only)", "#4c72b0")]):
    xs = [j + (i - 0.5) * 0.38 for j in range(len(keys))]
    ys = [statistics.mean(r[k]["share"] for r in rs if k in r) for k in keys]
    lo = [y - min(r[k]["share"] for r in rs if k in r) for y, k in zip(ys, keys)]
    hi = [max(r[k]["share"] for r in rs if k in r) - y for y, k in zip(ys, keys)]
    ax.bar(xs, ys, width=0.38, color=color, label=name, yerr=[lo, hi], capsize=2)
ax.axhline(3.0, color="black", linestyle="--", linewidth=1, label="target ≤ 3 %")
ax.set_xticks(range(len(keys)), labels, fontsize=7)
ax.set_ylabel("schedule, % of busy round time")
ax.set_title("C(G)nC on the H100 (2026-11-24): the schedule phase's share, mean and range of the runs")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(os.path.join(HERE, "schedule-share.png"), dpi=120)
print("\nwrote schedule-share.png")
