#!/usr/bin/env bash
# test_drain.sh - taking workers out of service.
# kfctl drain: a drained worker finishes the job it holds and gets no new
# one, also across a reconnect; undrain gives it work again; kfctl workers
# shows host, devices, state, jobs and last heartbeat. SIGTERM: a real exec
# worker in the middle of an evaluation finishes it, sends the result and
# says goodbye; the job is done once, its attempt counted once, and the run
# completes with a replacement worker.
. "$(dirname "$0")/lib.sh"

FLEET=$TOOLS/kf_noop_fleet
jobs_of() { sql "SELECT count(*) FROM jobs WHERE role = 'drain' AND state = 'done' AND worker LIKE '$1-%'"; }

db_new
start_coordinator "${COORD_FAST[@]}"
check "the coordinator answers" wait_until 20 kfctl status --json

# Worker a holds a slow job when it is drained: 20 s, so that it still
# holds it when the drain comes, also on a loaded machine (the checks below
# wait for it to end, they do not time it).
start fleet-a "$FLEET" --endpoint "$KF_WORKER_ENDPOINT" --role drain --credits 1 \
    --id-prefix a --heartbeat-ms 100 --delay-ms 20000
check "worker a registers" \
    wait_until 60 jtrue '[.workers[] | select(.id | startswith("a-"))] | length == 1' kfctl workers --json
A=$(kfctl workers --json | jq -r '.workers[] | select(.id | startswith("a-")) | .id')
sql "INSERT INTO jobs (role, kind, payload) VALUES ('drain', 'noop', '{}')" >/dev/null
check "a takes the first job" \
    wait_until 60 jtrue "[.workers[] | select(.id == \"$A\") | .jobs[]] | length == 1" kfctl workers --json
kfctl drain "$A" --json >"$T/drain.json"
check "kfctl drain answers draining with the job it still runs" \
    jtrue '.draining == true and (.jobs | length) == 1' cat "$T/drain.json"
check "kfctl workers shows it draining" \
    jtrue ".workers[] | select(.id == \"$A\") | .draining and .drained" kfctl workers --json
check "the table shows STATE and HEARD" \
    sh -c "'$BIN/kfctl' workers | grep '$A' | grep -q draining && '$BIN/kfctl' workers | head -1 | grep -q HEARD"

start fleet-b "$FLEET" --endpoint "$KF_WORKER_ENDPOINT" --role drain --credits 1 \
    --id-prefix b --heartbeat-ms 100 --delay-ms 50
check "worker b registers" \
    wait_until 60 jtrue '[.workers[] | select(.id | startswith("b-"))] | length == 1' kfctl workers --json
sql "INSERT INTO jobs (role, kind, payload) SELECT 'drain', 'noop', '{}' FROM generate_series(1, 8)" >/dev/null
check "the drained worker finishes the job it held" wait_until 120 eval '[ "$(jobs_of a)" = 1 ]'
check "the other 8 jobs all go to b" wait_until 120 eval '[ "$(jobs_of b)" = 8 ]'
check "a got nothing after the drain" [ "$(jobs_of a)" = 1 ]

check "undrain an unknown worker: not-found, exit 1" \
    sh -c "'$BIN/kfctl' undrain nosuch-worker 2>&1 | grep -q not-found; [ \$? -eq 0 ]"
check "kfctl drain of an unknown worker exits 1" eval '! kfctl drain nosuch-worker 2>/dev/null'
kfctl undrain "$A" >/dev/null
check "after undrain it shows as not draining" \
    jtrue ".workers[] | select(.id == \"$A\") | (.draining | not)" kfctl workers --json
sql "INSERT INTO jobs (role, kind, payload) SELECT 'drain', 'noop', '{}' FROM generate_series(1, 6)" >/dev/null
check "after undrain a takes jobs again" wait_until 120 eval '[ "$(jobs_of a)" -ge 2 ]'
check "and all 15 jobs end done" wait_until 120 eval \
    '[ "$(sql "SELECT count(*) FROM jobs WHERE role = '"'drain'"' AND state = '"'done'"'")" = 15 ]'

# SIGTERM during an evaluation. The job is caught by freezing its
# subprocess (below), not by making it long. A worker finishes its jobs
# within drain_s of SIGTERM (30 s by default); under ASan on a loaded
# machine an evaluation outlasted that, so this worker gets ten minutes:
# the checks wait for the job's state, not for a window.
stop_all
db_new
start_coordinator "${COORD_FAST[@]}"
EXEC_ARGS=(--drain-s 600)
start_workers
check "three workers" wait_until 120 jtrue '.workers | length == 3' kfctl status --json
check "kfctl workers --json carries host, capabilities.devices and last_heartbeat_ms_ago" \
    jtrue '[.workers[] | select(.role == "execute")][0] | (.host | length) > 0 and (.capabilities.devices | type) == "array" and .last_heartbeat_ms_ago >= 0' \
    kfctl workers --json
run=$(kfctl submit "$ROOT/examples/tasks/softmax/task.json" --generations 1 --population 2 \
      --seed 3 --json | jq -r .run_id)
# A candidate's evaluation, not the reference probe before it (a short
# evaluation that can end between the look and the signal).
cand_eval() {
    sql "SELECT id FROM jobs WHERE run_id = $run AND kind = 'evaluate'
         AND candidate_id IS NOT NULL AND state = 'leased' LIMIT 1"
}
check "the exec worker gets a candidate's evaluation" wait_until 300 eval '[ -n "$(cand_eval)" ]'
job=$(cand_eval)
# Freeze the worker's children (it runs each evaluation in a subprocess)
# so the job cannot end between the look and the signal: the worker gets
# SIGTERM while it still holds the job, says so, and then the child goes on.
child=
for c in $(live_descendants "$EXEC_PID"); do kill -STOP "$c" 2>/dev/null && child="$child $c"; done
say "job $job is $(sql "SELECT state FROM jobs WHERE id = $job"); froze the exec worker's children:${child:- none}"
kill -TERM "$EXEC_PID"
wait_until 120 grep -q "stopping: [0-9]* job(s) to finish" "$T/exec.log"
for c in $child; do kill -CONT "$c" 2>/dev/null; done
wait "$EXEC_PID" 2>/dev/null
rc=$?
check "the exec worker exits 0 after SIGTERM (got $rc)" [ "$rc" -eq 0 ]
check "it said it had a job to finish" grep -q "stopping: 1 job(s) to finish" "$T/exec.log"
# The worker has exited; the coordinator records its last result in its
# next pass.
check "the job it held ended done, leased once" \
    wait_until 60 eval '[ "$(sql "SELECT state || '"' '"' || attempts FROM jobs WHERE id = $job")" = "done 1" ]'
check "the coordinator heard its goodbye" wait_until 60 grep -q "said goodbye" "$T/coordinator.log"
check "it is gone from kfctl workers" \
    wait_until 60 jtrue '[.workers[] | select(.role == "execute")] | length == 0' kfctl workers --json
start exec2 "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
check "with a new exec worker the run finishes" \
    wait_until 300 jtrue '.run.status == "done"' kfctl show "$run" --json --timeout 30
say "candidates by status: $(sql "SELECT string_agg(status || ' ' || n, ', ') FROM (SELECT status, count(*) n FROM candidates GROUP BY 1) s")"
check "no evaluate job used more than one attempt" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE kind = 'evaluate' AND attempts > 1")" = 0 ]
check "every candidate in a final state" \
    jtrue '(.candidates | length) >= 2 and ([.candidates[] | select(.status | IN("correct","incorrect","compile_failed","crashed","timeout","failed") | not)] | length) == 0' \
    kfctl show "$run" --json --timeout 30

# drain_s bounds the wait: an exec worker given 2 s, its evaluation frozen
# for good, exits with the job unfinished and the coordinator hands the
# job to another worker. By default (30 s) it would still be waiting.
kill -TERM "$PID"
wait "$PID" 2>/dev/null
start exec3 "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" \
    --perf off --drain-s 2
EXEC3_PID=$PID
run=$(kfctl submit "$ROOT/examples/tasks/softmax/task.json" --generations 1 --population 2 \
      --seed 4 --json | jq -r .run_id)
check "exec3 gets a candidate's evaluation" wait_until 300 eval '[ -n "$(cand_eval)" ]'
# Frozen while the job is still leased (an evaluation that ended between
# the look and the freeze is let go, and the next one caught).
for try in 1 2 3 4 5 6 7 8 9 10; do
    job=$(cand_eval)
    [ -n "$job" ] || { wait_until 60 eval '[ -n "$(cand_eval)" ]'; continue; }
    child=
    for c in $(live_descendants "$EXEC3_PID"); do kill -STOP "$c" 2>/dev/null && child="$child $c"; done
    [ -n "$child" ] && [ "$(sql "SELECT state FROM jobs WHERE id = $job")" = leased ] && break
    for c in $child; do kill -CONT "$c" 2>/dev/null; done
done
holder=$(sql "SELECT worker FROM jobs WHERE id = $job")
say "job $job held by $holder, froze:${child:- none} (try $try)"
kill -TERM "$EXEC3_PID"
wait "$EXEC3_PID" 2>/dev/null
check "with --drain-s 2 it exits with the frozen job unfinished" \
    grep -q "1 job(s) still running at exit" "$T/exec3.log"
log_s() { date -d "$(grep -m1 "$1" "$T/exec3.log" | cut -d' ' -f1)" +%s; }
waited=$(( $(log_s "still running at exit") - $(log_s "stopping: 1 job(s)") ))
check "it waited about 2 s, not the default 30 (waited $waited s)" [ "$waited" -lt 20 ]
check "the coordinator requeued the job it held" \
    wait_until 60 grep -q "left; requeueing its 1 job(s)" "$T/coordinator.log"
check "job $job is no longer leased to $holder" wait_until 60 eval \
    '[ "$(sql "SELECT state = '"'leased'"' AND worker = '"'$holder'"' FROM jobs WHERE id = $job")" = f ]'
for c in $child; do kill -KILL "$c" 2>/dev/null; done
finish
