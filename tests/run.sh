#!/usr/bin/env bash
# tests/run.sh - the whole suite: unit test programs and integration
# scripts that start real daemons against a private PostgreSQL started
# here, KF_JOBS of them at a time. Prints one line per test as it ends
# and closes with "N passed, N failed".
#
#   KF_BUILD=build-asan   which build to test (default build)
#   KF_ONLY=unit|integration   run one half
#   KF_TESTS="test_proto test_e2e"   run only these
#   KF_QUIET=1                 add tests/quiet/ (a host no other work runs on)
#   KF_JOBS=2   tests at once (default 2; 1 runs them one after another)
#
# Tests run side by side: each waits for the states it needs, never for
# a time (docs/testing.md), so a neighbour's load slows it and nothing
# else. The slowest start first, so the last to end is a short one.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export KF_ROOT=$ROOT
export KF_BUILD=${KF_BUILD:-build}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
JOBS=${KF_JOBS:-2}
case "$JOBS" in '' | *[!0-9]* | 0) echo "run.sh: KF_JOBS must be a positive number" >&2; exit 2 ;; esac
. "$ROOT/tests/pg.sh"
# PostgreSQL's own programs first in PATH: Debian's `psql` in /usr/bin is a
# Perl wrapper (pg_wrapper) that costs about 40 ms of CPU a call before
# the real one starts, and the tests call psql thousands of times.
pg_bin=$(kf_pg_bindir 2>/dev/null) && [ -x "$pg_bin/psql" ] && export PATH="$pg_bin:$PATH"

# The whole log of each test that fails is kept here (the summary shows
# its last lines only); with KF_KEEP_LOGS=1, of every test.
case "$KF_BUILD" in /*) LOGS=$KF_BUILD/test-logs ;; *) LOGS=$ROOT/$KF_BUILD/test-logs ;; esac
rm -rf "$LOGS"
SUITE_TMP=$(mktemp -d /tmp/kfsuite.XXXXXX)
chmod 755 "$SUITE_TMP"
# The exec workers' measured host figures: one file for the suite, not the
# user's (~/.cache/kernelfoundry): a figures file kept by a test's worker
# was read by a later kf-local system (round 20), and a user's by the tests.
export KF_HOST_FIGURES=$SUITE_TMP/host-figures.json
# Likewise the Python found to import torch (kf_torch_probe.h): asked by
# the suite's first exec worker, taken back by the others (an import of
# torch, 1.5 s of CPU, at each of about a hundred worker starts).
export KF_PYTHON_FOUND=$SUITE_TMP/python-found.json
# A full timing beside other work is not taken again in the suite (the
# coordinator's eval_retime_wait_s): the suite runs its tests side by
# side, so nearly every timing is beside other work, and each would wait
# for a quiet that never comes. test_retime turns it on in its own jobs.
export KF_EVAL_RETIME_WAIT_S=0
# Each test in a control group of its own where this host lets us make
# one (root, cgroup v2): its CPU seconds are then everything it ran,
# daemons and confined candidates included, which `times` misses (it
# counts waited-for children only: test_ocl's 100 s of busy CPUs read
# 12 s). Without one, `times` stands in.
CG=
for base in /sys/fs/cgroup/unified /sys/fs/cgroup; do
    if [ -f "$base/cgroup.procs" ] && mkdir "$base/kfsuite.$$" 2>/dev/null; then
        CG=$base/kfsuite.$$
        break
    fi
done
declare -A RUNNING=()   # pid of a test's runner -> test name
cleanup() {
    # Interrupted: the running tests first (SIGTERM lets each clean up).
    local f
    for f in "$SUITE_TMP"/*.pgid; do
        [ -f "$f" ] && kill -TERM -- "-$(cat "$f")" 2>/dev/null
    done
    wait
    for f in "$SUITE_TMP"/*.pgid; do
        [ -f "$f" ] && kill -KILL -- "-$(cat "$f")" 2>/dev/null
    done
    kf_pg_stop "$SUITE_TMP/pg"
    rm -rf "$SUITE_TMP"
    if [ -n "$CG" ]; then
        for f in "$CG"/*/; do [ -d "$f" ] && rmdir "$f" 2>/dev/null; done
        rmdir "$CG" 2>/dev/null
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

passed=0
failed=0
cpu_total=0
failed_names=()

selected() {
    [ -z "${KF_TESTS:-}" ] && return 0
    case " $KF_TESTS " in *" $1 "*) return 0 ;; esac
    return 1
}

# start_one NAME LIMIT_S COMMAND...: one test in the background, its
# output kept in a log. timeout puts the test in a process group of its
# own: at the limit the test gets SIGTERM (its EXIT trap stops what it
# started), and SIGKILL 30 s later; whatever the test left running either
# way (a daemon it lost track of) is killed with the group once it ended,
# so nothing outlives it into the tests after it.
start_one() {
    local name=$1 limit=$2
    shift 2
    (
        log=$SUITE_TMP/$name.log
        start=$SECONDS
        cg=
        if [ -n "$CG" ] && mkdir "$CG/$name" 2>/dev/null; then
            echo "$BASHPID" >"$CG/$name/cgroup.procs" 2>/dev/null && cg=$CG/$name
        fi
        timeout -s TERM -k 30 "$limit" "$@" >"$log" 2>&1 </dev/null &
        pid=$!
        echo "$pid" >"$SUITE_TMP/$name.pgid"
        wait "$pid"
        rc=$?
        kill -KILL -- "-$pid" 2>/dev/null
        rm -f "$SUITE_TMP/$name.pgid"
        [ $rc -eq 124 ] && echo "run.sh: $name did not end within its limit of $limit s" >>"$log"
        # The CPU seconds of what the test ran: what a test costs its
        # neighbours on a 2-core machine, where wall time hides it. Its
        # control group's, else (user + system from `times`' second line)
        # those of what it waited for.
        if [ -n "$cg" ]; then
            cpu=$(awk '$1 == "usage_usec" { printf "%d", $2 / 1e6 }' "$cg/cpu.stat")
            echo "$BASHPID" >"$CG/cgroup.procs"
            [ -f "$cg/cgroup.kill" ] && echo 1 >"$cg/cgroup.kill"
            rmdir "$cg" 2>/dev/null
        else
            times >"$SUITE_TMP/$name.times"
            cpu=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%d", t }' "$SUITE_TMP/$name.times")
        fi
        echo "$rc $((SECONDS - start)) ${cpu:-0}" >"$SUITE_TMP/$name.rc"
    ) &
    RUNNING[$!]=$name
}

# report NAME: the line of a test that ended; a failure's log is shown.
report() {
    local name=$1 rc took cpu log=$SUITE_TMP/$1.log
    read -r rc took cpu <"$SUITE_TMP/$name.rc" 2>/dev/null || { rc=255; took=0; cpu=0; }
    cpu_total=$((cpu_total + cpu))
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
        printf 'ok    %-28s %4ds %5ds cpu  %s\n' "$name" "$took" "$cpu" "$(grep -E 'checks, [0-9]+ failed' "$log" | tail -1)"
        [ -z "${KF_KEEP_LOGS:-}" ] || { mkdir -p "$LOGS" && cp "$log" "$LOGS/$name.log"; }
    else
        failed=$((failed + 1))
        failed_names+=("$name")
        printf 'FAIL  %-28s %4ds  (exit %d)\n' "$name" "$took" "$rc"
        # The failed checks first: a test's last lines are often the
        # daemon logs it dumps, which push its verdicts out of the tail.
        grep -E 'FAILED|FAIL:|checks, [0-9]+ failed' "$log" | head -n 20 | sed 's/^/      ! /'
        sed 's/^/      | /' "$log" | tail -n 60
        mkdir -p "$LOGS" && cp "$log" "$LOGS/$name.log" \
            && echo "      (whole log: $LOGS/$name.log)"
    fi
}

# reap: waits for a running test to end and reports every one that has.
reap() {
    local pid
    wait -n 2>/dev/null
    for pid in "${!RUNNING[@]}"; do
        if ! kill -0 "$pid" 2>/dev/null; then
            wait "$pid" 2>/dev/null
            report "${RUNNING[$pid]}"
            unset "RUNNING[$pid]"
        fi
    done
}

want() { [ -z "${KF_ONLY:-}" ] || [ "$KF_ONLY" = "$1" ]; }

# The queue: "NAME LIMIT PATH" lines, the slowest known first (minutes on
# a 2-core machine under the sanitizers), then the rest in name order.
SLOW="test_ocl test_opencl_search test_hostile test_eval test_faults test_profile_model"
SLOW="$SLOW test_search_switches test_netns test_search_proof test_gateway_cuda test_pytorch"
SLOW="$SLOW test_cuda test_torch_ref"
SLOW="$SLOW test_search_steady test_meta test_tuning test_bad_candidates test_tune test_verify"
queue=()
if want unit; then
    for t in "$KF_BUILD"/tests/test_*; do
        [ -x "$t" ] || continue
        name=$(basename "$t")
        #  A limit for hangs, not a budget: the unit programs that build
        #  with nvcc or start Python (test_gateway_cuda's 103 builds,
        #  test_torch_ref's jobs) take minutes on a loaded 2-core host.
        selected "$name" && queue+=("$name 600 $t")
    done
fi
if want integration; then
    integration=()
    #  tests/quiet/ holds what needs a host no other work runs on (it
    #  cannot pass beside the load this suite must bear): only with
    #  KF_QUIET=1 (make test-quiet).
    quiet=()
    [ "${KF_QUIET:-0}" = 1 ] && quiet=(tests/quiet/test_*.sh)
    for t in tests/integration/test_*.sh "${quiet[@]}"; do
        name=$(basename "$t" .sh)
        selected "$name" && integration+=("$name 600 $t")
    done
    if [ ${#integration[@]} -gt 0 ]; then
        if kf_pg_start "$SUITE_TMP/pg" 5433 >"$SUITE_TMP/pg-start.log" 2>&1; then
            export KF_TEST_PGHOST=$SUITE_TMP/pg KF_TEST_PGPORT=5433
            queue+=("${integration[@]}")
        else
            failed=$((failed + 1))
            failed_names+=("postgresql")
            echo "FAIL  could not start PostgreSQL for the integration tests:"
            sed 's/^/      | /' "$SUITE_TMP/pg-start.log" | tail -n 30
        fi
    fi
fi
ordered=()
for s in $SLOW; do
    for q in "${queue[@]}"; do [ "${q%% *}" = "$s" ] && ordered+=("$q"); done
done
for q in "${queue[@]}"; do
    case " $SLOW " in *" ${q%% *} "*) ;; *) ordered+=("$q") ;; esac
done

# The host's figures, measured once before the tests: otherwise every
# exec worker and --eval of the suite measures them, seconds of every
# core each (test_hostile: 304 CPU s in a whole suite before, 244 after).
# Taken while other work runs on the machine they are kept marked busy
# (kf_host_figures.h), and the suite's workers read them so.
figures=$("$KF_BUILD/bin/kf-exec-worker" --measure-host 2>/dev/null | jq -r .source 2>/dev/null)
case "$figures" in
measured | file)
    echo "host figures: measured before the tests, kept for the suite ($KF_HOST_FIGURES)" ;;
*"kept marked busy"* | "file, marked busy"*)
    echo "host figures: measured beside other work, kept marked busy for the suite ($KF_HOST_FIGURES)" ;;
*)
    echo "host figures: not kept (${figures:-no answer}): each exec worker measures them again" ;;
esac

for q in "${ordered[@]}"; do
    read -r name limit path <<<"$q"
    while [ ${#RUNNING[@]} -ge "$JOBS" ]; do reap; done
    case $path in
    *.sh) start_one "$name" "$limit" bash "$path" ;;
    *) start_one "$name" "$limit" "$path" ;;
    esac
done
while [ ${#RUNNING[@]} -gt 0 ]; do reap; done

[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
how="counted by control group"
[ -n "$CG" ] || how="counted by times: waited-for processes only"
echo "the tests took $cpu_total CPU seconds in $SECONDS s ($(nproc) CPUs; $how)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
