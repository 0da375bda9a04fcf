#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages xeflow builds with, when any is missing. Sourced by demo.sh and
# check.sh; uses sudo when not root. Extra packages may be passed as arguments. prometheus-cpp and civetweb
# are xeflow-run --metrics' (a build without them refuses it).
set -euo pipefail
xf_packages=(meson ninja-build g++ pkg-config libyaml-cpp-dev libspdlog-dev doctest-dev libcli11-dev
             nlohmann-json3-dev zlib1g-dev libisal-dev libssl-dev prometheus-cpp-dev libcivetweb-dev python3 "$@")
xf_missing=()
for p in "${xf_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || xf_missing+=("$p")
done
if ((${#xf_missing[@]})); then
  echo "xeflow: installing ${xf_missing[*]}"
  xf_sudo=""
  [ "$(id -u)" -eq 0 ] || xf_sudo="sudo"
  $xf_sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $xf_sudo apt-get install -y -qq --no-install-recommends "${xf_missing[@]}"
fi
