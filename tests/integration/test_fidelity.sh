#!/usr/bin/env bash
# test_fidelity.sh - multi-fidelity timing (docs/search.md, "Fidelity"):
# every candidate is screened with a short protocol; one whose screen
# comes within full_margin of its cell's elite or the run's best is timed
# again with the full protocol before it counts, the others stay final at
# fidelity 'screen' and are never the run's best. The state is in the
# database, so a coordinator killed while a full evaluation runs carries
# on.
#
# The speeds are arranged, not measured: a command generator hands out
# the same softmax in two versions whose code differs only in a constant
# (so they share one archive cell): "slow" repeats the work REPS=20 times,
# "fast" once. With max_in_flight 1 the candidates are evaluated one after
# another: a fast one first (no counted best yet: timed in full), then
# slow ones (a twentieth of the best: screened out by a margin of 0.3),
# another fast one (near the best: timed in full), then slow ones again.
# A factor of six below the margin and three above it leave room for a
# short screen's noise on a busy machine (seen: 2.4x for a 1.4x kernel). While the second fast one's full evaluation runs, the
# test freezes it (its process, so it cannot end between the look and the
# kill) and kills the coordinator with -9.
. "$(dirname "$0")/lib.sh"

db_new
# The full protocol longer than the run's screen, so there is something
# to screen with (with COORD_FAST's protocol no screen would be shorter).
FULL=(--eval-min-time-s 0.3 --eval-warmup-s 0.1 --eval-min-samples 5 --eval-warmup-calls 2)
COORD=("${COORD_HB[@]}" "${FULL[@]}" --search-defaults "$ROOT/tests/fixtures/search/fast-defaults.json")
SCREEN='{"min_time_s": 0.05, "min_samples": 3, "warmup_s": 0.02, "warmup_calls": 1}'

cat >"$T/kernel.in" <<C
#define _POSIX_C_SOURCE 200809L
#include "kf_kernel.h"
#include <math.h>

#define REPS @REPS@

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) ctx;
    if (n_in < 1 || n_out < 1 || in[0].dtype != KF_F32 || out[0].dtype != KF_F32
        || in[0].rank < 1 || kf_numel (&in[0]) != kf_numel (&out[0]))
        return 1;
    int64_t n = in[0].shape[in[0].rank - 1];
    int64_t rows = kf_numel (&in[0]) / n;
    const float *x = in[0].data;
    float *y = out[0].data;
    volatile int reps = REPS;
    for (int rep = 0; rep < reps; rep++)
        for (int64_t r = 0; r < rows; r++) {
            const float *xr = x + r * n;
            float *yr = y + r * n;
            float mx = -INFINITY;
            for (int64_t i = 0; i < n; i++)
                mx = xr[i] > mx ? xr[i] : mx;
            double sum = 0;
            for (int64_t i = 0; i < n; i++)
                sum += expf (xr[i] - mx);
            for (int64_t i = 0; i < n; i++)
                yr[i] = (float) (expf (xr[i] - mx) / sum);
        }
    return 0;
}
C
# The generator: its first and fourth kernels are fast, the others slow.
cat >"$T/gen.sh" <<EOF
cat >/dev/null
n=\$((\$(cat "$T/gen.count" 2>/dev/null || echo 0) + 1))
echo "\$n" >"$T/gen.count"
case "\$n" in 1|4) reps=1 ;; *) reps=20 ;; esac
printf '\`\`\`c\n'
sed -e "s/@REPS@/\$reps/" "$T/kernel.in"
printf '\`\`\`\n'
EOF
# A second generator hands out the fast kernel every time: its second
# kernel repeats its first (the last run below).
cat >"$T/same.sh" <<EOF
cat >/dev/null
printf '\`\`\`c\n'
sed -e "s/@REPS@/1/" "$T/kernel.in"
printf '\`\`\`\n'
EOF
printf 'command_gen = sh %s/gen.sh\ncommand_same = sh %s/same.sh\n' "$T" "$T" >"$T/models.conf"

start_coordinator "${COORD[@]}"
start gateway "$BIN/kf-llm-gateway" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" \
    --models-file "$T/models.conf"
start compile "$BIN/kf-compile-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
start exec "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
EXEC_PID=$PID
check "three workers" wait_until 180 jtrue '.workers | length == 3' kfctl status --json

# dedup off: the generator hands out two sources only (fast and slow), and
# each candidate must be timed, not take an earlier one's verdict. Meta
# prompts off: a meta round would take one of the generator's answers
# (the fast kernel its 4th call hands out) in place of a candidate.
run=$(kfctl submit "$ROOT/examples/tasks/softmax/task.json" --generations 2 --population 3 --seed 9 --model command:gen \
      --set max_in_flight=1 --set full_margin=0.3 --set "screen_timing=$SCREEN" --set dedup=false \
      --set meta_prompting=false --set confirm_best=false --json \
      2>"$T/submit.err" | jq -r .run_id)
check "run submitted" [ -n "$run" ]

# Past the first candidate (timed in full too: nothing counted before it).
pending_job() {
    sql "SELECT j.id FROM jobs j JOIN candidates c ON c.id = j.candidate_id
         WHERE c.run_id = $run AND c.fidelity = 'pending' AND j.kind = 'evaluate'
         AND j.fidelity = 'full' AND j.state = 'leased' AND (c.generation, c.slot) <> (0, 0)"
}
check "a screen came near the best: its full-protocol evaluation is leased" \
    wait_until 400 eval '[ -n "$(pending_job)" ]'
job=$(pending_job)
# Freeze it (the worker runs each evaluation in a subprocess), so it
# cannot end before the coordinator is killed.
check "... and running" wait_until 60 eval '[ -n "$(live_descendants "$EXEC_PID")" ]'
child=
for c in $(live_descendants "$EXEC_PID"); do kill -STOP "$c" 2>/dev/null && child="$child $c"; done
say "froze the exec worker's children:${child:- none}"
fast=$(sql "SELECT candidate_id FROM jobs WHERE id = ${job:-0}")
fast=${fast:-0}
initial=$(sql "SELECT id FROM candidates WHERE run_id = $run AND generation = 0 AND slot = 0")
src() {   # src CANDIDATE: its source
    sql "SELECT convert_from(b.data, 'UTF8') FROM blobs b JOIN candidates c ON c.source_hash = b.hash
         WHERE c.id = $1"
}
say "initial $initial; timed in full after its screen: $fast; $(sql "SELECT string_agg(id || ' ' || coalesce(fidelity, '-') || ' ' || coalesce(round(speedup::numeric, 3)::text, '-'), ', ' ORDER BY id) FROM candidates WHERE run_id = $run")"
check "all kernels share one archive cell (the premise of the margin rule here)" \
    [ "$(sql "SELECT count(DISTINCT coords) FROM candidates WHERE run_id = $run AND coords IS NOT NULL")" = 1 ]
check "the one near the best is a fast kernel" grep -q 'define REPS 1$' <(src "$fast")
check "the first kernel (no best yet) was screened, then timed in full: it counts" \
    [ "$(sql "SELECT fidelity = 'full' AND screen_speedup > 0 FROM candidates WHERE id = $initial")" = t ]
timing() {   # timing CANDIDATE: its evaluate jobs, "fidelity min_time_s min_samples seed", in order
    sql "SELECT string_agg(fidelity || ' ' || round((payload->'timing'->>'min_time_s')::numeric, 3)
                || ' ' || (payload->'timing'->>'min_samples') || ' ' || (payload->>'seed'), ','
                ORDER BY id) FROM jobs WHERE candidate_id = $1 AND kind = 'evaluate'"
}
seed_of() { sql "SELECT payload->>'seed' FROM jobs WHERE candidate_id = $1 AND kind = 'evaluate' ORDER BY id LIMIT 1"; }
check "... by two evaluate jobs with one seed: a screen with the run's screen_timing, then the full protocol" \
    [ "$(timing "$initial")" = "screen 0.050 3 $(seed_of "$initial"),full 0.300 5 $(seed_of "$initial")" ]
check "... each recorded as an evaluation naming its fidelity" \
    [ "$(sql "SELECT string_agg(fidelity, ',' ORDER BY id) FROM evaluations WHERE candidate_id = $initial")" = "screen,full" ]
check "the slow kernels evaluated so far stayed at fidelity screen" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND id NOT IN ($initial, $fast)
              AND finished_at IS NOT NULL AND status = 'correct' AND fidelity = 'screen'")" -ge 2 ]
check "... each with one evaluate job, a screen" \
    [ "$(sql "SELECT count(*) FROM candidates c WHERE run_id = $run AND fidelity = 'screen'
              AND (SELECT string_agg(j.fidelity, ',') FROM jobs j WHERE j.candidate_id = c.id
                   AND j.kind = 'evaluate') IS DISTINCT FROM 'screen'")" = 0 ]
check "the waiting one is final and correct, with its screen figure" \
    [ "$(sql "SELECT status = 'correct' AND finished_at IS NOT NULL AND speedup = screen_speedup
              FROM candidates WHERE id = $fast")" = t ]
check "while it waits it does not count, and the run does not end" \
    [ "$(sql "SELECT best_candidate_id = $initial AND status = 'running' FROM runs WHERE id = $run")" = t ]
check "... nor do the screened-out ones" \
    [ "$(sql "SELECT count(*) FROM runs r JOIN candidates c ON c.id = r.best_candidate_id
              WHERE r.id = $run AND c.fidelity = 'full'")" = 1 ]
kfctl show "$run" >"$T/show-pending.txt"
check "kfctl show lists it as pending" grep -qE "^ *$fast .* pending " "$T/show-pending.txt"
check "kfctl show lists the slow ones as screen" grep -qE "^ *[0-9]+ .* screen " "$T/show-pending.txt"
check "kfctl show counts them" grep -qE "^fidelity: [0-9]+ correct candidates screened out .*, 1 being timed with the full protocol" "$T/show-pending.txt"

# The state is in the database: a coordinator killed now finds it again.
kill_hard "$COORD_PID"
start_coordinator "${COORD[@]}"
check "the coordinator is back and shows the run running" \
    wait_until 120 jtrue '.run.status == "running"' kfctl show "$run" --json
check "after the restart the candidate still waits for its full evaluation" \
    [ "$(sql "SELECT fidelity FROM candidates WHERE id = $fast")" = pending ]
for c in $child; do kill -CONT "$c" 2>/dev/null; done
run_done() { [ "$(sql "SELECT status FROM runs WHERE id = $run")" != running ]; }
check "the run ends once the full evaluation is in" wait_until 400 run_done
check "... done" [ "$(sql "SELECT status FROM runs WHERE id = $run")" = done ]
say "$(sql "SELECT string_agg(id || ' ' || coalesce(fidelity, '-') || ' ' || coalesce(round(speedup::numeric, 3)::text, '-') || ' (screen ' || coalesce(round(screen_speedup::numeric, 3)::text, '-') || ')', ', ' ORDER BY id) FROM candidates WHERE run_id = $run"); best $(sql "SELECT best_candidate_id || ' ' || round(best_speedup::numeric, 3) FROM runs WHERE id = $run")"
say "evaluate jobs: $(sql "SELECT string_agg(j.candidate_id || ' ' || j.fidelity || ' ' || j.state || ' ' || j.attempts || ' ' || coalesce(j.avoid_worker, '-'), ', ' ORDER BY j.id) FROM jobs j WHERE j.kind = 'evaluate'")"
check "... by the same seed, with the full protocol" \
    [ "$(timing "$fast")" = "screen 0.050 3 $(seed_of "$fast"),full 0.300 5 $(seed_of "$fast")" ]
check "the fast one now has its full figures" \
    [ "$(sql "SELECT c.fidelity = 'full' AND c.speedup = e.speedup AND c.screen_speedup = s.speedup
              AND c.verdict_detail LIKE '%full protocol on %'
              FROM candidates c JOIN evaluations e ON e.candidate_id = c.id AND e.fidelity = 'full'
              JOIN evaluations s ON s.candidate_id = c.id AND s.fidelity = 'screen' WHERE c.id = $fast")" = t ]
check "the run's best has fidelity full" \
    [ "$(sql "SELECT c.fidelity FROM runs r JOIN candidates c ON c.id = r.best_candidate_id WHERE r.id = $run")" = full ]
check "... and is its fastest full-fidelity candidate" \
    [ "$(sql "SELECT r.best_speedup = (SELECT max(speedup) FROM candidates WHERE run_id = $run
              AND fidelity = 'full') FROM runs r WHERE r.id = $run")" = t ]
check "four slow kernels screened out, far below the best" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND fidelity = 'screen'
              AND speedup < 0.3 * (SELECT best_speedup FROM runs WHERE id = $run)")" = 4 ]
check "only the two fast kernels were timed in full" \
    [ "$(sql "SELECT string_agg(id::text, ',' ORDER BY id) FROM candidates WHERE run_id = $run AND fidelity = 'full'")" \
      = "$(printf '%s\n' "$initial" "$fast" | sort -n | paste -sd,)" ]
check "the archive cell's elite is a full-fidelity candidate" \
    [ "$(sql "SELECT count(*) FROM archive_cells a JOIN candidates c ON c.id = a.candidate_id
              WHERE a.run_id = $run AND c.fidelity = 'full' AND a.speedup = c.speedup")" = 1 ]
check "every candidate accounted for: 8 evaluate jobs for 6 candidates" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $run AND kind = 'evaluate' AND state = 'done'
              AND candidate_id IS NOT NULL")" = 8 ]
check "... each once (run_accounted)" run_accounted "$run" 6
kfctl show "$run" >"$T/show.txt"
check "kfctl show lists the fast one as full" grep -qE "^ *$fast .* full .*full protocol on" "$T/show.txt"
check "kfctl show: 4 screened out, none being timed" \
    grep -qE "^fidelity: 4 correct candidates screened out .*, 0 being timed" "$T/show.txt"
kfctl report "$run" -o "$T/r" >/dev/null
check "the report's curve ends at the run's best" \
    awk -F, -v b="$(sql "SELECT best_speedup FROM runs WHERE id = $run")" \
        'END { d = $2 - b; if (d < 0) d = -d; exit !(d <= 1e-6) }' "$T/r.csv"

# ---- a swept candidate: its screen sweeps the configs, its full
# evaluation times the one the sweep chose and the runner-up (round 39:
# screen winners fell far in full while the runner-up went untimed;
# kf_fidelity_full_points). The kernel declares REPS=20 (its default,
# point 0) and REPS=1; the run's only candidate is timed in full
# (nothing counted yet).
sed -e 's|^#define REPS @REPS@$|// kf-tune: REPS=20,1\n#ifndef REPS\n#define REPS 20\n#endif|' \
    "$T/kernel.in" >"$T/tuned.c"
cp "$ROOT/examples/tasks/softmax/reference.c" "$T/reference.c"
jq '.initial = {"language": "c", "file": "tuned.c"}' "$ROOT/examples/tasks/softmax/task.json" \
    >"$T/task.json"
out=$(kfctl submit "$T/task.json" --generations 1 --population 1 --seed 4 --tune 2 \
      --set "screen_timing=$SCREEN" --wait --json --timeout 30 2>"$T/submit2.err")
run2=$(jq -r .run_id <<<"$out")
check "the swept run is done" [ "$(jq -r .status <<<"$out")" = done ]
cand=$(sql "SELECT id FROM candidates WHERE run_id = ${run2:-0}")
cand=${cand:-0}
say "swept candidate $cand: $(sql "SELECT fidelity || ' ' || round(speedup::numeric, 3) || ' (screen ' || round(screen_speedup::numeric, 3) || '): ' || verdict_detail FROM candidates WHERE id = $cand")"
evals() {   # evals CANDIDATE: its evaluate jobs, "fidelity configs blobs", in order
    sql "SELECT string_agg(fidelity || ' ' || jsonb_array_length(coalesce(payload->'configs', '[]'))
                || ' ' || cardinality(blobs), ',' ORDER BY id)
         FROM jobs WHERE candidate_id = $1 AND kind = 'evaluate'"
}
check "its screen swept both configs; its full evaluation took both, the chosen one first" \
    [ "$(evals "$cand")" = "screen 2 3,full 2 3" ]
check "... its verdict names the screen's choice as the screen's, and the point that counts" \
    [ "$(sql "SELECT verdict_detail LIKE '%best of 2 configs on the screen: REPS=1%full protocol on %x at REPS=%, the faster of the screen''s best 2 timed in full%'
              FROM candidates WHERE id = $cand")" = t ]
check "... and timed both in full" \
    [ "$(sql "SELECT count(*) FROM evaluations e, jsonb_array_elements(e.figures->'configs') r
              WHERE e.candidate_id = $cand AND e.fidelity = 'full' AND r->>'fidelity' = 'full'")" = 2 ]
check "... the artifact of the config the sweep chose (REPS=1)" \
    [ "$(sql "SELECT f.blobs[1] = s.blobs[(SELECT (c->>'frame')::int + 1 FROM jsonb_array_elements(s.payload->'configs') c
                                          WHERE c->'params' = e.figures->'best_config')]
                     AND e.figures->'best_config'->>'REPS' = '1'
              FROM jobs s JOIN jobs f ON f.candidate_id = s.candidate_id AND f.fidelity = 'full'
              JOIN evaluations e ON e.job_id = s.id
              WHERE s.candidate_id = $cand AND s.fidelity = 'screen'")" = t ]
check "... and its figures are the full ones, the best of the run" \
    [ "$(sql "SELECT c.fidelity = 'full' AND c.speedup = e.speedup AND r.best_candidate_id = c.id
              AND c.verdict_detail LIKE '%REPS=1%full protocol on %'
              FROM candidates c JOIN runs r ON r.id = c.run_id
              JOIN evaluations e ON e.candidate_id = c.id AND e.fidelity = 'full' WHERE c.id = $cand")" = t ]

# ---- a repeat takes the figure that stands. Round 18: candidate 29, a
# repeat, showed 58.24x, the screen figure of candidate 28, whose full
# protocol then gave 51.95x. Both kernels are planned at once; the
# second repeats the first and waits for its verdict, which it takes when
# the first is made final at its screen figure. The first one's full
# evaluation is frozen until then (a candidate whose full evaluation
# runs holds its place in max_in_flight, so the two are planned
# together).
run3=$(kfctl submit "$ROOT/examples/tasks/softmax/task.json" --generations 1 --population 2 \
       --seed 11 --model command:same --set max_in_flight=2 --set "screen_timing=$SCREEN" \
       --set meta_prompting=false --set confirm_best=false --json 2>"$T/submit3.err" | jq -r .run_id)
run3=${run3:-0}
full_job() {
    sql "SELECT j.candidate_id FROM jobs j JOIN candidates c ON c.id = j.candidate_id
         WHERE c.run_id = $run3 AND j.kind = 'evaluate' AND j.fidelity = 'full' AND j.state = 'leased'"
}
check "run 3: the first kernel's full-protocol evaluation is leased" \
    wait_until 400 eval '[ -n "$(full_job)" ]'
orig=$(full_job)
orig=${orig:-0}
check "... and running" wait_until 60 eval '[ -n "$(live_descendants "$EXEC_PID")" ]'
child=
for c in $(live_descendants "$EXEC_PID"); do kill -STOP "$c" 2>/dev/null && child="$child $c"; done
repeat_done() {
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run3 AND duplicate_of = $orig
              AND finished_at IS NOT NULL")" -ge 1 ]
}
check "... while it is frozen, the second kernel repeats it and takes its screen verdict" \
    wait_until 300 repeat_done
for c in $child; do kill -CONT "$c" 2>/dev/null; done
run3_done() { [ "$(sql "SELECT status FROM runs WHERE id = $run3")" != running ]; }
check "run 3 ends" wait_until 400 run3_done
say "run 3: $(sql "SELECT string_agg(id || ' ' || coalesce(fidelity, '-') || ' ' || round(speedup::numeric, 4)
     || ' (screen ' || coalesce(round(screen_speedup::numeric, 4)::text, '-') || ') dup of '
     || coalesce(duplicate_of::text, '-'), ', ' ORDER BY id) FROM candidates WHERE run_id = $run3")"
check "the first kernel was timed in full, to another figure than its screen's (the premise)" \
    [ "$(sql "SELECT fidelity = 'full' AND speedup <> screen_speedup FROM candidates WHERE id = $orig")" = t ]
check "its repeat took the full figure, and says so" \
    [ "$(sql "SELECT count(*) FROM candidates r JOIN candidates o ON o.id = r.duplicate_of
              WHERE o.id = $orig AND r.status = 'correct' AND r.speedup = o.speedup
              AND r.fitness = o.fitness AND r.fidelity = 'screen'
              AND r.verdict_detail LIKE '%; candidate ' || o.id || '_s figure became %x'")" -ge 1 ]
check "... and keeps what its code does, the original's (a repeat had no features)" \
    [ "$(sql "SELECT count(*) FROM candidates r JOIN candidates o ON o.id = r.duplicate_of
              WHERE o.id = $orig AND jsonb_typeof(r.selection->'features') = 'number'
              AND r.selection->'features' = o.selection->'features'")" -ge 1 ]
check "... and so did its parent's move to it" \
    [ "$(sql "SELECT count(*) FROM transitions t JOIN candidates r ON r.id = t.child_id
              WHERE r.duplicate_of = $orig AND t.child_fitness IS DISTINCT FROM r.fitness")" = 0 ]
finish
