#!/usr/bin/env bash
# test_search_parents.sh - a generation is not planned from whichever slow
# kernel of the previous one happened to be judged first (round 7 of
# issue 15: a 0.25x kernel, judged before its two siblings, was the parent
# of generation 1). While the run's grid holds nothing at the reference's
# speed, generation g + 1 waits for more than half of generation g's
# verdicts (kf_select_hold; the rule that a slower kernel is no parent
# beside one at parity is tested without a database, in
# tests/unit/test_search_round7.c).
#
# Generation 0: the task's initial kernel, correct and about 8x slower
# than the reference, judged at once; its two siblings come from a
# command model that answers only once the test opens a gate. Before:
# generation 1's first candidate was planned from the slow kernel the
# moment it was judged.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/task"
cp "$ROOT/examples/tasks/gelu/reference.c" "$T/task/reference.c"
cat >"$T/task/slow.c" <<'EOF'
/* The reference's GELU eight times over: correct, and slower than it. */
#include "kf_kernel.h"
#include <math.h>
int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out, const kf_ctx_t *ctx)
{
    (void) ctx;
    if (n_in < 1 || n_out < 1 || kf_numel (&in[0]) != kf_numel (&out[0]))
        return 1;
    int64_t n = kf_numel (&in[0]);
    const float *x = in[0].data;
    float *y = out[0].data;
    for (int rep = 0; rep < 8; rep++)
        for (int64_t i = 0; i < n; i++) {
            float v = x[i] + (float) rep * 1e-30f;
            y[i] = 0.5f * v * (1.0f + tanhf (0.7978845608f * (v + 0.044715f * v * v * v)));
        }
    return 0;
}
EOF
jq '.name = "gelu_parents" | .initial = {"language": "c", "file": "slow.c"}' \
    "$ROOT/examples/tasks/gelu/task.json" >"$T/task/task.json"

# The model: the reference's code, once the gate is open.
cat >"$T/kern.sh" <<EOF2
cat >/dev/null
while [ ! -e "$T/gate" ]; do sleep 0.1; done
printf 'Analysis: the plain loop.\n\`\`\`c\n'
cat "$ROOT/examples/tasks/gelu/reference.c"
printf '\`\`\`\n'
EOF2
printf 'command_kern = sh %s\n' "$T/kern.sh" >"$T/models.conf"

db_new
start_coordinator "${COORD_FAST[@]}"
start gateway "$BIN/kf-llm-gateway" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" \
    --models-file "$T/models.conf" --command-timeout-s 300
start compile "$BIN/kf-compile-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
start exec "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" --perf off
check "three workers" wait_until 180 jtrue '.workers | length == 3' kfctl status --json

kfctl submit "$T/task/task.json" --model command:kern --generations 2 --population 3 \
    --seed 7 --set tuning=false --set meta_prompting=false --json \
    >"$T/submit.json" 2>"$T/submit.err"
run=$(jq -r .run_id "$T/submit.json")
slow_judged() {
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND generation = 0
              AND slot = 0 AND finished_at IS NOT NULL")" -eq 1 ]
}
check "the slow initial kernel is judged" wait_until 300 slow_judged
# The fill that follows a verdict runs in the verdict's transaction: what
# it planned is there now.
say "initial kernel: $(sql "SELECT status || ' ' || coalesce(round(speedup::numeric, 3)::text, '-')
                             FROM candidates WHERE run_id = $run AND generation = 0 AND slot = 0")"
check "... correct and slower than the reference" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND generation = 0 AND slot = 0
              AND status = 'correct' AND speedup < 1")" -eq 1 ]
check "... while its two siblings wait for the model" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND generation = 0
              AND finished_at IS NULL")" -eq 2 ]
check "generation 1 waits: nothing planned from the only (slow) kernel judged" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND generation >= 1")" -eq 0 ]

touch "$T/gate"
ended() { [ "$(sql "SELECT status FROM runs WHERE id = $run")" != running ]; }
check "the run ends" wait_until 300 ended
say "run $run: $(sql "SELECT status || ': ' || reason FROM runs WHERE id = $run")"
say "candidates: $(sql "SELECT string_agg(generation || '/' || slot || ' ' || status || ' '
                        || coalesce(round(speedup::numeric, 2)::text, '-') || ' parent '
                        || coalesce(parent_id::text, '-'), '; ' ORDER BY id)
                        FROM candidates WHERE run_id = $run")"
check "... done, all 6 candidates" \
    [ "$(sql "SELECT status FROM runs WHERE id = $run")" = done ] &&
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run")" -eq 6 ]
check "each of generation 1 was planned once two of generation 0 were judged" \
    [ "$(sql "SELECT count(*) FROM candidates c WHERE c.run_id = $run AND c.generation = 1
              AND (SELECT count(*) FROM candidates p WHERE p.run_id = $run AND p.generation = 0
                   AND p.finished_at <= c.created_at) < 2")" -eq 0 ]
finish
