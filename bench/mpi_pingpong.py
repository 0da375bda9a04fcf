#!/usr/bin/env python3
"""The MPI ping-pong (the GPU MPI datatypes paper's Fig. 7): reads the JSON of xeflow-mpi-pingpong
(bench/mpi/), prints one-way time per contender at each block size and message size with the engine's
speedup over copying the whole extent and letting the MPI library pack it, checks the issue's target (the
engine at least 5x copy_extent_mpi_pack for 8 B blocks at messages of 1 MiB and more), and draws one panel
per block size (one-way time against packed size, log-log) into a PNG.

  mpirun -n 2 build-rel/bench/mpi/xeflow-mpi-pingpong --json pingpong.json
  python3 bench/mpi_pingpong.py --json pingpong.json --png pingpong.png
"""
import argparse
import json
import sys

CONTENDERS = ["engine", "engine_staged", "engine_device_copy", "copy_extent_mpi_pack", "mpi_cuda_aware"]
TARGET_SPEEDUP = 5.0
TARGET_BLOCK = 8
TARGET_MIN_BYTES = 1 << 20


def size_text(b):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            return f"{b / scale:g} {unit}"
    return f"{b} B"


def timed(row):
    return row is not None and row.get("verified") and "median_us" in row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", required=True, help="xeflow-mpi-pingpong's --json output")
    ap.add_argument("--png", help="draw the figure here")
    a = ap.parse_args()
    doc = json.load(open(a.json))
    rows = doc["results"]
    print(f"{doc['benchmark']} on {doc['device']}, {doc['date']}, commit {doc.get('commit') or '?'}")
    print(f"MPI: {doc['mpi_library'].splitlines()[0]}; {doc['cuda_awareness']['reason']}")
    cells = {(r["block_bytes"], r["packed_bytes"], r["contender"]): r for r in rows}
    blocks = sorted({r["block_bytes"] for r in rows})
    sizes = sorted({r["packed_bytes"] for r in rows})
    present = [c for c in CONTENDERS if any(r["contender"] == c for r in rows)]
    status = 0
    for b in blocks:
        print(f"\n{b} B blocks (stride {2 * b} B): one-way us, median (speedup over copy_extent_mpi_pack)")
        print(f"{'packed':>10} " + " ".join(f"{c:>24}" for c in present) + "  route")
        for s in sizes:
            base = cells.get((b, s, "copy_extent_mpi_pack"))
            line = f"{size_text(s):>10} "
            for c in present:
                r = cells.get((b, s, c))
                if r is None:
                    text = "-"
                elif "skipped" in r:
                    text = "skipped"
                elif not r.get("verified"):
                    text = "MISMATCH"
                    status = 1
                else:
                    text = f"{r['median_us']:.1f}"
                    if c != "copy_extent_mpi_pack" and timed(base):
                        text += f" ({base['median_us'] / r['median_us']:.1f}x)"
                line += f"{text:>24} "
            engine = cells.get((b, s, "engine"), {})
            print(line + " " + engine.get("route", "-"))
    skipped = {r["contender"]: r["skipped"] for r in rows if "skipped" in r}
    for c, why in skipped.items():
        print(f"{c}: skipped ({why})")

    print(f"\ntarget: engine >= {TARGET_SPEEDUP:g}x copy_extent_mpi_pack for {TARGET_BLOCK} B blocks at >= "
          f"{size_text(TARGET_MIN_BYTES)}")
    checked = False
    for s in sizes:
        if s < TARGET_MIN_BYTES:
            continue
        e, base = cells.get((TARGET_BLOCK, s, "engine")), cells.get((TARGET_BLOCK, s, "copy_extent_mpi_pack"))
        if not (timed(e) and timed(base)):
            continue
        checked = True
        speedup = base["median_us"] / e["median_us"]
        met = speedup >= TARGET_SPEEDUP
        print(f"  {size_text(s):>8}: {speedup:.2f}x ({e.get('route', '?')}) {'met' if met else 'NOT met'}")
    if not checked:
        print("  no point to check (no 8 B blocks at 1 MiB or more in this run)")

    if a.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, len(blocks), figsize=(5 * len(blocks), 4.2), squeeze=False)
        for ax, b in zip(axes[0], blocks):
            for c in present:
                pts = [(s, cells[(b, s, c)]["median_us"]) for s in sizes if timed(cells.get((b, s, c)))]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=c)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"vector of doubles, {b} B blocks")
            ax.set_xlabel("packed message (bytes)")
            ax.set_ylabel("one-way time (us, median)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        fig.suptitle(f"ping-pong, {doc['device']} ({doc['date'][:10]}, {doc.get('commit') or '?'})", fontsize=10)
        fig.tight_layout()
        fig.savefig(a.png, dpi=120)
        print(f"wrote {a.png}")
    return status


if __name__ == "__main__":
    sys.exit(main())
