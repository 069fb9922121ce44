#!/usr/bin/env bash
# tests/gpu/search-gpu.sh - the whole search on an NVIDIA GPU (issue 5's
# proof): a single-node cluster (deploy/kf-local: private PostgreSQL,
# coordinator, offline generator, nvcc compile worker, CUDA exec worker with
# a torch interpreter), then one run per PyTorch problem on the CUDA
# target. For each run it prints the archive cells filled, the first
# correct and the best speedup against PyTorch eager, the best's speedup
# against torch.compile, and the best's achieved bandwidth as a fraction of
# the copy bandwidth the exec worker measured at start-up. A run counts as
# failed only when it found no correct kernel.
#
#   tests/gpu/search-gpu.sh [GENERATIONS [POPULATION]]   (default 6 x 4)
#
# Environment: KF_BIN (binaries, default build/bin), KF_PYTHON (an
# interpreter that imports torch; default: the first of
# /opt/torch/.venv/bin/python3 and /usr/bin/python3 that does),
# KF_CUDA_ARCH (default sm_90), KF_TARGET (default cuda:ARCH; "host" runs
# the same on the CPU), KF_PROBLEMS (default "softmax rmsnorm
# layernorm", files in examples/pytorch/). Output also goes to
# $OUT/search-gpu.log when OUT is set.
set -uo pipefail
cd "$(dirname "$0")/../.."
generations=${1:-6}
population=${2:-4}
arch=${KF_CUDA_ARCH:-sm_90}
target=${KF_TARGET:-cuda:$arch}
problems=${KF_PROBLEMS:-softmax rmsnorm layernorm}
export KF_BIN=${KF_BIN:-$PWD/build/bin}
. tests/gpu/cluster.sh
export KF_EXEC_ARGS="--backend ${target%%:*} --python $python ${KF_EXEC_ARGS:-}"
log=${OUT:+$OUT/search-gpu.log}
log=${log:-/dev/null}

{
echo "== date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "== command: tests/gpu/search-gpu.sh $generations $population (target $target, python $python)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
cluster_up || exit 1
fails=0
printf '\n%-10s %5s %6s %6s %9s %9s %9s %9s %8s\n' problem run cands cells first_x best_x best_vs_tc eager_us best_bw
for p in $problems; do
    start=$SECONDS
    out=$(kfctl submit "examples/pytorch/$p.py" --target "$target" --generations "$generations" \
              --population "$population" --seed 1 --wait --json 2>"$KF_STATE/submit.err")
    run=$(echo "$out" | jget 'd["run_id"]')
    if [ "$run" = n/a ]; then
        echo "$p: submit failed: $out $(cat "$KF_STATE/submit.err")"
        fails=$((fails + 1))
        continue
    fi
    show=$(kfctl show "$run" --json)
    cells=$(echo "$show" | jget 'len(d["cells"])')
    first=$(echo "$show" | jget 'd["first_correct"]["speedup"]')
    best=$(echo "$show" | jget 'd["best"]["speedup"]')
    best_id=$(echo "$show" | jget 'd["best"]["candidate_id"]')
    cands=$(sql "SELECT count(*) FROM candidates WHERE run_id = $run")
    eager=$(sql "SELECT round((ref_eager_ns / 1000)::numeric, 1) FROM runs WHERE id = $run")
    figures=""
    [ "$best_id" != n/a ] && figures=$(sql "SELECT figures FROM evaluations WHERE candidate_id = $best_id
                                         AND correct ORDER BY id DESC LIMIT 1")
    vs_tc=$(echo "${figures:-null}" | jget 'd["speedup_compiled"]')
    bw=$(echo "${figures:-null}" | jget 'd["bandwidth"]["candidate_fraction_of_copy"]')
    printf '%-10s %5s %6s %6s %9.3f %9.3f %9s %9s %8s   (%ds)\n' "$p" "$run" "$cands" "$cells" \
        "$([ "$first" = n/a ] && echo 0 || echo "$first")" \
        "$([ "$best" = n/a ] && echo 0 || echo "$best")" \
        "$(fmt "$vs_tc")" "$eager" "$(fmt "$bw")" $((SECONDS - start))
    echo "    $(echo "$out" | jget 'd["status"] + ": " + str(d["reason"])')"
    # Results flagged for audit (over 10x eager, or past the roofline) are
    # held out of best and first correct until a person accepts them
    # (kfctl audit); the fastest held one is printed for the record.
    held=$(sql "SELECT count(*) || ' held for audit, fastest ' || coalesce(round(max(speedup)::numeric, 3)::text, '-')
                || 'x: ' || coalesce((array_agg(audit_reason ORDER BY speedup DESC))[1], '-')
                FROM candidates WHERE run_id = $run AND status = 'correct'
                AND audit_reason IS NOT NULL AND audit_verdict IS NULL")
    echo "    $held"
    # On the GPU the proof is the figures; a run fails only when it found
    # no correct kernel. Whether the search beat its first correct kernel
    # and how many cells it filled are printed above for the record.
    if [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND status = 'correct'")" = 0 ]; then
        echo "    FAIL: $p: no correct candidate"
        fails=$((fails + 1))
    fi
done
echo
cluster_down
echo "search-gpu: $fails failed"
exit $((fails > 0))
} 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
