#!/usr/bin/env bash
# test_suite.sh - suites (kfctl suite submit|show|list, report --suite).
# A folder with two PyTorch problems, two native task folders and three
# things that are no problem is submitted as one suite on the host with
# the offline generator: the four become runs of the suite, the other three
# are skipped with their reasons. The coordinator is killed while the runs
# are going and started again: the suite is still there and its runs
# finish. Its fast_p and geometric-mean figures must equal what this test
# computes itself from each run's `kfctl show --json`. The suite's page
# loads in headless Chromium (where it runs) without a console message,
# with a curve point per p and a row per problem. Usage errors and bad ids
# exit 2 and 1 with a message; suite fields kfctl would never send, sent
# by a scripted peer, are refused by the coordinator with the reason.
. "$(dirname "$0")/lib.sh"

export KF_REFERENCE_CACHE_DIR=$T/reference-cache

# jfile FILE JQ-ARGS...: jq -e with JQ-ARGS (options, then the filter) on FILE.
jfile() {
    local file=$1
    shift
    jq -e "$@" "$file" >/dev/null
}

# --- usage errors: nothing needs a coordinator for these
usage() {   # usage PATTERN ARGS...: `kfctl ARGS` exits 2 and says PATTERN
    local pattern=$1 out rc
    shift
    out=$("$BIN/kfctl" "$@" 2>&1)
    rc=$?
    [ "$rc" -eq 2 ] && grep -q -- "$pattern" <<<"$out" || { echo "rc $rc: $out" >&2; return 1; }
}
mkdir -p "$T/empty"
check "suite without a subcommand exits 2" usage "wrong number of arguments" suite
check "an unknown subcommand exits 2" usage "unknown subcommand 'frob'" suite frob
check "... with a suggestion when it is near one" usage "did you mean 'show'" suite shwo 1
check "under --json a usage error is JSON on stdout" \
    bash -c "'$BIN/kfctl' suite show abc --json 2>/dev/null | jq -e '.code == \"usage\"' >/dev/null"
check "suite submit without a path exits 2" usage "at least one DIR or FILE" suite submit
check "suite show of a non-id exits 2" usage "must be a suite id" suite show abc
check "suite show takes one id" usage "give one suite ID" suite show 1 2
check "submit's options belong to suite submit" usage "belong to suite submit" \
    suite list --generations 2
check "an empty folder has no problem to submit" usage "no problem to submit" \
    suite submit "$T/empty" --target host
check "report --suite needs a page" usage "FILE.html is needed" report --suite 1
check "report --suite with a RUN too exits 2" usage "wrong number of arguments" \
    report 3 --suite 1 -o "$T/x.html"
check "--suite belongs to report" usage "belongs to report" show 1 --suite 1

db_new
start_coordinator "${COORD_FAST[@]}"
start_workers
check "status answers with three workers" \
    wait_until 180 jtrue '.workers | length == 3' kfctl status --json
check "the exec worker runs PyTorch references" \
    wait_until 120 jtrue '[.workers[] | select(.capabilities.torch.python)] | length == 1' \
    kfctl workers --json

kfctl suite show 999 >/dev/null 2>"$T/unknown.err"
check "an unknown suite exits 1" [ $? -eq 1 ]
check "... saying so" grep -q "not-found: no suite with that id" "$T/unknown.err"
check "no suites yet" bash -c "'$BIN/kfctl' suite list | grep -q 'no suites yet'"

# --- the coordinator's own checks of a SUBMIT's suite fields, sent by a
# scripted peer (kfctl never sends such): each is refused, saying why,
# and makes no run
TASK=$(jq -c --rawfile src "$ROOT/examples/tasks/row_sum/reference.c" \
    '.reference = {language: "c", source: $src}' "$ROOT/examples/tasks/row_sum/task.json")
refused() {   # refused PATTERN EXTRA-JSON: a SUBMIT with EXTRA merged in gets an ERROR saying PATTERN
    local body out
    body=$(jq -c --argjson t "$TASK" --argjson x "$2" -n '{task: $t, config: {target: "host"}} + $x')
    out=$("$TOOLS/kf_peer" --endpoint "$KF_CLIENT_ENDPOINT" --heartbeat-ms 600000 \
          "send SUBMIT $body" "expect ERROR 20000" 2>&1)
    grep '"type": "ERROR"' <<<"$out" | grep -q -- "$1" || { echo "$out" >&2; return 1; }
}
check "a SUBMIT joining an unknown suite is refused" refused "no suite with id 77" '{"suite_id": 77}'
check "... making and joining at once too" refused "not both" \
    '{"suite_id": 1, "suite": {"name": "x"}}'
check "... a suite without a name too" refused "name is a string of 1..200" '{"suite": {}}'
check "... a name past 200 bytes too" refused "name is a string of 1..200" \
    "{\"suite\": {\"name\": \"$(printf 'n%.0s' $(seq 1 201))\"}}"
check "... skipped entries without a reason too" refused "skipped\\[0\\] must be" \
    '{"suite": {"name": "x", "skipped": [{"path": "a"}]}}'
check "... a problem label past 4096 bytes too" refused "problem must be a string" \
    "{\"problem\": \"$(head -c 4097 /dev/zero | tr '\0' p)\"}"
check "none of them made a run or a suite" \
    [ "$(sql "SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM suites)")" -eq 0 ]

# --- the problems: names sort softmax.py after rmsnorm.py, folders by name
P=$T/problems
mkdir -p "$P"
cp "$ROOT/examples/pytorch/softmax.py" "$ROOT/examples/pytorch/rmsnorm.py" "$P/"
cp -r "$ROOT/examples/tasks/row_sum" "$ROOT/examples/tasks/gelu" "$P/"
echo "notes, not a problem" >"$P/README.txt"
printf 'import torch\n\ndef get_inputs():\n    return []\n' >"$P/broken.py"
cp "$ROOT/examples/pytorch/softmax.py" "$P/$(printf 'bad\377name.py')"   # a name JSON cannot carry
kfctl suite submit "$P" --target host --generations 1 --population 2 --seed 5 \
    --name host-mix --json >"$T/submit.json" 2>"$T/submit.err"
check "suite submit exits 0" [ $? -eq 0 ]
suite=$(jq -r .suite_id "$T/submit.json")
say "suite $suite: $(jq -c . "$T/submit.json")"
check "four runs, in name order" \
    jtrue '[.runs[].path | split("/") | last] == ["gelu", "rmsnorm.py", "row_sum", "softmax.py"]' \
    cat "$T/submit.json"
check "three skipped, each with its reason" \
    jtrue '(.skipped | length == 3)
           and (.skipped[] | select(.path | endswith("bad?name.py")) | .reason | test("not UTF-8"))
           and (.skipped[] | select(.path | endswith("broken.py")) | .reason | test("class Model"))
           and (.skipped[] | select(.path | endswith("README.txt")) | .reason | test("not a problem"))' \
    cat "$T/submit.json"
check "stderr names the skipped ones" grep -q "skipped $P/README.txt" "$T/submit.err"
check "the database holds the suite and its four runs" \
    [ "$(sql "SELECT s.name || ',' || count(r.id) FROM suites s JOIN runs r ON r.suite_id = s.id
              WHERE s.id = $suite GROUP BY s.name")" = "host-mix,4" ]
check "each run keeps the path it came from" \
    [ "$(sql "SELECT count(*) FROM runs WHERE suite_id = $suite AND suite_problem LIKE '$P/%'")" -eq 4 ]

# --- a coordinator restart in the middle of the suite
check "the suite is running" \
    jtrue '[.problems[] | select(.status == "running")] | length >= 1' kfctl suite show "$suite" --json
kill_hard "$COORD_PID"
start_coordinator "${COORD_FAST[@]}"
check "after a restart the suite is still there with its four problems" \
    wait_until 60 jtrue '.problems | length == 4' kfctl suite show "$suite" --json
check "every run of the suite ends" \
    wait_until 540 jtrue '[.problems[] | select(.status == "running")] | length == 0' \
    kfctl suite show "$suite" --json --timeout 20
kfctl suite show "$suite" --json >"$T/suite.json"
kfctl suite show "$suite" >"$T/suite.txt"
check "suite show exits 0" [ $? -eq 0 ]

# --- the figures, computed here from each run's own `kfctl show --json`
for run in $(jq -r '.problems[].run_id' "$T/suite.json"); do
    kfctl show "$run" --json | jq .run
done | jq -s . >"$T/runs.json"
say "runs: $(jq -c '[.[] | {id, status, best_speedup, best_candidate_id, ref_eager_ns, ref_compiled_ns, done}]' "$T/runs.json")"
jq '
  def correct: .best_candidate_id != null and .best_speedup != null and .best_speedup > 0;
  def eager_x: if (.ref_eager_ns // 0) > 0 then (if correct then .best_speedup else 0 end)
               else null end;
  def compiled_x: if (.ref_eager_ns // 0) > 0 and (.ref_compiled_ns // 0) > 0
                  then (if correct then .best_speedup * .ref_compiled_ns / .ref_eager_ns else 0 end)
                  else null end;
  def figures(f): length as $n | [.[] | {c: correct, x: f}] as $p
    | if ([$p[] | select(.x != null)] | length) == 0 or $n == 0
      then {fast_0: null, fast_1: null, "fast_1.5": null, fast_2: null, geomean: null}
      else {fast_0: ([$p[] | select(.c)] | length / $n),
            fast_1: ([$p[] | select(.c and .x != null and .x > 1)] | length / $n),
            "fast_1.5": ([$p[] | select(.c and .x != null and .x > 1.5)] | length / $n),
            fast_2: ([$p[] | select(.c and .x != null and .x > 2)] | length / $n),
            geomean: ([$p[] | select(.c and .x != null and .x > 0) | .x | log] as $l
                      | if ($l | length) == 0 then null else ($l | add / length | exp) end)}
      end;
  {problems: length, correct: ([.[] | select(correct)] | length),
   eager: figures(eager_x), compiled: figures(compiled_x)}' "$T/runs.json" >"$T/expected.json"
say "expected: $(jq -c . "$T/expected.json")"
say "suite:    $(jq -c .figures "$T/suite.json")"
check "the runs' own figures were read (4)" [ "$(jq length "$T/runs.json")" -eq 4 ]
check "some problem of the suite is correct" jtrue '.correct >= 1' cat "$T/expected.json"
check "the suite counts the problems and the correct ones as the runs do" \
    jfile "$T/suite.json" --slurpfile e "$T/expected.json" \
    '.figures.problems == $e[0].problems and .figures.correct == $e[0].correct'
for base in eager compiled; do
    for key in fast_0 fast_1 fast_1.5 fast_2 geomean; do
        check "$base $key as computed by hand" \
            jfile "$T/suite.json" --slurpfile e "$T/expected.json" --arg b "$base" --arg k "$key" \
            '.figures[$b][$k] as $got | $e[0][$b][$k] as $want
             | if $want == null then $got == null
               else ($got != null and (($got - $want) | fabs) <= 1e-9 * (1 + ($want | fabs))) end'
    done
done
check "the native tasks have no eager baseline: 2 of 4 problems have it" \
    jtrue '.figures.eager.with_baseline == 2' cat "$T/suite.json"
check "each problem's correctness and candidates are its run's" \
    jfile "$T/suite.json" --slurpfile r "$T/runs.json" \
    '[.problems[] | {id: .run_id, c: .correct, n: .candidates}]
     == [$r[0][] | {id, c: (.best_candidate_id != null and .best_speedup != null), n: .done}]'
check "the table shows a row per problem and the figures" \
    bash -c "[ \$(grep -cE '^ +[0-9]+  ' '$T/suite.txt') -eq 4 ] && grep -q '^PyTorch eager' '$T/suite.txt' && grep -q 'fast_1.5' '$T/suite.txt'"
if jtrue '.figures.compiled.with_baseline == 0' cat "$T/suite.json"; then
    check "no torch.compile time: the table says n/a" grep -q '^torch.compile *n/a' "$T/suite.txt"
fi
check "suite list shows it with its four runs" \
    jtrue ".suites | map(select(.id == $suite)) | .[0] | .name == \"host-mix\" and .runs == 4
           and .running == 0 and .skipped == 3" kfctl suite list --json

# --- a second suite from files, joining by id; a refused problem said
kfctl suite submit "$ROOT/examples/tasks/row_sum/" "$T/nonexistent.py" --target host \
    --generations 1 --population 1 --json >"$T/second.json" 2>"$T/second.err"
check "a second suite from a task folder, a missing path skipped" \
    jtrue ".suite_id == $((suite + 1)) and (.runs | length == 1) and (.skipped | length == 1)" \
    cat "$T/second.json"
check "... the missing path said with its error" grep -q "nonexistent.py: No such file" "$T/second.err"
check "... named after its first path" \
    jtrue ".suites | map(select(.id == $((suite + 1)))) | .[0].name == \"row_sum\"" kfctl suite list --json

# --- without --target, a CUDA problem of a suite runs on cuda, as with submit
kfctl suite submit "$ROOT/examples/tasks/softmax_cuda" --generations 1 --population 1 \
    --json >"$T/cuda.json" 2>"$T/cuda.err"
cuda_run=$(jq -r '.runs[0].run_id' "$T/cuda.json")
check "a CUDA task folder in a suite gets the cuda target" \
    [ "$(sql "SELECT target FROM runs WHERE id = ${cuda_run:-0}")" = cuda ]
check "... said on stderr" grep -q "written in CUDA: target cuda" "$T/cuda.err"
check "... with the coordinator's warning that no worker here can take it" \
    grep -q "^warning: run ${cuda_run:-0}: " "$T/cuda.err"
kfctl cancel "${cuda_run:-0}" >/dev/null 2>&1   # no CUDA worker here: nothing to wait for

# --- the page, in a real browser where one runs here
path=$(kfctl report --suite "$suite" -o "$T/suite.html" 2>"$T/report.err")
check "report --suite exits 0 and prints the page's path" [ "$path" = "$T/suite.html" ]
check "--json names the page" \
    jtrue ".html == \"$T/s2.html\" and .suite_id == $suite" \
    kfctl report --suite "$suite" -o "$T/s2.html" --json
check "the page is self-contained: no script, no link, no remote URL" \
    bash -c "! grep -qiE '<script|<link|<img|<iframe|https?://' '$T/suite.html'"
kfctl report --suite 999 -o "$T/none.html" >/dev/null 2>&1
rc=$?
check "an unknown suite's report exits 1 writing nothing" \
    bash -c "[ $rc -eq 1 ] && [ ! -e '$T/none.html' ]"
browser=""
for b in chromium chromium-browser; do
    command -v "$b" >/dev/null 2>&1 && { browser=$b; break; }
done
chrome() {   # chrome URL ARGS...: one headless load, console on stderr
    local url=$1
    shift
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
        --disable-extensions --user-data-dir="$T/chrome" --enable-logging=stderr --v=0 \
        "$@" "$url"
}
if [ -z "$browser" ]; then
    say "browser checks skipped: no chromium on PATH (make deps installs it)"
elif ! chrome "file://$T/suite.html" --dump-dom >"$T/suite.dom" 2>"$T/suite.console" \
     || ! grep -q 'data-chart="problems"' "$T/suite.dom"; then
    say "browser checks skipped: $browser cannot run here: $(tail -n 2 "$T/suite.console" | tr '\n' ' ')"
else
    check "the page logs nothing to the console" bash -c "! grep -q ':CONSOLE' '$T/suite.console'"
    python3 - "$T/suite.dom" >"$T/charts.json" <<'PY'
import html.parser, json, sys
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.charts = [], []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if 'data-chart' in a:
            self.charts.append({'chart': a['data-chart'], 'points': []})
            self.stack.append(tag)
        elif self.stack and 'data-value' in a:
            self.charts[-1]['points'].append(a)
    def handle_endtag(self, tag):
        if self.stack and tag == self.stack[-1]:
            self.stack.pop()
p = P()
p.feed(open(sys.argv[1]).read())
json.dump(p.charts, sys.stdout)
PY
    pts() { jq "[.[] | select(.chart == \"$1\") | .points[]] | $2" "$T/charts.json"; }
    check "a table row per problem (4)" [ "$(pts problems length)" -eq 4 ]
    check "... correct ones with their best speedup" \
        jfile "$T/charts.json" --slurpfile s "$T/suite.json" \
        '[.[] | select(.chart == "problems") | .points[] | select(."data-correct" == "yes")
          | ."data-value" | tonumber] | length == ($s[0].problems | map(select(.correct)) | length)'
    check "ten figures (five per baseline)" [ "$(pts figures length)" -eq 10 ]
    # The curve runs from p = 0 to the next half above the largest speedup
    # (at least 2), a point every 0.05.
    pmax=$(jq '[2, (.problems[] | select(.correct) | .speedup_eager // 0)] | max
               | (. * 2 + 1e-9 | ceil) / 2' "$T/suite.json")
    want=$(awk -v p="$pmax" 'BEGIN { n = int(p / 0.05 + 0.5); if (n > 400) n = 400; print n + 1 }')
    check "the eager curve has a point per p ($want)" \
        [ "$(pts fastp '[.[] | select(."data-baseline" == "eager")] | length')" -eq "$want" ]
    for key in 0 1 1.5 2; do
        check "the curve at p = $key is fast_$key" \
            jfile "$T/charts.json" --slurpfile s "$T/suite.json" --arg p "$key" \
            '[.[] | select(.chart == "fastp") | .points[]
              | select(."data-baseline" == "eager" and ."data-p" == $p) | ."data-value" | tonumber]
             | length == 1 and ((.[0] - $s[0].figures.eager["fast_" + $p]) | fabs) < 1e-5'
    done
    chrome "file://$T/suite.html" --screenshot="$T/suite.png" --window-size=1100,1600 \
        >"$T/shot.out" 2>"$T/shot.console"
    python3 "$ROOT/tests/tools/kf_png_ink.py" "$T/suite.png" >"$T/png.txt"
    read -r pw ph colours ink <"$T/png.txt"
    say "screenshot ${pw:-?}x${ph:-?}: ${colours:-?} colours, ${ink:-?} non-white pixels"
    check "the screenshot is no blank page" \
        bash -c "[ ${colours:-0} -ge 16 ] && [ ${ink:-0} -gt $(( ${pw:-1} * ${ph:-1} / 100 )) ]"
fi
for f in "$T"/*.err; do
    check "no sanitizer report in $(basename "$f")" \
        bash -c "! grep -qE 'Sanitizer|runtime error:' '$f'"
done
finish
