/*  kf_search.c - the backbone search: generations of candidates, each
 *  generate -> compile -> evaluate, the best so far feeding the next round.
 *
 *  State is only what the database holds: a candidate is final when its
 *  finished_at is set, a generation is complete when none of its
 *  candidates is open, and the next generation's rows are inserted with
 *  ON CONFLICT DO NOTHING on (run, generation, slot). So replaying any step
 *  after a crash can neither lose a candidate nor create one twice.
 */
#include "kf_search.h"
#include "kf_hash.h"
#include "kf_descriptor.h"
#include "kf_log.h"
#include "kf_models.h"
#include "kf_reference.h"
#include "kf_str.h"
#include "kf_tune.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

extern const char kf_contract_text[];

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

static const char *S_FINAL_CORRECT = "correct";

static void
s_event (kf_search_t *self, int64_t run_id, const char *event, json_t *fields)
{
    char topic[64];
    snprintf (topic, sizeof topic, "run/%lld/", (long long) run_id);
    json_object_set_new (fields, "run_id", json_integer (run_id));
    json_object_set_new (fields, "event", json_string (event));
    json_array_append_new (self->events,
                           json_pack ("{s:s, s:o}", "topic", topic, "body", fields));
}

/* Splits "cuda:sm_90" into backend and arch (arch may come back empty). */
static void
s_split_target (const char *target, char *backend, size_t bsize, char *arch,
                size_t asize)
{
    const char *colon = strchr (target, ':');
    size_t n = colon ? (size_t) (colon - target) : strlen (target);
    snprintf (backend, bsize, "%.*s", (int) n, target);
    snprintf (arch, asize, "%s", colon ? colon + 1 : "");
}

static int
s_store_blob (kf_search_t *self, const void *data, size_t size, char hash[65])
{
    kf_sha256_hex (data, size, hash);
    const char *params[1] = { hash };
    return kf_db_exec_blob (self->db,
                            "INSERT INTO blobs (hash, data) VALUES ($1, $2) "
                            "ON CONFLICT (hash) DO NOTHING",
                            2, params, data, size) < 0 ? -1 : 0;
}

static int
s_insert_job (kf_search_t *self, int64_t run_id, int64_t candidate_id,
              const char *role, const char *kind, const char *backend,
              const char *arch, json_t *payload, const char *blobs)
{
    int slot = !strcmp (role, "generate") ? 0 : !strcmp (role, "compile") ? 1 : 2;
    char run[24], cand[24], attempts[24], lease[24];
    char *text = json_dumps (payload, JSON_COMPACT);
    json_decref (payload);
    const char *params[10] = { S_I64 (run, run_id),
                               candidate_id ? S_I64 (cand, candidate_id) : NULL,
                               role, kind,
                               backend && *backend ? backend : NULL,
                               arch && *arch ? arch : NULL,
                               text, blobs ? blobs : "{}",
                               S_I64 (attempts, self->max_attempts),
                               S_I64 (lease, self->lease_ms[slot]) };
    long rc = kf_db_exec (self->db,
                          "INSERT INTO jobs (run_id, candidate_id, role, kind, backend,"
                          " arch, payload, blobs, max_attempts, lease_ms)"
                          " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                          10, params);
    free (text);
    return rc < 0 ? -1 : 0;
}

static json_t *
s_run_row (kf_search_t *self, int64_t run_id)
{
    char id[24];
    const char *params[1] = { S_I64 (id, run_id) };
    return kf_db_row (self->db,
                      "SELECT r.id, r.status, r.target, r.language, r.generations,"
                      " r.population, r.seed, r.config, r.generation, r.ref_artifact,"
                      " r.best_candidate_id, r.best_speedup, r.input_tokens,"
                      " r.output_tokens, r.cost_usd, coalesce(r.spec, t.spec) AS spec, t.name,"
                      " b.source_hash AS best_source_hash"
                      " FROM runs r JOIN tasks t ON t.id = r.task_id"
                      " LEFT JOIN candidates b ON b.id = r.best_candidate_id"
                      " WHERE r.id = $1",
                      1, params, NULL);
}

static const char *
s_str (json_t *obj, const char *key)
{
    const char *s = json_string_value (json_object_get (obj, key));
    return s ? s : "";
}

static int64_t
s_int (json_t *obj, const char *key)
{
    return json_integer_value (json_object_get (obj, key));
}

int
kf_search_start_run (kf_search_t *self, int64_t run_id)
{
    json_t *run = s_run_row (self, run_id);
    if (!run)
        return -1;
    if (kf_reference_is_pytorch (json_object_get (run, "spec"))) {
        int pytorch_rc = kf_reference_start (self, run);   /* no compile: a reference job */
        json_decref (run);
        return pytorch_rc;
    }
    json_t *ref = json_object_get (json_object_get (run, "spec"), "reference");
    const char *source = s_str (ref, "source");
    const char *language = s_str (ref, "language");
    char hash[65], blobs[80];
    int rc = s_store_blob (self, source, strlen (source), hash);
    snprintf (blobs, sizeof blobs, "{%s}", hash);
    const char *backend = !strcmp (language, "cuda") ? "cuda" : "host";
    if (rc == 0)
        rc = s_insert_job (self, run_id, 0, "compile", "compile", backend, NULL,
                           json_pack ("{s:s, s:{s:s}, s:s, s:b}", "language",
                                      language, "target", "backend", backend,
                                      "source_hash", hash, "reference", 1),
                           blobs);
    json_decref (run);
    return rc;
}

static int
s_finish_run (kf_search_t *self, int64_t run_id, const char *status,
              const char *reason)
{
    char id[24];
    const char *params[3] = { S_I64 (id, run_id), status, reason };
    json_t *row = kf_db_row (self->db,
                             "UPDATE runs SET status = $2, reason = $3, finished_at = now()"
                             " WHERE id = $1 AND status = 'running'"
                             " RETURNING best_speedup, first_speedup",
                             3, params, NULL);
    if (row) {
        kf_info ("run %lld %s: %s", (long long) run_id, status, reason);
        s_event (self, run_id, "finished",
                 json_pack ("{s:s, s:s, s:O, s:O}", "status", status, "reason",
                            reason, "best_speedup",
                            json_object_get (row, "best_speedup"),
                            "first_speedup", json_object_get (row, "first_speedup")));
    }
    json_decref (row);
    return 0;
}

/* The generation prompt. The offline generator ignores most of it; an LLM
 * needs all of it, and it is stored with the candidate either way. */
static char *
s_prompt (json_t *run, const char *parent_source, double parent_speedup)
{
    json_t *spec = json_object_get (run, "spec");
    const char *language = s_str (run, "language");
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    fprintf (f,
             "You write fast, correct %s kernels for the target '%s'.\n"
             "Write one complete source file that exports kf_forward with C "
             "linkage, following the contract below, and computes exactly what "
             "the reference computes for every input the task describes.\n\n",
             language, s_str (run, "target"));
    fprintf (f, "## Task: %s\n%s\n", s_str (spec, "name"), s_str (spec, "description"));
    if (*s_str (spec, "instructions"))
        fprintf (f, "\nInstructions from the user: %s\n", s_str (spec, "instructions"));
    json_t *scalars = json_object_get (spec, "scalars");
    json_t *tensors = json_pack ("{s:O, s:O, s:o}", "inputs",
                                 json_object_get (spec, "inputs"), "outputs",
                                 json_object_get (spec, "outputs"), "scalars",
                                 scalars ? json_incref (scalars) : json_object ());
    char *io = json_dumps (tensors, JSON_INDENT (1) | JSON_SORT_KEYS);
    json_decref (tensors);
    fprintf (f, "\nTensors and scalars:\n%s\n", io ? io : "");
    free (io);
    fprintf (f, "\n## The contract (kf_kernel.h)\n```c\n%s```\n", kf_contract_text);
    json_t *ref = json_object_get (spec, "reference");
    fprintf (f, "\n## Reference implementation (%s)\n```%s\n%s\n```\n",
             s_str (ref, "language"), s_str (ref, "language"), s_str (ref, "source"));
    if (parent_source)
        fprintf (f, "\n## Best kernel so far (%.3fx the reference)\n```%s\n%s\n```\n"
                    "Improve on it: keep what makes it fast and correct.\n",
                 parent_speedup, language, parent_source);
    fprintf (f, "\nAnswer with the complete source in one ```%s code block.\n", language);
    fclose (f);
    return text;
}

static int s_generated (kf_search_t *self, json_t *run, int64_t cand_id, json_t *result);

/* The model that writes a candidate: the first generation's own model when
 * the run names one, else a pick from the run's ensemble by the seed. */
static const char *
s_model_for (json_t *config, int generation, int64_t seed)
{
    const char *first = json_string_value (json_object_get (config, "first_model"));
    if (generation == 0 && first)
        return first;
    json_t *models = json_object_get (config, "models");
    return json_array_size (models) ? kf_models_pick (models, seed) : "offline";
}

/* Why the run's budget is spent, or NULL while it is not. */
static const char *
s_budget_spent (json_t *run, char *why, size_t size)
{
    json_t *budget = json_object_get (json_object_get (run, "config"), "budget");
    json_t *tokens = json_object_get (budget, "tokens");
    json_t *usd = json_object_get (budget, "usd");
    double used = json_number_value (json_object_get (run, "input_tokens"))
                  + json_number_value (json_object_get (run, "output_tokens"));
    double cost = json_number_value (json_object_get (run, "cost_usd"));
    if (tokens && used >= json_number_value (tokens))
        snprintf (why, size, "token budget spent: %.0f of %.0f tokens", used,
                  json_number_value (tokens));
    else if (usd && cost >= json_number_value (usd))
        snprintf (why, size, "money budget spent: $%.4f of $%.4f", cost,
                  json_number_value (usd));
    else
        return NULL;
    return why;
}

static int
s_plan_generation (kf_search_t *self, int64_t run_id, int generation)
{
    json_t *run = s_run_row (self, run_id);
    if (!run)
        return -1;
    int rc = 0;
    char *parent_source = NULL;
    size_t parent_size = 0;
    const char *best_hash = s_str (run, "best_source_hash");
    if (*best_hash) {
        void *data;
        if (kf_db_fetch_blob (self->db, "SELECT data FROM blobs WHERE hash = $1",
                              best_hash, &data, &parent_size) == 0) {
            parent_source = realloc (data, parent_size + 1);
            parent_source[parent_size] = 0;
        }
    }
    double parent_speedup = json_real_value (json_object_get (run, "best_speedup"));
    int population = (int) s_int (run, "population");
    int64_t seed = s_int (run, "seed");
    json_t *spec = json_object_get (run, "spec");
    json_t *config = json_object_get (run, "config");
    char *prompt = s_prompt (run, parent_source, parent_speedup);
    char runid[24], gen[24], slotbuf[24], parent[24];
    for (int slot = 0; slot < population && rc == 0; slot++) {
        const char *params[6] = { S_I64 (runid, run_id), S_I64 (gen, generation),
                                  S_I64 (slotbuf, slot),
                                  s_int (run, "best_candidate_id")
                                      ? S_I64 (parent, s_int (run, "best_candidate_id"))
                                      : NULL,
                                  s_str (run, "language"), prompt };
        bool failed;
        json_t *row = kf_db_row (self->db,
                                 "INSERT INTO candidates (run_id, generation, slot,"
                                 " parent_id, language, prompt)"
                                 " VALUES ($1, $2, $3, $4, $5, $6)"
                                 " ON CONFLICT (run_id, generation, slot) DO NOTHING"
                                 " RETURNING id",
                                 6, params, &failed);
        if (failed) {
            rc = -1;
            break;
        }
        if (!row)
            continue;   /* planned before a restart: its job exists */
        int64_t cand = s_int (row, "id");
        json_decref (row);
        json_t *initial = json_object_get (spec, "initial");
        if (generation == 0 && slot == 0 && initial) {
            /* The user's own starting point is the first candidate: it is
             * compiled and evaluated like any other, with no generator. */
            json_t *given = json_pack ("{s:O, s:s}", "source",
                                       json_object_get (initial, "source"),
                                       "generator", "initial");
            rc = s_generated (self, run, cand, given);
            json_decref (given);
            continue;
        }
        /* Seeds are a function of (run seed, generation, slot) only, so a
         * run replays identically with the same seed. */
        int64_t job_seed = (seed * 1000003 + (int64_t) generation * population + slot)
                           & 0x1fffffffffffffLL;
        json_t *payload = json_pack ("{s:O, s:s, s:I, s:s}", "task", spec,
                                     "language", s_str (run, "language"), "seed",
                                     (json_int_t) job_seed, "prompt", prompt);
        /* A run without an initial kernel starts from the generator's
         * plainest version, so the search has a baseline to beat. */
        if (generation == 0 && slot == 0)
            json_object_set_new (payload, "baseline", json_true ());
        const char *model = s_model_for (config, generation, job_seed);
        json_object_set_new (payload, "model", json_string (model));
        static const char *sampling[] = { "temperature", "top_p", "max_tokens" };
        for (size_t k = 0; k < 3; k++)
            if (json_object_get (config, sampling[k]))
                json_object_set (payload, sampling[k], json_object_get (config, sampling[k]));
        char candbuf[24];
        const char *mp[2] = { S_I64 (candbuf, cand), model };
        if (kf_db_exec (self->db, "UPDATE candidates SET model = $2 WHERE id = $1", 2, mp) < 0) {
            json_decref (payload);
            rc = -1;
            break;
        }
        if (parent_source)
            json_object_set_new (payload, "parent",
                                 json_pack ("{s:s, s:f}", "source", parent_source,
                                            "speedup", parent_speedup));
        rc = s_insert_job (self, run_id, cand, "generate", "generate", NULL, NULL,
                           payload, NULL);
    }
    if (rc == 0) {
        const char *params[2] = { S_I64 (runid, run_id), S_I64 (gen, generation) };
        rc = kf_db_exec (self->db, "UPDATE runs SET generation = $2 WHERE id = $1",
                         2, params) < 0 ? -1 : 0;
        s_event (self, run_id, "generation",
                 json_pack ("{s:i, s:O}", "generation", generation, "best_speedup",
                            json_object_get (run, "best_speedup")));
    }
    free (prompt);
    free (parent_source);
    json_decref (run);
    return rc;
}

/* Starts the next generation, or ends the run, once GENERATION is closed. */
static int
s_check_generation (kf_search_t *self, int64_t run_id, int generation)
{
    char id[24], gen[24];
    const char *params[2] = { S_I64 (id, run_id), S_I64 (gen, generation) };
    json_t *row = kf_db_row (self->db,
                             "SELECT r.status, r.generation, r.generations,"
                             " (SELECT count(*) FROM candidates c WHERE c.run_id = r.id"
                             "  AND c.generation = $2 AND c.finished_at IS NULL) AS open"
                             " FROM runs r WHERE r.id = $1",
                             2, params, NULL);
    if (!row)
        return -1;
    int rc = 0;
    if (!strcmp (s_str (row, "status"), "running") && s_int (row, "open") == 0
        && s_int (row, "generation") == generation) {
        json_t *run = s_run_row (self, run_id);
        char why[200];
        const char *spent = run ? s_budget_spent (run, why, sizeof why) : NULL;
        json_decref (run);
        if (spent)
            rc = s_finish_run (self, run_id, "done", spent);
        else if (generation + 1 < s_int (row, "generations"))
            rc = s_plan_generation (self, run_id, generation + 1);
        else {
            char reason[96];
            snprintf (reason, sizeof reason, "completed %d generations",
                      generation + 1);
            rc = s_finish_run (self, run_id, "done", reason);
        }
    }
    json_decref (row);
    return rc;
}

int
kf_search_begin (kf_search_t *self, int64_t run_id)
{
    return s_plan_generation (self, run_id, 0);
}

double
kf_search_fitness (const char *verdict, double speedup)
{
    if (!strcmp (verdict, "compile_failed") || !strcmp (verdict, "failed"))
        return 0.0;
    if (strcmp (verdict, S_FINAL_CORRECT) || !(speedup > 0))
        return 0.1;
    /* s_norm = s / (1 + s): monotone, 0.5 at parity, bounded below 1. */
    return 0.5 + 0.5 * (speedup / (1.0 + speedup));
}

/* MAP-Elites insertion: the candidate takes its cell when the cell is
 * empty or its elite is less fit (on equal fitness, slower). The cell is
 * the candidate's coordinates binned by the run's archive_bins. */
static int
s_archive_insert (kf_search_t *self, int64_t run_id, int64_t cand_id, const char *speedup,
                  const char *fitness)
{
    char run[24], cand[24], cell[48];
    const char *p1[2] = { S_I64 (cand, cand_id), S_I64 (run, run_id) };
    json_t *row = kf_db_row (self->db,
                             "SELECT c.coords, coalesce((r.config->>'archive_bins')::int, 4) AS bins"
                             " FROM candidates c JOIN runs r ON r.id = c.run_id"
                             " WHERE c.id = $1 AND r.id = $2",
                             2, p1, NULL);
    if (!row)
        return -1;
    json_t *coords = json_object_get (row, "coords");   /* "{m,a,s}" as text */
    int m = 0, a = 0, y = 0;
    int bins = (int) s_int (row, "bins");
    if (!json_is_string (coords)
        || sscanf (json_string_value (coords), "{%d,%d,%d}", &m, &a, &y) != 3) {
        json_decref (row);
        return 0;   /* no coordinates (an initial kernel of an unknown language) */
    }
    json_decref (row);
    snprintf (cell, sizeof cell, "{%d,%d,%d}", kf_descriptor_bin (m, bins),
              kf_descriptor_bin (a, bins), kf_descriptor_bin (y, bins));
    const char *p2[5] = { run, cell, cand, fitness, speedup };
    return kf_db_exec (self->db,
                       "INSERT INTO archive_cells (run_id, cell, candidate_id, fitness, speedup)"
                       " VALUES ($1, $2::int[], $3, $4, $5)"
                       " ON CONFLICT (run_id, cell) DO UPDATE SET candidate_id = EXCLUDED.candidate_id,"
                       " fitness = EXCLUDED.fitness, speedup = EXCLUDED.speedup, updated_at = now()"
                       " WHERE archive_cells.fitness < EXCLUDED.fitness"
                       " OR (archive_cells.fitness = EXCLUDED.fitness"
                       "     AND archive_cells.speedup < EXCLUDED.speedup)",
                       5, p2) < 0 ? -1 : 0;
}

static int
s_finish_candidate (kf_search_t *self, int64_t run_id, int64_t cand_id,
                    const char *status, double speedup, const char *detail,
                    const char *log)
{
    bool correct = !strcmp (status, S_FINAL_CORRECT) && speedup > 0;
    char id[24], sp[40], fit[40];
    snprintf (sp, sizeof sp, "%.17g", speedup);
    snprintf (fit, sizeof fit, "%.17g", kf_search_fitness (status, speedup));
    const char *params[6] = { S_I64 (id, cand_id), status, correct ? sp : NULL,
                              fit, detail, log };
    json_t *row = kf_db_row (self->db,
                             "UPDATE candidates SET status = $2, speedup = $3,"
                             " fitness = $4, verdict_detail = $5,"
                             " log = coalesce($6, log), finished_at = now()"
                             " WHERE id = $1 AND finished_at IS NULL"
                             " RETURNING generation, slot",
                             6, params, NULL);
    if (!row)
        return 0;   /* already final: nothing to do twice */
    int generation = (int) s_int (row, "generation");
    json_decref (row);
    if (correct && s_archive_insert (self, run_id, cand_id, sp, fit))
        return -1;
    if (correct) {
        char run[24];
        const char *p[3] = { S_I64 (run, run_id), id, sp };
        if (kf_db_exec (self->db,
                        "UPDATE runs SET best_candidate_id = $2, best_speedup = $3"
                        " WHERE id = $1 AND (best_speedup IS NULL OR best_speedup < $3)",
                        3, p) < 0
            || kf_db_exec (self->db,
                           "UPDATE runs SET first_speedup = (SELECT speedup FROM"
                           " candidates WHERE run_id = $1 AND status = 'correct'"
                           " ORDER BY generation, slot LIMIT 1) WHERE id = $1",
                           1, p) < 0)
            return -1;
    }
    s_event (self, run_id, "candidate",
             json_pack ("{s:I, s:i, s:s, s:o}", "candidate_id", (json_int_t) cand_id,
                        "generation", generation, "status", status, "speedup",
                        correct ? json_real (speedup) : json_null ()));
    return s_check_generation (self, run_id, generation);
}

/* Records what generating a candidate used and cost, on it and its run. */
static int
s_account (kf_search_t *self, int64_t run_id, int64_t cand_id, json_t *result)
{
    json_t *usage = json_object_get (result, "usage");
    json_t *cost = json_object_get (result, "cost_usd");
    if (!usage && !cost)
        return 0;
    char cand[24], run[24], in[24], out[24], usd[40];
    char *usage_text = usage ? json_dumps (usage, JSON_COMPACT) : NULL;
    S_I64 (in, json_integer_value (json_object_get (usage, "input_tokens")));
    S_I64 (out, json_integer_value (json_object_get (usage, "output_tokens")));
    snprintf (usd, sizeof usd, "%.17g", json_number_value (cost));
    const char *cp[3] = { S_I64 (cand, cand_id), usage_text, usd };
    const char *rp[4] = { S_I64 (run, run_id), in, out, usd };
    int rc = kf_db_exec (self->db, "UPDATE candidates SET usage = $2, cost_usd = $3 WHERE id = $1",
                         3, cp) < 0
             || kf_db_exec (self->db, "UPDATE runs SET input_tokens = input_tokens + $2,"
                            " output_tokens = output_tokens + $3, cost_usd = cost_usd + $4"
                            " WHERE id = $1", 4, rp) < 0 ? -1 : 0;
    free (usage_text);
    return rc;
}

static int
s_generated (kf_search_t *self, json_t *run, int64_t cand_id, json_t *result)
{
    int64_t run_id = s_int (run, "id");
    if (s_account (self, run_id, cand_id, result))
        return -1;
    const char *source = s_str (result, "source");
    if (!*source) {
        /* The gateway says why (a response cut off by the token limit, an
         * empty one, one with no code); that is the candidate's verdict. */
        char detail[400];
        snprintf (detail, sizeof detail, "the generator returned no source%s%s%s%s",
                  *s_str (result, "error_kind") ? ": " : "", s_str (result, "error_kind"),
                  *s_str (result, "detail") ? ": " : "", s_str (result, "detail"));
        return s_finish_candidate (self, run_id, cand_id, "failed", 0, detail, NULL);
    }
    char hash[65], cand[24], blobs[80], backend[32], arch[64];
    if (s_store_blob (self, source, strlen (source), hash))
        return -1;
    /* Coordinates come from the source alone (comments and strings removed
     * first), so they are known before the kernel is even compiled. */
    kf_coords_t c = { 0, 0, 0 };
    char *why = NULL, coords[48];
    kf_descriptor_classify (source, strlen (source), s_str (run, "language"), &c, &why);
    snprintf (coords, sizeof coords, "{%d,%d,%d}", c.mem, c.algo, c.sync);
    const char *params[5] = { S_I64 (cand, cand_id), hash, s_str (result, "generator"),
                              coords, why };
    long n = kf_db_exec (self->db,
                         "UPDATE candidates SET source_hash = $2, generator = $3,"
                         " status = 'compiling', coords = $4::int[], coords_why = $5"
                         " WHERE id = $1",
                         5, params);
    free (why);
    if (n < 0)
        return -1;
    s_split_target (s_str (run, "target"), backend, sizeof backend, arch, sizeof arch);
    snprintf (blobs, sizeof blobs, "{%s}", hash);
    json_t *tune = json_object_get (json_object_get (run, "config"), "tune");
    return s_insert_job (self, run_id, cand_id, "compile", "compile", backend, NULL,
                         json_pack ("{s:s, s:{s:s, s:s}, s:s, s:I}", "language",
                                    s_str (run, "language"), "target", "backend",
                                    backend, "arch", arch, "source_hash", hash,
                                    "tune_max_configs",
                                    (json_int_t) (tune ? json_integer_value (tune) : 1)),
                         blobs);
}

/* Most candidate artifacts in one evaluate job: the reference takes one
 * more frame, and the dispatcher's blob list (kf_coord.c, s_attach_blobs)
 * holds fifteen hashes. */
#define S_EVAL_MAX_CONFIGS 14

/* The evaluate job's configs for a tuned compile RESULT: each compiled
 * config with the index of its artifact among the job's candidate frames.
 * Stores those artifacts and writes their hashes, comma-separated, into
 * BLOBS; the default config (frame 0) always comes first. Appends a line
 * naming the configs that did not compile to *LOG_EXTRA (caller frees).
 * Returns the array (caller owns), or NULL when the result has no table. */
static json_t *
s_eval_configs (kf_search_t *self, json_t *result, zmsg_t *frames, char *blobs,
                size_t blobs_size, char **log_extra, int *rc)
{
    json_t *table = json_object_get (result, "configs");
    *rc = 0;
    *log_extra = NULL;
    if (!json_is_array (table) || json_array_size (table) == 0)
        return NULL;
    zframe_t *by_index[16];
    int n_frames = 0;
    for (zframe_t *f = zmsg_first (frames); f && n_frames < 16; f = zmsg_next (frames))
        by_index[n_frames++] = f;
    int job_frame[16];       /* result frame -> evaluate job frame, -1: not sent */
    for (int i = 0; i < 16; i++)
        job_frame[i] = -1;
    int sent = 0, failed = 0;
    size_t used = 0;
    blobs[0] = 0;
    char *failures = NULL;
    size_t failures_size = 0;
    FILE *f = open_memstream (&failures, &failures_size);
    json_t *configs = json_array ();
    size_t i;
    json_t *row;
    json_array_foreach (table, i, row) {
        json_t *frame = json_object_get (row, "frame");
        int k = json_is_integer (frame) ? (int) json_integer_value (frame) : -1;
        if (!json_is_true (json_object_get (row, "compiled")) || k < 0 || k >= n_frames) {
            char label[256];
            kf_tune_params_label (json_object_get (row, "params"), label, sizeof label);
            if (f && !json_is_true (json_object_get (row, "compiled")))
                fprintf (f, "%s%s", failed++ ? "; " : "", label);
            continue;
        }
        if (job_frame[k] < 0) {
            if (sent == S_EVAL_MAX_CONFIGS)
                continue;
            char hash[65];
            if (s_store_blob (self, zframe_data (by_index[k]), zframe_size (by_index[k]), hash)) {
                *rc = -1;
                break;
            }
            int n = snprintf (blobs + used, blobs_size - used, "%s%s", used ? "," : "", hash);
            if (n < 0 || (size_t) n >= blobs_size - used)
                break;
            used += (size_t) n;
            job_frame[k] = sent++;
        }
        json_array_append_new (configs, json_pack ("{s:O, s:i}", "params",
                               json_object_get (row, "params"), "frame", job_frame[k]));
    }
    if (f)
        fclose (f);
    if (failed && failures)
        *log_extra = kf_strdupf ("tuning: %d of %zu configs did not compile: %.800s\n",
                                 failed, json_array_size (table), failures);
    free (failures);
    if (*rc || json_array_size (configs) == 0) {
        json_decref (configs);
        return NULL;
    }
    return configs;
}

static int
s_compiled (kf_search_t *self, json_t *run, int64_t cand_id, json_t *result,
            zmsg_t *frames)
{
    int64_t run_id = s_int (run, "id");
    zframe_t *artifact = frames ? zmsg_first (frames) : NULL;
    bool compiled = json_is_true (json_object_get (result, "compiled")) && artifact;
    const char *log = s_str (result, "log");
    if (!cand_id) {
        /* The run's reference: without it nothing can be evaluated. */
        if (!compiled) {
            char reason[512];
            snprintf (reason, sizeof reason, "the reference does not compile: %.400s", log);
            return s_finish_run (self, run_id, "failed", reason);
        }
        char hash[65], id[24];
        if (s_store_blob (self, zframe_data (artifact), zframe_size (artifact), hash))
            return -1;
        const char *params[2] = { S_I64 (id, run_id), hash };
        if (kf_db_exec (self->db, "UPDATE runs SET ref_artifact = $2 WHERE id = $1",
                        2, params) < 0)
            return -1;
        return kf_search_begin (self, run_id);
    }
    if (!compiled)
        return s_finish_candidate (self, run_id, cand_id, "compile_failed", 0,
                                   "does not compile", log);
    char hash[65], cand[24], blobs[1200], backend[32], arch[64];
    if (s_store_blob (self, zframe_data (artifact), zframe_size (artifact), hash))
        return -1;
    /* A tuned source: every compiled config goes to one evaluate job, so
     * each is timed against the reference in the same way (frames: the
     * candidates' artifacts, the reference last). */
    char cand_blobs[1100], *log_extra = NULL;
    int rc = 0;
    json_t *configs = s_eval_configs (self, result, frames, cand_blobs, sizeof cand_blobs,
                                      &log_extra, &rc);
    if (rc) {
        free (log_extra);
        return -1;
    }
    char *full_log = log_extra ? kf_strdupf ("%s%s", log, log_extra) : NULL;
    free (log_extra);
    const char *params[3] = { S_I64 (cand, cand_id), hash, full_log ? full_log : log };
    json_t *row = kf_db_row (self->db,
                             "UPDATE candidates SET artifact_hash = $2, log = $3,"
                             " status = 'evaluating' WHERE id = $1"
                             " RETURNING generation, slot",
                             3, params, NULL);
    free (full_log);
    if (!row) {
        json_decref (configs);
        return -1;
    }
    int64_t seed = s_int (run, "seed") * 7919 + s_int (row, "generation") * 1009
                   + s_int (row, "slot");
    json_decref (row);
    json_t *timing = json_object_get (json_object_get (run, "config"), "timing");
    snprintf (blobs, sizeof blobs, "{%s,%s}", configs ? cand_blobs : hash,
              s_str (run, "ref_artifact"));
    s_split_target (s_str (run, "target"), backend, sizeof backend, arch, sizeof arch);
    json_t *payload = json_pack ("{s:O, s:I, s:O}", "task", json_object_get (run, "spec"),
                                 "seed", (json_int_t) (seed & 0xffffffffffffLL), "timing",
                                 timing ? timing : self->timing);
    if (configs)
        json_object_set_new (payload, "configs", configs);
    if (kf_reference_eval_payload (self, run, payload)) {
        json_decref (payload);
        return -1;
    }
    return s_insert_job (self, run_id, cand_id, "execute", "evaluate", backend, arch,
                         payload, blobs);
}

static int
s_evaluated (kf_search_t *self, json_t *run, json_t *job, int64_t cand_id,
             json_t *result)
{
    const char *verdict = s_str (result, "verdict");
    static const char *known[] = { "correct", "incorrect", "crashed", "timeout" };
    const char *status = "crashed";
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp (verdict, known[i]))
            status = known[i];
    bool correct = !strcmp (status, S_FINAL_CORRECT);
    double speedup = json_number_value (json_object_get (result, "speedup"));
    json_t *cand_t = json_object_get (result, "candidate");
    json_t *ref_t = json_object_get (result, "reference");
    char cand[24], jobid[24], sp[40], cns[40], rns[40];
    snprintf (sp, sizeof sp, "%.17g", speedup);
    snprintf (cns, sizeof cns, "%.17g", json_number_value (json_object_get (cand_t, "median_ns")));
    snprintf (rns, sizeof rns, "%.17g", json_number_value (json_object_get (ref_t, "median_ns")));
    /* The figures keep the whole result, the tuning table included. */
    char *figures = json_dumps (result, JSON_COMPACT);
    const char *params[9] = { S_I64 (cand, cand_id), S_I64 (jobid, s_int (job, "id")),
                              s_str (job, "worker"), *verdict ? verdict : "unknown",
                              correct ? "true" : "false", correct ? sp : NULL,
                              cand_t ? cns : NULL, ref_t ? rns : NULL, figures };
    long rc = kf_db_exec (self->db,
                          "INSERT INTO evaluations (candidate_id, job_id, worker, verdict,"
                          " correct, speedup, candidate_ns, reference_ns, figures) VALUES"
                          " ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
                          " ON CONFLICT (job_id) DO NOTHING",
                          9, params);
    free (figures);
    if (rc < 0)
        return -1;
    /* A tuned candidate's detail names the config that counted, so the
     * run's listing shows what the sweep chose without the table. */
    const char *detail = s_str (result, "detail");
    size_t n_configs = json_array_size (json_object_get (result, "configs"));
    json_t *best = json_object_get (result, "best_config");
    char tuned[900];
    if (n_configs > 0) {
        char label[300];
        if (json_is_object (best))
            snprintf (tuned, sizeof tuned, "%.500s; best of %zu config%s: %s", detail,
                      n_configs, n_configs == 1 ? "" : "s",
                      kf_tune_params_label (best, label, sizeof label));
        else
            snprintf (tuned, sizeof tuned, "%.500s; none of %zu config%s was correct",
                      detail, n_configs, n_configs == 1 ? "" : "s");
        detail = tuned;
    }
    return s_finish_candidate (self, s_int (run, "id"), cand_id, status, speedup,
                               detail, NULL);
}

int
kf_search_job_done (kf_search_t *self, json_t *job, json_t *result, zmsg_t *frames)
{
    int64_t run_id = s_int (job, "run_id");
    if (!run_id)
        return 0;   /* a job of no run (benchmarks) */
    json_t *run = s_run_row (self, run_id);
    if (!run)
        return -1;
    int rc = 0;
    if (!strcmp (s_str (run, "status"), "running")) {
        int64_t cand = s_int (job, "candidate_id");
        const char *kind = s_str (job, "kind");
        if (kf_reference_owns (job))
            rc = kf_reference_job_done (self, run, job, result, frames);
        else if (!strcmp (kind, "generate"))
            rc = s_generated (self, run, cand, result);
        else if (!strcmp (kind, "compile"))
            rc = s_compiled (self, run, cand, result, frames);
        else if (!strcmp (kind, "evaluate"))
            rc = s_evaluated (self, run, job, cand, result);
    }
    json_decref (run);
    return rc;
}

int
kf_search_job_failed (kf_search_t *self, json_t *job, const char *reason)
{
    int64_t run_id = s_int (job, "run_id");
    if (!run_id)
        return 0;
    int64_t cand = s_int (job, "candidate_id");
    char text[600];
    snprintf (text, sizeof text, "%s job failed for good: %.500s",
              s_str (job, "kind"), reason);
    if (!cand)
        return s_finish_run (self, run_id, "failed", text);
    return s_finish_candidate (self, run_id, cand, "failed", 0, text, NULL);
}

/* For kf_reference.c, which runs a run's reference before its search. */
int
kf_search_insert_job (kf_search_t *self, int64_t run_id, int64_t candidate_id,
                      const char *role, const char *kind, const char *backend,
                      const char *arch, json_t *payload, const char *blobs)
{
    return s_insert_job (self, run_id, candidate_id, role, kind, backend, arch, payload, blobs);
}

int
kf_search_finish_run (kf_search_t *self, int64_t run_id, const char *status,
                      const char *reason)
{
    return s_finish_run (self, run_id, status, reason);
}
