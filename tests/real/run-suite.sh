#!/usr/bin/env bash
# The real-program suite (tests/real/README.md): installs the Debian packages its
# scenarios name (install.sh), then records and diagnoses every scenario with
# `causeway eval --suite tests/real`. Usage: tests/real/run-suite.sh CAUSEWAY [EVAL ARGS...]
# Needs root, as recording does. Run from anywhere: it works from the repository's root,
# where the scenarios' commands (tests/real/NN-slug/run.sh) are found.
set -euo pipefail
cw=$(realpath "${1:?usage: run-suite.sh CAUSEWAY [EVAL ARGS...]}")
shift
cd "$(dirname "$0")/../.."
tests/real/install.sh
exec "$cw" eval --suite tests/real "$@"
