#!/usr/bin/env bash
# Builds the Debian packages xeflow and libxeflow-dev (debian/: dh --buildsystem=meson) from the working
# tree's tracked files, in a scratch copy (dpkg-buildpackage writes its packages beside the source), and
# puts the .deb files in OUT (default: build-debs/). Needs debhelper and the Build-Depends of
# debian/control (`apt-get build-dep .` or tools/install-deps.sh plus the list there); DEB_BUILD_OPTIONS=cuda
# builds the GPU executor with the CUDA toolkit on the PATH.
#
#   bash tools/build-debs.sh [OUT]
#   sudo apt-get install ./build-debs/xeflow_*.deb ./build-debs/libxeflow-dev_*.deb
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/build-debs}" && cd "${1:-$root/build-debs}" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/xeflow"
(cd "$root" && git ls-files -z | tar --null -T - -c) | tar -x -C "$scratch/xeflow"
(cd "$scratch/xeflow" && DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-} parallel=$(nproc)" \
  dpkg-buildpackage -us -uc -b)
cp "$scratch"/*.deb "$out"/
ls -l "$out"/*.deb
