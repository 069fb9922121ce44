/*  kf_search_archive.c - a run's MAP-Elites archive and its figures.
 *
 *  A final candidate's fitness; whether the next generation waits for
 *  its predecessor's verdicts (kf_select_hold); the coordinates of a tuned one (those of
 *  the point its sweep chose); its offer to the archive cell of its
 *  binned coordinates; the run's best and first-correct figures,
 *  recomputed whole from the candidates that count; and a person's audit
 *  verdict, which may rebuild the archive without a rejected kernel.
 */
#include "kf_search_int.h"
#include "kf_json.h"
#include "kf_descriptor.h"
#include "kf_tune.h"
#include "kf_verify.h"
#include "kf_str.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

double
kf_search_fitness (const char *verdict, double speedup)
{
    if (!strcmp (verdict, "compile_failed") || !strcmp (verdict, "failed"))
        return 0.0;
    if (strcmp (verdict, KF_SEARCH_CORRECT) || !(speedup > 0))
        return 0.1;
    /* s_norm = s / (1 + s): monotone, 0.5 at parity, bounded below 1. */
    return 0.5 + 0.5 * (speedup / (1.0 + speedup));
}

int
kf_search_hold (kf_search_t *self, int64_t run_id, int generation, int population,
                const kf_elite_t *elites, size_t n)
{
    if (!kf_select_hold (elites, n, generation, population, 0))
        return 0;   /* the first generation, or a kernel at parity: no wait */
    char id[24], gen[24];
    const char *params[2] = { S_I64 (id, run_id), S_I64 (gen, generation - 1) };
    bool failed = false;
    json_t *row = kf_db_row (self->db,
                             "SELECT count(*) AS judged FROM candidates WHERE run_id = $1"
                             " AND phase = 'search' AND generation = $2::int"
                             " AND finished_at IS NOT NULL",
                             2, params, &failed);
    int64_t judged = kf_jint (row, "judged");
    json_decref (row);
    if (failed)
        return -1;
    return kf_select_hold (elites, n, generation, population, judged) ? 1 : 0;
}

bool
kf_search_point_coords (json_t *configs, json_t *best, int out[3], const char **why)
{
    if (!json_is_object (best) || !json_is_array (configs))
        return false;
    size_t i;
    json_t *row;
    json_array_foreach (configs, i, row) {
        if (!json_equal (json_object_get (row, "params"), best))
            continue;
        json_t *c = json_object_get (row, "coords");
        if (json_array_size (c) != 3)
            return false;
        for (size_t d = 0; d < 3; d++) {
            json_t *v = json_array_get (c, d);
            if (!json_is_integer (v) || json_integer_value (v) < 0
                || json_integer_value (v) >= KF_DESCRIPTOR_LEVELS)
                return false;
            out[d] = (int) json_integer_value (v);
        }
        if (why)
            *why = json_is_string (json_object_get (row, "coords_why"))
                       ? json_string_value (json_object_get (row, "coords_why"))
                       : "";
        //  Round 38: a one-thread point of a threaded template sat in
        //  "cooperating": its code starts threads at other values.
        if (kf_search_point_one_thread (best))
            out[2] = 0;
        return true;
    }
    return false;
}

const char *
kf_search_point_one_thread (json_t *best)
{
    static const char *const names[] = { "NTHREADS", "NUM_THREADS", "N_THREADS", "THREADS" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        json_t *v = json_object_get (best, names[i]);
        if ((json_is_integer (v) && json_integer_value (v) == 1)
            || (json_is_string (v) && !strcmp (json_string_value (v), "1")))
            return names[i];
    }
    return NULL;
}

int
kf_search_tuned_coords (kf_search_t *self, int64_t cand_id, const kf_eval_result_t *result)
{
    json_t *best = result->best_config;
    if (!best)
        return 0;
    char cand[24];
    const char *p[1] = { S_I64 (cand, cand_id) };
    bool failed = false;
    json_t *row = kf_db_row (self->db,
                             "SELECT result->'configs' AS configs FROM jobs"
                             " WHERE candidate_id = $1 AND kind = 'compile' AND state = 'done'"
                             " ORDER BY id DESC LIMIT 1",
                             1, p, &failed);
    if (failed)
        return -1;
    int lv[3];
    const char *why = NULL;
    int rc = 0;
    if (kf_search_point_coords (json_object_get (row, "configs"), best, lv, &why)) {
        char coords[48], label[300];
        snprintf (coords, sizeof coords, "{%d,%d,%d}", lv[0], lv[1], lv[2]);
        const char *one = kf_search_point_one_thread (best);
        char *text = kf_strdupf ("the point the sweep chose (%s): %s%s%s",
                                 kf_tune_params_label (best, label, sizeof label),
                                 one ? one : "", one ? "=1 runs one thread, so threads 0 "
                                                       "(single thread) whatever the code does "
                                                       "at other values; the code read: "
                                                     : "", why);
        const char *up[3] = { cand, coords, text };
        rc = kf_db_exec (self->db, "UPDATE candidates SET coords = $2::int[], coords_why = $3"
                                   " WHERE id = $1", 3, up) < 0 ? -1 : 0;
        free (text);
    }
    json_decref (row);
    return rc;
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
    if (kf_db_exec (self->db,
                    "INSERT INTO archive_cells (run_id, cell, candidate_id, fitness, speedup)"
                    " VALUES ($1, $2::int[], $3, $4, $5)"
                    " ON CONFLICT (run_id, cell) DO UPDATE SET candidate_id = EXCLUDED.candidate_id,"
                    " fitness = EXCLUDED.fitness, speedup = EXCLUDED.speedup, updated_at = now()"
                    " WHERE archive_cells.fitness < EXCLUDED.fitness"
                    " OR (archive_cells.fitness = EXCLUDED.fitness"
                    "     AND archive_cells.speedup < EXCLUDED.speedup)",
                    5, p2) < 0)
        return -1;
    /* A new elite is profiled for its children's prompts, where a worker
     * can (kf_search_profile.c): here, so a cell that falls to another
     * kernel when it is built again (a re-verified or repeated figure,
     * kf_fidelity.c; an audit's rejection) has its elite profiled too. */
    return kf_search_profile_elite (self, run_id, cand_id);
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
    return kf_db_row_id (self->db,
                         "UPDATE runs SET (best_candidate_id, best_speedup) ="
                         " (SELECT id, speedup FROM candidates WHERE run_id = $1"
                         "  AND status = 'correct' AND speedup > 0 AND " S_COUNTS
                         "  ORDER BY speedup DESC, id LIMIT 1),"
                         " first_speedup = (SELECT speedup FROM candidates WHERE run_id = $1"
                         "  AND status = 'correct' AND " S_COUNTS
                         "  ORDER BY generation, slot LIMIT 1)"
                         " WHERE id = $1"
                         " RETURNING best_candidate_id, best_speedup, first_speedup",
                         run_id, NULL);
}

json_t *
kf_search_run_figures (kf_search_t *self, int64_t run_id)
{
    return s_run_figures (self, run_id);
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

