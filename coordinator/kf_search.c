/*  kf_search.c - the search of a run: MAP-Elites over behavioural
 *  coordinates, steady-state.
 *
 *  Every candidate goes generate -> compile -> evaluate. Its parent is
 *  chosen from the run's archive (kf_select.c: uniform, fitness,
 *  curiosity, island), its prompt carries inspirations from other cells
 *  and mutation hints from the gradients over past parent->child moves
 *  (kf_gradient.c), and the evolvable sections of the run's prompt
 *  archive (kf_meta.c). A run keeps up to max_in_flight candidates open:
 *  each one that ends lets the next be planned at once, so no worker
 *  waits for a generation to close; "generation" is only the number of
 *  a candidate divided by the population. After the main phase, tuning
 *  rounds ask for templated versions of the best elites and sweep their
 *  parameters. docs/search.md has the whole of it.
 *
 *  State is only what the database holds: a candidate is final when its
 *  finished_at is set; what to plan next is counted from the candidates
 *  table; rows are inserted with ON CONFLICT DO NOTHING on (run,
 *  generation, slot); every draw is a function of (run seed, candidate
 *  number). Each step runs in the caller's transaction with the job
 *  completion that caused it, so replaying any step after a crash can
 *  neither lose a candidate nor create one twice.
 */
#include "kf_search.h"
#include "kf_json.h"
#include "kf_hash.h"
#include "kf_lineage.h"
#include "kf_descriptor.h"
#include "kf_fidelity.h"
#include "kf_log.h"
#include "kf_gradient.h"
#include "kf_memory.h"
#include "kf_meta.h"
#include "kf_models.h"
#include "kf_prompt.h"
#include "kf_prompt_facts.h"
#include "kf_prompt_target.h"
#include "kf_reference.h"
#include "kf_repeat.h"
#include "kf_select.h"
#include "kf_stop.h"
#include "kf_str.h"
#include "kf_tune.h"
#include "kf_verify.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

static const char *S_FINAL_CORRECT = "correct";

void
kf_search_event (kf_search_t *self, int64_t run_id, const char *event, json_t *fields)
{
    char topic[64];
    snprintf (topic, sizeof topic, "run/%lld/", (long long) run_id);
    json_object_set_new (fields, "run_id", json_integer (run_id));
    json_object_set_new (fields, "event", json_string (event));
    json_array_append_new (self->events,
                           json_pack ("{s:s, s:o}", "topic", topic, "body", fields));
}

/* Splits "cuda:sm_90" into backend and arch (arch may come back empty). */
void
kf_search_split_target (const char *target, char *backend, size_t bsize, char *arch,
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

static int s_resolve_config (kf_search_t *self, int64_t run_id);

int
kf_search_start_run (kf_search_t *self, int64_t run_id)
{
    if (s_resolve_config (self, run_id))
        return -1;
    json_t *run = s_run_row (self, run_id);
    if (!run)
        return -1;
    if (kf_reference_is_pytorch (json_object_get (run, "spec"))) {
        int pytorch_rc = kf_reference_start (self, run);   /* no compile: a reference job */
        json_decref (run);
        return pytorch_rc;
    }
    json_t *ref = json_object_get (json_object_get (run, "spec"), "reference");
    const char *source = kf_jstr (ref, "source");
    const char *language = kf_jstr (ref, "language");
    char hash[65], blobs[80];
    int rc = s_store_blob (self, source, strlen (source), hash);
    snprintf (blobs, sizeof blobs, "{%s}", hash);
    /* The toolchain that builds the reference's language: nvcc for CUDA,
     * clang + llvm-spirv for OpenCL C, cc for C. */
    const char *backend = !strcmp (language, "cuda")     ? "cuda"
                          : !strcmp (language, "opencl") ? "level-zero"
                                                         : "host";
    if (rc == 0)
        rc = s_insert_job (self, run_id, 0, "compile", "compile", backend, NULL,
                           json_pack ("{s:s, s:{s:s}, s:s, s:b, s:O*}", "language",
                                      language, "target", "backend", backend,
                                      "source_hash", hash, "reference", 1, "libraries",
                                      json_object_get (json_object_get (run, "spec"),
                                                       "libraries")),
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
        kf_search_event (self, run_id, "finished",
                 json_pack ("{s:s, s:s, s:O, s:O}", "status", status, "reason",
                            reason, "best_speedup",
                            json_object_get (row, "best_speedup"),
                            "first_speedup", json_object_get (row, "first_speedup")));
    }
    json_decref (row);
    return 0;
}

/* ---- settings ----------------------------------------------------------- */

/* coordinator/search-defaults.json, embedded by the Makefile. */
extern const char kf_search_defaults_text[];

typedef enum { S_INT, S_NUM, S_BOOL, S_RATIOS, S_TIMING } s_type_t;

/* Every key of a run's search settings with its type and bounds: the
 * defaults file must give each one, a run's config may override any
 * (docs/search.md says what each does and where its default comes from). */
static const struct {
    const char *key;
    s_type_t type;
    double lo, hi;
} s_keys[] = {
    { "generations", S_INT, 1, 100000 },
    { "population", S_INT, 1, 10000 },
    { "max_in_flight", S_INT, 0, 10000 },
    { "archive_bins", S_INT, 1, 4 },
    { "selection", S_RATIOS, 0, 1e6 },
    { "inspirations", S_INT, 0, KF_SELECT_MAX_INSPIRATIONS },
    { "islands", S_BOOL, 0, 0 },
    { "island_count", S_INT, 1, KF_SELECT_MAX_ISLANDS },
    { "migration_every", S_INT, 0, 100000 },
    { "gradients", S_BOOL, 0, 0 },
    { "gradient_window", S_INT, 1, 10000 },
    { "gradient_decay", S_NUM, 0.01, 1 },
    { "max_hints", S_INT, 0, 10 },
    { "hint_min_moves", S_INT, 1, 1000 },
    { "meta_prompting", S_BOOL, 0, 0 },
    { "meta_every", S_INT, 1, 100000 },
    { "meta_max_edits", S_INT, 1, 100 },
    { "prompt_archive", S_INT, 1, 1000 },
    { "tuning", S_BOOL, 0, 0 },
    { "tuning_rounds", S_INT, 0, 100 },
    { "tuning_configs", S_INT, 1, 16 },
    { "temperature", S_NUM, 0, 2 },
    { "top_p", S_NUM, 0, 1 },
    { "max_tokens", S_INT, 1, 1000000 },
    { "screening", S_BOOL, 0, 0 },             /* kf_fidelity.c */
    { "screen_timing", S_TIMING, 0, 0 },
    { "full_margin", S_NUM, 0, 1 },
    { "dedup", S_BOOL, 0, 0 },                 /* kf_repeat.c */
    { "stop_after", S_INT, 0, 100000 },        /* kf_stop.c */
    { "stop_margin", S_NUM, 0, 100 },
    { "memory", S_BOOL, 0, 0 },                /* kf_memory.c */
};
#define S_N_KEYS (sizeof s_keys / sizeof s_keys[0])

static const char *s_ratio_keys[KF_SELECT_N] = { "uniform", "fitness", "curiosity", "island" };

static int
s_check_value (size_t k, json_t *v, const char *where, char **why)
{
    const char *key = s_keys[k].key;
    switch (s_keys[k].type) {
    case S_BOOL:
        if (!json_is_boolean (v))
            return kf_fail (why, "%s%s must be true or false", where, key);
        return 0;
    case S_INT:
        if (!json_is_integer (v) || json_integer_value (v) < s_keys[k].lo
            || json_integer_value (v) > s_keys[k].hi)
            return kf_fail (why, "%s%s must be an integer in %g..%g", where, key,
                            s_keys[k].lo, s_keys[k].hi);
        return 0;
    case S_NUM:
        if (!json_is_number (v) || json_number_value (v) < s_keys[k].lo
            || json_number_value (v) > s_keys[k].hi)
            return kf_fail (why, "%s%s must be a number in [%g, %g]", where, key,
                            s_keys[k].lo, s_keys[k].hi);
        return 0;
    case S_RATIOS: {
        if (!json_is_object (v))
            return kf_fail (why, "%s%s must be an object of strategy weights"
                            " {uniform, fitness, curiosity, island}", where, key);
        double total = 0;
        const char *name;
        json_t *w;
        json_object_foreach (v, name, w) {
            bool known = false;
            for (int i = 0; i < KF_SELECT_N; i++)
                known |= !strcmp (name, s_ratio_keys[i]);
            if (!known)
                return kf_fail (why, "%s%s.%s: unknown strategy (uniform, fitness,"
                                " curiosity, island)", where, key, name);
            if (!json_is_number (w) || json_number_value (w) < 0
                || json_number_value (w) > s_keys[k].hi)
                return kf_fail (why, "%s%s.%s must be a number >= 0", where, key, name);
            total += json_number_value (w);
        }
        if (!(total > 0))
            return kf_fail (why, "%s%s: at least one strategy needs a weight above 0",
                            where, key);
        return 0;
    }
    case S_TIMING:
        return kf_fidelity_timing_check (v, where, key, why);
    }
    return 0;
}

/* The keys of a run's config that are not search settings: what
 * kfctl submit sends (docs/kfctl.md) and what other modules read. A key
 * in neither list is refused, so a misspelt switch (`tunning: false`)
 * fails the submission instead of leaving the mechanism silently on. */
static const char *s_other_keys[] = {
    "target", "generations", "population", "seed", "model", "first_model", "budget",
    "timing", "tune", "allow_degenerate", "meta_model", NULL
};

int
kf_search_config_check (json_t *config, json_t *out, char **why)
{
    const char *key;
    json_t *value;
    json_object_foreach (config, key, value) {
        bool known = false;
        for (size_t k = 0; k < S_N_KEYS && !known; k++)
            known = !strcmp (key, s_keys[k].key);
        for (size_t k = 0; s_other_keys[k] && !known; k++)
            known = !strcmp (key, s_other_keys[k]);
        if (!known)
            return kf_fail (why, "config.%s: unknown key (docs/search.md lists a run"
                            " config's keys)", key);
    }
    for (size_t k = 0; k < S_N_KEYS; k++) {
        json_t *v = json_object_get (config, s_keys[k].key);
        if (!v)
            continue;
        if (s_check_value (k, v, "config.", why))
            return -1;
        if (out)
            json_object_set (out, s_keys[k].key, v);
    }
    return 0;
}

/* Reads the defaults text (TEXT, or the file PATH when TEXT is NULL)
 * named NAME and checks each key it names. NULL with *WHY when it cannot. */
static json_t *
s_defaults_read (const char *text, const char *path, const char *name, char **why)
{
    json_error_t error;
    json_t *d = text ? json_loads (text, JSON_REJECT_DUPLICATES, &error)
                     : json_load_file (path, JSON_REJECT_DUPLICATES, &error);
    if (!d || !json_is_object (d)) {
        if (d)
            kf_fail (why, "%s: not a JSON object", name);
        else
            kf_fail (why, "%s:%d: %s", name, error.line, error.text);
        json_decref (d);
        return NULL;
    }
    char where[300];
    snprintf (where, sizeof where, "%s: ", name);
    const char *key;
    json_t *v;
    json_object_foreach (d, key, v) {
        size_t k = 0;
        while (k < S_N_KEYS && strcmp (s_keys[k].key, key))
            k++;
        if (k == S_N_KEYS || s_check_value (k, v, where, why)) {
            if (k == S_N_KEYS)
                kf_fail (why, "%sunknown key '%s' (docs/search.md lists them)", where, key);
            json_decref (d);
            return NULL;
        }
    }
    return d;
}

json_t *
kf_search_defaults_load (const char *path, char **why)
{
    static const char *builtin_name = "coordinator/search-defaults.json (built in)";
    json_t *d = s_defaults_read (kf_search_defaults_text, NULL, builtin_name, why);
    if (!d)
        return NULL;
    for (size_t k = 0; k < S_N_KEYS; k++)
        if (!json_object_get (d, s_keys[k].key)) {
            kf_fail (why, "%s: missing key '%s': the built-in defaults name every key",
                     builtin_name, s_keys[k].key);
            json_decref (d);
            return NULL;
        }
    if (path && *path) {
        /* A file of the operator's: the keys it names replace the
         * built-in ones; the rest stay. */
        json_t *over = s_defaults_read (NULL, path, path, why);
        if (!over) {
            json_decref (d);
            return NULL;
        }
        json_object_update (d, over);
        json_decref (over);
    }
    return d;
}

/* The defaults in force: the coordinator's file, else the built-in one
 * (parsed once; it was checked when this binary was tested). */
static json_t *
s_defaults (kf_search_t *self)
{
    static json_t *builtin;
    if (self->defaults)
        return self->defaults;
    if (!builtin) {
        char *why = NULL;
        builtin = kf_search_defaults_load (NULL, &why);
        if (!builtin)
            kf_error ("built-in search defaults: %s", why ? why : "?");
        free (why);
    }
    return builtin;
}

json_t *
kf_search_default (kf_search_t *self, const char *key)
{
    return json_object_get (s_defaults (self), key);
}

/* A run's value of KEY: its config's, else the default. Borrowed. */
static json_t *
s_setting (kf_search_t *self, json_t *run, const char *key)
{
    json_t *v = json_object_get (json_object_get (run, "config"), key);
    return v ? v : kf_search_default (self, key);
}

typedef struct {
    int generations, population, in_flight, bins;
    kf_select_config_t select;
    bool islands, gradients, tuning;
    int island_count, migration_every;
    int window, max_hints, min_moves;
    double decay;
    int tuning_rounds, tuning_configs;
    int stop_after;
    double stop_margin;
} s_settings_t;

static void
s_settings (kf_search_t *self, json_t *run, s_settings_t *st)
{
    memset (st, 0, sizeof *st);
#define S_GET_INT(key) ((int) json_integer_value (s_setting (self, run, key)))
    st->generations = (int) kf_jint (run, "generations");
    st->population = (int) kf_jint (run, "population");
    st->in_flight = S_GET_INT ("max_in_flight");
    if (st->in_flight <= 0)
        st->in_flight = st->population;
    st->bins = S_GET_INT ("archive_bins");
    st->islands = json_is_true (s_setting (self, run, "islands"));
    st->island_count = st->islands ? S_GET_INT ("island_count") : 1;
    if (st->island_count < 1)
        st->island_count = 1;
    st->migration_every = S_GET_INT ("migration_every");
    st->gradients = json_is_true (s_setting (self, run, "gradients"));
    st->window = S_GET_INT ("gradient_window");
    st->decay = json_number_value (s_setting (self, run, "gradient_decay"));
    st->max_hints = S_GET_INT ("max_hints");
    st->min_moves = S_GET_INT ("hint_min_moves");
    st->tuning = json_is_true (s_setting (self, run, "tuning"));
    st->tuning_rounds = S_GET_INT ("tuning_rounds");
    st->tuning_configs = S_GET_INT ("tuning_configs");
    st->stop_after = S_GET_INT ("stop_after");
    st->stop_margin = json_number_value (s_setting (self, run, "stop_margin"));
    json_t *ratios = s_setting (self, run, "selection");
    for (int i = 0; i < KF_SELECT_N; i++)
        st->select.ratio[i] = json_number_value (json_object_get (ratios, s_ratio_keys[i]));
    /* A switched-off mechanism takes its strategy with it. */
    if (!st->gradients)
        st->select.ratio[KF_SELECT_CURIOSITY] = 0;
    st->select.islands = st->island_count;
    st->select.inspirations = S_GET_INT ("inspirations");
#undef S_GET_INT
}

/* Writes the run's effective settings into runs.config once, at start:
 * every key the submitter left out takes the default in force now, so a
 * coordinator restarted with other defaults continues the run as it
 * began, and `kfctl show` can say what the run used. A run's "selection"
 * replaces the default mix whole (strategies it omits weigh 0). */
static int
s_resolve_config (kf_search_t *self, int64_t run_id)
{
    char id[24];
    const char *params[1] = { S_I64 (id, run_id) };
    json_t *row = kf_db_row (self->db, "SELECT config FROM runs WHERE id = $1", 1, params,
                             NULL);
    if (!row)
        return -1;
    json_t *config = json_object_get (row, "config");
    bool changed = false;
    for (size_t k = 0; k < S_N_KEYS; k++)
        if (!json_object_get (config, s_keys[k].key) && kf_search_default (self, s_keys[k].key)) {
            json_object_set (config, s_keys[k].key, kf_search_default (self, s_keys[k].key));
            changed = true;
        }
    int rc = 0;
    if (changed) {
        char *text = json_dumps (config, JSON_COMPACT);
        const char *p2[2] = { id, text };
        rc = kf_db_exec (self->db, "UPDATE runs SET config = $2 WHERE id = $1", 2, p2) < 0
                 ? -1 : 0;
        free (text);
    }
    json_decref (row);
    return rc;
}

/* ---- planning ----------------------------------------------------------- */

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

/* "{1,2,3}" into three ints; false when it is not that. */
static bool
s_coords (json_t *text, int out[3])
{
    return json_is_string (text)
           && sscanf (json_string_value (text), "{%d,%d,%d}", &out[0], &out[1], &out[2]) == 3;
}

/* What planning needs of the run's archive, read once per planning pass:
 * the elites in cell order, the recent transitions (oldest first) and the
 * gradients over them. */
typedef struct {
    kf_elite_t *elites;
    size_t n_elites;
    kf_transition_t *trans;
    size_t n_trans;
    kf_gradient_t grad;
    char fingerprint[17];    /* of the elites' (cell, source) pairs */
    bool loaded;
} s_snapshot_t;

static void
s_snapshot_free (s_snapshot_t *snap)
{
    free (snap->elites);
    free (snap->trans);
    memset (snap, 0, sizeof *snap);
}

static int
s_snapshot_load (kf_search_t *self, int64_t run_id, const s_settings_t *st,
                 s_snapshot_t *snap)
{
    if (snap->loaded)
        return 0;
    char id[24], window[24];
    const char *params[2] = { S_I64 (id, run_id), S_I64 (window, st->window) };
    json_t *rows = kf_db_query (
        self->db,
        "SELECT a.candidate_id, c.coords::text AS coords, a.fitness, a.speedup, c.island,"
        " a.cell::text AS cell, c.source_hash,"
        " coalesce((SELECT array_agg(m.island ORDER BY m.island) FROM island_migrants m"
        "  WHERE m.run_id = a.run_id AND m.candidate_id = a.candidate_id), '{}')::text"
        "  AS migrants"
        " FROM archive_cells a JOIN candidates c ON c.id = a.candidate_id"
        " WHERE a.run_id = $1 ORDER BY a.cell",
        1, params);
    if (!rows)
        return -1;
    snap->elites = calloc (json_array_size (rows) + 1, sizeof *snap->elites);
    /* What the archive held, by content rather than by ids: two runs with
     * the same seed that reach the same archive must choose alike, which
     * a test checks through this fingerprint. */
    char *listing = NULL;
    size_t listing_size = 0;
    FILE *lf = open_memstream (&listing, &listing_size);
    size_t i;
    json_t *row;
    json_array_foreach (rows, i, row) {
        if (lf)
            fprintf (lf, "%s:%s;", kf_jstr (row, "cell"), kf_jstr (row, "source_hash"));
        kf_elite_t *e = &snap->elites[snap->n_elites];
        if (!s_coords (json_object_get (row, "coords"), e->coords))
            continue;
        e->candidate_id = kf_jint (row, "candidate_id");
        e->fitness = json_number_value (json_object_get (row, "fitness"));
        e->speedup = json_number_value (json_object_get (row, "speedup"));
        int own = (int) kf_jint (row, "island");
        e->islands = own >= 0 && own < KF_SELECT_MAX_ISLANDS ? 1u << own : 0;
        const char *m = kf_jstr (row, "migrants");
        for (const char *p = m; *p; p++) {
            char *end;
            long k = strtol (p, &end, 10);
            if (end != p) {
                if (k >= 0 && k < KF_SELECT_MAX_ISLANDS)
                    e->islands |= 1u << k;
                p = end - 1;
            }
        }
        snap->n_elites++;
    }
    json_decref (rows);
    if (lf)
        fclose (lf);
    char digest[65];
    kf_sha256_hex (listing ? listing : "", listing ? listing_size : 0, digest);
    snprintf (snap->fingerprint, sizeof snap->fingerprint, "%.16s", digest);
    free (listing);
    if (st->gradients) {
        rows = kf_db_query (self->db,
                            "SELECT parent_coords::text AS p, child_coords::text AS c,"
                            " parent_fitness, child_fitness, novel FROM transitions"
                            " WHERE run_id = $1 ORDER BY child_id DESC LIMIT $2",
                            2, params);
        if (!rows)
            return -1;
        size_t n = json_array_size (rows);
        snap->trans = calloc (n + 1, sizeof *snap->trans);
        for (size_t k = 0; k < n; k++) {
            /* Newest first from the query; oldest first for the estimator. */
            json_t *r = json_array_get (rows, n - 1 - k);
            kf_transition_t *t = &snap->trans[snap->n_trans];
            if (!s_coords (json_object_get (r, "p"), t->parent)
                || !s_coords (json_object_get (r, "c"), t->child))
                continue;
            t->parent_fitness = json_number_value (json_object_get (r, "parent_fitness"));
            t->child_fitness = json_number_value (json_object_get (r, "child_fitness"));
            t->novel = json_is_true (json_object_get (r, "novel"));
            snap->n_trans++;
        }
        json_decref (rows);
        kf_gradient_estimate (snap->trans, snap->n_trans, st->decay, &snap->grad);
        for (size_t k = 0; k < snap->n_elites; k++)
            snap->elites[k].curiosity = kf_gradient_weight (&snap->grad, snap->trans,
                                                            snap->n_trans, st->decay,
                                                            snap->elites[k].coords);
    }
    snap->loaded = true;
    return 0;
}

/* Island migration at the start of GENERATION: the fittest elite of each
 * island joins the next island (a ring), so good ideas cross over every
 * migration_every generations while the islands otherwise evolve apart.
 * Idempotent (the membership is a set). */
static int
s_migrate (kf_search_t *self, int64_t run_id, const s_settings_t *st, s_snapshot_t *snap,
           int generation)
{
    int K = st->island_count;
    int best[KF_SELECT_MAX_ISLANDS];
    for (int k = 0; k < K; k++) {
        best[k] = -1;
        for (size_t i = 0; i < snap->n_elites; i++)
            if ((snap->elites[i].islands >> k & 1u)
                && (best[k] < 0 || snap->elites[i].fitness > snap->elites[best[k]].fitness))
                best[k] = (int) i;
    }
    int moved = 0;
    for (int k = 0; k < K; k++) {
        if (best[k] < 0)
            continue;
        int to = (k + 1) % K;
        char run[24], isl[24], cand[24], gen[24];
        const char *params[4] = { S_I64 (run, run_id), S_I64 (isl, to),
                                  S_I64 (cand, snap->elites[best[k]].candidate_id),
                                  S_I64 (gen, generation) };
        long n = kf_db_exec (self->db,
                             "INSERT INTO island_migrants (run_id, island, candidate_id,"
                             " generation) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                             4, params);
        if (n < 0)
            return -1;
        moved += n > 0;
    }
    /* Membership changes only after every island's emigrant was chosen, so
     * the order of the islands does not matter. */
    for (int k = 0; k < K; k++)
        if (best[k] >= 0)
            snap->elites[best[k]].islands |= 1u << ((k + 1) % K);
    if (moved)
        kf_debug ("run %lld: %d island migrant(s) at generation %d", (long long) run_id,
                  moved, generation);
    return 0;
}

/* The kernel tried last from PARENT_ID: its most recently finished
 * child, as a prompt kernel object (caller's), or NULL when it has none
 * (or there is no parent: then nothing was tried from it). */
static json_t *
s_last_kernel (kf_search_t *self, int64_t parent_id)
{
    int64_t id = parent_id ? kf_lineage_last_child (self->db, parent_id) : 0;
    return id ? kf_prompt_kernel (self->db, id) : NULL;
}

/* Plans one candidate: (GENERATION, SLOT) of PHASE, its sequence number
 * SEQ keying every draw. A search candidate's parent is selected from the
 * archive; a tuning candidate's is TUNE_PARENT (an elite index). Inserts
 * the row with its prompt and queues its generate job (or, for the task's
 * initial kernel, goes straight to compiling it). */
static int
s_plan (kf_search_t *self, json_t *run, const s_settings_t *st, s_snapshot_t *snap,
        int generation, int slot, int64_t seq, bool tuning, int tune_parent)
{
    int64_t run_id = kf_jint (run, "id");
    int64_t seed = kf_jint (run, "seed");
    json_t *spec = json_object_get (run, "spec");
    json_t *config = json_object_get (run, "config");
    const char *language = kf_jstr (run, "language");
    if (s_snapshot_load (self, run_id, st, snap))
        return -1;
    if (!tuning && slot == 0 && generation > 0 && st->islands && st->island_count > 1
        && st->migration_every > 0 && generation % st->migration_every == 0
        && s_migrate (self, run_id, st, snap, generation))
        return -1;

    /* Choose the parent and inspirations. */
    kf_selection_t sel;
    int island = st->islands ? (int) (seq % st->island_count) : 0;
    if (tuning) {
        memset (&sel, 0, sizeof sel);
        sel.parent = tune_parent;
        /* A tuning candidate stays on its elite's island. */
        uint32_t bits = snap->elites[tune_parent].islands;
        for (int k = 0; st->islands && k < st->island_count; k++)
            if (bits >> k & 1u) {
                island = k;
                break;
            }
    }
    else if (kf_select (&st->select, snap->elites, snap->n_elites, seed, seq, island, &sel))
        return -1;
    const kf_elite_t *parent = sel.parent >= 0 ? &snap->elites[sel.parent] : NULL;
    char *hints = NULL;
    if (st->gradients && parent && snap->n_trans)
        hints = kf_gradient_hints (&snap->grad, snap->trans, snap->n_trans, parent->coords,
                                   st->max_hints, st->min_moves);
    if (hints) {
        /* In the target's words (no shared memory or warps on the host),
         * stored as the prompt carries them. */
        char *worded = kf_prompt_hints_for_target (
            hints, kf_prompt_target_kind (kf_jstr (run, "target"), language));
        free (hints);
        hints = worded;
    }
    json_t *selection = json_pack ("{s:s, s:b, s:f, s:i, s:I, s:s, s:I, s:b}", "strategy",
                                   tuning ? "tuning" : kf_select_strategy_name (sel.strategy),
                                   "fallback", sel.fallback, "draw", sel.draw, "island",
                                   island, "elites", (json_int_t) snap->n_elites, "archive",
                                   snap->fingerprint, "transitions",
                                   (json_int_t) snap->n_trans, "hints", hints != NULL);
    if (parent)
        json_object_set_new (selection, "parent_coords",
                             json_pack ("[i,i,i]", parent->coords[0], parent->coords[1],
                                        parent->coords[2]));
    json_t *inspirations = json_array ();
    char insp_ids[200] = "{";
    for (int i = 0; i < sel.n_inspirations; i++) {
        int64_t iid = snap->elites[sel.inspirations[i]].candidate_id;
        json_t *k = kf_prompt_kernel (self->db, iid);
        if (k)
            json_array_append_new (inspirations, k);
        size_t used = strlen (insp_ids);
        snprintf (insp_ids + used, sizeof insp_ids - used, "%s%lld", i ? "," : "",
                  (long long) iid);
    }
    strcat (insp_ids, "}");
    /* One more from an earlier run of the op (kf_memory.c): shown only,
     * never in this run's archive, so never a parent or the run's best. */
    bool memory_failed = false;
    json_t *remembered = !tuning && st->select.inspirations > 0
                                 && json_is_true (s_setting (self, run, "memory"))
                             ? kf_memory_pick (self->db, run, seq, &memory_failed)
                             : NULL;
    if (remembered) {
        json_object_set_new (selection, "memory", kf_memory_note (remembered));
        json_array_append_new (inspirations, remembered);
    }

    /* The prompt: the parent as the kernel to improve (the run's best when
     * nothing is selected yet), the last kernel tried from it, the
     * inspirations, the hints and the evolvable sections of this run. */
    char backend[32], arch[64];
    kf_search_split_target (kf_jstr (run, "target"), backend, sizeof backend, arch, sizeof arch);
    int64_t version_id = 0;
    json_t *sections = kf_meta_sections (self, run_id, &version_id);
    /* The fastest kernel the search holds, counted or not (a held or
     * re-verifying one is marked so in the prompt), and the parent with
     * what was tried from it (kf_lineage.c). */
    json_t *top = kf_lineage_best (self->db, run_id);
    int64_t base_id = parent ? parent->candidate_id : kf_jint (top, "id");
    json_t *best = base_id ? kf_prompt_kernel (self->db, base_id) : NULL;
    json_t *last = s_last_kernel (self, parent ? parent->candidate_id : 0);
    json_t *children = parent ? kf_lineage_children (self->db, parent->candidate_id,
                                                     parent->speedup, KF_LINEAGE_CHILDREN)
                              : NULL;
    json_t *hardware = kf_prompt_hardware (self->db, backend, arch, run_id);
    json_t *compiler = kf_prompt_compiler (self->db, backend);
    json_t *stats = kf_prompt_input_stats (self->db, run_id);
    json_t *tune_points = s_setting (self, run, "tuning_configs");
    kf_prompt_in_t in = { .spec = spec, .language = language,
                          .target = kf_jstr (run, "target"), .hardware = hardware,
                          .compiler = compiler, .input_stats = stats,
                          .base = best, .best = top, .last = last, .children = children,
                          .inspirations = inspirations, .hints = hints,
                          .sections = sections, .generation = generation, .slot = slot,
                          .population = st->population, .templated = tuning,
                          .tune_points = tune_points ? (int) json_integer_value (tune_points)
                                                     : 0 };
    char *prompt = sections ? kf_prompt_build (&in) : NULL;
    json_decref (hardware);
    json_decref (compiler);
    json_decref (stats);
    json_decref (top);
    json_decref (children);
    json_decref (last);
    json_decref (inspirations);
    json_decref (sections);
    int rc = prompt && !memory_failed ? 0 : -1;

    char runid[24], gen[24], slotbuf[24], parentbuf[24], isl[24];
    char *sel_text = json_dumps (selection, JSON_COMPACT);
    json_decref (selection);
    const char *params[11] = { S_I64 (runid, run_id), S_I64 (gen, generation),
                               S_I64 (slotbuf, slot),
                               parent ? S_I64 (parentbuf, parent->candidate_id) : NULL,
                               language, prompt, tuning ? "tuning" : "search",
                               S_I64 (isl, island), sel_text, insp_ids, hints };
    json_t *row = NULL;
    bool failed = true;
    if (rc == 0)
        row = kf_db_row (self->db,
                         "INSERT INTO candidates (run_id, generation, slot, parent_id,"
                         " language, prompt, phase, island, selection, inspirations, hints)"
                         " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
                         " ON CONFLICT (run_id, generation, slot) DO NOTHING"
                         " RETURNING id",
                         11, params, &failed);
    free (sel_text);
    free (hints);
    int64_t cand = kf_jint (row, "id");
    json_decref (row);
    if (rc || failed || !cand) {
        /* !cand: planned before (a replay); its job exists. */
        free (prompt);
        json_decref (best);
        return rc || failed ? -1 : 0;
    }
    if (kf_meta_attach (self, cand, version_id)) {
        free (prompt);
        json_decref (best);
        return -1;
    }
    if (slot == 0) {
        const char *p2[2] = { runid, gen };
        if (kf_db_exec (self->db,
                        "UPDATE runs SET generation = greatest(generation, $2) WHERE id = $1",
                        2, p2) < 0)
            rc = -1;
        kf_search_event (self, run_id, "generation",
                 json_pack ("{s:i, s:s, s:O}", "generation", generation, "phase",
                            tuning ? "tuning" : "search", "best_speedup",
                            json_object_get (run, "best_speedup")));
    }
    json_t *initial = json_object_get (spec, "initial");
    if (rc == 0 && !tuning && generation == 0 && slot == 0 && initial) {
        /* The user's own starting point is the first candidate: it is
         * compiled and evaluated like any other, with no generator. */
        json_t *given = json_pack ("{s:O, s:s}", "source", json_object_get (initial, "source"),
                                   "generator", "initial");
        rc = s_generated (self, run, cand, given);
        json_decref (given);
        free (prompt);
        json_decref (best);
        return rc;
    }
    /* Seeds are a function of (run seed, generation, slot) only, so a
     * run replays identically with the same seed. */
    int64_t job_seed = (seed * 1000003 + (int64_t) generation * st->population + slot)
                       & 0x1fffffffffffffLL;
    json_t *payload = json_pack ("{s:O, s:s, s:I, s:s}", "task", spec, "language", language,
                                 "seed", (json_int_t) job_seed, "prompt", prompt);
    free (prompt);
    /* A run without an initial kernel starts from the generator's
     * plainest version, so the search has a baseline to beat. */
    if (!tuning && generation == 0 && slot == 0)
        json_object_set_new (payload, "baseline", json_true ());
    if (tuning)
        json_object_set_new (payload, "templated", json_true ());
    const char *model = s_model_for (config, generation, job_seed);
    json_object_set_new (payload, "model", json_string (model));
    static const char *sampling[] = { "temperature", "top_p", "max_tokens" };
    for (size_t k = 0; k < 3; k++)
        if (s_setting (self, run, sampling[k]))
            json_object_set (payload, sampling[k], s_setting (self, run, sampling[k]));
    if (parent && best && *kf_jstr (best, "source"))
        json_object_set_new (payload, "parent",
                             json_pack ("{s:s, s:f}", "source", kf_jstr (best, "source"),
                                        "speedup", parent->speedup));
    json_decref (best);
    char candbuf[24];
    const char *mp[2] = { S_I64 (candbuf, cand), model };
    if (rc || kf_db_exec (self->db, "UPDATE candidates SET model = $2 WHERE id = $1", 2, mp) < 0) {
        json_decref (payload);
        return -1;
    }
    return s_insert_job (self, run_id, cand, "generate", "generate", NULL, NULL, payload, NULL);
}

/* The steady-state step, after any candidate of RUN_ID ends (and at the
 * start): while fewer than max_in_flight candidates are open, the budget
 * lasts and the main phase has candidates left, the next one is planned,
 * so no worker waits for a generation to close. Candidate n of the main
 * phase is (generation n / population, slot n % population). When nothing
 * is open and the main phase is planned out, the tuning rounds follow,
 * one at a time; then the run ends. Everything it reads is in the
 * database, so calling it again (a replay, a restart) plans nothing twice. */
static int
s_fill (kf_search_t *self, int64_t run_id)
{
    json_t *run = s_run_row (self, run_id);
    if (!run)
        return -1;
    if (strcmp (kf_jstr (run, "status"), "running")) {
        json_decref (run);
        return 0;
    }
    s_settings_t st;
    s_settings (self, run, &st);
    char id[24];
    const char *params[1] = { S_I64 (id, run_id) };
    json_t *counts = kf_db_row (self->db,
                                "SELECT count(*) FILTER (WHERE phase = 'search') AS planned,"
                                /* A re-verification keeps its candidate open:
                                 * the run does not end while one waits. */
                                " count(*) FILTER (WHERE finished_at IS NULL"
                                "  OR verify_state = 'pending' OR fidelity = 'pending') AS open,"
                                " count(DISTINCT generation) FILTER (WHERE phase = 'tuning')"
                                "  AS rounds"
                                " FROM candidates WHERE run_id = $1",
                                1, params, NULL);
    if (!counts) {
        json_decref (run);
        return -1;
    }
    int64_t planned = kf_jint (counts, "planned"), open = kf_jint (counts, "open");
    int rounds = (int) kf_jint (counts, "rounds");
    json_decref (counts);
    int64_t total = (int64_t) st.generations * st.population;
    char why[200];
    const char *spent = s_budget_spent (run, why, sizeof why);
    s_snapshot_t snap = { 0 };
    /* A stalled search ends its main phase (kf_stop.c); tuning follows. */
    char stopped[240] = "";
    int rc = planned < total
                 ? kf_stop_check (self->db, run_id, st.generations, st.population,
                                  st.stop_after, st.stop_margin, stopped, sizeof stopped)
                 : 0;
    if (rc > 0)
        total = planned;
    rc = rc < 0 ? -1 : 0;
    while (rc == 0 && !spent && planned < total && open < st.in_flight) {
        rc = s_plan (self, run, &st, &snap, (int) (planned / st.population),
                     (int) (planned % st.population), planned, false, -1);
        planned++;
        open++;
    }
    if (rc == 0 && open == 0 && !spent && planned >= total && st.tuning
        && rounds < st.tuning_rounds) {
        /* A tuning round: templated versions of the best elites, each
         * swept over up to tuning_configs points (docs/search.md). */
        rc = s_snapshot_load (self, run_id, &st, &snap);
        int want = st.population < st.in_flight ? st.population : st.in_flight;
        int *best = calloc ((size_t) want + 1, sizeof *best);
        int n = rc == 0 ? kf_select_best (snap.elites, snap.n_elites, best, want) : 0;
        int generation = st.generations + rounds;
        for (int i = 0; i < n && rc == 0; i++)
            rc = s_plan (self, run, &st, &snap, generation, i,
                         total + (int64_t) rounds * st.population + i, true, best[i]);
        free (best);
        open += n;
    }
    if (rc == 0 && open == 0) {
        char reason[300];
        if (spent)
            snprintf (reason, sizeof reason, "%s", spent);
        else if (*stopped && rounds)
            snprintf (reason, sizeof reason, "%s; then %d tuning round%s", stopped, rounds,
                      rounds == 1 ? "" : "s");
        else if (*stopped)
            snprintf (reason, sizeof reason, "%s", stopped);
        else if (rounds)
            snprintf (reason, sizeof reason, "completed %d generations and %d tuning round%s",
                      st.generations, rounds, rounds == 1 ? "" : "s");
        else
            snprintf (reason, sizeof reason, "completed %d generations", st.generations);
        /* A run in which no candidate could even be generated has not
         * searched anything: it failed, and says why. */
        char status[16] = "done";
        rc = kf_lineage_run_end (self->db, run_id, status, sizeof status, reason, sizeof reason);
        if (rc == 0)
            rc = s_finish_run (self, run_id, status, reason);
    }
    s_snapshot_free (&snap);
    json_decref (run);
    return rc;
}

int
kf_search_begin (kf_search_t *self, int64_t run_id)
{
    return s_fill (self, run_id);
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
int
kf_search_archive_offer (kf_search_t *self, int64_t run_id, int64_t cand_id,
                         const char *speedup, const char *fitness)
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
    int bins = (int) kf_jint (row, "bins");
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

/* A correct candidate counts towards the run's figures unless it waits
 * for its re-verification, or failed that and no person has accepted it
 * yet (kf_verify.h). */
#define S_COUNTS KF_VERIFY_COUNTS

/* The run's best and first-correct figures, from the candidates that
 * count: recomputed whole, so an audit verdict can move them either way.
 * Returns them (best_candidate_id, best_speedup, first_speedup; the
 * caller's), or NULL on a database error. */
static json_t *
s_run_figures (kf_search_t *self, int64_t run_id)
{
    char run[24];
    const char *p[1] = { S_I64 (run, run_id) };
    return kf_db_row (self->db,
                      "UPDATE runs SET (best_candidate_id, best_speedup) ="
                      " (SELECT id, speedup FROM candidates WHERE run_id = $1"
                      "  AND status = 'correct' AND speedup > 0 AND " S_COUNTS
                      "  ORDER BY speedup DESC, id LIMIT 1),"
                      " first_speedup = (SELECT speedup FROM candidates WHERE run_id = $1"
                      "  AND status = 'correct' AND " S_COUNTS
                      "  ORDER BY generation, slot LIMIT 1)"
                      " WHERE id = $1"
                      " RETURNING best_candidate_id, best_speedup, first_speedup",
                      1, p, NULL);
}

json_t *
kf_search_run_figures (kf_search_t *self, int64_t run_id)
{
    return s_run_figures (self, run_id);
}

/* Makes a candidate final. A correct one found suspicious was marked
 * pending just before (kf_verify_check), so it does not count yet. */
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
                             " RETURNING generation, slot, verify_state, fidelity",
                             6, params, NULL);
    if (!row)
        return 0;   /* already final: nothing to do twice */
    int generation = (int) kf_jint (row, "generation");
    bool verifying = !strcmp (kf_jstr (row, "verify_state"), "pending");
    char fidelity[16];
    snprintf (fidelity, sizeof fidelity, "%s", kf_jstr (row, "fidelity"));
    json_decref (row);
    /* The parent->child move for the gradient estimator: coordinates and
     * fitness before and after, and whether the child's coordinates were
     * new to the run (no candidate planned before it had them). A child
     * without coordinates (no source came back) moved nowhere. */
    if (kf_db_exec (self->db,
                    "INSERT INTO transitions (child_id, run_id, parent_id, parent_coords,"
                    " child_coords, parent_fitness, child_fitness, novel)"
                    " SELECT c.id, c.run_id, p.id, p.coords, c.coords, p.fitness, c.fitness,"
                    "  NOT EXISTS (SELECT 1 FROM candidates o WHERE o.run_id = c.run_id"
                    "   AND o.coords = c.coords AND o.id < c.id)"
                    " FROM candidates c JOIN candidates p ON p.id = c.parent_id"
                    " WHERE c.id = $1 AND c.coords IS NOT NULL AND p.coords IS NOT NULL"
                    "  AND p.fitness IS NOT NULL"
                    " ON CONFLICT (child_id) DO NOTHING",
                    1, params) < 0)
        return -1;
    if (correct && kf_search_archive_offer (self, run_id, cand_id, sp, fit))
        return -1;
    /* A result held for audit or waiting for its re-verification still
     * enters the archive, so the search keeps exploring from it; only the
     * figures reported as the run's result wait (kf_verify.c,
     * kf_search_audit). */
    if (correct) {
        json_t *figures = s_run_figures (self, run_id);
        if (!figures)
            return -1;
        json_decref (figures);
    }
    json_t *event = json_pack ("{s:I, s:i, s:s, s:o}", "candidate_id", (json_int_t) cand_id,
                               "generation", generation, "status", status, "speedup",
                               correct ? json_real (speedup) : json_null ());
    if (correct && verifying)
        json_object_set_new (event, "verify_state", json_string ("pending"));
    if (correct && *fidelity)   /* a screen figure counts for nothing */
        json_object_set_new (event, "fidelity", json_string (fidelity));
    kf_search_event (self, run_id, "candidate", event);
    if (kf_meta_after_candidate (self, run_id, cand_id))
        return -1;
    /* Repeats of this source that waited for its verdict take it now. */
    if (kf_repeat_resolve (self, run_id, cand_id))
        return -1;
    return s_fill (self, run_id);
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
    int64_t run_id = kf_jint (run, "id");
    if (s_account (self, run_id, cand_id, result))
        return -1;
    const char *source = kf_jstr (result, "source");
    if (!*source) {
        /* The gateway says why (a response cut off by the token limit, an
         * empty one, one with no code); that is the candidate's verdict. */
        char detail[400];
        snprintf (detail, sizeof detail, "the generator returned no source%s%s%s%s",
                  *kf_jstr (result, "error_kind") ? ": " : "", kf_jstr (result, "error_kind"),
                  *kf_jstr (result, "detail") ? ": " : "", kf_jstr (result, "detail"));
        return s_finish_candidate (self, run_id, cand_id, "failed", 0, detail, NULL);
    }
    char hash[65], cand[24], blobs[80], backend[32], arch[64];
    if (s_store_blob (self, source, strlen (source), hash))
        return -1;
    /* A source the run has judged before (comments and spacing aside) is
     * not compiled and timed again: its earlier verdict is reused. */
    char norm[65];
    int repeat = kf_repeat_check (self, run_id, cand_id, source, hash,
                                  kf_jstr (result, "generator"),
                                  json_is_true (s_setting (self, run, "dedup")), norm);
    if (repeat)
        return repeat < 0 ? -1 : 0;
    /* Coordinates come from the source alone (comments and strings removed
     * first), so they are known before the kernel is even compiled. */
    kf_coords_t c = { 0, 0, 0 };
    char *why = NULL, coords[48];
    kf_descriptor_classify (source, strlen (source), kf_jstr (run, "language"), &c, &why);
    snprintf (coords, sizeof coords, "{%d,%d,%d}", c.mem, c.algo, c.sync);
    const char *params[6] = { S_I64 (cand, cand_id), hash, kf_jstr (result, "generator"),
                              coords, why, norm };
    json_t *row = kf_db_row (self->db,
                             "UPDATE candidates SET source_hash = $2, generator = $3,"
                             " status = 'compiling', coords = $4::int[], coords_why = $5,"
                             " norm_hash = $6 WHERE id = $1 RETURNING phase",
                             6, params, NULL);
    free (why);
    if (!row)
        return -1;
    bool tuning = !strcmp (kf_jstr (row, "phase"), "tuning");
    json_decref (row);
    kf_search_split_target (kf_jstr (run, "target"), backend, sizeof backend, arch, sizeof arch);
    snprintf (blobs, sizeof blobs, "{%s}", hash);
    /* A tuning round's candidate is swept over tuning_configs points
     * (best@8 by default); any other over the run's `tune` (1: none). */
    json_t *tune = tuning ? s_setting (self, run, "tuning_configs")
                          : json_object_get (json_object_get (run, "config"), "tune");
    return s_insert_job (self, run_id, cand_id, "compile", "compile", backend, NULL,
                         json_pack ("{s:s, s:{s:s, s:s}, s:s, s:I, s:O*}", "language",
                                    kf_jstr (run, "language"), "target", "backend",
                                    backend, "arch", arch, "source_hash", hash,
                                    "tune_max_configs",
                                    (json_int_t) (tune ? json_integer_value (tune) : 1),
                                    "libraries",
                                    json_object_get (json_object_get (run, "spec"), "libraries")),
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
    int64_t run_id = kf_jint (run, "id");
    zframe_t *artifact = frames ? zmsg_first (frames) : NULL;
    bool compiled = json_is_true (json_object_get (result, "compiled")) && artifact;
    const char *log = kf_jstr (result, "log");
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
        return kf_reference_probe (self, run, hash);   /* begins once it is judged */
    }
    if (!compiled)
        return s_finish_candidate (self, run_id, cand_id, "compile_failed", 0,
                                   "does not compile", log);
    char hash[65], cand[24], blobs[1200], backend[32], arch[64];
    if (s_store_blob (self, zframe_data (artifact), zframe_size (artifact), hash))
        return -1;
    /* The compile worker classified the code it built (the source
     * preprocessed with the build's -D flags, #if branches chosen): those
     * coordinates replace the ones taken from the raw source at generate
     * time, before the archive insert at evaluation. */
    json_t *built = json_object_get (result, "coords");
    int lv[3] = { -1, -1, -1 };
    for (size_t k = 0; k < 3 && json_array_size (built) == 3; k++)
        if (json_is_integer (json_array_get (built, k)))
            lv[k] = (int) json_integer_value (json_array_get (built, k));
    if (lv[0] >= 0 && lv[0] <= 3 && lv[1] >= 0 && lv[1] <= 3 && lv[2] >= 0 && lv[2] <= 3) {
        char built_coords[48];
        snprintf (built_coords, sizeof built_coords, "{%d,%d,%d}", lv[0], lv[1], lv[2]);
        const char *cp[3] = { S_I64 (cand, cand_id), built_coords,
                              kf_jstr (result, "coords_why") };
        if (kf_db_exec (self->db, "UPDATE candidates SET coords = $2::int[], coords_why = $3"
                                  " WHERE id = $1", 3, cp) < 0)
            return -1;
    }
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
    int64_t seed = kf_jint (run, "seed") * 7919 + kf_jint (row, "generation") * 1009
                   + kf_jint (row, "slot");
    json_decref (row);
    json_t *timing = json_object_get (json_object_get (run, "config"), "timing");
    /* A PyTorch run has no reference artifact (its data stays on the exec
     * hosts, kf_reference.c): the candidate's blobs alone. */
    const char *ref_blob = kf_jstr (run, "ref_artifact");
    snprintf (blobs, sizeof blobs, "{%s%s%s}", configs ? cand_blobs : hash,
              *ref_blob ? "," : "", ref_blob);
    kf_search_split_target (kf_jstr (run, "target"), backend, sizeof backend, arch, sizeof arch);
    json_t *payload = json_pack ("{s:O, s:I, s:O}", "task", json_object_get (run, "spec"),
                                 "seed", (json_int_t) (seed & 0xffffffffffffLL), "timing",
                                 timing ? timing : self->timing);
    if (configs)
        json_object_set_new (payload, "configs", configs);
    if (kf_reference_eval_payload (self, run, payload)
        || kf_fidelity_first_payload (self, run, payload)) {
        json_decref (payload);
        return -1;
    }
    return s_insert_job (self, run_id, cand_id, "execute", "evaluate", backend, arch,
                         payload, blobs);
}

int
kf_search_record_evaluation (kf_search_t *self, json_t *job, int64_t cand_id, json_t *result)
{
    const char *verdict = kf_jstr (result, "verdict");
    bool correct = !strcmp (verdict, S_FINAL_CORRECT);
    double speedup = json_number_value (json_object_get (result, "speedup"));
    json_t *cand_t = json_object_get (result, "candidate");
    json_t *ref_t = json_object_get (result, "reference");
    char cand[24], jobid[24], sp[40], cns[40], rns[40];
    snprintf (sp, sizeof sp, "%.17g", speedup);
    snprintf (cns, sizeof cns, "%.17g", json_number_value (json_object_get (cand_t, "median_ns")));
    snprintf (rns, sizeof rns, "%.17g", json_number_value (json_object_get (ref_t, "median_ns")));
    /* The figures keep the whole result, the tuning table included. */
    char *figures = json_dumps (result, JSON_COMPACT);
    /* The protocol of the figures: the job's (jobs.fidelity,
     * kf_fidelity.c), unless a sweep says it could time none in full. */
    const char *fidelity = kf_jstr (result, "fidelity");
    const char *params[10] = { S_I64 (cand, cand_id), S_I64 (jobid, kf_jint (job, "id")),
                               kf_jstr (job, "worker"), *verdict ? verdict : "unknown",
                               correct ? "true" : "false", correct ? sp : NULL,
                               cand_t ? cns : NULL, ref_t ? rns : NULL, figures,
                               strcmp (fidelity, "screen") ? NULL : fidelity };
    long rc = kf_db_exec (self->db,
                          "INSERT INTO evaluations (candidate_id, job_id, worker, verdict,"
                          " correct, speedup, candidate_ns, reference_ns, figures, fidelity)"
                          " SELECT $1::bigint, j.id, $3, $4, $5::boolean, $6::float8, $7::float8,"
                          "  $8::float8, $9::jsonb, coalesce($10, j.fidelity)"
                          " FROM jobs j WHERE j.id = $2"
                          " ON CONFLICT (job_id) DO NOTHING",
                          10, params);
    free (figures);
    return rc < 0 ? -1 : 0;
}

static int
s_evaluated (kf_search_t *self, json_t *run, json_t *job, int64_t cand_id,
             json_t *result)
{
    const char *verdict = kf_jstr (result, "verdict");
    static const char *known[] = { "correct", "incorrect", "crashed", "timeout" };
    const char *status = "crashed";
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp (verdict, known[i]))
            status = known[i];
    bool correct = !strcmp (status, S_FINAL_CORRECT);
    double speedup = json_number_value (json_object_get (result, "speedup"));
    if (kf_search_record_evaluation (self, job, cand_id, result))
        return -1;
    /* A tuned candidate's detail names the config that counted, so the
     * run's listing shows what the sweep chose without the table. */
    const char *detail = kf_jstr (result, "detail");
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
    /* A screen near the best is timed with the full protocol before it
     * counts (kf_fidelity.c); a suspicious full result is re-verified
     * (kf_verify.c). */
    if (correct && speedup > 0 && kf_fidelity_check (self, run, job, cand_id, result, speedup))
        return -1;
    return s_finish_candidate (self, kf_jint (run, "id"), cand_id, status, speedup,
                               detail, NULL);
}

int
kf_search_job_done (kf_search_t *self, json_t *job, json_t *result, zmsg_t *frames)
{
    int64_t run_id = kf_jint (job, "run_id");
    if (!run_id)
        return 0;   /* a job of no run (benchmarks) */
    json_t *run = s_run_row (self, run_id);
    if (!run)
        return -1;
    int rc = 0;
    if (!strcmp (kf_jstr (run, "status"), "running")) {
        int64_t cand = kf_jint (job, "candidate_id");
        const char *kind = kf_jstr (job, "kind");
        if (kf_reference_owns (job))
            rc = kf_reference_job_done (self, run, job, result, frames);
        else if (!strcmp (kind, "meta"))
            rc = kf_meta_job_done (self, job, result);
        else if (!strcmp (kind, "generate"))
            rc = s_generated (self, run, cand, result);
        else if (!strcmp (kind, "compile"))
            rc = s_compiled (self, run, cand, result, frames);
        else if (!strcmp (kind, "evaluate")
                 && (rc = kf_verify_job_done (self, run, job, result)) == 1
                 && (rc = kf_fidelity_job_done (self, run, job, result)) == 1)
            rc = s_evaluated (self, run, job, cand, result);   /* a first evaluation */
    }
    json_decref (run);
    return rc;
}

int
kf_search_audit (kf_search_t *self, int64_t cand_id, bool accept, json_t **out)
{
    *out = NULL;
    char id[24];
    const char *p[2] = { S_I64 (id, cand_id), accept ? "accepted" : "rejected" };
    bool failed;
    json_t *row = kf_db_row (self->db,
                             "UPDATE candidates SET audit_verdict = $2"
                             " WHERE id = $1 AND audit_reason IS NOT NULL"
                             " RETURNING run_id, audit_reason",
                             2, p, &failed);
    if (!row)
        return failed ? -1 : 1;
    int64_t run_id = kf_jint (row, "run_id");
    int rc = 0;
    if (!accept) {
        /* The archive again from every correct candidate but the rejected
         * ones, so the cell falls to the next best of its kind. */
        char run[24];
        const char *rp[1] = { S_I64 (run, run_id) };
        json_t *keep = NULL;
        if (kf_db_exec (self->db, "DELETE FROM archive_cells WHERE run_id = $1", 1, rp) < 0
            || !(keep = kf_db_query (self->db,
                                     "SELECT id, speedup, fitness FROM candidates"
                                     " WHERE run_id = $1 AND status = 'correct' AND speedup > 0"
                                     " AND audit_verdict IS DISTINCT FROM 'rejected' ORDER BY id",
                                     1, rp)))
            rc = -1;
        size_t i;
        json_t *c;
        json_array_foreach (keep, i, c) {
            char sp[40], fit[40];
            snprintf (sp, sizeof sp, "%.17g", json_number_value (json_object_get (c, "speedup")));
            snprintf (fit, sizeof fit, "%.17g", json_number_value (json_object_get (c, "fitness")));
            if (rc == 0 && kf_search_archive_offer (self, run_id, kf_jint (c, "id"), sp, fit))
                rc = -1;
        }
        json_decref (keep);
    }
    json_t *figures = rc == 0 ? s_run_figures (self, run_id) : NULL;
    if (figures) {
        *out = json_pack ("{s:I, s:I, s:s, s:O, s:O?, s:O?, s:O?}", "candidate_id",
                          (json_int_t) cand_id, "run_id", (json_int_t) run_id, "verdict",
                          p[1], "audit_reason", json_object_get (row, "audit_reason"),
                          "best_candidate_id", json_object_get (figures, "best_candidate_id"),
                          "best_speedup", json_object_get (figures, "best_speedup"),
                          "first_speedup", json_object_get (figures, "first_speedup"));
        json_decref (figures);
    }
    json_decref (row);
    if (!*out)
        return -1;
    kf_search_event (self, run_id, "audit", json_deep_copy (*out));
    return 0;
}

int
kf_search_job_failed (kf_search_t *self, json_t *job, const char *reason)
{
    int64_t run_id = kf_jint (job, "run_id");
    if (!run_id)
        return 0;
    if (!strcmp (kf_jstr (job, "kind"), "meta"))
        return kf_meta_job_failed (self, job, reason);   /* never fails the run */
    int64_t cand = kf_jint (job, "candidate_id");
    int verify_rc = kf_verify_job_failed (self, job, reason);
    if (verify_rc != 1)
        return verify_rc;   /* a re-verification: its candidate is held for audit */
    if ((verify_rc = kf_fidelity_job_failed (self, job, reason)) != 1)
        return verify_rc;   /* a full-protocol evaluation: held, as above */
    char text[600];
    snprintf (text, sizeof text, "%s job failed for good: %.500s",
              kf_jstr (job, "kind"), reason);
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

/* For kf_repeat.c, whose repeats end like any candidate. */
int
kf_search_finish_candidate (kf_search_t *self, int64_t run_id, int64_t cand_id,
                            const char *status, double speedup, const char *detail)
{
    return s_finish_candidate (self, run_id, cand_id, status, speedup, detail, NULL);
}
