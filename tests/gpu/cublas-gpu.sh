#!/usr/bin/env bash
# tests/gpu/cublas-gpu.sh - a task that allows cuBLAS, on a host with an
# NVIDIA GPU: the candidate (tests/fixtures/kernels/cuda-libs, row sums as
# cublasSgemv against a vector of ones) builds only with the task's
# libraries linked, and is judged correct and timed against a plain CUDA
# reference through the standalone workers. Run from the repository root
# after `make` (on the device machine after `source .kfdev/unpack.sh`).
# Prints figures and "cublas-gpu: PASS|FAIL (N checks, M failed)".
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
build=${KF_BUILD:-build}
py=${KF_PYTHON:-python3}
[ -x /opt/torch/.venv/bin/python3 ] && py=/opt/torch/.venv/bin/python3
F=$ROOT/tests/fixtures/kernels/cuda-libs
work=$(mktemp -d /tmp/kf-cublas.XXXXXX)
chmod 755 "$work"
cp "$build/bin/kf-exec-worker" "$build/bin/kf-compile-worker" "$work/"
chmod -R a+rX "$work"
[ -d /tmp/kfdev ] && chmod -R a+rX /tmp/kfdev
checks=0 failures=0
check() {
    checks=$((checks + 1))
    if "$2"; then echo "  ok: $1"; else failures=$((failures + 1)); echo "  FAILED: $1"; fi
}
field() { "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@" 2>/dev/null || echo -; }
cw() { "$work/kf-compile-worker" --cache-dir off "$@"; }
cd "$work" || exit 2
cw --build "$F/ref_row_sum.cu" --target cuda:sm_90 --reference -o ref.so >ref.json
cw --build "$F/cublas_row_sum.cu" --target cuda:sm_90 -o plain.so >plain.json
plain_rc=$?
cw --build "$F/cublas_row_sum.cu" --target cuda:sm_90 --libraries cublas -o cand.so >cand.json
cand_rc=$?
echo "without the task's libraries: exit $plain_rc, log: $(field plain.json "d['result']['log'][:300].replace(chr(10), ' | ')")"
t1() { [ "$plain_rc" = 1 ] && grep -q "cublas" plain.json; }
check "without libraries the cuBLAS call does not link" t1
t2() { [ "$cand_rc" = 0 ]; }
check "with libraries [cublas] it builds" t2
cat >job.json <<JOB
{"kind": "evaluate", "payload": {"task": "$F/task.json", "seed": 3},
 "candidate": "cand.json", "reference": "ref.json"}
JOB
"$work/kf-exec-worker" --backend cuda --eval job.json >eval.json 2>eval.err
echo "evaluation: $(field eval.json "{k: d['result'].get(k) for k in ('verdict', 'detail', 'speedup')}")"
echo "  candidate median $(field eval.json "d['result']['candidate']['median_ns']") ns, reference median $(field eval.json "d['result']['reference']['median_ns']") ns"
t3() { [ "$(field eval.json "d['result']['verdict']")" = correct ]; }
check "the cuBLAS candidate is correct" t3
t4() { field eval.json "d['result']['speedup'] > 0" | grep -q True; }
check "and timed against the reference" t4
echo "cublas-gpu: $([ $failures = 0 ] && echo PASS || echo FAIL) ($checks checks, $failures failed)"
rm -rf "$work"
[ $failures = 0 ]
