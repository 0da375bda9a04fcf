#!/usr/bin/env python3
"""The prefetch source's benchmark (issue 5; the BigKernel paper's applications). --apps picks them:

kmeans: one K-means assignment pass over a particle file (64-byte records; 12 bytes read, 4 written back), by

  cpu      xeflow-kmeans-cpu --iterations 1 (the multi-threaded CPU reference: mapping, assignment, and
           its centre update, which the GPU contenders leave out: it is faster, not slower, for it)
  single   xeflow-kmeans-gpu-baseline --mode single   (one pinned buffer of whole records at a time)
  double   xeflow-kmeans-gpu-baseline --mode double   (two buffers on two streams: the paper's baseline)
  managed  xeflow-kmeans-gpu-baseline --mode managed  (managed chunks, cudaMemPrefetchAsync)
  xeflow   prefetch_source -> kmeans_assign (GPU) -> prefetch_writeback (only the fields cross PCIe)

Every contender starts from the same generated file (regenerated per dataset size, read once into the page
cache before the first run), its cluster fields reset to unassigned, and must leave the cluster ids of the
CPU reference's first iteration in it: the script compares a CRC-32 of the cluster field after each run
(numpy), and a contender that differs is reported failed. Times: the GPU baselines' pass (staging, copies, kernels, stores); xeflow's stream
window; the CPU's run (mapping included). Ratios are against double buffering, measured in the same run.

wordcount: topologies/wordcount.yaml over a generated text (every byte read; the GPU sink's table comes back
once), by cpu (xeflow-wordcount-cpu), single / double / managed (xeflow-sink-baseline: the same source and
sink compute, a conventional transport) and xeflow (xeflow-run). Verified: each contender's words,
distinct words and digest equal the CPU reference's.

affinity: the two passes (topologies/affinity_cards.yaml, then affinity_shared.yaml) over generated
variable-length purchase records, scanned (12 of each record's 24 + 4n bytes cross PCIe), by cpu
(xeflow-affinity-cpu), single / double / managed and xeflow, both passes timed; verified by the digest.

patterns (the paper's Table II): the K-means pass with the address stage on the GPU
(topologies/kmeans_addresses.yaml) with pattern recognition on and off: address bytes that crossed PCIe,
compression, and the stream's time; verified like kmeans (the ids of the CPU reference's first iteration).
With wordcount also chosen, word count through the address stage (topologies/wordcount_addresses.yaml: an
address per byte, or a pattern per lane) on and off, verified by the digest. Each setting runs with the
address frames it needs (PATTERNS_OFF_FRAMES: the topologies' own are sized for patterns on; every address
needs frames 8 to 129 times larger), so the time shows what compression saves on the link.

  python3 bench/prefetch_bench.py run --build build --out bench/results/DIR --sizes 4GiB,16GiB
  python3 bench/prefetch_bench.py report bench/results/DIR

Writes OUT/prefetch-<tag>.json (meta: device, date, commit; every raw document kept) after each run.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shlex
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stream_bench as sb  # noqa: E402  (shared helpers: sizes, children, meta, JSON)

CONTENDERS = ["cpu", "single", "double", "managed", "xeflow"]
CLUSTERS = 8
FRAME = 64 * 1024
RECORDS_PER_FRAME = FRAME // 12


def ids_crc(path: str) -> str | None:
    """CRC-32 of the cluster field (u32 at byte 12 of each 64-byte record), in record order."""
    try:
        import numpy as np
    except ImportError:
        return None
    records = np.memmap(path, dtype=np.uint32, mode="r").reshape(-1, 16)
    crc = 0
    step = 1 << 22
    for first in range(0, records.shape[0], step):
        crc = zlib.crc32(np.ascontiguousarray(records[first:first + step, 3]).tobytes(), crc)
    return f"0x{crc:08x}"


def reset_ids(path: str) -> bool:
    """Sets every cluster field back to unassigned (0xffffffff), so each contender must write all of them."""
    try:
        import numpy as np
    except ImportError:
        return False
    records = np.memmap(path, dtype=np.uint32, mode="r+").reshape(-1, 16)
    step = 1 << 22
    for first in range(0, records.shape[0], step):
        records[first:first + step, 3] = 0xFFFFFFFF
    records.flush()
    del records
    return True


def first_centres(path: str, k: int) -> str:
    import struct
    with open(path, "rb") as f:
        out = []
        for _ in range(k):
            x, y, z = struct.unpack("<3f", f.read(64)[:12])
            out.append(f"{x!r} {y!r} {z!r}")
    return "; ".join(out)


def topology(path: str, centres: str, threads: int, writers: int, executor: str) -> str:
    return f"""name: kmeans_pass
topics:
  xyz: {{frame_size: {FRAME}, device_memory: {64 * FRAME}, element: f32}}
  ids: {{frame_size: {FRAME}, device_memory: {64 * FRAME}, element: f32}}
operators:
  particles: {{class: prefetch_source, threads: {threads}, outputs: [xyz], params: {{path: '{path}', record_bytes: 64, fields: '0:12'}}}}
  assign: {{class: kmeans_assign, on: gpu, inputs: [xyz], outputs: [ids], params: {{centres: '{centres}'}}}}
  store: {{class: prefetch_writeback, threads: {writers}, inputs: [ids], params: {{path: '{path}', record_bytes: 64, fields: '12:4', records_per_frame: {RECORDS_PER_FRAME}}}}}
runtime: {{executor: {executor}}}
"""


def xeflow_stages(doc: dict) -> dict:
    """The paper's Fig. 6 for one xeflow run, from its stats: the CPU stages' busy time per thread (gather,
    assembly, write-back: each operator on CPU threads), what the copy engines' bridge spent on each topic,
    and the persistent kernel's phase shares (compute = the GPU operators, address generation included)."""
    stages = {"stream_seconds": doc.get("stream_seconds"), "cpu": {}, "copy_busy_seconds": {}, "kernel": {}}
    for o in doc.get("operators", []):
        if o.get("on") == "cpu" and o.get("busy_seconds") is not None:
            workers = str(o.get("workers", "1")).rstrip("t") or "1"
            stages["cpu"][o["name"]] = {"busy_seconds": o["busy_seconds"], "threads": int(workers),
                                        "busy_per_thread": o["busy_seconds"] / max(1, int(workers))}
    for t in doc.get("topics", []):
        if "copy_engines" in t:
            stages["copy_busy_seconds"][t["name"]] = t["copy_engines"].get("bridge_busy_seconds")
    k = doc.get("kernel")
    if k:
        total = sum(k.get(f"{p}_cycles", 0) for p in ("subscribe", "schedule", "compute", "publish", "idle"))
        if total:
            stages["kernel"] = {p: k.get(f"{p}_cycles", 0) / total
                                for p in ("subscribe", "schedule", "compute", "publish", "idle")}
    return stages


# The address-stage topics' frames for patterns off (the topologies' comments derive them): K-means, 96
# words a lane; word count, 1024 words a lane (and the assembler's text frames as large, a 1:1 map's output
# holding its input). With patterns on, the topologies' own 8 KiB and 4 KiB frames hold every lane's words.
PATTERNS_OFF_FRAMES = {
    "kmeans": {"ranges": "64KiB", "addresses": "64KiB"},
    "wordcount": {"ranges": "516KiB", "addresses": "516KiB", "text": "516KiB"},
}


def address_stage_sets(app: str, contender: str) -> list[str]:
    """xeflow-run's --set arguments for a Table II contender (patterns-on / patterns-off) of `app`."""
    patterns = contender[len("patterns-"):]
    sets = ["--set", f"operators.addresses.params.patterns={patterns}"]
    if patterns == "off":
        for topic, size in PATTERNS_OFF_FRAMES[app].items():
            sets += ["--set", f"topics.{topic}.frame_size={size}"]
    return sets


def topic_pcie_bytes(docs) -> int | None:
    """What crossed PCIe in xeflow runs (one stats document or a list, one per pass), from the topics: the
    copy engines' bytes for a DMA topic, the published bytes for a mapped one (the kernel reads or writes
    them across the link once). Every topic of these topologies joins a CPU and a GPU operator. The frames
    as they crossed: their published bytes (a map that publishes part of its frame, like kmeans_assign's
    ids, sends that part), whatever part of them the consumer reads. None when a document has no topics (a failed run, or the host executor: nothing crosses)."""
    total = 0
    for doc in docs if isinstance(docs, list) else [docs]:
        if not doc or not doc.get("topics") or str(doc.get("executor", "")).startswith("host"):
            return None
        for t in doc["topics"]:
            total += t["copy_engines"]["bytes"] if "copy_engines" in t else t.get("bytes", 0)
    return total


def address_stage_record(rec: dict, doc: dict) -> dict:
    """Fills a Table II record from an address-stage run's stats (seconds, stages, the assembler's address
    counters, bytes over PCIe and the bytes needed: addresses GPU -> CPU, the gathered items CPU -> GPU);
    returns the operators' counters by name."""
    rec["seconds"] = doc.get("stream_seconds") or doc.get("wall_seconds")
    rec["stages"] = [xeflow_stages(doc)]
    counters = {o["name"]: o.get("counters", {}) for o in doc.get("operators", [])}
    assemble = counters.get("assemble", {})
    rec["address_bytes"] = assemble.get("address_bytes")
    rec["addresses"] = assemble.get("addresses")
    rec["compression_percent"] = assemble.get("compression_percent")
    rec["bytes_over_pcie"] = topic_pcie_bytes(doc)
    rec["bytes_needed"] = (assemble.get("address_bytes") or 0) + (assemble.get("bytes_gathered") or 0)
    return counters


def run_contender(cfg: argparse.Namespace, name: str, path: str, centres: str) -> dict:
    tool = lambda *p: os.path.join(cfg.build, *p)  # noqa: E731
    if name.startswith("patterns-"):
        # The topology without its verify sink, which checks every id frame against a CPU recomputation
        # (the ids' CRC verifies this run) and would set the pace.
        with open(os.path.join(SOURCE_ROOT, "topologies", "kmeans_addresses.yaml"), encoding="utf-8") as f:
            text = "".join(line for line in f if not line.startswith("  verify:"))
        yaml = os.path.join(cfg.scratch, "kmeans_addresses.yaml")
        with open(yaml, "w", encoding="utf-8") as f:
            f.write(text)
        cmd = [tool("tools", "xeflow-run"), yaml,
               "--stats", "json", "-q", "--set", f"runtime.executor={cfg.executor}",
               *address_stage_sets("kmeans", name),
               "--set", f"operators.assign.params.centres={centres}",
               "--set", f"operators.assemble.threads={cfg.source_threads}",
               "--set", f"operators.store.threads={cfg.writeback_threads}"]
        for op in ("ranges", "assemble", "store"):
            cmd += ["--set", f"operators.{op}.params.path={path}"]
    elif name == "cpu":
        cmd = [tool("apps", "kmeans", "xeflow-kmeans-cpu"), path, "--clusters", str(CLUSTERS), "--iterations", "1",
               "--threads", str(cfg.cpu_threads), "--json"]
    elif name == "xeflow":
        yaml = os.path.join(cfg.scratch, "kmeans_pass.yaml")
        with open(yaml, "w", encoding="utf-8") as f:
            f.write(topology(path, centres, cfg.source_threads, cfg.writeback_threads, cfg.executor))
        cmd = [tool("tools", "xeflow-run"), yaml, "--stats", "json", "-q"]
    else:
        # The CPU threads xeflow's source and write-back use, staging chunks and storing ids.
        cmd = [tool("apps", "kmeans", "xeflow-kmeans-gpu-baseline"), path, "--mode", name, "--clusters",
               str(CLUSTERS), "--threads", str(min(os.cpu_count() or 1, cfg.source_threads + cfg.writeback_threads)),
               "--json"]
    child = sb.run_child(cmd, cfg.timeout)
    doc = sb.parse_json_output(child.stdout)
    rec = {"contender": name, "command": shlex.join(cmd), "seconds_wall": child.seconds,
           "stderr_tail": sb.tail(child.stderr), "raw": doc,
           "status": "ok" if child.returncode == 0 and doc else "failed"}
    if doc:
        if name == "cpu":
            rec["seconds"] = doc.get("seconds")
        elif name == "xeflow":
            rec["seconds"] = doc.get("stream_seconds") or doc.get("wall_seconds")
            rec["stages"] = [xeflow_stages(doc)]
            counters = {o["name"]: o.get("counters", {}) for o in doc.get("operators", [])}
            rec["bytes_over_pcie"] = topic_pcie_bytes(doc)
            rec["bytes_needed"] = counters.get("particles", {}).get("bytes_gathered", 0) + \
                counters.get("store", {}).get("bytes_written", 0)
            if doc.get("status") != "completed":
                rec["status"] = "failed"
        elif name.startswith("patterns-"):
            counters = address_stage_record(rec, doc)
            rec["bytes_needed"] += counters.get("store", {}).get("bytes_written", 0)  # the ids back
            if doc.get("status") != "completed":
                rec["status"] = "failed"
        else:
            rec["seconds"] = doc.get("seconds")
            rec["bytes_over_pcie"] = (doc.get("bytes_to_device") or 0) + (doc.get("bytes_to_host") or 0)
    return rec


SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SINK_APPS = {
    # app: (passes as (topology, source operator, sink operator), what the digest is compared against)
    "wordcount": [("wordcount.yaml", "source", "count")],
    "affinity": [("affinity_cards.yaml", "records", "cards"), ("affinity_shared.yaml", "records", "shared")],
}


def sink_pass_sets(app: str, step: int, path: str, scratch: str) -> list[str]:
    """--set arguments of pass `step` of `app` over the dataset at `path`."""
    topo, source, sink = SINK_APPS[app][step]
    sets = ["--set", f"operators.{source}.params.path={path}",
            "--set", f"operators.{sink}.params.result={os.path.join(scratch, f'{app}-{step}.out')}"]
    if app == "affinity" and step == 1:
        # Room for every record's (merchant, card) pair being distinct (records average 54 bytes; the
        # set holds 3/4 of its slots, and distinct pairs are far fewer than records): it never fills up.
        records = max(1, os.path.getsize(path) // 54)
        pair_slots = max(1 << 22, 1 << (records * 4 // 3).bit_length())
        sets += ["--set", f"operators.shared.params.cards={os.path.join(scratch, 'affinity-0.out')}",
                 "--set", f"operators.shared.params.pair_slots={pair_slots}"]
    return sets


def run_sink_contender(cfg: argparse.Namespace, app: str, name: str, path: str) -> dict:
    """One contender over every pass of a GPU-sink app: seconds summed over the passes, the last pass's sink
    counters (the digest), bytes over PCIe summed."""
    tool = lambda *p: os.path.join(cfg.build, *p)  # noqa: E731
    rec = {"contender": name, "commands": [], "raw": [], "seconds": 0.0, "bytes_over_pcie": 0, "status": "ok"}
    if name == "cpu":
        cmd = ([tool("apps", "wordcount", "xeflow-wordcount-cpu"), path] if app == "wordcount" else
               [tool("apps", "affinity", "xeflow-affinity-cpu"), path, "--merchant", "0"])
        cmd += ["--threads", str(cfg.cpu_threads), "--json"]
        child = sb.run_child(cmd, cfg.timeout)
        doc = sb.parse_json_output(child.stdout)
        rec.update(commands=[shlex.join(cmd)], raw=[doc], stderr_tail=sb.tail(child.stderr))
        if child.returncode != 0 or not doc:
            rec.update(status="failed", seconds=None, bytes_over_pcie=None)
            return rec
        rec["seconds"] = doc.get("seconds")
        rec["digest"] = doc.get("digest")
        rec["bytes_over_pcie"] = None
        return rec
    if name.startswith("patterns-"):  # word count through the GPU address stage (Table II)
        cmd = [tool("tools", "xeflow-run"), os.path.join(SOURCE_ROOT, "topologies", "wordcount_addresses.yaml"),
               "--stats", "json", "-q", "--set", f"runtime.executor={cfg.executor}",
               *address_stage_sets("wordcount", name),
               "--set", f"operators.ranges.params.path={path}", "--set", f"operators.assemble.params.path={path}",
               "--set", f"operators.assemble.threads={cfg.source_threads}",
               "--set", f"operators.count.params.result={os.path.join(cfg.scratch, 'wordcount-addresses.out')}"]
        child = sb.run_child(cmd, cfg.timeout)
        doc = sb.parse_json_output(child.stdout)
        rec.update(commands=[shlex.join(cmd)], raw=[doc], stderr_tail=sb.tail(child.stderr))
        if child.returncode != 0 or not doc or doc.get("status") != "completed":
            rec.update(status="failed", seconds=None, bytes_over_pcie=None)
            return rec
        ops = address_stage_record(rec, doc)
        if "digest" in ops.get("count", {}):
            rec["digest"] = f"0x{ops['count']['digest']:08x}"
        return rec
    counters = {}
    for step, (topo, source, sink) in enumerate(SINK_APPS[app]):
        sets = sink_pass_sets(app, step, path, cfg.scratch)
        topology = os.path.join(SOURCE_ROOT, "topologies", topo)
        if name == "xeflow":
            cmd = [tool("tools", "xeflow-run"), topology, "--stats", "json", "-q",
                   "--set", f"runtime.executor={cfg.executor}",
                   "--set", f"operators.{source}.threads={cfg.source_threads}"] + sets
        else:
            cmd = [tool("apps", "sink_baseline", "xeflow-sink-baseline"), topology, "--mode", name, "--json",
                   "--set", f"operators.{source}.threads={cfg.source_threads}"] + sets
        child = sb.run_child(cmd, cfg.timeout)
        doc = sb.parse_json_output(child.stdout)
        rec["commands"].append(shlex.join(cmd))
        rec["raw"].append(doc)
        rec["stderr_tail"] = sb.tail(child.stderr)
        if child.returncode != 0 or not doc or (name == "xeflow" and doc.get("status") != "completed"):
            rec.update(status="failed", seconds=None, bytes_over_pcie=None)
            return rec
        if name == "xeflow":
            rec["seconds"] += doc.get("stream_seconds") or doc.get("wall_seconds")
            rec.setdefault("stages", []).append(xeflow_stages(doc))
            ops = {o["name"]: o.get("counters", {}) for o in doc.get("operators", [])}
            src = ops.get(source, {})
            rec["bytes_needed"] = rec.get("bytes_needed", 0) + src.get("bytes_gathered", src.get("bytes", 0))
            counters = ops.get(sink, {})
        else:
            rec["seconds"] += doc.get("seconds") or 0
            rec["bytes_over_pcie"] += doc.get("bytes_to_device") or 0
            counters = doc.get("sink_counters", {})
    if name == "xeflow":
        rec["bytes_over_pcie"] = topic_pcie_bytes(rec["raw"])
    if "digest" in counters:
        rec["digest"] = f"0x{counters['digest']:08x}"
    return rec


def record_run(doc: dict, out_path: str, entry: dict, app: str, rec: dict) -> None:
    """Keeps a contender's record (the JSON rewritten after every run) and prints its line."""
    entry["runs"].append(rec)
    sb.write_json_atomic(out_path, doc)
    gbps = entry["dataset_bytes"] / rec["seconds"] / 1e9 if rec.get("seconds") else None
    print(f"  {app:<9} {entry['size']:>8} {rec['contender']:<13} {sb.fmt_num(rec.get('seconds'), 3, 8)} s "
          f"{sb.fmt_num(gbps, 2, 7)} GB/s of dataset  {rec['status']}"
          f"{'  ' + rec['why'] if rec.get('why') else ''}", flush=True)


def run_sink_app(args: argparse.Namespace, app: str, size: str, doc: dict, out_path: str) -> bool:
    if app == "wordcount":
        path = os.path.join(args.scratch, "text.txt")
        gen = [os.path.join(args.build, "apps", "wordcount", "xeflow-gen-wordcount"), path, "--bytes", size]
    else:
        path = os.path.join(args.scratch, "purchases.bin")
        # Records average 24 + 4 * 7.5 = 54 bytes.
        records = max(1, sb.parse_size(size) // 54)
        gen = [os.path.join(args.build, "apps", "affinity", "xeflow-gen-affinity"), path, "--records", str(records)]
    child = sb.run_child(gen + ["--threads", str(args.cpu_threads)], args.timeout)
    if child.returncode != 0:
        print(f"generating {app} {size} failed: {sb.tail(child.stderr)}", file=sys.stderr)
        return False
    with open(path, "rb") as f:  # into the page cache: every contender runs warm
        while f.read(1 << 26):
            pass
    entry = {"dataset_bytes": os.path.getsize(path), "size": size, "runs": []}
    doc.setdefault(app, []).append(entry)
    reference = None
    names = sb.parse_list(args.contenders)
    if app == "wordcount" and "patterns" in sb.parse_list(args.apps):
        names += ["patterns-on", "patterns-off"]
    for name in names:
        rec = run_sink_contender(args, app, name, path)
        if name == "cpu":
            reference = rec.get("digest")
        elif rec["status"] == "ok" and reference and rec.get("digest") != reference:
            rec["status"] = "failed"
            rec["why"] = f"digest {rec.get('digest')} differs from the CPU reference's {reference}"
        record_run(doc, out_path, entry, app, rec)
    os.remove(path)
    return True


def cmd_run(args: argparse.Namespace) -> int:
    os.makedirs(args.out, exist_ok=True)
    args.scratch = args.data_dir or tempfile.mkdtemp(prefix="prefetch_bench-")
    tag = args.tag or sb.utc_now().replace(":", "").replace("-", "")
    out_path = os.path.join(args.out, f"prefetch-{tag}.json")
    doc = {"meta": sb.run_meta(args),
           "kmeans": []}
    apps = sb.parse_list(args.apps)
    for size in sb.parse_list(args.sizes):
        for app in apps:
            if app in SINK_APPS and not run_sink_app(args, app, size, doc, out_path):
                return 1
        if "kmeans" not in apps and "patterns" not in apps:
            continue
        path = os.path.join(args.scratch, "particles.bin")
        gen = sb.run_child([os.path.join(args.build, "apps", "kmeans", "xeflow-gen-kmeans"), path, "--bytes", size,
                            "--clusters", str(CLUSTERS), "--threads", str(args.cpu_threads)], args.timeout)
        if gen.returncode != 0:
            print(f"generating {size} failed: {sb.tail(gen.stderr)}", file=sys.stderr)
            return 1
        with open(path, "rb") as f:  # into the page cache: every contender runs warm
            while f.read(1 << 26):
                pass
        centres = first_centres(path, CLUSTERS)
        entry = {"dataset_bytes": os.path.getsize(path), "size": size, "runs": []}
        doc["kmeans"].append(entry)
        reference_crc = None
        names = sb.parse_list(args.contenders) if "kmeans" in apps else ["cpu"]
        if "patterns" in apps:
            names += ["patterns-on", "patterns-off"]
        for name in names:
            verifiable = reset_ids(path)
            rec = run_contender(args, name, path, centres)
            rec["ids_crc"] = ids_crc(path) if verifiable else None
            if not verifiable:
                rec["why"] = "not verified (no numpy)"
            if name == "cpu":
                reference_crc = rec["ids_crc"]
            elif reference_crc and rec["ids_crc"] != reference_crc:
                rec["status"] = "failed"
                rec["why"] = f"cluster ids differ from the CPU reference ({rec['ids_crc']} vs {reference_crc})"
            record_run(doc, out_path, entry, "kmeans", rec)
        os.remove(path)
    print(f"wrote {out_path}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    docs = []
    for p in sorted(glob.glob(os.path.join(args.results, "**", "prefetch-*.json"), recursive=True)):
        with open(p, encoding="utf-8") as f:
            docs.append(json.load(f))
    if not docs:
        print(f"no prefetch-*.json under {args.results}", file=sys.stderr)
        return 2
    meta = docs[0]["meta"]
    print(f"device {meta.get('device')}, {meta.get('date')}, commit {str(meta.get('commit'))[:10]}")
    for app, title in (("kmeans", "K-means assignment pass"), ("wordcount", "word count"),
                       ("affinity", "transaction affinity, both passes")):
        report_app(docs, app, title)
    print("\nstage times of xeflow's runs (the paper's Fig. 6), per pass: stream s | CPU operators' busy s per "
          "thread | copy engines' bridge busy s | kernel phases % (subscribe/schedule/compute/publish/idle)")
    for d in docs:
        for app in ("kmeans", "wordcount", "affinity"):
            for e in d.get(app, []):
                for r in e["runs"]:
                    for k, st in enumerate(r.get("stages", [])):
                        cpu = ", ".join(f"{n} {sb.fmt_num(v['busy_per_thread'], 3, 0)}" for n, v in st["cpu"].items())
                        copy = ", ".join(f"{n} {sb.fmt_num(v, 3, 0)}" for n, v in st["copy_busy_seconds"].items())
                        kern = "/".join(f"{100 * v:.0f}" for v in st["kernel"].values()) or "-"
                        print(f"  {app:<9} {e['size']:>8} {r['contender']:<13} pass {k + 1}: "
                              f"{sb.fmt_num(st['stream_seconds'], 3, 7)} s | {cpu or '-'} | {copy or '-'} | {kern}")
    rows = [(app, e, r) for d in docs for app in ("kmeans", "wordcount") for e in d.get(app, []) for r in e["runs"]
            if r["contender"].startswith("patterns-")]
    if rows:
        print("\npattern recognition (Table II), through the GPU address stage (kmeans_addresses.yaml, "
              "wordcount_addresses.yaml): address bytes (the words the lanes used), per address, compression "
              "against 8 bytes an address, bytes of ranges and address frames as they crossed PCIe, seconds")
        for app, e, r in rows:
            per = r["address_bytes"] / r["addresses"] if r.get("addresses") else None
            raw = r.get("raw") if isinstance(r.get("raw"), dict) else (r.get("raw") or [None])[0]
            stage = None if not raw or str(raw.get("executor", "")).startswith("host") else sum(
                t["copy_engines"]["bytes"] if "copy_engines" in t else t.get("bytes", 0)
                for t in raw.get("topics", []) if t["name"] in ("ranges", "addresses"))
            print(f"  {app:<9} {e['size']:>8} {r['contender']:<13} {sb.fmt_num(r.get('address_bytes'), 0, 14)} B "
                  f"{sb.fmt_num(per, 3, 7)} B/address {sb.fmt_num(stage or None, 0, 14)} B crossed "
                  f"{sb.fmt_num(r['compression_percent'] / 100 if r.get('compression_percent') else None, 2, 6)}x "
                  f"{sb.fmt_num(r.get('seconds'), 3, 8)} s  {r['status']}{'  ' + r['why'] if r.get('why') else ''}")
    summary = targets(docs)
    if summary["apps"]:
        print("\ntargets (each app at its largest dataset where xeflow, double buffering and the CPU all ran):")
        for app, v in summary["apps"].items():
            print(f"  {app:<9} {v['size']:>8}  {v['xeflow_gb_per_s']:6.2f} GB/s  {v['vs_double']:5.2f}x double  "
                  f"{v['vs_cpu']:5.2f}x cpu")
        print(f"  geomean: {summary['geomean_vs_double']:.2f}x double buffering (target 1.7), "
              f"{summary['geomean_vs_cpu']:.2f}x the multi-threaded CPU (target 3)")
        sb.write_json_atomic(os.path.join(args.results, "summary.json"), {"meta": docs[0]["meta"], **summary})
        plot(args.results, docs, summary)
    return 0


def largest_complete(docs: list[dict], app: str) -> tuple[dict, dict] | None:
    """The largest dataset of `app` at which xeflow, double buffering and the CPU all ran ok: (entry, runs by
    contender). Ties (the same size in two files) go to the later file."""
    best = None
    for d in docs:
        for e in d.get(app, []):
            runs = {r["contender"]: r for r in e["runs"]}
            if all(runs.get(c, {}).get("status") == "ok" and runs[c].get("seconds") for c in ("xeflow", "double", "cpu")):
                if best is None or e["dataset_bytes"] >= best[0]["dataset_bytes"]:
                    best = (e, runs)
    return best


def targets(docs: list[dict]) -> dict:
    """Issue 5's targets: per app, xeflow's speedup over double buffering and over the multi-threaded CPU at
    its largest complete dataset; their geometric means over the apps (≥ 1.7 and ≥ 3)."""
    import math
    per_app = {}
    for app in ("kmeans", "wordcount", "affinity"):
        found = largest_complete(docs, app)
        if found:
            e, runs = found
            x = runs["xeflow"]["seconds"]
            per_app[app] = {"size": e["size"], "dataset_bytes": e["dataset_bytes"],
                            "vs_double": runs["double"]["seconds"] / x, "vs_cpu": runs["cpu"]["seconds"] / x,
                            "xeflow_gb_per_s": e["dataset_bytes"] / x / 1e9}
    out = {"apps": per_app}
    if per_app:
        for key in ("vs_double", "vs_cpu"):
            out[f"geomean_{key}"] = math.exp(sum(math.log(v[key]) for v in per_app.values()) / len(per_app))
    return out


def plot(directory: str, docs: list[dict], summary: dict) -> None:
    """prefetch.png: GB/s of dataset of every contender per app (largest complete dataset), and xeflow's
    speedups with the targets."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot)")
        return
    apps = list(summary["apps"])
    if not apps:
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    width = 0.8 / len(CONTENDERS)
    for k, name in enumerate(CONTENDERS):
        values = []
        for app in apps:
            _, runs = largest_complete(docs, app)
            r = runs.get(name)
            e = summary["apps"][app]
            values.append(e["dataset_bytes"] / r["seconds"] / 1e9 if r and r.get("seconds") and r["status"] == "ok" else 0)
        left.bar([i + (k - len(CONTENDERS) / 2 + 0.5) * width for i in range(len(apps))], values, width, label=name)
    left.set_xticks(range(len(apps)), [f"{a}\n{summary['apps'][a]['size']}" for a in apps])
    left.set_ylabel("GB/s of dataset")
    left.set_title("throughput (higher is better)")
    left.legend(fontsize=8)
    for k, (key, target, label) in enumerate((("vs_double", 1.7, "x double buffering"), ("vs_cpu", 3.0, "x CPU"))):
        right.bar([i + (k - 0.5) * 0.4 for i in range(len(apps))], [summary["apps"][a][key] for a in apps], 0.4,
                  label=f"{label} (geomean {summary[f'geomean_{key}']:.2f}, target {target})")
        right.axhline(target, color=f"C{k}", linestyle="--", linewidth=1)
    right.set_xticks(range(len(apps)), apps)
    right.set_ylabel("xeflow speedup")
    right.set_title("xeflow's speedups")
    right.legend(fontsize=8)
    meta = docs[0]["meta"]
    fig.suptitle(f"prefetch source (BigKernel) — {meta.get('device')}, {str(meta.get('date'))[:10]}, "
                 f"{str(meta.get('commit'))[:7]}", fontsize=10)
    fig.tight_layout()
    path = os.path.join(directory, "prefetch.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"wrote {path}")


def report_app(docs: list[dict], app: str, title: str) -> None:
    if not any(d.get(app) for d in docs):
        return
    print(f"\n{title}: seconds, GB/s of dataset, x double buffering, bytes over PCIe / dataset (the frames "
          f"as they crossed), bytes of the fields read and written / dataset")
    for d in docs:
        for entry in d.get(app, []):
            runs = {r["contender"]: r for r in entry["runs"]}
            base = (runs.get("double") or {}).get("seconds")
            print(f"  dataset {entry['size']} ({entry['dataset_bytes'] / 2**30:.1f} GiB)")
            for name in CONTENDERS:
                r = runs.get(name)
                if not r:
                    continue
                s = r.get("seconds")
                ratio = base / s if (base and s and r["status"] == "ok") else None
                pcie, needed = r.get("bytes_over_pcie"), r.get("bytes_needed")
                if name == "xeflow" and r.get("raw") and "bytes_needed" not in r:
                    # Recorded before the topics were counted: bytes_over_pcie then held the fields' bytes.
                    pcie, needed = topic_pcie_bytes(r["raw"]) or pcie, pcie
                per = lambda b: sb.fmt_num(b / entry["dataset_bytes"] if b else None, 3, 6)  # noqa: E731
                print(f"    {name:<8} {sb.fmt_num(s, 3, 8)} s {sb.fmt_num(entry['dataset_bytes'] / s / 1e9 if s else None, 2, 7)} GB/s"
                      f"  {sb.fmt_num(ratio, 2, 6)}x  {per(pcie)} {per(needed)}"
                      f"  {r['status']}{'  ' + r['why'] if r.get('why') else ''}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the contenders")
    r.add_argument("--build", default="build")
    r.add_argument("--out", default="bench/results")
    r.add_argument("--tag", default="")
    r.add_argument("--commit", default="")
    r.add_argument("--sizes", default="4GiB", help="dataset sizes (the H100 machine: 128 GiB RAM, 64 GiB disk)")
    r.add_argument("--contenders", default=",".join(CONTENDERS))
    r.add_argument("--apps", default="kmeans,wordcount,affinity,patterns",
                   help="kmeans, wordcount, affinity, patterns (Table II)")
    r.add_argument("--data-dir", default="", help="where the dataset is generated (default: a temporary dir)")
    r.add_argument("--cpu-threads", type=int, default=os.cpu_count() or 1)
    r.add_argument("--source-threads", type=int, default=8)
    r.add_argument("--writeback-threads", type=int, default=8,
                   help="prefetch_writeback threads (8: the 4 GiB K-means pass is write-back bound at 4)")
    r.add_argument("--timeout", type=float, default=300)
    r.add_argument("--executor", default="device", choices=["device", "host"],
                   help="xeflow's executor (host: a smoke test of the script on a machine without a GPU)")
    r.set_defaults(func=cmd_run)
    p = sub.add_parser("report", help="print the tables")
    p.add_argument("results")
    p.set_defaults(func=cmd_report)
    args = parser.parse_args()
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
