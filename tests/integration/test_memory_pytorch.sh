#!/usr/bin/env bash
# test_memory_pytorch.sh - memory across runs keeps PyTorch problems apart
# (coordinator/kf_memory.c; docs/search.md, "Inspirations"). kfctl gives
# every PyTorch problem of no known class the op "pytorch", so matching by
# op alone handed a linear-layer run the kernels of a hard-swish run in
# issue 15's acceptance run ("From an earlier run ... of this op"): for
# that op only the same task name counts. A run of the same problem still
# remembers; a run of another problem with the op "pytorch" does not.
. "$(dirname "$0")/lib.sh"

db_new
start_coordinator "${COORD_FAST[@]}"
start_workers
check "status answers with three workers" \
    wait_until 180 jtrue '.workers | length == 3' kfctl status --json

# A native task with a correct initial kernel, labelled as kfctl labels a
# PyTorch problem of no known class: the initial kernel is an elite
# whatever the generator makes of the op.
cp "$ROOT/examples/tasks/softmax/reference.c" "$T/reference.c"
cp "$ROOT/tests/fixtures/search/simd_softmax.c" "$T/simd.c"
jq '.initial = {"language": "c", "file": "simd.c"} | .op = "pytorch" | .name = "problem_a"' \
    "$ROOT/examples/tasks/softmax/task.json" >"$T/a.json"
jq '.name = "problem_b"' "$T/a.json" >"$T/b.json"

submit() {   # submit NAME TASK ARGS...: a run through --wait; its id in $NAME
    local name=$1 task=$2 out
    shift 2
    out=$(kfctl submit "$task" --generations 1 --population 2 --wait --json \
          --timeout 120 "$@" 2>>"$T/submit.err")
    check "run $name finishes done" [ "$(jq -r .status <<<"$out")" = done ]
    printf -v "$name" '%s' "$(jq -r .run_id <<<"$out")"
}
count() { sql "SELECT count(*) FROM candidates WHERE run_id = $1 AND ($2)"; }

submit A "$T/a.json" --seed 9
check "run A has a correct elite" \
    [ "$(sql "SELECT count(*) FROM archive_cells WHERE run_id = ${A:-0}")" -ge 1 ]
submit B "$T/b.json" --seed 10
submit A2 "$T/a.json" --seed 10
say "runs: A $A, B $B (another problem, op pytorch), A2 $A2 (problem A again)"
check "run B (another PyTorch problem): nothing remembered from problem A" \
    [ "$(count "${B:-0}" "selection ? 'memory' OR prompt LIKE '%From an earlier run%'")" -eq 0 ]
check "run A2 (the same problem): a kernel of run A remembered" \
    [ "$(count "${A2:-0}" "(selection->'memory'->>'run')::bigint = ${A:-0}")" -ge 1 ]
finish
