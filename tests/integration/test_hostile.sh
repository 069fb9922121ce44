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
# The sandbox cases (sandbox_*.c, issue 13 items 1 and 3) attack the host
# rather than the verdict: they run where an unconfined candidate's code
# runs (in the evaluation child, as CUDA and Level Zero candidates do), so
# they are loaded as the job's reference, and each is judged by what the
# test sees from outside, never by what the case says:
#
#   sandbox  the CURVE key file (KF_CURVE_CERT), another job's folder and a
#            database URL on another process's command line appear in no
#            output; the test's TCP and path-bound Unix listeners hear no
#            hello; no kfh-survivor process runs once the job has ended and
#            a later honest job beside it is still correct; nothing the run
#            wrote to /tmp or /dev/shm is left on the host, and the run's
#            /tmp and /dev/shm stopped it short of 64 MiB.
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
    "sandbox_curve_key sandbox 13.1-curve-key"
    "sandbox_other_job sandbox 13.1-other-job"
    "sandbox_tcp sandbox 13.1-network"
    "sandbox_unix sandbox 13.3-unix-socket"
    "sandbox_cmdline sandbox 13.3-proc-cmdline"
    "sandbox_survivor sandbox 13.1-survivor"
    "sandbox_fill sandbox 13.3-fill-tmp"
    "sandbox_leftover sandbox 13.3-tmp-leftover"
)
# KF_HOSTILE_CASES=REGEX runs only the cases whose name matches (and the
# honest baseline): a quicker look at one class.
if [ -n "${KF_HOSTILE_CASES:-}" ]; then
    kept=()
    for c in "${CASES[@]}"; do
        read -r name _ <<<"$c"
        [[ $name == honest || $name =~ $KF_HOSTILE_CASES ]] && kept+=("$c")
    done
    CASES=("${kept[@]}")
fi
# The sandbox cases' canaries: a key, another job's source, a database URL.
KEY_CANARY=kf-key-canary-$$-$RANDOM
JOB_CANARY=kf-job-canary-$$-$RANDOM
DB_CANARY=kf-db-canary-$$-$RANDOM

# --- building -------------------------------------------------------------
check "the softmax example's reference builds" build_so "$EX/reference.c" ref --reference
for c in "${CASES[@]}"; do
    read -r name kind class <<<"$c"
    if [ "$kind" = sandbox ]; then
        cat "$H/sandbox_attack.h" "$H/$name.c" >"$W/$name.c"
        check "$name builds" build_so "$W/$name.c" "$name" --reference
        continue     # its job names the mode: written with the mode's runs
    fi
    check "$name builds" build_so "$H/$name.c" "$name"
    cat >"$W/$name.job.json" <<EOF
{"payload": {"task": "$EX/task.json", "seed": 11, "timing": $TIMING},
 "frames": ["$W/$name.so", "$W/ref.so"]}
EOF
done
chmod -R a+rX "$W"

# --- what the sandbox cases reach for ---------------------------------------
# The worker's CURVE key (its owner: the user each mode's worker runs as);
# a listener on TCP and on a Unix socket bound to a path, anyone may
# connect to it (as PostgreSQL's), whose command line carries a database
# URL (as a coordinator's may). It writes down every hello it hears.
mkdir -p "$T/keys" "$T/sock"
chmod 755 "$T/keys" "$T/sock"
echo "public-key = \"kf-public\"" >"$T/keys/worker.key"
printf 'curve\n    secret-key = "%s"\n' "$KEY_CANARY" >"$T/keys/worker.key_secret"
chmod 644 "$T/keys/worker.key"
chmod 600 "$T/keys/worker.key_secret"
python3 - "$T/port" "$T/sock/kf.sock" "$T/heard.log" \
    "postgresql://kf:$DB_CANARY@db.invalid/kf" >"$T/listener.log" 2>&1 <<'PY' &
import os, socket, sys, threading
port_file, unix_path, log = sys.argv[1:4]
def serve(s):
    while True:
        c, _ = s.accept()
        data = c.recv(256).decode(errors="replace").strip()
        with open(log, "a") as f:
            f.write(data + "\n")
        c.close()
t = socket.socket()
t.bind(("127.0.0.1", 0))
t.listen(16)
u = socket.socket(socket.AF_UNIX)
u.bind(unix_path)
os.chmod(unix_path, 0o777)
u.listen(16)
threading.Thread(target=serve, args=(u,), daemon=True).start()
with open(port_file + ".tmp", "w") as f:
    f.write(str(t.getsockname()[1]))
os.rename(port_file + ".tmp", port_file)
serve(t)
PY
PIDS+=($!)
touch "$T/heard.log"
chmod 666 "$T/heard.log"
for _ in $(seq 600); do [ -s "$T/port" ] && break; sleep 0.05; done
check "the listeners are up" test -s "$T/port"
PORT=$(cat "$T/port" 2>/dev/null || echo 0)

# sandbox_job MODE NAME: the job of a sandbox case (the honest candidate,
# the case as the reference, what it reaches for in the payload).
sandbox_job() {
    cat >"$W/$1-$2.job.json" <<EOF
{"payload": {"task": "$EX/task.json", "seed": 11, "timing": $TIMING,
             "kfh_key": "$T/keys/worker.key_secret", "kfh_tcp": "127.0.0.1:$PORT",
             "kfh_unix": "$T/sock/kf.sock", "kfh_mode": "$1"},
 "frames": ["$W/honest.so", "$W/$2.so"]}
EOF
    chmod a+r "$W/$1-$2.job.json"
}

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

# run_eval MODE NAME [JOB [TMP]]: one evaluation, its output in
# $W/MODE-NAME.{json,err,rc}. Each gets a TMPDIR of its own (owned by the
# user it runs as), so no evaluation's files are next to another's; a
# sandbox case's has another job's folder in it (kf-victim, as the worker
# makes them: 0700, the worker's). JOB: another case's job file; TMP:
# another run's TMPDIR (a later job beside a survivor).
run_eval() {
    local mode=$1 name=$2 tmp=$T/tmp/$1-${4:-$2} as=() job=$W/${3:-$2}.job.json
    mkdir -p "$tmp"
    case $name in
        sandbox_*)
            job=$W/$mode-$name.job.json
            mkdir -p "$tmp/kf-victim"
            echo "int victim; /* $JOB_CANARY */" >"$tmp/kf-victim/candidate.c"
            chmod 700 "$tmp/kf-victim"
            ;;
    esac
    if [ "$mode" = nonroot ]; then
        chown -R 65534:65534 "$tmp" "$T/cache-$mode"
        as=("${AS_NONROOT[@]}")
    fi
    (
        cd "$tmp" || exit 1
        env TMPDIR="$tmp" HOME="$tmp" XDG_CACHE_HOME="$T/cache-$mode" \
            KF_HOST_FIGURES="$T/cache-$mode/host-figures.json" \
            OPENAI_API_KEY="$CANARY" ANTHROPIC_API_KEY="$CANARY" \
            KF_DATABASE_URL="postgresql://kf:$CANARY@db.invalid/kf" \
            KF_CURVE_CERT="$T/keys/worker.key" KF_SANDBOX_TMP_MB=16 KF_SANDBOX_SHM_MB=16 \
            timeout --foreground -k 5 "$CEILING" ${as[@]+"${as[@]}"} "$BIN/kf-exec-worker" \
            --eval-time-limit-s 30 --eval "$job" \
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
# survivors_of MODE: the kfh-survivor processes of this test's MODE runs
# (by their folder, so another test's are never counted or signalled).
survivors_of() {
    local p
    for p in $(pgrep -x kfh-survivor 2>/dev/null); do
        case $(readlink "/proc/$p/cwd" 2>/dev/null) in
            "$T/tmp/$1-"*) echo "$p" ;;
        esac
    done
}

# what_left MODE NAME: what the case left in the host's /tmp and /dev/shm
# (removed once noted).
what_left() {
    local f left=""
    for f in /tmp/kfh-"${2#sandbox_}"-* /dev/shm/kfh-"${2#sandbox_}"-*; do
        [ -e "$f" ] || continue
        left="$left $f ($(du -k "$f" | cut -f1) KiB)"
        rm -f "$f"
    done
    echo "${left# }" >"$W/$1-$2.left"
}

# The host's measured figures are kept for the boot in each mode's cache
# (kf_host_figures.h): measured by the first run, read back by the others,
# as by a worker's later starts. The suite's file (tests/run.sh measures
# them once, before any test) starts each: a worker reads only a file its
# own user owns, so each mode gets a copy of its own. Without it, every
# run of the other user's mode measured them again (taken beside another
# test they were not kept): a fifth of this test's CPU in a profile. Now
# a first run beside other work keeps them marked busy, so each mode
# measures at most once.
for mode in "${MODES[@]}"; do
    mkdir -p "$T/cache-$mode"
    if [ -n "${KF_HOST_FIGURES:-}" ] && [ -s "$KF_HOST_FIGURES" ]; then
        cp "$KF_HOST_FIGURES" "$T/cache-$mode/host-figures.json"
        chmod 644 "$T/cache-$mode/host-figures.json"
    fi
    [ "$mode" = nonroot ] && chown -R 65534:65534 "$T/cache-$mode"
done

BG=()
first=1
for mode in "${MODES[@]}"; do
    if [ "$mode" = nonroot ]; then
        chown 65534:65534 "$T/keys/worker.key" "$T/keys/worker.key_secret"
    else
        chown "$(id -u):$(id -g)" "$T/keys/worker.key" "$T/keys/worker.key_secret"
    fi
    for c in "${CASES[@]}"; do
        read -r name kind class <<<"$c"
        [ "$kind" = sandbox ] && sandbox_job "$mode" "$name"
    done
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
        case $name in
            sandbox_survivor)
                # Right after the job ended: what of it still runs; then a
                # later, honest job in the same TMPDIR.
                survivors_of "$mode" | tr '\n' ' ' >"$W/$mode-$name.survivors"
                run_eval "$mode" survivor_later honest "$name"
                for p in $(survivors_of "$mode"); do kill -KILL "$p" 2>/dev/null; done
                ;;
            sandbox_fill | sandbox_leftover) what_left "$mode" "$name" ;;
        esac
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
    if [ "$kind" = sandbox ]; then
        judge_sandbox "$mode" "$name"
        return
    fi
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
        honest=${HONEST_FOR["$mode $name"]:-${HONEST[$mode]}}
        if awk -v s="$speedup" -v h="$honest" -v k="$SPEED_FACTOR" 'BEGIN { exit !(h > 0 && s <= k * h) }'; then
            CAUGHT=yes WHY=$(printf 'correct, speedup %.2f <= %s x honest %.2f' "$speedup" "$SPEED_FACTOR" "$honest")
        else
            WHY=$(printf 'correct, speedup %.2f > %s x honest %.2f' "$speedup" "$SPEED_FACTOR" "${honest:-0}")
        fi
        return
    fi
    WHY="judged correct, speedup $speedup"
}

# judge_sandbox MODE NAME: CAUGHT and WHY for a sandbox case, from what
# the test sees: outputs, the listeners' log, processes, files left.
judge_sandbox() {
    local mode=$1 name=$2 f=$W/$1-$2 said canary left later
    said=$(grep -ho 'KFH [^"]*' "$f.json" "$f.err" 2>/dev/null | head -1 | cut -c1-90)
    CAUGHT=yes WHY="reached nothing: ${said:-no report}"
    case $name in
        sandbox_curve_key) canary=$KEY_CANARY ;;
        sandbox_other_job) canary=$JOB_CANARY ;;
        sandbox_cmdline) canary=$DB_CANARY ;;
        *) canary= ;;
    esac
    if [ -n "$canary" ] && grep -qF "$canary" "$f.json" "$f.err" 2>/dev/null; then
        CAUGHT=no WHY="leaked: $said"
        return
    fi
    case $name in
        sandbox_tcp | sandbox_unix)
            if grep -qx "kfh $name $mode" "$T/heard.log"; then
                CAUGHT=no WHY="the listener heard it: $said"
            fi
            ;;
        sandbox_survivor)
            left=$(cat "$f.survivors" 2>/dev/null)
            later=$(field .result.verdict "$W/$mode-survivor_later.json")
            if [ -n "${left// /}" ]; then
                CAUGHT=no WHY="kfh-survivor (pid ${left% }) outlived the job; the later job: ${later:-failed}"
            elif [ "$later" != correct ]; then
                CAUGHT=no WHY="the later honest job came back ${later:-failed}"
            else
                WHY="none outlived the job; the later job: $later"
            fi
            ;;
        sandbox_fill | sandbox_leftover)
            left=$(cat "$f.left" 2>/dev/null)
            if [ -n "$left" ]; then
                CAUGHT=no WHY="left on the host: $left"
            elif [ "$name" = sandbox_fill ] && ! { echo "$said" | grep -q '/tmp=[0-9]* MiB (No space' \
                 && echo "$said" | grep -q '/dev/shm=[0-9]* MiB (No space'; }; then
                CAUGHT=no WHY="not capped: $said"
            fi
            ;;
    esac
}

# A second look at a speed case that came out faster than the rule
# allows: on a loaded host one timing can be off by that much (an honest
# copy of the baseline once measured 2.16 against the baseline's 0.96), so
# the case runs again between two fresh honest baselines and is judged
# against the larger, as the first look is against the larger of its two,
# up to three looks in all. An attack that wins, wins every time. A case whose fast path waits on
# the clock (memoise.c's copies wait a sixth of its fastest computing call)
# loses little to a neighbour, while honest work slows: CI's suite, with
# OpenCL tests beside it, read memoise at 1.67x against one honest 0.80
# just before it (1.33x against 0.99 on the quiet host).
declare -A HONEST_FOR
for mode in "${MODES[@]}"; do
    for c in "${CASES[@]}"; do
        read -r name kind class <<<"$c"
        [ "$kind" = speed ] || continue
        judge "$mode" "$name" "$kind"
        [ "$CAUGHT" = yes ] && continue
        for look in 2 3; do
            say "$mode $name: $WHY; look $look between two fresh honest baselines"
            run_eval "$mode" honest
            before=$(field '.result | select(.verdict == "correct") | .speedup' \
                           "$W/$mode-honest.json")
            run_eval "$mode" "$name"
            run_eval "$mode" honest
            after=$(field '.result | select(.verdict == "correct") | .speedup' \
                          "$W/$mode-honest.json")
            say "$mode $name: honest ${before:-none} before it and ${after:-none} after"
            HONEST_FOR["$mode $name"]=$(larger "$before" "$after")
            judge "$mode" "$name" "$kind"
            [ "$CAUGHT" = yes ] && break
        done
    done
done

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
