#!/usr/bin/env bash
# mosquitto_sub -C 1 waits for one message on jobs/done through a private mosquitto
# broker; slow-publisher publishes it after 1.2 s of sleep, and the broker forwards it.
. "$(dirname "$0")/../lib.sh"
need mosquitto mosquitto_sub
here=$(cd "$(dirname "$0")" && pwd)
port=$(free_port)
# `user root`: run as root, mosquitto would otherwise drop to the mosquitto user, who may
# not write this root-only temp dir. log_type all: the driver reads the SUBACK below.
cat >"$WORK/mosquitto.conf" <<CONF
listener $port 127.0.0.1
allow_anonymous true
persistence false
user root
log_dest file $WORK/mosquitto.log
log_type all
CONF
mosquitto -c "$WORK/mosquitto.conf" >"$WORK/mosquitto.out" 2>&1 &
PIDS+=($!)
wait_port "$port" mosquitto "$WORK/mosquitto.log"
# -W 10 bounds the wait; the message comes long before.
mosquitto_sub -h 127.0.0.1 -p "$port" -i cw-sub -t jobs/done -C 1 -W 10 >"$WORK/sub.out" &
sub=$!
PIDS+=($sub)
# A QoS 0 message reaches only subscriptions made before it: wait until the broker has
# acknowledged mosquitto_sub's subscription.
subscribed=0
for _ in $(seq 100); do
  if grep -qs 'Sending SUBACK to cw-sub' "$WORK/mosquitto.log"; then subscribed=1; break; fi
  sleep 0.05
done
[ "$subscribed" = 1 ] || die "mosquitto_sub did not subscribe within 5 s ($(tail -3 "$WORK/mosquitto.log" | tr '\n' ' '))"
"$here/slow-publisher" "$port" &
pub=$!
PIDS+=($pub)
wait "$sub" || die "mosquitto_sub failed or timed out: $(cat "$WORK/sub.out")"
wait "$pub" || die "slow-publisher failed"
[ "$(cat "$WORK/sub.out")" = report-42 ] || die "mosquitto_sub got '$(cat "$WORK/sub.out")'"
