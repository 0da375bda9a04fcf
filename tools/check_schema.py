#!/usr/bin/env python3
"""Checks the topology JSON Schema that `xeflow-run --schema` generates (what an editor's YAML language
server is pointed at) with python3-jsonschema: the schema itself is a valid draft-07 schema, every topology
of the repository that loads (topologies/, tests/config/good/, apps/, bench/) is valid under it, and a few
mistakes an editor should flag are not.

  python3 tools/check_schema.py build/tools/xeflow-run
"""
import glob
import json
import os
import re
import subprocess
import sys

import jsonschema
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Mistakes the schema must catch, each a small change to a valid topology.
WRONG = {
    "an unknown top-level key": {"topics": {"t": {"frame_size": "4KiB"}}, "operators": {}, "runtim": {}},
    "an unknown operator class": {"operators": {"o": {"class": "no_such_class"}}},
    "an operator without a class": {"operators": {"o": {"outputs": ["t"]}}},
    "a byte count with a wrong unit": {"topics": {"t": {"frame_size": "4KB8"}}, "operators": {}},
    "a capacity of zero": {"topics": {"t": {"capacity": 0}}, "operators": {}},
    "an unknown transfer mode": {"topics": {"t": {"transfer": "zero-copy"}}, "operators": {}},
    "an unknown parameter": {"operators": {"s": {"class": "sequence_source", "params": {"totl_bytes": 1}}}},
    "a CPU class on the GPU": {"operators": {"s": {"class": "sequence_source", "on": "gpu"}}},
    "a device out of range": {"operators": {"o": {"class": "scale", "device": 4096}}},
}


class Yaml12Loader(yaml.SafeLoader):
    """YAML 1.2's core schema, as yaml-cpp and editors read a topology: `on`, `off`, `yes` and `no` are
    strings (PyYAML's YAML 1.1 makes them booleans, and `on:` an operator's key True)."""


Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
Yaml12Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                   list("tTfF"))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    run = sys.argv[1]
    schema = json.loads(subprocess.run([run, "--schema"], check=True, capture_output=True, text=True).stdout)
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema)
    files = sorted(set(glob.glob(os.path.join(ROOT, "topologies", "*.yaml")) +
                       glob.glob(os.path.join(ROOT, "tests", "config", "good", "*.yaml")) +
                       glob.glob(os.path.join(ROOT, "apps", "**", "*.yaml"), recursive=True) +
                       glob.glob(os.path.join(ROOT, "bench", "**", "*.yaml"), recursive=True)))
    failures = 0
    checked = 0
    for path in files:
        # Only what this launcher loads: apps' own operators are not in xeflow-run's schema.
        if subprocess.run([run, path, "--validate", "-q"], capture_output=True).returncode != 0:
            continue
        with open(path) as f:
            doc = yaml.load(f, Loader=Yaml12Loader)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        checked += 1
        for e in errors:
            failures += 1
            where = "/".join(str(p) for p in e.absolute_path)
            print(f"{os.path.relpath(path, ROOT)}: {where}: {e.message[:300]}")
    for what, doc in WRONG.items():
        if validator.is_valid(doc):
            failures += 1
            print(f"the schema accepts {what}: {json.dumps(doc)}")
    print(f"schema: {checked} topologies valid under it, {len(WRONG)} mistakes caught"
          if failures == 0 else f"schema: {failures} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
