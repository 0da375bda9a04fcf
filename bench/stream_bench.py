#!/usr/bin/env python3
"""XeFlow microbenchmark driver: xeflow against the conventional CPU->GPU->CPU streaming baselines.

Reproduces the XeFlow paper's microbenchmark (Section 6.2) on one GPU machine and records every number:

* shapes C(G)nC (a CPU source, n GPU stages in a row, a CPU sink) with op ``scale`` and op ``fma``
  (64 iterations), and C(GC)n (n GPU stages with a CPU stage between each pair) with op ``scale``;
* frame/batch sizes 4 KiB .. 4 MiB;
* contenders: xeflow (``tools/xeflow-run`` on the device executor, one generated topology per point) and
  the baselines of ``apps/baselines`` (``xeflow-baseline``: CKC pageable, CKC pinned, CKC+HQ x2/x4/x8,
  KoUM, CUDA graphs x8), all with the same source (a pre-filled host dataset of P frames published in
  place) and the same checksum verification on the same number of CPU threads;
* the layered-coherence ablation (the paper's Fig. 10) and the kernel's round-time breakdown (Fig. 11).

Subcommands (``--help`` on each for every option):

``run``     runs a sweep (or a selected part of it) and writes ``OUT/sweep-<tag>.json`` after every point,
            so a run that is cut off keeps what it finished. ``--dry-run`` prints the commands instead.
``plan``    estimates how long each point takes from expected throughputs and splits the sweep into parts
            that fit a time limit; prints the exact ``run`` command of each part.
``report``  merges every ``sweep-*.json`` under a directory, prints the tables with the ratios of xeflow
            to every baseline, checks the issue's targets (PASS/FAIL), writes ``summary.json`` and PNG
            plots (matplotlib, Agg backend; skipped with a message when matplotlib is missing).

Only the Python standard library is needed (matplotlib optional, for the plots). See bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import glob
import json
import math
import os
import platform
import re
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Iterable

# ---------------------------------------------------------------------------------------------------------
# Constants: the sweep's defaults and the fixed parameters of the operators
# ---------------------------------------------------------------------------------------------------------

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DEFAULT_SIZES = "4KiB,16KiB,64KiB,256KiB,1MiB,4MiB"
DEFAULT_ABLATION_SIZES = "16KiB,64KiB,1MiB"
DEFAULT_STAGES = "1,2,3,4"

#: Operator parameters. u32 topics: integral factor and a, b (the baselines truncate them to integers too).
SCALE_FACTOR = 3
FMA_A = 3
FMA_B = 1
SEED = 1

#: Contenders: name -> (xeflow-baseline --mode, --streams or None, label used in tables and plots).
BASELINES: dict[str, tuple[str, int | None, str]] = {
    "ckc-pageable": ("ckc-pageable", None, "CKC pageable"),
    "ckc-pinned": ("ckc-pinned", None, "CKC pinned"),
    "ckc-hq2": ("ckc-hq", 2, "CKC+HQ2"),
    "ckc-hq4": ("ckc-hq", 4, "CKC+HQ4"),
    "ckc-hq8": ("ckc-hq", 8, "CKC+HQ8"),
    "koum": ("koum", None, "KoUM"),
    "graph8": ("graph", 8, "Graphs x8"),
}
XEFLOW = "xeflow"
ALL_CONTENDERS = [XEFLOW] + list(BASELINES)
LABELS = {XEFLOW: "XeFlow", **{k: v[2] for k, v in BASELINES.items()}}

SHAPE_LABEL = {"g": "C(G)nC", "gc": "C(GC)n"}

#: The layered-coherence ablation (Fig. 10): setting name -> (catalog, index, frames) policies.
ABLATION_SETTINGS: list[tuple[str, tuple[str, str, str]]] = [
    ("all-naive", ("naive", "naive", "naive")),
    ("+catalog", ("read_mostly", "naive", "naive")),
    ("+index", ("read_mostly", "placed", "naive")),
    ("+frames", ("read_mostly", "placed", "placed")),
]
ALL_ON = ("read_mostly", "placed", "placed")

NOTES = [
    "C(GC)n is swept with op scale only: a CPU stage of fma-64 would make every contender CPU-bound, so "
    "the comparison would measure the CPU, not the data path.",
    "C(GC)1 is the same pipeline as C(G)1C (source -> one GPU stage -> sink) for every contender; when both "
    "shapes are swept it is run once, as C(G)1C, and the report uses that point for both panels.",
    "Same CPU work for every contender: a source publishing in place from a pre-filled host dataset of P "
    "frames (xeflow: dataset_source, baselines: --dataset-frames P), checksum verification of every frame "
    "on the same number of threads (verify_sink threads / --verify-threads; ckc-pageable and ckc-pinned "
    "have one buffer set and verify on their issuing thread), and for C(GC)n the same CPU stage operator "
    "on the same number of threads (CPU scale threads / --cpu-stage-threads).",
    "P is --dataset-frames (64) reduced to gcd(P, topic capacity) when the capacity is not a multiple of "
    "it (1 MiB and 4 MiB frames: capacity 16, P 16): dataset_source publishes in place only when P divides "
    "the capacity; the baselines get the same P at that point.",
    "xeflow GB/s: 'stream' is the sink's bytes / xeflow-run's stream_seconds (first source publish to last "
    "sink delivery, measured in the run), which leaves out topic allocation, kernel launch and teardown as "
    "the baselines' untimed warm-up does; the report uses it. 'wall' includes that fixed cost; 'steady' "
    "((B - b) / (t_B - t_b) from a short second run) is recorded when --steady is given, and proved biased "
    "(it reported 51 GB/s at 256 KiB on 2026-11-22, above the 42 GB/s C-G-C ceiling).",
]


# ---------------------------------------------------------------------------------------------------------
# Small helpers: sizes, time, JSON files
# ---------------------------------------------------------------------------------------------------------

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|[KMGT](?:iB)?)?\s*$", re.IGNORECASE)
_UNIT = {"B": 1, "K": KiB, "M": MiB, "G": GiB, "T": 1024 * GiB}


def parse_size(text: str) -> int:
    """Parses a byte count: '4096', '4KiB', '4K', '1MiB', '0.5GiB' (binary units only; 'KB' is refused as
    ambiguous). Raises ValueError."""
    m = _SIZE_RE.match(text)
    if not m:
        raise ValueError(f"not a byte count: {text!r} (use e.g. 4096, 16KiB, 1MiB, 4GiB)")
    unit = (m.group(2) or "B")[0].upper()
    value = float(m.group(1)) * _UNIT[unit]
    if value != int(value):
        raise ValueError(f"{text!r} is not a whole number of bytes")
    return int(value)


def format_size(n: int) -> str:
    """Formats a byte count the way the sweep names sizes: 4KiB, 1MiB, 4GiB; plain bytes otherwise."""
    for unit, scale in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


def parse_list(text: str, convert=str) -> list:
    """Splits a comma-separated command-line list, converting each item; empty items are ignored."""
    return [convert(item.strip()) for item in text.split(",") if item.strip()]


def utc_now() -> str:
    """The current time as a UTC ISO-8601 string (seconds)."""
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def write_json_atomic(path: str, doc: Any) -> None:
    """Writes `doc` as indented JSON to `path` through a temporary file, so a reader never sees half a file."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def fmt_num(value: Any, digits: int = 2, width: int = 0) -> str:
    """Formats a number for a table ('-' when missing), right-aligned to `width`."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        text = "-"
    else:
        text = f"{value:.{digits}f}"
    return text.rjust(width) if width else text


# ---------------------------------------------------------------------------------------------------------
# The points of a sweep
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """One measurement: a contender streaming one shape/op/size, or one ablation setting (xeflow only)."""

    kind: str  # "main", "ablation" or "latency"
    contender: str
    shape: str  # "g" or "gc"
    stages: int
    op: str  # "scale" or "fma"
    frame_bytes: int
    setting: str = ""  # ablation: the coherence setting's name; latency: "unloaded"

    @property
    def key(self) -> str:
        """A stable identity, used to merge runs and to skip points already done."""
        return "|".join([self.kind, self.contender, self.shape, str(self.stages), self.op,
                         str(self.frame_bytes), self.setting])

    @property
    def group(self) -> tuple:
        """The point without its contender: xeflow and the baselines of one group are compared."""
        return (self.shape, self.stages, self.op, self.frame_bytes)

    def describe(self) -> str:
        """A short human-readable name."""
        what = f"{self.contender} {SHAPE_LABEL[self.shape].replace('n', str(self.stages))} {self.op} " \
               f"{format_size(self.frame_bytes)}"
        return f"{self.kind} {self.setting} " + what if self.kind != "main" else what


@dataclass
class SweepConfig:
    """Everything that fixes how a point is run (from the command line)."""

    build: str
    out: str
    bytes: int
    ablation_bytes: int
    latency_bytes: int
    fma_iterations: int
    dataset_frames: int
    verify_threads: int
    cpu_stage_threads: int
    source_threads: int
    source_class: str
    inflight_bytes: int
    min_capacity: int
    max_capacity: int
    blocks: int
    warps_per_block: int
    executor: str
    timeout: float
    steady: bool
    steady_fraction: int
    repeats: int
    baseline_extra: list[str] = field(default_factory=list)
    xeflow_extra: list[str] = field(default_factory=list)


#: The unloaded-latency points: frames in flight per topic, source and sink threads. Two frames in flight
#: and one thread each side, so a frame never queues behind others: what one frame takes from the source's
#: publish to the sink's delivery through the whole data path (the throughput points queue thousands).
LATENCY_CAPACITY = 2
LATENCY_THREADS = 1


def capacity_for(cfg: SweepConfig, frame_bytes: int, kind: str = "main") -> int:
    """Topic capacity for a frame size: about cfg.inflight_bytes in flight, clamped to [min, max] frames
    (LATENCY_CAPACITY for a latency point)."""
    if kind == "latency":
        return LATENCY_CAPACITY
    return max(cfg.min_capacity, min(cfg.max_capacity, cfg.inflight_bytes // frame_bytes))


def dataset_frames_for(cfg: SweepConfig, frame_bytes: int, kind: str = "main") -> int:
    """P for a point: the requested P, or gcd(P, capacity) when P does not divide the capacity (in place)."""
    capacity = capacity_for(cfg, frame_bytes, kind)
    p = cfg.dataset_frames
    return p if capacity % p == 0 else math.gcd(p, capacity)


def select_points(shapes: list[str], stages: list[int], ops: list[str], sizes: list[int],
                  contenders: list[str], ablation: str, ablation_sizes: list[int],
                  gc_fma: bool = False, latency_sizes: list[int] | None = None) -> tuple[list[Point], list[str]]:
    """The points of a sweep, in run order, and notes about combinations left out.

    Order: for every shape, op, n and size, xeflow first (so the live table can show ratios), then the
    baselines; then the ablation; the unloaded-latency points (xeflow, C(G)1C scale) last. C(GC)n with fma is left out unless `gc_fma`; C(GC)1 is left out when
    C(G)1C with the same op is in the sweep (the same pipeline)."""
    points: list[Point] = []
    skipped: list[str] = []
    if ablation != "only":
        for shape in shapes:
            for op in ops:
                if shape == "gc" and op == "fma" and not gc_fma:
                    skipped.append("C(GC)n with fma: left out (CPU-bound for every contender; --gc-fma runs it)")
                    continue
                for n in stages:
                    if shape == "gc" and n == 1 and "g" in shapes:
                        skipped.append(f"C(GC)1 {op}: same pipeline as C(G)1C {op}, run once as C(G)1C")
                        continue
                    for size in sizes:
                        for c in contenders:
                            points.append(Point("main", c, shape, n, op, size))
    if ablation != "off" and XEFLOW in contenders:
        for size in ablation_sizes:
            for name, _ in ABLATION_SETTINGS:
                points.append(Point("ablation", XEFLOW, "g", 1, "scale", size, name))
    if XEFLOW in contenders:
        for size in latency_sizes or []:
            points.append(Point("latency", XEFLOW, "g", 1, "scale", size, "unloaded"))
    return points, skipped


# ---------------------------------------------------------------------------------------------------------
# Commands: generated topologies and baseline command lines
# ---------------------------------------------------------------------------------------------------------


def op_params_yaml(op: str, cfg: SweepConfig) -> str:
    """The GPU operator's params as a YAML flow map."""
    if op == "scale":
        return f"{{factor: {SCALE_FACTOR}}}"
    return f"{{iterations: {cfg.fma_iterations}, a: {FMA_A}, b: {FMA_B}}}"


def coherence_of(point: Point) -> tuple[str, str, str]:
    """The (catalog, index, frames) policies of a point: all tuned except in the ablation."""
    if point.kind == "ablation":
        return dict(ABLATION_SETTINGS)[point.setting]
    return ALL_ON


def topology_name(point: Point) -> str:
    """The generated topology's name (letters, digits, '_' and '-' only) and file stem."""
    name = f"bench_{point.shape}{point.stages}_{point.op}_{format_size(point.frame_bytes)}"
    if point.kind == "ablation":
        name += "_coh-" + "-".join(p.replace("_", "") for p in coherence_of(point))
    if point.kind == "latency":
        name += "_unloaded"
    return name


def topology_yaml(point: Point, cfg: SweepConfig, total_bytes: int) -> str:
    """The YAML topology of an xeflow point.

    C(G)nC: source -> t0 -> g1 -> t1 -> ... -> gn -> tn -> verify.
    C(GC)n: source -> t0 -> g1 -> t1 -> c1 -> t2 -> g2 -> ... -> gn -> t(2n-1) -> verify, the CPU stages
    being `scale` on cfg.cpu_stage_threads threads (as the baselines' CPU stages: the same operator)."""
    capacity = capacity_for(cfg, point.frame_bytes, point.kind)
    p = dataset_frames_for(cfg, point.frame_bytes, point.kind)
    source_threads = LATENCY_THREADS if point.kind == "latency" else cfg.source_threads
    verify_threads = LATENCY_THREADS if point.kind == "latency" else cfg.verify_threads
    if point.kind == "ablation":
        # In place, an unchanged frame need never cross PCIe again once a policy has migrated it to the
        # GPU (naive frames would look fast for the wrong reason). The ablation's source rewrites every
        # frame (P does not divide the capacity), with threads enough to keep up, the same for every setting.
        p = capacity + 1
        source_threads = max(source_threads, 8)
    frame = format_size(point.frame_bytes)
    catalog, index, frames = coherence_of(point)
    stages: list[tuple[str, str, str]] = []  # (name, class, on)
    for i in range(1, point.stages + 1):
        stages.append((f"g{i}", point.op, "gpu"))
        if point.shape == "gc" and i < point.stages:
            stages.append((f"c{i}", "scale", "cpu"))
    topics = [f"t{i}" for i in range(len(stages) + 1)]
    shape = SHAPE_LABEL[point.shape].replace("n", str(point.stages))
    lines = [
        f"# Generated by bench/stream_bench.py: {shape}, op {point.op}, frame {frame}, capacity {capacity}, "
        f"P {p}, coherence {catalog}/{index}/{frames}.",
        f"name: {topology_name(point)}",
        "topics:",
    ]
    for t in topics:
        lines.append(f"  {t}: {{frame_size: {frame}, capacity: {capacity}, element: u32}}")
    lines.append("operators:")
    source_params = f"total_bytes: {total_bytes}, seed: {SEED}"
    if cfg.source_class == "dataset_source":
        source_params += f", dataset_frames: {p}"
    lines.append(f"  source: {{class: {cfg.source_class}, on: cpu, threads: {source_threads}, "
                 f"outputs: [{topics[0]}], params: {{{source_params}}}}}")
    for i, (name, cls, on) in enumerate(stages):
        if on == "gpu":
            lines.append(f"  {name}: {{class: {cls}, on: gpu, inputs: [{topics[i]}], outputs: [{topics[i + 1]}], "
                         f"params: {op_params_yaml(cls, cfg)}}}")
        else:
            lines.append(f"  {name}: {{class: {cls}, on: cpu, threads: {cfg.cpu_stage_threads}, "
                         f"inputs: [{topics[i]}], outputs: [{topics[i + 1]}], params: {{factor: {SCALE_FACTOR}}}}}")
    verify_params = "{mode: checksum}" if cfg.source_class == "dataset_source" else "{mode: exact}"
    lines.append(f"  verify: {{class: verify_sink, on: cpu, threads: {verify_threads}, "
                 f"inputs: [{topics[-1]}], params: {verify_params}}}")
    lines.append(f"runtime: {{executor: auto, blocks: {cfg.blocks}, warps_per_block: {cfg.warps_per_block}, "
                 f"coherence: {{catalog: {catalog}, index: {index}, frames: {frames}}}}}")
    return "\n".join(lines) + "\n"


def point_bytes(point: Point, cfg: SweepConfig) -> int:
    """Bytes streamed by a point's (main) run."""
    if point.kind == "latency":
        return cfg.latency_bytes
    return cfg.ablation_bytes if point.kind == "ablation" else cfg.bytes


def short_run_bytes(point: Point, cfg: SweepConfig) -> int | None:
    """Bytes of the short run that measures xeflow's fixed cost, or None when no short run is made."""
    if not cfg.steady or point.contender != XEFLOW:
        return None
    total = point_bytes(point, cfg)
    capacity = capacity_for(cfg, point.frame_bytes, point.kind)
    b = max(total // cfg.steady_fraction, 8 * capacity * point.frame_bytes)
    b -= b % point.frame_bytes
    return b if 0 < b <= total // 2 else None


def write_topology(point: Point, cfg: SweepConfig) -> str:
    """Writes the point's topology under OUT/topologies/ and returns its path."""
    directory = os.path.join(cfg.out, "topologies")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, topology_name(point) + ".yaml")
    text = topology_yaml(point, cfg, point_bytes(point, cfg))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def xeflow_command(cfg: SweepConfig, topology: str, total_bytes: int | None = None) -> list[str]:
    """The xeflow-run command line of a point; `total_bytes` overrides the stream length (short run)."""
    cmd = [os.path.join(cfg.build, "tools", "xeflow-run"), topology, "--stats", "json", "-q",
           "--set", f"runtime.executor={cfg.executor}"]
    if total_bytes is not None:
        cmd += ["--set", f"operators.source.params.total_bytes={total_bytes}"]
    return cmd + list(cfg.xeflow_extra)


def baseline_command(point: Point, cfg: SweepConfig) -> list[str]:
    """The xeflow-baseline command line of a baseline point."""
    mode, streams, _ = BASELINES[point.contender]
    cmd = [os.path.join(cfg.build, "apps", "baselines", "xeflow-baseline"), "--mode", mode]
    if streams is not None:
        cmd += ["--streams", str(streams)]
    cmd += ["--shape", point.shape, "--stages", str(point.stages), "--op", point.op]
    if point.op == "scale":
        cmd += ["--factor", str(SCALE_FACTOR)]
    else:
        cmd += ["--iterations", str(cfg.fma_iterations), "--a", str(FMA_A), "--b", str(FMA_B)]
    cmd += ["--batch-bytes", str(point.frame_bytes), "--total-bytes", str(point_bytes(point, cfg)),
            "--dataset-frames", str(dataset_frames_for(cfg, point.frame_bytes)),
            "--verify-threads", str(cfg.verify_threads), "--json"]
    if point.shape == "gc":
        cmd += ["--cpu-stage-threads", str(cfg.cpu_stage_threads)]
    return cmd + list(cfg.baseline_extra)


# ---------------------------------------------------------------------------------------------------------
# Time estimates (for `plan`, --part and --time-budget): expected throughputs on the H100 test machine
# ---------------------------------------------------------------------------------------------------------

#: GB/s expected for C(G)1C scale, by batch size: what the recorded H100 sweeps measured (c53d2fb and
#: e3c65a5, with the verify sink on 12 threads; HARDWARE.md's numbers, taken without verification, made
#: the baselines' points run 2-3x longer than estimated). Only used to estimate durations, never reported.
EXPECTED_GBPS: dict[str, dict[int, float]] = {
    XEFLOW: {4 * KiB: 18, 16 * KiB: 37, 64 * KiB: 37, 256 * KiB: 37, MiB: 37, 4 * MiB: 38},
    "ckc-pageable": {4 * KiB: 0.19, 16 * KiB: 0.59, 64 * KiB: 1.26, 256 * KiB: 1.67, MiB: 2.22, 4 * MiB: 2.31},
    "ckc-pinned": {4 * KiB: 0.21, 16 * KiB: 0.74, 64 * KiB: 2.28, 256 * KiB: 4.97, MiB: 6.5, 4 * MiB: 8.6},
    "ckc-hq2": {4 * KiB: 0.2, 16 * KiB: 0.64, 64 * KiB: 2.22, 256 * KiB: 5.03, MiB: 7.0, 4 * MiB: 13.4},
    "ckc-hq4": {4 * KiB: 0.28, 16 * KiB: 1.01, 64 * KiB: 4.27, 256 * KiB: 8.91, MiB: 12.4, 4 * MiB: 19.8},
    "ckc-hq8": {4 * KiB: 0.27, 16 * KiB: 1.07, 64 * KiB: 4.4, 256 * KiB: 11.0, MiB: 13.1, 4 * MiB: 26.7},
    "koum": {4 * KiB: 0.34, 16 * KiB: 1.25, 64 * KiB: 3.28, 256 * KiB: 7.15, MiB: 8.31, 4 * MiB: 11.8},
    "graph8": {4 * KiB: 0.33, 16 * KiB: 1.14, 64 * KiB: 4.82, 256 * KiB: 9.98, MiB: 10.9, 4 * MiB: 29.4},
}
#: Slow-down of each ablation setting against all-on (measured in the e3c65a5 sweep at 16 KiB-1 MiB: all
#: naive and +catalog 20-45x, +index 200-750x; the paper's Fig. 10c guessed far less).
ABLATION_SLOWDOWN = {"all-naive": 40.0, "+catalog": 40.0, "+index": 400.0, "+frames": 1.0}
#: Seconds a process costs besides streaming: CUDA context, allocations, dataset fill, warm-up, teardown
#: (0.34–0.52 s for every contender on the H100, 2026-11-22).
PROCESS_OVERHEAD_S = 0.5
# xeflow-ceiling takes ~45 s on the H100 machine (9 measurements x 3 runs of 8 GiB).
CEILING_TIMEOUT_S = 300


def expected_gbps(point: Point) -> float:
    """Expected GB/s of a point (log-log interpolation over the table, shape/op/ablation factors applied)."""
    table = EXPECTED_GBPS[point.contender]
    sizes = sorted(table)
    s = point.frame_bytes
    if s <= sizes[0]:
        gbps = table[sizes[0]] * (s / sizes[0])  # per-batch cost bound: proportional below the table
    elif s >= sizes[-1]:
        gbps = table[sizes[-1]]
    else:
        hi = next(i for i, x in enumerate(sizes) if x >= s)
        lo = hi - 1
        f = (math.log(s) - math.log(sizes[lo])) / (math.log(sizes[hi]) - math.log(sizes[lo]))
        gbps = math.exp(math.log(table[sizes[lo]]) + f * (math.log(table[sizes[hi]]) - math.log(table[sizes[lo]])))
    if point.kind == "latency":
        return 1.0  # two frames in flight: latency-bound, about a frame per 15-20 us
    n = point.stages
    if point.contender == XEFLOW:
        slowdown = n if point.shape == "gc" else 1 + 0.03 * (n - 1)
        if point.kind == "ablation":
            slowdown *= ABLATION_SLOWDOWN.get(point.setting, 1.0)
    else:
        slowdown = 1.1 * n if point.shape == "gc" else 1 + 0.2 * (n - 1)
        if point.op == "fma":
            slowdown *= 1.1
    return gbps / slowdown


def estimate_seconds(point: Point, cfg: SweepConfig, capped: bool = True) -> float:
    """Estimated wall time of a point, child processes included; `capped`: each child at most the timeout
    (what the point will cost), else what it needs to finish (what the timeout should allow)."""
    gbps = expected_gbps(point)
    cap = cfg.timeout if capped else math.inf
    seconds = min(PROCESS_OVERHEAD_S + point_bytes(point, cfg) / (gbps * 1e9), cap)
    if point.contender == XEFLOW:
        seconds *= cfg.repeats
    short = short_run_bytes(point, cfg)
    if short is not None:
        seconds += min(PROCESS_OVERHEAD_S + short / (gbps * 1e9), cap)
    return seconds


def longest_child_seconds(point: Point, cfg: SweepConfig) -> float:
    """Estimated seconds of the point's longest child process (its main run), uncapped."""
    return PROCESS_OVERHEAD_S + point_bytes(point, cfg) / (expected_gbps(point) * 1e9)


def partition(points: list[Point], cfg: SweepConfig, part_seconds: float) -> list[list[Point]]:
    """Splits the points into parts whose estimated time fits `part_seconds`, most important first.

    Units are kept whole: one xeflow point; the baselines of one group (shape/n/op/size); or the four
    settings of one ablation size. A unit longer than a part is split by contender. Units are taken by
    priority: (0) the headline C(G)1C scale, xeflow and baselines, which every target needs; (1) every
    other xeflow point and the ablation (cheap: all of xeflow's figures); (2) the other baselines; in sweep
    order within a priority. Each goes into the first part with room (first fit), so the result depends
    only on the selection and the estimates (uncapped, so that --timeout does not change the parts)."""
    def unit_key(p: Point) -> tuple:
        if p.kind != "main":
            return (p.kind, p.frame_bytes)
        return ("xeflow" if p.contender == XEFLOW else "baselines",) + p.group

    def priority(p: Point) -> int:
        if p.kind == "main" and (p.shape, p.stages, p.op) == ("g", 1, "scale"):
            return 0
        return 1 if p.contender == XEFLOW else 2

    order = {p.key: i for i, p in enumerate(points)}
    grouped: dict[tuple, list[Point]] = {}
    for p in points:
        grouped.setdefault(unit_key(p), []).append(p)
    units = sorted(grouped.values(), key=lambda u: (priority(u[0]), order[u[0].key]))
    split_units: list[list[Point]] = []
    for unit in units:
        if sum(estimate_seconds(p, cfg, capped=False) for p in unit) <= part_seconds:
            split_units.append(unit)
            continue
        chunk: list[Point] = []
        for p in unit:
            chunk_seconds = sum(estimate_seconds(q, cfg, capped=False) for q in chunk)
            if chunk and chunk_seconds + estimate_seconds(p, cfg, capped=False) > part_seconds:
                split_units.append(chunk)
                chunk = []
            chunk.append(p)
        if chunk:
            split_units.append(chunk)
    parts: list[list[Point]] = []
    loads: list[float] = []
    for unit in split_units:
        t = sum(estimate_seconds(p, cfg, capped=False) for p in unit)
        for i, load in enumerate(loads):
            if load + t <= part_seconds:
                parts[i].extend(unit)
                loads[i] += t
                break
        else:
            parts.append(list(unit))
            loads.append(t)
    return [sorted(part, key=lambda p: order[p.key]) for part in parts]


# ---------------------------------------------------------------------------------------------------------
# Running child processes
# ---------------------------------------------------------------------------------------------------------


@dataclass
class ChildResult:
    """What one child process did."""

    command: list[str]
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool
    error: str = ""


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    """Sends `sig` to the process group of a child started with start_new_session (its own group)."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def run_child(command: list[str], timeout: float) -> ChildResult:
    """Runs a command in its own process group with a timeout.

    On timeout the group gets SIGINT first (xeflow-run then drains the pipeline and still prints its
    stats, which are kept), then SIGKILL if it has not ended 20 s later. If the driver itself is
    interrupted (Ctrl-C, SIGTERM), the child is stopped the same way before the interruption goes on."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
    except OSError as e:
        return ChildResult(command, None, "", "", 0.0, False, f"cannot start: {e}")
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _signal_group(proc, signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)
            out, err = proc.communicate()
    except BaseException:
        _signal_group(proc, signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)
            proc.wait()
        raise
    return ChildResult(command, proc.returncode, out or "", err or "", time.monotonic() - start, timed_out)


def parse_json_output(text: str) -> dict | None:
    """The JSON object a tool printed on stdout (the first '{' to the end), or None."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        doc = json.loads(text[start:])
    except json.JSONDecodeError:
        # xeflow-baseline prints one line; anything after it would be noise: try the first line.
        try:
            doc = json.loads(text[start:].splitlines()[0])
        except (json.JSONDecodeError, IndexError):
            return None
    return doc if isinstance(doc, dict) else None


def tail(text: str, lines: int = 12) -> str:
    """The last lines of a tool's stderr, for the record."""
    return "\n".join(text.strip().splitlines()[-lines:])


# ---------------------------------------------------------------------------------------------------------
# Records: the numbers of one point
# ---------------------------------------------------------------------------------------------------------


def kernel_breakdown(kernel: dict | None) -> dict | None:
    """Shares of the kernel's round time: each phase in busy time (subscribe+schedule+compute+publish),
    and idle in all time. None without a kernel section (host executor, failed run)."""
    if not kernel:
        return None
    phases = ["subscribe", "schedule", "compute", "publish"]
    cycles = {p: float(kernel.get(f"{p}_cycles", 0) or 0) for p in phases}
    idle = float(kernel.get("idle_cycles", 0) or 0)
    busy = sum(cycles.values())
    result = {f"{p}_share": (cycles[p] / busy if busy > 0 else None) for p in phases}
    result["idle_share_of_all"] = idle / (busy + idle) if busy + idle > 0 else None
    result["schedule_share_of_all"] = cycles["schedule"] / (busy + idle) if busy + idle > 0 else None
    result["busy_cycles"] = busy
    result["idle_cycles"] = idle
    return result


def sink_of(stats: dict) -> dict | None:
    """The verify sink's entry of xeflow-run's stats (the operator named 'verify', else the first sink)."""
    ops = stats.get("operators") or []
    for o in ops:
        if o.get("name") == "verify":
            return o
    for o in ops:
        if o.get("class") in ("verify_sink", "null_sink"):
            return o
    return None


def xeflow_numbers(stats: dict | None) -> dict:
    """Throughput, latency, verify counters and kernel data from one xeflow-run stats document."""
    if not stats:
        return {}
    sink = sink_of(stats) or {}
    wall = stats.get("wall_seconds")
    stream = stats.get("stream_seconds")
    moved = sink.get("bytes_in")
    topics = stats.get("topics") or []
    return {
        "stream_seconds": stream,
        # xeflow-run's own window, first source publish to last sink delivery: the stream without set-up
        # and tear-down, measured in the same run (no short second run needed).
        "gbps_stream": (moved / stream / 1e9) if moved and stream else None,
        "status": stats.get("status"),
        "executor": stats.get("executor"),
        "error": stats.get("error"),
        "wall_seconds": wall,
        "bytes": moved,
        "frames": sink.get("frames_in"),
        "gbps_wall": (moved / wall / 1e9) if moved and wall else None,
        "latency_p50_us": sink.get("latency_p50_us"),
        "latency_p99_us": sink.get("latency_p99_us"),
        "latency_frames": sink.get("latency_frames"),
        "verify_counters": sink.get("counters"),
        "capacity": topics[0].get("capacity") if topics else None,
        "kernel": stats.get("kernel"),
    }


def run_digest(stats: dict | None) -> dict:
    """What each repeat keeps of its stats beside its rates (the point keeps the first run's whole document):
    where its time went — every topic's publisher blocked time and copy-engine bridge, the kernel's phase
    cycles — so a slow repeat can be told from a fast one."""
    if not stats:
        return {}
    kernel = {k: v for k, v in (stats.get("kernel") or {}).items() if not isinstance(v, (dict, list))}
    topics = [{"name": t.get("name"), "blocked_seconds": t.get("blocked_seconds"),
               "copy_engines": t.get("copy_engines")} for t in stats.get("topics") or []]
    return {"kernel": kernel, "topics": topics}


def run_xeflow_point(point: Point, cfg: SweepConfig) -> dict:
    """Runs an xeflow point (main run, then the short run for the steady-state rate) and returns its record."""
    topology = write_topology(point, cfg)
    record = base_record(point, cfg)
    record["topology"] = os.path.relpath(topology, cfg.out)
    record["topology_yaml"] = topology_yaml(point, cfg, point_bytes(point, cfg))
    main = run_child(xeflow_command(cfg, topology), cfg.timeout)
    stats = parse_json_output(main.stdout)
    record.update(child_fields(main))
    record["raw"] = stats
    nums = xeflow_numbers(stats)
    record.update({k: v for k, v in nums.items() if k not in ("status", "error")})
    record["run_status"] = nums.get("status")
    if main.timed_out:
        record["status"] = "timeout"
        record["error"] = f"timed out after {cfg.timeout:.0f} s" + \
                          (" (stats are of the frames drained by then)" if stats else "")
    elif main.returncode == 0 and nums.get("status") == "completed":
        record["status"] = "ok"
        if not str(nums.get("executor", "")).startswith("device") and cfg.executor == "device":
            record["status"] = "error"
            record["error"] = f"ran on executor {nums.get('executor')!r}, not the device"
    else:
        record["status"] = "error"
        record["error"] = nums.get("error") or main.error or tail(main.stderr, 4) or f"exit {main.returncode}"
    if record["status"] == "ok" and cfg.repeats > 1:
        repeat_runs(record, cfg, topology)
    record["gbps"] = record.get("gbps_stream") or record.get("gbps_wall")
    record["breakdown"] = kernel_breakdown(nums.get("kernel"))
    if nums.get("kernel"):
        record["blocks"] = nums["kernel"].get("blocks")
        record["warps_per_block"] = nums["kernel"].get("warps_per_block")
    short_bytes = short_run_bytes(point, cfg)
    if record["status"] == "ok" and short_bytes is not None:
        short = run_child(xeflow_command(cfg, topology, short_bytes), cfg.timeout)
        sstats = parse_json_output(short.stdout)
        snums = xeflow_numbers(sstats)
        steady: dict[str, Any] = {"bytes": snums.get("bytes"), "wall_seconds": snums.get("wall_seconds"),
                                  "status": snums.get("status"), "returncode": short.returncode,
                                  "process_seconds": short.seconds, "command": short.command}
        ok = short.returncode == 0 and snums.get("status") == "completed" and snums.get("bytes") and \
            snums.get("wall_seconds") is not None
        if ok:
            d_bytes = record["bytes"] - snums["bytes"]
            d_time = record["wall_seconds"] - snums["wall_seconds"]
            steady["fixed_seconds"] = snums["wall_seconds"] - snums["bytes"] * d_time / d_bytes if d_bytes > 0 else None
            # Valid when the difference is a real part of the main run's time (else noise dominates).
            if d_bytes > 0 and d_time > 0.25 * record["wall_seconds"]:
                steady["gbps"] = d_bytes / d_time / 1e9
                steady["valid"] = True
            else:
                steady["valid"] = False
                steady["why"] = "time difference too small against the main run"
        else:
            steady["valid"] = False
            steady["why"] = snums.get("error") or tail(short.stderr, 3) or f"exit {short.returncode}"
        record["steady"] = steady
        record["process_seconds"] += short.seconds
        if steady.get("valid"):
            record["gbps_steady"] = steady["gbps"]
            record["gbps"] = steady["gbps"]
    record["gbps_metric"] = "steady" if record.get("gbps_steady") else "stream" if record.get("gbps_stream") else "wall"
    return record


def repeat_runs(record: dict, cfg: SweepConfig, topology: str) -> None:
    """Runs an xeflow point cfg.repeats - 1 more times and makes its GB/s and latencies the medians over all
    runs (each run's numbers stay in `runs`): a 4 GiB stream lasts a fraction of a second, and one run
    varies by ±10% on the H100. A failed repeat fails the point."""
    keys = ("gbps_stream", "gbps_wall", "latency_p50_us", "latency_p99_us", "stream_seconds", "wall_seconds")
    runs = [{**{k: record.get(k) for k in keys}, "digest": run_digest(record.get("raw"))}]
    for _ in range(cfg.repeats - 1):
        child = run_child(xeflow_command(cfg, topology), cfg.timeout)
        stats = parse_json_output(child.stdout)
        nums = xeflow_numbers(stats)
        record["process_seconds"] += child.seconds
        if child.returncode != 0 or nums.get("status") != "completed":
            record["status"] = "timeout" if child.timed_out else "error"
            record["error"] = "repeat: " + (nums.get("error") or child.error or tail(child.stderr, 4) or
                                            f"exit {child.returncode}")
            break
        runs.append({**{k: nums.get(k) for k in keys}, "digest": run_digest(stats)})
    record["runs"] = runs
    for k in keys:
        values = sorted(r[k] for r in runs if r.get(k) is not None)
        if values:
            record[k] = values[len(values) // 2] if len(values) % 2 else (values[len(values) // 2 - 1] + values[len(values) // 2]) / 2


def run_baseline_point(point: Point, cfg: SweepConfig) -> dict:
    """Runs a baseline point and returns its record."""
    record = base_record(point, cfg)
    child = run_child(baseline_command(point, cfg), cfg.timeout)
    doc = parse_json_output(child.stdout)
    record.update(child_fields(child))
    record["raw"] = doc
    if doc:
        record.update({
            "gbps": doc.get("gbps"), "seconds": doc.get("seconds"), "bytes": doc.get("total_bytes"),
            "batches": doc.get("batches"), "latency_p50_us": doc.get("latency_p50_us"),
            "latency_p99_us": doc.get("latency_p99_us"), "latency_mean_us": doc.get("latency_mean_us"),
            "latency_max_us": doc.get("latency_max_us"), "mismatches": doc.get("mismatches"),
            "streams": doc.get("streams"), "device": doc.get("device"),
            "verify_threads_used": doc.get("verify_threads"),
            "cpu_stage_threads_used": doc.get("cpu_stage_threads"),
        })
    if child.timed_out:
        record["status"] = "timeout"
        record["error"] = f"timed out after {cfg.timeout:.0f} s"
    elif child.returncode == 0 and doc:
        record["status"] = "ok"
    else:
        record["status"] = "error"
        record["error"] = child.error or tail(child.stderr, 6) or f"exit {child.returncode}"
    return record


def base_record(point: Point, cfg: SweepConfig) -> dict:
    """The fields every record has: what the point is and how it was configured."""
    return {
        "key": point.key, "kind": point.kind, "contender": point.contender, "label": LABELS[point.contender],
        "shape": point.shape, "shape_label": SHAPE_LABEL[point.shape], "stages": point.stages, "op": point.op,
        "frame_bytes": point.frame_bytes, "size": format_size(point.frame_bytes), "setting": point.setting,
        "coherence": (dict(zip(("catalog", "index", "frames"), coherence_of(point)))
                      if point.contender == XEFLOW else None),
        "requested_bytes": point_bytes(point, cfg),
        "capacity": capacity_for(cfg, point.frame_bytes, point.kind) if point.contender == XEFLOW else None,
        "dataset_frames": dataset_frames_for(cfg, point.frame_bytes, point.kind),
        "dataset_frames_requested": cfg.dataset_frames,
        "verify_threads": LATENCY_THREADS if point.kind == "latency" else cfg.verify_threads,
        "cpu_stage_threads": cfg.cpu_stage_threads if point.shape == "gc" else None,
        "op_params": {"factor": SCALE_FACTOR} if point.op == "scale" else
                     {"iterations": cfg.fma_iterations, "a": FMA_A, "b": FMA_B},
        "started": utc_now(),
    }


def child_fields(child: ChildResult) -> dict:
    """The record's fields about the child process itself."""
    return {"command": shlex.join(child.command), "returncode": child.returncode,
            "process_seconds": child.seconds, "stderr_tail": tail(child.stderr)}


# ---------------------------------------------------------------------------------------------------------
# Run metadata
# ---------------------------------------------------------------------------------------------------------


def git_commit() -> tuple[str | None, bool | None]:
    """HEAD's commit and whether the tree has changes, read-only; (None, None) without git or a checkout."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True,
                                timeout=10)
        if commit.returncode != 0:
            return None, None
        status = subprocess.run(["git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=no"],
                                cwd=REPO_ROOT, capture_output=True, text=True, timeout=30)
        return commit.stdout.strip(), bool(status.stdout.strip()) if status.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None, None


def gpu_description() -> dict | None:
    """The GPU as nvidia-smi describes it (name, driver, memory, PCIe link), or None."""
    query = "name,driver_version,memory.total,pcie.link.gen.max,pcie.link.width.max,clocks.max.sm"
    try:
        r = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"], capture_output=True,
                           text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    if r.returncode != 0 or not r.stdout.strip():
        return None
    fields = [f.strip() for f in r.stdout.strip().splitlines()[0].split(",")]
    names = query.split(",")
    return dict(zip(names, fields))


def cpu_model() -> str | None:
    """The CPU model name from /proc/cpuinfo, or None."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def run_meta(args: argparse.Namespace) -> dict:
    """The stamp of a benchmark program's run (partition_bench, prefetch_bench): device, date, commit, CPU,
    command line and every option (`args.commit` overrides the checkout's commit, for archived builds)."""
    commit, dirty = git_commit()
    gpu = gpu_description()
    return {"device": gpu.get("name") if gpu else None, "gpu": gpu, "date": utc_now(),
            "commit": args.commit or commit, "tree_dirty": dirty if not args.commit else None,
            "cpu": cpu_model(), "command_line": shlex.join([sys.executable] + sys.argv),
            "config": {k: v for k, v in vars(args).items() if k != "func"}}


def make_meta(args: argparse.Namespace, cfg: SweepConfig, skipped: list[str]) -> dict:
    """The sweep file's meta section: device, date, commit, host, command line, configuration, notes."""
    commit, dirty = git_commit()
    gpu = gpu_description()
    return {
        "device": gpu.get("name") if gpu else None,
        "gpu": gpu,
        "date": utc_now(),
        "commit": args.commit or commit,
        "commit_source": "--commit" if args.commit else ("git" if commit else None),
        "tree_dirty": dirty if not args.commit else None,
        "host": socket.gethostname(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "command_line": shlex.join([sys.executable] + sys.argv),
        "tag": args.tag,
        "config": {
            "build": cfg.build, "bytes": cfg.bytes, "ablation_bytes": cfg.ablation_bytes,
            "latency_bytes": cfg.latency_bytes,
            "fma_iterations": cfg.fma_iterations, "scale_factor": SCALE_FACTOR, "fma_a": FMA_A, "fma_b": FMA_B,
            "dataset_frames": cfg.dataset_frames, "verify_threads": cfg.verify_threads,
            "cpu_stage_threads": cfg.cpu_stage_threads, "source_threads": cfg.source_threads,
            "source_class": cfg.source_class, "inflight_bytes": cfg.inflight_bytes,
            "min_capacity": cfg.min_capacity, "max_capacity": cfg.max_capacity, "blocks": cfg.blocks,
            "warps_per_block": cfg.warps_per_block, "executor": cfg.executor, "timeout_s": cfg.timeout,
            "steady": cfg.steady, "steady_fraction": cfg.steady_fraction, "repeats": cfg.repeats,
            "baseline_extra": cfg.baseline_extra, "xeflow_extra": cfg.xeflow_extra,
        },
        "selection": {"shapes": args.shapes, "stages": args.stages, "ops": args.ops, "sizes": args.sizes,
                      "contenders": args.contenders, "ablation": args.ablation,
                      "ablation_sizes": args.ablation_sizes, "part": args.part,
                      "part_minutes": args.part_minutes},
        "notes": NOTES + skipped,
    }


# ---------------------------------------------------------------------------------------------------------
# The live table
# ---------------------------------------------------------------------------------------------------------

LIVE_HEADER = (f"{'contender':<13} {'shape':<7} {'n':>1} {'op':<5} {'size':>6} {'GB/s':>7} {'wall':>7} "
               f"{'p50 us':>8} {'p99 us':>9} {'xf/this':>7}  {'status':<7} {'s':>6}  setting")


def live_row(record: dict, xeflow_gbps: float | None) -> str:
    """One line of the live table for a finished point."""
    gbps = record.get("gbps")
    ratio = xeflow_gbps / gbps if xeflow_gbps and gbps and record["contender"] != XEFLOW else None
    wall = record.get("gbps_wall") if record["contender"] == XEFLOW else None
    row = (f"{record['contender']:<13} {record['shape_label']:<7} {record['stages']:>1} {record['op']:<5} "
           f"{record['size']:>6} {fmt_num(gbps, 2, 7)} {fmt_num(wall, 2, 7)} "
           f"{fmt_num(record.get('latency_p50_us'), 1, 8)} {fmt_num(record.get('latency_p99_us'), 1, 9)} "
           f"{fmt_num(ratio, 2, 7)}  {record['status']:<7} {record.get('process_seconds', 0):6.1f}  "
           f"{record.get('setting') or ''}")
    if record["status"] != "ok" and record.get("error"):
        row += "\n    " + str(record["error"]).replace("\n", "\n    ")
    return row


# ---------------------------------------------------------------------------------------------------------
# `run` and `plan`
# ---------------------------------------------------------------------------------------------------------


def add_selection_args(p: argparse.ArgumentParser) -> None:
    """Options that select the points and fix how they run (shared by `run` and `plan`)."""
    g = p.add_argument_group("selection (every dimension of the sweep)")
    g.add_argument("--shapes", default="g,gc", help="g = C(G)nC, gc = C(GC)n (default: g,gc)")
    g.add_argument("--stages", default=DEFAULT_STAGES, help="n, GPU stages (default: 1,2,3,4)")
    g.add_argument("--ops", default="scale,fma",
                   help="GPU operators: scale (factor 3), fma (a 3, b 1; --fma-iterations); C(GC)n runs scale "
                        "only unless --gc-fma (default: scale,fma)")
    g.add_argument("--sizes", default=DEFAULT_SIZES, help=f"frame/batch sizes (default: {DEFAULT_SIZES})")
    g.add_argument("--contenders", default=",".join(ALL_CONTENDERS),
                   help=f"any of {','.join(ALL_CONTENDERS)} (default: all)")
    g.add_argument("--ablation", choices=["on", "off", "only"], default="on",
                   help="the layered-coherence ablation (xeflow, C(G)1C scale, four settings): on = after the "
                        "main points, off, or only it (default: on)")
    g.add_argument("--ablation-sizes", default=DEFAULT_ABLATION_SIZES,
                   help=f"frame sizes of the ablation (default: {DEFAULT_ABLATION_SIZES})")
    g.add_argument("--latency", choices=["on", "off", "only"], default="on",
                   help="the unloaded-latency points (xeflow, C(G)1C scale, capacity 2, one source and one sink "
                        "thread): on = last, off, or only them (default: on)")
    g.add_argument("--latency-sizes", default="4KiB,16KiB",
                   help="frame sizes of the latency points (default: 4KiB,16KiB)")
    g.add_argument("--gc-fma", action="store_true", help="also run C(GC)n with fma (CPU-bound; off by default)")
    g.add_argument("--part", type=int, default=0,
                   help="run only part K (1-based) of the sweep split by estimated time (see `plan`)")
    g.add_argument("--part-minutes", type=float, default=7.5,
                   help="estimated minutes per part for --part and `plan` (default: 7.5)")
    c = p.add_argument_group("how each point runs")
    c.add_argument("--build", default="build", help="meson build directory with tools/xeflow-run and "
                                                    "apps/baselines/xeflow-baseline (default: build)")
    c.add_argument("--bytes", default="4GiB", help="bytes streamed per point and contender (default: 4GiB; "
                                                  "less only for quick checks, it is recorded)")
    c.add_argument("--ablation-bytes", default=None, help="bytes per ablation point (default: --bytes)")
    c.add_argument("--latency-bytes", default="256MiB",
                   help="bytes per latency point (default: 256MiB: tens of thousands of frames)")
    c.add_argument("--fma-iterations", type=int, default=64, help="fma iterations (default: 64)")
    c.add_argument("--repeats", type=int, default=3,
                   help="runs of each xeflow point; GB/s and latencies are the medians (default: 3)")
    c.add_argument("--dataset-frames", type=int, default=64,
                   help="P, distinct pre-filled frames of the source (default: 64; reduced to gcd(P, capacity) "
                        "where P does not divide the capacity, for every contender of that point)")
    c.add_argument("--verify-threads", type=int, default=12, help="k, verification threads (default: 12)")
    c.add_argument("--cpu-stage-threads", type=int, default=4, help="c, threads of each CPU stage of C(GC)n "
                                                                     "(default: 4)")
    c.add_argument("--source-threads", type=int, default=4,
                   help="xeflow dataset_source threads (default: 4; on the H100 2 threads publishing in place "
                        "capped 16 KiB frames at ~36 GB/s and 4 KiB at ~12)")
    c.add_argument("--source-class", default="dataset_source",
                   help="xeflow source class (default: dataset_source; sequence_source only for checks on a "
                        "build without it: the verify sink then runs mode exact)")
    c.add_argument("--inflight", default="64MiB",
                   help="bytes in flight per xeflow topic (default: 64MiB: on the H100 at 64 KiB-1 MiB, 256 MiB in "
                        "flight took the verify sink 3x the CPU time per frame and streamed 24-38 GB/s against "
                        "37.5-40.1 with 64 MiB; see bench/README.md)")
    c.add_argument("--min-capacity", type=int, default=64,
                   help="least topic capacity in frames (default: 64: the topic should hold about 4x the work "
                        "items the kernel's blocks hold, so the source keeps ahead of them; on the H100 4 MiB "
                        "frames streamed 15.7 GB/s with capacity 16 and 40.6 with 64)")
    c.add_argument("--max-capacity", type=int, default=4096, help="largest topic capacity (default: 4096)")
    c.add_argument("--blocks", type=int, default=0, help="xeflow runtime.blocks (default: 0 = automatic)")
    c.add_argument("--warps-per-block", type=int, default=8, help="xeflow runtime.warps_per_block (default: 8)")
    c.add_argument("--executor", choices=["device", "host", "auto"], default="device",
                   help="xeflow runtime.executor (default: device; host only to check the driver without a GPU)")
    c.add_argument("--timeout", type=float, default=120, help="seconds per child process (default: 120)")
    c.add_argument("--steady", dest="steady", action="store_true", default=False,
                   help="also make the short second run for the (biased) 'steady' rate (default: off)")
    c.add_argument("--no-steady", dest="steady", action="store_false",
                   help="skip xeflow's short run (then only the wall-clock rate is measured)")
    c.add_argument("--steady-fraction", type=int, default=8,
                   help="the short run streams 1/F of the main run's bytes (default: 8)")
    c.add_argument("--baseline-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for every xeflow-baseline command (repeatable)")
    c.add_argument("--xeflow-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for every xeflow-run command (repeatable, e.g. --xeflow-arg=--set "
                        "--xeflow-arg=runtime.watchdog_ms=30000)")


def config_from_args(args: argparse.Namespace, out: str) -> SweepConfig:
    """The SweepConfig of parsed `run`/`plan` arguments (raises ValueError for bad values)."""
    total = parse_size(args.bytes)
    cfg = SweepConfig(
        build=args.build, out=out, bytes=total,
        ablation_bytes=parse_size(args.ablation_bytes) if args.ablation_bytes else total,
        latency_bytes=parse_size(args.latency_bytes),
        fma_iterations=args.fma_iterations, dataset_frames=args.dataset_frames,
        verify_threads=args.verify_threads, cpu_stage_threads=args.cpu_stage_threads,
        source_threads=args.source_threads, source_class=args.source_class,
        inflight_bytes=parse_size(args.inflight), min_capacity=args.min_capacity, max_capacity=args.max_capacity,
        blocks=args.blocks, warps_per_block=args.warps_per_block, executor=args.executor, timeout=args.timeout,
        steady=args.steady, steady_fraction=args.steady_fraction, repeats=args.repeats,
        baseline_extra=args.baseline_arg,
        xeflow_extra=args.xeflow_arg)
    if cfg.dataset_frames < 1 or cfg.verify_threads < 1 or cfg.cpu_stage_threads < 1 or cfg.source_threads < 1:
        raise ValueError("--dataset-frames and the thread counts must be at least 1")
    if cfg.min_capacity < 1 or cfg.max_capacity < cfg.min_capacity:
        raise ValueError("need 1 <= --min-capacity <= --max-capacity")
    if cfg.repeats < 1:
        raise ValueError("--repeats must be at least 1")
    if cfg.steady_fraction < 2:
        raise ValueError("--steady-fraction must be at least 2")
    return cfg


def points_from_args(args: argparse.Namespace) -> tuple[list[Point], list[str]]:
    """The selected points (before --part) and the notes about combinations left out."""
    shapes = parse_list(args.shapes)
    ops = parse_list(args.ops)
    contenders = parse_list(args.contenders)
    for s in shapes:
        if s not in SHAPE_LABEL:
            raise ValueError(f"--shapes: unknown shape {s!r} (g, gc)")
    for o in ops:
        if o not in ("scale", "fma"):
            raise ValueError(f"--ops: unknown op {o!r} (scale, fma)")
    for c in contenders:
        if c not in ALL_CONTENDERS:
            raise ValueError(f"--contenders: unknown contender {c!r} ({', '.join(ALL_CONTENDERS)})")
    stages = parse_list(args.stages, int)
    for n in stages:
        if not 1 <= n <= 4:
            raise ValueError("--stages: n must be 1..4")
    sizes = parse_list(args.sizes, parse_size)
    ablation_sizes = parse_list(args.ablation_sizes, parse_size)
    latency_sizes = parse_list(args.latency_sizes, parse_size)
    for s in sizes + ablation_sizes + latency_sizes:
        if s <= 0 or s % (4 * KiB):
            raise ValueError(f"size {s} is not a positive multiple of 4 KiB")
    # Canonical order whatever the command line says, so that --part is stable.
    contenders = [c for c in ALL_CONTENDERS if c in contenders]
    points, skipped = select_points([s for s in ("g", "gc") if s in shapes], sorted(set(stages)),
                                    [o for o in ("scale", "fma") if o in ops], sorted(set(sizes)), contenders,
                                    args.ablation, sorted(set(ablation_sizes)), args.gc_fma,
                                    sorted(set(latency_sizes)) if args.latency != "off" else [])
    if args.latency == "only":
        points = [p for p in points if p.kind == "latency"]
    elif args.ablation == "only":
        points = [p for p in points if p.kind == "ablation"]
    return points, skipped


def load_done(directories: list[str]) -> dict[str, dict]:
    """Records with status ok from every sweep-*.json under the directories, by point key."""
    done: dict[str, dict] = {}
    for d in directories:
        for path in sorted(glob.glob(os.path.join(d, "**", "sweep-*.json"), recursive=True)):
            try:
                with open(path, encoding="utf-8") as f:
                    doc = json.load(f)
            except (OSError, json.JSONDecodeError):
                continue
            for r in (doc.get("points") or []) + (doc.get("ablation") or []):
                if r.get("status") == "ok" and r.get("key"):
                    done[r["key"]] = r
    return done


def cmd_run(args: argparse.Namespace) -> int:
    """`run`: runs the selected points (or prints their commands) and writes OUT/sweep-<tag>.json."""
    if not args.out:
        # A dry run writes its topologies where they bother nobody; a real run keeps them with its results.
        args.out = tempfile.mkdtemp(prefix="stream_bench-") if args.dry_run else "bench/results"
    try:
        cfg = config_from_args(args, args.out)
        points, skipped = points_from_args(args)
    except ValueError as e:
        print(f"stream_bench: error: {e}", file=sys.stderr)
        return 2
    if args.part:
        parts = partition(points, cfg, args.part_minutes * 60)
        if not 1 <= args.part <= len(parts):
            print(f"stream_bench: error: --part {args.part}: the sweep has {len(parts)} parts of "
                  f"{args.part_minutes} estimated minutes", file=sys.stderr)
            return 2
        points = parts[args.part - 1]
    done = load_done(args.skip_done) if args.skip_done else {}
    todo = [p for p in points if p.key not in done]
    if done:
        print(f"skipping {len(points) - len(todo)} point(s) already recorded with status ok")
    if not args.tag:
        args.tag = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    os.makedirs(cfg.out, exist_ok=True)

    if args.dry_run:
        return dry_run(todo, cfg, args, skipped)

    for tool in (os.path.join(cfg.build, "tools", "xeflow-run"),
                 os.path.join(cfg.build, "apps", "baselines", "xeflow-baseline")):
        if not os.access(tool, os.X_OK):
            print(f"stream_bench: warning: {tool} is not there or not executable (points using it will fail)",
                  file=sys.stderr)

    if args.ceiling == "on" and todo:
        run_ceiling(cfg, args)

    path = os.path.join(cfg.out, f"sweep-{args.tag}.json")
    suffix = 2
    while os.path.exists(path):
        path = os.path.join(cfg.out, f"sweep-{args.tag}-{suffix}.json")
        suffix += 1
    meta = make_meta(args, cfg, skipped)
    doc: dict[str, Any] = {"meta": meta, "points": [], "ablation": [], "not_run": []}
    total_est = sum(estimate_seconds(p, cfg) for p in todo)
    print(f"{len(todo)} point(s), estimated {total_est / 60:.1f} min; results in {path}")
    print(f"device: {meta['device'] or 'unknown (nvidia-smi gave nothing)'}; commit: {meta['commit'] or 'unknown'}")
    print(LIVE_HEADER, flush=True)

    xeflow_by_group: dict[tuple, float] = {}
    for r in done.values():
        if r["contender"] == XEFLOW and r["kind"] == "main" and r.get("gbps"):
            xeflow_by_group[(r["shape"], r["stages"], r["op"], r["frame_bytes"])] = r["gbps"]
    start = time.monotonic()
    ratios: list[float] = []  # actual / estimated seconds of finished points, to correct the budget guard
    for point in todo:
        est = estimate_seconds(point, cfg)
        if args.time_budget:
            correction = min(4.0, max(1.0, sorted(ratios)[len(ratios) // 2])) if ratios else 1.0
            if time.monotonic() - start + 1.5 * est * correction > args.time_budget * 60:
                doc["not_run"].append({"key": point.key, "point": point.describe(),
                                       "why": "time budget", "estimated_seconds": est})
                write_json_atomic(path, doc)
                continue
        if point.contender == XEFLOW:
            record = run_xeflow_point(point, cfg)
        else:
            record = run_baseline_point(point, cfg)
        record["finished"] = utc_now()
        record["estimated_seconds"] = est
        if est > 0 and record.get("process_seconds"):
            ratios.append(record["process_seconds"] / est)
        if point.contender == XEFLOW and point.kind == "main" and record.get("status") == "ok":
            xeflow_by_group[point.group] = record.get("gbps")
        if not meta["device"] and record.get("device"):
            meta["device"] = record["device"]
            meta["device_source"] = "xeflow-baseline"
        (doc["ablation"] if point.kind == "ablation" else doc["points"]).append(record)
        doc["meta"]["elapsed_seconds"] = time.monotonic() - start
        write_json_atomic(path, doc)
        print(live_row(record, xeflow_by_group.get(point.group) if point.kind == "main" else None), flush=True)
    doc["meta"]["finished"] = utc_now()
    doc["meta"]["elapsed_seconds"] = time.monotonic() - start
    write_json_atomic(path, doc)
    bad = [r for r in doc["points"] + doc["ablation"] if r.get("status") != "ok"]
    print(f"\n{len(doc['points']) + len(doc['ablation'])} point(s) run in "
          f"{(time.monotonic() - start) / 60:.1f} min, {len(bad)} failed or timed out, "
          f"{len(doc['not_run'])} left for a later run (time budget); wrote {path}")
    if doc["not_run"]:
        print("run the same command again with --skip-done pointing at this directory to finish them")
    return 0


def ceiling_tool(cfg: SweepConfig) -> str:
    return os.path.join(cfg.build, "bench", "link_ceiling", "xeflow-ceiling")


def run_ceiling(cfg: SweepConfig, args: argparse.Namespace) -> None:
    """Measures the link ceilings on this machine (xeflow-ceiling) into OUT/ceiling-<tag>.json, so the report
    can set each contender against what the machine allows in the same run. A failure only warns."""
    tool = ceiling_tool(cfg)
    if not os.access(tool, os.X_OK):
        print(f"stream_bench: warning: {tool} is not there (a build without CUDA?): no ceilings measured",
              file=sys.stderr)
        return
    out = os.path.join(cfg.out, f"ceiling-{args.tag}.json")
    cmd = [tool, "--json", out]
    if args.commit:
        cmd += ["--commit", args.commit]
    print("link ceilings: " + " ".join(cmd), flush=True)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=CEILING_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        print(f"stream_bench: warning: xeflow-ceiling ran past {CEILING_TIMEOUT_S} s: no ceilings measured",
              file=sys.stderr)
        return
    print(done.stdout.rstrip(), flush=True)
    if done.returncode != 0:
        print(f"stream_bench: warning: xeflow-ceiling exited {done.returncode}: {done.stderr.strip()[-400:]}",
              file=sys.stderr)


def dry_run(points: list[Point], cfg: SweepConfig, args: argparse.Namespace, skipped: list[str]) -> int:
    """Prints the commands of the points (writing their topologies), optionally validating each topology."""
    print(f"# generated topologies are written under {os.path.join(cfg.out, 'topologies')}")
    for note in skipped:
        print(f"# {note}")
    total = 0.0
    validated = failed = 0
    for p in points:
        est = estimate_seconds(p, cfg)
        total += est
        longest = longest_child_seconds(p, cfg)
        warn = f"; WARNING: expected to need {longest:.0f} s, --timeout is {cfg.timeout:g}" \
            if longest > 0.8 * cfg.timeout else ""
        print(f"# {p.describe()}  (estimated {est:.1f} s{warn})")
        if p.contender == XEFLOW:
            topology = write_topology(p, cfg)
            print(shlex.join(xeflow_command(cfg, topology)))
            short = short_run_bytes(p, cfg)
            if short is not None:
                print(shlex.join(xeflow_command(cfg, topology, short)))
            if args.validate:
                validated += 1
                tool = os.path.join(cfg.build, "tools", "xeflow-run")
                r = run_child([tool, topology, "--validate"], 60)
                if r.returncode != 0:
                    failed += 1
                    print(f"# VALIDATION FAILED ({r.returncode}): {r.stdout.strip()} {r.stderr.strip()}")
        else:
            print(shlex.join(baseline_command(p, cfg)))
    print(f"# {len(points)} point(s), estimated {total / 60:.1f} min")
    if args.validate:
        print(f"# validated {validated} topology file(s) with {cfg.build}/tools/xeflow-run --validate: "
              f"{validated - failed} ok, {failed} failed")
        return 1 if failed else 0
    return 0


def selection_argv(args: argparse.Namespace, parser_defaults: dict[str, Any]) -> list[str]:
    """The selection and configuration options of parsed arguments that differ from their defaults,
    spelled out for a `run` command (so `run --part K` selects what `plan` partitioned)."""
    argv: list[str] = []
    for name in ("shapes", "stages", "ops", "sizes", "contenders", "ablation", "ablation_sizes", "latency",
                 "latency_sizes", "bytes", "ablation_bytes", "latency_bytes", "fma_iterations", "dataset_frames", "verify_threads", "cpu_stage_threads",
                 "source_threads", "source_class", "inflight", "min_capacity", "max_capacity", "blocks",
                 "warps_per_block", "executor", "steady_fraction", "repeats", "part_minutes"):
        value = getattr(args, name)
        if value != parser_defaults.get(name):
            argv += ["--" + name.replace("_", "-"), f"{value:g}" if isinstance(value, float) else str(value)]
    if args.gc_fma:
        argv.append("--gc-fma")
    if not args.steady:
        argv.append("--no-steady")
    argv += [f"--baseline-arg={a}" for a in args.baseline_arg]
    argv += [f"--xeflow-arg={a}" for a in args.xeflow_arg]
    return argv


def describe_part(part: list[Point], contenders: list[str]) -> list[str]:
    """Lines naming a part's points compactly: per shape/op/n and set of contenders, the sizes."""
    rows: dict[tuple[str, str], list[str]] = {}
    for panel, who, size in _part_entries(part):
        if who == tuple(contenders):
            label = "all contenders"
        elif who == tuple(c for c in contenders if c != XEFLOW):
            label = "all baselines"
        elif who == tuple(name for name, _ in ABLATION_SETTINGS):
            label = "all four settings"
        else:
            label = ", ".join(who)
        rows.setdefault((panel, label), []).append(size)
    return [f"{panel} [{label}]: {' '.join(sizes)}" for (panel, label), sizes in rows.items()]


def _part_entries(part: list[Point]) -> list[tuple[str, tuple[str, ...], str]]:
    """(panel, contenders or settings, size) of a part, in order."""
    by: dict[tuple[str, str], list[str]] = {}
    for p in part:
        if p.kind == "ablation":
            panel, who = "ablation C(G)1C scale", p.setting
        elif p.kind == "latency":
            panel, who = "unloaded latency C(G)1C scale", p.contender
        else:
            panel, who = f"{SHAPE_LABEL[p.shape].replace('n', str(p.stages))} {p.op}", p.contender
        by.setdefault((panel, format_size(p.frame_bytes)), []).append(who)
    return [(panel, tuple(who), size) for (panel, size), who in by.items()]


def cmd_plan(args: argparse.Namespace) -> int:
    """`plan`: estimated time of every point and the sweep split into parts, with each part's command."""
    try:
        cfg = config_from_args(args, args.out)
        points, skipped = points_from_args(args)
    except ValueError as e:
        print(f"stream_bench: error: {e}", file=sys.stderr)
        return 2
    parts = partition(points, cfg, args.part_minutes * 60)
    total = sum(estimate_seconds(p, cfg, capped=False) for p in points)
    print(f"{len(points)} points, estimated {total / 60:.1f} min in all, {len(parts)} part(s) of at most "
          f"{args.part_minutes:g} estimated min.\nEstimates: the GB/s the recorded H100 sweeps measured "
          f"(EXPECTED_GBPS) plus {PROCESS_OVERHEAD_S:g} s per process. Each part's "
          f"--time-budget stops it before a point that would not fit; --timeout is raised where a point "
          f"is expected to need more than {cfg.timeout:g} s.")
    for note in skipped:
        print(f"  note: {note}")
    prefix = ["python3", "bench/stream_bench.py", "run", "--build", args.build, "--out", args.out]
    for k, part in enumerate(parts, 1):
        est = sum(estimate_seconds(p, cfg, capped=False) for p in part)
        longest = max(longest_child_seconds(p, cfg) for p in part)
        timeout = cfg.timeout if 1.5 * longest <= cfg.timeout else 30 * math.ceil(1.5 * longest / 30)
        print(f"\npart {k}: {len(part)} points, estimated {est / 60:.1f} min, longest child {longest:.0f} s")
        for line in describe_part(part, [c for c in ALL_CONTENDERS if c in parse_list(args.contenders)]):
            print(f"  {line}")
        cmd = prefix + selection_argv(args, args.parser_defaults) + ["--part", str(k), "--tag", f"part{k}",
                                                                     "--time-budget", f"{args.part_minutes + 1:g}"]
        if timeout != cfg.timeout or args.timeout != args.parser_defaults["timeout"]:
            cmd += ["--timeout", f"{timeout:g}"]
        print("  " + " ".join(shlex.quote(c) if c != "$OUT" else c for c in cmd))
    return 0


# ---------------------------------------------------------------------------------------------------------
# `report`
# ---------------------------------------------------------------------------------------------------------


def json_files(directory: str, pattern: str) -> Iterable[tuple[str, dict]]:
    """(path, document) of every JSON file matching `pattern` under `directory` (recursive, sorted); an
    unreadable one is skipped with a warning."""
    for path in sorted(glob.glob(os.path.join(directory, "**", pattern), recursive=True)):
        try:
            with open(path, encoding="utf-8") as f:
                yield path, json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            print(f"warning: skipping {path}: {e}", file=sys.stderr)


def load_results(directory: str) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    """Metas, main, ablation and latency records of every sweep-*.json under `directory` (recursive).

    A point measured more than once keeps its latest record with status ok (else its latest record)."""
    metas: list[dict] = []
    chosen: dict[str, dict] = {}
    for path, doc in json_files(directory, "sweep-*.json"):
        meta = dict(doc.get("meta") or {})
        meta["file"] = os.path.relpath(path, directory)
        metas.append(meta)
        for r in (doc.get("points") or []) + (doc.get("ablation") or []):
            key = r.get("key")
            if not key:
                continue
            r = dict(r, source_file=meta["file"])
            old = chosen.get(key)
            better = old is None or \
                (r.get("status") == "ok") > (old.get("status") == "ok") or \
                ((r.get("status") == "ok") == (old.get("status") == "ok") and
                 str(r.get("finished", "")) >= str(old.get("finished", "")))
            if better:
                chosen[key] = r
    main = [r for r in chosen.values() if r.get("kind") == "main"]
    ablation = [r for r in chosen.values() if r.get("kind") == "ablation"]
    latency = [r for r in chosen.values() if r.get("kind") == "latency"]
    return metas, main, ablation, latency


def load_ceilings(directory: str) -> dict[str, list[dict]]:
    """The link ceilings of every ceiling*.json under `directory` (recursive): measurement name -> one entry
    per file ({gbps, file, device, date}), in file order."""
    found: dict[str, list[dict]] = {}
    for path, doc in json_files(directory, "ceiling*.json"):
        for r in doc.get("results") or []:
            if r.get("name") and r.get("gbps") is not None:
                found.setdefault(r["name"], []).append(
                    {"gbps": r["gbps"], "file": os.path.relpath(path, directory), "device": doc.get("device"),
                     "date": doc.get("date")})
    return found


def ceiling_gbps(ceilings: dict[str, list[dict]], name: str) -> float | None:
    """The median over the files of one ceiling measurement, or None."""
    values = sorted(e["gbps"] for e in ceilings.get(name, []))
    return statistics.median(values) if values else None


def print_ceilings(ceilings: dict[str, list[dict]]) -> None:
    """Prints the link ceilings measured beside the sweep."""
    if not ceilings:
        print("\nLink ceilings: none measured (bench/link_ceiling; `run --ceiling on`)")
        return
    files = sorted({e["file"] for entries in ceilings.values() for e in entries})
    print(f"\nLink ceilings on the same machine (xeflow-ceiling; GB/s, one column per run: {', '.join(files)})")
    for name, entries in ceilings.items():
        print(f"  {name:<28}" + "".join(f"{e['gbps']:>9.2f}" for e in entries))


def xeflow_gbps(record: dict, metric: str) -> float | None:
    """xeflow's GB/s of a record under the report's metric: stream, steady, wall, or auto (stream when the
    run reported its stream window, else steady when valid, else wall)."""
    if record.get("status") != "ok":
        return None
    if metric == "wall":
        return record.get("gbps_wall")
    if metric == "steady":
        return record.get("gbps_steady")
    if metric == "stream":
        return record.get("gbps_stream")
    return record.get("gbps_stream") or record.get("gbps_steady") or record.get("gbps_wall")


def gbps_of(record: dict | None, metric: str) -> float | None:
    """GB/s of any record (xeflow under `metric`); None when missing or not ok."""
    if not record or record.get("status") != "ok":
        return None
    return xeflow_gbps(record, metric) if record["contender"] == XEFLOW else record.get("gbps")


class Results:
    """The merged records, indexed by (contender, shape, n, op, size), with C(GC)1 aliased to C(G)1C."""

    def __init__(self, main: list[dict], ablation: list[dict], metric: str, latency: list[dict] | None = None):
        self.metric = metric
        self.latency = sorted(latency or [], key=lambda r: r["frame_bytes"])
        self.by_point: dict[tuple, dict] = {}
        for r in main:
            self.by_point[(r["contender"], r["shape"], r["stages"], r["op"], r["frame_bytes"])] = r
        self.ablation = ablation
        self.sizes = sorted({r["frame_bytes"] for r in main})
        self.contenders = [c for c in ALL_CONTENDERS if any(r["contender"] == c for r in main)]
        panels = {(r["shape"], r["op"], r["stages"]) for r in main}
        # C(GC)1 is C(G)1C: show it in the C(GC)n panels when C(GC)2.. were run and C(GC)1 was not.
        for (shape, op, n) in list(panels):
            if shape == "gc" and ("gc", op, 1) not in panels and ("g", op, 1) in panels:
                panels.add(("gc", op, 1))
        self.panels = sorted(panels, key=lambda k: (k[0] != "g", k[1] != "scale", k[2]))

    def get(self, contender: str, shape: str, n: int, op: str, size: int) -> dict | None:
        """The record of a point (C(GC)1 falls back on C(G)1C)."""
        r = self.by_point.get((contender, shape, n, op, size))
        if r is None and shape == "gc" and n == 1:
            r = self.by_point.get((contender, "g", 1, op, size))
        return r

    def gbps(self, contender: str, shape: str, n: int, op: str, size: int) -> float | None:
        """GB/s of a point, or None."""
        return gbps_of(self.get(contender, shape, n, op, size), self.metric)

    def best_baseline(self, shape: str, n: int, op: str, size: int) -> tuple[str | None, float | None]:
        """The fastest baseline of a point (name, GB/s), or (None, None)."""
        best: tuple[str | None, float | None] = (None, None)
        for c in self.contenders:
            if c == XEFLOW:
                continue
            g = self.gbps(c, shape, n, op, size)
            if g is not None and (best[1] is None or g > best[1]):
                best = (c, g)
        return best


def panel_name(shape: str, op: str, n: int) -> str:
    """'C(G)2C fma', 'C(GC)3 scale'."""
    return f"{SHAPE_LABEL[shape].replace('n', str(n))} {op}"


def ratio(a: float | None, b: float | None) -> float | None:
    """a / b, or None."""
    return a / b if a is not None and b else None


def build_rows(res: Results) -> list[dict]:
    """One row per (panel, size): every contender's numbers and xeflow's ratios to each and to the best."""
    rows = []
    for shape, op, n in res.panels:
        for size in res.sizes:
            xf = res.gbps(XEFLOW, shape, n, op, size)
            row: dict[str, Any] = {"shape": shape, "shape_label": SHAPE_LABEL[shape], "stages": n, "op": op,
                                   "frame_bytes": size, "size": format_size(size), "contenders": {}}
            for c in res.contenders:
                r = res.get(c, shape, n, op, size)
                g = gbps_of(r, res.metric)
                entry = {"gbps": g, "status": r.get("status") if r else "missing",
                         "latency_p50_us": r.get("latency_p50_us") if r else None,
                         "latency_p99_us": r.get("latency_p99_us") if r else None}
                if c == XEFLOW and r:
                    entry.update({"gbps_wall": r.get("gbps_wall"), "gbps_steady": r.get("gbps_steady"),
                                  "transfer": transfer_of(r), "capacity": r.get("capacity"), "blocks": r.get("blocks"),
                                  "breakdown": r.get("breakdown"), "verify_counters": r.get("verify_counters")})
                else:
                    entry["xeflow_ratio"] = ratio(xf, g)
                if r and r.get("status") != "ok":
                    entry["error"] = r.get("error")
                row["contenders"][c] = entry
            best, best_g = res.best_baseline(shape, n, op, size)
            row.update({"xeflow_gbps": xf, "best_baseline": best, "best_baseline_gbps": best_g,
                        "xeflow_over_best": ratio(xf, best_g)})
            if any(e["status"] != "missing" for e in row["contenders"].values()):
                rows.append(row)
    return rows


def print_tables(res: Results, rows: list[dict]) -> None:
    """The throughput tables (GB/s and xeflow's ratio to each contender), latency tables and breakdowns."""
    print(f"\nThroughput, GB/s of input streamed (xeflow: {res.metric} metric); "
          f"in brackets xeflow / contender")
    for shape, op, n in res.panels:
        prow = [r for r in rows if (r["shape"], r["op"], r["stages"]) == (shape, op, n)]
        if not prow:
            continue
        print(f"\n{panel_name(shape, op, n)}")
        print(f"{'size':>6}" + "".join(f"{LABELS[c]:>17}" for c in res.contenders) +
              f"{'best baseline':>24}{'xf/best':>9}")
        for r in prow:
            cells = []
            for c in res.contenders:
                e = r["contenders"][c]
                if e["gbps"] is None:
                    cells.append(f"{'(' + e['status'] + ')':>17}")
                elif c == XEFLOW:
                    cells.append(f"{e['gbps']:17.2f}")
                else:
                    cells.append(f"{e['gbps']:8.2f} ({fmt_num(e.get('xeflow_ratio'), 1)}x)".rjust(17))
            best = f"{LABELS[r['best_baseline']]} {r['best_baseline_gbps']:.2f}" if r["best_baseline"] else "-"
            xb = r["xeflow_over_best"]
            xb_text = f"{xb:8.2f}x" if xb is not None else f"{'-':>9}"
            print(f"{r['size']:>6}" + "".join(cells) + f"{best:>24}" + xb_text)
    print("\nLatency per frame/batch, p50 / p99 us")
    for shape, op, n in res.panels:
        prow = [r for r in rows if (r["shape"], r["op"], r["stages"]) == (shape, op, n)]
        if not prow:
            continue
        print(f"\n{panel_name(shape, op, n)}")
        print(f"{'size':>6}" + "".join(f"{LABELS[c]:>19}" for c in res.contenders))
        for r in prow:
            cells = []
            for c in res.contenders:
                e = r["contenders"][c]
                cells.append((f"{fmt_num(e['latency_p50_us'], 1)} / {fmt_num(e['latency_p99_us'], 1)}"
                              if e["gbps"] is not None else "-").rjust(19))
            print(f"{r['size']:>6}" + "".join(cells))
    wall_vs_steady = [(r, r["contenders"][XEFLOW]) for r in rows if XEFLOW in r["contenders"]]
    if any(e.get("gbps_wall") for _, e in wall_vs_steady):
        print("\nxeflow: wall-clock GB/s (setup and teardown included) against steady-state GB/s")
        print(f"{'point':<22}{'size':>7}{'wall':>9}{'steady':>9}{'capacity':>9}{'blocks':>8}")
        for r, e in wall_vs_steady:
            if e.get("gbps_wall") is None:
                continue
            print(f"{panel_name(r['shape'], r['op'], r['stages']):<22}{r['size']:>7}{fmt_num(e.get('gbps_wall'), 2, 9)}"
                  f"{fmt_num(e.get('gbps_steady'), 2, 9)}{str(e.get('capacity') or '-'):>9}"
                  f"{str(e.get('blocks') or '-'):>8}")


def breakdown_rows(res: Results) -> list[dict]:
    """xeflow's round-time breakdown (Fig. 11) per point that has a kernel section."""
    out = []
    for shape, op, n in res.panels:
        for size in res.sizes:
            r = res.by_point.get((XEFLOW, shape, n, op, size))
            if r and r.get("breakdown"):
                b = r["breakdown"]
                k = r.get("kernel") or {}
                out.append({"shape": shape, "stages": n, "op": op, "frame_bytes": size, "size": format_size(size),
                            "blocks": k.get("blocks"), "warps_per_block": k.get("warps_per_block"),
                            "rounds": k.get("rounds"), "busy_rounds": k.get("busy_rounds"), **b})
    return out


def print_breakdown(rows: list[dict]) -> None:
    """Prints the breakdown table."""
    if not rows:
        print("\nRound-time breakdown: no xeflow point with a kernel section (device executor) in the results")
        return
    print("\nxeflow round-time breakdown: % of busy time per phase; idle as % of all time")
    print(f"{'point':<22}{'size':>7}{'blocks':>8}{'rounds':>13}{'busy':>12}{'subscr.':>9}{'sched.':>8}"
          f"{'compute':>9}{'publish':>9}{'idle':>7}")
    for b in rows:
        pct = lambda v: fmt_num(100 * v if v is not None else None, 2)  # noqa: E731
        print(f"{panel_name(b['shape'], b['op'], b['stages']):<22}{b['size']:>7}{str(b['blocks']):>8}"
              f"{str(b['rounds']):>13}{str(b['busy_rounds']):>12}{pct(b['subscribe_share']):>9}"
              f"{pct(b['schedule_share']):>8}{pct(b['compute_share']):>9}{pct(b['publish_share']):>9}"
              f"{pct(b['idle_share_of_all']):>7}")


def find_fault_counters(doc: Any, prefix: str = "") -> dict[str, float]:
    """Numeric fields whose name mentions faults or migrations anywhere in a stats document (for the
    ablation, should xeflow-run report them)."""
    found: dict[str, float] = {}
    if isinstance(doc, dict):
        for k, v in doc.items():
            name = f"{prefix}.{k}" if prefix else str(k)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and re.search(r"fault|migrat", str(k), re.I):
                found[name] = v
            elif isinstance(v, (dict, list)):
                found.update(find_fault_counters(v, name))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            label = v.get("name", i) if isinstance(v, dict) else i
            found.update(find_fault_counters(v, f"{prefix}[{label}]"))
    return found


def ablation_rows(res: Results) -> list[dict]:
    """The ablation's rows: per size and setting, GB/s, gain over all-naive, latency, faults if reported."""
    rows = []
    sizes = sorted({r["frame_bytes"] for r in res.ablation})
    order = [name for name, _ in ABLATION_SETTINGS]
    for size in sizes:
        base = None
        for name in order:
            r = next((x for x in res.ablation if x["frame_bytes"] == size and x.get("setting") == name), None)
            g = xeflow_gbps(r, res.metric) if r else None
            status = r.get("status") if r else "missing"
            if r and g is None and r.get("status") == "timeout" and r.get("gbps_wall"):
                # xeflow-run drained and reported what it had streamed when the timeout interrupted it.
                g = r["gbps_wall"]
                status = f"timeout: partial, {(r.get('bytes') or 0) / 1e9:.2f} GB streamed"
            if name == "all-naive":
                base = g
            faults = find_fault_counters(r.get("raw")) if r else {}
            rows.append({"frame_bytes": size, "size": format_size(size), "setting": name,
                         "coherence": r.get("coherence") if r else None,
                         "status": status, "gbps": g,
                         "gbps_wall": r.get("gbps_wall") if r else None,
                         "gain_over_naive": ratio(g, base), "latency_p50_us": r.get("latency_p50_us") if r else None,
                         "fault_counters": faults or None,
                         "error": r.get("error") if r and r.get("status") != "ok" else None})
    return rows


def latency_rows(res: Results) -> list[dict]:
    """The unloaded-latency points: per size, p50/p99 from the source's publish to the sink's delivery."""
    return [{"size": r["size"], "frame_bytes": r["frame_bytes"], "capacity": r.get("capacity"),
             "latency_p50_us": r.get("latency_p50_us"), "latency_p99_us": r.get("latency_p99_us"),
             "frames": r.get("latency_frames"), "gbps": xeflow_gbps(r, res.metric), "status": r.get("status")}
            for r in res.latency]


def print_latency(rows: list[dict]) -> None:
    """Prints the unloaded-latency table."""
    if not rows:
        return
    print("\nUnloaded per-frame latency (xeflow, C(G)1C scale, capacity 2, one source and one sink thread)")
    print(f"{'size':>7} {'p50 us':>9} {'p99 us':>9} {'frames':>9} {'GB/s':>7}  status")
    for r in rows:
        print(f"{r['size']:>7} {fmt_num(r['latency_p50_us'], 1, 9)} {fmt_num(r['latency_p99_us'], 1, 9)} "
              f"{r['frames'] if r['frames'] is not None else '-':>9} {fmt_num(r['gbps'], 2, 7)}  {r['status']}")


def print_ablation(rows: list[dict]) -> None:
    """Prints the ablation table."""
    if not rows:
        print("\nLayered-coherence ablation: no points in the results")
        return
    print("\nLayered-coherence ablation (xeflow, C(G)1C scale): GB/s, gain over all-naive, p50 latency")
    print(f"{'size':>7}{'setting':>11}{'GB/s':>9}{'gain':>8}{'p50 us':>9}  status / faults")
    for r in rows:
        faults = ", ".join(f"{k}={v:g}" for k, v in (r["fault_counters"] or {}).items())
        print(f"{r['size']:>7}{r['setting']:>11}{fmt_num(r['gbps'], 2, 9)}{fmt_num(r['gain_over_naive'], 2, 7)}x"
              f"{fmt_num(r['latency_p50_us'], 1, 9)}  {r['status']}{'  ' + faults if faults else ''}"
              f"{'  ' + str(r['error'])[:80] if r['error'] else ''}")


def transfer_of(record: dict | None) -> str | None:
    """How an xeflow run's frames crossed PCIe: "dma" when the copy engines carried a topic (its stats
    name `copy_engines`), else "mapped"; None without stats."""
    topics = ((record or {}).get("raw") or {}).get("topics")
    if not topics:
        return None
    return "dma" if any("copy_engines" in t for t in topics) else "mapped"


def check_targets(res: Results, ceilings: dict[str, list[dict]] | None = None) -> list[dict]:
    """The issue's targets on the headline pipeline C(G)1C scale (and C(G)nC at 16 KiB for the drop),
    each with PASS, FAIL or MISSING and the measured values. With the link ceilings, the 39 GB/s lines
    also say what the machine allowed, and a line per size sets xeflow against the zero-copy ceiling."""
    zero_copy = ceiling_gbps(ceilings or {}, "zero-copy")
    copy_engines = ceiling_gbps(ceilings or {}, "copy-engines")
    # A verifying sink reads every delivered byte from host memory while the stream crosses PCIe: the
    # ceilings measured under that load are the ones a verified stream can reach (older ceiling files lack
    # them; the unloaded ones stand in).
    zero_copy_loaded = ceiling_gbps(ceilings or {}, "zero-copy-under-host-read")
    copy_engines_loaded = ceiling_gbps(ceilings or {}, "copy-engines-under-host-read")
    shape, n, op = "g", 1, "scale"
    targets: list[dict] = []

    def add(name: str, ok: bool | None, measured: str) -> None:
        targets.append({"target": name, "result": "MISSING" if ok is None else ("PASS" if ok else "FAIL"),
                        "measured": measured})

    def xf(size: int, s: str = shape, stages: int = n, o: str = op) -> float | None:
        return res.gbps(XEFLOW, s, stages, o, size)

    g4 = xf(4 * KiB)
    add("C(G)1C scale 4KiB >= 15 GB/s", None if g4 is None else g4 >= 15, f"{fmt_num(g4)} GB/s")
    g16 = xf(16 * KiB)
    add("C(G)1C scale 16KiB >= 36 GB/s", None if g16 is None else g16 >= 36, f"{fmt_num(g16)} GB/s")
    best, best_g = res.best_baseline(shape, n, op, 16 * KiB)
    r16 = ratio(g16, best_g)
    add("C(G)1C scale 16KiB >= 12x best baseline", None if r16 is None else r16 >= 12,
        f"{fmt_num(r16)}x ({fmt_num(g16)} GB/s against " +
        (f"{LABELS[best]} {best_g:.2f} GB/s)" if best else "no baseline result)"))
    for size in (64 * KiB, 256 * KiB, MiB, 4 * MiB):
        g = xf(size)
        bound = ""
        if zero_copy is not None:
            bound = f"; bare zero-copy kernel on the same machine {zero_copy:.2f}, copy engines both ways {fmt_num(copy_engines)}"
            if copy_engines_loaded is not None:
                bound += f" ({fmt_num(copy_engines_loaded)} under host reads)"
        add(f"C(G)1C scale {format_size(size)} >= 39 GB/s", None if g is None else g >= 39,
            f"{fmt_num(g)} GB/s{bound}")
        # Against the ceiling of the path the frames took: the kernel's own loads and stores (mapped), or the
        # copy engines both ways (dma), each while CPU threads read host memory as the sink does.
        dma = transfer_of(res.get(XEFLOW, shape, n, op, size)) == "dma"
        if dma:
            path, ceiling = ("the copy engines both ways under host reads", copy_engines_loaded) \
                if copy_engines_loaded is not None else ("the copy engines both ways", copy_engines)
        else:
            path, ceiling = ("a bare zero-copy kernel under host reads", zero_copy_loaded) \
                if zero_copy_loaded is not None else ("a bare zero-copy kernel", zero_copy)
        if ceiling is not None:
            add(f"C(G)1C scale {format_size(size)} >= 95% of {path} (same machine)",
                None if g is None else g >= 0.95 * ceiling,
                f"{fmt_num(None if g is None else 100 * g / ceiling)}% ({fmt_num(g)} of {ceiling:.2f} GB/s)")
        best, best_g = res.best_baseline(shape, n, op, size)
        add(f"C(G)1C scale {format_size(size)} >= best baseline",
            None if g is None or best_g is None else g >= best_g,
            f"{fmt_num(g)} GB/s against " + (f"{LABELS[best]} {best_g:.2f} GB/s" if best else "no baseline result"))
    # Per-frame latency: the unloaded point (two frames in flight). The throughput points queue thousands of
    # frames in their topics, so their p50 is queueing time (shown in the tables).
    rec16 = next((r for r in res.latency if r["frame_bytes"] == 16 * KiB and r.get("status") == "ok"), None)
    p50 = rec16.get("latency_p50_us") if rec16 else None
    add("C(G)1C scale 16KiB p50 latency <= 20 us (unloaded: capacity 2)", None if p50 is None else p50 <= 20,
        f"{fmt_num(p50, 1)} us" + (f" (p99 {fmt_num(rec16.get('latency_p99_us'), 1)} us)" if rec16 else ""))
    shares = []
    for size in res.sizes:
        r = res.get(XEFLOW, shape, n, op, size)
        if r and r.get("status") == "ok" and r.get("breakdown") and r["breakdown"].get("schedule_share") is not None:
            shares.append((r["breakdown"]["schedule_share"], size))
    worst = max(shares) if shares else None
    add("scheduling share of (busy) round time <= 3% (C(G)1C scale, every size)",
        None if worst is None else worst[0] <= 0.03,
        "worst " + (f"{100 * worst[0]:.2f}% at {format_size(worst[1])}; " +
                    ", ".join(f"{format_size(s)} {100 * v:.2f}%" for v, s in sorted(shares, key=lambda t: t[1]))
                    if worst else "-"))
    for o in ("scale", "fma"):
        a, b = xf(16 * KiB, "g", 1, o), xf(16 * KiB, "g", 4, o)
        drop = (a - b) / a if a and b is not None else None
        add(f"C(G)nC {o} 16KiB: drop from n=1 to n=4 <= 5%", None if drop is None else drop <= 0.05,
            f"{fmt_num(None if drop is None else 100 * drop)}% ({fmt_num(a)} -> {fmt_num(b)} GB/s)")
    return targets


def print_targets(targets: list[dict], metric: str) -> None:
    """Prints PASS/FAIL per target."""
    print(f"\nTargets (xeflow GB/s: {metric} metric)")
    for t in targets:
        print(f"  {t['result']:<8}{t['target']:<84}{t['measured']}")


def merged_meta(metas: list[dict]) -> dict:
    """Device, date range and commits over the merged sweep files, for titles and summary.json."""
    def uniq(key: str) -> list:
        return sorted({str(m.get(key)) for m in metas if m.get(key)})
    dates = uniq("date")
    return {"devices": uniq("device"), "commits": uniq("commit"), "hosts": uniq("host"),
            "date_first": dates[0] if dates else None, "date_last": dates[-1] if dates else None,
            "files": [m.get("file") for m in metas]}


def title_suffix(meta: dict) -> str:
    """'H100 80GB HBM3, 2026-11-23, abcdef1234' for plot titles."""
    device = " + ".join(meta["devices"]) or "unknown device"
    d0 = (meta["date_first"] or "?")[:10]
    d1 = (meta["date_last"] or "?")[:10]
    date = d0 if d0 == d1 else f"{d0}..{d1}"
    commit = " + ".join(c[:10] for c in meta["commits"]) or "unknown commit"
    return f"{device}, {date}, {commit}"


def make_plots(res: Results, rows: list[dict], abl: list[dict], brk: list[dict], meta: dict,
               out_dir: str) -> list[str]:
    """Writes the four PNG figures with matplotlib (Agg); returns their paths, or [] when it is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\nmatplotlib is not installed: no plots (the tables and summary.json are complete)")
        return []
    suffix = title_suffix(meta)
    written: list[str] = []
    styles = {c: {"color": f"C{i}", "marker": "osv^<>Dp"[i % 8]} for i, c in enumerate(ALL_CONTENDERS)}

    def grid(count: int):
        cols = min(4, max(1, count))
        nrows = max(1, math.ceil(count / cols))
        fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.4 * nrows), squeeze=False)
        flat = [a for row in axes for a in row]
        for a in flat[count:]:
            a.set_visible(False)
        return fig, flat

    def size_axis(ax, sizes):
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes)
        ax.set_xticklabels([format_size(s) for s in sizes], rotation=45, fontsize=7)
        ax.minorticks_off()

    def save(fig, name: str) -> None:
        path = os.path.join(out_dir, name)
        fig.tight_layout(rect=(0, 0, 1, 0.95))
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)

    # (1) throughput vs frame size, one panel per shape/op/n.
    if res.panels:
        fig, axes = grid(len(res.panels))
        for ax, (shape, op, n) in zip(axes, res.panels):
            for c in res.contenders:
                xs, ys = [], []
                for size in res.sizes:
                    g = res.gbps(c, shape, n, op, size)
                    if g is not None:
                        xs.append(size)
                        ys.append(g)
                if xs:
                    ax.plot(xs, ys, label=LABELS[c], linewidth=2.5 if c == XEFLOW else 1.2, **styles[c])
            size_axis(ax, res.sizes)
            ax.set_yscale("log")
            ax.set_title(panel_name(shape, op, n), fontsize=9)
            ax.set_ylabel("GB/s")
            ax.grid(True, which="both", alpha=0.3)
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="upper right", fontsize=7, ncol=4)
        fig.suptitle(f"Throughput vs frame/batch size (xeflow: {res.metric}) — {suffix}", fontsize=10, x=0.01,
                     ha="left")
        save(fig, "throughput.png")

    # (2) the ablation bars.
    if abl:
        sizes = sorted({r["frame_bytes"] for r in abl})
        names = [name for name, _ in ABLATION_SETTINGS]
        fig, ax = plt.subplots(figsize=(8, 4.5))
        width = 0.8 / len(names)
        for i, name in enumerate(names):
            ys = [next((r["gbps"] or 0 for r in abl if r["frame_bytes"] == s and r["setting"] == name), 0)
                  for s in sizes]
            xs = [j + (i - (len(names) - 1) / 2) * width for j in range(len(sizes))]
            bars = ax.bar(xs, ys, width, label=name)
            for b, y in zip(bars, ys):
                ax.annotate(f"{y:.1f}", (b.get_x() + b.get_width() / 2, y), ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(sizes)))
        ax.set_xticklabels([format_size(s) for s in sizes])
        ax.set_ylabel("GB/s")
        ax.set_xlabel("frame size (C(G)1C scale)")
        ax.legend(fontsize=8)
        ax.grid(True, axis="y", alpha=0.3)
        fig.suptitle(f"Layered coherence (xeflow): all naive, then catalog, index, frames tuned\n{suffix}",
                     fontsize=10)
        save(fig, "ablation.png")

    # (3) the breakdown stacked bars, one panel per shape/op/n.
    if brk:
        panels = [k for k in res.panels if any((b["shape"], b["op"], b["stages"]) == k for b in brk)]
        fig, axes = grid(len(panels))
        phases = ["subscribe", "schedule", "compute", "publish"]
        for ax, (shape, op, n) in zip(axes, panels):
            pts = [b for b in brk if (b["shape"], b["op"], b["stages"]) == (shape, op, n)]
            xs = list(range(len(pts)))
            bottom = [0.0] * len(pts)
            for i, ph in enumerate(phases):
                ys = [100 * (b[f"{ph}_share"] or 0) for b in pts]
                ax.bar(xs, ys, 0.7, bottom=bottom, label=ph, color=f"C{i}")
                bottom = [a + y for a, y in zip(bottom, ys)]
            for x, b in zip(xs, pts):
                if b["idle_share_of_all"] is not None:
                    ax.annotate(f"idle {100 * b['idle_share_of_all']:.0f}%", (x, 101), ha="center", va="bottom",
                                fontsize=6)
            ax.set_xticks(xs)
            ax.set_xticklabels([b["size"] for b in pts], rotation=45, fontsize=7)
            ax.set_ylim(0, 112)
            ax.set_ylabel("% of busy round time")
            ax.set_title(panel_name(shape, op, n), fontsize=9)
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="upper right", fontsize=7, ncol=4)
        fig.suptitle(f"xeflow round-time breakdown — {suffix}", fontsize=10, x=0.01, ha="left")
        save(fig, "breakdown.png")

    # (4) latency p50 (solid) and p99 (dashed) vs size.
    if res.panels:
        fig, axes = grid(len(res.panels))
        for ax, (shape, op, n) in zip(axes, res.panels):
            for c in res.contenders:
                pts = [(s, res.get(c, shape, n, op, s)) for s in res.sizes]
                pts = [(s, r) for s, r in pts if r and r.get("status") == "ok" and r.get("latency_p50_us")]
                if not pts:
                    continue
                xs = [s for s, _ in pts]
                ax.plot(xs, [r["latency_p50_us"] for _, r in pts], label=f"{LABELS[c]} p50",
                        linewidth=2.2 if c == XEFLOW else 1.1, **styles[c])
                p99 = [(s, r["latency_p99_us"]) for s, r in pts if r.get("latency_p99_us")]
                if p99:
                    ax.plot([s for s, _ in p99], [v for _, v in p99], linestyle="--", color=styles[c]["color"],
                            linewidth=1.6 if c == XEFLOW else 0.8, label=f"{LABELS[c]} p99")
            size_axis(ax, res.sizes)
            ax.set_yscale("log")
            ax.set_ylabel("latency, us")
            ax.set_title(panel_name(shape, op, n), fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="upper right", fontsize=6, ncol=4)
        fig.suptitle(f"Latency p50 (solid) / p99 (dashed) — {suffix}", fontsize=10, x=0.01, ha="left")
        save(fig, "latency.png")
    return written


def cmd_report(args: argparse.Namespace) -> int:
    """`report`: merges the sweep files of a directory, prints tables and targets, writes summary and plots."""
    if not os.path.isdir(args.results):
        print(f"stream_bench: error: {args.results} is not a directory", file=sys.stderr)
        return 2
    metas, main, ablation, latency = load_results(args.results)
    if not metas:
        print(f"stream_bench: error: no sweep-*.json under {args.results}", file=sys.stderr)
        return 2
    meta = merged_meta(metas)
    res = Results(main, ablation, args.xeflow_metric, latency)
    print(f"{len(metas)} sweep file(s), {len(main)} point(s), {len(ablation)} ablation point(s), "
          f"{len(latency)} latency point(s)")
    print(f"device: {', '.join(meta['devices']) or 'unknown'}; commits: {', '.join(meta['commits']) or 'unknown'}; "
          f"dates: {meta['date_first']} .. {meta['date_last']}")
    failed = [r for r in main + ablation + latency if r.get("status") != "ok"]
    off_device = [r for r in main + ablation if r.get("contender") == XEFLOW and r.get("executor")
                  and not str(r["executor"]).startswith("device")]
    if off_device:
        print(f"WARNING: {len(off_device)} xeflow point(s) ran on executor {off_device[0]['executor']!r}, not the "
              f"GPU's device executor: their numbers are not the benchmark's")
    rows = build_rows(res)
    print_tables(res, rows)
    brk = breakdown_rows(res)
    print_breakdown(brk)
    abl = ablation_rows(res)
    print_ablation(abl)
    lat = latency_rows(res)
    print_latency(lat)
    ceilings = load_ceilings(args.results)
    print_ceilings(ceilings)
    targets = check_targets(res, ceilings)
    print_targets(targets, res.metric)
    if failed:
        print(f"\n{len(failed)} point(s) failed or timed out:")
        for r in failed:
            print(f"  {r['key']}: {r.get('status')}: {str(r.get('error') or '')[:160]}")
    out_dir = args.out_dir or args.results
    try:
        os.makedirs(out_dir, exist_ok=True)
        summary = {"meta": meta, "sweep_metas": metas, "xeflow_metric": res.metric, "rows": rows,
                   "ablation": abl, "latency": lat, "breakdown": brk, "targets": targets, "ceilings": ceilings,
                   "failed": [{"key": r["key"], "status": r.get("status"), "error": r.get("error")} for r in failed],
                   "notes": NOTES}
        write_json_atomic(os.path.join(out_dir, "summary.json"), summary)
        plots = [] if args.no_plots else make_plots(res, rows, abl, brk, meta, out_dir)
    except OSError as e:
        print(f"stream_bench: error: cannot write to {out_dir}: {e} (use --out-dir)", file=sys.stderr)
        return 1
    print(f"\nwrote {os.path.join(out_dir, 'summary.json')}" + "".join(f"\nwrote {p}" for p in plots))
    return 0


# ---------------------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------------------



def run_command(args: argparse.Namespace, interrupted: str) -> int:
    """Runs the parsed subcommand (args.func): SIGTERM stops it like Ctrl-C, which prints `interrupted` and
    returns 130 (the results file keeps what finished); a closed stdout (`| head`) ends it quietly."""

    def on_sigterm(signum, frame):  # noqa: ARG001 - signal handler signature
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("\n" + interrupted, file=sys.stderr)
        return 130
    except BrokenPipeError:
        # stdout went away (`| head`): stop quietly, without a second error when Python flushes it at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1

def main(argv: list[str] | None = None) -> int:
    """Parses the command line and runs a subcommand."""
    parser = argparse.ArgumentParser(
        description="XeFlow microbenchmark: xeflow against copy-kernel-copy, Hyper-Q, KoUM and CUDA-graph "
                    "baselines over C(G)nC and C(GC)n, with the coherence ablation and the round-time breakdown.",
        epilog="See bench/README.md for the fairness rules and the full sweep in parts.")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run a sweep (or part of it), writing OUT/sweep-<tag>.json",
                         description="Runs the selected points and writes OUT/sweep-<tag>.json after each one.")
    run.add_argument("--out", default="", help="output directory (default: bench/results; for --dry-run a new "
                                               "temporary directory, for the generated topologies)")
    run.add_argument("--tag", default="", help="name of this run's file, sweep-<tag>.json (default: UTC time)")
    run.add_argument("--ceiling", choices=["on", "off"], default="on",
                     help="first measure the link ceilings on this machine with xeflow-ceiling, into "
                          "OUT/ceiling-<tag>.json (default: on; ~45 s)")
    run.add_argument("--commit", default="", help="commit to record when `git rev-parse HEAD` cannot tell")
    run.add_argument("--dry-run", action="store_true",
                     help="print the commands (writing the generated topologies under OUT/topologies) instead "
                          "of running them")
    run.add_argument("--validate", action="store_true",
                     help="with --dry-run: check every generated topology with `xeflow-run FILE --validate`")
    run.add_argument("--skip-done", action="append", default=[], metavar="DIR",
                     help="skip points recorded with status ok in DIR/**/sweep-*.json (repeatable)")
    run.add_argument("--time-budget", type=float, default=0,
                     help="minutes: start no point whose estimate would end past this (it is listed as not "
                          "run, to finish with --skip-done); 0 = no limit (default)")
    add_selection_args(run)
    run.set_defaults(func=cmd_run)

    plan = sub.add_parser("plan", help="estimate the sweep's duration and split it into parts",
                          description="Prints the sweep split into parts of at most --part-minutes estimated "
                                      "minutes, with the exact `run` command of each part.")
    plan.add_argument("--out", default="$OUT", help="--out of the printed commands (default: $OUT)")
    add_selection_args(plan)
    plan.set_defaults(func=cmd_plan)
    plan.set_defaults(parser_defaults={a.dest: a.default for a in plan._actions})

    report = sub.add_parser("report", help="merge sweep files, print tables and targets, write summary and plots",
                            description="Merges every sweep-*.json under RESULTS_DIR (recursively).")
    report.add_argument("results", metavar="RESULTS_DIR", help="directory holding sweep-*.json files")
    report.add_argument("--out-dir", default="", help="where summary.json and the PNGs go (default: RESULTS_DIR)")
    report.add_argument("--xeflow-metric", choices=["auto", "stream", "steady", "wall"], default="auto",
                        help="xeflow's GB/s: steady-state where valid, else wall (auto, default), or one of them")
    report.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    report.set_defaults(func=cmd_report)

    return run_command(parser.parse_args(argv), "stream_bench: interrupted; the sweep file holds every point finished so far")

if __name__ == "__main__":
    sys.exit(main())
