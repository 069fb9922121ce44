#!/usr/bin/env bash
# test_torch_routing.sh - jobs that run PyTorch go only to an exec worker
# that has torch. A PyTorch problem's `reference` job and a
# `model_profile` job, with only an exec worker whose Python lacks torch
# connected, stay queued (before: that worker leased them and failed
# them, "no Python with torch"), the submit warns which worker is
# missing, and `show` says what the run waits for; once a worker with
# torch joins, both run there, at their first attempt.
. "$(dirname "$0")/lib.sh"

need_torch_python   # sets PY, or ends the test with 0 checks
# jobs_are WHERE EXPECTED: the state and attempts of the jobs WHERE
# selects, one "state attempts" line each, are EXPECTED.
jobs_are() { [ "$(sql "SELECT string_agg(state || ' ' || attempts, ',') FROM jobs WHERE $1")" = "$2" ]; }

export KF_REFERENCE_CACHE_DIR=$T/refcache
db_new
start_coordinator "${COORD_FAST[@]}"
start gateway "$BIN/kf-llm-gateway" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
start compile "$BIN/kf-compile-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}"
start exec-notorch "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" \
    --perf off --python /bin/false   # an interpreter that imports nothing
check "three workers; the exec worker says it has no torch" \
    wait_until 180 jtrue '(.workers | length == 3) and ([.workers[] | select(.role == "execute" and (.capabilities.torch == null))] | length == 1)' \
    kfctl workers --json

out=$(kfctl submit "$ROOT/examples/pytorch/softmax.py" --target host --generations 1 \
      --population 1 --seed 3 --json 2>"$T/submit.err")
run=$(jq -r .run_id <<<"$out")
say "submit: $(jq -c . <<<"$out")"
check "submit warns that no exec worker with torch runs host" \
    jtrue '.warnings[0] | test("no connected exec worker with a Python that has torch runs target host")' echo "$out"
check "show says the run waits for an exec worker with torch" \
    wait_until 60 jtrue '.run.waiting // .waiting | test("with a Python that has torch")' kfctl show "$run" --json
check "its reference job is still queued, never leased" \
    jobs_are "run_id = $run AND kind = 'reference'" "queued 0"

# model_profile: queued by kfctl, not taken by the worker without torch.
printf 'import torch\nimport torch.nn as nn\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n    def forward(self, x):\n        return torch.relu(x)\ndef get_inputs():\n    return [torch.randn(32, 64)]\ndef get_init_inputs():\n    return []\n' >"$T/relu.py"
kfctl profile-model "$T/relu.py" --top 1 --out "$T/ops" --json >"$T/profile.json" 2>"$T/profile.err" &
PROFILE_PID=$!
check "the model_profile job is queued and not leased" \
    wait_until 60 jobs_are "kind = 'model_profile'" "queued 0"
# Dispatch ran when each was queued (a worker without torch had a free
# credit then); two seconds on, both jobs are as they were.
check "2 s after queueing, both are still queued at attempt 0" \
    wait_until 30 jobs_are "kind IN ('reference', 'model_profile') AND updated_at < now() - interval '2 seconds'" "queued 0,queued 0"

start exec "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" --perf off
TORCH_PID=$PID
check "a worker with torch joins" \
    wait_until 180 jtrue '[.workers[] | select(.capabilities.torch.python)] | length == 1' kfctl workers --json
check "the reference job ran there at its first attempt" \
    wait_until 180 jobs_are "run_id = $run AND kind = 'reference'" "done 1"
wait "$PROFILE_PID"
profile_rc=$?
check "profile-model exits 0" [ "$profile_rc" -eq 0 ]
check "its job ran on the worker with torch at its first attempt" \
    jobs_are "kind = 'model_profile'" "done 1"
check "both were leased by the worker with torch (pid $TORCH_PID)" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE kind IN ('reference', 'model_profile') AND worker LIKE '%-$TORCH_PID'")" = 2 ]
check "the run ends done" \
    wait_until 300 jtrue '.run.status // .status | . == "done"' kfctl show "$run" --json
finish
