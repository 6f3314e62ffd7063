#!/usr/bin/env bash
# Installs the Debian packages a suite of real programs needs (each folder's `packages`
# file, one name a line), only those missing, as scripts/setup.sh does: the real-program
# suite's (tests/real) by default, or SUITE's (tests/latency-pairs).
# CW_SKIP_INSTALL=1 skips it. usage: tests/real/install.sh [SUITE]
set -euo pipefail
cd "${1:-$(dirname "$0")}"
[ "${CW_SKIP_INSTALL:-0}" = 1 ] && exit 0
mapfile -t wanted < <(cat */packages | sort -u)
missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "== installing for $(basename "$PWD"): ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
# Another apt may hold the lock for a while: wait for it rather than fail.
$sudo apt-get -o DPkg::Lock::Timeout=300 update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
  --no-install-recommends "${missing[@]}" >&2
