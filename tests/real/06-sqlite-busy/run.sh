#!/usr/bin/env bash
# Session 2, the sqlite3 shell, inserts a row while db-holder's transaction holds the
# database's lock: sqlite3's busy handler retries the fcntl lock in a loop of short sleeps
# (.timeout 5000) until db-holder commits 1.5 s later.
. "$(dirname "$0")/../lib.sh"
need sqlite3
here=$(cd "$(dirname "$0")" && pwd)
sqlite3 "$WORK/jobs.db" "CREATE TABLE jobs(name TEXT)" || die "cannot create the database"
"$here/db-holder" "$WORK/jobs.db" "$WORK/READY" &
PIDS+=($!)
wait_file "$WORK/READY" db-holder
sqlite3 -cmd ".timeout 5000" "$WORK/jobs.db" "INSERT INTO jobs VALUES ('shell')" ||
  die "sqlite3 could not insert"
n=$(sqlite3 "$WORK/jobs.db" "SELECT count(*) FROM jobs")
[ "$n" = 2 ] || die "expected 2 rows, found $n"
