/*  kf_repeat.c - repeated sources take the verdict of the one they repeat
 *  (kf_repeat.h).
 *
 *  A repeat of a final candidate takes its status, speedup and
 *  coordinates at once, so the parent's move is still a transition for
 *  the gradient estimator; its figure is marked "screen" so that a
 *  reused figure never counts as a new measurement of the run's best.
 *  A repeat of a candidate still open waits, open itself (so the run
 *  plans no more than max_in_flight and does not end), and is resolved
 *  in the transaction that makes that candidate final.
 */
#include "kf_repeat.h"
#include "kf_json.h"
#include "kf_lineage.h"
#include <stdio.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

//  CAND_ID repeats ORIG_ID, which is final: it takes ORIG_ID's verdict.
static int
s_reuse_verdict (kf_search_t *self, int64_t run_id, int64_t cand_id, int64_t orig_id)
{
    char cand[24], orig[24];
    const char *params[2] = { S_I64 (cand, cand_id), S_I64 (orig, orig_id) };
    json_t *o = kf_db_row (self->db,
                           "UPDATE candidates c SET coords = o.coords,"
                           " coords_why = 'as candidate ' || o.id,"
                           " fidelity = CASE WHEN o.status = 'correct' THEN 'screen' END"
                           " FROM candidates o WHERE c.id = $1 AND o.id = $2"
                           " RETURNING o.status, o.speedup, o.verdict_detail AS detail",
                           2, params, NULL);
    if (!o)
        return -1;
    const char *status = kf_jstr (o, "status");
    char detail[600];
    snprintf (detail, sizeof detail, "the same source as candidate %lld once comments and"
              " spacing are removed: not compiled or timed again; its verdict (%s): %.400s",
              (long long) orig_id, status, kf_jstr (o, "detail"));
    int rc = kf_search_finish_candidate (self, run_id, cand_id, status,
                                         !strcmp (status, "correct")
                                             ? kf_jnum (o, "speedup", 0) : 0,
                                         detail);
    json_decref (o);
    return rc;
}

int
kf_repeat_check (kf_search_t *self, int64_t run_id, int64_t cand_id, const char *source,
                 const char *hash, const char *generator, bool on, char norm[65])
{
    kf_lineage_norm_hash (source, strlen (source), norm);
    if (!on)
        return 0;
    bool failed = false;
    json_t *dup = kf_lineage_duplicate (self->db, run_id, cand_id, norm, &failed);
    if (failed)
        return -1;
    if (!dup)
        return 0;
    char cand[24], orig[24];
    int64_t dup_id = kf_jint (dup, "id");
    bool finished = json_is_true (json_object_get (dup, "finished"));
    json_decref (dup);
    const char *params[5] = { S_I64 (cand, cand_id), hash, generator, norm,
                              S_I64 (orig, dup_id) };
    if (kf_db_exec (self->db,
                    "UPDATE candidates SET source_hash = $2, generator = $3, norm_hash = $4,"
                    " duplicate_of = $5::bigint, status = 'waiting',"
                    //  What its code does is the original's (the same
                    //  source): a repeat had none, and an idea's credit
                    //  read it as a try that added nothing (test_search_ideas
                    //  caught one when the load made the generator repeat).
                    " selection = coalesce(selection, '{}'::jsonb) || coalesce((SELECT"
                    "  jsonb_build_object('features', o.selection->'features') FROM candidates o"
                    "  WHERE o.id = $5::bigint"
                    "  AND jsonb_typeof(o.selection->'features') = 'number'),"
                    "  '{}'::jsonb)"
                    " WHERE id = $1",
                    5, params) < 0)
        return -1;
    if (finished && s_reuse_verdict (self, run_id, cand_id, dup_id))
        return -1;
    return 1;
}

int
kf_repeat_resolve (kf_search_t *self, int64_t run_id, int64_t cand_id)
{
    json_t *waiting = kf_db_query_id (self->db,
                                      "SELECT id FROM candidates WHERE duplicate_of = $1"
                                      " AND finished_at IS NULL ORDER BY id",
                                      cand_id);
    if (!waiting)
        return -1;
    int rc = 0;
    size_t i;
    json_t *w;
    json_array_foreach (waiting, i, w)
        if (rc == 0)
            rc = s_reuse_verdict (self, run_id, kf_jint (w, "id"), cand_id);
    json_decref (waiting);
    return rc;
}

int
kf_repeat_follow (kf_search_t *self, int64_t orig_id)
{
    char orig[24];
    const char *p[1] = { S_I64 (orig, orig_id) };
    //  Round 18: candidate 29 showed 58.24x, the screen figure of the
    //  candidate it repeats, beside that one's figure of record, 51.95x.
    if (kf_db_exec (self->db,
                    "UPDATE candidates r SET speedup = o.speedup, fitness = o.fitness,"
                    " verdict_detail = coalesce(r.verdict_detail, '') || '; candidate ' || o.id"
                    "  || '''s figure became ' || to_char(o.speedup, 'FM999999990.00') || 'x'"
                    " FROM candidates o WHERE o.id = $1 AND r.duplicate_of = o.id"
                    " AND r.finished_at IS NOT NULL AND r.status = 'correct'"
                    " AND r.speedup IS DISTINCT FROM o.speedup",
                    1, p) < 0)
        return -1;
    //  The parent's move to a repeat stands at the figure that stands.
    return kf_db_exec (self->db,
                       "UPDATE transitions t SET child_fitness = r.fitness FROM candidates r"
                       " WHERE t.child_id = r.id AND r.duplicate_of = $1 AND r.status = 'correct'",
                       1, p) < 0 ? -1 : 0;
}
