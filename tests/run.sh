#!/usr/bin/env bash
# tests/run.sh - the whole suite: unit test programs, then integration
# scripts that start real daemons against a private PostgreSQL started
# here. Prints one line per test and closes with "N passed, N failed".
#
#   KF_BUILD=build-asan   which build to test (default build)
#   KF_ONLY=unit|integration   run one half
#   KF_TESTS="test_proto test_e2e"   run only these
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export KF_ROOT=$ROOT
export KF_BUILD=${KF_BUILD:-build}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
. "$ROOT/tests/pg.sh"

# The whole log of each test that fails is kept here (the summary shows
# its last lines only).
case "$KF_BUILD" in /*) LOGS=$KF_BUILD/test-logs ;; *) LOGS=$ROOT/$KF_BUILD/test-logs ;; esac
rm -rf "$LOGS"
SUITE_TMP=$(mktemp -d /tmp/kfsuite.XXXXXX)
chmod 755 "$SUITE_TMP"
CURRENT=
cleanup() {
    # Interrupted: the running test first (SIGTERM lets it clean up).
    if [ -n "$CURRENT" ]; then
        kill -TERM -- "-$CURRENT" 2>/dev/null
        wait "$CURRENT" 2>/dev/null
        kill -KILL -- "-$CURRENT" 2>/dev/null
    fi
    kf_pg_stop "$SUITE_TMP/pg"
    rm -rf "$SUITE_TMP"
}
trap cleanup EXIT INT TERM

passed=0
failed=0
failed_names=()

selected() {
    [ -z "${KF_TESTS:-}" ] && return 0
    case " $KF_TESTS " in *" $1 "*) return 0 ;; esac
    return 1
}

# run_one NAME LIMIT_S COMMAND...: one test, its output kept in a log that
# is shown only when it fails.
run_one() {
    local name=$1 limit=$2
    shift 2
    local log=$SUITE_TMP/$name.log start=$SECONDS
    # timeout puts the test in a process group of its own: at the limit
    # the test gets SIGTERM (its EXIT trap stops what it started), and
    # SIGKILL 30 s later; whatever the test left running either way (a
    # daemon it lost track of) is killed with the group once it ended, so
    # nothing outlives it into the next test.
    timeout -s TERM -k 30 "$limit" "$@" >"$log" 2>&1 &
    CURRENT=$!
    wait "$CURRENT"
    local rc=$?
    kill -KILL -- "-$CURRENT" 2>/dev/null
    CURRENT=
    local took=$((SECONDS - start))
    [ $rc -eq 124 ] && echo "run.sh: $name did not end within its limit of $limit s" >>"$log"
    if [ $rc -eq 0 ]; then
        passed=$((passed + 1))
        printf 'ok    %-28s %4ds  %s\n' "$name" "$took" "$(grep -E 'checks, [0-9]+ failed' "$log" | tail -1)"
    else
        failed=$((failed + 1))
        failed_names+=("$name")
        printf 'FAIL  %-28s %4ds  (exit %d)\n' "$name" "$took" "$rc"
        sed 's/^/      | /' "$log" | tail -n 60
        mkdir -p "$LOGS" && cp "$log" "$LOGS/$name.log" \
            && echo "      (whole log: $LOGS/$name.log)"
    fi
}

want() { [ -z "${KF_ONLY:-}" ] || [ "$KF_ONLY" = "$1" ]; }

if want unit; then
    for t in "$KF_BUILD"/tests/test_*; do
        [ -x "$t" ] || continue
        name=$(basename "$t")
        selected "$name" && run_one "$name" 300 "$t"
    done
fi

if want integration; then
    if kf_pg_start "$SUITE_TMP/pg" 5433 >"$SUITE_TMP/pg-start.log" 2>&1; then
        export KF_TEST_PGHOST=$SUITE_TMP/pg KF_TEST_PGPORT=5433
        for t in tests/integration/test_*.sh; do
            name=$(basename "$t" .sh)
            selected "$name" && run_one "$name" 600 bash "$t"
        done
    else
        failed=$((failed + 1))
        failed_names+=("postgresql")
        echo "FAIL  could not start PostgreSQL for the integration tests:"
        sed 's/^/      | /' "$SUITE_TMP/pg-start.log" | tail -n 30
    fi
fi

[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
