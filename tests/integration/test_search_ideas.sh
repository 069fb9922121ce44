#!/usr/bin/env bash
# test_search_ideas.sh - the idea each attempt is handed (round 6 of issue
# 15; kf_search_idea.c), end to end with the real daemons and the offline
# generator: every search candidate stores the idea it was handed
# (candidates.selection.idea), its prompt leans towards that idea, and the
# planner's record of the run's tries (read from the database for every
# plan) never fails a plan, nor does the reading of what the siblings took
# (round 10). The rules themselves are tested without a database
# (tests/unit/test_ideas_round6.c, test_ideas_round10.c).
. "$(dirname "$0")/lib.sh"

db_new
# Debug records: each plan's timings say how many sources it parsed.
start_coordinator "${COORD_FAST[@]}" --verbose
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
# Round 14: tries are told by what their code did, read once when the
# source arrives (kf_prompt_source_features' bits).
check "each candidate with a source keeps what its code does" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND source_hash IS NOT NULL
              AND jsonb_typeof(selection->'features') IS DISTINCT FROM 'number'")" -eq 0 ]
check "... and its prompt leans towards that idea" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND phase = 'search'
              AND strpos(prompt, 'This attempt''s idea: ' || (selection->>'idea')) = 0")" -eq 0 ]
check "the two attempts of generation 0 were handed different ideas" \
    [ "$(sql "SELECT count(DISTINCT selection->>'idea') FROM candidates WHERE run_id = $run
              AND phase = 'search' AND generation = 0")" -eq 2 ]
# Round 10: two siblings from one parent were handed one idea; a sibling
# planned later avoids the idea an earlier one took from the same kernel
# (with 2 slots and 5 ideas one is always left).
check "no two attempts of a generation start from one kernel with one idea" \
    [ "$(sql "SELECT count(*) FROM candidates a JOIN candidates b ON b.run_id = a.run_id
              AND b.generation = a.generation AND b.slot > a.slot AND b.phase = 'search'
              AND b.parent_id = a.parent_id AND b.selection->>'idea' = a.selection->>'idea'
              WHERE a.run_id = $run AND a.phase = 'search'")" -eq 0 ]
# Round 15: a child of the kernel to improve is told by what its code
# added to its parent's, or by how many of its parent's lines it changed
# (kf_prompt_changed.c), beside its verdict.
check "a prompt tells what a child of its kernel changed" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run
              AND (prompt LIKE '%; what its code added to its parent''s: %'
                   OR prompt LIKE '%of its parent''s % lines (its own has%')")" -gt 0 ]
# Each source is parsed once a run, not once a plan (kf_search_idea_cache.h):
# a plan's timings read the run's kernels and parse only the sources no
# earlier plan did; a later plan still reads the kernels judged since.
timings=$(grep -o "run $run: timings of [0-9]* kernels, [0-9]* sources parsed" \
          "$T/coordinator.log")
parsed=$(awk '{ s += $(NF - 2) } END { print s + 0 }' <<<"$timings")
first=$(awk '$(NF - 2) > 0 { print $(NF - 4); exit }' <<<"$timings")
last=$(tail -n 1 <<<"$timings" | awk '{ print $(NF - 4) }')
say "timings: $(grep -c . <<<"$timings") plans, $parsed sources parsed, kernels read" \
    "${first:-none} at the first parse, ${last:-none} at the last plan"
check "the plans parsed no source twice" \
    [ "$parsed" -le "$(sql "SELECT count(DISTINCT source_hash) FROM candidates
                            WHERE run_id = $run AND status = 'correct'")" ]
check "... and a later plan read the kernels judged since the first parse" \
    [ "${last:-0}" -gt "${first:-999999}" ]
check "a tuning candidate is handed no idea" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND phase = 'tuning'
              AND selection->>'idea' IS NOT NULL")" -eq 0 ]
finish
