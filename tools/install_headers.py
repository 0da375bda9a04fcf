#!/usr/bin/env python3
"""Installs the internal headers that xeflow's public headers (include/xeflow/*.hpp) include, directly or
through each other, under <includedir>/xeflow/detail/ with their paths in the tree kept
(xeflow/detail/framework/model/operator.hpp): the umbrellas are the surface, the rest is theirs.

Run by `meson install` (meson.add_install_script): the set is computed when installing, so a header that
starts including another installs it without reconfiguring. Also usable by hand:
  tools/install_headers.py --list include/xeflow/*.hpp      # the headers it would install
"""
import os
import pathlib
import re
import shutil
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
ROOT = pathlib.Path(__file__).resolve().parent.parent


def closure(umbrellas):
    """Every tree header reachable from the umbrellas through quoted includes (all branches of any #if)."""
    seen, todo = set(), [pathlib.Path(u).resolve() for u in umbrellas]
    while todo:
        header = todo.pop()
        for name in INCLUDE.findall(header.read_text()):
            for candidate in (header.parent / name, ROOT / name):
                if candidate.is_file():
                    rel = candidate.resolve().relative_to(ROOT)
                    if rel.parts[0] != "include" and rel not in seen:
                        seen.add(rel)
                        todo.append(ROOT / rel)
                    break
            else:
                sys.exit(f"{header}: includes \"{name}\", which is not in the tree")
    return sorted(seen)


def main():
    if sys.argv[1] == "--list":
        print("\n".join(str(p) for p in closure(sys.argv[2:])))
        return
    includedir, umbrellas = sys.argv[1], sys.argv[2:]
    # includedir is absolute (prefix / includedir); DESTDIR, when given, is prepended.
    destdir = os.environ.get("DESTDIR", "")
    target = pathlib.Path(destdir + includedir if destdir else includedir) / "xeflow" / "detail"
    headers = closure(umbrellas)
    for rel in headers:
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target / rel)
    print(f"Installing {len(headers)} internal headers of include/xeflow/*.hpp to {target}")


if __name__ == "__main__":
    main()
