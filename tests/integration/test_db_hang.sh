#!/usr/bin/env bash
# test_db_hang.sh - the event loop never waits on the database without a
# limit (issue 13, item 8).
#   1. A database server that accepts the connection and never answers
#      (a silent TCP listener): the coordinator's connection attempt ends
#      at db_connect_timeout_s (5 s by default), so status keeps
#      answering "unavailable" instead of the loop hanging in connect.
#   2. A statement that cannot finish (another session holds the jobs
#      table locked): db_statement_timeout_ms ends it, the pass rolls
#      back, and status and the loop go on; once the lock is gone the
#      jobs queued meanwhile are dispatched.
. "$(dirname "$0")/lib.sh"

# --- 1. a silent server --------------------------------------------------------
start silent python3 -c '
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
print(s.getsockname()[1], flush=True)
held = []
while True:
    c, _ = s.accept()
    held.append(c)          # accepted, never answered
'
check "the silent server listens" wait_until 30 grep -qE '^[0-9]+$' "$T/silent.log"
port=$(grep -E '^[0-9]+$' "$T/silent.log" | head -n 1)
DB_URL="postgresql://kf@127.0.0.1:$port/kf_silent"
start_coordinator "${COORD_HB[@]}"
check "status answers while the database server is silent" \
    wait_until 60 jtrue '.database == "unavailable"' kfctl status --json --timeout 10
check "and again (the loop is not stuck in a connection attempt)" \
    jtrue '.database == "unavailable"' kfctl status --json --timeout 10
stop_all

# --- 2. a statement that cannot finish ---------------------------------------
db_new
start_coordinator "${COORD_HB[@]}" --db-statement-timeout-ms 1000
check "the coordinator answers" wait_until 60 jtrue '.database == "ok"' kfctl status --json
start fleet "$TOOLS/kf_noop_fleet" --endpoint "$KF_WORKER_ENDPOINT" --role hang \
    --heartbeat-ms 200 --id-prefix hang
check "a worker registers" \
    wait_until 60 jtrue '[.workers[] | select(.id | startswith("hang-"))] | length == 1' \
    kfctl status --json
start locker psql -qAt -h "$KF_TEST_PGHOST" -p "$KF_TEST_PGPORT" -d "$DB" \
    -c "BEGIN; LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(600)"
LOCKER_PID=$PID
locked() { [ "$(sql "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
                     WHERE c.relname = 'jobs' AND l.mode = 'AccessExclusiveLock' AND l.granted")" -ge 1 ]; }
check "another session holds the jobs table" wait_until 60 locked
check "the coordinator's statements time out (db_errors grow)" \
    wait_until 60 jtrue '.counters.db_errors >= 2' kfctl status --json --timeout 10
check "status still answers while the table stays locked" \
    jtrue '.version == 1' kfctl status --json --timeout 10
check "the worker stays registered (heartbeats are read meanwhile)" \
    jtrue '[.workers[] | select(.id | startswith("hang-"))] | length == 1' kfctl status --json --timeout 10
kill -TERM "$LOCKER_PID" 2>/dev/null
sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
     WHERE datname = current_database() AND query LIKE '%pg_sleep(600)%' AND pid <> pg_backend_pid()" >/dev/null
sql "INSERT INTO jobs (role, kind, payload) SELECT 'hang', 'noop', '{}' FROM generate_series(1, 5)" >/dev/null
check "once the lock is gone, jobs are dispatched and done" \
    wait_until 120 eval '[ "$(sql "SELECT count(*) FROM jobs WHERE state = '"'done'"'")" = 5 ]'
check "the coordinator is alive" kill -0 "$COORD_PID"
finish
