#!/usr/bin/env bash
# test_dispatch.sh - the coordinator's dispatch rules, driven by no-op
# fleets (tests/tools/kf_noop_fleet.c) that speak the real protocol:
#   a. a job goes only to a worker whose backends and arch match it, and a
#      job no worker matches stays queued;
#   b. a worker never holds more jobs than its credits, and does get more
#      than one at a time when it has the credits;
#   c. a worker that stops heartbeating is declared dead and its job is
#      requeued (attempt counted) and finished by a healthy worker;
#   d. a job whose workers keep going silent fails for good after
#      --max-attempts, with the reason kept;
#   e. a RESULT that comes after its worker was declared dead (its lease
#      is stale) is discarded and counted as late, and does not overwrite
#      the result of the worker that did the job next.
# Jobs are inserted straight into the jobs table, as the benchmarks do; each
# section uses its own role so the sections cannot steal each other's jobs.
. "$(dirname "$0")/lib.sh"

FLEET=$TOOLS/kf_noop_fleet
if [ ! -x "$FLEET" ]; then
    say "no $FLEET (build first)"
    checks=1 failures=1
    finish
fi

db_new
# Death detection is the subject here, so the liveness is shorter than
# lib.sh's 3 s, but not so short that a healthy fleet (beating every
# 100 ms) stalled by a loaded machine or ASan is taken for dead: 10 x 200
# ms, a silent worker is dead after 2 s. The waits below allow for the
# load (their limits are ceilings, not measurements).
start_coordinator --heartbeat-ms 200 --liveness 10 --max-attempts 2
check "the coordinator answers status" wait_until 20 kfctl status --json

# fleet NAME ARGS...: a no-op fleet on the worker endpoint; its output
# (the closing JSON line) lands in $T/NAME.log.
fleet() {
    local name=$1
    shift
    start "$name" "$FLEET" --endpoint "$KF_WORKER_ENDPOINT" --heartbeat-ms 100 \
        --id-prefix "$name" "$@"
}

# registered PREFIX N: the status snapshot lists N workers whose id
# starts with PREFIX.
registered() {
    jtrue "[.workers[] | select(.id | startswith(\"$1-\"))] | length == $2" \
        kfctl status --json
}

sqlis() {   # sqlis EXPECTED QUERY: the query's one value is EXPECTED
    local got
    got=$(sql "$2")
    [ "$got" = "$1" ] || { say "  '$2' gave '$got', wanted '$1'"; return 1; }
}

# --- a. dispatch by requirement ------------------------------------------
fleet hostfleet --workers 2 --credits 2 --role bench --backends host --arch x86_64
HOST_FLEET=$PID
fleet cudafleet --workers 2 --credits 2 --role bench --backends cuda --arch sm_90
CUDA_FLEET=$PID
check "a: both fleets registered" \
    wait_until 60 eval 'registered hostfleet 2 && registered cudafleet 2'
# Round 12: last_seen was written at HELLO only, so a worker connected for
# ten minutes counted as gone from its host; the coordinator now writes it
# for the live workers every 50 heartbeats (10 s here).
SEEN0=$(sql "SELECT max(last_seen) FROM workers WHERE id LIKE 'hostfleet-%'")
check "a: a connected worker's last_seen moves on without a new HELLO" \
    wait_until 60 eval '[ "$(sql "SELECT count(*) FROM workers WHERE id LIKE '"'"'hostfleet-%'"'"' AND last_seen > '"'"'$SEEN0'"'"'")" -ge 1 ]'

# Both fleets are idle with free credits when the jobs arrive, so a wrong
# match would be taken, not merely left for the right fleet.
sql "INSERT INTO jobs (role, kind, backend, arch, payload)
     SELECT 'bench', 'noop', 'host', NULL, '{}' FROM generate_series(1, 10);
     INSERT INTO jobs (role, kind, backend, arch, payload)
     SELECT 'bench', 'noop', 'host', 'x86_64', '{}' FROM generate_series(1, 5);
     INSERT INTO jobs (role, kind, backend, arch, payload)
     SELECT 'bench', 'noop', 'cuda', 'sm_90', '{}' FROM generate_series(1, 10);
     INSERT INTO jobs (role, kind, backend, arch, payload)
     VALUES ('bench', 'noop', 'cuda', 'sm_80', '{\"nobody\": true}');
     INSERT INTO jobs (role, kind, backend, arch, payload)
     SELECT 'bench', 'noop', NULL, NULL, '{}' FROM generate_series(1, 6);" >/dev/null
check "a: the 31 matchable jobs finish" \
    wait_until 120 sqlis 31 "SELECT count(*) FROM jobs WHERE role = 'bench' AND state = 'done'"
check "a: every cuda/sm_90 job ran on the cuda fleet" \
    sqlis 10 "SELECT count(*) FROM jobs WHERE role = 'bench' AND backend = 'cuda'
              AND arch = 'sm_90' AND state = 'done' AND worker LIKE 'cudafleet-%'"
check "a: every host job ran on the host fleet" \
    sqlis 15 "SELECT count(*) FROM jobs WHERE role = 'bench' AND backend = 'host'
              AND state = 'done' AND worker LIKE 'hostfleet-%'"
check "a: jobs without a backend ran on one of the fleets" \
    sqlis 6 "SELECT count(*) FROM jobs WHERE role = 'bench' AND backend IS NULL
             AND state = 'done' AND (worker LIKE 'hostfleet-%' OR worker LIKE 'cudafleet-%')"
# Give the dispatcher more passes to make a mistake with the job nobody
# matches: a marker job inserted now is dispatched by a later pass, and the
# sm_80 job was queued all along (a state to wait for, not a sleep).
sql "INSERT INTO jobs (role, kind, backend, arch, payload)
     VALUES ('bench', 'noop', NULL, NULL, '{\"marker\": true}')" >/dev/null
check "a: a job inserted later is dispatched (the dispatcher made more passes)" \
    wait_until 60 sqlis 1 "SELECT count(*) FROM jobs WHERE role = 'bench' AND payload ? 'marker' AND state = 'done'"
check "a: the cuda/sm_80 job stays queued, never leased" \
    sqlis "queued|0|" "SELECT state, attempts, coalesce(worker, '') FROM jobs
                       WHERE role = 'bench' AND arch = 'sm_80'"
check "a: status counts it as the one queued bench job" \
    jtrue '.queues.bench.queued == 1' kfctl status --json
kill -TERM "$HOST_FLEET" "$CUDA_FLEET" 2>/dev/null

# --- b. credits respected -------------------------------------------------
# 60 jobs of 300 ms on one worker with 3 credits: about 6 s if the credits
# are used, 18 s if they are not. The fleet itself records the most jobs it
# held at once; status is sampled on the side, until the fleet exits (or 300
# s from here, a ceiling the fleet's own --until-jobs makes unreachable).
sql "INSERT INTO jobs (role, kind, payload)
     SELECT 'credits', 'noop', '{}' FROM generate_series(1, 60)" >/dev/null
fleet credfleet --workers 1 --credits 3 --delay-ms 300 --role credits --until-jobs 60
CRED_FLEET=$PID
# Sample the coordinator's view while the fleet works: the most jobs it
# lists for the worker, and by how much that ever exceeded the credits.
max_listed=0
over=0
b_end=$((SECONDS + 300))
while kill -0 "$CRED_FLEET" 2>/dev/null; do
    line=$(kfctl status --json 2>/dev/null | jq -r \
        '[.workers[] | select(.id | startswith("credfleet-"))] | [(map(.jobs | length) | max // 0), (map((.jobs | length) - .credits) | max // -1)] | @tsv')
    if [ -n "$line" ]; then
        read -r n o <<<"$line"
        [ "$n" -gt "$max_listed" ] && max_listed=$n
        [ "$o" -gt "$over" ] && over=$o
    fi
    [ $SECONDS -gt $b_end ] && break
    sleep 0.1
done
wait "$CRED_FLEET" 2>/dev/null
report=$(grep '^{' "$T/credfleet.log" | tail -1)
say "b: fleet reported: $report; status listed at most $max_listed job(s) on it"
held=$(jq -r '.max_held // -1' <<<"$report" 2>/dev/null)
check "b: the fleet did all 60 jobs" [ "$(jq -r '.jobs // -1' <<<"$report" 2>/dev/null)" = 60 ]
check "b: the worker never held more than its 3 credits" [ "${held:--1}" -le 3 ]
check "b: the worker held at least 2 at once" [ "${held:--1}" -ge 2 ]
check "b: status never listed more jobs than credits" [ "$over" -le 0 ]
check "b: status saw it holding several jobs" [ "$max_listed" -ge 2 ]
check "b: all 60 credit jobs done" \
    sqlis 60 "SELECT count(*) FROM jobs WHERE role = 'credits' AND state = 'done'"

# --- c. heartbeat loss requeues -------------------------------------------
requeued_before=$(kfctl status --json | jq '.counters.requeued')
# --silent-after 0: the worker goes silent on its first job, keeping its
# socket open (a hung worker, not a closed connection).
fleet silent --workers 1 --credits 1 --role hb --silent-after 0 --duration-s 300
SILENT_FLEET=$PID
check "c: the silent worker registered" wait_until 60 registered silent 1
sql "INSERT INTO jobs (role, kind, payload)
     SELECT 'hb', 'noop', '{}' FROM generate_series(1, 5)" >/dev/null
check "c: the silent worker leased one job" \
    wait_until 60 sqlis 1 "SELECT count(*) FROM jobs WHERE role = 'hb' AND worker LIKE 'silent-%'"
hung=$(sql "SELECT id FROM jobs WHERE role = 'hb' AND worker LIKE 'silent-%' LIMIT 1")
say "c: job ${hung:-?} is held by the silent worker"
fleet healthy --workers 1 --credits 2 --role hb
HEALTHY_FLEET=$PID
check "c: the silent worker is declared dead" \
    wait_until 60 grep -q "worker silent-.* missed its heartbeats" "$T/coordinator.log"
check "c: it is gone from the status snapshot" wait_until 60 registered silent 0
check "c: all 5 hb jobs done" \
    wait_until 120 sqlis 5 "SELECT count(*) FROM jobs WHERE role = 'hb' AND state = 'done'"
check "c: the hung job was finished by the healthy worker on its 2nd attempt" \
    sqlis "done|2|t" "SELECT state, attempts, worker LIKE 'healthy-%' FROM jobs WHERE id = ${hung:-0}"
check "c: its row keeps why it was requeued" \
    sqlis 1 "SELECT count(*) FROM jobs WHERE id = ${hung:-0} AND reason LIKE '%missed its heartbeats%'"
check "c: the other hb jobs took one attempt each" \
    sqlis 4 "SELECT count(*) FROM jobs WHERE role = 'hb' AND attempts = 1"
requeued_after=$(kfctl status --json | jq '.counters.requeued')
check "c: counters.requeued went up ($requeued_before -> $requeued_after)" \
    [ "${requeued_after:-0}" -ge $((${requeued_before:-0} + 1)) ]
kill -TERM "$SILENT_FLEET" "$HEALTHY_FLEET" 2>/dev/null

# --- d. max attempts -------------------------------------------------------
# A real run through kfctl: its first job (compiling the reference) is
# created by the coordinator with --max-attempts 2. Two compile workers
# that both go silent on their first job take the two attempts.
fleet hang --workers 2 --credits 1 --role compile --backends host --silent-after 0 --duration-s 300
check "d: two hanging compile workers registered" wait_until 60 registered hang 2
out=$(kfctl submit "$ROOT/examples/tasks/softmax/task.json" --generations 1 --population 1 \
      --seed 1 --json 2>"$T/submit.err")
run=$(jq -r '.run_id // empty' <<<"$out" 2>/dev/null)
check "d: submit gave a run id" [ -n "$run" ]
run=${run:-0}
check "d: the job fails for good" \
    wait_until 120 sqlis failed "SELECT state FROM jobs WHERE run_id = $run AND role = 'compile'"
check "d: after exactly 2 attempts" \
    sqlis "2|2" "SELECT attempts, max_attempts FROM jobs WHERE run_id = $run AND role = 'compile'"
check "d: the job's reason names the missed heartbeats" \
    sqlis 1 "SELECT count(*) FROM jobs WHERE run_id = $run AND reason LIKE '%missed its heartbeats%'"
check "d: the run failed, its reason kept" \
    wait_until 60 sqlis 1 "SELECT count(*) FROM runs WHERE id = $run AND status = 'failed'
                          AND reason LIKE '%missed its heartbeats%'"
check "d: counters.jobs_failed counts it" jtrue '.counters.jobs_failed >= 1' kfctl status --json
say "d: run reason: $(sql "SELECT reason FROM runs WHERE id = $run")"

# --- e. late result discarded ----------------------------------------------
# kf_fuzz_send --late-worker takes one job, hangs past the liveness (2 s)
# and then sends its RESULT with the old lease anyway, after 10 s: five
# times the liveness, so the coordinator has declared it dead before the
# late RESULT comes, also on a loaded machine (a RESULT that came first
# would be taken as the job's result, and the checks below would fail).
late_before=$(kfctl status --json | jq '.counters.late_results')
start late "$TOOLS/kf_fuzz_send" --late-worker "$KF_WORKER_ENDPOINT" --role late --late-ms 10000
LATE_PID=$PID
check "e: the late worker registered" wait_until 60 registered late 1
sql "INSERT INTO jobs (role, kind, payload) VALUES ('late', 'noop', '{}')" >/dev/null
check "e: it leased the job" \
    wait_until 60 sqlis 1 "SELECT count(*) FROM jobs WHERE role = 'late' AND worker LIKE 'late-%'"
fleet ontime --workers 1 --credits 1 --role late
check "e: the job is done by the next worker, on its 2nd lease" \
    wait_until 60 sqlis "done|2|t" "SELECT state, lease, worker LIKE 'ontime-%' FROM jobs WHERE role = 'late'"
check "e: the late worker sent its RESULT and exited" wait_until 120 eval '! kill -0 "$LATE_PID" 2>/dev/null'
say "e: late worker: $(grep '^{' "$T/late.log" | tail -1)"
check "e: the late worker did send its RESULT for lease 1" \
    jtrue '.lease == 1 and .job_id > 0' eval "grep '^{' '$T/late.log' | tail -1"
check "e: the late RESULT was counted as late" \
    wait_until 60 jtrue ".counters.late_results >= ${late_before:-0} + 1" kfctl status --json
check "e: and did not overwrite the job's result" \
    sqlis 0 "SELECT count(*) FROM jobs WHERE role = 'late' AND result ? 'late'"

check "the coordinator is still running" kill -0 "$COORD_PID"
check "the coordinator counted no malformed message" \
    jtrue '.counters.malformed == 0' kfctl status --json
finish
