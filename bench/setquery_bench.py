#!/usr/bin/env python3
"""Set Query on xeflow: every query family's topology, mapped and dma, with the table resident.

Generates the BENCH table (xeflow-setquery-gen) and the reference answers (xeflow-setquery-ref), then for
each family (topologies/setquery_*.yaml) and transfer mode runs xeflow-run twice on the table held in the
topic's frames (capacity above the table's frames: table_source fills each frame once and later passes
find it in place):
  - one pass: every result file must equal the reference's (the run fails otherwise);
  - `--passes` passes: the steady time of one pass is (t(passes) - t(1)) / (passes - 1), from the runs'
    stream windows (first publish to last delivery), so start-up and the first pass's table load drop out.
Reports per family and mode: the steady pass time, the one-shot wall clock of `xeflow-run`, the pages and
bytes the index let the queries skip, and (dma) the bytes the copy engines moved and left behind. Prints a
table and writes OUT/setquery.json stamped with device, date, commit and command line.

  python3 bench/setquery_bench.py --build build-rel --rows 10M --out OUT
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FAMILIES = ["Q1", "Q2A", "Q2B", "Q3A", "Q3B", "Q4A", "Q4B"]


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def device_name():
    try:
        return run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"]).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "no GPU"


def commit():
    try:
        return run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def xeflow(args, family, mode, passes, results, frames):
    topology = os.path.join(ROOT, "topologies", f"setquery_{family.lower()}.yaml")
    cmd = [os.path.join(args.build, "tools", "xeflow-run"), topology, "-q", "--stats", "json",
           "--set", f"runtime.executor={args.executor}",
           "--set", f"topics.bench.transfer={mode}",
           "--set", f"topics.bench.capacity={frames + 1}",
           "--set", f"operators.source.params.path={args.table}",
           "--set", f"operators.source.params.passes={passes}"]
    doc = yaml_ops(topology)
    for op in doc:
        cmd += ["--set", f"operators.{op}.params.result={os.path.join(results, op.upper() + '.csv')}"]
    start = time.monotonic()
    r = subprocess.run(cmd, text=True, capture_output=True)
    wall = time.monotonic() - start
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)}\nfailed ({r.returncode}):\n{r.stderr}")
    return json.loads(r.stdout), wall


def yaml_ops(topology):
    """The query operators' names in a Set Query topology (one per line: `  name: {class: query, ...}`)."""
    names = []
    with open(topology) as f:
        for line in f:
            if "class: query" in line:
                names.append(line.split(":")[0].strip())
    return names


def stream_seconds(stats):
    return stats["stream_seconds"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build-rel")
    p.add_argument("--rows", default="10M")
    p.add_argument("--table", default="")
    p.add_argument("--passes", type=int, default=6)
    p.add_argument("--modes", default="mapped,dma")
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--executor", default="device")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    work = os.path.join(args.out, "work")
    os.makedirs(work, exist_ok=True)
    if not args.table:
        args.table = os.path.join(work, "bench.xft")
        gen = run([os.path.join(args.build, "apps/setquery/xeflow-setquery-gen"), "--rows", args.rows,
                   "--out", args.table, "--threads", str(os.cpu_count())])
        print(gen.stdout.strip(), flush=True)
    expected = os.path.join(work, "expected")
    ref_start = time.monotonic()
    run([os.path.join(args.build, "apps/setquery/xeflow-setquery-ref"), args.table, "--out-dir", expected])
    ref_seconds = time.monotonic() - ref_start
    info = run([os.path.join(args.build, "tools/xeflow-table"), "info", args.table]).stdout
    # "  rows 600000, 37 frames of 16384 rows ..."
    frames = int(next(l.split(",")[1].split()[0] for l in info.splitlines() if l.strip().startswith("rows ")))
    rows = []
    for family in args.families.split(","):
        for mode in args.modes.split(","):
            results = os.path.join(work, f"results-{family}-{mode}")
            shutil.rmtree(results, ignore_errors=True)
            os.makedirs(results)
            one, wall_one = xeflow(args, family, mode, 1, results, frames)
            wrong = [f for f in sorted(os.listdir(results))
                     if open(os.path.join(results, f)).read() != open(os.path.join(expected, f)).read()]
            if wrong:
                sys.exit(f"{family} {mode}: results differ from the reference: {wrong}")
            os.makedirs(os.path.join(results, "many"))
            many, _ = xeflow(args, family, mode, args.passes, os.path.join(results, "many"), frames)
            t1, tn = stream_seconds(one), stream_seconds(many)
            steady = (tn - t1) / (args.passes - 1)
            ops = [o for o in one["operators"] if o.get("class") == "query"]
            pages = sum(o["counters"].get("pages", 0) for o in ops)
            skipped = sum(o["counters"].get("pages_skipped", 0) for o in ops)
            topic = next(t for t in one["topics"] if t["name"] == "bench")
            copy = topic.get("copy_engines", {})
            row = {"family": family, "mode": mode, "queries": len(ops), "steady_pass_s": steady,
                   "one_pass_stream_s": t1, "one_shot_wall_s": wall_one, "pages": pages, "pages_skipped": skipped,
                   "copied_bytes": copy.get("bytes"), "skipped_bytes": copy.get("bytes_skipped"),
                   "table_bytes": topic["bytes"], "answers": "equal to the reference"}
            rows.append(row)
            print(f"{family:4} {mode:6} {len(ops):2} queries  steady pass {steady * 1e3:8.2f} ms  "
                  f"one shot {wall_one:6.2f} s  pages skipped {skipped}/{pages}  "
                  f"copied {copy.get('bytes', 0) / 1e9:.3f} GB  skipped {copy.get('bytes_skipped', 0) / 1e9:.3f} GB",
                  flush=True)
    doc = {"benchmark": "setquery", "device": device_name(),
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "commit": commit(), "command": " ".join(sys.argv), "rows": args.rows, "frames": frames,
           "passes": args.passes, "reference_seconds": ref_seconds, "runs": rows}
    with open(os.path.join(args.out, "setquery.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print(f"wrote {os.path.join(args.out, 'setquery.json')}")


if __name__ == "__main__":
    main()
