#!/usr/bin/env bash
# test_e2e.sh - the backbone end to end: offline generator -> compile
# worker -> exec worker -> archive in PostgreSQL -> kfctl. A softmax run
# through `kfctl submit --wait` must finish, account for every candidate,
# improve on its first correct candidate, and hand back its best source.
. "$(dirname "$0")/lib.sh"

db_new
start_coordinator "${COORD_FAST[@]}"
start_workers
check "status answers with three workers" \
    wait_until 20 jtrue '.workers | length == 3' kfctl status --json

out=$(kfctl submit "$ROOT/examples/tasks/softmax/task.json" --generations 4 --population 4 \
      --seed 7 --wait --json --timeout 10 2>"$T/submit.err")
rc=$?
echo "$out" >"$T/submit.json"
check "submit --wait exits 0" [ "$rc" -eq 0 ]
check "the run is done" [ "$(jq -r .status <<<"$out")" = done ]
run=$(jq -r .run_id <<<"$out")
best=$(jq -r .best_speedup <<<"$out")
first=$(jq -r .first_speedup <<<"$out")
say "run $run: first correct ${first}x, best ${best}x"
check "the best beats the first correct candidate" \
    awk -v b="$best" -v f="$first" 'BEGIN { exit !(b > f) }'

show=$(kfctl show "$run" --json)
check "16 candidates, each in a final state" \
    [ "$(jq '[.candidates[] | select(.status | IN("correct","incorrect","compile_failed","crashed","timeout","failed"))] | length' <<<"$show")" -eq 16 ]
check "one row per (generation, slot)" \
    [ "$(sql "SELECT count(DISTINCT (generation, slot)) FROM candidates WHERE run_id = $run")" -eq 16 ]
check "at most one evaluation per candidate" \
    [ "$(sql "SELECT count(*) FROM (SELECT candidate_id FROM evaluations GROUP BY 1 HAVING count(*) > 1) d")" -eq 0 ]
check "every prompt is stored" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND prompt LIKE '%kf_forward%'")" -eq 16 ]
check "no job left queued or leased" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE state IN ('queued','leased')")" -eq 0 ]

kfctl best "$run" -o "$T/best.c" >/dev/null
check "kfctl best writes a source with kf_forward" grep -q kf_forward "$T/best.c"
check "runs lists the run as done" \
    jtrue ".runs[] | select(.id == $run) | .status == \"done\"" kfctl runs --json
check "the coordinator counted no malformed message" \
    jtrue '.counters.malformed == 0' kfctl status --json
finish
