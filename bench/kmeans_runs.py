#!/usr/bin/env python3
"""K-means as one run against one run per iteration (xeflow-kmeans), on the same particle file.

  one run        xeflow-kmeans FILE: every iteration in one xeflow run — the prefetch source goes over the
                 file `iterations` times, kmeans_assign (GPU) reads the centres from a shared object, and
                 kmeans_update (CPU) folds the ids as they stream and publishes each pass's centres at the
                 next pass's first offset
  per iteration  xeflow-kmeans FILE --per-iteration: an xeflow run per assignment pass, the update after it
  reference      xeflow-kmeans-cpu FILE (the multi-threaded CPU reference, once: its digest is the answer)

The two xeflow modes alternate (repeats of each, interleaved: machines drift), every run's digest must equal
the reference's. Writes kmeans_runs.json (every run, stamped with device, date, commit and command line) and
kmeans_runs.png (wall seconds per mode, and each iteration's seconds) into --out.

  python3 bench/kmeans_runs.py --build build-rel --size 16GiB --iterations 5 --repeats 2 --out DIR
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time


def sh(cmd: list[str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def device_name() -> str:
    try:
        r = sh(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], 30)
        return r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else "none"
    except (OSError, subprocess.TimeoutExpired):
        return "none"


def git_commit() -> str:
    try:
        return sh(["git", "rev-parse", "HEAD"], 30).stdout.strip()
    except OSError:
        return ""


def parse_bytes(text: str) -> int:
    units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
    for u, m in units.items():
        if text.endswith(u):
            return int(float(text[:-len(u)]) * m)
    return int(text)


def plot(doc: dict, out_dir: str) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(no matplotlib: no plot)")
        return
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    modes = ["per_iteration", "one_run"]
    walls = [[r["wall_seconds"] for r in doc["runs"] if r["mode"] == m] for m in modes]
    a.bar(modes, [statistics.median(w) for w in walls], color=["#999", "#2a7"])
    for i, w in enumerate(walls):
        a.plot([i] * len(w), w, "k.", ms=6)
    a.set_ylabel("wall seconds (whole xeflow-kmeans)")
    a.set_title(f"{doc['iterations']} iterations, {doc['size']} of particles")
    for m, colour in zip(modes, ["#999", "#2a7"]):
        run = next(r for r in doc["runs"] if r["mode"] == m)
        secs = [it["assign_seconds"] + it["update_seconds"] for it in run["result"]["iteration_stats"]]
        b.plot(range(1, len(secs) + 1), secs, "o-", color=colour, label=m)
    b.set_xlabel("iteration")
    b.set_ylabel("seconds")
    b.set_title("each iteration (one run: pass end to pass end)")
    b.legend()
    fig.suptitle(f"{doc['device']}, {doc['date']}, {doc['commit'][:12]}", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "kmeans_runs.png"), dpi=120)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build")
    ap.add_argument("--out", required=True)
    ap.add_argument("--plot", metavar="JSON", help="only draw kmeans_runs.png from a recorded kmeans_runs.json")
    ap.add_argument("--size", default="16GiB", help="particle file size (64-byte particles)")
    ap.add_argument("--file", help="an existing particle file (else generated in --out)")
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--clusters", type=int, default=8)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--commit", help="commit to record (default: git rev-parse HEAD)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.plot:
        with open(args.plot, encoding="utf-8") as f:
            plot(json.load(f), args.out)
        return 0
    if not args.build:
        ap.error("--build is required")
    tool = lambda name: os.path.join(args.build, "apps", "kmeans", name)  # noqa: E731
    path = args.file or os.path.join(args.out, "particles.bin")
    if not args.file:
        t = time.time()
        r = sh([tool("xeflow-gen-kmeans"), path, "--bytes", args.size, "--threads", str(args.threads)], 3600)
        if r.returncode != 0:
            print(r.stdout, r.stderr)
            return 1
        print(f"generated {args.size} in {time.time() - t:.1f} s")
    common = [path, "--clusters", str(args.clusters), "--iterations", str(args.iterations), "--threads",
              str(args.threads), "--json"]
    ref = sh([tool("xeflow-kmeans-cpu"), *common], 3600)
    if ref.returncode != 0:
        print(ref.stdout, ref.stderr)
        return 1
    reference = json.loads(ref.stdout.strip().splitlines()[-1])
    print(f"reference: digest {reference['digest']}, {reference['seconds']:.2f} s")
    doc = {"benchmark": "kmeans_runs", "device": device_name(), "date": datetime.datetime.utcnow().isoformat() + "Z",
           "commit": args.commit or git_commit(), "command_line": " ".join(sys.argv), "size": args.size,
           "bytes": os.path.getsize(path), "iterations": args.iterations, "clusters": args.clusters,
           "threads": args.threads, "reference": reference, "runs": []}
    bad = 0
    for rep in range(args.repeats):
        for mode, extra in (("per_iteration", ["--per-iteration"]), ("one_run", [])):
            t = time.time()
            r = sh([tool("xeflow-kmeans"), *common, *extra], 3600)
            wall = time.time() - t
            if r.returncode != 0:
                print(r.stdout, r.stderr)
                return 1
            result = json.loads(r.stdout.strip().splitlines()[-1])
            same = result["digest"] == reference["digest"] and result["centres"] == reference["centres"]
            bad += not same
            doc["runs"].append({"mode": mode, "repeat": rep, "wall_seconds": wall, "matches_reference": same,
                                "result": result})
            print(f"{mode:14s} repeat {rep}: {wall:7.2f} s wall, {result['seconds']:7.2f} s in the app, "
                  f"{result['executor']}, digest {'=' if same else '!='} reference")
    med = {m: statistics.median(r["wall_seconds"] for r in doc["runs"] if r["mode"] == m)
           for m in ("per_iteration", "one_run")}
    doc["median_wall_seconds"] = med
    doc["speedup_one_run"] = med["per_iteration"] / med["one_run"]
    print(f"median wall: per iteration {med['per_iteration']:.2f} s, one run {med['one_run']:.2f} s "
          f"({doc['speedup_one_run']:.2f}x)")
    with open(os.path.join(args.out, "kmeans_runs.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    plot(doc, args.out)
    if not args.file:
        os.remove(path)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
