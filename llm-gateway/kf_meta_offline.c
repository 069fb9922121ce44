/*  kf_meta_offline.c - the built-in meta-prompter (kf_meta_offline.h).
 *
 *  Rules, not a model. The outcomes are tallied by kind (did not compile,
 *  wrong results, crashed or timed out, correct); each kind seen gets one
 *  line in the section it belongs to, tagged "- Observed (KIND):" and
 *  carrying the real figures (how many of how many, the worst match
 *  fraction and errors, the first compiler error, the best speedup). A
 *  line already there is replaced (SEARCH the old line), else the line is
 *  appended (empty SEARCH), so sections do not grow without bound. The
 *  most common failure comes first, and no more edits than the payload's
 *  max_edits are proposed. The same payload always gives the same reply.
 */
#include "kf_meta_offline.h"
#include "kf_str.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *
s_str (json_t *obj, const char *key)
{
    const char *s = json_string_value (json_object_get (obj, key));
    return s ? s : "";
}

enum { K_COMPILE, K_WRONG, K_CRASH, K_CORRECT, K_N };

static const char *const s_tags[K_N] = { "compile", "wrong", "crash", "speed" };
static const char *const s_homes[K_N] = { "pitfalls", "pitfalls", "pitfalls", "philosophy" };

typedef struct {
    int count[K_N];
    int total;
    double worst_match;          //  over the wrong ones
    double worst_rel, worst_abs, worst_cos;
    bool have_figures;
    char first_error[160];       //  of the latest that did not compile
    char crash_detail[160];
    double best_speedup, worst_speedup;
    int64_t best_id;
} s_tally_t;

static int
s_kind (const char *status)
{
    if (!strcmp (status, "compile_failed"))
        return K_COMPILE;
    if (!strcmp (status, "incorrect"))
        return K_WRONG;
    if (!strcmp (status, "correct"))
        return K_CORRECT;
    return K_CRASH;   //  crashed, timeout, failed (no source)
}

//  The first line of LOG that says "error", else its first line.
static void
s_first_error (const char *log, char *out, size_t size)
{
    const char *line = log, *pick = NULL;
    while (*line && !pick) {
        size_t len = strcspn (line, "\n");
        for (size_t i = 0; i + 5 <= len && !pick; i++)
            if (!strncasecmp (line + i, "error", 5))
                pick = line;
        line += len + (line[len] ? 1 : 0);
    }
    if (!pick)
        pick = log;
    size_t len = strcspn (pick, "\n");
    snprintf (out, size, "%.*s", (int) (len < size - 1 ? len : size - 1), pick);
    //  Quotes and backticks would confuse the line's own quoting.
    for (char *c = out; *c; c++)
        if (*c == '"' || *c == '`')
            *c = '\'';
}

static void
s_tally (json_t *outcomes, s_tally_t *t)
{
    memset (t, 0, sizeof *t);
    t->worst_match = 2;
    t->worst_cos = 2;
    t->worst_speedup = INFINITY;
    size_t i;
    json_t *o;
    json_array_foreach (outcomes, i, o) {
        int k = s_kind (s_str (o, "status"));
        t->count[k]++;
        t->total++;
        json_t *c = json_object_get (o, "correctness");
        if (k == K_WRONG && json_is_object (c)) {
            double m = json_number_value (json_object_get (c, "match_fraction"));
            double rel = json_number_value (json_object_get (c, "max_rel_err"));
            double abs_ = json_number_value (json_object_get (c, "max_abs_err"));
            double cos = json_number_value (json_object_get (c, "cosine"));
            t->have_figures = true;
            t->worst_match = m < t->worst_match ? m : t->worst_match;
            t->worst_rel = rel > t->worst_rel ? rel : t->worst_rel;
            t->worst_abs = abs_ > t->worst_abs ? abs_ : t->worst_abs;
            t->worst_cos = cos < t->worst_cos ? cos : t->worst_cos;
        }
        if (k == K_COMPILE && *s_str (o, "log"))
            s_first_error (s_str (o, "log"), t->first_error, sizeof t->first_error);
        if (k == K_CRASH && *s_str (o, "detail"))
            snprintf (t->crash_detail, sizeof t->crash_detail, "%.150s", s_str (o, "detail"));
        json_t *sp = json_object_get (o, "speedup");
        if (k == K_CORRECT && json_is_number (sp)) {
            double s = json_number_value (sp);
            if (s > t->best_speedup) {
                t->best_speedup = s;
                t->best_id = json_integer_value (json_object_get (o, "candidate_id"));
            }
            t->worst_speedup = s < t->worst_speedup ? s : t->worst_speedup;
        }
    }
}

//  The line for kind K with the tally's figures (caller frees).
static char *
s_line_for (int k, const s_tally_t *t)
{
    int n = t->count[k], m = t->total;
    switch (k) {
    case K_COMPILE:
        return kf_strdupf ("- Observed (compile): %d of the last %d kernels did not compile%s%s%s. "
                           "Use only what the contract header and the language provide, declare "
                           "helpers before use, and keep kf_forward's exact signature.\n",
                           n, m, t->first_error[0] ? " (latest: \"" : "", t->first_error,
                           t->first_error[0] ? "\")" : "");
    case K_WRONG:
        if (t->have_figures)
            return kf_strdupf ("- Observed (wrong): %d of the last %d kernels gave wrong results "
                               "(worst: %.2f%% of elements within tolerance, max rel error %.3g, "
                               "max abs error %.3g, cosine %.6f). Reduce over the whole row, "
                               "handle the tail, and write every output element.\n",
                               n, m, 100.0 * t->worst_match, t->worst_rel, t->worst_abs,
                               t->worst_cos);
        return kf_strdupf ("- Observed (wrong): %d of the last %d kernels gave wrong results. "
                           "Reduce over the whole row, handle the tail, and write every output "
                           "element.\n", n, m);
    case K_CRASH:
        return kf_strdupf ("- Observed (crash): %d of the last %d kernels crashed, timed out or "
                           "produced no code%s%s%s. Stay inside the tensors' bounds and answer "
                           "with one complete code block.\n",
                           n, m, t->crash_detail[0] ? " (latest: \"" : "", t->crash_detail,
                           t->crash_detail[0] ? "\")" : "");
    default:
        return kf_strdupf ("- Observed (speed): %d of the last %d kernels were correct, from "
                           "%.3fx to %.3fx the reference (best: candidate %lld). Keep what the "
                           "fastest does and change one thing at a time.\n",
                           n, m, t->worst_speedup, t->best_speedup, (long long) t->best_id);
    }
}

//  The line of SECTION that starts with TAG, with its newline (caller
//  frees), or NULL.
static char *
s_existing (const char *section, const char *tag)
{
    for (const char *p = section; p && *p;) {
        size_t len = strcspn (p, "\n");
        if (!strncmp (p, tag, strlen (tag)))
            return strndup (p, len + (p[len] ? 1 : 0));
        p += len + (p[len] ? 1 : 0);
    }
    return NULL;
}

char *
kf_meta_offline_reply (json_t *payload, char **err)
{
    json_t *sections = json_object_get (payload, "sections");
    if (!json_is_object (sections)) {
        kf_fail (err, "offline meta-prompter: the payload has no sections");
        return NULL;
    }
    json_t *outcomes = json_object_get (payload, "outcomes");
    json_t *max = json_object_get (payload, "max_edits");
    int max_edits = json_is_integer (max) && json_integer_value (max) > 0
                        ? (int) json_integer_value (max) : 3;
    s_tally_t t;
    s_tally (outcomes, &t);

    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f) {
        kf_fail (err, "offline meta-prompter: out of memory");
        return NULL;
    }
    fprintf (f, "Diagnosis: of the last %d kernels, %d did not compile, %d gave wrong results, "
                "%d crashed or timed out and %d were correct",
             t.total, t.count[K_COMPILE], t.count[K_WRONG], t.count[K_CRASH], t.count[K_CORRECT]);
    if (t.count[K_CORRECT])
        fprintf (f, " (best %.3fx)", t.best_speedup);
    fputs (". The sections say nothing specific about what went wrong most often; the edits "
           "below state it with its figures.\n", f);

    //  Failures by frequency (ties in the order compile, wrong, crash),
    //  then the speed line when some kernels were correct.
    int order[K_N], n_order = 0;
    bool used[K_N] = { false };
    for (int round = 0; round < K_CORRECT; round++) {
        int pick = -1;
        for (int k = 0; k < K_CORRECT; k++)
            if (!used[k] && t.count[k] && (pick < 0 || t.count[k] > t.count[pick]))
                pick = k;
        if (pick < 0)
            break;
        used[pick] = true;
        order[n_order++] = pick;
    }
    if (t.count[K_CORRECT])
        order[n_order++] = K_CORRECT;
    int proposed = 0;
    for (int i = 0; i < n_order && proposed < max_edits; i++) {
        int k = order[i];
        char tag[40];
        snprintf (tag, sizeof tag, "- Observed (%s):", s_tags[k]);
        char *line = s_line_for (k, &t);
        char *old = s_existing (s_str (sections, s_homes[k]), tag);
        if (old && line && !strcmp (old, line)) {
            //  Already said, with the same figures: nothing to change.
            free (old);
            free (line);
            continue;
        }
        proposed++;
        fprintf (f, "\nSECTION: %s\n<<<<<<< SEARCH\n%s=======\n%s>>>>>>> REPLACE\n", s_homes[k],
                 old ? old : "", line ? line : "");
        free (old);
        free (line);
    }
    if (fclose (f) != 0) {
        free (text);
        kf_fail (err, "offline meta-prompter: out of memory");
        return NULL;
    }
    return text;
}

static void
s_answer (const kf_gen_request_t *req, kf_gen_reply_t *reply)
{
    reply->text = kf_meta_offline_reply (req->payload, &reply->error);
    reply->outcome = reply->text ? KF_GEN_OK : KF_GEN_FAIL;
}

kf_backend_t *
kf_backend_meta_offline_new (void)
{
    return kf_backend_at_once_new ("offline", s_answer);
}
