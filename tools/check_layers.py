#!/usr/bin/env python3
"""Checks that every source file includes only its own layer and the layers below it.

The layers, from the ground floor up (docs/architecture.md draws them):
  framework/core      execution spaces, atomics, errors, backoff, units, element types, CUDA checks
  topics              the shared topic (includes only the ground floor)
  framework/files     the GPU file cache (includes only the ground floor)
  framework/shared    shared objects, ADSM/GMAC (includes only the ground floor)
  framework/datatype  MPI derived datatypes: trees, serialized form, traversal (only the ground floor)
  framework/mpi       datatype send and receive between processes over MPI, topics carried between ranks
                      (datatype, topics and ground floor)
  framework/model     topology spec, builder, YAML (datatypes too), operator contract, registry
  framework/plan      the plan, warp partition, cost model, tuner
  framework/kernel    the virtualised kernel's round as host/device steps
  framework/gpu       the device driver: persistent kernel, device run, copy bridge
  operators           the built-in operators and their fused kernel
  framework/runtime   run context, CPU workers, kernel executors, stats
  framework/launch    the launcher, and the processes that run a topology (one, or MPI ranks with their
                      sessions: bridges and control messages)
Prints every upward include as file:line and exits 1 when there is one.
"""
import pathlib
import re
import sys

# layer -> the layers it may include (itself included)
ALLOWED = {
    "framework/core": {"framework/core"},
    "topics": {"framework/core", "topics"},
    "framework/files": {"framework/core", "framework/files"},
    "framework/shared": {"framework/core", "framework/shared"},
    "framework/datatype": {"framework/core", "framework/datatype"},
    # Datatype send and receive over MPI, and topics carried between ranks: above the datatype engine and
    # the topics; the launcher's ranked runs include it.
    "framework/mpi": {"framework/core", "topics", "framework/datatype", "framework/mpi"},
    "framework/model": {"framework/core", "topics", "framework/files", "framework/shared",
                        "framework/datatype", "framework/model"},
    "framework/plan": {"framework/core", "topics", "framework/files", "framework/shared",
                       "framework/datatype", "framework/model", "framework/plan"},
    "framework/kernel": {"framework/core", "topics", "framework/files", "framework/shared",
                         "framework/datatype", "framework/model", "framework/plan", "framework/kernel"},
    "framework/gpu": {"framework/core", "topics", "framework/files", "framework/shared",
                      "framework/datatype", "framework/model", "framework/plan", "framework/kernel",
                      "framework/gpu"},
    "operators": {"framework/core", "topics", "framework/files", "framework/shared", "framework/datatype",
                  "framework/model", "framework/plan", "framework/kernel", "framework/gpu", "operators"},
    "framework/runtime": {"framework/core", "topics", "framework/files", "framework/shared",
                          "framework/datatype", "framework/model", "framework/plan", "framework/kernel",
                          "framework/gpu", "operators", "framework/runtime"},
    "framework/launch": {"framework/core", "topics", "framework/files", "framework/shared",
                         "framework/datatype", "framework/mpi", "framework/model", "framework/plan",
                         "framework/kernel", "framework/gpu", "operators", "framework/runtime",
                         "framework/launch"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path: str):
    for layer in sorted(ALLOWED, key=len, reverse=True):
        if path == layer or path.startswith(layer + "/"):
            return layer
    return None


def main() -> int:
    root = pathlib.Path(__file__).resolve().parent.parent
    problems = []
    checked = 0
    for layer in ALLOWED:
        for f in sorted((root / layer).rglob("*")):
            if f.suffix not in {".hpp", ".cpp", ".cuh", ".cu", ".inl"}:
                continue
            rel = f.relative_to(root).as_posix()
            if layer_of(rel) != layer:
                continue  # a sub-layer's file (framework/... is split by folder)
            checked += 1
            for n, line in enumerate(f.read_text().splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = layer_of(m.group(1))
                if target is not None and target not in ALLOWED[layer]:
                    problems.append(f"{rel}:{n}: {layer} includes {m.group(1)} ({target} is above it)")
    stray = [f.relative_to(root).as_posix() for f in (root / "framework").glob("*.*")
             if f.suffix in {".hpp", ".cpp", ".cuh", ".cu"}]
    for s in stray:
        problems.append(f"{s}:1: outside every layer (put it in a layer's folder)")
    for p in problems:
        print(p)
    print(f"layers: {checked} files checked, {len(problems)} upward includes")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
