#!/usr/bin/env bash
# test_structure.sh - the program folders keep their shape (STYLE.md, rule
# 12): no source file over 800 lines, no #include cycle, no include of
# another program's folder (tests/tools/kf_structure.py). Then the same
# check on a copy broken three ways, so it is seen to fail on each.
. "$(dirname "$0")/lib.sh"
CHECK="python3 $ROOT/tests/tools/kf_structure.py"

$CHECK "$ROOT" >"$T/tree.out" 2>&1
rc=$?
sed 's/^/  /' "$T/tree.out" >&2
check "the tree keeps its shape" [ "$rc" -eq 0 ]

# A copy of the folders, broken on purpose.
mkdir -p "$T/copy"
for d in analysis common proto coordinator compile-worker exec-worker llm-gateway kfctl; do
    cp -r "$ROOT/$d" "$T/copy/$d"
done
$CHECK "$T/copy" >"$T/copy-clean.out" 2>&1
check "an unbroken copy passes" [ $? -eq 0 ]

for i in $(seq 1 801); do echo "/* padding $i */"; done >>"$T/copy/kfctl/kfctl_cmd.c"
printf '#include "kf_h12_b.h"\n' >"$T/copy/common/kf_h12_a.h"
printf '#include "kf_h12_c.h"\n' >"$T/copy/common/kf_h12_b.h"
printf '#include "kf_h12_a.h"\n' >"$T/copy/analysis/kf_h12_c.h"
printf '#include "../coordinator/kf_db.h"\n' >>"$T/copy/exec-worker/kf_exec.c"
$CHECK "$T/copy" >"$T/copy.out" 2>&1
rc=$?
sed 's/^/  /' "$T/copy.out" >&2
check "the broken copy fails" [ "$rc" -eq 1 ]
check "a file padded past 800 lines is named" \
    grep -q '^too long: kfctl/kfctl_cmd.c: ' "$T/copy.out"
check "an include cycle across folders is named" \
    grep -qE '^cycle: (.*kf_h12_[abc].h -> ){3}[a-z]*/kf_h12_[abc].h$' "$T/copy.out"
check "an include of another program's folder is named" \
    grep -q '^cross: exec-worker/kf_exec.c:[0-9]* includes "../coordinator/kf_db.h"' "$T/copy.out"
finish
