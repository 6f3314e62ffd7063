#!/usr/bin/env bash
# A tmux server (one libevent loop) on a socket in a temp dir. waiter runs
# `tmux wait-for ready`, which blocks until something signals the channel. sched asks the
# server to signal it in 1.5 s (`run-shell -b -C -d 1.5 'wait-for -S ready'`: the server
# arms a libevent timer and sched returns at once). 0.3 s later lister runs
# `tmux list-sessions`, which the server answers at once. When the timer fires, the
# server runs `wait-for -S ready` and waiter returns. The three clients are Debian's tmux,
# run through links of their own names (tmux names a client's thread "NAME: client").
. "$(dirname "$0")/../lib.sh"
need tmux
unset TMUX
for name in tmux waiter sched lister; do ln -s "$(command -v tmux)" "$WORK/$name"; done
sock=$WORK/sock
"$WORK/tmux" -S "$sock" -f /dev/null new-session -d -s main 'sleep 600' ||
  die "the tmux server did not start"
PIDS+=("$("$WORK/tmux" -S "$sock" display-message -p '#{pid}')")
start=$(date +%s.%N)
"$WORK/waiter" -S "$sock" wait-for ready &
waiter=$!
sleep 0.2
"$WORK/sched" -S "$sock" run-shell -b -C -d 1.5 'wait-for -S ready' || die "sched failed"
sleep 0.3
"$WORK/lister" -S "$sock" list-sessions >"$WORK/ls.out" || die "lister failed"
grep -q '^main: 1 windows' "$WORK/ls.out" || die "lister got '$(cat "$WORK/ls.out")'"
wait "$waiter" || die "waiter failed"
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" 'BEGIN { exit !(e - s > 1.6 && e - s < 5) }' ||
  die "waiter returned after $(awk -v s="$start" -v e="$end" 'BEGIN { print e - s }') s, not when the 1.5 s timer fired"
"$WORK/tmux" -S "$sock" kill-server 2>/dev/null || true
