#!/usr/bin/env bash
# test_export.sh - `kfctl export`: a run's kernel out of the system.
# A small host search on a PyTorch problem with learnable parameters, a
# buffer and init scalars (examples/pytorch/layernorm.py), its candidates
# swept over their kf-tune points; `kfctl export RUN --torch -o DIR`; then
# in a fresh Python process (the interpreter found as the exec host finds
# it) the package is imported and its Model, given the reference module's
# state_dict, matches the problem's Model on new random inputs, and the
# package's own test passes (and fails on a kernel made wrong). The
# source carries the tuning point that was measured. A native task
# exports source, header and a build line that builds. Refused: a run
# with no correct candidate, a candidate that is not correct, a
# non-empty folder without --force, --torch for a native task. The CUDA
# flavour (no GPU here) is written from a run relabelled cuda in the
# database: its build line and Python are checked for form.
. "$(dirname "$0")/lib.sh"

need_torch_python   # sets PY, or ends the test with 0 checks

export KF_REFERENCE_CACHE_DIR=$T/reference-cache
db_new
start_coordinator "${COORD_FAST[@]}"
start_workers
check "three workers, the exec worker with torch" \
    wait_until 180 jtrue '[.workers[] | select(.capabilities.torch.python)] | length == 1' \
    kfctl workers --json

# --- a PyTorch run, each candidate swept over up to 4 tuning points
out=$(kfctl submit "$ROOT/examples/pytorch/layernorm.py" --target host --generations 1 \
      --population 2 --tune 4 --seed 5 --wait --json --timeout 30 2>"$T/submit.err")
run=$(jq -r .run_id <<<"$out")
best=$(jq -r .best_candidate_id <<<"$out")
check "layernorm.py: the run is done with a best candidate" \
    [ "$(jq -r .status <<<"$out")" = done -a "$best" != null ]
say "run $run: $out"

E=$T/exp
out=$(kfctl export "$run" --torch -o "$E" --json)
rc=$?
echo "$out" >"$T/export.json"
pkg=$(jq -r .package <<<"$out")
check "export --torch exits 0 and names the package kf_layernorm" \
    [ "$rc" -eq 0 -a "$pkg" = kf_layernorm ]
check "it names the best candidate and the Python found" \
    jtrue ".candidate_id == $best and (.python | length > 0)" echo "$out"
check "the package holds the module, its test, the problem, source, header, export.json" \
    bash -c "cd '$E/$pkg' && ls __init__.py test_kernel.py problem.py kernel.c kf_kernel.h export.json >/dev/null && [ -s '$E/README.md' ]"
check "export.json traces each kernel input: in0 is argument 0, then the parameters and the buffer" \
    jtrue '[.inputs[] | .source + ":" + (.index // .path | tostring)] == ["arg:0", "param:norm.weight", "param:norm.bias", "buffer:eps"] and .n_args == 1 and ([.scalars[].name] | sort) == ["init0", "init1"]' \
    cat "$E/$pkg/export.json"

# The tuning point whose figures counted, as the evaluation stored it.
point=$(sql "SELECT e.figures->'best_config' FROM evaluations e WHERE e.candidate_id = $best AND jsonb_typeof(e.figures->'best_config') = 'object' ORDER BY e.correct DESC, e.id DESC LIMIT 1")
say "measured point: ${point:-none}"
check "the best candidate was swept and a point measured" [ -n "$point" ]
check "export.json carries that point" \
    jtrue ".tuning == $point" cat "$E/$pkg/export.json"
defines_ok() {   # every NAME=VALUE of the point is a #define before the source's own
    local first name value line
    first=$(grep -n '^#ifndef' "$E/$pkg/kernel.c" | head -1 | cut -d: -f1)
    [ -n "$first" ] || return 1
    for name in $(jq -r 'keys[]' <<<"$point"); do
        value=$(jq -r --arg n "$name" '.[$n]' <<<"$point")
        line=$(grep -n "^#define $name $value\$" "$E/$pkg/kernel.c" | head -1 | cut -d: -f1)
        [ -n "$line" ] && [ "$line" -lt "$first" ] || { echo "no #define $name $value before line $first" >&2; return 1; }
    done
}
check "kernel.c defines the measured point ahead of the source's defaults" defines_ok

# --- a fresh Python process: import, compare with the reference module
cat >"$T/use.py" <<'EOF'
import sys
import torch
import kf_layernorm as k

assert issubclass(k.Model, torch.nn.Module)
torch.manual_seed(90210)
init = k.problem.get_init_inputs()
ref = k.problem.Model(*init)
m = k.Model(*init)
m.load_state_dict(ref.state_dict())
for s in range(3):
    x = k.problem.get_inputs()
    with torch.no_grad():
        want = ref(*x)
    got = m(*x)
    assert got.device.type == "cpu" and got.shape == want.shape, (got.device, got.shape)
    err = (got - want).abs().max().item()
    assert torch.allclose(got, want, rtol=1e-3, atol=1e-4), err
    print("set", s, "largest error", err)
try:
    m(torch.randn(3, 5))
    sys.exit("a wrong shape was taken")
except ValueError as e:
    print("refused:", e)
print("USE-OK")
EOF
check "a fresh $PY imports the package; Model matches the problem's Model on 3 new input sets" \
    bash -c "cd '$E' && PYTHONPATH='$E' '$PY' -B '$T/use.py' >'$T/use.out' 2>&1 && grep -q USE-OK '$T/use.out'"
sed 's/^/    /' "$T/use.out" >&2
check "the package's own test passes: 3 of 3 sets" \
    bash -c "cd '$E' && '$PY' -B -m $pkg.test_kernel --sets 3 >'$T/pkgtest.out' 2>&1 && grep -q '^3 of 3 sets match' '$T/pkgtest.out'"

# The package's test can fail: the same package around a kernel that
# scales its output by 1.5.
cp -r "$E" "$T/wrong"
rm -rf "$T/wrong/$pkg/build"
sed -i 's/\bkf_forward\b/kf_forward_right/' "$T/wrong/$pkg/kernel.c"
cat >>"$T/wrong/$pkg/kernel.c" <<'EOF'
int kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out, const kf_ctx_t *ctx)
{
    int rc = kf_forward_right (in, n_in, out, n_out, ctx);
    for (int64_t i = 0; i < kf_numel (&out[0]); i++)
        ((float *) out[0].data)[i] *= 1.5f;
    return rc;
}
EOF
check "the package's test fails on a kernel made wrong (exit 1, naming the set)" \
    bash -c "cd '$T/wrong' && ! '$PY' -B -m $pkg.test_kernel --sets 2 >'$T/wrong.out' 2>&1 && grep -q '^set 0 .*elements right' '$T/wrong.out' && grep -q '^0 of 2 sets match' '$T/wrong.out'"

# --- refusals
out=$(kfctl export "$run" --torch -o "$E" 2>&1)
rc=$?
check "a non-empty folder without --force: exit 2, says so" \
    bash -c "[ $rc -eq 2 ] && grep -q 'is not empty: give --force' <<<'$out'"
check "with --force it is written again" \
    bash -c "'$BIN/kfctl' export $run --torch -o '$E' --force >/dev/null"
out=$(kfctl export "$run" --torch 2>&1)
rc=$?
check "no -o: exit 2, asking for it" \
    bash -c "[ $rc -eq 2 ] && grep -q 'say where with -o DIR' <<<\"\$0\"" "$out"

out=$("$BIN/kfctl" submit "$ROOT/tests/fixtures/degenerate/constant.py" --target host \
      --generations 1 --population 1 --wait --json --timeout 30 2>/dev/null)
crun=$(jq -r .run_id <<<"$out")
out=$(kfctl export "$crun" --torch -o "$T/none" 2>&1)
rc=$?
check "a run with no correct candidate: exit 1, saying it ended failed with none" \
    bash -c "[ $rc -eq 1 ] && grep -q 'ended failed with no correct candidate' <<<\"\$0\" && [ ! -e '$T/none' ]" "$out"

# A native task whose initial kernel (generation 0, slot 0) copies its
# input: that candidate is incorrect for certain.
mkdir -p "$T/native"
cp "$ROOT/examples/tasks/softmax/reference.c" "$T/native/"
cat >"$T/native/copy.c" <<'EOF'
#include "kf_kernel.h"
#include <string.h>
int kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out, const kf_ctx_t *ctx)
{
    (void) n_in; (void) n_out; (void) ctx;
    memcpy (out[0].data, in[0].data, (size_t) kf_numel (&in[0]) * sizeof (float));
    return 0;
}
EOF
jq '.inputs[0].shape = [64, 256] | .outputs[0].shape = [64, 256] | .initial = {"language": "c", "file": "copy.c"}' \
    "$ROOT/examples/tasks/softmax/task.json" >"$T/native/task.json"
out=$(kfctl submit "$T/native/task.json" --target host --generations 1 --population 2 --seed 3 \
      --wait --json --timeout 30 2>/dev/null)
nrun=$(jq -r .run_id <<<"$out")
say "native run $nrun: $out"
wrong=$(sql "SELECT id FROM candidates WHERE run_id = $nrun AND status <> 'correct' ORDER BY id LIMIT 1")
out=$(kfctl export "$nrun" --candidate "${wrong:-0}" -o "$T/wrongcand" 2>&1)
rc=$?
check "a candidate that is not correct: exit 1, 'is not correct' with its verdict" \
    bash -c "[ -n '$wrong' ] && [ $rc -eq 1 ] && grep -q 'candidate $wrong is not correct (incorrect' <<<\"\$0\"" "$out"
out=$(kfctl export "$nrun" --candidate "$best" -o "$T/othercand" 2>&1)
check "a candidate of another run: exit 1" \
    bash -c "grep -q 'run $nrun has no candidate $best' <<<\"\$0\"" "$out"
out=$(kfctl export "$nrun" --torch -o "$T/nt" 2>&1)
rc=$?
check "--torch for a native task: exit 2, saying it is native" \
    bash -c "[ $rc -eq 2 ] && grep -q 'is a native task' <<<\"\$0\"" "$out"

if [ "$(jq -r .status <<<"$(kfctl show "$nrun" --json | jq .run)")" = done ] \
   && [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $nrun AND status = 'correct'")" -gt 0 ]; then
    check "native export: source, header, task and README" \
        bash -c "'$BIN/kfctl' export $nrun -o '$T/nat' >/dev/null && cd '$T/nat' && ls kernel.c kf_kernel.h task.json README.md >/dev/null"
    line=$(grep -m1 '^    cc ' "$T/nat/README.md" | sed 's/^    //')
    check "the README's build line is the compile worker's cc line" \
        bash -c "[[ '$line' == 'cc -O3 -march=native -std=c11 -shared -fPIC -I. -o libkernel.so kernel.c -lm' ]]"
    check "and it builds a shared object exporting kf_forward" \
        bash -c "cd '$T/nat' && $line && nm -D libkernel.so | grep -q ' T kf_forward'"
else
    check "the native run has a correct candidate" false
fi

# A correct candidate that does not count yet is not exported either.
sql "UPDATE candidates SET audit_reason = 'past the measured ceiling' WHERE id = $best" >/dev/null
out=$(kfctl export "$run" --candidate "$best" --torch -o "$T/held" 2>&1)
check "a candidate held for audit: exit 1, saying so" \
    bash -c "grep -q 'candidate $best is held for audit' <<<\"\$0\" && [ ! -e '$T/held' ]" "$out"
sql "UPDATE candidates SET audit_verdict = 'rejected' WHERE id = $best" >/dev/null
out=$(kfctl export "$run" --candidate "$best" --torch -o "$T/held" 2>&1)
check "a candidate rejected at audit: exit 1" \
    bash -c "grep -q 'candidate $best was rejected at audit' <<<\"\$0\"" "$out"
sql "UPDATE candidates SET audit_reason = NULL, audit_verdict = NULL, verify_state = 'pending' WHERE id = $best" >/dev/null
out=$(kfctl export "$run" --torch -o "$T/held" --json)
check "one waiting for its re-verification: exit 1, the reason as JSON on stdout" \
    jtrue ".code == \"bad-request\" and (.reason | contains(\"waits for its re-verification\"))" echo "$out"
sql "UPDATE candidates SET verify_state = NULL WHERE id = $best" >/dev/null

# --- the CUDA flavour, written here and checked for form only
sql "UPDATE runs SET target = 'cuda:sm_80' WHERE id = $run" >/dev/null
sql "UPDATE candidates SET language = 'cuda' WHERE id = $best" >/dev/null
check "a cuda run exports too" \
    bash -c "'$BIN/kfctl' export $run --torch -o '$T/cu' >/dev/null && ls '$T/cu/$pkg/kernel.cu' >/dev/null"
check "its build line is nvcc's with -arch=sm_80" \
    grep -q '^    nvcc -O3 -shared -cudart shared -Xcompiler -fPIC -Xlinker --no-undefined -arch=sm_80 -I. -o libkernel.so kernel.cu$' "$T/cu/README.md"
check "its Python compiles and picks the cuda device" \
    bash -c "'$PY' -B -m py_compile '$T/cu/$pkg/__init__.py' '$T/cu/$pkg/test_kernel.py' && jq -e '.backend == \"cuda\"' '$T/cu/$pkg/export.json' >/dev/null"

# With nvcc here (no GPU), the build itself: a real CUDA kernel of the
# contract in the package's place is built by the package's own build()
# and by the README's line, each a shared object exporting kf_forward.
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
    cp "$ROOT/examples/tasks/layernorm_cuda/reference.cu" "$T/cu/$pkg/kernel.cu"
    check "the package's build() runs nvcc and the object exports kf_forward" \
        bash -c "cd '$T/cu' && so=\$(PATH=\$PATH:/usr/local/cuda/bin '$PY' -B -c 'import $pkg as k; print(k.build())' 2>'$T/nvcc.err') && nm -D \"\$so\" | grep -q ' T kf_forward' || { cat '$T/nvcc.err' >&2; false; }"
    nvline=$(grep -m1 '^    nvcc ' "$T/cu/README.md" | sed 's/^    //')
    check "the README's nvcc line builds it too" \
        bash -c "cd '$T/cu/$pkg' && PATH=\$PATH:/usr/local/cuda/bin && $nvline && nm -D libkernel.so | grep -q ' T kf_forward'"
fi

finish
