#!/usr/bin/env bash
# test_opencl_search.sh - the search target `opencl` end to end on PoCL
# (the host CPU; Debian's pocl-opencl-icd): offline generator (OpenCL C
# starters) -> compile worker (clang + llvm-spirv, the KF-SPIRV bundle) ->
# exec worker `--backend opencl --device pthread` (the bundle's source
# built by PoCL, the candidate run in its own confined process, judged
# against the task's C reference) -> archive ->
# kfctl. A 3 x 3 search for softmax, RMSNorm and LayerNorm must each end
# done with a correct best kernel written in OpenCL C.
. "$(dirname "$0")/lib.sh"

if [ ! -e /etc/OpenCL/vendors/pocl.icd ]; then
    say "no PoCL CPU device (install pocl-opencl-icd): this test needs it"
    check "PoCL is installed" false
    finish
fi

db_new
start_coordinator "${COORD_FAST[@]}"
start gateway "$BIN/kf-llm-gateway" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
start compile "$BIN/kf-compile-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
start exec "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" \
    --perf off --backend opencl --device pthread
check "status answers with three workers" \
    wait_until 120 jtrue '.workers | length == 3' kfctl status --json
check "the compile worker offers the opencl backend" \
    jtrue '[.workers[] | select(.role == "compile") | .capabilities.backends[]] | index("opencl") != null' \
    kfctl status --json
check "the exec worker reports PoCL's device, its FMA peak and copy bandwidth" \
    jtrue '[.workers[] | select(.role == "execute") | .capabilities.devices[0]
            | select((.platform | test("Portable")) and .peak_gflops > 0 and .copy_bandwidth_gbs > 0)] | length == 1' \
    kfctl workers --json
check "a target kfctl does not know is refused" \
    sh -c "! '$BIN/kfctl' submit '$ROOT/examples/tasks/softmax/task.json' --target openclx 2>/dev/null"

for op in softmax rmsnorm layernorm; do
    out=$(kfctl submit "$ROOT/examples/tasks/$op/task.json" --target opencl --generations 3 \
          --population 3 --seed 11 --wait --json --timeout 10 2>"$T/$op.err")
    rc=$?
    echo "$out" >"$T/$op.json"
    run=$(jq -r .run_id <<<"$out" 2>/dev/null)
    check "$op: submit --target opencl --wait exits 0" [ "$rc" -eq 0 ]
    check "$op: the run is done" [ "$(jq -r .status <<<"$out" 2>/dev/null)" = done ]
    check "$op: every candidate accounted for" run_accounted "$run" 9
    check "$op: the run's language is OpenCL C" \
        [ "$(sql "SELECT language FROM runs WHERE id = $run")" = opencl ]
    check "$op: its best is a correct candidate with a speedup" \
        [ "$(sql "SELECT count(*) FROM runs r JOIN candidates c ON c.id = r.best_candidate_id
                  WHERE r.id = $run AND c.status = 'correct' AND r.best_speedup > 0")" = 1 ]
    check "$op: every evaluation ran on the opencl backend" \
        [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $run AND kind = 'evaluate' AND backend <> 'opencl'")" = 0 ]
    check "$op: every correct candidate ran in its own confined process" \
        [ "$(sql "SELECT count(*) FROM evaluations e JOIN candidates c ON c.id = e.candidate_id
                  WHERE c.run_id = $run AND e.correct AND (e.figures->'isolation'->>'candidate' IS DISTINCT
                  FROM 'own process' OR e.figures->'isolation'->>'confinement' NOT LIKE 'seccomp%')")" = 0 ]
    kfctl best "$run" -o "$T/$op-best.cl" >/dev/null
    check "$op: kfctl best writes an OpenCL C kernel with its kf-launch line" \
        sh -c "grep -q __kernel '$T/$op-best.cl' && grep -q kf-launch: '$T/$op-best.cl'"
    say "$op: run $run, best $(jq -r .best_speedup <<<"$out" 2>/dev/null)x"
done
finish
