#!/usr/bin/env bash
# test_search_proof.sh - issue 5's proof on the host backend with the
# offline generator: a 10-generation run on each example task (all six
# at once, sharing the workers) fills more than one archive cell, and its
# best kernel is faster than its first correct one.
. "$(dirname "$0")/lib.sh"

db_new
start_coordinator "${COORD_FAST[@]}"
start_workers
start exec2 "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
check "status answers with four workers" \
    wait_until 60 jtrue '.workers | length == 4' kfctl status --json

tasks=(softmax rmsnorm layernorm gelu row_sum row_max)
declare -A run
seed=31
for t in "${tasks[@]}"; do
    run[$t]=$(kfctl submit "$ROOT/examples/tasks/$t/task.json" --generations 10 --population 2 \
              --seed $seed --json 2>>"$T/submit.err" | jq -r .run_id)
    seed=$((seed + 1))
done
ids=$(IFS=,; echo "${run[*]}")
all_done() { [ "$(sql "SELECT count(*) FROM runs WHERE id IN ($ids) AND status <> 'running'")" -eq 6 ]; }
check "the six runs end" wait_until 500 all_done

for t in "${tasks[@]}"; do
    r=${run[$t]}
    cells=$(sql "SELECT count(*) FROM archive_cells WHERE run_id = $r")
    read -r best first <<<"$(sql "SELECT best_speedup, first_speedup FROM runs WHERE id = $r" | tr '|' ' ')"
    say "$t (run $r): $(sql "SELECT status || ', ' || reason FROM runs WHERE id = $r"); $cells cells: $(sql "SELECT string_agg(cell::text || ' ' || round(speedup::numeric, 2) || 'x', ', ' ORDER BY cell) FROM archive_cells WHERE run_id = $r"); first correct ${first}x, best ${best}x"
    check "$t: the run is done after 10 generations" \
        [ "$(sql "SELECT status || (SELECT count(*) FROM candidates WHERE run_id = $r AND finished_at IS NOT NULL)::text FROM runs WHERE id = $r")" = done20 ]
    check "$t: more than one archive cell" [ "$cells" -ge 2 ]
    check "$t: the best beats the first correct candidate" \
        awk -v b="$best" -v f="$first" 'BEGIN { exit !(b > f) }'
done
finish
