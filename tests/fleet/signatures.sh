#!/usr/bin/env bash
# ctest's `fleet-signatures`: the real suite's programs recorded more than once give one
# signature per program's bug, and different bugs different ones (docs/fleet.md,
# "Signatures"). Each folder holds one recording of each scenario (NN-name.cwt, as
# run-suite.sh keeps them); each scenario's named hang is diagnosed in each.
#
# A scenario's recordings must have equal signatures. Two cases are told apart and not
# failed: the program was upgraded between the recordings (the version differs; the rest
# of the signature must still be equal), and the diagnoses themselves differ (another hang
# or root cause program: that is a miss of the suite, which real-scenarios judges).
#
# usage: tests/fleet/signatures.sh CAUSEWAY FOLDER FOLDER...
set -euo pipefail
cw=$(realpath "${1:?usage: signatures.sh CAUSEWAY FOLDER FOLDER...}")
shift
(($# >= 2)) || { echo "usage: signatures.sh CAUSEWAY FOLDER FOLDER..." >&2; exit 2; }
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for dir in "$@"; do
  [[ -d $dir ]] || { echo "skipped: no recordings in $dir"; exit 77; }
done
k=0
for dir in "$@"; do
  k=$((k + 1))
  for scenario in "$src"/tests/real/[0-9]*/; do
    name=$(basename "$scenario")
    [[ -f $dir/$name.cwt ]] || continue
    hang=$(jq -r .hang "$scenario/scenario.json")
    "$cw" fleet diagnose "$dir/$name.cwt" -o "$tmp/hangs.db" --host "recording-$k" --hang "$hang" --min-hang 0 \
      --no-cache -j 1 >/dev/null 2>"$tmp/err" || { echo "$dir/$name.cwt: not diagnosed:"; cat "$tmp/err"; }
  done
done
python3 - "$tmp/hangs.db" <<'PY'
import collections, re, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT trace, host, signature, signature_text, program, root_program, "
                  "root_kind, version FROM hangs").fetchall()
by = collections.defaultdict(list)
for trace, host, sig, text, program, root, root_kind, version in rows:
    by[trace.rsplit("/", 1)[1][:-4]].append((host, sig, text, (program, root, root_kind), version))
equal = upgraded = differed = failed = 0
def no_version(text):
    return re.sub(r"(?m)^version: .*$", "version: ?", text)
for name in sorted(by):
    runs = by[name]
    if len(runs) < 2:
        print(f"{name}: one recording only"); continue
    if len({s for _, s, _, _, _ in runs}) == 1:
        equal += 1; print(f"{name}: equal ({runs[0][1]})"); continue
    if len({d for _, _, _, d, _ in runs}) > 1:
        differed += 1
        print(f"{name}: diagnosed differently: " + "; ".join(f"{h}: {d[1]} {d[2]} -> {d[0]}" for h, _, _, d, _ in runs))
        continue
    if len({v for *_, v in runs}) > 1 and len({no_version(t) for _, _, t, _, _ in runs}) == 1:
        upgraded += 1
        print(f"{name}: equal but for the program's version ({', '.join(sorted({v[:12] for *_, v in runs}))})")
        continue
    failed += 1
    print(f"FAIL {name}: one diagnosis, {len({s for _, s, _, _, _ in runs})} signatures:")
    for h, s, t, _, _ in runs:
        print(f"  {h} {s}\n    " + t.rstrip().replace("\n", "\n    "))
# Different bugs, different signatures: no signature shared by two scenarios.
owners = collections.defaultdict(set)
for name, runs in by.items():
    for _, s, _, _, _ in runs: owners[s].add(name)
for s, names in owners.items():
    if len(names) > 1:
        failed += 1; print(f"FAIL: scenarios {sorted(names)} share signature {s}")
print(f"signatures: {equal} scenarios equal, {upgraded} equal but for an upgraded program, "
      f"{differed} diagnosed differently, {failed} failures; "
      f"{len(owners)} signatures for {len(by)} scenarios")
sys.exit(1 if failed else 0)
PY
