#!/usr/bin/env bash
# test_metrics_hang.sh - a scrape runs no statement, and the loop runs
# none of the table counts /metrics reports (issue 13, item 8).
# /metrics answers from memory and from a snapshot of the database's
# figures that a reader thread of the coordinator reads on a connection
# of its own, every 5 s while it is scraped; neither a scrape nor the
# loop waits on a table. Another session holds the
# evaluations table locked (in an idle cluster only the figures read it),
# under the coordinator's statement limit of 60 s: a scrape that read the
# table itself would wait those 60 s. Each must answer within 20 s, with
# the figures read before the lock, their age growing past the interval,
# the database up, and the failed reads counted; once the lock is gone
# the figures are read again.
. "$(dirname "$0")/lib.sh"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT/metrics
db_new
start_coordinator "${COORD_HB[@]}" --metrics-address "127.0.0.1:$PORT" \
    --db-statement-timeout-ms 60000
check "the coordinator answers" wait_until 60 jtrue '.database == "ok"' kfctl status --json

val() { awk -v k="$1" '$1 == k { print $2 }' "$T/m.txt"; }
scrape() { rm -f "$T/m.txt"; curl -sf -m 20 -o "$T/m.txt" "$URL"; }
queued_is() { scrape && [ "$(val 'kf_jobs{role="idle",state="queued"}')" = "$1" ]; }
age_above() { scrape && awk -v a="$(val kf_metrics_snapshot_age_seconds)" -v m="$1" 'BEGIN { exit !(a > m) }'; }
age_below() { scrape && awk -v a="$(val kf_metrics_snapshot_age_seconds)" -v m="$1" 'BEGIN { exit !(a < m) }'; }
# Jobs of a role no worker has: they stay queued.
add_jobs() { sql "INSERT INTO jobs (role, kind, payload) SELECT 'idle', 'noop', '{}' FROM generate_series(1, $1)" >/dev/null; }

add_jobs 3
check "the figures show the 3 queued jobs" wait_until 60 queued_is 3
check "kf_queue_depth too" [ "$(val 'kf_queue_depth{role="idle"}')" = 3 ]

start locker psql -qAt -h "$KF_TEST_PGHOST" -p "$KF_TEST_PGPORT" -d "$DB" \
    -c "BEGIN; LOCK TABLE evaluations IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(600)"
LOCKER_PID=$PID
locked() { [ "$(sql "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
                     WHERE c.relname = 'evaluations' AND l.mode = 'AccessExclusiveLock' AND l.granted")" -ge 1 ]; }
check "another session holds the evaluations table" wait_until 60 locked
add_jobs 2
scrape
errors_before=$(val kf_db_errors_total)
check "a scrape answers within 20 s while the table stays locked" scrape
check "with the figures read before the lock (3 queued, not 5)" \
    [ "$(val 'kf_jobs{role="idle",state="queued"}')" = 3 ]
check "their age grows past the 5 s interval (the reads fail)" wait_until 60 age_above 6
check "every scrape meanwhile answered within 20 s (3 more in a row)" \
    sh -c "for i in 1 2 3; do curl -sf -m 20 -o /dev/null '$URL' || exit 1; done"
check "the database is up: its connection stands" [ "$(val kf_database_up)" = 1 ]
check "its round trip is timed" awk -v p="$(val kf_db_ping_seconds)" 'BEGIN { exit !(p > 0) }'
errors_grew() { scrape && awk -v a="$errors_before" -v b="$(val kf_db_errors_total)" 'BEGIN { exit !(b > a) }'; }
check "the failed reads are counted as database errors" wait_until 60 errors_grew
check "the coordinator logged that it serves the last figures" \
    wait_until 60 grep -q "cannot read the database's figures" "$T/coordinator.log"
check "kfctl status answers meanwhile" jtrue '.database == "ok"' kfctl status --json --timeout 20

kill -TERM "$LOCKER_PID" 2>/dev/null
sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
     WHERE datname = current_database() AND query LIKE '%pg_sleep(600)%' AND pid <> pg_backend_pid()" >/dev/null
check "once the lock is gone the figures are read again (5 queued)" wait_until 60 queued_is 5
check "and are recent" age_below 6
check "the coordinator logged it" grep -q "figures are read again" "$T/coordinator.log"
check "the coordinator is alive" kill -0 "$COORD_PID"
finish
