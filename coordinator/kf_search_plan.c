/*  kf_search_plan.c - scheduling: what a run plans next.
 *
 *  The steady-state step (kf_search_fill) keeps up to max_in_flight
 *  candidates open, then runs the tuning rounds, then ends the run. Each
 *  candidate it plans gets its parent and inspirations from a snapshot of
 *  the run's archive and of each island's own (kf_select.c, with island
 *  migration and the gradients of kf_gradient.c); a child lives on its
 *  parent's island. Its prompt (kf_prompt.c) comes with the
 *  evolvable sections of kf_meta.c; every draw is a function of the run's
 *  seed and the candidate's number.
 */
#include "kf_search_int.h"
#include "kf_json.h"
#include "kf_hash.h"
#include "kf_gradient.h"
#include "kf_lineage.h"
#include "kf_log.h"
#include "kf_memory.h"
#include "kf_meta.h"
#include "kf_models.h"
#include "kf_prompt.h"
#include "kf_prompt_history.h"
#include "kf_prompt_facts.h"
#include "kf_prompt_target.h"
#include "kf_retune.h"
#include "kf_search_idea.h"
#include "kf_str.h"
#include "kf_tune.h"
#include "kf_stop.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

/* The first generation's own model when the run names one, else a pick by the seed. */
static const char *
s_model_for (json_t *config, int generation, int64_t seed)
{
    const char *first = json_string_value (json_object_get (config, "first_model"));
    if (generation == 0 && first)
        return first;
    json_t *models = json_object_get (config, "models");
    return json_array_size (models) ? kf_models_pick (models, seed) : "offline";
}

static bool   /* "{1,2,3}" into three ints; false when it is not that */
s_coords (json_t *text, int out[3])
{
    return json_is_string (text)
           && sscanf (json_string_value (text), "{%d,%d,%d}", &out[0], &out[1], &out[2]) == 3;
}

/* What planning needs of the run's archive, read once per planning pass:
 * the elites in cell order, the islands' own archives (by island, then
 * cell) with the candidates they are made of, the recent transitions
 * (oldest first) and the gradients over them. */
typedef struct {
    kf_elite_t *elites;
    size_t n_elites;
    kf_elite_t *members;     /* archive-worthy candidates, with their islands */
    size_t n_members;
    kf_elite_t *pool;        /* the islands' archives, from the members */
    size_t n_pool;
    kf_transition_t *trans;
    size_t n_trans;
    kf_gradient_t grad;
    char fingerprint[17];    /* of the elites' (cell, source) pairs, the
                                islands' included */
    bool loaded;
} s_snapshot_t;

static void
s_snapshot_free (s_snapshot_t *snap)
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
                s_snapshot_t *snap, FILE *lf)
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

static int
s_snapshot_load (kf_search_t *self, int64_t run_id, const kf_search_settings_t *st,
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
 * island's own archive is copied into the next island's (a ring), where
 * it takes its cell by the grid's rule, so good ideas cross over every
 * migration_every generations while the islands otherwise evolve apart.
 * Idempotent (the membership is a set, the archives are derived from it). */
static int
s_migrate (kf_search_t *self, int64_t run_id, const kf_search_settings_t *st,
           s_snapshot_t *snap, int generation)
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

/* The kernel tried last from PARENT_ID (its latest finished child), as a
 * prompt kernel object (caller's), or NULL when there is none. */
static json_t *
s_last_kernel (kf_search_t *self, int64_t parent_id)
{
    int64_t id = parent_id ? kf_lineage_last_child (self->db, parent_id) : 0;
    return id ? kf_prompt_kernel (self->db, id) : NULL;
}

/* The template a tuning round reuses for KERNEL (a prompt kernel object):
 * KERNEL itself when it declares kf-tune parameters, else the fastest
 * correct template an earlier round made of it. Then *SOURCE is that
 * template with its last sweep's winning point made the defaults (caller
 * frees), *TEMPLATE_ID its candidate and LABEL the point; *SOURCE stays
 * NULL when there is none (a model templates the kernel). 0, or -1. */
static int
s_reuse_template (kf_search_t *self, json_t *kernel, char **source, int64_t *template_id,
                  char *label, size_t label_size)
{
    *source = NULL;
    *template_id = 0;
    label[0] = 0;
    json_t *tpl = NULL;
    if (kf_retune_is_template (kf_jstr (kernel, "source")))
        tpl = json_incref (kernel);
    else {
        char id[24];
        const char *params[1] = { S_I64 (id, kf_jint (kernel, "id")) };
        bool failed = false;
        json_t *row = kf_db_row (self->db,
                                 "SELECT c.id FROM candidates c JOIN blobs b"
                                 " ON b.hash = c.source_hash WHERE c.parent_id = $1"
                                 " AND c.phase = 'tuning' AND c.status = 'correct'"
                                 " AND position('kf-tune:'::bytea IN b.data) > 0"
                                 " ORDER BY c.speedup DESC, c.id DESC LIMIT 1",
                                 1, params, &failed);
        if (failed)
            return -1;
        if (kf_jint (row, "id"))
            tpl = kf_prompt_kernel (self->db, kf_jint (row, "id"));
        json_decref (row);
    }
    if (!tpl || !kf_retune_is_template (kf_jstr (tpl, "source"))) {
        json_decref (tpl);
        return 0;
    }
    json_t *won = kf_retune_winner (json_object_get (tpl, "configs"));
    json_t *params = json_object_get (won, "params");
    *source = params ? kf_retune_source (kf_jstr (tpl, "source"), params, NULL)
                     : strdup (kf_jstr (tpl, "source"));
    *template_id = kf_jint (tpl, "id");
    if (params)
        kf_tune_params_label (params, label, label_size);
    json_decref (tpl);
    return *source ? 0 : -1;
}

/* Plans one candidate: (GENERATION, SLOT) of PHASE, its sequence number
 * SEQ keying every draw. A search candidate's parent is selected from the
 * archive; a tuning candidate's is TUNE_PARENT (an elite index). Inserts
 * the row with its prompt and queues its generate job (or, for the task's
 * initial kernel, goes straight to compiling it). */
static int
s_plan (kf_search_t *self, json_t *run, const kf_search_settings_t *st, s_snapshot_t *snap,
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

    /* Choose the parent and inspirations. Candidate SEQ takes its turn
     * on island SEQ mod K: the island strategy draws from that island's
     * own archive, and the child lives there. Any other strategy draws
     * from the run's grid, and the child lives on its parent's island.
     * A child without a parent lives on its turn's island, and so does
     * one the island strategy drew for an island with no elite yet
     * (uniformly from the grid, the fallback): that is how an island is
     * first populated. A tuning candidate lives on its elite's island. */
    kf_selection_t sel;
    int home = st->islands ? (int) (seq % st->island_count) : 0;
    int island = home;
    if (tuning) {
        memset (&sel, 0, sizeof sel);
        sel.parent = tune_parent;
    }
    else if (kf_select_in (&st->select, snap->elites, snap->n_elites, snap->pool, snap->n_pool,
                           seed, seq, home, &sel))
        return -1;
    const kf_elite_t *parent = sel.parent < 0 ? NULL : sel.from_island ? &snap->pool[sel.parent]
                                                                       : &snap->elites[sel.parent];
    /* This slot's idea, none that lost here, from a kernel that lacks it (kf_search_idea.h). */
    kf_search_idea_t idea;
    char backend[32], arch[64];
    kf_search_split_target (kf_jstr (run, "target"), backend, sizeof backend, arch, sizeof arch);
    json_t *hardware = kf_prompt_hardware (self->db, backend, arch, run_id);
    int64_t version_id = 0;   /* the sections' version: its ideas are handed out */
    json_t *sections = kf_meta_sections (self, run_id, &version_id);
    if (kf_search_idea_choose (self->db, run, sections, tuning ? 0 : st->population,
                               generation, slot, sel.from_island ? snap->pool : snap->elites,
                               sel.from_island ? snap->n_pool : snap->n_elites,
                               sel.from_island ? home : -1, parent, snap->fingerprint, hardware,
                               &idea)) {
        json_decref (hardware);
        json_decref (sections);
        return -1;
    }
    parent = idea.parent;
    if (parent && st->islands && (tuning || sel.strategy != KF_SELECT_ISLAND))
        island = parent->island >= 0 && parent->island < st->island_count ? parent->island : home;
    char *hints = NULL;
    /* In the target's words (no shared memory or warps on the host), as the prompt has them. */
    kf_target_kind_t kind = kf_prompt_target_kind (kf_jstr (run, "target"), language);
    if (st->gradients && parent && snap->n_trans)
        hints = kf_gradient_hints (&snap->grad, snap->trans, snap->n_trans, parent->candidate_id,
                                   parent->coords,
                                   st->max_hints, st->min_moves, kind == KF_TARGET_HOST);
    if (hints) {
        char *worded = kf_prompt_hints_for_target (hints, kind);
        free (hints);
        hints = worded;
    }
    json_t *selection = json_pack ("{s:s, s:b, s:f, s:i, s:i, s:I, s:s, s:I, s:b}", "strategy",
                                   tuning ? "tuning" : kf_select_strategy_name (sel.strategy),
                                   "fallback", sel.fallback, "draw", sel.draw, "island",
                                   island, "turn", home,
                                   "elites", (json_int_t) snap->n_elites, "archive",
                                   idea.archive, "transitions",
                                   (json_int_t) snap->n_trans, "hints", hints != NULL);
    if (idea.idea)
        json_object_set_new (selection, "idea", json_string (idea.idea));
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
                                 && json_is_true (kf_search_setting (self, run, "memory"))
                             ? kf_memory_pick (self->db, run, seq, &memory_failed)
                             : NULL;
    if (remembered) {
        json_object_set_new (selection, "memory", kf_memory_note (remembered));
        json_array_append_new (inspirations, remembered);
    }

    /* The prompt: the parent as the kernel to improve (the run's best when
     * nothing is selected yet), the last kernel tried from it, the
     * inspirations, the hints and the evolvable sections of this run. */
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
    json_t *compiler = kf_prompt_compiler (self->db, backend);
    json_t *stats = kf_prompt_input_stats (self->db, run_id);
    json_t *tune_points = kf_search_setting (self, run, "tuning_configs");
    /* What became of the run's other candidates, which kernels this
     * generation's siblings start from, and the sections' version
     * (kf_prompt_history.h). */
    json_t *history = kf_prompt_history (self->db, run_id);
    json_t *siblings = tuning ? NULL : kf_prompt_siblings (self->db, run_id, generation);
    int version_number = 0, version_generation = 0;
    kf_prompt_version_of (self->db, version_id, &version_number, &version_generation);
    kf_prompt_in_t in = { .spec = spec, .language = language,
                          .target = kf_jstr (run, "target"), .hardware = hardware,
                          .compiler = compiler, .input_stats = stats,
                          .base = best, .best = top, .last = last, .children = children,
                          .inspirations = inspirations, .hints = hints,
                          .sections = sections, .generation = generation, .slot = slot,
                          .population = st->population, .templated = tuning,
                          .tune_points = tune_points ? (int) json_integer_value (tune_points)
                                                     : 0,
                          .history = history, .siblings = siblings, .ideas = idea.prompt,
                          .prompt_version = version_number,
                          .prompt_version_generation = version_generation };
    /* A kernel that is a template already, or has one from an earlier
     * round, is swept again around its winner; no model templates it
     * again (kf_retune.h). */
    char *reused = NULL, point[256];
    int64_t template_id = 0;
    int reuse_rc = tuning && best ? s_reuse_template (self, best, &reused, &template_id, point,
                                                      sizeof point)
                                  : 0;
    char *prompt = !sections ? NULL
                   : reused ? kf_strdupf ("No model was asked: candidate %lld is a template "
                                          "already, so this tuning round sweeps it again with "
                                          "the winning point of its last sweep%s%s%s made the "
                                          "defaults, and the points around it are built and "
                                          "timed.\n", (long long) template_id,
                                          *point ? " (" : "", point, *point ? ")" : "")
                   : kf_prompt_build (&in);
    if (reuse_rc) {
        free (prompt);
        prompt = NULL;
    }
    json_decref (hardware);
    json_decref (compiler);
    json_decref (stats);
    json_decref (top);
    json_decref (children);
    json_decref (history);
    json_decref (siblings);
    json_decref (idea.prompt);
    json_decref (last);
    json_decref (inspirations);
    json_decref (sections);
    int rc = prompt && !memory_failed ? 0 : -1;

    char runid[24], gen[24], slotbuf[24], parentbuf[24], isl[24];
    char *sel_text = json_dumps (selection, JSON_COMPACT);
    json_decref (selection);
    /* A reused template has no prompt to carry hints: it stores none. */
    const char *params[11] = { S_I64 (runid, run_id), S_I64 (gen, generation),
                               S_I64 (slotbuf, slot),
                               parent ? S_I64 (parentbuf, parent->candidate_id) : NULL,
                               language, prompt, tuning ? "tuning" : "search",
                               S_I64 (isl, island), sel_text, insp_ids,
                               reused ? NULL : hints };
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
        free (reused);
        json_decref (best);
        return rc || failed ? -1 : 0;
    }
    if (kf_meta_attach (self, cand, tuning ? 0 : version_id)) {
        free (prompt);
        free (reused);
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
    if (reused) {
        /* The reused template goes straight to compiling, as the task's
         * initial kernel does. */
        kf_generate_result_t given = { .source = reused, .generator = "template", .model = "",
                                       .error_kind = "", .detail = "" };
        rc = rc ? rc : kf_search_generated (self, run, cand, &given);
        free (reused);
        free (prompt);
        json_decref (best);
        return rc;
    }
    json_t *initial = json_object_get (spec, "initial");
    if (rc == 0 && !tuning && generation == 0 && slot == 0 && initial) {
        /* The user's own starting point is the first candidate: it is
         * compiled and evaluated like any other, with no generator. */
        const char *given_source = json_string_value (json_object_get (initial, "source"));
        kf_generate_result_t given = { .source = given_source ? given_source : "",
                                       .generator = "initial", .model = "", .error_kind = "",
                                       .detail = "" };
        rc = kf_search_generated (self, run, cand, &given);
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
        if (kf_search_setting (self, run, sampling[k]))
            json_object_set (payload, sampling[k], kf_search_setting (self, run, sampling[k]));
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
    return kf_search_insert_job (self, run_id, cand, "generate", "generate", NULL, NULL,
                                 payload, NULL);
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
    json_t *run = kf_search_run_row (self, run_id);
    if (!run)
        return -1;
    if (strcmp (kf_jstr (run, "status"), "running")) {
        json_decref (run);
        return 0;
    }
    kf_search_settings_t st;
    kf_search_settings (self, run, &st);
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
    const char *spent = kf_search_budget_spent (run, why, sizeof why);
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
        /* Nothing at the reference's speed yet: the next generation waits
         * for most of this one's verdicts (kf_select_hold). */
        int hold = planned >= st.population ? s_snapshot_load (self, run_id, &st, &snap) : 0;
        if (hold == 0 && planned >= st.population)
            hold = kf_search_hold (self, run_id, (int) (planned / st.population), st.population,
                                   snap.elites, snap.n_elites);
        if (hold) {
            rc = hold < 0 ? -1 : 0;
            break;
        }
        rc = s_plan (self, run, &st, &snap, (int) (planned / st.population),
                     (int) (planned % st.population), planned, false, -1);
        planned++;
        open++;
    }
    if (rc == 0 && open == 0 && !spent && planned >= total && st.tuning
        && rounds < st.tuning_rounds) {
        /* A tuning round: templated versions of the best elites within
         * tuning_near_best of the run's best, each swept over up to
         * tuning_configs points (docs/search.md). */
        rc = s_snapshot_load (self, run_id, &st, &snap);
        int want = st.population < st.in_flight ? st.population : st.in_flight;
        int *best = calloc ((size_t) want + 1, sizeof *best);
        int n = rc == 0 ? kf_select_near_best (snap.elites, snap.n_elites, st.tuning_near,
                                               best, want)
                        : 0;
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
        /* A run in which no candidate could even be generated, or none
         * that was could be judged (every compile or evaluation failed for
         * good), has not searched anything: it failed, and says why. */
        char status[16] = "done";
        rc = kf_lineage_run_end (self->db, run_id, status, sizeof status, reason, sizeof reason);
        if (rc == 0)
            rc = kf_search_finish_run (self, run_id, status, reason);
    }
    s_snapshot_free (&snap);
    json_decref (run);
    return rc;
}

/* A fill asked for from inside one of the same run (a candidate it planned finished
 * at once) would end the run under the rest of its round: it runs again after it. */
int
kf_search_fill (kf_search_t *self, int64_t run_id)
{
    if (self->filling == run_id) {
        self->fill_again = true;
        return 0;
    }
    int64_t outer = self->filling;
    bool outer_again = self->fill_again;
    self->filling = run_id;
    int rc;
    do {
        self->fill_again = false;
        rc = s_fill (self, run_id);
    } while (rc == 0 && self->fill_again);
    self->filling = outer;
    self->fill_again = outer_again;
    return rc;
}

int
kf_search_begin (kf_search_t *self, int64_t run_id)
{
    return kf_search_fill (self, run_id);
}
