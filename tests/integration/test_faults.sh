#!/usr/bin/env bash
# test_faults.sh - kill -9 of the coordinator mid-run and a restart finish
# the run with every candidate accounted for exactly once; kill -9 of the
# exec worker mid-job requeues its job, which another worker finishes.
. "$(dirname "$0")/lib.sh"

db_new
start_coordinator "${COORD_FAST[@]}"
start_workers
check "three workers" wait_until 120 jtrue '.workers | length == 3' kfctl status --json

run_done() { jtrue '.run.status == "done"' kfctl show "$1" --json; }
done_count() { sql "SELECT count(*) FROM candidates WHERE run_id = $1 AND finished_at IS NOT NULL"; }


# --- kill -9 of the coordinator --------------------------------------------
run=$(kfctl submit "$ROOT/examples/tasks/rmsnorm/task.json" --generations 4 --population 4 \
      --seed 3 --json | jq -r .run_id)
check "run submitted" [ -n "$run" ]
check "5 candidates final" wait_until 300 eval '[ "$(done_count "$run")" -ge 5 ]'
before=$(done_count "$run")
kill_hard "$COORD_PID"   # kill -9, reaped: its sockets are gone
say "killed the coordinator with $before of 16 candidates final"
check "killed mid-run" [ "$before" -lt 16 ]
# What the dead coordinator left leased: the restart must requeue exactly
# that many (how many there are depends on the moment of the kill).
leased=$(sql "SELECT count(*) FROM jobs WHERE state = 'leased'")
say "$leased job(s) leased at the kill"
start_coordinator "${COORD_FAST[@]}"
check "the restarted coordinator finishes the run" wait_until 240 run_done "$run"
check "every candidate accounted for exactly once" run_accounted "$run" 16
if [ "$leased" -gt 0 ]; then
    check "the restart requeued the $leased job(s) left leased" \
        grep -q "requeued $leased job(s) leased before the restart" "$T/coordinator.log"
else
    check "the restart requeued nothing (nothing was leased)" \
        bash -c "! grep -q 'leased before the restart' '$T/coordinator.log'"
fi
# The search's own records survived the kill as well: one transition per
# child that moved, a selection for every candidate, and never more open
# than max_in_flight (= population, 4) at any planning, before or after.
check "one transition per child with a parent and coordinates" \
    [ "$(sql "SELECT count(*) FROM transitions WHERE run_id = $run")" -eq \
      "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND parent_id IS NOT NULL AND coords IS NOT NULL")" ]
check "every candidate recorded how its parent was chosen" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND selection IS NULL")" -eq 0 ]
check "never more than 4 candidates open across the restart" \
    [ "$(sql "SELECT max((SELECT count(*) FROM candidates o WHERE o.run_id = c.run_id
              AND o.created_at <= c.created_at
              AND (o.finished_at IS NULL OR o.finished_at > c.created_at)))
              FROM candidates c WHERE c.run_id = $run")" -le 4 ]

# --- kill -9 of the exec worker mid-evaluation --------------------------------
# Evaluations of a second or more, so the test sees one leased for sure.
kill -TERM "$COORD_PID"
wait "$COORD_PID" 2>/dev/null
start_coordinator "${COORD_HB[@]}" --eval-min-time-s 0.5 --eval-warmup-s 0.2 \
    --search-defaults "$ROOT/tests/fixtures/search/fast-defaults.json"
run2=$(kfctl submit "$ROOT/examples/tasks/layernorm/task.json" --generations 2 --population 2 \
       --seed 4 --json | jq -r .run_id)
leased_eval() {
    [ -n "$(sql "SELECT id FROM jobs WHERE run_id = $run2 AND kind = 'evaluate' AND state = 'leased' LIMIT 1")" ]
}
deaths() { grep -c "missed its heartbeats" "$T/coordinator.log"; }
requeued_job() {
    sql "SELECT id FROM jobs WHERE run_id = $run2 AND kind = 'evaluate' AND attempts = 1
         AND state = 'queued' AND reason LIKE '%missed its heartbeats%' LIMIT 1"
}
# The job is the one the coordinator requeues once it has declared the
# killed worker dead, not the one seen leased before the kill: a result
# already on its way would end that one instead (then the kill missed,
# and a new worker gets the next evaluation; at most three tries).
job=
for try in 1 2 3; do
    check "an evaluation is leased (try $try)" wait_until 300 leased_eval
    dead0=$(deaths)
    kill_hard "$EXEC_PID"
    check "the coordinator declares the killed exec worker dead" \
        wait_until 120 eval '[ "$(deaths)" -gt "$dead0" ]'
    job=$(requeued_job)
    start exec "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
    EXEC_PID=$PID
    [ -n "$job" ] && break
    say "the kill came after the worker had sent its result; again"
done
say "killed the exec worker while it held job ${job:-none}"
check "the job goes back to the queue" [ -n "$job" ]
job=${job:-0}
check "the run finishes on the new exec worker" wait_until 240 run_done "$run2"
check "the killed job was done on a second attempt" \
    [ "$(sql "SELECT state || ' ' || attempts FROM jobs WHERE id = $job")" = "done 2" ]
check "every candidate of the second run accounted for" run_accounted "$run2" 4
check "the coordinator counted the requeue" jtrue '.counters.requeued >= 1' kfctl status --json
finish
