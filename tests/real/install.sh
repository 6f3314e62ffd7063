#!/usr/bin/env bash
# Installs the Debian packages the real-program suite needs (each scenario.json's
# "packages"), only those missing, as scripts/setup.sh does. CW_SKIP_INSTALL=1 skips it.
set -euo pipefail
cd "$(dirname "$0")"
[ "${CW_SKIP_INSTALL:-0}" = 1 ] && exit 0
command -v jq >/dev/null || { echo "install.sh: jq is needed (scripts/setup.sh installs it)" >&2; exit 2; }
mapfile -t wanted < <(jq -r '.packages[]?' */scenario.json | sort -u)
missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "== installing for tests/real: ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
# Another apt may hold the lock for a while: wait for it rather than fail.
$sudo apt-get -o DPkg::Lock::Timeout=300 update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
  --no-install-recommends "${missing[@]}" >&2
