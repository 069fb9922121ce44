/*  kf_prompt_history_db.c - what the database knows of the run's other
 *  candidates, for this attempt's prompt (the readers of
 *  kf_prompt_history.h; the writers are kf_prompt_history.c).
 */
#include "kf_prompt_history.h"
#include "kf_prompt_changed.h"
#include "kf_json.h"
#include <stdio.h>
#include <stdlib.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

json_t *
kf_prompt_history (kf_db_t *db, int64_t run_id)
{
    char id[24], limit[24];
    const char *params[2] = { S_I64 (id, run_id), S_I64 (limit, KF_PROMPT_HISTORY_READ) };
    json_t *rows = kf_db_query (db,
                                "SELECT c.id, c.generation, c.slot, c.phase, c.parent_id,"
                                " c.status, c.speedup, c.fidelity, c.norm_hash,"
                                " c.selection->>'idea' AS idea, c.selection->>'said' AS said,"
                                " (c.selection->>'features')::bigint AS features,"
                                " (p.selection->>'features')::bigint AS parent_features,"
                                " (c.selection->>'arith')::int AS arith,"
                                " (p.selection->>'arith')::int AS parent_arith,"
                                " (c.finished_at IS NOT NULL) AS finished,"
                                " left(c.verdict_detail, 600) AS detail,"
                                " CASE WHEN c.status = 'compile_failed'"
                                "  THEN left(c.log, 4000) END AS log, e.candidate_ns,"
                                " e.host_load, e.host_condition, e.tc, e.tr, e.screen_points,"
                                " e.one_core, e.retimed"
                                " FROM candidates c"
                                " LEFT JOIN candidates p ON p.id = c.parent_id"
                                " LEFT JOIN LATERAL (SELECT candidate_ns,"
                                "  figures->'candidate' AS tc, figures->'reference' AS tr,"
                                "  figures->'host_load' AS host_load, figures->'one_core' AS one_core,"
                                "  figures->'retimed' AS retimed,"
                                "  figures->'host_condition' AS host_condition,"
                                "  figures->'tuning'->'screened' AS screen_points"
                                "  FROM evaluations WHERE candidate_id = c.id"
                                "  ORDER BY id DESC LIMIT 1) e ON true"
                                " WHERE c.run_id = $1"
                                " ORDER BY c.finished_at DESC NULLS FIRST, c.id DESC LIMIT $2",
                                2, params);
    kf_json_drop_nulls (rows);
    //  Round 15: a try whose code added no feature the reading knows is
    //  told by how much of its parent's code it changed.
    if (rows && kf_prompt_history_changes (db, rows)) {
        json_decref (rows);
        return NULL;
    }
    return rows;
}

json_t *
kf_prompt_siblings (kf_db_t *db, int64_t run_id, int generation)
{
    char id[24], gen[24];
    const char *params[2] = { S_I64 (id, run_id), S_I64 (gen, generation) };
    json_t *rows = kf_db_query (db,
                                "SELECT slot, parent_id, selection->>'idea' AS idea"
                                " FROM candidates WHERE run_id = $1"
                                " AND generation = $2 AND phase = 'search' ORDER BY slot, id",
                                2, params);
    kf_json_drop_nulls (rows);
    return rows;
}

void
kf_prompt_version_of (kf_db_t *db, int64_t version_id, int *number, int *generation)
{
    *number = *generation = 0;
    if (version_id <= 0)
        return;
    char id[24];
    const char *params[1] = { S_I64 (id, version_id) };
    json_t *row = kf_db_row (db, "SELECT number, generation FROM prompt_versions WHERE id = $1",
                             1, params, NULL);
    *number = (int) kf_jint (row, "number");
    *generation = (int) kf_jint (row, "generation");
    json_decref (row);
}

