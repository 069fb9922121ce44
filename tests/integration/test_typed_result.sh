#!/usr/bin/env bash
# test_typed_result.sh - an evaluate job's result is decoded at the edge
# (issue 14, item 3; proto/kf_msg_eval.c): a scripted exec worker
# (tests/tools/kf_peer) that holds the lease sends a RESULT whose verdict
# is a number; it gets ERROR "malformed" naming the field, the refusal is
# counted, nothing of the result is stored, and the job is requeued with
# the attempt counted and the reason kept. The same worker's well-typed
# RESULT then completes the job. A reference probe (an evaluate job whose
# result is findings, not a verdict) is not held to the verdict's schema.
# A compile job's result is decoded the same way (proto/kf_msg_compile.c),
# and a generate or meta job's (proto/kf_msg_generate.c).
. "$(dirname "$0")/lib.sh"

PEER=$TOOLS/kf_peer
CAPS='{"backends":["host"],"arch":"x86_64"}'
db_new
start_coordinator "${COORD_HB[@]}"
check "the coordinator answers" wait_until 60 kfctl status --json
lines() { grep -h "^{\"type\": \"$2\"" "$T/$1.log" 2>/dev/null; }
sqlis() { [ "$(sql "$2")" = "$1" ]; }

sql "INSERT INTO jobs (role, kind, payload) VALUES ('execute', 'evaluate', '{\"task\": {}}')" \
    >/dev/null
job=$(sql "SELECT id FROM jobs WHERE kind = 'evaluate'")
bad='{"job_id": $job, "lease": $lease, "lease_token": "$token", "ok": true, "result": {"verdict": 7, "detail": "typed wrong"}}'
good='{"job_id": $job, "lease": $lease, "lease_token": "$token", "ok": true, "result": {"verdict": "incorrect", "detail": "set 1: 3 of 4096 elements differ", "speedup": null, "correctness": {"sets": 1, "match_fraction": 0.9993}}}'
probe='{"job_id": $job, "lease": $lease, "lease_token": "$token", "ok": true, "result": {"degenerate": [], "timing": {"median_ns": 1000}}}'
start exec "$PEER" --endpoint "$KF_WORKER_ENDPOINT" "hello exec1 execute 1 $CAPS" \
    "jobs 1 120000" "send RESULT $bad" "expect ERROR 60000" \
    "jobs 2 120000" "waitfile $T/good" "send RESULT $good" "waitfile $T/probe" \
    "jobs 3 120000" "send RESULT $probe" "waitfile $T/end"

check "the mistyped RESULT is answered with ERROR malformed" \
    wait_until 60 eval '[ "$(lines exec ERROR | head -n 1 | jq -r .body.code)" = malformed ]'
reason=$(lines exec ERROR | head -n 1 | jq -r .body.reason)
say "the refusal: $reason"
check "the refusal names the field and what is wrong with it" \
    [ "$reason" = "malformed evaluate result: result.verdict: must be a string" ]
check "the refusal is counted (counters.malformed)" \
    jtrue '.counters.malformed >= 1' kfctl status --json
# Leased again (lease 2) with the first attempt still counted (a job
# handed back would have it given back), the reason kept, nothing stored.
check "the job is requeued with the attempt counted and the reason kept" \
    wait_until 60 sqlis "leased 2 2 malformed evaluate result: result.verdict: must be a string" \
    "SELECT state || ' ' || lease || ' ' || attempts || ' ' || reason FROM jobs
     WHERE id = $job AND result IS NULL"
check "no evaluation was recorded of it" sqlis 0 "SELECT count(*) FROM evaluations"
touch "$T/good"
check "the well-typed RESULT completes it" \
    wait_until 60 sqlis "done incorrect" \
    "SELECT state || ' ' || (result->>'verdict') FROM jobs WHERE id = $job"

sql "INSERT INTO jobs (role, kind, payload) VALUES ('execute', 'evaluate', '{\"task\": {}, \"probe\": true}')" \
    >/dev/null
touch "$T/probe"
check "a reference probe's findings (no verdict) complete its job" \
    wait_until 60 sqlis "done 0" \
    "SELECT state || ' ' || jsonb_array_length(result->'degenerate') FROM jobs
     WHERE payload->>'probe' = 'true'"
check "one refusal so far" jtrue '.counters.malformed == 1' kfctl status --json

# A compile job's result likewise (proto/kf_msg_compile.c).
sql "INSERT INTO jobs (role, kind, payload) VALUES ('compile', 'compile', '{}')" >/dev/null
cjob=$(sql "SELECT id FROM jobs WHERE kind = 'compile'")
cbad='{"job_id": $job, "lease": $lease, "lease_token": "$token", "ok": true, "result": {"compiled": true, "coords": [1, 9, 0]}}'
cgood='{"job_id": $job, "lease": $lease, "lease_token": "$token", "ok": true, "result": {"compiled": false, "artifact_hash": null, "toolchain": "cc", "log": "error: x", "wall_s": 0.1}}'
start comp "$PEER" --endpoint "$KF_WORKER_ENDPOINT" "hello comp1 compile 1 $CAPS" \
    "jobs 1 120000" "send RESULT $cbad" "expect ERROR 60000" \
    "jobs 2 120000" "send RESULT $cgood" "waitfile $T/end"
check "a compile result with a level out of range is refused, the field named" \
    wait_until 60 eval '[ "$(lines comp ERROR | head -n 1 | jq -r .body.reason)" = "malformed compile result: result.coords: each level must be an integer 0..3" ]'
check "the well-typed compile RESULT completes its job" \
    wait_until 60 sqlis "done false" \
    "SELECT state || ' ' || (result->>'compiled') FROM jobs WHERE id = $cjob"
check "two refusals in all" jtrue '.counters.malformed == 2' kfctl status --json

# A generate job's result likewise (proto/kf_msg_generate.c): a token
# count that is negative is refused, the field named.
sql "INSERT INTO jobs (role, kind, payload) VALUES ('generate', 'generate', '{}')" >/dev/null
gjob=$(sql "SELECT id FROM jobs WHERE kind = 'generate'")
gbad='{"job_id": $job, "lease": $lease, "lease_token": "$token", "ok": true, "result": {"source": "int x;", "generator": "command", "usage": {"input_tokens": -5}}}'
mbad='{"job_id": $job, "lease": $lease, "lease_token": "$token", "ok": true, "result": {"text": {"edits": 1}, "generator": "offline"}}'
ggood='{"job_id": $job, "lease": $lease, "lease_token": "$token", "ok": true, "result": {"source": "int x;", "generator": "command", "usage": {"input_tokens": 5, "output_tokens": 7}}}'
start gen "$PEER" --endpoint "$KF_WORKER_ENDPOINT" "hello gen1 generate 1 {\"models\":[\"command\"]}" \
    "jobs 1 120000" "send RESULT $gbad" "expect ERROR 60000" \
    "jobs 2 120000" "send RESULT $ggood" "waitfile $T/meta" \
    "jobs 3 120000" "send RESULT $mbad" "expect ERROR 60000" "waitfile $T/end"
check "a generate result with a negative token count is refused, the field named" \
    wait_until 60 eval '[ "$(lines gen ERROR | head -n 1 | jq -r .body.reason)" = "malformed generate result: result.usage.input_tokens: must be an integer >= 0" ]'
check "the well-typed generate RESULT completes its job" \
    wait_until 60 sqlis "done 7" \
    "SELECT state || ' ' || (result->'usage'->>'output_tokens') FROM jobs WHERE id = $gjob"
check "three refusals in all" jtrue '.counters.malformed == 3' kfctl status --json

# A meta job's answer is the same struct: its text must be a string.
sql "INSERT INTO jobs (role, kind, payload) VALUES ('generate', 'meta', '{}')" >/dev/null
touch "$T/meta"
check "a meta result whose text is no string is refused, the field named" \
    wait_until 60 eval '[ "$(lines gen ERROR | sed -n 2p | jq -r .body.reason)" = "malformed meta result: result.text: must be a string" ]'

touch "$T/end"
check "the coordinator is alive" kill -0 "$COORD_PID"
finish
