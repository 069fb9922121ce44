#!/usr/bin/env bash
# test_daemons_cli.sh - the command lines of the five binaries, no daemon
# left running: --help answers with a usage line and exit 0; an unknown
# option is exit 2 naming it; for the four daemons (which share
# common/kf_config.c) a bad configuration is refused before anything
# starts, with an error naming where it came from: FILE:LINE for a config
# file, the key for a value out of bounds, the variable for a bad
# environment value; and environment beats file, flag beats environment.
. "$(dirname "$0")/lib.sh"

DAEMONS=(kf-coordinator kf-llm-gateway kf-compile-worker kf-exec-worker)
# Nothing here may reach a real coordinator or database, even by default.
export KF_COORDINATOR=ipc://$T/nobody.sock
export KF_DATABASE_URL="postgresql:///nobody?host=$T/nopg"
unset KF_CONFIG KF_HEARTBEAT_MS

# run LIMIT_S BINARY ARGS...: runs a binary from $BIN with a hard limit;
# stdout in $T/out, stderr in $T/err, exit status in $rc (124: it had to
# be stopped, i.e. it started instead of refusing).
run() {
    local limit=$1 bin=$2
    shift 2
    timeout -k 2 "$limit" "$BIN/$bin" "$@" >"$T/out" 2>"$T/err"
    rc=$?
}
rc_is() {
    [ "$rc" -eq "$1" ] || { say "  exit $rc, wanted $1; stderr: $(head -c 300 "$T/err")"; return 1; }
}
err_has() {
    grep -qF -- "$1" "$T/err" || { say "  stderr lacks '$1': $(head -c 300 "$T/err")"; return 1; }
}
# A refusal is one short message, not a log of a daemon that started.
err_short() {
    [ "$(wc -l <"$T/err")" -le 2 ] || { say "  stderr has $(wc -l <"$T/err") lines"; return 1; }
}

for b in "${DAEMONS[@]}" kfctl; do
    if [ ! -x "$BIN/$b" ]; then
        check "$b is built" false
        continue
    fi
    run 10 "$b" --help
    check "$b --help: exit 0" rc_is 0
    check "$b --help: a usage line" grep -q "^usage: $b" "$T/out"

    run 10 "$b" --no-such-option
    check "$b --no-such-option: exit 2" rc_is 2
    check "$b --no-such-option: the message names it" err_has "--no-such-option"
done

for b in "${DAEMONS[@]}"; do
    [ -x "$BIN/$b" ] || continue
    # --- config file -------------------------------------------------------
    cfg=$T/$b.conf
    printf '# comment\nheartbeat_ms = 500\n\nno_such_key = 1\n' >"$cfg"
    run 10 "$b" --config "$cfg"
    check "$b: unknown key in a config file: exit 2" rc_is 2
    check "$b: the error names FILE:LINE" err_has "$cfg:4"
    check "$b: the error names the key" err_has "no_such_key"
    check "$b: the error is one short message" err_short

    printf 'heartbeat_ms = 1\n' >"$cfg"
    run 10 "$b" --config "$cfg"
    check "$b: heartbeat_ms = 1 in a file: exit 2" rc_is 2
    check "$b: the error names the key" err_has "heartbeat_ms"
    check "$b: and where it was set" err_has "$cfg:1"

    printf 'heartbeat_ms 500\n' >"$cfg"
    run 10 "$b" --config "$cfg"
    check "$b: a line without '=': exit 2" rc_is 2
    check "$b: the error names FILE:LINE" err_has "$cfg:1"

    # KF_CONFIG names the file when --config does not.
    printf 'bogus_key = 1\n' >"$cfg"
    KF_CONFIG=$cfg run 10 "$b"
    check "$b: KF_CONFIG is read: exit 2 on its bad key" rc_is 2
    check "$b: the error names the KF_CONFIG file" err_has "$cfg:1"

    run 10 "$b" --config "$T/missing.conf"
    check "$b: a missing config file: exit 2" rc_is 2
    check "$b: the error names the file" err_has "$T/missing.conf"

    # --- flags -------------------------------------------------------------
    run 10 "$b" --heartbeat-ms 1
    check "$b --heartbeat-ms 1: exit 2" rc_is 2
    check "$b --heartbeat-ms 1: the error names heartbeat_ms" err_has "heartbeat_ms"
    run 10 "$b" --heartbeat-ms 99999999
    check "$b --heartbeat-ms 99999999: exit 2" rc_is 2
    run 10 "$b" --heartbeat-ms
    check "$b --heartbeat-ms without a value: exit 2" rc_is 2
    check "$b: the error names the flag" err_has "--heartbeat-ms"
    run 10 "$b" --verbose=maybe
    check "$b --verbose=maybe: exit 2" rc_is 2
    check "$b --verbose=maybe: the error names verbose" err_has "verbose"

    # --- environment ------------------------------------------------------
    KF_HEARTBEAT_MS=abc run 10 "$b"
    check "$b KF_HEARTBEAT_MS=abc: exit 2" rc_is 2
    check "$b KF_HEARTBEAT_MS=abc: the error names KF_HEARTBEAT_MS" err_has "KF_HEARTBEAT_MS"
    KF_HEARTBEAT_MS=10 run 10 "$b"
    check "$b KF_HEARTBEAT_MS=10 (below 50): exit 2" rc_is 2
    check "$b KF_HEARTBEAT_MS=10: the error names KF_HEARTBEAT_MS" err_has "KF_HEARTBEAT_MS"
    # The environment is read after the file: a good file value does not
    # hide a bad environment value.
    printf 'heartbeat_ms = 500\n' >"$cfg"
    KF_HEARTBEAT_MS=abc run 10 "$b" --config "$cfg"
    check "$b: KF_HEARTBEAT_MS is applied over the config file" err_has "KF_HEARTBEAT_MS"

    # A stray argument that is not an option is refused, not ignored: a
    # typo like "coordinator=tcp://..." must not start a daemon with the
    # default settings. (Stopped after 10 s = it started: a refusal takes
    # milliseconds, the limit only has to tell the two apart on a busy host.)
    run 10 "$b" stray-argument
    check "$b stray-argument: exit 2 (not started)" rc_is 2
    check "$b stray-argument: the message names it" err_has "stray-argument"
done

# Precedence, seen in what the coordinator does: it binds its worker
# endpoint before anything else and names it when the bind fails, so the
# endpoint in the error shows which source won.
# lib.sh exports KF_WORKER_ENDPOINT; without it the file's value counts.
printf 'worker_endpoint = bogus://from-file\n' >"$T/prec.conf"
(unset KF_WORKER_ENDPOINT; run 10 kf-coordinator --config "$T/prec.conf")
check "file value used when nothing overrides it" err_has "bogus://from-file"
KF_WORKER_ENDPOINT=bogus://from-env run 10 kf-coordinator --config "$T/prec.conf"
check "environment beats the config file" err_has "bogus://from-env"
KF_WORKER_ENDPOINT=bogus://from-env run 10 kf-coordinator --config "$T/prec.conf" \
    --worker-endpoint bogus://from-flag
check "a flag beats the environment" err_has "bogus://from-flag"
check "a failed bind is exit 1" rc_is 1
KF_WORKER_ENDPOINT=bogus://from-env run 10 kf-coordinator --config "$T/prec.conf" \
    --worker-endpoint=bogus://from-flag-eq
check "--key=value works as a flag" err_has "bogus://from-flag-eq"

run 10 kf-coordinator unexpected
check "kf-coordinator with a stray argument: exit 2" rc_is 2
check "kf-coordinator: the message names it" err_has "unexpected"

# Full RELRO: symbols bound at start (BIND_NOW) and the GOT read-only
# after (GNU_RELRO), so a candidate kernel loaded into a process cannot
# redirect its calls by writing a GOT entry.
for b in "${DAEMONS[@]}" kfctl; do
    check "$b is linked with full RELRO" \
        bash -c "readelf -d '$BIN/$b' | grep -qE 'FLAGS.*BIND_NOW|FLAGS_1.*NOW' \
                 && readelf -lW '$BIN/$b' | grep -q GNU_RELRO"
done
finish
