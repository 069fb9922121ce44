#!/usr/bin/env bash
# tests/stress.sh - the suite on a busy machine: stress-ng keeps
# KF_STRESS_CPUS cores (default 1, half of a 2-core machine) at 100%
# beside tests/run.sh, as a CI machine shared with other work would. The
# suite must pass so: its tests wait for states, not for time. Takes what
# run.sh takes (KF_BUILD, KF_ONLY, KF_TESTS); `make test-stress`.
set -u
cd "$(dirname "$0")/.."
command -v stress-ng >/dev/null || { echo "stress.sh: stress-ng missing (make deps)" >&2; exit 2; }
cpus=${KF_STRESS_CPUS:-1}
# A generous timeout, so a stress-ng this script could not stop (the
# script itself killed) still ends on its own.
stress-ng --cpu "$cpus" --timeout 7200 --quiet &
stress=$!
trap 'kill "$stress" 2>/dev/null; wait "$stress" 2>/dev/null' EXIT INT TERM
echo "stress.sh: $cpus core(s) kept busy by stress-ng (pid $stress)"
tests/run.sh
