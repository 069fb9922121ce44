#!/usr/bin/env bash
# test_timing_wait.sh - the host judge's figures come from the samples in
# which neither side waited for a CPU (exec-worker/kf_host_wait.c,
# kf_eval_protocol.c; round 25 of the model in the loop: one kernel timed
# 5.6 ms in one evaluation and 13.4 ms in another while other processes
# shared the 2 CPUs, and one-idea comparisons measured the load):
#
#   a hog held to the CPU the judge and the candidate's process are held
#   to runs in bursts (1 ms busy then 20-40 ms asleep, at random, in odd
#   repeats; 3 ms busy then mostly 1-3 ms asleep in even ones: the load
#   changes between evaluations), so some samples wait for it and some
#   do not. With the preference on
#   (the default), every evaluation marks disturbed samples, and where
#   its figures are over undisturbed pairs only (protocol.undisturbed_only)
#   the candidate's sample count is the pairs taken less the disturbed
#   ones; with it off (the job's timing.prefer_undisturbed false) the same samples are
#   marked and every one counts. Over REPEATS evaluations of each,
#   interleaved, the reported candidate medians spread less (max / min)
#   with the preference on than off (a check on a quiet host, KF_QUIET=1;
#   beside the suite's other work it is printed).
#
# Other work on this machine (other tests, other people) only adds waits:
# its samples are marked like the hog's. The spread is compared only when
# every evaluation with the preference on found enough clean pairs, and
# the test says when it did not.
#
# Each evaluation runs through the exec worker standalone (`kf-exec-worker
# --eval`): the row-sum example's reference judged against itself (a
# call of about 0.1 ms, so a sample is short and some fit between the
# waits on a busy host; the softmax's 5-7 ms calls found 10 clean pairs
# in 1 of 4 evaluations here, beside other helpers' builds).
. "$(dirname "$0")/lib.sh"

EX=$ROOT/examples/tasks/row_sum
W=$T/w
mkdir -p "$W"
REPEATS=${KF_WAIT_REPEATS:-4}
timing='"min_time_s": 1.0, "min_samples": 10, "warmup_s": 0.02, "warmup_calls": 2'

check "the row-sum reference builds" build_so "$EX/reference.c" ref --reference
check "the row-sum reference builds as a candidate" build_so "$EX/reference.c" cand

cpu=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
# The judge (and so the candidate's process, forked from it) runs at a
# real-time priority where that is allowed, and the hog at a higher one:
# the hog is then what they wait for, at once when it wakes, and the rest
# of the machine is not (other helpers' builds kept this host near 100%
# busy, and at plain priority, or nice -10, no sample of 4 ms was ever
# clean). Linux keeps 5% of each second for other work, which marks a
# few samples as well. Where real-time priorities are not allowed, both
# run as given and the spread is compared only if the samples allow.
JUDGE=
HOG=
if chrt -f 10 true 2>/dev/null; then JUDGE="chrt -f 10"; HOG="chrt -f 20"; fi
say "priority: judge ${JUDGE:-as given}, hog ${HOG:-as given}"

# start_hog TAG BUSY_MS LO_MS HI_MS [LONG_SHARE LONG_MS]: a hog on $cpu,
# BUSY_MS busy, then asleep for LONG_MS in LONG_SHARE of its turns and for
# a random LO_MS to HI_MS in the others, until killed; its pid in $hog.
start_hog() {
    $HOG python3 - "$cpu" "$2" "$3" "$4" "${5:-0}" "${6:-0}" >"$T/hog-$1.log" 2>&1 <<'PY' &
import os, random, sys, time
cpu = int(sys.argv[1])
busy, lo, hi, share, long = [float(a) for a in sys.argv[2:]]
os.sched_setaffinity(0, {cpu})
rng = random.Random(25)
print("hog on CPU", cpu, flush=True)
while True:
    t = time.perf_counter()
    while time.perf_counter() - t < busy / 1e3:
        pass
    time.sleep((long if rng.random() < share else rng.uniform(lo, hi)) / 1e3)
PY
    hog=$!
    PIDS+=($hog)
    wait_until 30 grep -q "hog on CPU" "$T/hog-$1.log"
}

# job TAG PREFER: one --eval of cand.so held to $cpu with
# timing.prefer_undisturbed PREFER (true, false), its output in $W/TAG.json.
job() {
    cat >"$W/$1.job.json" <<JSON
{"payload": {"task": "$EX/task.json", "seed": 7, "timing": {$timing, "prefer_undisturbed": $2}},
 "frames": ["$W/cand.so", "$W/ref.so"]}
JSON
    mkdir -p "$T/tmp-$1"
    (cd "$T/tmp-$1" && TMPDIR=$T/tmp-$1 HOME=$T/tmp-$1 \
        timeout -k 5 120 $JUDGE taskset -c "$cpu" "$BIN/kf-exec-worker" --eval-time-limit-s 60 \
        --eval "$W/$1.job.json" >"$W/$1.json" 2>"$W/$1.err")
}
r() {
    local v
    v=$(jq -r "if .result$2 == null then \"none\" else .result$2 end" "$W/$1.json" \
        2>/dev/null) || v=none
    echo "${v:-none}"
}

all_clean=1
for k in $(seq 1 "$REPEATS"); do
    # The load changes between evaluations, as it did in round 25: odd
    # repeats a light hog (1 ms busy, 20-40 ms asleep: about a sample in
    # six hit), even ones a heavy one (3 ms busy, 1-3 ms asleep, 40 ms in
    # one turn of 20: about half the samples hit, and some pairs fit the
    # long sleeps).
    if [ $((k % 2)) = 1 ]; then start_hog "$k" 1 20 40; else start_hog "$k" 3 1 3 0.05 40; fi
    check "repeat $k: the hog runs on CPU $cpu" kill -0 "$hog"
    job "on-$k" true
    job "off-$k" false
    kill "$hog"
    wait "$hog" 2>/dev/null
    for s in on off; do
        tag=$s-$k
        check "$tag: correct ($(r "$tag" .verdict): $(r "$tag" .detail | head -c 160))" \
            [ "$(r "$tag" .verdict)" = correct ]
        say "$tag: median $(awk -v n="$(r "$tag" .candidate.median_ns)" 'BEGIN { printf "%.1f", n / 1e3 }') us," \
            "speedup $(r "$tag" .speedup), pairs $(r "$tag" .protocol.samples)," \
            "disturbed $(r "$tag" .protocol.samples_disturbed)," \
            "used $(r "$tag" .candidate.samples), run_delay_share $(r "$tag" .protocol.run_delay_share)," \
            "undisturbed_only $(r "$tag" .protocol.undisturbed_only)," \
            "host_load.undisturbed_only $(r "$tag" .host_load.undisturbed_only)"
        check "$tag: the hog made some samples wait" \
            [ "$(r "$tag" .protocol.samples_disturbed)" -ge 1 ]
        check "$tag: host_load says what protocol says" \
            [ "$(r "$tag" .host_load.undisturbed_only)" = "$(r "$tag" .protocol.undisturbed_only)" ]
    done
    if [ "$(r "on-$k" .protocol.undisturbed_only)" = true ]; then
        check "on-$k: the figures are over the undisturbed pairs, at least 10" \
            [ "$(r "on-$k" .candidate.samples)" -eq \
              $(($(r "on-$k" .protocol.samples) - $(r "on-$k" .protocol.samples_disturbed))) ] \
            && [ "$(r "on-$k" .candidate.samples)" -ge 10 ]
    else
        all_clean=0
        check "on-$k: too few clean pairs: every pair counted" \
            [ "$(r "on-$k" .candidate.samples)" -eq "$(r "on-$k" .protocol.samples)" ]
    fi
    check "off-$k: with the preference off every pair counts" \
        [ "$(r "off-$k" .candidate.samples)" -eq "$(r "off-$k" .protocol.samples)" ] \
        && [ "$(r "off-$k" .protocol.undisturbed_only)" = false ]
done

# spread SIDE: the largest over the least of the candidate medians.
spread() {
    for k in $(seq 1 "$REPEATS"); do r "$1-$k" .candidate.median_ns; done \
        | awk 'NR == 1 || $1 < lo { lo = $1 } NR == 1 || $1 > hi { hi = $1 }
               END { printf "%.3f", (lo > 0 ? hi / lo : 0) }'
}
on=$(spread on)
off=$(spread off)
say "spread of the candidate medians over $REPEATS evaluations: $on with the preference on," \
    "$off with it off"
# The spreads of 4 medians each can come out the wrong way by chance (a
# milder hog once gave 1.075 against 1.078): compared as a check only on
# a quiet host (KF_QUIET=1, docs/testing.md), said otherwise.
if [ "$all_clean" = 1 ] && [ "${KF_QUIET:-0}" = 1 ]; then
    check "the medians spread less with the preference on ($on) than off ($off)" \
        awk -v a="$on" -v b="$off" 'BEGIN { exit !(a < b) }'
elif [ "$all_clean" = 1 ]; then
    say "spread compared only with KF_QUIET=1 (other work beside the suite can turn it)"
else
    say "not every evaluation with the preference on found 10 clean pairs: spread not compared"
fi
finish
