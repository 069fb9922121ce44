#!/usr/bin/env bash
# test_search_unjudged.sh - a run whose candidates were all generated but
# none could be judged (every evaluation failed for good: here the exec
# worker cannot start its evaluation child, its binary having been
# removed under it, as happened in issue 15's run 7) ends failed with
# the cause, not done ("completed 1 generations").
#
# The reference's probe is judged first by a sound exec worker; the
# generator (a command) answers only once that worker has been replaced
# by one whose binary is gone.
. "$(dirname "$0")/lib.sh"

cat >"$T/kern.sh" <<EOF2
cat >/dev/null
while [ ! -e "$T/go" ]; do sleep 0.1; done
printf 'Analysis: the plain loop.\n\`\`\`c\n'
cat "$ROOT/examples/tasks/gelu/reference.c"
printf '\`\`\`\n'
EOF2
printf 'command_kern = sh %s\n' "$T/kern.sh" >"$T/models.conf"

db_new
start_coordinator "${COORD_FAST[@]}" --max-attempts 2
start gateway "$BIN/kf-llm-gateway" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" \
    --models-file "$T/models.conf" --command-timeout-s 120
start compile "$BIN/kf-compile-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
start exec "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" --perf off
SOUND=$PID
check "three workers" wait_until 180 jtrue '.workers | length == 3' kfctl status --json

kfctl submit "$ROOT/examples/tasks/gelu/task.json" --model command:kern --generations 1 \
    --population 1 --seed 7 --set tuning=false --json >"$T/submit.json" 2>"$T/submit.err"
run=$(jq -r .run_id "$T/submit.json")
probed() {
    [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $run AND kind = 'evaluate'
              AND candidate_id IS NULL AND state = 'done'")" -ge 1 ]
}
check "the reference's probe was judged" wait_until 180 probed

# The sound worker goes; one whose binary is removed once it has started
# takes its place.
kill -TERM "$SOUND"
wait "$SOUND" 2>/dev/null
cp "$BIN/kf-exec-worker" "$T/kf-exec-gone"
start exec2 "$T/kf-exec-gone" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" --perf off
registered() { grep -q "registered with" "$T/exec2.log"; }
check "the replacement exec worker registered" wait_until 180 registered
rm -f "$T/kf-exec-gone"
touch "$T/go"

ended() { [ "$(sql "SELECT status FROM runs WHERE id = $run")" != running ]; }
check "the run ended" wait_until 300 ended
status=$(sql "SELECT status FROM runs WHERE id = $run")
reason=$(sql "SELECT reason FROM runs WHERE id = $run")
say "run $run: $status: $reason"
say "candidates: $(sql "SELECT string_agg(id || ' ' || status || ': ' || coalesce(verdict_detail, ''), '; ')
                        FROM candidates WHERE run_id = $run")"
check "its candidate was generated, and failed in evaluation" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND source_hash IS NOT NULL
              AND status = 'failed' AND verdict_detail LIKE 'evaluate job failed for good:%'")" -eq 1 ]
check "the run ended failed, not done" [ "$status" = failed ]
check "with the cause: nothing judged, and the evaluation's error" \
    grep -q "no candidate could be judged (1 of 1 failed: 0 before compiling, 1 in compiling or evaluation.*cannot start the evaluation child" <<<"$reason"
finish
