#!/usr/bin/env bash
# sha256sum, pinned to CPU 0 (taskset), hashes 32 MiB (about 0.2 s of CPU alone) while two
# cpu-hog processes, pinned to CPU 0 too and started at nice -10, spin there for 1.2 s:
# the scheduler gives sha256sum about 5 % of CPU 0 until they exit, so it sits runnable.
. "$(dirname "$0")/../lib.sh"
need taskset sha256sum nice
here=$(cd "$(dirname "$0")" && pwd)
head -c 32M /dev/zero >"$WORK/data"
hogs=()
for i in 1 2; do
  # nice and taskset exec the hog: one process, comm cpu-hog.
  nice -n -10 taskset -c 0 "$here/cpu-hog" 1.2 "$WORK/hog$i" &
  hogs+=($!)
  PIDS+=($!)
done
wait_file "$WORK/hog1" cpu-hog
wait_file "$WORK/hog2" cpu-hog
t0=$(date +%s%N)
out=$(taskset -c 0 sha256sum "$WORK/data") || die "sha256sum failed"
t1=$(date +%s%N)
for pid in "${hogs[@]}"; do wait "$pid" || die "cpu-hog failed"; done
[ "${out%% *}" = 83ee47245398adee79bd9c0a8bc57b821e92aba10f5f9ade8a5d1fae4d8c4302 ] ||
  die "sha256sum printed '$out'"
ms=$(((t1 - t0) / 1000000))
[ "$ms" -ge 800 ] || die "sha256sum took $ms ms: the hogs did not hold it back"
