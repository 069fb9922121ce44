/*  kf_prompt_hints.c - the generation prompt's "Hints from the search so
 *  far" (kf_prompt_hints.h): the gradient's sentences in the target's
 *  words, less a hint on too few moves to tell from the timing noise and
 *  a hint towards an idea the planner's list sets aside in the same
 *  prompt (round 17: "consider cache blocking", over 2 moves one of which
 *  lost, beside "Set aside ... cache blocking ... lost").
 */
#include "kf_prompt_hints.h"
#include "kf_json.h"
#include <stdlib.h>
#include <string.h>

//  The N of the first "PREFIX N NOUN" in LINE, or -1.
static int
s_count (const char *line, const char *prefix, const char *noun)
{
    for (const char *p = strstr (line, prefix); p; p = strstr (p + 1, prefix)) {
        int count, used = 0;
        if (sscanf (p + strlen (prefix), "%d %n", &count, &used) == 1 && used
            && !strncmp (p + strlen (prefix) + used, noun, strlen (noun)))
            return count;
    }
    return -1;
}

int
kf_prompt_hint_moves (const char *line)
{
    //  "over N moves" (the gradient's lean) before "of N attempts",
    //  which the same line's risk clause also gives.
    int moves = line ? s_count (line, "over ", "moves") : -1;
    if (line && moves < 0)
        moves = s_count (line, " of ", "moves");
    if (line && moves < 0)
        moves = s_count (line, " of ", "attempts");
    return moves;
}

//  The feature a level's words name: the gradient's levels on the host
//  and on a GPU (kf_gradient.c), in the words kf_prompt_hints_for_target
//  gives them, the finer first. SIMD-vectorised loads are no idea's: a
//  compiler-vectorised loop has them as much as intrinsics do.
static kf_idea_feature_t
s_level_feature (const char *words, size_t len)
{
    static const struct { const char *word; kf_idea_feature_t f; } map[] = {
        { "register blocks inside cache blocks", KF_IDEA_MICRO },
        { "register tiles", KF_IDEA_MICRO }, { "FMA micro-kernels", KF_IDEA_MICRO },
        { "cache blocking", KF_IDEA_BLOCK }, { "loops blocked", KF_IDEA_BLOCK },
        { "shared/local", KF_IDEA_BLOCK }, { "several threads", KF_IDEA_THREADS },
        { "into a single pass", KF_IDEA_FUSED_ROW }, { "fused into one pass", KF_IDEA_FUSED_ROW },
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        const char *at = strstr (words, map[i].word);
        if (at && (size_t) (at - words) + strlen (map[i].word) <= len)
            return map[i].f;
    }
    return KF_IDEA_OTHER;
}

kf_idea_feature_t
kf_prompt_hint_feature (const char *line)
{
    const char *at = line ? strstr (line, "consider ") : NULL;
    if (at) {
        at += strlen ("consider ");
        const char *end = strstr (at, ", one step");
        return s_level_feature (at, end ? (size_t) (end - at) : strlen (at));
    }
    //  A record that paid: "Going from A to B (dimension) raised fitness
    //  in K of N moves"; one that "only" did advises nothing.
    at = line ? strstr (line, "Going from ") : NULL;
    const char *raised = at ? strstr (at, " raised fitness in ") : NULL;
    if (!raised || !strncmp (raised + strlen (" raised fitness in "), "only ", 5))
        return KF_IDEA_OTHER;
    const char *to = strstr (at, " to ");
    const char *end = to ? strstr (to, " (") : NULL;
    if (!to || !end || end > raised)
        return KF_IDEA_OTHER;
    return s_level_feature (to + 4, (size_t) (end - to - 4));
}

//  Whether the plan sets aside an idea about feature F (IN->ideas'
//  aside list).
static bool
s_aside (const kf_prompt_in_t *in, kf_idea_feature_t f)
{
    size_t i;
    json_t *a;
    json_array_foreach (json_object_get (in->ideas, "aside"), i, a)
        if (f != KF_IDEA_OTHER && kf_prompt_idea_feature (json_string_value (a)) == f)
            return true;
    return false;
}

void
kf_prompt_hints_section (FILE *f, const kf_prompt_in_t *in, kf_target_kind_t kind)
{
    //  Round 14: a tuning request keeps its parent's structure, and the
    //  hints (moves along the archive's coordinates) are structural.
    if (!in->hints || !*in->hints || in->templated)
        return;
    char *hints = kf_prompt_hints_for_target (in->hints, kind);
    char *kept = NULL;
    size_t size = 0;
    FILE *k = hints ? open_memstream (&kept, &size) : NULL;
    if (!k) {
        free (hints);
        return;
    }
    int thin = 0;
    unsigned against = 0;
    for (char *line = hints, *next; line && *line; line = next) {
        next = strchr (line, '\n');
        if (next)
            *next++ = '\0';
        int moves = kf_prompt_hint_moves (line);
        kf_idea_feature_t feat = kf_prompt_hint_feature (line);
        if (moves >= 0 && moves < KF_PROMPT_HINT_MOVES)
            thin++;
        else if (s_aside (in, feat))
            against |= 1u << feat;
        else if (*line)
            fprintf (k, "%s\n", line);
    }
    free (hints);
    if (fclose (k) || !size) {
        free (kept);
        return;
    }
    fprintf (f, "\n## Hints from the search so far\n(From the measured moves of parents to "
             "children along the archive's coordinates; \"fitness\" is 0 for a kernel that "
             "does not compile, 0.1 for a wrong one and 0.5 + 0.5 s/(1 + s) for a correct one "
             "at speedup s, so at high speedups it hardly moves: the records give the "
             "children's speedups against their parents', and moves within 3%% of their "
             "parents' are not quoted.)\n%s", kept);
    free (kept);
    if (thin)
        fprintf (f, "(Left out: %d hint%s resting on fewer than %d judged moves, too few to "
                 "tell a trend from the timing noise.)\n", thin, thin == 1 ? "" : "s",
                 KF_PROMPT_HINT_MOVES);
    if (against) {
        char words[KF_PROMPT_FEATURE_WORDS_MAX];
        fprintf (f, "(Left out: a hint towards %s, an idea the list under \"This attempt\" "
                 "sets aside, since its tries in this run did not win.)\n",
                 kf_prompt_feature_words (against, words, sizeof words));
    }
}
