#!/usr/bin/env bash
# test_eval_threads.sh - a kernel's threads run side by side under the
# host judge (docs/evaluation.md, "Threads"):
#
#   the runner's load and calls may use every CPU it has: the judge
#   narrows the runner's main thread to the judge's own CPU while it waits
#   for a message (kf_runner_link.c, s_start_here), and the runner widens
#   it again as it takes each one (kf_runner.c, kf_runner_recv). The
#   fixture refuses to run when the thread that loaded it or the one that
#   calls it had fewer than two CPUs on a host of two or more, so both
#   kernels below are "correct" only when load and calls get them back;
#
#   on a quiet host of two or more CPUs, the GELU split over two threads
#   started in each call (tests/fixtures/kernels/gelu_threads.c) times
#   at most 0.65 of the same kernel on one thread (the least medians of
#   three pairs; about 0.53 here). Round 12 found 15-21 ms against 21.5 ms
#   (0.72-0.98; a plain program: 10.7 against 21.3 ms):
#   the scheduler kept the started thread beside its creator, since the
#   judge's own work made its CPU look busy. Beside other work two
#   threads cannot halve a time, so the ratio is checked only when the
#   judge saw no other runnable task in either timing, and says so.
#
#   a kernel whose threads ran side by side is timed again with its
#   process held to one CPU (kf_host_time_one_core, the result's
#   "one_core"): the checking copy refuses there (its calling thread has
#   one CPU: the hold reaches the calls), the copy that does not check
#   records its one-core median, above its median on every CPU where
#   the threads ran side by side (1.2 CPU seconds a second of calls or
#   more).
#
# Each evaluation runs through the exec worker standalone (`kf-exec-worker
# --eval`) against the GELU example's reference, with the default timing
# protocol.
. "$(dirname "$0")/lib.sh"

EX=$ROOT/examples/tasks/gelu
W=$T/w
mkdir -p "$W"
sed 's/^#define NTHREADS 2$/#define NTHREADS 1/' "$ROOT/tests/fixtures/kernels/gelu_threads.c" \
    >"$W/gelu_one.c"
check "the one-thread copy has NTHREADS 1" grep -q '^#define NTHREADS 1$' "$W/gelu_one.c"
sed 's/^#define CHECK_CPUS 1$/#define CHECK_CPUS 0/' "$ROOT/tests/fixtures/kernels/gelu_threads.c" \
    >"$W/gelu_free.c"
check "the copy that leaves CPUs unchecked has CHECK_CPUS 0" grep -q '^#define CHECK_CPUS 0$' \
    "$W/gelu_free.c"

check "the GELU reference builds" build_so "$EX/reference.c" ref --reference
check "the two-thread kernel builds" build_so "$ROOT/tests/fixtures/kernels/gelu_threads.c" two
check "the one-thread kernel builds" build_so "$W/gelu_one.c" one
check "the unchecking two-thread kernel builds" build_so "$W/gelu_free.c" free

evaluate() { eval_so "$1" "$2" 5; }   # evaluate NAME TAG: one --eval of NAME
field() { jq -r "$2 // \"none\"" "$W/$1.json" 2>/dev/null; }

quiet=0
least_one=
least_two=
for k in 1 2 3; do
    evaluate one "one-$k"
    evaluate two "two-$k"
    for side in one two; do
        check "$side-$k: correct ($(field "$side-$k" .result.verdict): $(field "$side-$k" .result.detail | head -c 160))" \
            [ "$(field "$side-$k" .result.verdict)" = correct ]
    done
    m1=$(field "one-$k" .result.candidate.median_ns)
    m2=$(field "two-$k" .result.candidate.median_ns)
    o1=$(field "one-$k" .result.host_load.runnable_others_max)
    o2=$(field "two-$k" .result.host_load.runnable_others_max)
    say "pair $k: one thread $(awk -v n="$m1" 'BEGIN { printf "%.2f", n / 1e6 }') ms," \
        "two threads $(awk -v n="$m2" 'BEGIN { printf "%.2f", n / 1e6 }') ms;" \
        "other runnable tasks seen (most): $o1 and $o2"
    if [ "$o1" = 0 ] && [ "$o2" = 0 ]; then
        quiet=$((quiet + 1))
        least_one=$(awk -v a="$m1" -v b="${least_one:-$m1}" 'BEGIN { print (a < b ? a : b) }')
        least_two=$(awk -v a="$m2" -v b="${least_two:-$m2}" 'BEGIN { print (a < b ? a : b) }')
    fi
done

# The one-core figure (one more evaluation; the others' one-core tries
# end at the checking copy's first refusal).
evaluate free free
check "free: correct ($(field free .result.verdict): $(field free .result.detail | head -c 160))" \
    [ "$(field free .result.verdict)" = correct ]
if [ "$(nproc)" -ge 2 ]; then
    tried=$(field two-1 '.result.one_core.why_not')
    check "two-1: it starts threads, so it was timed on one CPU, and the hold reached its calls ($tried)" \
        grep -q 'may use 1 of' <<<"$tried"
fi
share=$(field free .result.one_core.cpu_per_wall)
m_all=$(field free .result.candidate.median_ns)
m_one=$(field free .result.one_core.median_ns)
if [ "$(nproc)" -lt 2 ]; then
    say "one core: not checked, this host lends $(nproc) CPU"
else
    say "one core: $(awk -v n="$m_one" 'BEGIN { printf "%.2f", n / 1e6 }') ms against" \
        "$(awk -v n="$m_all" 'BEGIN { printf "%.2f", n / 1e6 }') ms on every CPU" \
        "(CPU seconds a second of calls: $share; $(field free .result.one_core.why_not))"
    check "free: it starts threads, so its one-core median is recorded" \
        awk -v a="$m_one" 'BEGIN { exit !(a != "none" && a > 0) }'
    # Above the full figure only where its threads split the work side by
    # side (1.2 CPU seconds a second of calls or more): on a busy host
    # they take turns, and one CPU costs them little.
    if awk -v s="$share" 'BEGIN { exit !(s != "none" && s >= 1.2) }'; then
        check "free: its threads ran side by side ($share), so one CPU takes longer" \
            awk -v a="$m_one" -v b="$m_all" 'BEGIN { exit !(a > b) }'
    else
        say "one core against every CPU: not checked, its threads did not run side by side" \
            "($share CPU seconds a second of calls)"
    fi
fi

cpus=$(nproc)
if [ "$cpus" -lt 2 ]; then
    say "not checked: this host lends $cpus CPU, and two threads need two"
elif [ "$quiet" -eq 0 ]; then
    say "not checked: every pair was timed beside other runnable tasks"
else
    ratio=$(awk -v a="$least_two" -v b="$least_one" 'BEGIN { printf "%.3f", a / b }')
    check "on a quiet host two threads take at most 0.65 of one thread's time (the least of $quiet quiet pairs' medians: $ratio)" \
        awk -v r="$ratio" 'BEGIN { exit !(r <= 0.65) }'
fi
finish
