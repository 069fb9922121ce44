#!/usr/bin/env bash
# test_audit.sh - a result past physics does not count silently.
# The task declares an impossible work count (1e18 FLOP a call), so every
# correct candidate computes "faster than the measured FMA peak": the
# coordinator finds it suspicious from the figures and evaluates it again
# (a fresh seed, the full protocol; docs/evaluation.md, "Plausibility and
# re-verification"). The re-verification is past the peak too, so it
# fails, and the candidate is held for a person: stored as correct, the
# run's best and first-correct figures stay empty until a person accepts
# one with `kfctl audit`; a rejected one leaves the archive too. The same
# task without the impossible count is the control: nothing re-verified,
# nothing held. (test_verify.sh: re-verifications that hold, and count.)
. "$(dirname "$0")/lib.sh"

db_new
start_coordinator "${COORD_FAST[@]}"
start gateway "$BIN/kf-llm-gateway" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
start compile "$BIN/kf-compile-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
start exec "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
check "three workers" wait_until 120 jtrue '.workers | length == 3' kfctl status --json

cp "$ROOT/tests/fixtures/kernels/ref_softmax.c" "$ROOT/tests/fixtures/kernels/good_softmax.c" "$T/"
# task FILE FLOPS: the small softmax, good_softmax as the initial kernel.
task() {
    cat >"$T/$1" <<JSON
{ "name": "audit-softmax", "op": "softmax", "flops": $2,
  "inputs": [{"name": "x", "shape": [64, 256], "dtype": "f32"}],
  "outputs": [{"name": "y", "shape": [64, 256], "dtype": "f32"}],
  "reference": {"language": "c", "file": "ref_softmax.c"},
  "initial": {"language": "c", "file": "good_softmax.c"} }
JSON
}
task plain.json 1e4   # under 1 FLOP an element: no host comes near it
task impossible.json 1e18

out=$(kfctl submit "$T/plain.json" --generations 1 --population 3 --seed 5 --wait --json --timeout 10)
plain=$(jq -r .run_id <<<"$out")
check "control: the run has a best" jtrue '.best_speedup > 0 and .first_speedup > 0' echo "$out"
check "control: nothing is held for audit" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $plain AND audit_reason IS NOT NULL")" = 0 ]
check "control: nothing is re-verified as suspicious (a plausible speedup is no reason)" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $plain AND verify_state IS NOT NULL
              AND verify_reason NOT LIKE 'a new best (%'")" = 0 ]
check "control: what was timed again as a new best counts" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $plain AND verify_reason LIKE 'a new best (%'
              AND verify_state IS DISTINCT FROM 'verified'")" = 0 ]

out=$(kfctl submit "$T/impossible.json" --generations 1 --population 3 --seed 5 --wait --json --timeout 10)
run=$(jq -r .run_id <<<"$out")
say "flagged run: $(jq -c '{status, best_speedup, first_speedup}' <<<"$out")"
correct=$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND status = 'correct'")
check "the flagged run still ends done with correct candidates ($correct)" \
    sh -c "[ \"$(jq -r .status <<<"$out")\" = done ] && [ $correct -ge 2 ]"
check "every correct candidate was re-verified, and failed it" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND status = 'correct' AND verify_state = 'failed'")" = "$correct" ]
check "the suspicion is the coordinator's own, from the task's work count and the HELLO's peak" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND status = 'correct' AND verify_reason LIKE 'computes at % GFLOP/s, above the measured FMA peak of %'")" = "$correct" ]
check "each by a second evaluate job with a seed of its own" \
    [ "$(sql "SELECT count(*) FROM candidates c WHERE run_id = $run AND status = 'correct'
              AND (SELECT count(DISTINCT payload->>'seed') FROM jobs j WHERE j.candidate_id = c.id
                   AND j.kind = 'evaluate' AND j.state = 'done') = 2")" = "$correct" ]
check "every correct candidate is held with the coordinator's reason, the re-verification's too" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND status = 'correct' AND audit_reason LIKE '%above the measured FMA peak%; re-verification%above the measured FMA peak%' AND audit_verdict IS NULL")" = "$correct" ]
check "the verdict line says why it is held" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND status = 'correct' AND verdict_detail LIKE '%; held for audit: the re-verification computes at%'")" = "$correct" ]
check "no best and no first-correct figure while they are held" \
    jtrue '.best_speedup == null and .first_speedup == null' echo "$out"
check "held candidates still enter the archive (the search uses them)" \
    [ "$(sql "SELECT count(*) FROM archive_cells WHERE run_id = $run")" -ge 1 ]
kfctl show "$run" >"$T/show.txt"
check "kfctl show says how many are held and how to decide" \
    grep -q "held for audit: $correct correct candidates not counted" "$T/show.txt"
check "kfctl show marks them in the candidates table" grep -q "correct, held" "$T/show.txt"

# The slowest and the fastest held candidate.
slow=$(sql "SELECT id FROM candidates WHERE run_id = $run AND status = 'correct' ORDER BY speedup, id LIMIT 1")
fast=$(sql "SELECT id FROM candidates WHERE run_id = $run AND status = 'correct' ORDER BY speedup DESC, id LIMIT 1")
kfctl audit "$slow" accept >"$T/accept.txt" 2>&1
say "$(cat "$T/accept.txt")"
check "accepting one makes it the run's best and first correct" \
    [ "$(sql "SELECT best_candidate_id = $slow AND first_speedup IS NOT NULL FROM runs WHERE id = $run")" = t ]
check "kfctl audit prints the run's new figures" grep -q "candidate $slow accepted" "$T/accept.txt"
cell_of_fast=$(sql "SELECT cell::text FROM archive_cells WHERE run_id = $run AND candidate_id = $fast")
kfctl audit "$fast" reject --json >"$T/reject.json"
check "a rejected candidate never counts" \
    jtrue ".verdict == \"rejected\" and .best_candidate_id != $fast" cat "$T/reject.json"
check "and leaves the archive" \
    [ "$(sql "SELECT count(*) FROM archive_cells WHERE run_id = $run AND candidate_id = $fast")" = 0 ]
if [ -n "$cell_of_fast" ]; then
    say "the rejected candidate held cell $cell_of_fast; now: $(sql "SELECT coalesce(string_agg(candidate_id::text, ','), 'empty') FROM archive_cells WHERE run_id = $run AND cell = '$cell_of_fast'::int[]")"
fi
check "the archive holds only candidates that were not rejected" \
    [ "$(sql "SELECT count(*) FROM archive_cells a JOIN candidates c ON c.id = a.candidate_id WHERE a.run_id = $run AND c.audit_verdict = 'rejected'")" = 0 ]
never=$(sql "SELECT id FROM candidates WHERE run_id = $plain AND status = 'correct' LIMIT 1")
kfctl audit "$never" accept >/dev/null 2>"$T/err.txt"
check "a candidate that was never flagged cannot be audited (exit 1)" [ $? = 1 ]
check "and kfctl says why" grep -q "not flagged for audit" "$T/err.txt"
kfctl audit "$slow" maybe 2>"$T/err2.txt"
check "a bad verdict is a usage error (exit 2)" [ $? = 2 ]
check "that names the two verdicts" grep -q "accept or reject" "$T/err2.txt"
finish
