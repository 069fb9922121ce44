#!/usr/bin/env bash
# tests/gpu/kb-model.sh - the RECORDED MODEL: a test double for an LLM,
# for the KernelBench level-1 run on a GPU machine where no model API is
# reachable and nobody can answer prompts as they come (issue 12).
#
# It is not a model and learns nothing. Its answers are CUDA kernels
# written ahead of the run, one per problem (tests/gpu/kb-model/N_NAME.cu,
# for KernelBench level 1 problems 1, 19, 23, 26, 36, 40, 47, 88 and 95),
# each written from the problem's file as a strong kernel-writing model
# would answer its first prompt. It picks the kernel for the problem the
# prompt is about and hands it out in the answer format the gateway
# parses: "Analysis:" (the kernel's own header comment), then the source
# in one ```cuda block. The same prompt always gets the same answer, so a
# search with it tests the system (reference, compile, judge, timing,
# verdicts), not the search's ability to improve a kernel: later
# candidates repeat the first one's source and keep its verdict.
#
# Protocol (llm-gateway/kf_backend_command.c): the gateway's system text
# and the prompt arrive on standard input; standard output is the
# completion; KF_LANGUAGE names the candidate language. Wired in through
# the gateway's models file, as tests/gpu/kernelbench-l1.sh does with
# KF_MODEL=recorded:
#     command_recorded = bash /path/to/tests/gpu/kb-model.sh
#     kfctl submit PROBLEM.py --target cuda:sm_90 --model command:recorded
#
# Which problem: the prompt's "## Task: NAME" line (kfctl names a
# PyTorch problem after its file: 19_ReLU), by NAME.cu, then by the
# number before the first "_"; a name without such a number (kfctl
# submit --name) by what the reference section computes. Other prompts:
# - a tuning prompt (the same prompt with "## Tuning parameters"): the
#   same kernel; those with tuning parameters carry a kf-tune line;
# - a meta prompt (the meta-prompter's, "SEARCH/REPLACE" edits to the
#   prompt's sections): a diagnosis and no edits, which the coordinator
#   takes as "no new prompt version";
# - a language other than cuda, or a problem it holds no kernel for: a
#   plain refusal without code, which the gateway reports as no code
#   (the candidate fails without a source, as with any model that
#   refuses).
#
# Environment: KF_KB_MODEL_DIR (the kernels; default: kb-model/ beside
# this script), KF_KB_MODEL_LOG (a file: one line per answer, appended).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
kernels=${KF_KB_MODEL_DIR:-$here/kb-model}
language=${KF_LANGUAGE:-cuda}
prompt=$(cat)

note() {
    [ -n "${KF_KB_MODEL_LOG:-}" ] \
        && printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >>"$KF_KB_MODEL_LOG"
    return 0
}

# The meta-prompter's request (coordinator/kf_meta.c): no edits.
if grep -q -e 'You tune the instructions that another model follows' \
        -e 'You review the instructions another model follows' <<<"$prompt"; then
    note "meta: no edits"
    cat <<'EOF'
Diagnosis: this is the recorded model (tests/gpu/kb-model.sh), a test double whose
kernels were written before the run; it does not read the prompt's guidance, so no
change to the guidance can be judged from these outcomes. No edits.
EOF
    exit 0
fi

refuse() {
    note "refused: $1"
    printf 'Analysis: this is the recorded model (tests/gpu/kb-model.sh), a test double that\n'
    printf 'holds CUDA kernels written ahead for KernelBench level 1 problems 1, 19, 23, 26,\n'
    printf '36, 40, 47, 88 and 95; %s, so it has no answer.\n' "$1"
    exit 0
}

[ "$language" = cuda ] || refuse "this prompt asks for $language"

# The kernel for KernelBench problem number $1 (N_NAME.cu), or nothing.
kernel_of() {
    local f
    for f in "$kernels/$1"_*.cu; do
        [ -f "$f" ] && { echo "$f"; return; }
    done
}

# The problem: by the task's name, else by its reference.
name=$(sed -n 's/^## Task: //p' <<<"$prompt" | head -1)
name=${name%%[[:space:]]*}
file=
case $name in
    */* | .*) ;;
    ?*) [ -f "$kernels/$name.cu" ] && file=$kernels/$name.cu ;;
esac
numbered=
if [ -z "$file" ]; then
    number=${name%%_*}
    case $number in
        '' | *[!0-9]*) ;;
        *) numbered=1
           file=$(kernel_of "$number") ;;
    esac
fi
# A KernelBench number it holds no kernel for is another problem, however
# alike its reference reads (16_Matmul_with_transposed_A is not 1).
if [ -z "$file" ] && [ -z "$numbered" ]; then
    # The reference section only: the example and the kernels shown
    # later in a prompt mention other operations.
    reference=$(awk '/^## Reference implementation/ { on = 1; next }
                     on && /^## / { exit }
                     on' <<<"$prompt")
    # Case matters: "rms" is in "performs".
    has() { grep -q -E -e "$1" <<<"$reference"; }
    if has 'cross_entropy'; then number=95
    elif has '\btanh\b' && has '0\.044715'; then number=88
    elif has '\bgelu\b'; then number=26
    elif has '\bsoftmax\b'; then number=23
    elif has '\bLayerNorm\b'; then number=40
    elif has '\bRMS'; then number=36
    elif has '\btorch\.sum\b'; then number=47
    elif has '\brelu\b'; then number=19
    elif has '\bmatmul\b'; then number=1
    else number=
    fi
    [ -n "$number" ] && file=$(kernel_of "$number")
fi
if [ -z "$file" ] || [ ! -f "$file" ]; then
    refuse "it holds no kernel for the task '${name:-unnamed}'"
fi

# The answer: the kernel's header comment as the analysis, then the source.
tuning=
grep -q '^## Tuning parameters' <<<"$prompt" && tuning=1
note "$(basename "$file") for task '${name:-unnamed}'${tuning:+ (tuning prompt)}"
echo "Analysis: recorded answer $(basename "$file") (a kernel written ahead of the run by"
echo "the recorded model, tests/gpu/kb-model.sh, a test double for an LLM)."
if [ -n "$tuning" ]; then
    if grep -q 'kf-tune:' "$file"; then
        echo "Its tuning parameters are on its kf-tune line; the defaults are its choice."
    else
        echo "It has no tuning parameters: its sizes follow from the problem's shapes."
    fi
fi
echo
awk 'NR == 1 && !/^\/\*/ { exit }
     { last = /\*\/[[:space:]]*$/; line = $0
       sub(/[[:space:]]*\*\/[[:space:]]*$/, "", line); sub(/^\/\* ?/, "", line)
       sub(/^ \* ?/, "", line); sub(/^ \*$/, "", line)
       if (!(last && line == "")) print line
       if (last) exit }' "$file"
echo
echo '```cuda'
cat "$file"
echo '```'
