/*  kf_meta_guess.c - guess lines, the outcomes that bear on them, and
 *  their retraction (kf_meta_guess.h). Pure: kf_meta.c reads the
 *  database and applies what this returns.
 */
#include "kf_meta_guess.h"
#include "kf_json.h"
#include "kf_meta_edits.h"
#include "kf_meta_prompt.h"
#include "kf_prompt.h"
#include "kf_prompt_class.h"
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

//  The sections a guess may stand in: the analysis holds questions, not
//  claims.
static const char *const s_claims[] = { "philosophy", "strategies", "pitfalls" };

//  Whether the LEN bytes at LINE call themselves a guess.
static bool
s_is_guess (const char *line, size_t len)
{
    static const char *const words[] = { "guess", "hypothes", "untested", "unverified" };
    char *copy = strndup (line, len);
    bool yes = false;
    for (size_t i = 0; copy && !yes && i < sizeof words / sizeof words[0]; i++)
        yes = strcasestr (copy, words[i]) != NULL;
    free (copy);
    return yes;
}

json_t *
kf_meta_guess_lines (json_t *sections)
{
    json_t *out = json_array ();
    for (size_t s = 0; s < sizeof s_claims / sizeof s_claims[0]; s++) {
        const char *p = kf_jstr (sections, s_claims[s]), *line;
        size_t len;
        while ((line = kf_meta_edit_line (&p, &len)))
            if (len && s_is_guess (line, len))
                json_array_append_new (out, json_pack ("{s:s, s:s%}", "section", s_claims[s],
                                                       "line", line, len));
    }
    return out;
}

unsigned
kf_meta_guess_features (const char *line)
{
    static const struct { const char *word; kf_idea_feature_t f; } map[] = {
        { "thread", KF_IDEA_THREADS }, { "both cores", KF_IDEA_THREADS },
        { "every core", KF_IDEA_THREADS }, { "all cores", KF_IDEA_THREADS },
        { "atomic counter", KF_IDEA_THREADS }, { "openmp", KF_IDEA_THREADS },
        { "streaming store", KF_IDEA_STREAM }, { "non-temporal", KF_IDEA_STREAM },
        { "_stream_", KF_IDEA_STREAM }, { "intrinsic", KF_IDEA_SIMD },
        { "unroll", KF_IDEA_UNROLL }, { "polynomial", KF_IDEA_APPROX },
        { "approximat", KF_IDEA_APPROX }, { "rcp14", KF_IDEA_APPROX },
        { "reciprocal", KF_IDEA_APPROX }, { "cache block", KF_IDEA_BLOCK },
        { "blocking", KF_IDEA_BLOCK }, { "micro-kernel", KF_IDEA_MICRO },
        { "register tile", KF_IDEA_MICRO }, { "register-block", KF_IDEA_MICRO },
        { "pack", KF_IDEA_PACK }, { "fused pass", KF_IDEA_FUSED_ROW },
        { "single pass", KF_IDEA_FUSED_ROW }, { "one pass", KF_IDEA_FUSED_ROW },
        { "accumulator", KF_IDEA_ACCUMULATORS }, { "epilogue", KF_IDEA_EPILOGUE },
    };
    unsigned bits = 0;
    for (size_t i = 0; line && i < sizeof map / sizeof map[0]; i++)
        if (strcasestr (line, map[i].word))
            bits |= 1u << map[i].f;
    return bits;
}

//  Whether an edit's REPLACE wrote LINE: LINE is in it, or one of its
//  lines (20 bytes or more) is in LINE (a later edit of part of the line).
static bool
s_wrote (const char *replace, const char *line)
{
    if (!*replace)
        return false;
    if (strstr (replace, line))
        return true;
    const char *p = replace, *l;
    size_t len;
    while ((l = kf_meta_edit_line (&p, &len))) {
        char *one = len >= 20 ? strndup (l, len) : NULL;
        bool in = one && strstr (line, one);
        free (one);
        if (in)
            return true;
    }
    return false;
}

//  The entry of version NUMBER in HISTORY, or NULL.
static json_t *
s_version (json_t *history, int64_t number)
{
    size_t i;
    json_t *v;
    json_array_foreach (history, i, v)
        if (json_object_get (v, "number") && kf_jint (v, "number") == number)
            return v;
    return NULL;
}

//  The version of BASE's line (BASE, its parent, ...) whose edits wrote
//  LINE, the newest such, or NULL (the default sections').
static json_t *
s_added_by (json_t *history, int64_t base, const char *line)
{
    for (int hops = 0; base > 0 && hops < 10000; hops++) {
        json_t *v = s_version (history, base);
        if (!v)
            return NULL;
        size_t i;
        json_t *e;
        json_array_foreach (json_object_get (v, "edits"), i, e)
            if (s_wrote (kf_jstr (e, "replace"), line))
                return v;
        base = json_object_get (v, "parent") ? kf_jint (v, "parent") : 0;
    }
    return NULL;
}

//  Whether outcome O bears on a line about BITS: a child of the search
//  handed an idea about one of them, or whose code added one. *WHY gets
//  which.
static bool
s_bears (json_t *o, unsigned bits, const char **why)
{
    if (!bits || strcmp (kf_jstr (o, "phase"), "search") || !kf_jint (o, "parent_id"))
        return false;
    kf_idea_feature_t f = kf_prompt_idea_feature (kf_jstr (o, "idea"));
    if (f != KF_IDEA_OTHER && ((bits >> f) & 1u)) {
        *why = "handed";
        return true;
    }
    if (kf_prompt_features_added (o) & bits) {
        *why = "added";
        return true;
    }
    return false;
}

//  A figure's protocol in words.
static const char *
s_protocol (const char *fidelity)
{
    if (!strcmp (fidelity, "full"))
        return "full protocol";
    if (!strcmp (fidelity, "screen") || !strcmp (fidelity, "pending"))
        return "screen timing only";
    return "protocol unknown";
}

//  One outcome beside a guess: what it was and its figure against its
//  parent's.
static void
s_outcome (FILE *f, json_t *o, const char *why, unsigned bits)
{
    char words[KF_PROMPT_FEATURE_WORDS_MAX];
    fprintf (f, "\n  - candidate %lld (generation %lld, from candidate %lld; ",
             (long long) kf_jint (o, "candidate_id"), (long long) kf_jint (o, "generation"),
             (long long) kf_jint (o, "parent_id"));
    if (!strcmp (why, "handed")) {
        fputs ("handed \"", f);
        kf_meta_quote_cut (f, kf_jstr (o, "idea"), 90);
        fputc ('"', f);
    }
    else
        fprintf (f, "its code added %s",
                 kf_prompt_feature_words (kf_prompt_features_added (o) & bits, words,
                                          sizeof words));
    fputs ("): ", f);
    if (strcmp (kf_jstr (o, "status"), "correct") || !kf_jhas_num (o, "speedup")) {
        fprintf (f, "%s", kf_jstr (o, "status"));
        return;
    }
    double s = kf_jnum (o, "speedup", 0), p = kf_jnum (o, "parent_speedup", 0);
    fprintf (f, "%.2fx (%s)", s, s_protocol (kf_jstr (o, "fidelity")));
    if (p > 0)
        fprintf (f, " against its parent's %.2fx (%s), %.2f times the parent's", p,
                 s_protocol (kf_jstr (o, "parent_fidelity")), s / p);
}

//  Whether outcome O finished after MADE (0: any) and bears on BITS.
static bool
s_since_bears (json_t *o, double made, unsigned bits, const char **why)
{
    double at = kf_jnum (o, "finished_s", 0);
    return !(made > 0 && at > 0 && at < made) && s_bears (o, bits, why);
}

//  How many of the newest KF_META_GUESS_OUTCOMES of OUTCOMES (oldest
//  first) bear on BITS since MADE; *FROM the index of the oldest of them.
static size_t
s_bearing (json_t *outcomes, double made, unsigned bits, size_t *from)
{
    size_t n = json_array_size (outcomes), shown = 0;
    const char *why = "";
    *from = n;
    for (size_t k = n; k-- > 0 && shown < KF_META_GUESS_OUTCOMES;)
        if (s_since_bears (json_array_get (outcomes, k), made, bits, &why)) {
            shown++;
            *from = k;
        }
    return shown;
}

//  Those outcomes, oldest first, one s_outcome each.
static void
s_bearing_write (FILE *f, json_t *outcomes, size_t from, double made, unsigned bits)
{
    const char *why = "";
    for (size_t k = from; k < json_array_size (outcomes); k++) {
        json_t *o = json_array_get (outcomes, k);
        if (s_since_bears (o, made, bits, &why))
            s_outcome (f, o, why, bits);
    }
}

void
kf_meta_guess_tested (FILE *f, json_t *sections, json_t *outcomes, json_t *history,
                      int64_t base)
{
    json_t *lines = kf_meta_guess_lines (sections);
    size_t i, said = 0;
    json_t *g;
    json_array_foreach (lines, i, g) {
        const char *line = kf_jstr (g, "line");
        unsigned bits = kf_meta_guess_features (line);
        json_t *by = s_added_by (history, base, line);
        size_t from;
        if (!bits || !s_bearing (outcomes, by ? kf_jnum (by, "made_s", 0) : 0, bits, &from))
            continue;
        if (!said++)
            fputs ("\nTested since: lines above that call themselves guesses, each with the "
                   "kernels finished since it was written that were handed what it is about "
                   "or whose code added it, against their parents (the attempts list gives "
                   "each figure's noise and load; a meta round may retract a guess they "
                   "refute):\n", f);
        fputs ("- \"", f);
        kf_meta_quote_cut (f, line, 160);
        fputs ("\":", f);
        s_bearing_write (f, outcomes, from, by ? kf_jnum (by, "made_s", 0) : 0, bits);
        fputs ("\n", f);
    }
    json_decref (lines);
}

void
kf_meta_guess_text (FILE *f, json_t *sections, json_t *outcomes, json_t *history,
                    int64_t base)
{
    json_t *lines = kf_meta_guess_lines (sections);
    if (!json_array_size (lines)) {
        json_decref (lines);
        return;
    }
    fputs ("\n## Guesses the sections hold, and the outcomes since that bear on them\n"
           "Each line below is a line of the sections above that calls itself a guess. Beside "
           "it: the version that added it, and the kernels finished since that version was "
           "made whose attempt was handed an idea about what the line is about, or whose code "
           "added it, each with its speedup against its parent's. A guess that these "
           "outcomes refute can be retracted (see \"What to do\"); one they have not tested "
           "stays.\n", f);
    size_t i;
    json_t *g;
    json_array_foreach (lines, i, g) {
        const char *line = kf_jstr (g, "line");
        json_t *by = s_added_by (history, base, line);
        double made = by ? kf_jnum (by, "made_s", 0) : 0;
        fprintf (f, "Guess %zu (%s, ", i + 1, kf_jstr (g, "section"));
        if (by)
            fprintf (f, "added by v%lld", (long long) kf_jint (by, "number"));
        else
            fputs ("in the default sections", f);
        fputs ("): \"", f);
        kf_meta_quote_cut (f, line, KF_META_GUESS_QUOTE);
        fputs ("\"\n", f);
        unsigned bits = kf_meta_guess_features (line);
        char words[KF_PROMPT_FEATURE_WORDS_MAX];
        if (!bits) {
            fputs ("  It names nothing a kernel's idea or code is read as (threads, streaming "
                   "stores, intrinsics, approximate math, blocking, ...): judge it from the "
                   "outcomes listed above.\n", f);
            continue;
        }
        kf_prompt_feature_words (bits, words, sizeof words);
        //  The newest KF_META_GUESS_OUTCOMES that bear on it (OUTCOMES are
        //  oldest first), listed oldest first.
        size_t from, shown = s_bearing (outcomes, made, bits, &from);
        fprintf (f, "  About: %s. ", words);
        if (!shown) {
            fprintf (f, "No outcome shown here finished since %s was handed or added that.\n",
                     by ? "that version was made" : "the run began");
            continue;
        }
        fprintf (f, "Outcomes since %s that bear on it:", by ? "that version was made"
                                                              : "the run began");
        s_bearing_write (f, outcomes, from, made, bits);
        fputs ("\n", f);
    }
    json_decref (lines);
}

json_t *
kf_meta_parse_retractions (const char *text)
{
    json_t *out = json_array ();
    const char *p = text ? text : "", *line, *why;
    size_t len, why_len;
    bool in_block = false;
    long n;
    while ((line = kf_meta_reply_line (&p, &in_block, &len))) {
        if (kf_meta_command (line, len, "retract guess", true, &n, &why, &why_len))
            json_array_append_new (out, json_pack ("{s:I, s:s%}", "guess", (json_int_t) n,
                                                   "text", why, why_len));
    }
    return out;
}

//  Whether WHY names a candidate: "candidate 8", "candidates 8 and 12",
//  "#8".
static bool
s_names_candidate (const char *why)
{
    for (const char *c = why; *c; c++) {
        if (*c == '#' && isdigit ((unsigned char) c[1]))
            return true;
        if (!strncasecmp (c, "candidate", 9)) {
            const char *d = c + 9;
            if (*d == 's' || *d == 'S')
                d++;
            while (*d == ' ')
                d++;
            if (isdigit ((unsigned char) *d))
                return true;
        }
    }
    return false;
}

//  Where LINE stands in TEXT as a whole line, or NULL.
static const char *
s_whole_line (const char *text, const char *line)
{
    size_t len = strlen (line);
    for (const char *h = strstr (text, line); h; h = strstr (h + 1, line))
        if ((h == text || h[-1] == '\n') && (!h[len] || h[len] == '\n' || h[len] == '\r'))
            return h;
    return NULL;
}

json_t *
kf_meta_apply_retractions (json_t *original, json_t *sections, json_t *retractions,
                           int max_edits, json_t *log, int *accepted)
{
    json_t *out = json_deep_copy (sections);
    json_t *lines = kf_meta_guess_lines (original);
    *accepted = 0;
    size_t i;
    json_t *r;
    json_array_foreach (retractions, i, r) {
        json_int_t n = json_integer_value (json_object_get (r, "guess"));
        const char *why = kf_jstr (r, "text");
        json_t *g = n >= 1 ? json_array_get (lines, (size_t) n - 1) : NULL;
        const char *section = g ? kf_jstr (g, "section") : NULL;
        const char *line = g ? kf_jstr (g, "line") : "";
        const char *text = section ? kf_jstr (out, section) : "";
        const char *at = g ? s_whole_line (text, line) : NULL;
        char reason[300] = "", search[40];
        snprintf (search, sizeof search, "guess %lld", (long long) n);
        if (*accepted >= max_edits)
            snprintf (reason, sizeof reason, "too many retractions: at most %d per update",
                      max_edits);
        else if (!g)
            snprintf (reason, sizeof reason, "no guess %lld: the sections hold %zu",
                      (long long) n, json_array_size (lines));
        else if (!*why)
            snprintf (reason, sizeof reason, "a retraction needs its reason after the colon, "
                      "naming the outcomes that refute the guess");
        else if (!s_names_candidate (why))
            snprintf (reason, sizeof reason, "the reason names no outcome: say which "
                      "candidates (\"candidate 8\") refute the guess");
        else if (!at)
            snprintf (reason, sizeof reason, "guess %lld's line was retracted or changed by "
                      "an edit earlier in this reply", (long long) n);
        json_t *entry = json_pack ("{s:s?, s:s, s:s, s:b}", "section", section, "search",
                                   g ? line : search, "replace", "", "accepted", !reason[0]);
        if (reason[0])
            json_object_set_new (entry, "reason", json_string (reason));
        else {
            //  The line and its newline go; the last line takes the
            //  newline before it.
            size_t len = strlen (line);
            const char *after = at + len;
            if (*after == '\r')
                after++;
            if (*after == '\n')
                after++;
            else if (at > text)
                at--;
            json_object_set_new (out, section,
                                 json_pack ("s%+", text, (size_t) (at - text), after));
            char note[400];
            snprintf (note, sizeof note, "retracted: %.360s", why);
            json_object_set_new (entry, "reason", json_string (note));
            (*accepted)++;
        }
        json_array_append_new (log, entry);
    }
    json_decref (lines);
    return out;
}
