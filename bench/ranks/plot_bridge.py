#!/usr/bin/env python3
"""A topic carried between two MPI ranks against raw MPI: reads the JSON of xeflow-bridge-bench
(bench/ranks/), prints its table (streaming GB/s of raw MPI and of the bridge, stepped by mpi::run_link
and by the launcher's session loop; one-way times of MPI at 8 B and at the frame size and of the bridge;
the latency the bridge adds), and draws two panels into a PNG next to the JSON (bridge.json ->
bridge.png): throughput against frame size, one-way latency against frame size. Each point is the median
of the repeats; the bars span the repeats' samples.

  mpirun -n 2 build-rel/bench/ranks/xeflow-bridge-bench --json bridge.json
  python3 bench/ranks/plot_bridge.py bridge.json [--png other.png]
"""
import argparse
import json
import os
import sys

# (key in each result, label, colour)
STREAMS = [("mpi_stream", "raw MPI (Isend/Irecv, window = capacity)", "#444"),
           ("bridge_stream", "bridge, mpi::run_link", "#2a7"),
           ("session_stream", "bridge, the launcher's session loop", "#27c")]
LATENCIES = [("mpi_one_way_8B", "MPI, 8 B", "#999", "o", ":"),
             ("mpi_one_way", "MPI, frame size", "#444", "o", "-"),
             ("bridge_one_way", "bridge, frame size", "#2a7", "s", "-")]


def size_text(b):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            return f"{b / scale:g} {unit}"
    return f"{b} B"


def cell(value, width, percent=False):
    """The value in `width` characters (a percentage ends in %), or a dash for a loop the run did not
    measure (--link-loop)."""
    if value is None:
        return f"{'-':>{width}}"
    return f"{value:{width - 1}.1f}%" if percent else f"{value:{width}.2f}"


def table(doc):
    print(f"{doc['benchmark']} on {doc['device']}, {doc['date']}, commit {doc.get('commit') or '?'}")
    print(f"MPI: {doc['mpi_library'].splitlines()[0]}; ranks on {' and '.join(doc['hosts'])}")
    o = doc["options"]
    print(f"capacity {o['capacity']}, {size_text(o['bytes'])} a stream at least, {o['repeats']} repeats"
          + ("; --quick (a smoke run)" if o.get("quick") else ""))
    print(f"\n{'frame':>9} {'MPI GB/s':>9} {'bridge GB/s':>11} {'bridge/MPI':>10} {'session GB/s':>12} "
          f"{'session/MPI':>11} {'MPI 8 B us':>11} {'MPI S us':>10} {'bridge us':>10} {'added us':>9} "
          f"{'added/MPI 8B':>12}")
    for r in doc["results"]:
        rate = {k: (r[k] or {}).get("gbps") for k, _, _ in STREAMS}
        print(f"{size_text(r['frame_bytes']):>9} {cell(rate['mpi_stream'], 9)} "
              f"{cell(rate['bridge_stream'], 11)} {cell(r.get('bridge_vs_mpi_percent'), 10, True)} "
              f"{cell(rate['session_stream'], 12)} {cell(r.get('session_vs_mpi_percent'), 11, True)} "
              f"{r['mpi_one_way_8B']['one_way_us']:11.2f} {r['mpi_one_way']['one_way_us']:10.2f} "
              f"{r['bridge_one_way']['one_way_us']:10.2f} {r['added_us']:9.2f} {r['added_vs_mpi_8B']:11.1f}x")


def spread(points):
    """Error bars from each point's median to its samples' lowest and highest."""
    return [[p[1] - min(p[2]) for p in points], [max(p[2]) - p[1] for p in points]]


def plot(doc, png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"no matplotlib for {sys.executable}: no {png} (--no-plot prints the table only)", file=sys.stderr)
        return 1
    rows = doc["results"]
    fig, (rate_ax, time_ax) = plt.subplots(1, 2, figsize=(12, 4.5))
    for key, label, colour in STREAMS:
        pts = [(r["frame_bytes"], r[key]["gbps"], r[key]["samples_gbps"]) for r in rows if r.get(key)]
        if pts:
            rate_ax.errorbar([p[0] for p in pts], [p[1] for p in pts], yerr=spread(pts), marker="o",
                             color=colour, label=label, capsize=3)
    rate_ax.set_title(f"streaming, capacity {doc['options']['capacity']}")
    rate_ax.set_ylabel("GB/s (median of repeats)")
    rate_ax.set_ylim(bottom=0)
    for key, label, colour, marker, style in LATENCIES:
        pts = [(r["frame_bytes"], r[key]["one_way_us"], r[key]["samples_median_us"]) for r in rows]
        time_ax.errorbar([p[0] for p in pts], [p[1] for p in pts], yerr=spread(pts), marker=marker,
                         ls=style, color=colour, label=label, capsize=3)
    time_ax.set_title(f"ping-pong, bridge topics of capacity {doc['options']['latency_capacity']}")
    time_ax.set_ylabel("one-way time, µs (round trip / 2, median)")
    time_ax.set_yscale("log")
    for ax in (rate_ax, time_ax):
        ax.set_xscale("log", base=2)
        ax.set_xticks([r["frame_bytes"] for r in rows])
        ax.set_xticklabels([size_text(r["frame_bytes"]) for r in rows], fontsize=8)
        ax.set_xlabel("frame size")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    quick = "; --quick smoke run" if doc["options"].get("quick") else ""
    fig.suptitle(f"a topic carried between two MPI ranks against raw MPI: {doc['device']} "
                 f"({doc['date'][:10]}, {doc.get('commit') or '?'}{quick})", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print(f"wrote {png}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", help="xeflow-bridge-bench's --json output")
    ap.add_argument("--png", help="draw the figure here (default: the JSON's name with .png)")
    ap.add_argument("--no-plot", action="store_true", help="print the table only")
    a = ap.parse_args()
    with open(a.json) as f:
        doc = json.load(f)
    table(doc)
    return 0 if a.no_plot else plot(doc, a.png or os.path.splitext(a.json)[0] + ".png")


if __name__ == "__main__":
    sys.exit(main())
