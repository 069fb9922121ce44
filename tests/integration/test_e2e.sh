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
check "without --tune every candidate is built and timed once" \
    [ "$(sql "SELECT count(*) FROM evaluations WHERE jsonb_array_length(coalesce(figures->'configs', '[]')) > 1")" -eq 0 ]
check "every prompt is stored" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND prompt LIKE '%kf_forward%'")" -eq 16 ]
check "no job left queued or leased" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE state IN ('queued','leased')")" -eq 0 ]

check "the archive holds at least one cell, each elite a correct candidate" \
    jtrue '(.archive | length) >= 1 and ([.archive[].candidate_id] - [.candidates[] | select(.status == "correct") | .id] | length) == 0' \
    kfctl show "$run" --json
check "every candidate that compiled has coordinates" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND source_hash IS NOT NULL AND coords IS NULL")" -eq 0 ]
check "a bad model spec is refused, naming it" \
    sh -c "'$BIN/kfctl' submit '$ROOT/examples/tasks/softmax/task.json' --model nosuch:x 2>&1 | grep -q nosuch"
kfctl best "$run" -o "$T/best.c" >/dev/null
check "kfctl best writes a source with kf_forward" grep -q kf_forward "$T/best.c"
check "runs lists the run as done" \
    jtrue ".runs[] | select(.id == $run) | .status == \"done\"" kfctl runs --json
check "the coordinator counted no malformed message" \
    jtrue '.counters.malformed == 0' kfctl status --json

# Ctrl-C on watch leaves cleanly (exit 130) and leaves the run running;
# cancel then ends it.
run2=$(kfctl submit "$ROOT/examples/tasks/gelu/task.json" --generations 50 --population 4 --json | jq -r .run_id)
"$BIN/kfctl" watch "$run2" >"$T/watch.out" 2>"$T/watch.log" &
watch_pid=$!
sleep 2
kill -INT "$watch_pid"
wait "$watch_pid"
check "Ctrl-C on kfctl watch exits 130" [ $? -eq 130 ]
check "kfctl watch left no sanitizer report" bash -c "! grep -q Sanitizer '$T/watch.log'"
check "the run goes on after watch leaves" jtrue '.run.status == "running"' kfctl show "$run2" --json
check "kfctl cancel answers" kfctl cancel "$run2"
check "the run is cancelled" jtrue '.run.status == "cancelled"' kfctl show "$run2" --json
check "no job of it is left queued" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $run2 AND state IN ('queued', 'leased')")" -eq 0 ]
finish
