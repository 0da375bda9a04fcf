#!/usr/bin/env python3
"""Shared objects against explicit copies and managed memory: the ADSM/GMAC paper's evaluation (its Figs.
7-12) on one GPU, from apps/shared_objects/xeflow-shared-bench.

The program runs six workloads (vecadd, a 3D stencil, Parboil's cp, mri-q, mri-fhd and tpacf, each written
anew), every one seven ways with the same kernels: explicit copies (pageable host copies: the paper's CUDA
baseline; and pinned), the shared objects under batch, lazy and rolling update, and managed memory without
and with hints (cudaMemAdvise, cudaMemPrefetchAsync). It checks every output before reporting a time and
writes its results as JSON. This script runs it (or reads an earlier JSON with --report) and prints:

  - the lines a port changes: difflib between each workload's explicit.cpp and shared.cpp (and the managed
    versions), counted from the sources in this checkout, never typed in;
  - Fig. 7 (slowdown against explicit), Fig. 8 (bytes moved per protocol, normalised to batch update),
    Fig. 10 (where each variant's time goes), and the sweeps of Figs. 9, 11 and 12;
  - the targets, PASS / FAIL / MISSING with the measured numbers: rolling update within 5% of explicit on
    every workload, lazy update within 10%, batch update reported; rolling update at least as fast as
    managed memory with prefetch on every workload; at least 2x faster than managed memory without hints on
    the stencil and vector addition;

and draws shared-bench-table.png (Figs. 7, 8, 10) and shared-bench-sweeps.png (Figs. 9, 11, 12) when
matplotlib is installed.

  python3 bench/shared_bench.py --build build-rel --out OUT            # run the program, then report
  python3 bench/shared_bench.py --build build-rel --out OUT -- --quick # arguments after -- go to the program
  python3 bench/shared_bench.py --report OUT/shared-bench.json [--out DIR]
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join("apps", "shared_objects", "xeflow-shared-bench")
WORKLOADS = ["vecadd", "stencil", "cp", "mri-q", "mri-fhd", "tpacf"]
VARIANTS = ["explicit", "explicit-pinned", "batch", "lazy", "rolling", "managed", "managed-prefetch"]
PHASES = ["write", "to_gpu", "gpu", "to_host", "read"]
#: Where each variant's host side lives, per workload folder.
PORT_FILES = {"shared": "shared.cpp", "managed": "managed.cpp", "managed-prefetch": "managed_prefetch.cpp"}


# ---- the port: lines changed from the explicit version ------------------------------------------------

def code_lines(path: str) -> list[str]:
    """The file's code lines: comments and blank lines dropped, whitespace collapsed (these sources have no
    '//' inside string literals)."""
    lines = []
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.split("//", 1)[0].strip()
            if line:
                lines.append(" ".join(line.split()))
    return lines


def statements(lines: list[str]) -> list[str]:
    """The code as statements (split after ; { }), so that a line wrapped differently is not a change."""
    text = " ".join(lines)
    return [s.strip() for s in re.split(r"(?<=[;{}])", text) if s.strip()]


def changes(a: list[str], b: list[str]) -> tuple[int, int]:
    """(removed, added) going from a to b."""
    removed = added = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return removed, added


def port_counts(root: str) -> dict:
    """Per workload and port: code lines of both versions, lines and statements removed and added."""
    result = {}
    for w in WORKLOADS:
        folder = os.path.join(root, "apps", "shared_objects", w.replace("-", "_"))
        explicit_path = os.path.join(folder, "explicit.cpp")
        if not os.path.exists(explicit_path):
            continue
        explicit = code_lines(explicit_path)
        entry = {}
        for port, name in PORT_FILES.items():
            path = os.path.join(folder, name)
            if not os.path.exists(path):
                continue
            ported = code_lines(path)
            removed, added = changes(explicit, ported)
            s_removed, s_added = changes(statements(explicit), statements(ported))
            entry[port] = {"explicit_lines": len(explicit), "lines": len(ported), "lines_removed": removed,
                           "lines_added": added, "statements_removed": s_removed, "statements_added": s_added}
        result[w] = entry
    return result


# ---- reading the results ------------------------------------------------------------------------------

def size_text(size: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in size.items())


def fmt_bytes(n) -> str:
    if n is None:
        return "n/m"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def ok_rows(doc: dict, experiment: str) -> list[dict]:
    return [r for r in doc["rows"] if r["experiment"] == experiment and r["status"] == "ok" and r.get("median")]


def table_row(doc: dict, workload: str, variant: str):
    for r in ok_rows(doc, "table"):
        if r["workload"] == workload and r["variant"] == variant:
            return r
    return None


def ms(r) -> float | None:
    return r["median"]["ms"] if r else None


# ---- printing -------------------------------------------------------------------------------------------

def print_header(doc: dict) -> None:
    d = doc["device"]
    print(f"device: {d['name']} (sm {d['compute_capability']}, {d['multiprocessors']} SMs, "
          f"{fmt_bytes(d['memory_bytes'])}), CUDA driver API {d['driver_version']}, runtime {d['runtime_version']}")
    print(f"date: {doc['date']}  commit: {doc.get('commit') or '?'}  elapsed: {doc['elapsed_s']:.1f} s")
    print(f"command: {doc['command_line']}")
    cfg = doc["config"]
    print(f"reps: {cfg['reps']} (sweeps {cfg['sweep_reps']}) after {cfg['warmup']} warm-up; rolling block in "
          f"the table {fmt_bytes(cfg['block_bytes'])}")
    if not doc.get("finished", True):
        print("NOTE: the program did not finish (stopped from outside): the rows it had written so far")
    if doc.get("budget_hit"):
        print("NOTE: the program's time budget left some runs out (rows 'skipped')")
    for r in doc["rows"]:
        if r.get("cut_short"):
            print(f"NOTE: {r['experiment']} {r['workload']} {sweep_label(r)}: {r['cut_short']}")
    bad = [r for r in doc["rows"] if r["status"] not in ("ok", "skipped")]
    for r in bad:
        print(f"NOT REPORTED {r['experiment']} {r['workload']} {r['variant']}: {r['status']}: {r['detail']}")


def print_ports(counts: dict) -> None:
    print("\n== lines changed to port from explicit.cpp (difflib over code lines; statements in brackets) ==")
    print(f"{'workload':10} {'port':18} {'explicit':>8} {'ported':>7} {'removed':>8} {'added':>6}")
    for w, entry in counts.items():
        for port, c in entry.items():
            print(f"{w:10} {port:18} {c['explicit_lines']:8} {c['lines']:7} "
                  f"{c['lines_removed']:5} ({c['statements_removed']:2}) "
                  f"{c['lines_added']:3} ({c['statements_added']:2})")


def print_fig7(doc: dict) -> None:
    print("\n== Fig. 7: slowdown against explicit (median ms in brackets) ==")
    print(f"{'workload':10}" + "".join(f"{v:>22}" for v in VARIANTS))
    for w in WORKLOADS:
        base = ms(table_row(doc, w, "explicit"))
        if base is None:
            continue
        cells = []
        for v in VARIANTS:
            t = ms(table_row(doc, w, v))
            cells.append(f"{t / base:8.3f} ({t:9.2f})" if t is not None else f"{'-':>20}")
        print(f"{w:10}" + "".join(f"{c:>22}" for c in cells))


def print_fig8(doc: dict) -> None:
    print("\n== Fig. 8: bytes moved (to GPU / to host), and as a share of batch update's total ==")
    for w in WORKLOADS:
        batch = table_row(doc, w, "batch")
        total_batch = None
        if batch and batch["median"]["bytes_to_gpu"] is not None:
            total_batch = batch["median"]["bytes_to_gpu"] + batch["median"]["bytes_to_host"]
        parts = []
        for v in ["explicit", "batch", "lazy", "rolling"]:
            r = table_row(doc, w, v)
            if not r:
                continue
            m = r["median"]
            share = ""
            if total_batch:
                share = f" [{m['bytes_to_gpu'] / total_batch:.3f} / {m['bytes_to_host'] / total_batch:.3f}]"
            parts.append(f"{v} {fmt_bytes(m['bytes_to_gpu'])} / {fmt_bytes(m['bytes_to_host'])}{share}")
        if parts:
            print(f"{w:10} " + "; ".join(parts))
    print("managed and managed-prefetch: not measured (the driver migrates pages on its own)")


def print_fig10(doc: dict) -> None:
    print("\n== Fig. 10: where the time goes (median run, ms; kernel from CUDA events; faults) ==")
    print(f"{'workload':10} {'variant':17}" + "".join(f"{p:>9}" for p in PHASES) +
          f"{'kernel':>9}{'faults':>8}{'evict':>7}")
    for w in WORKLOADS:
        for v in VARIANTS:
            r = table_row(doc, w, v)
            if not r:
                continue
            m = r["median"]
            print(f"{w:10} {v:17}" + "".join(f"{m['phases_ms'][p]:9.2f}" for p in PHASES) +
                  f"{m['kernel_ms']:9.2f}{m['faults']:8}{m['evictions']:7}")


def sweep_label(r: dict) -> str:
    """"rolling 64.0 KiB x2", a '*' where its runs were cut short."""
    if r["variant"] != "rolling":
        return r["variant"] + ("*" if r.get("cut_short") else "")
    rolling = r["rolling_size"]
    return (f"rolling {fmt_bytes(r['block_bytes'])}" + ("" if rolling == "adaptive" else f" x{rolling}") +
            ("*" if r.get("cut_short") else ""))


def print_sweep(doc: dict, experiment: str, title: str) -> None:
    rows = ok_rows(doc, experiment)
    if not rows:
        return
    print(f"\n== {title} (median ms) ==")
    sizes = []
    for r in rows:
        if r["size"] not in sizes:
            sizes.append(r["size"])
    for size in sizes:
        parts = [f"{sweep_label(r)} {r['median']['ms']:.2f}" for r in rows if r["size"] == size]
        print(f"{size_text(size)}: " + "; ".join(parts))


# ---- the targets ----------------------------------------------------------------------------------------

def targets(doc: dict) -> list[dict]:
    """The targets on the table's rows: PASS / FAIL / MISSING with the measured numbers."""
    out = []

    def add(name, workload, passed, value, detail):
        out.append({"target": name, "workload": workload,
                    "status": "MISSING" if passed is None else ("PASS" if passed else "FAIL"),
                    "value": value, "detail": detail})

    for w in WORKLOADS:
        base = ms(table_row(doc, w, "explicit"))
        for variant, limit in (("rolling", 1.05), ("lazy", 1.10)):
            t = ms(table_row(doc, w, variant))
            if base is None or t is None:
                add(f"{variant} within {round((limit - 1) * 100)}% of explicit", w, None, None, "no measurement")
            else:
                add(f"{variant} within {round((limit - 1) * 100)}% of explicit", w, t <= limit * base, t / base,
                    f"{t:.2f} ms against {base:.2f} ms: x{t / base:.3f} (limit x{limit:.2f})")
        t = ms(table_row(doc, w, "batch"))
        out.append({"target": "batch reported", "workload": w, "status": "INFO",
                    "value": t / base if t and base else None,
                    "detail": f"{t:.2f} ms: x{t / base:.3f} of explicit" if t and base else "no measurement"})
        rolling = ms(table_row(doc, w, "rolling"))
        prefetch = ms(table_row(doc, w, "managed-prefetch"))
        if rolling is None or prefetch is None:
            add("rolling at least as fast as managed+prefetch", w, None, None, "no measurement")
        else:
            add("rolling at least as fast as managed+prefetch", w, rolling <= prefetch, prefetch / rolling,
                f"rolling {rolling:.2f} ms, managed-prefetch {prefetch:.2f} ms: x{prefetch / rolling:.3f}")
    for w in ["stencil", "vecadd"]:
        rolling = ms(table_row(doc, w, "rolling"))
        managed = ms(table_row(doc, w, "managed"))
        if rolling is None or managed is None:
            add(">= 2x managed without hints", w, None, None, "no measurement")
        else:
            add(">= 2x managed without hints", w, managed >= 2 * rolling, managed / rolling,
                f"rolling {rolling:.2f} ms, managed {managed:.2f} ms: x{managed / rolling:.2f}")
    return out


def print_targets(results: list[dict]) -> None:
    print("\n== targets ==")
    for t in results:
        print(f"{t['status']:7} {t['target']:46} {t['workload']:8} {t['detail']}")
    counted = [t for t in results if t["status"] in ("PASS", "FAIL", "MISSING")]
    passed = sum(t["status"] == "PASS" for t in counted)
    print(f"{passed} of {len(counted)} targets met")


# ---- plots ----------------------------------------------------------------------------------------------

def block_ticks(ax, rows: list[dict]) -> None:
    """A log2 x axis labelled with the blocks that were measured."""
    blocks = sorted({r["block_bytes"] for r in rows if r["block_bytes"]})
    ax.set_xscale("log", base=2)
    ax.set_xticks(blocks, [fmt_bytes(b).replace(".0 ", " ") for b in blocks])
    ax.set_xlabel("rolling update's block")


def plot(doc: dict, out_dir: str) -> list[str]:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        print("shared_bench: matplotlib missing: no plots", file=sys.stderr)
        return []
    stamp = f"{doc['device']['name']}, {doc['date']}, {(doc.get('commit') or '?')[:12]}"
    written = []
    colors = {"explicit": "black", "explicit-pinned": "grey", "batch": "tab:red", "lazy": "tab:orange",
              "rolling": "tab:green", "managed": "tab:blue", "managed-prefetch": "tab:purple"}

    # Figs. 7, 8, 10.
    fig, axes = plt.subplots(1, 3, figsize=(20, 6))
    ax = axes[0]
    workloads = [w for w in WORKLOADS if table_row(doc, w, "explicit")]
    width = 0.8 / len(VARIANTS)
    for k, v in enumerate(VARIANTS):
        xs, ys = [], []
        for i, w in enumerate(workloads):
            t, base = ms(table_row(doc, w, v)), ms(table_row(doc, w, "explicit"))
            if t is not None and base:
                xs.append(i + (k - len(VARIANTS) / 2 + 0.5) * width)
                ys.append(t / base)
        ax.bar(xs, ys, width, label=v, color=colors[v])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(workloads)), workloads)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.set_ylabel("time / explicit (log)")
    ax.set_title("Fig. 7: slowdown against explicit copies")
    ax.legend(fontsize=7)

    ax = axes[1]
    protocols = ["explicit", "batch", "lazy", "rolling"]
    width = 0.8 / len(protocols)
    for k, v in enumerate(protocols):
        for i, w in enumerate(workloads):
            r, batch = table_row(doc, w, v), table_row(doc, w, "batch")
            if not r or not batch or r["median"]["bytes_to_gpu"] is None:
                continue
            total = batch["median"]["bytes_to_gpu"] + batch["median"]["bytes_to_host"]
            if not total:
                continue
            x = i + (k - len(protocols) / 2 + 0.5) * width
            to_gpu, to_host = r["median"]["bytes_to_gpu"] / total, r["median"]["bytes_to_host"] / total
            ax.bar(x, to_gpu, width, color=colors[v], label=f"{v} to GPU" if i == 0 else None)
            ax.bar(x, to_host, width, bottom=to_gpu, color=colors[v], alpha=0.45,
                   label=f"{v} to host" if i == 0 else None)
    ax.set_xticks(range(len(workloads)), workloads)
    ax.set_ylabel("bytes / batch update's bytes")
    ax.set_title("Fig. 8: data moved, normalised to batch update")
    ax.legend(fontsize=7)

    ax = axes[2]
    shown = ["explicit", "batch", "lazy", "rolling"]
    labels, bottoms = [], []
    phase_colors = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]
    bars = []
    for w in workloads:
        for v in shown:
            r = table_row(doc, w, v)
            if r:
                labels.append(f"{w}\n{v}")
                bars.append(r["median"])
    x = range(len(bars))
    bottom = [0.0] * len(bars)
    for p, color in zip(PHASES, phase_colors):
        share = [m["phases_ms"][p] / m["ms"] * 100 if m["ms"] else 0 for m in bars]
        ax.bar(x, share, bottom=bottom, color=color, label=p)
        bottom = [b + s for b, s in zip(bottom, share)]
    ax.plot(list(x), [m["kernel_ms"] / m["ms"] * 100 if m["ms"] else 0 for m in bars], "k_", markersize=12,
            label="kernel (events)")
    ax.set_xticks(list(x), labels, fontsize=6, rotation=90)
    ax.set_ylabel("% of the run")
    ax.set_title("Fig. 10: where the time goes")
    ax.legend(fontsize=7)
    fig.suptitle(f"xeflow shared objects: {stamp}")
    fig.tight_layout()
    path = os.path.join(out_dir, "shared-bench-table.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)

    # Figs. 9, 11, 12.
    fig, axes = plt.subplots(1, 3, figsize=(20, 6))
    ax = axes[0]
    rows = ok_rows(doc, "stencil-volumes")
    series = {}
    for r in rows:
        series.setdefault(sweep_label(r), []).append((r["size"]["edge"], r["median"]["ms"]))
    for label, points in series.items():
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.set_xlabel("volume edge (edge³ floats)")
    ax.set_ylabel("ms (log)")
    ax.set_title("Fig. 9: 3D stencil by volume")
    ax.legend(fontsize=7)

    ax = axes[1]
    rows = ok_rows(doc, "block-sizes")
    for n in sorted({r["size"]["elements"] for r in rows}):
        points = sorted((r["block_bytes"], r["median"]["ms"]) for r in rows
                        if r["size"]["elements"] == n and r["variant"] == "rolling")
        line = ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=f"rolling, {n} floats")
        base = [r["median"]["ms"] for r in rows if r["size"]["elements"] == n and r["variant"] == "explicit"]
        if base:
            ax.axhline(base[0], linestyle="--", color=line[0].get_color(), label=f"explicit, {n} floats")
    block_ticks(ax, rows)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.set_ylabel("ms (log)")
    ax.set_title("Fig. 11: vector addition by block")
    ax.legend(fontsize=7)

    ax = axes[2]
    rows = ok_rows(doc, "rolling-sizes")
    for rolling in sorted({r["rolling_size"] for r in rows if r["variant"] == "rolling"}, key=str):
        points = sorted((r["block_bytes"], r["median"]["ms"]) for r in rows
                        if r["variant"] == "rolling" and r["rolling_size"] == rolling)
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=f"rolling size {rolling}")
    base = [r["median"]["ms"] for r in rows if r["variant"] == "explicit"]
    if base:
        ax.axhline(base[0], linestyle="--", color="black", label="explicit")
    block_ticks(ax, rows)
    ax.set_yscale("log")  # a rolling size below the blocks one point touches costs orders of magnitude
    ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.set_ylabel("ms (log)")
    ax.set_title("Fig. 12: tpacf by block and rolling size")
    ax.legend(fontsize=7)
    fig.suptitle(f"xeflow shared objects: {stamp}")
    fig.tight_layout()
    path = os.path.join(out_dir, "shared-bench-sweeps.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)
    return written


# ---- main -----------------------------------------------------------------------------------------------

def git_commit() -> str:
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def report(doc: dict, out_dir: str) -> int:
    print_header(doc)
    counts = port_counts(ROOT)
    print_ports(counts)
    print_fig7(doc)
    print_fig8(doc)
    print_fig10(doc)
    print_sweep(doc, "stencil-volumes", "Fig. 9: stencil by volume")
    print_sweep(doc, "block-sizes", "Fig. 11: vector addition by rolling block")
    print_sweep(doc, "rolling-sizes", "Fig. 12: tpacf by rolling block and rolling size")
    results = targets(doc)
    print_targets(results)
    os.makedirs(out_dir, exist_ok=True)
    summary = {"device": doc["device"]["name"], "date": doc["date"], "commit": doc.get("commit"),
               "port": counts, "targets": results}
    with open(os.path.join(out_dir, "shared-bench-summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    for path in plot(doc, out_dir):
        print(f"wrote {path}")
    return 0 if doc.get("all_ok") else 1


def main() -> int:
    argv = sys.argv[1:]
    passed = []
    if "--" in argv:
        passed = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="the build directory (a release CUDA build)")
    ap.add_argument("--out", default=".", help="where the JSON, the program's output and the plots go")
    ap.add_argument("--report", metavar="JSON", help="report an earlier run's JSON instead of running")
    ap.add_argument("--commit", help="commit to record (default: git rev-parse HEAD of this checkout)")
    ap.add_argument("--timeout", type=float, default=540, help="seconds before the program is stopped")
    args = ap.parse_args(argv)
    if args.report:
        with open(args.report) as f:
            doc = json.load(f)
        return report(doc, args.out if args.out != "." else os.path.dirname(os.path.abspath(args.report)))
    program = os.path.join(args.build, PROGRAM)
    if not os.path.exists(program):
        print(f"shared_bench: {program} not found: build it (ninja -C {args.build} {PROGRAM})", file=sys.stderr)
        return 3
    os.makedirs(args.out, exist_ok=True)
    json_path = os.path.join(args.out, "shared-bench.json")
    commit = args.commit or git_commit()
    command = [program, "--json", json_path] + (["--commit", commit] if commit else []) + passed
    print("running: " + " ".join(command), flush=True)
    with open(os.path.join(args.out, "shared-bench.txt"), "w") as log:
        try:
            child = subprocess.run(command, stdout=subprocess.PIPE, text=True, timeout=args.timeout)
            output, returncode = child.stdout, child.returncode
        except subprocess.TimeoutExpired as e:
            # The program rewrites its JSON after every group: report what it finished.
            output = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            returncode = 1
            print(f"shared_bench: the program ran past {args.timeout} s and was stopped", file=sys.stderr)
        log.write(output)
    print(output)
    if returncode not in (0, 1) or not os.path.exists(json_path):
        print(f"shared_bench: the program failed (exit {returncode})", file=sys.stderr)
        return returncode or 1
    with open(json_path) as f:
        doc = json.load(f)
    return report(doc, args.out)


if __name__ == "__main__":
    sys.exit(main())
