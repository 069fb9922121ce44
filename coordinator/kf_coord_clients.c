/*  kf_coord_clients.c - what clients and the status endpoint ask: SUBMIT
 *  (the task and the run's settings checked before anything is stored),
 *  CANCEL, DRAIN, AUDIT, STATUS and WORKERS, RUNS, SHOW and BEST. Each
 *  request is answered on its own, outside the pass's transaction.
 */
#include "kf_coord_export.h"
#include "kf_coord_profile.h"
#include "kf_coord_fit.h"
#include "kf_coord_source.h"
#include "kf_coord_internal.h"
#include "kf_log.h"
#include "kf_meta.h"
#include "kf_models.h"
#include "kf_reference.h"
#include "kf_str.h"
#include "kf_suite.h"
#include "kf_task.h"
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

/* The counters' names in STATUS, in the order of their enum. */
static const char *s_counter_names[KF_COORD_N] = {
    "received", "sent", "late_results", "requeued", "jobs_done", "jobs_failed",
    "dispatched", "batches", "db_errors", "handed_back", "refused_results",
    "held_results_dropped", "worker_errors", "dispatch_failed"
};

#define S_RUN_HEAD \
    "SELECT r.id, t.name AS task_name, r.status, r.target, r.generation," \
    " r.generations, r.population, r.seed," \
    " (SELECT count(*) FROM candidates c WHERE c.run_id = r.id" \
    "  AND c.finished_at IS NOT NULL) AS done," \
    /* The main phase's plan, or every candidate once tuning rounds add more. */ \
    " greatest(r.generations * r.population," \
    "  (SELECT count(*) FROM candidates c WHERE c.run_id = r.id)) AS total," \
    " (SELECT count(*) FROM candidates c WHERE c.run_id = r.id" \
    "  AND c.audit_reason IS NOT NULL AND c.audit_verdict IS NULL) AS held_for_audit," \
    " (SELECT count(*) FROM candidates c WHERE c.run_id = r.id" \
    "  AND c.verify_state = 'pending') AS verifying," \
    /* Multi-fidelity timing (kf_fidelity.c): screen figures only, and \
     * screens waiting for their full-protocol evaluation. */ \
    " (SELECT count(*) FROM candidates c WHERE c.run_id = r.id" \
    "  AND c.fidelity = 'screen') AS screened_out," \
    " (SELECT count(*) FROM candidates c WHERE c.run_id = r.id" \
    "  AND c.fidelity = 'pending') AS full_pending," \
    " r.best_speedup, r.first_speedup," \
    " r.best_candidate_id, r.reason, r.input_tokens, r.output_tokens, r.cost_usd," \
    " r.ref_eager_ns, r.ref_compiled_ns, r.warnings,"   /* kf_reference.c */ \
    " r.suite_id, r.suite_problem,"                     /* kf_suite.c */
/* The best candidate's median and the reference's (its last correct
 * evaluation): the absolute times behind best_speedup. STATUS leaves them
 * out: it must answer while the evaluations table is locked
 * (test_metrics_hang), and it shows no times. */
/* A re-verified candidate that counts at its second figure has that
 * timing as its latest evaluation (kf_verify.c), so its medians follow
 * the counted figure (round 16: 341.23x beside the first timing's 2103.5
 * us, which gave 387.35x). */
#define S_RUN_TIMES \
    " (SELECT e.candidate_ns FROM evaluations e WHERE e.candidate_id = r.best_candidate_id" \
    "  AND e.correct ORDER BY e.id DESC LIMIT 1) AS best_ns," \
    " (SELECT e.reference_ns FROM evaluations e WHERE e.candidate_id = r.best_candidate_id" \
    "  AND e.correct ORDER BY e.id DESC LIMIT 1) AS reference_ns,"
#define S_RUN_NO_TIMES " NULL::float8 AS best_ns, NULL::float8 AS reference_ns,"
#define S_RUN_TAIL \
    /* Progress (s_run_progress): candidates open now, the best figure \
     * still waiting for its re-verification or full-protocol timing, the \
     * seconds since submission, and the counts the total is made of. */ \
    " (SELECT count(*) FROM candidates c WHERE c.run_id = r.id" \
    "  AND c.finished_at IS NULL) AS in_flight," \
    " (SELECT max(c.speedup) FROM candidates c WHERE c.run_id = r.id AND c.status = 'correct'" \
    "  AND (c.verify_state = 'pending' OR c.fidelity = 'pending')) AS pending_best," \
    " extract(epoch FROM coalesce(r.finished_at, now()) - r.created_at)::float8 AS elapsed_s," \
    " (SELECT count(*) FROM candidates c WHERE c.run_id = r.id" \
    "  AND c.generation < r.generations) AS p_main," \
    " (SELECT count(*) FROM candidates c WHERE c.run_id = r.id" \
    "  AND c.generation >= r.generations) AS p_tuning," \
    " (SELECT count(DISTINCT c.generation) FROM candidates c WHERE c.run_id = r.id" \
    "  AND c.generation >= r.generations) AS p_rounds," \
    " r.config->'tuning' AS p_cfg_tuning, r.config->'tuning_rounds' AS p_cfg_rounds," \
    " r.config->'max_in_flight' AS p_cfg_in_flight," \
    " " KF_DB_ISO ("r.created_at") " AS created_at," \
    " " KF_DB_ISO ("r.finished_at") " AS finished_at" \
    " FROM runs r JOIN tasks t ON t.id = r.task_id"

static const char *S_RUN_COLUMNS = S_RUN_HEAD S_RUN_TIMES S_RUN_TAIL;
static const char *S_RUN_COLUMNS_STATUS = S_RUN_HEAD S_RUN_NO_TIMES S_RUN_TAIL;

/* The tuning rounds a run makes and the candidates each may have, from
 * its config's values (NULL: the search default; docs/search.md, "Tuning
 * rounds"): a round plans one candidate per elite, at most population and
 * at most max_in_flight of them. */
static void
s_tuning_plan (kf_coord_t *self, json_t *tuning, json_t *rounds, json_t *in_flight,
               long long population, long long *n_rounds, long long *per_round)
{
    if (!tuning || json_is_null (tuning))
        tuning = kf_search_default (&self->search, "tuning");
    if (!rounds || json_is_null (rounds))
        rounds = kf_search_default (&self->search, "tuning_rounds");
    if (!in_flight || json_is_null (in_flight))
        in_flight = kf_search_default (&self->search, "max_in_flight");
    long long cap = json_integer_value (in_flight);
    if (cap <= 0 || cap > population)
        cap = population;
    *n_rounds = json_is_true (tuning) ? (long long) json_integer_value (rounds) : 0;
    *per_round = cap;
}

/* Fills a run object's progress from the counts S_RUN_COLUMNS adds, and
 * drops those counts: `total` is every candidate the run has planned and
 * will still plan (the main phase's generations x population unless it
 * stopped early, each tuning round planned so far as it is, each round to
 * come at its most), or, once the run has ended, every candidate it made;
 * never fewer than it has. `phase` is `generation` or `tuning`,
 * `tuning_round` the round now (1-based, 0 in the main phase) of
 * `tuning_rounds`. */
static void
s_run_progress (kf_coord_t *self, json_t *run)
{
    if (!json_is_object (run))
        return;
    long long generations = json_integer_value (json_object_get (run, "generations"));
    long long population = json_integer_value (json_object_get (run, "population"));
    long long main_n = json_integer_value (json_object_get (run, "p_main"));
    long long tuning_n = json_integer_value (json_object_get (run, "p_tuning"));
    long long rounds_n = json_integer_value (json_object_get (run, "p_rounds"));
    long long done = json_integer_value (json_object_get (run, "done"));
    long long n_rounds, per_round;
    s_tuning_plan (self, json_object_get (run, "p_cfg_tuning"),
                   json_object_get (run, "p_cfg_rounds"),
                   json_object_get (run, "p_cfg_in_flight"), population, &n_rounds, &per_round);
    const char *status = json_string_value (json_object_get (run, "status"));
    long long total = main_n + tuning_n;
    if (status && !strcmp (status, "running")) {
        if (!tuning_n && main_n < generations * population)
            total = generations * population;
        if (rounds_n < n_rounds)
            total += (n_rounds - rounds_n) * per_round;
    }
    if (total < done)
        total = done;
    if (n_rounds < rounds_n)
        n_rounds = rounds_n;
    json_object_set_new (run, "total", json_integer (total));
    json_object_set_new (run, "phase", json_string (tuning_n ? "tuning" : "generation"));
    json_object_set_new (run, "tuning_round", json_integer (tuning_n ? rounds_n : 0));
    json_object_set_new (run, "tuning_rounds", json_integer (n_rounds));
    static const char *hidden[] = { "p_main", "p_tuning", "p_rounds", "p_cfg_tuning",
                                    "p_cfg_rounds", "p_cfg_in_flight" };
    for (size_t i = 0; i < sizeof hidden / sizeof hidden[0]; i++)
        json_object_del (run, hidden[i]);
    kf_coord_fit_annotate (self, run);   /* "waiting": no worker can take its jobs */
}

static void
s_runs_progress (kf_coord_t *self, json_t *runs)
{
    size_t i;
    json_t *run;
    json_array_foreach (runs, i, run)
        s_run_progress (self, run);
}

static json_t *
s_run_object (kf_coord_t *self, int64_t run_id)
{
    char sql[4096], id[24];
    snprintf (sql, sizeof sql, "%s WHERE r.id = $1", S_RUN_COLUMNS);
    const char *params[1] = { S_I64 (id, run_id) };
    json_t *run = kf_db_row (self->db, sql, 1, params, NULL);
    s_run_progress (self, run);
    return run;
}

/* Checks a target name: host | cuda | level-zero | opencl, optionally ":arch". */
static bool
s_target_ok (const char *target)
{
    static const char *backends[] = { "host", "cuda", "level-zero", "opencl" };
    for (size_t i = 0; i < 4; i++) {
        size_t n = strlen (backends[i]);
        if (!strncmp (target, backends[i], n)
            && (target[n] == 0
                || (target[n] == ':' && target[n + 1]
                    && strlen (target + n + 1) < 32
                    && strspn (target + n + 1, "abcdefghijklmnopqrstuvwxyz0123456789_.-")
                           == strlen (target + n + 1))))
            return true;
    }
    return false;
}

/* Checks a number field of CONFIG: absent is fine, else within [LO, HI]. */
static int
s_number_in (json_t *config, const char *key, double lo, double hi, char **why)
{
    json_t *v = json_object_get (config, key);
    if (!v)
        return 0;
    if (!json_is_number (v) || json_number_value (v) < lo || json_number_value (v) > hi)
        return kf_fail (why, "config.%s must be a number in [%g, %g]", key, lo, hi);
    return 0;
}

/* Checks an integer field of CONFIG: absent is fine, else within LO..HI
 * (NOTE: what it counts, or ""). */
static int
s_int_in (json_t *config, const char *key, long long lo, long long hi, const char *note,
          char **why)
{
    json_t *v = json_object_get (config, key);
    if (v && (!json_is_integer (v) || json_integer_value (v) < lo || json_integer_value (v) > hi))
        return kf_fail (why, "config.%s must be an integer in %lld..%lld%s", key, lo, hi, note);
    return 0;
}

/* The generator settings of a run from its SUBMIT config: the model spec
 * as an ensemble, the first generation's model, sampling settings (the
 * paper's Table 6 by default) and the budget. NULL with *WHY when bad. */
static json_t *
s_generator_config (json_t *config, char **why)
{
    const char *spec = json_string_value (json_object_get (config, "model"));
    json_t *models = kf_models_parse (spec ? spec : "offline", why);
    if (!models)
        return NULL;
    /* Sampling settings left out take the search defaults at run start
     * (kf_search.c, coordinator/search-defaults.json). */
    json_t *out = json_pack ("{s:o}", "models", models);
    const char *first = json_string_value (json_object_get (config, "first_model"));
    const char *meta = json_string_value (json_object_get (config, "meta_model"));
    json_t *budget = json_object_get (config, "budget");
    if ((first && kf_models_check (first, why))
        || (meta && kf_models_check (meta, why))
        || s_number_in (config, "temperature", 0, 2, why)
        || s_number_in (config, "top_p", 0, 1, why)
        || s_number_in (config, "max_tokens", 1, 1000000, why)
        || (budget && (!json_is_object (budget)
                       || s_number_in (budget, "tokens", 1, 1e15, why)
                       || s_number_in (budget, "usd", 0.000001, 1e9, why)))
        || s_int_in (config, "archive_bins", 1, 4, "", why)
        || s_int_in (config, "tune", 1, 16, " (kf-tune points per candidate)", why)) {
        if (budget && !json_is_object (budget) && !*why)
            kf_fail (why, "config.budget must be an object {tokens, usd}");
        json_decref (out);
        return NULL;
    }
    static const char *copied[] = { "first_model", "temperature", "top_p", "max_tokens", "budget",
                                    "archive_bins", "tune", "meta_model" };
    for (size_t i = 0; i < sizeof copied / sizeof copied[0]; i++)
        if (json_object_get (config, copied[i]))
            json_object_set (out, copied[i], json_object_get (config, copied[i]));
    if (kf_search_config_check (config, out, why)) {
        json_decref (out);
        return NULL;
    }
    return out;
}

static void
s_on_submit (kf_coord_t *self, zsock_t *sock, zframe_t *route, kf_msg_t *msg)
{
    json_t *task = json_object_get (msg->body, "task");
    json_t *config = json_object_get (msg->body, "config");
    char *err = NULL;
    if (kf_task_validate (task, &err)) {
        kf_coord_reply_error (self, sock, route, "bad-request", err ? err : "invalid task");
        free (err);
        return;
    }
    const char *target = json_string_value (json_object_get (config, "target"));
    if (!target)
        target = "host";
    json_int_t generations = json_integer_value (json_object_get (config, "generations"));
    json_int_t population = json_integer_value (json_object_get (config, "population"));
    json_t *seed_v = json_object_get (config, "seed");
    json_int_t seed = json_is_integer (seed_v) ? json_integer_value (seed_v)
                                               : (json_int_t) (zclock_time () & 0xffffff);
    if (!generations)
        generations = json_integer_value (kf_search_default (&self->search, "generations"));
    if (!population)
        population = json_integer_value (kf_search_default (&self->search, "population"));
    if (!s_target_ok (target) || generations < 1 || generations > 100000
        || population < 1 || population > 10000 || seed < 0) {
        kf_coord_reply_error (self, sock, route, "bad-request",
                              "config: target must be host, cuda, level-zero or opencl (optionally"
                              " :arch); generations 1..100000; population 1..10000; seed >= 0");
        return;
    }
    json_t *timing = json_object_get (config, "timing");
    if (timing && !json_is_object (timing)) {
        kf_coord_reply_error (self, sock, route, "bad-request", "config.timing must be an object");
        return;
    }
    char *why = NULL;
    int suite_rc = kf_suite_check (self->db, msg->body, &why);   /* suite, suite_id, problem */
    if (suite_rc) {
        kf_coord_reply_error (self, sock, route, suite_rc > 0 ? "bad-request" : "unavailable",
                              suite_rc > 0 && why ? why : "database unavailable");
        free (why);
        return;
    }
    json_t *generator = s_generator_config (config, &why);
    if (generator && kf_coord_fit_models (self, generator, &why)) {   /* kf_coord_fit.c */
        json_decref (generator);
        generator = NULL;
    }
    if (!generator) {
        kf_coord_reply_error (self, sock, route, "bad-request",
                              why ? why : "bad generator settings");
        free (why);
        return;
    }
    const char *backend_end = strchr (target, ':');
    size_t blen = backend_end ? (size_t) (backend_end - target) : strlen (target);
    const char *language = !strncmp (target, "cuda", blen) ? "cuda"
                           : !strncmp (target, "level-zero", blen)
                                 || !strncmp (target, "opencl", blen) ? "opencl" : "c";
    char hash[65];
    kf_task_hash (task, hash);
    char *spec = json_dumps (task, JSON_COMPACT | JSON_SORT_KEYS);
    json_t *stored_config = json_pack ("{s:s, s:I, s:I, s:I}", "target", target,
                                       "generations", generations, "population",
                                       population, "seed", seed);
    if (timing)
        json_object_set (stored_config, "timing", timing);
    if (json_is_true (json_object_get (config, "allow_degenerate")))   /* kf_reference.c */
        json_object_set_new (stored_config, "allow_degenerate", json_true ());
    json_object_update (stored_config, generator);
    json_decref (generator);
    char *config_text = json_dumps (stored_config, JSON_COMPACT);
    json_decref (stored_config);
    const char *name = json_string_value (json_object_get (task, "name"));
    char g[24], p[24], s[24];
    const char *tparams[3] = { name ? name : "task", hash, spec };
    int64_t run_id = 0, suite_id = 0;
    if (kf_db_begin (self->db) == 0) {
        json_t *trow = kf_db_row (self->db,
                                  "INSERT INTO tasks (name, hash, spec) VALUES ($1, $2, $3)"
                                  " ON CONFLICT (hash) DO UPDATE SET name = EXCLUDED.name"
                                  " RETURNING id",
                                  3, tparams, NULL);
        if (trow) {
            char tid[24];
            const char *rparams[7] = {
                S_I64 (tid, json_integer_value (json_object_get (trow, "id"))),
                target, language, S_I64 (g, generations), S_I64 (p, population),
                S_I64 (s, seed), config_text };
            json_t *rrow = kf_db_row (self->db,
                                      "INSERT INTO runs (task_id, target, language,"
                                      " generations, population, seed, config)"
                                      " VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                                      7, rparams, NULL);
            run_id = json_integer_value (json_object_get (rrow, "id"));
            json_decref (rrow);
        }
        json_decref (trow);
        if (run_id && kf_suite_join (self->db, msg->body, run_id, &suite_id) == 0
            && kf_search_start_run (&self->search, run_id) == 0
            && kf_db_commit (self->db) == 0)
            kf_coord_publish_events (self);
        else {
            run_id = 0;
            kf_db_rollback (self->db);
            kf_coord_truncate_events (self, 0);
        }
    }
    free (spec);
    free (config_text);
    if (!run_id) {
        kf_coord_reply_error (self, sock, route, "unavailable",
                              "the database did not accept the run");
        return;
    }
    kf_info ("run %lld submitted: task %s, target %s, %lld x %lld", (long long) run_id,
             name, target, (long long) generations, (long long) population);
    self->dispatch_needed = true;
    /* What the run will make at most: the main phase and its tuning
     * rounds (fewer when it stops early or the archive has fewer elites). */
    long long n_rounds, per_round;
    s_tuning_plan (self, json_object_get (config, "tuning"),
                   json_object_get (config, "tuning_rounds"),
                   json_object_get (config, "max_in_flight"), population, &n_rounds, &per_round);
    json_t *submitted = json_pack ("{s:I, s:I, s:I, s:I, s:I, s:I}", "run_id",
                                   (json_int_t) run_id, "candidates",
                                   (json_int_t) (generations * population + n_rounds * per_round),
                                   "generations", generations, "population", population,
                                   "tuning_rounds", (json_int_t) n_rounds,
                                   "tuning_candidates", (json_int_t) per_round);
    if (suite_id)
        json_object_set_new (submitted, "suite_id", json_integer (suite_id));
    char *no_worker = kf_coord_fit_target (self, target,   /* said now, not by silence */
                                           kf_reference_is_pytorch (task));
    if (no_worker)
        json_object_set_new (submitted, "warnings", json_pack ("[s]", no_worker));
    free (no_worker);
    kf_coord_send (self, sock, route, "SUBMITTED", submitted);
}

/* SUITE {suite_id}: the suite with its runs (kf_suite.h); SUITES: every
 * suite with its runs counted by status. */
static void
s_on_suite (kf_coord_t *self, zsock_t *sock, zframe_t *route, kf_msg_t *msg)
{
    if (!strcmp (msg->type, "SUITES")) {
        json_t *suites = kf_suite_list (self->db);
        if (suites)
            kf_coord_send (self, sock, route, "SUITES", json_pack ("{s:o}", "suites", suites));
        else
            kf_coord_reply_error (self, sock, route, "unavailable", "database unavailable");
        return;
    }
    bool failed = false;
    json_t *body = kf_suite_show (self->db, kf_msg_int (msg, "suite_id", 0), S_RUN_COLUMNS,
                                  &failed);
    if (!body) {
        kf_coord_reply_missing (self, sock, route, failed, "no suite with that id");
        return;
    }
    s_runs_progress (self, json_object_get (body, "runs"));
    kf_coord_send (self, sock, route, "SUITE", body);
}

static void
s_on_cancel (kf_coord_t *self, zsock_t *sock, zframe_t *route, int64_t run_id)
{
    char id[24];
    const char *params[1] = { S_I64 (id, run_id) };
    long n = -1;
    if (kf_db_begin (self->db) == 0) {
        n = kf_db_exec (self->db,
                        "UPDATE runs SET status = 'cancelled', reason = 'cancelled by user',"
                        " finished_at = now() WHERE id = $1 AND status = 'running'",
                        1, params);
        if (n > 0)
            kf_db_exec (self->db,
                        "UPDATE jobs SET state = 'failed', reason = 'run cancelled',"
                        " updated_at = now() WHERE run_id = $1"
                        " AND state IN ('queued', 'leased')",
                        1, params);
        if (kf_db_commit (self->db))
            n = -1;
    }
    if (n < 0)
        kf_coord_reply_error (self, sock, route, "unavailable", "database unavailable");
    else if (n == 0)
        kf_coord_reply_error (self, sock, route, "not-found", "no running run with that id");
    else {
        //  What its plans parsed is of no more use (kf_search_idea_cache.h).
        kf_search_idea_cache_drop (self->search.idea_cache, run_id);
        json_t *ev = json_pack ("{s:I, s:s, s:s, s:s}", "run_id", (json_int_t) run_id,
                                "event", "finished", "status", "cancelled", "reason",
                                "cancelled by user");
        char topic[48];
        snprintf (topic, sizeof topic, "run/%lld/", (long long) run_id);
        kf_msg_t *m = kf_msg_new ("EVENT", ev);
        kf_msg_send (&m, self->events, NULL, topic);
        kf_coord_send (self, sock, route, "CANCELLED",
                       json_pack ("{s:I}", "run_id", (json_int_t) run_id));
    }
}

/* DRAIN {worker_id, resume}: an operator stops (or resumes) giving a
 * worker new jobs; the ones it holds run to the end. Remembered by id in
 * memory, so it holds across the worker's reconnects but not across a
 * coordinator restart. */
static void
s_on_drain (kf_coord_t *self, zsock_t *sock, zframe_t *route, kf_msg_t *msg)
{
    const char *id = kf_msg_str (msg, "worker_id");
    bool resume = json_is_true (json_object_get (msg->body, "resume"));
    kf_coord_worker_t *w = zhashx_lookup (self->by_id, id);
    if (!w) {
        kf_coord_reply_error (self, sock, route, "not-found", "no connected worker with that id");
        return;
    }
    if (resume) {
        zhashx_delete (self->drained, id);
        w->draining = false;
        self->dispatch_needed = true;
        kf_info ("worker %s resumed by an operator", id);
    }
    else {
        zhashx_update (self->drained, id, self);   /* a set: the value is unused */
        w->draining = true;
        kf_info ("worker %s drained by an operator; %zu job(s) to finish", id,
                 json_array_size (w->jobs));
    }
    kf_coord_send (self, sock, route, "DRAINING",
                   json_pack ("{s:s, s:b, s:O}", "worker_id", id, "draining", w->draining,
                       "jobs", w->jobs));
}

/* AUDIT {candidate_id, verdict: "accept"|"reject"}: a person's word on a
 * result the evaluator flagged (kf_search_audit). */
static void
s_on_audit (kf_coord_t *self, zsock_t *sock, zframe_t *route, kf_msg_t *msg)
{
    int64_t cand = kf_msg_int (msg, "candidate_id", 0);
    const char *verdict = kf_msg_str (msg, "verdict");
    bool accept = !strcmp (verdict, "accept");
    if (!accept && strcmp (verdict, "reject")) {
        kf_coord_reply_error (self, sock, route, "bad-request", "verdict must be accept or reject");
        return;
    }
    json_t *out = NULL;
    int rc = kf_db_begin (self->db) == 0 ? kf_search_audit (&self->search, cand, accept, &out)
                                         : -1;
    if (rc == 0 && kf_db_commit (self->db) == 0) {
        kf_coord_publish_events (self);
        kf_info ("candidate %lld %s after audit by an operator", (long long) cand,
                 accept ? "accepted" : "rejected");
        kf_coord_send (self, sock, route, "AUDITED", out);
        return;
    }
    json_decref (out);
    kf_db_rollback (self->db);
    kf_coord_truncate_events (self, 0);
    if (rc == 1)
        kf_coord_reply_error (self, sock, route, "not-found",
                              "no candidate with that id, or it was not flagged for audit");
    else
        kf_coord_reply_error (self, sock, route, "unavailable", "database unavailable");
}

static json_t *
s_workers_array (kf_coord_t *self)
{
    json_t *out = json_array ();
    int64_t now = zclock_mono ();
    for (kf_coord_worker_t *w = zhashx_first (self->by_id); w; w = zhashx_next (self->by_id))
        json_array_append_new (
            out, json_pack ("{s:s, s:s, s:s, s:s, s:O, s:i, s:O, s:b, s:b, s:I}", "id",
                            w->id, "role", w->role, "name", w->name, "host", w->host,
                            "capabilities", w->caps, "credits", w->credits, "jobs",
                            w->jobs, "draining", w->draining, "drained",
                            zhashx_lookup (self->drained, w->id) != NULL,
                            "last_heartbeat_ms_ago", (json_int_t) (now - w->last_heard)));
    return out;
}

static json_t *
s_status (kf_coord_t *self)
{
    json_t *counters = json_object ();
    for (int i = 0; i < KF_COORD_N; i++)
        json_object_set_new (counters, s_counter_names[i], json_integer (self->counters[i]));
    for (int i = KF_PROTO_MALFORMED; i <= KF_PROTO_UNKNOWN_TYPE; i++)
        json_object_set_new (counters, kf_proto_rc_name (i), json_integer (self->errors[i]));
    json_object_set_new (counters, "db_statements",
                         json_integer (kf_db_statements (self->db)));
    json_object_set_new (counters, "db_prepared", json_integer (kf_db_prepared (self->db)));
    json_object_set_new (counters, "metrics_refused",
                         json_integer (self->metrics ? kf_metrics_refused (self->metrics) : 0));
    json_object_set_new (counters, "auth_denied",
                         json_integer (self->auth ? kf_auth_denied (self->auth) : 0));
    json_t *status = json_pack ("{s:o, s:o, s:I, s:i}", "workers", s_workers_array (self),
                                "counters", counters, "uptime_s",
                                (json_int_t) ((zclock_mono () - self->started) / 1000),
                                "version", KF_PROTO_VERSION);
    json_t *queues = kf_db_query (self->db,
                                  "SELECT role, count(*) FILTER (WHERE state = 'queued') AS queued,"
                                  " count(*) FILTER (WHERE state = 'leased') AS leased"
                                  " FROM jobs WHERE state IN ('queued', 'leased') GROUP BY role",
                                  0, NULL);
    char sql[4096];
    snprintf (sql, sizeof sql,
              "%s WHERE r.status = 'running' OR r.id IN"
              " (SELECT id FROM runs ORDER BY id DESC LIMIT 10) ORDER BY r.id",
              S_RUN_COLUMNS_STATUS);
    json_t *runs = queues ? kf_db_query (self->db, sql, 0, NULL) : NULL;
    s_runs_progress (self, runs);
    json_t *qobj = json_object ();
    size_t i;
    json_t *row;
    json_array_foreach (queues, i, row)
        json_object_set (qobj, json_string_value (json_object_get (row, "role")), row);
    json_object_set_new (status, "queues", qobj);
    json_object_set_new (status, "runs", runs ? runs : json_array ());
    json_object_set_new (status, "database",
                         json_string (queues && runs ? "ok" : "unavailable"));
    if (self->auth)
        json_object_set_new (status, "auth", kf_auth_status (self->auth));
    json_decref (queues);
    return status;
}

/* What SHOW adds when asked with `report: true` (kfctl report -o
 * FILE.html), and only then, since followers poll SHOW every second:
 * `lineage`, the best kernel's chain of parents (best first, at most 64
 * steps) with each source as hex, since a source is bytes and need not be
 * UTF-8 (at most 256 KiB each); and `stages`, the run's jobs by kind with
 * the seconds from queued to finished. The jobs table keeps no lease
 * time, so only a generate job's own share (the gateway's latency_ms) can
 * be told from its wait in the queue. */
static void
s_show_report (kf_coord_t *self, json_t *body, const char *const *params)
{
    json_t *lineage = kf_db_query (
        self->db,
        "WITH RECURSIVE chain (id, parent_id, depth) AS ("
        " SELECT c.id, c.parent_id, 0 FROM runs r JOIN candidates c"
        "  ON c.id = r.best_candidate_id WHERE r.id = $1"
        " UNION ALL SELECT p.id, p.parent_id, chain.depth + 1 FROM chain"
        "  JOIN candidates p ON p.id = chain.parent_id WHERE chain.depth < 63)"
        " SELECT chain.id, chain.parent_id, chain.depth,"
        " encode(substring(b.data FROM 1 FOR 262144), 'hex') AS source_hex"
        " FROM chain JOIN candidates c ON c.id = chain.id"
        " LEFT JOIN blobs b ON b.hash = c.source_hash ORDER BY chain.depth",
        1, params);
    json_t *stages = kf_db_query (
        self->db,
        "SELECT kind, count(*) AS jobs,"
        " count(*) FILTER (WHERE state = 'done') AS done,"
        " count(*) FILTER (WHERE state = 'failed') AS failed,"
        " coalesce(sum(extract(epoch FROM updated_at - created_at))"
        "  FILTER (WHERE state IN ('done', 'failed')), 0)::float8 AS total_s,"
        " (sum(CASE WHEN jsonb_typeof(result->'latency_ms') = 'number'"
        "  THEN (result->>'latency_ms')::float8 END) / 1000)::float8 AS work_s"
        " FROM jobs WHERE run_id = $1 GROUP BY kind ORDER BY min(id)",
        1, params);
    json_object_set_new (body, "lineage", lineage ? lineage : json_array ());
    json_object_set_new (body, "stages", stages ? stages : json_array ());
}

/* The requests answered by a handler of their own, by type. */
static const struct {
    const char *type;
    void (*handler) (kf_coord_t *self, zsock_t *sock, zframe_t *route, kf_msg_t *msg);
} s_handlers[] = {
    { "SUBMIT", s_on_submit },
    { "DRAIN", s_on_drain },
    { "AUDIT", s_on_audit },
    { "EXPORT", kf_coord_on_export },
    { "PROFILE_MODEL", kf_coord_on_profile_model },
    { "PROFILE_STATE", kf_coord_on_profile_state },
    { "SOURCE", kf_coord_on_source },   /* kfctl source: any candidate */
    { "SUITE", s_on_suite },
    { "SUITES", s_on_suite },
};

void
kf_coord_on_client_message (kf_coord_t *self, zsock_t *sock, zframe_t *route, kf_msg_t *msg)
{
    const char *type = msg->type;
    int64_t run_id = kf_msg_int (msg, "run_id", 0);
    for (size_t k = 0; k < sizeof s_handlers / sizeof s_handlers[0]; k++)
        if (!strcmp (type, s_handlers[k].type)) {
            s_handlers[k].handler (self, sock, route, msg);
            return;
        }
    if (!strcmp (type, "STATUS"))
        kf_coord_send (self, sock, route, "STATUS", s_status (self));
    else if (!strcmp (type, "WORKERS"))
        kf_coord_send (self, sock, route, "WORKERS",
                       json_pack ("{s:o}", "workers", s_workers_array (self)));
    else if (!strcmp (type, "CANCEL"))
        s_on_cancel (self, sock, route, run_id);
    else if (!strcmp (type, "RUNS")) {
        char sql[4096];
        snprintf (sql, sizeof sql, "%s ORDER BY r.id", S_RUN_COLUMNS);
        json_t *runs = kf_db_query (self->db, sql, 0, NULL);
        s_runs_progress (self, runs);
        if (runs)
            kf_coord_send (self, sock, route, "RUNS", json_pack ("{s:o}", "runs", runs));
        else
            kf_coord_reply_error (self, sock, route, "unavailable", "database unavailable");
    }
    else if (!strcmp (type, "SHOW") || !strcmp (type, "BEST")) {
        json_t *run = s_run_object (self, run_id);
        if (!run) {
            kf_coord_reply_error (self, sock, route, "not-found", "no run with that id");
            return;
        }
        char id[24];
        const char *params[1] = { S_I64 (id, run_id) };
        if (!strcmp (type, "SHOW")) {
            json_t *cands = kf_db_query (
                self->db,
                "SELECT c.id, c.generation, c.slot, c.parent_id, c.status, c.language, c.speedup,"
                " c.fitness, c.generator, c.model, c.cost_usd, c.coords::text AS coords,"
                " c.verdict_detail, c.audit_reason, c.audit_verdict, c.verify_state,"
                " c.verify_reason, c.verify_speedup, c.fidelity, c.screen_speedup,"
                /* the absolute times behind the speedup (its last evaluation,
                 * a correct one first): medians and p10-p90, in ns */
                " e.candidate_ns, e.reference_ns,"
                " (e.figures->'candidate'->>'p10_ns')::float8 AS candidate_p10_ns,"
                " (e.figures->'candidate'->>'p90_ns')::float8 AS candidate_p90_ns,"
                " (e.figures->'reference'->>'p10_ns')::float8 AS reference_p10_ns,"
                " (e.figures->'reference'->>'p90_ns')::float8 AS reference_p90_ns,"
                /* round 17: a tuning screen is the best of its sweep's
                 * points (kfctl says so beside a screen figure) */
                " c.phase, e.figures->'tuning'->'screened' AS screen_points"
                " FROM candidates c LEFT JOIN LATERAL (SELECT candidate_ns, reference_ns,"
                "  figures FROM evaluations WHERE candidate_id = c.id"
                "  ORDER BY correct DESC, id DESC LIMIT 1) e ON true"
                " WHERE c.run_id = $1"
                " ORDER BY c.generation, c.slot",
                1, params);
            json_t *cells = kf_db_query (
                self->db,
                "SELECT a.cell::text AS cell, a.candidate_id, a.speedup, a.fitness"
                " FROM archive_cells a WHERE a.run_id = $1 ORDER BY a.cell",
                1, params);
            json_t *models = kf_db_query (
                self->db,
                "SELECT model, count(*) AS candidates,"
                " coalesce(sum((usage->>'input_tokens')::bigint), 0) AS input_tokens,"
                " coalesce(sum((usage->>'output_tokens')::bigint), 0) AS output_tokens,"
                " coalesce(sum(cost_usd), 0) AS cost_usd"
                " FROM candidates WHERE run_id = $1 AND model IS NOT NULL"
                " GROUP BY model ORDER BY model",
                1, params);
            json_t *body = json_pack ("{s:o, s:o, s:o, s:o}", "run", run, "candidates",
                                      cands ? cands : json_array (), "archive",
                                      cells ? cells : json_array (), "models",
                                      models ? models : json_array ());
            /* prompt_versions, prompt_rejected, meta_jobs (kf_meta.h) */
            json_t *prompts = kf_meta_show (self->db, run_id);
            json_object_update (body, prompts);
            json_decref (prompts);
            if (json_is_true (json_object_get (msg->body, "report")))
                s_show_report (self, body, params);
            kf_coord_send (self, sock, route, "RUN", body);
            return;
        }
        json_t *cand = kf_db_row (self->db,
                                  "SELECT c.id, c.generation, c.slot, c.parent_id, c.status,"
                                  " c.language, c.speedup, c.verdict_detail, c.source_hash,"
                                  /* the tuning point measured, and the times behind
                                   * the speedup (kfctl best applies and prints them) */
                                  " e.figures->'best_config' AS best_config,"
                                  " e.candidate_ns, e.reference_ns"
                                  " FROM runs r JOIN candidates c ON c.id = r.best_candidate_id"
                                  " LEFT JOIN LATERAL (SELECT figures, candidate_ns, reference_ns"
                                  "  FROM evaluations WHERE candidate_id = c.id AND correct"
                                  "  ORDER BY id DESC LIMIT 1) e ON true"
                                  " WHERE r.id = $1",
                                  1, params, NULL);
        /* "yet" only while the run can still find one. */
        const char *status = json_string_value (json_object_get (run, "status"));
        char why[600];
        if (status && strcmp (status, "running") && strcmp (status, "queued"))
            snprintf (why, sizeof why, "the run ended (%s) with no correct candidate%s%.400s", status,
                      json_is_string (json_object_get (run, "reason")) ? ": " : "",
                      json_is_string (json_object_get (run, "reason"))
                          ? json_string_value (json_object_get (run, "reason")) : "");
        else
            snprintf (why, sizeof why, "the run has no correct candidate yet");
        if (!cand) {
            json_decref (run);
            kf_coord_reply_error (self, sock, route, "not-found", why);
            return;
        }
        json_decref (run);
        void *data = NULL;
        size_t size = 0;
        kf_db_fetch_blob (self->db, "SELECT data FROM blobs WHERE hash = $1",
                          json_string_value (json_object_get (cand, "source_hash")),
                          &data, &size);
        kf_msg_t *reply = kf_msg_new ("BEST", json_pack ("{s:I, s:o}", "run_id",
                                                         (json_int_t) run_id, "candidate", cand));
        kf_msg_add_frame (reply, data ? data : "", size);
        free (data);
        if (kf_msg_send (&reply, sock, route, NULL) == 0)
            self->counters[KF_COORD_SENT]++;
    }
}
