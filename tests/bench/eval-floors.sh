#!/usr/bin/env bash
# tests/bench/eval-floors.sh (`make bench-eval-floors`) - what the full
# protocol's floors buy: for each shape and each pair of floors (warm-up
# seconds, sampled seconds), KF_BENCH_N evaluations of one kernel in a
# running worker (tests/bench/eval.sh, mode worker), and the spread of
# their candidate medians (max - min over the mean) beside the
# evaluations a GPU-minute. Figures only: the protocol's defaults
# (docs/evaluation.md, "Timing") are chosen from this table, the spread
# target being 1%.
#
#   KF_BUILD (build)   KF_BENCH_N (5)
#   KF_FLOORS_SHAPES ("[1024, 1024];[4096, 4096];[16384, 4096]")
#   KF_FLOORS ("1:1 0.5:0.5 0.25:0.25 0.1:0.25"; warm-up:samples seconds)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
n=${KF_BENCH_N:-5}
shapes=${KF_FLOORS_SHAPES:-[1024, 1024];[4096, 4096];[16384, 4096]}
floors=${KF_FLOORS:-1:1 0.5:0.5 0.25:0.25 0.1:0.25}
log=$(mktemp /tmp/kf-floors.XXXXXX)
trap 'rm -f "$log"' EXIT
printf '%-14s %-10s %-10s %9s %12s %s\n' shape warmup_s samples_s spread_% evals/min "medians (us)"
IFS=';' read -r -a shape_list <<<"$shapes"
for shape in "${shape_list[@]}"; do
    for f in $floors; do
        w=${f%%:*} t=${f##*:}
        KF_BENCH_MODES=worker KF_BENCH_N=$n KF_BENCH_SHAPE="$shape" \
            KF_BENCH_TIMING="{\"warmup_s\": $w, \"min_time_s\": $t, \"min_samples\": 10, \"warmup_calls\": 10}" \
            bash tests/bench/eval.sh >"$log" 2>&1
        spread=$(sed -n 's/^spread of the .* medians.*: \([0-9.]*\)% (\([0-9.]*-[0-9.]*\) us.*/\1 \2/p' "$log")
        rate=$(sed -n 's/^evaluations per GPU-minute: \([0-9.]*\).*/\1/p' "$log" | head -1)
        printf '%-14s %-10s %-10s %9s %12s %s\n' "$(tr -d ' ' <<<"$shape")" "$w" "$t" \
            "${spread%% *}" "${rate:-nan}" "${spread#* }"
        [ -n "$rate" ] || { echo "  (no figures; the log's tail:)"; tail -5 "$log" | sed 's/^/  | /'; }
    done
done
