#!/usr/bin/env bash
# test_fuzz.sh - the coordinator survives hostile input on every endpoint.
# tests/tools/kf_fuzz_send.c throws 10,000 random, truncated, mistyped,
# oversized, over-framed and wrong-version messages at each of the worker,
# client and status endpoints (and junk subscriptions at the event PUB),
# then requires a STATUS reply (within 120 s: the coordinator may have a
# backlog of 30,000 messages to refuse first, slow under ASan on a loaded
# machine; a dead or wedged one never answers). Afterwards the coordinator must
# still be alive and answering, must have counted each kind of rejection,
# and a real worker must still be able to register and finish jobs, and
# a scripted peer's multi-frame messages get their codes. In the
# ASan build the coordinator's log must show no sanitizer report (finish).
. "$(dirname "$0")/lib.sh"

FUZZ=$TOOLS/kf_fuzz_send
FLEET=$TOOLS/kf_noop_fleet
if [ ! -x "$FUZZ" ] || [ ! -x "$FLEET" ]; then
    say "no $FUZZ or $FLEET (build first)"
    checks=1 failures=1
    finish
fi

# jf FILTER FILE: FILE is not empty and satisfies FILTER.
jf() { [ -s "$2" ] && jq -e "$1" "$2" >/dev/null; }

db_new
# A small cap so oversized messages are cheap to make; fast heartbeats so
# the fake workers the fuzzer registers with valid HELLOs die quickly.
start_coordinator "${COORD_HB[@]}" --max-message-bytes 65536
check "the coordinator answers status" wait_until 120 kfctl status --json

seed=${KF_FUZZ_SEED:-$((RANDOM * 32768 + RANDOM))}
say "fuzz seed $seed (rerun with KF_FUZZ_SEED=$seed)"
start_s=$SECONDS
timeout -s KILL 400 "$FUZZ" --worker "$KF_WORKER_ENDPOINT" --client "$KF_CLIENT_ENDPOINT" \
    --status "$KF_STATUS_ENDPOINT" --event "$KF_EVENT_ENDPOINT" --count 10000 \
    --max-message 65536 --seed "$seed" --reply-timeout-ms 120000 \
    >"$T/fuzz.json" 2>"$T/fuzz.log"
rc=$?
say "fuzzer exit $rc after $((SECONDS - start_s)) s: $(head -c 1500 "$T/fuzz.json")"
check "the fuzzer got a STATUS reply after the barrage" [ "$rc" -eq 0 ]
check "the fuzzer sent 10,000 messages to each endpoint" \
    jf '[.worker, .client, .status] | all(.sent_total == 10000 and .send_failed == 0)' "$T/fuzz.json"
check "the coordinator answered the fuzzer with ERRORs" \
    jf '[.worker, .client, .status] | all(.error_codes.malformed > 0)' "$T/fuzz.json"

check "the coordinator process is alive" kill -0 "$COORD_PID"
kfctl status --json >"$T/status.json" 2>"$T/status.err"
check "kfctl status --json answers" jf '.version == 1' "$T/status.json"
say "counters: $(jq -c .counters "$T/status.json")"
check "counters.malformed > 0" jf '.counters.malformed > 0' "$T/status.json"
check "counters.oversized > 0" jf '.counters.oversized > 0' "$T/status.json"
check "counters.version > 0" jf '.counters.version > 0' "$T/status.json"
check 'counters["unknown-type"] > 0' jf '.counters["unknown-type"] > 0' "$T/status.json"
check "the database is still reachable from the coordinator" \
    jf '.database == "ok"' "$T/status.json"

# Multi-frame messages (issue 13, item 7): 20,000 empty frames in one
# message, and 16 frames of 8,000 bytes (each under the 64 KiB cap, 128 KB
# together) are refused while they are read: "malformed" and "oversized".
start multiframe "$TOOLS/kf_peer" --endpoint "$KF_WORKER_ENDPOINT" silent \
    "raw 20000 0" "expect ERROR 120000" "raw 16 8000" "expect ERROR 120000"
codes() { grep -h '^{"type": "ERROR"' "$T/multiframe.log" | jq -r .body.code | tr '\n' ' '; }
check "a message of 20,000 frames, then one of 16 frames over the cap together, are refused" \
    wait_until 120 eval '[ "$(codes)" = "malformed oversized " ]'

# A real worker after the storm: it registers and finishes inserted jobs.
# Its role is one the fuzzer never uses, so no fake worker can take them.
start fleet "$FLEET" --endpoint "$KF_WORKER_ENDPOINT" --heartbeat-ms 100 --role after \
    --credits 2 --id-prefix after --until-jobs 20
FLEET_PID=$PID
check "a real worker registers afterwards" \
    wait_until 60 jtrue '[.workers[] | select(.id | startswith("after-"))] | length == 1' \
    kfctl status --json
sql "INSERT INTO jobs (role, kind, payload)
     SELECT 'after', 'noop', '{}' FROM generate_series(1, 20)" >/dev/null
check "it finishes the 20 inserted jobs" \
    wait_until 120 eval '[ "$(sql "SELECT count(*) FROM jobs WHERE role = '"'after'"' AND state = '"'done'"'")" = 20 ]'
check "no job was taken by a fake worker" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE worker IS NOT NULL AND worker NOT LIKE 'after-%'")" = 0 ]

# Stop the coordinator ourselves to see it exit cleanly after the storm;
# finish (lib.sh) then fails the test on any sanitizer report in its log.
kill -TERM "$COORD_PID"
for _ in $(seq 1 100); do kill -0 "$COORD_PID" 2>/dev/null || break; sleep 0.1; done
wait "$COORD_PID" 2>/dev/null
crc=$?
check "the coordinator exits 0 on SIGTERM (got $crc)" [ "$crc" -eq 0 ]
finish
