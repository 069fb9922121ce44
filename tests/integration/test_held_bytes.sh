#!/usr/bin/env bash
# test_held_bytes.sh - RESULTs held while the database is away are bounded
# by bytes, not by count (issue 13, item 7). A worker holds 8 jobs; the
# database goes away; it sends their 8 RESULTs of 40 KiB each (320 KiB)
# to a coordinator that may hold 128 KiB (max_held_result_bytes). The
# coordinator keeps what fits, drops the oldest (counted in
# counters.held_results_dropped; their leases are the backstop), and once
# the database is back records the ones it kept. Its own PostgreSQL
# cluster (port 5479), as in test_db_down, so it can stop it.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/pg.sh"

PEER=$TOOLS/kf_peer
PG2=$T/pg2
PORT2=5479
DB=kf_held
DB_URL="postgresql:///$DB?host=$PG2&port=$PORT2"
trap 'kf_pg_stop "$PG2"; kf_cleanup' EXIT
sql2() { psql -qAt -h "$PG2" -p "$PORT2" -d "$DB" -c "$1"; }
pg2_restart() {
    kf_as_pg "$(kf_pg_bindir)/pg_ctl" start -D "$PG2" -w -t 60 -l "$PG2/server.log" \
        -o "-p $PORT2 -k $PG2 -c listen_addresses=''" >/dev/null
}
db_state() { jtrue ".database == \"$1\"" kfctl status --json --timeout 1; }

check "the second cluster starts" kf_pg_start "$PG2" "$PORT2"
check "the database is created" psql -qAt -h "$PG2" -p "$PORT2" -d postgres -c "CREATE DATABASE $DB"
start_coordinator "${COORD_HB[@]}" --max-held-result-bytes 131072
check "the coordinator answers with its database" wait_until 120 db_state ok
sql2 "INSERT INTO jobs (role, kind, payload) SELECT 'held', 'noop', '{}'
      FROM generate_series(1, 8)" >/dev/null
start holder "$PEER" --endpoint "$KF_WORKER_ENDPOINT" \
    "hello holder held 8 {\"backends\":[\"host\"],\"arch\":\"x86_64\"}" "jobs 8 120000" \
    "waitfile $T/down" "results 40960" "waitfile $T/end"
check "the worker holds 8 jobs" \
    wait_until 120 eval '[ "$(sql2 "SELECT count(*) FROM jobs WHERE worker = '"'holder'"'")" = 8 ]'

kf_pg_stop "$PG2"
check "with the database gone, status says it is unavailable" wait_until 60 db_state unavailable
touch "$T/down"
check "the coordinator drops the oldest results past 128 KiB" \
    wait_until 60 jtrue '.counters.held_results_dropped >= 4' kfctl status --json
kfctl status --json >"$T/status.json"
dropped=$(jq .counters.held_results_dropped "$T/status.json")
say "held_results_dropped: $dropped of 8 (40 KiB each, 128 KiB held)"
check "it keeps what fits (at most 3 of 40 KiB)" [ "$dropped" -ge 5 ] && [ "$dropped" -le 8 ]

check "the cluster restarts" pg2_restart
check "the coordinator reconnects" wait_until 120 db_state ok
kept=$((8 - dropped))
check "the $kept result(s) it kept are recorded" \
    wait_until 120 eval '[ "$(sql2 "SELECT count(*) FROM jobs WHERE state = '"'done'"'")" = "$kept" ]'
check "the dropped ones' jobs still wait on their leases" \
    [ "$(sql2 "SELECT count(*) FROM jobs WHERE state = 'leased' AND worker = 'holder'")" = "$dropped" ]
touch "$T/end"
check "the coordinator is alive" kill -0 "$COORD_PID"
finish
