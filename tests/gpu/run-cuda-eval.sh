#!/usr/bin/env bash
# tests/gpu/run-cuda-eval.sh - the CUDA evaluator end to end, on a host with
# an NVIDIA GPU. Run from the repository root after `make` (on the device
# machine after `source .kfdev/unpack.sh`):
#
#   tests/gpu/run-cuda-eval.sh            # output also saved to $OUT/cuda-eval.log
#
# 1. Builds every fixture in tests/fixtures/kernels/cuda with nvcc
#    (-O3 -arch=sm_90 -cudart shared, as the compile worker does) into a
#    scratch folder.
# 2. Runs build/tests/test_cuda with KF_CUDA_SO_DIR pointing there: it
#    probes the device (capabilities, measured copy bandwidth), builds the
#    fixtures once more through the compile handler, and judges each with
#    the exec handler in its sandboxed child: good kernel correct and
#    timed, reference against itself near 1, side-stream work counted,
#    wrong/unwritten/modified-input incorrect, far and near out-of-bounds
#    writes and a bad launch crashed, a spinning kernel a timeout, and the
#    good kernel timed three more times for repeatability; then a kernel
#    right only for the main shape caught on a second shape case, the FLOP
#    rate against the FMA peak measured from PTX (and its audit flag), the
#    hostile kernels (fork bomb, network socket, all device memory, a
#    cached result, f16 precision against a tighter rtol), the reference
#    probe, and, where a Python with CUDA torch is found, the softmax
#    example exported on this GPU with the good and the wrong kernel
#    evaluated against its data.
# As root the evaluation child drops to `nobody`, so the binaries are run
# from a copy that user can read.
set -uo pipefail
build=${KF_BUILD:-build}
arch=${KF_CUDA_ARCH:-sm_90}
out=${OUT:-/tmp}
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
work=$(mktemp -d /tmp/kf-cuda-eval.XXXXXX)
chmod 755 "$work"
mkdir -p "$work/so" "$work/tests" "$work/bin"
log="$out/cuda-eval.log"

{
echo "== date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "== command: tests/gpu/run-cuda-eval.sh (KF_BUILD=$build, arch $arch)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv 2>&1
"$nvcc" --version | tail -2
echo "== building fixtures with: $nvcc -O3 -shared -cudart shared -Xcompiler -fPIC -arch=$arch -Icommon"
status=0
t0=$(date +%s%N)
for f in tests/fixtures/kernels/cuda/*.cu; do
    n=$(basename "$f" .cu)
    ( "$nvcc" -O3 -shared -cudart shared -Xcompiler -fPIC -arch="$arch" -Icommon \
          -o "$work/so/$n.so" "$f" || echo "FAIL: $n does not build" ) &
done
wait
echo "  built $(ls "$work/so" | wc -l) kernels in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
ls "$work/so" | grep -q . || status=1
cp "$build/tests/test_cuda" "$work/tests/"
cp "$build/bin/kf-exec-worker" "$work/bin/"
chmod -R a+rX "$work"
[ -d /tmp/kfdev ] && chmod -R a+rX /tmp/kfdev
echo "== test_cuda"
t0=$(date +%s)
KF_CUDA_SO_DIR="$work/so" KF_FIXTURES_CUDA="$PWD/tests/fixtures/kernels/cuda" \
    "$work/tests/test_cuda" || status=1
echo "== test_cuda took $(( $(date +%s) - t0 )) s; exit status $status"
exit $status
} 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
rm -rf "$work"
exit "$rc"
