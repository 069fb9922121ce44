#!/usr/bin/env bash
# test_hidden_work.sh - the host judge's "work hidden from the clock" check
# (exec-worker/kf_runner_link.c, s_exchange; docs/evaluation.md, "Stopped
# between calls") on a loaded machine, both ways (issue 12):
#
#   an honest single-threaded kernel (tests/hostile/honest.c) is never
#   charged CPU it did not spend after answering: with stress-ng keeping
#   every core busy beside it, its verdict is "correct" and the CPU its
#   process used between its answers and its stops stays far below what
#   the check allows;
#
#   an honest two-thread kernel whose helper spins a moment between calls
#   (tests/hostile/honest_spin.c) is not charged the work it did in its
#   calls, idle and loaded;
#
#   a kernel whose threads keep working after each call has returned
#   (tests/hostile/busy_after.c) is still "incorrect", "work hidden from
#   the clock", under the same load and without it.
#
# Each evaluation runs through the exec worker standalone
# (`kf-exec-worker --eval`) against the softmax example's reference. The
# load is waited for (its workers running) before the first evaluation.
. "$(dirname "$0")/lib.sh"

EX=$ROOT/examples/tasks/softmax
H=$ROOT/tests/hostile
W=$T/w
mkdir -p "$W"
# A protocol long enough for a few dozen exchanges with the runner.
TIMING='{"min_time_s": 0.2, "min_samples": 20, "warmup_s": 0.02, "warmup_calls": 2}'

check "the softmax reference builds" build_so "$EX/reference.c" ref --reference
check "the honest candidate builds" build_so "$H/honest.c" honest
check "busy_after builds" build_so "$H/busy_after.c" busy_after
check "honest_spin builds" build_so "$H/honest_spin.c" honest_spin

# evaluate NAME TAG: one --eval of NAME, its output in $W/TAG.json.
evaluate() { eval_so "$1" "$2" 11 "$TIMING"; }
verdict() { jq -r '.result.verdict // "none"' "$W/$1.json" 2>/dev/null; }
detail() { jq -r '.result.detail // .error // ""' "$W/$1.json" 2>/dev/null; }
after_ms() { jq -r '(.result.isolation.cpu_after_calls_s // 1) * 1000' "$W/$1.json" 2>/dev/null; }

# honest TAG: correct, and far from the check's allowance (10 ms plus 5%
# of the timed calls, kf_backend_host.c): under 5 ms after its answers.
honest() {
    evaluate honest "$1"
    check "$1: the honest kernel is correct ($(verdict "$1"): $(detail "$1" | head -c 200))" \
        [ "$(verdict "$1")" = correct ]
    check "$1: its process used $(after_ms "$1") ms of CPU after its answers (under 5)" \
        awk -v ms="$(after_ms "$1")" 'BEGIN { exit !(ms < 5) }'
}
# spin TAG: the two-thread kernel whose helper spins 100 us between calls
# (tests/hostile/honest_spin.c) is correct and far from the allowance:
# what it did in its calls is never counted after them.
spin() {
    evaluate honest_spin "$1"
    check "$1: honest_spin is correct ($(verdict "$1"): $(detail "$1" | head -c 200))" \
        [ "$(verdict "$1")" = correct ]
    check "$1: its process used $(after_ms "$1") ms of CPU after its answers (under 5)" \
        awk -v ms="$(after_ms "$1")" 'BEGIN { exit !(ms < 5) }'
}
# busy TAG: held as work hidden from the clock.
busy() {
    evaluate busy_after "$1"
    check "$1: busy_after is incorrect ($(verdict "$1"))" [ "$(verdict "$1")" = incorrect ]
    check "$1: as work hidden from the clock ($(detail "$1" | head -c 200))" \
        grep -q "work hidden from the clock" <<<"$(detail "$1")"
}

busy idle-busy
for k in 1 2; do spin "idle-spin-$k"; done

# Every core kept busy, as stress-ng --cpu N does for the suite
# (tests/stress.sh), waited for until its workers run.
cpus=$(nproc)
stress-ng --cpu "$cpus" --timeout 600 --quiet >"$T/stress.log" 2>&1 &
PIDS+=($!)
stress=$!
check "stress-ng keeps $cpus core(s) busy" \
    wait_until 30 bash -c "[ \$(pgrep -c -P $stress) -ge $cpus ]"
for k in 1 2 3; do honest "loaded-honest-$k"; done
for k in 1 2; do spin "loaded-spin-$k"; done
for k in 1 2; do busy "loaded-busy-$k"; done
stop_all
finish
