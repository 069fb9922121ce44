#!/usr/bin/env bash
# test_eval_repeat.sh - `kf-exec-worker --eval JOB --repeat N`, the mode the
# evaluator's benchmark (tests/bench/eval.sh) uses to measure a candidate in
# a worker that is already up: the device probed once, as at a worker's
# start, then the same evaluate job N times through the handler, each
# printed with handler_s. On the host backend: every run a full, correct
# evaluation whose warm-up counted the correctness pass's calls, the
# handler's time covering the child's, and the misuses refused.
. "$(dirname "$0")/lib.sh"

EX=$ROOT/examples/tasks/softmax
K=$ROOT/tests/fixtures/kernels
W=$T/w
mkdir -p "$W"
cd "$W" || exit 1
build() { "$BIN/kf-compile-worker" --cache-dir off --build "$@"; }
evaluate() { "$BIN/kf-exec-worker" --eval "$@"; }
jqe() { jq -e "$@" >/dev/null; }
TIMING='{"min_time_s": 0.05, "min_samples": 3, "warmup_s": 0.02, "warmup_calls": 8}'

build "$EX/reference.c" --reference -o ref.so >ref.json 2>build.err
build "$K/good_softmax.c" -o good.so >good.json 2>>build.err
check "the example's reference and a good candidate build" jqe '.result.compiled' ref.json good.json
cat >job.json <<EOF
{"kind": "evaluate",
 "payload": {"task": "$EX/task.json", "seed": 3, "timing": $TIMING},
 "candidate": "good.json", "reference": "ref.json"}
EOF

evaluate job.json --repeat 3 >runs.json 2>runs.err
check "--repeat 3 exits 0" [ $? -eq 0 ]
check "  and prints three results" [ "$(jq -s 'length' runs.json)" = 3 ]
check "  each correct over 5 sets, timed, with a speedup" \
    jqe -s 'all(.[]; .ok and .result.verdict == "correct" and .result.correctness.sets == 5
                   and .result.speedup > 0 and .result.candidate.median_ns > 0)' runs.json
check "  each with handler_s, at least the child's wall time" \
    jqe -s 'all(.[]; (.handler_s | type) == "number" and .handler_s >= .result.wall_s)' runs.json
check "  each warm-up counted the 5 correctness calls and topped up 3 (a floor of 8)" \
    jqe -s 'all(.[]; .result.protocol.correctness_calls == 5 and .result.protocol.topup_calls == 3
                   and .result.protocol.warmup_calls == 8)' runs.json
check "  each judged against the ceilings the start-up probe measured, the same in every run" \
    jqe -s '(map(.result.bandwidth.copy_gbs) | unique | length) == 1 and .[0].result.bandwidth.copy_gbs > 0' runs.json

evaluate job.json >one.json 2>>runs.err
check "without --repeat: one result, no handler_s" \
    jqe -s 'length == 1 and (.[0] | has("handler_s") | not) and .[0].result.verdict == "correct"' one.json

for bad in 0 -1 x 1001; do
    evaluate job.json --repeat "$bad" >/dev/null 2>bad.err
    check "--repeat $bad exits 2 naming the range" \
        bash -c "[ $? -eq 2 ] && grep -q 'a number of runs from 1 to 1000' bad.err"
done
"$BIN/kf-exec-worker" --repeat 2 >/dev/null 2>noeval.err
check "--repeat without --eval exits 2" bash -c "[ $? -eq 2 ] && grep -q 'is for --eval only' noeval.err"
cat >ref.job.json <<EOF
{"kind": "reference", "payload": {"source_file": "$ROOT/examples/pytorch/softmax.py", "seed": 1}}
EOF
evaluate ref.job.json --repeat 2 >/dev/null 2>kind.err
check "--repeat of a reference job exits 2" \
    bash -c "[ $? -eq 2 ] && grep -q 'is for evaluate jobs, not reference' kind.err"

# The candidate's page faults over its timed calls, counted by the judge
# from /proc (round 10: fresh scratch memory in every call cost a kernel
# half its time, and no figure said so).
check "the good candidate's page faults per timed call are counted, near none" \
    jqe '.result.candidate.minor_faults_per_call < 16' one.json
build "$K/fresh_scratch_softmax.c" -o fresh.so >fresh.json 2>>build.err
sed 's/"good.json"/"fresh.json"/' job.json >fresh.job.json
evaluate fresh.job.json >fresh.out.json 2>>runs.err
check "a candidate that maps 40 MiB afresh in every call: over 256 faults a call" \
    jqe '.result.verdict == "correct" and .result.candidate.minor_faults_per_call > 256' \
    fresh.out.json
# The same through ctx->scratch_alloc: blocks of 1, 8 and 40 MiB each
# call, every page written. The runner's arena (exec-worker/kf_scratch.h)
# hands them back resident after the warm-up; under malloc the 40 MiB
# block was mapped anew in every call (15685 faults a call here).
build "$K/scratch_blocks_softmax.c" -o blocks.so >blocks.json 2>>build.err
sed 's/"good.json"/"blocks.json"/' job.json >blocks.job.json
evaluate blocks.job.json >blocks.out.json 2>>runs.err
check "a candidate that takes 1, 8 and 40 MiB of scratch each call: under 16 faults a call" \
    jqe '.result.verdict == "correct" and .result.candidate.minor_faults_per_call < 16' \
    blocks.out.json

# --measure-host: the figures once, kept in the file named, read back by
# the next call (what tests/run.sh does before its tests start).
"$BIN/kf-exec-worker" --measure-host --host-figures "$W/figures.json" >m1.json 2>m.err
"$BIN/kf-exec-worker" --measure-host --host-figures "$W/figures.json" >m2.json 2>>m.err
say "--measure-host: $(jq -r .source m1.json), then $(jq -r .source m2.json)"
check "--measure-host prints the figures with their source" \
    jqe '.copy_stream_one_core_gbs > 0 and .clock_mhz_measured > 0 and (.source | type) == "string"' \
    m1.json
check "  and a second call reads them back where the first kept them" \
    bash -c "[ ! -s '$W/figures.json' ] || jq -e '.source | startswith(\"file\")' m2.json >/dev/null"
check "--measure-host with another backend is refused (exit 2), saying why" \
    bash -c "'$BIN/kf-exec-worker' --measure-host --backend opencl >/dev/null 2>mb.err; [ \$? -eq 2 ] \
             && grep -q 'host backend' mb.err"
check "--measure-host with --eval is refused (exit 2)" \
    bash -c "'$BIN/kf-exec-worker' --measure-host --eval job.json >/dev/null 2>&1; [ \$? -eq 2 ]"

check "no sanitizer report from the workers" \
    bash -c "! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' '$W'/*.err"
cd "$ROOT" || exit 1
finish
