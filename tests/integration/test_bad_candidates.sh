#!/usr/bin/env bash
# test_bad_candidates.sh - a candidate that does not compile, crashes,
# hangs, writes out of bounds, writes its input or returns wrong values is
# recorded with a verdict saying which, and its run goes on to the end.
# Each bad kernel enters as the task's initial implementation (generation
# 0, slot 0); slot 1 comes from the offline generator and must still run.
. "$(dirname "$0")/lib.sh"

db_new
start_coordinator "${COORD_FAST[@]}"
start gateway "$BIN/kf-llm-gateway" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
start compile "$BIN/kf-compile-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
# The time limit stops the spinning kernel; 15 s leaves the good kernels
# (well under a second each, quiet) room on a loaded machine under ASan.
start exec "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" \
    --eval-time-limit-s 15
check "three workers" wait_until 120 jtrue '.workers | length == 3' kfctl status --json

K=$ROOT/tests/fixtures/kernels
cp "$K"/*.c "$T"/
printf '#include "kf_kernel.h"\nint kf_forward (const kf_tensor_t *in, int n_in,\n  kf_tensor_t *out, int n_out, const kf_ctx_t *ctx) { return syntax error; }\n' \
    >"$T/no_compile.c"

# try KERNEL STATUS DETAIL_PATTERN
try() {
    local kernel=$1 want=$2 pattern=$3
    cat >"$T/task_$kernel.json" <<JSON
{ "name": "bad-$kernel", "op": "softmax",
  "inputs": [{"name": "x", "shape": [64, 256], "dtype": "f32"}],
  "outputs": [{"name": "y", "shape": [64, 256], "dtype": "f32"}],
  "reference": {"language": "c", "file": "ref_softmax.c"},
  "initial": {"language": "c", "file": "$kernel.c"} }
JSON
    local out run status detail
    out=$(kfctl submit "$T/task_$kernel.json" --generations 1 --population 2 --wait --json \
          --timeout 10 2>>"$T/submit.log")
    run=$(jq -r .run_id <<<"$out")
    check "$kernel: the run ends done" [ "$(jq -r .status <<<"$out")" = done ]
    status=$(sql "SELECT status FROM candidates WHERE run_id = $run AND slot = 0")
    detail=$(sql "SELECT coalesce(verdict_detail, '') || ' ' || coalesce(log, '') FROM candidates WHERE run_id = $run AND slot = 0")
    say "$kernel -> $status: $(head -c 160 <<<"$detail")"
    check "$kernel: recorded as $want" [ "$status" = "$want" ]
    check "$kernel: the record says why ($pattern)" grep -qiE "$pattern" <<<"$detail"
    check "$kernel: the generated candidate still ran" \
        [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND slot = 1 AND finished_at IS NOT NULL")" -eq 1 ]
}

try no_compile compile_failed "error"
try segfault crashed "SIGSEGV"
try oob_write crashed "out-of-bounds"
try spin timeout "exceeded"
try wrong_softmax incorrect "within tolerance"
try modifies_input incorrect "inputs changed"
try unwritten incorrect "not written"
try good_softmax correct "passed"
check "evaluations were stored for the evaluated ones" \
    [ "$(sql "SELECT count(*) FROM evaluations")" -ge 7 ]
finish
