#!/usr/bin/env python3
"""Data encoding on the stream (the XeFlow paper's §6.3, Figs. 14a-d): RAID-6 P+Q and AES-128 as GPU
operators in a CPU -> GPU -> CPU stream, throughput and per-frame latency against frame size, against every
way of doing it today, every result verified.

Per operator (raid6 with k = 4, 8, 16: P and Q of a stripe of k blocks, the output 2/k of the input; aes-ecb
and aes-ctr: AES-128 encryption, the output the input's size) and frame size (4 KiB .. 4 MiB):

  xeflow      tools/xeflow-run on a generated topology: dataset_source (P pre-filled frames published in
              place) -> raid6_encode / aes128_encrypt on the GPU -> verify_sink in checksum mode.
  ckc-pinned, ckc-hq4, koum, graph8
              apps/baselines/xeflow-baseline --op raid6|aes-ecb|aes-ctr: the same operator code in the
              conventional pipelines, the same P-frame dataset, the same checksum verification.
  cpu-1, cpu-16
              apps/encoding/xeflow-encoding-cpu: ISA-L's pq_gen / OpenSSL's EVP on 1 and 16 threads over
              host buffers of the same frames (no transfer at all: what a user without a GPU runs), from a
              dataset of --cpu-dataset bytes, larger than the host's caches.
  latency     xeflow with --latency-capacity frames in flight (2 by default; 1: no frame queues behind
              another) and one source and one sink thread (unloaded), beside the baselines' per-batch
              latency (CKC pinned has one batch in flight by definition).

GB/s counts input bytes (the data encoded) for every contender. The link ceilings (bench/link_ceiling) are
measured in the same run: for AES the stream crosses PCIe both ways in full (zero-copy read+write, copy
engines both ways); for RAID-6 the input crosses one way and 2/k of it comes back, so the input direction
alone (zero-copy read, copy H2D) bounds it.

Writes OUT/encoding.json after every point (stamped with device, date, commit and command line), then prints
the tables and the issue's targets and writes OUT/encoding.png:

  python3 bench/encoding_bench.py --build build-rel --out OUT
  python3 bench/encoding_bench.py --report OUT     # tables, targets and plot of an earlier run
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stream_bench as sb  # noqa: E402  (shared helpers: sizes, children, meta, JSON, ceilings)

KiB, MiB, GiB = sb.KiB, sb.MiB, sb.GiB

OPS = ["raid6-k4", "raid6-k8", "raid6-k16", "aes-ecb", "aes-ctr"]
DEFAULT_SIZES = "4KiB,16KiB,64KiB,256KiB,1MiB,4MiB"
#: The FIPS-197 example key (appendix C.1); xeflow-baseline and xeflow-encoding-cpu use it too.
AES_KEY = "000102030405060708090a0b0c0d0e0f"

XEFLOW = "xeflow"
#: GPU baselines: name -> (xeflow-baseline --mode, --streams or None).
GPU_BASELINES = {"ckc-pinned": ("ckc-pinned", None), "ckc-hq4": ("ckc-hq", 4), "koum": ("koum", None),
                 "graph8": ("graph", 8)}
#: CPU libraries: name -> threads.
CPU_CONTENDERS = {"cpu-1": 1, "cpu-16": 16}
CONTENDERS = [XEFLOW] + list(GPU_BASELINES) + list(CPU_CONTENDERS)
LABELS = {XEFLOW: "XeFlow", "ckc-pinned": "CKC", "ckc-hq4": "CKC+HQ4", "koum": "KoUM", "graph8": "Graphs x8",
          "cpu-1": "CPU lib x1", "cpu-16": "CPU lib x16"}

#: Expected GB/s, only to size each run to about --seconds (never reported): xeflow near the link, the
#: baselines from the stream sweep's C(G)1C scale table, the libraries per thread.
EXPECTED_XEFLOW_GBPS = 25.0
EXPECTED_CPU_GBPS_PER_THREAD = {"raid6": 6.0, "aes": 3.0}
#: Each run streams at least this many frames (the rate of fewer is noise).
MIN_FRAMES = 2048


def op_family(op: str) -> str:
    return "raid6" if op.startswith("raid6") else "aes"


def raid6_k(op: str) -> int:
    return int(op.split("-k")[1])


def output_bytes(op: str, frame: int) -> int:
    return 2 * frame // raid6_k(op) if op_family(op) == "raid6" else frame


def point_key(kind: str, contender: str, op: str, size: int) -> str:
    return f"{kind}|{contender}|{op}|{size}"


def expected_gbps(contender: str, op: str, size: int) -> float:
    if contender == XEFLOW:
        return EXPECTED_XEFLOW_GBPS
    if contender in CPU_CONTENDERS:
        return EXPECTED_CPU_GBPS_PER_THREAD[op_family(op)] * CPU_CONTENDERS[contender]
    table = sb.EXPECTED_GBPS[contender]
    sizes = sorted(table)
    s = min(max(size, sizes[0]), sizes[-1])
    lo = max(x for x in sizes if x <= s)
    return table[lo]


def run_bytes(args: argparse.Namespace, contender: str, op: str, size: int) -> int:
    """Bytes of one run: about args.seconds at the expected rate, at least MIN_FRAMES frames, at most
    args.max_bytes, a whole number of frames."""
    want = expected_gbps(contender, op, size) * 1e9 * args.seconds
    b = int(min(max(want, MIN_FRAMES * size), args.max_bytes))
    return max(size, b - b % size)


# ---------------------------------------------------------------------------------------------------------
# xeflow: generated topologies
# ---------------------------------------------------------------------------------------------------------


def capacity_for(args: argparse.Namespace, size: int, latency: bool) -> int:
    if latency:
        return args.latency_capacity
    return max(args.min_capacity, min(4096, args.inflight // size))


def dataset_frames_for(args: argparse.Namespace, size: int, latency: bool = False) -> int:
    capacity = capacity_for(args, size, latency)
    p = args.dataset_frames
    return p if capacity % p == 0 else math.gcd(p, capacity)


def operator_yaml(op: str, size: int) -> str:
    if op_family(op) == "raid6":
        k = raid6_k(op)
        return f"class: raid6_encode, params: {{k: {k}, block_size: {size // k}, output: parity}}"
    mode = op.split("-")[1]
    return f"class: aes128_encrypt, params: {{mode: {mode}, key: {AES_KEY}}}"


def topology_yaml(args: argparse.Namespace, op: str, size: int, total: int, latency: bool) -> str:
    capacity = capacity_for(args, size, latency)
    p = dataset_frames_for(args, size, latency)
    source_threads = 1 if latency else args.source_threads
    verify_threads = 1 if latency else args.verify_threads
    name = f"encoding_{op.replace('-', '_')}_{sb.format_size(size)}" + ("_unloaded" if latency else "")
    return "\n".join([
        f"# Generated by bench/encoding_bench.py: {op}, frame {sb.format_size(size)}, capacity {capacity}, P {p}.",
        f"name: {name}",
        "topics:",
        f"  data: {{frame_size: {size}, capacity: {capacity}, element: u8}}",
        # Topic frames are whole pages; RAID-6's P and Q of a small stripe fill part of one.
        f"  encoded: {{frame_size: {-(-output_bytes(op, size) // 4096) * 4096}, capacity: {capacity}, "
        "element: u8}",
        "operators:",
        f"  source: {{class: dataset_source, on: cpu, threads: {source_threads}, outputs: [data], "
        f"params: {{total_bytes: {total}, seed: {sb.SEED}, dataset_frames: {p}}}}}",
        f"  encode: {{{operator_yaml(op, size)}, on: gpu, inputs: [data], outputs: [encoded]}}",
        f"  verify: {{class: verify_sink, on: cpu, threads: {verify_threads}, inputs: [encoded], "
        "params: {mode: checksum}}",
        f"runtime: {{executor: {args.executor}, warps_per_block: {args.warps_per_block}}}",
    ]) + "\n"


def xeflow_record(args: argparse.Namespace, op: str, size: int, latency: bool) -> dict:
    kind = "latency" if latency else "main"
    total = args.latency_bytes if latency else run_bytes(args, XEFLOW, op, size)
    total -= total % size
    text = topology_yaml(args, op, size, total, latency)
    directory = os.path.join(args.out, "topologies")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{op}_{sb.format_size(size)}{'_unloaded' if latency else ''}.yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    runs = []
    record = {"key": point_key(kind, XEFLOW, op, size), "kind": kind, "contender": XEFLOW, "op": op,
              "frame_bytes": size, "topology_yaml": text, "requested_bytes": total, "started": sb.utc_now()}
    for _ in range(1 if latency else args.repeats):
        overrides = [a for setting in args.set for a in ("--set", setting)]
        child = sb.run_child([os.path.join(args.build, "tools", "xeflow-run"), path, "--stats", "json", "-q",
                              *overrides], args.timeout)
        stats = sb.parse_json_output(child.stdout) or {}
        source = next((o for o in stats.get("operators") or [] if o.get("name") == "source"), {})
        sink = next((o for o in stats.get("operators") or [] if o.get("name") == "verify"), {})
        stream = stats.get("stream_seconds")
        ok = child.returncode == 0 and stats.get("status") == "completed"
        run = {"command": " ".join(child.command), "returncode": child.returncode, "status": stats.get("status"),
               "error": stats.get("error") or (sb.tail(child.stderr, 4) if not ok else None),
               "input_bytes": source.get("bytes_out"), "output_bytes": sink.get("bytes_in"),
               "stream_seconds": stream, "wall_seconds": stats.get("wall_seconds"),
               "gbps": source.get("bytes_out") / stream / 1e9 if ok and stream and source.get("bytes_out") else None,
               "latency_p50_us": sink.get("latency_p50_us"), "latency_p99_us": sink.get("latency_p99_us"),
               "verify_counters": sink.get("counters"), "kernel": stats.get("kernel"),
               "transfer": "dma" if any("copy_engines" in t for t in stats.get("topics") or []) else "mapped",
               "executor": stats.get("executor")}
        runs.append(run)
        if not ok:
            break
    record["runs"] = runs
    good = [r for r in runs if r["gbps"] is not None]
    record["status"] = "ok" if len(good) == len(runs) else "error"
    if record["status"] == "ok":
        record["gbps"] = median([r["gbps"] for r in good])
        record["latency_p50_us"] = median([r["latency_p50_us"] for r in good if r["latency_p50_us"] is not None])
        record["latency_p99_us"] = median([r["latency_p99_us"] for r in good if r["latency_p99_us"] is not None])
        record["transfer"] = good[0]["transfer"]
    else:
        record["error"] = runs[-1]["error"]
    return record


def median(values: list[float]) -> float | None:
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


# ---------------------------------------------------------------------------------------------------------
# The baselines and the CPU libraries
# ---------------------------------------------------------------------------------------------------------


def op_arguments(op: str) -> list[str]:
    return ["--op", "raid6", "--k", str(raid6_k(op))] if op_family(op) == "raid6" else ["--op", op]


def baseline_record(args: argparse.Namespace, contender: str, op: str, size: int) -> dict:
    mode, streams = GPU_BASELINES[contender]
    total = run_bytes(args, contender, op, size)
    cmd = [os.path.join(args.build, "apps", "baselines", "xeflow-baseline"), "--mode", mode]
    if streams is not None:
        cmd += ["--streams", str(streams)]
    cmd += op_arguments(op) + ["--batch-bytes", str(size), "--total-bytes", str(total),
                               "--dataset-frames", str(dataset_frames_for(args, size)),
                               "--verify-threads", str(args.verify_threads), "--json"]
    return library_record(args, contender, op, size, cmd, mismatch_key="mismatches")


def cpu_record(args: argparse.Namespace, contender: str, op: str, size: int) -> dict:
    threads = CPU_CONTENDERS[contender]
    total = run_bytes(args, contender, op, size)
    # The libraries stream a dataset larger than the host's caches, as a stream's data comes from memory; a
    # dataset of P frames in the LLC would measure the cache (ISA-L ran 2.7x faster from L3 on the dev box).
    frames = max(args.dataset_frames, -(-args.cpu_dataset // size))
    cmd = [os.path.join(args.build, "apps", "encoding", "xeflow-encoding-cpu")] + op_arguments(op) + \
          ["--frame-size", str(size), "--total", str(total), "--dataset-frames", str(frames),
           "--threads", str(threads), "--json"]
    return library_record(args, contender, op, size, cmd, mismatch_key=None)


def library_record(args: argparse.Namespace, contender: str, op: str, size: int, cmd: list[str],
                   mismatch_key: str | None) -> dict:
    record = {"key": point_key("main", contender, op, size), "kind": "main", "contender": contender, "op": op,
              "frame_bytes": size, "started": sb.utc_now()}
    child = sb.run_child(cmd, args.timeout)
    doc = sb.parse_json_output(child.stdout)
    record.update({"command": " ".join(cmd), "returncode": child.returncode, "raw": doc})
    ok = child.returncode == 0 and doc is not None and (mismatch_key is None or doc.get(mismatch_key) == 0)
    if ok:
        record.update({"status": "ok", "gbps": doc.get("gbps"), "latency_p50_us": doc.get("latency_p50_us"),
                       "latency_p99_us": doc.get("latency_p99_us")})
    else:
        record["status"] = "timeout" if child.timed_out else "error"
        record["error"] = (child.error or sb.tail(child.stderr, 6) or
                           (f"{doc.get(mismatch_key)} mismatches" if doc and mismatch_key else f"exit {child.returncode}"))
    return record


# ---------------------------------------------------------------------------------------------------------
# The sweep
# ---------------------------------------------------------------------------------------------------------


def run_sweep(args: argparse.Namespace) -> int:
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "encoding.json")
    doc = {"meta": sb.run_meta(args), "points": []}
    if os.path.exists(path) and args.resume:
        with open(path, encoding="utf-8") as f:
            doc["points"] = json.load(f).get("points", [])
    done = {p["key"] for p in doc["points"] if p.get("status") == "ok"}
    if args.ceiling:
        ceiling = os.path.join(args.build, "bench", "link_ceiling", "xeflow-ceiling")
        child = sb.run_child([ceiling, "--json", os.path.join(args.out, "ceiling.json")] +
                             (["--commit", args.commit] if args.commit else []), sb.CEILING_TIMEOUT_S)
        print(child.stdout.rstrip() or f"xeflow-ceiling: exit {child.returncode}: {sb.tail(child.stderr, 3)}",
              flush=True)
    failures = 0
    ops = sb.parse_list(args.ops)
    sizes = [sb.parse_size(s) for s in sb.parse_list(args.sizes)]
    contenders = sb.parse_list(args.contenders)
    for name in ops:
        if name not in OPS:
            raise SystemExit(f"encoding_bench: --ops: unknown {name!r} (one of {', '.join(OPS)})")
    for name in contenders:
        if name not in CONTENDERS:
            raise SystemExit(f"encoding_bench: --contenders: unknown {name!r} (one of {', '.join(CONTENDERS)})")
    work = [("main", c, op, s) for op in ops for s in sizes for c in contenders]
    if XEFLOW in contenders:
        work += [("latency", XEFLOW, op, s) for op in ops for s in sb.parse_list(args.latency_sizes, sb.parse_size)]
    print(f"{'contender':<11} {'op':<10} {'size':>6} {'GB/s':>8} {'p50 us':>9} {'p99 us':>9}  status", flush=True)
    for kind, contender, op, size in work:
        if point_key(kind, contender, op, size) in done:
            continue
        if contender == XEFLOW:
            record = xeflow_record(args, op, size, kind == "latency")
        elif contender in GPU_BASELINES:
            record = baseline_record(args, contender, op, size)
        else:
            record = cpu_record(args, contender, op, size)
        record["finished"] = sb.utc_now()
        doc["points"] = [p for p in doc["points"] if p["key"] != record["key"]] + [record]
        sb.write_json_atomic(path, doc)
        failures += record["status"] != "ok"
        label = contender + (" (unl.)" if kind == "latency" else "")
        print(f"{label:<11} {op:<10} {sb.format_size(size):>6} {sb.fmt_num(record.get('gbps'), 2, 8)} "
              f"{sb.fmt_num(record.get('latency_p50_us'), 1, 9)} {sb.fmt_num(record.get('latency_p99_us'), 1, 9)}  "
              f"{record['status']}{'' if record['status'] == 'ok' else ': ' + str(record.get('error'))[:160]}",
              flush=True)
    report(args.out)
    return 1 if failures else 0


# ---------------------------------------------------------------------------------------------------------
# The report: tables, targets, plot
# ---------------------------------------------------------------------------------------------------------


def load(out: str) -> tuple[dict, dict[tuple, dict], dict[str, list[dict]]]:
    with open(os.path.join(out, "encoding.json"), encoding="utf-8") as f:
        doc = json.load(f)
    points = {(p["kind"], p["contender"], p["op"], p["frame_bytes"]): p for p in doc["points"]}
    return doc, points, sb.load_ceilings(out)


def gbps(points: dict, contender: str, op: str, size: int, kind: str = "main") -> float | None:
    p = points.get((kind, contender, op, size))
    return p.get("gbps") if p and p.get("status") == "ok" else None


def ceilings_for(op: str, ceilings: dict) -> tuple[float | None, float | None]:
    """(zero-copy, copy-engine) ceilings of an operator's stream in GB/s of input, under the sink's host
    reads where measured."""
    def get(*names: str) -> float | None:
        for n in names:
            v = sb.ceiling_gbps(ceilings, n)
            if v is not None:
                return v
        return None
    if op_family(op) == "aes":
        return (get("zero-copy-under-host-read", "zero-copy"), get("copy-engines-under-host-read", "copy-engines"))
    return get("zero-copy-read"), get("copy-h2d")


def best_gpu_baseline(points: dict, op: str, size: int) -> tuple[str | None, float | None]:
    best: tuple[str | None, float | None] = (None, None)
    for c in GPU_BASELINES:
        g = gbps(points, c, op, size)
        if g is not None and (best[1] is None or g > best[1]):
            best = (c, g)
    return best


def targets(points: dict, ops: list[str], sizes: list[int], ceilings: dict) -> list[dict]:
    out: list[dict] = []

    def add(name: str, ok: bool | None, measured: str) -> None:
        out.append({"target": name, "result": "MISSING" if ok is None else ("PASS" if ok else "FAIL"),
                    "measured": measured})

    for op in ops:
        zero_copy, copy_engines = ceilings_for(op, ceilings)
        for size in sizes:
            x = gbps(points, XEFLOW, op, size)
            best, best_g = best_gpu_baseline(points, op, size)
            r = x / best_g if x is not None and best_g else None
            need = 2.0 if size == 64 * KiB else 1.0
            add(f"{op} {sb.format_size(size)}: xeflow >= {need:g}x the best GPU baseline",
                None if r is None else r >= need,
                f"{sb.fmt_num(r)}x ({sb.fmt_num(x)} GB/s against {LABELS.get(best, '-')} {sb.fmt_num(best_g)})")
            if size >= 64 * KiB:
                p = next((q for q in points.values() if q["kind"] == "main" and q["contender"] == XEFLOW
                          and q["op"] == op and q["frame_bytes"] == size and q.get("status") == "ok"), None)
                ceiling = copy_engines if p and p.get("transfer") == "dma" else zero_copy
                share = x / ceiling if x is not None and ceiling else None
                add(f"{op} {sb.format_size(size)}: xeflow within 10% of the link ceiling",
                    None if share is None else share >= 0.9,
                    f"{sb.fmt_num(None if share is None else 100 * share)}% of {sb.fmt_num(ceiling)} GB/s")
        lat_x = points.get(("latency", XEFLOW, op, 64 * KiB))
        lat_c = points.get(("main", "ckc-pinned", op, 64 * KiB))
        a = lat_x.get("latency_p50_us") if lat_x and lat_x.get("status") == "ok" else None
        b = lat_c.get("latency_p50_us") if lat_c and lat_c.get("status") == "ok" else None
        add(f"{op} 64KiB: unloaded per-frame latency <= half of CKC's",
            None if a is None or b is None else a <= b / 2,
            f"xeflow p50 {sb.fmt_num(a, 1)} us, CKC p50 {sb.fmt_num(b, 1)} us")
    return out


def report(out: str) -> None:
    doc, points, ceilings = load(out)
    ops = [op for op in OPS if any(k[2] == op for k in points)]
    sizes = sorted({k[3] for k in points if k[0] == "main"})
    contenders = [c for c in CONTENDERS if any(k[1] == c and k[0] == "main" for k in points)]
    meta = doc.get("meta") or {}
    print(f"\nData encoding, GB/s of input ({meta.get('device')}, {meta.get('date')}, commit {meta.get('commit')})")
    if ceilings:
        sb.print_ceilings(ceilings)
    summary_rows = []
    for op in ops:
        print(f"\n{op}: GB/s (xeflow / contender in brackets)")
        print(f"  {'size':>6}" + "".join(f"{LABELS[c]:>19}" for c in contenders))
        for size in sizes:
            x = gbps(points, XEFLOW, op, size)
            cells = []
            row = {"op": op, "frame_bytes": size, "gbps": {}}
            for c in contenders:
                g = gbps(points, c, op, size)
                row["gbps"][c] = g
                cell = sb.fmt_num(g)
                if c != XEFLOW and g and x:
                    cell += f" ({x / g:.2f}x)"
                cells.append(cell.rjust(19))
            summary_rows.append(row)
            print(f"  {sb.format_size(size):>6}" + "".join(cells))
        in_flight = (meta.get("config") or {}).get("latency_capacity", sb.LATENCY_CAPACITY)
        print(f"  p50 latency, us (xeflow unloaded: {in_flight} frame(s) in flight; baselines: their run)")
        for size in sizes:
            cells = []
            for c in contenders:
                p = points.get(("latency", c, op, size)) if c == XEFLOW else points.get(("main", c, op, size))
                cells.append(sb.fmt_num(p.get("latency_p50_us") if p and p.get("status") == "ok" else None,
                                        1).rjust(19))
            print(f"  {sb.format_size(size):>6}" + "".join(cells))
    result = targets(points, ops, sizes, ceilings)
    print("\nTargets")
    for t in result:
        print(f"  {t['result']:<8}{t['target']:<62}{t['measured']}")
    summary = {"meta": meta, "rows": summary_rows, "targets": result,
               "ceilings": {k: sb.ceiling_gbps(ceilings, k) for k in ceilings}}
    sb.write_json_atomic(os.path.join(out, "summary.json"), summary)
    plot(out, points, ops, sizes, contenders, meta, ceilings)


def plot(out: str, points: dict, ops: list[str], sizes: list[int], contenders: list[str], meta: dict,
         ceilings: dict) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("encoding_bench: matplotlib missing: no plot", file=sys.stderr)
        return
    fig, axes = plt.subplots(2, len(ops), figsize=(4.2 * len(ops), 7.5), squeeze=False)
    for i, op in enumerate(ops):
        for c in contenders:
            xs = [s for s in sizes if gbps(points, c, op, s) is not None]
            axes[0][i].plot([s / KiB for s in xs], [gbps(points, c, op, s) for s in xs], marker="o", label=LABELS[c])
            lat = []
            for s in sizes:
                p = points.get(("latency", c, op, s)) if c == XEFLOW else points.get(("main", c, op, s))
                if p and p.get("status") == "ok" and p.get("latency_p50_us") is not None:
                    lat.append((s, p["latency_p50_us"]))
            if lat and c not in CPU_CONTENDERS:
                axes[1][i].plot([s / KiB for s, _ in lat], [v for _, v in lat], marker="o", label=LABELS[c])
        zero_copy, copy_engines = ceilings_for(op, ceilings)
        for value, label, style in ((zero_copy, "zero-copy ceiling", ":"), (copy_engines, "copy-engine ceiling", "--")):
            if value is not None:
                axes[0][i].axhline(value, color="gray", linestyle=style, linewidth=1, label=label)
        axes[0][i].set_title(op)
        for ax in (axes[0][i], axes[1][i]):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("frame size (KiB)")
        axes[1][i].set_yscale("log")
        axes[0][i].set_ylabel("GB/s of input")
        axes[1][i].set_ylabel("p50 latency per frame (us)")
    axes[0][0].legend(fontsize=7)
    axes[1][0].legend(fontsize=7)
    fig.suptitle(f"Data encoding on the stream: {meta.get('device')}, {meta.get('date')}, "
                 f"commit {str(meta.get('commit') or '')[:10]}")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "encoding.png"), dpi=110)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--out", required=True, help="directory of encoding.json, ceiling.json, the plot")
    p.add_argument("--report", action="store_true", help="only print the tables and targets of OUT")
    p.add_argument("--build", default="build", help="meson build directory (default: build)")
    p.add_argument("--ops", default=",".join(OPS), help=f"operators (default: {','.join(OPS)})")
    p.add_argument("--sizes", default=DEFAULT_SIZES, help=f"frame sizes (default: {DEFAULT_SIZES})")
    p.add_argument("--contenders", default=",".join(CONTENDERS), help="default: all")
    p.add_argument("--latency-sizes", default="4KiB,64KiB,1MiB", help="sizes of xeflow's unloaded latency points")
    p.add_argument("--seconds", type=float, default=1.0, help="each run's length at its expected rate (default: 1)")
    p.add_argument("--max-bytes", type=sb.parse_size, default=4 * GiB, help="bytes per run at most (default: 4GiB)")
    p.add_argument("--latency-capacity", type=int, default=sb.LATENCY_CAPACITY,
                   help=f"frames in flight in a latency point (default: {sb.LATENCY_CAPACITY}; 1: no frame ever "
                        "queues behind another)")
    p.add_argument("--latency-bytes", type=sb.parse_size, default=128 * MiB, help="bytes of a latency point")
    p.add_argument("--repeats", type=int, default=3, help="xeflow runs per point, the median kept (default: 3)")
    p.add_argument("--dataset-frames", type=int, default=64, help="P distinct frames of every contender's data")
    p.add_argument("--cpu-dataset", type=sb.parse_size, default=GiB,
                   help="bytes of the CPU libraries' dataset, above the host's caches (default: 1GiB)")
    p.add_argument("--source-threads", type=int, default=4)
    p.add_argument("--verify-threads", type=int, default=12)
    p.add_argument("--inflight", type=sb.parse_size, default=64 * MiB, help="bytes in flight per xeflow topic")
    p.add_argument("--min-capacity", type=int, default=64)
    p.add_argument("--warps-per-block", type=int, default=8)
    p.add_argument("--executor", default="device", choices=["device", "host", "auto"])
    p.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                   help="an override for every xeflow-run (e.g. runtime.timer_slack_us=0), repeatable")
    p.add_argument("--timeout", type=float, default=120, help="seconds per child process")
    p.add_argument("--no-ceiling", dest="ceiling", action="store_false", help="skip the link ceilings")
    p.add_argument("--resume", action="store_true", help="keep OUT/encoding.json's ok points, run the rest")
    p.add_argument("--commit", default=None, help="the tree's commit where git does not know it")
    args = p.parse_args()
    if args.report:
        report(args.out)
        return 0
    return run_sweep(args)


if __name__ == "__main__":
    sys.exit(main())
