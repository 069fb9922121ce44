#!/usr/bin/env bash
# tests/bench/cuda-levels.sh (`make bench-cuda-levels`) - where the time
# of a launch-bound CUDA kernel (the fixture softmax, 1024 x 1024 f32,
# about 7 us) varies on this GPU: between allocations, between streams
# and between CUDA contexts of one process, and between processes.
# Figures only; docs/results-gpu.md keeps what they showed on the H200.
#
#   KF_BENCH_N (8): processes   NVCC (nvcc on PATH, else /usr/local/cuda)
#   KF_CUDA_ARCH (the device's, from nvidia-smi; else sm_90)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
n=${KF_BENCH_N:-8}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$nvcc" ] || { echo "bench-cuda-levels: no nvcc (set NVCC)"; exit 1; }
nvidia-smi -L >/dev/null 2>&1 || { echo "bench-cuda-levels: no NVIDIA GPU here"; exit 1; }
arch=${KF_CUDA_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)}
arch=sm_${arch:-90}
w=$(mktemp -d /tmp/kf-levels.XXXXXX)
trap 'rm -rf "$w"' EXIT
"$nvcc" -O2 -arch="$arch" -I"$ROOT/common" -o "$w/levels" "$ROOT/tests/bench/cuda_levels.cu" -lcuda ||
    { echo "bench-cuda-levels: the program does not build"; exit 1; }
echo "bench-cuda-levels: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | head -1), $n processes"
for i in $(seq 1 "$n"); do
    "$w/levels" || { echo "bench-cuda-levels: process $i failed"; exit 1; }
done | tee "$w/lines"
awk '{ v[NR] = $2; a = $6 + 0; s = $9 + 0; c = $12 + 0; if (a > am) am = a; if (s > sm) sm = s; if (c > cm) cm = c }
     END { lo = hi = v[1]; for (i = 2; i <= NR; i++) { if (v[i] < lo) lo = v[i]; if (v[i] > hi) hi = v[i] }
           printf "between processes: levels %.3f-%.3f us, spread %.2f%%; within one: allocations at most %.2f%%, streams at most %.2f%%, contexts at most %.2f%%\n", lo, hi, (hi - lo) / lo * 100, am, sm, cm }' "$w/lines"
