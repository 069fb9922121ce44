#!/usr/bin/env bash
# test_kfctl_cli.sh - kfctl's behaviour that needs no daemon: help texts,
# usage errors, bad task files (one line naming file and field, exit 2,
# nothing sent) and an unreachable coordinator (a clear error within the
# timeout, never a hang). Uses $KF_BUILD/bin/kfctl (default build/).
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${KF_BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
KFCTL=$BUILD/bin/kfctl
NAME=test_kfctl_cli
checks=0
failures=0

check() {   # check DESCRIPTION COMMAND... : passes when COMMAND succeeds
    local what=$1
    shift
    checks=$((checks + 1))
    if ! "$@"; then
        failures=$((failures + 1))
        echo "$NAME: FAILED: $what" >&2
    fi
}

if [ ! -x "$KFCTL" ]; then
    echo "$NAME: no $KFCTL (build first)" >&2
    echo "$NAME: 1 checks, 1 failed"
    exit 1
fi

TMP=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$TMP"' EXIT
# No endpoints file and no variables: nothing can leak in from the host.
export KF_STATE=$TMP/state
unset KF_CLIENT_ENDPOINT KF_STATUS_ENDPOINT KF_EVENT_ENDPOINT KF_WORKER_ENDPOINT
mkdir -p "$KF_STATE"

# run LIMIT_S ARGS...: runs kfctl with a hard time limit (a hang shows as
# exit 137, which no check accepts); stdout in $TMP/out, stderr in
# $TMP/err, exit code in $rc. The limits are far above what any call
# needs, so a busy machine does not reach them.
run() {
    local limit=$1
    shift
    timeout -s KILL "$limit" "$KFCTL" "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
}
lines() { wc -l <"$1" | tr -d ' '; }
rc_is() { [ "$rc" -eq "$1" ] || { echo "  exit $rc, wanted $1; stderr: $(head -c 400 "$TMP/err")" >&2; return 1; }; }
err_has() { grep -q -- "$1" "$TMP/err" || { echo "  stderr lacks '$1': $(head -c 400 "$TMP/err")" >&2; return 1; }; }
out_has() { grep -q -- "$1" "$TMP/out" || { echo "  stdout lacks '$1'" >&2; return 1; }; }
one_err_line() { [ "$(lines "$TMP/err")" -eq 1 ] || { echo "  stderr has $(lines "$TMP/err") lines" >&2; return 1; }; }

# --- help ---------------------------------------------------------------
run 60 --help
check "kfctl --help exits 0" rc_is 0
for cmd in submit status workers runs show best cancel watch; do
    check "kfctl --help lists $cmd" grep -q "^  $cmd " "$TMP/out"
done
for cmd in submit status workers runs show best cancel watch; do
    run 60 "$cmd" --help
    check "kfctl $cmd --help exits 0" rc_is 0
    check "kfctl $cmd --help shows its usage" out_has "usage: kfctl $cmd"
    check "kfctl $cmd --help mentions --json" out_has "--json"
done
run 60 submit --help
for opt in --target --generations --population --seed --wait; do
    check "submit --help documents $opt" out_has "$opt"
done
run 60 best --help
check "best --help documents -o" out_has "--output"

# --- usage errors -------------------------------------------------------
run 60
check "no command: exit 2" rc_is 2
run 60 frobnicate
check "unknown command: exit 2" rc_is 2
check "unknown command: one line" one_err_line
run 60 runs --bogus
check "unknown option: exit 2" rc_is 2
run 60 show
check "missing RUN: exit 2" rc_is 2
run 60 show abc
check "non-numeric RUN: exit 2" rc_is 2
run 60 runs --target host
check "submit option on another command: exit 2" rc_is 2
run 60 status --timeout 0
check "bad --timeout: exit 2" rc_is 2

# --- task files and submit options: checked before anything is sent -------
# The endpoint points nowhere: an exit 3 (or a wait) would mean kfctl tried
# to talk before rejecting its input.
NOWHERE=ipc://$TMP/nowhere.sock
TASK=$ROOT/examples/tasks/softmax/task.json

printf '{"name": 3}\n' >"$TMP/bad-field.json"
run 60 submit "$TMP/bad-field.json" --endpoint "$NOWHERE"
check "bad task field: exit 2" rc_is 2
check "bad task field: one line" one_err_line
check "bad task field: names the file" err_has "bad-field.json"
check "bad task field: names the field" err_has "name"
check "bad task field: nothing on stdout" test ! -s "$TMP/out"

printf '{"name": "x", ' >"$TMP/truncated.json"
run 60 submit "$TMP/truncated.json" --endpoint "$NOWHERE"
check "broken JSON: exit 2" rc_is 2
check "broken JSON: one line" one_err_line
check "broken JSON: names the file" err_has "truncated.json"

run 60 submit "$TMP/missing.json" --endpoint "$NOWHERE"
check "missing task file: exit 2" rc_is 2
check "missing task file: one line" one_err_line
check "missing task file: names the file" err_has "missing.json"

if [ -f "$TASK" ]; then
    for bad in gpu cuda:90 cuda: "host:a b" ""; do
        run 60 submit "$TASK" --target "$bad" --endpoint "$NOWHERE"
        check "target '$bad' refused with exit 2" rc_is 2
    done
    run 60 submit "$TASK" --generations 0 --endpoint "$NOWHERE"
    check "--generations 0 refused" rc_is 2
    run 60 submit "$TASK" --population x --endpoint "$NOWHERE"
    check "--population x refused" rc_is 2
    run 60 submit "$TASK" --seed -1 --endpoint "$NOWHERE"
    check "--seed -1 refused" rc_is 2
fi

# --- no coordinator -----------------------------------------------------
run 60 status
check "no endpoint known: exit 3" rc_is 3
check "no endpoint known: says how to start one" err_has "kf-local up"
check "no endpoint known: one line" one_err_line

# The state folder's endpoints file is read when nothing else is given.
cat >"$KF_STATE/endpoints" <<EOF
KF_CLIENT_ENDPOINT=ipc://$TMP/clients.sock
KF_STATUS_ENDPOINT=ipc://$TMP/status.sock
KF_EVENT_ENDPOINT=ipc://$TMP/events.sock
KF_WORKER_ENDPOINT=ipc://$TMP/workers.sock
EOF
# That kfctl gives up after --timeout rather than its default 5 s is read
# from its message, which states the wait it used, not from a clock: the
# wall time of a call depends on the machine's load.
run 60 status --timeout 1.5
check "unreachable (status): exit 3" rc_is 3
check "unreachable (status): gave up after --timeout (1.5 s), not the default" \
    err_has "within 1.5 s"
check "unreachable (status): names the endpoint from the state file" err_has "$TMP/status.sock"
check "unreachable (status): one line" one_err_line

for args in "runs" "workers" "show 1" "best 1" "cancel 1"; do
    # shellcheck disable=SC2086 # ARGS split on purpose
    run 60 $args --timeout 1
    check "unreachable ($args): exit 3" rc_is 3
    check "unreachable ($args): names the client endpoint" err_has "$TMP/clients.sock"
done

# Flags beat the environment, which beats the file.
KF_CLIENT_ENDPOINT=ipc://$TMP/from-env.sock run 60 runs --timeout 1
check "KF_CLIENT_ENDPOINT beats the endpoints file" err_has "from-env.sock"
KF_CLIENT_ENDPOINT=ipc://$TMP/from-env.sock run 60 runs --timeout 1 \
    --endpoint "ipc://$TMP/from-flag.sock"
check "--endpoint beats KF_CLIENT_ENDPOINT" err_has "from-flag.sock"
run 60 status --timeout 1 --status-endpoint "ipc://$TMP/st-flag.sock"
check "--status-endpoint is used for status" err_has "st-flag.sock"

if [ -f "$TASK" ]; then
    run 60 submit "$TASK" --wait --timeout 1
    check "unreachable (submit --wait): exit 3, no hang" rc_is 3
fi

# watch keeps retrying an absent coordinator until told to stop; Ctrl-C
# must end it cleanly with 130 (under ASan a leak would change the code).
# The interrupt comes once watch has said it is waiting (so its handler
# is in place and it is in its retry loop), not after a fixed sleep.
"$KFCTL" watch 1 --timeout 0.5 >"$TMP/out" 2>"$TMP/err" &
pid=$!
for _ in $(seq 1 600); do grep -q "still waiting" "$TMP/err" && break; sleep 0.1; done
kill -INT "$pid"
for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid"
    rc=999
else
    wait "$pid"
    rc=$?
fi
pid=
check "watch: Ctrl-C exits 130" rc_is 130
check "watch: said the coordinator is not answering" err_has "still waiting"

# --- kf-local -------------------------------------------------------------
"$ROOT/deploy/kf-local" --help >"$TMP/out" 2>&1
rc=$?
check "kf-local --help exits 0" rc_is 0
check "kf-local --help lists run" out_has "run TASK"

echo "$NAME: $checks checks, $failures failed"
[ "$failures" -eq 0 ]
