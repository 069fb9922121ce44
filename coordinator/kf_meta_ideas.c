/*  kf_meta_ideas.c - the idea list as a version holds it, and the
 *  meta-prompter's edits of it (kf_meta_ideas.h). Pure: the versions are
 *  kf_meta.c's.
 */
#include "kf_meta_ideas.h"
#include "kf_meta_edits.h"
#include "kf_json.h"
#include "kf_str.h"
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

//  The version's own list, when it holds a well-formed one.
static json_t *
s_stored (json_t *sections)
{
    json_t *list = json_object_get (sections, KF_META_IDEAS_KEY);
    if (!json_array_size (list))
        return NULL;
    size_t i;
    json_t *e;
    json_array_foreach (list, i, e)
        if (!json_is_string (json_object_get (e, "text")))
            return NULL;
    return list;
}

const char **
kf_meta_ideas (json_t *sections, json_t *spec, kf_target_kind_t kind, size_t *count)
{
    *count = 0;
    json_t *list = s_stored (sections);
    size_t n = 0;
    const char *const *dflt = list ? NULL : kf_prompt_ideas_for (spec, kind, &n);
    if (list)
        n = json_array_size (list);
    const char **out = n ? calloc (n, sizeof *out) : NULL;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        json_t *e = list ? json_array_get (list, i) : NULL;
        if (!list)
            out[(*count)++] = dflt[i];
        else if (!json_object_get (e, "dropped"))
            out[(*count)++] = kf_jstr (e, "text");
    }
    if (!*count) {
        free (out);
        return NULL;
    }
    return out;
}

json_t *
kf_meta_idea_list (json_t *sections, json_t *spec, kf_target_kind_t kind)
{
    json_t *list = s_stored (sections);
    if (list)
        return json_deep_copy (list);
    size_t n = 0;
    const char *const *dflt = kf_prompt_ideas_for (spec, kind, &n);
    json_t *out = json_array ();
    for (size_t i = 0; i < n; i++)
        json_array_append_new (out, json_pack ("{s:s}", "text", dflt[i]));
    return out;
}

json_t *
kf_meta_parse_idea_edits (const char *text)
{
    static const struct { const char *word, *action; } verbs[] = {
        { "drop idea", "drop" }, { "reword idea", "reword" }, { "add idea", "add" } };
    json_t *edits = json_array ();
    const char *p = text ? text : "", *line, *body;
    size_t len, body_len;
    bool in_block = false;
    long n;
    while ((line = kf_meta_reply_line (&p, &in_block, &len))) {
        for (size_t v = 0; v < sizeof verbs / sizeof verbs[0]; v++) {
            //  "ADD IDEA: text" has no number ("ADD IDEA 7: text", a
            //  model numbering the new one, is read the same).
            bool add = !strcmp (verbs[v].action, "add");
            if (!kf_meta_command (line, len, verbs[v].word, !add, &n, &body, &body_len))
                continue;
            //  Round 41: an idea is a clause the prompt goes on from
            //  ("... this task has no bias.. No earlier candidate"): its
            //  closing stops and blanks go.
            while (body_len > 0 && (body[body_len - 1] == '.' || body[body_len - 1] == ' '))
                body_len--;
            json_array_append_new (edits, json_pack ("{s:s, s:I, s:s%}", "action",
                                                     verbs[v].action, "idea", (json_int_t) n,
                                                     "text", body, body_len));
            break;
        }
    }
    return edits;
}

//  Why TEXT cannot be an idea of LIST in place of idea K (REASON, SIZE
//  bytes; empty: it can).
static void
s_check_text (json_t *list, size_t k, const char *text, char *reason, size_t size)
{
    size_t len = strlen (text);
    if (!len) {
        snprintf (reason, size, "%s", k < json_array_size (list)
                                          ? "a reworded idea needs its new text"
                                          : "an added idea needs its text after the colon");
        return;
    }
    if (len > KF_META_IDEA_MAX) {
        snprintf (reason, size, "the new text is %zu bytes (at most %d)", len, KF_META_IDEA_MAX);
        return;
    }
    for (size_t i = 0; i < len; i++)
        if ((unsigned char) text[i] < 0x20 || text[i] == 0x7f) {
            snprintf (reason, size, "the new text holds a control character");
            return;
        }
    if (strstr (text, "<<<kf:") || strstr (text, "<<<<<<<") || strstr (text, ">>>>>>>")) {
        snprintf (reason, size, "the new text holds a section or edit marker");
        return;
    }
    size_t i;
    json_t *e;
    json_array_foreach (list, i, e)
        if (!strcasecmp (kf_jstr (e, "text"), text)) {
            if (i == k)
                snprintf (reason, size, "the new text equals the idea's text");
            else
                snprintf (reason, size, "the new text is idea %zu's (an idea is known by its "
                          "text: two alike would be one)", i + 1);
            return;
        }
}

//  An ADD IDEA line's TEXT: appended to LIST unless refused, and logged
//  in LOG as one with an empty search ("appended"); *ACCEPTED and *ADDS
//  count what this reply applied (round 15: a missing idea could only be
//  had by rewording one that was not wrong).
static void
s_add (json_t *list, const char *text, int max_edits, json_t *log, int *accepted, int *adds)
{
    char reason[300] = "";
    if (*accepted >= max_edits)
        snprintf (reason, sizeof reason, "too many idea edits: at most %d per update",
                  max_edits);
    else if (*adds >= KF_META_IDEA_ADDS)
        snprintf (reason, sizeof reason, "too many added ideas: at most %d per update",
                  KF_META_IDEA_ADDS);
    else if (json_array_size (list) >= KF_META_IDEAS_MAX)
        snprintf (reason, sizeof reason, "the list holds %zu ideas, dropped ones included (at "
                  "most %d): drop or reword one instead", json_array_size (list),
                  KF_META_IDEAS_MAX);
    else
        s_check_text (list, json_array_size (list), text, reason, sizeof reason);
    json_t *entry = json_pack ("{s:s, s:s, s:s, s:b}", "section", KF_META_IDEAS_KEY, "search",
                               "", "replace", text, "accepted", !reason[0]);
    if (reason[0])
        json_object_set_new (entry, "reason", json_string (reason));
    else {
        json_array_append_new (list, json_pack ("{s:s}", "text", text));
        (*accepted)++;
        (*adds)++;
    }
    json_array_append_new (log, entry);
}

json_t *
kf_meta_apply_idea_edits (json_t *list, json_t *edits, int max_edits, json_t *log,
                          int *accepted)
{
    json_t *out = json_deep_copy (list);
    size_t n = json_array_size (out);
    bool *touched = calloc (n + 1, sizeof *touched);
    size_t live = 0;
    size_t i;
    json_t *e;
    json_array_foreach (out, i, e)
        live += !json_object_get (e, "dropped");
    *accepted = 0;
    int adds = 0;
    json_array_foreach (edits, i, e) {
        const char *action = kf_jstr (e, "action"), *text = kf_jstr (e, "text");
        bool drop = !strcmp (action, "drop");
        if (!strcmp (action, "add")) {
            s_add (out, text, max_edits, log, accepted, &adds);
            continue;
        }
        json_int_t number = json_integer_value (json_object_get (e, "idea"));
        json_t *idea = number >= 1 && (size_t) number <= n ? json_array_get (out, number - 1)
                                                           : NULL;
        char reason[300] = "", search[40];
        snprintf (search, sizeof search, "idea %lld", (long long) number);
        if (!touched)
            snprintf (reason, sizeof reason, "out of memory");
        else if (*accepted >= max_edits)
            snprintf (reason, sizeof reason, "too many idea edits: at most %d per update",
                      max_edits);
        else if (!idea)
            snprintf (reason, sizeof reason, "no idea %lld: the list has %zu",
                      (long long) number, n);
        else if (json_object_get (idea, "dropped"))
            snprintf (reason, sizeof reason, "idea %lld is dropped already", (long long) number);
        else if (touched[number - 1])
            snprintf (reason, sizeof reason, "idea %lld was edited earlier in this reply",
                      (long long) number);
        else if (drop && !*text)
            snprintf (reason, sizeof reason, "a dropped idea needs its reason after the colon");
        else if (drop && strlen (text) > KF_META_IDEA_MAX)
            snprintf (reason, sizeof reason, "the reason is %zu bytes (at most %d)",
                      strlen (text), KF_META_IDEA_MAX);
        else if (drop && live <= 1)
            snprintf (reason, sizeof reason, "dropping idea %lld would leave no idea to hand "
                      "out", (long long) number);
        else if (!drop)
            s_check_text (out, (size_t) number - 1, text, reason, sizeof reason);
        const char *old = idea ? kf_jstr (idea, "text") : search;
        char *replace = drop ? kf_strdupf ("dropped: %s", text) : strdup (text);
        json_array_append_new (log, json_pack ("{s:s, s:s, s:s, s:b}", "section",
                                               KF_META_IDEAS_KEY, "search", old, "replace",
                                               replace ? replace : "", "accepted", !reason[0]));
        if (reason[0])
            json_object_set_new (json_array_get (log, json_array_size (log) - 1), "reason",
                                 json_string (reason));
        else {
            touched[number - 1] = true;
            if (drop) {
                json_object_set_new (idea, "dropped", json_string (text));
                live--;
            }
            else {
                //  Round 19: the old words kept, so the tries handed the
                //  idea before are still its (kf_meta_ideas_canon).
                json_t *was = json_object_get (idea, "was");
                if (!json_is_array (was))
                    json_object_set_new (idea, "was", was = json_array ());
                json_array_append_new (was, json_string (kf_jstr (idea, "text")));
                json_object_set_new (idea, "text", json_string (text));
            }
            (*accepted)++;
        }
        free (replace);
    }
    free (touched);
    return out;
}

void
kf_meta_ideas_canon (json_t *sections, json_t *rows)
{
    json_t *list = s_stored (sections);
    size_t i, j, k;
    json_t *e, *w, *r;
    json_array_foreach (list, i, e) {
        json_t *was = json_object_get (e, "was");
        if (!json_array_size (was))
            continue;
        json_array_foreach (rows, j, r) {
            const char *idea = json_string_value (json_object_get (r, "idea"));
            json_array_foreach (was, k, w)
                if (idea && json_is_string (w) && !strcmp (idea, json_string_value (w))) {
                    //  Round 25: the run's other results showed a kernel
                    //  written under v1 with v2's words: the words it was
                    //  handed stay beside the idea's current ones.
                    if (!json_object_get (r, "idea_handed"))
                        json_object_set_new (r, "idea_handed", json_string (idea));
                    json_object_set_new (r, "idea", json_string (kf_jstr (e, "text")));
                    break;
                }
        }
    }
}
