#!/usr/bin/env python3
"""GPU frames over a bridge: bench/ranks/gpu_frames.yaml (a GPU operator on rank 0 feeds one on rank 1)
under `mpirun -n 2` at several frame sizes, and the same topology in one process, interleaved size by size.
Prints a table and writes JSON stamped with the device, date, commit and command line.

  python3 bench/ranks/gpu_frames.py --run build-rel/tools/xeflow-run --json gpu_frames.json
"""
import argparse
import datetime
import json
import os
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(argv)}: exit {p.returncode}\n{p.stderr[-4000:]}")
    return json.loads(p.stdout)


def stream_gbps(stats):
    """The sink's bytes over the stream (first publish to last delivery) of a run's stats."""
    for op in stats["operators"]:
        if op["name"] == "sink":
            return op["bytes_in"] / stats["stream_seconds"] / 1e9, op["bytes_in"]
    return None, 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", required=True, help="xeflow-run")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--sizes", default="64KiB,256KiB,1MiB,4MiB")
    ap.add_argument("--bytes", default="4GiB", help="stream per run")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--json", required=True)
    ap.add_argument("--commit", default="")
    args = ap.parse_args()
    topology = os.path.join(HERE, "gpu_frames.yaml")
    commit = args.commit or subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                                           capture_output=True, text=True).stdout.strip()
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                         text=True).stdout.strip().splitlines()
    rows = []
    for size in args.sizes.split(","):
        sets = ["--set", f"operators.source.params.total_bytes={args.bytes}"]
        for t in ("raw", "scaled", "passed"):
            sets += ["--set", f"topics.{t}.frame_size={size}"]
        row = {"frame_size": size, "one_process_gbps": [], "two_ranks_gbps": [], "bridge_gbps": [],
               "bridge_credit_wait_s": []}
        for _ in range(args.repeats):
            one = run([args.run, topology, "-q", "--stats", "json"] + sets)
            row["one_process_gbps"].append(stream_gbps(one)[0])
            two = run([args.mpirun, "-n", "2", "--bind-to", "none", "--mca", "btl", "self,vader", args.run, topology,
                       "-q", "--stats", "json"] + sets)
            # Rank 1 has no source to start its stream window: its stream is the received bridge's, from the
            # first frame in to the end of the stream.
            received = [b for b in two["per_rank"][1]["bridges"] if b["topic"] == "scaled"][0]
            sink = [op for op in two["per_rank"][1]["operators"] if op["name"] == "sink"][0]
            row["two_ranks_gbps"].append(sink["bytes_in"] / received["seconds"] / 1e9)
            sent = [b for b in two["per_rank"][0]["bridges"] if b["topic"] == "scaled"][0]
            row["bridge_gbps"].append(sent["gb_per_second"])
            row["bridge_credit_wait_s"].append(sent["credit_wait_seconds"])
            row["executors"] = [r["executor"] for r in two["per_rank"]]
        rows.append(row)
        med = lambda v: sorted(v)[len(v) // 2]
        print(f"{size:>8}  one process {med(row['one_process_gbps']):6.2f} GB/s   two ranks {med(row['two_ranks_gbps']):6.2f} GB/s"
              f"   bridge {med(row['bridge_gbps']):6.2f} GB/s", flush=True)
    doc = {"benchmark": "bridge_gpu_frames", "device": gpu[0] if gpu else "none", "host": socket.gethostname(),
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "commit": commit,
           "command": " ".join(sys.argv), "topology": "bench/ranks/gpu_frames.yaml", "rows": rows}
    with open(args.json, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
