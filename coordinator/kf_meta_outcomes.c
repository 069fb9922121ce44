/*  kf_meta_outcomes.c - what the meta job shows of a run's outcomes
 *  (kf_meta_outcomes.h): the recent candidates with their evaluations'
 *  own figures, and the kernels behind the best and the worst of them.
 */
#include "kf_meta_outcomes.h"
#include "kf_json.h"
#include "kf_lineage.h"
#include "kf_prompt.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

//  The recent outcomes of RUN with the evaluation's own figures: verdict,
//  speedup, runtimes and correctness numbers come from the evaluations
//  row, never from a summary of it, so what the meta-prompter reads is
//  what was measured.
json_t *
kf_meta_outcomes (kf_db_t *db, int64_t run_id, int limit)
{
    char id[24], lim[24];
    const char *params[2] = { S_I64 (id, run_id), S_I64 (lim, limit) };
    json_t *rows = kf_db_query (
        db,
        //  Round 21: a timed kernel's code comes with it, for its threads
        //  (kf_prompt_per_vector_text; not sent), as hex: its bytes as
        //  they are, whatever they hold.
        "SELECT r.*, CASE WHEN r.candidate_ns IS NOT NULL THEN encode(b.data, 'hex') END"
        "  AS source_hex"
        " FROM (SELECT c.id AS candidate_id, c.generation, c.status, c.fitness,"
        "  c.verdict_detail AS detail, c.coords::text AS coords, v.number AS prompt_version,"
        "  CASE WHEN c.status = 'compile_failed' THEN left(c.log, 1500) END AS log,"
        //  Round 20: the vectoriser's report of a built kernel (the
        //  compile worker's summary and its loop lines), which the kernel
        //  prompts gave and the meta-prompter had to quote from memory.
        "  CASE WHEN c.status <> 'compile_failed'"
        "   AND position('Compiler report (GCC''s vectoriser' in c.log) > 0 THEN substring(c.log"
        "   from position('Compiler report (GCC''s vectoriser' in c.log) for 700) END"
        "   AS vec_report,"
        "  e.id AS evaluation_id, e.verdict, e.correct, e.speedup, e.candidate_ns,"
        "  e.reference_ns, e.figures->'correctness' AS correctness,"
        //  Round 14: the candidate's own standing, as the kernel prompts
        //  read it (kf_prompt_history.c): 'pending' while its full
        //  protocol is in flight, where the evaluation said 'screen' only.
        "  coalesce(c.fidelity, e.fidelity) AS fidelity,"
        "  e.figures->'candidate' AS tc, e.figures->'reference' AS tr,"
        "  e.figures->'bandwidth' AS bandwidth, e.figures->'compute' AS compute, c.finished_at,"
        //  Round 20: a threaded kernel's time on one core, which the kernel
        //  prompts gave and the meta prompt did not.
        "  e.figures->'one_core' AS one_core,"
        //  What the kernel did and what it was timed under (round 6: the
        //  outcomes read alike, coordinates only, and no load).
        "  c.phase, c.slot, c.parent_id, p.coords::text AS parent_coords,"
        //  The parent's figure and code, and when it finished: the
        //  guesses' evidence (kf_meta_guess.h).
        "  p.speedup AS parent_speedup, p.fidelity AS parent_fidelity,"
        "  (p.selection->>'features')::bigint AS parent_features,"
        "  extract(epoch FROM c.finished_at)::float8 AS finished_s,"
        "  c.selection->>'idea' AS idea, c.verify_state, c.audit_reason, c.audit_verdict,"
        "  (c.selection->>'features')::bigint AS features, c.source_hash,"
        "  e.figures->'host_load' AS host_load, e.figures->'host_condition' AS host_condition,"
        "  e.figures->'tuning'->'screened' AS screen_points,"
        "  (SELECT e3.figures->'best_config' FROM evaluations e3 WHERE e3.candidate_id = c.id"
        "   AND jsonb_typeof(e3.figures->'best_config') = 'object'"
        "   ORDER BY e3.correct DESC, e3.id DESC LIMIT 1) AS best_config"
        "  FROM candidates c"
        "  LEFT JOIN prompt_versions v ON v.id = c.prompt_version_id"
        "  LEFT JOIN candidates p ON p.id = c.parent_id"
        //  The evaluation its standing rests on: the full protocol's for
        //  a full candidate, a screen's for one held at its screen.
        "  LEFT JOIN LATERAL (SELECT * FROM evaluations WHERE candidate_id = c.id"
        "   ORDER BY (c.fidelity IS NULL OR fidelity IS NOT DISTINCT FROM"
        "    CASE c.fidelity WHEN 'full' THEN 'full' ELSE 'screen' END) DESC, id DESC"
        "   LIMIT 1) e ON true"
        "  WHERE c.run_id = $1 AND c.finished_at IS NOT NULL"
        "  ORDER BY c.finished_at DESC, c.id DESC LIMIT $2) r"
        " LEFT JOIN blobs b ON b.hash = r.source_hash"
        " ORDER BY r.finished_at, r.candidate_id",
        2, params);
    size_t i;
    json_t *row;
    json_array_foreach (rows, i, row) {
        json_object_del (row, "finished_at");
        //  A screen figure's spread, said beside it (kf_meta_prompt.c).
        double noise = kf_lineage_noise (json_object_get (row, "tc"), json_object_get (row, "tr"));
        if (noise > 0 && strcmp (kf_jstr (row, "fidelity"), "full"))
            json_object_set_new (row, "noise", json_real (noise));
        json_object_del (row, "tc");
        json_object_del (row, "tr");
        //  Whether its figure counts towards the run's best yet, as the
        //  kernel prompts read it (round 15: candidate 6 at 41.078x, being
        //  timed again, beside a heading that named candidate 5 at 25.574x
        //  the best that counts, unexplained).
        if (!strcmp (kf_jstr (row, "status"), "correct"))
            json_object_set_new (row, "standing", json_string (kf_lineage_standing (
                                     kf_jstr (row, "fidelity"), kf_jstr (row, "verify_state"),
                                     kf_jstr (row, "audit_reason"),
                                     kf_jstr (row, "audit_verdict"))));
        json_object_del (row, "verify_state");
        json_object_del (row, "audit_reason");
        json_object_del (row, "audit_verdict");
        //  Round 21: its code, for its threads (kf_prompt_per_vector_text); not sent.
        if (json_is_number (json_object_get (row, "candidate_ns")))
            json_object_set_new (row, "source",
                                 kf_prompt_source_hex (json_object_get (row, "source_hex")));
        json_object_del (row, "source_hex");
        json_object_del (row, "source_hash");
    }
    kf_json_drop_nulls (rows);
    return rows;
}

//  The kernels behind the best and the worst of OUTCOMES (by fitness; on
//  equal fitness the faster, then the newer), among those with a source,
//  the worst a correct kernel timed on the screen alone only where no
//  other is left (round 44: one screened out under 1.2 other runnable
//  tasks, its threads waiting 31% of its time, was shown as the worst),
//  as prompt kernel objects into *BEST and *WORST (the caller's; NULL when
//  there is none, *WORST also when it would be *BEST). Returns 0, or -1.
int
kf_meta_extremes (kf_db_t *db, json_t *outcomes, json_t **best, json_t **worst)
{
    *best = *worst = NULL;
    if (!json_array_size (outcomes))
        return 0;
    char *ids = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&ids, &size);
    if (!f)
        return -1;
    size_t i;
    json_t *o;
    fputc ('{', f);
    json_array_foreach (outcomes, i, o)
        fprintf (f, "%s%lld", i ? "," : "", (long long) kf_jint (o, "candidate_id"));
    fputc ('}', f);
    if (fclose (f) != 0) {
        free (ids);
        return -1;
    }
    const char *params[1] = { ids };
    bool failed = false;
    json_t *row = kf_db_row (
        db,
        "SELECT (SELECT id FROM candidates WHERE id = ANY ($1::bigint[])"
        "  AND source_hash IS NOT NULL AND fitness IS NOT NULL"
        "  ORDER BY fitness DESC, speedup DESC NULLS LAST, id DESC LIMIT 1) AS best,"
        " (SELECT id FROM candidates WHERE id = ANY ($1::bigint[])"
        "  AND source_hash IS NOT NULL AND fitness IS NOT NULL"
        "  ORDER BY status = 'correct' AND fidelity IS DISTINCT FROM 'full',"
        "  fitness, speedup NULLS FIRST, id DESC LIMIT 1) AS worst",
        1, params, &failed);
    free (ids);
    if (failed)
        return -1;
    int64_t b = kf_jint (row, "best"), w = kf_jint (row, "worst");
    json_decref (row);
    if (b)
        *best = kf_prompt_kernel (db, b);
    if (w && w != b)
        *worst = kf_prompt_kernel (db, w);
    return 0;
}

void
kf_meta_outcomes_awaiting (json_t *outcomes, int64_t best_id, double counted)
{
    size_t i;
    json_t *o;
    json_array_foreach (outcomes, i, o)
        if (!strcmp (kf_jstr (o, "standing"), "counted")
            && !strcmp (kf_jstr (o, "fidelity"), "full")
            && kf_jint (o, "candidate_id") != best_id && kf_jnum (o, "speedup", 0) > counted)
            json_object_set_new (o, "standing", json_string ("being re-verified"));
}
