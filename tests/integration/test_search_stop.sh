#!/usr/bin/env bash
# test_search_stop.sh - early stopping (docs/search.md, "The end";
# coordinator/kf_stop.c): a run whose best has not risen by more than
# stop_margin for stop_after completed generations ends its main phase
# there, still runs its tuning round, and its reason says so; a run with
# the same settings but stop_after 0 searches every generation.
# The margin is set far above anything the offline generator can find
# (10000%), so the best "stops improving" from generation 0 on and the
# test does not depend on which variants the generator proposes.
. "$(dirname "$0")/lib.sh"

db_new
start_coordinator "${COORD_FAST[@]}"
start_workers
check "status answers with three workers" \
    wait_until 180 jtrue '.workers | length == 3' kfctl status --json

cp "$ROOT/examples/tasks/softmax/reference.c" "$T/reference.c"
cp "$ROOT/tests/fixtures/search/simd_softmax.c" "$T/simd.c"
jq '.initial = {"language": "c", "file": "simd.c"}' "$ROOT/examples/tasks/softmax/task.json" \
    >"$T/task.json"

submit() {   # submit NAME ARGS...: a run through --wait; its id in $NAME
    local name=$1 out
    shift
    out=$(kfctl submit "$T/task.json" --population 2 --seed 5 --wait --json --timeout 120 \
          --set max_in_flight=1 "$@" 2>>"$T/submit.err")
    check "run $name finishes done" [ "$(jq -r .status <<<"$out")" = done ]
    printf -v "$name" '%s' "$(jq -r .run_id <<<"$out")"
}
count() { sql "SELECT count(*) FROM candidates WHERE run_id = $1 AND ($2)"; }

# S: 6 generations asked for, stop after 2 without improvement, one tuning round.
submit S --generations 6 --set stop_after=2 --set stop_margin=100 \
    --set tuning=true --set tuning_rounds=1 --set tuning_configs=2
reason=$(sql "SELECT reason FROM runs WHERE id = ${S:-0}")
say "run S ($S): $reason"
check "run S stopped its main phase after generation 2 (0, 1, 2: 6 candidates)" \
    [ "$(count "${S:-0}" "phase = 'search'")" -eq 6 ]
check "run S planned nothing past generation 2" \
    [ "$(count "${S:-0}" "phase = 'search' AND generation > 2")" -eq 0 ]
check "run S's reason says it stopped early, over which best, by what margin, in how many generations" \
    grep -qE '^stopped early after 3 of 6 generations: no improvement over [0-9]+\.[0-9]{2}x by more than 10000% in 2 generations' <<<"$reason"
# With a margin no kernel can pass, the record is generation 0's best.
check "run S's reason names the record that was not beaten (generation 0's best)" \
    [ "$(sql "SELECT count(*) FROM runs r WHERE r.id = ${S:-0} AND r.reason LIKE
              '%over ' || to_char((SELECT max(speedup) FROM candidates c WHERE c.run_id = r.id
              AND c.phase = 'search' AND c.generation = 0 AND c.status = 'correct'),
              'FM9999990.00') || 'x%'")" -eq 1 ]
check "run S still ran its tuning round" \
    [ "$(count "${S:-0}" "phase = 'tuning'")" -ge 1 ]
check "run S's reason names the tuning round after the stop" \
    grep -q '; then 1 tuning round$' <<<"$reason"
check "run S's stored config holds stop_after and stop_margin" \
    [ "$(sql "SELECT (config->>'stop_after') || ',' || (config->>'stop_margin') FROM runs WHERE id = ${S:-0}")" = "2,100" ]

# N: the same without stop_after (the default, 0): every generation.
submit N --generations 4
check "run N (stop_after 0, the default) searched all 4 generations" \
    [ "$(count "${N:-0}" "phase = 'search'")" -eq 8 ]
check "run N's reason is the usual one" \
    jtrue '.run.reason == "completed 4 generations"' kfctl show "${N:-0}" --json
check "run N's stored config has the defaults filled in (stop_after 0, stop_margin 0.02)" \
    [ "$(sql "SELECT (config->>'stop_after') || ',' || (config->>'stop_margin') FROM runs WHERE id = ${N:-0}")" = "0,0.02" ]

check "a stop_after out of bounds is refused, naming it" \
    sh -c "'$BIN/kfctl' submit '$T/task.json' --set stop_after=-1 2>&1 | grep -q 'stop_after'"
finish
