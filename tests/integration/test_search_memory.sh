#!/usr/bin/env bash
# test_search_memory.sh - memory across runs (docs/search.md,
# "Inspirations"; coordinator/kf_memory.c): a second run of the same op on
# the same target gets, beside its own inspirations, a correct elite of
# the first run, marked in the prompt as from that run with that run's
# speedup and recorded in candidates.selection.memory; it never becomes a
# parent or the run's best. `kfctl submit --no-memory` (and memory=false)
# turns it off; a run of another op never sees the first run's kernels.
. "$(dirname "$0")/lib.sh"

db_new
start_coordinator "${COORD_FAST[@]}"
start_workers
check "status answers with three workers" \
    wait_until 180 jtrue '.workers | length == 3' kfctl status --json

cp "$ROOT/examples/tasks/softmax/reference.c" "$T/reference.c"
cp "$ROOT/tests/fixtures/search/simd_softmax.c" "$T/simd.c"
jq '.initial = {"language": "c", "file": "simd.c"}' "$ROOT/examples/tasks/softmax/task.json" \
    >"$T/task.json"
# The same kernels under another op: memory must not cross ops.
jq '.name = "softmax_other" | .op = "softmax_other"' "$T/task.json" >"$T/other.json"

submit() {   # submit NAME TASK ARGS...: a run through --wait; its id in $NAME
    local name=$1 task=$2 out
    shift 2
    out=$(kfctl submit "$task" --generations 2 --population 2 --wait --json \
          --timeout 120 "$@" 2>>"$T/submit.err")
    check "run $name finishes done" [ "$(jq -r .status <<<"$out")" = done ]
    printf -v "$name" '%s' "$(jq -r .run_id <<<"$out")"
}
count() { sql "SELECT count(*) FROM candidates WHERE run_id = $1 AND ($2)"; }

submit A "$T/task.json" --seed 9
check "run A (the first of its op) has nothing to remember" \
    [ "$(count "${A:-0}" "selection ? 'memory'")" -eq 0 ]
check "run A's prompts carry no remembered kernel" \
    [ "$(count "${A:-0}" "prompt LIKE '%From an earlier run%'")" -eq 0 ]
check "run A has correct elites" \
    [ "$(sql "SELECT count(*) FROM archive_cells WHERE run_id = ${A:-0}")" -ge 1 ]

# Other seeds than A's, so B's own kernels are not A's and the remembered
# one is not left out of the prompt as a kernel already shown.
submit B "$T/task.json" --seed 10
submit C "$T/task.json" --seed 10 --no-memory
submit D "$T/task.json" --seed 10 --set memory=false
submit O "$T/other.json" --seed 10
say "runs: A $A, B $B, C $C (--no-memory), D $D (memory=false), O $O (other op)"
say "run B, first remembered: $(sql "SELECT selection->'memory' FROM candidates WHERE run_id = ${B:-0} AND selection ? 'memory' ORDER BY id LIMIT 1")"

say "run B, the marked line: $(sql "SELECT substring(prompt FROM 'From an earlier run[^\n]*') FROM candidates WHERE run_id = ${B:-0} AND prompt LIKE '%From an earlier run%' ORDER BY id LIMIT 1")"
check "run B planned 4 main-phase candidates" \
    [ "$(count "${B:-0}" "phase = 'search'")" -eq 4 ]
check "run B: every main-phase candidate's selection records a remembered elite" \
    [ "$(count "${B:-0}" "phase = 'search' AND NOT (selection ? 'memory')")" -eq 0 ]
check "run B: ... each of run A" \
    [ "$(count "${B:-0}" "(selection->'memory'->>'run')::bigint <> ${A:-0}")" -eq 0 ]
check "run B: each remembered kernel is a correct elite of A's archive, with A's speedup" \
    [ "$(sql "SELECT count(*) FROM candidates b JOIN candidates m
              ON m.id = (b.selection->'memory'->>'candidate')::bigint
              WHERE b.run_id = ${B:-0} AND (m.run_id <> ${A:-0} OR m.status <> 'correct'
              OR m.speedup <> (b.selection->'memory'->>'speedup')::float8
              OR NOT EXISTS (SELECT 1 FROM archive_cells a WHERE a.candidate_id = m.id))")" -eq 0 ]
check "run B: the prompt marks it as from run A, with its speedup against that run's reference" \
    [ "$(count "${B:-0}" "selection ? 'memory' AND strpos(prompt, 'From an earlier run (run ' || ${A:-0}
         || ', candidate ' || (selection->'memory'->>'candidate') || ')') > 0
         AND prompt LIKE '%against that run''s own timing of the reference%'")" -ge 1 ]
check "run B: no parent is another run's kernel" \
    [ "$(sql "SELECT count(*) FROM candidates c JOIN candidates p ON p.id = c.parent_id
              WHERE c.run_id = ${B:-0} AND p.run_id <> ${B:-0}")" -eq 0 ]
check "run B: its best is its own kernel" \
    [ "$(sql "SELECT count(*) FROM runs r JOIN candidates b ON b.id = r.best_candidate_id
              WHERE r.id = ${B:-0} AND b.run_id <> r.id")" -eq 0 ]
check "run B: candidates.inspirations holds only its own kernels" \
    [ "$(sql "SELECT count(*) FROM candidates c JOIN candidates i ON i.id = ANY (c.inspirations)
              WHERE c.run_id = ${B:-0} AND i.run_id <> ${B:-0}")" -eq 0 ]
check "run B: its archive holds only its own kernels" \
    [ "$(sql "SELECT count(*) FROM archive_cells a JOIN candidates c ON c.id = a.candidate_id
              WHERE a.run_id = ${B:-0} AND c.run_id <> ${B:-0}")" -eq 0 ]
check "run C (--no-memory): its stored config has memory false" \
    [ "$(sql "SELECT config->>'memory' FROM runs WHERE id = ${C:-0}")" = false ]
check "run C: nothing remembered" \
    [ "$(count "${C:-0}" "selection ? 'memory' OR prompt LIKE '%From an earlier run%'")" -eq 0 ]
check "run D (memory=false): nothing remembered" \
    [ "$(count "${D:-0}" "selection ? 'memory' OR prompt LIKE '%From an earlier run%'")" -eq 0 ]
check "run B's stored config has memory on (the default)" \
    [ "$(sql "SELECT config->>'memory' FROM runs WHERE id = ${B:-0}")" = true ]
check "run O (another op): nothing remembered from the softmax runs" \
    [ "$(count "${O:-0}" "selection ? 'memory' OR prompt LIKE '%From an earlier run%'")" -eq 0 ]
check "kfctl submit --help names --no-memory" \
    sh -c "'$BIN/kfctl' submit --help 2>&1 | grep -q -- '--no-memory'"
finish
