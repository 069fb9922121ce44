#!/usr/bin/env bash
# test_search_steady.sh - steady-state scheduling and fair dispatch
# (docs/search.md): a run keeps max_in_flight candidates open, so a slow
# candidate does not stop the next ones from starting (they start before
# its generation closes), never more than max_in_flight are open at once,
# and two runs share a worker round-robin rather than first come, first
# served.
. "$(dirname "$0")/lib.sh"

db_new
start_coordinator "${COORD_FAST[@]}"
start gateway "$BIN/kf-llm-gateway" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
GATEWAY_PID=$PID
start compile "$BIN/kf-compile-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
# The gate lives in the folder the workers share with candidates for
# tests (eval_shared_dir): a candidate reaches no other file outside its own.
mkdir -m 1777 "$T/share"
start exec "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" \
    --eval-shared-dir "$T/share"
EXEC_PID=$PID
start exec2 "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" \
    --eval-shared-dir "$T/share"
EXEC2_PID=$PID
check "status answers with four workers" \
    wait_until 60 jtrue '.workers | length == 4' kfctl status --json

# The task's initial kernel, candidate (0, 0), is slow for as long as the
# test wants: its evaluation waits for the gate file, which the test
# creates once two candidates of later generations have finished. So the
# slow candidate is the slowest whatever the machine's speed or load.
cp "$ROOT/examples/tasks/softmax/reference.c" "$T/reference.c"
sed "s|@GATE@|$T/share/gate|" "$ROOT/tests/fixtures/search/slow_softmax.c" >"$T/slow.c"
jq '.initial = {"language": "c", "file": "slow.c"}' "$ROOT/examples/tasks/softmax/task.json" \
    >"$T/task.json"

# confirm_best off: a would-be best's second timing goes to the other
# exec worker, which the gated candidate holds, so the later candidates
# this test counts would wait for the gate (test_confirm_best.sh checks
# the confirmation).
run=$(kfctl submit "$T/task.json" --generations 3 --population 3 --seed 5 --set confirm_best=false --json \
      2>"$T/submit.err" | jq -r .run_id)
later_done() {
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND generation >= 1
              AND finished_at IS NOT NULL")" -ge 2 ]
}
check "two later-generation candidates finish while the slow one waits" wait_until 300 later_done
check "... and the slow one is still open then" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND generation = 0 AND slot = 0
              AND finished_at IS NULL")" -eq 1 ]
touch "$T/share/gate"
check "the slow candidate sees the gate" wait_until 300 test -e "$T/share/gate.seen"
run_done() { [ "$(sql "SELECT status FROM runs WHERE id = $run")" != running ]; }
check "the run with a slow candidate ends" wait_until 300 run_done
check "... done" [ "$(sql "SELECT status FROM runs WHERE id = $run")" = done ]
check "... the slow candidate correct" \
    [ "$(sql "SELECT status FROM candidates WHERE run_id = $run AND generation = 0 AND slot = 0")" = correct ]

# Open candidates at the moment each candidate was planned (timestamps are
# those of the planning transaction, so a candidate that ended in it is
# no longer open).
open_at_plans="SELECT (SELECT count(*) FROM candidates o WHERE o.run_id = c.run_id
                       AND o.created_at <= c.created_at
                       AND (o.finished_at IS NULL OR o.finished_at > c.created_at))
                FROM candidates c WHERE c.run_id = $run"
slow_s=$(sql "SELECT round(extract(epoch FROM finished_at - created_at)::numeric, 2)
              FROM candidates WHERE run_id = $run AND generation = 0 AND slot = 0")
early=$(sql "SELECT count(*) FROM candidates c, candidates s
             WHERE c.run_id = $run AND s.run_id = $run AND s.generation = 0 AND s.slot = 0
             AND c.generation >= 1 AND c.created_at < s.finished_at")
say "the slow candidate took ${slow_s}s; $early later-generation candidates started before it ended"
say "open candidates at each planning: $(sql "$open_at_plans" | tr '\n' ' ')"
check "the slow candidate was the slowest of generation 0" \
    [ "$(sql "SELECT count(*) FROM candidates c, candidates s WHERE c.run_id = $run
              AND s.run_id = $run AND s.generation = 0 AND s.slot = 0 AND c.generation = 0
              AND c.slot > 0 AND c.finished_at - c.created_at >= s.finished_at - s.created_at")" -eq 0 ]
check "candidates of generation 1 and later started while generation 0 was still open" \
    [ "$early" -ge 2 ]
check "never more than max_in_flight (= population, 3) open" \
    [ "$(sql "SELECT max(n) FROM ($open_at_plans) AS t(n)")" -le 3 ]
check "the run kept 3 in flight while the slow one ran" \
    [ "$(sql "SELECT count(*) FROM candidates c, candidates s
              WHERE c.run_id = $run AND s.run_id = $run AND s.generation = 0 AND s.slot = 0
              AND c.generation >= 1 AND c.created_at < s.finished_at
              AND (SELECT count(*) FROM candidates o WHERE o.run_id = $run
                   AND o.created_at <= c.created_at
                   AND (o.finished_at IS NULL OR o.finished_at > c.created_at)) = 3")" -ge 1 ]
check "9 candidates: generation = number / population, slot = number % population" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND slot < 3 AND generation < 3")" -eq 9 ]
check "the run's generation counter reached the last generation" \
    [ "$(sql "SELECT generation FROM runs WHERE id = $run")" -eq 2 ]

# max_in_flight from the run config: one at a time.
out=$(kfctl submit "$ROOT/examples/tasks/rmsnorm/task.json" --generations 2 --population 3 \
      --seed 6 --set max_in_flight=1 --wait --json --timeout 10 2>>"$T/submit.err")
run1=$(jq -r .run_id <<<"$out")
check "a max_in_flight=1 run finishes" [ "$(jq -r .status <<<"$out")" = done ]
check "... with never two candidates open" \
    [ "$(sql "SELECT max(n) FROM (${open_at_plans//$run/$run1}) AS t(n)")" -eq 1 ]
check "... and all 6 candidates" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run1 AND finished_at IS NOT NULL")" -eq 6 ]
check "a bad max_in_flight is refused, naming the key" \
    sh -c "'$BIN/kfctl' submit '$ROOT/examples/tasks/softmax/task.json' --set max_in_flight=-2 2>&1 | grep -q max_in_flight"

# Fair dispatch: run A queues 6 evaluations and run B, submitted after it,
# 2, while no exec worker is there; then one exec worker joins. First
# come, first served would evaluate all of A's before any of B's;
# round-robin takes one of B's first or second. (With the worker there
# all along, how many of A's ran before B's were queued would be a matter
# of speed.) Each run first has its reference probed on an exec worker,
# so the order is: no gateway while the probes run, then no exec worker
# while the candidates are written and built.
kill -TERM "$GATEWAY_PID"
check "the gateway leaves" wait_until 60 jtrue '.workers | length == 3' kfctl status --json
# dedup off: the test counts one evaluation per candidate, and the offline
# generator may write one kernel twice (a repeat would take its verdict).
a=$(kfctl submit "$ROOT/examples/tasks/row_sum/task.json" --generations 1 --population 6 \
    --seed 8 --set dedup=false --json | jq -r .run_id)
b=$(kfctl submit "$ROOT/examples/tasks/row_max/task.json" --generations 1 --population 2 \
    --seed 9 --set dedup=false --json | jq -r .run_id)
probes_done() {
    [ "$(sql "SELECT count(*) FROM jobs WHERE run_id IN ($a, $b) AND kind = 'evaluate'
              AND coalesce(candidate_id, 0) = 0 AND state = 'done'")" -eq 2 ]
}
check "both runs' references are probed" wait_until 300 probes_done
kill -TERM "$EXEC_PID" "$EXEC2_PID"
check "the exec workers leave" wait_until 60 jtrue '.workers | length == 1' kfctl status --json
start gateway2 "$BIN/kf-llm-gateway" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
all_queued() {
    [ "$(sql "SELECT count(*) FROM jobs WHERE run_id IN ($a, $b) AND kind = 'evaluate'
              AND candidate_id IS NOT NULL AND state = 'queued'")" -eq 8 ]
}
check "A's 6 and B's 2 evaluations wait in the queue" wait_until 300 all_queued
start exec3 "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
both_done() { [ "$(sql "SELECT count(*) FROM runs WHERE id IN ($a, $b) AND status = 'done'")" -eq 2 ]; }
check "runs A and B finish" wait_until 300 both_done
order=$(sql "SELECT c.run_id FROM evaluations e JOIN candidates c ON c.id = e.candidate_id
             WHERE c.run_id IN ($a, $b) ORDER BY e.id" | tr '\n' ' ')
say "evaluation order by run: $order"
rank=$(sql "SELECT min(rn) FROM (SELECT c.run_id, row_number() OVER (ORDER BY e.id) AS rn
            FROM evaluations e JOIN candidates c ON c.id = e.candidate_id
            WHERE c.run_id IN ($a, $b)) t WHERE run_id = $b")
check "run B's first evaluation came first or second (rank $rank of 8), not after A's six" \
    [ "${rank:-99}" -le 2 ]
finish
