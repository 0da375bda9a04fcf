#!/usr/bin/env python3
"""Table of this folder's file_scan runs (runs1.jsonl, runs2.jsonl): per configuration and mode the GB/s of
each run (the topic's bytes over the stream's seconds), the file cache's requests and the pages read ahead
and used; the run length is readahead / 64 KiB (capped at half the ring at 24688a9)."""
import collections
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent


def main():
    for name in sys.argv[1:] or ("runs1.jsonl", "runs2.jsonl"):
        runs = collections.defaultdict(list)
        order = []
        for line in (HERE / name).read_text().splitlines():
            d = json.loads(line)
            key = (d["mode"], d["tag"])
            if key not in order:
                order.append(key)
            runs[key].append(d["stats"])
        print(f"\n{name}")
        print(f"{'mode':5} {'config':12} {'GB/s per run':28} {'requests':>9} {'ahead / used':>15}  executor")
        for key in sorted(order, key=lambda k: (k[0], order.index(k))):
            stats = runs[key]
            rates = " ".join(f"{s['topics'][0]['bytes'] / s['stream_seconds'] / 1e9:6.2f}" for s in stats)
            fc = stats[0]["file_cache"]
            print(f"{key[0]:5} {key[1]:12} {rates:28} {fc['requests']:9} {fc['ahead_pages']:>7}/{fc['ahead_hits']:<7}  "
                  f"{stats[0]['executor']}")


if __name__ == "__main__":
    main()
