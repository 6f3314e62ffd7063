#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine:
#   scripts/setup.sh demo   install what is missing, build, run the demo
#   scripts/setup.sh test   install what is missing, build, run every test
# Environment: BUILD_DIR (default build), JOBS (default nproc), CW_SKIP_INSTALL=1 to skip apt.
set -euo pipefail

cd "$(dirname "$0")/.."
mode="${1:-demo}"
build="${BUILD_DIR:-build}"
jobs="${JOBS:-$(nproc)}"

packages=(
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
  tao-pegtl-dev libboost-graph-dev liblua5.4-dev libfmt-dev doctest-dev libcapstone-dev
  libcli11-dev nlohmann-json3-dev libxxhash-dev libzstd-dev libbpf-dev bpftool libelf-dev libdw-dev
  jq util-linux linux-perf libprotobuf-dev protobuf-compiler libcpp-httplib-dev
  libsqlite3-dev
)

# What only the tests need: the browser the latency page and `causeway ui` are checked in,
# what tests/browser/ui.sh asks the server with (curl) and lists its sockets with (ss), and
# the ClickHouse server tests/fleet/fleet_clickhouse.sh starts on loopback in a folder of
# its own (the packaged service is not used: quiet_clickhouse_service).
test_packages=(chromium curl iproute2 clickhouse-server)

# tests/browser/ui.sh drives chromium with Playwright (npm playwright-core, pinned in
# tests/browser/package-lock.json). npm comes with Node.js where it is installed (e.g.
# NodeSource's); otherwise Debian's npm package brings both.
install_browser_test_tools() {
  if ! command -v npm >/dev/null; then
    test_packages+=(npm)
    install_missing "${test_packages[@]}"
  fi
  npm ci --prefix tests/browser --no-audit --no-fund
}

# Debian's clickhouse-server enables its system service, which a machine with systemd then
# runs (ports 8123 and 9000, its own data): the tests start their own server, so when this
# script installed the package, the service is stopped and disabled.
quiet_clickhouse_service() {
  [ "${CW_SKIP_INSTALL:-0}" = 1 ] && return
  [ -d /run/systemd/system ] || return 0
  [ "${clickhouse_was_installed:-yes}" = yes ] && return
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  if systemctl is-enabled --quiet clickhouse-server 2>/dev/null; then
    echo "== clickhouse-server: the tests start their own; stopping and disabling the service"
    $sudo systemctl disable --now clickhouse-server >/dev/null 2>&1 || true
  fi
}

install_missing() {
  [ "${CW_SKIP_INSTALL:-0}" = 1 ] && return
  local missing=()
  for p in "${packages[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  echo "== installing: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

configure() {
  local dir="$1"; shift
  local launcher=()
  # ccache, when there, makes a rebuild after a pull quick; it is not required.
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S . -B "$dir" -G Ninja "${launcher[@]}" "$@" >/dev/null
}

run_demo() {
  local cw="$build/cli/causeway"
  echo
  echo "== the bundled demo: a server that serves two clients in one loop"
  echo "\$ causeway rules check examples/server-loop.cw"
  "$cw" rules check examples/server-loop.cw
  echo
  echo "\$ causeway graph examples/server-loop.trace          # stdlib rules only"
  "$cw" graph examples/server-loop.trace
  echo
  echo "\$ causeway graph examples/server-loop.trace --rules examples/server-loop.cw"
  "$cw" graph examples/server-loop.trace --rules examples/server-loop.cw
  echo
  echo "== diagnosing a hang in a bundled trace"
  echo "\$ causeway debug examples/slow-server.trace --auto"
  "$cw" debug examples/slow-server.trace --auto
  echo
  # Scenario 1 of the suite (tests/scenarios/01-livelock): the Chromium input-method
  # livelock, recorded now with the real recorder (root, or sudo), diagnosed, and checked
  # against its ground truth.
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
      echo "== recording needs root: run as root, or as a user with sudo, to record scenario 1"
      return
    fi
    sudo=(sudo)
  fi
  echo "== scenario 1, recorded just now: a circular wait broken by a timeout"
  echo "\$ ${sudo[*]:+${sudo[*]} }causeway eval 01-livelock --show"
  "${sudo[@]}" "$cw" eval 01-livelock --show
}

case "$mode" in
  demo)
    install_missing
    configure "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
    # What the demo runs: the binary (with its preload library) and the scenario programs.
    ninja -C "$build" -j "$jobs" causeway scenario-programs
    run_demo
    ;;
  test)
    clickhouse_was_installed=no
    dpkg-query -W -f='${Status}' clickhouse-server 2>/dev/null | grep -q "install ok installed" &&
      clickhouse_was_installed=yes
    install_missing "${test_packages[@]}"
    quiet_clickhouse_service
    [ "${CW_SKIP_INSTALL:-0}" = 1 ] || install_browser_test_tools
    werror=OFF
    [ -n "${CI:-}" ] && werror=ON
    configure "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCW_WERROR="$werror" -DCW_REAL_SCENARIOS=ON
    ninja -C "$build" -j "$jobs"
    run_demo
    echo
    echo "== unit, pack and end-to-end tests"
    ctest --test-dir "$build" --output-on-failure -j "$jobs"
    echo
    echo "== parsers, trace reader and the fuzz corpus under AddressSanitizer + UndefinedBehaviorSanitizer"
    configure "$build-asan" -DCMAKE_BUILD_TYPE=Debug -DCW_SANITIZE=ON -DCW_WERROR="$werror"
    # With the kept fuzz corpus (fuzz/corpus, docs/fuzzing.md) replayed under the sanitizers.
    ninja -C "$build-asan" -j "$jobs" base_tests trace_tests dsl_tests rules_tests fuzz_replays
    ctest --test-dir "$build-asan" --output-on-failure -j "$jobs" -R '^(base|trace|dsl|rules|fuzz-.*)$'
    ;;
  *)
    echo "usage: scripts/setup.sh demo|test" >&2
    exit 2
    ;;
esac
