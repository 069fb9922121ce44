#!/usr/bin/env bash
# test_auth.sh - CURVE on the coordinator's tcp:// endpoints.
# The coordinator serves workers, clients, status and events on
# tcp://127.0.0.1 with its own certificate and an allow-list folder. A
# worker whose key is listed registers and finishes jobs; one whose key is
# not listed never registers and each refusal is counted in status; copying
# its public certificate into the folder admits it without a restart. kfctl
# needs a listed key too. Without a certificate, a tcp:// endpoint beyond
# loopback is refused unless allow_plain_tcp, which warns.
. "$(dirname "$0")/lib.sh"

FLEET=$TOOLS/kf_noop_fleet
db_new
K=$T/keys
ALLOW=$T/allow
mkdir -p "$ALLOW"
check "kfctl keygen makes the coordinator's pair" kfctl keygen "$K" coordinator
check "the secret file is private (0600)" [ "$(stat -c %a "$K/coordinator_secret")" = 600 ]
check "keygen refuses to overwrite a key" eval '! kfctl keygen "$K" coordinator 2>/dev/null'
kfctl keygen "$K" good >/dev/null
kfctl keygen "$K" late >/dev/null
kfctl keygen "$K" ops >/dev/null
cp "$K/good" "$K/ops" "$ALLOW/"

# Free ports from the kernel: bind to port 0 and read back what it gave.
ports=$(python3 -c 'import socket
s=[socket.socket() for _ in range(4)]
[x.bind(("127.0.0.1",0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')
read -r PW PC PS PE <<<"$ports"
export KF_WORKER_ENDPOINT=tcp://127.0.0.1:$PW KF_CLIENT_ENDPOINT=tcp://127.0.0.1:$PC
export KF_STATUS_ENDPOINT=tcp://127.0.0.1:$PS KF_EVENT_ENDPOINT=tcp://127.0.0.1:$PE
start_coordinator --curve-cert "$K/coordinator" --curve-allow-dir "$ALLOW" \
    "${COORD_HB[@]}"

# kfctl: without keys it gets nothing; with a listed key it works.
check "kfctl without keys gets no answer" eval '! kfctl status --timeout 1 >/dev/null 2>&1'
export KF_CURVE_CERT=$K/ops KF_CURVE_SERVER_KEY=$K/coordinator
check "kfctl with a listed key gets status" wait_until 120 kfctl status --json
check "status shows the allow-list" \
    jtrue '.auth.allowed_keys == 2 and (.auth.public_key | length) == 40' kfctl status --json

start good "$FLEET" --endpoint "$KF_WORKER_ENDPOINT" --role auth --credits 1 \
    --id-prefix good --heartbeat-ms 100 --curve-cert "$K/good" --curve-server-key "$K/coordinator"
check "the worker with a listed key registers over tcp://127.0.0.1" \
    wait_until 60 jtrue '[.workers[] | select(.id | startswith("good-"))] | length == 1' \
    kfctl status --json
sql "INSERT INTO jobs (role, kind, payload) SELECT 'auth', 'noop', '{}' FROM generate_series(1, 5)" >/dev/null
check "it finishes 5 jobs" wait_until 60 eval \
    '[ "$(sql "SELECT count(*) FROM jobs WHERE role = '"'auth'"' AND state = '"'done'"'")" = 5 ]'

# A real worker daemon (common/kf_worker.c) with a listed key, too.
start compile "$BIN/kf-compile-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" \
    --name real-good --curve-cert "$K/good" --curve-server-key "$K/coordinator"
check "a real compile worker with a listed key registers" \
    wait_until 120 jtrue '[.workers[] | select(.name == "real-good")] | length == 1' \
    kfctl status --json

denied0=$(kfctl status --json | jq '.counters.auth_denied')
# A refused handshake ends that connection for good in libzmq; the worker
# daemon's own reconnect (heartbeat_ms x liveness of silence, then backoff
# up to 5 s) is what tries again, so the refused worker is a real daemon.
start late "$BIN/kf-compile-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" \
    --name real-late --curve-cert "$K/late" --curve-server-key "$K/coordinator"
# Waits for the refusal (a state), then looks: not registered.
check "its handshakes are refused and counted" \
    wait_until 120 jtrue ".counters.auth_denied > $denied0 and .auth.denied > 0 and (.auth.last_denied | length) == 40" \
    kfctl status --json
check "the worker with an unlisted key does not register" \
    jtrue '[.workers[] | select(.name == "real-late")] | length == 0' kfctl status --json
late_key=$(sed -n 's/.*public-key = "\(.*\)"/\1/p' "$K/late")
check "the coordinator log names the refused key" \
    grep -qF "key $late_key is not in" "$T/coordinator.log"
check "it keeps retrying (refused more than once)" \
    wait_until 120 jtrue ".counters.auth_denied > $denied0 + 1" kfctl status --json

# Admit it: copy its public certificate into the folder, no restart.
cp "$K/late" "$ALLOW/"
check "after its key is added it registers without a restart" \
    wait_until 120 jtrue '[.workers[] | select(.name == "real-late")] | length == 1' \
    kfctl status --json
check "status counts 3 allowed keys" jtrue '.auth.allowed_keys == 3' kfctl status --json

# A wrong server key: kfctl cannot even finish the handshake.
check "kfctl with the wrong server key gets nothing" \
    eval '! KF_CURVE_SERVER_KEY=$K/good kfctl status --timeout 1 >/dev/null 2>&1'
check "a public-only file is refused as our certificate" \
    eval '! KF_CURVE_CERT=$ALLOW/ops kfctl status --timeout 1 2>&1 | grep -q "no secret key" && false || true'
unset KF_CURVE_CERT KF_CURVE_SERVER_KEY
stop_all

# Without a certificate: tcp:// beyond loopback is refused ...
db_new
addr=$(ip -4 -o addr show scope global 2>/dev/null | awk '{print $4}' | cut -d/ -f1 | head -1)
if [ -n "$addr" ]; then
    # It must exit by itself; 124 means it was still serving after 120 s.
    timeout -k 5 120 "$BIN/kf-coordinator" --database-url "$DB_URL" --worker-endpoint "tcp://$addr:$PW" \
        --client-endpoint "ipc://$T/c2.sock" --status-endpoint "ipc://$T/s2.sock" \
        --event-endpoint "ipc://$T/e2.sock" >"$T/plain-refused.log" 2>&1
    rc=$?
    check "a non-loopback tcp:// endpoint without CURVE is refused (exit $rc)" \
        [ "$rc" -ne 0 -a "$rc" -ne 124 -a "$rc" -ne 137 ]
    check "... saying why" grep -q "refusing to serve tcp://$addr" "$T/plain-refused.log"
    # ... unless the operator says so, with a warning.
    export KF_CLIENT_ENDPOINT=ipc://$T/c2.sock KF_STATUS_ENDPOINT=ipc://$T/s2.sock
    export KF_EVENT_ENDPOINT=ipc://$T/e2.sock KF_WORKER_ENDPOINT=tcp://$addr:$PW
    start_coordinator --allow-plain-tcp
    check "with allow_plain_tcp it serves" wait_until 120 kfctl status --json
    check "... and warns at start-up" grep -q "PLAIN TCP" "$T/coordinator.log"
    # It must exit by itself, refusing: 124 means it was still running.
    timeout -k 5 120 "$BIN/kf-compile-worker" --coordinator "$KF_WORKER_ENDPOINT" >"$T/w-refused.log" 2>&1
    rc=$?
    check "a worker refuses a plain remote coordinator without allow_plain_tcp (exit $rc)" \
        [ "$rc" -ne 0 -a "$rc" -ne 124 -a "$rc" -ne 137 ]
else
    say "no global IPv4 address here: the non-loopback checks are skipped"
fi
finish
