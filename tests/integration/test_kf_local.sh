#!/usr/bin/env bash
# test_kf_local.sh - deploy/kf-local as docs/single-node.md tells a user to
# run it (issue 16, item 8): a private cluster made on a port other than
# 5432 keeps that port in the state folder, and a later `kf-local status`
# without KF_PG_PORT prints the port the cluster really has; a later `up`
# asking for another port while it runs is refused, naming the kept one;
# an API key in the environment of `up` reaches the gateway (it reports
# openai among what it is ready to serve) and appears in no log.
. "$(dirname "$0")/lib.sh"

KL=$ROOT/deploy/kf-local
export KF_STATE=$T/st KF_BIN=$BIN
# kf-local's own endpoints file, not the ones lib.sh exports.
unset KF_CLIENT_ENDPOINT KF_STATUS_ENDPOINT KF_EVENT_ENDPOINT KF_WORKER_ENDPOINT
KEY=sk-kflocal-test-$$-not-a-real-key
PORT=$((5600 + $$ % 300))
trap 'env -u KF_PG_PORT "$KL" down >/dev/null 2>&1; kf_cleanup' EXIT

OPENAI_API_KEY=$KEY KF_PG_PORT=$PORT timeout 300 "$KL" up >"$T/up.out" 2>&1
rc=$?
say "up: exit $rc; $(tail -n 3 "$T/up.out")"
check "kf-local up with KF_PG_PORT=$PORT and an API key: exit 0" [ "$rc" -eq 0 ]
check "the cluster's port is kept in the state folder" [ "$(cat "$KF_STATE/pg.port" 2>/dev/null)" = "$PORT" ]

env -u KF_PG_PORT timeout 120 "$KL" status >"$T/status.out" 2>&1
say "status: $(grep postgresql "$T/status.out")"
check "status without KF_PG_PORT prints the real port" \
    grep -q "^postgresql .*running (.*, port $PORT)" "$T/status.out"

KF_PG_PORT=$((PORT + 1)) timeout 120 "$KL" up >"$T/up2.out" 2>&1
rc=$?
check "up asking for another port while the cluster runs: refused" [ "$rc" -ne 0 ]
check "the refusal names the kept port" grep -q "runs on port $PORT" "$T/up2.out"

check "the gateway is ready to serve openai (the key reached it)" \
    wait_until 120 jtrue '[.workers[] | select(.role == "generate") | .capabilities.ready[]]
                         | index("openai") != null' "$BIN/kfctl" workers --json
check "the key is in no log" bash -c "! grep -rqF -- '$KEY' '$KF_STATE/logs'"

env -u KF_PG_PORT timeout 120 "$KL" down >"$T/down.out" 2>&1
check "down stops the private cluster on its kept port" grep -q "stopped PostgreSQL" "$T/down.out"
finish
