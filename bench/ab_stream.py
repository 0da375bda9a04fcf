#!/usr/bin/env python3
"""A/B of two xeflow builds, or of two settings of one, on the stream benchmark, interleaved on one machine.

Runs bench/stream_bench.py's xeflow points with build A and build B in turn, `--repeats` rounds (the order
alternates from round to round, so drift on the machine falls on both), and compares the medians per point:
C(G)1C scale at 4 KiB-4 MiB, C(G)4C fma at 16 KiB and C(GC)2 scale at 64 KiB by default (GB/s), and the
unloaded per-frame latency of C(G)1C scale at 4 KiB, 64 KiB and 1 MiB (p50, two frames in flight). Prints a
table and writes OUT/ab.json (device, date, both commits and settings, the command line, every run) and
OUT/ab.png. B/A is B's speed over A's: GB/s B / A, latency A / B; above 1, B is faster.

  python3 bench/ab_stream.py --a old/build --a-label 0996a36 --b build --b-label new --out OUT
  python3 bench/ab_stream.py --a build --a-set runtime.timer_slack_us=0 --a-label slack50 \
      --b build --b-label slack1 --out OUT
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# (name, stream_bench selection)
SELECTIONS = [
    ("C(G)1C scale", ["--shapes", "g", "--stages", "1", "--ops", "scale",
                      "--sizes", "4KiB,16KiB,64KiB,256KiB,1MiB,4MiB"]),
    ("C(G)4C fma", ["--shapes", "g", "--stages", "4", "--ops", "fma", "--sizes", "16KiB"]),
    ("C(GC)2 scale", ["--shapes", "gc", "--stages", "2", "--ops", "scale", "--sizes", "64KiB"]),
    ("C(G)1C scale p50", ["--shapes", "g", "--stages", "1", "--ops", "scale", "--latency", "only",
                          "--latency-sizes", "4KiB,64KiB,1MiB"]),
]
#: The selections whose points are unloaded latencies (p50 microseconds, lower is better).
LATENCY_SELECTIONS = {"C(G)1C scale p50"}


def run_selection(build, out, tag, selection, args):
    cmd = [sys.executable, os.path.join(HERE, "stream_bench.py"), "run", "--build", build, "--out", out,
           "--tag", tag, "--ceiling", "off", "--ablation", "off", "--latency", "off", "--contenders", "xeflow",
           "--repeats", "1", "--no-steady", "--bytes", args.bytes, "--executor", args.executor] + selection
    side_a = tag.startswith(args.a_label + "-")
    commit = args.commit_a if side_a else args.commit_b
    if commit:
        cmd += ["--commit", commit]
    for setting in args.a_set if side_a else args.b_set:
        cmd += ["--xeflow-arg=--set", f"--xeflow-arg={setting}"]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, f"sweep-{tag}.json")) as f:
        return json.load(f)


def summarize(args, runs, labels, meta, rounds, final):
    """Medians per point over the rounds so far; writes OUT/ab.json, and prints the table when final."""
    rows = []
    worst = None
    lines = [f"\n{'point':<28} {args.a_label + ' (median)':>24} {args.b_label + ' (median)':>24} {'B/A':>7}"]
    for key in sorted(runs, key=lambda k: (labels[k][0], labels[k][1])):
        a = [x for x in runs[key].get(args.a_label, []) if x is not None]
        b = [x for x in runs[key].get(args.b_label, []) if x is not None]
        ma = statistics.median(a) if a else None
        mb = statistics.median(b) if b else None
        if labels[key][0] in LATENCY_SELECTIONS:
            ratio = ma / mb if ma and mb else None  # microseconds: A's over B's is B's speed-up
        else:
            ratio = mb / ma if ma and mb else None
        ok = ratio is not None and ratio >= 1 - args.tolerance
        rows.append({"point": key, args.a_label: runs[key].get(args.a_label), args.b_label: runs[key].get(args.b_label),
                     "median_a": ma, "median_b": mb, "ratio": ratio, "within_tolerance": ok})
        if ratio is not None and (worst is None or ratio < worst):
            worst = ratio
        fa = " ".join(f"{x:.2f}" for x in a) + (f" ({ma:.2f})" if ma else "")
        fb = " ".join(f"{x:.2f}" for x in b) + (f" ({mb:.2f})" if mb else "")
        fr = f"{ratio:.3f}" if ratio else "-"
        lines.append(f"{key:<28} {fa:>24} {fb:>24} {fr:>7}")
    passed = bool(rows) and all(r["within_tolerance"] for r in rows)
    lines.append(f"\nworst B/A {worst if worst is not None else float('nan'):.3f}: {'PASS' if passed else 'FAIL'} "
                 f"(no median slower than {args.tolerance:.0%}; {rounds} of {args.repeats} rounds)")
    print("\n".join(lines) if final else lines[-1].strip(), flush=True)
    result = {
        "meta": {
            "device": meta.get("device") if meta else None,
            "gpu": meta.get("gpu") if meta else None,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "commit_a": args.commit_a, "commit_b": args.commit_b, "set_a": args.a_set, "set_b": args.b_set,
            "labels": [args.a_label, args.b_label],
            "command_line": " ".join([os.path.basename(sys.executable)] + sys.argv),
            "repeats": args.repeats, "rounds_done": rounds, "bytes": args.bytes, "tolerance": args.tolerance,
        },
        "points": rows, "worst_ratio": worst, "pass": passed,
    }
    with open(os.path.join(args.out, "ab.json"), "w") as f:
        json.dump(result, f, indent=1)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="build directory A (the baseline)")
    ap.add_argument("--b", required=True, help="build directory B")
    ap.add_argument("--a-label", default="A")
    ap.add_argument("--b-label", default="B")
    ap.add_argument("--commit-a", help="commit of build A, recorded")
    ap.add_argument("--commit-b", help="commit of build B, recorded")
    ap.add_argument("--a-set", action="append", default=[], metavar="PATH=VALUE",
                    help="an override for A's xeflow-run commands (repeatable): A and B may be one build")
    ap.add_argument("--b-set", action="append", default=[], metavar="PATH=VALUE",
                    help="an override for B's xeflow-run commands (repeatable)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--bytes", default="4GiB", help="stream length of every run")
    ap.add_argument("--executor", default="device", choices=["device", "host"],
                    help="xeflow's executor (host: a check of the script without a GPU)")
    ap.add_argument("--tolerance", type=float, default=0.03, help="B's median may be this much slower")
    ap.add_argument("--only", help="one selection and its sizes, 'NAME:SIZES' (e.g. 'C(G)1C scale:4KiB'): a "
                    "closer look at a point with more rounds")
    args = ap.parse_args()
    if args.a_label == args.b_label:
        ap.error("--a-label and --b-label must differ (they name the runs)")
    selections = SELECTIONS
    if args.only:
        name, _, sizes = args.only.partition(":")
        chosen = [sel for n, sel in SELECTIONS if n == name]
        if not chosen or not sizes:
            ap.error(f"--only: want 'NAME:SIZES' with NAME one of {', '.join(n for n, _ in SELECTIONS)}")
        sel = list(chosen[0])
        sel[sel.index("--latency-sizes" if name in LATENCY_SELECTIONS else "--sizes") + 1] = sizes
        selections = [(name, sel)]
    os.makedirs(args.out, exist_ok=True)
    raw = os.path.join(args.out, "raw")
    os.makedirs(raw, exist_ok=True)

    builds = [(args.a_label, args.a), (args.b_label, args.b)]
    runs = {}  # point key -> label -> [gbps]
    labels = {}
    meta = None
    result = None
    for r in range(args.repeats):
        order = builds if r % 2 == 0 else builds[::-1]
        for label, build in order:
            for n, (name, selection) in enumerate(selections):
                doc = run_selection(build, raw, f"{label}-r{r}-s{n}", selection, args)
                meta = meta or doc.get("meta")
                latency = name in LATENCY_SELECTIONS
                for p in doc["points"]:
                    if (p.get("kind") == "latency") != latency:
                        continue
                    key = f"{name} {p['size']}"
                    labels[key] = (name, p["frame_bytes"])
                    runs.setdefault(key, {}).setdefault(label, []).append(
                        p.get("latency_p50_us" if latency else "gbps") if p.get("status") == "ok" else None)
        # Written after every round, so a call that runs out of time keeps the rounds it finished.
        result = summarize(args, runs, labels, meta, r + 1, final=r + 1 == args.repeats)
    rows, passed = result["points"], result["pass"]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(9, 4))
        xs = range(len(rows))
        ax.bar([x - 0.2 for x in xs], [r["median_a"] or 0 for r in rows], 0.4, label=args.a_label)
        ax.bar([x + 0.2 for x in xs], [r["median_b"] or 0 for r in rows], 0.4, label=args.b_label)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([r["point"] for r in rows], rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("GB/s, or p50 µs for the latency points (median)")
        ax.set_title(f"{result['meta']['device']}: {args.a_label} vs {args.b_label}, {args.repeats} interleaved rounds")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, "ab.png"), dpi=120)
    except ImportError:
        print("matplotlib not found: no plot")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
