#!/usr/bin/env python3
"""What `--trace` costs: a topology streamed with and without it, interleaved (the order alternates from
round to round so drift on the machine falls on both), GB/s into the sinks over the stream, medians
compared. Default: C(G)1C (topologies/pingpong.yaml: a CPU source, one GPU map, a verifying CPU sink) at
16 KiB frames, 4 GiB a run. Prints a table, writes JSON stamped with the device, date, commit and command
line, and keeps the last traced run's trace beside it (bench/trace_plot.py draws it).

  python3 bench/trace_overhead.py --run build-rel/tools/xeflow-run --out OUT
"""
import argparse
import datetime
import json
import os
import socket
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def stream_gbps(stats):
    sink_bytes = sum(op["bytes_in"] for op in stats["operators"] if op["class"].endswith("sink"))
    return sink_bytes / stats["stream_seconds"] / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", required=True, help="xeflow-run")
    ap.add_argument("--topology", default=os.path.join(ROOT, "topologies", "pingpong.yaml"))
    ap.add_argument("--frame", default="16KiB")
    ap.add_argument("--bytes", default="4GiB")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sample", type=int, default=8, help="--trace-sample")
    ap.add_argument("--extra", nargs="*", default=[], help="more xeflow-run arguments for both")
    ap.add_argument("--out", required=True)
    ap.add_argument("--commit", default="")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    trace_path = os.path.join(args.out, "trace.json")
    base = [args.run, args.topology, "-q", "--stats", "json", "--set", f"operators.source.params.total_bytes={args.bytes}"]
    with open(args.topology) as f:
        topics = [line.split(":")[0].strip() for line in f if line.startswith("  ") and "frame_size" in line]
    for t in topics:
        base += ["--set", f"topics.{t}.frame_size={args.frame}"]
    base += args.extra
    runs = {"off": [], "on": []}
    executors = set()
    for r in range(args.repeats):
        for mode in (("off", "on") if r % 2 == 0 else ("on", "off")):
            cmd = base + (["--trace", trace_path, "--trace-sample", str(args.sample)] if mode == "on" else [])
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-3000:]}")
            stats = json.loads(p.stdout)
            executors.add(stats["executor"])
            runs[mode].append(stream_gbps(stats))
            print(f"round {r}  {mode:>3}  {runs[mode][-1]:7.2f} GB/s", flush=True)
    off, on = statistics.median(runs["off"]), statistics.median(runs["on"])
    overhead = (off - on) / off * 100
    with open(trace_path) as f:
        trace = json.load(f)
    print(f"\nmedian GB/s  without --trace {off:.2f}   with --trace (1 in {args.sample}) {on:.2f}   "
          f"cost {overhead:+.1f}%   trace: {trace['otherData']['events']} events, "
          f"{os.path.getsize(trace_path) / 1e6:.1f} MB")
    commit = args.commit or subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True,
                                           text=True).stdout.strip()
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                         text=True).stdout.strip().splitlines() if not any("host" in e for e in executors) else []
    doc = {"benchmark": "trace_overhead", "device": gpu[0] if gpu else "host executor (" + socket.gethostname() + ")",
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "commit": commit,
           "command": " ".join(sys.argv), "topology": os.path.relpath(args.topology, ROOT), "frame": args.frame,
           "bytes": args.bytes, "sample": args.sample, "executors": sorted(executors),
           "gbps_without": runs["off"], "gbps_with": runs["on"], "median_without": off, "median_with": on,
           "overhead_percent": overhead, "trace_events": trace["otherData"]["events"],
           "trace_dropped": trace["otherData"]["events_dropped"], "trace_bytes": os.path.getsize(trace_path)}
    with open(os.path.join(args.out, "trace_overhead.json"), "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
