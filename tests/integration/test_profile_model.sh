#!/usr/bin/env bash
# test_profile_model.sh - `kfctl profile-model`: from a model to tasks.
# A three-operator model (Linear 256->512, GELU, LayerNorm over 512, on
# 64 rows) is profiled with torch.profiler on the exec worker, as a
# model_profile job the coordinator queues (and once with --local, here,
# to the same operators); the ranking
# names its three operators (addmm, gelu, native_layer_norm) with shares
# that add up to at most the whole, and one KernelBench-format problem
# per operator is written with the shapes the model gave it. Each problem
# runs through the exec worker's own reference path (a `reference` job by
# kf-exec-worker --eval) and its manifest has those shapes. Refused: a
# file that is no model, a folder that is not empty, a bad --top, a model
# that raises (with its traceback). --submit 2 submits the two costliest
# as one suite of two runs.
. "$(dirname "$0")/lib.sh"

need_torch_python   # sets PY, or ends the test with 0 checks

cat >"$T/model3.py" <<'EOF'
"""Three operators: Linear, GELU, LayerNorm (KernelBench level-3 form)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.linear = nn.Linear(d_in, d_out)
        self.act = nn.GELU()
        self.norm = nn.LayerNorm(d_out)

    def forward(self, x):
        return self.norm(self.act(self.linear(x)))


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return [256, 512]
EOF

export KF_REFERENCE_CACHE_DIR=$T/refcache
db_new
start_coordinator "${COORD_FAST[@]}"
start_workers
check "three workers, the exec worker with torch" \
    wait_until 180 jtrue '[.workers[] | select(.capabilities.torch.python)] | length == 1' \
    kfctl workers --json

out=$(kfctl profile-model "$T/model3.py" --top 3 --out "$T/ops" --json 2>"$T/profile.err")
rc=$?
check "it ran as one model_profile job of no run, on the exec worker, done at its first attempt" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE kind = 'model_profile' AND run_id IS NULL AND role = 'execute' AND backend = 'host' AND state = 'done' AND attempts = 1 AND worker LIKE '%execute%'")" = 1 ]
echo "$out" >"$T/profile.json"
say "ranking: $(jq -c '[.operators[] | {name, share, shapes}]' <<<"$out")"
check "profile-model exits 0" [ "$rc" -eq 0 ]
check "three operators, three problem files" \
    bash -c "[ \$(ls '$T/ops' | wc -l) -eq 3 ] && jq -e '[.operators[] | select(.problem)] | length == 3' '$T/profile.json' >/dev/null"
check "they are the model's addmm, gelu and native_layer_norm" \
    jtrue '[.operators[].name] | sort == ["aten::addmm", "aten::gelu", "aten::native_layer_norm"]' echo "$out"
check "with the model's shapes: bias [512], x [64,256], weight^T [256,512]; [64,512]; [64,512], [512], [512]" \
    jtrue '(.operators | map({(.name): .shapes}) | add) == {"aten::addmm": [[512], [64, 256], [256, 512]], "aten::gelu": [[64, 512]], "aten::native_layer_norm": [[64, 512], [512], [512]]}' echo "$out"
check "all float32; ranked by self time; shares in (0, 1] adding up to at most 1" \
    jtrue '(.operators | all(.dtypes | all(. == "float32"))) and ([.operators[].self_us] | . == (sort | reverse)) and (.operators | all(.share > 0 and .share <= 1)) and ([.operators[].share] | add <= 1.0000001) and .total_us > 0' echo "$out"
check "the files are numbered by rank and named for the operator" \
    jtrue '[.operators[].problem | split("/") | last] == (.operators | map(.name | ltrimstr("aten::")) | to_entries | map("0\(.key + 1)_\(.value).py"))' echo "$out"

out=$(kfctl profile-model "$T/model3.py" --top 3 --out "$T/local" --local --json 2>"$T/local.err")
rc=$?
check "--local: here, without a job, the same three operators with the same shapes" \
    bash -c "[ $rc -eq 0 ] && [ \"\$(jq -c '[.operators[] | {name, shapes}] | sort_by(.name)' <<<\"\$0\")\" = \"\$(jq -c '[.operators[] | {name, shapes}] | sort_by(.name)' '$T/profile.json')\" ] && [ \"\$(psql -qAt -h '$KF_TEST_PGHOST' -p '$KF_TEST_PGPORT' -d '$DB' -c \"SELECT count(*) FROM jobs WHERE kind = 'model_profile'\")\" = 1 ]" "$out"

# Each problem through the exec worker's reference path.
ref_shapes() {   # ref_shapes FILE: the input shapes of set 0 of its reference job
    jq -n --rawfile s "$1" '{kind: "reference", payload: {source: $s, sets: 2, compile: false,
        timing: {min_time_s: 0.01, warmup_s: 0.01, min_samples: 3, warmup_calls: 1}}}' >"$1.job"
    "$BIN/kf-exec-worker" --eval "$1.job" --perf off 2>"$1.err" \
        | jq -c '[.result.tensors[] | select(.role == "input" and .set == 0) | .shape]'
}
for f in "$T"/ops/*.py; do
    want=$(jq -c --arg f "$f" '.operators[] | select(.problem == $f) | .shapes' "$T/profile.json")
    got=$(ref_shapes "$f")
    check "$(basename "$f") runs as a reference job with inputs $want" [ -n "$got" -a "$got" = "$want" ]
done

out=$(kfctl profile-model "$T/model3.py" --top 3 --out "$T/ops" 2>&1)
rc=$?
check "the same folder again, not empty: exit 2, says so" \
    bash -c "[ $rc -eq 2 ] && grep -q 'is not empty: give --force' <<<\"\$0\"" "$out"
kfctl profile-model "$T/model3.py" --top 2 --out "$T/ops" --force >"$T/text.out" 2>&1
rc=$?
check "--force: written again; the text ranking has 2 ranked lines with the Amdahl bound" \
    bash -c "[ $rc -eq 0 ] && [ \$(grep -cE '^[12] +aten::[a-z_]+ +[0-9.]+ +[0-9.]+% +1 +[0-9.]+x' '$T/text.out') -eq 2 ]"
cat "$T/text.out" >&2
printf 'import torch\n\ndef get_inputs():\n    return []\n' >"$T/nomodel.py"
out=$(kfctl profile-model "$T/nomodel.py" --out "$T/x1" 2>&1)
rc=$?
check "a file with no Model: exit 2, naming what is missing, nothing written" \
    bash -c "[ $rc -eq 2 ] && grep -q \"no 'class Model'\" <<<\"\$0\" && [ ! -e '$T/x1' ]" "$out"
out=$(kfctl profile-model "$T/model3.py" --top 0 --out "$T/x2" 2>&1)
rc=$?
check "--top 0: exit 2" bash -c "[ $rc -eq 2 ] && grep -q -- '--top' <<<\"\$0\"" "$out"
sed 's/return self.norm/raise ValueError("broken on purpose"); return self.norm/' \
    "$T/model3.py" >"$T/raises.py"
out=$(kfctl profile-model "$T/raises.py" --out "$T/x3" 2>&1)
rc=$?
check "a model that raises: exit 1 with the stage and its error, nothing written" \
    bash -c "[ $rc -eq 1 ] && grep -q 'forward (warm-up): ValueError: broken on purpose' <<<\"\$0\" && [ ! -e '$T/x3' ]" "$out"
check "its job failed once, not retried" \
    [ "$(sql "SELECT state || ' ' || attempts FROM jobs WHERE kind = 'model_profile' ORDER BY id DESC LIMIT 1")" = "failed 1" ]
out=$(kfctl profile-model "$T/raises.py" --out "$T/x4" --local 2>&1)
rc=$?
check "and with --local the same: exit 1, the stage and the error" \
    bash -c "[ $rc -eq 1 ] && grep -q 'forward (warm-up): ValueError: broken on purpose' <<<\"\$0\" && [ ! -e '$T/x4' ]" "$out"

# --submit: the two costliest as one suite
out=$(kfctl profile-model "$T/model3.py" --top 3 --out "$T/sub" --submit 2 --target host \
      --generations 1 --population 1 2>&1)
rc=$?
say "submit: $out"
check "--submit 2: exit 0, two runs made" \
    bash -c "[ $rc -eq 0 ] && [ \"\$(psql -qAt -h '$KF_TEST_PGHOST' -p '$KF_TEST_PGPORT' -d '$DB' -c 'SELECT count(*) FROM runs')\" -eq 2 ]"
check "they belong to one suite" \
    [ "$(sql "SELECT count(DISTINCT suite_id) FROM runs WHERE suite_id IS NOT NULL")" = 1 ]

finish
