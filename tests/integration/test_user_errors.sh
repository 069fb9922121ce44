#!/usr/bin/env bash
# test_user_errors.sh - the mistakes a new user makes, each answered with
# something to act on (issue 16, items 6 and 8):
#   without a coordinator: --version; "did you mean" for a mistyped command,
#   option, task-file field and (with one) run-config key; the top-level help with whole first sentences; usage errors
#   as JSON on stdout under --json; an --endpoint that is no endpoint, and
#   a remote one without CURVE, named in the variables kfctl reads; a
#   folder given as a task file or as --config;
#   with one: a model no connected gateway can serve refused at submit; a
#   target no exec worker runs warned at submit, shown as "waiting" by
#   show and watch, and failed after worker_wait_s; a CUDA task submitted
#   without --target runs on cuda, not on the host; a failed run shows no
#   empty grids, its candidates' whole verdict detail, and `best` says it
#   ended rather than "no correct candidate yet";
#   what a user needs to see: `show` gives each candidate's median and the
#   reference's, and the best's p10-p90, `runs` the best's and the
#   reference's medians; `best -o` writes the tuning point
#   that was measured and says both medians; `source RUN CANDIDATE` gives any
#   candidate's source, status, times and whole verdict.
. "$(dirname "$0")/lib.sh"

# run ARGS...: kfctl with a hard limit; stdout $T/out, stderr $T/err, $rc.
run() {
    timeout -s KILL 60 "$BIN/kfctl" "$@" >"$T/out" 2>"$T/err"
    rc=$?
}
rc_is() { [ "$rc" -eq "$1" ] || { say "  exit $rc, wanted $1; stderr: $(head -c 400 "$T/err")"; return 1; }; }
err_has() { grep -q -- "$1" "$T/err" || { say "  stderr lacks '$1': $(head -c 600 "$T/err")"; return 1; }; }
out_has() { grep -q -- "$1" "$T/out" || { say "  stdout lacks '$1': $(head -c 600 "$T/out")"; return 1; }; }
# out_json FILTER: stdout holds JSON satisfying FILTER (jq -e alone passes an
# empty file).
out_json() { [ -s "$T/out" ] && jq -e "$1" "$T/out" >/dev/null || { say "  stdout: $(head -c 300 "$T/out")"; return 1; }; }
out_lacks() { ! grep -q -- "$1" "$T/out" || { say "  stdout has '$1'"; return 1; }; }

# --- without a coordinator -------------------------------------------------
run --version
check "--version: exit 0" rc_is 0
check "--version: names kfctl and the protocol" grep -Eq '^kfctl [0-9]+\.[0-9]+\.[0-9]+ \(protocol [0-9]+\)$' "$T/out"
run --version --json
check "--version --json: an object" out_json '.kfctl and .protocol'

run sumbit x.json
check "mistyped command: exit 2" rc_is 2
check "mistyped command: did you mean submit" err_has "did you mean 'submit'"
run frobnicate
check "a word near no command gets no guess" err_has "unknown command 'frobnicate' (kfctl --help)"
run runs --jsn
check "mistyped option: did you mean --json" err_has "did you mean '--json'"
run submit x.json --genrations=3
check "mistyped option with a value: did you mean --generations" err_has "did you mean '--generations'"

# The top-level help: each command's first sentence whole, never cut where
# its summary's first line happened to break.
run --help
check "help: exit 0" rc_is 0
check "help: drain's line is a whole sentence" \
    grep -Eq "^  drain +stop giving WORKER \(an id from 'kfctl workers'\) new jobs$" "$T/out"
# Each command's text with its wrapped lines joined, one line per command.
sed -n '/^Commands:/,/^$/p' "$T/out" | awk '/^  [a-z]/ { if (line) print line; line = $0; next }
    /^            / { sub(/^ +/, " "); line = line $0 } END { if (line) print line }' >"$T/help-lines"
check "help: every command listed ($(wc -l <"$T/help-lines") lines)" [ "$(wc -l <"$T/help-lines")" -ge 10 ]
check "help: no command's text ends mid-sentence (a comma, or 'it', 'the', 'and', 'or')" \
    bash -c "! grep -Eq '(,| it| the| and| or)\$' '$T/help-lines'"

# Usage errors under --json: one object on stdout, the message on stderr.
run status --json --bogus
check "--json usage error: exit 2" rc_is 2
check "--json usage error: {code: usage, reason} on stdout" \
    out_json '.code == "usage" and (.reason | test("--bogus"))'
check "--json usage error: the message on stderr too" err_has "unknown option '--bogus'"
run show abc --json
check "--json bad RUN: JSON on stdout" out_json '.code == "usage"'

# Endpoints, said in the variables kfctl reads, not in daemon config keys.
run status --endpoint foo --status-endpoint foo
check "--endpoint foo: exit non-zero" [ "$rc" -ne 0 ]
check "--endpoint foo: says it is no endpoint and names KF_CLIENT_ENDPOINT" \
    bash -c "grep -q \"'foo' is no endpoint\" '$T/err' && grep -q KF_CLIENT_ENDPOINT '$T/err'"
run status --status-endpoint tcp://192.0.2.1:5555
check "remote endpoint without CURVE: names KF_CURVE_CERT, KF_CURVE_SERVER_KEY, KF_ALLOW_PLAIN_TCP" \
    bash -c "grep -q KF_CURVE_CERT '$T/err' && grep -q KF_CURVE_SERVER_KEY '$T/err' && grep -q KF_ALLOW_PLAIN_TCP '$T/err'"
check "remote endpoint without CURVE: no daemon config key named" \
    bash -c "! grep -q 'curve_cert\|curve_server_key' '$T/err'"

# A mistyped field of a task file: the field meant, before anything is sent.
jq '. + {tolerence: .tolerance} | del(.tolerance)' "$ROOT/examples/tasks/softmax/task.json" \
    >"$T/typo.json"
cp "$ROOT/examples/tasks/softmax/reference.c" "$T/"
run submit "$T/typo.json" --endpoint "ipc://$T/nowhere.sock"
check "mistyped task field: exit 2, did you mean tolerance" \
    bash -c "[ $rc -eq 2 ] && grep -q \"tolerence: unknown field; did you mean 'tolerance'\" '$T/err'"

# A folder where a file is expected.
mkdir -p "$T/empty-folder"
run submit "$T/empty-folder" --endpoint "ipc://$T/nowhere.sock"
check "a folder without task.json: exit 2" rc_is 2
check "a folder without task.json: said so, not as bad JSON" \
    bash -c "grep -q 'is a folder without a task.json' '$T/err' && ! grep -qi 'expected near' '$T/err'"
run submit "$ROOT/examples/tasks/softmax/task.json" --config "$T/empty-folder" \
    --endpoint "ipc://$T/nowhere.sock"
check "--config FOLDER: said to be a folder" err_has "is a folder"

# --- with a coordinator: no gateway yet, so the keyless run is accepted ----
db_new
start_coordinator "${COORD_FAST[@]}" --worker-wait-s 20
start compile "$BIN/kf-compile-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
start exec "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" --perf off
check "compile and exec workers connect" \
    wait_until 180 jtrue '.workers | length == 2' kfctl status --json
# Accepted (no gateway to ask); the gateway that then comes has no key, so
# nothing is generated and the run fails with long verdict details.
env -u OPENAI_API_KEY "$BIN/kfctl" submit "$ROOT/examples/tasks/softmax/task.json" \
    --model openai:gpt-4.1 --generations 1 --population 2 --timeout 30 >"$T/keyless.id" 2>/dev/null
keyless=$(cat "$T/keyless.id")
start gateway env -u OPENAI_API_KEY -u OPENAI_BASE_URL "$BIN/kf-llm-gateway" \
    --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
check "the gateway connects" wait_until 180 jtrue '.workers | length == 3' kfctl status --json

# A model no connected gateway can serve: refused at submit, no run made.
before=$(sql "SELECT count(*) FROM runs")
run submit "$ROOT/examples/tasks/softmax/task.json" --model openai:gpt-4.1 --timeout 30
check "keyless model: refused (exit 1)" rc_is 1
check "keyless model: names the key variable and the docs" \
    bash -c "grep -q OPENAI_API_KEY '$T/err' && grep -q 'docs/single-node.md' '$T/err'"
check "keyless model: no run made" [ "$(sql "SELECT count(*) FROM runs")" = "$before" ]
run submit "$ROOT/examples/tasks/softmax/task.json" --model openai:gpt-4.1 --json --timeout 30
check "keyless model --json: the ERROR object on stdout" out_json '.code == "bad-request"'

# A mistyped run-config key: refused by the coordinator, naming the key meant.
run submit "$ROOT/examples/tasks/softmax/task.json" --set tunning=false --timeout 30
check "mistyped config key: refused, did you mean tuning" \
    bash -c "[ $rc -eq 1 ] && grep -q \"config.tunning: unknown key; did you mean 'tuning'\" '$T/err'"

# A target no exec worker runs (no GPU has sm_10): warned, waiting, failed.
run submit "$ROOT/examples/tasks/softmax/task.json" --target cuda:sm_10 \
    --generations 1 --population 1 --timeout 30
check "unserved target: submitted (exit 0)" rc_is 0
cudarun=$(cat "$T/out")
check "unserved target: warned at submit, with the wait" \
    bash -c "grep -q 'warning: no connected exec worker runs target cuda:sm_10' '$T/err' && grep -q worker_wait_s '$T/err'"
check "unserved target: show says what the run waits for" \
    wait_until 60 bash -c "'$BIN/kfctl' show $cudarun | grep -q '^waiting: no connected .* worker runs cuda:sm_10'"
timeout -s KILL 120 "$BIN/kfctl" watch "$cudarun" >"$T/watch.out" 2>"$T/watch.err"
check "unserved target: watch says it waits, once" \
    [ "$(grep -c "run $cudarun waiting: no connected" "$T/watch.err")" = 1 ]
check "unserved target: the run fails after worker_wait_s" \
    [ "$(sql "SELECT status FROM runs WHERE id = $cudarun")" = failed ]
check "unserved target: its reason names what it waited for" \
    grep -q "no connected .* worker runs cuda:sm_10.*worker_wait_s" \
    <<<"$(sql "SELECT reason FROM runs WHERE id = $cudarun")"
check "unserved target: no job of it left queued" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $cudarun AND state = 'queued'")" = 0 ]

# A CUDA task without --target: a cuda run, said on stderr.
run submit "$ROOT/examples/tasks/softmax_cuda" --generations 1 --population 1 --timeout 30
check "CUDA task folder, no --target: submitted" rc_is 0
check "CUDA task, no --target: says it runs on cuda" err_has "written in CUDA: target cuda"
check "CUDA task, no --target: the run's target is cuda, not host" \
    [ "$(sql "SELECT target FROM runs WHERE id = $(cat "$T/out")")" = cuda ]
kfctl cancel "$(cat "$T/out")" >/dev/null 2>&1

# The keyless run: failed, and shown as such.
check "keyless run ends failed" \
    wait_until 180 bash -c "[ \"\$(psql -qAt -h '$KF_TEST_PGHOST' -p '$KF_TEST_PGPORT' -d '$DB' -c 'SELECT status FROM runs WHERE id = $keyless')\" = failed ]"
run show "$keyless"
check "failed run: show prints no empty grids, one line instead" \
    bash -c "grep -q '^archive: empty' '$T/out' && ! grep -q '^memory x algorithm' '$T/out'"
detail=$(sql "SELECT verdict_detail FROM candidates WHERE run_id = $keyless AND verdict_detail IS NOT NULL ORDER BY id LIMIT 1" | tr '\n\t\r' '   ' | sed 's/ *$//')
check "failed run: a verdict detail past 60 characters to check against" [ "${#detail}" -gt 60 ]
check "failed run: show prints the whole verdict detail" grep -qF -- "$detail" "$T/out"
run best "$keyless"
check "failed run: best exits 1" rc_is 1
check "failed run: best says the run ended, not 'yet'" \
    bash -c "grep -q 'ended (failed) with no correct candidate' '$T/err' && ! grep -q 'yet' '$T/err'"

# --- what a user needs to see (item 7) ---------------------------------------
# A tuned run: best -o writes the tuning point that was measured, with the
# times behind the speedup; source shows any candidate with its verdict.
tuned=$(kfctl submit "$ROOT/examples/tasks/softmax/task.json" --generations 1 --population 2 \
        --seed 3 --set tuning=true --set tuning_rounds=1 --set tuning_configs=2 \
        --wait --json --timeout 30 2>/dev/null | jq -r .run_id)
check "the tuned run is done" [ "$(sql "SELECT status FROM runs WHERE id = $tuned")" = done ]
bestc=$(sql "SELECT best_candidate_id FROM runs WHERE id = $tuned")
point=$(sql "SELECT e.figures->'best_config' FROM evaluations e WHERE e.candidate_id = $bestc AND e.correct ORDER BY e.id DESC LIMIT 1")
say "best candidate $bestc, tuning point $point"
run best "$tuned" -o "$T/best.c"
check "best -o: exit 0" rc_is 0
check "best -o: says both medians" out_has "us against the reference's"
if [ -n "$point" ] && [ "$point" != null ] && [ "$(jq 'length' <<<"$point")" -gt 0 ]; then
    jq -r 'to_entries[] | "#define \(.key) \(.value)"' <<<"$point" >"$T/defines"
    check "best -o: the measured tuning point is written into the file" \
        bash -c "while read -r l; do grep -qxF -- \"\$l\" '$T/best.c' || exit 1; done <'$T/defines'"
    check "best -o: and named in its line" out_has "tuning point"
else
    say "the best candidate ($bestc) is not a tuned one: the tuning-point checks are skipped"
fi
run show "$tuned"
check "show: the best kernel's absolute times, p10-p90 included" \
    grep -Eq "^best kernel times: [0-9.]+ us \(p10-p90 [0-9.]+-[0-9.]+\) against the reference's [0-9.]+ us" "$T/out"
# The median of the timing whose figure counts: a would-be best is timed
# again (confirm_best) and counts at the lower figure, with that timing's
# median.
cns=$(printf '%.1f' "$(sql "SELECT CASE WHEN c.verify_speedup = c.speedup
                             AND c.verify_figures->'candidate' ? 'median_ns'
                             THEN (c.verify_figures->'candidate'->>'median_ns')::float8 / 1000
                             ELSE (SELECT e.candidate_ns / 1000 FROM evaluations e
                                   WHERE e.candidate_id = c.id AND e.correct ORDER BY e.id DESC LIMIT 1) END
                             FROM candidates c WHERE c.id = $bestc")")
check "show: the candidate table gives each candidate's median (TIME_US, REF_US)" \
    bash -c "grep -q 'TIME_US *REF_US' '$T/out' && grep -Eq '^ +$bestc .* $cns +[0-9.]+ ' '$T/out'"
run runs
check "runs: the best's median and the reference's beside BEST (BEST_US, REF_US)" \
    bash -c "grep -q 'BEST_US *REF_US' '$T/out' && grep -Eq '^ +$tuned .* $cns +[0-9.]+ ' '$T/out'"
run source "$tuned" "$bestc"
check "source: exit 0" rc_is 0
sql "SELECT convert_from(data, 'UTF8') FROM blobs WHERE hash = (SELECT source_hash FROM candidates WHERE id = $bestc)" >"$T/blob.c"
check "source: stdout is the candidate's source" diff -q -B "$T/out" "$T/blob.c"
check "source: stderr has its status, both medians and the verdict" \
    bash -c "grep -q 'of run $tuned: correct' '$T/err' && grep -q 'us against the reference' '$T/err' && grep -q '^verdict: all checks passed' '$T/err'"
kcand=$(sql "SELECT id FROM candidates WHERE run_id = $keyless ORDER BY id LIMIT 1")
run source "$keyless" "$kcand"
check "source of a candidate never generated: says so, with the whole verdict" \
    bash -c "grep -q 'has no source' '$T/err' && grep -qF -- \"verdict: $detail\" '$T/err'"
run source "$tuned" 999999
check "source of an unknown candidate: not-found, exit 1" \
    bash -c "[ $rc -eq 1 ] && grep -q 'has no candidate 999999' '$T/err'"
finish
