#!/usr/bin/env bash
# test_search_ideas.sh - the idea each attempt is handed (round 6 of issue
# 15; kf_search_idea.c), end to end with the real daemons and the offline
# generator: every search candidate stores the idea it was handed
# (candidates.selection.idea), its prompt leans towards that idea, and the
# planner's record of the run's tries (read from the database for every
# plan) never fails a plan. The rules themselves are tested without a
# database (tests/unit/test_ideas_round6.c).
. "$(dirname "$0")/lib.sh"

db_new
start_coordinator "${COORD_FAST[@]}"
start_workers
check "status answers with three workers" \
    wait_until 180 jtrue '.workers | length == 3' kfctl status --json

out=$(kfctl submit "$ROOT/examples/tasks/softmax/task.json" --generations 3 --population 2 \
      --seed 31 --wait --json --timeout 30 2>"$T/submit.err")
run=$(jq -r .run_id <<<"$out")
say "run $run: $(jq -c '{status, reason}' <<<"$out")"
check "the run is done" [ "$(jq -r .status <<<"$out")" = done ]
say "ideas: $(sql "SELECT string_agg(generation || '/' || slot || ' ' || left(selection->>'idea', 40),
                  '; ' ORDER BY id) FROM candidates WHERE run_id = $run AND phase = 'search'")"
check "all 6 search candidates were planned" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND phase = 'search'")" -eq 6 ]
check "each stores the idea it was handed" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND phase = 'search'
              AND coalesce(selection->>'idea', '') = ''")" -eq 0 ]
check "... and its prompt leans towards that idea" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND phase = 'search'
              AND strpos(prompt, 'This attempt''s idea: ' || (selection->>'idea')) = 0")" -eq 0 ]
check "the two attempts of generation 0 were handed different ideas" \
    [ "$(sql "SELECT count(DISTINCT selection->>'idea') FROM candidates WHERE run_id = $run
              AND phase = 'search' AND generation = 0")" -eq 2 ]
# Round 9: threads for kernels shorter than twice a thread's start (the
# exec worker's figure, split over its CPUs) go last, and the prompt says
# why. A softmax row here takes microseconds: every planned parent is short.
start_us=$(sql "SELECT capabilities->'devices'->0->>'thread_start_join_us' FROM workers
                WHERE role = 'execute' ORDER BY last_seen DESC LIMIT 1")
say "thread start and join: $start_us us; parents' times (ns): $(sql "SELECT string_agg(c.id || ':' || round(e.candidate_ns), ' ' ORDER BY c.id)
     FROM candidates c JOIN evaluations e ON e.candidate_id = c.id AND e.correct WHERE c.run_id = $run")"
check "no attempt from a parent too short for threads was handed threads" \
    [ "$(sql "SELECT count(*) FROM candidates c JOIN candidates p ON p.id = c.parent_id
              JOIN LATERAL (SELECT candidate_ns FROM evaluations WHERE candidate_id = p.id
                            AND correct ORDER BY id DESC LIMIT 1) e ON true
              JOIN LATERAL (SELECT (capabilities->'devices'->0->>'thread_start_join_us')::float8 AS s,
                                   (capabilities->'devices'->0->>'cores')::float8 AS n
                            FROM workers WHERE role = 'execute' ORDER BY last_seen DESC LIMIT 1) w ON true
              WHERE c.run_id = $run AND c.phase = 'search'
              AND e.candidate_ns < 2 * w.s * 1e3 * w.n / greatest(w.n - 1, 1)
              AND c.selection->>'idea' LIKE '%threads%'")" -eq 0 ]
check "... and such prompts leave threads for later, saying why" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND phase = 'search'
              AND prompt LIKE '%Left for later here: %threads%a thread''s start and join costs%'")" -ge 1 ]
check "a tuning candidate is handed no idea" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND phase = 'tuning'
              AND selection->>'idea' IS NOT NULL")" -eq 0 ]
finish
