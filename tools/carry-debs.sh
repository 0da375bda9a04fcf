#!/usr/bin/env bash
# Debian packages for a machine without a package manager (the lent GPU machine): ISA-L and OpenSSL's
# development files, which the encoding operators' CPU versions, their checks and the benchmark's CPU
# contenders need.
#
#   bash tools/carry-debs.sh fetch    here, with apt: downloads the packages into .debs/ (git ignores it)
#   source tools/carry-debs.sh use    there, in the same shell as meson: unpacks them into .debs/root,
#                                     points their pkg-config files at it, and exports PKG_CONFIG_PATH and
#                                     LD_LIBRARY_PATH
#
# .debs/ travels with the tree when the device tool is told to carry it. Where the machine has its own
# libcrypto.so.3 the programs run with that one (any OpenSSL 3 serves what 3.0 headers compile); only
# ISA-L's library is taken from .debs/.
packages=(libisal2 libisal-dev libssl-dev libssl3)
debs_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.debs"

carry_debs_fetch() {
  mkdir -p "$debs_dir" && (cd "$debs_dir" && rm -f ./*.deb && apt-get download "${packages[@]}") &&
    ls -l "$debs_dir"
}

carry_debs_use() {
  local root="$debs_dir/root" libdir deb system_crypto
  ls "$debs_dir"/*.deb > /dev/null 2>&1 || { echo "carry-debs: no .deb in $debs_dir (run fetch where apt works)" >&2; return 1; }
  rm -rf "$root" && mkdir -p "$root" || return 1
  for deb in "$debs_dir"/*.deb; do dpkg -x "$deb" "$root" || return 1; done
  libdir="$root/usr/lib/x86_64-linux-gnu"
  sed -i "s|^prefix=.*|prefix=$root/usr|" "$libdir"/pkgconfig/*.pc
  system_crypto=$(/sbin/ldconfig -p 2> /dev/null | awk '/libcrypto\.so\.3 .*x86-64/ {print $NF; exit}')
  if [ -n "$system_crypto" ]; then
    rm -f "$libdir"/libcrypto.so.3 "$libdir"/libssl.so.3
    ln -sf "$system_crypto" "$libdir/libcrypto.so"
  fi
  export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "carry-debs: ISA-L $(pkg-config --modversion libisal), OpenSSL headers $(pkg-config --modversion libcrypto)," \
    "libcrypto at run time: ${system_crypto:-$libdir/libcrypto.so.3}"
}

case "${1:-}" in
  fetch) carry_debs_fetch ;;
  use) carry_debs_use ;;
  *) echo "usage: bash tools/carry-debs.sh fetch | source tools/carry-debs.sh use" >&2; false ;;
esac
