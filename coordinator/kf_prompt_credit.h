/*  kf_prompt_credit.h - which ideas a try counts for, by what its code
 *  changed of its parent's.
 *
 *  Round 24: candidate 7 was handed an exact identity that shares calls
 *  (celu makes one exp an element: nothing to share), changed only how
 *  its threads split the rows (fixed halves to chunks from a shared
 *  counter), and its try was credited to the identity: the next prompt
 *  handed that idea again as "tried: inconclusive (13.65x vs parent
 *  9.30x)". Since round 14 a try also counted for every idea whose
 *  features its code added; the idea it was handed it counted for
 *  whatever the code did.
 *
 *  Now, where the try's features and its parent's are known (the bits
 *  kept with the plan, kf_prompt_source_features), a try counts for the
 *  idea it was handed only where its code shows that idea's features and
 *  changed something among them; else it is "handed, not done", neither
 *  a win nor a loss of the idea. A handed idea no feature shows (an
 *  identity, fewer instructions) keeps its try unless the code changed
 *  what other ideas are about, which then take the try. The run's
 *  `idea_credit` setting (docs/search.md) turns this off for ablation:
 *  a try then counts for the idea handed whatever its code did, as
 *  before.
 */
#ifndef KF_PROMPT_CREDIT_H
#define KF_PROMPT_CREDIT_H

#include <jansson.h>
#include <stdbool.h>

typedef enum {
    KF_CREDIT_NONE,      /* the try says nothing of the idea */
    KF_CREDIT_HANDED,    /* handed the idea (or it in other words), and its code did
                            it, or what its code did is not known */
    KF_CREDIT_CODE,      /* handed another idea; its code did this one */
    KF_CREDIT_NOT_DONE   /* handed the idea; its code shows no change of it (a
                            feature idea), or changed only what other ideas are
                            about (one no feature shows) */
} kf_credit_t;

/* The features a try of IDEA may change in doing it: its own bits
 * (kf_prompt_idea_bits), with cheaper math by estimates for an
 * approximation (round 17) and how the threads split the work for
 * threads (round 24); 0 for an idea no feature shows. */
unsigned kf_prompt_idea_terms (const char *idea);

/* What ROW's code changed of its parent's, as bits ({features,
 * parent_features, parent_id}: every feature of one written from
 * scratch); *KNOWN false (and 0) where either is not known. */
unsigned kf_prompt_features_changed (json_t *row, bool *known);

/* How the try ROW ({features, parent_features, parent_id}, as above;
 * "added", where it has it, for what its code added),
 * handed HANDED (may be NULL), counts for IDEA. BY_CHANGE false, or its
 * code or its parent's not known (a try not written yet): as
 * kf_prompt_try_counts, by the idea handed and by what its code added.
 * Else by what its code changed: HANDED where its code does every
 * feature of IDEA and changed one of IDEA's terms (or, round 30, for an
 * approximation writes fewer vector arithmetic calls than its parent's:
 * ROW's arith and parent_arith, kf_prompt_source_arith), or where it was
 * written from scratch, or IDEA is one no feature shows and its code
 * added nothing another idea is about; CODE for another idea handed
 * where its code added all of IDEA's features (kf_prompt_try_counts) or,
 * for threads, changed how its threads split the work; NOT_DONE for the
 * rest of the tries handed IDEA. What ROW's "with", the idea it was
 * handed with (kf_search_idea_pair), is about counts as neither added
 * nor changed for the idea handed. */
kf_credit_t kf_prompt_try_credit (json_t *row, const char *handed, const char *idea,
                                  bool by_change);

/* Whether CREDIT counts the try for the idea (HANDED or CODE). */
bool kf_prompt_credit_counts (kf_credit_t credit);

#endif
