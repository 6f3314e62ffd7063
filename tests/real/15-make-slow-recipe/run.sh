#!/usr/bin/env bash
# GNU make -j1 builds one target whose recipe (slow-recipe, a code generator) computes
# for 1.2 s; make waits in wait4 for it.
. "$(dirname "$0")/../lib.sh"
need make
here=$(cd "$(dirname "$0")" && pwd)
cd "$WORK"
# A recipe with no shell syntax in it is run by make itself (posix_spawn), not through
# /bin/sh: a copy of the script in this temp dir keeps the repository's path, which could
# hold anything, out of the command.
cp "$here/slow-recipe" .
printf 'gen.c:\n\t./slow-recipe $@\n' >Makefile
make -j1 >make.log 2>&1 || die "make failed: $(tail -3 make.log)"
[ "$(cat gen.c)" = "int generated = 1;" ] || die "make did not build gen.c"
