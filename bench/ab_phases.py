#!/usr/bin/env python3
"""The kernel's phase cycles per run of an ab_stream.py output folder (its raw/ sweeps).

For each run: GB/s, and the persistent kernel's cycles per busy round and block in each phase (subscribe,
schedule, compute, publish, idle), with its round counts. Shows whether two builds differ in the kernel
(a phase grows) or outside it (the kernel idles more while the CPU side sets the rate). Writes
OUT/phases.json and prints a line per run.

  python3 bench/ab_phases.py OUT
"""
import glob
import json
import os
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    rows = []
    for path in sorted(glob.glob(os.path.join(out, "raw", "sweep-*.json"))):
        with open(path) as f:
            doc = json.load(f)
        for p in doc["points"]:
            k = p.get("kernel") or {}
            busy = k.get("busy_rounds") or 0
            blocks = k.get("blocks") or 1
            row = {"run": os.path.basename(path), "point": p["size"], "gbps": p.get("gbps"),
                   "rounds": k.get("rounds"), "busy_rounds": busy}
            for phase in ("subscribe", "schedule", "compute", "publish", "idle"):
                cycles = k.get(phase + "_cycles")
                row[phase] = round(cycles / busy / blocks) if cycles and busy else None
            rows.append(row)
    with open(os.path.join(out, "phases.json"), "w") as f:
        json.dump(rows, f, indent=1)
    for r in rows:
        phases = " ".join(f"{ph} {r[ph]}" for ph in ("subscribe", "schedule", "compute", "publish", "idle"))
        gbps = f"{r['gbps']:.2f}" if r["gbps"] else "-"
        print(f"{r['run']} {r['point']}: {gbps} GB/s; cycles per busy round and block: {phases}; "
              f"rounds {r['rounds']}, busy {r['busy_rounds']}")


if __name__ == "__main__":
    main()
