#!/usr/bin/env bash
# tests/gpu/native-big.sh - the native CUDA tasks at a real size through
# the whole system on an NVIDIA GPU (issue 12): softmax, RMSNorm and
# LayerNorm (examples/tasks/*_cuda) reshaped to ROWS x COLS (default 16384
# x 4096 f32, 256 MiB a tensor), each searched by `kfctl submit --wait`
# on a single-node cluster (tests/gpu/cluster.sh) with the offline
# generator's CUDA starters and the search's defaults (screening, 2
# tuning rounds). The yardstick: a device-to-device copy of the same size
# (cudaMemcpyAsync as both candidate and reference) judged by the same
# exec worker with the same default protocol.
#
# Prints per task: the run's wall time and end, candidates, the tuning
# configurations judged (and any not), the best kernel's median and its
# time against the copy's; a last line "native-big: N of M within 10% of
# the copy, K over 5 minutes".
#
#   tests/gpu/native-big.sh [GENERATIONS [POPULATION]]   (default 6 x 4)
#
# Environment: KF_BIN (build/bin), KF_PYTHON, KF_CUDA_ARCH (sm_90),
# KF_TARGET (cuda:ARCH; "host" with host tasks checks the script), ROWS,
# COLS, KF_TASKS (default "softmax_cuda rmsnorm_cuda layernorm_cuda").
# Output also goes to $OUT/native-big.log.
set -uo pipefail
cd "$(dirname "$0")/../.."
generations=${1:-6}
population=${2:-4}
rows=${ROWS:-16384}
cols=${COLS:-4096}
arch=${KF_CUDA_ARCH:-sm_90}
target=${KF_TARGET:-cuda:$arch}
tasks=${KF_TASKS:-softmax_cuda rmsnorm_cuda layernorm_cuda}
export KF_BIN=${KF_BIN:-$PWD/build/bin}
. tests/gpu/cluster.sh
export KF_EXEC_ARGS="--backend ${target%%:*} --python $python ${KF_EXEC_ARGS:-}"
log=${OUT:-/tmp}/native-big.log
work=$(mktemp -d /tmp/kf-native-big.XXXXXX)
chmod 755 "$work"

# reshape SRC_DIR DEST_DIR [REFERENCE]: the task with every matrix ROWS x
# COLS and every vector COLS long, its extra shape cases dropped.
reshape() {
    mkdir -p "$2"
    local file
    file=$(jget 'd["reference"]["file"]' <"$1/task.json")
    cp "${3:-$1/$file}" "$2/$file"
    "$python" - "$1/task.json" "$2/task.json" "$rows" "$cols" "${3:+copy}" <<'PY'
import json, sys
src, dst, rows, cols, copy = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
t = json.load(open(src))
for e in t.get("inputs", []) + t.get("outputs", []):
    e["shape"] = [rows, cols] if len(e["shape"]) >= 2 else [cols]
t.pop("shapes", None)
if copy:
    t["name"], t["op"] = "copy", "copy"
    t["inputs"], t["scalars"] = t["inputs"][:1], {}
    t["description"] = "a device-to-device copy (the yardstick)"
json.dump(t, open(dst, "w"), indent=1)
PY
}

{
echo "== date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "== command: tests/gpu/native-big.sh $generations $population (${rows} x ${cols} f32, $target)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1

# The yardstick, judged standalone before the cluster starts (CUDA only).
copy_ns=n/a
[ "${target%%:*}" = cuda ] && {
cat >"$work/copy.cu" <<'CU'
#include "kf_kernel.h"
#include <cuda_runtime.h>
extern "C" int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out, const kf_ctx_t *ctx)
{
    if (n_in < 1 || n_out < 1)
        return 1;
    return cudaMemcpyAsync (out[0].data, in[0].data, (size_t) kf_numel (&in[0]) * 4,
                            cudaMemcpyDeviceToDevice, (cudaStream_t) ctx->stream) != cudaSuccess;
}
CU
reshape examples/tasks/softmax_cuda "$work/copy" "$work/copy.cu"
(cd "$work/copy" && "$KF_BIN/kf-compile-worker" --cache-dir off --build reference.cu --reference \
     --target "cuda:$arch" -o ref.so >ref.json 2>ref.err \
 && "$KF_BIN/kf-compile-worker" --cache-dir off --build reference.cu --target "cuda:$arch" \
     -o cand.so >cand.json 2>cand.err \
 && printf '{"payload": {"task": "%s", "seed": 7}, "candidate": "%s", "reference": "%s"}\n' \
     "$work/copy/task.json" "$work/copy/cand.json" "$work/copy/ref.json" >job.json \
 && "$KF_BIN/kf-exec-worker" --backend cuda --eval job.json >eval.json 2>eval.err)
copy_ns=$(jget 'd["result"]["candidate"]["median_ns"]' <"$work/copy/eval.json")
echo "copy ${rows} x ${cols} f32 (cudaMemcpyAsync, default protocol): $(echo "$copy_ns" | jget '"%.2f us" % (d / 1e3)')"
}

cluster_up || exit 1
within=0
slow=0
n=0
for t in $tasks; do
    n=$((n + 1))
    reshape "examples/tasks/$t" "$work/$t"
    start=$SECONDS
    out=$(kfctl submit "$work/$t/task.json" --target "$target" --generations "$generations" \
              --population "$population" --seed 1 --wait --json 2>"$KF_STATE/submit.err")
    wall=$((SECONDS - start))
    [ "$wall" -ge 300 ] && slow=$((slow + 1))
    run=$(echo "$out" | jget 'd["run_id"]')
    echo
    echo "== $t: run $run, ${wall} s: $(echo "$out" | jget 'd["status"] + ": " + str(d["reason"])')"
    [ "$run" = n/a ] && { cat "$KF_STATE/submit.err"; continue; }
    echo "  candidates: $(sql "SELECT coalesce(string_agg(phase || ' ' || status || ' ' || n, ', '), 'none')
                              FROM (SELECT phase, status, count(*) AS n FROM candidates
                                    WHERE run_id = $run GROUP BY 1, 2 ORDER BY 1, 2) c")"
    echo "  tuning configurations: $(sql "SELECT coalesce(sum(jsonb_array_length(e.figures->'configs')), 0)
                  || ' judged, ' || coalesce(sum((SELECT count(*) FROM jsonb_array_elements(e.figures->'configs') x
                                                  WHERE x->>'verdict' IS NULL OR x->>'verdict' = 'not_run')), 0)
                  || ' without a verdict'
                  FROM evaluations e JOIN candidates c ON c.id = e.candidate_id
                  WHERE c.run_id = $run AND e.figures ? 'configs'")"
    # The search's own throughput at its default protocol: every
    # evaluation the run made (screens, full timings, each tuning
    # configuration) over the exec worker's time in them (each
    # evaluation's wall_s: the sandboxed child from start to exit).
    echo "  evaluations: $(sql "SELECT count(*) FILTER (WHERE NOT e.figures ? 'configs')
                  || ' (' || count(*) FILTER (WHERE e.fidelity = 'screen' AND NOT e.figures ? 'configs') || ' screen, '
                  || count(*) FILTER (WHERE coalesce(e.fidelity, 'full') <> 'screen' AND NOT e.figures ? 'configs') || ' full) + '
                  || coalesce(sum(jsonb_array_length(e.figures->'configs')), 0) || ' tuning configurations in '
                  || round(sum((e.figures->>'wall_s')::numeric), 1) || ' s of evaluation: '
                  || round(60 * (count(*) FILTER (WHERE NOT e.figures ? 'configs')
                                 + coalesce(sum(jsonb_array_length(e.figures->'configs')), 0))
                           / nullif(sum((e.figures->>'wall_s')::numeric), 0), 1)
                  || ' a GPU-minute (default protocol); candidate evaluations alone: '
                  || coalesce(round(60 * count(*) FILTER (WHERE NOT e.figures ? 'configs')
                                    / nullif(sum((e.figures->>'wall_s')::numeric)
                                             FILTER (WHERE NOT e.figures ? 'configs'), 0), 1)::text, '-')
                  || ' a GPU-minute in '
                  || coalesce(round(sum((e.figures->>'wall_s')::numeric)
                                    FILTER (WHERE NOT e.figures ? 'configs'), 1)::text, '-') || ' s'
                  FROM evaluations e JOIN candidates c ON c.id = e.candidate_id
                  WHERE c.run_id = $run")"
    best_id=$(kfctl show "$run" --json | jget 'd["best"]["candidate_id"]')
    [ "$best_id" = n/a ] && { echo "  no best kernel"; continue; }
    figures=$(sql "SELECT figures FROM evaluations WHERE candidate_id = $best_id AND correct
                   ORDER BY id DESC LIMIT 1")
    best_ns=$(echo "${figures:-null}" | jget 'd["candidate"]["median_ns"]')
    params=$(echo "${figures:-null}" | jget 'd.get("best_config") or "-"')
    ratio=$(echo "[$best_ns, $copy_ns]" | jget '"%.3f" % (d[0] / d[1])')
    echo "  best: candidate $best_id ${params}, $(echo "$best_ns" | jget '"%.2f us" % (d / 1e3)'), speedup $(echo "${figures:-null}" | jget '"%.3f" % d["speedup"]'), fidelity $(sql "SELECT coalesce(fidelity, '-') FROM candidates WHERE id = $best_id"), ${ratio}x the copy's time"
    echo "$ratio" | jget 'd <= 1.10' | grep -q True && within=$((within + 1))
done
echo
cluster_down
echo "native-big: $within of $n within 10% of the copy, $slow over 5 minutes"
exit $(( within == n && slow == 0 ? 0 : 1 ))
} 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
