/*  kf_prompt_kernel_db.c - a kernel as the prompts read it from the
 *  database (kf_prompt_kernel, kf_prompt.h): its candidate row, its
 *  latest evaluation's figures, its sweep's whole table, its profile and
 *  its source.
 */
#include "kf_prompt.h"
#include "kf_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *
kf_prompt_source (kf_db_t *db, const char *hash)
{
    void *data = NULL;
    size_t n = 0;
    if (!hash || !*hash
        || kf_db_fetch_blob (db, "SELECT data FROM blobs WHERE hash = $1", hash, &data, &n))
        return NULL;
    json_t *src = json_stringn (data, n);
    free (data);
    return src;
}

//  The value of one hex digit (encode's are lower case).
static unsigned
s_nibble (char c)
{
    return c >= 'a' ? (unsigned) (c - 'a' + 10) : (unsigned) (c - '0');
}

json_t *
kf_prompt_source_hex (json_t *hex)
{
    const char *h = json_string_value (hex);
    if (!h)
        return NULL;
    size_t n = strlen (h) / 2;
    char *data = malloc (n + 1);
    if (!data)
        return NULL;
    for (size_t i = 0; i < n; i++)
        data[i] = (char) (s_nibble (h[2 * i]) << 4 | s_nibble (h[2 * i + 1]));
    json_t *src = json_stringn (data, n);
    free (data);
    return src;
}

json_t *
kf_prompt_kernel_source (kf_db_t *db, int64_t candidate_id)
{
    json_t *row = kf_db_row_id (db,
                                "SELECT c.id, encode(b.data, 'hex') AS source_hex"
                                " FROM candidates c LEFT JOIN blobs b ON b.hash = c.source_hash"
                                " WHERE c.id = $1",
                                candidate_id, NULL);
    if (!row)
        return NULL;
    json_t *src = kf_prompt_source_hex (json_object_get (row, "source_hex"));
    if (src)
        json_object_set_new (row, "source", src);
    json_object_del (row, "source_hex");
    return row;
}

char *
kf_prompt_source_of (kf_db_t *db, int64_t candidate_id)
{
    char id[24];
    snprintf (id, sizeof id, "%lld", (long long) candidate_id);
    void *data = NULL;
    size_t n = 0;
    if (kf_db_fetch_blob (db, "SELECT b.data FROM candidates c JOIN blobs b"
                              " ON b.hash = c.source_hash WHERE c.id = $1::bigint",
                          id, &data, &n) != 0 || !data)
        return NULL;
    char *text = strndup (data, n);
    free (data);
    return text;
}

json_t *
kf_prompt_kernel (kf_db_t *db, int64_t candidate_id)
{
    char id[24];
    snprintf (id, sizeof id, "%lld", (long long) candidate_id);
    const char *params[1] = { id };
    json_t *row = kf_db_row (db,
                             "SELECT c.id, c.status, c.speedup, c.verdict_detail AS detail,"
                             " c.log, c.coords::text AS coords, c.source_hash, c.norm_hash,"
                             " c.fidelity, e.worker, e.candidate_ns, e.reference_ns,"
                             " e.figures->'correctness' AS correctness,"
                             " e.figures->'bandwidth' AS bandwidth,"
                             " e.figures->'compute' AS compute,"
                             " e.figures->'candidate' AS timing_candidate,"
                             " e.figures->'reference' AS timing_reference,"
                             " e.figures->'host_load' AS host_load, e.figures->'one_core' AS one_core,"
                             " e.figures->'host_condition' AS host_condition,"
                             /* The sweep's whole table (tb): a swept
                              * candidate's full-protocol job re-times one
                              * config, its best_config, and holds no table. */
                             " tb.configs, tb.best_config AS configs_best,"
                             " e.figures->'configs' AS last_configs,"
                             " (tb.id IS DISTINCT FROM e.id) AS retimed,"
                             " e.fidelity AS eval_fidelity, e.speedup AS eval_speedup,"
                             /* A profile of the candidate (exec worker
                              * "profile" job: ncu or perf), when one ran;
                              * results from before "profiler" are ncu's. */
                             " p.profile, p.profiler"
                             " FROM candidates c LEFT JOIN LATERAL (SELECT * FROM evaluations"
                             "  WHERE candidate_id = c.id ORDER BY id DESC LIMIT 1) e ON true"
                             " LEFT JOIN LATERAL (SELECT e2.id, e2.figures->'configs' AS configs,"
                             "  e2.figures->'best_config' AS best_config FROM evaluations e2"
                             "  WHERE e2.candidate_id = c.id ORDER BY jsonb_array_length("
                             "  CASE WHEN jsonb_typeof(e2.figures->'configs') = 'array'"
                             "  THEN e2.figures->'configs' ELSE '[]' END) DESC, e2.id DESC"
                             "  LIMIT 1) tb ON true"
                             " LEFT JOIN LATERAL (SELECT j.result->>'summary' AS profile,"
                             "  coalesce(j.result->>'profiler', 'ncu') AS profiler FROM jobs j"
                             "  WHERE j.candidate_id = c.id AND j.kind = 'profile'"
                             "  AND j.state = 'done' ORDER BY j.id DESC LIMIT 1) p ON true"
                             " WHERE c.id = $1",
                             1, params, NULL);
    if (!row)
        return NULL;
    json_t *src = kf_prompt_source (db, kf_jstr (row, "source_hash"));
    if (src)
        json_object_set_new (row, "source", src);
    json_object_del (row, "source_hash");
    //  The sweep's table is the screen's; the full-protocol job that
    //  followed timed its chosen point again: put that figure beside it.
    json_t *table = json_object_get (row, "configs");
    json_t *chosen = json_object_get (row, "configs_best");
    size_t i;
    json_t *b;
    //  Since round 41 the full job may time the screen's best points
    //  (kf_fidelity_full_points): each of its rows timed in full goes
    //  beside its point.
    json_t *last = json_object_get (row, "last_configs");
    bool again = json_array_size (table) > 1 && json_is_true (json_object_get (row, "retimed"))
                 && !strcmp (kf_jstr (row, "eval_fidelity"), "full");
    size_t j;
    json_t *l;
    if (again && json_array_size (last) > 0)
        json_array_foreach (last, j, l) {
            if (strcmp (kf_jstr (l, "fidelity"), "full")
                || !json_is_number (json_object_get (l, "speedup")))
                continue;
            json_array_foreach (table, i, b)
                if (json_equal (json_object_get (b, "params"), json_object_get (l, "params"))
                    && strcmp (kf_jstr (b, "fidelity"), "full")) {
                    json_object_set (b, "full_speedup", json_object_get (l, "speedup"));
                    json_object_set (b, "full_median_ns", json_object_get (l, "median_ns"));
                }
        }
    else if (again && json_is_object (chosen)
             && json_is_number (json_object_get (row, "eval_speedup")))
        json_array_foreach (table, i, b)
            if (json_equal (json_object_get (b, "params"), chosen)
                && strcmp (kf_jstr (b, "fidelity"), "full")) {
                json_object_set (b, "full_speedup", json_object_get (row, "eval_speedup"));
                json_object_set (b, "full_median_ns", json_object_get (row, "candidate_ns"));
            }
    static const char *const helpers[] = { "configs_best", "retimed", "eval_fidelity",
                                           "eval_speedup", "last_configs" };
    for (size_t h = 0; h < sizeof helpers / sizeof helpers[0]; h++)
        json_object_del (row, helpers[h]);
    //  Absent rather than null, so the builder's tests read simply.
    kf_json_drop_nulls (row);
    return row;
}

