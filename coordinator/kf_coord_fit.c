/*  kf_coord_fit.c - can the connected fleet serve a run (kf_coord_fit.h)?
 *
 *  A run whose jobs no worker can take used to sit at "running 0/1" for
 *  ever: a target no exec worker runs, a model no gateway has a key for.
 *  The fleet changes (a CUDA host may join a minute later), so a target is
 *  only warned about at SUBMIT; a run that then waits past worker_wait_s
 *  fails, its reason naming what it waited for. A model some connected
 *  gateway says it cannot serve is refused at SUBMIT outright: its jobs
 *  would fail on every attempt. The wait is measured from the database
 *  (the oldest queued job's last change), and not before this coordinator
 *  has been up that long, so workers reconnecting after a restart count.
 */
#include "kf_coord_fit.h"
#include "kf_json.h"
#include "kf_search_stage.h"
#include "kf_str.h"
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

/* A job queued for less than this is no wait worth a word (a worker
 * may be about to take it). */
#define S_WAITING_S 5
/* The coordinator's first minute: its workers may still be starting. */
#define S_STARTING_MS 60000
/* How often the fit check's grouped query runs: a run fails within this
 * of its worker_wait_s (900 s by default), not within the cron's second. */
#define S_FIT_EVERY_MS 5000

static bool
s_has_string (json_t *array, const char *text)
{
    size_t i;
    json_t *v;
    json_array_foreach (array, i, v)
        if (json_is_string (v) && !strcmp (json_string_value (v), text))
            return true;
    return false;
}

/* Whether a gateway with CAPS can serve MODEL. A gateway that does not
 * say what it is ready for (an older one) is taken at its word. */
static bool
s_gateway_serves (json_t *caps, const char *model)
{
    char backend[32];
    const char *colon = strchr (model, ':');
    snprintf (backend, sizeof backend, "%.*s",
              (int) (colon ? (size_t) (colon - model) : strlen (model)), model);
    if (!strcmp (backend, "command") && json_is_array (json_object_get (caps, "commands")))
        return s_has_string (json_object_get (caps, "commands"), model);
    json_t *ready = json_object_get (caps, "ready");
    return !json_is_array (ready) || s_has_string (ready, backend);
}

/* What would make MODEL served, for the refusal. */
static const char *
s_model_hint (const char *model)
{
    if (!strncmp (model, "openai:", 7))
        return "no gateway has an OpenAI key: give it OPENAI_API_KEY or openai_key_file"
               " (docs/single-node.md, \"API keys\")";
    if (!strncmp (model, "anthropic:", 10))
        return "no gateway has an Anthropic key: give it ANTHROPIC_API_KEY or"
               " anthropic_key_file (docs/single-node.md, \"API keys\")";
    if (!strncmp (model, "command:", 8))
        return "no gateway's models file has that command";
    return "no gateway offers it";
}

int
kf_coord_fit_models (kf_coord_t *self, json_t *generator, char **why)
{
    const char *models[64];
    size_t n = 0;
    size_t i;
    json_t *m;
    json_array_foreach (json_object_get (generator, "models"), i, m)
        if (n < 62 && json_is_string (json_object_get (m, "model")))
            models[n++] = json_string_value (json_object_get (m, "model"));
    static const char *single[] = { "first_model", "meta_model" };
    for (int k = 0; k < 2; k++)
        if (json_is_string (json_object_get (generator, single[k])))
            models[n++] = json_string_value (json_object_get (generator, single[k]));
    int gateways = 0;
    for (kf_coord_worker_t *w = zhashx_first (self->by_id); w; w = zhashx_next (self->by_id))
        gateways += !strcmp (w->role, "generate");
    if (gateways == 0)
        return 0;
    for (i = 0; i < n; i++) {
        bool served = false;
        for (kf_coord_worker_t *w = zhashx_first (self->by_id); w && !served;
             w = zhashx_next (self->by_id))
            served = !strcmp (w->role, "generate") && s_gateway_serves (w->caps, models[i]);
        if (!served) {
            char who[64];
            if (gateways == 1)
                snprintf (who, sizeof who, "the connected gateway cannot");
            else
                snprintf (who, sizeof who, "none of the %d connected gateways can", gateways);
            return kf_fail (why, "model '%s': %s serve it (%s)", models[i], who,
                            s_model_hint (models[i]));
        }
    }
    return 0;
}

/* Whether some connected worker of ROLE takes a job needing BACKEND and
 * ARCH (either may be NULL or "") and, with TORCH, a Python with torch,
 * as dispatch matches them (kf_coord_dispatch.c). */
static bool
s_can_take (kf_coord_t *self, const char *role, const char *backend, const char *arch,
            bool torch)
{
    for (kf_coord_worker_t *w = zhashx_first (self->by_id); w; w = zhashx_next (self->by_id)) {
        if (strcmp (w->role, role))
            continue;
        if (torch && !kf_coord_worker_has_torch (w))
            continue;
        if (backend && *backend && !s_has_string (json_object_get (w->caps, "backends"), backend))
            continue;
        if (arch && *arch && strcmp (w->arch, arch))
            continue;
        return true;
    }
    return false;
}

/* The backends the connected exec workers run, as "host, cuda", or "none". */
static void
s_exec_backends (kf_coord_t *self, char *buf, size_t size)
{
    json_t *seen = json_array ();
    for (kf_coord_worker_t *w = zhashx_first (self->by_id); w; w = zhashx_next (self->by_id)) {
        if (strcmp (w->role, "execute"))
            continue;
        size_t i;
        json_t *b;
        json_array_foreach (json_object_get (w->caps, "backends"), i, b)
            if (json_is_string (b) && !s_has_string (seen, json_string_value (b)))
                json_array_append (seen, b);
    }
    size_t used = 0, i;
    json_t *b;
    buf[0] = 0;
    json_array_foreach (seen, i, b)
        if (used < size)
            used += (size_t) snprintf (buf + used, size - used, "%s%s", i ? ", " : "",
                                       json_string_value (b));
    if (json_array_size (seen) == 0)
        snprintf (buf, size, "none");
    json_decref (seen);
}

char *
kf_coord_fit_target (kf_coord_t *self, const char *target, bool torch)
{
    char backend[32], arch[64];
    kf_search_split_target (target, backend, sizeof backend, arch, sizeof arch);
    if (s_can_take (self, "execute", backend, arch, torch))
        return NULL;
    /* No exec worker at all just after start: they are most likely still
     * coming up (kf-local starts them after the coordinator); "waiting"
     * says it later if none comes. */
    bool any = false;
    for (kf_coord_worker_t *w = zhashx_first (self->by_id); w; w = zhashx_next (self->by_id))
        any = any || !strcmp (w->role, "execute");
    if (!any && zclock_mono () - self->started < S_STARTING_MS)
        return NULL;
    char have[256];
    s_exec_backends (self, have, sizeof have);
    int wait = self->cfg.worker_wait_s;
    /* A worker that runs the target but has no torch cannot make a
     * PyTorch problem's reference: say which is missing. */
    const char *what = torch && s_can_take (self, "execute", backend, arch, false)
        ? "with a Python that has torch " : "";
    char *text = NULL;
    if (wait > 0)
        text = kf_strdupf ("no connected exec worker %sruns target %s (connected exec workers"
                           " run: %s); the run waits for one and fails after %d s"
                           " (the coordinator's worker_wait_s)", what, target, have, wait);
    else
        text = kf_strdupf ("no connected exec worker %sruns target %s (connected exec workers"
                           " run: %s); the run waits until one connects", what, target, have);
    return text;
}

/* The queued jobs of running runs, grouped by what they need (torch: the
 * jobs that run PyTorch), with how long the oldest has waited; RUN_ID 0:
 * every running run. */
static json_t *
s_queued (kf_coord_t *self, int64_t run_id)
{
    return kf_db_query_id (self->db,
                           "SELECT j.run_id, j.role, coalesce(j.backend, '') AS backend,"
                           " coalesce(j.arch, '') AS arch, r.target,"
                           " j.kind IN " KF_COORD_TORCH_KINDS " AS torch,"
                           " extract(epoch FROM now() - min(j.updated_at))::float8 AS waited"
                           " FROM jobs j JOIN runs r ON r.id = j.run_id"
                           " WHERE j.state = 'queued' AND r.status = 'running'"
                           " AND ($1::bigint = 0 OR j.run_id = $1::bigint)"
                           " GROUP BY j.run_id, j.role, j.backend, j.arch, r.target,"
                           "  j.kind IN " KF_COORD_TORCH_KINDS
                           " ORDER BY j.run_id",
                           run_id);
}

/* Whether a group of S_QUEUED needs a worker with torch. */
static bool
s_torch (json_t *row)
{
    return json_is_true (json_object_get (row, "torch"));
}

/* "no connected execute worker runs cuda" for a group of S_QUEUED. */
static void
s_need_text (json_t *row, char *buf, size_t size)
{
    const char *backend = kf_jstr (row, "backend"), *arch = kf_jstr (row, "arch");
    snprintf (buf, size, "no connected %s worker %s%s%s%s%s", kf_jstr (row, "role"),
              s_torch (row) ? "with a Python that has torch " : "",
              *backend ? "runs " : "is connected", backend, *arch ? ":" : "", arch);
}

void
kf_coord_fit_annotate (kf_coord_t *self, json_t *run)
{
    const char *status = json_string_value (json_object_get (run, "status"));
    if (!status || strcmp (status, "running") || !self->db)
        return;
    json_t *rows = s_queued (self, json_integer_value (json_object_get (run, "id")));
    size_t i;
    json_t *row;
    json_array_foreach (rows, i, row) {
        if (kf_jnum (row, "waited", 0) < S_WAITING_S
            || s_can_take (self, kf_jstr (row, "role"), kf_jstr (row, "backend"),
                           kf_jstr (row, "arch"), s_torch (row)))
            continue;
        char need[200], text[400];
        s_need_text (row, need, sizeof need);
        double waited = kf_jnum (row, "waited", 0);
        if (self->cfg.worker_wait_s > 0)
            snprintf (text, sizeof text, "%s: its jobs have waited %.0f s; the run fails at"
                      " %d s (worker_wait_s)", need, waited, self->cfg.worker_wait_s);
        else
            snprintf (text, sizeof text, "%s: its jobs have waited %.0f s", need, waited);
        json_object_set_new (run, "waiting", json_string (text));
        break;
    }
    json_decref (rows);
}

void
kf_coord_fit_check (kf_coord_t *self, int64_t last_pass)
{
    int wait = self->cfg.worker_wait_s;
    int64_t now = zclock_mono ();
    /* Once a period: in the cron pass that crosses its boundary, which
     * no pass misses, since each knows when the one before ran. */
    if (wait <= 0 || now - self->started < (int64_t) wait * 1000
        || now / S_FIT_EVERY_MS == last_pass / S_FIT_EVERY_MS)
        return;
    json_t *rows = s_queued (self, 0);
    int64_t failed_run = 0;
    size_t i;
    json_t *row;
    json_array_foreach (rows, i, row) {
        int64_t run_id = kf_jint (row, "run_id");
        if (run_id == failed_run || kf_jnum (row, "waited", 0) < wait
            || s_can_take (self, kf_jstr (row, "role"), kf_jstr (row, "backend"),
                           kf_jstr (row, "arch"), s_torch (row)))
            continue;
        char need[200], reason[400], id[24];
        s_need_text (row, need, sizeof need);
        snprintf (reason, sizeof reason, "%s (target %s): its jobs waited %d s for one"
                  " (worker_wait_s)", need, kf_jstr (row, "target"), wait);
        const char *params[1] = { S_I64 (id, run_id) };
        /* Inside the loop's transaction (kf_coord_cron): its commit makes
         * this true and publishes the run's "finished" event. */
        if (kf_search_finish_run (&self->search, run_id, "failed", reason)
            || kf_db_exec (self->db,
                           "UPDATE jobs SET state = 'failed', reason = 'its run failed',"
                           " updated_at = now() WHERE run_id = $1"
                           " AND state IN ('queued', 'leased')", 1, params) < 0) {
            self->counters[KF_COORD_DB_ERRORS]++;
            break;
        }
        failed_run = run_id;
    }
    json_decref (rows);
}
