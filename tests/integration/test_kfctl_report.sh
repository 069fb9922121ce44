#!/usr/bin/env bash
# test_kfctl_report.sh - what the user sees of a finished search: `kfctl
# show` draws the archive as three grids with the best kernel and its
# lineage, and `kfctl report` writes the limited-budget curve and the
# per-generation progress as CSV and SVG that agree with the run.
. "$(dirname "$0")/lib.sh"

db_new
start_coordinator "${COORD_FAST[@]}"
start_workers
# An exec worker probes for PyTorch before it registers: seconds, many
# more under the sanitizers on a busy machine.
check "status answers with three workers" \
    wait_until 180 jtrue '.workers | length == 3' kfctl status --json

out=$(kfctl submit "$ROOT/examples/tasks/softmax/task.json" --generations 3 --population 3 \
      --seed 11 --wait --json --timeout 30 2>"$T/submit.err")
check "submit --wait exits 0" [ $? -eq 0 ]
run=$(jq -r .run_id <<<"$out")

kfctl show "$run" --json >"$T/show.json"
n=$(jq '.candidates | length' "$T/show.json")
best=$(jq -r .run.best_speedup "$T/show.json")
say "run $run: $n candidates, best ${best}x"
check "the run has a correct candidate" [ "$best" != null ]

kfctl show "$run" >"$T/show.txt" 2>"$T/show.err"
check "kfctl show exits 0" [ $? -eq 0 ]
# A host run's grids speak of SIMD, cache blocking and threads, not of a
# GPU's coalescing, barriers and warps (round 3 of the model in the loop).
check "the run is a host run" jtrue '.run.target == "host"' cat "$T/show.json"
for grid in "memory x algorithm" "memory x threads" "algorithm x threads"; do
    check "show draws the grid '$grid'" grep -q "^$grid\$" "$T/show.txt"
done
check "show names the host's level names on the axes" \
    bash -c "grep -q 'multi-level' '$T/show.txt' && grep -q 'reformulated' '$T/show.txt' && grep -q 'fork-join' '$T/show.txt'"
check "show uses no GPU level name for a host run" \
    bash -c "! grep -qE 'x synchronisation\$|^  (coalesced|tiled|hierarchical|barriers|warp|global) | (coalesced|barriers|warp)( |\$)' '$T/show.txt'"
check "at least one grid cell holds a speedup" \
    grep -qE '^  (scalar|SIMD|cache-blocked|multi-level|direct|fused|reformulated|novel) .*[0-9]+\.[0-9]{2}x' "$T/show.txt"
best_id=$(jq -r .run.best_candidate_id "$T/show.json")
check "show names the best kernel" grep -q "^best kernel: candidate $best_id, " "$T/show.txt"
# The lineage the grids print must be the parent chain of the reply.
chain=$(jq -r --argjson id "$best_id" '
    [.candidates[] | {key: (.id | tostring), value: .parent_id}] | from_entries as $p
    | [$id | recurse(if $p[tostring] != null then $p[tostring] else empty end)]
    | map(tostring) | join(" <- ")' "$T/show.json")
check "show prints the lineage of the best ($chain)" \
    grep -qx "lineage of the best: $chain" "$T/show.txt"

cd "$T" || exit 1
paths=$(kfctl report "$run" 2>"$T/report.err")
check "kfctl report exits 0" [ $? -eq 0 ]
check "report prints the three default paths" \
    [ "$paths" = "$(printf 'run-%s.csv\nrun-%s-generations.csv\nrun-%s.svg' "$run" "$run" "$run")" ]
check "report writes the three files" \
    bash -c "[ -s run-$run.csv ] && [ -s run-$run-generations.csv ] && [ -s run-$run.svg ]"

kfctl report "$run" -o "$T/r" >/dev/null
csv=$T/r.csv
check "the curve has N+1 lines" [ "$(wc -l <"$csv")" -eq $((n + 1)) ]
check "the curve's header is budget,best_speedup" [ "$(head -n 1 "$csv")" = "budget,best_speedup" ]
check "budgets run 1..N" \
    awk -F, -v n="$n" 'NR > 1 && $1 != NR - 1 { bad = 1 } END { exit bad || NR != n + 1 }' "$csv"
check "the curve is non-decreasing" \
    awk -F, 'NR > 1 { v = $2 == "" ? 0 : $2 + 0; if (v < last - 1e-9) bad = 1; last = v } END { exit bad }' "$csv"
check "the curve ends at the run's best speedup" \
    awk -F, -v b="$best" 'END { d = $2 - b; if (d < 0) d = -d; exit !(d <= 1e-6) }' "$csv"
gens=$T/r-generations.csv
check "per-generation progress: a header and 3 generations" [ "$(wc -l <"$gens")" -eq 4 ]
check "per-generation counts add up to N" \
    awk -F, -v n="$n" 'NR > 1 { s += $2 } END { exit s != n }' "$gens"
check "per-generation best_so_far ends at the run's best" \
    awk -F, -v b="$best" 'END { d = $5 - b; if (d < 0) d = -d; exit !(d <= 1e-6) }' "$gens"
if command -v xmllint >/dev/null; then
    check "the SVG parses as XML" xmllint --noout "$T/r.svg"
else
    check "the SVG opens and closes" bash -c "grep -q '<svg' '$T/r.svg' && grep -q '</svg>' '$T/r.svg'"
fi
check "the SVG draws the step line" grep -q '<path ' "$T/r.svg"

kfctl report 99999 -o "$T/none" >/dev/null 2>"$T/unknown.err"
check "an unknown run exits 1" [ $? -eq 1 ]
check "... with the coordinator's message" grep -q 'kfctl: not-found' "$T/unknown.err"
check "... and writes nothing" [ ! -e "$T/none.csv" ]
kfctl report "$run" -o "$T/no/such/dir/r" >/dev/null 2>"$T/unwritable.err"
check "an unwritable path exits 1" [ $? -eq 1 ]
check "... saying which file and why" grep -q "cannot write $T/no/such/dir/r.csv: No such file" "$T/unwritable.err"
check "report takes no --generations" [ "$("$BIN/kfctl" report "$run" --generations 3 2>/dev/null; echo $?)" -eq 2 ]
for f in "$T"/*.err; do
    check "no sanitizer report in $(basename "$f")" \
        bash -c "! grep -qE 'Sanitizer|runtime error:' '$f'"
done
finish
