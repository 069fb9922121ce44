/*  kf_search_idea_known.c - what the plan knows of the pool beyond its
 *  sources (kf_search_idea_known_t, kf_search_idea.h): the idea each
 *  kernel was built from, what the generation's siblings took from which
 *  kernel, and the tries in flight; read from the run's candidates and
 *  folded into the archive's fingerprint by the elites' places.
 */
#include "kf_search_idea.h"
#include "kf_json.h"
#include "kf_prompt_class.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  The index of TEXT in IDEAS (N), or -1. Round 19: an idea a meta round
//  reworded is found by its subject (kf_prompt_idea_feature) where one
//  idea alone has it, so a try in the old words still counts as taken.
static int
s_idea_index (const char *const *ideas, size_t n, const char *text)
{
    for (size_t i = 0; text && i < n; i++)
        if (!strcmp (ideas[i], text))
            return (int) i;
    kf_idea_feature_t f = text ? kf_prompt_idea_feature (text) : KF_IDEA_OTHER;
    int found = -1;
    for (size_t i = 0; f != KF_IDEA_OTHER && i < n; i++)
        if (kf_prompt_idea_feature (ideas[i]) == f) {
            if (found >= 0)
                return -1;
            found = (int) i;
        }
    return found;
}

//  The row of ROWS whose id is ID, or NULL.
static json_t *
s_row_of (json_t *rows, int64_t id)
{
    size_t i;
    json_t *r;
    json_array_foreach (rows, i, r)
        if (kf_jint (r, "id") == id)
            return r;
    return NULL;
}

//  Bits 1 << i of the ideas the ancestors of kernel ID in ROWS were
//  written to (the task's own kernel given, not written to one).
static uint64_t
s_ancestry (json_t *rows, const char *const *ideas, size_t count, int64_t id)
{
    uint64_t bits = 0;
    json_t *r = s_row_of (rows, id);
    int64_t up = r ? kf_jint (r, "parent_id") : 0;
    for (int hops = 0; up > 0 && hops < 64; hops++) {
        json_t *p = s_row_of (rows, up);
        if (!p)
            break;
        int idx = s_idea_index (ideas, count, json_string_value (json_object_get (p, "idea")));
        if (idx >= 0 && idx < 64 && strcmp (kf_jstr (p, "generator"), "initial"))
            bits |= (uint64_t) 1 << idx;
        up = kf_jint (p, "parent_id");
    }
    return bits;
}

bool
kf_search_idea_inherited (const kf_search_idea_known_t *known, int64_t id, size_t idx)
{
    for (size_t i = 0; known && idx < 64 && i < known->n_up; i++)
        if (known->up_ids[i] == id)
            return (known->up_ideas[i] >> idx) & 1u;
    return false;
}

int
kf_search_idea_known_read (json_t *rows, const char *const *ideas, size_t count,
                           const kf_elite_t *elites, size_t n, const kf_elite_t *chosen,
                           int generation, int slot, kf_search_idea_known_t *known)
{
    memset (known, 0, sizeof *known);
    known->chosen_built = -1;
    known->built = malloc ((n + 1) * sizeof *known->built);
    //  Each row's idea, and the one paired with it (round 16).
    known->siblings = calloc (2 * json_array_size (rows) + 1, sizeof *known->siblings);
    known->pending = calloc (count + 1, sizeof *known->pending);
    known->up_ids = calloc (n + 1, sizeof *known->up_ids);
    known->up_ideas = calloc (n + 1, sizeof *known->up_ideas);
    known->tried = calloc (json_array_size (rows) + 1, sizeof *known->tried);
    if (!known->built || !known->siblings || !known->pending || !known->up_ids
        || !known->up_ideas || !known->tried) {
        kf_search_idea_known_free (known);
        return -1;
    }
    for (size_t e = 0; e <= n; e++) {
        const kf_elite_t *k = e < n ? &elites[e] : chosen;
        if (k) {
            known->up_ids[known->n_up] = k->candidate_id;
            known->up_ideas[known->n_up++] = s_ancestry (rows, ideas, count, k->candidate_id);
        }
    }
    for (size_t e = 0; e < n; e++)
        known->built[e] = -1;
    size_t i;
    json_t *r;
    json_array_foreach (rows, i, r) {
        int idx = s_idea_index (ideas, count, json_string_value (json_object_get (r, "idea")));
        if (idx < 0)
            continue;
        int64_t id = kf_jint (r, "id");
        //  The task's own kernel was given, not written to the idea its
        //  slot leans towards.
        if (strcmp (kf_jstr (r, "generator"), "initial")) {
            for (size_t e = 0; e < n; e++)
                if (elites[e].candidate_id == id)
                    known->built[e] = idx;
            if (chosen && chosen->candidate_id == id)
                known->chosen_built = idx;
        }
        bool search = !strcmp (kf_jstr (r, "phase"), "search");
        bool here = kf_jint (r, "generation") == generation;
        bool self = here && kf_jint (r, "slot") == slot;
        bool pending = json_is_true (json_object_get (r, "pending"));
        known->pending[idx] += search && pending && !self;
        if (search && json_is_true (json_object_get (r, "tried")))
            known->tried[known->n_tried++] = (kf_search_idea_sibling_t) {
                .parent_id = kf_jint (r, "parent_id"), .idea = (size_t) idx };
        //  A sibling's, or one in flight from an earlier generation
        //  (round 11: candidate 12 and a sibling both took cache blocking
        //  from candidate 6).
        if (search && !self && (here || pending)) {
            //  Round 15: what the sibling's kernel is to do, when its
            //  parent's features are stored and its idea is one code shows.
            //  Round 19: an earlier generation's try in flight too (threads
            //  with streaming stores was handed from candidate 3 while
            //  candidate 9 made it from candidate 2).
            kf_idea_feature_t f = kf_prompt_idea_feature (ideas[idx]);
            json_t *pf = json_object_get (r, "parent_features");
            bool made = f != KF_IDEA_OTHER && json_is_integer (pf);
            known->siblings[known->n_siblings++] = (kf_search_idea_sibling_t) {
                .parent_id = kf_jint (r, "parent_id"), .idea = (size_t) idx,
                .made = made ? (unsigned) json_integer_value (pf) | 1u << f : 0,
                .made_known = made };
            //  Round 16: the idea paired with it (kf_search_idea_pair) is
            //  taken from that parent too, and is in flight.
            int with = s_idea_index (ideas, count,
                                     json_string_value (json_object_get (r, "with")));
            if (with >= 0) {
                kf_search_idea_sibling_t *main = &known->siblings[known->n_siblings - 1];
                kf_idea_feature_t wf = kf_prompt_idea_feature (ideas[with]);
                if (main->made_known && wf != KF_IDEA_OTHER)
                    main->made |= 1u << wf;
                known->pending[with] += pending;
                known->siblings[known->n_siblings++] = (kf_search_idea_sibling_t) {
                    .parent_id = kf_jint (r, "parent_id"), .idea = (size_t) with };
            }
        }
    }
    return 0;
}

void
kf_search_idea_known_free (kf_search_idea_known_t *known)
{
    if (!known)
        return;
    free (known->built);
    free (known->siblings);
    free (known->pending);
    free (known->threads_lose);
    free (known->scalar);
    free (known->arith);
    free (known->up_ids);
    free (known->up_ideas);
    free (known->tried);
    memset (known, 0, sizeof *known);
    known->chosen_built = -1;
}

char *
kf_search_idea_known_text (const kf_search_idea_known_t *known, const kf_elite_t *elites,
                           size_t n)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return NULL;
    fputs ("|known:", f);
    for (size_t e = 0; known->built && e < n; e++)
        if (known->built[e] >= 0)
            fprintf (f, "b%zu=%d,", e, known->built[e]);
    //  A sibling's parent by every place it holds in the pool (a kernel
    //  on several islands holds several).
    for (size_t s = 0; s < known->n_siblings; s++) {
        bool named = false;
        for (size_t e = 0; e < n; e++)
            if (elites[e].candidate_id == known->siblings[s].parent_id) {
                fprintf (f, "%s%zu", named ? "." : "s", e);
                named = true;
            }
        if (named && known->siblings[s].made_known)
            fprintf (f, "=%zu:%x,", known->siblings[s].idea, known->siblings[s].made);
        else if (named)
            fprintf (f, "=%zu,", known->siblings[s].idea);
    }
    //  A judged try's parent likewise (round 36).
    for (size_t t = 0; t < known->n_tried; t++)
        for (size_t e = 0; e < n; e++)
            if (elites[e].candidate_id == known->tried[t].parent_id)
                fprintf (f, "t%zu=%zu,", e, known->tried[t].idea);
    fprintf (f, "c=%d", known->chosen_built);
    if (fclose (f)) {
        free (text);
        return NULL;
    }
    return text;
}

json_t *
kf_search_idea_known_rows (kf_db_t *db, int64_t run_id)
{
    char id[24];
    snprintf (id, sizeof id, "%lld", (long long) run_id);
    const char *params[1] = { id };
    json_t *rows = kf_db_query (db,
                                "SELECT c.id, c.generation, c.slot, c.parent_id, c.phase,"
                                " c.generator, c.selection->>'idea' AS idea,"
                                " c.selection->>'with' AS with,"
                                " (p.selection->>'features')::bigint AS parent_features,"
                                " (c.finished_at IS NULL OR c.fidelity = 'pending') AS pending,"
                                " (c.finished_at IS NOT NULL AND c.speedup > 0"
                                "  AND c.fidelity IS DISTINCT FROM 'pending') AS tried"
                                " FROM candidates c LEFT JOIN candidates p ON p.id = c.parent_id"
                                " WHERE c.run_id = $1 AND c.selection->>'idea' IS NOT NULL"
                                " ORDER BY c.id",
                                1, params);
    kf_json_drop_nulls (rows);
    return rows;
}

bool
kf_search_idea_dropped (const char *handed, const char *const *ideas, size_t n)
{
    return handed && *handed && s_idea_index (ideas, n, handed) < 0;
}

void
kf_search_idea_known_more (FILE *f, const bool *held, const bool *spent, size_t count,
                           const kf_search_idea_known_t *known, size_t n)
{
    const char *sep = "|held:";
    for (size_t k = 0; k < count; k++)
        if (held[k]) {
            fprintf (f, "%s%zu", sep, k);
            sep = ",";
        }
    sep = "|spent:";
    for (size_t k = 0; k < count; k++)
        if (spent[k]) {
            fprintf (f, "%s%zu", sep, k);
            sep = ",";
        }
    sep = "|slow:";
    for (size_t e = 0; known->threads_lose && e < n; e++)
        if (known->threads_lose[e]) {
            fprintf (f, "%s%zu", sep, e);
            sep = ",";
        }
    if (known->chosen_threads_lose)
        fprintf (f, "%sc", sep);
    sep = "|scalar:";
    for (size_t e = 0; known->scalar && e < n; e++)
        if (known->scalar[e]) {
            fprintf (f, "%s%zu", sep, e);
            sep = ",";
        }
    if (known->chosen_scalar)
        fprintf (f, "%sc", sep);
    sep = "|arith:";
    for (size_t e = 0; known->arith && e < n; e++)
        if (known->arith[e]) {
            fprintf (f, "%s%zu", sep, e);
            sep = ",";
        }
    if (known->chosen_arith)
        fprintf (f, "%sc", sep);
}
