#!/usr/bin/env bash
# test_command_run.sh - a whole run through the gateway's command backend,
# and what a run remembers of what it tried (issue 15, items 1 and 4):
#
# - `--model command:NAME` starts the operator's program (the execve
#   argument list once lacked its closing NULL, and no command ever ran);
#   the program here answers every prompt with the same GELU kernel under
#   a different comment, and keeps each prompt it was given;
# - that kernel is compiled and timed once: every later candidate has the
#   same source once comments and spacing are removed, so it reuses the
#   first one's verdict instead of being compiled and evaluated again;
# - the prompts of one generation differ, generation 0 asks nothing about
#   a "last kernel", and later prompts list the parent's recent children
#   and name the last one tried from it, each try with its own words for
#   what it changed (the "// change: " line its code opens with);
# - a run whose command cannot start generates nothing, and ends failed
#   with the reason rather than done.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/prompts"
{
    echo '# Keeps the prompt; answers with the reference GELU under a fresh comment.'
    echo 'n=$(date +%s%N)'
    echo "cat >\"$T/prompts/req-\$n.md\""
    echo 'printf "Analysis: the plain loop.\n\`\`\`c\n// change: the plain loop, answer %s\n" "$n"'
    echo "cat \"$ROOT/examples/tasks/gelu/reference.c\""
    echo 'printf "\`\`\`\n"'
} >"$T/kern.sh"
printf 'command_kern = sh %s\ncommand_broken = %s --flag\n' "$T/kern.sh" "$T/no-such-program" \
    >"$T/models.conf"

db_new
start_coordinator "${COORD_FAST[@]}"
start gateway "$BIN/kf-llm-gateway" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" \
    --models-file "$T/models.conf" --command-timeout-s 60
start compile "$BIN/kf-compile-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
start exec "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
check "three workers" wait_until 120 jtrue '.workers | length == 3' kfctl status --json

out=$(kfctl submit "$ROOT/examples/tasks/gelu/task.json" --model command:kern \
      --generations 3 --population 2 --seed 5 --set tuning=true --set tuning_rounds=1 \
      --set tuning_configs=2 --wait --json --timeout 10 2>"$T/submit.err")
run=$(jq -r .run_id <<<"$out")
say "run $run: $(jq -c '{status, reason}' <<<"$out")"
check "the command run is done" [ "$(jq -r .status <<<"$out")" = done ]
check "the command wrote the candidates (generator command)" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND generator = 'command'
              AND phase = 'search'")" -eq 6 ]
check "its first kernel is correct" \
    [ "$(sql "SELECT c.status FROM candidates c JOIN evaluations e ON e.candidate_id = c.id
              WHERE c.run_id = $run AND c.phase = 'search' LIMIT 1")" = correct ]
check "the same kernel was compiled once in the search, not once per candidate" \
    [ "$(sql "SELECT count(*) FROM jobs j JOIN candidates c ON c.id = j.candidate_id
              WHERE c.run_id = $run AND j.kind = 'compile' AND c.phase = 'search'")" -eq 1 ]
check "and evaluated once" \
    [ "$(sql "SELECT count(*) FROM evaluations e JOIN candidates c ON c.id = e.candidate_id
              WHERE c.run_id = $run AND c.phase = 'search'")" -eq 1 ]
check "every other search candidate says whose verdict it repeats" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND phase = 'search'
              AND verdict_detail LIKE 'the same source as candidate %'")" -eq 5 ]
check "the tuning candidate is swept although its source repeats a search candidate" \
    [ "$(sql "SELECT count(*) FROM jobs j JOIN candidates c ON c.id = j.candidate_id
              WHERE c.run_id = $run AND j.kind = 'compile' AND c.phase = 'tuning'
              AND (j.payload->>'tune_max_configs')::int = 2")" -eq 1 ]
check "a repeat of a judged kernel keeps its verdict, and never counts as a new figure" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND status = 'correct'
              AND verdict_detail LIKE 'the same source as candidate %'
              AND fidelity IS DISTINCT FROM 'screen'")" -eq 0 ]
check "the run's best is a kernel that was timed, not a repeat" \
    [ "$(sql "SELECT (best_candidate_id IN (SELECT c.id FROM candidates c JOIN evaluations e
              ON e.candidate_id = c.id WHERE c.run_id = $run))::int FROM runs WHERE id = $run")" = 1 ]
check "the two prompts of generation 0 differ" \
    [ "$(sql "SELECT count(DISTINCT prompt) FROM candidates WHERE run_id = $run AND generation = 0")" -eq 2 ]
check "no prompt of generation 0 asks about a last kernel" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND generation = 0
              AND prompt ILIKE '%last kernel%'")" -eq 0 ]
check "a later prompt lists the parent's recent children and its last one" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND generation = 2
              AND prompt LIKE '%## Recent attempts from the kernel to improve%'
              AND prompt LIKE '%## Last kernel tried from the kernel to improve (candidate %'")" -ge 1 ]
# Round 29: each try's own words for what it changed (its code's first
# line) reach the later prompts' lists of tries.
check "a later prompt quotes a try's change line" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND generation > 0
              AND prompt LIKE '%its author''s words for it: \"the plain loop, answer %'")" -ge 1 ]
# One prompt per job the gateway answered: the candidates' and the
# meta-prompter's (a short run has meta rounds too, docs/search.md).
asked=$(sql "SELECT count(*) FROM jobs WHERE run_id = $run AND role = 'generate'
             AND state = 'done'")
prompts_match() { [ "$asked" -ge 7 ] && [ "$(ls "$T/prompts" | wc -l)" -eq "$asked" ]; }
check "the command saw each prompt ($asked generate jobs done)" prompts_match
# For the record: example prompts, where the caller asks for them.
if [ -n "${KF_PROMPT_SAMPLES:-}" ] && [ -d "$KF_PROMPT_SAMPLES" ]; then
    sql "SELECT prompt FROM candidates WHERE run_id = $run AND generation = 0 AND slot = 1" \
        >"$KF_PROMPT_SAMPLES/host-gelu-gen0-slot1.md"
    sql "SELECT prompt FROM candidates WHERE run_id = $run AND generation = 2 ORDER BY slot LIMIT 1" \
        >"$KF_PROMPT_SAMPLES/host-gelu-gen2.md"
fi

out=$(kfctl submit "$ROOT/examples/tasks/gelu/task.json" --model command:broken \
      --generations 1 --population 2 --seed 6 --wait --json --timeout 10 2>"$T/submit2.err")
run2=$(jq -r .run_id <<<"$out")
reason=$(sql "SELECT reason FROM runs WHERE id = $run2")
say "run $run2: $(sql "SELECT status FROM runs WHERE id = $run2"): $reason"
check "a run whose command cannot start ends failed" \
    [ "$(sql "SELECT status FROM runs WHERE id = $run2")" = failed ]
check "with the reason: nothing generated, and the command's error" \
    grep -q "no candidate could be generated.*no-such-program" <<<"$reason"
finish
