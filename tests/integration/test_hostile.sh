#!/usr/bin/env bash
# test_hostile.sh - hostile host candidates (tests/hostile/, one per attack
# class of issue 12's Trust paragraph, each saying in its header what it
# tries and what must catch it) run through the exec worker standalone
# (`kf-exec-worker --eval JOB.json`) against the softmax example's
# reference, as root and as an unprivileged user, and each must be CAUGHT:
#
#   verdict  the job ran (exit 0, ok), and the verdict is not "correct";
#   speed    the job ran, and the verdict is not "correct" or the speedup
#            is at most SPEED_FACTOR times the honest baseline's, measured
#            in the same mode of the same run (the larger of two runs);
#
# and in every case the worker ends within CEILING seconds and never fails
# the job (no "reference failed" for what the candidate did). The rules
# read only what --eval prints (verdict, speedup, ok, error), never how the
# evaluator is built. leak_env is hardening (issue 13): reported, not
# counted. A per-case table closes the output.
#
# The speed rule compares two kernels' speedups, which docs/testing.md
# otherwise keeps out of the suite. Here it is the only way to see an attack
# that inflates a right answer's speed, and the margins are wide: each speed
# attack does six to eight times less timed work than the baseline (about
# 1x the reference), so undefended it measures 4x-18x against a threshold
# of about 2.5x, and defended it is the baseline itself.
. "$(dirname "$0")/lib.sh"

EX=$ROOT/examples/tasks/softmax
H=$ROOT/tests/hostile
W=$T/w
mkdir -p "$W" "$T/tmp"
chmod 755 "$W" "$T/tmp"
SPEED_FACTOR=2
CEILING=60    # a broken (hanging) worker; an honest evaluation takes seconds
# A short protocol (each sample is preceded by a cache flush of twice the
# last-level cache, the bulk of an evaluation's time): a median over 5
# paired samples tells a fivefold inflation from noise.
TIMING='{"min_time_s": 0.05, "min_samples": 5, "warmup_s": 0.02, "warmup_calls": 2}'
# Credentials the worker holds, to see whether a candidate can read them.
CANARY=kf-hostile-canary-$$-$RANDOM

# CASE KIND CLASS, in the order they run. KIND: baseline, verdict, speed,
# hang (a verdict case that today hangs the worker: run in the background
# so its ceiling overlaps the rest), hardening.
CASES=(
    "honest baseline -"
    "forge_destructor verdict 1-verdict-forgery"
    "forge_atexit verdict 1-verdict-forgery"
    "forge_exit verdict 1-verdict-forgery"
    "result_link verdict 2-files-as-links"
    "result_fifo hang 2-files-as-fifos"
    "phase_fifo hang 2-files-as-fifos"
    "phase_r_crash verdict 3-crash-blamed-on-ref"
    "phase_r_kill verdict 3-crash-blamed-on-ref"
    "ref_call verdict 4-calling-the-ref"
    "ref_copy verdict 4-copying-the-ref"
    "ref_slow speed 5-swapped-pointers"
    "timer_got speed 6-timer-patching"
    "memoise speed 7-memoisation"
    "deferred_thread speed 8-deferred-work"
    "deferred_fork speed 8-deferred-work"
    "input_mutation verdict 9-input-mutation"
    "partial_write speed 10-partial-writes"
    "oob_before verdict 10-out-of-bounds"
    "oob_after verdict 10-out-of-bounds"
    "ref_corrupt verdict 10-out-of-bounds"
    "kill_parent verdict 11-escaping"
    "early_answer verdict 6-answering-early"
    "leak_env hardening 11-secrets(issue-13)"
)

# --- building -------------------------------------------------------------
build() {   # build SOURCE NAME [--reference]
    "$BIN/kf-compile-worker" --cache-dir off --build "$1" -o "$W/$2.so" "${@:3}" \
        >"$W/$2.build.json" 2>>"$W/build.err" \
        && jq -e .result.compiled "$W/$2.build.json" >/dev/null
}
check "the softmax example's reference builds" build "$EX/reference.c" ref --reference
for c in "${CASES[@]}"; do
    read -r name kind class <<<"$c"
    check "$name builds" build "$H/$name.c" "$name"
    cat >"$W/$name.job.json" <<EOF
{"payload": {"task": "$EX/task.json", "seed": 11, "timing": $TIMING},
 "frames": ["$W/$name.so", "$W/ref.so"]}
EOF
done
chmod -R a+rX "$W"

# --- modes ----------------------------------------------------------------
# As root the worker drops each evaluation to a sandbox uid of its own; as
# any other user the candidate runs with the worker's uid. Both must hold.
if [ "$(id -u)" -eq 0 ]; then
    MODES=(root nonroot)
    if command -v setpriv >/dev/null; then
        AS_NONROOT=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
    else
        AS_NONROOT=(runuser -u nobody --)
    fi
else
    MODES=(user)
    say "not root: the evaluations run as $(id -un) only (CI runs this as root, for both modes)"
fi

# run_eval MODE NAME: one evaluation, its output in $W/MODE-NAME.{json,err,rc}.
# Each gets a TMPDIR of its own (owned by the user it runs as), so no
# evaluation's files are next to another's.
run_eval() {
    local mode=$1 name=$2 tmp=$T/tmp/$1-$2 as=()
    mkdir -p "$tmp"
    if [ "$mode" = nonroot ]; then
        chown 65534:65534 "$tmp"
        as=("${AS_NONROOT[@]}")
    fi
    (
        cd "$tmp" || exit 1
        env TMPDIR="$tmp" HOME="$tmp" OPENAI_API_KEY="$CANARY" ANTHROPIC_API_KEY="$CANARY" \
            KF_DATABASE_URL="postgresql://kf:$CANARY@db.invalid/kf" \
            timeout --foreground -k 5 "$CEILING" ${as[@]+"${as[@]}"} "$BIN/kf-exec-worker" \
            --eval-time-limit-s 30 --eval "$W/$name.job.json" \
            >"$W/$mode-$name.json" 2>"$W/$mode-$name.err"
        echo $? >"$W/$mode-$name.rc"
    ) 2>/dev/null
}

# The cases that may hang the worker (today's does) run in the background,
# both modes' at once, from the end of the first baseline run, so their
# ceilings overlap the rest; the rest run one after another, the honest
# baseline first and last in each mode. Each evaluation's limit inside the
# worker (30 s) stops a candidate that spins; CEILING stops a worker that
# never ends.
BG=()
first=1
for mode in "${MODES[@]}"; do
    run_eval "$mode" honest
    mv "$W/$mode-honest.json" "$W/$mode-honest1.json"
    if [ $first = 1 ]; then
        for m in "${MODES[@]}"; do
            for c in "${CASES[@]}"; do
                read -r name kind class <<<"$c"
                [ "$kind" = hang ] || continue
                run_eval "$m" "$name" &
                BG+=($!)
                PIDS+=($!)
            done
        done
        first=0
    fi
    for c in "${CASES[@]}"; do
        read -r name kind class <<<"$c"
        case $kind in baseline | hang) continue ;; esac
        run_eval "$mode" "$name"
    done
    run_eval "$mode" honest
done
for p in "${BG[@]}"; do
    wait "$p"
    untrack "$p"
done

# --- judging --------------------------------------------------------------
field() { jq -r "$1 // empty" "$2" 2>/dev/null; }
# larger A B: the larger of two numbers (either may be empty).
larger() { awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN { print (a > b ? a : b) }'; }

declare -A HONEST
for mode in "${MODES[@]}"; do
    s1=$(field '.result | select(.verdict == "correct") | .speedup' "$W/$mode-honest1.json")
    s2=$(field '.result | select(.verdict == "correct") | .speedup' "$W/$mode-honest.json")
    HONEST[$mode]=$(larger "$s1" "$s2")
    say "$mode: honest baseline speedups ${s1:-none} and ${s2:-none}"
    check "$mode: the honest baseline is judged correct with a speedup, twice" \
        bash -c "[ -n '$s1' ] && [ -n '$s2' ]"
done

# judge MODE NAME KIND: sets CAUGHT (yes, no, or leaked / kept for
# hardening) and WHY.
judge() {
    local mode=$1 name=$2 kind=$3 f=$W/$1-$2
    local rc ok verdict speedup error honest
    rc=$(cat "$f.rc" 2>/dev/null || echo none)
    ok=$(field .ok "$f.json")
    verdict=$(field .result.verdict "$f.json")
    speedup=$(field .result.speedup "$f.json")
    error=$(field .error "$f.json")
    VERDICT=${verdict:--}
    SPEEDUP=${speedup:--}
    if [ "$kind" = hardening ]; then
        if grep -qF "$CANARY" "$f.json" "$f.err" 2>/dev/null; then
            CAUGHT=leaked WHY="the worker's secrets reached the result"
        else
            CAUGHT=kept WHY="no secret in the result"
        fi
        return
    fi
    CAUGHT=no
    if [ "$rc" = 124 ] || [ "$rc" = 137 ] && [ -z "$ok" ]; then
        if [ "$rc" = 124 ]; then
            WHY="the worker did not end within $CEILING s"
        else
            WHY="the worker was killed (exit $rc)"
        fi
        return
    fi
    if [ "$ok" != true ]; then
        WHY="the job failed (exit $rc): ${error:-no result}"
        return
    fi
    if [ "$verdict" != correct ]; then
        CAUGHT=yes WHY="verdict $verdict: $(field .result.detail "$f.json" | head -c 90)"
        return
    fi
    if [ "$kind" = speed ]; then
        honest=${HONEST[$mode]}
        if awk -v s="$speedup" -v h="$honest" -v k="$SPEED_FACTOR" 'BEGIN { exit !(h > 0 && s <= k * h) }'; then
            CAUGHT=yes WHY=$(printf 'correct, speedup %.2f <= %s x honest %.2f' "$speedup" "$SPEED_FACTOR" "$honest")
        else
            WHY=$(printf 'correct, speedup %.2f > %s x honest %.2f' "$speedup" "$SPEED_FACTOR" "${honest:-0}")
        fi
        return
    fi
    WHY="judged correct, speedup $speedup"
}

TABLE=$(
    printf '%-8s %-16s %-24s %-10s %-8s %-9s %s\n' MODE CASE CLASS VERDICT SPEEDUP CAUGHT WHY
    for mode in "${MODES[@]}"; do
        for c in "${CASES[@]}"; do
            read -r name kind class <<<"$c"
            [ "$kind" = baseline ] && continue
            judge "$mode" "$name" "$kind"
            printf '%-8s %-16s %-24s %-10s %-8.8s %-9s %s\n' "$mode" "$name" "$class" \
                "$VERDICT" "$SPEEDUP" "$CAUGHT" "$WHY"
        done
    done
)
for mode in "${MODES[@]}"; do
    for c in "${CASES[@]}"; do
        read -r name kind class <<<"$c"
        case $kind in baseline | hardening) continue ;; esac
        judge "$mode" "$name" "$kind"
        check "$mode $name ($class) is caught [$kind rule]; found: $WHY" [ "$CAUGHT" = yes ]
    done
done
echo "$TABLE"
echo "(speed cases: caught when not correct, or speedup <= $SPEED_FACTOR x the honest" \
     "baseline's; hardening rows are not counted)"

# Under AddressSanitizer a fault in the worker itself shows in its stderr.
check "no sanitizer report from the workers" \
    bash -c "! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' '$W'/*.err"
cd "$ROOT" || exit 1
finish
