#!/usr/bin/env bash
# tests/bench/eval.sh (`make bench-eval`) - what one evaluation costs: the
# wall time of a small kernel's evaluation split into the phases the
# evaluation child reports (phases_s: child_start, load, correctness,
# timing, report, exit), the overhead beyond the measurement itself, and
# how many candidates one device judges a minute at the default protocol
# (common/kf_floors.h: warm-up >= 0.1 s and >= 10 calls, >= 10 samples and
# >= 0.5 s, candidate and
# reference interleaved). Figures only, not a test: the targets are
# printed beside them (overhead < 0.5 s a candidate, >= 30 evaluations a
# GPU-minute).
#
# The correctness pass's calls count towards the warm-up floor, so the
# measurement is the warm-up span (from the first correctness call to the
# end of the warm-up) plus the sampling; the overhead is the wall time
# beyond those two. The child's split_s says where load and correctness
# went (context, modules, device, ceilings; inputs, copies, calls,
# comparison).
#
# Two ways, each KF_BENCH_N evaluations one after another:
#   standalone  each one `kf-exec-worker --eval` (the exec handler and its
#               sandboxed child, as in a cluster, plus the worker's own
#               process start, measured and shown apart); nothing else
#               holds the GPU open between them, and each child measures
#               the device's ceilings itself.
#   worker      one `kf-exec-worker --eval --repeat N`: the start-up probe
#               of a running worker (which keeps the GPU open and hands its
#               ceilings to each child), then N evaluations, each timed by
#               the handler (handler_s). What a cluster's worker pays.
#
#   KF_BUILD (build)  KF_BENCH_N (10 evaluations)
#   KF_BENCH_SHAPE (the CUDA task's shape, default [1024, 1024])
#   KF_BENCH_TIMING (a timing object for the payload, e.g. a search's
#               screen protocol '{"min_time_s": 0.1, "min_samples": 5,
#               "warmup_s": 0.05, "warmup_calls": 3}'; default: the
#               worker's full protocol; the floors printed below are the
#               full protocol's)
#   KF_BENCH_MODES ("standalone worker")
#   KF_BENCH_SAVE (a folder to copy each evaluation's result JSON into)
#   KF_BENCH_BACKEND (cuda when nvidia-smi sees a GPU, else host)
#   KF_CUDA_ARCH (sm_90)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
build=${KF_BUILD:-build}
n=${KF_BENCH_N:-10}
modes=${KF_BENCH_MODES:-standalone worker}
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
# Issue 12's targets: 60 a GPU-minute at 1024 x 1024, 20 at 16384 x 4096.
rate_target=20
[ "$(tr -d ' ' <<<"${KF_BENCH_SHAPE:-[1024,1024]}")" = "[1024,1024]" ] && rate_target=60
# The floors this run times with: the payload's, else the defaults.
floor_w=$(sed -n 's/^#define KF_FULL_WARMUP_S //p' common/kf_floors.h)
floor_s=$(sed -n 's/^#define KF_FULL_MIN_TIME_S //p' common/kf_floors.h)
if [ -n "${KF_BENCH_TIMING:-}" ]; then
    floor_w=$(jq -r --arg d "$floor_w" '.warmup_s // ($d | tonumber)' <<<"$KF_BENCH_TIMING")
    floor_s=$(jq -r --arg d "$floor_s" '.min_time_s // ($d | tonumber)' <<<"$KF_BENCH_TIMING")
fi

if [ "$backend" = cuda ]; then
    device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
    cand=tests/fixtures/kernels/cuda/good_softmax.cu
    ref=tests/fixtures/kernels/cuda/ref_softmax.cu
    shape=${KF_BENCH_SHAPE:-[1024, 1024]}
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
timing_field=
[ -n "${KF_BENCH_TIMING:-}" ] && timing_field=", \"timing\": $KF_BENCH_TIMING"
cat >"$w/job.json" <<EOF
{"payload": {"task": "task.json", "seed": 1$timing_field},
 "candidate": "cand.json", "reference": "ref.json"}
EOF
echo "task shape $shape, timing ${KF_BENCH_TIMING:-default (the full protocol)}"

echo "bench-eval: $(date -u +%Y-%m-%dT%H:%M:%SZ), backend $backend ($device)"
echo "kernel: $(basename "$cand") vs $(basename "$ref"), softmax f32 $shape, default protocol, $n evaluations"
# The worker's own start, alone: --help parses the configuration and exits.
t0=$(now)
for _ in 1 2 3 4 5; do "$w/kf-exec-worker" --help >/dev/null; done
start_s=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.4f", (b - a) / 5 }')

# One row per evaluation from its printed result (FILE) and its wall time
# (WALL): wall child start load correctness timing report exit warmup_s
# sampling_s speedup cand_us verdict warmup_calls correctness_calls
# topup_calls measured_s, then the split_s steps.
row() {
    jq -r --arg wall "$2" \
        '.result as $r | ($r.phases_s // {}) as $p | ($r.protocol // {}) as $q | ($r.split_s // {}) as $s
         | [$wall, ($r.wall_s // "nan"), ($p.child_start // "nan"), ($p.load // "nan"),
            ($p.correctness // "nan"), ($p.timing // "nan"), ($p.report // "nan"), ($p.exit // "nan"),
            ($q.warmup_s // "nan"), ($q.sampling_s // "nan"), ($r.speedup // "nan"),
            (($r.candidate.median_ns // 0) / 1000), ($r.verdict // .error),
            ($q.warmup_calls // "nan"), ($q.correctness_calls // "nan"), ($q.topup_calls // "nan"),
            ($q.measured_s // "nan"),
            ($s.context // 0), ($s.modules // 0), ($s.device // 0), ($s.ceilings // 0),
            ($s.inputs // 0), ($s.copies // 0), ($s.calls // 0), ($s.compare // 0)] | @tsv' "$1"
}
show_row() {
    awk -F'\t' -v i="$1" 'function f(x) { return x == "nan" ? "nan" : sprintf ("%.3f", x) }
        { o = ($9 == "nan") ? "nan" : $1 - $9 - $10
          printf "%4d %7.3f %7.3f %7s %7s %8s %7s %7s %7s %9s %8s %8s %8.3f %s\n", i, $1, $2, f($3), f($4), f($5), f($6), f($7), f($8), f(o), f($9), f($10), $11, ($13 == "correct" ? "" : $13) }'
}
header() {
    printf '%4s %7s %7s %7s %7s %8s %7s %7s %7s %9s %8s %8s %8s\n' run wall_s child_s start load correct timing report exit overhead warmup_s sampling speedup
}
# summary ROWS START_S: the means and what they mean; START_S is what the
# worker's own process start adds to each wall (0 for a running worker).
summary() {
    awk -F'\t' -v start="$2" -v fw="$floor_w" -v fs="$floor_s" -v target="$rate_target" '
    { n++; med[n] = $12; sp[n] = $11; for (k = 1; k <= 25; k++) if ($k != "nan") sum[k] += $k; else miss[k] = 1
      if ($13 != "correct") bad++ }
    END {
        if (!n) { print "bench-eval: no evaluation ran"; exit 1 }
        for (k = 1; k <= 25; k++) m[k] = sum[k] / n
        printf "mean %7.3f %7.3f %7.3f %7.3f %8.3f %7.3f %7.3f %7.3f %9.3f %8.3f %8.3f %8.3f\n", m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[1] - m[9] - m[10], m[9], m[10], m[11]
        printf "candidate median %.2f us\n", m[12]
        if (miss[3] || miss[9]) { print "phases_s or protocol: not reported by this worker (the overhead below cannot be split)" }
        else {
            printf "protocol: warm-up %.3f s from the first correctness call, %.1f calls a side (%.1f in the correctness pass, %.1f topped up); sampling %.3f s wall for %.3f s measured\n", m[9], m[14], m[15], m[16], m[10], m[17]
            printf "load %.3f s: context %.3f, modules %.3f, device and buffers %.3f, copy bandwidth %s\n", m[4], m[18], m[19], m[20], (m[21] > 0 ? sprintf ("and FMA peak (in report) %.3f", m[21]) : "and FMA peak: handed over by the worker")
            printf "correctness pass %.3f s: inputs drawn %.3f, copies and input checks %.3f, kernel calls %.3f, outputs read back and compared %.3f\n", m[5], m[22], m[23], m[24], m[25]
            over = m[1] - m[9] - m[10]
            printf "overhead beyond the measurement (wall - warm-up span - sampling): %.3f s a candidate, %.3f s without the process start (target < 0.5 s): %s\n", over, over - start, (over - start < 0.5 ? "met" : "NOT met")
            printf "  of which: process start %.3f, child start %.3f, load %.3f, report %.3f, exit %.3f, handler and files %.3f, the rest of the child %.3f s\n", start, m[3], m[4], m[7], m[8], m[1] - m[2] - start, m[2] - m[3] - m[4] - m[7] - m[8] - m[9] - m[10]
            printf "wall beyond the protocol floors (warm-up %s s + samples %s s): %.3f s (without the process start)\n", fw, fs, m[1] - start - fw - fs
        }
        if (n >= 2) {
            mn = mx = med[1]; for (i = 2; i <= n; i++) { if (med[i] < mn) mn = med[i]; if (med[i] > mx) mx = med[i] }
            printf "spread of the %d candidate medians (max - min over their mean): %.3f%% (%.2f-%.2f us; target <= 1%% for the full protocol)\n", n, (mx - mn) / m[12] * 100, mn, mx
            if (sp[1] != "nan") {
                lo = hi = sp[1]; for (i = 2; i <= n; i++) { if (sp[i] < lo) lo = sp[i]; if (sp[i] > hi) hi = sp[i] }
                printf "spread of the %d paired speedups (max - min over their mean): %.3f%% (%.3f-%.3f)\n", n, (hi - lo) / m[11] * 100, lo, hi
            }
        }
        rate = 60 / m[1]; rate_w = 60 / (m[1] - start)
        printf "evaluations per GPU-minute: %.1f (%.1f without the process start) (target >= %d at this shape): %s\n", rate, rate_w, target, (rate_w >= target ? "met" : "NOT met")
        if (bad) printf "WARNING: %d evaluation(s) not correct\n", bad
    }' "$1"
}

for mode in $modes; do
    echo
    : >"$w/rows.$mode"
    if [ "$mode" = standalone ]; then
        echo "== standalone: $n x kf-exec-worker --eval (a process each; worker process start $start_s s, shown apart)"
        header
        for i in $(seq 1 "$n"); do
            t0=$(now)
            "$w/kf-exec-worker" --backend "$backend" --eval "$w/job.json" >"$w/s$i.json" 2>"$w/s$i.err"
            t1=$(now)
            row "$w/s$i.json" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')" >>"$w/rows.$mode"
            tail -1 "$w/rows.$mode" | show_row "$i"
            [ -n "${KF_BENCH_SAVE:-}" ] && mkdir -p "$KF_BENCH_SAVE" && cp "$w/s$i.json" "$KF_BENCH_SAVE/standalone.$i.json"
        done
        summary "$w/rows.$mode" "$start_s"
    elif [ "$mode" = worker ]; then
        echo "== worker: kf-exec-worker --eval --repeat $n (probed once, as a running worker; wall = handler_s)"
        t0=$(now)
        "$w/kf-exec-worker" --backend "$backend" --eval "$w/job.json" --repeat "$n" >"$w/worker.json" 2>"$w/worker.err"
        t1=$(now)
        jq -c . "$w/worker.json" >"$w/worker.lines" 2>/dev/null
        i=0
        header
        while IFS= read -r line; do
            i=$((i + 1))
            printf '%s\n' "$line" >"$w/k$i.json"
            row "$w/k$i.json" "$(jq -r '.handler_s // "nan"' "$w/k$i.json")" >>"$w/rows.$mode"
            tail -1 "$w/rows.$mode" | show_row "$i"
            [ -n "${KF_BENCH_SAVE:-}" ] && mkdir -p "$KF_BENCH_SAVE" && cp "$w/k$i.json" "$KF_BENCH_SAVE/worker.$i.json"
        done <"$w/worker.lines"
        summary "$w/rows.$mode" 0
        awk -F'\t' -v a="$t0" -v b="$t1" '{ s += $1 } END { printf "worker process start and probe (paid once, not per candidate): %.3f s\n", (b - a) - s }' "$w/rows.$mode"
    fi
done
echo
awk -v w="$floor_w" -v s="$floor_s" 'BEGIN { printf "the protocol floors alone (%s s of warm-up and %s s of samples a candidate, one candidate at a time) allow at most %.1f evaluations a minute\n", w, s, 60 / (w + s) }'
