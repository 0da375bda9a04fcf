#!/usr/bin/env python3
"""The warp partitioner's benchmarks (issue 4; the XeFlow paper's Fig. 13 and Table 2, and online re-tuning).

  fig13   two GPU operators FMA-x → FMA-y in one C(G)2C pipeline (32 warps per block): throughput of every
          explicit partition a:(32−a), the cost models' prediction, the auto partition, and the same two
          operators as concurrent CUDA kernels in two streams (xeflow-baseline --mode concurrent).
  table2  tuning time (sampling + fitting + measuring the choice) against the number of samples, FMA-x.
  online  FMA-x → FMA-y where y switches mid-stream (fma's switch_offset): throughput over time under
          auto-online and under fixed partitions; how long auto-online takes to get back to 90% of the best
          fixed partition.

  python3 bench/partition_bench.py run --build build --out bench/results/DIR [--experiments fig13,table2,online]
  python3 bench/partition_bench.py report bench/results/DIR

Each run writes OUT/partition-<tag>.json (meta: device, date, commit; every raw stats document kept) after
every point; `report` prints the tables and draws fig13.png, table2.png and online.png (matplotlib, if
installed). Standard library only; the helpers shared with the stream benchmark come from stream_bench.py.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shlex
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stream_bench as sb  # noqa: E402  (shared helpers: sizes, children, meta, JSON)

FMA_A, FMA_B = sb.FMA_A, sb.FMA_B
WARPS = 32


# ---------------------------------------------------------------------------------------------------------
# Topologies and commands
# ---------------------------------------------------------------------------------------------------------

def pair_topology(cfg: argparse.Namespace, x: int, y: int, total: int, partition: str,
                  warps: tuple[int, int] | None = None, switch: tuple[int, int] | None = None,
                  tuning: str = "") -> str:
    """source → t0 → g1 (FMA-x) → t1 → g2 (FMA-y; from frame switch[0] on FMA-switch[1]) → t2 → verify."""
    frame = cfg.frame
    cap = cfg.capacity
    w1 = f"warps: {warps[0]}, " if warps else ""
    w2 = f"warps: {warps[1]}, " if warps else ""
    g2_switch = f", switch_offset: {switch[0]}, iterations_after: {switch[1]}" if switch else ""
    runtime = f"executor: {cfg.executor}, blocks: {cfg.blocks}, warps_per_block: {WARPS}, partition: {partition}"
    if tuning:
        runtime += f", tuning: {tuning}"
    return f"""name: fma{x}_fma{y}
topics:
  t0: {{frame_size: {frame}, capacity: {cap}}}
  t1: {{frame_size: {frame}, capacity: {cap}}}
  t2: {{frame_size: {frame}, capacity: {cap}}}
operators:
  source: {{class: dataset_source, threads: {cfg.source_threads}, outputs: [t0], params: {{total_bytes: {total}, dataset_frames: 64}}}}
  g1: {{class: fma, on: gpu, {w1}inputs: [t0], outputs: [t1], params: {{iterations: {x}, a: {FMA_A}, b: {FMA_B}}}}}
  g2: {{class: fma, on: gpu, {w2}inputs: [t1], outputs: [t2], params: {{iterations: {y}, a: {FMA_A}, b: {FMA_B}{g2_switch}}}}}
  verify: {{class: verify_sink, threads: {cfg.verify_threads}, inputs: [t2], params: {{mode: checksum}}}}
runtime: {{{runtime}}}
"""


def write_topology(cfg: argparse.Namespace, name: str, text: str) -> str:
    path = os.path.join(cfg.topology_dir, name + ".yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def tool(cfg: argparse.Namespace, *parts: str) -> str:
    return os.path.join(cfg.build, *parts)


def run_xeflow(cfg: argparse.Namespace, topology: str, timeline_ms: int = 0) -> dict:
    """xeflow-run on a topology: its stats and the numbers the benchmark reads."""
    cmd = [tool(cfg, "tools", "xeflow-run"), topology, "--stats", "json", "-q"]
    if timeline_ms:
        cmd += ["--timeline-ms", str(timeline_ms)]
    child = sb.run_child(cmd, cfg.timeout)
    stats = sb.parse_json_output(child.stdout)
    nums = sb.xeflow_numbers(stats)
    ok = child.returncode == 0 and nums.get("status") == "completed" and not child.timed_out
    return {"command": shlex.join(cmd), "status": "ok" if ok else "failed", "seconds": child.seconds,
            "stderr_tail": sb.tail(child.stderr), "gbps": nums.get("gbps_stream"), "stats": stats}


def run_steady(cfg: argparse.Namespace, topology: str, after=lambda stats: 0.0) -> dict:
    """run_xeflow `cfg.repeats` times with a 10 ms timeline; the run of median steady rate (past the ramp,
    and past `after(stats)` seconds) with every run's rate beside it: one run of a link-bound point spreads
    by up to 20% on the H100, more than the partitions differ."""
    runs = []
    for _ in range(max(1, cfg.repeats)):
        run = run_xeflow(cfg, topology, timeline_ms=10)
        run["steady_gbps"] = steady_rate(run["stats"], after(run["stats"]))
        runs.append(run)
    rated = sorted((r for r in runs if r["steady_gbps"] is not None), key=lambda r: r["steady_gbps"])
    chosen = dict(rated[(len(rated) - 1) // 2] if rated else runs[0])
    chosen["repeat_steady_gbps"] = [r["steady_gbps"] for r in runs]
    chosen["repeat_status"] = [r["status"] for r in runs]
    if any(r["status"] != "ok" for r in runs):
        chosen["status"] = "failed"
    return chosen


def run_tune(cfg: argparse.Namespace, topology: str, samples: int) -> dict:
    cmd = [tool(cfg, "tools", "xeflow-tune"), topology, "--samples", str(samples), "--stats", "json"]
    child = sb.run_child(cmd, cfg.timeout)
    stats = sb.parse_json_output(child.stdout)
    return {"command": shlex.join(cmd), "status": "ok" if child.returncode == 0 and stats else "failed",
            "seconds": child.seconds, "stderr_tail": sb.tail(child.stderr), "stats": stats}


def run_concurrent_kernels(cfg: argparse.Namespace, x: int, y: int, total: int) -> dict:
    cmd = [tool(cfg, "apps", "baselines", "xeflow-baseline"), "--mode", "concurrent", "--shape", "g",
           "--stages", "2", "--op", "fma", "--fma-iterations", f"{x},{y}", "--a", str(FMA_A), "--b",
           str(FMA_B), "--batch-bytes", str(sb.parse_size(cfg.frame)), "--total-bytes", str(total),
           "--dataset-frames", "64", "--verify-threads", str(cfg.verify_threads), "--json"]
    child = sb.run_child(cmd, cfg.timeout)
    doc = sb.parse_json_output(child.stdout)
    ok = child.returncode == 0 and doc is not None
    return {"command": shlex.join(cmd), "status": "ok" if ok else "failed", "seconds": child.seconds,
            "stderr_tail": sb.tail(child.stderr), "gbps": doc.get("gbps") if doc else None, "raw": doc}


# ---------------------------------------------------------------------------------------------------------
# What a run's stats say about the partition
# ---------------------------------------------------------------------------------------------------------

def tuning_of(stats: dict | None) -> dict | None:
    """The run's first tuning record (partition auto), or None."""
    tunings = ((stats or {}).get("partition") or {}).get("tunings") or []
    return tunings[0] if tunings else None


def predicted_round_us(fits: list[dict], warps: list[int], mhz: float) -> float | None:
    """max_i f_i(N_i) in µs from the stats' fits (θ in cycles), None where a model is unknown."""
    worst = 0.0
    for fit, n in zip(fits, warps):
        theta = fit.get("theta")
        if not theta:
            return None
        worst = max(worst, (theta[0] * n * n + theta[1] * n + theta[2]) / mhz)
    return worst


def timeline_rate(stats: dict, start_s: float, end_s: float) -> float | None:
    """GB/s the sink received between two times of the run (its timeline), or None."""
    samples = ((stats or {}).get("timeline") or {}).get("samples") or []
    inside = [s for s in samples if start_s <= s[0] <= end_s]
    if len(inside) < 2:
        return None
    (t0, _, b0), (t1, _, b1) = inside[0], inside[-1]
    return (b1 - b0) / (t1 - t0) / 1e9 if t1 > t0 else None


def steady_rate(stats: dict | None, after_s: float = 0.0) -> float | None:
    """GB/s the sink received in the run's steady part: from the second timeline sample after `after_s`
    that has seen bytes (the first interval still ramps up) to the last sample (before the drain)."""
    samples = ((stats or {}).get("timeline") or {}).get("samples") or []
    flowing = [s for s in samples if s[0] >= after_s and s[2] > 0]
    if len(flowing) < 3:
        return None
    (t0, _, b0), (t1, _, b1) = flowing[1], flowing[-1]
    return (b1 - b0) / (t1 - t0) / 1e9 if t1 > t0 else None


def tuned_after_s(stats: dict | None) -> float:
    """When the run's first tuning ended (s since the run began, the timeline's clock); 0 without one."""
    t = tuning_of(stats)
    return (t.get("end_ms") or 0.0) / 1e3 if t else 0.0


def rolling_rates(stats: dict, window_s: float) -> list[tuple[float, float]]:
    """(time, GB/s over the preceding window) for each timeline sample."""
    samples = ((stats or {}).get("timeline") or {}).get("samples") or []
    out = []
    j = 0
    for i, (t, _, b) in enumerate(samples):
        while samples[j][0] < t - window_s:
            j += 1
        if i > j:
            out.append((t, (b - samples[j][2]) / (t - samples[j][0]) / 1e9))
    return out


def crossing_time(stats: dict, fraction: float) -> float | None:
    """When the sink had received `fraction` of the run's bytes (from the timeline)."""
    samples = ((stats or {}).get("timeline") or {}).get("samples") or []
    if not samples:
        return None
    total = samples[-1][2]
    for t, _, b in samples:
        if b >= fraction * total:
            return t
    return None


# ---------------------------------------------------------------------------------------------------------
# The experiments
# ---------------------------------------------------------------------------------------------------------

def experiment_fig13(cfg: argparse.Namespace, doc: dict, save) -> None:
    """Every pair at every block count of --fig13-blocks (default: --blocks): one entry each."""
    counts = sb.parse_list(cfg.fig13_blocks, int) if cfg.fig13_blocks else [cfg.blocks]
    for blocks in counts:
        fig13_at(argparse.Namespace(**{**vars(cfg), "blocks": blocks}), doc, save)


def fig13_at(cfg: argparse.Namespace, doc: dict, save) -> None:
    total = sb.parse_size(cfg.bytes)
    print(f"  ({cfg.blocks or 'default'} blocks)", flush=True)
    for pair in sb.parse_list(cfg.pairs):
        x, y = (int(v) for v in pair.split(":"))
        entry = {"x": x, "y": y, "bytes": total, "blocks": cfg.blocks, "frame": cfg.frame, "partitions": []}
        doc["fig13"].append(entry)
        # Every run samples the sink every 10 ms: its steady rate (past the ramp, and for auto past the
        # tuning) is what the partitions are compared by; the stream window's rate is kept beside it.
        auto = run_steady(cfg, write_topology(cfg, f"fig13_b{cfg.blocks}_{x}_{y}_auto",
                                              pair_topology(cfg, x, y, total, "auto")), after=tuned_after_s)
        entry["auto"] = auto
        save()
        firsts = list(range(4, WARPS - 3, cfg.step))
        choice = (tuning_of(auto["stats"]) or {}).get("result")
        if choice and choice[0] not in firsts:
            firsts = sorted(firsts + [choice[0]])  # the choice measured like every other partition
        for a in firsts:
            run = run_steady(cfg, write_topology(cfg, f"fig13_b{cfg.blocks}_{x}_{y}_{a}",
                                                 pair_topology(cfg, x, y, total, "explicit", (a, WARPS - a))))
            run["warps"] = [a, WARPS - a]
            entry["partitions"].append(run)
            print(f"  fma{x}:fma{y}  {a:2d}:{WARPS - a:<2d}  {sb.fmt_num(run['steady_gbps'], 2, 7)} GB/s steady "
                  f"({sb.fmt_num(run['gbps'], 2)} stream)  {run['status']}", flush=True)
            save()
        if cfg.baseline:
            entry["concurrent_kernels"] = run_concurrent_kernels(cfg, x, y, total)
            save()
        t = tuning_of(auto["stats"])
        print(f"  fma{x}:fma{y}  auto {t and t.get('result')}  {sb.fmt_num(auto['steady_gbps'], 2, 7)} GB/s "
              f"after tuning ({sb.fmt_num(auto['gbps'], 2)} stream, tuning included)  "
              f"concurrent kernels {sb.fmt_num((entry.get('concurrent_kernels') or {}).get('gbps'), 2)}",
              flush=True)


def experiment_table2(cfg: argparse.Namespace, doc: dict, save) -> None:
    total = sb.parse_size(cfg.bytes)
    for x in sb.parse_list(cfg.table2_fma, int):
        topology = write_topology(cfg, f"table2_{x}", pair_topology(cfg, x, x, total, "auto"))
        for samples in sb.parse_list(cfg.table2_samples, int):
            run = run_tune(cfg, topology, samples)
            t = tuning_of(run["stats"])
            run.update({"x": x, "samples": samples})
            if t:
                run["tuning_ms"] = t["end_ms"] - t["start_ms"]
                run["fit_us"] = t["fit_us"]
                run["sample_items"] = t["sample_items"]
                run["windows"] = len(t["windows"])
            doc["table2"].append(run)
            print(f"  FMA{x:<3d} {samples:6d} samples: {sb.fmt_num(run.get('tuning_ms'), 1, 7)} ms "
                  f"(fit {sb.fmt_num(run.get('fit_us'), 0)} us)  {run['status']}", flush=True)
            save()


def experiment_online(cfg: argparse.Namespace, doc: dict, save) -> None:
    total = sb.parse_size(cfg.online_bytes)
    frames = total // sb.parse_size(cfg.frame)
    x, y0, y1 = (int(v) for v in cfg.online.split(":"))
    switch = (frames // 2, y1)
    entry = {"x": x, "y_before": y0, "y_after": y1, "switch_offset": frames // 2, "bytes": total, "fixed": []}
    doc["online"] = entry
    tuning = f"{{retune_spread_percent: {cfg.retune_percent}, retune_hold_ms: {cfg.retune_hold_ms}}}"
    entry["auto_online"] = run_xeflow(
        cfg, write_topology(cfg, "online_auto", pair_topology(cfg, x, y0, total, "auto-online", None, switch,
                                                              tuning)), timeline_ms=10)
    save()
    for a in range(4, WARPS - 3, cfg.step):
        run = run_xeflow(cfg, write_topology(cfg, f"online_{a}", pair_topology(cfg, x, y0, total, "explicit",
                                                                             (a, WARPS - a), switch)),
                         timeline_ms=10)
        run["warps"] = [a, WARPS - a]
        entry["fixed"].append(run)
        print(f"  online fixed {a:2d}:{WARPS - a:<2d} {sb.fmt_num(run['gbps'], 2, 7)} GB/s  {run['status']}",
              flush=True)
        save()


# ---------------------------------------------------------------------------------------------------------
# run / report
# ---------------------------------------------------------------------------------------------------------

def cmd_run(args: argparse.Namespace) -> int:
    os.makedirs(args.out, exist_ok=True)
    args.topology_dir = tempfile.mkdtemp(prefix="partition_bench-")
    tag = args.tag or sb.utc_now().replace(":", "").replace("-", "")
    path = os.path.join(args.out, f"partition-{tag}.json")
    doc = {"meta": sb.run_meta(args),
           "fig13": [], "table2": [], "online": None}

    def save() -> None:
        sb.write_json_atomic(path, doc)

    save()
    for name in sb.parse_list(args.experiments):
        print(f"# {name}", flush=True)
        {"fig13": experiment_fig13, "table2": experiment_table2, "online": experiment_online}[name](args, doc, save)
    print(f"wrote {path}")
    return 0


def load(directory: str) -> list[dict]:
    docs = []
    for path in sorted(glob.glob(os.path.join(directory, "**", "partition-*.json"), recursive=True)):
        with open(path, encoding="utf-8") as f:
            docs.append(json.load(f))
    return docs


def fig13_rows(entry: dict) -> tuple[list[dict], dict]:
    """Per explicit partition: measured GB/s and the models' prediction, scaled so that the prediction at
    the auto run's choice equals what that choice measured (the models predict round times, not GB/s)."""
    auto = entry.get("auto") or {}
    t = tuning_of(auto.get("stats")) or {}
    mhz = ((auto.get("stats") or {}).get("partition") or {}).get("sm_clock_mhz") or 1.0
    choice = t.get("result")
    # The steady rate where the run has a timeline (runs recorded without one: the stream window's).
    rows = [{"warps": p["warps"], "gbps": steady_rate(p.get("stats")) or p.get("gbps"),
             "stream_gbps": p.get("gbps"), "status": p.get("status")} for p in entry["partitions"]]
    measured_at_choice = next((r["gbps"] for r in rows if choice and r["warps"] == choice), None)
    auto_steady = steady_rate(auto.get("stats"), tuned_after_s(auto.get("stats")))
    summary = {"choice": choice, "auto_gbps": auto_steady or auto.get("gbps"),
               "auto_stream_gbps": auto.get("gbps"), "measured_at_choice": measured_at_choice,
               "tuning_ms": (t["end_ms"] - t["start_ms"]) if t else None}
    for fits_key, name in (("coarse_fits", "predicted_coarse"), ("fits", "predicted_local")):
        fits = t.get(fits_key) or []
        ref = predicted_round_us(fits, choice, mhz) if fits and choice else None
        for r in rows:
            pr = predicted_round_us(fits, r["warps"], mhz) if fits else None
            r[name] = (measured_at_choice * ref / pr) if (pr and ref and measured_at_choice) else None
    ok = [r for r in rows if r["gbps"]]
    if ok:
        best = max(ok, key=lambda r: r["gbps"])
        worst = min(ok, key=lambda r: r["gbps"])
        summary.update({"best": best["warps"], "best_gbps": best["gbps"], "worst": worst["warps"],
                        "worst_gbps": worst["gbps"]})
    summary["concurrent_gbps"] = (entry.get("concurrent_kernels") or {}).get("gbps")
    return rows, summary


def shape_of(entry: dict) -> str:
    """The kernel's shape and frame size of a fig13 entry, for titles."""
    blocks = entry.get("blocks") or 0
    return f"{blocks if blocks else 'default'} blocks x {WARPS} warps, {entry.get('frame') or '?'} frames"


def cmd_report(args: argparse.Namespace) -> int:
    docs = load(args.results)
    if not docs:
        print(f"no partition-*.json under {args.results}", file=sys.stderr)
        return 2
    fig13, table2, online = [], [], []
    for d in docs:
        config = (d.get("meta") or {}).get("config") or {}
        for entry in d.get("fig13") or []:
            entry.setdefault("blocks", config.get("blocks", 0))
            entry.setdefault("frame", config.get("frame"))
            fig13.append(entry)
        table2 += d.get("table2") or []
        if d.get("online"):
            online.append(d["online"])
    meta = docs[0]["meta"]
    print(f"device {meta.get('device')}, {meta.get('date')}, commit {str(meta.get('commit'))[:10]}")
    summaries = []
    for entry in fig13:
        rows, s = fig13_rows(entry)
        summaries.append((entry, rows, s))
        print(f"\nFMA{entry['x']} -> FMA{entry['y']}, {shape_of(entry)} (steady GB/s; predicted: the models "
              "scaled at the choice)")
        print(f"  {'partition':<10} {'measured':>9} {'pred coarse':>12} {'pred local':>11}")
        for r in rows:
            print(f"  {r['warps'][0]:>2}:{r['warps'][1]:<7} {sb.fmt_num(r['gbps'], 2, 9)} "
                  f"{sb.fmt_num(r.get('predicted_coarse'), 2, 12)} {sb.fmt_num(r.get('predicted_local'), 2, 11)}")
        within = (s["auto_gbps"] / s["best_gbps"]) if s.get("auto_gbps") and s.get("best_gbps") else None
        print(f"  auto chose {s['choice']} in {sb.fmt_num(s.get('tuning_ms'), 1)} ms and streamed "
              f"{sb.fmt_num(s['auto_gbps'], 2)} GB/s after tuning ({sb.fmt_num(s.get('auto_stream_gbps'), 2)} "
              f"over the whole stream); "
              f"the chosen partition run explicitly {sb.fmt_num(s['measured_at_choice'], 2)}; best {s.get('best')} "
              f"{sb.fmt_num(s.get('best_gbps'), 2)}, worst {s.get('worst')} {sb.fmt_num(s.get('worst_gbps'), 2)}; "
              f"concurrent kernels {sb.fmt_num(s['concurrent_gbps'], 2)}")
        if s.get("measured_at_choice") and s.get("best_gbps"):
            print(f"  choice / best {s['measured_at_choice'] / s['best_gbps']:.3f}, best / worst "
                  f"{s['best_gbps'] / s['worst_gbps']:.2f}x, choice / concurrent kernels "
                  f"{sb.fmt_num(s['measured_at_choice'] / s['concurrent_gbps'] if s['concurrent_gbps'] else None, 2)}x"
                  + (f", auto run / best {within:.3f}" if within else ""))
    if table2:
        xs = sorted({r["x"] for r in table2})
        counts = sorted({r["samples"] for r in table2})
        print("\nTuning time (ms: sampling, fitting, measuring the choice) by samples and FMA-x:")
        print("  samples " + "".join(f"{'FMA' + str(x):>9}" for x in xs))
        for n in counts:
            cells = []
            for x in xs:
                r = next((r for r in table2 if r["x"] == x and r["samples"] == n), None)
                cells.append(sb.fmt_num(r.get("tuning_ms") if r else None, 1, 9))
            print(f"  {n:7d} " + "".join(cells))
    for entry in online:
        print_online(entry)
    if not args.no_plots:
        plot(args.results, summaries, table2, online, meta)
    return 0


def online_summary(entry: dict) -> dict:
    """Throughput before and after the switch (fixed partitions and auto-online) and auto-online's recovery."""
    out = {"fixed": []}
    for run in entry.get("fixed") or []:
        stats = run.get("stats")
        change = crossing_time(stats, 0.5)
        end = crossing_time(stats, 0.98)
        begin = crossing_time(stats, 0.05)
        if not (stats and change and end and begin):
            continue
        out["fixed"].append({"warps": run["warps"], "before": timeline_rate(stats, begin, change),
                             "after": timeline_rate(stats, change, end), "gbps": run.get("gbps")})
    auto = (entry.get("auto_online") or {}).get("stats")
    if auto:
        change = crossing_time(auto, 0.5)
        out["auto_before"] = timeline_rate(auto, crossing_time(auto, 0.05) or 0, change or 0)
        out["auto_after"] = timeline_rate(auto, change or 0, crossing_time(auto, 0.98) or 0)
        out["auto_gbps"] = entry["auto_online"].get("gbps")
        out["change_s"] = change
        best_after = max((f["after"] for f in out["fixed"] if f["after"]), default=None)
        out["best_fixed_after"] = best_after
        if best_after and change:
            recovered = next((t for t, r in rolling_rates(auto, 0.05) if t > change and r >= 0.9 * best_after), None)
            out["recovery_ms"] = (recovered - change) * 1e3 if recovered else None
        out["tunings"] = [(t.get("reason"), t.get("start_ms"), t.get("end_ms"), t.get("result"))
                          for t in ((auto.get("partition") or {}).get("tunings") or [])]
    return out


def print_online(entry: dict) -> None:
    s = online_summary(entry)
    print(f"\nOnline: FMA{entry['x']} -> FMA{entry['y_before']}, switching to FMA{entry['y_after']} at frame "
          f"{entry['switch_offset']} (GB/s before / after the switch)")
    for f in s["fixed"]:
        print(f"  fixed {f['warps'][0]:>2}:{f['warps'][1]:<3} {sb.fmt_num(f['before'], 2, 7)} / "
              f"{sb.fmt_num(f['after'], 2, 7)}")
    print(f"  auto-online {sb.fmt_num(s.get('auto_before'), 2, 7)} / {sb.fmt_num(s.get('auto_after'), 2, 7)}; "
          f"back to 90% of the best fixed partition after the switch ({sb.fmt_num(s.get('best_fixed_after'), 2)}) "
          f"in {sb.fmt_num(s.get('recovery_ms'), 0)} ms")
    for reason, start, end, result in s.get("tunings") or []:
        print(f"    tuning at {sb.fmt_num(start, 0)} ms ({reason}) -> {result} at {sb.fmt_num(end, 0)} ms")


def plot(directory: str, summaries, table2, online, meta) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plots)")
        return
    stamp = f"{meta.get('device')}, {str(meta.get('date'))[:10]}, {str(meta.get('commit'))[:8]}"
    if summaries:
        fig, axes = plt.subplots(1, len(summaries), figsize=(5 * len(summaries), 4), squeeze=False)
        for ax, (entry, rows, s) in zip(axes[0], summaries):
            xs = [r["warps"][0] for r in rows]
            ax.plot(xs, [r["gbps"] for r in rows], "o-", label="measured")
            ax.plot(xs, [r.get("predicted_coarse") for r in rows], "--", label="model (coarse)")
            ax.plot(xs, [r.get("predicted_local") for r in rows], ":", label="model (local)")
            if s.get("choice") and s.get("measured_at_choice"):
                ax.plot([s["choice"][0]], [s["measured_at_choice"]], "r*", ms=14, label="auto's choice")
            if s.get("concurrent_gbps"):
                ax.axhline(s["concurrent_gbps"], color="gray", ls="-.", label="concurrent kernels")
            ax.set_title(f"FMA{entry['x']} : FMA{entry['y']}, {shape_of(entry)}", fontsize=10)
            ax.set_xlabel("warps of the first operator (of 32)")
            ax.set_ylabel("GB/s")
            ax.grid(alpha=0.3)
        axes[0][0].legend(fontsize=8)
        fig.suptitle(f"Warp partition of two GPU operators ({stamp})")
        fig.tight_layout()
        fig.savefig(os.path.join(directory, "fig13.png"), dpi=120)
    if table2:
        fig, ax = plt.subplots(figsize=(6, 4))
        for x in sorted({r["x"] for r in table2}):
            rs = sorted((r for r in table2 if r["x"] == x and r.get("tuning_ms")), key=lambda r: r["samples"])
            ax.plot([r["samples"] for r in rs], [r["tuning_ms"] for r in rs], "o-", label=f"FMA{x}")
        ax.axhline(100, color="gray", ls="--", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("samples (work items measured)")
        ax.set_ylabel("tuning time, ms")
        ax.legend(fontsize=8)
        ax.set_title(f"Tuning time ({stamp})", fontsize=9)
        fig.tight_layout()
        fig.savefig(os.path.join(directory, "table2.png"), dpi=120)
    for entry in online:
        fig, ax = plt.subplots(figsize=(8, 4))
        for run in entry.get("fixed") or []:
            pts = rolling_rates(run.get("stats"), 0.05)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], lw=0.7, alpha=0.5,
                    label=f"fixed {run['warps'][0]}:{run['warps'][1]}")
        pts = rolling_rates((entry.get("auto_online") or {}).get("stats"), 0.05)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "k", lw=2, label="auto-online")
        ax.set_xlabel("seconds")
        ax.set_ylabel("GB/s (50 ms window)")
        ax.legend(fontsize=6, ncol=2)
        ax.set_title(f"Online re-tuning: FMA{entry['y_before']} -> FMA{entry['y_after']} mid-stream ({stamp})",
                     fontsize=9)
        fig.tight_layout()
        fig.savefig(os.path.join(directory, "online.png"), dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the experiments")
    r.add_argument("--build", default="build")
    r.add_argument("--out", default="bench/results")
    r.add_argument("--tag", default="")
    r.add_argument("--commit", default="")
    r.add_argument("--experiments", default="fig13,table2,online")
    r.add_argument("--pairs", default="4:64,64:4,16:64,16:1024",
                   help="fig13: FMA-x:FMA-y pairs. On an H100 the paper's x, y in 4..64 are bound by PCIe and the "
                        "rounds' polls at any block count; 16:1024 is compute-bound with --blocks 8 (a 33rd "
                        "of the GPU: ~4 GB/s), where the partition decides")
    r.add_argument("--repeats", type=int, default=3,
                   help="fig13: runs per partition and of auto; the median steady rate is compared")
    r.add_argument("--step", type=int, default=2, help="warps between two explicit partitions")
    r.add_argument("--frame", default="64KiB")
    r.add_argument("--capacity", type=int, default=1024)
    r.add_argument("--blocks", type=int, default=0, help="kernel blocks (0: the plan's default)")
    r.add_argument("--fig13-blocks", default="",
                   help="fig13 only: every pair at each of these block counts, e.g. 0,8 (default: --blocks)")
    r.add_argument("--bytes", default="4GiB", help="streamed per fig13/table2 run")
    r.add_argument("--online-bytes", default="16GiB")
    r.add_argument("--online", default="16:4:64", help="x:y_before:y_after")
    r.add_argument("--retune-percent", type=int, default=25)
    r.add_argument("--retune-hold-ms", type=int, default=100)
    r.add_argument("--table2-fma", default="4,8,16,32,64")
    r.add_argument("--table2-samples", default="800,1600,3200,6400,12800")
    r.add_argument("--source-threads", type=int, default=4)
    r.add_argument("--verify-threads", type=int, default=12)
    r.add_argument("--baseline", action=argparse.BooleanOptionalAction, default=True,
                   help="run the concurrent-kernels baseline")
    r.add_argument("--timeout", type=float, default=120)
    r.add_argument("--executor", default="device", choices=["device", "host"],
                   help="host: a smoke test of the script on a machine without a GPU (no partition data)")
    r.set_defaults(func=cmd_run)
    p = sub.add_parser("report", help="tables and plots from a results folder")
    p.add_argument("results")
    p.add_argument("--no-plots", action="store_true")
    p.set_defaults(func=cmd_report)
    args = parser.parse_args()
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
