#!/usr/bin/env bash
# test_report_html.sh - `kfctl report RUN -o FILE.html` in a real headless
# browser: after a small host search, the page loads from the file alone
# without a console message, each chart holds one data point per figure
# of the run (as `kfctl show --json` and the jobs table give them), and
# its screenshot is a picture, not a blank page. Needs Debian's chromium
# (`make deps` installs it); skipped, saying so, only where it cannot run.
. "$(dirname "$0")/lib.sh"

browser=""
for b in chromium chromium-browser; do
    command -v "$b" >/dev/null 2>&1 && { browser=$b; break; }
done
if [ -z "$browser" ]; then
    say "skipped: no chromium on PATH (Debian: apt-get install chromium; make deps installs it)"
    finish
fi
# --no-sandbox: the suite may run as root, where Chromium refuses its own
# sandbox; the page is our own file and nothing is fetched.
chrome() {   # chrome URL ARGS...: one headless load, console on stderr
    local url=$1
    shift
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
        --disable-extensions --user-data-dir="$T/chrome" --enable-logging=stderr --v=0 \
        "$@" "$url"
}
# The probe proves both that Chromium runs here and that a page's console
# messages reach the log this test reads: a silent log must mean a quiet
# page, not a capture that sees nothing.
printf '<!DOCTYPE html><html><body><p>probe</p><script>console.error("kf-probe");'\
'no_such_function();</script></body></html>\n' >"$T/probe.html"
chrome "file://$T/probe.html" --dump-dom >"$T/probe.dom" 2>"$T/probe.console"
if ! grep -q '<p>probe</p>' "$T/probe.dom"; then
    say "skipped: $browser cannot run here: $(grep -v '^\s*$' "$T/probe.console" | tail -n 2 | tr '\n' ' ')"
    finish
fi
check "the probe's console.error reaches the log" grep -q ':CONSOLE.*"kf-probe"' "$T/probe.console"
check "the probe's uncaught error reaches the log" grep -q ':CONSOLE.*Uncaught' "$T/probe.console"

db_new
start_coordinator "${COORD_FAST[@]}"
start_workers
check "status answers with three workers" \
    wait_until 180 jtrue '.workers | length == 3' kfctl status --json
out=$(kfctl submit "$ROOT/examples/tasks/softmax/task.json" --generations 3 --population 3 \
      --seed 11 --wait --json --timeout 30 2>"$T/submit.err")
check "submit --wait exits 0" [ $? -eq 0 ]
run=$(jq -r .run_id <<<"$out")
kfctl show "$run" --json >"$T/show.json"
check "the run has a correct candidate" [ "$(jq -r .run.best_speedup "$T/show.json")" != null ]

path=$(kfctl report "$run" -o "$T/report.html" 2>"$T/report.err")
check "kfctl report -o FILE.html exits 0" [ $? -eq 0 ]
check "... and prints the page's path" [ "$path" = "$T/report.html" ]
check "... writing that file alone (no CSV, no SVG)" \
    bash -c "[ -s '$T/report.html' ] && ! ls '$T' | grep -qE '\\.(csv|svg)\$'"
check "--json names the page" \
    jtrue ".html == \"$T/r2.html\" and .run_id == $run" kfctl report "$run" -o "$T/r2.html" --json
check "the page is self-contained: no script, no link, no remote URL" \
    bash -c "! grep -qiE '<script|<link|<img|<iframe|https?://' '$T/report.html'"

chrome "file://$T/report.html" --dump-dom >"$T/report.dom" 2>"$T/report.console"
check "the browser renders the page" grep -q 'data-chart="curve"' "$T/report.dom"
check "the page logs nothing to the console" bash -c "! grep -q ':CONSOLE' '$T/report.console'"
chrome "file://$T/report.html" --screenshot="$T/report.png" --window-size=1100,2600 \
    >"$T/shot.out" 2>"$T/shot.console"
check "the browser writes a screenshot" [ -s "$T/report.png" ]

# What the browser built: each chart's points, counted in its DOM.
python3 - "$T/report.dom" >"$T/charts.json" <<'PY'
import html.parser, json, sys
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.charts = [], []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if 'data-chart' in a:
            self.charts.append({'chart': a['data-chart'], 'rows': a.get('data-rows'),
                                'cols': a.get('data-cols'), 'points': []})
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
check "the DOM parses into charts" [ "$(jq length "$T/charts.json")" -ge 7 ]
pts() { jq "[.[] | select(.chart == \"$1\") | .points[]] | $2" "$T/charts.json"; }
n=$(jq '.candidates | length' "$T/show.json")
check "the curve has a point per candidate ($n)" [ "$(pts curve length)" -eq "$n" ]
# data-best is printed with 6 significant digits.
check "the curve's best ends at the run's best" \
    awk -v a="$(pts curve 'last | ."data-best"' | tr -d '"')" \
        -v b="$(jq .run.best_speedup "$T/show.json")" \
        'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 1e-5 * b) }'
verdicts=$(jq '[.candidates[].status] | unique | length' "$T/show.json")
check "a verdict bar per status ($verdicts)" [ "$(pts verdicts length)" -eq "$verdicts" ]
check "the verdict bars add up to the candidates" \
    [ "$(pts verdicts 'map(."data-value" | tonumber) | add')" -eq "$n" ]
check "three heat maps" [ "$(jq '[.[] | select(.chart == "heatmap")] | length' "$T/charts.json")" -eq 3 ]
# A host run: its axes are named in the host's words (threads, SIMD), not
# a GPU's (synchronisation, coalesced, barriers, warp).
for pair in "memory algorithm 0 1" "memory threads 0 2" "algorithm threads 1 2"; do
    set -- $pair
    want=$(jq --argjson r "$3" --argjson c "$4" \
        '[.archive[].cell | ltrimstr("{") | rtrimstr("}") | split(",") | map(tonumber)
          | [.[$r], .[$c]]] | unique | length' "$T/show.json")
    got=$(jq --arg r "$1" --arg c "$2" \
        '[.[] | select(.chart == "heatmap" and .rows == $r and .cols == $c) | .points[]] | length' \
        "$T/charts.json")
    check "heat map $1 x $2: a square per occupied projection ($want)" [ "$got" -eq "$want" ]
done
check "the heat maps label host levels (SIMD, fork-join), no GPU level" \
    bash -c "grep -q '>SIMD</text>' '$T/report.html' && grep -q '>fork-join</text>' '$T/report.html' \
             && ! grep -qE '>(coalesced|barriers|warp)</text>' '$T/report.html'"
best_id=$(jq -r .run.best_candidate_id "$T/show.json")
chain=$(jq --argjson id "$best_id" '
    [.candidates[] | {key: (.id | tostring), value: .parent_id}] | from_entries as $p
    | [$id | recurse(if $p[tostring] != null then $p[tostring] else empty end)] | length' \
    "$T/show.json")
check "the lineage has a node per ancestor of the best ($chain)" [ "$(pts lineage length)" -eq "$chain" ]
check "... ending at the best kernel" [ "$(pts lineage 'last | ."data-candidate"')" = "\"$best_id\"" ]
check "the page lists a step with a diff per ancestor" \
    [ "$(grep -c '<li class="step"' "$T/report.dom")" -eq "$chain" ]
check "... each diff in the DOM" [ "$(grep -c '<pre class="diff"' "$T/report.dom")" -eq "$chain" ]
# The first step's diff is from nothing: every line of its source added,
# so the source travelled whole (SHOW's lineage carries it as hex).
root=$(jq -r --argjson id "$best_id" '
    [.candidates[] | {key: (.id | tostring), value: .parent_id}] | from_entries as $p
    | [$id | recurse(if $p[tostring] != null then $p[tostring] else empty end)] | last' \
    "$T/show.json")
if [ "$root" = "$best_id" ]; then
    kfctl best "$run" >"$T/best.src" 2>"$T/best.err"
    check "the root's diff adds every line of its source" \
        grep -q "<pre class=\"diff\" data-added=\"$(wc -l <"$T/best.src")\" data-removed=\"0\"" \
        "$T/report.dom"
fi
kinds=$(sql "SELECT count(DISTINCT kind) FROM jobs WHERE run_id = $run")
check "a stage bar per job kind ($kinds)" [ "$(pts stages length)" -eq "$kinds" ]
for kind in generate compile evaluate; do
    check "... the $kind stage has its seconds" \
        jtrue "[.[] | select(.chart == \"stages\") | .points[] | select(.\"data-kind\" == \"$kind\")
               | .\"data-value\" | tonumber] | length == 1 and .[0] > 0" cat "$T/charts.json"
done
versions=$(jq '.prompt_versions | length' "$T/show.json")
check "a row per prompt version ($versions)" [ "$(pts prompts length)" -eq "$versions" ]

# The screenshot decoded: a blank or failed render is one colour.
python3 "$ROOT/tests/tools/kf_png_ink.py" "$T/report.png" >"$T/png.txt"
check "the screenshot decodes" [ -s "$T/png.txt" ]
read -r pw ph colours ink <"$T/png.txt"
say "screenshot ${pw:-?}x${ph:-?}: ${colours:-?} colours, ${ink:-?} non-white pixels"
check "the screenshot is no blank page (many colours)" [ "${colours:-0}" -ge 16 ]
check "... with ink on more than 2% of it" [ "${ink:-0}" -gt $(( ${pw:-1} * ${ph:-1} / 50 )) ]

check "an unwritable page exits 1 naming it" \
    bash -c "! '$BIN/kfctl' report '$run' -o '$T/no/such/r.html' 2>'$T/unwritable.err' >/dev/null \
             && grep -q 'cannot write $T/no/such/r.html' '$T/unwritable.err'"
kfctl report 99999 -o "$T/none.html" >/dev/null 2>"$T/unknown.err"
check "an unknown run exits 1" [ $? -eq 1 ]
check "... with the coordinator's message, writing nothing" \
    bash -c "grep -q 'kfctl: not-found' '$T/unknown.err' && [ ! -e '$T/none.html' ]"
for f in "$T"/*.err; do
    check "no sanitizer report in $(basename "$f")" \
        bash -c "! grep -qE 'Sanitizer|runtime error:' '$f'"
done
finish
