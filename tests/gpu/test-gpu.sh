#!/usr/bin/env bash
# tests/gpu/test-gpu.sh (`make test-gpu`) - the CUDA path end to end on a
# host with an NVIDIA GPU, through the workers' standalone modes
# (kf-compile-worker --build, kf-exec-worker --eval: the same handlers a
# cluster uses). Run from the repository root after `make` (on the device
# machine after `source .kfdev/unpack.sh`). Prints figures and a last line
# "test-gpu: PASS|FAIL (N checks, M failed)"; the log is also written to
# $OUT/test-gpu.log (or /tmp).
#
#  1. PyTorch references (KernelBench format) for softmax, RMSNorm and
#     LayerNorm (examples/pytorch/*.py) on cuda:0: inputs, parameters,
#     buffers and outputs exported, eager and torch.compile timed.
#  2. For each, a correct and an incorrect CUDA candidate built with nvcc
#     and judged against the exported data (in[] = forward's tensors, then
#     parameters, then buffers).
#  3. A tuning sweep: an RMSNorm kernel declaring kf-tune THREADS=...
#     built at every point and each config timed against the data.
#  4. A profile job (ncu) of the correct softmax candidate, condensed.
#  5. The hostile-kernel suite, tests/gpu/run-cuda-eval.sh.
#  6. Repeatability: one kernel of more than 50 us (ref_softmax, 4096 x
#     4096) evaluated 5 times with the default protocol; the spread of its
#     medians must stay under 1%.
#
# KF_BUILD (build), KF_CUDA_ARCH (sm_90), KF_PYTHON (a Python with torch;
# default /opt/torch/.venv/bin/python3 where it exists), KF_GPU_SKIP
# (words among "compile hostile profile repeat pytorch" to leave out:
# "compile" is torch.compile in 1, "pytorch" steps 1 to 4, which need
# the exported data).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
build=${KF_BUILD:-build}
arch=${KF_CUDA_ARCH:-sm_90}
out=${OUT:-/tmp}
skip=" ${KF_GPU_SKIP:-} "
py=${KF_PYTHON:-}
[ -z "$py" ] && [ -x /opt/torch/.venv/bin/python3 ] && py=/opt/torch/.venv/bin/python3
work=$(mktemp -d /tmp/kf-test-gpu.XXXXXX)
# As root the evaluation child runs as `nobody`: it must reach the binary.
chmod 755 "$work"
mkdir -p "$work/bin"
cp "$build/bin/kf-exec-worker" "$build/bin/kf-compile-worker" "$work/bin/" || exit 2
chmod -R a+rX "$work"
[ -d /tmp/kfdev ] && chmod -R a+rX /tmp/kfdev
log=$out/test-gpu.log
checks=0
failures=0

check() {   # check DESCRIPTION COMMAND...
    local what=$1
    shift
    checks=$((checks + 1))
    if "$@"; then
        echo "  ok: $what"
    else
        failures=$((failures + 1))
        echo "  FAILED: $what"
        return 1
    fi
}
jqe() { jq -e "$@" >/dev/null; }
ew() { "$work/bin/kf-exec-worker" --backend cuda --reference-cache-dir off ${py:+--python "$py"} "$@"; }
cw() { "$work/bin/kf-compile-worker" --cache-dir off "$@"; }
us() { awk -v ns="$1" 'BEGIN { if (ns == "null" || ns == "") print "-"; else printf "%.2f us", ns / 1000 }'; }

# --- the candidates --------------------------------------------------------
write_kernels() {
    local d=$1
    cp tests/fixtures/kernels/cuda/good_softmax.cu "$d/softmax_good.cu"
    cp tests/fixtures/kernels/cuda/wrong_softmax.cu "$d/softmax_wrong.cu"
    cp tests/fixtures/kernels/cuda/ref_softmax.cu "$d/ref_softmax.cu"
    # RMSNorm: one block a row, the sum of squares reduced by warp shuffles.
    # WRONG leaves the gain out. THREADS is a tuning parameter.
    local rms='
/* kf-tune: THREADS=128,256,512 */
#include "kf_kernel.h"
#include <cuda_runtime.h>
#ifndef THREADS
#define THREADS 256
#endif
__global__ static void rms_rows (const float *x, const float *w, float *y, long n, float eps)
{
    const float *row = x + blockIdx.x * n;
    float *out = y + blockIdx.x * n;
    float ss = 0;
    for (long i = threadIdx.x; i < n; i += THREADS)
        ss += row[i] * row[i];
    for (int off = 16; off > 0; off /= 2)
        ss += __shfl_xor_sync (0xffffffff, ss, off);
    __shared__ float part[THREADS / 32];
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x / 32] = ss;
    __syncthreads ();
    float total = 0;
    for (int k = 0; k < THREADS / 32; k++)
        total += part[k];
    float inv = rsqrtf (total / n + eps);
    for (long i = threadIdx.x; i < n; i += THREADS)
        out[i] = row[i] * inv * GAIN;
}
extern "C" int kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
                           const kf_ctx_t *ctx)
{
    (void) n_in; (void) n_out;
    long n = in[0].shape[in[0].rank - 1], rows = kf_numel (&in[0]) / n;
    float eps = (float) kf_scalar (ctx, "init1", 1e-6);
    rms_rows<<<rows, THREADS, 0, (cudaStream_t) ctx->stream>>> (
        (const float *) in[0].data, (const float *) in[1].data, (float *) out[0].data, n, eps);
    return cudaGetLastError () == cudaSuccess ? 0 : 1;
}'
    printf '%s\n' "${rms//GAIN/w[i]}" >"$d/rmsnorm_good.cu"
    printf '%s\n' "${rms//GAIN/1.0f}" | grep -v kf-tune >"$d/rmsnorm_wrong.cu"
    # LayerNorm: mean, then the variance around it (two passes over the row
    # in registers' reach), eps from the module's buffer (in[3], on the
    # device). WRONG leaves the shift (bias) out.
    local ln='
#include "kf_kernel.h"
#include <cuda_runtime.h>
#define THREADS 256
__device__ static float block_sum (float v, float *part)
{
    for (int off = 16; off > 0; off /= 2)
        v += __shfl_xor_sync (0xffffffff, v, off);
    __syncthreads ();
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x / 32] = v;
    __syncthreads ();
    float total = 0;
    for (int k = 0; k < THREADS / 32; k++)
        total += part[k];
    return total;
}
__global__ static void ln_rows (const float *x, const float *w, const float *b, const float *eps,
                                float *y, long n)
{
    __shared__ float part[THREADS / 32];
    const float *row = x + blockIdx.x * n;
    float *out = y + blockIdx.x * n;
    float s = 0;
    for (long i = threadIdx.x; i < n; i += THREADS)
        s += row[i];
    float mean = block_sum (s, part) / n;
    float v = 0;
    for (long i = threadIdx.x; i < n; i += THREADS)
        v += (row[i] - mean) * (row[i] - mean);
    float inv = rsqrtf (block_sum (v, part) / n + eps[0]);
    for (long i = threadIdx.x; i < n; i += THREADS)
        out[i] = (row[i] - mean) * inv * w[i] SHIFT;
}
extern "C" int kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
                           const kf_ctx_t *ctx)
{
    (void) n_in; (void) n_out;
    long n = in[0].shape[in[0].rank - 1], rows = kf_numel (&in[0]) / n;
    ln_rows<<<rows, THREADS, 0, (cudaStream_t) ctx->stream>>> (
        (const float *) in[0].data, (const float *) in[1].data, (const float *) in[2].data,
        (const float *) in[3].data, (float *) out[0].data, n);
    return cudaGetLastError () == cudaSuccess ? 0 : 1;
}'
    printf '%s\n' "${ln//SHIFT/+ b[i]}" >"$d/layernorm_good.cu"
    printf '%s\n' "${ln//SHIFT/}" >"$d/layernorm_wrong.cu"
}

# The candidate-facing tasks: kf_forward's tensors as the reference job
# exports them (inputs, then parameters, then buffers).
write_tasks() {
    local d=$1
    cat >"$d/softmax.task.json" <<EOF
{"name": "softmax_pt", "op": "softmax",
 "inputs": [{"name": "x", "shape": [64, 1000], "dtype": "f32"}],
 "outputs": [{"name": "y", "shape": [64, 1000], "dtype": "f32"}],
 "reference": {"language": "pytorch", "file": "$ROOT/examples/pytorch/softmax.py"}}
EOF
    cat >"$d/rmsnorm.task.json" <<EOF
{"name": "rmsnorm_pt", "op": "rmsnorm",
 "inputs": [{"name": "x", "shape": [256, 2048], "dtype": "f32"},
            {"name": "weight", "shape": [2048], "dtype": "f32"}],
 "outputs": [{"name": "y", "shape": [256, 2048], "dtype": "f32"}],
 "scalars": {"init0": 2048, "init1": 1e-6},
 "reference": {"language": "pytorch", "file": "$ROOT/examples/pytorch/rmsnorm.py"}}
EOF
    cat >"$d/layernorm.task.json" <<EOF
{"name": "layernorm_pt", "op": "layernorm",
 "inputs": [{"name": "x", "shape": [96, 768], "dtype": "f32"},
            {"name": "weight", "shape": [768], "dtype": "f32"},
            {"name": "bias", "shape": [768], "dtype": "f32"},
            {"name": "eps", "shape": [1], "dtype": "f32"}],
 "outputs": [{"name": "y", "shape": [96, 768], "dtype": "f32"}],
 "reference": {"language": "pytorch", "file": "$ROOT/examples/pytorch/layernorm.py"}}
EOF
}

{
echo "== test-gpu: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit ${KF_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
echo "== command: tests/gpu/test-gpu.sh (KF_BUILD=$build, arch $arch, python ${py:-discovered})"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1
w=$work
write_kernels "$w"
write_tasks "$w"

echo "== building the candidates (kf-compile-worker --build, nvcc, $arch)"
t0=$(date +%s.%N)
for k in softmax_good softmax_wrong ref_softmax rmsnorm_good rmsnorm_wrong layernorm_good layernorm_wrong; do
    cw --build "$w/$k.cu" --target "cuda:$arch" -o "$w/$k.so" >"$w/$k.build.json" 2>"$w/$k.build.err" &
done
wait
cw --build "$w/rmsnorm_good.cu" --target "cuda:$arch" --tune 3 -o "$w/rmsnorm_tuned.so" \
    >"$w/rmsnorm_tuned.build.json" 2>"$w/rmsnorm_tuned.build.err"
echo "  built in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
for k in softmax_good softmax_wrong ref_softmax rmsnorm_good rmsnorm_wrong layernorm_good layernorm_wrong; do
    check "$k.cu compiles" jqe '.result.compiled' "$w/$k.build.json" ||
        head -c 2000 "$w/$k.build.json"
done
check "the tuned RMSNorm builds 3 configs" jqe '(.frames | length) == 3' "$w/rmsnorm_tuned.build.json"

case $skip in *" pytorch "*) ;; *)
echo "== 1. PyTorch references on cuda:0 (5 sets, eager and torch.compile timed)"
compile=true
case $skip in *" compile "*) compile=false ;; esac
for p in softmax rmsnorm layernorm; do
    cat >"$w/$p.ref.job.json" <<EOF
{"kind": "reference", "payload": {"source_file": "$ROOT/examples/pytorch/$p.py", "seed": 7,
 "sets": 5, "device": "cuda:0", "compile": $compile}}
EOF
    ew --eval "$w/$p.ref.job.json" --out "$w/$p.ref" >"$w/$p.ref.json" 2>"$w/$p.ref.err"
    check "$p: reference job ok" jqe '.ok' "$w/$p.ref.json" || { jq -r .error "$w/$p.ref.json"; tail -3 "$w/$p.ref.err"; }
    jq -r --arg p "$p" '.result | "  \($p): \(.tensors | length) tensors, \(.data_bytes) bytes; eager \(.timing.eager.median_ns / 1000 * 100 | round / 100) us (p10 \(.timing.eager.p10_ns / 1000 * 100 | round / 100), p90 \(.timing.eager.p90_ns / 1000 * 100 | round / 100)); torch.compile \(if .timing.compiled.median_ns then "\(.timing.compiled.median_ns / 1000 * 100 | round / 100) us, compiled in \(.timing.compiled.compile_s * 10 | round / 10) s, matches eager \(.timing.compiled.matches_eager)" else (.timing.compiled.error // "not run") end); degenerate \(.degenerate); \(.torch_version) on \(.device_name); wall \(.wall_s * 10 | round / 10) s"' "$w/$p.ref.json" 2>/dev/null
    check "$p: outputs not degenerate" jqe '.result.degenerate == []' "$w/$p.ref.json"
done

echo "== 2. candidates against the exported data (default timing protocol)"
for p in softmax rmsnorm layernorm; do
    for kind in good wrong; do
        cat >"$w/$p.$kind.job.json" <<EOF
{"payload": {"task": "$w/$p.task.json", "seed": 7},
 "candidate": "$w/${p}_$kind.build.json", "reference": "$w/$p.ref.json"}
EOF
        ew --eval "$w/$p.$kind.job.json" >"$w/$p.$kind.eval.json" 2>"$w/$p.$kind.eval.err"
        jq -r --arg n "${p}_$kind" '"  \($n): " + (if .ok then (.result | "\(.verdict); \(.detail); candidate \(.candidate.median_ns // 0 | . / 10 | round / 100) us; speedup vs eager \(.speedup // "-"), vs torch.compile \(.speedup_compiled // "-"); audit \(.audit // false); wall \(.wall_s * 100 | round / 100) s; phases \(.phases_s // {} | tostring)") else "job failed: \(.error)" end)' "$w/$p.$kind.eval.json"
    done
    check "$p: the correct candidate is judged correct with a speedup" \
        jqe '.result.verdict == "correct" and .result.speedup > 0' "$w/$p.good.eval.json"
    check "$p: the incorrect candidate is judged incorrect" \
        jqe '.result.verdict == "incorrect" and .result.speedup == null' "$w/$p.wrong.eval.json"
done

echo "== 3. tuning: rmsnorm THREADS=128,256,512 against the exported data"
cat >"$w/tune.job.json" <<EOF
{"payload": {"task": "$w/rmsnorm.task.json", "seed": 7},
 "candidate": "$w/rmsnorm_tuned.build.json", "reference": "$w/rmsnorm.ref.json"}
EOF
ew --eval "$w/tune.job.json" >"$w/tune.eval.json" 2>"$w/tune.eval.err"
jq -r '.result.configs[]? | "  \(.params | tostring): \(.verdict), \(.median_ns // 0 | . / 10 | round / 100) us, speedup \(.speedup)"' "$w/tune.eval.json"
jq -r '"  best: \(.result.best_config | tostring), full-protocol speedup \(.result.speedup), wall \(.result.wall_s // 0 | . * 10 | round / 10) s"' "$w/tune.eval.json"
check "tuning: all 3 configs timed and correct, the best named" \
    jqe '(.result.configs | length) == 3 and ([.result.configs[] | select(.verdict == "correct")] | length) == 3
         and (.result.best_config | has("THREADS")) and .result.verdict == "correct"' "$w/tune.eval.json"

case $skip in *" profile "*) ;; *)
echo "== 4. profile (ncu) of the correct softmax candidate"
cat >"$w/profile.job.json" <<EOF
{"kind": "profile", "payload": {"task": "$w/softmax.task.json", "seed": 7},
 "candidate": "$w/softmax_good.build.json"}
EOF
t0=$(date +%s.%N)
ew --eval "$w/profile.job.json" >"$w/profile.json" 2>"$w/profile.err"
jq -r 'if .ok then .result.summary else "job failed: \(.error)" end' "$w/profile.json" | sed 's/^/  | /'
echo "  profile job: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
check "profile: a summary with DRAM and compute throughput, occupancy, a verdict, stalls" \
    jqe '.ok and (.result.summary | test("-bound: DRAM throughput")) and (.result.metrics.dram_pct > 0)
         and (.result.metrics.achieved_occupancy_pct > 0) and (.result.metrics.top_stalls | length) > 0' \
    "$w/profile.json"
;; esac
;; esac    # pytorch

case $skip in *" hostile "*) ;; *)
echo "== 5. hostile kernels: tests/gpu/run-cuda-eval.sh"
t0=$(date +%s)
KF_BUILD=$build OUT=$out tests/gpu/run-cuda-eval.sh >"$w/hostile.log" 2>&1
rc=$?
grep -E 'checks, [0-9]+ failed|FAIL|^== ' "$w/hostile.log" | sed 's/^/  | /'
check "hostile suite passes (run-cuda-eval.sh exit 0, $(( $(date +%s) - t0 )) s)" [ "$rc" -eq 0 ]
;; esac

case $skip in *" repeat "*) ;; *)
echo "== 6. repeatability: ref_softmax vs itself, 4096 x 4096, default protocol, 5 evaluations"
cat >"$w/repeat.job.json" <<EOF
{"payload": {"task": "$ROOT/examples/tasks/softmax_cuda/task.json", "seed": 3},
 "candidate": "$w/ref_softmax.build.json", "reference": "$w/ref_softmax.build.json"}
EOF
: >"$w/medians"
for i in 1 2 3 4 5; do
    ew --eval "$w/repeat.job.json" >"$w/repeat.$i.json" 2>/dev/null
    jq -r '.result.candidate.median_ns // empty' "$w/repeat.$i.json" >>"$w/medians"
    jq -r --arg i "$i" '"  run \($i): \(.result.verdict), candidate median \(.result.candidate.median_ns / 1000 * 1000 | round / 1000) us (p10 \(.result.candidate.p10_ns / 1000 * 1000 | round / 1000), p90 \(.result.candidate.p90_ns / 1000 * 1000 | round / 1000)), \(.result.candidate.samples) samples x \(.result.candidate.calls_per_sample), speedup \(.result.speedup * 10000 | round / 10000), wall \(.result.wall_s * 100 | round / 100) s; warm-up \(.result.protocol.warmup_s // 0 | . * 1000 | round / 1000) s, \(.result.protocol.warmup_calls // "-") calls (\(.result.protocol.correctness_calls // "-") in the correctness pass); phases \(.result.phases_s // {} | tostring)"' "$w/repeat.$i.json"
done
spread=$(awk '{ v[NR] = $1; s += $1 } END { if (NR < 5) { print "nan"; exit }
              mn = v[1]; mx = v[1]; for (i = 2; i <= NR; i++) { if (v[i] < mn) mn = v[i]; if (v[i] > mx) mx = v[i] }
              m = s / NR; for (i = 1; i <= NR; i++) d += (v[i] - m) ^ 2
              printf "%.3f %.2f %.3f", (mx - mn) / m * 100, m / 1000, sqrt (d / (NR - 1)) / m * 100 }' "$w/medians")
read -r range mean rsd <<<"$spread"
echo "  spread of the 5 medians (max - min over their mean): ${range}% (mean ${mean} us, relative standard deviation ${rsd:-nan}%)"
check "repeatability: 5 medians of a kernel over 50 us within 1%" \
    awk -v r="$range" -v m="$mean" 'BEGIN { exit !(r != "nan" && r < 1 && m > 50) }'
;; esac

verdict=PASS
[ "$failures" -eq 0 ] || verdict=FAIL
echo "test-gpu: $verdict ($checks checks, $failures failed)"
[ "$failures" -eq 0 ]
} 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
[ -n "${KF_KEEP:-}" ] || rm -rf "$work"
exit "$rc"
