#!/usr/bin/env bash
# test_gateway.sh - kf-llm-gateway against the local OpenAI- and
# Anthropic-compatible test double (kf_llm_double), driven over the real
# protocol by kf_gateway_driver playing the coordinator. Proves each rule
# of docs/llm-gateway.md: retries fire and succeed, Retry-After is
# honoured (measured at the double), 400 is not retried, a stall ends in a
# timeout, truncated/empty/no-code replies are clear failures, code is
# found among several blocks and without fences, malformed and cut-short
# bodies are retried, rate limits space requests, the command backend
# runs, costs come from the price table, API keys never appear in any log
# or result, and 50 concurrent jobs finish with no heartbeat missed.
. "$(dirname "$0")/lib.sh"

OKEY=sk-kftest-OPENAI-7f3a9c2e5b1d4e6f
AKEY=sk-ant-kftest-ANTHROPIC-0a1b2c3d4e5f
start double "$TOOLS/kf_llm_double" --log "$T/double-requests.txt" --openai-key "$OKEY" \
    --anthropic-key "$AKEY"
wait_until 10 grep -q '^port ' "$T/double.log"
PORT=$(awk '/^port /{print $2; exit}' "$T/double.log")
say "double on port $PORT"

cat >"$T/models.conf" <<EOF
# test models file
command_echo = sh $T/cmd.sh
command_slow = sleep 30
limits_openai:gpt-rl = rpm=120 tpm=0
EOF
cat >"$T/cmd.sh" <<'EOF'
# reads the prompt, answers with a kernel in a fence
cat >/dev/null
printf 'ok, %s:\n```c\n#include "kf_kernel.h"\nint kf_forward (void) { return 0; }\n```\n' "$KF_LANGUAGE"
EOF
cat >"$T/prices.txt" <<EOF
# MODEL  input output cached  (USD per million tokens)
openai:gpt-4.1  2.00 8.00 0.50
anthropic:*     3.00 15.00 0.30
EOF

start_gateway() {   # start_gateway NAME ENDPOINT ARGS...
    local name=$1 ep=$2
    shift 2
    OPENAI_API_KEY=$OKEY ANTHROPIC_API_KEY=$AKEY \
    OPENAI_BASE_URL=http://127.0.0.1:$PORT/v1 ANTHROPIC_BASE_URL=http://127.0.0.1:$PORT/v1 \
        start "$name" "$BIN/kf-llm-gateway" --coordinator "$ep" --heartbeat-ms 100 \
        --models-file "$T/models.conf" --prices-file "$T/prices.txt" "$@"
}

# drive ENDPOINT JOBS N ARGS...: the driver in the background (it binds
# first, so the gateway's HELLO finds it), then the gateway; waits for the
# driver, whose summary lands in driverN.txt and results in resultsN.jsonl.
drive() {
    local ep=$1 jobs=$2 n=$3
    shift 3
    "$TOOLS/kf_gateway_driver" --endpoint "$ep" --jobs "$jobs" --heartbeat-ms 100 \
        --out "$T/results$n.jsonl" --timeout-s 60 >"$T/driver$n.txt" 2>"$T/driver$n.log" &
    local dpid=$!
    sleep 0.2
    start_gateway "gateway$n" "$ep" "$@"
    wait "$dpid"
}

job() {   # job MODEL LANGUAGE PROMPT
    jq -cn --arg m "$1" --arg l "$2" --arg p "$3" \
        '{model: $m, language: $l, seed: 1, prompt: $p, task: {}}'
}
{
    job openai:gpt-4.1 c "plain request"
    job openai:gpt-4.1 c "[[double id=ra fail=429 times=2 retry-after=1]]"
    job openai:gpt-4.1 c "[[double id=s500 fail=500 times=1]]"
    job openai:gpt-4.1 c "[[double id=s500x fail=500 times=99]]"
    job openai:gpt-4.1 c "[[double id=b400 fail=400 times=99]]"
    job openai:gpt-4.1 c "[[double id=stall stall=3000 times=99]]"
    job openai:gpt-4.1 c "[[double id=len reply=length]]"
    job anthropic:claude-x c "[[double id=alen reply=length]]"
    job openai:gpt-4.1 c "[[double id=empty reply=empty]]"
    job openai:gpt-4.1 c "[[double id=nocode reply=nocode]]"
    job openai:gpt-4.1 cuda "[[double id=blocks reply=blocks lang=cuda]]"
    job openai:gpt-4.1 c "[[double id=bare reply=bare]]"
    job openai:gpt-4.1 c "[[double id=mal malformed times=1]]"
    job openai:gpt-4.1 c "[[double id=trunc truncated times=1]]"
    job anthropic:claude-x c "[[double id=a401 echo-key]]"
    for i in 1 2 3 4; do job openai:gpt-rl c "[[double id=rl$i]]"; done
    job command:echo opencl "any prompt"
    job command:slow c "any prompt"
    job command:nosuch c "any prompt"
    job nosuch:model c "any prompt"
    job openai:gpt-4.1 c "[[double id=badtemp]]" | jq -c '.temperature = 9'
} >"$T/jobs.jsonl"
drive "ipc://$T/g1.sock" "$T/jobs.jsonl" 1 --backoff-base-ms 200 --backoff-max-ms 400 \
    --max-attempts 3 --request-timeout-ms 1000 --command-timeout-s 1
check "the driver got a result for every job" [ $? -eq 0 ]
say "driver: $(cat "$T/driver1.txt")"

res() {   # res ID: the result line of the job whose prompt has id=ID
    local line
    line=$(grep -n -- "id=$1[] ]" "$T/jobs.jsonl" | head -1 | cut -d: -f1)
    jq -c "select(.job_id == $line)" "$T/results1.jsonl"
}
res_n() { jq -c "select(.job_id == $1)" "$T/results1.jsonl"; }
hits() { awk -v id="$1" '$3 == id' "$T/double-requests.txt" | wc -l; }
at() { awk -v id="$1" -v n="$2" '$3 == id && $4 == n {print $1; exit}' "$T/double-requests.txt"; }

check "a plain request gives a source with kf_forward, usage and cost" \
    jtrue '.ok and (.result.source | test("kf_forward")) and .result.usage.output_tokens == 100
           and .result.usage.cached_tokens > 0 and .result.cost_usd > 0 and .result.attempts == 1
           and .result.model == "openai:gpt-4.1" and .result.latency_ms >= 0' res_n 1
r=$(res_n 1)
in=$(jq .result.usage.input_tokens <<<"$r"); ca=$(jq .result.usage.cached_tokens <<<"$r")
want=$(awk -v i="$in" -v c="$ca" 'BEGIN { printf "%.10f", ((i - c) * 2 + c * 0.5 + 100 * 8) / 1e6 }')
check "cost_usd is priced from the table ($want)" \
    awk -v g="$(jq .result.cost_usd <<<"$r")" -v w="$want" 'BEGIN { exit !(g - w < 1e-12 && w - g < 1e-12) }'

check "429 twice with Retry-After: retried, succeeds on attempt 3" \
    jtrue '.ok and .result.attempts == 3 and (.result.source | test("kf_forward"))' res ra
gap1=$(( $(at ra 2) - $(at ra 1) )); gap2=$(( $(at ra 3) - $(at ra 2) ))
say "Retry-After: 1 -> measured gaps ${gap1} ms, ${gap2} ms (backoff alone would be 100-400 ms)"
check "Retry-After honoured: each retry came >= 1000 ms later" [ "$gap1" -ge 1000 -a "$gap2" -ge 1000 ]
check "Retry-After not overshot (< 1400 ms)" [ "$gap1" -lt 1400 -a "$gap2" -lt 1400 ]
check "500 once: retried, succeeds on attempt 2" jtrue '.ok and .result.attempts == 2' res s500
check "500 always: fails after max_attempts (3) with status and trimmed body" \
    jtrue '(.ok | not) and .result.attempts == 3 and .result.status == 500
           and (.error | test("HTTP 500: .*simulated 500.*retries exhausted"))' res s500x
check "the double saw exactly 3 attempts of the always-500 job" [ "$(hits s500x)" -eq 3 ]
check "400 is not retried: one attempt, failed with status 400" \
    jtrue '(.ok | not) and .result.attempts == 1 and .result.status == 400' res b400
check "the double saw exactly 1 request of the 400 job" [ "$(hits b400)" -eq 1 ]
check "a stall past request_timeout_ms ends in a timeout, retried, then failed" \
    jtrue '(.ok | not) and .result.error_kind == "timeout" and .result.attempts == 3
           and (.error | test("timeout"))' res stall
check "finish_reason length: ok with error_kind truncated and no source" \
    jtrue '.ok and .result.error_kind == "truncated" and (.result | has("source") | not)
           and (.result.detail | test("max_tokens"))' res len
check "Anthropic stop_reason max_tokens: truncated too" \
    jtrue '.ok and .result.error_kind == "truncated" and .result.finish_reason == "max_tokens"' res alen
check "an empty reply: error_kind empty, no source" \
    jtrue '.ok and .result.error_kind == "empty" and (.result | has("source") | not)' res empty
check "prose only: error_kind no_code, no source" \
    jtrue '.ok and .result.error_kind == "no_code" and (.result | has("source") | not)' res nocode
check "several blocks: the cuda block with kf_forward is taken, not the sketch or python" \
    jtrue '.ok and (.result.source | test("kf_forward")) and (.result.source | test("kf_sketch|import torch|nvcc") | not)' res blocks
check "no fences: the code is taken from its first line" \
    jtrue '.ok and (.result.source | startswith("#include"))' res bare
check "malformed JSON once: retried, succeeds on attempt 2" jtrue '.ok and .result.attempts == 2' res mal
check "a body cut short once: retried, succeeds on attempt 2" jtrue '.ok and .result.attempts == 2' res trunc
check "401 echoing the key: not retried, reported with the key redacted" \
    jtrue '(.ok | not) and .result.attempts == 1 and .result.status == 401 and (.error | test("REDACTED"))' res a401

rl=$(awk '$3 ~ /^rl[0-9]$/ {print $1}' "$T/double-requests.txt" | sort -n | tr '\n' ' ')
say "rpm=120 arrivals (ms): $rl"
check "rate limit rpm=120 spaces the 4 requests >= 480 ms apart" \
    awk -v s="$rl" 'BEGIN { n = split(s, t, " "); if (n != 4) exit 1;
                            for (i = 2; i <= n; i++) if (t[i] - t[i-1] < 480) exit 1 }'

n=$(grep -c . "$T/jobs.jsonl")
check "command:echo runs the program with the prompt on stdin" \
    jtrue '.ok and (.result.source | test("kf_forward")) and .result.generator == "command"' res_n $((n - 4))
check "command:slow past command_timeout_s: timeout" \
    jtrue '(.ok | not) and .result.error_kind == "timeout"' res_n $((n - 3))
check "command:nosuch is refused with the models file named" \
    jtrue '(.ok | not) and (.error | test("command_nosuch"))' res_n $((n - 2))
check "an unknown backend is refused" jtrue '(.ok | not) and (.error | test("unknown model"))' res_n $((n - 1))
check "a temperature out of range is refused" jtrue '(.ok | not) and (.error | test("temperature"))' res_n "$n"
check "the gateway's heartbeats kept flowing during the rules run" \
    jtrue '.max_heartbeat_gap_ms < 250' cat "$T/driver1.txt"

# --- 50 concurrent jobs, each held 400 ms by the double ----------------------
for i in $(seq 1 50); do job openai:gpt-4.1 c "[[double id=c$i stall=400]]"; done >"$T/jobs50.jsonl"
drive "ipc://$T/g2.sock" "$T/jobs50.jsonl" 2
say "50 concurrent: $(cat "$T/driver2.txt")"
check "50 concurrent jobs all succeed" jtrue '.results == 50 and .ok == 50' cat "$T/driver2.txt"
check "they ran concurrently (under 3 s, not 50 x 0.4 s)" jtrue '.elapsed_s < 3' cat "$T/driver2.txt"
check "no heartbeat missed: longest silence < 2 x heartbeat_ms (100)" \
    jtrue '.max_heartbeat_gap_ms < 200 and .heartbeats > 0' cat "$T/driver2.txt"
span=$(awk '$3 ~ /^c[0-9]+$/ {print $1}' "$T/double-requests.txt" | sort -n | awk 'NR==1{a=$1} {b=$1} END{print b-a}')
check "all 50 requests were at the double within 300 ms of each other ($span ms)" [ "$span" -lt 300 ]

# --- keys ---------------------------------------------------------------------
stop_all
leaks=$(grep -l -F -e "$OKEY" -e "$AKEY" -e "${OKEY: -8}" -e "${AKEY: -8}" \
        "$T"/*.log "$T"/*.jsonl "$T"/*.txt 2>/dev/null | grep -v jobs)
check "no API key (nor its tail) in any log, result or driver output${leaks:+: $leaks}" [ -z "$leaks" ]
check "the double did see the OpenAI key (requests were authenticated)" \
    [ "$(awk '$2 == "openai" && $5 == 401' "$T/double-requests.txt" | wc -l)" -eq 0 ]
finish
