#!/usr/bin/env bash
# test_progress.sh - progress that tells the truth (issue 16, items 3 and
# 7): a run of one generation and one tuning round says at submit how many
# candidates it will make, tuning included; `kfctl watch` on a terminal
# (a pseudo-terminal here) names the phase, generation then tuning round,
# never past its last, with elapsed time and an estimate of what remains;
# `kfctl show` polled all along never counts done past the total nor goes
# backwards; after the run, runs and show agree with the candidates made.
# Then an interrupted `submit --wait` on a pipe names its run first and
# last, and --json says an unreachable coordinator as JSON on stdout.
. "$(dirname "$0")/lib.sh"

db_new
start_coordinator "${COORD_FAST[@]}"
start_workers
check "status answers with three workers" \
    wait_until 180 jtrue '.workers | length == 3' kfctl status --json

TUNE=(--set tuning=true --set tuning_rounds=1 --set tuning_configs=2)
run=$(kfctl submit "$ROOT/examples/tasks/softmax/task.json" --generations 2 --population 2 \
      --seed 5 "${TUNE[@]}" --timeout 30 2>"$T/submit.err")
say "submit: $(cat "$T/submit.err")"
check "submit prints the run id alone on stdout" grep -Eq '^[0-9]+$' <<<"$run"
check "submit says the run and what it will make, tuning round included" \
    grep -q "^submitted run $run: up to 6 candidates (2 generations x 2, then 1 tuning round of up to 2)" \
    "$T/submit.err"

# kfctl show polled while the run goes: done, total, phase, round, rounds.
(
    while :; do
        kfctl show "$run" --json --timeout 10 2>/dev/null |
            jq -c '.run | [.done, .total, .phase, .tuning_round, .tuning_rounds, .status, .in_flight]'
        kfctl runs --timeout 10 2>/dev/null | grep -E "^ +$run " >>"$T/runs.txt"
        [ -f "$T/stop-polling" ] && break
    done >"$T/polls.txt"
) &
POLLER=$!

# kfctl watch on a pseudo-terminal: the transcript as a person sees it.
timeout -s KILL 600 python3 - "$BIN/kfctl" "$run" "$T/watch.txt" <<'PY'
import os, pty, sys
kfctl, run, path = sys.argv[1:4]
pid, fd = pty.fork()
if pid == 0:
    os.execv(kfctl, [kfctl, "watch", run, "--timeout", "10"])
chunks = []
while True:
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    chunks.append(data)
_, status = os.waitpid(pid, 0)
open(path, "wb").write(b"".join(chunks))
sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 99)
PY
rc=$?
touch "$T/stop-polling"
wait "$POLLER"
check "watch exits 0 when the run is done" [ "$rc" -eq 0 ]
tr '\r' '\n' <"$T/watch.txt" >"$T/watch-lines.txt"
say "watch transcript (last lines):"; tail -n 4 "$T/watch-lines.txt" >&2
check "watch draws in place on a terminal" grep -q $'\r' "$T/watch.txt"
check "watch names the generation" grep -q "generation [12]/2" "$T/watch-lines.txt"
check "watch names the tuning round" grep -q "tuning round 1/1" "$T/watch-lines.txt"
check "watch never shows a generation past the last" \
    bash -c "! grep -Eq 'generation ([3-9]|[0-9]{2,})/2' '$T/watch-lines.txt'"
check "watch shows the elapsed time" grep -q "elapsed [0-9]" "$T/watch-lines.txt"
check "watch shows an estimate, said to be one" grep -Eq "about [0-9hms]+ left \(estimate\)" \
    "$T/watch-lines.txt"
check "watch shows no estimate before 3 candidates are done" \
    bash -c "! grep -E ' [0-2]/[0-9]+ done' '$T/watch-lines.txt' | grep -q estimate"
check "watch ends with the result line" grep -q "^run $run done: best speedup" "$T/watch-lines.txt"

made=$(sql "SELECT count(*) FROM candidates WHERE run_id = $run")
tuned=$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND generation >= 2")
say "made $made candidates, $tuned in the tuning round; $(wc -l <"$T/polls.txt") polls"
check "the run made a tuning round" [ "$tuned" -ge 1 ]
check "the polls saw the tuning phase" grep -q '"tuning",1,1' "$T/polls.txt"
check "no poll counted done past the total" \
    jq -se 'all(.[]; .[0] <= .[1])' "$T/polls.txt"
check "no poll's total fell below what the run made, while it ran" \
    jq -se --argjson made "$made" 'all(.[]; .[5] != "running" or .[1] >= $made)' "$T/polls.txt"
check "no poll's round passed the rounds" jq -se 'all(.[]; .[3] <= .[4])' "$T/polls.txt"
check "done never went backwards" \
    jq -se '[.[] | .[0]] as $d | all(range(1; $d | length); $d[.] >= $d[. - 1])' "$T/polls.txt"
check "the phase never went back from tuning" \
    jq -se '[.[] | .[2]] as $p | all(range(1; $p | length); $p[. - 1] != "tuning" or $p[.] == "tuning")' \
    "$T/polls.txt"
check "kfctl runs never shows a generation past the last" \
    bash -c "! grep -Eq 'generation ([3-9]|[0-9]{2,})/2' '$T/runs.txt'"

check "after the run, show counts every candidate made, done of total" \
    jtrue ".run.done == $made and .run.total == $made and .run.phase == \"tuning\"
           and .run.tuning_round == 1 and .run.in_flight == 0" kfctl show "$run" --json
kfctl runs >"$T/runs-after.txt"
check "after the run, runs says its tuning round and $made/$made" \
    grep -Eq "^ +$run +done .*tuning round 1/1 +$made/$made " "$T/runs-after.txt"
kfctl show "$run" >"$T/show.txt"
check "show names the phase and counts" \
    grep -q "^tuning round 1/1  candidates $made/$made done, 0 in flight" "$T/show.txt"
check "show says the elapsed time, no estimate once ended" \
    bash -c "grep -q '^elapsed [0-9]' '$T/show.txt' && ! grep -q estimate '$T/show.txt'"

# --- an interrupted wait on a pipe names its run ------------------------------
# A run no worker here can evaluate (no CUDA exec worker) is still running
# when the wait is interrupted, however fast the machine; cancelled after.
"$BIN/kfctl" submit "$ROOT/examples/tasks/softmax/task.json" --target cuda:sm_90 --generations 4 \
    --population 2 --seed 6 \
    --wait --json --timeout 30 >"$T/wait.out" 2>"$T/wait.err" &
WAITER=$!
check "submit --wait on a pipe says its run id first" \
    wait_until 60 grep -q "^submitted run [0-9]*: up to 8 candidates" "$T/wait.err"
run2=$(sed -n 's/^submitted run \([0-9]*\):.*/\1/p' "$T/wait.err" | head -n 1)
kill -INT "$WAITER"
wait "$WAITER"
rc=$?
check "the interrupted wait exits 130" [ "$rc" -eq 130 ]
check "the interrupted wait names the run it leaves running" \
    grep -q "stopped following run $run2; it keeps running" "$T/wait.err"
check "with --json the interrupted wait prints its run as JSON" \
    jq -e ".run_id == $run2 and .interrupted == true" "$T/wait.out"
kfctl cancel "$run2" >/dev/null

# --- --json errors as JSON on stdout -----------------------------------------
timeout -s KILL 60 "$BIN/kfctl" --endpoint "ipc://$T/nobody.sock" --timeout 0.5 runs --json \
    >"$T/err.out" 2>"$T/err.err"
rc=$?
check "no coordinator: exit 3" [ "$rc" -eq 3 ]
check "no coordinator: --json says so on stdout" jq -e '.code == "unreachable" and (.reason | length > 0)' \
    "$T/err.out"
check "an unknown run: --json gives the coordinator's ERROR on stdout" \
    bash -c "'$BIN/kfctl' show 99999 --json 2>/dev/null | jq -e '.code == \"not-found\"' >/dev/null"
finish
