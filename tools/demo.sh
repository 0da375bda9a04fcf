#!/usr/bin/env bash
# Fresh machine to running demo: installs what is missing, builds a release build, and streams the
# ping-pong topology (1 GiB, every frame verified). Extra arguments go to xeflow-run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
[ -d build-release ] || meson setup build-release -Dbuildtype=release
ninja -C build-release
exec build-release/tools/xeflow-run topologies/pingpong.yaml "$@"
