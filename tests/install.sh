#!/usr/bin/env bash
# `cmake --install` into a fresh prefix, then the installed binary is used from another
# folder: it must find its standard packs and preload library under its own prefix, and
# never the source tree's stdlib-rules.
#
# usage: tests/install.sh BUILD_DIR SOURCE_DIR
set -u
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail=0
check() {  # $1 what, then the command; prints PASS/FAIL
  local what=$1; shift
  if "$@"; then echo "PASS $what"; else echo "FAIL $what"; fail=1; fi
}

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; echo "FAIL cmake --install"; exit 1; }
for f in bin/causeway share/causeway/rules/linux-kernel/pack.cw share/causeway/rules/glibc/pack.cw \
         lib/causeway/libcauseway-preload.so share/man/man1/causeway.1 \
         share/man/man7/causeway-rules.7 share/bash-completion/completions/causeway \
         share/doc/causeway/json.md share/doc/causeway/README.md share/doc/causeway/copyright; do
  check "installed $f" test -e "$prefix/$f"
done

cw=$prefix/bin/causeway
unset CAUSEWAY_STDLIB CAUSEWAY_RULES_PATH CAUSEWAY_PRELOAD
mkdir -p "$tmp/elsewhere"
cd "$tmp/elsewhere" || exit 1

# --version says where the data is: under the prefix.
"$cw" --version >"$tmp/version" 2>&1
check "--version names the commit" grep -Eq '^causeway [0-9.]+ \(commit ([0-9a-f]{12}|unknown)\)$' "$tmp/version"
check "--version: packs under the prefix" grep -qx "standard packs: $prefix/share/causeway/rules" "$tmp/version"
check "--version: preload library under the prefix" \
  grep -qx "preload library: $prefix/lib/causeway/libcauseway-preload.so" "$tmp/version"

# The installed packs check, from another folder: every pack of the source tree's
# stdlib-rules, once each.
packs=$(find "$src/stdlib-rules" -name pack.cw | wc -l)
"$cw" rules check "$prefix/share/causeway/rules" >"$tmp/check" 2>&1
check "rules check of the installed packs" \
  grep -Eqx "$packs packs checked \(.*linux.kernel.*\), 0 warnings" "$tmp/check"
# ... and the source tree's copy too: it replaces the installed packs, loaded once each.
"$cw" rules check "$src/stdlib-rules" >"$tmp/check2" 2>&1
check "rules check of another copy of the packs" \
  grep -Eqx "$packs packs checked \(.*linux.kernel.*\), 0 warnings" "$tmp/check2"

# The installed binary diagnoses a bundled trace as the build's binary does.
"$cw" debug "$src/examples/slow-server.trace" --auto >"$tmp/installed.txt" 2>&1
rc=$?
"$build/cli/causeway" debug "$src/examples/slow-server.trace" --auto >"$tmp/built.txt" 2>&1
check "installed debug exits 0" test $rc = 0
check "installed debug = build debug" cmp -s "$tmp/installed.txt" "$tmp/built.txt"

# Without the installed packs it says so and exits 2: it does not fall back to the
# source tree's stdlib-rules.
mv "$prefix/share/causeway/rules" "$tmp/rules-away"
"$cw" graph "$src/examples/server-loop.trace" >"$tmp/missing" 2>&1
rc=$?
check "missing packs: exit 2" test $rc = 2
check "missing packs: says where it looked" \
  grep -q "standard rule packs are missing: no folder $prefix/share/causeway/rules" "$tmp/missing"
"$cw" graph "$src/examples/server-loop.trace" --no-stdlib >/dev/null 2>&1
check "missing packs: --no-stdlib still works" test $? = 0
mv "$tmp/rules-away" "$prefix/share/causeway/rules"

# Every option the bash completion offers is one the command accepts.
bad=$(bash -c '
  source "$1"; cw=$2
  for cmd in graph debug convert eval record "record start" "record stop" "record status" mark \
             "rules check" "rules test" "rules fmt" "flags suggest" "cache size" "cache clean" \
             "fleet diagnose" "fleet top" "fleet query" "fleet schema"; do
    help=$($cw $cmd --help 2>&1)
    for opt in $(_causeway_options "$cmd"); do
      grep -Eq -- "(^|[ ,])$opt([ ,=]|$)" <<<"$help" || echo "$cmd $opt"
    done
  done' _ "$prefix/share/bash-completion/completions/causeway" "$cw")
check "completion options exist${bad:+: not accepted: $bad}" test -z "$bad"

# And every option a command's --help lists is offered (its short and long spellings; -h
# is --help's).
missing=$(bash -c '
  source "$1"; cw=$2
  for cmd in graph debug convert eval latency hangs ui export record "record start" "record stop" \
             "record status" mark "rules check" "rules test" "rules fmt" "flags suggest" \
             "cache size" "cache clean" "fleet diagnose" "fleet top" "fleet query" "fleet schema"; do
    offered=" $(_causeway_options "$cmd") "
    for opt in $($cw $cmd --help 2>&1 | sed -n "/^Options:/,/^[A-Z]/p" |
                 grep -oE "^ +(-[A-Za-z],)?--[a-z][a-z0-9-]*" | tr "," " "); do
      [[ "$opt" == -h || "$offered" == *" $opt "* ]] || echo "$cmd $opt"
    done
  done' _ "$prefix/share/bash-completion/completions/causeway" "$cw")
check "completion offers every option${missing:+: missing: $missing}" test -z "$missing"

# The man pages render.
if command -v man >/dev/null; then
  check "man causeway renders" bash -c "MANWIDTH=80 man -l '$prefix/share/man/man1/causeway.1' 2>&1 | grep -q 'causeway - find why'"
fi
exit $fail
