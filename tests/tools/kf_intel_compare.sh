#!/usr/bin/env bash
# kf_intel_compare.sh - the same OpenCL C kernels judged by the exec
# worker's two Intel paths, `opencl` (any ICD: Intel's compute runtime,
# PoCL) and `level-zero` (Intel GPUs), and their verdicts compared.
#
#   tests/tools/kf_intel_compare.sh [--backends "opencl level-zero"]
#                                   [--opencl-device SEL] [--ze-device N]
#                                   [--build DIR] [--keep]
#
# Every kernel is built once by the compile worker (`--build`, the
# KF-SPIRV bundle both backends take) and judged against the softmax
# task's C reference with `kf-exec-worker --backend B --eval` (the very
# handler a worker runs, docs/evaluation.md "Standalone use"). The
# kernels are the OpenCL fixtures with known verdicts: an honest one
# (correct), wrong values and unwritten outputs (incorrect), a write past
# the output (crashed), a kf-launch line naming no tensor (load_failed),
# and the hostile ones, which must not be judged correct anywhere (on a
# GPU their x86 assembly is left out, so they fail differently than on a
# CPU platform). A backend whose device is missing is reported as such
# and left out of the comparison.
#
# Prints one line per kernel and backend, then a table; exits 0 when
# every backend that ran gave each kernel its expected verdict (so the
# backends agree), 1 when one did not or none found its device, 2 on bad
# arguments or a missing build. Run it on an Intel GPU host after `make` (docs/intel.md).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${KF_BUILD:-build}
BACKENDS="opencl level-zero"
OCL_DEV=""
ZE_DEV=0
KEEP=0
while [ $# -gt 0 ]; do
    case "$1" in
        --backends) BACKENDS=$2; shift 2 ;;
        --opencl-device) OCL_DEV=$2; shift 2 ;;
        --ze-device) ZE_DEV=$2; shift 2 ;;
        --build) BUILD=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        -h | --help) sed -n '2,26p' "$0"; exit 0 ;;
        *) echo "kf_intel_compare.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
    esac
done
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
CW=$BUILD/bin/kf-compile-worker
EW=$BUILD/bin/kf-exec-worker
for b in "$CW" "$EW"; do
    [ -x "$b" ] || { echo "kf_intel_compare.sh: $b not built (make, or --build DIR)" >&2; exit 2; }
done
command -v jq >/dev/null || { echo "kf_intel_compare.sh: jq is needed" >&2; exit 2; }
for be in $BACKENDS; do
    case "$be" in opencl | level-zero) ;; *)
        echo "kf_intel_compare.sh: backend '$be' is neither opencl nor level-zero" >&2; exit 2 ;;
    esac
done

T=$(mktemp -d /tmp/kf-intel.XXXXXX)
[ "$KEEP" = 1 ] && echo "files in $T" || trap 'rm -rf "$T"' EXIT
FIX=$ROOT/tests/fixtures/kernels/opencl
TASK=$ROOT/examples/tasks/softmax/task.json

# kernel and the verdict it must get; "!correct" for the hostile ones.
KERNELS="good_softmax:correct wrong_softmax:incorrect unwritten:incorrect
oob_write:crashed bad_launch:load_failed hostile_forge:!correct
hostile_escape:!correct hostile_ref_copy:!correct hostile_early_answer:!correct"

"$CW" --build "$ROOT/examples/tasks/softmax/reference.c" --language c --reference \
    -o "$T/ref.so" >"$T/ref.json" 2>"$T/ref.err" \
    || { echo "kf_intel_compare.sh: the C reference does not build: $(tail -1 "$T/ref.err")" >&2; exit 1; }

failed=0
declare -A GOT=()
for entry in $KERNELS; do
    k=${entry%%:*}
    "$CW" --build "$FIX/$k.cl" --language opencl --target level-zero \
        -o "$T/$k.so" >"$T/$k.build.json" 2>/dev/null
    if [ "$(jq -r .ok "$T/$k.build.json" 2>/dev/null)" != true ]; then
        echo "$k: the compile worker did not build it: $(jq -r '.result.log // .error' "$T/$k.build.json" 2>/dev/null | tail -1)"
        failed=1
        continue
    fi
    for be in $BACKENDS; do
        jq -n --arg task "$TASK" --arg cand "$T/$k.build.json" --arg ref "$T/ref.json" \
            '{payload: {task: $task, seed: 42, timing: {min_time_s: 0.2, warmup_s: 0.1}},
              candidate: $cand, reference: $ref}' >"$T/$k.$be.job.json"
        dev=()
        if [ "$be" = opencl ] && [ -n "$OCL_DEV" ]; then dev=(--device "$OCL_DEV"); fi
        if [ "$be" = level-zero ]; then dev=(--device "$ZE_DEV"); fi
        "$EW" --backend "$be" "${dev[@]}" --eval "$T/$k.$be.job.json" --out "$T/$k.$be" \
            >"$T/$k.$be.json" 2>"$T/$k.$be.err"
        verdict=$(jq -r 'if .ok then .result.verdict else "failed" end' "$T/$k.$be.json" 2>/dev/null)
        detail=$(jq -r 'if .ok then .result.detail else .error end' "$T/$k.$be.json" 2>/dev/null)
        case "$detail" in *"no OpenCL device"* | *"no Level Zero device"*) verdict="no-device" ;; esac
        GOT[$k.$be]=${verdict:-failed}
        printf '%-21s %-11s %-12s %.150s\n' "$k" "$be" "${verdict:-failed}" "$detail"
    done
done

echo
printf '%-21s %-12s' kernel expected
for be in $BACKENDS; do printf ' %-12s' "$be"; done
echo
for entry in $KERNELS; do
    k=${entry%%:*}
    want=${entry#*:}
    printf '%-21s %-12s' "$k" "$want"
    for be in $BACKENDS; do
        got=${GOT[$k.$be]:-unbuilt}
        ok=1
        case "$want:$got" in
            *:no-device) ;;
            "!correct:correct" | *:failed | *:unbuilt) ok=0 ;;
            "!correct:"*) ;;
            *) [ "$want" = "$got" ] || ok=0 ;;
        esac
        [ $ok = 1 ] || failed=1
        printf ' %-12s' "$got$([ $ok = 1 ] || echo '!')"
    done
    echo
done
ran=0
for be in $BACKENDS; do
    [ "${GOT[good_softmax.$be]:-no-device}" = no-device ] || ran=$((ran + 1))
done
if [ $ran = 0 ]; then
    echo "no backend found its device: nothing was compared"
    failed=1
elif [ $failed = 0 ]; then
    echo "every backend that ran gave every kernel its expected verdict"
else
    echo "a verdict differs from the expected one (marked !): see the lines above"
fi
exit $failed
