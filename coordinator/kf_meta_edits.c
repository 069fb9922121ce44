/*  kf_meta_edits.c - the meta-prompter's edits (kf_meta_edits.h): the
 *  SEARCH/REPLACE blocks parsed out of its reply, and the checks that let
 *  an edit change one evolvable section and nothing else. Pure: the
 *  versions and the meta job are kf_meta.c's.
 */
#include "kf_meta_edits.h"
#include "kf_meta_quote.h"
#include "kf_meta_claims.h"
#include "kf_meta_code.h"
#include "kf_meta_named.h"
#include "kf_json.h"
#include "kf_meta_prompt.h"
#include "kf_prompt.h"
#include "kf_str.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

//  The longest a section may grow: context the generation prompt pays for
//  on every call.
#define S_SECTION_MAX 6000

const char *
kf_meta_edit_line (const char **p, size_t *len)
{
    if (!**p)
        return NULL;
    const char *line = *p;
    *len = strcspn (line, "\n");
    *p = line + *len + (line[*len] ? 1 : 0);
    //  A CR before the newline is not part of the line.
    if (*len && line[*len - 1] == '\r')
        (*len)--;
    return line;
}

bool
kf_meta_edit_marker (const char *line, size_t len, const char *marker)
{
    //  Markers may carry trailing blanks; anything else on the line is text.
    size_t m = strlen (marker);
    if (len < m || strncmp (line, marker, m) != 0)
        return false;
    for (size_t i = m; i < len; i++)
        if (line[i] != ' ' && line[i] != '\t')
            return false;
    return true;
}

const char *
kf_meta_reply_line (const char **p, bool *in_block, size_t *len)
{
    const char *line;
    while ((line = kf_meta_edit_line (p, len))) {
        if (!*in_block && kf_meta_edit_marker (line, *len, "<<<<<<< SEARCH")) {
            *in_block = true;
            continue;
        }
        if (*in_block) {
            *in_block = !kf_meta_edit_marker (line, *len, ">>>>>>> REPLACE");
            continue;
        }
        const char *end = line + *len;
        while (line < end && strchr ("-*#` \t", *line))
            line++;
        *len = (size_t) (end - line);
        return line;
    }
    return NULL;
}

bool
kf_meta_command (const char *line, size_t len, const char *verb, bool numbered, long *n,
                 const char **text, size_t *text_len)
{
    const char *end = line + len;
    size_t w = strlen (verb);
    if (len <= w || strncasecmp (line, verb, w) || isalpha ((unsigned char) line[w]))
        return false;
    const char *q = line + w;
    while (q < end && (*q == ' ' || *q == '#'))
        q++;
    if (numbered && (q == end || !isdigit ((unsigned char) *q)))
        return false;
    long v = 0;
    while (q < end && isdigit ((unsigned char) *q) && v < 100000)
        v = v * 10 + (*q++ - '0');
    //  "3:", "3**:", "3 -": the text follows the separator.
    while (q < end && strchr ("*` \t", *q))
        q++;
    if (q < end && (*q == ':' || *q == '-'))
        q++;
    while (q < end && strchr ("*` \t", *q))
        q++;
    const char *t = end;
    while (t > q && strchr ("*` \t", t[-1]))
        t--;
    *n = numbered ? v : 0;
    *text = q;
    *text_len = (size_t) (t - q);
    return true;
}

json_t *
kf_meta_parse_edits (const char *text)
{
    json_t *edits = json_array ();
    const char *p = text ? text : "";
    const char *line;
    size_t len;
    char section[64] = "";
    while ((line = kf_meta_edit_line (&p, &len))) {
        //  "SECTION: pitfalls" (also "Section: pitfalls", with markdown
        //  emphasis or a list dash, as models like to write it).
        const char *s = line;
        size_t n = len;
        while (n && strchr ("-*#` \t", *s)) {
            s++;
            n--;
        }
        if (n > 8 && !strncasecmp (s, "section:", 8)) {
            s += 8;
            n -= 8;
            while (n && strchr (" \t*`", *s)) {
                s++;
                n--;
            }
            size_t w = strspn (s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_");
            snprintf (section, sizeof section, "%.*s", (int) (w < n ? w : n), s);
            for (char *c = section; *c; c++)
                *c = (char) (*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
            continue;
        }
        if (!kf_meta_edit_marker (line, len, "<<<<<<< SEARCH"))
            continue;
        //  SEARCH text up to =======, REPLACE text up to >>>>>>> REPLACE.
        const char *search = p, *mid = NULL, *replace = NULL, *end = NULL;
        while ((line = kf_meta_edit_line (&p, &len))) {
            if (!mid && kf_meta_edit_marker (line, len, "=======")) {
                mid = line;
                replace = p;
            }
            else if (mid && kf_meta_edit_marker (line, len, ">>>>>>> REPLACE")) {
                end = line;
                break;
            }
        }
        if (!end)
            break;   //  an unterminated block is no edit
        json_t *edit = json_pack ("{s:s%, s:s%}", "search", search, (size_t) (mid - search),
                                  "replace", replace, (size_t) (end - replace));
        if (edit && *section)
            json_object_set_new (edit, "section", json_string (section));
        if (edit)
            json_array_append_new (edits, edit);
        section[0] = 0;
    }
    return edits;
}

//  Occurrences of NEEDLE in HAY (stops counting at 2).
static int
s_count (const char *hay, const char *needle)
{
    int n = 0;
    size_t len = strlen (needle);
    for (const char *h = strstr (hay, needle); h && n < 2; h = strstr (h + len, needle))
        n++;
    return n;
}

static bool
s_known_section (const char *name)
{
    for (int i = 0; i < KF_PROMPT_SECTIONS; i++)
        if (!strcmp (name, kf_prompt_section_names[i]))
            return true;
    return false;
}

//  Whether TEXT occurs in any of SECTIONS.
static bool
s_in_sections (json_t *sections, const char *text)
{
    for (int i = 0; i < KF_PROMPT_SECTIONS; i++)
        if (strstr (kf_jstr (sections, kf_prompt_section_names[i]), text))
            return true;
    return false;
}

//  Replaces the one occurrence of SEARCH in TEXT (empty SEARCH: appends).
static char *
s_replace (const char *text, const char *search, const char *replace)
{
    if (!*search) {
        size_t n = strlen (text);
        return kf_strdupf ("%s%s%s", text, n && text[n - 1] != '\n' ? "\n" : "", replace);
    }
    const char *hit = strstr (text, search);
    return kf_strdupf ("%.*s%s%s", (int) (hit - text), text, replace, hit + strlen (search));
}

//  Whether the LEN bytes found at HIT in TEXT are whole sentences or
//  lines: they begin at the text's or a line's start (after a list
//  marker), or after a sentence's end (. ! ? ; and a blank), and end at
//  the text's or a line's end, or with a sentence's end. Else REASON
//  (SIZE bytes) says where the search text cuts a sentence. Round 15: a
//  SEARCH that began after "...at the same position, and" spliced
//  "Factual correction: the formula calls atan ..." into that sentence.
static bool
s_whole_sentences (const char *text, const char *hit, size_t len, char *reason, size_t size)
{
    //  The start: back over blanks, then over a list marker ("-", "*")
    //  that opens a line.
    const char *b = hit;
    while (b > text && (b[-1] == ' ' || b[-1] == '\t'))
        b--;
    const char *m = b;
    if (m > text && (m[-1] == '-' || m[-1] == '*'))
        for (m--; m > text && (m[-1] == ' ' || m[-1] == '\t'); m--)
            ;
    bool line_start = b == text || b[-1] == '\n' || m == text || m[-1] == '\n';
    //  After a sentence's end and a blank ("3." of a numbered list too);
    //  a closing bracket or quote may stand after the mark.
    const char *p = b > text && strchr (")\"'", b[-1]) ? b - 1 : b;
    bool after_end = b < hit && p > text && strchr (".!?;", p[-1]);
    //  The end: the text's or a line's, blanks aside, or a sentence's end
    //  with a blank, a newline or nothing after it ("1.38" goes on).
    const char *e = hit + len, *last = e;
    while (last > hit && (last[-1] == ' ' || last[-1] == '\t' || last[-1] == '\n'))
        last--;
    const char *a = e;
    while (*a == ' ' || *a == '\t')
        a++;
    bool line_end = !*a || *a == '\n' || (len && e[-1] == '\n');
    const char *q = last > hit && strchr (")\"'", last[-1]) ? last - 1 : last;
    bool sentence_end = q > hit && strchr (".!?;", q[-1]) && (a > e || last < e);
    if ((line_start || after_end) && (line_end || sentence_end))
        return true;
    if (!(line_start || after_end)) {
        //  Up to 40 bytes before it on its line, from a word's start.
        const char *from = b - (b - text < 40 ? b - text : 40);
        for (const char *c = from; c < b; c++)
            if (*c == '\n')
                from = c + 1;
        if (from > text && from[-1] != ' ' && from[-1] != '\n')
            while (from < b && *from++ != ' ')
                ;
        snprintf (reason, size, "search text starts inside a sentence (after \"%s%.*s\"): "
                  "quote whole sentences or lines, so the new text cannot splice into one",
                  from > text && from[-1] != '\n' ? "..." : "", (int) (b - from), from);
    }
    else {
        int n = (int) strcspn (e, "\n");
        snprintf (reason, size, "search text ends inside a sentence (before \"%.*s%s\"): "
                  "quote whole sentences or lines, so the new text cannot splice into one",
                  n < 40 ? n : 40, e, n > 40 ? "..." : "");
    }
    return false;
}

//  Whether candidate ID is among OUTCOMES with a full-protocol figure;
//  any candidate when OUTCOMES is NULL.
static bool
s_full (json_t *outcomes, long long id)
{
    if (!outcomes)
        return true;
    size_t i;
    json_t *o;
    json_array_foreach (outcomes, i, o)
        if (kf_jint (o, "candidate_id") == id && !strcmp (kf_jstr (o, "fidelity"), "full")
            && json_is_number (json_object_get (o, "speedup")))
            return true;
    return false;
}

//  Whether candidate ID is among OUTCOMES with a screen figure only: a
//  speedup timed by the screen, its full protocol pending or never run.
static bool
s_screen_only (json_t *outcomes, long long id)
{
    size_t i;
    json_t *o;
    json_array_foreach (outcomes, i, o)
        if (kf_jint (o, "candidate_id") == id && json_is_number (json_object_get (o, "speedup"))
            && (!strcmp (kf_jstr (o, "fidelity"), "screen")
                || !strcmp (kf_jstr (o, "fidelity"), "pending")))
            return true;
    return false;
}

//  A screen figure, or a full one that awaits confirmation (round 24).
static bool
s_unsettled (json_t *outcomes, long long id)
{
    return s_screen_only (outcomes, id) || kf_meta_unconfirmed (outcomes, id);
}

//  The distinct full-protocol outcomes of OUTCOMES (NULL: any
//  candidates) that TEXT names.
static int
s_named_full (const char *text, json_t *outcomes)
{
    return kf_meta_named (text, outcomes, s_full, NULL);
}

//  Whether TEXT calls itself a guess (the prompt's other way out).
static bool
s_says_guess (const char *text)
{
    static const char *const words[] = { "guess", "hypothes", "to test", "untested",
                                         "unverified", NULL };
    for (int i = 0; words[i]; i++)
        if (strcasestr (text, words[i]))
            return true;
    return false;
}

//  Whether TEXT is a factual correction (kf_meta_edits.h): it says so and
//  quotes the task (kf_meta_quotes_task). QUOTE (SIZE bytes) gets the
//  quote found.
static bool
s_factual (const char *text, const char *task, char *quote, size_t size)
{
    return task && *task && strcasestr (text, "factual correction")
           && kf_meta_quotes_task (text, task, quote, size);
}

//  Whether the LEN bytes at S hold NEEDLE.
static bool
s_mem_has (const char *s, size_t len, const char *needle)
{
    size_t n = strlen (needle);
    for (size_t i = 0; i + n <= len; i++)
        if (!memcmp (s + i, needle, n))
            return true;
    return false;
}

//  Whether the LEN bytes at S hold WORD as a whole word (any case).
static bool
s_has_word (const char *s, size_t len, const char *word)
{
    size_t w = strlen (word);
    for (size_t i = 0; i + w <= len; i++)
        if (!strncasecmp (s + i, word, w)
            && (i == 0 || !isalpha ((unsigned char) s[i - 1]))
            && (i + w == len || !isalpha ((unsigned char) s[i + w])))
            return true;
    return false;
}

//  Where the sentence at S ends: at a newline, or at . ! ? ; before a
//  blank or the end ("1.38 ms" goes on).
static const char *
s_sentence_end (const char *s)
{
    const char *e = s;
    while (*e && *e != '\n' && !(strchr (".!?;", *e) && (!e[1] || e[1] == ' ' || e[1] == '\n')))
        e++;
    return e;
}

//  Whether the LEN bytes at S hold a measured figure: a number followed
//  by a unit of time, a speedup's "x", a rate or a percentage ("2319 us",
//  "2.1x", "14 GB/s", "27%").
static bool
s_has_figure (const char *s, size_t len)
{
    static const char *const units[] = { "ms", "us", "ns", "\xc2\xb5s", "x", "GB/s",
                                         "GFLOP/s", "%", NULL };
    for (size_t i = 0; i < len; i++) {
        if (!isdigit ((unsigned char) s[i]) || (i && isalnum ((unsigned char) s[i - 1])))
            continue;
        size_t j = i;
        while (j < len && (isdigit ((unsigned char) s[j]) || s[j] == '.' || s[j] == ','))
            j++;
        if (j < len && s[j] == ' ')
            j++;
        for (int k = 0; units[k]; k++) {
            size_t u = strlen (units[k]);
            if (j + u <= len && !strncmp (s + j, units[k], u)
                && (j + u == len || !isalnum ((unsigned char) s[j + u])))
                return true;
        }
        i = j;
    }
    return false;
}

char *
kf_meta_mark_sentences (const char *text, kf_meta_mark_fn mark, void *ctx, int *marked)
{
    *marked = 0;
    char *out = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&out, &size);
    if (!f)
        return NULL;
    const char *s = text;
    while (*s) {
        //  A sentence ends at a newline, or at . ! ? ; before a blank or
        //  the end ("1.38 ms" goes on).
        const char *e = s_sentence_end (s);
        size_t len = (size_t) (e - s);
        const char *cut = e;
        while (cut > s && (cut[-1] == ' ' || cut[-1] == '\t'))
            cut--;
        char buf[256];
        if (mark (s, len, ctx, buf, sizeof buf)) {
            fprintf (f, "%.*s%s%.*s", (int) (cut - s), s, buf, (int) (e - cut), cut);
            (*marked)++;
        }
        else
            fprintf (f, "%.*s", (int) len, s);
        if (*e)
            fputc (*e++, f);
        s = e;
    }
    if (fclose (f) != 0 || !*marked) {
        free (out);
        return NULL;
    }
    return out;
}

typedef struct {
    json_t *outcomes;
    long long who;
} s_screen_ctx_t;

//  KF_META_SCREEN_MARK for a sentence that holds a figure and names a
//  candidate whose figure is a screen timing only.
static bool
s_screen_one (const char *s, size_t len, void *ctx, char *buf, size_t size)
{
    s_screen_ctx_t *c = ctx;
    long long id = 0;
    char *sentence = s_has_figure (s, len) && !s_mem_has (s, len, "screen timing only when")
                             && !s_mem_has (s, len, "awaited confirmation when")
                         ? strndup (s, len) : NULL;
    bool names = sentence && kf_meta_named (sentence, c->outcomes, s_unsettled, &id) > 0;
    free (sentence);
    if (!names)
        return false;
    snprintf (buf, size, s_screen_only (c->outcomes, id) ? KF_META_SCREEN_MARK
                                                         : KF_META_UNCONFIRMED_MARK, id);
    if (!c->who)
        c->who = id;
    return true;
}

//  TEXT with KF_META_SCREEN_MARK after each sentence that names a
//  candidate of OUTCOMES whose figure is a screen timing only and holds a
//  figure, or NULL when none does (or out of memory). *MARKED gets the
//  count, *WHO the first such candidate.
static char *
s_screen_mark (const char *text, json_t *outcomes, int *marked, long long *who)
{
    s_screen_ctx_t c = { .outcomes = outcomes };
    char *out = kf_meta_mark_sentences (text, s_screen_one, &c, marked);
    *who = c.who;
    return out;
}

typedef struct {
    long long top;
    const char *word;
} s_rank_ctx_t;

//  KF_META_RANK_MARK for a sentence that names a candidate with a rank
//  word.
static bool
s_rank_one (const char *s, size_t len, void *ctx, char *buf, size_t size)
{
    static const char *const ranks[] = { "best", "fastest", "slowest", "worst", "quickest",
                                         NULL };
    s_rank_ctx_t *c = ctx;
    const char *rank = NULL;
    for (int k = 0; ranks[k] && !rank; k++)
        if (s_has_word (s, len, ranks[k]))
            rank = ranks[k];
    char *sentence = rank ? strndup (s, len) : NULL;
    bool names = sentence && s_named_full (sentence, NULL) > 0;
    free (sentence);
    if (!names || s_mem_has (s, len, "ranked when written"))
        return false;
    snprintf (buf, size, KF_META_RANK_MARK, c->top);
    if (!c->word)
        c->word = rank;
    return true;
}

//  TEXT with KF_META_RANK_MARK (for TOP) before the end of each sentence
//  that names a candidate with a rank word, or NULL when none does (or
//  out of memory). *MARKED gets the count, *WORD the first word found.
static char *
s_rank_mark (const char *text, long long top, int *marked, const char **word)
{
    s_rank_ctx_t c = { .top = top };
    char *out = kf_meta_mark_sentences (text, s_rank_one, &c, marked);
    *word = c.word;
    return out;
}

json_t *
kf_meta_apply_edits (json_t *sections, json_t *edits, int max_edits, const char *outside,
                     json_t **log)
{
    return kf_meta_apply_edits_ruled (sections, edits, max_edits, outside, NULL, log);
}

json_t *
kf_meta_apply_edits_judged (json_t *sections, json_t *edits, int max_edits,
                            const char *outside, json_t *outcomes, json_t **log)
{
    kf_meta_rules_t rules = { .outcomes = outcomes };
    return kf_meta_apply_edits_ruled (sections, edits, max_edits, outside, &rules, log);
}

json_t *
kf_meta_apply_edits_ruled (json_t *sections, json_t *edits, int max_edits,
                           const char *outside, const kf_meta_rules_t *rules, json_t **log)
{
    json_t *outcomes = rules ? rules->outcomes : NULL;
    const char *task = rules ? rules->task : NULL;
    //  The newest candidate shown: what a rank was made among.
    long long top = 0;
    int full = 0;
    size_t oi;
    json_t *o;
    json_array_foreach (outcomes, oi, o) {
        if (!strcmp (kf_jstr (o, "fidelity"), "full") && json_is_number (json_object_get (o, "speedup")))
            full++;
        if (kf_jint (o, "candidate_id") > top)
            top = (long long) kf_jint (o, "candidate_id");
    }
    json_t *out = json_deep_copy (sections);
    json_t *entries = json_array ();
    int accepted = 0;
    size_t i;
    json_t *e;
    json_array_foreach (edits, i, e) {
        //  A block's text is whole lines; a model that meant part of a
        //  line still gets it, with the last newline off both sides.
        char *search_buf = strdup (kf_jstr (e, "search"));
        char *replace_buf = strdup (kf_jstr (e, "replace"));
        if (!search_buf || !replace_buf) {
            free (search_buf);
            free (replace_buf);
            continue;
        }
        size_t sl = strlen (search_buf), rl = strlen (replace_buf);
        if (sl && search_buf[sl - 1] == '\n' && !s_in_sections (out, search_buf)) {
            search_buf[sl - 1] = 0;
            if (rl && replace_buf[rl - 1] == '\n')
                replace_buf[rl - 1] = 0;
        }
        const char *search = search_buf;
        const char *replace = replace_buf;
        const char *named = kf_jstr (e, "section");
        const char *where = NULL;
        char reason[300] = "";
        if (accepted >= max_edits)
            snprintf (reason, sizeof reason, "too many edits: at most %d per update", max_edits);
        else if (*named && !s_known_section (named))
            snprintf (reason, sizeof reason, "no evolvable section '%.60s'", named);
        else if (strstr (replace, "<<<kf:") || strstr (search, "<<<kf:"))
            snprintf (reason, sizeof reason, "edits a section marker");
        else if (!*search && !*named)
            snprintf (reason, sizeof reason, "empty search text without a section to append to");
        else if (!*search && !*replace)
            snprintf (reason, sizeof reason, "empty edit");
        else if (!strcmp (search, replace))
            snprintf (reason, sizeof reason, "the replacement equals the search text");
        else {
            //  Where the search text is: in exactly one place of one
            //  section (of the named one, when named).
            int hits = 0;
            for (int s = 0; s < KF_PROMPT_SECTIONS; s++) {
                const char *name = kf_prompt_section_names[s];
                if (*named && strcmp (named, name))
                    continue;
                int n = *search ? s_count (kf_jstr (out, name), search) : 1;
                if (n)
                    where = name;
                hits += n;
            }
            if (hits == 0)
                snprintf (reason, sizeof reason, "%s",
                          outside && *search && strstr (outside, search)
                              ? "search text is outside the evolvable sections"
                              : *named ? "search text not found in the named section"
                                       : "search text not found in any section");
            else if (hits > 1)
                snprintf (reason, sizeof reason, "search text is ambiguous: found %s", "more than once");
            else if (*search) {
                const char *in = kf_jstr (out, where);
                s_whole_sentences (in, strstr (in, search), strlen (search), reason,
                                   sizeof reason);
            }
        }
        //  The evidence rules (kf_meta_edits.h): the philosophy from too
        //  few full figures is refused unless it corrects a fact the
        //  task's text shows; a strategy that names too few is kept,
        //  marked as a guess; a rank beside a candidate is kept, marked.
        char *marked = NULL, *ranked = NULL, *screened = NULL, *claimed = NULL;
        char note[400] = "", quote[120] = "";
        int named_full = KF_META_EVIDENCE_MIN;
        if (!reason[0] && outcomes && where && !strcmp (where, "philosophy")
            && full < KF_META_PHILOSOPHY_MIN) {
            if (s_factual (replace, task, quote, sizeof quote))
                snprintf (note, sizeof note, "accepted as a factual correction from %d "
                          "full-protocol outcome%s: it quotes the task's \"%.80s%s\"", full,
                          full == 1 ? "" : "s", quote, strlen (quote) > 80 ? "..." : "");
            else
                snprintf (reason, sizeof reason, "edits the philosophy from %d outcome%s with "
                          "a full-protocol figure (at least %d needed): put the suspicion in "
                          "the analysis questions, or say \"%s\" and quote the task's text "
                          "that shows the error", full, full == 1 ? "" : "s",
                          KF_META_PHILOSOPHY_MIN, KF_META_FACT_WORDS);
        }
        else if (!reason[0] && outcomes && where && *replace && !strcmp (where, "strategies")
                 && !s_says_guess (replace))
            named_full = s_named_full (replace, outcomes);
        int ranks = 0;
        const char *rank = NULL;
        if (!reason[0] && top > 0 && where && *replace
            && (ranked = s_rank_mark (replace, top, &ranks, &rank)))
            replace = ranked;
        int screens = 0;
        long long screen_id = 0;
        if (!reason[0] && outcomes && where && *replace
            && (screened = s_screen_mark (replace, outcomes, &screens, &screen_id)))
            replace = screened;
        int claims = 0;
        char fn[32] = "";
        if (!reason[0] && where && *replace && (claimed = kf_meta_claims_mark (replace, &claims,
                                                                               fn, sizeof fn)))
            replace = claimed;
        if (named_full < KF_META_EVIDENCE_MIN) {
            size_t rl2 = strlen (replace);
            bool nl = rl2 && replace[rl2 - 1] == '\n';
            marked = kf_strdupf ("%.*s%s%s", (int) (rl2 - (nl ? 1 : 0)), replace,
                                 KF_META_GUESS_MARK, nl ? "\n" : "");
            if (marked)
                replace = marked;
            snprintf (note, sizeof note, "accepted, marked as a guess to test: names %d "
                      "full-protocol outcome%s (at least %d)", named_full,
                      named_full == 1 ? "" : "s", KF_META_EVIDENCE_MIN);
        }
        if (ranks) {
            size_t nl = strlen (note);
            snprintf (note + nl, sizeof note - nl, "%saccepted, %d sentence%s marked as ranked "
                      "when written: \"%s\" beside a candidate goes stale when a later kernel "
                      "passes it", nl ? "; " : "", ranks, ranks == 1 ? "" : "s", rank);
        }
        if (screens) {
            size_t nl = strlen (note);
            snprintf (note + nl, sizeof note - nl, "%saccepted, %d sentence%s marked: a figure "
                      "beside candidate %lld, whose figure in this run is a screen timing only "
                      "or awaits confirmation (cite figures that count)", nl ? "; " : "", screens,
                      screens == 1 ? "" : "s", screen_id);
        }
        if (claims) {
            size_t nl = strlen (note);
            snprintf (note + nl, sizeof note - nl, "%saccepted, %d sentence%s marked: says %s "
                      "vectorises, which this run's compiler does not do", nl ? "; " : "",
                      claims, claims == 1 ? "" : "s", fn);
        }
        if (!reason[0]) {
            char *text = s_replace (kf_jstr (out, where), search, replace);
            if (!text)
                snprintf (reason, sizeof reason, "out of memory");
            else if (strlen (text) > S_SECTION_MAX)
                snprintf (reason, sizeof reason, "the section would grow past %d bytes",
                          S_SECTION_MAX);
            else {
                json_object_set_new (out, where, json_string (text));
                accepted++;
            }
            free (text);
        }
        json_t *entry = json_pack ("{s:s?, s:s, s:s, s:b}", "section",
                                   where ? where : *named ? named : NULL, "search", search,
                                   "replace", replace, "accepted", !reason[0]);
        if (reason[0] || note[0])
            json_object_set_new (entry, "reason", json_string (reason[0] ? reason : note));
        json_array_append_new (entries, entry);
        free (marked);
        free (ranked);
        free (screened);
        free (claimed);
        free (search_buf);
        free (replace_buf);
    }
    *log = entries;
    return out;
}
