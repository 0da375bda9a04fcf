#!/usr/bin/env python3
"""GPU file reads (issue 6; the GPUfs readahead paper): xeflow's file cache against the CPU I/O baseline.

Runs on the GPU machine from the repository root with a release build (`--build build-gpu`; meson's debug
build adds -G to device code), over files it generates on that machine's disk (`--dir`, default
/var/tmp/xeflow-file-bench; a file of the right size and pattern is reused):

  micro        the paper's microbenchmark: xeflow-file-read, 120 blocks x 512 threads, each block reading its
               own stride of the file in request-size reads (4 KiB .. 1 MiB) with block_read, for
               4k+ra64k (4 KiB pages + 64 KiB readahead, the paper's prefetcher: --readahead-mode on),
               4k (4 KiB pages, no readahead) and 64k (64 KiB pages, no readahead)
  random       data-dependent 4 KiB reads (the paper's Mosaic case: xeflow-file-read --pattern random, each
               block's next offset from the bytes it just read) with readahead on, off and adaptive
  baseline     xeflow-file-baseline: N host threads pread into pinned buffers + cudaMemcpyAsync, N = 1, 4
  replacement  the file larger than the cache (1 GiB): LRA (per-block queues) against the global policy
  e2e          issue 6's end-to-end benchmark: xeflow-file-kernels' conv2d, gesummv, mvt, atax and bicg, file
               to result, over a file per kernel (the tool's default shapes, 4 GiB each, written by its
               --generate in --dir), by gpufs (the file cache with the tool's defaults), gpufs-tuned (16 I/O
               threads, 64 KiB pages, 1 MiB readahead and requests) and the issue's CPU I/O baseline cpu-io
               (N pread threads into pinned buffers + cudaMemcpyAsync) with N = 1 and 4, and N = 16 as a
               stronger reference; every run's outputs checked against the tool's CPU reference
  ceiling      the disk without the GPU: 1, 4 and 16 Python threads, each pread'ing 1 MiB blocks of its own
               part of the micro file into a page-aligned buffer (`file_bench.py ceiling`), O_DIRECT (cold:
               what bounds the cold runs; not run where the filesystem refuses O_DIRECT) and buffered (warm)

each cold (O_DIRECT: --direct on; where the filesystem refuses O_DIRECT, caches dropped before the run and
--direct off) and warm (buffered, --direct off, with the file in the page cache and one untimed warm-up
run first). Every run is checked: the tools compare the device's checksum with the host's (stride runs:
the file's sum; random runs: the host walking the same chains with pread). By default the cold stride
runs skip that check (it re-reads the whole file from the disk; the warm runs check the same code path):
--verify all checks them too. The e2e runs are all checked (--verify none skips it) and have no warm-up
run: a warm e2e run follows a plain read of its file, which puts the file in the page cache (the five 4 GiB
files and the micro file fit the GPU machine's 128 GiB together; a file is read again whenever another
was read in between, cheap while it is still cached).

  python3 bench/file_bench.py run --build build-gpu                      # everything (~16+ min on an H100)
  python3 bench/file_bench.py run --build build-gpu --quick              # smoke test, < 3 min
  python3 bench/file_bench.py run --build build-gpu --sections e2e,ceiling --out $OUT/files   # issue 6's e2e
  python3 bench/file_bench.py run --build build-gpu --time-budget 9 --out $OUT/files
  python3 bench/file_bench.py run --dry-run                              # the plan and its commands
  python3 bench/file_bench.py report bench/results/h100-2026-11-25-abc1234-files

Writes OUT/files-<tag>.json after every run (meta: device, CPU, memory, date, commit, the files with their
sizes, their filesystem and how long each took to generate; per run: the command, return code, the tool's
--json output, stderr's tail) and, at the end, the tables, the issue's targets with PASS/FAIL, and
OUT/files.png. OUT defaults to bench/results/<device>-<date>-<commit7>-files/. Runs that --time-budget leaves
out are listed as not run; `--skip-done OUT` in a later call runs only those, and `report OUT` merges every
files-*.json there.
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import mmap
import os
import random
import re
import shlex
import shutil
import sys
import threading
import time
from array import array
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stream_bench as sb  # noqa: E402  (shared helpers: sizes, children, meta, JSON)

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

SECTIONS = ["micro", "random", "baseline", "replacement", "e2e", "ceiling"]

#: The microbenchmark's cache configurations: name -> (page, readahead, readahead mode, label).
CONFIGS: dict[str, tuple[str, str, str, str]] = {
    "4k+ra64k": ("4KiB", "64KiB", "on", "4 KiB pages + 64 KiB readahead"),
    "4k": ("4KiB", "0", "off", "4 KiB pages, no readahead"),
    "64k": ("64KiB", "0", "off", "64 KiB pages, no readahead"),
    # Not in the default set: the paper's sizes with the adaptive policy (for comparison with 4k+ra64k).
    "4k+adaptive": ("4KiB", "64KiB", "adaptive", "4 KiB pages + adaptive readahead (64 KiB)"),
}
DEFAULT_CONFIGS = "4k+ra64k,4k,64k"
DEFAULT_REQUESTS = "4KiB,16KiB,64KiB,256KiB,1MiB"
RANDOM_MODES = ["on", "off", "adaptive"]
MODES = ["cold", "warm"]

#: The issue's targets: (name, what, threshold).
TARGETS = [
    ("readahead_vs_4k_pages", "4k+ra64k / 4k (micro)", 2.0),
    ("readahead_vs_64k_pages", "4k+ra64k / 64k (micro)", 0.9),
    ("adaptive_vs_off_random", "adaptive / off (random 4 KiB)", 0.95),
]

#: xeflow-file-kernels' kernels (kernel_spec.hpp's table): name -> float32 matrices in its file.
E2E_KERNELS = {"conv2d": 1, "gesummv": 2, "mvt": 1, "atax": 1, "bicg": 1}
#: The tool's default shape (default_shape() in kernel_spec.hpp): 32768 x 32768 a matrix, half the rows where
#: the file holds two, so that every kernel's file is 4 GiB. --e2e-rows/--e2e-cols follow the same rule.
E2E_DEFAULT_SHAPE = (32768, 32768)

#: The end-to-end contenders: name -> (xeflow-file-kernels options, label). The issue's baseline is cpu-io N=4.
E2E_CONTENDERS: dict[str, tuple[list[str], str]] = {
    "gpufs": (["--input", "gpufs"], "xeflow file cache, the tool's defaults (I/O threads: one per core up to 16, "
                                    "4 KiB pages, 64 KiB adaptive readahead, 256 KiB requests, 2 GiB cache)"),
    "gpufs-tuned": (["--input", "gpufs", "--io-threads", "16", "--page", "64KiB", "--readahead", "1MiB",
                     "--max-request", "1MiB"],
                    "xeflow file cache, 16 I/O threads, 64 KiB pages, 1 MiB readahead and requests"),
    "cpu-io N=1": (["--input", "cpu-io", "--io-threads", "1"], "CPU I/O baseline, 1 pread thread"),
    "cpu-io N=4": (["--input", "cpu-io", "--io-threads", "4"], "CPU I/O baseline, 4 pread threads (the issue's)"),
    "cpu-io N=16": (["--input", "cpu-io", "--io-threads", "16"],
                    "CPU I/O baseline, 16 pread threads: a stronger reference than the issue's"),
}
#: The contenders the e2e target compares: first in the plan, so a time budget keeps them.
E2E_TARGET_CONTENDERS = ("gpufs", "gpufs-tuned", "cpu-io N=4")
#: The e2e geomeans over kernels (numerator, denominator, threshold); None: printed as information.
E2E_TARGETS = [
    ("gpufs", "cpu-io N=4", 1.8),
    ("gpufs-tuned", "cpu-io N=4", 1.8),
    ("gpufs", "cpu-io N=1", None),
    ("gpufs-tuned", "cpu-io N=1", None),
    ("gpufs", "cpu-io N=16", None),
    ("gpufs-tuned", "cpu-io N=16", None),
]
DEFAULT_CEILING_THREADS = "1,4,16"

#: The generated file: the first 64-bit word of every 4 KiB page is (page index * STAMP_K) ^ SEED, the rest
#: a SEED-seeded random block of GEN_CHUNK bytes repeated. Every page's first word differs, so a random
#: chain goes somewhere new after every read, and a page read from the wrong place changes the checksum.
SEED = 0x5EED_F11E
STAMP_K = 0x9E3779B97F4A7C15
GEN_CHUNK = 64 * MiB
STAMP_PAGE = 4096

# Time estimates (for --time-budget and --dry-run): rough figures for an NVMe disk and the page cache,
# corrected in the run by what the runs of the same group (and all runs) actually took.
CEILING_BYTES_S = {"cold": 2.5e9, "warm": 6e9}
IOPS = {"cold": 150e3, "warm": 400e3}
VERIFY_BYTES_S = {"cold": 2e9, "warm": 5e9}
PROCESS_OVERHEAD_S = 1.5  # CUDA context, the cache's device memory, the I/O threads
GENERATE_BYTES_S = 1.2e9
MAX_REQUEST = 256 * KiB  # xeflow-file-read's --max-request default: the longest I/O a miss becomes
# The e2e runs' input rates by contender, from runs by hand on the lent H100 (2026-11-24, c9f6104: warm
# gpufs 14-19 GB/s, gpufs-tuned 29-45, cpu-io N=1 6-7, N=4 15-19, N=16 30-39; cold 0.9-2.2, the VM's virtio
# disk), and the tool's check, which re-reads the file and computes the CPU reference in double: a 4 GiB run
# took ~15 s cold and ~8 s warm, check included.
E2E_BYTES_S = {"cold": {"gpufs": 1.1e9, "gpufs-tuned": 1.4e9, "cpu-io N=1": 1.4e9, "cpu-io N=4": 1.8e9,
                        "cpu-io N=16": 1.9e9},
               "warm": {"gpufs": 15e9, "gpufs-tuned": 30e9, "cpu-io N=1": 6e9, "cpu-io N=4": 17e9,
                        "cpu-io N=16": 30e9}}
E2E_VERIFY_BYTES_S = {"cold": 0.4e9, "warm": 0.7e9}
# The ceiling's Python readers: one thread, and several (same disk: dd O_DIRECT 4 MiB read 1.1 GB/s, N pread
# threads 1.85-2.29).
CEILING_READ_BYTES_S = {"cold": (1.1e9, 2.0e9), "warm": (4e9, 12e9)}
PYTHON_START_S = 0.3
FILL_BYTES_S = {"disk": 3e9, "cached": 8e9}  # reading a file whole into (or again from) the page cache
QUICK_BUDGET_MIN = 3.0  # --quick's --time-budget: room for its ~80 runs (50 of them e2e, ~1.7 s each)


# ---------------------------------------------------------------------------------------------------------
# The runs of a plan
# ---------------------------------------------------------------------------------------------------------


@dataclass
class Run:
    """One measurement: a tool's command over the file, cold or warm."""

    section: str  # micro | random | baseline | replacement | e2e | ceiling
    # micro: a CONFIGS name; random: the readahead mode; baseline, ceiling: "N=<threads>"; replacement:
    # lra|global; e2e: "<kernel>/<contender>"
    config: str
    mode: str  # cold | warm
    request: int  # e2e: the file's bytes; ceiling: the read size
    priority: int  # lower runs first (the targets' runs before the rest), so a time budget keeps them
    args: list[str]  # the tool's options, without the file, --direct and --no-verify
    # "read" (xeflow-file-read), "baseline" (xeflow-file-baseline), "kernels" (xeflow-file-kernels) or
    # "ceiling" (this script's ceiling command)
    tool: str
    io_bytes: int  # bytes its I/O is expected to move (readahead included), for the estimate
    ios: int  # I/O requests it is expected to make, for the estimate
    verify: bool
    verify_bytes: int = 0  # what the tool's check re-reads on the host
    kernel: str = ""  # e2e: the kernel, an E2E_KERNELS name
    contender: str = ""  # e2e: an E2E_CONTENDERS name
    file: str = ""  # e2e: the kernel's file; "": the micro file

    @property
    def key(self) -> str:
        return "|".join([self.section, self.config, self.mode, str(self.request)])

    @property
    def group(self) -> str:
        """The runs whose speed predicts each other's (for the estimates): e2e runs by contender."""
        if self.section == "e2e":
            return "|".join([self.section, self.contender, self.mode])
        return "|".join([self.section, self.config, self.mode])

    def describe(self) -> str:
        return f"{self.section} {self.config} {self.mode} {sb.format_size(self.request)}"


@dataclass
class E2eFile:
    """A kernel's input file for the e2e runs: the tool's --generate writes it, a file of this size reuses."""

    kernel: str
    path: str
    rows: int
    cols: int

    @property
    def bytes(self) -> int:
        return E2E_KERNELS[self.kernel] * self.rows * self.cols * 4


@dataclass
class Plan:
    runs: list[Run]
    file_bytes: int
    notes: list[str] = field(default_factory=list)
    e2e_files: dict[str, E2eFile] = field(default_factory=dict)  # by kernel

    @property
    def needs_micro_file(self) -> bool:
        return any(not r.file for r in self.runs)


#: The tools by Run.tool: (apps/ folder, executable).
TOOLS = {"read": ("file_baseline", "xeflow-file-read"), "baseline": ("file_baseline", "xeflow-file-baseline"),
         "kernels": ("file_kernels", "xeflow-file-kernels")}


def tool_path(build: str, tool: str) -> str:
    if tool == "ceiling":
        return os.path.abspath(__file__)
    folder, name = TOOLS[tool]
    return os.path.join(build, "apps", folder, name)


def tool_name(tool: str) -> str:
    return "file_bench ceiling" if tool == "ceiling" else TOOLS[tool][1]


def e2e_shape(kernel: str, rows: int, cols: int) -> tuple[int, int]:
    """The kernel's matrix shape: --e2e-rows/--e2e-cols (0: the tool's default), rows halved where the file
    holds two matrices (the tool's own rule), so that every kernel's file has the same size."""
    rows, cols = rows or E2E_DEFAULT_SHAPE[0], cols or E2E_DEFAULT_SHAPE[1]
    return max(1, rows // E2E_KERNELS[kernel]), cols


def e2e_file_name(directory: str, kernel: str, rows: int, cols: int) -> str:
    return os.path.join(directory, f"xeflow-e2e-{kernel}-{rows}x{cols}.f32")


def io_size(request: int, page: int, readahead: int, ra_mode: str) -> int:
    """The bytes one miss's request to the I/O threads is expected to carry (for the estimates only)."""
    base = max(request, page) if request <= MAX_REQUEST else MAX_REQUEST
    return min(MAX_REQUEST, base + (readahead if ra_mode in ("on", "adaptive") else 0))


def build_plan(args: argparse.Namespace, file_bytes: int) -> Plan:
    """The selected runs, in the order they run: by priority, cold before warm, then as listed."""
    sections = sb.parse_list(args.sections)
    modes = sb.parse_list(args.modes)
    requests = [sb.parse_size(r) for r in sb.parse_list(args.requests)]
    configs = sb.parse_list(args.configs)
    for name in sections:
        if name not in SECTIONS:
            raise ValueError(f"--sections: unknown section {name!r} (of {', '.join(SECTIONS)})")
    for m in modes:
        if m not in MODES:
            raise ValueError(f"--modes: {m!r} is not cold or warm")
    for c in configs:
        if c not in CONFIGS:
            raise ValueError(f"--configs: unknown configuration {c!r} (of {', '.join(CONFIGS)})")
    for r in requests:
        if r <= 0 or r % 8:
            raise ValueError(f"--requests: {sb.format_size(r)} is not a positive multiple of 8 bytes")
    blocks, threads = args.blocks, args.threads
    common = ["--blocks", str(blocks), "--threads", str(threads)]
    if args.io_threads:
        common += ["--io-threads", str(args.io_threads)]
    common += list(args.read_arg)
    verify_mode = args.verify
    runs: list[Run] = []
    smallest = min(requests) if requests else 0

    def verify_stride(mode: str) -> bool:
        return verify_mode == "all" or (verify_mode == "auto" and mode == "warm")

    if "micro" in sections:
        for c in configs:
            page, readahead, ra_mode, _ = CONFIGS[c]
            p, ra = sb.parse_size(page), (0 if readahead == "0" else sb.parse_size(readahead))
            for mode in modes:
                for r in requests:
                    size = io_size(r, p, ra, ra_mode)
                    v = verify_stride(mode)
                    runs.append(Run("micro", c, mode, r, 0 if r == smallest else 1,
                                    common + ["--request", sb.format_size(r), "--page", page, "--readahead", readahead,
                                              "--readahead-mode", ra_mode, "--cache-size", args.cache_size],
                                    "read", file_bytes, max(1, file_bytes // size), v, file_bytes if v else 0))
    if "random" in sections:
        r = sb.parse_size(args.random_request)
        useful = blocks * args.random_reads * min(r, file_bytes)
        for ra_mode in sb.parse_list(args.random_modes):
            if ra_mode not in RANDOM_MODES:
                raise ValueError(f"--random-modes: {ra_mode!r} is not on, off or adaptive")
            ra = sb.parse_size(args.random_readahead)
            size = max(r, 4 * KiB) + (ra if ra_mode == "on" else 0)
            for mode in modes:
                v = verify_mode != "none"
                runs.append(Run("random", ra_mode, mode, r, 0,
                                common + ["--pattern", "random", "--reads", str(args.random_reads),
                                          "--request", sb.format_size(r), "--page", "4KiB",
                                          "--readahead", args.random_readahead, "--readahead-mode", ra_mode,
                                          "--cache-size", args.cache_size],
                                "read", blocks * args.random_reads * size, blocks * args.random_reads, v,
                                useful if v else 0))
    if "baseline" in sections:
        r = sb.parse_size(args.baseline_request)
        for n in sb.parse_list(args.baseline_threads, int):
            for mode in modes:
                v = verify_stride(mode)
                runs.append(Run("baseline", f"N={n}", mode, r, 2,
                                ["--threads", str(n), "--request", sb.format_size(r)] + list(args.baseline_arg),
                                "baseline", file_bytes, max(1, file_bytes // r), v, file_bytes if v else 0))
    if "replacement" in sections:
        repl_requests = [sb.parse_size(x) for x in sb.parse_list(args.replacement_requests)]
        page, readahead, ra_mode, _ = CONFIGS["4k+ra64k"]
        for policy in ("lra", "global"):
            for mode in sb.parse_list(args.replacement_modes):
                if mode not in MODES:
                    raise ValueError(f"--replacement-modes: {mode!r} is not cold or warm")
                if mode not in modes:
                    continue  # --modes leaves it out
                for r in repl_requests:
                    v = verify_stride(mode)
                    size = io_size(r, 4 * KiB, 64 * KiB, ra_mode)
                    runs.append(Run("replacement", policy, mode, r, 3,
                                    common + ["--request", sb.format_size(r), "--page", page,
                                              "--readahead", readahead, "--readahead-mode", ra_mode,
                                              "--replacement", policy, "--cache-size", args.replacement_cache],
                                    "read", file_bytes, max(1, file_bytes // size), v, file_bytes if v else 0))
    e2e_files: dict[str, E2eFile] = {}
    if "e2e" in sections:
        kernels = sb.parse_list(args.e2e_kernels)
        contenders = sb.parse_list(args.e2e_contenders)
        for k in kernels:
            if k not in E2E_KERNELS:
                raise ValueError(f"--e2e-kernels: unknown kernel {k!r} (of {', '.join(E2E_KERNELS)})")
        for c in contenders:
            if c not in E2E_CONTENDERS:
                raise ValueError(f"--e2e-contenders: unknown contender {c!r} (of {', '.join(E2E_CONTENDERS)})")
        if args.e2e_rows < 0 or args.e2e_cols < 0:
            raise ValueError("--e2e-rows, --e2e-cols: 0 (the tool's default) or a positive count")
        for k in kernels:
            rows, cols = e2e_shape(k, args.e2e_rows, args.e2e_cols)
            f = e2e_files[k] = E2eFile(k, e2e_file_name(args.dir, k, rows, cols), rows, cols)
            for mode in modes:
                for c in contenders:
                    v = verify_mode != "none"
                    runs.append(Run("e2e", f"{k}/{c}", mode, f.bytes, 0 if c in E2E_TARGET_CONTENDERS else 2,
                                    ["--rows", str(rows), "--cols", str(cols)] + E2E_CONTENDERS[c][0]
                                    + list(args.e2e_arg),
                                    "kernels", f.bytes, max(1, f.bytes // MiB), v, f.bytes if v else 0,
                                    kernel=k, contender=c, file=f.path))
    if "ceiling" in sections:
        block = sb.parse_size(args.ceiling_block)
        if block <= 0 or block % 4096:
            raise ValueError(f"--ceiling-block: {args.ceiling_block} is not a positive multiple of 4 KiB (O_DIRECT)")
        for n in sb.parse_list(args.ceiling_threads, int):
            if n < 1:
                raise ValueError(f"--ceiling-threads: {n} is not a thread count")
            for mode in modes:
                runs.append(Run("ceiling", f"N={n}", mode, block, 1,
                                ["--threads", str(n), "--block", sb.format_size(block)],
                                "ceiling", file_bytes, max(1, file_bytes // block), False))
    order = {id(r): k for k, r in enumerate(runs)}
    runs.sort(key=lambda r: (r.priority, MODES.index(r.mode), order[id(r)]))
    plan = Plan(runs, file_bytes, e2e_files=e2e_files)
    if "replacement" in sections and sb.parse_size(args.replacement_cache) >= file_bytes:
        plan.notes.append(f"replacement: the cache ({args.replacement_cache}) is not smaller than the file "
                          f"({sb.format_size(file_bytes)}): nothing is evicted")
    return plan


def command_of(run: Run, build: str, path: str, cold_method: str) -> list[str]:
    """The run's command line: cold runs read O_DIRECT (--direct on) unless caches are dropped instead."""
    direct = "on" if run.mode == "cold" and cold_method == "direct" else "off"
    if run.tool == "ceiling":
        head = [sys.executable, tool_path(build, run.tool), "ceiling"]
    else:
        head = [tool_path(build, run.tool)] + ([run.kernel] if run.tool == "kernels" else [])
    cmd = head + [run.file or path] + run.args + ["--direct", direct, "--json"]
    if not run.verify and run.tool != "ceiling":  # the ceiling has nothing to check
        cmd.append("--no-verify")
    return cmd


def generate_command(build: str, f: E2eFile, path: str) -> list[str]:
    return [tool_path(build, "kernels"), f.kernel, path, "--generate", "--rows", str(f.rows), "--cols",
            str(f.cols), "--json"]


# ---------------------------------------------------------------------------------------------------------
# Estimates and the time budget
# ---------------------------------------------------------------------------------------------------------


def base_estimate(run: Run) -> float:
    """Seconds the run should take on the figures above: its I/O (bytes or requests, whichever binds), the
    process's fixed cost, and the host's check."""
    if run.section == "e2e":
        return (PROCESS_OVERHEAD_S + run.io_bytes / E2E_BYTES_S[run.mode][run.contender]
                + run.verify_bytes / E2E_VERIFY_BYTES_S[run.mode])
    if run.tool == "ceiling":
        one, several = CEILING_READ_BYTES_S[run.mode]
        return PYTHON_START_S + run.io_bytes / (one if run.config == "N=1" else several)
    ceiling = CEILING_BYTES_S[run.mode]
    if run.tool == "baseline" and run.config == "N=1":
        ceiling /= 2
    io = max(run.io_bytes / ceiling, run.ios / IOPS[run.mode])
    verify = run.verify_bytes / VERIFY_BYTES_S[run.mode]
    if run.section == "random":
        verify = run.ios / (IOPS[run.mode] / 2)  # the host walks the chains with 4 KiB preads
    return PROCESS_OVERHEAD_S + io + verify


class Estimator:
    """Base estimates corrected by what finished runs took: the same group's ratio (actual / estimated)
    where one ran, else the median over every run so far."""

    def __init__(self) -> None:
        self.by_group: dict[str, list[float]] = {}
        self.all: list[float] = []

    def seconds(self, run: Run) -> float:
        est = base_estimate(run)
        ratios = self.by_group.get(run.group) or self.all
        if ratios:
            est *= min(8.0, max(0.25, sorted(ratios)[len(ratios) // 2]))
        return est

    def record(self, run: Run, seconds: float) -> None:
        ratio = seconds / base_estimate(run)
        self.by_group.setdefault(run.group, []).append(ratio)
        self.all.append(ratio)


# ---------------------------------------------------------------------------------------------------------
# The file: generate, reuse, probe its filesystem, warm or cool the page cache
# ---------------------------------------------------------------------------------------------------------


def file_name(directory: str, size: int) -> str:
    return os.path.join(directory, f"xeflow-file-bench-{sb.format_size(size)}.bin")


def stamp(page: int) -> int:
    return ((page * STAMP_K) ^ SEED) & 0xFFFF_FFFF_FFFF_FFFF


def stamps_ok(path: str, size: int) -> bool:
    """Whether the file at `path` holds the generated pattern: its size, and the stamps of its first, middle
    and last whole pages."""
    try:
        if os.path.getsize(path) != size:
            return False
        pages = size // STAMP_PAGE
        with open(path, "rb") as f:
            for p in sorted({0, pages // 2, max(0, pages - 1)}):
                if p * STAMP_PAGE + 8 > size:
                    continue
                f.seek(p * STAMP_PAGE)
                if int.from_bytes(f.read(8), "little") != stamp(p):
                    return False
        return True
    except OSError:
        return False


def generate(path: str, size: int) -> dict:
    """Writes the pattern file (posix_fallocate first, GEN_CHUNK writes, fsync), through a temporary name;
    returns what it took."""
    base = random.Random(SEED).randbytes(GEN_CHUNK)
    tmp = f"{path}.tmp{os.getpid()}"
    start = time.monotonic()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        try:
            os.posix_fallocate(fd, 0, size)
        except OSError:
            pass  # a filesystem without fallocate: the writes allocate
        per_chunk = GEN_CHUNK // STAMP_PAGE
        words = GEN_CHUNK // 8
        buf = bytearray(base)
        view = memoryview(buf)
        as_words = view.cast("Q")
        at = 0
        while at < size:
            first = at // STAMP_PAGE
            stamps = array("Q", [((p * STAMP_K) ^ SEED) & 0xFFFF_FFFF_FFFF_FFFF
                                 for p in range(first, first + per_chunk)])
            if sys.byteorder != "little":
                stamps.byteswap()
            as_words[0:words:STAMP_PAGE // 8] = stamps
            n = min(GEN_CHUNK, size - at)
            done = 0
            while done < n:
                done += os.write(fd, view[done:n])
            at += n
        written = time.monotonic()
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)
    synced = time.monotonic()
    del as_words, view
    return {"generated": True, "write_seconds": written - start, "fsync_seconds": synced - written,
            "seconds": synced - start, "gbps": size / max(synced - start, 1e-9) / 1e9}


def ensure_file(directory: str, size: int) -> dict:
    """The benchmark's file in `directory`: reused when it has the size and the pattern, else generated."""
    os.makedirs(directory, exist_ok=True)
    path = file_name(directory, size)
    if stamps_ok(path, size):
        return {"path": path, "bytes": size, "generated": False, "seconds": 0.0}
    free = shutil.disk_usage(directory).free + (os.path.getsize(path) if os.path.exists(path) else 0)
    if free < size + 256 * MiB:
        raise OSError(f"{directory}: {free / GiB:.1f} GiB free, the file needs {size / GiB:.1f} GiB")
    info = generate(path, size)
    return {"path": path, "bytes": size, **info}


def filesystem_of(path: str) -> dict:
    """The mount that holds `path` (from /proc/mounts): mount point, device, type."""
    best = {"mount": None, "device": None, "type": None}
    real = os.path.realpath(path)
    try:
        with open("/proc/mounts", encoding="utf-8") as f:
            for line in f:
                dev, mnt, fstype = line.split()[:3]
                mnt = mnt.replace("\\040", " ")
                if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and \
                        len(mnt) >= len(best["mount"] or ""):
                    best = {"mount": mnt, "device": dev, "type": fstype}
    except OSError:
        pass
    return best


def probe_direct(path: str) -> str | None:
    """None when `path` can be read O_DIRECT (a 4 KiB aligned read), else why not."""
    if not hasattr(os, "O_DIRECT"):
        return "no O_DIRECT on this platform"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    except OSError as e:
        return f"open O_DIRECT: {e.strerror}"
    try:
        buf = mmap.mmap(-1, 4096)  # page-aligned
        os.preadv(fd, [buf], 0)
        return None
    except OSError as e:
        return f"read O_DIRECT: {e.strerror}"
    finally:
        os.close(fd)


def drop_caches() -> str | None:
    """Writes back dirty pages and drops the page cache; None when done, else why not."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w", encoding="ascii") as f:
            f.write("3\n")
        return None
    except OSError as e:
        return f"/proc/sys/vm/drop_caches: {e.strerror}"


def fill_page_cache(path: str) -> float:
    """Reads the whole file, so warm runs find it in the page cache; returns the seconds."""
    start = time.monotonic()
    with open(path, "rb", buffering=0) as f:
        try:
            os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_SEQUENTIAL)
        except (OSError, AttributeError):
            pass
        buf = bytearray(64 * MiB)
        while f.readinto(buf):
            pass
    return time.monotonic() - start


class PageCache:
    """The files this run has read whole into the page cache. A warm run reads its file again whenever
    another file was read in between (cheap while it is still cached, right where memory ran short), and
    nothing counts as cached after the caches were dropped."""

    def __init__(self) -> None:
        self.filled: set[str] = set()
        self.current: str | None = None

    def needs_fill(self, path: str) -> bool:
        return path != self.current

    def fill_seconds(self, path: str, size: int) -> float:
        return size / FILL_BYTES_S["cached" if path in self.filled else "disk"]

    def fill(self, path: str) -> float:
        seconds = fill_page_cache(path)
        self.mark(path)
        return seconds

    def mark(self, path: str) -> None:
        """As if `path` had just been read whole (the dry run's bookkeeping)."""
        self.filled.add(path)
        self.current = path

    def dropped(self) -> None:
        self.filled.clear()
        self.current = None


def ensure_e2e_file(build: str, f: E2eFile, timeout: float) -> dict:
    """The kernel's file: reused when it has the size, else written by `xeflow-file-kernels --generate`
    through a temporary name and synced (the tool does not fsync, and dirty pages would be written back
    during the first cold run); returns what it took. Raises OSError naming the cause."""
    directory = os.path.dirname(f.path) or "."
    os.makedirs(directory, exist_ok=True)
    base = {"kernel": f.kernel, "path": f.path, "rows": f.rows, "cols": f.cols, "bytes": f.bytes}
    try:
        if os.path.getsize(f.path) == f.bytes:
            return {**base, "generated": False, "seconds": 0.0}
    except OSError:
        pass
    free = shutil.disk_usage(directory).free + (os.path.getsize(f.path) if os.path.exists(f.path) else 0)
    if free < f.bytes + 256 * MiB:
        raise OSError(f"{directory}: {free / GiB:.1f} GiB free, {f.kernel}'s file needs {f.bytes / GiB:.1f} GiB")
    tmp = f"{f.path}.tmp{os.getpid()}"
    cmd = generate_command(build, f, tmp)
    start = time.monotonic()
    child = sb.run_child(cmd, timeout)
    try:
        if child.returncode != 0 or os.path.getsize(tmp) != f.bytes:
            last = child.error or (child.stderr.strip().splitlines() or ["no error message"])[-1]
            raise OSError(f"{shlex.join(cmd)}: " + ("timed out" if child.timed_out else
                                                    f"exit {child.returncode}: {last[:200]}"))
        written = time.monotonic()
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, f.path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    synced = time.monotonic()
    return {**base, "generated": True, "command": shlex.join(cmd), "write_seconds": written - start,
            "fsync_seconds": synced - written, "seconds": synced - start,
            "gbps": f.bytes / max(synced - start, 1e-9) / 1e9}


def probe_direct_in(directory: str) -> str | None:
    """probe_direct on a one-page file made for the purpose in `directory` (when the micro file is not
    needed): None when its filesystem takes O_DIRECT, else why not."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f".xeflow-file-bench-probe{os.getpid()}")
    try:
        with open(path, "wb") as f:
            f.write(bytes(4096))
            f.flush()
            os.fsync(f.fileno())
        return probe_direct(path)
    finally:
        if os.path.exists(path):
            os.unlink(path)


def read_ceiling(path: str, threads: int, block: int, direct: bool) -> dict:
    """Reads the whole file with `threads` threads, each its own contiguous part (whole blocks) in
    `block`-byte preads into its own page-aligned buffer (an anonymous mmap, as O_DIRECT wants), O_DIRECT
    or through the page cache. os.preadv releases the GIL, so the reads overlap as a C program's would.
    Raises OSError (O_DIRECT refused, a read failed)."""
    size = os.path.getsize(path)
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECT if direct else 0))
    part = -(-size // threads)
    part = -(-part // block) * block
    got = [0] * threads
    errors: list[str] = []
    barrier = threading.Barrier(threads + 1)  # the clock starts when every thread has its buffer

    def reader(k: int) -> None:
        try:
            buf = mmap.mmap(-1, block)
            at, end = k * part, min(size, (k + 1) * part)
            barrier.wait()
            while at < end:
                n = os.preadv(fd, [buf], at)
                if n <= 0:
                    raise OSError(f"read at byte {at}: end of file before {end}")
                got[k] += min(n, end - at)
                at += n
            buf.close()
        except threading.BrokenBarrierError:
            pass
        except Exception as e:  # noqa: BLE001 - reported by the caller; the others must not wait for it
            errors.append(f"thread {k}: {e}")
            barrier.abort()

    workers = [threading.Thread(target=reader, args=(k,), daemon=True) for k in range(threads)]
    try:
        for w in workers:
            w.start()
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            pass
        start = time.monotonic()
        for w in workers:
            w.join()
        seconds = time.monotonic() - start
    finally:
        os.close(fd)
    if errors:
        raise OSError("; ".join(errors))
    total = sum(got)
    return {"tool": "file_bench ceiling", "file": path, "file_bytes": size, "bytes": total, "seconds": seconds,
            "gbps": total / max(seconds, 1e-9) / 1e9, "threads": threads, "block": block, "part": part,
            "direct": direct}


def machine_of() -> dict:
    """What the page cache and the CPU threads have to work with: memory and logical CPUs."""
    mem = None
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = int(line.split()[1]) * KiB
                    break
    except (OSError, ValueError, IndexError):
        pass
    return {"memory_bytes": mem, "cpus": os.cpu_count()}


# ---------------------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------------------


def device_slug(name: str | None) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'h100' (the results folders' prefix); 'unknown-gpu' without a name."""
    if name:
        for token in re.split(r"[\s_-]+", name.replace("NVIDIA", " ")):
            if re.fullmatch(r"[A-Za-z]*\d+[A-Za-z]*", token) and not token.upper().endswith("GB"):
                return token.lower()
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        if slug:
            return slug
    return "unknown-gpu"


def results_dir(meta: dict) -> str:
    """bench/results/<device>-<date>-<commit7>-files: a new folder per recording (the one README.md quotes is
    kept as bench/results/files/, with its device, date and commit inside: bench/results/README.md)."""
    commit = str(meta.get("commit") or "nocommit")[:7]
    name = f"{device_slug(meta.get('device'))}-{str(meta['date'])[:10]}-{commit}-files"
    return os.path.join("bench", "results", name)


def load_done(directories: list[str]) -> dict[str, dict]:
    """Runs recorded with status ok in files-*.json under the directories, by key."""
    done: dict[str, dict] = {}
    for d in directories:
        for _, doc in load_docs(d):
            for r in doc.get("runs", []):
                if r.get("status") == "ok" and not r.get("warmup"):
                    done[r["key"]] = r
    return done


def record_of(run: Run, child: sb.ChildResult, cmd: list[str], cold_method: str) -> dict:
    """The JSON record of one finished run."""
    doc = sb.parse_json_output(child.stdout)
    rec = {"key": run.key, "section": run.section, "config": run.config, "mode": run.mode,
           "request": run.request, "tool": tool_name(run.tool), "command": shlex.join(cmd),
           "cold_method": cold_method if run.mode == "cold" else None, "verify": run.verify,
           "returncode": child.returncode, "timed_out": child.timed_out, "seconds_wall": child.seconds,
           "stderr_tail": sb.tail(child.stderr), "result": doc}
    if run.section == "e2e":
        rec.update({"kernel": run.kernel, "contender": run.contender})
    if child.error:
        rec["error"] = child.error
    status = "ok" if child.returncode == 0 and doc else ("timeout" if child.timed_out else "failed")
    why = None
    if doc:
        rec["gbps"] = doc.get("gbps")
        rec["seconds"] = doc.get("seconds")
        rec["bytes"] = doc.get("bytes")
        rec["verified"] = doc.get("verified") if run.verify else None
        if run.section == "e2e":
            rec["max_error"] = doc.get("max_error")
        if run.verify and doc.get("verified") is not True:
            if run.section == "e2e":
                why = "the outputs are not the CPU reference's" + (f": {doc['mismatch']}" if doc.get("mismatch")
                                                                   else "")
            else:
                why = "the device's checksum is not the host's"
            status = "failed"
        if run.mode == "cold" and cold_method == "direct" and doc.get("direct") is False:
            status, why = "failed", "a cold run that did not read O_DIRECT"
    elif child.returncode == 0:
        why = "no JSON on stdout"
    if status != "ok" and not why:
        last = child.error or (child.stderr.strip().splitlines() or [""])[-1]
        why = ("timed out: " if child.timed_out else f"exit {child.returncode}: ") + last[:200]
    rec["status"] = status
    if why:
        rec["why"] = why
    return rec


def live_row(rec: dict) -> str:
    res = rec.get("result") or {}
    ahead = f"{res.get('ahead_pages', '-')}/{res.get('ahead_hits', '-')}" if "ahead_pages" in res else "-"
    verified = {True: "yes", False: "NO"}.get(rec.get("verified"), "-")
    return (f"{rec['section']:<11} {rec['config']:<19} {rec['mode']:<4} {sb.format_size(rec['request']):>7} "
            f"{sb.fmt_num(rec.get('gbps'), 2, 7)} {sb.fmt_num(rec.get('seconds'), 3, 8)} "
            f"{str(res.get('requests', '-')):>9} {ahead:>15} {verified:>5}  {rec['status']}"
            f"{'  ' + rec['why'] if rec.get('why') else ''}")


LIVE_HEADER = (f"{'section':<11} {'config':<19} {'mode':<4} {'request':>7} {'GB/s':>7} {'timed s':>8} "
               f"{'requests':>9} {'ahead/used':>15} {'ok?':>5}  status")


def resolve_cold_method(args: argparse.Namespace, where: str, why: str | None, notes: list[str]) -> str | None:
    """How cold runs are made cold: 'direct' (O_DIRECT), 'drop-caches', or None (neither works here); `why`
    is probe_direct's answer for `where`."""
    if args.cold in ("auto", "direct") and why is None:
        return "direct"
    if args.cold == "direct":
        notes.append(f"cold runs not possible: {where} cannot be read O_DIRECT ({why})")
        return None
    refused = drop_caches()
    if refused is None:
        if args.cold == "auto":
            notes.append(f"{where} cannot be read O_DIRECT ({why}): cold runs drop the page cache first instead")
        return "drop-caches"
    notes.append(f"cold runs not possible: no O_DIRECT ({why}) and the page cache cannot be dropped ({refused})")
    return None


def cmd_run(args: argparse.Namespace) -> int:
    apply_quick(args)
    try:
        file_bytes = sb.parse_size(args.file_size)
        plan = build_plan(args, file_bytes)
    except ValueError as e:
        print(f"file_bench: error: {e}", file=sys.stderr)
        return 2
    if args.dry_run:
        return dry_run(args, plan)

    for tool in sorted({r.tool for r in plan.runs} - {"ceiling"}):
        if not os.access(tool_path(args.build, tool), os.X_OK):
            print(f"file_bench: error: {tool_path(args.build, tool)} is not there (build it: ninja -C {args.build} "
                  f"apps/{TOOLS[tool][0]}/{TOOLS[tool][1]})", file=sys.stderr)
            return 2
    meta = sb.run_meta(args)
    meta.update(machine_of())
    out = args.out or results_dir(meta)
    os.makedirs(out, exist_ok=True)
    tag = args.tag or sb.utc_now().replace(":", "").replace("-", "")
    out_path = os.path.join(out, f"files-{tag}.json")
    suffix = 2
    while os.path.exists(out_path):  # a second call within the same second, or a --tag used before
        out_path = os.path.join(out, f"files-{tag}-{suffix}.json")
        suffix += 1
    start = time.monotonic()
    budget_s = args.time_budget * 60 if args.time_budget else None

    done = load_done(args.skip_done) if args.skip_done else {}
    todo = [r for r in plan.runs if r.key not in done]
    if done:
        print(f"skipping {len(plan.runs) - len(todo)} run(s) already recorded ok under {', '.join(args.skip_done)}")
    est = Estimator()
    path = file_name(args.dir, file_bytes)
    info = None
    if any(not r.file for r in todo):  # the micro file: the e2e runs alone do not need it
        file_est = file_bytes / GENERATE_BYTES_S
        if budget_s and not stamps_ok(path, file_bytes) and file_est > budget_s:
            print(f"file_bench: error: generating the {sb.format_size(file_bytes)} file alone is estimated at "
                  f"{file_est:.0f} s, past --time-budget", file=sys.stderr)
            return 2
        try:
            info = ensure_file(args.dir, file_bytes)
        except OSError as e:
            print(f"file_bench: error: the test file: {e}", file=sys.stderr)
            return 1
        path = info["path"]
    fs = filesystem_of(path if info else args.dir)
    if info:
        print(f"file {path}: {sb.format_size(file_bytes)}, "
              + (f"generated in {info['seconds']:.1f} s ({info['gbps']:.2f} GB/s: write {info['write_seconds']:.1f} "
                 f"s, fsync {info['fsync_seconds']:.1f} s)" if info["generated"] else "reused")
              + f"; filesystem {fs['type']} on {fs['device']} ({fs['mount']})", flush=True)
    else:
        print(f"directory {args.dir}: filesystem {fs['type']} on {fs['device']} ({fs['mount']})", flush=True)
    notes = list(plan.notes)
    cold_method, direct_refused = None, None
    if any(r.mode == "cold" for r in todo):
        direct_refused = probe_direct(path) if info else probe_direct_in(args.dir)
        cold_method = resolve_cold_method(args, path if info else args.dir, direct_refused, notes)
        if direct_refused and any(r.mode == "cold" and r.tool == "ceiling" for r in todo):
            notes.append(f"ceiling: no cold runs, the filesystem refuses O_DIRECT ({direct_refused})")
    for n in notes:
        print(f"note: {n}")
    meta.update({"file": info, "filesystem": fs, "cold_method": cold_method, "direct_refused": direct_refused,
                 "notes": notes, "tag": tag, "blocks": args.blocks, "threads": args.threads, "quick": args.quick,
                 "e2e_files": {}, "plan": [r.key for r in plan.runs]})
    doc = {"meta": meta, "runs": [], "not_run": []}
    print(f"device: {meta['device'] or 'unknown (nvidia-smi gave nothing)'}; commit: {meta['commit'] or 'unknown'}; "
          f"{len(todo)} run(s), estimated {sum(est.seconds(r) for r in todo) / 60:.1f} min; results in {out_path}")
    print(LIVE_HEADER, flush=True)

    cache = PageCache()
    e2e_failed: dict[str, str] = {}  # kernel -> why its file is not there
    for run in todo:
        if run.mode == "cold" and cold_method is None:
            doc["not_run"].append({"key": run.key, "run": run.describe(), "why": "no way to run cold here "
                                   "(see notes)"})
            continue
        if run.mode == "cold" and run.tool == "ceiling" and cold_method != "direct":
            doc["not_run"].append({"key": run.key, "run": run.describe(),
                                   "why": f"the filesystem refuses O_DIRECT ({direct_refused})"})
            continue
        if run.kernel in e2e_failed:
            doc["not_run"].append({"key": run.key, "run": run.describe(), "why": e2e_failed[run.kernel]})
            continue
        run_path = run.file or path
        run_bytes = plan.e2e_files[run.kernel].bytes if run.kernel else file_bytes
        cmd = command_of(run, args.build, path, cold_method or "direct")
        need_file = bool(run.kernel) and run.kernel not in meta["e2e_files"]
        need_fill = run.mode == "warm" and cache.needs_fill(run_path)
        # One untimed run of the command after the file first enters the page cache (not for e2e and ceiling).
        need_warmup = need_fill and run.tool in ("read", "baseline") and run_path not in cache.filled
        seconds = (est.seconds(run) * (2 if need_warmup else 1)
                   + (cache.fill_seconds(run_path, run_bytes) if need_fill else 0)
                   + (e2e_generate_seconds(plan.e2e_files[run.kernel]) if need_file else 0))
        elapsed = time.monotonic() - start
        if budget_s and elapsed + 1.2 * seconds > budget_s:
            doc["not_run"].append({"key": run.key, "run": run.describe(), "why": "time budget",
                                   "estimated_seconds": round(seconds, 1)})
            sb.write_json_atomic(out_path, doc)
            continue
        timeout = args.timeout if not budget_s else max(20.0, min(args.timeout, budget_s - elapsed))
        if need_file:
            try:
                finfo = ensure_e2e_file(args.build, plan.e2e_files[run.kernel], timeout)
            except OSError as e:
                notes.append(f"{run.kernel}'s file: {e}")
                print(f"note: {notes[-1]}", flush=True)
                e2e_failed[run.kernel] = f"{run.kernel}'s file could not be made (see notes)"
                doc["not_run"].append({"key": run.key, "run": run.describe(), "why": e2e_failed[run.kernel]})
                sb.write_json_atomic(out_path, doc)
                continue
            meta["e2e_files"][run.kernel] = finfo
            sb.write_json_atomic(out_path, doc)
            print(f"file {finfo['path']}: {sb.format_size(finfo['bytes'])} ({run.kernel}, {finfo['rows']} x "
                  f"{finfo['cols']}), " + (f"generated in {finfo['seconds']:.1f} s (fsync "
                                           f"{finfo['fsync_seconds']:.1f} s)" if finfo["generated"] else "reused"),
                  flush=True)
        if need_fill:
            meta.setdefault("page_cache_fills", []).append({"file": run_path, "seconds": cache.fill(run_path),
                                                             "before": run.key})
            if need_warmup:
                warm_cmd = cmd if "--no-verify" in cmd else cmd + ["--no-verify"]
                warm = sb.run_child(warm_cmd, timeout)
                wrec = record_of(run, warm, warm_cmd, cold_method)
                wrec["warmup"] = True
                doc["runs"].append(wrec)
        if run.mode == "cold" and cold_method == "drop-caches":
            refused = drop_caches()
            cache.dropped()
            if refused:
                doc["not_run"].append({"key": run.key, "run": run.describe(), "why": refused})
                continue
        child = sb.run_child(cmd, timeout)
        rec = record_of(run, child, cmd, cold_method)
        rec["finished"] = sb.utc_now()
        rec["estimated_seconds"] = round(est.seconds(run), 2)
        if rec["status"] == "ok":
            est.record(run, child.seconds)
        if not meta.get("device") and rec.get("result") and rec["result"].get("device"):
            meta["device"] = rec["result"]["device"]
        doc["runs"].append(rec)
        meta["elapsed_seconds"] = time.monotonic() - start
        sb.write_json_atomic(out_path, doc)
        print(live_row(rec), flush=True)
    meta["finished"] = sb.utc_now()
    meta["elapsed_seconds"] = time.monotonic() - start
    doc["targets"] = check_targets(doc["runs"], meta["plan"])
    sb.write_json_atomic(out_path, doc)
    timed = [r for r in doc["runs"] if not r.get("warmup")]
    bad = [r for r in timed if r["status"] != "ok"]
    print(f"\n{len(timed)} run(s) in {(time.monotonic() - start) / 60:.1f} min, {len(bad)} failed, "
          f"{len(doc['not_run'])} not run; wrote {out_path}")
    if doc["not_run"] and any(n["why"] == "time budget" for n in doc["not_run"]):
        print(f"to finish: the same command with --skip-done {out}")
    report_docs(load_docs(out), out, plot=not args.no_plot)
    return 1 if bad or e2e_failed else 0


def e2e_generate_seconds(f: E2eFile) -> float:
    """0 when the kernel's file is there to reuse, else the estimate of writing it."""
    try:
        if os.path.getsize(f.path) == f.bytes:
            return 0.0
    except OSError:
        pass
    return 0.5 + f.bytes / GENERATE_BYTES_S  # the tool's start, its parallel writes, the fsync


def dry_run(args: argparse.Namespace, plan: Plan) -> int:
    """Prints the plan: the file steps, every run's command with its estimate, what the budget would leave."""
    path = file_name(args.dir, plan.file_bytes)
    reuse = stamps_ok(path, plan.file_bytes)
    generate_s = 0.0
    if plan.needs_micro_file:
        print(f"# file: {path} ({sb.format_size(plan.file_bytes)}): "
              + ("reused (it holds the pattern)" if reuse else
                 f"generated (estimated {plan.file_bytes / GENERATE_BYTES_S:.0f} s at "
                 f"{GENERATE_BYTES_S / 1e9:.1f} GB/s)"))
        generate_s = 0 if reuse else plan.file_bytes / GENERATE_BYTES_S
    for f in plan.e2e_files.values():
        s = e2e_generate_seconds(f)
        print(f"# e2e file: {f.path} ({sb.format_size(f.bytes)}, {f.rows} x {f.cols}): "
              + (f"generated before {f.kernel}'s first run (estimated {s:.0f} s, then fsync): "
                 f"{shlex.join(generate_command(args.build, f, f.path + '.tmp<pid>'))}" if s else "reused (its size)"))
    print(f"# results: {args.out or 'bench/results/<device>-<date>-<commit7>-files'}/files-<tag>.json and files.png")
    print("# cold runs: --direct on (O_DIRECT) where the filesystem takes it, else the page cache dropped first "
          "(--cold)" if args.cold == "auto" else f"# cold runs: --cold {args.cold}")
    print("# warm runs: --direct off, the file read into the page cache (again whenever another file was read "
          "in between), then, the first time, one untimed warm-up run (not for e2e and ceiling)")
    for n in plan.notes:
        print(f"# note: {n}")
    est = Estimator()
    total = 0.0
    left: list[Run] = []
    cache = PageCache()
    made: set[str] = set()
    for r in plan.runs:
        run_path = r.file or path
        run_bytes = plan.e2e_files[r.kernel].bytes if r.kernel else plan.file_bytes
        s = est.seconds(r)
        if r.mode == "warm" and cache.needs_fill(run_path):
            s = (2 * s if r.tool in ("read", "baseline") and run_path not in cache.filled else s) \
                + cache.fill_seconds(run_path, run_bytes)
        if r.kernel and r.kernel not in made:
            s += e2e_generate_seconds(plan.e2e_files[r.kernel])
        if args.time_budget and generate_s + total + 1.2 * s > args.time_budget * 60:
            left.append(r)
            continue
        if r.mode == "warm":
            cache.mark(run_path)
        if r.kernel:
            made.add(r.kernel)
        total += s
        print(f"# {r.describe()}  (priority {r.priority}, estimated {s:.1f} s)")
        print(shlex.join(command_of(r, args.build, path, "direct" if args.cold != "drop-caches" else "drop-caches")))
    print(f"# {len(plan.runs) - len(left)} run(s), estimated {total / 60:.1f} min"
          + (f" + {generate_s / 60:.1f} min to generate the micro file" if generate_s else ""))
    if left:
        print(f"# not run within --time-budget {args.time_budget:g} min ({len(left)}):")
        for r in left:
            print(f"#   {r.describe()}  (estimated {est.seconds(r):.1f} s)")
    return 0


def apply_quick(args: argparse.Namespace) -> None:
    """--quick: a smoke test of every section on small files (every e2e kernel and contender: 64 MiB files),
    a few minutes on the GPU machine."""
    if not args.quick:
        return
    defaults = {"file_size": ("10GiB", "256MiB"), "requests": (DEFAULT_REQUESTS, "4KiB,64KiB"),
                "random_reads": (2048, 256), "replacement_cache": ("1GiB", "64MiB"),
                "replacement_requests": ("4KiB,64KiB", "64KiB"), "cache_size": ("2GiB", "512MiB"),
                "verify": ("auto", "all"), "e2e_rows": (0, 4096), "e2e_cols": (0, 4096),
                "time_budget": (0, QUICK_BUDGET_MIN)}
    for name, (default, quick) in defaults.items():
        if getattr(args, name) == default:
            setattr(args, name, quick)


# ---------------------------------------------------------------------------------------------------------
# Report: tables, targets, plot
# ---------------------------------------------------------------------------------------------------------


def load_docs(path: str) -> list[tuple[str, dict]]:
    """(file, document) for a files-*.json file, or for every one under a directory, oldest first."""
    files = [path] if os.path.isfile(path) else sorted(glob.glob(os.path.join(path, "**", "files-*.json"),
                                                                 recursive=True))
    docs = []
    for p in files:
        try:
            with open(p, encoding="utf-8") as f:
                docs.append((p, json.load(f)))
        except (OSError, json.JSONDecodeError) as e:
            print(f"file_bench: warning: {p}: {e}", file=sys.stderr)
    docs.sort(key=lambda pd: str(pd[1].get("meta", {}).get("date", "")))
    return docs


def merged_runs(docs: list[tuple[str, dict]]) -> dict[str, dict]:
    """The timed runs by key; a later file's run replaces an earlier one unless it failed and that did not."""
    runs: dict[str, dict] = {}
    for _, d in docs:
        for r in d.get("runs", []):
            if r.get("warmup"):
                continue
            old = runs.get(r["key"])
            if old is None or r.get("status") == "ok" or old.get("status") != "ok":
                runs[r["key"]] = r
    return runs


def gbps(runs: dict[str, dict], section: str, config: str, mode: str, request: int) -> float | None:
    r = runs.get("|".join([section, config, mode, str(request)]))
    return r.get("gbps") if r and r.get("status") == "ok" else None


def check_targets(run_list: list[dict] | dict[str, dict], planned: list[str] | None = None) -> list[dict]:
    """The issue's targets from the measured numbers: per mode and request size for the micro ratios (the
    headline at the smallest request, where readahead matters), per mode for random reads, per mode for the
    e2e geomeans (over the kernels measured, out of those `planned`, the plans' run keys, name)."""
    runs = run_list if isinstance(run_list, dict) else {r["key"]: r for r in run_list if not r.get("warmup")}
    out = []
    micro = [r for r in runs.values() if r["section"] == "micro"]
    requests = sorted({r["request"] for r in micro})
    for name, what, threshold in TARGETS:
        for mode in MODES:
            if name == "adaptive_vs_off_random":
                reqs = sorted({r["request"] for r in runs.values() if r["section"] == "random"})
                pairs = [(q, gbps(runs, "random", "adaptive", mode, q), gbps(runs, "random", "off", mode, q))
                         for q in reqs]
            else:
                other = "4k" if name == "readahead_vs_4k_pages" else "64k"
                pairs = [(q, gbps(runs, "micro", "4k+ra64k", mode, q), gbps(runs, "micro", other, mode, q))
                         for q in requests]
            for q, a, b in pairs:
                ratio = a / b if a and b else None
                out.append({"target": name, "what": what, "mode": mode, "request": q, "threshold": threshold,
                            "ratio": ratio, "pass": None if ratio is None else ratio >= threshold,
                            "headline": name == "adaptive_vs_off_random" or q == (requests[0] if requests else q)})
    return out + e2e_targets(runs, planned or [])


def e2e_parts(rec: dict) -> tuple[str, str]:
    """(kernel, contender) of an e2e record."""
    kernel, _, contender = rec["config"].partition("/")
    return rec.get("kernel") or kernel, rec.get("contender") or contender


def e2e_planned(planned: list[str]) -> list[dict]:
    """The e2e runs of a plan's keys, as the fields the targets read (section, config, mode, request)."""
    out = []
    for key in planned:
        section, config, mode, request = (key.split("|") + ["", "", "", ""])[:4]
        if section == "e2e" and request.isdigit():
            out.append({"section": section, "config": config, "mode": mode, "request": int(request)})
    return out


def e2e_sizes(runs: dict[str, dict] | list[dict]) -> dict[str, int]:
    """Each kernel's largest file among the e2e records (merged results may hold --quick's too): the size the
    targets and the plot use."""
    sizes: dict[str, int] = {}
    for r in runs.values() if isinstance(runs, dict) else runs:
        if r["section"] == "e2e":
            k = e2e_parts(r)[0]
            sizes[k] = max(sizes.get(k, 0), r["request"])
    return {k: sizes[k] for k in sorted(sizes, key=lambda k: list(E2E_KERNELS).index(k) if k in E2E_KERNELS else 99)}


def e2e_ratio(runs: dict[str, dict], kernel: str, size: int, mode: str, num: str, den: str) -> float | None:
    a = gbps(runs, "e2e", f"{kernel}/{num}", mode, size)
    b = gbps(runs, "e2e", f"{kernel}/{den}", mode, size)
    return a / b if a and b else None


def e2e_targets(runs: dict[str, dict], planned: list[str]) -> list[dict]:
    """Issue 6's e2e target: the geometric mean over kernels (each at its largest file) of gpufs's GB/s over
    the CPU I/O baseline's (N=4), cold and warm, against 1.8; the other pairs of E2E_TARGETS as information.
    A kernel planned but not measured counts in `of`, not in the mean."""
    known = [r for r in runs.values() if r["section"] == "e2e"] + e2e_planned(planned)
    sizes = e2e_sizes(known)
    out = []
    for num, den, threshold in E2E_TARGETS:
        for mode in MODES:
            kernels = [k for k, q in sizes.items()
                       if any(r["mode"] == mode and r["request"] == q and e2e_parts(r)[0] == k for r in known)]
            if not kernels:
                continue
            per = {k: e2e_ratio(runs, k, sizes[k], mode, num, den) for k in kernels}
            vals = [v for v in per.values() if v]
            ratio = math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None
            out.append({"target": re.sub(r"[^a-z0-9]+", "_", f"e2e {num} vs {den}".lower()),
                        "what": f"{num} / {den} (e2e)", "mode": mode, "request": None, "threshold": threshold,
                        "ratio": ratio, "pass": None if ratio is None or threshold is None else ratio >= threshold,
                        "headline": threshold is not None, "kernels": per, "measured": len(vals), "of": len(per)})
    return out


def print_targets(targets: list[dict]) -> None:
    print("\ntargets (issue 6), from this run's numbers:")
    if not targets:
        print("  (none measured)")
    for t in targets:
        verdict = "not measured" if t["ratio"] is None else ("PASS" if t["pass"] else "FAIL")
        if t.get("kernels") is not None:  # an e2e geomean
            scope = f"{t['measured']}" + (f" of {t['of']}" if t["measured"] != t["of"] else "") + \
                f" kernel{'s' if t['of'] > 1 else ''}"
            if t["threshold"] is None:
                print(f"  {t['what']:<36} {t['mode']:<4} geomean: {sb.fmt_num(t['ratio'], 2, 5)}x"
                      f"{' ' * 17}information   ({scope})")
            else:
                print(f"  {t['what']:<36} {t['mode']:<4} geomean: {sb.fmt_num(t['ratio'], 2, 5)}x, "
                      f"target >= {t['threshold']:g}x  {verdict}   ({scope})")
            continue
        mark = "" if t["headline"] else "   (other request size)"
        print(f"  {t['what']:<36} {t['mode']:<4} {sb.format_size(t['request']):>7}: "
              f"{sb.fmt_num(t['ratio'], 2, 5)}x, target >= {t['threshold']:g}x  {verdict}{mark}")
    head = [t for t in targets if t["headline"]]
    if head:
        count = {v: sum(1 for t in head if t["pass"] is v) for v in (True, False, None)}
        print(f"  headline points (the smallest request; random reads; e2e geomeans): {count[True]} PASS, "
              f"{count[False]} FAIL, {count[None]} not measured")


def print_tables(runs: dict[str, dict], meta: dict) -> None:
    info = meta.get("file") or {}
    machine = (f" ({meta['cpus']} CPUs, {meta['memory_bytes'] / GiB:.0f} GiB memory)"
               if meta.get("cpus") and meta.get("memory_bytes") else "")
    print(f"\ndevice {meta.get('device')}{machine}, {str(meta.get('date'))[:10]}, "
          f"commit {str(meta.get('commit'))[:10]}; "
          + (f"file {sb.format_size(info.get('bytes', 0))}" if info else "no micro file")
          + f" on {((meta.get('filesystem') or {}).get('type'))}; cold = {meta.get('cold_method')}")
    files = meta.get("e2e_files") or {}
    if files:
        print("e2e files: " + ", ".join(f"{k} {f['rows']} x {f['cols']} ({sb.format_size(f['bytes'])}"
                                       f"{', generated' if f.get('generated') else ''})" for k, f in files.items()))
    print(LIVE_HEADER)
    for r in runs.values():
        print(live_row(r))
    micro = [r for r in runs.values() if r["section"] == "micro"]
    if micro:
        requests = sorted({r["request"] for r in micro})
        print(f"\nmicro: {meta.get('blocks')} blocks x {meta.get('threads')} threads, each its own stride; GB/s "
              f"by request size")
        print(f"  {'configuration':<44} {'mode':<4} " + " ".join(f"{sb.format_size(q):>7}" for q in requests))
        for c in CONFIGS:
            for mode in MODES:
                if any(r["config"] == c and r["mode"] == mode for r in micro):
                    print(f"  {c + ' (' + CONFIGS[c][3] + ')':<44} {mode:<4} "
                          + " ".join(sb.fmt_num(gbps(runs, "micro", c, mode, q), 2, 7) for q in requests))
    base = [r for r in runs.values() if r["section"] == "baseline"]
    if base:
        print("\nCPU I/O baseline (xeflow-file-baseline: N pread threads, pinned buffers, cudaMemcpyAsync): GB/s")
        for r in base:
            print(f"  {r['config']:<6} {r['mode']:<4} {sb.format_size(r['request']):>7} requests: "
                  f"{sb.fmt_num(r.get('gbps') if r['status'] == 'ok' else None, 2, 7)}  {r['status']}")
    rnd = [r for r in runs.values() if r["section"] == "random"]
    if rnd:
        print("\nrandom (data-dependent chains): GB/s of bytes read, I/O requests, pages read ahead (used)")
        for r in rnd:
            res = r.get("result") or {}
            print(f"  readahead {r['config']:<8} {r['mode']:<4} {sb.format_size(r['request']):>7}: "
                  f"{sb.fmt_num(r.get('gbps') if r['status'] == 'ok' else None, 3, 7)} GB/s "
                  f"{str(res.get('requests', '-')):>9} requests {str(res.get('ahead_pages', '-')):>9} "
                  f"({res.get('ahead_hits', '-')})  {r['status']}")
    repl = [r for r in runs.values() if r["section"] == "replacement"]
    if repl:
        cache = (repl[0].get("result") or {}).get("cache_size")
        print(f"\nreplacement (file larger than the cache{', ' + sb.format_size(cache) if cache else ''}): GB/s")
        for r in repl:
            print(f"  {r['config']:<6} {r['mode']:<4} {sb.format_size(r['request']):>7}: "
                  f"{sb.fmt_num(r.get('gbps') if r['status'] == 'ok' else None, 2, 7)}  {r['status']}")
    print_ceiling(runs)
    print_e2e(runs)


def cell(runs: dict[str, dict], key: str, width: int) -> str:
    """A table's GB/s: the number, 'failed' where the run failed, '-' where there is none."""
    r = runs.get(key)
    if r and r.get("status") != "ok":
        return r.get("status", "failed").rjust(width)
    return sb.fmt_num(r.get("gbps") if r else None, 2, width)


def fmt_ratio(value: float | None, width: int) -> str:
    return (f"{value:.2f}x" if value else "-").rjust(width)


def print_ceiling(runs: dict[str, dict]) -> None:
    ceil = [r for r in runs.values() if r["section"] == "ceiling"]
    if not ceil:
        return
    res = next((r["result"] for r in ceil if r.get("result")), {})
    size = f" {sb.format_size(res['file_bytes'])}" if res.get("file_bytes") else ""
    blocks = sorted({r["request"] for r in ceil})
    print(f"\nceiling (the disk without the GPU: N Python threads, each pread'ing "
          f"{'/'.join(sb.format_size(b) for b in blocks)} blocks of its own part of the{size} micro file): GB/s")
    print(f"  {'threads':<8} {'block':>7} {'cold (O_DIRECT)':>16} {'warm (page cache)':>18}")
    configs = sorted({r["config"] for r in ceil}, key=lambda c: int(c.partition("=")[2] or 0))
    for c in configs:
        for b in blocks:
            if any(r["config"] == c and r["request"] == b for r in ceil):
                print(f"  {c:<8} {sb.format_size(b):>7} {cell(runs, f'ceiling|{c}|cold|{b}', 16)} "
                      f"{cell(runs, f'ceiling|{c}|warm|{b}', 18)}")


#: The e2e table's ratio columns: (header, numerator, denominator).
E2E_RATIO_COLUMNS = [("gpufs/N4", "gpufs", "cpu-io N=4"), ("tuned/N4", "gpufs-tuned", "cpu-io N=4"),
                     ("tuned/N16", "gpufs-tuned", "cpu-io N=16")]


def print_e2e(runs: dict[str, dict]) -> None:
    e2e = [r for r in runs.values() if r["section"] == "e2e"]
    if not e2e:
        return
    present = {e2e_parts(r)[1] for r in e2e}
    contenders = [c for c in E2E_CONTENDERS if c in present] + sorted(present - set(E2E_CONTENDERS))
    width = max(11, *(len(c) for c in contenders))
    print("\nend to end (xeflow-file-kernels: file to result, outputs checked): GB/s of the file; ratios of GB/s")
    print(f"  {'kernel':<8} {'file':>6} {'mode':<4} " + " ".join(f"{c:>{width}}" for c in contenders) + "  "
          + " ".join(f"{h:>9}" for h, _, _ in E2E_RATIO_COLUMNS))
    kernels = sorted({(e2e_parts(r)[0], r["request"]) for r in e2e},
                     key=lambda kq: (list(E2E_KERNELS).index(kq[0]) if kq[0] in E2E_KERNELS else 99, kq[1]))
    for k, q in kernels:
        for mode in MODES:
            if not any(r["mode"] == mode and r["request"] == q and e2e_parts(r)[0] == k for r in e2e):
                continue
            print(f"  {k:<8} {sb.format_size(q):>6} {mode:<4} "
                  + " ".join(cell(runs, f"e2e|{k}/{c}|{mode}|{q}", width) for c in contenders) + "  "
                  + " ".join(fmt_ratio(e2e_ratio(runs, k, q, mode, a, b), 9) for _, a, b in E2E_RATIO_COLUMNS))
    print("  cpu-io N=4 is the issue's CPU I/O baseline (N pread threads, pinned buffers, cudaMemcpyAsync), N=16 a\n"
          "  stronger reference; tuned = gpufs-tuned (" + " ".join(E2E_CONTENDERS["gpufs-tuned"][0][2:]) + ")")


def report_docs(docs: list[tuple[str, dict]], out_dir: str, plot: bool = True) -> int:
    if not docs:
        print("file_bench: error: no files-*.json to report", file=sys.stderr)
        return 2
    runs = merged_runs(docs)
    meta = dict(docs[-1][1].get("meta", {}))
    meta["e2e_files"] = {k: f for _, d in docs for k, f in (d.get("meta", {}).get("e2e_files") or {}).items()}
    print_tables(runs, meta)
    done = set(runs)
    not_run = [n for _, d in docs for n in d.get("not_run", []) if n["key"] not in done]
    if not_run:
        print(f"\nnot run ({len(not_run)}):")
        for n in not_run:
            print(f"  {n['run']}: {n['why']}")
    notes = [n for _, d in docs for n in d.get("meta", {}).get("notes", [])]
    for n in dict.fromkeys(notes):
        print(f"note: {n}")
    print_targets(check_targets(runs, [k for _, d in docs for k in d.get("meta", {}).get("plan", [])]))
    if plot:
        make_plot(runs, meta, out_dir)
    return 0


def make_plot(runs: dict[str, dict], meta: dict, out_dir: str) -> str | None:
    """OUT/files.png: micro GB/s by request size (baseline as lines), random reads, replacement; below them,
    where there are e2e runs, their GB/s by kernel and contender, cold and warm (the ceiling as lines)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot)")
        return None
    ok = {k: r for k, r in runs.items() if r.get("status") == "ok" and r.get("gbps")}
    if not ok:
        return None
    has_e2e = any(r["section"] == "e2e" for r in ok.values())
    has_top = any(r["section"] in ("micro", "random", "baseline", "replacement") for r in ok.values())
    if not (has_top or has_e2e):
        return None  # the ceiling alone: its table says it all
    fig = plt.figure(figsize=(16, 4.8 * (has_top + has_e2e) + 0.2 * (has_top and has_e2e)))
    grid = fig.add_gridspec(has_top + has_e2e, 3, width_ratios=[2.2, 1, 1])
    if has_e2e:
        e2e_axes = grid[int(has_top), :].subgridspec(1, 2)
        plot_e2e(ok, [fig.add_subplot(e2e_axes[0, m]) for m in range(len(MODES))])
    if has_top:
        plot_top(ok, *(fig.add_subplot(grid[0, k]) for k in range(3)))
    fig.suptitle(f"GPU file reads (xeflow file cache, issue 6) — {meta.get('device')}, {str(meta.get('date'))[:10]}, "
                 f"{str(meta.get('commit'))[:7]}", fontsize=10)
    fig.tight_layout()
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "files.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"wrote {path}")
    return path


def plot_top(ok: dict[str, dict], micro, rnd, repl) -> None:
    """The file cache's panels: micro GB/s by request size (baseline as lines), random reads, replacement."""
    styles = {"cold": "-", "warm": "--"}
    for k, c in enumerate(CONFIGS):
        for mode in MODES:
            pts = sorted((r["request"], r["gbps"]) for r in ok.values()
                         if r["section"] == "micro" and r["config"] == c and r["mode"] == mode)
            if pts:
                micro.plot([p[0] / KiB for p in pts], [p[1] for p in pts], styles[mode], marker="o", color=f"C{k}",
                           label=f"{c} {mode}")
    micro.set_xscale("log", base=2)
    requests = sorted({r["request"] for r in ok.values() if r["section"] == "micro"})
    if requests:
        micro.set_xticks([q / KiB for q in requests], [sb.format_size(q) for q in requests])
        micro.minorticks_off()
    for r in (r for r in ok.values() if r["section"] == "baseline"):
        micro.axhline(r["gbps"], color="grey", linestyle=styles[r["mode"]], linewidth=0.8)
        micro.text(0.01, r["gbps"], f"CPU pread {r['config']} {r['mode']}", transform=micro.get_yaxis_transform(),
                   fontsize=7, color="dimgrey", va="bottom")
    micro.set_xlabel("request size")
    micro.set_ylabel("GB/s")
    micro.set_title("microbenchmark: blocks reading their strides")
    if micro.lines:
        micro.legend(fontsize=7)
    for ax, section, title in ((rnd, "random", "random 4 KiB reads: readahead"),
                               (repl, "replacement", "file > cache: replacement")):
        rows = [r for r in ok.values() if r["section"] == section]
        labels = list(dict.fromkeys(f"{r['config']}\n{sb.format_size(r['request'])}" for r in rows))
        for m, mode in enumerate(MODES):
            vals = [next((r["gbps"] for r in rows if f"{r['config']}\n{sb.format_size(r['request'])}" == lab
                          and r["mode"] == mode), 0) for lab in labels]
            ax.bar([i + (m - 0.5) * 0.4 for i in range(len(labels))], vals, 0.4, label=mode)
        ax.set_xticks(range(len(labels)), labels, fontsize=8)
        ax.set_ylabel("GB/s")
        ax.set_title(title)
        if rows:
            ax.legend(fontsize=7)


def plot_e2e(ok: dict[str, dict], axes: list) -> None:
    """The e2e panels, one per mode: bars of GB/s by kernel (each at its largest file), one per contender;
    the ceiling runs of the same mode as horizontal lines."""
    e2e = {k: r for k, r in ok.items() if r["section"] == "e2e"}
    sizes = e2e_sizes(e2e)
    present = {e2e_parts(r)[1] for r in e2e.values()}
    contenders = [c for c in E2E_CONTENDERS if c in present] + sorted(present - set(E2E_CONTENDERS))
    width = 0.8 / max(1, len(contenders))
    line_styles = [":", "-.", "--", (0, (1, 4))]
    for ax, mode in zip(axes, MODES):
        kernels = [k for k in sizes if any(r["mode"] == mode and e2e_parts(r)[0] == k for r in e2e.values())]
        top = 0.0
        for j, c in enumerate(contenders):
            vals = [gbps(e2e, "e2e", f"{k}/{c}", mode, sizes[k]) or 0 for k in kernels]
            top = max([top] + vals)
            ax.bar([i + (j - (len(contenders) - 1) / 2) * width for i in range(len(kernels))], vals, width,
                   label=c + (" (stronger reference)" if c == "cpu-io N=16" else ""), color=f"C{j}")
        ceil = sorted((r for r in ok.values() if r["section"] == "ceiling" and r["mode"] == mode),
                      key=lambda r: int(r["config"].partition("=")[2] or 0))
        for n, r in enumerate(ceil):
            top = max(top, r["gbps"])
            ax.axhline(r["gbps"], color="dimgrey", linestyle=line_styles[n % len(line_styles)], linewidth=1,
                       label=f"{'disk (O_DIRECT)' if mode == 'cold' else 'page cache'} read by Python, {r['config']}")
        ax.set_xticks(range(len(kernels)), [f"{k}\n{sb.format_size(sizes[k])}" for k in kernels], fontsize=8)
        ax.set_ylabel("GB/s of the file")
        ax.set_title(f"end to end, {mode} ({'O_DIRECT' if mode == 'cold' else 'page cache'}): file to result")
        if kernels:
            ax.set_ylim(0, top * 1.35 or 1)
            ax.legend(fontsize=7, ncol=2, loc="upper left")


def cmd_ceiling(args: argparse.Namespace) -> int:
    try:
        block = sb.parse_size(args.block)
    except ValueError as e:
        print(f"file_bench ceiling: error: --block: {e}", file=sys.stderr)
        return 2
    if args.threads < 1 or block <= 0 or block % 4096:
        print("file_bench ceiling: error: --threads at least 1, --block a positive multiple of 4 KiB", file=sys.stderr)
        return 2
    try:
        result = read_ceiling(args.file, args.threads, block, args.direct == "on")
    except OSError as e:
        what = "O_DIRECT " if args.direct == "on" else ""
        print(f"file_bench ceiling: error: {what}reading {args.file}: {e}", file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    docs = load_docs(args.results)
    out_dir = args.out_dir or (args.results if os.path.isdir(args.results) else os.path.dirname(args.results) or ".")
    return report_docs(docs, out_dir, plot=not args.no_plot)


# ---------------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="generate the file and run the benchmark (or --dry-run: print the plan)",
                       description="Generates (or reuses) the file, runs the selected runs and writes "
                                   "OUT/files-<tag>.json after each one; at the end the table, the targets and "
                                   "OUT/files.png.")
    r.add_argument("--build", default="build-gpu",
                   help="meson build directory, release, with apps/file_baseline's and apps/file_kernels' tools "
                        "(default: build-gpu)")
    r.add_argument("--dir", default="/var/tmp/xeflow-file-bench",
                   help="where the test files are generated: a disk, not tmpfs (cold runs read them O_DIRECT) "
                        "(default: /var/tmp/xeflow-file-bench)")
    r.add_argument("--file-size", default="10GiB", help="the test file's size (default: 10GiB)")
    r.add_argument("--out", default="",
                   help="results directory (default: bench/results/<device>-<date>-<commit7>-files)")
    r.add_argument("--tag", default="", help="the results file's name, files-<tag>.json (default: UTC time)")
    r.add_argument("--commit", default="", help="commit to record when `git rev-parse HEAD` cannot tell")
    r.add_argument("--quick", action="store_true",
                   help="smoke test: a 256 MiB file, 4KiB and 64KiB requests, 512 MiB cache, 256 random reads a "
                        "block, 64 MiB cache and 64KiB requests for replacement, every run verified, 64 MiB e2e "
                        f"files (--e2e-rows 4096 --e2e-cols 4096), --time-budget {QUICK_BUDGET_MIN:g} (each unless "
                        "given otherwise)")
    r.add_argument("--dry-run", action="store_true", help="print the plan and the commands; run nothing")
    r.add_argument("--time-budget", type=float, default=0,
                   help="minutes: start no run whose estimate would end past this (it is listed as not run, to "
                        "finish with --skip-done); 0 = no limit (default)")
    r.add_argument("--skip-done", action="append", default=[], metavar="DIR",
                   help="skip runs recorded ok in DIR/**/files-*.json (repeatable)")
    r.add_argument("--timeout", type=float, default=300, help="seconds per run (default: 300)")
    r.add_argument("--no-plot", action="store_true", help="no PNG at the end")
    g = r.add_argument_group("what runs")
    g.add_argument("--sections", default=",".join(SECTIONS), help=f"of {', '.join(SECTIONS)} (default: all)")
    g.add_argument("--modes", default="cold,warm",
                   help="cold (O_DIRECT or dropped caches) and/or warm (page cache) (default: cold,warm)")
    g.add_argument("--cold", choices=["auto", "direct", "drop-caches"], default="auto",
                   help="how a cold run is cold: O_DIRECT, or the page cache dropped before it (root); auto: "
                        "O_DIRECT where the filesystem takes it (default)")
    g.add_argument("--configs", default=DEFAULT_CONFIGS,
                   help=f"micro configurations, of {', '.join(CONFIGS)} (default: {DEFAULT_CONFIGS})")
    g.add_argument("--requests", default=DEFAULT_REQUESTS, help=f"micro request sizes (default: {DEFAULT_REQUESTS})")
    g.add_argument("--blocks", type=int, default=120, help="blocks of xeflow-file-read (default: 120)")
    g.add_argument("--threads", type=int, default=512, help="threads a block (default: 512)")
    g.add_argument("--cache-size", default="2GiB",
                   help="the file cache (device memory) of the micro and random runs (default: 2GiB)")
    g.add_argument("--io-threads", type=int, default=0,
                   help="xeflow-file-read --io-threads (default: 0, the tool's own default)")
    g.add_argument("--verify", choices=["auto", "all", "none"], default="auto",
                   help="which runs check the device's checksum against the host's; auto: all but the cold stride "
                        "runs, whose check re-reads the whole file from the disk (default: auto)")
    g.add_argument("--random-modes", default=",".join(RANDOM_MODES),
                   help="readahead modes of the random runs (default: on,off,adaptive)")
    g.add_argument("--random-reads", type=int, default=2048, help="reads per block of the random runs (default: 2048)")
    g.add_argument("--random-request", default="4KiB", help="the random runs' read size (default: 4KiB)")
    g.add_argument("--random-readahead", default="64KiB",
                   help="--readahead of the random runs, for on and adaptive (default: 64KiB)")
    g.add_argument("--baseline-threads", default="1,4", help="N of the CPU baseline (default: 1,4)")
    g.add_argument("--baseline-request", default="1MiB", help="the CPU baseline's pread and copy size (default: 1MiB)")
    g.add_argument("--replacement-cache", default="1GiB",
                   help="the cache of the replacement runs, smaller than the file (default: 1GiB)")
    g.add_argument("--replacement-requests", default="4KiB,64KiB",
                   help="request sizes of the replacement runs (4 KiB pages + 64 KiB readahead) (default: 4KiB,64KiB)")
    g.add_argument("--replacement-modes", default="cold,warm",
                   help="modes of the replacement runs, of those --modes selects (default: cold,warm)")
    g.add_argument("--read-arg", action="append", default=[], metavar="ARG",
                   help="an extra argument for every xeflow-file-read run (repeatable; --read-arg=--io-slots=8)")
    g.add_argument("--baseline-arg", action="append", default=[], metavar="ARG",
                   help="an extra argument for every xeflow-file-baseline run (repeatable)")
    g.add_argument("--e2e-kernels", default=",".join(E2E_KERNELS),
                   help=f"the e2e runs' kernels (default: {','.join(E2E_KERNELS)})")
    g.add_argument("--e2e-contenders", default=",".join(E2E_CONTENDERS),
                   help="the e2e runs' contenders: " + "; ".join(f"{k}: {v[1]}" for k, v in E2E_CONTENDERS.items())
                        + " (default: all; quote the list: --e2e-contenders 'gpufs,cpu-io N=4')")
    g.add_argument("--e2e-rows", type=int, default=0,
                   help="rows of each e2e matrix, halved for gesummv's two (default: 0, the tool's: 32768, a 4 GiB "
                        "file per kernel)")
    g.add_argument("--e2e-cols", type=int, default=0, help="columns of each e2e matrix (default: 0, the tool's: 32768)")
    g.add_argument("--e2e-arg", action="append", default=[], metavar="ARG",
                   help="an extra argument for every xeflow-file-kernels run (repeatable; --e2e-arg=--blocks=264)")
    g.add_argument("--ceiling-threads", default=DEFAULT_CEILING_THREADS,
                   help=f"reader threads of the ceiling runs (default: {DEFAULT_CEILING_THREADS})")
    g.add_argument("--ceiling-block", default="1MiB", help="the ceiling runs' read size (default: 1MiB)")
    r.set_defaults(func=cmd_run)
    p = sub.add_parser("report", help="the table, targets and plot again, from saved JSON")
    p.add_argument("results", help="a files-*.json, or a directory: every files-*.json under it, merged")
    p.add_argument("--out-dir", default="", help="where files.png goes (default: beside the JSON)")
    p.add_argument("--no-plot", action="store_true")
    p.set_defaults(func=cmd_report)
    c = sub.add_parser("ceiling", help="one ceiling run: read a file with N threads, no GPU (JSON on stdout)",
                       description="Reads FILE whole with --threads threads, each its own contiguous part in --block "
                                   "preads into a page-aligned buffer, O_DIRECT (--direct on) or through the page "
                                   "cache; prints bytes, seconds and GB/s as JSON.")
    c.add_argument("file")
    c.add_argument("--threads", type=int, default=1, help="reader threads (default: 1)")
    c.add_argument("--block", default="1MiB", help="bytes a pread, a multiple of 4 KiB (default: 1MiB)")
    c.add_argument("--direct", choices=["on", "off"], default="on", help="O_DIRECT (default: on)")
    c.add_argument("--json", action="store_true", help="accepted for the runs' common form (the output is JSON)")
    c.set_defaults(func=cmd_ceiling)
    return sb.run_command(parser.parse_args(argv),
                          "file_bench: interrupted; the results file holds every run finished so far")

if __name__ == "__main__":
    sys.exit(main())
