#!/usr/bin/env python3
"""Draws a window of an `xeflow-run --trace` file as a PNG: one row per track (GPU blocks, copy engines,
I/O threads, CPU operators' workers, in the trace's own order), each span a bar coloured by what it is
(a round's subscribe / schedule / compute / publish, a CPU operator's frame, a copy, a read), instants as
ticks — what Perfetto shows, for a README or a results folder.

  python3 bench/trace_plot.py trace.json --png trace.png            # 2 ms from the middle of the run
  python3 bench/trace_plot.py trace.json --png trace.png --start-ms 120 --window-ms 0.5
"""
import argparse
import json

PHASE_COLOURS = {"subscribe": "#4C72B0", "schedule": "#DD8452", "compute": "#55A868", "publish": "#C44E52"}
CATEGORY_COLOURS = {"operator": "#8172B3", "copy": "#937860", "io": "#DA8BC3", "tuning": "#000000"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--png", required=True)
    ap.add_argument("--start-ms", type=float, help="window start from the first event (default: the middle)")
    ap.add_argument("--window-ms", type=float, default=2.0)
    ap.add_argument("--max-rows", type=int, default=24)
    args = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    with open(args.trace) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    names, order = {}, {}
    for e in events:
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        if e["ph"] == "M" and e["name"] == "thread_sort_index":
            order[e["tid"]] = e["args"]["sort_index"]
    spans = [e for e in events if e["ph"] in ("X", "i")]
    if not spans:
        raise SystemExit(f"{args.trace}: no events")
    end_us = max(e["ts"] + e.get("dur", 0) for e in spans)
    start_us = (args.start_ms * 1e3) if args.start_ms is not None else max(0.0, end_us / 2 - args.window_ms * 500)
    stop_us = start_us + args.window_ms * 1e3
    shown = [e for e in spans if e["ts"] < stop_us and e["ts"] + e.get("dur", 0) > start_us]
    tracks = sorted({e["tid"] for e in shown}, key=lambda t: (order.get(t, 1 << 30), t))[: args.max_rows]
    row = {t: i for i, t in enumerate(tracks)}
    fig, ax = plt.subplots(figsize=(12, 0.42 * len(tracks) + 1.6))
    used = set()
    for e in shown:
        if e["tid"] not in row:
            continue
        y = row[e["tid"]]
        if e["ph"] == "i":
            ax.plot([e["ts"] - start_us] * 2, [y - 0.45, y + 0.45], color="black", linewidth=1)
            continue
        colour = PHASE_COLOURS.get(e["name"]) if e.get("cat") == "round" else CATEGORY_COLOURS.get(e.get("cat"), "grey")
        label = e["name"] if e.get("cat") == "round" else e.get("cat")
        used.add((label, colour))
        left = max(e["ts"], start_us) - start_us
        width = min(e["ts"] + e["dur"], stop_us) - start_us - left
        ax.barh(y, max(width, 0.02), left=left, height=0.8, color=colour, linewidth=0)
    ax.set_yticks(range(len(tracks)), [names.get(t, str(t)) for t in tracks], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, args.window_ms * 1e3)
    ax.set_xlabel(f"µs from {start_us / 1e3:.3f} ms into the trace")
    meta = doc.get("otherData", {})
    ax.set_title(f"{meta.get('topology', '')} on {meta.get('gpu', meta.get('executor', ''))}: "
                 f"{args.window_ms} ms of the timeline (one in {meta.get('sample_every', '?')} blocks and frames)",
                 fontsize=9)
    ax.legend(handles=[Patch(color=c, label=l) for l, c in sorted(used)], fontsize=7, loc="upper right",
              ncol=min(6, max(1, len(used))))
    fig.text(0.01, 0.005, f"{meta.get('commit', '')}  {args.trace}", fontsize=6)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    fig.savefig(args.png, dpi=120)
    print(f"wrote {args.png}: {len(shown)} events on {len(tracks)} tracks")


if __name__ == "__main__":
    main()
