/*  kf_prompt_changed.c - what a try changed of its parent's code
 *  (kf_prompt_changed.h).
 */
#include "kf_prompt_changed.h"
#include "kf_json.h"
#include "kf_prompt.h"
#include "kf_prompt_class.h"
#include "kf_prompt_diff.h"
#include "kf_meta_prompt.h"
#include "kf_descriptor_text.h"
#include "kf_str.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

//  TEXT's lines as kf_prompt_diff counts them: a last line without '\n'
//  counts.
static int
s_lines (const char *text)
{
    int n = 0;
    const char *p = text;
    for (; *p; p++)
        n += *p == '\n';
    return n + (p > text && p[-1] != '\n');
}

bool
kf_prompt_changed_counts (const char *parent, const char *child, int *changed,
                          int *parent_lines, int *lines)
{
    *changed = *parent_lines = *lines = 0;
    if (!parent || !child)
        return false;
    int a = s_lines (parent), b = s_lines (child);
    if (a > KF_PROMPT_DIFF_MAX_LINES || b > KF_PROMPT_DIFF_MAX_LINES)
        return false;
    //  Share 0: the counts whatever the two have in common.
    int common = 0, b_lines = 0;
    char *diff = kf_prompt_diff (parent, child, 0.0, &common, &b_lines);
    bool same = !diff && a == b && common == b && b_lines == b;
    if (!diff && !same)
        return false;    //  out of memory, or an empty source
    free (diff);
    *parent_lines = a;
    *lines = b;
    *changed = a - common;
    return true;
}

//  Round 21: a try that took its parent's divide out (an rcp estimate
//  and a Newton step in its place, 49 operations a vector down to 33)
//  read "added no feature this reading knows: it changed 56 of its
//  parent's 120 lines"; the kinds of vector operation its code writes,
//  counted as written (a call in a loop counts once), say what moved.
enum { S_OP_FMA, S_OP_MUL, S_OP_ADD, S_OP_DIV, S_OP_SQRT, S_OP_EST, S_OP_MINMAX,
       S_OP_ROUND, S_OP_SHUFFLE, S_OP_BITS, S_OP_BCAST, S_OP_STREAM, S_OP_KINDS };

static const char *const s_op_words[S_OP_KINDS] = {
    "FMAs", "multiplies", "adds", "divides", "square roots", "rcp/rsqrt estimates",
    "min/max", "roundings and conversions", "shuffles, permutes and blends",
    "bit operations and shifts", "broadcasts", "streaming stores",
};

//  The kind of the intrinsic whose name (after _mm, _mm256_ or _mm512_)
//  starts at NAME, or -1.
static int
s_op_kind (const char *name, size_t len)
{
    static const struct {
        const char *prefix;
        int kind;
    } kinds[] = {
        { "fmadd", S_OP_FMA }, { "fmsub", S_OP_FMA }, { "fnmadd", S_OP_FMA },
        { "fnmsub", S_OP_FMA }, { "mul", S_OP_MUL }, { "add", S_OP_ADD }, { "sub", S_OP_ADD },
        { "div", S_OP_DIV }, { "sqrt", S_OP_SQRT }, { "rcp", S_OP_EST }, { "rsqrt", S_OP_EST },
        { "min", S_OP_MINMAX }, { "max", S_OP_MINMAX }, { "round", S_OP_ROUND },
        { "floor", S_OP_ROUND }, { "ceil", S_OP_ROUND }, { "cvt", S_OP_ROUND },
        { "permute", S_OP_SHUFFLE }, { "shuffle", S_OP_SHUFFLE }, { "unpack", S_OP_SHUFFLE },
        { "blend", S_OP_SHUFFLE }, { "and", S_OP_BITS }, { "or", S_OP_BITS },
        { "xor", S_OP_BITS }, { "sll", S_OP_BITS }, { "srl", S_OP_BITS }, { "sra", S_OP_BITS },
        { "broadcast", S_OP_BCAST }, { "set1", S_OP_BCAST }, { "stream", S_OP_STREAM },
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t n = strlen (kinds[i].prefix);
        if (len >= n && !strncmp (name, kinds[i].prefix, n))
            return kinds[i].kind;
    }
    return -1;
}

//  SOURCE's vector operations by kind into COUNT (comments and #if 0
//  blocks not read). False without memory.
static bool
s_op_counts (const char *source, int count[S_OP_KINDS])
{
    memset (count, 0, S_OP_KINDS * sizeof *count);
    char *t = strdup (source);
    if (!t)
        return false;
    kf_descriptor_strip_text (t, false);
    kf_descriptor_blank_if0 (t);
    for (const char *p = strstr (t, "_mm"); p; p = strstr (p + 3, "_mm")) {
        if (p > t && (isalnum ((unsigned char) p[-1]) || p[-1] == '_'))
            continue;
        const char *q = p + 3;
        while (isdigit ((unsigned char) *q))
            q++;
        if (*q != '_')
            continue;
        const char *name = ++q;
        while (isalnum ((unsigned char) *q) || *q == '_')
            q++;
        int kind = s_op_kind (name, (size_t) (q - name));
        if (kind >= 0)
            count[kind]++;
    }
    free (t);
    return true;
}

int
kf_prompt_source_arith (const char *source)
{
    int count[S_OP_KINDS];
    if (!source || !s_op_counts (source, count))
        return -1;
    return count[S_OP_FMA] + count[S_OP_MUL] + count[S_OP_ADD] + count[S_OP_DIV]
           + count[S_OP_SQRT] + count[S_OP_EST];
}

const char *
kf_prompt_changed_ops (const char *parent, const char *child, char *buf, size_t size)
{
    if (size)
        buf[0] = '\0';
    int a[S_OP_KINDS], b[S_OP_KINDS];
    if (!parent || !child || !s_op_counts (parent, a) || !s_op_counts (child, b))
        return buf;
    size_t used = 0;
    for (int k = 0; k < S_OP_KINDS && used < size; k++)
        if (a[k] != b[k]) {
            int n = snprintf (buf + used, size - used, "%s%s %d to %d", used ? ", " : "",
                              s_op_words[k], a[k], b[k]);
            if (n < 0 || (size_t) n >= size - used) {
                buf[used] = '\0';    //  whole kinds only
                break;
            }
            used += (size_t) n;
        }
    return buf;
}

const char *
kf_prompt_changed_text (json_t *row, char *buf, size_t size)
{
    if (size)
        buf[0] = '\0';
    if (!json_is_integer (json_object_get (row, "changed"))
        || !json_is_integer (json_object_get (row, "parent_lines")))
        return buf;
    const char *ops = kf_jstr (row, "ops");
    //  Round 27: "changed 1 of its parent's 145 lines (its own has 199)"
    //  of a try that wrote a new function of 54 lines read as a try that
    //  did next to nothing; the lines it wrote beside the parent's count.
    long long changed = kf_jint (row, "changed"), parent_lines = kf_jint (row, "parent_lines");
    long long lines = kf_jint (row, "lines"), added = lines - (parent_lines - changed);
    char wrote[64] = "";
    if (added > changed)
        snprintf (wrote, sizeof wrote, " and wrote %lld lines new", added - changed);
    snprintf (buf, size, "changed %lld of its parent's %lld lines%s (its own has %lld)%s%s",
              changed, parent_lines, wrote, lines,
              //  Round 41: "FMAs 22 to 14" of a tile grown from 4 x 4 to 4 x
              //  6 read as fewer FMAs: the count is of the text.
              *ops ? "; the vector operations its code writes, by kind (each call once, as "
                     "written, not as it runs: a call in a loop or a macro counts once): "
                   : "",
              ops);
    return buf;
}

//  LINE (LEN bytes) past its comment opener and spaces, when it starts
//  with "change:" in any case; NULL otherwise.
static const char *
s_said_start (const char *line, size_t len)
{
    const char *p = line, *end = line + len;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (end - p < 2 || p[0] != '/' || (p[1] != '/' && p[1] != '*'))
        return NULL;
    p += 2;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '*' || *p == '/'))
        p++;
    if (end - p < 7 || strncasecmp (p, "change:", 7))
        return NULL;
    return p + 7;
}

const char *
kf_prompt_changed_said (const char *source, char *buf, size_t size)
{
    if (!size)
        return buf;
    buf[0] = '\0';
    if (!source)
        return buf;
    const char *line = source, *from = NULL, *end = NULL;
    for (int n = 0; n < KF_PROMPT_SAID_LINES && *line && !from; n++) {
        const char *nl = strchr (line, '\n');
        end = nl ? nl : line + strlen (line);
        from = s_said_start (line, (size_t) (end - line));
        line = nl ? nl + 1 : end;
    }
    if (!from)
        return buf;
    //  A block comment's close, and what follows it, are not said.
    for (const char *q = from; q + 1 < end; q++)
        if (q[0] == '*' && q[1] == '/') {
            end = q;
            break;
        }
    char clean[KF_PROMPT_SAID_MAX * 2 + 8];
    size_t n = 0, cap = size - 1 < KF_PROMPT_SAID_MAX ? size - 1 : KF_PROMPT_SAID_MAX;
    int angles = 0;
    char last_angle = 0;
    for (const char *q = from; q < end && n < sizeof clean - 1; q++) {
        unsigned char ch = (unsigned char) *q;
        if (ch >= 0x80 && ch < 0xc0)
            continue;    //  a character's continuation: its lead said '?'
        char out = ch >= 0xc0 ? '?' : (ch < 0x20 || ch == 0x7f) ? ' ' : (char) ch;
        if (out == '<' || out == '>') {
            angles = out == last_angle ? angles + 1 : 1;
            last_angle = out;
            if (angles > 2)
                continue;
        }
        else
            angles = 0, last_angle = 0;
        if (out == ' ' && (n == 0 || clean[n - 1] == ' '))
            continue;
        clean[n++] = out;
    }
    while (n && clean[n - 1] == ' ')
        n--;
    clean[n] = '\0';
    //  Too long: whole words within CAP less the "..." (kf_meta_word_cut).
    int keep = n <= cap ? (int) n : kf_meta_word_cut (clean, (int) n, cap >= 3 ? (int) cap - 3 : 0);
    snprintf (buf, size, "%.*s%s", keep, clean, (size_t) keep < n ? "..." : "");
    return buf;
}

const char *
kf_prompt_said_text (json_t *row, char *buf, size_t size)
{
    const char *said = kf_jstr (row, "said");
    snprintf (buf, size, *said ? "; its author's words for it: \"%s\"" : "%s", said);
    return buf;
}

//  Sets ROW's counts of candidate CHILD_ID's code against PARENT_ID's,
//  when both sources are there.
static void
s_count (kf_db_t *db, json_t *row, int64_t child_id, int64_t parent_id)
{
    char *child = kf_prompt_source_of (db, child_id);
    char *parent = child ? kf_prompt_source_of (db, parent_id) : NULL;
    int changed, parent_lines, lines;
    char ops[KF_PROMPT_CHANGED_OPS_MAX];
    if (kf_prompt_changed_counts (parent, child, &changed, &parent_lines, &lines))
        json_object_update_new (row, json_pack ("{s:i, s:i, s:i, s:s}", "changed", changed,
                                                "parent_lines", parent_lines, "lines", lines,
                                                "ops", kf_prompt_changed_ops (parent, child, ops,
                                                                              sizeof ops)));
    free (parent);
    free (child);
}

int
kf_prompt_history_changes (kf_db_t *db, json_t *history)
{
    size_t i;
    json_t *c;
    json_array_foreach (history, i, c) {
        if (strcmp (kf_jstr (c, "phase"), "search"))
            continue;
        if (kf_jint (c, "parent_id") && json_is_integer (json_object_get (c, "features"))
            && json_is_integer (json_object_get (c, "parent_features"))
            && !kf_prompt_features_added (c))
            s_count (db, c, kf_jint (c, "id"), kf_jint (c, "parent_id"));
    }
    return 0;
}

int
kf_prompt_children_changes (kf_db_t *db, json_t *children, int64_t parent_id)
{
    size_t i;
    json_t *c;
    json_array_foreach (children, i, c) {
        bool failed = false;
        json_t *row = kf_db_row_id (db,
                                    "SELECT c.parent_id, (c.selection->>'features')::bigint"
                                    " AS features, (p.selection->>'features')::bigint"
                                    " AS parent_features FROM candidates c"
                                    " JOIN candidates p ON p.id = c.parent_id WHERE c.id = $1",
                                    kf_jint (c, "id"), &failed);
        if (failed)
            return -1;
        kf_json_drop_nulls (row);
        char what[KF_PROMPT_FEATURE_WORDS_MAX + KF_PROMPT_CHANGED_TEXT_MAX + 64] = "";
        if (row && json_is_integer (json_object_get (row, "features"))
            && json_is_integer (json_object_get (row, "parent_features"))) {
            char words[KF_PROMPT_FEATURE_WORDS_MAX];
            kf_prompt_feature_words (kf_prompt_features_added (row), words, sizeof words);
            if (*words)
                snprintf (what, sizeof what, "; what its code added to its parent's: %s",
                          words);
            else {
                s_count (db, row, kf_jint (c, "id"), parent_id);
                char counts[KF_PROMPT_CHANGED_TEXT_MAX];
                if (*kf_prompt_changed_text (row, counts, sizeof counts))
                    snprintf (what, sizeof what, "; its code added no feature this reading "
                              "knows: it %s", counts);
            }
        }
        json_decref (row);
        char said[KF_PROMPT_SAID_TEXT_MAX];
        kf_prompt_said_text (c, said, sizeof said);
        if (*what || *said) {
            char *reason = kf_strdupf ("%s%s%s", kf_jstr (c, "reason"), what, said);
            if (!reason)
                return -1;
            json_object_set_new (c, "reason", json_string (reason));
            free (reason);
        }
    }
    return 0;
}
