#!/usr/bin/env bash
# test_meta.sh - meta-prompt evolution end to end, with the real daemons.
#
# 1. A host softmax run whose initial kernel is wrong on ~2% of each row,
#    meta_every=1: the offline meta-prompter's jobs carry the recent
#    outcomes, and every verdict, speedup, runtime and correctness figure
#    in their payloads equals the evaluations table's; its edits name the
#    wrong kernel's real match fraction; accepted edits make new prompt
#    versions that later candidates are written with (their stored
#    prompts carry the evolved line); versions have fitness; kfctl show
#    lists them and --json carries prompt_versions, cells, best and
#    first_correct; each meta job shows the code behind the best and the
#    worst of its outcomes.
# 2. A run whose meta_model is a command that answers with one good edit
#    and three bad ones (search text absent, outside the sections, a
#    forged section marker): the bad ones are rejected and logged with
#    their reasons, the good one makes a version; with two idea edits
#    (one reworded, one dropped) that make its idea list, which later
#    candidates are planned from. It is 3 generations
#    long with the default meta_every, and has meta rounds all the same.
# 3. meta_prompting=false: no meta job, no prompt version, and the
#    prompts still have the default sections.
. "$(dirname "$0")/lib.sh"

# A softmax task whose initial kernel scales the last 100 of every 2048
# elements by 1.5: compiled, run, and wrong with figures to show.
mkdir -p "$T/task"
cp "$ROOT/examples/tasks/softmax/reference.c" "$T/task/"
cat >"$T/task/initial.c" <<'EOF'
#include "kf_kernel.h"
#include <math.h>
int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out, const kf_ctx_t *ctx)
{
    (void) ctx; (void) n_in; (void) n_out;
    int64_t n = in[0].shape[in[0].rank - 1], rows = kf_numel (&in[0]) / n;
    for (int64_t r = 0; r < rows; r++) {
        const float *x = (const float *) in[0].data + r * n;
        float *y = (float *) out[0].data + r * n;
        float mx = -INFINITY;
        for (int64_t i = 0; i < n; i++)
            mx = x[i] > mx ? x[i] : mx;
        double sum = 0;
        for (int64_t i = 0; i < n; i++)
            sum += expf (x[i] - mx);
        for (int64_t i = 0; i < n; i++)
            y[i] = (float) (expf (x[i] - mx) / sum) * (i >= n - 100 ? 1.5f : 1.0f);
    }
    return 0;
}
EOF
jq '.name = "softmax_meta" | .initial = {"language": "c", "file": "initial.c"}' \
    "$ROOT/examples/tasks/softmax/task.json" >"$T/task/task.json"

# The command meta-prompter of part 2 (a script, not a model): one edit
# that applies and three that must not.
cat >"$T/badmeta.sh" <<'EOF'
cat >/dev/null
cat <<'REPLY'
Diagnosis: scripted.
REWORD IDEA 1: SCRIPTED IDEA: read each row once, in one fused pass
DROP IDEA 5: scripted: blocking rows does not pay here
SECTION: pitfalls
<<<<<<< SEARCH
=======
- SCRIPTED GOOD EDIT: check the last elements of every row.
>>>>>>> REPLACE
SECTION: strategies
<<<<<<< SEARCH
this text is in no section
=======
whatever
>>>>>>> REPLACE
<<<<<<< SEARCH
int kf_forward(const kf_tensor_t *in
=======
int my_forward(const kf_tensor_t *in
>>>>>>> REPLACE
SECTION: analysis
<<<<<<< SEARCH
Answer these briefly before the code:
=======
<<<kf:end analysis>>>
>>>>>>> REPLACE
REPLY
EOF
cat >"$T/models.conf" <<EOF
command_badmeta = sh $T/badmeta.sh
EOF

db_new
start_coordinator "${COORD_FAST[@]}"
start gateway "$BIN/kf-llm-gateway" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" \
    --models-file "$T/models.conf"
start compile "$BIN/kf-compile-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
start exec "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
# An exec worker probes for PyTorch before it registers: seconds, many
# more under the sanitizers on a busy machine.
check "status answers with three workers" \
    wait_until 180 jtrue '.workers | length == 3' kfctl status --json

# ---- 1: the offline meta-prompter -------------------------------------
out=$(kfctl submit "$T/task/task.json" --generations 6 --population 4 --seed 11 \
      --set meta_every=1 --set meta_max_edits=3 --set tuning=false \
      --wait --json --timeout 30 2>"$T/submit1.err")
check "run 1 finishes" [ "$(jq -r .status <<<"$out")" = done ]
run=$(jq -r .run_id <<<"$out")
say "run $run: $(jq -c . <<<"$out")"

check "the wrong initial kernel was judged incorrect, with figures" \
    [ "$(sql "SELECT count(*) FROM evaluations e JOIN candidates c ON c.id = e.candidate_id
              WHERE c.run_id = $run AND c.generator = 'initial' AND e.verdict = 'incorrect'
              AND (e.figures->'correctness'->>'match_fraction')::float8 < 1")" -eq 1 ]
meta_done=$(sql "SELECT count(*) FROM jobs WHERE run_id = $run AND kind = 'meta' AND state = 'done'")
say "meta jobs done: $meta_done"
check "meta jobs ran (role generate, kind meta)" [ "$meta_done" -ge 2 ]
check "a meta job's result is text from the offline meta-prompter" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $run AND kind = 'meta' AND state = 'done'
              AND result->>'text' LIKE 'Diagnosis:%' AND role = 'generate'")" -eq "$meta_done" ]

# Every outcome a meta job was shown, against the evaluation it names.
compared=$(sql "SELECT count(*) FROM jobs j, jsonb_array_elements(j.payload->'outcomes') o
                WHERE j.run_id = $run AND j.kind = 'meta' AND o ? 'evaluation_id'")
mismatched=$(sql "SELECT count(*) FROM jobs j, jsonb_array_elements(j.payload->'outcomes') o,
                  evaluations e
                  WHERE j.run_id = $run AND j.kind = 'meta'
                  AND e.id = (o->>'evaluation_id')::bigint
                  AND (e.candidate_id <> (o->>'candidate_id')::bigint
                       OR e.verdict IS DISTINCT FROM o->>'verdict'
                       OR e.correct IS DISTINCT FROM (o->>'correct')::boolean
                       OR e.speedup IS DISTINCT FROM (o->>'speedup')::float8
                       OR e.candidate_ns IS DISTINCT FROM (o->>'candidate_ns')::float8
                       OR e.reference_ns IS DISTINCT FROM (o->>'reference_ns')::float8
                       OR e.figures->'correctness' IS DISTINCT FROM o->'correctness')")
say "outcomes shown to meta jobs: $compared, differing from evaluations: $mismatched"
check "meta jobs were shown evaluated outcomes" [ "$compared" -ge 4 ]
check "every figure shown equals the evaluations table" [ "$mismatched" -eq 0 ]
check "a correct outcome with its speedup was shown" \
    [ "$(sql "SELECT count(*) FROM jobs j, jsonb_array_elements(j.payload->'outcomes') o
              WHERE j.run_id = $run AND j.kind = 'meta' AND o->>'verdict' = 'correct'
              AND (o->>'speedup')::float8 > 0")" -ge 1 ]
check "the wrong kernel's correctness figures were shown" \
    [ "$(sql "SELECT count(*) FROM jobs j, jsonb_array_elements(j.payload->'outcomes') o
              WHERE j.run_id = $run AND j.kind = 'meta' AND o->>'verdict' = 'incorrect'
              AND (o->'correctness'->>'match_fraction')::float8 < 1")" -ge 1 ]
check "unevaluated outcomes (compile failures) carry no evaluation figures" \
    [ "$(sql "SELECT count(*) FROM jobs j, jsonb_array_elements(j.payload->'outcomes') o
              WHERE j.run_id = $run AND j.kind = 'meta' AND NOT o ? 'evaluation_id'
              AND (o ? 'speedup' OR o ? 'correctness')")" -eq 0 ]

# The meta-prompter's edit states the real figure: the wrong kernel's
# match fraction as a percentage.
pct=$(sql "SELECT to_char(100 * (e.figures->'correctness'->>'match_fraction')::float8, 'FM990.00')
           FROM evaluations e JOIN candidates c ON c.id = e.candidate_id
           WHERE c.run_id = $run AND c.generator = 'initial'")
say "the wrong kernel matched ${pct}% of elements"
check "an accepted edit quotes the measured match fraction (${pct}%)" \
    [ "$(sql "SELECT count(*) FROM prompt_edits WHERE run_id = $run AND accepted
              AND replace LIKE '%worst: ${pct}\% of elements%'")" -ge 1 ]
versions=$(sql "SELECT count(*) FROM prompt_versions WHERE run_id = $run")
say "prompt versions: $versions"
check "accepted edits made new prompt versions" [ "$versions" -ge 2 ]
check "each version after the first has a parent and its edits" \
    [ "$(sql "SELECT count(*) FROM prompt_versions WHERE run_id = $run AND number > 1
              AND (parent_id IS NULL OR jsonb_array_length(edits) = 0 OR meta_job_id IS NULL)")" -eq 0 ]
# Round 7 of issue 15: v2 became v3 before any kernel written with v2
# had finished. A round waits for a verdict on the version it edits.
say "meta jobs (parent version: its kernels finished when queued): $(sql "SELECT string_agg(
         'v' || (j.payload->>'parent_version') || ': ' || (SELECT count(*) FROM candidates c
         WHERE c.prompt_version_id = (j.payload->>'parent_version_id')::bigint
         AND c.finished_at <= j.created_at), ', ' ORDER BY j.id)
         FROM jobs j WHERE j.run_id = $run AND j.kind = 'meta'")"
check "no meta round edited a version none of whose kernels had finished" \
    [ "$(sql "SELECT count(*) FROM jobs j WHERE j.run_id = $run AND j.kind = 'meta'
              AND NOT EXISTS (SELECT 1 FROM candidates c
                  WHERE c.prompt_version_id = (j.payload->>'parent_version_id')::bigint
                  AND c.finished_at <= j.created_at)")" -eq 0 ]
check "every accepted edit points at the version it made" \
    [ "$(sql "SELECT count(*) FROM prompt_edits WHERE run_id = $run AND accepted AND version_id IS NULL")" -eq 0 ]
check "later candidates were written with an evolved version" \
    [ "$(sql "SELECT count(*) FROM candidates c JOIN prompt_versions v ON v.id = c.prompt_version_id
              WHERE c.run_id = $run AND v.number > 1")" -ge 1 ]
check "an evolved version's line reached a stored generation prompt" \
    [ "$(sql "SELECT count(*) FROM candidates c JOIN prompt_versions v ON v.id = c.prompt_version_id
              WHERE c.run_id = $run AND v.number > 1 AND c.prompt LIKE '%- Observed (%'")" -ge 1 ]
# Each kernel's value: its fitness when it failed, else its speedup on a
# log scale against the run's best (kf_meta_score.h).
check "the first version was used and has a fitness (the mean value of its latest 16 kernels)" \
    [ "$(sql "SELECT count(*) FROM prompt_versions v WHERE v.run_id = $run AND v.number = 1
              AND abs(v.fitness - (SELECT avg(CASE WHEN w.fitness >= 0.5 AND w.speedup > 0
                    THEN 0.5 + 0.5 * ln(1 + w.speedup) / ln(1 + greatest(b.best, w.speedup))
                    ELSE w.fitness END)
                  FROM (SELECT fitness, speedup FROM candidates
                  WHERE prompt_version_id = v.id AND finished_at IS NOT NULL
                  ORDER BY finished_at DESC, id DESC LIMIT 16) w,
                  (SELECT max(speedup) AS best FROM candidates WHERE run_id = $run
                   AND finished_at IS NOT NULL AND fitness >= 0.5 AND speedup > 0) b)) < 1e-9")" -eq 1 ]

# The code behind the best and the worst of the outcomes a job showed.
ends="FROM jobs j WHERE j.run_id = $run AND j.kind = 'meta'"
check "a meta job was shown the code behind its best and its worst outcome" \
    [ "$(sql "SELECT count(*) $ends AND j.payload ? 'best_outcome' AND j.payload ? 'worst_outcome'
              AND strpos(j.payload->>'prompt', '## The best of these outcomes (candidate '
                         || (j.payload->'best_outcome'->>'candidate_id') || ':') > 0
              AND strpos(j.payload->>'prompt', '## The worst of these outcomes (candidate '
                         || (j.payload->'worst_outcome'->>'candidate_id') || ':') > 0")" -ge 1 ]
check "... their sources are in its prompt" \
    [ "$(sql "SELECT count(*) $ends AND EXISTS (SELECT 1 FROM candidates c JOIN blobs b ON b.hash = c.source_hash
              WHERE c.id IN ((j.payload->'best_outcome'->>'candidate_id')::bigint,
                             (j.payload->'worst_outcome'->>'candidate_id')::bigint)
              AND strpos(j.payload->>'prompt', left(convert_from(b.data, 'UTF8'), 300)) = 0)")" -eq 0 ]
# By the fitness each outcome had when the job was made (a re-verification
# or a repeat's figure may move it later).
fit_of="(SELECT (b->>'fitness')::float8 FROM jsonb_array_elements(j.payload->'outcomes') b
         WHERE b->>'candidate_id' = j.payload->"
check "... the best the fittest of the outcomes shown, the worst the least fit" \
    [ "$(sql "SELECT count(*) $ends AND EXISTS (SELECT 1 FROM jsonb_array_elements(j.payload->'outcomes') o
              JOIN candidates c ON c.id = (o->>'candidate_id')::bigint
              WHERE c.source_hash IS NOT NULL
              AND ((o->>'fitness')::float8 > $fit_of'best_outcome'->>'candidate_id')
                   OR (o->>'fitness')::float8 < $fit_of'worst_outcome'->>'candidate_id')))")" -eq 0 ]
check "the outcomes carry their fitness" \
    [ "$(sql "SELECT count(*) $ends AND EXISTS (SELECT 1 FROM jsonb_array_elements(j.payload->'outcomes') o
              WHERE o->>'status' = 'correct' AND NOT o ? 'fitness')")" -eq 0 ]

kfctl show "$run" >"$T/show.txt"
check "kfctl show lists the prompt versions" grep -q "^prompt versions: $versions" "$T/show.txt"
check "kfctl show gives an edit in short" grep -q 'pitfalls: ' "$T/show.txt"
kfctl show "$run" --json >"$T/show.json"
check "show --json: prompt_versions with numbers, parents and fitness" \
    jq -e ".prompt_versions | length == $versions and (.[1].parent == 1) and (.[0].fitness > 0)" "$T/show.json"
check "show --json: cells with coordinates, elite id and speedup" \
    jq -e '(.cells | length) >= 1 and all(.cells[]; (.coords | length) == 3 and .candidate_id > 0 and .speedup > 0)' "$T/show.json"
check "show --json: best and first_correct with the run's speedups" \
    jq -e '.best.candidate_id == .run.best_candidate_id and .best.speedup == .run.best_speedup
           and .first_correct.speedup == .run.first_speedup and (.best.coords | length) == 3' "$T/show.json"
sed -n '/^prompt versions/,/^$/p' "$T/show.txt" >&2

# ---- 2: a meta-prompter whose edits do not all apply ------------------
# With the default meta_every (10): a run of 3 generations still gets
# its rounds, one every generation (a quarter of the run, rounded up).
out=$(kfctl submit "$ROOT/examples/tasks/softmax/task.json" --generations 3 --population 3 \
      --seed 5 --set meta_model=command:badmeta --set tuning=false \
      --wait --json --timeout 30 2>"$T/submit2.err")
check "run 2 finishes" [ "$(jq -r .status <<<"$out")" = done ]
run2=$(jq -r .run_id <<<"$out")
check "run 2 ran with the default meta_every (10)" \
    [ "$(sql "SELECT config->>'meta_every' FROM runs WHERE id = $run2")" = 10 ]
check "... and had a meta round in its 3 generations" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $run2 AND kind = 'meta'")" -ge 1 ]
check "run 2's meta jobs went to the command model" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $run2 AND kind = 'meta' AND state = 'done'
              AND payload->>'model' = 'command:badmeta' AND result->>'generator' = 'command'")" -ge 1 ]
first_job=$(sql "SELECT min(job_id) FROM prompt_edits WHERE run_id = $run2")
sql "SELECT accepted, coalesce(reason, '-') FROM prompt_edits WHERE job_id = $first_job ORDER BY id" >&2
check "the good edit was accepted" \
    [ "$(sql "SELECT count(*) FROM prompt_edits WHERE job_id = $first_job AND accepted
              AND section = 'pitfalls' AND replace LIKE '%SCRIPTED GOOD EDIT%'")" -eq 1 ]
check "absent search text: rejected and logged" \
    [ "$(sql "SELECT count(*) FROM prompt_edits WHERE job_id = $first_job AND NOT accepted
              AND reason LIKE 'search text not found%'")" -eq 1 ]
check "text outside the sections: rejected and logged" \
    [ "$(sql "SELECT count(*) FROM prompt_edits WHERE job_id = $first_job AND NOT accepted
              AND reason = 'search text is outside the evolvable sections'")" -eq 1 ]
check "a forged marker: rejected and logged" \
    [ "$(sql "SELECT count(*) FROM prompt_edits WHERE job_id = $first_job AND NOT accepted
              AND reason = 'edits a section marker'")" -eq 1 ]
check "the coordinator's log names the rejections" grep -q "edit rejected: search text is outside" "$T/coordinator.log"
check "the version made by the good edits holds them, and only them" \
    [ "$(sql "SELECT count(*) FROM prompt_versions WHERE meta_job_id = $first_job
              AND jsonb_array_length(edits) = 3 AND sections->>'pitfalls' LIKE '%SCRIPTED GOOD EDIT%'
              AND sections->>'analysis' NOT LIKE '%<<<kf:%'")" -eq 1 ]
# Round 14: the idea list, edited by place (kf_meta_ideas.h).
check "the meta prompt lists the ideas, numbered" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE id = $first_job
              AND payload->>'prompt' LIKE '%## Ideas (each attempt%1. read each row once%5. reuse cached%'")" -eq 1 ]
check "both idea edits were accepted and logged" \
    [ "$(sql "SELECT count(*) FROM prompt_edits WHERE job_id = $first_job AND accepted
              AND section = 'ideas'")" -eq 2 ]
check "the version holds the reworded idea in its place and the dropped one marked" \
    [ "$(sql "SELECT count(*) FROM prompt_versions WHERE meta_job_id = $first_job
              AND sections->'ideas'->0->>'text' LIKE 'SCRIPTED IDEA:%'
              AND sections->'ideas'->4->>'dropped' LIKE 'scripted:%'
              AND jsonb_array_length(sections->'ideas') = 5")" -eq 1 ]
v2="SELECT id FROM prompt_versions WHERE meta_job_id = $first_job"
under=$(sql "SELECT count(*) FROM candidates WHERE prompt_version_id = ($v2) AND phase = 'search'")
say "search candidates written with the version the idea edits made: $under"
check "no candidate of that version was handed the dropped idea" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE prompt_version_id = ($v2)
              AND selection->>'idea' LIKE 'reuse cached data across rows%'")" -eq 0 ]
if [ "$under" -gt 0 ]; then
    check "the reworded idea reached the kernel prompts of that version" \
        [ "$(sql "SELECT count(*) FROM candidates WHERE prompt_version_id = ($v2)
                  AND prompt LIKE '%SCRIPTED IDEA: read each row once%'")" -ge 1 ]
fi
check "kfctl show counts the rejected edits" \
    sh -c "'$BIN/kfctl' show $run2 | grep -q '^rejected edits: '"

# ---- 3: meta_prompting=false --------------------------------------------
out=$(kfctl submit "$ROOT/examples/tasks/softmax/task.json" --generations 3 --population 3 \
      --seed 5 --set meta_every=1 --set meta_prompting=false --set tuning=false \
      --wait --json --timeout 30 2>"$T/submit3.err")
check "run 3 finishes" [ "$(jq -r .status <<<"$out")" = done ]
run3=$(jq -r .run_id <<<"$out")
check "switched off: no meta job" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $run3 AND kind = 'meta'")" -eq 0 ]
check "switched off: no prompt version, no candidate tied to one" \
    [ "$(sql "SELECT (SELECT count(*) FROM prompt_versions WHERE run_id = $run3)
              + (SELECT count(*) FROM candidates WHERE run_id = $run3 AND prompt_version_id IS NOT NULL)")" -eq 0 ]
check "switched off: prompts keep the default sections" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run3 AND prompt LIKE '%<<<kf:pitfalls>>>%'
              AND prompt NOT LIKE '%- Observed (%'")" -eq "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run3 AND prompt IS NOT NULL")" ]
no_open_jobs() { [ "$(sql "SELECT count(*) FROM jobs WHERE state IN ('queued','leased')")" -eq 0 ]; }
check "no job left queued or leased" wait_until 60 no_open_jobs
finish
