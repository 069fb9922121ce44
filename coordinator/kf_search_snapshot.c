/*  kf_search_snapshot.c - what planning reads of a run's archive, once per
 *  planning pass: the elites in cell order, the islands' own archives
 *  derived from the candidates, the recent transitions with the gradients
 *  over them and a fingerprint of it all by content; and island migration,
 *  which moves an elite between those archives (kf_search_int.h).
 */
#include "kf_search_int.h"
#include "kf_lineage.h"
#include "kf_hash.h"
#include "kf_json.h"
#include "kf_log.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

static bool   /* "{1,2,3}" into three ints; false when it is not that */
s_coords (json_t *text, int out[3])
{
    return json_is_string (text)
           && sscanf (json_string_value (text), "{%d,%d,%d}", &out[0], &out[1], &out[2]) == 3;
}

void
kf_search_snapshot_free (kf_search_snapshot_t *snap)
{
    free (snap->elites);
    free (snap->members);
    free (snap->pool);
    free (snap->trans);
    memset (snap, 0, sizeof *snap);
}

/* Bit K of ISLANDS, for the K below COUNT that fit in it. */
static uint32_t
s_island_bit (long k, int count)
{
    return k >= 0 && k < count && k < KF_SELECT_MAX_ISLANDS ? 1u << k : 0;
}

/* The islands' own archives: every candidate the run's grid would take
 * (correct, with coordinates, not rejected by an audit), on its own
 * island and on those it migrated into, kept per island by the grid's
 * rule (kf_select_island_archives). Derived afresh from the candidates,
 * so a full timing, a re-verification or an audit moves an island's
 * archive as it moves the grid. Lists them into LF for the fingerprint. */
static int
s_islands_load (kf_search_t *self, int64_t run_id, const kf_search_settings_t *st,
                kf_search_snapshot_t *snap, FILE *lf)
{
    char id[24];
    const char *params[1] = { S_I64 (id, run_id) };
    json_t *rows = kf_db_query (
        self->db,
        "SELECT c.id, c.coords::text AS coords, c.fitness, c.speedup, c.island, c.source_hash,"
        " coalesce((SELECT array_agg(m.island ORDER BY m.island) FROM island_migrants m"
        "  WHERE m.run_id = c.run_id AND m.candidate_id = c.id), '{}')::text AS migrants"
        " FROM candidates c WHERE c.run_id = $1 AND c.status = 'correct' AND c.speedup > 0"
        " AND c.finished_at IS NOT NULL AND c.coords IS NOT NULL"
        " AND c.audit_verdict IS DISTINCT FROM 'rejected'"
        " ORDER BY c.id",
        1, params);
    if (!rows)
        return -1;
    size_t n = json_array_size (rows);
    snap->members = calloc (n + 1, sizeof *snap->members);
    snap->pool = calloc (n * (size_t) st->island_count + 1, sizeof *snap->pool);
    char (*hashes)[65] = calloc (n + 1, sizeof *hashes);
    if (!snap->members || !snap->pool || !hashes) {
        free (hashes);
        json_decref (rows);
        return -1;
    }
    size_t i;
    json_t *row;
    json_array_foreach (rows, i, row) {
        kf_elite_t *e = &snap->members[snap->n_members];
        if (!s_coords (json_object_get (row, "coords"), e->coords))
            continue;
        e->candidate_id = kf_jint (row, "id");
        e->fitness = json_number_value (json_object_get (row, "fitness"));
        e->speedup = json_number_value (json_object_get (row, "speedup"));
        e->island = (int) kf_jint (row, "island");
        e->islands = s_island_bit (e->island, st->island_count);
        for (const char *p = kf_jstr (row, "migrants"); *p; p++) {
            char *end;
            long k = strtol (p, &end, 10);
            if (end != p) {
                e->islands |= s_island_bit (k, st->island_count);
                p = end - 1;
            }
        }
        snprintf (hashes[snap->n_members], sizeof hashes[0], "%s", kf_jstr (row, "source_hash"));
        snap->n_members++;
    }
    json_decref (rows);
    snap->n_pool = kf_select_island_archives (snap->members, snap->n_members, st->bins,
                                              st->island_count, snap->pool);
    /* Which kernel each island holds where, by content, as for the grid. */
    for (size_t k = 0; lf && k < snap->n_pool; k++)
        for (size_t m = 0; m < snap->n_members; m++)
            if (snap->members[m].candidate_id == snap->pool[k].candidate_id) {
                fprintf (lf, "i%d:%d,%d,%d:%s%s;", snap->pool[k].island,
                         snap->pool[k].coords[0], snap->pool[k].coords[1],
                         snap->pool[k].coords[2], hashes[m],
                         snap->pool[k].speedup < KF_SELECT_PARITY ? "<" : "");
                break;
            }
    free (hashes);
    return 0;
}

int
kf_search_snapshot_load (kf_search_t *self, int64_t run_id, const kf_search_settings_t *st,
                         kf_search_snapshot_t *snap)
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
            fprintf (lf, "%s:%s%s;", kf_jstr (row, "cell"), kf_jstr (row, "source_hash"),
                     kf_jnum (row, "speedup", 0) < KF_SELECT_PARITY ? "<" : "");
        kf_elite_t *e = &snap->elites[snap->n_elites];
        if (!s_coords (json_object_get (row, "coords"), e->coords))
            continue;
        e->candidate_id = kf_jint (row, "candidate_id");
        e->fitness = json_number_value (json_object_get (row, "fitness"));
        e->speedup = json_number_value (json_object_get (row, "speedup"));
        int own = (int) kf_jint (row, "island");
        e->island = own;
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
    if (st->islands && st->island_count > 1 && s_islands_load (self, run_id, st, snap, lf)) {
        if (lf)
            fclose (lf);
        free (listing);
        return -1;
    }
    if (lf)
        fclose (lf);
    char digest[65];
    kf_sha256_hex (listing ? listing : "", listing ? listing_size : 0, digest);
    snprintf (snap->fingerprint, sizeof snap->fingerprint, "%.16s", digest);
    free (listing);
    if (st->gradients) {
        rows = kf_db_query (self->db,
                            "SELECT parent_coords::text AS p, child_coords::text AS c,"
                            " parent_fitness, child_fitness, novel, parent_id FROM transitions"
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
            t->parent_id = kf_jint (r, "parent_id");
            snap->n_trans++;
        }
        json_decref (rows);
        /* A child within the run's repeat noise of its parent moved
         * nothing, as its prompt line says (kf_lineage_verdict). */
        double band = kf_lineage_band (0, kf_lineage_repeat (self->db, run_id, NULL, NULL, NULL));
        kf_gradient_estimate_within (snap->trans, snap->n_trans, st->decay, band, &snap->grad);
        for (size_t k = 0; k < snap->n_elites; k++)
            snap->elites[k].curiosity = kf_gradient_weight (&snap->grad, snap->trans,
                                                            snap->n_trans, st->decay,
                                                            snap->elites[k].coords);
    }
    snap->loaded = true;
    return 0;
}

/* Island migration at the start of GENERATION: the fittest elite of each
 * island's own archive is copied into the next island's (a ring), where
 * it takes its cell by the grid's rule, so good ideas cross over every
 * migration_every generations while the islands otherwise evolve apart.
 * Idempotent (the membership is a set, the archives are derived from it). */
int
kf_search_migrate (kf_search_t *self, int64_t run_id, const kf_search_settings_t *st,
                   kf_search_snapshot_t *snap, int generation)
{
    int K = st->island_count;
    int best[KF_SELECT_MAX_ISLANDS];
    for (int k = 0; k < K; k++) {
        best[k] = -1;
        for (size_t i = 0; i < snap->n_pool; i++) {
            const kf_elite_t *e = &snap->pool[i], *b = best[k] >= 0 ? &snap->pool[best[k]] : NULL;
            if (e->island == k
                && (!b || e->fitness > b->fitness
                    || (e->fitness == b->fitness && e->speedup > b->speedup)))
                best[k] = (int) i;
        }
    }
    int moved = 0;
    int64_t emigrant[KF_SELECT_MAX_ISLANDS];
    for (int k = 0; k < K; k++) {
        emigrant[k] = best[k] >= 0 ? snap->pool[best[k]].candidate_id : 0;
        if (!emigrant[k])
            continue;
        int to = (k + 1) % K;
        char run[24], isl[24], cand[24], gen[24];
        const char *params[4] = { S_I64 (run, run_id), S_I64 (isl, to),
                                  S_I64 (cand, emigrant[k]), S_I64 (gen, generation) };
        long n = kf_db_exec (self->db,
                             "INSERT INTO island_migrants (run_id, island, candidate_id,"
                             " generation) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                             4, params);
        if (n < 0)
            return -1;
        moved += n > 0;
    }
    /* Membership changes only after every island's emigrant was chosen, so
     * the order of the islands does not matter; then the archives again. */
    for (int k = 0; k < K; k++) {
        uint32_t bit = 1u << ((k + 1) % K);
        for (size_t i = 0; emigrant[k] && i < snap->n_members; i++)
            if (snap->members[i].candidate_id == emigrant[k])
                snap->members[i].islands |= bit;
        for (size_t i = 0; emigrant[k] && i < snap->n_elites; i++)
            if (snap->elites[i].candidate_id == emigrant[k])
                snap->elites[i].islands |= bit;
    }
    snap->n_pool = kf_select_island_archives (snap->members, snap->n_members, st->bins, K,
                                              snap->pool);
    if (moved)
        kf_debug ("run %lld: %d island migrant(s) at generation %d", (long long) run_id,
                  moved, generation);
    return 0;
}
