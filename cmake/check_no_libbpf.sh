#!/bin/sh
# check_no_libbpf.sh BINARY: fails when BINARY loads libbpf or carries its symbols (the
# trace model and the fuzz targets must not link the recorder; cmake/causeway.cmake).
set -eu
bin=$1
if [ ! -x "$bin" ]; then
  echo "$bin: no such program (build it first)" >&2
  exit 1
fi
if ldd "$bin" 2>/dev/null | grep -q 'libbpf'; then
  echo "$bin loads libbpf:" >&2
  ldd "$bin" | grep libbpf >&2
  exit 1
fi
# Statically linked libbpf, or cw_kernel's objects calling into it.
if nm "$bin" 2>/dev/null | grep -E '(bpf_object__|bpf_program__|libbpf_)' | head -3 | grep . >&2; then
  echo "$bin carries libbpf symbols (above)" >&2
  exit 1
fi
echo "$bin: no libbpf"
