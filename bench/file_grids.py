#!/usr/bin/env python3
"""Tables of the by-hand `xeflow-file-kernels` grids (JSON-lines files; default: the two grids of
bench/results/files/, machine-3/blocks-threads-grid.jsonl and machine-2/readahead-room-grid.jsonl): per
configuration and kernel the mean GB/s of its runs, the geomean over the kernels of mean / the same grid's and
mode's cpu-io N = 4 (`base4` in the 0e42ea4 grids, `cpu4` in the 066a9e6 ones), and for the file cache the I/O
threads' time inside pread and the mean pread. A line's configuration is its `tag` (`variant` in the later
grids), its mode `mode` (or, where a grid has none, cold where the run read O_DIRECT).

  python3 bench/file_grids.py [GRID.jsonl ...]
"""
import collections
import json
import math
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent / "results" / "files"
KERNELS = ("conv2d", "gesummv", "mvt")
BASELINES = ("base4", "cpu4")


def rows(path):
    for line in path.read_text().splitlines():
        d = json.loads(line)
        r = d["result"]
        yield d.get("mode", "cold" if r.get("direct") else "warm"), d.get("tag", d.get("variant")), r


def table(path):
    runs = collections.defaultdict(list)
    order = []
    for mode, tag, r in rows(path):
        if (mode, tag) not in order:
            order.append((mode, tag))
        runs[(mode, tag, r["kernel"])].append(r)
    print(f"\n{path.name}")
    print(f"{'mode':5} {'config':10} " + " ".join(f"{k:>12}" for k in KERNELS) + f" {'/ N=4':>8} {'busy':>6} {'pread ms':>9}")
    for mode, tag in order:
        baseline = next(b for b in BASELINES if (mode, b, KERNELS[0]) in runs)
        means = {k: sum(r["gbps"] for r in runs[(mode, tag, k)]) / len(runs[(mode, tag, k)]) for k in KERNELS}
        base = {k: sum(r["gbps"] for r in runs[(mode, baseline, k)]) / len(runs[(mode, baseline, k)]) for k in KERNELS}
        ratio = math.exp(sum(math.log(means[k] / base[k]) for k in KERNELS) / len(KERNELS))
        cells = " ".join(f"{means[k]:7.2f} (n={len(runs[(mode, tag, k)])})" for k in KERNELS)
        io = [t for k in KERNELS for r in runs[(mode, tag, k)] for t in r.get("io", [])]
        busy = pread = ""
        if io:
            secs = sum(r["seconds"] for k in KERNELS for r in runs[(mode, tag, k)] for _ in r["io"])
            busy = f"{sum(t['busy_ns'] for t in io) / 1e9 / secs:6.0%}"
            pread = f"{sum(t['busy_ns'] for t in io) / sum(t['reads'] for t in io) / 1e6:9.2f}"
        print(f"{mode:5} {tag:10} {cells} {ratio:7.3f}x {busy:>6} {pread:>9}")


def main():
    for name in sys.argv[1:] or ("machine-3/blocks-threads-grid.jsonl", "machine-2/readahead-room-grid.jsonl"):
        path = pathlib.Path(name)
        table(path if path.exists() else HERE / name)


if __name__ == "__main__":
    main()
