#!/usr/bin/env python3
"""Plots xeflow-fence-cost's JSON: a release fence's mean and p99 time by case (scope, what was stored
before it, one block or the full grid), one panel per load on the link; writes summary.json beside the
plot (the run's stamp and the mean per case).

  python3 bench/fence_cost_plot.py bench/results/fence_cost/fence_cost.json --out bench/results/fence_cost
"""
import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("json", help="xeflow-fence-cost --json output")
    p.add_argument("--out", required=True, help="folder for fence_cost.png and summary.json")
    args = p.parse_args()
    with open(args.json) as f:
        doc = json.load(f)
    cases = doc["cases"]
    links = list(dict.fromkeys(c["link"] for c in cases))
    fig, axes = plt.subplots(1, len(links), figsize=(5 * len(links), 4.5), sharey=True)
    for ax, link in zip(axes, links):
        rows = [c for c in cases if c["link"] == link]
        labels = [f"{c['scope']}, {c['stored']}\n{c['blocks']} block{'s' if c['blocks'] > 1 else ''}" for c in rows]
        xs = range(len(rows))
        colors = ["tab:blue" if c["scope"] == "device" else "tab:red" for c in rows]
        ax.bar(xs, [c["mean_us"] for c in rows], color=colors)
        ax.scatter(xs, [c["p99_us"] for c in rows], color="black", marker="_", s=120, label="p99")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labels, rotation=90, fontsize=6)
        ax.set_title(f"link: {link}")
        ax.set_yscale("log")
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("release fence, µs (bars: mean; ticks: p99)")
    axes[0].legend()
    fig.suptitle(f"{doc['device']}, {doc['date']}, {doc['commit']}: a release fence in a persistent kernel's block "
                 f"(red: system scope, blue: device scope)", fontsize=9)
    fig.tight_layout()
    os.makedirs(args.out, exist_ok=True)
    fig.savefig(os.path.join(args.out, "fence_cost.png"), dpi=130)
    summary = {k: doc[k] for k in ("benchmark", "device", "date", "commit", "config")}
    summary["command_line"] = doc.get("command_line", doc.get("command"))
    summary["mean_us"] = {f"{c['link']} / {c['blocks']} blocks / {c['stored']} / {c['scope']}": round(c["mean_us"], 3)
                          for c in cases}
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    print("wrote", os.path.join(args.out, "fence_cost.png"), "and summary.json")


if __name__ == "__main__":
    main()
