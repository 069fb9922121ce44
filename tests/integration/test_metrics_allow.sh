#!/usr/bin/env bash
# test_metrics_allow.sh - /metrics is served only to the addresses the
# operator allows (metrics_allow; loopback by default, issue 13, item 8):
# with an allow-list that leaves loopback out, a scrape from 127.0.0.1 is
# closed unread and counted (counters.metrics_refused); with loopback
# allowed, the same scrape answers 200.
. "$(dirname "$0")/lib.sh"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
db_new
PORT=$(port)
start_coordinator "${COORD_HB[@]}" --metrics-address "127.0.0.1:$PORT" \
    --metrics-allow "10.11.12.0/24, fd00::/8"
check "the coordinator answers" wait_until 60 kfctl status --json
refused() { ! curl -s --max-time 10 -o /dev/null "http://127.0.0.1:$PORT/metrics"; }
check "a scrape from an address not allowed gets no answer" wait_until 60 refused
check "and is counted" wait_until 60 jtrue '.counters.metrics_refused >= 1' kfctl status --json
stop_all

PORT=$(port)
start_coordinator "${COORD_HB[@]}" --metrics-address "127.0.0.1:$PORT" \
    --metrics-allow "10.11.12.0/24, 127.0.0.1/32"
check "with loopback allowed the scrape answers 200" \
    wait_until 60 curl -sf -o "$T/m.txt" "http://127.0.0.1:$PORT/metrics"
check "it is the exposition text" grep -q '^kf_uptime_seconds ' "$T/m.txt"
stop_all

start_coordinator "${COORD_HB[@]}" --metrics-address "127.0.0.1:$(port)" \
    --metrics-allow "not-an-address"
check "a bad allow-list entry stops the start" wait_until 60 eval '! kill -0 "$COORD_PID" 2>/dev/null'
check "naming the entry" grep -q "metrics_allow: 'not-an-address'" "$T/coordinator.log"
finish
