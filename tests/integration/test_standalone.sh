#!/usr/bin/env bash
# test_standalone.sh - the workers' standalone modes on the host backend:
# `kf-compile-worker --build` builds the softmax example's reference and
# candidates through the compile handler, `kf-exec-worker --eval JOB.json`
# judges them through the exec handler (the build output feeding the job
# file directly), a tuned build becomes a tuning sweep, and every way a
# user can get the job file wrong is a one-line message and exit 2. No
# coordinator and no database: the point is one job without a cluster.
. "$(dirname "$0")/lib.sh"

EX=$ROOT/examples/tasks/softmax
K=$ROOT/tests/fixtures/kernels
W=$T/w
mkdir -p "$W"
cd "$W" || exit 1
build() { "$BIN/kf-compile-worker" --cache-dir off --build "$@"; }
evaluate() { "$BIN/kf-exec-worker" --eval "$@"; }
jqe() { jq -e "$@" >/dev/null; }
# A short protocol: the figures are checked for shape, not for speed.
TIMING='{"min_time_s": 0.05, "min_samples": 3, "warmup_s": 0.02, "warmup_calls": 2}'

# --- building -------------------------------------------------------------
build "$EX/reference.c" --reference -o ref.so >ref.json 2>build-ref.err
check "--build of the example's reference exits 0" [ $? -eq 0 ]
check "  and says it compiled, with an artifact that exists" \
    jqe '.ok and .result.compiled and (.artifact | test("/ref.so$"))' ref.json
check "  the artifact is the shared object the result names" \
    [ "$(sha256sum ref.so | cut -d' ' -f1)" = "$(jq -r .result.artifact_hash ref.json)" ]
build "$K/good_softmax.c" >good.json 2>build-good.err
check "--build names OUT after the source by default (good_softmax.so)" \
    jqe '.artifact | test("/good_softmax.so$")' good.json
build "$K/wrong_softmax.c" -o wrong.so >wrong.json 2>>"$W/stderr.err"
check "a candidate that is wrong still builds" jqe .result.compiled wrong.json
printf '#include "kf_kernel.h"\nint kf_forward (void) { return oops; }\n' >broken.c
build broken.c >broken.json 2>>"$W/stderr.err"
rc=$?
check "a source that does not compile exits 1" [ "$rc" -eq 1 ]
check "  with compiled false and the compiler's error in the log" \
    jqe '.ok and (.result.compiled | not) and (.result.log | test("oops"))' broken.json
build broken.c --language fortran >/dev/null 2>lang.err
check "an unknown language is a failed job (exit 1) naming it" \
    bash -c "[ $? -eq 1 ] && grep -q \"no toolchain for language 'fortran'\" lang.err"
build mystery.txt >/dev/null 2>ext.err
check "a source of unknown extension without --language exits 2" \
    bash -c "[ $? -eq 2 ] && grep -q 'give --language' ext.err"

# --- evaluating -----------------------------------------------------------
cat >job.json <<EOF
{"kind": "evaluate",
 "payload": {"task": "$EX/task.json", "seed": 5, "timing": $TIMING},
 "candidate": "good.json", "reference": "ref.json"}
EOF
evaluate job.json >eval.json 2>eval.err
check "--eval of the good candidate exits 0" [ $? -eq 0 ]
check "  verdict correct over 5 sets, all elements within tolerance" \
    jqe '.ok and .kind == "evaluate" and .result.verdict == "correct"
           and .result.correctness.sets == 5 and .result.correctness.match_fraction == 1' eval.json
# The speedup is the median of the paired ratios reference / candidate,
# which load can move away from the ratio of the medians, but not by two
# orders of magnitude: a speedup in other units (us against ns) or off by
# a scale falls outside.
say "good candidate: $(jq -c '.result | {speedup, candidate: .candidate.median_ns, reference: .reference.median_ns}' eval.json)"
check "  a speedup and both medians, and the paired ratio is their order of magnitude" \
    jqe '(.result.speedup | type) == "number" and .result.speedup > 0
           and .result.candidate.median_ns > 0 and .result.reference.median_ns > 0
           and (.result.speedup / (.result.reference.median_ns / .result.candidate.median_ns)
                | . > 0.01 and . < 100)' eval.json
check "  the evaluation child's wall time" jqe '.result.wall_s > 0' eval.json
check "  no result frames" jqe '.frames == []' eval.json

# The same, the frames named as files (the .so the builds wrote).
cat >frames.json <<EOF
{"payload": {"task": "$EX/task.json", "seed": 5, "timing": $TIMING},
 "frames": ["wrong.so", "ref.so"]}
EOF
evaluate frames.json >wrong-eval.json 2>>"$W/stderr.err"
check "a wrong candidate (frames as files) is a verdict, exit 0: incorrect, no speedup" \
    jqe '.ok and .result.verdict == "incorrect" and .result.speedup == null' wrong-eval.json

# A tuned source: --tune builds each point, --eval sweeps them.
cat >tuned.c <<'EOF'
/* kf-tune: CHUNK=1,2,4 */
#include "kf_kernel.h"
#include <math.h>
#ifndef CHUNK
#define CHUNK 1
#endif
int kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out, const kf_ctx_t *ctx)
{
    (void) n_in; (void) n_out; (void) ctx;
    long rows = in[0].shape[0], cols = in[0].shape[1];
    const float *x = in[0].data;
    float *y = out[0].data;
    for (long r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        float m = xr[0], s = 0;
        for (long i = 1; i < cols; i++) m = xr[i] > m ? xr[i] : m;
        for (long i = 0; i < cols; i += CHUNK)
            for (long k = i; k < i + CHUNK && k < cols; k++) { yr[k] = expf (xr[k] - m); s += yr[k]; }
        for (long i = 0; i < cols; i++) yr[i] /= s;
    }
    return 0;
}
EOF
build tuned.c --tune 3 -o tuned.so >tuned.json 2>>"$W/stderr.err"
check "--tune 3 builds three configs into three artifacts (tuned.so, tuned.1.so, tuned.2.so)" \
    jqe '(.result.configs | length) == 3 and (.frames | length) == 3
           and (.frames[2] | test("/tuned.2.so$"))' tuned.json
cat >tjob.json <<EOF
{"payload": {"task": "$EX/task.json", "seed": 2, "timing": $TIMING},
 "candidate": "tuned.json", "reference": "ref.json"}
EOF
evaluate tjob.json >tuned-eval.json 2>>"$W/stderr.err"
check "--eval of the tuned build sweeps every config and names the best" \
    jqe '.result.verdict == "correct" and (.result.configs | length) == 3
           and (.result.best_config | has("CHUNK"))' tuned-eval.json

# --- a PyTorch reference: its output file is the next job's reference ------
have_torch=
for py in /opt/torch/.venv/bin/python3 /usr/bin/python3 python3; do
    "$py" -c 'import torch' 2>/dev/null && have_torch=$py && break
done
if [ -n "$have_torch" ]; then
    cat >ref-job.json <<EOF
{"kind": "reference", "payload": {"source_file": "$ROOT/examples/pytorch/softmax.py",
  "seed": 4, "compile": false, "timing": $TIMING}}
EOF
    # The data stays in the reference cache; the output names it by key.
    export KF_REFERENCE_CACHE_DIR=$W/refcache
    "$BIN/kf-exec-worker" --eval ref-job.json --out torch >torch.json 2>torch.err
    check "--eval of a reference job (softmax.py) exits 0 with a manifest and its data key, no frame" \
        jqe '.ok and .kind == "reference" and (.result.tensors | length) == 10
             and (.frames | length) == 0 and (.result.data_key | length) == 64' torch.json
    check "  the cache holds every exported byte under that key" \
        [ "$(stat -c %s "refcache/d-$(jq -r .result.data_key torch.json).bin")" = "$(jq .result.data_bytes torch.json)" ]
    cat >pt-task.json <<EOF
{"name": "softmax_pt", "op": "softmax",
 "inputs": [{"name": "in0", "shape": [64, 1000], "dtype": "f32"}],
 "outputs": [{"name": "out0", "shape": [64, 1000], "dtype": "f32"}],
 "reference": {"language": "pytorch", "file": "$ROOT/examples/pytorch/softmax.py"}}
EOF
    cat >pt-job.json <<EOF
{"payload": {"task": "pt-task.json", "seed": 4, "timing": $TIMING},
 "candidate": "good.json", "reference": "torch.json"}
EOF
    evaluate pt-job.json >pt-eval.json 2>>"$W/stderr.err"
    check "a candidate judged against the exported PyTorch data (reference: the job's output)" \
        jqe '.ok and .result.verdict == "correct" and .result.speedup > 0' pt-eval.json
    cat >pt-wrong.json <<EOF
{"payload": {"task": "pt-task.json", "seed": 4, "timing": $TIMING},
 "candidate": "wrong.json", "reference": "torch.json"}
EOF
    evaluate pt-wrong.json >pt-wrong-eval.json 2>>"$W/stderr.err"
    check "  and a wrong one is incorrect against the same data" \
        jqe '.result.verdict == "incorrect"' pt-wrong-eval.json
    # Another host's worker, its cache empty, makes the data again.
    KF_REFERENCE_CACHE_DIR=$W/refcache-empty evaluate pt-job.json >pt-regen.json 2>>"$W/stderr.err"
    check "  an empty cache makes the data again, with the reference job's hash" \
        jqe '.result.verdict == "correct" and .result.reference_data.from == "regenerated"
             and .result.reference_data.matches' pt-regen.json
    unset KF_REFERENCE_CACHE_DIR
else
    say "skipped the PyTorch reference checks: no Python with torch here"
fi

# --- profile: none where perf is off (test_profile_host.sh runs perf) ----
cat >prof.json <<EOF
{"kind": "profile", "payload": {"task": "$EX/task.json"}, "frames": ["good_softmax.so"]}
EOF
evaluate prof.json --perf off >prof-out.json 2>>"$W/stderr.err"
rc=$?
check "a profile job on a host worker without perf fails (exit 1): profiling unavailable" \
    bash -c "[ $rc -eq 1 ] && jq -e '(.ok | not) and (.error | startswith(\"profiling unavailable: \"))' prof-out.json >/dev/null"

# --- a broken JOB.json: one line naming the file, exit 2 -------------------
bad() {   # bad NAME TEXT PATTERN: the job file TEXT is refused with PATTERN
    printf '%s' "$2" >"$1.json"
    evaluate "$1.json" >"$1.out" 2>"$1.err"
    local rc=$?
    check "broken job file ($1): exit 2 and '$3'" \
        bash -c "[ $rc -eq 2 ] && [ ! -s $1.out ] && grep -q -- '$3' $1.err && [ \$(wc -l <$1.err) -eq 1 ]"
}
bad syntax '{"payload": {"task": 1,}' "syntax.json: line 1 column"
bad notobj '[1, 2]' "must be a JSON object"
bad kind '{"kind": "compile", "payload": {}}' 'kind: must be "evaluate", "profile" or "reference"'
bad nopayload '{"frames": ["ref.so", "ref.so"]}' "payload: missing"
bad unknown '{"payload": {}, "frams": []}' "frams: unknown key"
bad noframe '{"payload": {}, "frames": ["missing.so", "ref.so"]}' "frames\[0\]: cannot read"
bad both '{"payload": {}, "frames": [], "candidate": "ref.so"}' "either frames or candidate"
bad task '{"payload": {"task": "nope/task.json"}, "frames": []}' "payload.task:"
bad notbuilt "{\"payload\": {}, \"candidate\": \"broken.json\"}" "holds no built artifact"
evaluate >/dev/null 2>noarg.err
check "--eval without a file name exits 2" bash -c "[ $? -eq 2 ] && grep -q 'needs a value' noarg.err"
evaluate job.json stray >/dev/null 2>stray.err
check "a stray argument exits 2" bash -c "[ $? -eq 2 ] && grep -q \"unexpected argument 'stray'\" stray.err"
cat >notask.json <<EOF
{"payload": {"seed": 1}, "frames": ["good_softmax.so", "ref.so"]}
EOF
evaluate notask.json >notask.out 2>>"$W/stderr.err"
check "a payload the handler refuses is a failed job (exit 1) with its reason" \
    bash -c "[ $? -eq 1 ] && jq -e '(.ok | not) and .error == \"payload: task missing\"' notask.out >/dev/null"

# Under AddressSanitizer a leak or a bad access in either worker shows in
# its stderr, which every command above kept.
check "no sanitizer report from the workers" \
    bash -c "! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' '$W'/*.err"
cd "$ROOT" || exit 1
finish
