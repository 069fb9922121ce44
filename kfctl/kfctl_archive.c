/*  kfctl_archive.c - what `kfctl show` prints of a run beyond its tables:
 *  the archive as 4x4 grids with the best kernel and its lineage, the
 *  prompt versions with their edits, and what `show --json` adds to the
 *  SHOW reply (the cells, the best and the first correct candidate).
 */
#include "kfctl_archive.h"
#include "kfctl_fields.h"
#include "kfctl_print.h"
#include "kf_descriptor.h"
#include <string.h>

/* Coordinates "{m,a,s}" as PostgreSQL prints an int[]; false when the
 * text is missing or of another shape. */
static bool
s_coords (json_t *obj, const char *key, int xyz[3])
{
    const char *text = json_string_value (json_object_get (obj, key));
    return text && sscanf (text, "{%d,%d,%d}", &xyz[0], &xyz[1], &xyz[2]) == 3;
}

#define S_LEVELS 4

/* The axes in the words of the run's target (analysis/kf_descriptor.h):
 * a host run's grid speaks of SIMD and threads, not warps. */
const char *
kf_ctl_level_name (const char *target, int dim, int level)
{
    return kf_descriptor_level_short (target, dim, level);
}

const char *
kf_ctl_dim_name (const char *target, int dim)
{
    return kf_descriptor_dim_short (target, dim);
}

/* One grid: rows are dimension ROW, columns dimension COL, each cell the
 * best speedup among the occupied cells that project onto it, marked `*`
 * when that elite does not count for the run's best (yet): pending its
 * re-verification or full-protocol timing, or held for audit; so a grid
 * never shows, unexplained, more than the summary's best. Returns whether
 * it marked any. */
static bool
s_print_grid (FILE *out, const char *target, json_t *archive, json_t *candidates, int row,
              int col)
{
    double best[S_LEVELS][S_LEVELS];
    bool has[S_LEVELS][S_LEVELS], uncounted[S_LEVELS][S_LEVELS], marked = false;
    memset (has, 0, sizeof has);
    memset (uncounted, 0, sizeof uncounted);
    size_t i;
    json_t *cell;
    json_array_foreach (archive, i, cell) {
        int xyz[3];
        double speedup;
        if (!s_coords (cell, "cell", xyz) || !kf_ctl_real (cell, "speedup", &speedup))
            continue;
        int r = xyz[row], c = xyz[col];
        /* A run with more bins than levels cannot be drawn on these
         * axes; such a cell is left out rather than misplaced. */
        if (r < 0 || r >= S_LEVELS || c < 0 || c >= S_LEVELS)
            continue;
        if (!has[r][c] || speedup > best[r][c]) {
            json_t *elite = kf_ctl_candidate (candidates, kf_ctl_int (cell, "candidate_id", -1));
            best[r][c] = speedup;
            has[r][c] = true;
            uncounted[r][c] = elite && !kf_ctl_counts (elite);
        }
    }
    fprintf (out, "%s x %s\n", kf_ctl_dim_name (target, row), kf_ctl_dim_name (target, col));
    fprintf (out, "  %-13s", "");
    for (int c = 0; c < S_LEVELS; c++)
        fprintf (out, " %13s", kf_ctl_level_name (target, col, c));
    fprintf (out, "\n");
    for (int r = 0; r < S_LEVELS; r++) {
        fprintf (out, "  %-13s", kf_ctl_level_name (target, row, r));
        for (int c = 0; c < S_LEVELS; c++) {
            char text[32];
            if (has[r][c])
                snprintf (text, sizeof text, "%.2fx%s", best[r][c], uncounted[r][c] ? "*" : "");
            else
                snprintf (text, sizeof text, "  -  ");
            fprintf (out, " %13s", text);
            marked = marked || (has[r][c] && uncounted[r][c]);
        }
        fprintf (out, "\n");
    }
    return marked;
}

void
kf_ctl_print_archive (FILE *out, json_t *body)
{
    json_t *run = json_object_get (body, "run");
    json_t *archive = json_object_get (body, "archive");
    json_t *candidates = json_object_get (body, "candidates");
    size_t occupied = json_array_size (archive);
    const char *status = kf_ctl_str (run, "status");
    bool ended = !strcmp (status, "done") || !strcmp (status, "failed")
                 || !strcmp (status, "cancelled");
    /* Three grids of dashes say nothing a line cannot. */
    if (occupied == 0) {
        fprintf (out, "archive: empty (%s)\n\n",
                 ended ? "no correct candidate was found" : "no correct candidate yet");
        fprintf (out, "best kernel: none\n");
        return;
    }
    fprintf (out, "archive: %zu cell%s occupied; each grid cell shows the best "
             "elite speedup over the third dimension\n",
             occupied, occupied == 1 ? "" : "s");
    static const int pairs[3][2] = { { 0, 1 }, { 0, 2 }, { 1, 2 } };
    bool marked = false;
    for (int p = 0; p < 3; p++) {
        fprintf (out, "\n");
        marked = s_print_grid (out, kf_ctl_str (run, "target"), archive, candidates, pairs[p][0],
                               pairs[p][1])
                 || marked;
    }
    if (marked)
        fprintf (out, "* not counted in the run's best: pending verification (re-verification"
                 " or full-protocol timing), or held for audit\n");
    fprintf (out, "\n");

    long long best_id = kf_ctl_int (run, "best_candidate_id", -1);
    json_t *best = best_id >= 0 ? kf_ctl_candidate (candidates, best_id) : NULL;
    if (!best) {
        fprintf (out, "best kernel: %s\n", ended ? "none" : "none correct yet");
        return;
    }
    char speedup[32];
    double value;
    if (kf_ctl_real (best, "speedup", &value))
        snprintf (speedup, sizeof speedup, "%.2fx", value);
    else
        kf_ctl_speedup_text (json_object_get (run, "best_speedup"), speedup,
                             sizeof speedup);
    int xyz[3];
    if (s_coords (best, "coords", xyz))
        fprintf (out, "best kernel: candidate %lld, %s, coords {%d,%d,%d} "
                 "(%s, %s, %s)\n", best_id, speedup, xyz[0], xyz[1], xyz[2],
                 kf_ctl_level_name (kf_ctl_str (run, "target"), 0, xyz[0]),
                 kf_ctl_level_name (kf_ctl_str (run, "target"), 1, xyz[1]),
                 kf_ctl_level_name (kf_ctl_str (run, "target"), 2, xyz[2]));
    else
        fprintf (out, "best kernel: candidate %lld, %s, no coords\n", best_id,
                 speedup);

    /* Parents always come from the same run, so the chain ends at a root;
     * the bound only guards against a corrupt reply with a cycle. */
    fprintf (out, "lineage of the best: %lld", best_id);
    json_t *node = best;
    for (size_t steps = 0; steps <= json_array_size (candidates); steps++) {
        long long parent = kf_ctl_int (node, "parent_id", -1);
        if (parent < 0)
            break;
        fprintf (out, " <- %lld", parent);
        node = kf_ctl_candidate (candidates, parent);
        if (!node)
            break;      /* a parent outside this reply: stop at its id */
    }
    fprintf (out, "\n");
    char times[256];
    kf_ctl_times_text (best, times, sizeof times);
    if (*times)
        fprintf (out, "best kernel times: %s\n", times);
}

/* An edit in one line: "pitfalls: +\"- Observed...\"" for an append,
 * "strategies: \"old\" -> \"new\"" for a replacement, each side cut. */
static void
s_edit_short (FILE *out, json_t *edit)
{
    const char *sides[2] = { json_string_value (json_object_get (edit, "search")),
                             json_string_value (json_object_get (edit, "replace")) };
    char cut[2][48];
    const char *more[2];
    for (int i = 0; i < 2; i++) {
        const char *t = sides[i] ? sides[i] : "";
        size_t line = strcspn (t, "\n"), len = strlen (t);
        if (len && t[len - 1] == '\n')
            len--;   //  the block's last newline is no text of its own
        snprintf (cut[i], sizeof cut[i], "%.*s", (int) line, t);
        more[i] = strlen (cut[i]) < len ? "..." : "";
    }
    if (!sides[0] || !*sides[0])
        fprintf (out, "%s: +\"%s%s\"", kf_ctl_str (edit, "section"), cut[1], more[1]);
    else
        fprintf (out, "%s: \"%s%s\" -> \"%s%s\"", kf_ctl_str (edit, "section"), cut[0], more[0],
                 cut[1], more[1]);
}

void
kf_ctl_print_prompts (FILE *out, json_t *body)
{
    json_t *versions = json_object_get (body, "prompt_versions");
    json_t *rejected = json_object_get (body, "prompt_rejected");
    if (!json_array_size (versions))
        return;
    fprintf (out, "prompt versions: %zu, from %lld meta job%s\n", json_array_size (versions),
             kf_ctl_int (body, "meta_jobs", 0),
             kf_ctl_int (body, "meta_jobs", 0) == 1 ? "" : "s");
    fprintf (out, "%-5s %-6s %4s %8s %8s %7s %-7s  %s\n", "VER", "PARENT", "GEN", "FITNESS",
             "BEST", "KERNELS", "ARCHIVE", "EDITS");
    size_t i;
    json_t *v;
    json_array_foreach (versions, i, v) {
        char ver[24], parent[24] = "-", fit[24] = "-", best[32];
        snprintf (ver, sizeof ver, "v%lld", kf_ctl_int (v, "number", 0));
        if (kf_ctl_int (v, "parent", -1) >= 0)
            snprintf (parent, sizeof parent, "v%lld", kf_ctl_int (v, "parent", 0));
        double f;
        if (kf_ctl_real (v, "fitness", &f))
            snprintf (fit, sizeof fit, "%.3f", f);
        kf_ctl_speedup_text (json_object_get (v, "best_speedup"), best, sizeof best);
        fprintf (out, "%-5s %-6s %4lld %8s %8s %7lld %-7s  ", ver, parent,
                 kf_ctl_int (v, "generation", 0), fit, best, kf_ctl_int (v, "candidates", 0),
                 json_is_false (json_object_get (v, "in_archive")) ? "no" : "yes");
        json_t *edits = json_object_get (v, "edits");
        if (!json_array_size (edits))
            fprintf (out, "(the defaults)");
        size_t k;
        json_t *e;
        json_array_foreach (edits, k, e) {
            if (k)
                fprintf (out, "\n%-5s %-6s %4s %8s %8s %7s %-7s  ", "", "", "", "", "", "", "");
            s_edit_short (out, e);
        }
        fprintf (out, "\n");
    }
    size_t n = json_array_size (rejected);
    if (n) {
        json_t *last = json_array_get (rejected, n - 1);
        fprintf (out, "rejected edits: %zu%s (latest, job %lld: %s)\n", n,
                 n >= 20 ? " or more" : "", kf_ctl_int (last, "job_id", 0),
                 kf_ctl_str (last, "reason"));
    }
    fprintf (out, "\n");
}

/* The candidate of CANDIDATES with id ID as {candidate_id, generation,
 * slot, speedup, coords [m,a,s]}, or null. */
static json_t *
s_show_candidate (json_t *candidates, long long id)
{
    json_t *c = id >= 0 ? kf_ctl_candidate (candidates, id) : NULL;
    if (!c)
        return json_null ();
    json_t *out = json_pack ("{s:I, s:I, s:I}", "candidate_id", (json_int_t) id, "generation",
                             (json_int_t) kf_ctl_int (c, "generation", 0), "slot",
                             (json_int_t) kf_ctl_int (c, "slot", 0));
    double sp;
    json_object_set_new (out, "speedup", kf_ctl_real (c, "speedup", &sp) ? json_real (sp)
                                                                    : json_null ());
    int xyz[3];
    json_object_set_new (out, "coords", s_coords (c, "coords", xyz)
                                            ? json_pack ("[i,i,i]", xyz[0], xyz[1], xyz[2])
                                            : json_null ());
    return out;
}

void
kf_ctl_show_extend (json_t *body)
{
    json_t *run = json_object_get (body, "run");
    json_t *candidates = json_object_get (body, "candidates");
    json_t *cells = json_array ();
    size_t i;
    json_t *a;
    json_array_foreach (json_object_get (body, "archive"), i, a) {
        int xyz[3];
        double sp, fit;
        if (!s_coords (a, "cell", xyz))
            continue;
        json_t *cell = json_pack ("{s:[i,i,i], s:I}", "coords", xyz[0], xyz[1], xyz[2],
                                  "candidate_id",
                                  (json_int_t) kf_ctl_int (a, "candidate_id", 0));
        json_object_set_new (cell, "speedup", kf_ctl_real (a, "speedup", &sp) ? json_real (sp)
                                                                         : json_null ());
        json_object_set_new (cell, "fitness", kf_ctl_real (a, "fitness", &fit) ? json_real (fit)
                                                                          : json_null ());
        json_array_append_new (cells, cell);
    }
    json_object_set_new (body, "cells", cells);
    json_object_set_new (body, "best",
                         s_show_candidate (candidates,
                                           kf_ctl_int (run, "best_candidate_id", -1)));
    //  The first correct candidate in (generation, slot) order: the one
    //  the search started from, what "improved on" is measured against.
    long long first = -1, fg = 0, fs = 0;
    json_t *c;
    json_array_foreach (candidates, i, c)
        if (kf_ctl_counts (c)) {
            long long g = kf_ctl_int (c, "generation", 0), sl = kf_ctl_int (c, "slot", 0);
            if (first < 0 || g < fg || (g == fg && sl < fs)) {
                first = kf_ctl_int (c, "id", -1);
                fg = g;
                fs = sl;
            }
        }
    json_object_set_new (body, "first_correct", s_show_candidate (candidates, first));
}

