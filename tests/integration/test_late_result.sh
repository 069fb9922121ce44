#!/usr/bin/env bash
# test_late_result.sh - a result for a lease the worker no longer holds is
# discarded: a worker that heartbeats too rarely is declared dead while it
# still works on its job; the job is requeued and finished by another
# worker; when the first one's result finally arrives it changes nothing
# and is counted as late.
. "$(dirname "$0")/lib.sh"

db_new
start_coordinator --heartbeat-ms 200 --liveness 3
wait_until 20 kfctl status --json
sql "INSERT INTO jobs (role, kind, payload) VALUES ('bench', 'noop', '{}')" >/dev/null
# Heartbeats every 10 s and a 3 s job: dead after 0.6 s, result at 3 s.
start slow "$TOOLS/kf_noop_fleet" --endpoint "$KF_WORKER_ENDPOINT" --role bench \
    --heartbeat-ms 10000 --delay-ms 3000 --duration-s 5 --id-prefix slow
leased_by_slow() { [ "$(sql "SELECT count(*) FROM jobs WHERE worker LIKE 'slow-%'")" -eq 1 ]; }
check "the slow worker takes the job" wait_until 10 leased_by_slow
check "its lease is lost and the job requeued" \
    wait_until 10 jtrue '.counters.requeued >= 1' kfctl status --json
start fast "$TOOLS/kf_noop_fleet" --endpoint "$KF_WORKER_ENDPOINT" --role bench \
    --duration-s 6 --id-prefix fast
job_done() { [ "$(sql "SELECT state || ' ' || attempts || ' ' || split_part(coalesce(worker, ''), '-', 1) FROM jobs")" = "done 2 fast" ]; }
check "another worker finishes it on the second attempt" wait_until 10 job_done
check "the first worker's result arrives late and is discarded" \
    wait_until 10 jtrue '.counters.late_results >= 1' kfctl status --json
check "the job is still done by the second worker" job_done
finish
