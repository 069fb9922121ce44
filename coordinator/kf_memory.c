/*  kf_memory.c - remembered inspirations from earlier runs (kf_memory.h). */
#include "kf_memory.h"
#include "kf_json.h"
#include "kf_prompt.h"
#include "kf_search.h"
#include "kf_select.h"
#include <stdio.h>
#include <string.h>

/* The stream of the memory draw: 0 and 1 are kf_select's (strategy and
 * parent; inspirations), so this one is independent of both and adding
 * memory changes none of the run's own draws. */
#define S_STREAM 7

int
kf_memory_draw (int64_t run_seed, int64_t seq, int n)
{
    if (n <= 0)
        return -1;
    uint64_t state = kf_select_stream (run_seed, seq, S_STREAM);
    int i = (int) (kf_select_next (&state) * n);
    return i < n ? i : n - 1;
}

json_t *
kf_memory_pick (kf_db_t *db, json_t *run, int64_t seq, bool *failed)
{
    char backend[32], arch[64], id[24], limit[24];
    const char *target = kf_jstr (run, "target");
    kf_search_split_target (target, backend, sizeof backend, arch, sizeof arch);
    json_t *spec = json_object_get (run, "spec");
    const char *op = *kf_jstr (spec, "op") ? kf_jstr (spec, "op") : kf_jstr (run, "name");
    snprintf (id, sizeof id, "%lld", (long long) kf_jint (run, "id"));
    snprintf (limit, sizeof limit, "%d", KF_MEMORY_POOL);
    const char *params[7] = { id, op, backend, target, kf_jstr (run, "language"), limit,
                              kf_jstr (run, "name") };
    /* Elites of the earlier runs' archives that count (correct, timed in
     * full, not held for audit), one per distinct source, fastest first. */
    json_t *rows = kf_db_query (
        db,
        "SELECT id, run_id, speedup FROM ("
        " SELECT DISTINCT ON (c.source_hash) c.id, c.run_id, c.speedup"
        " FROM archive_cells a JOIN candidates c ON c.id = a.candidate_id"
        " JOIN runs o ON o.id = a.run_id JOIN tasks t ON t.id = o.task_id"
        " WHERE o.id <> $1 AND o.status IN ('done', 'cancelled')"
        "  AND o.finished_at <= (SELECT created_at FROM runs WHERE id = $1)"
        "  AND coalesce(nullif(coalesce(o.spec, t.spec)->>'op', ''), t.name) = $2"
        /* "pytorch" is the op of every PyTorch problem of no known class
         * (kfctl): for those only the same problem counts. */
        "  AND ($2 <> 'pytorch' OR t.name = $7)"
        "  AND split_part(o.target, ':', 1) = $3 AND ($3 <> 'cuda' OR o.target = $4)"
        "  AND c.language = $5 AND c.status = 'correct' AND c.speedup > 0"
        "  AND (c.fidelity IS NULL OR c.fidelity = 'full')"
        "  AND ((c.audit_reason IS NULL AND c.verify_state IS DISTINCT FROM 'pending')"
        "   OR c.audit_verdict = 'accepted')"
        " ORDER BY c.source_hash, c.speedup DESC, c.id) m"
        " ORDER BY speedup DESC, id LIMIT $6::int",
        7, params);
    if (!rows) {
        *failed = true;
        return NULL;
    }
    int i = kf_memory_draw (kf_jint (run, "seed"), seq, (int) json_array_size (rows));
    json_t *row = i >= 0 ? json_array_get (rows, (size_t) i) : NULL;
    json_t *k = row ? kf_prompt_kernel (db, kf_jint (row, "id")) : NULL;
    if (k) {
        json_object_set_new (k, "from_run", json_integer (kf_jint (row, "run_id")));
        json_object_set (k, "from_run_speedup", json_object_get (row, "speedup"));
    }
    json_decref (rows);
    return k;
}

json_t *
kf_memory_note (json_t *k)
{
    return json_pack ("{s:I, s:I, s:O}", "run", (json_int_t) kf_jint (k, "from_run"),
                      "candidate", (json_int_t) kf_jint (k, "id"), "speedup",
                      json_object_get (k, "from_run_speedup"));
}
