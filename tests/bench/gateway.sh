#!/usr/bin/env bash
# tests/bench/gateway.sh - the gateway benchmark (`make bench-gateway`).
#
# Builds nothing (make has built build/). Starts the OpenAI-compatible
# test double (build/tools/kf_llm_double, zero server latency), one
# kf-llm-gateway pointed at it with 100 credits and 100 requests allowed in
# flight, and build/tools/kf_gateway_driver playing the coordinator over
# the real protocol with at most 100 generate jobs out. Every job is a full
# round: JOB decoded, request built, HTTP over a kept-alive loopback
# connection through curl multi, reply parsed, code extracted, usage
# priced, RESULT sent. Prints completions/s (target 2,000 with 100 in
# flight), the gateway's CPU per request and as % of one core, the
# double's and the driver's CPU, and the longest heartbeat silence.
# Everything shares the machine's cores. Kills only what it started.
#
#   KF_BUILD=build            which build to run
#   KF_BENCH_JOBS=20000       jobs to complete
#   KF_BENCH_INFLIGHT=100     jobs (and requests) in flight
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
BUILD=${KF_BUILD:-build}
JOBS=${KF_BENCH_JOBS:-20000}
INFLIGHT=${KF_BENCH_INFLIGHT:-100}
T=$(mktemp -d /tmp/kfbg.XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$T"
}
trap cleanup EXIT INT TERM

# CPU seconds (user + system) of PID so far.
cpu_s() {
    awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"
}

"$BUILD/tools/kf_llm_double" >"$T/double.out" 2>&1 &
DOUBLE=$!
PIDS+=("$DOUBLE")
for _ in $(seq 1 50); do grep -qs "^port " "$T/double.out" && break; sleep 0.1; done
PORT=$(awk '/^port /{print $2; exit}' "$T/double.out")
[ -n "$PORT" ] || { echo "bench-gateway: the double did not start" >&2; exit 1; }

PROMPT='Write a row softmax kernel for the host in C, exporting kf_forward.'
PAYLOAD=$(jq -cn --arg p "$PROMPT" \
    '{model: "openai:bench-model", language: "c", seed: 1, prompt: $p, task: {}}')
EP=ipc://$T/w.sock

"$BUILD/tools/kf_gateway_driver" --endpoint "$EP" --payload "$PAYLOAD" --count "$JOBS" \
    --inflight "$INFLIGHT" --heartbeat-ms 1000 --timeout-s 300 >"$T/driver.txt" 2>&1 &
DRIVER=$!
sleep 0.2
OPENAI_API_KEY=sk-bench-not-a-key OPENAI_BASE_URL=http://127.0.0.1:$PORT/v1 \
    "$BUILD/bin/kf-llm-gateway" --coordinator "$EP" --credits "$INFLIGHT" \
    --concurrency-openai "$INFLIGHT" >"$T/gateway.log" 2>&1 &
GATEWAY=$!
PIDS+=("$GATEWAY")
g0=$(cpu_s "$GATEWAY"); d0=$(cpu_s "$DOUBLE")
wait "$DRIVER"
rc=$?
g1=$(cpu_s "$GATEWAY"); d1=$(cpu_s "$DOUBLE")
summary=$(cat "$T/driver.txt")
[ $rc -eq 0 ] || { echo "bench-gateway: driver failed: $summary" >&2; tail "$T/gateway.log" >&2; exit 1; }

rate=$(jq .rate <<<"$summary")
elapsed=$(jq .elapsed_s <<<"$summary")
ok=$(jq .ok <<<"$summary")
gap=$(jq .max_heartbeat_gap_ms <<<"$summary")
echo "bench-gateway: $(date -u +%Y-%m-%d), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "  jobs completed         $(jq .results <<<"$summary") ($ok ok) in ${elapsed} s, ${INFLIGHT} in flight"
awk -v r="$rate" 'BEGIN { printf "  completions/s          %.0f   (target 2000: %s)\n", r, (r >= 2000) ? "met" : "not met" }'
awk -v a="$g0" -v b="$g1" -v n="$JOBS" -v e="$elapsed" \
    'BEGIN { printf "  gateway CPU/request    %.1f us   (%.0f%% of one core)\n", (b - a) * 1e6 / n, (b - a) * 100 / e }'
awk -v a="$d0" -v b="$d1" -v n="$JOBS" -v e="$elapsed" \
    'BEGIN { printf "  double CPU/request     %.1f us   (%.0f%% of one core)\n", (b - a) * 1e6 / n, (b - a) * 100 / e }'
echo "  longest heartbeat gap  ${gap} ms (heartbeat 1000 ms)"
