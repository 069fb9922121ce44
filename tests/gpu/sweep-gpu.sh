#!/usr/bin/env bash
# tests/gpu/sweep-gpu.sh - a tuning sweep at a real size on an NVIDIA GPU
# (issue 12, item 7): the native CUDA softmax task at ROWS x COLS (default
# 16384 x 4096 f32, 256 MiB a tensor), a candidate declaring
# kf-tune THREADS=128,256,512,1024 built at every point, the sweep judged
# by `kf-exec-worker --backend cuda --eval` with the default protocol.
# Prints each configuration's verdict, fidelity, limit and wall time, the
# sweep's limits and why, and the whole job's wall time; a last line
# "sweep-gpu: PASS|FAIL" (every configuration judged, one best named).
#
# Run from the repository root after `make` (on the device machine after
# `source .kfdev/unpack.sh`). KF_BUILD (build), KF_CUDA_ARCH (sm_90),
# ROWS, COLS.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
build=${KF_BUILD:-build}
arch=${KF_CUDA_ARCH:-sm_90}
rows=${ROWS:-16384}
cols=${COLS:-4096}
w=$(mktemp -d /tmp/kf-sweep-gpu.XXXXXX)
chmod 755 "$w"
cp "$build/bin/kf-exec-worker" "$build/bin/kf-compile-worker" "$w/" || exit 2
chmod -R a+rX "$w"
[ -d /tmp/kfdev ] && chmod -R a+rX /tmp/kfdev

cp examples/tasks/softmax_cuda/reference.cu "$w/"
jq --argjson r "$rows" --argjson c "$cols" \
   '.inputs[0].shape = [$r, $c] | .outputs[0].shape = [$r, $c] | del(.shapes)' \
   examples/tasks/softmax_cuda/task.json >"$w/task.json"
sed 's|^#define THREADS 256$|/* kf-tune: THREADS=128,256,512,1024 */\n#ifndef THREADS\n#define THREADS 256\n#endif|' \
    tests/fixtures/kernels/cuda/good_softmax.cu >"$w/tuned.cu"
grep -q 'kf-tune' "$w/tuned.cu" || { echo "sweep-gpu: the kernel has no kf-tune line" >&2; exit 2; }

cd "$w" || exit 2
./kf-compile-worker --cache-dir off --build reference.cu --reference --target "cuda:$arch" \
    -o ref.so >ref.json 2>ref.err || { cat ref.err; exit 2; }
./kf-compile-worker --cache-dir off --build tuned.cu --target "cuda:$arch" --tune 4 \
    -o tuned.so >tuned.json 2>tuned.err || { cat tuned.err; exit 2; }
echo "== built: $(jq '.frames | length' tuned.json) configs of tuned.cu, reference.cu; task $rows x $cols f32"
cat >job.json <<EOF
{"payload": {"task": "$w/task.json", "seed": 7}, "candidate": "$w/tuned.json", "reference": "$w/ref.json"}
EOF
t0=$(date +%s.%N)
./kf-exec-worker --backend cuda --eval job.json >eval.json 2>eval.err
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
jq -r '.result.configs[]? | "  \(.params | tostring): \(.verdict) [\(.fidelity // "-")], \((.median_ns // 0) / 1000 | . * 1000 | round / 1000) us, speedup \(.speedup // "-"), limit \(.limit_s // "-") s, wall \(.wall_s // "-" ) s\(if .skipped_reason then "; " + .skipped_reason else "" end)"' eval.json
jq -r '"  tuning: \(.result.tuning | del(.configs?) | tostring)"' eval.json
jq -r '"  best: \(.result.best_config | tostring), \(.result.verdict), speedup \(.result.speedup), candidate median \((.result.candidate.median_ns // 0) / 1000) us, fidelity \(.result.fidelity // "-")"' eval.json
[ -s eval.err ] && sed 's/^/  | /' eval.err | tail -5
echo "  job wall: $took s"
if jq -e '.ok and ([.result.configs[] | select(.verdict == "correct" or .verdict == "incorrect" or .verdict == "timeout")] | length) == (.result.configs | length)
          and (.result.best_config | has("THREADS"))' eval.json >/dev/null; then
    echo "sweep-gpu: PASS"
else
    jq -c '{ok, error}' eval.json
    echo "sweep-gpu: FAIL"
fi
