#!/usr/bin/env bash
# test_late_result.sh - a result for a lease the worker no longer holds is
# discarded: a worker that heartbeats too rarely is declared dead while it
# still works on its job; the job is requeued and finished by another
# worker; when the first one's result finally arrives it changes nothing
# and is counted as late. The coordinator has the suite's heartbeat
# margin (3 s): the slow worker's silence is its own (a heartbeat every
# 100 s), so it is declared dead at 3 s while its job takes 10 s, and the
# worker that takes over is not taken for dead when load stalls it (with
# 0.6 s it could be, and then nobody finished the job). Every wait is for
# a state; the fleets run until the test stops them, so a late start
# under load cannot end one before its part is done.
. "$(dirname "$0")/lib.sh"

db_new
start_coordinator "${COORD_HB[@]}"
check "the coordinator answers" wait_until 60 kfctl status --json
sql "INSERT INTO jobs (role, kind, payload) VALUES ('bench', 'noop', '{}')" >/dev/null
# Heartbeats every 100 s and a 10 s job: dead after 3 s, its result 10 s
# after the lease, with no heartbeat before it.
start slow "$TOOLS/kf_noop_fleet" --endpoint "$KF_WORKER_ENDPOINT" --role bench \
    --heartbeat-ms 100000 --delay-ms 10000 --id-prefix slow
# Leased by the slow worker, now or before its requeue (which names it),
# so a poll that comes after the 3 s is no failure.
leased_by_slow() { [ "$(sql "SELECT count(*) FROM jobs WHERE worker LIKE 'slow-%' OR reason LIKE 'worker slow-%'")" -eq 1 ]; }
check "the slow worker takes the job" wait_until 60 leased_by_slow
check "its lease is lost and the job requeued" \
    wait_until 60 jtrue '.counters.requeued >= 1' kfctl status --json
start fast "$TOOLS/kf_noop_fleet" --endpoint "$KF_WORKER_ENDPOINT" --role bench \
    --heartbeat-ms 200 --id-prefix fast
job_done() { [ "$(sql "SELECT state || ' ' || attempts || ' ' || split_part(coalesce(worker, ''), '-', 1) FROM jobs")" = "done 2 fast" ]; }
check "another worker finishes it on the second attempt" wait_until 60 job_done
check "the first worker's result arrives late and is discarded" \
    wait_until 60 jtrue '.counters.late_results >= 1' kfctl status --json
check "the job is still done by the second worker" job_done
finish
