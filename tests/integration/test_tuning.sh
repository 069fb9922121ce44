#!/usr/bin/env bash
# test_tuning.sh - the tuning sweep end to end: the offline generator's
# softmax sources declare kf-tune spaces, the compile worker builds up to
# its cap of points, the exec worker screens each built config against
# the reference and times the best two again in full, and the coordinator
# stores the whole table (fidelity, limits, what did not run and why) with
# the evaluation and names the best config in the candidate's detail.
. "$(dirname "$0")/lib.sh"

db_new
# Every correct result is timed again (and holds whatever the load made
# of it), so a swept candidate's re-verification is there to check on a
# busy machine too: as a would-be new best alone it was not, where the
# load left the sweep's figure below the run's best.
start_coordinator "${COORD_FAST[@]}" --plausible-outlier-factor 0 --plausible-min-counted 0 \
    --verify-tolerance 1
start_workers
# An exec worker probes for PyTorch before it registers: seconds, many
# more under the sanitizers on a busy machine.
check "status answers with three workers" \
    wait_until 180 jtrue '.workers | length == 3' kfctl status --json

out=$(kfctl submit "$ROOT/examples/tasks/softmax/task.json" --generations 1 --population 2 \
      --seed 11 --tune 16 --wait --json --timeout 30 2>"$T/submit.err")
rc=$?
echo "$out" >"$T/submit.json"
check "submit --wait exits 0" [ "$rc" -eq 0 ]
check "the run is done" [ "$(jq -r .status <<<"$out")" = done ]
run=$(jq -r .run_id <<<"$out")

check "every evaluation carries a configs table of more than one entry" \
    [ "$(sql "SELECT count(*) FROM evaluations e JOIN candidates c ON c.id = e.candidate_id
              WHERE c.run_id = $run AND jsonb_array_length(e.figures::jsonb->'configs') > 1")" -ge 1 ]
check "no evaluation of the run lacks the table" \
    [ "$(sql "SELECT count(*) FROM evaluations e JOIN candidates c ON c.id = e.candidate_id
              WHERE c.run_id = $run AND e.figures::jsonb->'configs' IS NULL")" -eq 0 ]
check "each row of a table has params and a verdict" \
    [ "$(sql "SELECT count(*) FROM evaluations e JOIN candidates c ON c.id = e.candidate_id,
              jsonb_array_elements(e.figures::jsonb->'configs') r
              WHERE c.run_id = $run AND (r->'params' IS NULL OR r->>'verdict' IS NULL)")" -eq 0 ]
check "a correct evaluation names its best config, one of its table" \
    [ "$(sql "SELECT count(*) FROM evaluations e JOIN candidates c ON c.id = e.candidate_id
              WHERE c.run_id = $run AND e.verdict = 'correct'
              AND e.figures::jsonb->'configs' @> jsonb_build_array(jsonb_build_object('params', e.figures::jsonb->'best_config'))")" -ge 1 ]
detail=$(sql "SELECT verdict_detail FROM candidates WHERE run_id = $run AND status = 'correct' ORDER BY id LIMIT 1")
say "detail: $detail"
check "the correct candidate's detail names its best config" \
    grep -Eq 'best of [0-9]+ configs: .*LANES=[0-9]+' <<<"$detail"
check "the sweep's timing share is recorded" \
    [ "$(sql "SELECT count(*) FROM evaluations e JOIN candidates c ON c.id = e.candidate_id
              WHERE c.run_id = $run AND (e.figures->'tuning'->>'configs')::int > 1")" -ge 1 ]
check "each sweep records its limits and why" \
    [ "$(sql "SELECT count(*) FROM evaluations e JOIN candidates c ON c.id = e.candidate_id
              WHERE c.run_id = $run AND e.figures::jsonb->'configs' IS NOT NULL
              AND ((e.figures::jsonb->'tuning'->>'first_limit_s') IS NULL
                   OR (e.figures::jsonb->'tuning'->>'job_limit_s') IS NULL
                   OR (e.figures::jsonb->'tuning'->>'limit_why') IS NULL)")" -eq 0 ]
check "every row that ran names its fidelity, every row that did not says why" \
    [ "$(sql "SELECT count(*) FROM evaluations e JOIN candidates c ON c.id = e.candidate_id,
              jsonb_array_elements(e.figures::jsonb->'configs') r
              WHERE c.run_id = $run
              AND CASE WHEN (r->>'ran')::boolean THEN coalesce(r->>'fidelity', '') NOT IN ('screen', 'full')
                       ELSE r->>'skipped_reason' IS NULL OR r->>'verdict' <> 'not_run' END")" -eq 0 ]
check "a correct tuned evaluation's best config was timed with the full protocol" \
    [ "$(sql "SELECT count(*) FROM evaluations e JOIN candidates c ON c.id = e.candidate_id
              WHERE c.run_id = $run AND e.verdict = 'correct'
              AND e.figures::jsonb->>'fidelity' = 'full'
              AND e.figures::jsonb->'configs' @> jsonb_build_array(jsonb_build_object(
                  'params', e.figures::jsonb->'best_config', 'fidelity', 'full'))")" -ge 1 ]
check "at most sweep_full_configs (2) rows of a table are timed in full" \
    [ "$(sql "SELECT count(*) FROM evaluations e JOIN candidates c ON c.id = e.candidate_id
              WHERE c.run_id = $run AND (SELECT count(*) FROM jsonb_array_elements(e.figures::jsonb->'configs') r
                                         WHERE r->>'fidelity' = 'full') > 2")" -eq 0 ]
check "every compiled point of a compile table carries the coordinates of its build" \
    [ "$(sql "SELECT count(*) FROM jobs j JOIN candidates c ON c.id = j.candidate_id,
              jsonb_array_elements(j.result->'configs') r
              WHERE c.run_id = $run AND j.kind = 'compile' AND (r->>'compiled')::boolean
              AND jsonb_array_length(r->'coords') IS DISTINCT FROM 3")" -eq 0 ]
# A correct tuned candidate sits in the cell of the point its sweep chose.
winning="FROM candidates c JOIN evaluations e ON e.candidate_id = c.id
         JOIN jobs j ON j.candidate_id = c.id AND j.kind = 'compile' AND j.state = 'done',
         jsonb_array_elements(j.result->'configs') r
         WHERE c.run_id = $run AND c.status = 'correct' AND r->'params' = e.figures->'best_config'"
check "a correct tuned candidate has the coordinates of its winning point" \
    [ "$(sql "SELECT count(*) $winning")" -ge 1 ] &&
    [ "$(sql "SELECT count(*) $winning AND c.coords::text <>
              '{' || (r->'coords'->>0) || ',' || (r->'coords'->>1) || ',' || (r->'coords'->>2) || '}'")" -eq 0 ]
check "... and says so" \
    [ "$(sql "SELECT count(*) $winning AND c.coords_why NOT LIKE 'the point the sweep chose (%'")" -eq 0 ]
# Round 42: a swept candidate timed again swept again, the faster of its
# points counting each time: a re-verification times the counted point
# alone, its artifact and the reference.
say "re-verifications: $(sql "SELECT string_agg(j.id || ' configs ' || jsonb_array_length(coalesce(j.payload->'configs', '[]'))
     || ' blobs ' || cardinality(j.blobs), ', ') FROM jobs j
     WHERE j.run_id = $run AND j.kind = 'evaluate' AND j.avoid_worker IS NOT NULL")"
check "a swept candidate was re-verified" \
    [ "$(sql "SELECT count(*) FROM jobs j JOIN jobs f ON f.candidate_id = j.candidate_id
              AND f.kind = 'evaluate' AND f.avoid_worker IS NULL
              AND jsonb_array_length(coalesce(f.payload->'configs', '[]')) > 1
              WHERE j.run_id = $run AND j.kind = 'evaluate' AND j.avoid_worker IS NOT NULL")" -ge 1 ]
check "... its re-verification timed the counted point alone" \
    [ "$(sql "SELECT count(*) FROM jobs j JOIN jobs f ON f.candidate_id = j.candidate_id
              AND f.kind = 'evaluate' AND f.avoid_worker IS NULL
              AND jsonb_array_length(coalesce(f.payload->'configs', '[]')) > 1
              WHERE j.run_id = $run AND j.kind = 'evaluate' AND j.avoid_worker IS NOT NULL
              AND (jsonb_array_length(coalesce(j.payload->'configs', '[]')) <> 1
                   OR cardinality(j.blobs) <> 2)")" -eq 0 ]
# Round 45: a tuned candidate takes its winning point's coordinates, and
# the cell it held under its template's was left with a figure it no
# longer had (143.27x beside the 139.43x that counted).
check "no candidate holds two archive cells" \
    [ "$(sql "SELECT count(*) FROM (SELECT candidate_id FROM archive_cells
              GROUP BY run_id, candidate_id HAVING count(*) > 1) x")" -eq 0 ]
check "no archive cell holds a figure its candidate no longer has" \
    [ "$(sql "SELECT count(*) FROM archive_cells a JOIN candidates c ON c.id = a.candidate_id
              WHERE abs(a.speedup - c.speedup) > 1e-9 * c.speedup")" -eq 0 ]
check "no job left queued or leased" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE state IN ('queued','leased')")" -eq 0 ]
check "the coordinator counted no malformed message" \
    jtrue '.counters.malformed == 0' kfctl status --json
finish
