#!/usr/bin/env python3
"""How soon a shared object's new version reaches its readers: xeflow-object-latency over three settings,
on the device executor (table_lookup in the persistent kernel) and the host executor (the same round on CPU
threads). Writes one JSON per run (stamped by the program with device, date, commit and command line),
summary.json and object_latency.png into --out.

  python3 bench/object_latency.py --build build-rel --out DIR [--commit SHA]
  python3 bench/object_latency.py --out DIR --plot          # redraw from DIR's JSON files
"""
import argparse
import glob
import json
import os
import subprocess
import sys

SETTINGS = [
    ("4 KiB object, ring of 8", ["--object-size", "4KiB", "--entries", "256"]),
    ("256 KiB object, ring of 8", ["--object-size", "256KiB", "--entries", "65536"]),
    ("4 KiB object, ring of 64", ["--object-size", "4KiB", "--entries", "256", "--capacity", "64"]),
]


def slug(label: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in label)


def plot(out: str, rows: list[dict]) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(no matplotlib: no plot)")
        return
    fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=False)
    for ax, (key, title) in zip(axes, [("publish_us", "publish (copies included)"),
                                       ("reach_us", "publish called -> a reader took it"),
                                       ("after_publish_us", "horizon stored -> a reader took it")]):
        labels = [f"{r['label']}\n{r['executor']}" for r in rows]
        p50 = [r[key]["p50"] for r in rows]
        p99 = [r[key]["p99"] for r in rows]
        x = range(len(rows))
        ax.bar([i - 0.2 for i in x], p50, 0.4, label="p50", color="#2a7")
        ax.bar([i + 0.2 for i in x], p99, 0.4, label="p99", color="#999")
        ax.axhline(50, color="r", lw=0.8, ls="--", label="50 µs")
        ax.set_xticks(list(x))
        ax.set_xticklabels(labels, fontsize=6, rotation=30, ha="right")
        ax.set_ylabel("µs")
        ax.set_yscale("log")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
    first = rows[0]
    fig.suptitle(f"{first['device']}, {first['date']}, {first['commit'][:12]}", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "object_latency.png"), dpi=120)


def load(out: str) -> list[dict]:
    rows = []
    for label, _ in SETTINGS:
        for executor in ("device", "host"):
            path = os.path.join(out, f"{executor}-{slug(label)}.json")
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    doc = json.load(f)
                doc["label"] = label
                doc["executor"] = executor
                rows.append(doc)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build")
    ap.add_argument("--out", required=True)
    ap.add_argument("--commit")
    ap.add_argument("--versions", type=int, default=400)
    ap.add_argument("--plot", action="store_true", help="only redraw from the JSON files in --out")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if not args.plot:
        if not args.build:
            ap.error("--build is required")
        program = os.path.join(args.build, "bench", "object_latency", "xeflow-object-latency")
        for label, flags in SETTINGS:
            for executor in ("device", "host"):
                cmd = [program, *flags, "--versions", str(args.versions), "--every", "16",
                       "--json", os.path.join(args.out, f"{executor}-{slug(label)}.json")]
                if executor == "host":
                    cmd.append("--host")
                if args.commit:
                    cmd += ["--commit", args.commit]
                print("+", " ".join(cmd), flush=True)
                if subprocess.run(cmd).returncode != 0:
                    return 1
    rows = load(args.out)
    summary = [{"setting": r["label"], "executor": r["executor"],
                **{k: {q: r[k][q] for q in ("p50", "p90", "p99", "max")}
                   for k in ("publish_us", "reach_us", "after_publish_us")},
                "publish_wait_mean_us": r.get("publish_wait_mean_us")} for r in rows]
    with open(os.path.join(args.out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump({"device": rows[0]["device"], "date": rows[0]["date"], "commit": rows[0]["commit"],
                   "rows": summary}, f, indent=1)
    print(f"{'setting':28s} {'executor':8s} {'publish p50':>12s} {'reach p50':>10s} {'reach p99':>10s} "
          f"{'after p50':>10s} {'after max':>10s}")
    for r in rows:
        print(f"{r['label']:28s} {r['executor']:8s} {r['publish_us']['p50']:12.1f} {r['reach_us']['p50']:10.1f} "
              f"{r['reach_us']['p99']:10.1f} {r['after_publish_us']['p50']:10.1f} {r['after_publish_us']['max']:10.1f}")
    plot(args.out, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
