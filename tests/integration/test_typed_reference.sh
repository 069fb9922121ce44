#!/usr/bin/env bash
# test_typed_reference.sh - a reference job's result (a PyTorch problem's
# manifest) and a profile job's are decoded at the edge too (issue 14,
# item 3; proto/kf_msg_reference.c, proto/kf_msg_profile.c), as
# test_typed_result.sh shows for the other kinds: a scripted exec worker
# (tests/tools/kf_peer) that holds the lease sends a RESULT with one
# field wrong; it gets ERROR "malformed" naming the field, the refusal is
# counted, nothing of the result is stored, and the job is requeued with
# the attempt counted and the reason kept. The same worker's well-typed
# RESULT then completes the job.
. "$(dirname "$0")/lib.sh"

PEER=$TOOLS/kf_peer
CAPS='{"backends":["host"],"arch":"x86_64","torch":{"python":"python3"},"profile":true}'
db_new
start_coordinator "${COORD_HB[@]}"
check "the coordinator answers" wait_until 60 kfctl status --json
lines() { grep -h "^{\"type\": \"$2\"" "$T/$1.log" 2>/dev/null; }
sqlis() { [ "$(sql "$2")" = "$1" ]; }

key=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
hash=00112233445566778899aabbccddeeff
tensor='{"role": "input", "set": 0, "index": 0, "name": "in0", "dtype": "f32", "shape": [4, 8], "offset": 0, "bytes": 128}'
sql "INSERT INTO jobs (role, kind, payload) VALUES ('execute', 'reference', '{\"source\": \"\"}')" \
    >/dev/null
job=$(sql "SELECT id FROM jobs WHERE kind = 'reference'")
# The tensor claims more bytes than the data holds: past the data's end.
bad='{"job_id": $job, "lease": $lease, "lease_token": "$token", "ok": true, "result": {"tensors": ['$tensor'], "data_key": "'$key'", "data_bytes": 64, "data_hash": "'$hash'", "inputs_hash": "'$hash'", "seed": 1}}'
good='{"job_id": $job, "lease": $lease, "lease_token": "$token", "ok": true, "result": {"tensors": ['$tensor'], "data_key": "'$key'", "data_bytes": 128, "data_hash": "'$hash'", "inputs_hash": "'$hash'", "seed": 1, "degenerate": []}}'
pbad='{"job_id": $job, "lease": $lease, "lease_token": "$token", "ok": true, "result": {"summary": "ipc 2.1", "metrics": {}, "profiler": "gprof"}}'
pgood='{"job_id": $job, "lease": $lease, "lease_token": "$token", "ok": true, "result": {"summary": "ipc 2.1", "metrics": {"ipc": 2.1}, "profiler": "perf", "calls": 30}}'
start exec "$PEER" --endpoint "$KF_WORKER_ENDPOINT" "hello exec1 execute 1 $CAPS" \
    "jobs 1 120000" "send RESULT $bad" "expect ERROR 60000" \
    "jobs 2 120000" "waitfile $T/good" "send RESULT $good" "waitfile $T/profile" \
    "jobs 3 120000" "send RESULT $pbad" "expect ERROR 60000" \
    "jobs 4 120000" "send RESULT $pgood" "waitfile $T/end"

check "the reference RESULT with a tensor past its data is answered with ERROR malformed" \
    wait_until 60 eval '[ "$(lines exec ERROR | head -n 1 | jq -r .body.code)" = malformed ]'
reason=$(lines exec ERROR | head -n 1 | jq -r .body.reason)
say "the refusal: $reason"
want="malformed reference result: result.tensors[0]: 128 bytes at 0 do not lie in the data (64 bytes)"
check "the refusal names the field and what is wrong with it" [ "$reason" = "$want" ]
check "the refusal is counted (counters.malformed)" \
    jtrue '.counters.malformed == 1' kfctl status --json
check "the reference job is requeued with the attempt counted and the reason kept" \
    wait_until 60 sqlis "leased 2 2 $want" \
    "SELECT state || ' ' || lease || ' ' || attempts || ' ' || reason FROM jobs
     WHERE id = $job AND result IS NULL"
touch "$T/good"
check "the well-typed reference RESULT completes it" \
    wait_until 60 sqlis "done 128" \
    "SELECT state || ' ' || (result->>'data_bytes') FROM jobs WHERE id = $job"

# A profile job's result likewise: a profiler that is neither ncu nor perf.
sql "INSERT INTO jobs (role, kind, backend, payload) VALUES ('execute', 'profile', 'host', '{\"task\": {}}')" \
    >/dev/null
pjob=$(sql "SELECT id FROM jobs WHERE kind = 'profile'")
touch "$T/profile"
check "a profile RESULT naming an unknown profiler is refused, the field named" \
    wait_until 60 eval '[ "$(lines exec ERROR | sed -n 2p | jq -r .body.reason)" = "malformed profile result: result.profiler: must be \"ncu\" or \"perf\"" ]'
check "the well-typed profile RESULT completes its job, on its second attempt" \
    wait_until 60 sqlis "done perf 2" \
    "SELECT state || ' ' || (result->>'profiler') || ' ' || attempts FROM jobs WHERE id = $pjob"
check "two refusals in all" jtrue '.counters.malformed == 2' kfctl status --json

touch "$T/end"
check "the coordinator is alive" kill -0 "$COORD_PID"
finish
