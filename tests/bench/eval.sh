#!/usr/bin/env bash
# tests/bench/eval.sh (`make bench-eval`) - what one evaluation costs: the
# wall time of a small kernel's evaluation split into the phases the
# evaluation child reports (phases_s: child_start, load, correctness,
# timing), the overhead beyond the measurement itself (everything but
# the timing phase), and how many candidates one device judges a minute
# at the default protocol (warm-up >= 1 s and >= 10 calls, >= 10 samples
# and >= 1 s). Figures only, not a test: the targets are printed beside
# them (overhead < 0.5 s a candidate, >= 30 evaluations a GPU-minute).
#
# Each evaluation is one `kf-exec-worker --eval` (the exec handler and its
# sandboxed child, as in a cluster, plus the start of the worker process,
# which a running worker does not pay; it is measured and shown apart).
#
#   KF_BUILD (build)  KF_BENCH_N (10 evaluations)
#   KF_BENCH_BACKEND (cuda when nvidia-smi sees a GPU, else host)
#   KF_CUDA_ARCH (sm_90)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
build=${KF_BUILD:-build}
n=${KF_BENCH_N:-10}
arch=${KF_CUDA_ARCH:-sm_90}
backend=${KF_BENCH_BACKEND:-}
if [ -z "$backend" ]; then
    backend=host
    nvidia-smi -L >/dev/null 2>&1 && backend=cuda
fi
w=$(mktemp -d /tmp/kf-bench-eval.XXXXXX)
chmod 755 "$w"
cp "$build/bin/kf-exec-worker" "$build/bin/kf-compile-worker" "$w/" || exit 2
chmod -R a+rX "$w"
trap 'rm -rf "$w"' EXIT
now() { date +%s.%N; }

if [ "$backend" = cuda ]; then
    device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
    cand=tests/fixtures/kernels/cuda/good_softmax.cu
    ref=tests/fixtures/kernels/cuda/ref_softmax.cu
    shape='[1024, 1024]'
    target=(--target "cuda:$arch")
    cat >"$w/task.json" <<EOF
{"name": "softmax_1m", "op": "softmax",
 "inputs": [{"name": "x", "shape": $shape, "dtype": "f32", "dist": {"kind": "normal", "mean": 0, "std": 3}}],
 "outputs": [{"name": "y", "shape": $shape, "dtype": "f32"}],
 "reference": {"language": "cuda", "file": "$ROOT/$ref"}}
EOF
else
    device="host CPU ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores)"
    cand=tests/fixtures/kernels/good_softmax.c
    ref=examples/tasks/softmax/reference.c
    shape='[256, 2048]'
    target=()
    cp examples/tasks/softmax/task.json examples/tasks/softmax/reference.c "$w/"
fi
"$w/kf-compile-worker" --cache-dir off --build "$cand" "${target[@]}" -o "$w/cand.so" >"$w/cand.json" 2>/dev/null
"$w/kf-compile-worker" --cache-dir off --build "$ref" "${target[@]}" --reference -o "$w/ref.so" >"$w/ref.json" 2>/dev/null
jq -e .result.compiled "$w/cand.json" "$w/ref.json" >/dev/null || { echo "bench-eval: the kernels do not build"; exit 1; }
cat >"$w/job.json" <<EOF
{"payload": {"task": "task.json", "seed": 1}, "candidate": "cand.json", "reference": "ref.json"}
EOF

echo "bench-eval: $(date -u +%Y-%m-%dT%H:%M:%SZ), backend $backend ($device)"
echo "kernel: $(basename "$cand") vs $(basename "$ref"), softmax f32 $shape, default protocol, $n evaluations"
# The worker's own start, alone: --help parses the configuration and exits.
t0=$(now)
for _ in 1 2 3 4 5; do "$w/kf-exec-worker" --help >/dev/null; done
start_s=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.4f", (b - a) / 5 }')

printf '%4s %8s %8s %12s %8s %12s %8s %10s %9s %8s\n' run wall_s child_s child_start load correctness timing overhead_s speedup cand_us
: >"$w/rows"
for i in $(seq 1 "$n"); do
    t0=$(now)
    "$w/kf-exec-worker" --backend "$backend" --eval "$w/job.json" >"$w/r$i.json" 2>"$w/r$i.err"
    t1=$(now)
    jq -r --arg wall "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')" \
        '.result as $r | ($r.phases_s // {}) as $p
         | [$wall, ($r.wall_s // "nan"), ($p.child_start // "nan"), ($p.load // "nan"),
            ($p.correctness // "nan"), ($p.timing // "nan"), ($r.speedup // "nan"),
            (($r.candidate.median_ns // 0) / 1000), ($r.verdict // .error)] | @tsv' \
        "$w/r$i.json" >>"$w/rows"
    tail -1 "$w/rows" | awk -F'\t' -v i="$i" 'function f(x) { return x == "nan" ? "nan" : sprintf ("%.3f", x) }
        { o = ($6 == "nan") ? "nan" : $1 - $6
          printf "%4d %8.3f %8.3f %12s %8s %12s %8s %10s %9.3f %8.2f %s\n", i, $1, $2, f($3), f($4), f($5), f($6), f(o), $7, $8, ($9 == "correct" ? "" : $9) }'
done
awk -F'\t' -v start="$start_s" '
    { n++; wall += $1; child += $2; cs += $3; ld += $4; co += $5; ti += $6
      if ($3 == "nan") nophase = 1; if ($9 != "correct") bad++ }
    END {
        if (!n) { print "bench-eval: no evaluation ran"; exit 1 }
        printf "mean %8.3f %8.3f %12.3f %8.3f %12.3f %8.3f\n", wall / n, child / n, cs / n, ld / n, co / n, ti / n
        printf "worker process start (not paid by a running worker): %.3f s\n", start
        if (nophase) print "phases_s: not reported by this worker (the overhead below cannot be split)"
        else {
            over = (wall - ti) / n
            printf "overhead beyond the measurement (wall - timing phase): %.3f s a candidate, %.3f s without the process start (target < 0.5 s): %s\n", over, over - start, (over - start < 0.5 ? "met" : "NOT met")
            printf "  of which: child start %.3f, artifact load %.3f, correctness %.3f, handler and files %.3f s\n", cs / n, ld / n, co / n, (wall - child) / n - start
        }
        rate = 60 / (wall / n); rate_w = 60 / (wall / n - start)
        printf "evaluations per GPU-minute: %.1f (%.1f in a running worker) (target >= 30): %s\n", rate, rate_w, (rate_w >= 30 ? "met" : "NOT met")
        if (ti > 0) printf "the timing phase alone allows at most %.1f a minute at this protocol\n", 60 / (ti / n)
        if (bad) printf "WARNING: %d evaluation(s) not correct\n", bad
    }' "$w/rows"
