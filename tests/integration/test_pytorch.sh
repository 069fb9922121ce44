#!/usr/bin/env bash
# test_pytorch.sh - PyTorch (KernelBench-format) runs end to end, and
# degenerate references refused at submission. `kfctl submit softmax.py`
# must run the problem on the exec worker (Debian's torch here), derive the
# task the candidates see from its manifest, and search against the
# exported data: correct candidates, speedups against PyTorch eager. A
# problem whose output ignores its input, and a native task whose
# reference writes zeros, must fail with the reasons; --allow-degenerate
# lets the native one run. Bad problem files are refused before anything
# is sent. The reference data stays on the exec host (its reference
# cache): nothing of tensor size reaches the database or a message, a
# problem past the old 48 MiB cap runs, and an exec worker with an empty
# cache makes the data again and checks its hash.
. "$(dirname "$0")/lib.sh"

export KF_REFERENCE_CACHE_DIR=$T/reference-cache   # a cold cache, and none left behind
db_new
start_coordinator "${COORD_FAST[@]}"
start_workers
# The exec worker imports torch before it registers: seconds, many more
# under the sanitizers on a busy machine.
check "status answers with three workers" \
    wait_until 180 jtrue '.workers | length == 3' kfctl status --json
check "the exec worker runs PyTorch references" \
    wait_until 60 jtrue '[.workers[] | select(.capabilities.torch.python)] | length == 1' \
    kfctl workers --json
FIX=$ROOT/tests/fixtures/degenerate

# --- problem files that are not problems: refused by kfctl, nothing sent
printf 'import torch\n\xff\xfe bad bytes\nclass Model: pass\n' >"$T/latin1.py"
printf 'import torch\n\ndef get_inputs():\n    return []\n\ndef get_init_inputs():\n    return []\n' >"$T/nomodel.py"
printf 'class Model:\n    pass\n\ndef get_init_inputs():\n    return []\n' >"$T/noinputs.py"
{ printf 'class Model:\n    pass\ndef get_inputs():\n    return []\ndef get_init_inputs():\n    return []\n'
  head -c 1100000 /dev/zero | tr '\0' '#'; } >"$T/huge.py"
bad() {   # bad PATTERN ARGS...: `kfctl submit ARGS` exits 2 and says PATTERN
    local pattern=$1 out rc
    shift
    out=$("$BIN/kfctl" submit "$@" --target host 2>&1)
    rc=$?
    [ "$rc" -eq 2 ] && grep -q -- "$pattern" <<<"$out" || { echo "rc $rc: $out" >&2; return 1; }
}
check "a problem file that is not UTF-8 is refused" bad "not UTF-8" "$T/latin1.py"
check "a problem file without class Model is refused" bad "no 'class Model'" "$T/nomodel.py"
check "a problem file without get_inputs is refused" bad "no 'def get_inputs()'" "$T/noinputs.py"
check "a problem file over 1 MiB is refused" bad "larger than" "$T/huge.py"
check "--op must be an identifier" bad "op: must be an identifier" \
    "$ROOT/examples/pytorch/softmax.py" --op no-op
check "--name and --op are refused for a task file" bad "are for PyTorch problem files" \
    "$ROOT/examples/tasks/softmax/task.json" --op softmax
check "none of them reached the coordinator" [ "$(sql "SELECT count(*) FROM runs")" -eq 0 ]

# --- softmax.py on the host: reference job, derived task, search
out=$(kfctl submit "$ROOT/examples/pytorch/softmax.py" --target host --generations 2 \
      --population 2 --seed 11 --wait --json --timeout 30 2>"$T/submit.err")
rc=$?
echo "$out" >"$T/softmax.json"
run=$(jq -r .run_id <<<"$out")
check "softmax.py: submit --wait exits 0" [ "$rc" -eq 0 ]
check "softmax.py: the run is done" [ "$(jq -r .status <<<"$out")" = done ]
say "run $run: $(jq -c . <<<"$out")"
check "the task is stored as submitted: a pytorch reference, no tensors" \
    [ "$(sql "SELECT t.spec->'reference'->>'language' || ',' || (t.spec ? 'inputs')::text || ',' || (t.spec->>'op') FROM runs r JOIN tasks t ON t.id = r.task_id WHERE r.id = $run")" = "pytorch,false,softmax" ]
check "one reference job, on the execute role, done" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $run AND kind = 'reference' AND role = 'execute' AND state = 'done'")" -eq 1 ]
check "the reference job ran with the run's seed, 5 sets and the task's atol" \
    [ "$(sql "SELECT payload->>'seed' || ',' || (payload->>'sets') || ',' || (payload->>'atol')::float8 FROM jobs WHERE run_id = $run AND kind = 'reference'")" = "11,5,1e-05" ]
check "no compile job for the reference" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $run AND kind = 'compile' AND candidate_id IS NULL")" -eq 0 ]
check "the derived task: in0 [64,1000] f32 -> out0 [64,1000] f32, scalar init0 = -1" \
    [ "$(sql "SELECT spec->'inputs'->0->>'name' || (spec->'inputs'->0->'shape')::text || (spec->'inputs'->0->>'dtype') || ' ' || (spec->'outputs'->0->>'name') || (spec->'outputs'->0->'shape')::text || ' ' || (spec->'scalars'->>'init0')::float8 || ' ' || jsonb_array_length(spec->'inputs') FROM runs WHERE id = $run")" = "in0[64, 1000]f32 out0[64, 1000] -1 1" ]
check "the data stays on the exec host: no artifact, ref_data names its 5 x 2 x 256000 bytes by key and XXH3-128 hash" \
    [ "$(sql "SELECT (ref_artifact IS NULL)::text || ',' || (ref_data->'data'->>'bytes') || ',' || length(ref_data->'data'->>'key') || ',' || length(ref_data->'data'->>'hash') || ',' || (ref_data->'data'->>'seed') FROM runs WHERE id = $run")" = "true,2560000,64,32,11" ]
key=$(sql "SELECT ref_data->'data'->>'key' FROM runs WHERE id = $run")
check "the exec worker's reference cache holds the data under that key" \
    [ "$(stat -c %s "$KF_REFERENCE_CACHE_DIR/d-$key.bin" 2>/dev/null)" = 2560000 ]
check "PyTorch eager time is stored (and compiled is null: Debian's torch has no torch.compile)" \
    [ "$(sql "SELECT (ref_eager_ns > 0)::text || ',' || (ref_compiled_ns IS NULL)::text FROM runs WHERE id = $run")" = "true,true" ]
# (the search may add tuning rounds after the 2 x 2: count what is there)
check "every generate job (4 or more) was given the derived task" \
    [ "$(sql "SELECT (count(*) >= 4 AND count(*) = count(*) FILTER (WHERE payload->'task'->'inputs'->0->>'name' = 'in0'))::text FROM jobs WHERE run_id = $run AND kind = 'generate'")" = true ]
check "every prompt shows the PyTorch source and what in[] holds" \
    [ "$(sql "SELECT (count(*) >= 4 AND count(*) = count(*) FILTER (WHERE prompt LIKE '%torch.softmax%' AND prompt LIKE '%forward''s tensor arguments (in0)%'))::text FROM candidates WHERE run_id = $run")" = true ]
check "the prompts state the derived task's traffic time (the stored task has no tensors)" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $run AND prompt LIKE '%This task reads N = 250 KiB and writes M = 250 KiB%'")" -ge 1 ]
check "every evaluate job carries reference_data with the data's key and hash, and no data frame" \
    [ "$(sql "SELECT (count(*) >= 1 AND count(*) = count(*) FILTER (WHERE jsonb_array_length(j.payload->'reference_data'->'tensors') = 10 AND (j.payload->'reference_data'->>'sets')::int = 5 AND (j.payload->'reference_data'->>'eager_ns')::float8 > 0 AND j.payload->'reference_data'->'data' = r.ref_data->'data' AND cardinality(j.blobs) = 1))::text FROM jobs j, runs r WHERE r.id = $run AND j.run_id = r.id AND j.kind = 'evaluate'")" = true ]
check "nothing of tensor size in the database: every blob under 1 MiB" \
    [ "$(sql "SELECT coalesce(max(length(data)), 0) < 1048576 FROM blobs")" = t ]
check "every candidate final; at least one correct" \
    [ "$(sql "SELECT (count(*) >= 4 AND count(*) = count(*) FILTER (WHERE finished_at IS NOT NULL) AND count(*) FILTER (WHERE status = 'correct') > 0)::text FROM candidates WHERE run_id = $run")" = true ]
check "speedups against PyTorch eager are recorded for the correct candidates" \
    [ "$(sql "SELECT count(*) FROM evaluations e JOIN candidates c ON c.id = e.candidate_id WHERE c.run_id = $run AND e.correct AND e.speedup > 0 AND e.figures ? 'speedup_compiled'")" -ge 1 ]
check "the best speedup is a positive number" jtrue '.best_speedup > 0' echo "$out"
check "kfctl show gives PyTorch's eager time and no torch.compile baseline" \
    sh -c "'$BIN/kfctl' show $run | grep -q '^PyTorch eager [0-9.]* us, torch.compile -'"
check "kfctl show --json has the baselines in the run object" \
    jtrue '.run.ref_eager_ns > 0 and .run.ref_compiled_ns == null and .run.warnings == []' \
    kfctl show "$run" --json
check "kfctl best hands back a C source with kf_forward" \
    sh -c "'$BIN/kfctl' best $run | grep -q kf_forward"

# --- a degenerate PyTorch problem: the run fails with the reasons
out=$("$BIN/kfctl" submit "$FIX/constant.py" --target host --generations 1 --population 1 \
      --wait --timeout 30 2>&1)
rc=$?
echo "$out" >"$T/constant.out"
check "constant.py: submit --wait exits 1" [ "$rc" -eq 1 ]
check "constant.py: the reason says the reference is degenerate, and why" \
    grep -q "reason: reference is degenerate: output 0 ('out0'): constant" "$T/constant.out"
crun=$(sql "SELECT max(id) FROM runs")
check "constant.py: no candidate was generated" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $crun")" -eq 0 ]

# --- a problem that raises: the reference job fails once, not on every
# attempt (the coordinator runs with 3), with the problem's error
out=$("$BIN/kfctl" submit "$FIX/raises.py" --target host --generations 1 --population 1 \
      --wait --timeout 30 2>&1)
rc=$?
echo "$out" >"$T/raises.out"
check "raises.py: submit --wait exits 1" [ "$rc" -eq 1 ]
rrun=$(sql "SELECT max(id) FROM runs")
check "raises.py: the run failed with the problem's error, not retried" \
    bash -c "grep -q 'problem raised in' '$T/raises.out' && grep -q 'not retried' '$T/raises.out'"
check "raises.py: its reference job failed on its first attempt" \
    [ "$(sql "SELECT state || ' ' || attempts FROM jobs WHERE run_id = $rrun AND kind = 'reference'")" = "failed 1" ]

# --- a native task whose reference writes zeros: the probe flags it
out=$(kfctl submit "$FIX/zeros_native/task.json" --target host --generations 1 \
      --population 2 --wait --json --timeout 30 2>/dev/null)
echo "$out" >"$T/zeros.json"
zrun=$(jq -r .run_id <<<"$out")
check "zeros_native: the run failed at the probe" [ "$(jq -r .status <<<"$out")" = failed ]
check "zeros_native: the reason names the degenerate output" \
    jtrue '.reason | startswith("reference is degenerate: ") and contains("output 0")' echo "$out"
check "zeros_native: the probe was an evaluate job of no candidate, with one frame" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $zrun AND kind = 'evaluate' AND candidate_id IS NULL AND payload->>'probe' = 'true' AND array_length(blobs, 1) = 1")" -eq 1 ]
check "zeros_native: no candidate was generated" \
    [ "$(sql "SELECT count(*) FROM candidates WHERE run_id = $zrun")" -eq 0 ]

out=$(kfctl submit "$FIX/zeros_native/task.json" --target host --generations 1 \
      --population 2 --allow-degenerate --wait --json --timeout 30 2>/dev/null)
echo "$out" >"$T/zeros-allowed.json"
arun=$(jq -r .run_id <<<"$out")
check "zeros_native --allow-degenerate: the run goes on to the end" \
    [ "$(jq -r .status <<<"$out")" = done ]
check "zeros_native --allow-degenerate: the reasons are a run warning" \
    [ "$(sql "SELECT count(*) FROM runs WHERE id = $arun AND config->>'allow_degenerate' = 'true' AND warnings->>0 LIKE 'reference is degenerate (allowed%output 0%'")" -eq 1 ]
check "zeros_native --allow-degenerate: kfctl show prints the warning" \
    sh -c "'$BIN/kfctl' show $arun | grep -q '^warning: reference is degenerate (allowed'"
check "zeros_native --allow-degenerate: its candidates were generated and judged" \
    [ "$(sql "SELECT (count(*) >= 2 AND count(*) = count(*) FILTER (WHERE finished_at IS NOT NULL))::text FROM candidates WHERE run_id = $arun")" = true ]

# --- past the old 48 MiB cap, evaluated by an exec worker whose cache is
# empty: the reference (68 MB of data) runs on the first exec worker,
# which is then stopped; a second one, with a cache of its own, gets the
# evaluations, makes the data again from the task's source and the seed,
# and finds the run's hash.
# dedup off: the two candidates must both be evaluated, the second on the
# second exec worker, even when the generator writes the same kernel twice.
kfctl submit "$ROOT/tests/fixtures/pytorch/big_softmax.py" --op softmax --target host --generations 1 \
    --population 2 --seed 5 --set dedup=false >"$T/big.submit" 2>&1
brun=$(sql "SELECT max(id) FROM runs")
ref_state() { sql "SELECT state FROM jobs WHERE run_id = $1 AND kind = 'reference'"; }
ref_ended() { [ "$(ref_state "$1")" = done ] || [ "$(ref_state "$1")" = failed ]; }
run_done() { [ "$(sql "SELECT status FROM runs WHERE id = $1")" = done ]; }
wait_until 300 ref_ended "$brun"
check "big_softmax.py: its reference job ends done" [ "$(ref_state "$brun")" = done ]
kill -TERM "$EXEC_PID"
wait "$EXEC_PID" 2>/dev/null
untrack "$EXEC_PID"
say "run $brun: $(sql "SELECT ref_data->'data' FROM runs WHERE id = $brun")"
check "big_softmax.py: 68157440 bytes of data (over the old 48 MiB cap), none of it in the database" \
    [ "$(sql "SELECT (ref_data->'data'->>'bytes') || ',' || (ref_artifact IS NULL)::text || ',' || (SELECT coalesce(max(length(data)), 0) < 1048576 FROM blobs)::text FROM runs WHERE id = $brun")" = "68157440,true,true" ]
bkey=$(sql "SELECT ref_data->'data'->>'key' FROM runs WHERE id = $brun")
check "big_softmax.py: the first exec worker's cache holds it" \
    [ "$(stat -c %s "$KF_REFERENCE_CACHE_DIR/d-$bkey.bin" 2>/dev/null)" = 68157440 ]
KF_REFERENCE_CACHE_DIR=$T/reference-cache-2 \
    start exec2 "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
check "big_softmax.py: the run ends done on the second exec worker" \
    wait_until 400 run_done "$brun"
say "evaluations: $(sql "SELECT string_agg(c.status || ' ' || coalesce(e.figures->'reference_data'->>'from', '-') || ' ' || coalesce(e.figures->'reference_data'->>'matches', '-'), '; ') FROM candidates c LEFT JOIN evaluations e ON e.candidate_id = c.id WHERE c.run_id = $brun")"
check "big_softmax.py: every candidate has a verdict, and one is correct" \
    [ "$(sql "SELECT (count(*) >= 2 AND count(*) = count(*) FILTER (WHERE finished_at IS NOT NULL) AND count(*) FILTER (WHERE status = 'correct') > 0)::text FROM candidates WHERE run_id = $brun")" = true ]
check "the second exec worker made the data again (its cache was empty) and its hash is the run's" \
    [ "$(sql "SELECT count(*) FROM evaluations e JOIN candidates c ON c.id = e.candidate_id WHERE c.run_id = $brun AND e.figures->'reference_data'->>'from' = 'regenerated' AND e.figures->'reference_data'->>'matches' = 'true' AND e.figures->'reference_data'->>'hash' = (SELECT ref_data->'data'->>'hash' FROM runs WHERE id = $brun)")" -ge 1 ]
check "  and keeps it in its own cache, under the run's key" \
    [ "$(stat -c %s "$T/reference-cache-2/d-$bkey.bin" 2>/dev/null)" = 68157440 ]
check "  and says so in its log" grep -q "reference data $bkey: not on this worker; making it" "$T/exec2.log"
check "the evaluate jobs of the big run carried no data: one blob each, payloads under 64 KiB" \
    [ "$(sql "SELECT (count(*) >= 2 AND count(*) = count(*) FILTER (WHERE cardinality(blobs) = 1 AND length(payload::text) < 65536))::text FROM jobs WHERE run_id = $brun AND kind = 'evaluate'")" = true ]

check "no job left queued or leased" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE state IN ('queued','leased')")" -eq 0 ]
check "the coordinator counted no malformed message" \
    jtrue '.counters.malformed == 0' kfctl status --json
finish
