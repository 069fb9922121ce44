#!/usr/bin/env bash
# test_verify.sh - a suspicious result is evaluated again, automatically,
# and counts when it holds (docs/evaluation.md, "Plausibility and
# re-verification"). This coordinator finds every correct result
# suspicious (--plausible-outlier-factor 0 --plausible-min-counted 0) and
# takes any re-verified speedup as holding (--verify-tolerance 1), so the
# checks are on the mechanism and the figures it recorded, not on this
# machine's speed: each correct candidate gets a second evaluate job with
# a seed of its own, on the other exec worker; while that runs it does not
# count and its run does not end; the state survives a coordinator killed
# with -9; once the re-verification is correct the candidate counts, at
# the lower of its two figures. (test_audit.sh: one that fails, held.)
. "$(dirname "$0")/lib.sh"

db_new
VERIFY_ALL=(--plausible-outlier-factor 0 --plausible-min-counted 0 --verify-tolerance 1)
start_coordinator "${COORD_FAST[@]}" "${VERIFY_ALL[@]}"
start gateway "$BIN/kf-llm-gateway" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
start compile "$BIN/kf-compile-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
# The candidate reaches no file outside its own folder but the one the
# workers share with candidates for tests (eval_shared_dir).
mkdir -m 1777 "$T/k"
start exec "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" \
    --eval-shared-dir "$T/k"
start exec2 "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" \
    --eval-shared-dir "$T/k"
check "four workers" wait_until 120 jtrue '.workers | length == 4' kfctl status --json

# The initial kernel, candidate (0, 0): a correct softmax whose second
# evaluation waits for the gate file. The first process that runs it
# leaves a mark (in the shared folder, which the sandbox's uid may
# write) and goes on;
# any later one, its re-verification, waits until the test creates the
# gate (at most 100 s). So the re-verification is still running when
# the test looks, however fast or busy the machine.
cat >"$T/gated.c" <<C
#define _POSIX_C_SOURCE 200809L
#include "kf_kernel.h"
#include <fcntl.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) ctx;
    if (n_in < 1 || n_out < 1 || in[0].dtype != KF_F32 || out[0].dtype != KF_F32
        || in[0].rank < 1 || kf_numel (&in[0]) != kf_numel (&out[0]))
        return 1;
    static int decided;
    if (!decided) {
        int fd = open ("$T/k/mark", O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd >= 0)
            close (fd);
        else
            for (int k = 0; k < 1000 && access ("$T/k/gate", F_OK) != 0; k++) {
                struct timespec pause = { 0, 100 * 1000 * 1000 };
                nanosleep (&pause, NULL);
            }
        decided = 1;
    }
    int64_t n = in[0].shape[in[0].rank - 1];
    int64_t rows = kf_numel (&in[0]) / n;
    const float *x = in[0].data;
    float *y = out[0].data;
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
cp "$ROOT/examples/tasks/softmax/reference.c" "$T/reference.c"
jq '.initial = {"language": "c", "file": "gated.c"}' "$ROOT/examples/tasks/softmax/task.json" \
    >"$T/task.json"

run=$(kfctl submit "$T/task.json" --generations 1 --population 3 --seed 7 --json | jq -r .run_id)
gated_job() {
    sql "SELECT j.id FROM jobs j JOIN candidates c ON c.id = j.candidate_id
         WHERE c.run_id = $run AND c.generation = 0 AND c.slot = 0 AND c.verify_state = 'pending'
         AND j.kind = 'evaluate' AND j.avoid_worker IS NOT NULL AND j.state = 'leased'"
}
check "the initial kernel is re-verified: pending, its second evaluation leased" \
    wait_until 300 eval '[ -n "$(gated_job)" ]'
job=$(gated_job)
check "the first evaluation left its mark in the shared folder" test -e "$T/k/mark"
gated=$(sql "SELECT id FROM candidates WHERE run_id = $run AND generation = 0 AND slot = 0")
first_worker=$(sql "SELECT worker FROM evaluations WHERE candidate_id = $gated")
say "candidate $gated: first evaluation on $first_worker, re-verification job $job on $(sql "SELECT worker FROM jobs WHERE id = $job")"
check "the re-verification went to the other exec worker" \
    [ "$(sql "SELECT worker <> avoid_worker AND avoid_worker = '$first_worker' FROM jobs WHERE id = $job")" = t ]
check "with a seed of its own" \
    [ "$(sql "SELECT count(DISTINCT payload->>'seed') FROM jobs WHERE candidate_id = $gated AND kind = 'evaluate'")" = 2 ]
check "it is final and correct, with the reason it is re-verified" \
    [ "$(sql "SELECT status = 'correct' AND finished_at IS NOT NULL AND verify_reason LIKE '%every correct result is re-verified%' FROM candidates WHERE id = $gated")" = t ]
check "while it is re-verified it does not count" \
    [ "$(sql "SELECT best_candidate_id IS DISTINCT FROM $gated FROM runs WHERE id = $run")" = t ]
check "and the run does not end" [ "$(sql "SELECT status FROM runs WHERE id = $run")" = running ]
kfctl show "$run" >"$T/show-pending.txt"
check "kfctl show lists it as verifying" grep -qE "^ *$gated .* verifying " "$T/show-pending.txt"
check "kfctl show says candidates are being re-verified" grep -q "^re-verifying: " "$T/show-pending.txt"

# The state is in the database: a coordinator killed now finds it again.
kill_hard "$COORD_PID"
start_coordinator "${COORD_FAST[@]}" "${VERIFY_ALL[@]}"
check "the coordinator is back and shows the run running" \
    wait_until 120 jtrue '.run.status == "running"' kfctl show "$run" --json
check "after the restart the candidate is still pending" \
    [ "$(sql "SELECT verify_state FROM candidates WHERE id = $gated")" = pending ]
touch "$T/k/gate"
run_done() { [ "$(sql "SELECT status FROM runs WHERE id = $run")" != running ]; }
check "the run ends once the re-verification is in" wait_until 300 run_done
check "... done" [ "$(sql "SELECT status FROM runs WHERE id = $run")" = done ]
check "the re-verified candidate counts: verified on the other worker" \
    [ "$(sql "SELECT verify_state = 'verified' AND audit_reason IS NULL AND verify_worker <> '$first_worker' AND verify_speedup > 0 FROM candidates WHERE id = $gated")" = t ]
# (Its first evaluation: a lower second figure is recorded as one too.)
check "at the lower of its two figures" \
    [ "$(sql "SELECT c.speedup = least(e.speedup, c.verify_speedup) FROM candidates c JOIN evaluations e ON e.candidate_id = c.id
              JOIN jobs j ON j.id = e.job_id AND j.avoid_worker IS NULL WHERE c.id = $gated")" = t ]
check "its archive cell carries that figure" \
    [ "$(sql "SELECT count(*) FROM archive_cells a JOIN candidates c ON c.id = a.candidate_id WHERE c.id = $gated AND a.speedup <> c.speedup")" = 0 ]
correct=$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND status = 'correct'")
check "every correct candidate ($correct) was re-verified and counts" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND status = 'correct' AND verify_state = 'verified' AND audit_reason IS NULL")" = "$correct" ]
check "each by a second evaluate job with a seed of its own" \
    [ "$(sql "SELECT count(*) FROM candidates c WHERE run_id = $run AND status = 'correct'
              AND (SELECT count(DISTINCT payload->>'seed') FROM jobs j WHERE j.candidate_id = c.id
                   AND j.kind = 'evaluate' AND j.state = 'done') = 2")" = "$correct" ]
check "nothing is held for audit" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND audit_reason IS NOT NULL")" = 0 ]
check "the run's best is its fastest counted candidate, and it has a first correct" \
    [ "$(sql "SELECT r.best_speedup = (SELECT max(speedup) FROM candidates WHERE run_id = $run AND status = 'correct') AND r.first_speedup > 0 FROM runs r WHERE r.id = $run")" = t ]
kfctl show "$run" >"$T/show.txt"
check "kfctl show lists it as verified" grep -qE "^ *$gated .* verified .*re-verified on" "$T/show.txt"
check "and no longer says anything is being re-verified" \
    sh -c "! grep -q '^re-verifying: ' '$T/show.txt'"
finish
