#!/usr/bin/env bash
# redis-server with io-threads 2. Eight clients subscribe to news (subscribers' 7
# connections, then news-reader, Debian's redis-cli, through a link of its own name);
# publisher publishes a tick on news every 2 ms, which keeps redis's I/O thread active,
# then runs a Lua script that publishes report-ready on news and spins for 1.5 s on the
# main thread: news-reader gets the message only when the script is done, written by the
# I/O thread.
. "$(dirname "$0")/../lib.sh"
need redis-server redis-cli
here=$(cd "$(dirname "$0")" && pwd)
ln -s "$(command -v redis-cli)" "$WORK/news-reader"
port=$(free_port)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" \
  --daemonize no --logfile "$WORK/redis.log" --io-threads 2 &
PIDS+=($!)
wait_port "$port" redis-server "$WORK/redis.log"
"$here/subscribers" "$port" "$WORK/subscribers.ready" &
subscribers=$!
PIDS+=($subscribers)
wait_file "$WORK/subscribers.ready" subscribers
"$WORK/news-reader" -p "$port" SUBSCRIBE news >"$WORK/news.out" 2>"$WORK/news.err" &
reader=$!
PIDS+=($reader)
# news-reader is the eighth subscriber.
for _ in $(seq 100); do
  n=$(redis-cli -p "$port" PUBSUB NUMSUB news | sed -n 2p)
  [ "$n" = 8 ] && break
  sleep 0.05
done
[ "$n" = 8 ] || die "news has $n subscribers, not 8, after 5 s"
"$here/publisher" "$port" || die "publisher failed"
# The story needs the I/O thread to have written: redis counts its writes.
written=$(redis-cli -p "$port" INFO stats | tr -d '\r' | sed -n 's/^io_threaded_writes_processed://p')
[ "${written:-0}" -gt 0 ] || die "redis-server's I/O thread wrote nothing (io_threaded_writes_processed: '$written')"
redis-cli -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
wait "$subscribers" || die "subscribers failed"
wait "$reader" || true  # redis-cli SUBSCRIBE ends when the server closes the connection
grep -qx report-ready "$WORK/news.out" || die "news-reader never got report-ready: $(tail -c 300 "$WORK/news.out" | tr '\n' ' ')"
