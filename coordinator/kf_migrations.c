/*  kf_migrations.c - the schema, as numbered migrations.
 *
 *  Each entry is applied once, in order, in its own transaction, and
 *  recorded in kf_schema. A coordinator takes a session advisory lock
 *  first, so two coordinators starting together cannot both apply one.
 *  Never edit an applied migration: add the next number.
 */
#include "kf_db.h"
#include "kf_log.h"
#include <stdio.h>

static const char *s_migrations[] = {
    /* 1: the backbone: tasks, runs, jobs, blobs, candidates, evaluations */
    "CREATE TABLE tasks ("
    "  id bigserial PRIMARY KEY,"
    "  name text NOT NULL,"
    "  hash text NOT NULL UNIQUE,"
    "  spec jsonb NOT NULL,"
    "  created_at timestamptz NOT NULL DEFAULT now());"

    "CREATE TABLE runs ("
    "  id bigserial PRIMARY KEY,"
    "  task_id bigint NOT NULL REFERENCES tasks(id),"
    "  status text NOT NULL DEFAULT 'running'"
    "    CHECK (status IN ('running','done','cancelled','failed')),"
    "  target text NOT NULL,"
    "  language text NOT NULL,"
    "  generations int NOT NULL CHECK (generations > 0),"
    "  population int NOT NULL CHECK (population > 0),"
    "  seed bigint NOT NULL,"
    "  config jsonb NOT NULL,"
    "  generation int NOT NULL DEFAULT 0,"
    "  ref_artifact text,"
    "  best_candidate_id bigint,"
    "  best_speedup double precision,"
    "  first_speedup double precision,"
    "  reason text,"
    "  created_at timestamptz NOT NULL DEFAULT now(),"
    "  finished_at timestamptz);"

    "CREATE TABLE blobs ("
    "  hash text PRIMARY KEY,"
    "  data bytea NOT NULL,"
    "  created_at timestamptz NOT NULL DEFAULT now());"

    "CREATE TABLE candidates ("
    "  id bigserial PRIMARY KEY,"
    "  run_id bigint NOT NULL REFERENCES runs(id),"
    "  generation int NOT NULL,"
    "  slot int NOT NULL,"
    "  parent_id bigint REFERENCES candidates(id),"
    "  status text NOT NULL DEFAULT 'generating',"
    "  language text NOT NULL,"
    "  prompt text,"
    "  generator text,"
    "  source_hash text,"
    "  artifact_hash text,"
    "  speedup double precision,"
    "  fitness double precision,"
    "  verdict_detail text,"
    "  log text,"
    "  created_at timestamptz NOT NULL DEFAULT now(),"
    "  finished_at timestamptz,"
    "  UNIQUE (run_id, generation, slot));"

    "CREATE TABLE jobs ("
    "  id bigserial PRIMARY KEY,"
    "  run_id bigint REFERENCES runs(id),"
    "  candidate_id bigint REFERENCES candidates(id),"
    "  role text NOT NULL,"
    "  kind text NOT NULL,"
    "  backend text,"
    "  arch text,"
    "  payload jsonb NOT NULL DEFAULT '{}',"
    "  blobs text[] NOT NULL DEFAULT '{}',"
    "  state text NOT NULL DEFAULT 'queued'"
    "    CHECK (state IN ('queued','leased','done','failed')),"
    "  attempts int NOT NULL DEFAULT 0,"
    "  max_attempts int NOT NULL DEFAULT 3,"
    "  lease bigint NOT NULL DEFAULT 0,"
    "  lease_ms int NOT NULL DEFAULT 300000,"
    "  worker text,"
    "  lease_deadline timestamptz,"
    "  reason text,"
    "  result jsonb,"
    "  created_at timestamptz NOT NULL DEFAULT now(),"
    "  updated_at timestamptz NOT NULL DEFAULT now());"
    "CREATE INDEX jobs_queued ON jobs (role, id) WHERE state = 'queued';"
    "CREATE INDEX jobs_leased ON jobs (worker) WHERE state = 'leased';"
    "CREATE INDEX jobs_run ON jobs (run_id);"

    "CREATE TABLE evaluations ("
    "  id bigserial PRIMARY KEY,"
    "  candidate_id bigint NOT NULL REFERENCES candidates(id),"
    "  job_id bigint NOT NULL REFERENCES jobs(id) UNIQUE,"
    "  worker text NOT NULL,"
    "  verdict text NOT NULL,"
    "  correct boolean NOT NULL,"
    "  speedup double precision,"
    "  candidate_ns double precision,"
    "  reference_ns double precision,"
    "  figures jsonb NOT NULL,"
    "  created_at timestamptz NOT NULL DEFAULT now());"

    "CREATE TABLE workers ("
    "  id text PRIMARY KEY,"
    "  role text NOT NULL,"
    "  name text,"
    "  host text,"
    "  capabilities jsonb NOT NULL,"
    "  first_seen timestamptz NOT NULL DEFAULT now(),"
    "  last_seen timestamptz NOT NULL DEFAULT now());",

    /* 2: wake the coordinator when any writer queues jobs, so dispatch
     * does not wait for its once-a-second check. One notification per
     * inserting statement; PostgreSQL folds repeats within a transaction. */
    "CREATE FUNCTION kf_jobs_notify () RETURNS trigger LANGUAGE plpgsql AS $$"
    " BEGIN PERFORM pg_notify('kf_jobs', ''); RETURN NULL; END $$;"
    "CREATE TRIGGER jobs_notify AFTER INSERT ON jobs"
    " FOR EACH STATEMENT EXECUTE FUNCTION kf_jobs_notify ();",

    /* 3: which model wrote each candidate and what it cost; the run's sums
     * are what its budget is checked against. */
    "ALTER TABLE candidates ADD COLUMN model text,"
    "  ADD COLUMN usage jsonb, ADD COLUMN cost_usd double precision;"
    "ALTER TABLE runs ADD COLUMN input_tokens bigint NOT NULL DEFAULT 0,"
    "  ADD COLUMN output_tokens bigint NOT NULL DEFAULT 0,"
    "  ADD COLUMN cost_usd double precision NOT NULL DEFAULT 0;",

    /* 4: behavioural coordinates (memory, algorithm, synchronisation) of
     * each candidate, and the run's MAP-Elites archive: the elite of each
     * occupied cell, only ever a correct candidate. */
    "ALTER TABLE candidates ADD COLUMN coords int[], ADD COLUMN coords_why text;"
    "CREATE TABLE archive_cells ("
    "  run_id bigint NOT NULL REFERENCES runs(id),"
    "  cell int[] NOT NULL,"
    "  candidate_id bigint NOT NULL REFERENCES candidates(id),"
    "  fitness double precision NOT NULL,"
    "  speedup double precision NOT NULL,"
    "  updated_at timestamptz NOT NULL DEFAULT now(),"
    "  PRIMARY KEY (run_id, cell));",

    /* 5: a run with a PyTorch reference (coordinator/kf_reference.c): the
     * candidate-facing task derived from the reference job's manifest
     * (what prompts and evaluate payloads see instead of tasks.spec), the
     * manifest, scalars and PyTorch's own times (the reference_data of its
     * evaluate jobs), and what was accepted with a warning (a degenerate
     * reference the user allowed). */
    "ALTER TABLE runs ADD COLUMN spec jsonb, ADD COLUMN ref_data jsonb,"
    "  ADD COLUMN ref_eager_ns double precision,"
    "  ADD COLUMN ref_compiled_ns double precision,"
    "  ADD COLUMN warnings jsonb NOT NULL DEFAULT '[]';",

    /* 6: the search of docs/search.md. Each candidate records its phase
     * (the main search or a parameter-tuning round), its island, how its
     * parent was selected (strategy, draws, fallback) with the
     * inspirations shown beside it, and the mutation hints its prompt
     * carried. Transitions are the parent->child moves the gradient
     * estimator reads (one per child with coordinates; novel: the child's
     * coordinates were new to the run). Island migrants are elites copied
     * into another island at a migration. The partial index lets dispatch
     * take queued jobs round-robin across runs without sorting them all. */
    "ALTER TABLE candidates"
    "  ADD COLUMN phase text NOT NULL DEFAULT 'search'"
    "    CHECK (phase IN ('search', 'tuning')),"
    "  ADD COLUMN island int NOT NULL DEFAULT 0,"
    "  ADD COLUMN selection jsonb,"
    "  ADD COLUMN inspirations bigint[] NOT NULL DEFAULT '{}',"
    "  ADD COLUMN hints text;"
    "CREATE TABLE transitions ("
    "  child_id bigint PRIMARY KEY REFERENCES candidates(id),"
    "  run_id bigint NOT NULL REFERENCES runs(id),"
    "  parent_id bigint NOT NULL REFERENCES candidates(id),"
    "  parent_coords int[] NOT NULL,"
    "  child_coords int[] NOT NULL,"
    "  parent_fitness double precision NOT NULL,"
    "  child_fitness double precision NOT NULL,"
    "  novel boolean NOT NULL,"
    "  created_at timestamptz NOT NULL DEFAULT now());"
    "CREATE INDEX transitions_run ON transitions (run_id, child_id);"
    "CREATE TABLE island_migrants ("
    "  run_id bigint NOT NULL REFERENCES runs(id),"
    "  island int NOT NULL,"
    "  candidate_id bigint NOT NULL REFERENCES candidates(id),"
    "  generation int NOT NULL,"
    "  created_at timestamptz NOT NULL DEFAULT now(),"
    "  PRIMARY KEY (run_id, island, candidate_id));"
    "CREATE INDEX jobs_queued_run ON jobs (role, run_id, id) WHERE state = 'queued';",

    /* 7: meta-prompt evolution (coordinator/kf_meta.c). A run's prompt
     * versions: the four evolvable sections, numbered per run, each made
     * from its parent by the accepted edits of one meta job; fitness is the
     * best of the kernels written with it, in_archive whether the run's
     * prompt archive still holds it. prompt_edits logs every edit a meta
     * job proposed, accepted or rejected with the reason. meta_rounds
     * counts the meta jobs a run has queued. */
    "CREATE TABLE prompt_versions ("
    "  id bigserial PRIMARY KEY,"
    "  run_id bigint NOT NULL REFERENCES runs(id),"
    "  number int NOT NULL,"
    "  parent_id bigint REFERENCES prompt_versions(id),"
    "  generation int NOT NULL DEFAULT 0,"
    "  sections jsonb NOT NULL,"
    "  edits jsonb NOT NULL DEFAULT '[]',"
    "  meta_job_id bigint UNIQUE REFERENCES jobs(id),"
    "  fitness double precision,"
    "  best_speedup double precision,"
    "  candidates int NOT NULL DEFAULT 0,"
    "  in_archive boolean NOT NULL DEFAULT true,"
    "  created_at timestamptz NOT NULL DEFAULT now(),"
    "  UNIQUE (run_id, number));"
    "CREATE TABLE prompt_edits ("
    "  id bigserial PRIMARY KEY,"
    "  run_id bigint NOT NULL REFERENCES runs(id),"
    "  job_id bigint NOT NULL REFERENCES jobs(id),"
    "  parent_id bigint REFERENCES prompt_versions(id),"
    "  version_id bigint REFERENCES prompt_versions(id),"
    "  section text,"
    "  search text NOT NULL,"
    "  replace text NOT NULL,"
    "  accepted boolean NOT NULL,"
    "  reason text,"
    "  created_at timestamptz NOT NULL DEFAULT now());"
    "CREATE INDEX prompt_edits_job ON prompt_edits (job_id);"
    "ALTER TABLE candidates ADD COLUMN prompt_version_id bigint REFERENCES prompt_versions(id);"
    "CREATE INDEX candidates_prompt_version ON candidates (prompt_version_id);"
    "ALTER TABLE runs ADD COLUMN meta_rounds int NOT NULL DEFAULT 0;",

    /* 8: results too good to count silently (docs/evaluation.md, "The
     * audit"). A correct candidate the evaluator flagged (faster than the
     * measured roofline, or over 10x its reference) keeps the reason and
     * stays out of the run's best and first-correct figures until a person
     * accepts it (kfctl audit); a rejected one leaves the archive too. */
    "ALTER TABLE candidates ADD COLUMN audit_reason text,"
    " ADD COLUMN audit_verdict text CHECK (audit_verdict IN ('accepted', 'rejected'));",

    /* 9: plausibility by physics, then re-verification (coordinator/
     * kf_verify.c, docs/evaluation.md). A correct result the coordinator
     * finds suspicious (past a measured ceiling, or far beyond the run's
     * distribution) is evaluated again before it counts: verify_state
     * 'pending' while that evaluate job runs, then 'verified' (it counts)
     * or 'failed' (held for kfctl audit, audit_reason saying why);
     * verify_reason is why it was suspected, the other columns the
     * re-verification's figures. The job carries the worker that produced
     * the suspicious figure (avoid_worker): dispatch gives it to another
     * exec worker of the same kind when one is connected. */
    "ALTER TABLE candidates"
    "  ADD COLUMN verify_state text CHECK (verify_state IN ('pending', 'verified', 'failed')),"
    "  ADD COLUMN verify_reason text,"
    "  ADD COLUMN verify_speedup double precision,"
    "  ADD COLUMN verify_worker text,"
    "  ADD COLUMN verify_figures jsonb;"
    "ALTER TABLE jobs ADD COLUMN avoid_worker text;"
    "CREATE INDEX jobs_queued_verify ON jobs (role, id)"
    "  WHERE state = 'queued' AND avoid_worker IS NOT NULL;",

    /* 10: multi-fidelity timing (coordinator/kf_fidelity.c, docs/search.md).
     * A candidate's first evaluate job runs a short screen; one near the
     * best is evaluated again with the full protocol before it counts.
     * candidates.fidelity: what its figures are ('screen': a screen, final,
     * never the run's best; 'pending': a screen waiting for its full
     * evaluation; 'full'; NULL: not correct, or evaluated before this);
     * screen_speedup: the screen's figure of one timed in full.
     * evaluations.fidelity names each row's protocol; jobs.fidelity
     * mirrors the payload's, so a job row says which kind of evaluation it
     * is (a first screen, a full one, or, with avoid_worker, a
     * re-verification). */
    "ALTER TABLE candidates"
    "  ADD COLUMN fidelity text CHECK (fidelity IN ('screen', 'pending', 'full')),"
    "  ADD COLUMN screen_speedup double precision;"
    "ALTER TABLE evaluations ADD COLUMN fidelity text CHECK (fidelity IN ('screen', 'full'));"
    "ALTER TABLE jobs ADD COLUMN fidelity text"
    "  GENERATED ALWAYS AS (payload->>'fidelity') STORED;",

    /* 11: lineage memory (coordinator/kf_lineage.c, docs/search.md). The
     * hash of a candidate's source without comments and with white space
     * collapsed, so a source the run has already judged is not compiled
     * and timed again; duplicate_of names the candidate whose verdict a
     * repeat takes (it waits, status 'waiting', while that one is open).
     * Written with IF NOT EXISTS so that it is safe at whatever position
     * it lands. */
    "ALTER TABLE candidates ADD COLUMN IF NOT EXISTS norm_hash text,"
    "  ADD COLUMN IF NOT EXISTS duplicate_of bigint REFERENCES candidates (id);"
    "CREATE INDEX IF NOT EXISTS candidates_norm_hash ON candidates (run_id, norm_hash)"
    "  WHERE norm_hash IS NOT NULL;",

    /* 12: suites (coordinator/kf_suite.c, docs/kfctl.md "Suites"): many
     * problems submitted together, each a run of its own that names its
     * suite, so a suite is as durable as its runs. skipped keeps what the
     * submitter left out and why; suite_problem the path a run came from.
     * Written with IF NOT EXISTS so that it is safe at whatever position
     * it lands. */
    "CREATE TABLE IF NOT EXISTS suites ("
    "  id bigserial PRIMARY KEY,"
    "  name text NOT NULL,"
    "  skipped jsonb NOT NULL DEFAULT '[]',"
    "  created_at timestamptz NOT NULL DEFAULT now());"
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS suite_id bigint REFERENCES suites (id),"
    "  ADD COLUMN IF NOT EXISTS suite_problem text;"
    "CREATE INDEX IF NOT EXISTS runs_suite ON runs (suite_id) WHERE suite_id IS NOT NULL;",

    /* 13: a third timing of a would-be best whose first two disagree
     * (coordinator/kf_verify.c, docs/evaluation.md): its figure. */
    "ALTER TABLE candidates ADD COLUMN IF NOT EXISTS verify_third double precision;",

    /* 14: a candidate's jobs found without scanning its run's (the
     * lineage's at-defaults reading, kf_search_tuned_coords). */
    "CREATE INDEX IF NOT EXISTS jobs_candidate ON jobs (candidate_id)"
    "  WHERE candidate_id IS NOT NULL;",
};

#define S_LOCK_KEY "7294810364"   /* arbitrary; names our advisory lock */

int
kf_db_migrate (kf_db_t *self)
{
    if (kf_db_exec (self, "SELECT pg_advisory_lock(" S_LOCK_KEY ")", 0, NULL) < 0)
        return -1;
    int rc = -1;
    if (kf_db_exec (self,
                    "CREATE TABLE IF NOT EXISTS kf_schema ("
                    " version int PRIMARY KEY,"
                    " applied_at timestamptz NOT NULL DEFAULT now())",
                    0, NULL) < 0)
        goto done;
    bool failed;
    json_t *row = kf_db_row (self, "SELECT coalesce(max(version), 0) AS v FROM kf_schema",
                             0, NULL, &failed);
    if (failed)
        goto done;
    int have = (int) json_integer_value (json_object_get (row, "v"));
    json_decref (row);
    int total = (int) (sizeof s_migrations / sizeof s_migrations[0]);
    for (int v = have + 1; v <= total; v++) {
        char num[16];
        snprintf (num, sizeof num, "%d", v);
        const char *params[1] = { num };
        if (kf_db_begin (self) || kf_db_exec_script (self, s_migrations[v - 1])
            || kf_db_exec (self, "INSERT INTO kf_schema (version) VALUES ($1)",
                           1, params) < 0
            || kf_db_commit (self)) {
            kf_error ("migration %d failed: %s", v, kf_db_error (self));
            kf_db_rollback (self);
            goto done;
        }
        kf_info ("applied schema migration %d", v);
    }
    rc = 0;
done:
    kf_db_exec (self, "SELECT pg_advisory_unlock(" S_LOCK_KEY ")", 0, NULL);
    return rc;
}
