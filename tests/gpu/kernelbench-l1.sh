#!/usr/bin/env bash
# tests/gpu/kernelbench-l1.sh - KernelBench level 1 problems at their
# published sizes through the whole system on an NVIDIA GPU (issue 12):
# a single-node cluster (tests/gpu/cluster.sh), then for each problem
# `kfctl submit PROBLEM.py --target cuda:ARCH --wait`: the PyTorch
# reference job on the exec host (inputs drawn by the problem's own
# get_inputs, outputs exported into the exec host's reference cache, eager
# and torch.compile timed), then a small search judged against that data.
#
# Prints per problem: the reference (data exported, sets kept of those
# asked for, eager and torch.compile per call), the run's end and reason,
# the candidates' verdicts, and the best kernel against eager and against
# torch.compile. Nothing of KernelBench is copied: point KERNELBENCH_DIR
# at a checkout (its KernelBench/level1/ folder is read in place).
#
#   KERNELBENCH_DIR=... tests/gpu/kernelbench-l1.sh [NUMBER...]
#       (default: 1 19 23 26 36 40 47 88 95)
#
# Environment: KF_BIN (default build/bin), KF_PYTHON, KF_CUDA_ARCH
# (sm_90), KF_TARGET (default cuda:ARCH; "host" runs the same on the CPU),
# KF_GENERATIONS and KF_POPULATION (the search, default 2 x 2),
# KF_REF_CACHE_MB (the exec worker's reference cache cap, default 30000:
# one set of 23_Softmax is 12.9 GB), KF_RUN_LIMIT_S (per problem, default
# 900), KF_SUBMIT_ARGS (more flags for kfctl submit, e.g.
# "--set tuning=false"). The generator is the offline one unless KF_MODEL names another
# (kfctl submit --model); the offline generator has starters for softmax,
# RMSNorm and LayerNorm only, so the other problems end without a
# candidate and say so. KF_MODEL=recorded runs the recorded model
# (tests/gpu/kb-model.sh, through the gateway's command backend): a test
# double for an LLM where none is reachable, which answers every prompt
# with a CUDA kernel written ahead for that problem (tests/gpu/kb-model/);
# its answers are listed in $OUT/kb-model.log. Output also goes to
# $OUT/kernelbench-l1.log.
set -uo pipefail
cd "$(dirname "$0")/../.."
kb=${KERNELBENCH_DIR:-}
[ -n "$kb" ] && [ -d "$kb/KernelBench/level1" ] \
    || { echo "kernelbench-l1: set KERNELBENCH_DIR to a KernelBench checkout (with KernelBench/level1/)" >&2; exit 2; }
problems=${*:-1 19 23 26 36 40 47 88 95}
arch=${KF_CUDA_ARCH:-sm_90}
target=${KF_TARGET:-cuda:$arch}
generations=${KF_GENERATIONS:-2}
population=${KF_POPULATION:-2}
limit=${KF_RUN_LIMIT_S:-900}
export KF_BIN=${KF_BIN:-$PWD/build/bin}
. tests/gpu/cluster.sh
export KF_EXEC_ARGS="--backend ${target%%:*} --python $python --reference-cache-max-mb ${KF_REF_CACHE_MB:-30000} ${KF_EXEC_ARGS:-}"
log=${OUT:-/tmp}/kernelbench-l1.log
model=${KF_MODEL:-}
if [ "$model" = recorded ]; then
    # The gateway splits a command line at blanks: the path must have none.
    case $PWD in *[[:space:]]*) echo "kernelbench-l1: KF_MODEL=recorded needs a path without blanks ($PWD)" >&2; exit 2 ;; esac
    printf 'command_recorded = bash %s/tests/gpu/kb-model.sh\n' "$PWD" >"$KF_STATE/models.conf"
    export KF_GATEWAY_ARGS="--models-file $KF_STATE/models.conf ${KF_GATEWAY_ARGS:-}"
    export KF_KB_MODEL_LOG=${OUT:-/tmp}/kb-model.log
    model=command:recorded
fi

# The op class the offline generator knows a problem by, from its name.
op_of() {
    case $1 in
        *_Softmax*) echo softmax ;;
        *_RMSNorm*) echo rmsnorm ;;
        *_LayerNorm*) echo layernorm ;;
    esac
}

{
echo "== date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "== command: tests/gpu/kernelbench-l1.sh $problems (search ${generations} x ${population}, target $target, python $python, model ${model:-offline})"
echo "== KernelBench: $kb ($(git -C "$kb" log -1 --format=%h 2>/dev/null || echo 'not a git checkout'))"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
cluster_up || exit 1
no_reference=0
no_verdict=0
for n in $problems; do
    file=$(ls "$kb"/KernelBench/level1/"${n}"_*.py 2>/dev/null | head -1)
    if [ -z "$file" ]; then
        echo "== $n: no KernelBench/level1/${n}_*.py"
        no_reference=$((no_reference + 1))
        continue
    fi
    name=$(basename "$file" .py)
    op=$(op_of "$name")
    start=$SECONDS
    echo
    echo "== $name${op:+ (--op $op)}"
    out=$(timeout "$limit" "$KF_BIN/kfctl" submit "$file" --target "$target" \
              --generations "$generations" --population "$population" --seed 1 \
              ${op:+--op "$op"} ${model:+--model "$model"} ${KF_SUBMIT_ARGS:-} --wait --json \
              2>"$KF_STATE/submit.err")
    run=$(echo "$out" | jget 'd["run_id"]')
    if [ "$run" = n/a ]; then
        echo "  submit failed: $out $(tail -3 "$KF_STATE/submit.err")"
        no_reference=$((no_reference + 1))
        continue
    fi
    ref=$(sql "SELECT json_build_object('eager', ref_eager_ns, 'compiled', ref_compiled_ns,
                 'data', ref_data) FROM runs WHERE id = $run")
    eager=$(echo "${ref:-null}" | jget 'd["eager"] / 1e3')
    compiled=$(echo "${ref:-null}" | jget 'd["compiled"] / 1e3')
    echo "  reference: $(echo "${ref:-null}" | jget '"%d tensors, %.2f GB exported, %s of %s sets" % (len(d["data"]["tensors"]), d["data"]["data"]["bytes"] / 1e9, d["data"]["sets"], d["data"]["info"].get("sets_requested", d["data"]["sets"]))'); eager $(fmt "$eager") us, torch.compile $(fmt "$compiled") us"
    if [ "$eager" = n/a ]; then
        no_reference=$((no_reference + 1))
        echo "  FAIL: no reference: $(echo "$out" | jget 'd["reason"]')"
    fi
    echo "  run $run: $(echo "$out" | jget 'd["status"] + ": " + str(d["reason"])') ($((SECONDS - start)) s)"
    verdicts=$(sql "SELECT coalesce(string_agg(status || ' ' || n, ', ' ORDER BY status), 'none')
                    FROM (SELECT status, count(*) AS n FROM candidates WHERE run_id = $run
                          GROUP BY status) v")
    echo "  candidates: $verdicts"
    # A candidate that failed before compiling (no kernel generated) has
    # no verdict.
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND status <> 'failed'")" = 0 ] \
        && no_verdict=$((no_verdict + 1))
    best_id=$(kfctl show "$run" --json | jget 'd["best"]["candidate_id"]')
    if [ "$best_id" != n/a ]; then
        figures=$(sql "SELECT figures FROM evaluations WHERE candidate_id = $best_id AND correct
                       ORDER BY id DESC LIMIT 1")
        echo "  best: candidate $best_id, $(echo "${figures:-null}" | jget '"%.3f us, %.3fx eager, %.3fx torch.compile, %.0f%% of copy bandwidth" % (d["candidate"]["median_ns"] / 1e3, d["speedup"], d["speedup_compiled"] or 0, 100 * d["bandwidth"]["candidate_fraction_of_copy"])')"
    fi
done
echo
cluster_down
echo "kernelbench-l1: $no_reference without a reference, $no_verdict without a verdict"
exit $((no_reference > 0))
} 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
