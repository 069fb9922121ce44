#!/usr/bin/env bash
# tests/bench/ablate.sh - the search's mechanisms one at a time (issue 15,
# item 8): the same host tasks, searched by the offline generator, with
# every mechanism on and then with each switch of
# coordinator/search-defaults.json turned off in turn, and a table of
# what each run reached: its best counted speedup, the candidates planned
# up to the one that holds it (planning order: generation, then slot),
# and the share of candidates that were correct.
#
# Every variant gets a fresh database on one private PostgreSQL (so runs
# of one variant never become the memory of another), and before the
# measured runs one short "prior" run per task, so the `memory` switch has
# an earlier run to draw from in every variant alike. The workers (one of
# each role, the exec worker without a profiler) stay up; the coordinator
# is restarted per variant. It kills only what it started, by pid, and
# stops its PostgreSQL.
#
# The offline generator writes no text from the prompt: meta-prompting and
# the gradient's hints change only what such text would say, so with it
# they can move a run only through parent selection (curiosity weights).
# Measuring them needs a model (KF_ABLATE_MODEL). Profiles have no run
# switch (an exec worker's --perf off) and this host's perf counts nothing
# in a VM without a PMU, so they are not ablated here. On a shared
# machine a single seed's speedups carry its load: read the table as a
# smoke test unless KF_ABLATE_SEEDS lists several seeds.
#
#   KF_BUILD=build                  which build to run
#   KF_ABLATE_TASKS="examples/tasks/gelu/task.json examples/tasks/softmax/task.json"
#   KF_ABLATE_GENERATIONS=3 KF_ABLATE_POPULATION=4 KF_ABLATE_SEEDS="1"
#   KF_ABLATE_MODEL=offline         the generator (command:NAME needs KF_MODELS_FILE)
#   KF_ABLATE_VARIANTS="all meta_prompting islands gradients memory tuning screening dedup confirm_best"
#   KF_ABLATE_OUT=FILE              also write the table (Markdown) to FILE
#   KF_ABLATE_KEEP=1                keep the scratch folder (logs) and say where
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
BUILD=${KF_BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
BIN=$BUILD/bin
. "$ROOT/tests/pg.sh"
PROG=ablate.sh

TASKS=${KF_ABLATE_TASKS:-"examples/tasks/gelu/task.json examples/tasks/softmax/task.json"}
GENS=${KF_ABLATE_GENERATIONS:-3}
POP=${KF_ABLATE_POPULATION:-4}
SEEDS=${KF_ABLATE_SEEDS:-1}
MODEL=${KF_ABLATE_MODEL:-offline}
VARIANTS=${KF_ABLATE_VARIANTS:-"all meta_prompting islands gradients memory tuning screening dedup confirm_best"}
OUT=${KF_ABLATE_OUT:-}
# One short protocol for every run, so a variant's time goes to its search.
TIMING='{"min_time_s":0.2,"min_samples":5,"warmup_s":0.1,"warmup_calls":3}'
SMALL=(--set tuning_rounds=1 --set tuning_configs=4 --set "timing=$TIMING")

for f in kf-coordinator kf-llm-gateway kf-compile-worker kf-exec-worker kfctl; do
    [ -x "$BIN/$f" ] || { echo "$PROG: $BIN/$f missing: run 'make'" >&2; exit 2; }
done
command -v psql >/dev/null && command -v jq >/dev/null \
    || { echo "$PROG: psql and jq are needed (make deps)" >&2; exit 2; }
for v in $VARIANTS; do
    case $v in
        all|meta_prompting|islands|gradients|memory|tuning|screening|dedup|confirm_best) ;;
        *) echo "$PROG: unknown variant '$v'" >&2; exit 2 ;;
    esac
done

T=$(mktemp -d /tmp/kfa.XXXXXX)    # short: ipc paths are capped at 107 bytes
chmod 755 "$T"
PGDIR=$T/pg
PGPORT=$((20000 + RANDOM % 20000))
PIDS=()
COORD_PID=
export KF_CLIENT_ENDPOINT=ipc://$T/c.sock KF_STATUS_ENDPOINT=ipc://$T/s.sock
export KF_EVENT_ENDPOINT=ipc://$T/e.sock KF_WORKER_ENDPOINT=ipc://$T/w.sock
export KF_STATE=$T/state KF_CACHE_DIR=$T/compile-cache

say() { echo "$PROG: $*" >&2; }

cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
    kf_pg_stop "$PGDIR"
    if [ -n "${KF_ABLATE_KEEP:-}" ]; then say "scratch kept in $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_until SECONDS COMMAND...: polls COMMAND every 0.2 s.
wait_until() {
    local end=$((SECONDS + $1))
    shift
    while [ $SECONDS -lt $end ]; do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    return 1
}

start() {   # start NAME ARGS...: a daemon, log in $T/NAME.log, pid in PID
    local name=$1
    shift
    "$@" >>"$T/$name.log" 2>&1 &
    PID=$!
    PIDS+=("$PID")
}

workers_up() {
    "$BIN/kfctl" status --json --timeout 2 | jq -e '.workers | length == 3' >/dev/null
}

kf_pg_start "$PGDIR" "$PGPORT" || exit 1
WORKER_ARGS=(--coordinator "$KF_WORKER_ENDPOINT" --heartbeat-ms 200 --liveness 15)
GATEWAY_ARGS=()
[ -n "${KF_MODELS_FILE:-}" ] && GATEWAY_ARGS=(--models-file "$KF_MODELS_FILE")

# The submit options of VARIANT: the switch off, or nothing for "all".
variant_args() {
    case $1 in
        all) ;;
        memory) echo "--no-memory" ;;
        *) echo "--set $1=false" ;;
    esac
}

# One line per run: variant, task, seed, best, candidates to best,
# correct share, candidates.
run_figures() {   # run_figures SHOW_JSON
    jq -r '.run.best_candidate_id as $b
           | (.candidates | map(select(.id == $b)) | .[0]) as $bc
           | (.candidates | length) as $n
           | [ (.run.best_speedup // "-"),
               (if $bc then [.candidates[] | select(.generation < $bc.generation
                   or (.generation == $bc.generation and .slot <= $bc.slot))] | length
                else "-" end),
               (if $n > 0 then ([.candidates[] | select(.status == "correct")] | length) / $n
                else "-" end),
               $n ] | @tsv' <<<"$1"
}

RESULTS=$T/results.tsv
: >"$RESULTS"
n=0
for v in $VARIANTS; do
    n=$((n + 1))
    db=kf_ablate_$n
    psql -qAt -h "$PGDIR" -p "$PGPORT" -d postgres -c "CREATE DATABASE $db" >/dev/null || exit 1
    start coordinator "$BIN/kf-coordinator" \
        --database-url "postgresql:///$db?host=$PGDIR&port=$PGPORT" \
        --worker-endpoint "$KF_WORKER_ENDPOINT" --client-endpoint "$KF_CLIENT_ENDPOINT" \
        --status-endpoint "$KF_STATUS_ENDPOINT" --event-endpoint "$KF_EVENT_ENDPOINT" \
        --heartbeat-ms 200 --liveness 15
    COORD_PID=$PID
    if [ "$n" -eq 1 ]; then
        start gateway "$BIN/kf-llm-gateway" "${WORKER_ARGS[@]}" "${GATEWAY_ARGS[@]}"
        start compile "$BIN/kf-compile-worker" "${WORKER_ARGS[@]}"
        start exec "$BIN/kf-exec-worker" "${WORKER_ARGS[@]}" --perf off
    fi
    wait_until 120 workers_up || { say "variant $v: the workers did not join"; exit 1; }
    # shellcheck disable=SC2046 # variant_args is meant to split
    for task in $TASKS; do
        name=$(jq -r .name "$task" 2>/dev/null || basename "$task")
        prior=$("$BIN/kfctl" submit "$task" --model "$MODEL" --generations 1 --population 2 \
                --seed 999 --set tuning=false --set "timing=$TIMING" --wait --json \
                --timeout 10 2>>"$T/submit.err")
        [ "$(jq -r .status <<<"$prior" 2>/dev/null)" = done ] \
            || say "variant $v: the prior run of $name did not end done"
        for seed in $SEEDS; do
            out=$("$BIN/kfctl" submit "$task" --model "$MODEL" --generations "$GENS" \
                  --population "$POP" --seed "$seed" "${SMALL[@]}" $(variant_args "$v") \
                  --wait --json --timeout 10 2>>"$T/submit.err")
            run=$(jq -r .run_id <<<"$out" 2>/dev/null)
            status=$(jq -r .status <<<"$out" 2>/dev/null)
            if [ -z "$run" ] || [ "$run" = null ]; then
                say "variant $v, $name, seed $seed: not submitted (see $T/submit.err)"
                continue
            fi
            show=$("$BIN/kfctl" show "$run" --json 2>>"$T/submit.err")
            line=$(run_figures "$show")
            say "variant $v, $name, seed $seed: run $run $status: $line"
            printf '%s\t%s\t%s\t%s\t%s\n' "$v" "$name" "$seed" "$status" "$line" >>"$RESULTS"
        done
    done
    kill -TERM "$COORD_PID" 2>/dev/null
    wait "$COORD_PID" 2>/dev/null
done

# The table: means over seeds per (variant, task).
table() {
    echo "| switched off | task | runs | best speedup | candidates to reach it | share correct |"
    echo "|---|---|---|---|---|---|"
    awk -F'\t' '
        { k = $1 "\t" $2; if (!(k in seen)) { seen[k] = 1; order[++n] = k }
          runs[k]++
          if ($5 != "-") { best[k] += $5; nb[k]++ }
          if ($6 != "-") { reach[k] += $6; nr[k]++ }
          if ($7 != "-") { ok[k] += $7; no[k]++ } }
        END { for (i = 1; i <= n; i++) { k = order[i]; split(k, p, "\t")
                printf "| %s | %s | %d | %s | %s | %s |\n",
                    p[1] == "all" ? "nothing (all on)" : p[1], p[2], runs[k],
                    nb[k] ? sprintf("%.2fx", best[k] / nb[k]) : "-",
                    nr[k] ? sprintf("%.1f", reach[k] / nr[k]) : "-",
                    no[k] ? sprintf("%.0f%%", 100 * ok[k] / no[k]) : "-" } }' "$RESULTS"
}
table
[ -n "$OUT" ] && table >"$OUT"
exit 0
