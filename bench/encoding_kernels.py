#!/usr/bin/env python3
"""The encoding operators' arithmetic, variant against variant: reads the JSON of xeflow-encoding-kernels
(bench/encoding_kernels/encoding_kernels.cu), prints each case's GB/s and which variant wins it and each
family, and draws a bar chart of GB/s per variant, one panel per family.

A family's winner is the variant with the highest geometric mean of GB/s over the family's cases (k, or the
AES mode), among the variants verified in every case; each case's own winner is printed too, so a variant
that wins only at some k shows. Unverified rows are listed and never win.

  build-rel/bench/encoding_kernels/xeflow-encoding-kernels --json out.json
  python3 bench/encoding_kernels.py --json out.json --png encoding_kernels.png
"""
import argparse
import json
import math
import sys


def summarize(doc):
    """family -> (cases, variants, {(case, variant): row}), cases and variants in the order of the run."""
    families = {}
    for row in doc["results"]:
        cases, variants, cells = families.setdefault(row["family"], ([], [], {}))
        if row["case"] not in cases:
            cases.append(row["case"])
        if row["variant"] not in variants:
            variants.append(row["variant"])
        cells[(row["case"], row["variant"])] = row
    return families


def winners(cases, variants, cells):
    """(per case: case -> (variant, GB/s) or None, the family's winner: (variant, geomean) or None)."""
    per_case = {}
    for case in cases:
        ok = [(cells[(case, v)]["gbps"], v) for v in variants
              if (case, v) in cells and cells[(case, v)]["verified"]]
        per_case[case] = max(ok)[::-1] if ok else None
    geomeans = []
    for v in variants:
        rows = [cells.get((case, v)) for case in cases]
        if all(r is not None and r["verified"] and r["gbps"] for r in rows):
            geomeans.append((math.exp(sum(math.log(r["gbps"]) for r in rows) / len(rows)), v))
    overall = max(geomeans)[::-1] if geomeans else None
    return per_case, overall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", required=True, help="xeflow-encoding-kernels --json output")
    ap.add_argument("--png", help="write the bar chart here (needs matplotlib)")
    args = ap.parse_args()
    with open(args.json) as f:
        doc = json.load(f)
    families = summarize(doc)
    print(f"{doc.get('device')}, {doc.get('date')}, commit {doc.get('commit')}")
    print(f"  {doc.get('command_line')}")
    unverified = [r for r in doc["results"] if not r["verified"]]
    for family, (cases, variants, cells) in families.items():
        per_case, overall = winners(cases, variants, cells)
        print(f"\n{family} (GB/s of input bytes)")
        width = max(len(v) for v in variants)
        print(f"  {'variant':<{width}} " + " ".join(f"{c:>10}" for c in cases))
        for v in variants:
            values = []
            for c in cases:
                r = cells.get((c, v))
                values.append("-" if r is None else f"{r['gbps']:.1f}" if r["verified"] else "MISMATCH")
            print(f"  {v:<{width}} " + " ".join(f"{x:>10}" for x in values))
        for c in cases:
            w = per_case[c]
            print(f"  {c}: {w[0]} ({w[1]:.1f} GB/s)" if w else f"  {c}: no verified variant")
        print(f"  winner of {family}: {overall[0]} (geometric mean {overall[1]:.1f} GB/s over {', '.join(cases)})"
              if overall else f"  winner of {family}: none (no variant verified in every case)")
    for r in unverified:
        print(f"\nUNVERIFIED: {r['family']} {r['case']} {r['variant']}: {r.get('mismatch')}")

    if args.png:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib not found: no plot")
            return 1 if unverified else 0
        fig, axes = plt.subplots(1, len(families), figsize=(5.5 * len(families), 4.5), squeeze=False)
        for ax, (family, (cases, variants, cells)) in zip(axes[0], families.items()):
            width = 0.8 / len(variants)
            for n, v in enumerate(variants):
                xs = [i - 0.4 + width * (n + 0.5) for i in range(len(cases))]
                ys = [cells[(c, v)]["gbps"] if (c, v) in cells and cells[(c, v)]["verified"] else 0
                      for c in cases]
                ax.bar(xs, ys, width, label=v)
            ax.set_xticks(range(len(cases)))
            ax.set_xticklabels(cases)
            ax.set_ylabel("GB/s of input (median)")
            ax.set_title(family)
            ax.legend(fontsize=7)
        fig.suptitle(f"{doc.get('device')}, {doc.get('date')}, {doc.get('commit')}", fontsize=9)
        fig.tight_layout()
        fig.savefig(args.png, dpi=120)
        print(f"\nwrote {args.png}")
    return 1 if unverified else 0


if __name__ == "__main__":
    sys.exit(main())
