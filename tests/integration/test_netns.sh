#!/usr/bin/env bash
# test_netns.sh - three hosts on one machine, and a cable pulled.
# Host A is this namespace: the suite's PostgreSQL and the coordinator,
# serving workers on tcp:// with CURVE on a bridge. Hosts B (gateway and
# compile worker) and C (exec worker) are network namespaces joined to the
# bridge by veth pairs. During a run, C's link is cut while it evaluates:
# the coordinator declares it dead and requeues the job; the link comes
# back, the worker re-registers on its own and the job is finished once.
# Every candidate ends in a final state, with at most one evaluation each.
# Needs root and `ip netns`; says so and passes vacuously where either is
# missing (the check list then says "skipped").
. "$(dirname "$0")/lib.sh"

S=$(( $$ % 100000 ))
NET=10.213.$(( S % 250 ))
BR=kfbr$S
if [ "$(id -u)" -ne 0 ] || ! ip netns add "kfa$S" 2>/dev/null; then
    say "skipped: network namespaces cannot be created here (needs root and iproute2)"
    finish
fi
ip netns del "kfa$S"
netns_cleanup() {
    stop_all
    ip netns del "kfb$S" 2>/dev/null
    ip netns del "kfc$S" 2>/dev/null
    ip link del "$BR" 2>/dev/null
}
trap 'netns_cleanup; kf_cleanup' EXIT

ip link add "$BR" type bridge && ip addr add "$NET.1/24" dev "$BR" && ip link set "$BR" up || exit 1
n=2
for h in b c; do
    ip netns add "kf$h$S" || exit 1
    ip link add "vr$h$S" type veth peer name "vn$h$S" || exit 1
    ip link set "vn$h$S" netns "kf$h$S"
    ip link set "vr$h$S" master "$BR" up
    ip netns exec "kf$h$S" ip addr add "$NET.$n/24" dev "vn$h$S"
    ip netns exec "kf$h$S" ip link set "vn$h$S" up
    ip netns exec "kf$h$S" ip link set lo up
    n=$((n + 1))
done
check "hosts B and C have no route but the bridge's" \
    sh -c "[ \"\$(ip netns exec kfb$S ip -4 route | wc -l)\" = 1 ] && [ \"\$(ip netns exec kfc$S ip -4 route | wc -l)\" = 1 ]"

K=$T/keys
mkdir -p "$T/allow"
for k in coordinator hostb hostc; do kfctl keygen "$K" "$k" >/dev/null; done
cp "$K/hostb" "$K/hostc" "$T/allow/"
PORT=$((20000 + S % 30000))
WEP=tcp://$NET.1:$PORT
db_new
start_coordinator --eval-min-time-s 1 --eval-warmup-s 0.2 --eval-min-samples 5 \
    --eval-warmup-calls 2 --heartbeat-ms 200 --liveness 5 \
    --worker-endpoint "$WEP" --curve-cert "$K/coordinator" --curve-allow-dir "$T/allow" \
    --search-defaults "$ROOT/tests/fixtures/search/fast-defaults.json"
check "the coordinator answers" wait_until 20 kfctl status --json
check "host C reaches host A's worker port over the bridge" \
    wait_until 15 ip netns exec "kfc$S" bash -c "exec 3<>/dev/tcp/$NET.1/$PORT"
keys() { echo --curve-cert "$K/$1" --curve-server-key "$K/coordinator"; }
# shellcheck disable=SC2046
start gateway ip netns exec "kfb$S" "$BIN/kf-llm-gateway" --coordinator "$WEP" --heartbeat-ms 200 $(keys hostb)
# shellcheck disable=SC2046
start compile ip netns exec "kfb$S" "$BIN/kf-compile-worker" --coordinator "$WEP" --heartbeat-ms 200 $(keys hostb)
# shellcheck disable=SC2046
start exec ip netns exec "kfc$S" "$BIN/kf-exec-worker" --coordinator "$WEP" --heartbeat-ms 200 $(keys hostc)
check "three workers from two hosts" wait_until 120 jtrue '.workers | length == 3' kfctl status --json
EXEC_ID=$(kfctl workers --json | jq -r '.workers[] | select(.role == "execute") | .id')

run=$(kfctl submit "$ROOT/examples/tasks/softmax/task.json" --generations 1 --population 3 \
      --seed 11 --json | jq -r .run_id)
check "host C's exec worker gets an evaluation" \
    wait_until 120 jtrue '[.workers[] | select(.role == "execute") | .jobs[]] | length == 1' kfctl workers --json
job=$(kfctl workers --json | jq '[.workers[] | select(.role == "execute") | .jobs[]][0]')
ip link set "vrc$S" down
say "cut host C's link while it runs job $job"
check "the coordinator declares host C's worker dead and requeues its job" \
    wait_until 15 grep -q "worker $EXEC_ID missed its heartbeats; requeueing its 1 job(s)" "$T/coordinator.log"
check "kfctl workers no longer lists it" \
    jtrue '[.workers[] | select(.role == "execute")] | length == 0' kfctl workers --json
check "the job is back in the queue with its attempt counted" \
    [ "$(sql "SELECT state || ' ' || attempts FROM jobs WHERE id = $job")" = "queued 1" ]
sleep 2
ip link set "vrc$S" up
say "restored host C's link"
check "host C's worker re-registers by itself" \
    wait_until 30 jtrue "[.workers[] | select(.id == \"$EXEC_ID\")] | length == 1" kfctl workers --json
check "it noticed the silence and reconnected" grep -q "coordinator silent" "$T/exec.log"
check "the run finishes" wait_until 400 jtrue '.run.status == "done"' kfctl show "$run" --json --timeout 30
say "candidates by status: $(sql "SELECT string_agg(status || ' ' || n, ', ') FROM (SELECT status, count(*) n FROM candidates GROUP BY 1) s")"
say "the cut job: $(sql "SELECT kind, state, attempts, reason FROM jobs WHERE id = $job")"
# Usually on its second lease; a third when the first reconnect raced the
# worker's own silence timeout (heartbeat_ms x liveness is 1 s here).
check "the cut job was done on a later lease" \
    [ "$(sql "SELECT state = 'done' AND attempts >= 2 FROM jobs WHERE id = $job")" = t ]
check "every candidate is in a final state" \
    jtrue '(.candidates | length) >= 3 and ([.candidates[] | select(.status | IN("correct","incorrect","compile_failed","crashed","timeout","failed") | not)] | length) == 0' \
    kfctl show "$run" --json --timeout 30
check "at most one evaluation per candidate" \
    [ "$(sql "SELECT count(*) FROM (SELECT candidate_id FROM evaluations GROUP BY 1 HAVING count(*) > 1) d")" = 0 ]
check "no job left queued or leased" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE state IN ('queued', 'leased')")" = 0 ]
check "no handshake was refused" jtrue '.counters.auth_denied == 0' kfctl status --json
finish
