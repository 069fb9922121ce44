#!/usr/bin/env bash
# tests/bench/dispatch.sh - the dispatch benchmark (`make bench-dispatch`).
#
# Builds nothing (make has built build/). Starts a private PostgreSQL
# (tests/pg.sh: fsync on, synchronous_commit on, so every state change is
# durable) and, per scenario, a fresh database and a real kf-coordinator
# with its defaults (heartbeat 1000 ms, batch 256), then drives it with
# build/tools/kf_noop_fleet, a fleet of no-op workers speaking the real
# protocol:
#
#   1. throughput: 20,000 runless no-op jobs, for 10, 100 and 1,000
#      connected workers (4, 2 and 1 credits each: 40, 200 and 1,000 jobs
#      in flight at most); completed jobs/s (the fleet's figure,
#      cross-checked with the jobs table) and the CPU of the coordinator,
#      PostgreSQL and the fleet, each as % of one core;
#   2. latency: a feeder inserting 50 jobs every 50 ms for 10 s
#      (1,000 jobs/s) with 100 workers; enqueue -> JOB received p50/p99;
#   3. idle: 1,000 connected heartbeating workers, no jobs, 10 s;
#      coordinator CPU.
#
# Each figure is printed next to the issue's target with met / not met.
# Everything here shares the machine's cores: the fleet and PostgreSQL run
# beside the coordinator. It stops by itself (every wait is bounded), kills
# only what it started, by pid, and stops its PostgreSQL.
#
#   KF_BUILD=build          which build to run
#   KF_BENCH_JOBS=20000     jobs per throughput scenario
#   KF_BENCH_PERF=DIR       also `perf record -g` the coordinator during
#                           each throughput scenario into DIR/perf-N.data
#   KF_BENCH_QUIET_S=60     wait up to this long for the machine to be
#                           quiet (< 15% busy over a second) before
#                           measuring; other work on the cores skews it
#   KF_BENCH_KEEP=1         keep the scratch folder (logs) and say where
#   KF_BENCH_SQL="..."      SQL run in each fresh database once the
#                           coordinator has migrated it (experiments, e.g.
#                           a NOTIFY trigger for a coordinator that LISTENs)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
BUILD=${KF_BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
BIN=$BUILD/bin
FLEET=$BUILD/tools/kf_noop_fleet
JOBS=${KF_BENCH_JOBS:-20000}
PERF_DIR=${KF_BENCH_PERF:-}
. "$ROOT/tests/pg.sh"

for f in "$BIN/kf-coordinator" "$BIN/kfctl" "$FLEET"; do
    [ -x "$f" ] || { echo "dispatch.sh: $f missing: run 'make bench-dispatch'" >&2; exit 2; }
done
command -v psql >/dev/null && command -v jq >/dev/null \
    || { echo "dispatch.sh: psql and jq are needed (make deps)" >&2; exit 2; }

T=$(mktemp -d /tmp/kfb.XXXXXX)    # short: ipc paths are capped at 107 bytes
chmod 755 "$T"
PGDIR=$T/pg
PGPORT=$((20000 + RANDOM % 20000))
PIDS=()           # everything started here, killed by pid at exit
COORD_PID=
TICK=$(getconf CLK_TCK)
STARTED=$SECONDS

cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do
        for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null
    done
    kf_pg_stop "$PGDIR"
    if [ -n "${KF_BENCH_KEEP:-}" ]; then
        echo "scratch folder kept: $T" >&2
    else
        rm -rf "$T"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { echo "# $*" >&2; }
die() { echo "dispatch.sh: $*" >&2; exit 1; }

# ---- measuring ------------------------------------------------------------

# ticks PID: utime+stime of PID in clock ticks (0 if it is gone).
ticks() {
    local s
    [ -n "$1" ] || { echo 0; return; }
    s=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
    set -- ${s##*) }          # fields from 3 (state) on: utime is 12th, stime 13th
    echo $((${12} + ${13}))
}

# pg_ticks: PostgreSQL's CPU: the postmaster with its reaped children
# (cutime+cstime) plus every live child.
pg_ticks() {
    local pm s total=0 c
    pm=$(head -1 "$PGDIR/postmaster.pid" 2>/dev/null) || { echo 0; return; }
    s=$(cat "/proc/$pm/stat" 2>/dev/null) || { echo 0; return; }
    set -- ${s##*) }
    total=$((${12} + ${13} + ${14} + ${15}))
    for c in $(ps -o pid= --ppid "$pm"); do
        total=$((total + $(ticks "$c")))
    done
    echo $total
}

# machine: busy and total jiffies of all cores from /proc/stat.
machine() {
    local cpu user nice sys idle iowait irq softirq steal rest
    read -r cpu user nice sys idle iowait irq softirq steal rest </proc/stat
    echo "$((user + nice + sys + irq + softirq + steal)) $((user + nice + sys + idle + iowait + irq + softirq + steal))"
}

now() { date +%s.%N; }

# snap NAME: records the clock and every CPU counter as NAME_*.
snap() {
    local m
    m=$(machine)
    printf -v "${1}_t" '%s' "$(now)"
    printf -v "${1}_coord" '%s' "$(ticks "$COORD_PID")"
    printf -v "${1}_pg" '%s' "$(pg_ticks)"
    printf -v "${1}_fleet" '%s' "$(ticks "${FLEET_PID:-0}")"
    printf -v "${1}_busy" '%s' "${m% *}"
    printf -v "${1}_all" '%s' "${m#* }"
}

# pct A B WHAT: WHAT's CPU between snapshots A and B as % of one core.
pct() {
    local a=$1 b=$2 what=$3 t0 t1 c0 c1
    t0=${a}_t t1=${b}_t c0=${a}_$what c1=${b}_$what
    awk -v d=$((${!c1} - ${!c0})) -v k="$TICK" -v w0="${!t0}" -v w1="${!t1}" \
        'BEGIN { w = w1 - w0; printf "%.1f", (w > 0 ? 100 * d / k / w : 0) }'
}

# machine_pct A B: all cores' busy share between A and B, in % of the
# whole machine (100 = every core busy).
machine_pct() {
    local b0=${1}_busy b1=${2}_busy a0=${1}_all a1=${2}_all
    awk -v b=$((${!b1} - ${!b0})) -v a=$((${!a1} - ${!a0})) \
        'BEGIN { printf "%.0f", (a > 0 ? 100 * b / a : 0) }'
}

# other A B: CPU of everything else on the machine (other users' work,
# the kernel's own threads, this script), % of one core.
other() {
    local b0=${1}_busy b1=${2}_busy a0=${1}_all a1=${2}_all
    awk -v b=$((${!b1} - ${!b0})) -v a=$((${!a1} - ${!a0})) -v n="$(nproc)" \
        -v c="$(pct "$1" "$2" coord)" -v p="$(pct "$1" "$2" pg)" -v f="$(pct "$1" "$2" fleet)" \
        'BEGIN { printf "%.1f", (a > 0 ? 100 * n * b / a - c - p - f : 0) }'
}

# ---- the pieces -------------------------------------------------------------

sql() { psql -qAt -X -h "$PGDIR" -p "$PGPORT" -d "$DB" -c "$1"; }

# status FILTER: one jq figure from the coordinator's status reply.
status() {
    "$BIN/kfctl" status --json --timeout 5 2>/dev/null | jq -r "$1"
}

# coordinator_start NAME: a fresh database and a coordinator on it with
# its default settings; waits until it answers STATUS.
coordinator_start() {
    local name=$1
    DB=kf_bench_$name
    psql -qAt -X -h "$PGDIR" -p "$PGPORT" -d postgres -c "CREATE DATABASE $DB" >/dev/null \
        || die "cannot create database $DB"
    export KF_WORKER_ENDPOINT=ipc://$T/$name-w.sock
    export KF_CLIENT_ENDPOINT=ipc://$T/$name-c.sock
    export KF_STATUS_ENDPOINT=ipc://$T/$name-s.sock
    export KF_EVENT_ENDPOINT=ipc://$T/$name-e.sock
    "$BIN/kf-coordinator" --database-url "postgresql:///$DB?host=$PGDIR&port=$PGPORT" \
        --worker-endpoint "$KF_WORKER_ENDPOINT" --client-endpoint "$KF_CLIENT_ENDPOINT" \
        --status-endpoint "$KF_STATUS_ENDPOINT" --event-endpoint "$KF_EVENT_ENDPOINT" \
        >>"$T/coordinator-$name.log" 2>&1 &
    COORD_PID=$!
    PIDS+=("$COORD_PID")
    local end=$((SECONDS + 20))
    until "$BIN/kfctl" status --json --timeout 1 >/dev/null 2>&1; do
        kill -0 "$COORD_PID" 2>/dev/null || { tail -20 "$T/coordinator-$name.log" >&2; die "coordinator exited"; }
        [ $SECONDS -lt $end ] || die "coordinator did not answer STATUS in 20 s"
        sleep 0.1
    done
    if [ -n "${KF_BENCH_SQL:-}" ]; then
        sql "$KF_BENCH_SQL" >/dev/null || die "KF_BENCH_SQL failed"
    fi
}

# forget PID: drops a reaped PID from PIDS, so the exit cleanup cannot hit
# an unrelated process that later gets the same number.
forget() {
    local p keep=()
    for p in "${PIDS[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
    PIDS=("${keep[@]}")
}

stop_pid() {   # stop_pid PID: TERM, up to 5 s, then KILL, reap
    local p=$1
    [ -n "$p" ] || return 0
    kill -TERM "$p" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null
    forget "$p"
}

coordinator_stop() { stop_pid "$COORD_PID"; COORD_PID=; }

# fleet_start NAME ARGS...: the no-op fleet in the background, its JSON
# line in $T/fleet-NAME.json.
fleet_start() {
    local name=$1
    shift
    FLEET_OUT=$T/fleet-$name.json
    # Line-buffered, so its JSON line shows as soon as the work is done,
    # before its BYEs and socket linger.
    stdbuf -oL "$FLEET" --endpoint "$KF_WORKER_ENDPOINT" --role bench "$@" \
        >"$FLEET_OUT" 2>"$T/fleet-$name.log" &
    FLEET_PID=$!
    PIDS+=("$FLEET_PID")
}

# wait_workers N SECONDS: until the coordinator has recorded N HELLOs.
wait_workers() {
    local n=$1 end=$((SECONDS + $2)) have=0
    while [ $SECONDS -lt $end ]; do
        have=$(sql "SELECT count(*) FROM workers" 2>/dev/null || echo 0)
        [ "$have" -ge "$n" ] && return 0
        sleep 0.2
    done
    die "only $have of $n workers connected in $2 s"
}

# wait_fleet_line SECONDS: until the fleet printed its JSON line (it does
# so as soon as its last result is sent, before its BYEs). The fleet may
# be gone by the next look, so its CPU is sampled on the way, in
# FLEET_LAST (ticks), for fleet_ticks_fix.
wait_fleet_line() {
    local end=$((SECONDS + $1)) t
    FLEET_LAST=0
    while [ ! -s "$FLEET_OUT" ]; do
        t=$(ticks "$FLEET_PID")
        [ "$t" -gt 0 ] && FLEET_LAST=$t
        kill -0 "$FLEET_PID" 2>/dev/null || break
        [ $SECONDS -lt $end ] || return 1
        sleep 0.05
    done
    [ -s "$FLEET_OUT" ]
}

# fleet_ticks_fix: after snap B, the fleet's last sample if it was gone.
fleet_ticks_fix() {
    [ "$B_fleet" -lt "$FLEET_LAST" ] && B_fleet=$FLEET_LAST
    return 0
}

fj() { jq -r "$1" "$FLEET_OUT"; }

# verdict VALUE OP LIMIT: met / not met.
verdict() {
    case "$1" in ''|null) echo "no figure"; return ;; esac
    awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN {
        ok = (op == ">=") ? v >= l : v < l; print ok ? "met" : "not met" }'
}

INSERT_JOBS="INSERT INTO jobs (role, kind, payload)
  SELECT 'bench', 'noop', jsonb_build_object('t_us',
         (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, 'n', g)
  FROM generate_series(1, %d) g"

# ---- 1. throughput ------------------------------------------------------------

# throughput WORKERS CREDITS: one row of the throughput table.
TP_ROWS=()
TP_MIN=
throughput() {
    local n=$1 credits=$2 name=tp$1
    coordinator_start "$name"
    fleet_start "$name" --workers "$n" --credits "$credits" --until-jobs "$JOBS" --duration-s 100
    wait_workers "$n" 30
    sleep 1   # let the WELCOMEs and first heartbeats settle
    local st0 st1 b0 b1 w0 w1 perf_pid=
    read -r st0 b0 < <(status '[.counters.db_statements, .counters.batches] | @tsv')
    w0=$(sql "SELECT pg_current_wal_lsn() - '0/0'")
    if [ -n "$PERF_DIR" ]; then
        mkdir -p "$PERF_DIR"
        perf record -q -g -F 999 -p "$COORD_PID" -o "$PERF_DIR/perf-$n.data" >/dev/null 2>&1 &
        perf_pid=$!
        PIDS+=("$perf_pid")
    fi
    snap A
    sql "$(printf "$INSERT_JOBS" "$JOBS")" >/dev/null || die "cannot enqueue"
    wait_fleet_line 90 || say "throughput $n: the fleet did not finish in time"
    snap B
    fleet_ticks_fix
    [ -n "$perf_pid" ] && { kill -INT "$perf_pid" 2>/dev/null; wait "$perf_pid" 2>/dev/null; forget "$perf_pid"; }
    read -r st1 b1 < <(status '[.counters.db_statements, .counters.batches] | @tsv')
    w1=$(sql "SELECT pg_current_wal_lsn() - '0/0'")
    local jobs secs rate db
    jobs=$(fj .jobs) secs=$(fj .seconds) rate=$(fj .jobs_per_s)
    # The jobs table: done count and first-to-last completion span.
    db=$(sql "SELECT count(*), round(extract(epoch FROM max(updated_at) - min(updated_at)), 3)
              FROM jobs WHERE state = 'done'" | tr '|' ' ')
    local done span dbrate
    read -r done span <<<"$db"
    dbrate=$(awk -v d="$done" -v s="$span" 'BEGIN { printf "%.0f", (s > 0 ? d / s : 0) }')
    local per_pass stmts wal cpu_us
    stmts=$(awk -v a="$st0" -v b="$st1" -v j="$done" 'BEGIN { printf "%.2f", (j ? (b - a) / j : 0) }')
    per_pass=$(awk -v a="$b0" -v b="$b1" -v j="$done" 'BEGIN { printf "%.1f", (b > a ? j / (b - a) : 0) }')
    wal=$(awk -v a="$w0" -v b="$w1" -v j="$done" 'BEGIN { printf "%.0f", (j ? (b - a) / j : 0) }')
    cpu_us=$(awk -v d=$((B_coord - A_coord)) -v k="$TICK" -v j="$done" \
        'BEGIN { printf "%.0f", (j ? 1e6 * d / k / j : 0) }')
    TP_ROWS+=("$(printf '%7d %7d %7s %7s %8.0f %8s %7s%% %6s%% %6s%% %6s%% %5s%% %7s %6s %6s %7s  %s' \
        "$n" "$credits" "$jobs" "$secs" "$rate" "$dbrate" "$(pct A B coord)" "$(pct A B pg)" \
        "$(pct A B fleet)" "$(other A B)" "$(machine_pct A B)" "$cpu_us" "$stmts" "$per_pass" "$wal" \
        "$(verdict "$rate" '>=' 5000)")")
    [ "$done" = "$JOBS" ] || say "throughput $n: only $done of $JOBS jobs done"
    if [ -z "$TP_MIN" ] || awk -v a="$rate" -v b="$TP_MIN" 'BEGIN { exit !(a < b) }'; then
        TP_MIN=$rate
    fi
    wait_fleet_exit
    coordinator_stop
}

wait_fleet_exit() {
    for _ in $(seq 1 100); do kill -0 "$FLEET_PID" 2>/dev/null || break; sleep 0.1; done
    stop_pid "$FLEET_PID"
    FLEET_PID=
}

# ---- 2. latency at a steady 1,000 jobs/s -----------------------------------------

latency() {
    local n=100 credits=2 name=lat
    coordinator_start "$name"
    fleet_start "$name" --workers "$n" --credits "$credits" --until-jobs 10000 --duration-s 40
    wait_workers "$n" 30
    sleep 1
    # One psql session; each INSERT of 50 is followed by a sleep until its
    # slot's end, so the rate holds at 50 per 50 ms however long an INSERT
    # takes.
    local start
    start=$(awk -v t="$(now)" 'BEGIN { printf "%.6f", t + 0.5 }')
    snap A
    awk -v s="$start" -v ins="$(printf "$INSERT_JOBS" 50 | tr '\n' ' ')" 'BEGIN {
        printf "SELECT pg_sleep(greatest(0, %.6f - extract(epoch FROM clock_timestamp())));\n", s
        for (k = 1; k <= 200; k++) {
            print ins ";"
            printf "SELECT pg_sleep(greatest(0, %.6f - extract(epoch FROM clock_timestamp())));\n", s + k * 0.05
        }
    }' | psql -qAt -X -h "$PGDIR" -p "$PGPORT" -d "$DB" >/dev/null
    local fed_end
    fed_end=$(now)
    wait_fleet_line 20 || say "latency: the fleet did not receive every job in time"
    snap B
    fleet_ticks_fix
    LAT_JOBS=$(fj .jobs) LAT_SAMPLES=$(fj .latency_samples)
    LAT_P50=$(fj .latency_ms_p50) LAT_P99=$(fj .latency_ms_p99)
    LAT_RATE=$(awk -v a="$start" -v b="$fed_end" 'BEGIN { printf "%.0f", 10000 / (b - a) }')
    LAT_COORD=$(pct A B coord) LAT_PG=$(pct A B pg) LAT_FLEET=$(pct A B fleet)
    LAT_MACHINE=$(machine_pct A B) LAT_OTHER=$(other A B)
    wait_fleet_exit
    coordinator_stop
}

# ---- 3. idle --------------------------------------------------------------------

idle() {
    local n=1000 name=idle st0 st1
    coordinator_start "$name"
    fleet_start "$name" --workers "$n" --credits 1 --duration-s 60
    wait_workers "$n" 30
    sleep 2
    st0=$(status .counters.db_statements)
    snap A
    sleep 10
    snap B
    st1=$(status .counters.db_statements)
    IDLE_WORKERS=$(status '.workers | length')
    IDLE_COORD=$(pct A B coord) IDLE_PG=$(pct A B pg) IDLE_FLEET=$(pct A B fleet)
    IDLE_OTHER=$(other A B) IDLE_MACHINE=$(machine_pct A B)
    IDLE_STMTS=$(awk -v a="$st0" -v b="$st1" -v s="$(awk -v a="$A_t" -v b="$B_t" 'BEGIN{print b-a}')" \
        'BEGIN { printf "%.1f", (b - a) / s }')
    stop_pid "$FLEET_PID"
    FLEET_PID=
    coordinator_stop
}

# ---- main ------------------------------------------------------------------------

say "private PostgreSQL in $PGDIR (port $PGPORT)"
kf_pg_start "$PGDIR" "$PGPORT" >"$T/pg-start.log" 2>&1 || { cat "$T/pg-start.log"; die "cannot start PostgreSQL"; }
PGVER=$(psql -qAt -X -h "$PGDIR" -p "$PGPORT" -d postgres -c "SHOW server_version" | cut -d' ' -f1)
DURABLE=$(psql -qAt -X -h "$PGDIR" -p "$PGPORT" -d postgres \
    -c "SELECT current_setting('fsync') || '/' || current_setting('synchronous_commit') || '/' || current_setting('wal_sync_method')")

quiet_end=$((SECONDS + ${KF_BENCH_QUIET_S:-60}))
while true; do
    snap A; sleep 1; snap B; BASELINE=$(machine_pct A B)
    [ "$BASELINE" -lt 15 ] && break
    if [ $SECONDS -ge $quiet_end ]; then
        say "warning: the machine is $BASELINE% busy with other work: the figures will suffer"
        break
    fi
    [ -n "${said_waiting:-}" ] || say "the machine is $BASELINE% busy with other work: waiting up to ${KF_BENCH_QUIET_S:-60} s for quiet"
    said_waiting=1
done
say "1. throughput, $JOBS jobs each: 10 workers"
throughput 10 4
say "1. throughput: 100 workers"
throughput 100 2
say "1. throughput: 1000 workers"
throughput 1000 1
say "2. latency at 1,000 jobs/s, 100 workers"
latency
say "3. idle, 1,000 workers"
idle

CPU=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
MEM=$(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
echo
echo "KernelFoundry dispatch benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) cores ($CPU), $MEM; PostgreSQL $PGVER (fsync/synchronous_commit/wal_sync_method: $DURABLE)"
echo "coordinator defaults (heartbeat 1000 ms, batch 256); the fleet and PostgreSQL share the cores"
echo "CPU: % of one core over the measured window (other = everything else on the machine);"
echo "     mach = all cores busy, % of the machine; before the run the machine was $BASELINE% busy"
echo
echo "1. Throughput: $JOBS runless no-op jobs (role bench), enqueued in one INSERT, fleet running until all are done"
printf '%7s %7s %7s %7s %8s %8s %8s %7s %7s %7s %6s %7s %6s %6s %7s  %s\n' \
    workers credits jobs secs 'jobs/s' 'db j/s' coord pg fleet other mach 'us/job' 'st/job' 'j/pass' 'WAL/job' 'target >= 5000 jobs/s'
for r in "${TP_ROWS[@]}"; do echo "$r"; done
echo "   (jobs/s: the fleet's first JOB to last RESULT; db j/s: done rows / (max-min updated_at);"
echo "    us/job: coordinator CPU per job; st/job: coordinator SQL statements per job (COMMIT included);"
echo "    j/pass: jobs per loop pass (one transaction each); WAL/job: bytes of WAL per job)"
echo
echo "2. Latency: 100 workers (2 credits), feeder 50 jobs every 50 ms for 10 s (fed at $LAT_RATE jobs/s)"
echo "   jobs received $LAT_JOBS, samples $LAT_SAMPLES; enqueue -> JOB received: p50 $LAT_P50 ms, p99 $LAT_P99 ms"
echo "   CPU: coordinator $LAT_COORD%, PostgreSQL $LAT_PG%, fleet $LAT_FLEET%, other $LAT_OTHER%; machine $LAT_MACHINE% busy"
echo
echo "3. Idle: $IDLE_WORKERS connected workers heartbeating every 1000 ms, no jobs, 10 s"
echo "   CPU: coordinator $IDLE_COORD%, PostgreSQL $IDLE_PG%, fleet $IDLE_FLEET%, other $IDLE_OTHER%; machine $IDLE_MACHINE% busy"
echo "   coordinator SQL statements: $IDLE_STMTS/s"
echo
echo "Targets"
printf '  %-60s %-14s %-12s %s\n' "figure" "measured" "target" "verdict"
printf '  %-60s %-14s %-12s %s\n' "completed jobs/s, fsync on (lowest of 10/100/1000 workers)" \
    "$TP_MIN" ">= 5000" "$(verdict "$TP_MIN" '>=' 5000)"
printf '  %-60s %-14s %-12s %s\n' "dispatch latency p99 at 1,000 jobs/s (ms)" \
    "$LAT_P99" "< 10" "$(verdict "$LAT_P99" '<' 10)"
printf '  %-60s %-14s %-12s %s\n' "coordinator CPU, 1,000 idle workers (% of one core)" \
    "$IDLE_COORD" "< 10" "$(verdict "$IDLE_COORD" '<' 10)"
echo
say "done in $((SECONDS - STARTED)) s"
