/*  kf_prompt_siblings.c - what this attempt's prompt knows of its
 *  generation's siblings: where each starts and which idea it leans
 *  towards (kf_prompt_siblings.h). Moved out of kf_prompt_history.c,
 *  which had reached 800 lines.
 */
#include "kf_prompt_siblings.h"
#include "kf_json.h"
#include <string.h>

//  Which kernel each sibling starts from, as far as the plan knows: the
//  siblings planned before this attempt have their parents; the later
//  ones draw theirs when they are planned.
void
kf_prompt_sibling_parents (FILE *f, const kf_prompt_in_t *in)
{
    if (!in->siblings) {
        fputs (" Each attempt of this generation draws its own kernel to improve from the "
               "archive's cells, so a sibling may start from this same kernel or from "
               "another.", f);
        return;
    }
    int64_t mine = kf_jint (in->base, "id");
    int later = 0, told = 0;
    for (int k = 0; k < in->population; k++) {
        if (k == in->slot)
            continue;
        json_t *row = NULL, *r;
        size_t i;
        json_array_foreach (in->siblings, i, r)
            if (kf_jint (r, "slot") == k)
                row = r;
        if (!row) {
            later++;
            continue;
        }
        int64_t p = kf_jint (row, "parent_id");
        fprintf (f, "%s attempt %d ", told++ ? ";" : " Where the siblings start:", k + 1);
        if (!p)
            fputs ("writes its kernel from scratch", f);
        else if (p == mine)
            fprintf (f, "starts from candidate %lld, the same kernel as this attempt",
                     (long long) p);
        else
            fprintf (f, "starts from candidate %lld", (long long) p);
    }
    if (told)
        fputs (".", f);
    if (later)
        fprintf (f, " %s planned after this one and draw%s %s kernel to improve from the "
                 "archive's cells when %s, possibly this same kernel.",
                 later == 1 ? "One sibling is" : "The other siblings are",
                 later == 1 ? "s" : "", later == 1 ? "its" : "their",
                 later == 1 ? "it is" : "they are");
    if (told || later)
        fputs (" Siblings that share a kernel to improve still follow different ideas.", f);
}

//  Sibling slot K's row among the candidates planned so far; NULL when
//  K is planned later.
json_t *
kf_prompt_sibling_planned (const kf_prompt_in_t *in, int k)
{
    size_t i;
    json_t *r;
    json_array_foreach (in->siblings, i, r)
        if (kf_jint (r, "slot") == k)
            return r;
    return NULL;
}

//  Round 17: the plan's prediction for later sibling slot K
//  (kf_search_idea_later), or NULL.
json_t *
kf_prompt_sibling_later (const kf_prompt_in_t *in, int k)
{
    size_t i;
    json_t *r;
    json_array_foreach (json_object_get (in->ideas, "later"), i, r)
        if (kf_jint (r, "slot") == k && json_is_string (json_object_get (r, "idea")))
            return r;
    return NULL;
}

//  The idea sibling slot K leans towards: as planned (stored with it),
//  else as the plan predicts it (round 17: by the slot's place in the
//  order, three prompts of one generation named three sets of
//  siblings), else its place in the run's order of ideas (IN->ideas),
//  else its slot's place.
const char *
kf_prompt_sibling_idea (const kf_prompt_in_t *in, const char *const *ideas, size_t n, int k)
{
    json_t *r = kf_prompt_sibling_planned (in, k);
    if (json_is_string (json_object_get (r, "idea")))
        return json_string_value (json_object_get (r, "idea"));
    if ((r = kf_prompt_sibling_later (in, k)))
        return kf_jstr (r, "idea");
    json_t *order = json_object_get (in->ideas, "order");
    if (json_array_size (order))
        return json_string_value (json_array_get (order, (size_t) k % json_array_size (order)));
    return ideas[((size_t) in->generation * (size_t) in->population + (size_t) k) % n];
}
