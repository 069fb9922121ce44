#!/usr/bin/env bash
# test_figures_again.sh - a host exec worker whose figures were measured
# beside other work measures them again once the host is quiet, and tells
# the coordinator (exec-worker/kf_figures_retry.h):
#
#   with stress-ng keeping every core busy while it starts, the worker's
#   capabilities (kfctl workers, the workers row) say figures_measured_busy
#   and no figures file is kept; its tries while the load runs say "still
#   busy" and change nothing;
#   once the load stops, the same worker (same id, no reconnect) says
#   HELLO again: its capabilities no longer say busy, every core's cold
#   read and the copy ceiling are higher than the busy ones, the workers
#   row says the same, and the figures file is kept as a quiet start keeps
#   it.
#
# Every wait is for a state, bounded. The quiet this needs is the host's:
# on a machine other work keeps busy the last wait runs out.
. "$(dirname "$0")/../integration/lib.sh"

db_new
start_coordinator "${COORD_HB[@]}"
check "the coordinator answers" wait_until 30 kfctl status --json

cpus=$(nproc)
stress-ng --cpu "$cpus" --timeout 600 --quiet >"$T/stress.log" 2>&1 &
stress=$!
PIDS+=("$stress")
check "stress-ng keeps $cpus core(s) busy" \
    wait_until 30 bash -c "[ \$(pgrep -c -P $stress) -ge $cpus ]"

FIG=$T/figures/host-figures.json
mkdir -p "$T/figures"
start exec "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" \
    --perf off --host-figures "$FIG" --figures-retry-s 1 --figures-retries 1000
EXEC_PID=$PID

# dev FIELD: the exec worker's first device's FIELD, as kfctl workers says.
dev() {
    kfctl workers --json 2>/dev/null \
        | jq -r ".workers[] | select(.role == \"execute\") | .capabilities.devices[0].$1 // \"none\""
}
row() {
    sql "SELECT capabilities->'devices'->0->>'$1' FROM workers WHERE role = 'execute'"
}
check "the exec worker registers" \
    wait_until 120 jtrue '[.workers[] | select(.role == "execute")] | length == 1' kfctl workers --json
ID=$(kfctl workers --json | jq -r '.workers[] | select(.role == "execute") | .id')
busy_read=$(dev read_cold_all_cores_gbs)
busy_copy=$(dev copy_bandwidth_gbs)
say "measured beside stress-ng: cold read all cores $busy_read GB/s, copy $busy_copy GB/s"
check "kfctl workers says figures_measured_busy" [ "$(dev figures_measured_busy)" = true ]
check "so does the workers row" [ "$(row figures_measured_busy)" = true ]
check "the figures file keeps them marked busy" \
    jtrue ".busy == true and .caps.read_cold_all_cores_gbs == $busy_read" cat "$FIG"
check "a try beside the load says still busy" \
    wait_until 60 grep -q "figures measured again: still busy" "$T/exec.log"
check "and the capabilities still say busy" [ "$(dev figures_measured_busy)" = true ]

kill -TERM "$stress" 2>/dev/null
wait "$stress" 2>/dev/null
untrack "$stress"
check "the worker's capabilities stop saying busy once the host is quiet" \
    wait_until 300 eval '[ "$(dev figures_measured_busy)" = none ]'
grep "figures measured again" "$T/exec.log" | tail -n 3 >&2
quiet_read=$(dev read_cold_all_cores_gbs)
quiet_copy=$(dev copy_bandwidth_gbs)
say "measured again: cold read all cores $quiet_read GB/s (was $busy_read), copy $quiet_copy GB/s (was $busy_copy)"
check "every core's cold read is higher than the busy figure" \
    awk -v q="$quiet_read" -v b="$busy_read" 'BEGIN { exit !(q + 0 > b + 0 && b + 0 > 0) }'
check "the copy ceiling is higher than the busy figure" \
    awk -v q="$quiet_copy" -v b="$busy_copy" 'BEGIN { exit !(q + 0 > b + 0 && b + 0 > 0) }'
line="figures measured again: quiet, cold read all cores $(printf %.1f "$quiet_read") GB/s (was $(printf %.1f "$busy_read"))"
check "the log says it: $line" grep -qF "$line" "$T/exec.log"
check "the workers row has the new figures" \
    wait_until 30 eval 'awk -v r="$(row read_cold_all_cores_gbs)" -v q="$quiet_read" \
        "BEGIN { d = r - q; exit !(r != \"\" && d < 1e-9 && d > -1e-9) }" \
        && [ -z "$(row figures_measured_busy)" ]'
check "the same worker said HELLO again, without a reconnect" \
    bash -c "[ \"\$('$BIN/kfctl' workers --json | jq -r '.workers[] | select(.role == \"execute\") | .id')\" = '$ID' ] \
             && grep -q 'capabilities changed: HELLO again' '$T/exec.log' \
             && ! grep -q 'reconnecting' '$T/exec.log'"
check "the figures file is kept, with the new figures, no longer marked busy" \
    jtrue ".caps.read_cold_all_cores_gbs == $quiet_read and .version > 0 and .busy == null" cat "$FIG"
finish
