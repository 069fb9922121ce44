#!/usr/bin/env bash
# test_search_step_fail.sh - a search step the database refuses fails its
# run with the reason, and the coordinator goes on serving. The job is
# recorded done in the same pass while its step is rolled back, so before
# this its candidate waited for nothing and the run never ended (seen when
# a planner query of round 9 of issue 15 was wrong: test_search_ideas ran
# into its 600 s limit). A trigger of the test's own refuses the step
# that moves a generated candidate to compiling.
. "$(dirname "$0")/lib.sh"

db_new
start_coordinator "${COORD_FAST[@]}"
start_workers
check "status answers with three workers" \
    wait_until 180 jtrue '.workers | length == 3' kfctl status --json

sql "CREATE FUNCTION kf_test_refuse () RETURNS trigger LANGUAGE plpgsql AS
     \$\$ BEGIN RAISE EXCEPTION 'refused by test_search_step_fail'; END \$\$;
     CREATE TRIGGER kf_test_refuse BEFORE UPDATE OF status ON candidates FOR EACH ROW
     WHEN (NEW.status = 'compiling' AND OLD.status IS DISTINCT FROM 'compiling')
     EXECUTE FUNCTION kf_test_refuse ()" >/dev/null
out=$(kfctl submit "$ROOT/examples/tasks/gelu/task.json" --generations 1 --population 1 \
      --seed 3 --wait --json --timeout 120 2>"$T/submit.err")
run=$(jq -r .run_id <<<"$out")
say "run $run: $(jq -c '{status, reason}' <<<"$out")"
check "the run ends failed, not hung" [ "$(jq -r .status <<<"$out")" = failed ]
check "... its reason names the search step and the database's words" \
    jtrue '.run.reason | test("internal error: the search step of job [0-9]+ failed: .*refused by test_search_step_fail")' \
    kfctl show "$run" --json
check "... and none of its jobs waits" \
    [ "$(sql "SELECT count(*) FROM jobs WHERE run_id = $run AND state IN ('queued', 'leased')")" -eq 0 ]

sql "DROP TRIGGER kf_test_refuse ON candidates" >/dev/null
out=$(kfctl submit "$ROOT/examples/tasks/gelu/task.json" --generations 1 --population 1 \
      --seed 3 --wait --json --timeout 120 2>>"$T/submit.err")
say "next run: $(jq -c '{status, reason}' <<<"$out")"
check "the coordinator goes on: the next run is done" [ "$(jq -r .status <<<"$out")" = done ]
finish
