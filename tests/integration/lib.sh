# tests/integration/lib.sh - what every integration test needs: a fresh
# database on the suite's PostgreSQL, the real daemons on ipc:// endpoints
# in a private folder, kfctl pointed at them, checks that count, and a
# cleanup that stops everything the test started (by pid, never by name).
# Sourced by tests/integration/test_*.sh; run them through tests/run.sh.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${KF_BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
BIN=$BUILD/bin
TOOLS=$BUILD/tools
NAME=$(basename "$0" .sh)
T=$(mktemp -d /tmp/kfi.XXXXXX)    # short: ipc paths are capped at 107 bytes
chmod 755 "$T"
PIDS=()
checks=0
failures=0

export KF_CLIENT_ENDPOINT=ipc://$T/c.sock
export KF_STATUS_ENDPOINT=ipc://$T/s.sock
export KF_EVENT_ENDPOINT=ipc://$T/e.sock
export KF_WORKER_ENDPOINT=ipc://$T/w.sock
export KF_STATE=$T/state     # no kf-local endpoints file can leak in
export KF_CACHE_DIR=$T/compile-cache   # each test compiles from a cold cache

say() { echo "$NAME: $*" >&2; }

# build_so SOURCE NAME [ARGS...]: SOURCE built standalone (kf-compile-worker
# --build) into $W/NAME.so, its JSON in $W/NAME.build.json; true when it
# compiled. $W is the test's work folder.
build_so() {
    "$BIN/kf-compile-worker" --cache-dir off --build "$1" -o "$W/$2.so" "${@:3}" \
        >"$W/$2.build.json" 2>>"$W/build.err" \
        && jq -e .result.compiled "$W/$2.build.json" >/dev/null
}

# eval_so NAME TAG SEED [TIMING]: $W/NAME.so judged against $W/ref.so on
# $EX/task.json by `kf-exec-worker --eval`, in a TMPDIR and HOME of its
# own under $T; its JSON in $W/TAG.json. TIMING: a timing protocol as a
# JSON object (default: the task's).
eval_so() {
    local timing=${4:+, \"timing\": $4}
    cat >"$W/$2.job.json" <<JSON
{"payload": {"task": "$EX/task.json", "seed": $3$timing}, "frames": ["$W/$1.so", "$W/ref.so"]}
JSON
    mkdir -p "$T/tmp-$2"
    (cd "$T/tmp-$2" && TMPDIR=$T/tmp-$2 HOME=$T/tmp-$2 timeout -k 5 120 \
        "$BIN/kf-exec-worker" --eval-time-limit-s 60 --eval "$W/$2.job.json" \
        >"$W/$2.json" 2>"$W/$2.err")
}

check() {   # check DESCRIPTION COMMAND...: passes when COMMAND succeeds
    local what=$1
    shift
    checks=$((checks + 1))
    if "$@"; then
        say "ok: $what"
    else
        failures=$((failures + 1))
        say "FAILED: $what"
    fi
}

# Stops every daemon the test started: SIGTERM, then SIGKILL after 5 s.
stop_all() {
    local p
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do
        for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null
    done
    PIDS=()
}

# Stops the daemons, fails the test if a sanitizer (ASan, LSan, UBSan)
# reported anything in their logs, prints the count line and exits.
finish() {
    stop_all
    local f
    for f in "$T"/*.log; do
        [ -f "$f" ] || continue
        if grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error:" "$f"; then
            checks=$((checks + 1))
            failures=$((failures + 1))
            say "FAILED: sanitizer report in $(basename "$f"):"
            grep -A 30 -E "ERROR: (Address|Leak)Sanitizer|runtime error:" "$f" | head -n 40 >&2
        fi
    done
    echo "$NAME: $checks checks, $failures failed"
    [ "$failures" -eq 0 ]
    exit $?
}

kf_cleanup() {
    stop_all
    if [ "$failures" -gt 0 ] || [ -n "${KF_KEEP:-}" ]; then
        for f in "$T"/*.log; do
            [ -f "$f" ] || continue
            echo "--- $(basename "$f") (last 25 lines)" >&2
            tail -n 25 "$f" >&2
        done
    fi
    [ -n "${KF_KEEP:-}" ] || rm -rf "$T"
}
trap kf_cleanup EXIT

# db_new: a new empty database for this test on the suite's server, in
# DB (its name) and DB_URL.
db_new() {
    : "${KF_TEST_PGHOST:?run integration tests through tests/run.sh}"
    DB=kf_${NAME}_$$_$RANDOM
    psql -qAt -h "$KF_TEST_PGHOST" -p "$KF_TEST_PGPORT" -d postgres \
        -c "CREATE DATABASE $DB" >/dev/null || exit 1
    DB_URL="postgresql:///$DB?host=$KF_TEST_PGHOST&port=$KF_TEST_PGPORT"
}

# jtrue FILTER COMMAND...: COMMAND's JSON output satisfies jq FILTER.
jtrue() {
    local filter=$1 out
    shift
    out=$("$@") || return 1
    [ -n "$out" ] && jq -e "$filter" <<<"$out" >/dev/null
}

sql() { psql -qAt -h "$KF_TEST_PGHOST" -p "$KF_TEST_PGPORT" -d "$DB" -c "$1"; }

# start NAME BINARY ARGS...: runs a daemon in the background, log in
# $T/NAME.log; its pid lands in PIDS and in the variable PID.
start() {
    local name=$1
    shift
    "$@" >>"$T/$name.log" 2>&1 &
    PID=$!
    PIDS+=("$PID")
}

# Heartbeats: 200 ms, and 15 missed (3 s of silence) before either side
# counts the other as gone. A shorter margin makes a daemon that the
# machine's load (or AddressSanitizer) stalls for a second look dead: the
# coordinator requeues its jobs and the worker reconnects, and a test
# that waits for a state sees a flapping fleet instead. Tests whose
# subject is that detection set their own, shorter liveness.
COORD_HB=(--heartbeat-ms 200 --liveness 15)
WORKER_HB=(--heartbeat-ms 200 --liveness 15)

# Fast evaluation settings so a search finishes in seconds on 2 cores.
# The search defaults file turns the tuning rounds off (each sweeps 8
# configs per elite, tens of seconds under ASan); the test_search_* tests
# turn them on where they are the subject.
COORD_FAST=(--eval-min-time-s 0.05 --eval-warmup-s 0.02 --eval-min-samples 5
            --eval-warmup-calls 2 "${COORD_HB[@]}"
            --search-defaults "$ROOT/tests/fixtures/search/fast-defaults.json")

start_coordinator() {   # start_coordinator ARGS...: uses $DB_URL
    start coordinator "$BIN/kf-coordinator" --database-url "$DB_URL" \
        --worker-endpoint "$KF_WORKER_ENDPOINT" --client-endpoint "$KF_CLIENT_ENDPOINT" \
        --status-endpoint "$KF_STATUS_ENDPOINT" --event-endpoint "$KF_EVENT_ENDPOINT" "$@"
    COORD_PID=$PID
}

start_workers() {   # one worker of each role; EXEC_ARGS: more for the exec worker
    start gateway "$BIN/kf-llm-gateway" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
    GATEWAY_PID=$PID
    start compile "$BIN/kf-compile-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
    COMPILE_PID=$PID
    # No profiler: where perf can count, new elites would get profile jobs
    # still running when a run ends (test_profile_host.sh is about them).
    start exec "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" \
        --perf off ${EXEC_ARGS[@]+"${EXEC_ARGS[@]}"}
    EXEC_PID=$PID
}

kfctl() { "$BIN/kfctl" "$@"; }

# need_torch_python: PY, the first Python that imports torch (as the exec
# worker searches: $KF_PYTHON, the GPU machine's venv, Debian's, PATH's);
# with none, the test ends here with 0 checks.
need_torch_python() {
    local p
    PY=
    for p in "${KF_PYTHON:-}" /opt/torch/.venv/bin/python3 /usr/bin/python3 python3; do
        [ -n "$p" ] && "$p" -c 'import torch' 2>/dev/null && { PY=$p; return 0; }
    done
    echo "$NAME: no Python with torch here; nothing to test"
    echo "$NAME: 0 checks, 0 failed"
    exit 0
}

# wait_until SECONDS COMMAND...: polls COMMAND until it succeeds, every
# 0.1 s for the first ten tries (a state that comes soon, or does not
# last, is seen soon), then 0.1 s longer each time up to 0.5 s. A poll of
# a kfctl built with AddressSanitizer costs about 0.11 s of CPU (0.06 s
# without the leak check at its exit), and the tests poll for minutes
# side by side: kfctl, psql, jq and bash together took 12% of a whole
# suite's perf samples when every poll came 0.2 s after the last. The
# polls skip the leak check, which every command the tests run outside a
# poll still makes.
wait_until() {
    local limit=$1 tries=0 pause=1
    shift
    local end=$((SECONDS + limit))
    while [ $SECONDS -lt $end ]; do
        ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" "$@" >/dev/null 2>&1 && return 0
        sleep "0.$pause"
        tries=$((tries + 1))
        [ $tries -ge 10 ] && [ $pause -lt 5 ] && pause=$((pause + 1))
    done
    return 1
}

# untrack PID: drop a process that has ended (and been waited for) from
# PIDS, so stop_all never signals a pid the system may have reused.
untrack() {
    local q keep=()
    for q in "${PIDS[@]}"; do [ "$q" = "$1" ] || keep+=("$q"); done
    PIDS=(${keep[@]+"${keep[@]}"})
}

# kill_hard PID: kill -9 a daemon this test started, reap it, untrack it.
# live_descendants PID: PID's children, theirs and so on, that still run
# (an evaluation's judge runs below the sandbox's first process, and the
# worker takes its verdict when the judge says it is final, whatever the
# processes above it do; a zombie of an ended evaluation, reaped later by
# kf_subproc_reap.c, is left out).
live_descendants() {
    local p
    for p in $(ps -o pid= -o stat= --ppid "$1" 2>/dev/null | awk '$2 !~ /^Z/ { print $1 }'); do
        echo "$p"
        live_descendants "$p"
    done
}

kill_hard() {
    kill -KILL "$1" 2>/dev/null
    wait "$1" 2>/dev/null
    untrack "$1"
}

# run_accounted RUN TOTAL: every candidate of RUN exactly once: TOTAL rows
# (one per generation and slot, the table's key), each in a final status,
# each with one finished generate job, at most one finished compile job,
# and of its evaluate jobs (jobs.fidelity tells them apart) at most one
# screen, at most two that are not re-verifications (a first evaluation
# and the full-protocol one a screen asked for; docs/search.md,
# "Fidelity") and at most two re-verifications (evaluate jobs that
# avoid the first worker: a second timing, and a third where the first
# two disagree), at most one screen evaluation, at most one
# full-protocol evaluation from its own jobs and one from its
# re-verifications (recorded when such a timing is the one that counts,
# kf_verify.c), and no job of RUN left queued or leased.
run_accounted() {
    local run=$1 total=$2
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND finished_at IS NOT NULL
              AND status IN ('correct', 'incorrect', 'compile_failed', 'crashed', 'timeout', 'failed')")" \
      -eq "$total" ] &&
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run")" -eq "$total" ] &&
    [ "$(sql "SELECT count(*) FROM candidates c WHERE run_id = $run AND (
            (SELECT count(*) FROM jobs j WHERE j.candidate_id = c.id AND j.kind = 'generate' AND j.state = 'done') <> 1
         OR (SELECT count(*) FROM jobs j WHERE j.candidate_id = c.id AND j.kind = 'compile' AND j.state = 'done') > 1
         OR (SELECT count(*) FROM jobs j WHERE j.candidate_id = c.id AND j.kind = 'evaluate' AND j.state = 'done'
             AND j.avoid_worker IS NULL AND j.fidelity = 'screen') > 1
         OR (SELECT count(*) FROM jobs j WHERE j.candidate_id = c.id AND j.kind = 'evaluate' AND j.state = 'done'
             AND j.avoid_worker IS NULL) > 2
         OR (SELECT count(*) FROM jobs j WHERE j.candidate_id = c.id AND j.kind = 'evaluate' AND j.state = 'done'
             AND j.avoid_worker IS NOT NULL) > 2
         OR (SELECT count(*) FROM evaluations e WHERE e.candidate_id = c.id AND e.fidelity = 'screen') > 1
         OR (SELECT count(*) FROM evaluations e JOIN jobs j ON j.id = e.job_id
             WHERE e.candidate_id = c.id AND e.fidelity IS DISTINCT FROM 'screen'
             AND j.avoid_worker IS NULL) > 1
         OR (SELECT count(*) FROM evaluations e JOIN jobs j ON j.id = e.job_id
             WHERE e.candidate_id = c.id AND j.avoid_worker IS NOT NULL) > 1)")" -eq 0 ] &&
    [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $run AND state IN ('queued', 'leased')")" -eq 0 ]
}
