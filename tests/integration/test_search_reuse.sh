#!/usr/bin/env bash
# test_search_reuse.sh - what the model in the loop flagged in issue 15,
# end to end with the real daemons and the offline generator:
#
# - the host exec worker reports its data caches and SIMD extensions,
#   every host compile job carries the extensions the exec hosts share as
#   its target (so the kernel is built for them, not -march=native), and
#   the prompts say which instruction sets the code is compiled for;
# - a second tuning round does not ask a model to template a kernel that
#   already is a template or has one from the first round: the template
#   is swept again around its winning point (generator "template", no
#   generate job), unless that sweep won at its own defaults (round 22:
#   then the model is asked for a new template; round 30: where that
#   sweep was timed beside other work, the same template is swept once
#   more, generator "template-again", compiled and timed, not taken for
#   a repeat);
# - the meta-prompter's prompt says what became of its earlier edits
#   (each prompt version, its kernels' verdicts and mean fitness) and
#   names the axes of the coordinates.
. "$(dirname "$0")/lib.sh"

db_new
start_coordinator "${COORD_FAST[@]}"
start_workers
check "status answers with three workers" \
    wait_until 180 jtrue '.workers | length == 3' kfctl status --json

isa=$(sql "SELECT capabilities->'devices'->0->>'isa' FROM workers WHERE role = 'execute'")
say "exec worker: $(sql "SELECT capabilities->'devices'->0 FROM workers WHERE role = 'execute'")"
if grep -q '^flags' /proc/cpuinfo && [ -d /sys/devices/system/cpu/cpu0/cache ]; then
    check "the exec worker reports its caches" \
        [ "$(sql "SELECT count(*) FROM workers WHERE role = 'execute'
                  AND (capabilities->'devices'->0->>'l1d_bytes')::bigint > 0
                  AND (capabilities->'devices'->0->>'l2_bytes')::bigint > 0")" -eq 1 ]
    check "and its SIMD extensions" [ -n "$isa" ]
fi

out=$(kfctl submit "$ROOT/examples/tasks/softmax/task.json" --generations 3 --population 2 \
      --seed 21 --set tuning=true --set tuning_rounds=2 --set tuning_configs=3 \
      --set meta_every=1 --wait --json --timeout 30 2>"$T/submit.err")
run=$(jq -r .run_id <<<"$out")
say "run $run: $(jq -c '{status, reason}' <<<"$out")"
check "the run is done" [ "$(jq -r .status <<<"$out")" = done ]

if [ -n "$isa" ]; then
    check "every compile job (the reference's too) targets the exec hosts' extensions" \
        [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $run AND kind = 'compile'
                  AND payload->'target'->>'arch' IS DISTINCT FROM '$isa'")" -eq 0 ]
    check "(there are such jobs)" \
        [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $run AND kind = 'compile'
                  AND candidate_id IS NOT NULL")" -ge 1 ]
    check "the prompts say what the code is compiled for" \
        [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND phase = 'search'
                  AND prompt LIKE '%The code is compiled for the instruction sets the flags above enable%'
                  AND prompt NOT LIKE '%-march=native%'")" -ge 1 ]
fi
# One host runs every worker here: the prompt says the timing shares it
# with compiles (round 3: "the timing machine is shared with compiles").
check "the prompts say the exec host also runs a compile worker" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND phase = 'search'
              AND prompt LIKE '%) is shared: it also runs 1 compile worker, so other candidates may be compiled while this one is timed%'")" -ge 1 ]

first=$(sql "SELECT min(generation) FROM candidates WHERE run_id = $run AND phase = 'tuning'")
say "tuning rounds at generations $first and $((first + 1)): $(sql "SELECT string_agg(
    generation || ':' || id || '<-' || coalesce(parent_id::text, '-') || ' ' || coalesce(generator, '?')
    || ' ' || status, ', ' ORDER BY id) FROM candidates WHERE run_id = $run AND phase = 'tuning'")"
# Round 22: a template whose sweep won at its own defaults is not swept
# again (the same points): the model is asked for a new template, and
# its prompt says why. Which happens depends on the first round's timings.
check "the second round reused a template, or asked anew for one whose sweep stayed" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND phase = 'tuning'
              AND generation = $first + 1
              AND ((generator = 'template'
                    AND prompt LIKE 'No model was asked: candidate % is a template already%')
                   OR (generator = 'template-again'
                       AND prompt LIKE 'No model was asked: candidate %''s sweep found none faster%')
                   OR prompt LIKE '%sweep of % points found none faster than its own defaults%')")" -ge 1 ]
say "second round: $(sql "SELECT count(*) FILTER (WHERE generator = 'template') || ' reused, '
     || count(*) FILTER (WHERE prompt LIKE '%found none faster than its own defaults%')
     || ' templated anew' FROM candidates WHERE run_id = $run AND phase = 'tuning'
     AND generation = $first + 1")"
check "no model was asked to template a kernel that has a template whose sweep moved" \
    [ "$(sql "SELECT count(*) FROM candidates c2
              JOIN jobs j ON j.candidate_id = c2.id AND j.kind = 'generate'
              JOIN candidates p ON p.id = c2.parent_id
              JOIN blobs pb ON pb.hash = p.source_hash
              WHERE c2.run_id = $run AND c2.phase = 'tuning' AND c2.generation = $first + 1
              AND c2.prompt NOT LIKE '%found none faster than its own defaults%'
              AND (position('kf-tune:'::bytea IN pb.data) > 0
                   OR EXISTS (SELECT 1 FROM candidates c1 JOIN blobs b ON b.hash = c1.source_hash
                              WHERE c1.parent_id = p.id AND c1.phase = 'tuning'
                              AND c1.status = 'correct' AND c1.generation = $first
                              AND position('kf-tune:'::bytea IN b.data) > 0))")" -eq 0 ]
#  A reused template can repeat an earlier candidate's source, which takes
#  that one's verdict at once; the run must not end under the rest of its
#  round (kf_search_fill run from inside itself).
check "no candidate is left open after the run ended" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND finished_at IS NULL")" -eq 0 ]
say "tuning candidates that repeated an earlier source: $(sql "SELECT count(*) FROM candidates
     WHERE run_id = $run AND phase = 'tuning' AND generator = 'template'
     AND verdict_detail LIKE 'the same source as candidate%'")"
again=$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND generator = 'template-again'")
say "templates swept again after a sweep beside other work: $again"
if [ "$again" -gt 0 ]; then
    check "each was compiled and timed, not taken for a repeat of its template" \
        [ "$(sql "SELECT count(*) FROM candidates c WHERE c.run_id = $run
                  AND c.generator = 'template-again'
                  AND (c.verdict_detail LIKE 'the same source as candidate%'
                       OR NOT EXISTS (SELECT 1 FROM jobs j WHERE j.candidate_id = c.id
                                      AND j.kind = 'compile'))")" -eq 0 ]
fi
check "a reused template was compiled as a sweep" \
    [ "$(sql "SELECT count(*) FROM jobs j JOIN candidates c ON c.id = j.candidate_id
              WHERE c.run_id = $run AND c.generator = 'template' AND j.kind = 'compile'
              AND (j.payload->>'tune_max_configs')::int = 3")" -ge 1 ]

check "a meta round ran" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $run AND kind = 'meta'")" -ge 1 ]
check "the meta-prompter is told what became of the prompt versions" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $run AND kind = 'meta'
              AND payload->>'prompt' LIKE '%## What became of your earlier edits%'
              AND payload->>'prompt' ~ '- v1 \(the default sections\): [0-9]+ kernels? finished \('")" -ge 1 ]
check "and the coordinates' axes by name" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $run AND kind = 'meta'
              AND payload->>'prompt' LIKE '%Coordinates are the kernel''s cell%'
              AND payload->>'prompt' LIKE '%coordinates {%} (memory (SIMD width, cache blocking) %'")" -ge 1 ]
finish
