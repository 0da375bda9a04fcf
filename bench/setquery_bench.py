#!/usr/bin/env python3
"""Set Query (O'Neil) on xeflow against its baselines: bytes over PCIe, time from table in host memory to
answer, and every answer checked against the CPU reference.

Generates the BENCH table (xeflow-setquery-gen) and the reference answers (xeflow-setquery-ref), then runs
each query family (topologies/setquery_*.yaml: a family's variants together, one pass of the table):

  xeflow     mapped and dma. The table is held in the topic's frames (capacity equal to the table's frames:
             heap frame o % capacity then holds file frame o % frames on every pass, so table_source reads
             the file on the first pass only). Two runs: one pass (answers compared with the reference, the
             one-shot wall clock of xeflow-run and where it went), and --passes passes; the steady time of
             a pass is (t(passes) - t(1)) / (passes - 1) over the runs' stream windows (first publish to
             last delivery), so start-up and the first pass's file read drop out.
  ablation   dma with the query's `skip` at none (every page crosses, as row frames would), columns,
             zones (+ min/max) and blooms (+ bloom filters, xeflow's default): bytes and steady time.
  ckc        xeflow-setquery-ckc: the family's whole columns (or the whole table) copied to the GPU, then
             the query operator's own compute, then the accumulators back (copy-kernel-copy).
  cpu        xeflow-setquery-cpu: a vectorized multi-threaded scan of the table in memory, with and
             without the index pages (zone maps and blooms).
  arrow      bench/setquery_arrow.py: pyarrow's Acero over the table loaded as Arrow arrays.

Every contender's answers must equal the reference's (the run stops otherwise). Prints a table and writes
OUT/setquery.json (stamped with device, date, commit and command line) and OUT/setquery.png.

  python3 bench/setquery_bench.py --build build-rel --rows 10M --out OUT
"""
import argparse
import datetime
import json
import math
import re
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FAMILIES = ["Q1", "Q2A", "Q2B", "Q3A", "Q3B", "Q4A", "Q4B"]
CONTENDERS = ["xeflow", "ablation", "ckc", "cpu", "arrow"]
SKIP_LEVELS = ["none", "columns", "zones", "blooms"]
DEFAULT_MAX_ROWS = 1 << 20  # the query operator's max_rows
CKC_DEFAULT_MAX_ROWS = 1 << 22


def run(cmd, **kw):
    r = subprocess.run(cmd, text=True, capture_output=True, **kw)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)}\nfailed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r


def device_name():
    """The GPU the runs use (CUDA_VISIBLE_DEVICES' first, else the first), and how many the machine has."""
    try:
        names = subprocess.run(["nvidia-smi", "--query-gpu=index,name", "--format=csv,noheader"], text=True,
                               capture_output=True, check=True).stdout.strip().splitlines()
    except (OSError, subprocess.CalledProcessError):
        return "no GPU"
    if not names:
        return "no GPU"
    chosen = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    pick = next((n for n in names if n.split(",")[0].strip() == chosen), names[0])
    name = pick.split(",", 1)[1].strip()
    return name if len(names) == 1 else f"{name} (GPU {pick.split(',')[0].strip()} of {len(names)})"


def commit():
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], text=True,
                              capture_output=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def query_ops(topology):
    """The query operators' names in a Set Query topology (one per line: `  name: {class: query, ...}`)."""
    with open(topology) as f:
        return [line.split(":")[0].strip() for line in f if "class: query" in line]


def expected_rows(expected, op):
    """Rows of a variant's answer in the reference's CSV (less its header)."""
    with open(os.path.join(expected, op.upper() + ".csv")) as f:
        return sum(1 for _ in f) - 1


def same_answers(results, expected, label):
    files = sorted(f for f in os.listdir(results) if f.endswith(".csv"))
    if not files:
        sys.exit(f"{label}: no result files in {results}")
    wrong = [f for f in files if open(os.path.join(results, f)).read() != open(os.path.join(expected, f)).read()]
    if wrong:
        sys.exit(f"{label}: results differ from the reference: {wrong}")
    return len(files)


class Xeflow:
    def __init__(self, args, frames, expected, work):
        self.args, self.frames, self.expected, self.work = args, frames, expected, work

    def xeflow_run(self, family, mode, passes, results, skip=None, resident=True, max_rows=None):
        topology = os.path.join(ROOT, "topologies", f"setquery_{family.lower()}.yaml")
        cmd = [os.path.join(self.args.build, "tools", "xeflow-run"), topology, "-q", "--stats", "json",
               "--set", f"runtime.executor={self.args.executor}",
               "--set", f"topics.bench.transfer={mode}"]
        if resident:
            cmd += ["--set", f"topics.bench.capacity={self.args.capacity or self.frames}"]
        for extra in self.args.set:
            cmd += ["--set", extra]
        cmd += [
               "--set", f"operators.source.params.path={self.args.table}",
               "--set", f"operators.source.params.passes={passes}"]
        for op in query_ops(topology):
            cmd += ["--set", f"operators.{op}.params.result={os.path.join(results, op.upper() + '.csv')}"]
            if skip:
                cmd += ["--set", f"operators.{op}.params.skip={skip}"]
            if max_rows and max_rows.get(op):
                cmd += ["--set", f"operators.{op}.params.max_rows={max_rows[op]}"]
        start = time.monotonic()
        r = run(cmd)
        return json.loads(r.stdout), time.monotonic() - start

    def room(self, family, passes):
        """Each projection's max_rows where the default would not hold its answer: a projection's rows add
        up over the passes (the reference's answer gives one pass's)."""
        topology = os.path.join(ROOT, "topologies", f"setquery_{family.lower()}.yaml")
        return {op: expected_rows(self.expected, op) * passes + 1 for op in query_ops(topology)
                if expected_rows(self.expected, op) * passes + 1 > DEFAULT_MAX_ROWS}

    def measure(self, family, mode, skip=None, one_shot=False):
        """One pass (answers) and --passes passes (steady pass time), the table resident; with one_shot, also
        xeflow-run as a user runs it once (the topology's own capacity): wall clock and its phases."""
        tag = f"{family}-{mode}" + (f"-{skip}" if skip else "")
        results = os.path.join(self.work, f"xeflow-{tag}")
        shutil.rmtree(results, ignore_errors=True)
        os.makedirs(os.path.join(results, "many"))
        one, wall_one = self.xeflow_run(family, mode, 1, results, skip, max_rows=self.room(family, 1))
        same_answers(results, self.expected, f"xeflow {tag}")
        many, _ = self.xeflow_run(family, mode, self.args.passes, os.path.join(results, "many"), skip,
                                  max_rows=self.room(family, self.args.passes))
        source = next(o for o in many["operators"] if o["name"] == "source")["counters"]
        if not self.args.capacity and source.get("frames_read") != self.frames:
            sys.exit(f"xeflow {tag}: the source read {source.get('frames_read')} frames over "
                     f"{self.args.passes} passes, not the table's {self.frames} once: the table is not resident")
        for name, stats in (("one", one), ("many", many)):
            with open(os.path.join(results, f"stats-{name}.json"), "w") as f:
                json.dump(stats, f, indent=1)
        steady = (many["stream_seconds"] - one["stream_seconds"]) / (self.args.passes - 1)
        shot, wall_shot = {}, None
        if one_shot:
            os.makedirs(os.path.join(results, "shot"))
            shot, wall_shot = self.xeflow_run(family, mode, 1, os.path.join(results, "shot"), skip, False,
                                              max_rows=self.room(family, 1))
            same_answers(os.path.join(results, "shot"), self.expected, f"xeflow {tag}, one shot")
        ops = [o for o in one["operators"] if o.get("class") == "query"]
        topic = next(t for t in one["topics"] if t["name"] == "bench")
        copy = topic.get("copy_engines", {})
        # What the steady run's time went to: the bridge's busy share, the kernel's cycles by round step,
        # its busy rounds, and how long the source waited for a free frame.
        steady_topic = next(t for t in many["topics"] if t["name"] == "bench")
        kernel = many.get("kernel") or {}
        cycles = {k: kernel.get(f"{k}_cycles", 0) for k in ("subscribe", "schedule", "compute", "publish", "idle")}
        total_cycles = sum(cycles.values()) or 1
        diagnosis = {
            "stream_s": many["stream_seconds"],
            "bridge_busy_s": steady_topic.get("copy_engines", {}).get("bridge_busy_seconds"),
            "bridge_choice_wait_s": steady_topic.get("copy_engines", {}).get("bridge_choice_wait_seconds"),
            "copies": steady_topic.get("copy_engines", {}).get("copies"),
            "source_blocked_s": steady_topic.get("blocked_seconds"),
            "kernel_cycle_shares": {k: v / total_cycles for k, v in cycles.items()},
            "fence_share": kernel.get("fence_cycles", 0) / total_cycles,
            "fence_us": (kernel["fence_cycles"] / kernel["fences"] / kernel["sm_clock_mhz"]
                         if kernel.get("fences") and kernel.get("sm_clock_mhz") else None),
            "blocks": kernel.get("blocks"), "warps_per_block": kernel.get("warps_per_block"),
            "warps_placed_share": (kernel["placed_warps"] / kernel["busy_rounds"] / kernel["warps_per_block"]
                                   if kernel.get("busy_rounds") and "placed_warps" in kernel else None),
            "items_per_busy_round": (kernel["computed_items"] / kernel["busy_rounds"]
                                     if kernel.get("busy_rounds") and "computed_items" in kernel else None),
            "items_per_frame": max((o.get("items_per_frame", 1) for o in
                                    (many.get("partition") or {}).get("operators", [])), default=None),
            "busy_round_us": (many.get("partition") or {}).get("busy_round_us")}
        return {"family": family, "mode": mode, "skip": skip or "blooms", "queries": len(ops),
                "steady_pass_s": steady, "one_pass_stream_s": one["stream_seconds"], "resident_wall_s": wall_one,
                "one_shot_wall_s": wall_shot, "one_shot_stream_s": shot.get("stream_seconds"),
                "one_shot_phases": shot.get("phases", []),
                "pages": sum(o["counters"].get("pages", 0) for o in ops),
                "pages_skipped": sum(o["counters"].get("pages_skipped", 0) for o in ops),
                "copied_bytes": copy.get("bytes"), "skipped_bytes": copy.get("bytes_skipped"),
                "file_bytes_read": next(o for o in one["operators"] if o["name"] == "source")["counters"].get(
                    "bytes_read"),
                "table_bytes": topic["bytes"], "steady_run": diagnosis, "answers": "equal to the reference"}


def kernel_text(diagnosis):
    """The steady run's kernel in a line: its cycles by round step, its fences, how much of a block a busy
    round kept busy."""
    shares = diagnosis.get("kernel_cycle_shares") or {}
    text = ", ".join(f"{k} {100 * v:.0f} %" for k, v in shares.items())
    if diagnosis.get("fence_us") is not None:
        text += f"; fences {100 * diagnosis['fence_share']:.1f} % ({diagnosis['fence_us']:.1f} us each)"
    if diagnosis.get("warps_placed_share") is not None:
        text += (f"; a busy round ran {diagnosis['items_per_busy_round']:.1f} items on "
                 f"{100 * diagnosis['warps_placed_share']:.0f} % of the warps")
    return text


def table_page_map(info):
    """From `xeflow-table info`: index pages a frame and each column's data pages a frame."""
    index = int(re.search(r"(\d+) index", info).group(1))
    columns = {m.group(1): int(m.group(2)) for m in re.finditer(r"'(\w+)'[^:]*: (\d+) data pages", info)}
    return {"index_pages": index, "column_pages": columns}


def variant_column_bytes(page_map, frames):
    """Per variant (ID: bytes): what the copy engines carry of the table for it alone with columns but no
    index (skip: columns): the index pages and every page of the columns its WHERE and SELECT name, every
    frame. The families' measured copies carry the union of their variants' columns."""
    out = {}
    for path in sorted(os.listdir(os.path.join(ROOT, "topologies"))):
        if not path.startswith("setquery_"):
            continue
        with open(os.path.join(ROOT, "topologies", path)) as f:
            for line in f:
                m = re.search(r'where: "([^"]*)", select: "([^"]*)", result: [^,}]*/(\w+)\.csv', line)
                if not m:
                    continue
                names = set(re.findall(r"\b[A-Z]\w*\b", m.group(1) + " " + m.group(2))) & set(page_map["column_pages"])
                pages = page_map["index_pages"] + sum(page_map["column_pages"][c] for c in names)
                out[m.group(3)] = frames * pages * 4096
    return out


def phases_text(phases):
    return ", ".join(f"{ph['name']} {ph['seconds']:.2f}" for ph in phases)


def tool_json(cmd, path):
    run(cmd)
    with open(path) as f:
        return json.load(f)


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summarize(doc, families):
    """Per family: bytes over PCIe and times of every contender, xeflow's speedups; the targets."""
    by = {}
    for r in doc["xeflow"]:
        by.setdefault(r["family"], {})[f"xeflow-{r['mode']}"] = r
    table_bytes = doc["table_bytes"]
    summary = {"families": {}, "targets": {}}
    for fam in families:
        e = {"table_bytes": table_bytes}
        x = by.get(fam, {})
        for mode in ("mapped", "dma"):
            if f"xeflow-{mode}" in x:
                e[f"xeflow_{mode}_ms"] = x[f"xeflow-{mode}"]["steady_pass_s"] * 1e3
                e[f"xeflow_{mode}_one_shot_s"] = x[f"xeflow-{mode}"]["one_shot_wall_s"]
        if "xeflow-dma" in x:
            e["xeflow_dma_bytes"] = x["xeflow-dma"]["copied_bytes"]
        for r in doc.get("ablation", []):
            if r["family"] == fam:
                e[f"ablation_{r['skip']}_bytes"] = r["copied_bytes"]
                e[f"ablation_{r['skip']}_ms"] = r["steady_pass_s"] * 1e3
        for r in doc.get("ckc", {}).get("runs", []):
            if r["family"] == fam:
                e[f"ckc_{r['layout']}_ms"] = r["median_ms"]
                e[f"ckc_{r['layout']}_bytes"] = r["copied_bytes"]
                e[f"ckc_{r['layout']}_h2d_ms"] = r["h2d_ms"]
                e[f"ckc_{r['layout']}_kernel_ms"] = r["kernel_ms"]
        for r in doc.get("cpu", {}).get("families", []):
            if r["family"] == fam:
                e[f"cpu_index_{r['index']}_ms"] = r["median_ms"]
        for r in doc.get("arrow", {}).get("families", []):
            if r["family"] == fam:
                e["arrow_ms"] = r["median_ms"]
        modes = [m for m in ("mapped", "dma") if e.get(f"xeflow_{m}_ms")]
        if modes:
            # The transfer mode a user would set on the topic for this query: the faster one measured.
            best = min(modes, key=lambda m: e[f"xeflow_{m}_ms"])
            e["xeflow_best_mode"], e["xeflow_best_ms"] = best, e[f"xeflow_{best}_ms"]
        for mode in ("mapped", "dma", "best"):
            t = e.get(f"xeflow_{mode}_ms")
            if not t:
                continue
            for other in ("ckc_columns", "ckc_table", "cpu_index_off", "cpu_index_on", "arrow"):
                if e.get(f"{other}_ms"):
                    e[f"speedup_{mode}_vs_{other}"] = e[f"{other}_ms"] / t
        # The link's floor: xeflow's dma bytes at the rate CKC's column copies reached on the same machine.
        # No pass that moves those bytes over PCIe takes less, so the speedups it allows bound xeflow's.
        if e.get("ckc_columns_bytes") and e.get("ckc_columns_h2d_ms") and e.get("xeflow_dma_bytes"):
            rate = e["ckc_columns_bytes"] / (e["ckc_columns_h2d_ms"] * 1e-3)
            e["link_bytes_per_s"] = rate
            e["link_floor_ms"] = e["xeflow_dma_bytes"] / rate * 1e3
            for other in ("ckc_columns", "cpu_index_off", "cpu_index_on"):
                if e.get(f"{other}_ms"):
                    e[f"link_bound_speedup_vs_{other}"] = e[f"{other}_ms"] / e["link_floor_ms"]
        variant_bytes = [b for v, b in doc.get("variant_column_bytes", {}).items() if v.split("_")[0] == fam]
        if variant_bytes:
            e["variant_columns_left_behind_min"] = 1 - max(variant_bytes) / table_bytes
        if e.get("ablation_columns_bytes") is not None:
            e["columns_left_behind"] = 1 - e["ablation_columns_bytes"] / table_bytes
        if e.get("ablation_columns_bytes") and e.get("ablation_blooms_bytes") is not None:
            e["index_removes_of_columns"] = 1 - e["ablation_blooms_bytes"] / e["ablation_columns_bytes"]
        summary["families"][fam] = e
    f = summary["families"]
    for mode in ("mapped", "dma", "best"):
        for other in ("ckc_columns", "ckc_table", "cpu_index_off", "cpu_index_on", "arrow"):
            g = geomean([f[x].get(f"speedup_{mode}_vs_{other}") for x in f])
            if g:
                summary["targets"][f"geomean_{mode}_vs_{other}"] = g
    for other in ("ckc_columns", "cpu_index_off"):
        g = geomean([f[x].get(f"link_bound_speedup_vs_{other}") for x in f])
        if g:
            summary["targets"][f"geomean_link_bound_vs_{other}"] = g
        measured = [x for x in f if f"speedup_best_vs_{other}" in f[x]]
        if measured:
            summary["targets"][f"families_slower_than_{other}"] = [
                x for x in measured if f[x][f"speedup_best_vs_{other}"] < 1]
    per_variant = [f[x].get("variant_columns_left_behind_min") for x in ("Q1", "Q2A", "Q2B", "Q3A", "Q3B") if x in f]
    if per_variant and None not in per_variant:
        summary["targets"]["variant_columns_left_behind_min_q1_q3b"] = min(per_variant)
    cols = [f[x].get("columns_left_behind") for x in ("Q1", "Q2A", "Q2B", "Q3A", "Q3B") if x in f]
    if cols and None not in cols:
        summary["targets"]["columns_left_behind_min_q1_q3b"] = min(cols)
    idx = [f[x].get("index_removes_of_columns") for x in ("Q3A", "Q3B") if x in f]
    if idx and None not in idx:
        summary["targets"]["index_removes_of_columns_min_q3"] = min(idx)
    return summary


def plot(out, doc, summary, families):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot)")
        return
    f = summary["families"]
    fig, axes = plt.subplots(1, 3, figsize=(17, 6.2))
    # The columns level moves what CKC columns moves (the index pages and every page of the family's
    # columns); bloom is xeflow's default, its dma run.
    series = [("whole table (skip: none)", "ckc_table_bytes"), ("columns (CKC; skip: columns)", "ckc_columns_bytes"),
              ("+ min/max (skip: zones)", "ablation_zones_bytes"), ("+ bloom (xeflow dma)", "xeflow_dma_bytes")]
    width = 0.8 / len(series)
    for k, (label, key) in enumerate(series):
        axes[0].bar([i + (k - len(series) / 2 + 0.5) * width for i in range(len(families))],
                    [(f[x].get(key) or 0) / 1e9 for x in families], width, label=label)
    axes[0].set_yscale("log")
    axes[0].set_ylabel("GB over PCIe a pass")
    axes[0].set_title("(a) bytes moved")
    times = [("xeflow dma", "xeflow_dma_ms"), ("xeflow mapped", "xeflow_mapped_ms"),
             ("CKC columns", "ckc_columns_ms"), ("CKC table", "ckc_table_ms"),
             ("CPU + index", "cpu_index_on_ms"), ("CPU", "cpu_index_off_ms"), ("Arrow Acero", "arrow_ms")]
    width = 0.8 / len(times)
    for k, (label, key) in enumerate(times):
        axes[1].bar([i + (k - len(times) / 2 + 0.5) * width for i in range(len(families))],
                    [f[x].get(key) or 0 for x in families], width, label=label)
    floors = [(i, f[x]["link_floor_ms"]) for i, x in enumerate(families) if f[x].get("link_floor_ms")]
    if floors:
        axes[1].scatter([i for i, _ in floors], [v for _, v in floors], marker="_", s=900, color="black",
                        zorder=3, label="link floor (xeflow's bytes at CKC's copy rate)")
    axes[1].set_yscale("log")
    axes[1].set_ylabel("ms a pass (table in host memory → answer)")
    axes[1].set_title("(b) time")
    others = [("CKC columns", "ckc_columns"), ("CKC table", "ckc_table"), ("CPU + index", "cpu_index_on"),
              ("CPU", "cpu_index_off"), ("Arrow Acero", "arrow")]
    width = 0.8 / len(others)
    for k, (label, key) in enumerate(others):
        axes[2].bar([i + (k - len(others) / 2 + 0.5) * width for i in range(len(families))],
                    [f[x].get(f"speedup_best_vs_{key}") or 0 for x in families], width, label=label)
    axes[2].axhline(1, color="black", linewidth=0.8)
    axes[2].set_yscale("log")
    axes[2].set_ylabel("xeflow speedup (faster transfer mode)")
    axes[2].set_title("(c) speedup over each contender")
    for ax in axes:
        ax.set_xticks(range(len(families)), families)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.07), ncol=2)
    fig.suptitle(f"Set Query, {doc['rows']} rows — {doc['device']}, {doc['date'][:10]}, {doc['commit']}",
                 fontsize=10)
    fig.tight_layout()
    path = os.path.join(out, "setquery.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build-rel")
    p.add_argument("--rows", default="10M")
    p.add_argument("--table", default="", help="an existing BENCH table instead of generating one")
    p.add_argument("--passes", type=int, default=16,
                   help="passes of the steady run: the first pass's noise (its file read) shrinks by passes - 1")
    p.add_argument("--reps", type=int, default=5, help="timed passes of the baselines")
    p.add_argument("--threads", type=int, default=16, help="CPU and Arrow threads")
    p.add_argument("--capacity", type=int, default=0,
                   help="the topic's frames in the steady runs: 0 (the table's frames) keeps the table resident; a "
                        "table larger than memory streams from the file every pass with a smaller ring")
    p.add_argument("--ckc-layouts", default="columns,table",
                   help="what CKC copies: the family's columns, the whole table, or both (a table larger than the "
                        "GPU's memory goes in chunks either way)")
    p.add_argument("--modes", default="mapped,dma")
    p.add_argument("--executor", default="device", help="xeflow's executor (host: a check without a GPU)")
    p.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                   help="an override for every xeflow run (e.g. runtime.warps_per_block=32), repeatable")
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--contenders", default=",".join(CONTENDERS))
    p.add_argument("--previous", default="",
                   help="a setquery.json of the same table whose contenders this run keeps (those it does not run)")
    p.add_argument("--commit", default="",
                   help="the tree's commit, where the checkout's git does not know it (a copied working tree)")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    families = args.families.split(",")
    contenders = args.contenders.split(",")
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
    page_map = table_page_map(info)
    doc = {"benchmark": "setquery", "device": device_name(),
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "commit": args.commit or commit(), "command": " ".join(sys.argv), "rows": args.rows, "frames": frames,
           "passes": args.passes, "reps": args.reps, "threads": args.threads, "reference_seconds": ref_seconds,
           "xeflow": [], "ablation": []}
    if args.previous:
        with open(args.previous) as f:
            before = json.load(f)
        for key in ("xeflow", "ablation", "ckc", "cpu", "arrow", "table_bytes"):
            if key in before and key not in contenders:
                doc[key] = before[key]
        doc["previous"] = {"date": before["date"], "commit": before["commit"], "command": before["command"]}
    x = Xeflow(args, frames, expected, work)
    if "xeflow" in contenders:
        for family in families:
            for mode in args.modes.split(","):
                r = x.measure(family, mode, one_shot=True)
                doc["xeflow"].append(r)
                doc["table_bytes"] = r["table_bytes"]
                print(f"xeflow {family:4} {mode:6} {r['queries']:2} queries  steady pass "
                      f"{r['steady_pass_s'] * 1e3:8.2f} ms  one shot {r['one_shot_wall_s']:6.2f} s "
                      f"({phases_text(r['one_shot_phases'])})  pages skipped "
                      f"{r['pages_skipped']}/{r['pages']}  copied {(r['copied_bytes'] or 0) / 1e9:.3f} GB",
                      flush=True)
                print(f"       {family:4} {mode:6} steady run's kernel: {kernel_text(r['steady_run'])}", flush=True)
    if "ablation" in contenders:
        for family in families:
            for skip in SKIP_LEVELS:
                # blooms is xeflow's default: its dma run above, when there is one.
                done = [r for r in doc["xeflow"] if r["family"] == family and r["mode"] == "dma"]
                r = done[0] if skip == "blooms" and done else x.measure(family, "dma", skip)
                doc["ablation"].append(r)
                doc["table_bytes"] = r["table_bytes"]
                print(f"ablation {family:4} skip {skip:7}  steady pass {r['steady_pass_s'] * 1e3:8.2f} ms  "
                      f"copied {(r['copied_bytes'] or 0) / 1e9:.3f} GB", flush=True)
    fam_args = [a for f in families for a in ("--query", f)]
    # The largest answer a projection of these families gives (its result room on the GPU).
    most_rows = max(expected_rows(expected, op) for f in families
                    for op in query_ops(os.path.join(ROOT, "topologies", f"setquery_{f.lower()}.yaml")))
    if "ckc" in contenders:
        out = os.path.join(work, "ckc")
        shutil.rmtree(out, ignore_errors=True)
        doc["ckc"] = tool_json([os.path.join(args.build, "apps/setquery/xeflow-setquery-ckc"), args.table,
                                *fam_args, "--reps", str(args.reps), "--layout", args.ckc_layouts,
                                "--max-rows", str(max(CKC_DEFAULT_MAX_ROWS, most_rows + 1)), "--out-dir", out,
                                "--json", os.path.join(work, "ckc.json")], os.path.join(work, "ckc.json"))
        for layout in args.ckc_layouts.split(","):
            same_answers(os.path.join(out, layout), expected, f"ckc {layout}")
        doc["table_bytes"] = doc["ckc"]["table_bytes"]
        for r in doc["ckc"]["runs"]:
            print(f"ckc {r['family']:4} {r['layout']:7}  {r['median_ms']:8.2f} ms (h2d {r['h2d_ms']:.2f}, kernel "
                  f"{r['kernel_ms']:.2f})  copied {r['copied_bytes'] / 1e9:.3f} GB", flush=True)
    if "cpu" in contenders:
        doc["cpu"] = tool_json([os.path.join(args.build, "apps/setquery/xeflow-setquery-cpu"), args.table,
                                *fam_args, "--threads", str(args.threads), "--index", "both",
                                "--reps", str(args.reps), "--expected", expected,
                                "--json", os.path.join(work, "cpu.json")], os.path.join(work, "cpu.json"))
        for r in doc["cpu"]["families"]:
            print(f"cpu {r['family']:4} index {r['index']:3}  {r['median_ms']:8.2f} ms", flush=True)
    if "arrow" in contenders:
        doc["arrow"] = tool_json([sys.executable, os.path.join(HERE, "setquery_arrow.py"), args.table,
                                  "--topologies", os.path.join(ROOT, "topologies"), "--families",
                                  ",".join(families), "--threads", str(args.threads), "--reps", str(args.reps),
                                  "--expected", expected, "--json", os.path.join(work, "arrow.json")],
                                 os.path.join(work, "arrow.json"))
        for r in doc["arrow"]["families"]:
            print(f"arrow {r['family']:4}  {r['median_ms']:8.2f} ms", flush=True)
    doc["variant_column_bytes"] = variant_column_bytes(page_map, frames)
    if "table_bytes" in doc:
        doc["summary"] = summarize(doc, families)
        print(json.dumps(doc["summary"]["targets"], indent=1))
    with open(os.path.join(args.out, "setquery.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print(f"wrote {os.path.join(args.out, 'setquery.json')}")
    if "summary" in doc:
        plot(args.out, doc, doc["summary"], families)


if __name__ == "__main__":
    main()
