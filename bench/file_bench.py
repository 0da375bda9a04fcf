#!/usr/bin/env python3
"""GPU file reads (issue 6; the GPUfs readahead paper): xeflow's file cache against the CPU I/O baseline.

Runs on the GPU machine from the repository root with a release build (`--build build-gpu`; meson's debug
build adds -G to device code), over a file it generates on that machine's disk (`--dir`, default
/var/tmp/xeflow-file-bench; a file of the right size and pattern is reused):

  micro        the paper's microbenchmark: xeflow-file-read, 120 blocks x 512 threads, each block reading its
               own stride of the file in request-size reads (4 KiB .. 1 MiB) with block_read, for
               4k+ra64k (4 KiB pages + 64 KiB readahead, the paper's prefetcher: --readahead-mode on),
               4k (4 KiB pages, no readahead) and 64k (64 KiB pages, no readahead)
  random       data-dependent 4 KiB reads (the paper's Mosaic case: xeflow-file-read --pattern random, each
               block's next offset from the bytes it just read) with readahead on, off and adaptive
  baseline     xeflow-file-baseline: N host threads pread into pinned buffers + cudaMemcpyAsync, N = 1, 4
  replacement  the file larger than the cache (1 GiB): LRA (per-block queues) against the global policy

each cold (O_DIRECT: --direct on; where the filesystem refuses O_DIRECT, caches dropped before the run and
--direct off) and warm (buffered, --direct off, with the file in the page cache and one untimed warm-up
run first). Every run is checked: the tools compare the device's checksum with the host's (stride runs:
the file's sum; random runs: the host walking the same chains with pread). By default the cold stride
runs skip that check (it re-reads the whole file from the disk; the warm runs check the same code path):
--verify all checks them too.

  python3 bench/file_bench.py run --build build-gpu                      # everything (~10+ min on an H100)
  python3 bench/file_bench.py run --build build-gpu --quick              # smoke test, < 60 s
  python3 bench/file_bench.py run --build build-gpu --time-budget 9 --out $OUT/files
  python3 bench/file_bench.py run --dry-run                              # the plan and its commands
  python3 bench/file_bench.py report bench/results/h100-2026-11-25-abc1234-files

Writes OUT/files-<tag>.json after every run (meta: device, date, commit, the file, its filesystem and how
long it took to generate; per run: the command, return code, the tool's --json output, stderr's tail)
and, at the end, the table, the issue's targets with PASS/FAIL, and OUT/files.png. OUT defaults to
bench/results/<device>-<date>-<commit7>-files/. Runs that --time-budget leaves out are listed as not
run; `--skip-done OUT` in a later call runs only those, and `report OUT` merges every files-*.json there.
"""
from __future__ import annotations

import argparse
import glob
import json
import mmap
import os
import random
import re
import shlex
import shutil
import signal
import sys
import time
from array import array
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stream_bench as sb  # noqa: E402  (shared helpers: sizes, children, meta, JSON)

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

SECTIONS = ["micro", "random", "baseline", "replacement"]

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


# ---------------------------------------------------------------------------------------------------------
# The runs of a plan
# ---------------------------------------------------------------------------------------------------------


@dataclass
class Run:
    """One measurement: a tool's command over the file, cold or warm."""

    section: str  # micro | random | baseline | replacement
    config: str  # micro: a CONFIGS name; random: the readahead mode; baseline: "N=<threads>"; replacement: lra|global
    mode: str  # cold | warm
    request: int
    priority: int  # lower runs first (the targets' runs before the rest), so a time budget keeps them
    args: list[str]  # the tool's options, without the file, --direct and --no-verify
    tool: str  # "read" (xeflow-file-read) or "baseline" (xeflow-file-baseline)
    io_bytes: int  # bytes its I/O is expected to move (readahead included), for the estimate
    ios: int  # I/O requests it is expected to make, for the estimate
    verify: bool
    verify_bytes: int = 0  # what the tool's check re-reads on the host

    @property
    def key(self) -> str:
        return "|".join([self.section, self.config, self.mode, str(self.request)])

    @property
    def group(self) -> str:
        """The runs whose speed predicts each other's (for the estimates)."""
        return "|".join([self.section, self.config, self.mode])

    def describe(self) -> str:
        return f"{self.section} {self.config} {self.mode} {sb.format_size(self.request)}"


@dataclass
class Plan:
    runs: list[Run]
    file_bytes: int
    notes: list[str] = field(default_factory=list)


def tool_path(build: str, tool: str) -> str:
    name = "xeflow-file-read" if tool == "read" else "xeflow-file-baseline"
    return os.path.join(build, "apps", "file_baseline", name)


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
    order = {id(r): k for k, r in enumerate(runs)}
    runs.sort(key=lambda r: (r.priority, MODES.index(r.mode), order[id(r)]))
    plan = Plan(runs, file_bytes)
    if "replacement" in sections and sb.parse_size(args.replacement_cache) >= file_bytes:
        plan.notes.append(f"replacement: the cache ({args.replacement_cache}) is not smaller than the file "
                          f"({sb.format_size(file_bytes)}): nothing is evicted")
    return plan


def command_of(run: Run, build: str, path: str, cold_method: str) -> list[str]:
    """The run's command line: cold runs read O_DIRECT (--direct on) unless caches are dropped instead."""
    direct = "on" if run.mode == "cold" and cold_method == "direct" else "off"
    cmd = [tool_path(build, run.tool), path] + run.args + ["--direct", direct, "--json"]
    if not run.verify:
        cmd.append("--no-verify")
    return cmd


# ---------------------------------------------------------------------------------------------------------
# Estimates and the time budget
# ---------------------------------------------------------------------------------------------------------


def base_estimate(run: Run) -> float:
    """Seconds the run should take on the figures above: its I/O (bytes or requests, whichever binds), the
    process's fixed cost, and the host's check."""
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
    """bench/results/<device>-<date>-<commit7>-files, like the other benchmarks' folders."""
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
           "request": run.request, "tool": os.path.basename(cmd[0]), "command": shlex.join(cmd),
           "cold_method": cold_method if run.mode == "cold" else None, "verify": run.verify,
           "returncode": child.returncode, "timed_out": child.timed_out, "seconds_wall": child.seconds,
           "stderr_tail": sb.tail(child.stderr), "result": doc}
    if child.error:
        rec["error"] = child.error
    status = "ok" if child.returncode == 0 and doc else ("timeout" if child.timed_out else "failed")
    why = None
    if doc:
        rec["gbps"] = doc.get("gbps")
        rec["seconds"] = doc.get("seconds")
        rec["bytes"] = doc.get("bytes")
        rec["verified"] = doc.get("verified") if run.verify else None
        if run.verify and doc.get("verified") is not True:
            status, why = "failed", "the device's checksum is not the host's"
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
    ahead = f"{res.get('ahead_pages', '-')}/{res.get('ahead_hits', '-')}" if rec["tool"] == "xeflow-file-read" else "-"
    verified = {True: "yes", False: "NO"}.get(rec.get("verified"), "-")
    return (f"{rec['section']:<11} {rec['config']:<11} {rec['mode']:<4} {sb.format_size(rec['request']):>7} "
            f"{sb.fmt_num(rec.get('gbps'), 2, 7)} {sb.fmt_num(rec.get('seconds'), 3, 8)} "
            f"{str(res.get('requests', '-')):>9} {ahead:>15} {verified:>5}  {rec['status']}"
            f"{'  ' + rec['why'] if rec.get('why') else ''}")


LIVE_HEADER = (f"{'section':<11} {'config':<11} {'mode':<4} {'request':>7} {'GB/s':>7} {'kernel s':>8} "
               f"{'requests':>9} {'ahead/used':>15} {'ok?':>5}  status")


def resolve_cold_method(args: argparse.Namespace, path: str, notes: list[str]) -> str | None:
    """How cold runs are made cold: 'direct' (O_DIRECT), 'drop-caches', or None (neither works here)."""
    why = probe_direct(path)
    if args.cold in ("auto", "direct") and why is None:
        return "direct"
    if args.cold == "direct":
        notes.append(f"cold runs not possible: {path} cannot be read O_DIRECT ({why})")
        return None
    refused = drop_caches()
    if refused is None:
        if args.cold == "auto":
            notes.append(f"{path} cannot be read O_DIRECT ({why}): cold runs drop the page cache first instead")
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

    for tool in sorted({r.tool for r in plan.runs}):
        if not os.access(tool_path(args.build, tool), os.X_OK):
            print(f"file_bench: error: {tool_path(args.build, tool)} is not there (build it: ninja -C {args.build} "
                  f"apps/file_baseline/{os.path.basename(tool_path(args.build, tool))})", file=sys.stderr)
            return 2
    meta = sb.run_meta(args)
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
    file_est = file_bytes / GENERATE_BYTES_S
    if budget_s and not stamps_ok(file_name(args.dir, file_bytes), file_bytes) and file_est > budget_s:
        print(f"file_bench: error: generating the {sb.format_size(file_bytes)} file alone is estimated at "
              f"{file_est:.0f} s, past --time-budget", file=sys.stderr)
        return 2
    try:
        info = ensure_file(args.dir, file_bytes)
    except OSError as e:
        print(f"file_bench: error: the test file: {e}", file=sys.stderr)
        return 1
    path = info["path"]
    fs = filesystem_of(path)
    print(f"file {path}: {sb.format_size(file_bytes)}, "
          + (f"generated in {info['seconds']:.1f} s ({info['gbps']:.2f} GB/s: write {info['write_seconds']:.1f} s, "
             f"fsync {info['fsync_seconds']:.1f} s)" if info["generated"] else "reused")
          + f"; filesystem {fs['type']} on {fs['device']} ({fs['mount']})", flush=True)
    notes = list(plan.notes)
    cold_method = resolve_cold_method(args, path, notes) if any(r.mode == "cold" for r in todo) else None
    for n in notes:
        print(f"note: {n}")
    meta.update({"file": info, "filesystem": fs, "cold_method": cold_method, "notes": notes, "tag": tag,
                 "blocks": args.blocks, "threads": args.threads, "quick": args.quick,
                 "plan": [r.key for r in plan.runs]})
    doc = {"meta": meta, "runs": [], "not_run": []}
    print(f"device: {meta['device'] or 'unknown (nvidia-smi gave nothing)'}; commit: {meta['commit'] or 'unknown'}; "
          f"{len(todo)} run(s), estimated {sum(est.seconds(r) for r in todo) / 60:.1f} min; results in {out_path}")
    print(LIVE_HEADER, flush=True)

    cache_warm = False
    for run in todo:
        if run.mode == "cold" and cold_method is None:
            doc["not_run"].append({"key": run.key, "run": run.describe(), "why": "no way to run cold here "
                                   "(see notes)"})
            continue
        cmd = command_of(run, args.build, path, cold_method or "direct")
        need_fill = run.mode == "warm" and not cache_warm
        seconds = est.seconds(run) * (2 if need_fill else 1) + (file_bytes / 3e9 if need_fill else 0)
        elapsed = time.monotonic() - start
        if budget_s and elapsed + 1.2 * seconds > budget_s:
            doc["not_run"].append({"key": run.key, "run": run.describe(), "why": "time budget",
                                   "estimated_seconds": round(seconds, 1)})
            sb.write_json_atomic(out_path, doc)
            continue
        timeout = args.timeout if not budget_s else max(20.0, min(args.timeout, budget_s - elapsed))
        if need_fill:
            # The page cache holds the file, then one untimed run of the same command.
            meta.setdefault("page_cache_fills", []).append({"seconds": fill_page_cache(path), "before": run.key})
            warm_cmd = cmd if "--no-verify" in cmd else cmd + ["--no-verify"]
            warm = sb.run_child(warm_cmd, timeout)
            wrec = record_of(run, warm, warm_cmd, cold_method)
            wrec["warmup"] = True
            doc["runs"].append(wrec)
            cache_warm = True
        if run.mode == "cold" and cold_method == "drop-caches":
            refused = drop_caches()
            cache_warm = False
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
    doc["targets"] = check_targets(doc["runs"])
    sb.write_json_atomic(out_path, doc)
    timed = [r for r in doc["runs"] if not r.get("warmup")]
    bad = [r for r in timed if r["status"] != "ok"]
    print(f"\n{len(timed)} run(s) in {(time.monotonic() - start) / 60:.1f} min, {len(bad)} failed, "
          f"{len(doc['not_run'])} not run; wrote {out_path}")
    if doc["not_run"] and any(n["why"] == "time budget" for n in doc["not_run"]):
        print(f"to finish: the same command with --skip-done {out}")
    report_docs(load_docs(out), out, plot=not args.no_plot)
    return 1 if bad else 0


def dry_run(args: argparse.Namespace, plan: Plan) -> int:
    """Prints the plan: the file step, every run's command with its estimate, what the budget would leave."""
    path = file_name(args.dir, plan.file_bytes)
    reuse = stamps_ok(path, plan.file_bytes)
    print(f"# file: {path} ({sb.format_size(plan.file_bytes)}): "
          + ("reused (it holds the pattern)" if reuse else
             f"generated (estimated {plan.file_bytes / GENERATE_BYTES_S:.0f} s at {GENERATE_BYTES_S / 1e9:.1f} GB/s)"))
    print(f"# results: {args.out or 'bench/results/<device>-<date>-<commit7>-files'}/files-<tag>.json and files.png")
    print("# cold runs: --direct on (O_DIRECT) where the filesystem takes it, else the page cache dropped first "
          "(--cold)" if args.cold == "auto" else f"# cold runs: --cold {args.cold}")
    print("# warm runs: --direct off, the file read into the page cache and one untimed warm-up run first")
    for n in plan.notes:
        print(f"# note: {n}")
    est = Estimator()
    total = 0.0
    left: list[Run] = []
    warm = False
    for r in plan.runs:
        s = est.seconds(r)
        if r.mode == "warm" and not warm:
            s = 2 * s + plan.file_bytes / 3e9
            warm = True
        if args.time_budget and total + 1.2 * s > args.time_budget * 60:
            left.append(r)
            continue
        total += s
        print(f"# {r.describe()}  (priority {r.priority}, estimated {s:.1f} s)")
        print(shlex.join(command_of(r, args.build, path, "direct" if args.cold != "drop-caches" else "drop-caches")))
    print(f"# {len(plan.runs) - len(left)} run(s), estimated {total / 60:.1f} min"
          + ("" if reuse else f" + {plan.file_bytes / GENERATE_BYTES_S / 60:.1f} min to generate the file"))
    if left:
        print(f"# not run within --time-budget {args.time_budget:g} min ({len(left)}):")
        for r in left:
            print(f"#   {r.describe()}  (estimated {est.seconds(r):.1f} s)")
    return 0


def apply_quick(args: argparse.Namespace) -> None:
    """--quick: a smoke test of every section on a small file, under a minute on the GPU machine."""
    if not args.quick:
        return
    defaults = {"file_size": ("10GiB", "256MiB"), "requests": (DEFAULT_REQUESTS, "4KiB,64KiB"),
                "random_reads": (2048, 256), "replacement_cache": ("1GiB", "64MiB"),
                "replacement_requests": ("4KiB,64KiB", "64KiB"), "cache_size": ("2GiB", "512MiB"),
                "verify": ("auto", "all"), "time_budget": (0, 1.0)}
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


def check_targets(run_list: list[dict] | dict[str, dict]) -> list[dict]:
    """The issue's targets from the measured numbers: per mode and request size for the micro ratios (the
    headline at the smallest request, where readahead matters), per mode for random reads."""
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
    return out


def print_targets(targets: list[dict]) -> None:
    print("\ntargets (issue 6), from this run's numbers:")
    if not targets:
        print("  (none measured)")
    for t in targets:
        verdict = "not measured" if t["pass"] is None else ("PASS" if t["pass"] else "FAIL")
        mark = "" if t["headline"] else "   (other request size)"
        print(f"  {t['what']:<32} {t['mode']:<4} {sb.format_size(t['request']):>7}: "
              f"{sb.fmt_num(t['ratio'], 2, 5)}x, target >= {t['threshold']:g}x  {verdict}{mark}")
    head = [t for t in targets if t["headline"]]
    if head:
        count = {v: sum(1 for t in head if t["pass"] is v) for v in (True, False, None)}
        print(f"  headline points (the smallest request; random reads): {count[True]} PASS, {count[False]} FAIL, "
              f"{count[None]} not measured")


def print_tables(runs: dict[str, dict], meta: dict) -> None:
    info = meta.get("file") or {}
    print(f"\ndevice {meta.get('device')}, {str(meta.get('date'))[:10]}, commit {str(meta.get('commit'))[:10]}; "
          f"file {sb.format_size(info.get('bytes', 0))} on {((meta.get('filesystem') or {}).get('type'))}; "
          f"cold = {meta.get('cold_method')}")
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


def report_docs(docs: list[tuple[str, dict]], out_dir: str, plot: bool = True) -> int:
    if not docs:
        print("file_bench: error: no files-*.json to report", file=sys.stderr)
        return 2
    runs = merged_runs(docs)
    meta = docs[-1][1].get("meta", {})
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
    print_targets(check_targets(runs))
    if plot:
        make_plot(runs, meta, out_dir)
    return 0


def make_plot(runs: dict[str, dict], meta: dict, out_dir: str) -> str | None:
    """OUT/files.png: micro GB/s by request size (baseline as lines), random reads, replacement."""
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
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8), gridspec_kw={"width_ratios": [2.2, 1, 1]})
    micro, rnd, repl = axes
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
    fig.suptitle(f"GPU file reads (xeflow file cache, issue 6) — {meta.get('device')}, {str(meta.get('date'))[:10]}, "
                 f"{str(meta.get('commit'))[:7]}", fontsize=10)
    fig.tight_layout()
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "files.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"wrote {path}")
    return path


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
                   help="meson build directory, release, with apps/file_baseline's tools (default: build-gpu)")
    r.add_argument("--dir", default="/var/tmp/xeflow-file-bench",
                   help="where the test file is generated: a disk, not tmpfs (cold runs read it O_DIRECT) "
                        "(default: /var/tmp/xeflow-file-bench)")
    r.add_argument("--file-size", default="10GiB", help="the test file's size (default: 10GiB)")
    r.add_argument("--out", default="",
                   help="results directory (default: bench/results/<device>-<date>-<commit7>-files)")
    r.add_argument("--tag", default="", help="the results file's name, files-<tag>.json (default: UTC time)")
    r.add_argument("--commit", default="", help="commit to record when `git rev-parse HEAD` cannot tell")
    r.add_argument("--quick", action="store_true",
                   help="smoke test: a 256 MiB file, 4KiB and 64KiB requests, 512 MiB cache, 256 random reads a "
                        "block, 64 MiB cache and 64KiB requests for replacement, every run verified, "
                        "--time-budget 1 (each unless given otherwise)")
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
    r.set_defaults(func=cmd_run)
    p = sub.add_parser("report", help="the table, targets and plot again, from saved JSON")
    p.add_argument("results", help="a files-*.json, or a directory: every files-*.json under it, merged")
    p.add_argument("--out-dir", default="", help="where files.png goes (default: beside the JSON)")
    p.add_argument("--no-plot", action="store_true")
    p.set_defaults(func=cmd_report)
    args = parser.parse_args(argv)

    def on_sigterm(signum, frame):  # noqa: ARG001 - signal handler signature
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("\nfile_bench: interrupted; the results file holds every run finished so far", file=sys.stderr)
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
