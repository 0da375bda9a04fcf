#!/usr/bin/env python3
"""GPU frames over a bridge: bench/ranks/gpu_frames.yaml (a GPU operator on rank 0 feeds one on rank 1)
under `mpirun -n 2` at several frame sizes, and the same topology in one process, interleaved size by size.
`--placement shared` puts both ranks' GPU operators on GPU 0, `own` rank r's on GPU r (two GPUs);
`--pair-bench` runs xeflow-gpu-pair-bench at each size as well (GPU to GPU over MPI, CUDA IPC and peer
copies without xeflow: the ceilings). Prints a table and writes JSON stamped with the device, date, commit
and command line (and with --png a plot).

  python3 bench/ranks/gpu_frames.py --run build-rel/tools/xeflow-run --json gpu_frames.json
  python3 bench/ranks/gpu_frames.py --run build-rel/tools/xeflow-run --placement own \
      --pair-bench build-rel/bench/ranks/xeflow-gpu-pair-bench --json two_gpus.json --png two_gpus.png
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


def run_pair(args, size):
    """xeflow-gpu-pair-bench at one frame size: {contender: median GB/s, or the reason it did not run}."""
    out = os.path.join(os.path.dirname(os.path.abspath(args.json)), ".pair.json")
    p = subprocess.run([args.mpirun, "-n", "2", "--bind-to", "none", "--mca", "btl", "self,vader", args.pair_bench,
                        "--sizes", size, "--bytes", args.pair_bytes, "--repeats", str(args.repeats), "--json", out,
                        "--commit", args.commit or "unknown"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{args.pair_bench} --sizes {size}: exit {p.returncode}\n{p.stdout[-2000:]}{p.stderr[-4000:]}")
    with open(out) as f:
        doc = json.load(f)
    os.remove(out)
    result = {r["contender"]: r.get("median_gb_per_second", r.get("skipped")) for r in doc["results"]}
    result["_stamp"] = {k: doc[k] for k in ("device", "mpi_library", "cuda_awareness", "peer_access", "options")}
    return result


def plot(doc, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    med = lambda v: sorted(v)[len(v) // 2]
    rows = doc["rows"]
    x = list(range(len(rows)))
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    ax.plot(x, [med(r["one_process_gbps"]) for r in rows], "o-", label="one process (one GPU)")
    ax.plot(x, [med(r["two_ranks_gbps"]) for r in rows], "s-", label=f"two ranks, bridge ({doc['placement']})")
    names = {"mpi_host": "MPI, pinned host to host", "mpi_gpu": "MPI, GPU to GPU", "ipc_copy": "CUDA IPC copy",
             "peer_copy": "cudaMemcpyPeer"}
    for c, label in names.items():
        ys = [r.get("pair", {}).get(c) for r in rows]
        if any(isinstance(y, float) for y in ys):
            ax.plot(x, [y if isinstance(y, float) else float("nan") for y in ys], "--", marker=".", label=label)
    ax.set_xticks(x, [r["frame_size"] for r in rows])
    ax.set_yscale("log")
    ax.set_xlabel("frame size")
    ax.set_ylabel("GB/s (log)")
    ax.set_title(f"GPU frames between two ranks: {doc['device']}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.text(0.01, 0.005, f"{doc['date']}  commit {doc['commit']}  {doc['command']}"[:160], fontsize=6)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=120)


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
    ap.add_argument("--placement", choices=["shared", "own"], default="shared",
                    help="shared: both ranks' GPU operators on GPU 0; own: rank r's on GPU r")
    ap.add_argument("--pair-bench", help="xeflow-gpu-pair-bench, run at each size beside the topology")
    ap.add_argument("--pair-bytes", default="1GiB", help="bytes per pair-bench measurement")
    ap.add_argument("--png", help="plot here")
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
        devices = ["--set", "operators.scale.device=0",
                   "--set", f"operators.pass.device={1 if args.placement == 'own' else 0}"]
        row = {"frame_size": size, "one_process_gbps": [], "two_ranks_gbps": [], "bridge_gbps": [],
               "bridge_credit_wait_s": []}
        for _ in range(args.repeats):
            one = run([args.run, topology, "-q", "--stats", "json"] + sets + ["--set", "operators.pass.device=0"])
            row["one_process_gbps"].append(stream_gbps(one)[0])
            two = run([args.mpirun, "-n", "2", "--bind-to", "none", "--mca", "btl", "self,vader", args.run, topology,
                       "-q", "--stats", "json"] + sets + devices)
            # Rank 1 has no source to start its stream window: its stream is the received bridge's, from the
            # first frame in to the end of the stream.
            received = [b for b in two["per_rank"][1]["bridges"] if b["topic"] == "scaled"][0]
            sink = [op for op in two["per_rank"][1]["operators"] if op["name"] == "sink"][0]
            row["two_ranks_gbps"].append(sink["bytes_in"] / received["seconds"] / 1e9)
            sent = [b for b in two["per_rank"][0]["bridges"] if b["topic"] == "scaled"][0]
            row["bridge_gbps"].append(sent["gb_per_second"])
            row["bridge_credit_wait_s"].append(sent["credit_wait_seconds"])
            row["executors"] = [r["executor"] for r in two["per_rank"]]
            row["gpus"] = [r.get("gpu") for r in two["per_rank"]]
        if args.pair_bench:
            row["pair"] = run_pair(args, size)
            pair_stamp = row["pair"].pop("_stamp")
        rows.append(row)
        med = lambda v: sorted(v)[len(v) // 2]
        line = (f"{size:>8}  one process {med(row['one_process_gbps']):6.2f} GB/s   two ranks {med(row['two_ranks_gbps']):6.2f} GB/s"
                f"   bridge {med(row['bridge_gbps']):6.2f} GB/s")
        for c, v in row.get("pair", {}).items():
            line += f"   {c} " + (f"{v:6.2f}" if isinstance(v, float) else "n/a")
        print(line, flush=True)
    doc = {"benchmark": "bridge_gpu_frames", "device": ", ".join(f"GPU {i}: {n}" for i, n in enumerate(gpu)) or "none",
           "host": socket.gethostname(), "placement": args.placement,
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "commit": commit,
           "command": " ".join(sys.argv), "topology": "bench/ranks/gpu_frames.yaml", "rows": rows}
    if args.pair_bench:
        doc["pair_bench"] = pair_stamp
    with open(args.json, "w") as f:
        json.dump(doc, f, indent=1)
    if args.png:
        plot(doc, args.png)


if __name__ == "__main__":
    main()
