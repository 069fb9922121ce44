#!/usr/bin/env bash
# tests/gpu/export-gpu.sh - issue 16 on the GPU: `kfctl export --torch` and
# `kfctl profile-model` where the kernels run, not only on the CI host
# (tests/integration/test_export.sh and test_profile_model.sh there).
#
# A single-node cluster (tests/gpu/cluster.sh: private PostgreSQL,
# coordinator, offline generator, nvcc compile worker, CUDA exec worker
# with the torch interpreter), then:
#   1. a small PyTorch problem (default examples/pytorch/layernorm.py,
#      96 x 768 with a learnable weight and bias, an eps buffer and init
#      scalars) searched on the CUDA target by the offline generator, which
#      has a CUDA starter for layernorm (1 generation x 2, --tune 4), until
#      the run is done with a best kernel;
#   2. `kfctl export RUN --torch -o DIR`, then in a FRESH Python process
#      (the interpreter the exec worker uses) the package is imported, its
#      kernel built by the package (nvcc) and loaded, and its Model, given
#      the problem Model's state_dict, compared on cuda:0 with the problem's
#      Model on new inputs; the exported module and the reference's eager
#      forward are timed per call; then the package's own test
#      (python -m PACKAGE.test_kernel --sets 3);
#   3. `kfctl profile-model` of a three-operator model (Linear 256->512,
#      GELU, LayerNorm over 64 rows) as a model_profile job on the exec
#      worker of the target: on the GPU under torch.profiler (CUDA kernel
#      time), three problems written with the model's shapes, the three
#      operators' shares adding up to nearly the whole (each kernel counted
#      once) and a forward's wall time the model's, not the profiler's
#      start-up; the ranking is printed.
# Ends with "export-gpu: PASS|FAIL (N checks, M failed)", exit 1 on any
# failure. Every wait is bounded: the whole script stops at KF_LIMIT_S
# (default 300) seconds, failing what is left.
#
#   source .kfdev/unpack.sh    # on the device machine
#   KF_BIN=$PWD/build-gpu/bin tests/gpu/export-gpu.sh
#   KF_TARGET=host KF_BIN=$PWD/build/bin tests/gpu/export-gpu.sh   # no GPU: the same on the CPU
#
# Environment: KF_BIN (default build/bin), KF_PYTHON (default: the first of
# /opt/torch/.venv/bin/python3 and /usr/bin/python3 that imports torch),
# KF_CUDA_ARCH (sm_90), KF_TARGET (default cuda:ARCH; "host" runs the same
# on the CPU), KF_EXPORT_PROBLEM (the problem of step 1), KF_LIMIT_S,
# KF_KEEP=1 (leave the state folder). Output also goes to
# $OUT/export-gpu.log (OUT default /tmp).
set -uo pipefail
cd "$(dirname "$0")/../.."
arch=${KF_CUDA_ARCH:-sm_90}
target=${KF_TARGET:-cuda:$arch}
backend=${target%%:*}
problem=${KF_EXPORT_PROBLEM:-examples/pytorch/layernorm.py}
limit=${KF_LIMIT_S:-300}
export KF_BIN=${KF_BIN:-$PWD/build/bin}
. tests/gpu/cluster.sh
export KF_EXEC_ARGS="--backend $backend --python $python ${KF_EXEC_ARGS:-}"
# On the CPU (a shared CI host) the timing protocol is cut short, as the
# integration tests do, so the script's logic is checked in minutes; on
# the GPU the coordinator's defaults apply.
[ "$backend" = host ] && export KF_COORDINATOR_ARGS="--eval-min-time-s 0.05 --eval-warmup-s 0.02
    --eval-min-samples 5 --eval-warmup-calls 2 ${KF_COORDINATOR_ARGS:-}"
mkdir -p "${OUT:-/tmp}"
log=${OUT:-/tmp}/export-gpu.log
W=$KF_STATE/work
mkdir -p "$W"

checks=0 failures=0
check() {   # check DESCRIPTION COMMAND...
    local what=$1
    shift
    checks=$((checks + 1))
    if "$@"; then echo "  ok: $what"; else failures=$((failures + 1)); echo "  FAILED: $what"; fi
}
# bounded SECONDS COMMAND...: the command under `timeout`, at most
# SECONDS and never past the script's limit; 124 when no time is left.
bounded() {
    local want=$1 left=$((limit - SECONDS))
    shift
    [ "$left" -gt 5 ] || { echo "  (no time left for: $*)" >&2; return 124; }
    [ "$want" -lt "$left" ] || want=$left
    timeout "$want" "$@"
}
jtrue_py() { [ "$("$python" -c "print($1)" 2>/dev/null)" = True ]; }   # jtrue_py PYTHON-EXPRESSION
# On exit: the cluster stopped; after a failure its logs kept (and packed
# into $OUT, which the device machine sends back), else the state removed.
ends() {
    cluster_down
    if [ "$failures" != 0 ] && [ -n "${OUT:-}" ]; then
        tar -czf "$OUT/export-gpu-state.tgz" -C "$KF_STATE" logs work 2>/dev/null \
            && echo "daemon logs and work files: $OUT/export-gpu-state.tgz"
    fi
    if [ -z "${KF_KEEP:-}" ] && [ "$failures" = 0 ]; then
        rm -rf "$KF_STATE"
    else
        echo "state kept in $KF_STATE"
    fi
}
closing() { echo "export-gpu: $([ "$failures" = 0 ] && echo PASS || echo FAIL) ($checks checks, $failures failed; $SECONDS s)"; }

# The three-operator model of test_profile_model.sh.
cat >"$W/model3.py" <<'EOF'
"""Three operators: Linear, GELU, LayerNorm (KernelBench level-3 form)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.linear = nn.Linear(d_in, d_out)
        self.act = nn.GELU()
        self.norm = nn.LayerNorm(d_out)

    def forward(self, x):
        return self.norm(self.act(self.linear(x)))


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return [256, 512]
EOF

# The user's side of an export, run in a fresh interpreter: import the
# package, compare its Model with the problem's on the device, time both.
cat >"$W/use.py" <<'EOF'
import importlib
import statistics
import sys
import time

import torch

k = importlib.import_module(sys.argv[1])
device = torch.device("cuda:0" if k.DEVICE == "cuda" else "cpu")
assert issubclass(k.Model, torch.nn.Module)
t0 = time.perf_counter()
so = k.build()
print("built %s in %.1f s (device %s%s)" % (so, time.perf_counter() - t0, device,
      ", " + torch.cuda.get_device_name(0) if device.type == "cuda" else ""))
torch.manual_seed(4242)
init = k.problem.get_init_inputs()
ref = k.problem.Model(*init)
m = k.Model(*init)
m.load_state_dict(ref.state_dict())
ref.to(device)
m.to(device)
worst = 0.0
for s in range(3):
    x = [t.to(device) if isinstance(t, torch.Tensor) else t for t in k.problem.get_inputs()]
    with torch.no_grad():
        want = ref(*x)
    got = m(*x)
    assert got.device == want.device == x[0].device, (got.device, want.device)
    assert got.shape == want.shape, (got.shape, want.shape)
    err = (got - want).abs().max().item()
    worst = max(worst, err)
    assert torch.allclose(got, want, rtol=1e-3, atol=1e-4), "set %d: largest error %g" % (s, err)
    print("set %d on %s: largest error %.3g" % (s, got.device, err))


def per_call_us(fn, x, calls=200, rounds=7):
    """The median over ROUNDS of the time of CALLS calls, per call."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    with torch.no_grad():
        for _ in range(20):
            fn(*x)
        sync()
        times = []
        for _ in range(rounds):
            t = time.perf_counter()
            for _ in range(calls):
                fn(*x)
            sync()
            times.append((time.perf_counter() - t) * 1e6 / calls)
    return statistics.median(times)


x = [t.to(device) if isinstance(t, torch.Tensor) else t for t in k.problem.get_inputs()]
mine, eager = per_call_us(m, x), per_call_us(ref, x)
print("largest error over 3 sets %.3g; per call (median of 7 x 200, synchronised): "
      "exported module %.2f us, reference eager forward %.2f us, ratio %.2fx"
      % (worst, mine, eager, eager / mine))
print("USE-OK")
EOF

{
echo "== date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "== command: tests/gpu/export-gpu.sh (target $target, python $python, problem $problem, limit ${limit} s)"
echo "== commit: $(git log -1 --format=%h 2>/dev/null || echo unknown); KF_BIN $KF_BIN; state $KF_STATE"
if [ "$backend" = cuda ]; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
    "$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())'
fi
trap ends EXIT
check "the cluster starts (deploy/kf-local up)" cluster_up
[ "$failures" = 0 ] || { closing; exit 1; }
check "the cluster is up with an exec worker of backend $backend that has torch" \
    bash -c '"$KF_BIN/kfctl" workers --json 2>/dev/null | "$0" -c "import json, sys
d = json.load(sys.stdin)
sys.exit(not any(w.get(\"role\") == \"execute\" and (w.get(\"capabilities\") or {}).get(\"torch\", {}).get(\"python\")
                 and \"$1\" in json.dumps(w.get(\"capabilities\")) for w in d[\"workers\"]))"' "$python" "$backend"

# --- 1. a search on the target
echo
echo "== 1. search: $problem on $target (offline generator, 1 x 2, --tune 4)"
start=$SECONDS
out=$(bounded 150 "$KF_BIN/kfctl" submit "$problem" --target "$target" --generations 1 \
          --population 2 --tune 4 --seed 1 --wait --json 2>"$W/submit.err")
run=$(echo "$out" | jget 'd["run_id"]')
best=$(echo "$out" | jget 'd["best_candidate_id"]')
echo "  run $run: $(echo "$out" | jget 'd["status"] + ": " + str(d["reason"])') ($((SECONDS - start)) s)"
[ "$run" = n/a ] && { echo "  submit said: $out"; tail -5 "$W/submit.err"; }
echo "  candidates: $(sql "SELECT coalesce(string_agg(status || ' ' || n, ', ' ORDER BY status), 'none')
                       FROM (SELECT status, count(*) AS n FROM candidates WHERE run_id = ${run/n\/a/0}
                             GROUP BY status) v")"
check "the run is done with a best candidate" \
    [ "$(echo "$out" | jget 'd["status"]')" = done -a "$best" != n/a ]
if [ "$best" != n/a ]; then
    echo "  best: candidate $best, $(sql "SELECT figures FROM evaluations WHERE candidate_id = $best AND correct
                                         ORDER BY id DESC LIMIT 1" | jget '"%.3f us, %.3fx eager, measured point %s" % (d["candidate"]["median_ns"] / 1e3, d["speedup"], d.get("best_config"))')"
fi

# --- 2. export, then the package in a fresh interpreter
echo
echo "== 2. kfctl export $run --torch -o DIR; the package in a fresh $python"
E=$W/export
out=$(bounded 30 "$KF_BIN/kfctl" export "$run" --torch -o "$E" --json 2>"$W/export.err")
rc=$?
pkg=$(echo "$out" | jget 'd["package"]')
echo "  export: exit $rc, package $pkg, candidate $(echo "$out" | jget 'd["candidate_id"]')"
[ "$rc" = 0 ] || tail -5 "$W/export.err"
src=kernel.c
[ "$backend" = cuda ] && src=kernel.cu
check "export exits 0 and writes the package with $src, its test and export.json (backend $backend)" \
    bash -c "[ $rc -eq 0 ] && cd '$E/$pkg' && ls __init__.py test_kernel.py problem.py $src kf_kernel.h export.json >/dev/null \
             && grep -q '\"backend\": *\"$backend\"' export.json"
if [ "$backend" = cuda ]; then
    check "the README's build line is nvcc's for $arch" \
        grep -q "^    nvcc .*-arch=$arch .*kernel.cu\$" "$E/README.md"
fi
( cd "$E" && PYTHONPATH=$E bounded 120 "$python" -B "$W/use.py" "$pkg" ) >"$W/use.out" 2>&1
rc=$?
sed 's/^/    /' "$W/use.out" | tail -12
check "a fresh $python builds and loads the kernel, its Model matches the problem's on 3 new sets on ${backend/host/cpu}" \
    bash -c "[ $rc -eq 0 ] && grep -q USE-OK '$W/use.out'"
( cd "$E" && bounded 120 "$python" -B -m "$pkg.test_kernel" --sets 3 ) >"$W/pkgtest.out" 2>&1
rc=$?
sed 's/^/    /' "$W/pkgtest.out" | tail -6
check "the package's own test passes: 3 of 3 sets" \
    bash -c "[ $rc -eq 0 ] && grep -q '^3 of 3 sets match' '$W/pkgtest.out'"

# --- 3. profile-model on the exec worker of the target
echo
echo "== 3. kfctl profile-model model3.py (Linear 256->512, GELU, LayerNorm; 64 rows) --target $target"
out=$(bounded 120 "$KF_BIN/kfctl" profile-model "$W/model3.py" --top 3 --target "$target" \
          --out "$W/ops" --json 2>"$W/profile.err")
rc=$?
echo "$out" >"$W/profile.json"
[ "$rc" = 0 ] || tail -5 "$W/profile.err"
want_device=cpu
[ "$backend" = cuda ] && want_device=cuda
jobs=$(sql "SELECT count(*) FROM jobs WHERE kind = 'model_profile' AND backend = '$backend' AND state = 'done'")
check "profile-model exits 0, as one model_profile job done on the $backend exec worker" \
    [ "$rc" = 0 -a "$jobs" = 1 ]
check "it profiled on $want_device (torch.profiler's ${want_device/cuda/CUDA kernel} time)" \
    [ "$(jget 'd["device"]' <"$W/profile.json")" = "$want_device" ]
names=$(jget 'sorted(o["name"] for o in d["operators"] if o.get("problem"))' <"$W/profile.json")
check "three problems written, one per operator: addmm, gelu, native_layer_norm" \
    [ "$(ls "$W/ops" 2>/dev/null | wc -l)" = 3 -a "$names" = "['aten::addmm', 'aten::gelu', 'aten::native_layer_norm']" ]
shapes=$(jget '{o["name"]: o["shapes"] for o in d["operators"]} == {"aten::addmm": [[512], [64, 256], [256, 512]], "aten::gelu": [[64, 512]], "aten::native_layer_norm": [[64, 512], [512], [512]]}' <"$W/profile.json")
check "with the model's shapes: addmm [512] [64,256] [256,512]; gelu [64,512]; layer norm [64,512] [512] [512]" \
    [ "$shapes" = True ]
# The three operators are all of the model's work (the rest are views and
# the composite aten::linear), so their shares must add up to nearly the
# whole; on CUDA, counting the profiler's kernel rows besides the
# operators that launched them would halve it. The wall time of a forward
# is the model's, not the profiler's start-up (about a second with CUPTI).
sum=$(jget '"%.3f" % sum(o["share"] for o in d["operators"] if o.get("problem"))' <"$W/profile.json")
wall=$(jget '"%.3f" % (d["wall_us"] / 1e3)' <"$W/profile.json")
echo "  the three operators' shares add up to $sum; a forward took $wall ms"
check "their shares add up to at least 0.9 of the operators' time" \
    jtrue_py "$sum >= 0.9"
check "a forward's wall time is the model's: under 100 ms" \
    jtrue_py "$wall < 100"
check "and each file calls its operator on inputs of those shapes" \
    bash -c "grep -q 'torch.randn(\[64, 256\]' '$W'/ops/*_addmm.py && grep -q 'torch.randn(\[64, 512\]' '$W'/ops/*_gelu.py && grep -q 'aten.native_layer_norm' '$W'/ops/*_native_layer_norm.py"
echo "  the ranking (kfctl profile-model's text, profiled again):"
bounded 120 "$KF_BIN/kfctl" profile-model "$W/model3.py" --top 3 --target "$target" \
    --out "$W/ops" --force 2>&1 | sed 's/^/    /'

echo
closing
[ "$failures" = 0 ]
} 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
