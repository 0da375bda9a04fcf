#!/usr/bin/env python3
"""The soak: long streams with a verify sink on every path, counting lost, duplicated, reordered and corrupt
frames, all of which must be zero, and every sink's frame count the stream's length.

  fanout  bench/soak/c_g4c_fanout.yaml: C(G)4C at 4 KiB frames, the result read by two subscriber groups
          (10^8 frames by default).
  file    bench/soak/file_cache.yaml: a file of random bytes streamed --file-repeats times in a row (the
          source's path list names it that often) through the file cache, the cache far smaller than the
          file, one GPU stage (10^7 frames of 4 KiB by default: a 5.1 GB file read 8 times); the file is
          made in --scratch and removed afterwards.

Prints a table, writes soak.json (device, date, commit, command line, every run's stats) and soak.png (each
run's sink throughput over time: a soak that slows down or stalls shows here) into --out. Exits 1 when any
count is wrong or a run fails.

  python3 bench/soak.py --run build-rel/tools/xeflow-run --out OUT
  python3 bench/soak.py --run build/tools/xeflow-run --out /tmp/soak --fanout-frames 100000 \\
      --file-frames 100000 --extra=--host          # a short run on the host executor
"""
import argparse
import datetime
import json
import os
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ANOMALIES = ("lost", "duplicated", "reordered", "corrupt")


def make_file(path, size):
    """Random bytes, in 64 MiB writes; returns the seconds it took."""
    start = time.monotonic()
    chunk = 64 << 20
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(chunk, left)
            f.write(os.urandom(n))
            left -= n
    return time.monotonic() - start


def run(args, name, topology, frames, frame_bytes, sets):
    cmd = [args.run, os.path.join(HERE, "soak", topology), "-q", "--stats", "json",
           "--timeline-ms", str(args.timeline_ms)] + sum((["--set", s] for s in sets), []) + args.extra
    print(f"{name}: {' '.join(cmd)}", flush=True)
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    result = {"name": name, "topology": f"bench/soak/{topology}", "command": cmd, "frames": frames,
              "frame_bytes": frame_bytes, "exit": p.returncode, "wall_seconds": wall, "stderr": p.stderr[-4000:]}
    try:
        result["stats"] = json.loads(p.stdout)
    except json.JSONDecodeError:
        result["stats"] = None
    sinks = []
    for op in (result["stats"] or {}).get("operators", []):
        if op["class"] != "verify_sink":
            continue
        c = op["counters"]
        sinks.append({"sink": op["name"], "frames": c.get("frames", 0), **{a: c.get(a, -1) for a in ANOMALIES}})
    result["sinks"] = sinks
    result["ok"] = (p.returncode == 0 and bool(sinks) and
                    all(s["frames"] == frames and all(s[a] == 0 for a in ANOMALIES) for s in sinks))
    return result


def plot(results, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot")
        return
    fig, axes = plt.subplots(len(results), 1, figsize=(8, 3 * len(results)), squeeze=False)
    for ax, r in zip(axes[:, 0], results):
        samples = ((r["stats"] or {}).get("timeline") or {}).get("samples", [])
        xs, ys = [], []
        for (t0, _, b0), (t1, _, b1) in zip(samples, samples[1:]):
            if t1 > t0:
                xs.append(t1)
                ys.append((b1 - b0) / (t1 - t0) / 1e9)
        ax.plot(xs, ys, lw=0.8)
        ax.set_title(f"{r['name']}: {r['frames']:.0e} frames of {r['frame_bytes']} B, "
                     f"{'all counts zero' if r['ok'] else 'FAILED'}", fontsize=9)
        ax.set_xlabel("seconds")
        ax.set_ylabel("sinks' GB/s")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", required=True, help="xeflow-run")
    ap.add_argument("--out", required=True)
    ap.add_argument("--fanout-frames", type=int, default=10**8)
    ap.add_argument("--file-frames", type=int, default=10**7)
    ap.add_argument("--file-repeats", type=int, default=8, help="times the file soak reads its file (1-8)")
    ap.add_argument("--scratch", default=None, help="folder for the file soak's file (default: --out)")
    ap.add_argument("--timeline-ms", type=int, default=1000)
    ap.add_argument("--only", choices=["fanout", "file"], default=None)
    ap.add_argument("--extra", action="append", default=[], help="one more xeflow-run argument (repeatable)")
    ap.add_argument("--commit", default="")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    results = []
    if args.only in (None, "fanout"):
        frame = 4096
        results.append(run(args, "fanout", "c_g4c_fanout.yaml", args.fanout_frames, frame,
                           [f"operators.source.params.total_bytes={args.fanout_frames * frame}"]))
    if args.only in (None, "file"):
        frame = 4096
        if not 1 <= args.file_repeats <= 8 or args.file_frames % args.file_repeats:
            sys.exit("--file-repeats: 1 to 8, dividing --file-frames")
        path = os.path.join(args.scratch or args.out, "soak.bin")
        made = make_file(path, args.file_frames // args.file_repeats * frame)
        print(f"file: {args.file_frames // args.file_repeats * frame / 1e9:.2f} GB of random bytes in {made:.1f} s, "
              f"read {args.file_repeats} times", flush=True)
        try:
            results.append(run(args, "file", "file_cache.yaml", args.file_frames, frame,
                               ["operators.files.params.path=" + "; ".join([path] * args.file_repeats)]))
        finally:
            os.remove(path)

    executors = sorted({(r["stats"] or {}).get("executor", "?") for r in results})
    gpu = []
    if not any("host" in e for e in executors):
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True).stdout.strip().splitlines()
    commit = args.commit or subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                                           capture_output=True, text=True).stdout.strip()
    print(f"\n{'run':<8}{'sink':<10}{'frames':>12}{'lost':>7}{'dup':>7}{'reord':>7}{'corrupt':>8}"
          f"{'seconds':>9}{'Mframes/s':>10}  result")
    for r in results:
        stream = (r["stats"] or {}).get("stream_seconds") or r["wall_seconds"]
        for s in r["sinks"] or [{"sink": "-", "frames": 0, **{a: -1 for a in ANOMALIES}}]:
            print(f"{r['name']:<8}{s['sink']:<10}{s['frames']:>12}{s['lost']:>7}{s['duplicated']:>7}"
                  f"{s['reordered']:>7}{s['corrupt']:>8}{stream:>9.1f}{s['frames'] / stream / 1e6:>10.2f}  "
                  f"{'ok' if r['ok'] else 'FAILED (exit %d)' % r['exit']}")
        if not r["ok"] and r["stderr"]:
            print(r["stderr"])
    doc = {"benchmark": "soak", "device": gpu[0] if gpu else "host executor (" + socket.gethostname() + ")",
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "commit": commit,
           "command": " ".join(sys.argv), "executors": executors, "runs": results,
           "all_ok": all(r["ok"] for r in results)}
    with open(os.path.join(args.out, "soak.json"), "w") as f:
        json.dump(doc, f, indent=1)
    plot(results, os.path.join(args.out, "soak.png"))
    sys.exit(0 if doc["all_ok"] else 1)


if __name__ == "__main__":
    main()
