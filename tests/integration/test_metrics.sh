#!/usr/bin/env bash
# test_metrics.sh - the coordinator's Prometheus endpoint, read with curl.
# After a small search: every documented metric is there, the text parses
# as the exposition format, the figures agree with the database and with
# kfctl status, a client that connects and says nothing does not block the
# coordinator, and other paths get 404.
. "$(dirname "$0")/lib.sh"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT/metrics
db_new
start_coordinator "${COORD_FAST[@]}" --metrics-address "127.0.0.1:$PORT"
start_workers
# An exec worker probes for PyTorch before it registers: seconds, more
# under the sanitizers on a busy machine.
check "three workers" wait_until 120 jtrue '.workers | length == 3' kfctl status --json
check "GET /metrics answers 200" wait_until 60 curl -sf -o "$T/m0.txt" "$URL"
check "a new coordinator shows 1 idle execute worker" \
    wait_until 60 sh -c "curl -sf '$URL' | grep -qx 'kf_workers{role=\"execute\",state=\"idle\"} 1'"

out=$(kfctl submit "$ROOT/examples/tasks/softmax/task.json" --generations 2 --population 3 \
      --seed 5 --wait --json --timeout 30)
check "the run finishes" [ "$(jq -r .status <<<"$out")" = done ]
# The database's figures are a snapshot the coordinator reads every 5 s
# while it is scraped (a scrape runs no statement): wait until it shows
# the finished run.
val() { awk -v k="$1" '$1 == k { print $2 }' "$T/m.txt"; }
evals=$(sql "SELECT count(*) FROM evaluations")
caught_up() {
    curl -sf -D "$T/headers.txt" -o "$T/m.txt" "$URL" \
        && [ "$(val 'kf_runs{status="done"}')" = 1 ] && [ "$(val kf_evaluations_total)" = "$evals" ]
}
check "the figures catch up with the finished run" wait_until 60 caught_up
check "content type is the exposition format 0.0.4" \
    grep -qi '^content-type: text/plain; version=0.0.4' "$T/headers.txt"

# The format: HELP and TYPE per family, then NAME{LABELS} VALUE lines.
check "every line parses" python3 - "$T/m.txt" <<'PY'
import re, sys
ok = True
types = {}
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("# HELP "):
        continue
    m = re.match(r"# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|summary|histogram|untyped)$", line)
    if m:
        types[m.group(1)] = m.group(2)
        continue
    m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? (-?[0-9.e+-]+|NaN|[+-]Inf)$', line)
    if not m:
        print("bad line:", line); ok = False; continue
    base = re.sub(r"_(sum|count)$", "", m.group(1))
    if m.group(1) not in types and base not in types:
        print("no TYPE for", m.group(1)); ok = False
sys.exit(0 if ok else 1)
PY
for name in kf_uptime_seconds kf_workers kf_worker_credits kf_worker_jobs kf_database_up \
            kf_db_ping_seconds kf_db_pass_seconds_sum kf_db_pass_seconds_count \
            kf_db_pass_max_seconds kf_db_statements_total kf_db_errors_total kf_queue_depth \
            kf_jobs kf_runs kf_llm_tokens_total kf_llm_cost_usd_total kf_evaluations_total \
            kf_evaluations_per_minute kf_messages_received_total kf_messages_sent_total \
            kf_jobs_dispatched_total kf_jobs_done_total kf_jobs_failed_total \
            kf_jobs_requeued_total kf_jobs_handed_back_total kf_late_results_total \
            kf_protocol_errors_total kf_metrics_scrapes_total kf_metrics_snapshot_age_seconds; do
    grep -q "^# TYPE $name " "$T/m.txt" || grep -q "^# TYPE ${name%_sum} \|^# TYPE ${name%_count} " "$T/m.txt" \
        || { say "missing: $name"; missing=1; }
done
check "every documented metric is present" [ -z "${missing:-}" ]
check "every metric in the text is documented in docs/operations.md" \
    sh -c "for n in \$(grep '^# TYPE' '$T/m.txt' | awk '{print \$3}'); do grep -q \"\\\`\$n\" '$ROOT/docs/operations.md' || { echo \"undocumented \$n\" >&2; exit 1; }; done"

check "kf_evaluations_total equals the evaluations table ($evals)" [ "$(val kf_evaluations_total)" = "$evals" ]
check "evaluations in the last minute > 0" awk -v v="$(val kf_evaluations_per_minute)" 'BEGIN { exit !(v > 0) }'
check 'kf_runs{status="done"} is 1' [ "$(val 'kf_runs{status="done"}')" = 1 ]
done_c=$(sql "SELECT count(*) FROM jobs WHERE role = 'compile' AND state = 'done'")
check "compile jobs done agree with the database ($done_c)" \
    [ "$(val 'kf_jobs{role="compile",state="done"}')" = "$done_c" ]
# The ping's length depends on the machine's load; that it is a duration
# in seconds measured since the start does not: above 0, below the uptime.
# (It is timed when the snapshot is read, not at the scrape.)
check "the database is up and its ping timed, in seconds" \
    awk -v u="$(val kf_database_up)" -v p="$(val kf_db_ping_seconds)" -v up="$(val kf_uptime_seconds)" \
        'BEGIN { exit !(u == 1 && p > 0 && p < up) }'
check "transactions were timed" awk -v c="$(val kf_db_pass_seconds_count)" 'BEGIN { exit !(c > 0) }'
tokens=$(sql "SELECT coalesce(sum(input_tokens), 0) FROM runs")
check "input tokens agree with the runs table ($tokens)" \
    [ "$(val 'kf_llm_tokens_total{direction="input"}')" = "$tokens" ]
dispatched=$(kfctl status --json | jq .counters.dispatched)
check "jobs dispatched match kfctl status" \
    awk -v m="$(val kf_jobs_dispatched_total)" -v s="$dispatched" 'BEGIN { exit !(m <= s && m > 0) }'
check "no protocol errors" [ "$(grep -c '^kf_protocol_errors_total.* [1-9]' "$T/m.txt")" = 0 ]

# A client that connects and says nothing does not stop the coordinator
# from answering others, and loses its connection (after 2 s). Not by a
# clock: a coordinator that waited on the silent client could serve
# nobody while that connection is open, so the test asks whether a
# scrape and kfctl were answered while it was still open (the client
# sees no end of its connection). Only a stall of the coordinator as long
# as the 2 s deadline could order it otherwise, so each is tried up to 3
# times: a coordinator that blocks fails every try.
silent_client() {   # silent_client COMMAND...: 0 when COMMAND succeeds while the silent connection is open
    python3 - "$PORT" "$@" <<'PY'
import socket, subprocess, sys
port, cmd = int(sys.argv[1]), sys.argv[2:]
s = socket.create_connection(("127.0.0.1", port))
ok = subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode == 0
try:
    open_after = s.recv(1, socket.MSG_DONTWAIT | socket.MSG_PEEK) != b""
except BlockingIOError:
    open_after = True
print("answered" if ok else "not answered", "; silent connection",
      "still open" if open_after else "closed by then", file=sys.stderr)
s.settimeout(60)   # the deadline closes it: wait for the end of the connection
closed = s.recv(1) == b""
print("the silent connection was then closed" if closed else "the silent client got bytes",
      file=sys.stderr)
sys.exit(0 if ok and open_after and closed else 1)
PY
}
tries() { local i; for i in 1 2 3; do "$@" && return 0; done; return 1; }
check "a silent HTTP client does not block kfctl, and is disconnected" \
    tries silent_client "$BIN/kfctl" status --json --timeout 30
check "... nor another scrape" \
    tries silent_client curl -sf -m 30 -o /dev/null "$URL"
check "another path is 404" [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/nothing")" = 404 ]
check "POST is refused with 405" [ "$(curl -s -o /dev/null -w '%{http_code}' -d x "$URL")" = 405 ]
check "scrapes are counted" awk -v v="$(curl -sf "$URL" | awk '$1 == "kf_metrics_scrapes_total" { print $2 }')" 'BEGIN { exit !(v >= 3) }'
finish
