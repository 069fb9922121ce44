/*  kf_search_plan.c - scheduling: what a run plans next.
 *
 *  The steady-state step (kf_search_fill) keeps up to max_in_flight
 *  candidates open, then runs the tuning rounds, then ends the run. Each
 *  candidate it plans gets its parent and inspirations from a snapshot of
 *  the run's archive and of each island's own (kf_search_snapshot.c,
 *  kf_select.c, with island migration and the gradients of kf_gradient.c); a child lives on its
 *  parent's island. Its prompt (kf_prompt.c) comes with the
 *  evolvable sections of kf_meta.c; every draw is a function of the run's
 *  seed and the candidate's number.
 */
#include "kf_search_int.h"
#include "kf_json.h"
#include "kf_gradient.h"
#include "kf_lineage.h"
#include "kf_log.h"
#include "kf_memory.h"
#include "kf_meta.h"
#include "kf_meta_ideas.h"
#include "kf_models.h"
#include "kf_prompt.h"
#include "kf_prompt_changed.h"
#include "kf_prompt_history.h"
#include "kf_prompt_facts.h"
#include "kf_prompt_target.h"
#include "kf_retune.h"
#include "kf_search_idea.h"
#include "kf_str.h"
#include "kf_take.h"
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

/* The kernel tried last from PARENT_ID (its latest finished child), as a
 * prompt kernel object (caller's), or NULL when there is none. */
static json_t *
s_last_kernel (kf_search_t *self, int64_t parent_id)
{
    int64_t id = parent_id ? kf_lineage_last_child (self->db, parent_id) : 0;
    return id ? kf_prompt_kernel (self->db, id) : NULL;
}

/* What s_reuse_template found for one elite of a tuning round, found
 * once: s_distinct_shapes looks each elite up to compare their starts,
 * and s_plan takes what it found for the elites it keeps. */
typedef struct {
    int64_t kernel_id;     /* the elite it was found for; 0: not looked up */
    char *source;          /* the re-centred template (owned), or NULL */
    int64_t template_id;
    char label[256];       /* the winning point */
    json_t *converged;     /* a template whose sweep won at its defaults (owned) */
    bool again;            /* SOURCE is that template as it is, swept again: its sweep
                              was timed beside other work (round 30) */
} s_reuse_t;

static void
s_reuse_clear (s_reuse_t *reuse)
{
    free (reuse->source);
    json_decref (reuse->converged);
    memset (reuse, 0, sizeof *reuse);
}

/* The template a tuning round reuses for KERNEL (a prompt kernel object):
 * KERNEL itself when it declares kf-tune parameters, else the fastest
 * correct template an earlier round made of it, into OUT. Then its
 * source is that template with its last sweep's winning point made the
 * defaults (caller frees), template_id its candidate and label the
 * point; source stays NULL when there is none (a model templates the
 * kernel). Round 22: a template whose sweep won at its own defaults
 * (kf_retune_recentre) would be swept again over the same points: source
 * stays NULL and converged is that template (caller's), for the model to
 * template anew; unless (round 30) that sweep was timed beside other
 * work (kf_retune_sweep_busy) and no such template of KERNEL was swept
 * again yet: then source is that template as it is, and again is set.
 * 0, or -1. */
static int
s_reuse_template (kf_search_t *self, json_t *kernel, s_reuse_t *out)
{
    memset (out, 0, sizeof *out);
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
    //  One reading gives the re-centred source and whether it is a copy.
    json_t *won = NULL;
    bool same = false;
    char *centred = kf_retune_recentre (kf_jstr (tpl, "source"), json_object_get (tpl, "configs"),
                                        &won, &same);
    //  Round 30: such a sweep timed while others took 59-72% of the CPUs
    //  was taken as settled. It is swept again as it is, once a kernel.
    if (centred && same && kf_retune_sweep_busy (json_object_get (tpl, "configs"), NULL, NULL)) {
        bool failed = false;
        json_t *row = kf_db_row_id (self->db,
                                    "SELECT count(*) AS n FROM candidates WHERE parent_id = $1"
                                    " AND generator = '" KF_SEARCH_TEMPLATE_AGAIN "'",
                                    kf_jint (kernel, "id"), &failed);
        out->again = !failed && kf_jint (row, "n") == 0;
        json_decref (row);
        if (failed) {
            free (centred);
            json_decref (tpl);
            return -1;
        }
    }
    if (centred && same && !out->again) {
        free (centred);
        out->converged = tpl;
        return 0;
    }
    out->source = centred;
    out->template_id = kf_jint (tpl, "id");
    json_t *params = json_object_get (won, "params");
    if (params)
        kf_tune_params_label (params, out->label, sizeof out->label);
    json_decref (tpl);
    return out->source ? 0 : -1;
}

/* Plans one candidate: (GENERATION, SLOT) of PHASE, its sequence number
 * SEQ keying every draw. A search candidate's parent is selected from the
 * archive; a tuning candidate's is TUNE_PARENT (an elite index). Inserts
 * the row with its prompt and queues its generate job (or, for the task's
 * initial kernel, goes straight to compiling it). REPLAN: the search
 * candidate (GENERATION, SLOT) exists and its generate job is queued: its
 * plan and prompt are made again, now, and replace the row's and the
 * job's (kf_search_replan). */
/* Round 20: a tuning round templated two elites of one design that
 * differed in constants only, and so swept the same parameters twice;
 * round 21 swept a kernel's template again from the kernel and from the
 * template's own winner, one source twice. Of ELITES' indexes in BEST
 * (N, best first), those whose start (the template s_reuse_template would
 * sweep, else the source) has the shape (kf_lineage_shape_hash) of none
 * before them, at most MAX, in BEST's order; a kernel that cannot be read
 * is kept. Returns the count; REUSE[k] (N entries, zeroed) holds what
 * s_reuse_template found for the k-th kept (caller clears them). */
static int
s_distinct_shapes (kf_search_t *self, const kf_elite_t *elites, int *best, int n, int max,
                   s_reuse_t *reuse)
{
    char (*shape)[65] = calloc ((size_t) n + 1, sizeof *shape);
    int kept = 0;
    for (int i = 0; i < n && kept < max; i++) {
        char id[24];
        snprintf (id, sizeof id, "%lld", (long long) elites[best[i]].candidate_id);
        //  Its id and source are what s_reuse_template reads of a kernel
        //  that is no template; a template's own sweep table it reads too.
        json_t *k = kf_prompt_kernel_source (self->db, elites[best[i]].candidate_id);
        if (k && kf_retune_is_template (kf_jstr (k, "source"))) {
            json_decref (k);
            k = kf_prompt_kernel (self->db, elites[best[i]].candidate_id);
        }
        //  Found for the kept one's plan; a lookup that failed is made again there.
        s_reuse_t *found = &reuse[kept];
        if (k && s_reuse_template (self, k, found) == 0)
            found->kernel_id = elites[best[i]].candidate_id;
        else
            s_reuse_clear (found);
        const char *text = found->source ? found->source : k ? kf_jstr (k, "source") : "";
        bool dup = false;
        char mine[65] = "";
        if (*text) {
            kf_lineage_shape_hash (text, strlen (text), mine);
            for (int j = 0; shape && j < kept; j++)
                dup |= !strcmp (shape[j], mine);
        }
        json_decref (k);
        if (dup) {
            s_reuse_clear (found);
            kf_debug ("tuning: candidate %s has the shape of one planned already: not "
                      "templated again", id);
            continue;
        }
        if (shape)
            memcpy (shape[kept], mine, sizeof mine);
        best[kept++] = best[i];
    }
    free (shape);
    return kept;
}

static int
s_plan (kf_search_t *self, json_t *run, const kf_search_settings_t *st,
        kf_search_snapshot_t *snap, int generation, int slot, int64_t seq, bool tuning, int tune_parent,
        bool replan, s_reuse_t *reuse)
{
    int64_t run_id = kf_jint (run, "id");
    int64_t seed = kf_jint (run, "seed");
    json_t *spec = json_object_get (run, "spec");
    json_t *config = json_object_get (run, "config");
    const char *language = kf_jstr (run, "language");
    if (kf_search_snapshot_load (self, run_id, st, snap))
        return -1;
    if (!tuning && slot == 0 && generation > 0 && st->islands && st->island_count > 1
        && st->migration_every > 0 && generation % st->migration_every == 0
        && kf_search_migrate (self, run_id, st, snap, generation))
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
    if (kf_search_idea_choose (self->db, self->idea_cache, run, sections,
                               tuning ? 0 : st->population,
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
    if (idea.with)
        json_object_set_new (selection, "with", json_string (idea.with));
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
    /* Round 39: the plan moved the idea off the kernel the archive chose
     * because that kernel does it already, and the attempt rebuilt it
     * from a description: that kernel's code comes first among the
     * inspirations (shown only: it is not this attempt's parent). */
    json_t *moved = json_object_get (idea.prompt, "moved");
    const char *mwhy = kf_jstr (moved, "why");
    int64_t mfrom = kf_jint (moved, "from");
    bool listed = false;
    for (size_t i = 0; i < json_array_size (inspirations); i++)
        listed |= kf_jint (json_array_get (inspirations, i), "id") == mfrom;
    if (mfrom > 0 && !listed
        && (!strcmp (mwhy, "code") || !strcmp (mwhy, "built") || !strcmp (mwhy, "inherited"))) {
        json_t *k = kf_prompt_kernel (self->db, mfrom);
        if (k) {
            json_object_set_new (k, "does_idea", json_true ());
            json_array_insert_new (inspirations, 0, k);
        }
    }
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
    /* Round 15: each verdict with what the child changed (kf_prompt_changed.h). */
    bool children_failed = children
                           && kf_prompt_children_changes (self->db, children,
                                                          parent->candidate_id);
    json_t *compiler = kf_prompt_compiler (self->db, backend);
    json_t *manifest = kf_prompt_manifest (self->db, run_id);
    json_t *stats = kf_prompt_input_stats (manifest);
    json_t *range = kf_prompt_output_range (manifest);
    json_decref (manifest);
    json_t *tune_points = kf_search_setting (self, run, "tuning_configs");
    /* What became of the run's other candidates, which kernels this
     * generation's siblings start from, and the sections' version
     * (kf_prompt_history.h). */
    json_t *history = kf_prompt_history (self->db, run_id);
    json_t *siblings = tuning ? NULL : kf_prompt_siblings (self->db, run_id, generation);
    kf_meta_ideas_canon (sections, history);
    kf_meta_ideas_canon (sections, siblings);
    int version_number = 0, version_generation = 0;
    kf_prompt_version_of (self->db, version_id, &version_number, &version_generation);
    kf_prompt_in_t in = { .spec = spec, .language = language,
                          .target = kf_jstr (run, "target"), .hardware = hardware,
                          .compiler = compiler, .input_stats = stats,
                          .output_range = range,
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
     * again (kf_retune.h), unless that sweep won at its own defaults:
     * then the model is asked for a new parameter (CONVERGED). */
    s_reuse_t found = { 0 };
    int reuse_rc = 0;
    if (tuning && best && reuse && reuse->kernel_id && reuse->kernel_id == kf_jint (best, "id")) {
        //  Found already, for this kernel (s_distinct_shapes).
        found = *reuse;
        reuse->source = NULL;
        reuse->converged = NULL;
    }
    else if (tuning && best)
        reuse_rc = s_reuse_template (self, best, &found);
    char *reused = KF_TAKE (&found.source);
    json_t *converged = KF_TAKE (&found.converged);
    int64_t template_id = found.template_id;
    const char *point = found.label;
    in.converged = converged;
    char *prompt = !sections ? NULL
                   : reused && found.again
                       ? kf_strdupf ("No model was asked: candidate %lld's sweep found none "
                                     "faster than its own defaults, but it was timed while "
                                     "other processes took a large share of the CPUs, so this "
                                     "tuning round sweeps the same template again, its points "
                                     "built and timed once more.\n", (long long) template_id)
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
    json_decref (converged);
    json_decref (hardware);
    json_decref (compiler);
    json_decref (stats);
    json_decref (range);
    json_decref (top);
    json_decref (children);
    json_decref (history);
    json_decref (siblings);
    json_decref (idea.prompt);
    json_decref (last);
    json_decref (inspirations);
    json_decref (sections);
    int rc = prompt && !memory_failed && !children_failed ? 0 : -1;

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
    if (rc == 0 && replan)
        row = kf_db_row (self->db,
                         "UPDATE candidates c SET parent_id = $4, prompt = $6, island = $8,"
                         " selection = $9, inspirations = $10, hints = $11"
                         " WHERE c.run_id = $1 AND c.generation = $2 AND c.slot = $3"
                         " AND c.language = $5 AND c.phase = $7 AND EXISTS (SELECT 1 FROM jobs j"
                         "  WHERE j.candidate_id = c.id AND j.kind = 'generate'"
                         "  AND j.state = 'queued')"
                         " RETURNING id",
                         11, params, &failed);
    else if (rc == 0)
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
    if (slot == 0 && !replan) {
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
        kf_generate_result_t given = { .source = reused,
                                       .generator = found.again ? KF_SEARCH_TEMPLATE_AGAIN
                                                                : "template",
                                       .model = "",
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
    if (replan) {
        char *text = json_dumps (payload, JSON_COMPACT);
        json_decref (payload);
        const char *jp[2] = { candbuf, text };
        rc = text && kf_db_exec (self->db,
                                 "UPDATE jobs SET payload = $2::jsonb, updated_at = now()"
                                 " WHERE candidate_id = $1 AND kind = 'generate'"
                                 " AND state = 'queued'", 2, jp) >= 0 ? 0 : -1;
        free (text);
        return rc;
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
    kf_search_snapshot_t snap = { 0 };
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
        int hold = planned >= st.population
                       ? kf_search_snapshot_load (self, run_id, &st, &snap) : 0;
        if (hold == 0 && planned >= st.population)
            hold = kf_search_hold (self, run_id, (int) (planned / st.population), st.population,
                                   snap.elites, snap.n_elites);
        if (hold) {
            rc = hold < 0 ? -1 : 0;
            break;
        }
        rc = s_plan (self, run, &st, &snap, (int) (planned / st.population),
                     (int) (planned % st.population), planned, false, -1, false, NULL);
        planned++;
        open++;
    }
    if (rc == 0 && open == 0 && !spent && planned >= total && st.tuning
        && rounds < st.tuning_rounds) {
        /* A tuning round: templated versions of the best elites within
         * tuning_near_best of the run's best, each swept over up to
         * tuning_configs points (docs/search.md). */
        rc = kf_search_snapshot_load (self, run_id, &st, &snap);
        int want = st.population < st.in_flight ? st.population : st.in_flight;
        int all = (int) snap.n_elites;
        int *best = calloc ((size_t) all + 1, sizeof *best);
        s_reuse_t *reuse = calloc ((size_t) all + 1, sizeof *reuse);
        int n = rc == 0 && best && reuse ? kf_select_near_best (snap.elites, snap.n_elites,
                                                                st.tuning_near, best, all)
                                         : 0;
        n = s_distinct_shapes (self, snap.elites, best, n, want, reuse);
        int generation = st.generations + rounds;
        for (int i = 0; i < n && rc == 0; i++)
            rc = s_plan (self, run, &st, &snap, generation, i,
                         total + (int64_t) rounds * st.population + i, true, best[i], false,
                         &reuse[i]);
        for (int i = 0; reuse && i < n; i++)
            s_reuse_clear (&reuse[i]);
        free (reuse);
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
    kf_search_snapshot_free (&snap);
    json_decref (run);
    return rc;
}

int
kf_search_replan (kf_search_t *self, int64_t run_id)
{
    json_t *run = kf_search_run_row (self, run_id);
    if (!run)
        return -1;
    char id[24];
    const char *params[1] = { S_I64 (id, run_id) };
    //  Search candidates whose prompt waits in a queued generate job: no
    //  model has it yet.
    json_t *rows = strcmp (kf_jstr (run, "status"), "running") ? json_array ()
                   : kf_db_query (self->db,
                                  "SELECT c.generation, c.slot, c.selection->>'idea' AS idea"
                                  " FROM candidates c JOIN jobs j ON j.candidate_id = c.id"
                                  " AND j.kind = 'generate' AND j.state = 'queued'"
                                  " WHERE c.run_id = $1 AND c.phase = 'search'"
                                  " AND c.selection->>'idea' IS NOT NULL ORDER BY c.id",
                                  1, params);
    json_t *sections = rows && json_array_size (rows) ? kf_meta_sections (self, run_id, NULL)
                                                      : NULL;
    int rc = rows && (sections || !json_array_size (rows)) ? 0 : -1;
    size_t count = 0;
    const char **ideas = sections
                         ? kf_meta_ideas (sections, json_object_get (run, "spec"),
                                          kf_prompt_target_kind (kf_jstr (run, "target"),
                                                                 kf_jstr (run, "language")),
                                          &count)
                         : NULL;
    kf_search_settings_t st;
    kf_search_settings (self, run, &st);
    kf_search_snapshot_t snap = { 0 };
    size_t i;
    json_t *r;
    json_array_foreach (rows, i, r)
        if (rc == 0 && kf_search_idea_dropped (kf_jstr (r, "idea"), ideas, count)) {
            int generation = (int) kf_jint (r, "generation"), slot = (int) kf_jint (r, "slot");
            kf_info ("run %lld: generation %d attempt %d planned again: its idea is no "
                     "longer in the prompt version's list", (long long) run_id, generation,
                     slot + 1);
            rc = s_plan (self, run, &st, &snap, generation, slot,
                         (int64_t) generation * st.population + slot, false, -1, true, NULL);
        }
    kf_search_snapshot_free (&snap);
    free (ideas);
    json_decref (sections);
    json_decref (rows);
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
