#!/usr/bin/env bash
# test_db_down.sh - the coordinator and a database that is not there.
#   1. Started against a PostgreSQL that does not exist yet, the
#      coordinator stays alive and says it is waiting for the database;
#      once the cluster is up and the database created, it comes up by
#      itself and answers status.
#   2. When the database goes away under a serving coordinator, it stays
#      alive, keeps answering status (database "unavailable") without
#      spinning, and once the database is back it reconnects by itself
#      and dispatches jobs again.
# It runs its own, second PostgreSQL cluster (port 5477) so it can stop and
# start it without touching the suite's.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/pg.sh"

FLEET=$TOOLS/kf_noop_fleet
PG2=$T/pg2
PORT2=5477
DB=kf_down
DB_URL="postgresql:///$DB?host=$PG2&port=$PORT2"

# The cluster goes first: kf_cleanup removes $T, its data directory.
trap 'kf_pg_stop "$PG2"; kf_cleanup' EXIT

sql2() { psql -qAt -h "$PG2" -p "$PORT2" -d "$1" -c "$2"; }
# Restarts the stopped cluster with the options kf_pg_start used.
pg2_restart() {
    kf_as_pg "$(kf_pg_bindir)/pg_ctl" start -D "$PG2" -w -t 60 -l "$PG2/server.log" \
        -o "-p $PORT2 -k $PG2 -c listen_addresses=''" >/dev/null
}
db_state() {   # db_state STATE: status answers, with .database == STATE
    jtrue ".database == \"$1\"" kfctl status --json --timeout 1
}
# cpu_ticks PID: user + system clock ticks the process has used.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# --- 1. down at start ------------------------------------------------------
start_coordinator "${COORD_HB[@]}"
check "the coordinator logs that it waits for the database" \
    wait_until 120 grep -q "waiting for the database" "$T/coordinator.log"
# A status answer after the failed connection (a state, not a sleep):
# alive and serving while the database is missing.
check "status answers meanwhile, saying the database is unavailable" \
    wait_until 120 jtrue '.database == "unavailable"' kfctl status --json
check "it stays alive while the database is missing" kill -0 "$COORD_PID"

check "the second cluster starts" kf_pg_start "$PG2" "$PORT2"
# Created right after the start: the coordinator may well try in between
# and find the server without its database; it must keep trying.
check "the database is created" sql2 postgres "CREATE DATABASE $DB"
up_from=$SECONDS
check "the coordinator comes up and answers status" \
    wait_until 120 db_state ok
say "status answered $((SECONDS - up_from)) s after the database was created"
check "it logged that it serves" grep -q "serving workers on" "$T/coordinator.log"
check "it applied its schema to the new database" \
    [ "$(sql2 "$DB" "SELECT count(*) FROM information_schema.tables WHERE table_name = 'jobs'")" = 1 ]

# A worker and some work, so the second half has a baseline.
start fleet "$FLEET" --endpoint "$KF_WORKER_ENDPOINT" --heartbeat-ms 100 --role down \
    --credits 2 --id-prefix down
FLEET_PID=$PID
check "a worker registers" \
    wait_until 60 jtrue '[.workers[] | select(.id | startswith("down-"))] | length == 1' \
    kfctl status --json
sql2 "$DB" "INSERT INTO jobs (role, kind, payload)
            SELECT 'down', 'noop', '{}' FROM generate_series(1, 5)" >/dev/null
check "it finishes 5 jobs" \
    wait_until 60 eval '[ "$(sql2 "$DB" "SELECT count(*) FROM jobs WHERE state = '"'done'"'")" = 5 ]'

# --- 2. lost while serving -------------------------------------------------
kf_pg_stop "$PG2"
check "with the database gone, status says it is unavailable" \
    wait_until 60 db_state unavailable
# Spinning cannot be waited for: its absence is measured over a window of
# 3 s. Load only takes CPU away from the coordinator, so a busy machine
# cannot make an idle coordinator look busy.
t0=$(cpu_ticks "$COORD_PID")
sleep 3
t1=$(cpu_ticks "$COORD_PID")
hz=$(getconf CLK_TCK)
say "coordinator used $((t1 - t0)) ticks of CPU in 3 s with the database down (CLK_TCK $hz)"
check "it does not spin while the database is down (under 30% of a core)" \
    [ $((t1 - t0)) -lt $((hz * 3 * 30 / 100)) ]
check "it is still alive" kill -0 "$COORD_PID"
check "the worker is still registered (heartbeats need no database)" \
    jtrue '[.workers[] | select(.id | startswith("down-"))] | length == 1' kfctl status --json

check "the cluster restarts" pg2_restart
check "the coordinator reconnects by itself" wait_until 120 db_state ok
sql2 "$DB" "INSERT INTO jobs (role, kind, payload)
            SELECT 'down', 'noop', '{}' FROM generate_series(1, 10)" >/dev/null
check "and dispatches again: all 15 jobs done" \
    wait_until 120 eval '[ "$(sql2 "$DB" "SELECT count(*) FROM jobs WHERE state = '"'done'"'")" = 15 ]'
check "counters.db_errors recorded the outage" jtrue '.counters.db_errors > 0' kfctl status --json
check "the coordinator is still running" kill -0 "$COORD_PID"
finish
