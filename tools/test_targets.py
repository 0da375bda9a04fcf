#!/usr/bin/env python3
"""Prints the ninja targets that some of a build's tests need: each test's program and what it depends on.

    tools/test_targets.py BUILD_DIR [--suite S]... [--no-suite S]...

A test is picked when it is in one of the --suite suites (every test when none is given) and in none of the
--no-suite ones; suites are named as in meson.build ("gpu", not "xeflow:gpu"). The output is one line of
paths relative to BUILD_DIR, for `ninja -C BUILD_DIR $(tools/test_targets.py ...)`: building only those
instead of meson-test-prereq, which builds every test's. Read from `meson introspect`, so it follows
meson.build.
"""
import argparse
import json
import os
import subprocess
import sys


def introspect(build, what):
    return json.loads(subprocess.check_output(["meson", "introspect", build, what]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("--suite", action="append", default=[])
    parser.add_argument("--no-suite", action="append", default=[])
    args = parser.parse_args()
    build = os.path.realpath(args.build)
    files_of = {t["id"]: t["filename"] for t in introspect(build, "--targets")}
    wanted, unwanted = set(args.suite), set(args.no_suite)
    outputs, picked = set(), 0
    for test in introspect(build, "--tests"):
        suites = {s.split(":", 1)[-1] for s in test["suite"]}
        if (wanted and not suites & wanted) or suites & unwanted:
            continue
        picked += 1
        paths = [test["cmd"][0]]
        for target in test["depends"]:
            paths += files_of.get(target, [])
        for path in paths:
            path = os.path.realpath(path)
            if path.startswith(build + os.sep):
                outputs.add(os.path.relpath(path, build))
    if picked == 0:
        sys.exit(f"test_targets: no test of {build} is in the suites asked for")
    print(" ".join(sorted(outputs)))


if __name__ == "__main__":
    main()
