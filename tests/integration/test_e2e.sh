#!/usr/bin/env bash
# test_e2e.sh - the backbone end to end: offline generator -> compile
# worker -> exec worker -> archive in PostgreSQL -> kfctl. A softmax run
# through `kfctl submit --wait` must finish, account for every candidate,
# report as its best the fastest counted candidate and as its first the
# first correct one, and hand back its best source. (Whether the best beats
# the first is a question of measured speed: a benchmark's, not a check's.)
. "$(dirname "$0")/lib.sh"

db_new
start_coordinator "${COORD_FAST[@]}"
start_workers
check "status answers with three workers" \
    wait_until 120 jtrue '.workers | length == 3' kfctl status --json

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
# Speed-independent: which candidate holds the figures, not how fast it is.
counts="status = 'correct' AND coalesce(fidelity, 'full') = 'full'
        AND (audit_reason IS NULL OR audit_verdict = 'accepted')"
check "the run's best is its fastest counted correct candidate" \
    [ "$(sql "SELECT (r.best_speedup = (SELECT max(speedup) FROM candidates WHERE run_id = r.id AND $counts)
                     AND r.best_candidate_id IN (SELECT id FROM candidates WHERE run_id = r.id AND $counts
                                                 AND speedup = r.best_speedup))::int
              FROM runs r WHERE r.id = $run")" = 1 ]
check "the run's first is its first correct candidate (by generation, slot)" \
    [ "$(sql "SELECT (r.first_speedup = (SELECT speedup FROM candidates WHERE run_id = r.id AND $counts
                                        ORDER BY generation, slot LIMIT 1))::int
              FROM runs r WHERE r.id = $run")" = 1 ]
check "submit --wait printed the run's figures" \
    [ "$(sql "SELECT (abs(best_speedup - $best) <= 1e-9 * best_speedup
                     AND abs(first_speedup - $first) <= 1e-9 * first_speedup)::int FROM runs WHERE id = $run")" = 1 ]
check "the search bred correct children: correct candidates after generation 0" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND generation > 0 AND status = 'correct'")" -ge 1 ]

show=$(kfctl show "$run" --json)
check "16 candidates, each in a final state" \
    [ "$(jq '[.candidates[] | select(.status | IN("correct","incorrect","compile_failed","crashed","timeout","failed"))] | length' <<<"$show")" -eq 16 ]
check "one row per (generation, slot)" \
    [ "$(sql "SELECT count(DISTINCT (generation, slot)) FROM candidates WHERE run_id = $run")" -eq 16 ]
# COORD_FAST's protocol is no longer than the default screen in any floor,
# so there is nothing to screen with: every evaluation is the full one
# (test_fidelity.sh screens).
check "every evaluate job and evaluation ran the full protocol" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE kind = 'evaluate' AND candidate_id IS NOT NULL
              AND fidelity IS DISTINCT FROM 'full'") + $(sql "SELECT count(*) FROM evaluations
              WHERE fidelity IS DISTINCT FROM 'full'")" = "0 + 0" ]
# (A re-verification whose second timing counts adds one of its own:
# kf_verify.c.)
check "at most one evaluation per candidate from its own evaluate jobs" \
    [ "$(sql "SELECT count(*) FROM (SELECT e.candidate_id FROM evaluations e JOIN jobs j ON j.id = e.job_id
              WHERE j.avoid_worker IS NULL GROUP BY 1 HAVING count(*) > 1) d")" -eq 0 ]
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
PIDS+=("$watch_pid")   # stopped by the cleanup if the test dies first
# Interrupt it once it follows the run (it has drawn the run's progress).
check "kfctl watch follows the run" wait_until 60 test -s "$T/watch.out"
kill -INT "$watch_pid"
wait "$watch_pid"
watch_rc=$?
untrack "$watch_pid"
check "Ctrl-C on kfctl watch exits 130" [ $watch_rc -eq 130 ]
check "kfctl watch left no sanitizer report" bash -c "! grep -q Sanitizer '$T/watch.log'"
check "the run goes on after watch leaves" jtrue '.run.status == "running"' kfctl show "$run2" --json
check "kfctl cancel answers" kfctl cancel "$run2"
check "the run is cancelled" jtrue '.run.status == "cancelled"' kfctl show "$run2" --json
check "no job of it is left queued" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $run2 AND state IN ('queued', 'leased')")" -eq 0 ]
finish
