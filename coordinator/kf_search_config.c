/*  kf_search_config.c - a run's search settings: every key with its type
 *  and bounds, the defaults (built in, or the coordinator's file over
 *  them), the check of a submission's config, and the settings a run
 *  keeps from its start (docs/search.md lists the keys).
 */
#include "kf_search_int.h"
#include "kf_fidelity.h"
#include "kf_json.h"
#include "kf_log.h"
#include "kf_str.h"
#include "kf_suggest.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

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
    { "tuning_near_best", S_NUM, 0, 1 },       /* kf_select_near_best */
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
    { "confirm_best", S_BOOL, 0, 0 },          /* kf_verify.c */
    { "idea_credit", S_BOOL, 0, 0 },           /* kf_prompt_credit.h */
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
    case S_NUM: {
        bool integer = s_keys[k].type == S_INT;
        if (!(integer ? json_is_integer (v) : json_is_number (v))
            || json_number_value (v) < s_keys[k].lo || json_number_value (v) > s_keys[k].hi)
            return kf_fail (why, integer ? "%s%s must be an integer in %g..%g"
                                         : "%s%s must be a number in [%g, %g]",
                            where, key, s_keys[k].lo, s_keys[k].hi);
        return 0;
    }
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
        if (!known) {   /* with the nearest known key, if one is near */
            const char *names[S_N_KEYS + 16] = { NULL };
            size_t n = 0;
            for (size_t k = 0; k < S_N_KEYS; k++)
                names[n++] = s_keys[k].key;
            for (size_t k = 0; s_other_keys[k] && n < S_N_KEYS + 16; k++)
                names[n++] = s_other_keys[k];
            const char *near = kf_suggest (key, names, n);
            return kf_fail (why, "config.%s: unknown key%s%s%s (docs/search.md lists a run"
                            " config's keys)", key, near ? "; did you mean '" : "",
                            near ? near : "", near ? "'?" : "");
        }
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
json_t *
kf_search_setting (kf_search_t *self, json_t *run, const char *key)
{
    json_t *v = json_object_get (json_object_get (run, "config"), key);
    return v ? v : kf_search_default (self, key);
}

void
kf_search_settings (kf_search_t *self, json_t *run, kf_search_settings_t *st)
{
    memset (st, 0, sizeof *st);
#define S_GET_INT(key) ((int) json_integer_value (kf_search_setting (self, run, key)))
    st->generations = (int) kf_jint (run, "generations");
    st->population = (int) kf_jint (run, "population");
    st->in_flight = S_GET_INT ("max_in_flight");
    if (st->in_flight <= 0)
        st->in_flight = st->population;
    st->bins = S_GET_INT ("archive_bins");
    st->islands = json_is_true (kf_search_setting (self, run, "islands"));
    st->island_count = st->islands ? S_GET_INT ("island_count") : 1;
    if (st->island_count < 1)
        st->island_count = 1;
    st->migration_every = S_GET_INT ("migration_every");
    st->gradients = json_is_true (kf_search_setting (self, run, "gradients"));
    st->window = S_GET_INT ("gradient_window");
    st->decay = json_number_value (kf_search_setting (self, run, "gradient_decay"));
    st->max_hints = S_GET_INT ("max_hints");
    st->min_moves = S_GET_INT ("hint_min_moves");
    st->tuning = json_is_true (kf_search_setting (self, run, "tuning"));
    st->tuning_rounds = S_GET_INT ("tuning_rounds");
    st->tuning_configs = S_GET_INT ("tuning_configs");
    st->tuning_near = json_number_value (kf_search_setting (self, run, "tuning_near_best"));
    st->stop_after = S_GET_INT ("stop_after");
    st->stop_margin = json_number_value (kf_search_setting (self, run, "stop_margin"));
    json_t *ratios = kf_search_setting (self, run, "selection");
    for (int i = 0; i < KF_SELECT_N; i++)
        st->select.ratio[i] = json_number_value (json_object_get (ratios, s_ratio_keys[i]));
    /* A switched-off mechanism takes its strategy with it. */
    if (!st->gradients)
        st->select.ratio[KF_SELECT_CURIOSITY] = 0;
    st->select.islands = st->island_count;
    st->select.inspirations = S_GET_INT ("inspirations");
#undef S_GET_INT
}

/* The run's token and money budgets (kf_search_int.h). */
const char *
kf_search_budget_spent (json_t *run, char *why, size_t size)
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

/* Writes the run's effective settings into runs.config once, at start:
 * every key the submitter left out takes the default in force now, so a
 * coordinator restarted with other defaults continues the run as it
 * began, and `kfctl show` can say what the run used. A run's "selection"
 * replaces the default mix whole (strategies it omits weigh 0). */
int
kf_search_resolve_config (kf_search_t *self, int64_t run_id)
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
