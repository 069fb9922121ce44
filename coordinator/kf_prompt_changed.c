/*  kf_prompt_changed.c - what a try changed of its parent's code
 *  (kf_prompt_changed.h).
 */
#include "kf_prompt_changed.h"
#include "kf_json.h"
#include "kf_prompt_class.h"
#include "kf_prompt_diff.h"
#include "kf_str.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

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

const char *
kf_prompt_changed_text (json_t *row, char *buf, size_t size)
{
    if (size)
        buf[0] = '\0';
    if (!json_is_integer (json_object_get (row, "changed"))
        || !json_is_integer (json_object_get (row, "parent_lines")))
        return buf;
    snprintf (buf, size, "changed %lld of its parent's %lld lines (its own has %lld)",
              (long long) kf_jint (row, "changed"), (long long) kf_jint (row, "parent_lines"),
              (long long) kf_jint (row, "lines"));
    return buf;
}

//  Candidate ID's source (caller's), or NULL.
static char *
s_source (kf_db_t *db, int64_t id)
{
    char buf[24];
    void *data = NULL;
    size_t size = 0;
    if (kf_db_fetch_blob (db, "SELECT b.data FROM candidates c JOIN blobs b"
                              " ON b.hash = c.source_hash WHERE c.id = $1::bigint",
                          S_I64 (buf, id), &data, &size) != 0 || !data)
        return NULL;
    char *text = strndup (data, size);
    free (data);
    return text;
}

//  Sets ROW's counts of candidate ID against PARENT_ID, when both
//  sources are there.
static void
s_count (kf_db_t *db, json_t *row, int64_t id, int64_t parent_id)
{
    char *parent = s_source (db, parent_id), *child = parent ? s_source (db, id) : NULL;
    int changed, parent_lines, lines;
    if (kf_prompt_changed_counts (parent, child, &changed, &parent_lines, &lines))
        json_object_update_new (row, json_pack ("{s:i, s:i, s:i}", "changed", changed,
                                                "parent_lines", parent_lines, "lines", lines));
    free (parent);
    free (child);
}

int
kf_prompt_history_changes (kf_db_t *db, json_t *history)
{
    size_t i;
    json_t *c;
    json_array_foreach (history, i, c)
        if (!strcmp (kf_jstr (c, "phase"), "search") && kf_jint (c, "parent_id")
            && json_is_integer (json_object_get (c, "features"))
            && json_is_integer (json_object_get (c, "parent_features"))
            && !kf_prompt_features_added (c))
            s_count (db, c, kf_jint (c, "id"), kf_jint (c, "parent_id"));
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
        char what[KF_PROMPT_FEATURE_WORDS_MAX + 64] = "";
        if (row && json_is_integer (json_object_get (row, "features"))
            && json_is_integer (json_object_get (row, "parent_features"))) {
            char words[KF_PROMPT_FEATURE_WORDS_MAX];
            kf_prompt_feature_words (kf_prompt_features_added (row), words, sizeof words);
            if (*words)
                snprintf (what, sizeof what, "; what its code added to its parent's: %s",
                          words);
            else {
                s_count (db, row, kf_jint (c, "id"), parent_id);
                char counts[120];
                if (*kf_prompt_changed_text (row, counts, sizeof counts))
                    snprintf (what, sizeof what, "; its code added no feature this reading "
                              "knows: it %s", counts);
            }
        }
        json_decref (row);
        if (*what) {
            char *reason = kf_strdupf ("%s%s", kf_jstr (c, "reason"), what);
            if (!reason)
                return -1;
            json_object_set_new (c, "reason", json_string (reason));
            free (reason);
        }
    }
    return 0;
}
