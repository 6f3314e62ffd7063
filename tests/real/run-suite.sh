#!/usr/bin/env bash
# The real-program suite (tests/real/README.md): installs the Debian packages its
# scenarios name (install.sh), then records and diagnoses every scenario with
# `causeway eval --suite tests/real`. Usage: tests/real/run-suite.sh CAUSEWAY [--load] [EVAL ARGS...]
# Needs root, as recording does. Run from anywhere: it works from the repository's root,
# where the scenarios' commands (tests/real/NN-slug/run.sh) are found.
set -euo pipefail
cw=$(realpath "${1:?usage: run-suite.sh CAUSEWAY [EVAL ARGS...]}")
shift
cd "$(dirname "$0")/../.."
# --load: every scenario with two CPU hogs and a disk writer beside it (lib.sh).
args=()
for a in "$@"; do
  if [ "$a" = --load ]; then export CW_REAL_LOAD=1; else args+=("$a"); fi
done
tests/real/install.sh
exec "$cw" eval --suite tests/real "${args[@]}"
