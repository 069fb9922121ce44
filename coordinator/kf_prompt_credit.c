/*  kf_prompt_credit.c - which ideas a try counts for, by what its code
 *  changed of its parent's (kf_prompt_credit.h).
 */
#include "kf_prompt_credit.h"
#include "kf_json.h"
#include "kf_prompt_class.h"
#include <string.h>

#define S_BIT(f) (1u << (f))

unsigned
kf_prompt_idea_terms (const char *idea)
{
    unsigned need = kf_prompt_idea_bits (idea);
    return need | (need & S_BIT (KF_IDEA_APPROX) ? S_BIT (KF_IDEA_ESTIMATE) : 0)
           | (need & S_BIT (KF_IDEA_THREADS) ? S_BIT (KF_IDEA_DYNAMIC) : 0);
}

unsigned
kf_prompt_features_changed (json_t *row, bool *known)
{
    json_t *f = json_object_get (row, "features"), *p = json_object_get (row, "parent_features");
    *known = json_is_integer (f) && (!kf_jint (row, "parent_id") || json_is_integer (p));
    if (!*known)
        return 0;
    unsigned child = (unsigned) json_integer_value (f);
    return kf_jint (row, "parent_id") ? child ^ (unsigned) json_integer_value (p) : child;
}

//  Whether HANDED is IDEA, or IDEA in other words (round 19: one
//  subject, every part of it).
static bool
s_handed (const char *handed, const char *idea)
{
    unsigned need = kf_prompt_idea_bits (idea);
    return handed && idea
           && (!strcmp (handed, idea) || (need && kf_prompt_idea_bits (handed) == need));
}

//  Round 30: whether ROW's code, handed an idea of cheaper math (NEED has
//  the approximation) over a parent that approximates already, writes
//  fewer vector arithmetic calls than its parent's (a polynomial of lower
//  degree: 21 to 17 a vector), both counts kept (selection.arith).
static bool
s_cheaper (json_t *row, unsigned need)
{
    json_t *a = json_object_get (row, "arith"), *pa = json_object_get (row, "parent_arith");
    return (need & S_BIT (KF_IDEA_APPROX)) && json_is_integer (a) && json_is_integer (pa)
           && json_integer_value (a) < json_integer_value (pa);
}

kf_credit_t
kf_prompt_try_credit (json_t *row, const char *handed, const char *idea, bool by_change)
{
    //  A try row keeps what its code added (kf_search_idea_tries); a
    //  history row has the two features it comes from.
    json_t *kept = json_object_get (row, "added");
    unsigned added = json_is_integer (kept) ? (unsigned) json_integer_value (kept)
                                            : kf_prompt_features_added (row);
    bool known, by_code;
    unsigned changed = by_change ? kf_prompt_features_changed (row, &known) : 0;
    unsigned child = (unsigned) kf_jint (row, "features");
    unsigned need = kf_prompt_idea_bits (idea), terms = kf_prompt_idea_terms (idea);
    //  Round 48: an idea of several parts ("combine streaming stores with
    //  threads") was "not tried yet" beside a kernel that added threads to
    //  a parent that streamed: code that does every part, having added one
    //  of them, completed the combination.
    bool completes = (need & (need - 1)) && json_is_integer (json_object_get (row, "features"))
                     && (child & need) == need && (added & need);
    if (!by_change || !known) {
        if (!kf_prompt_try_counts (handed, added, idea, &by_code))
            return completes ? KF_CREDIT_CODE : KF_CREDIT_NONE;
        return by_code ? KF_CREDIT_CODE : KF_CREDIT_HANDED;
    }
    //  Round 35: cheaper math handed with streaming stores (the planner's
    //  pair, kf_search_idea_pair) read "not seen done: the code changed
    //  what other ideas are about", the stores being the pair's: what the
    //  paired idea is about is not another idea's change.
    if (s_handed (handed, idea) && *kf_jstr (row, "with")) {
        unsigned paired = kf_prompt_idea_bits (kf_jstr (row, "with")) & ~need;
        added &= ~paired;
        changed &= ~paired;
    }
    //  Cheaper math by estimates does an approximation idea over a
    //  parent's polynomial (round 17), whatever else the code does.
    unsigned either = terms & ~need & S_BIT (KF_IDEA_ESTIMATE);
    bool split = (need & S_BIT (KF_IDEA_THREADS)) && (child & S_BIT (KF_IDEA_THREADS))
                 && (changed & S_BIT (KF_IDEA_DYNAMIC));
    if (s_handed (handed, idea)) {
        if (!kf_jint (row, "parent_id"))
            return !need || (child & need) == need || (added & either) ? KF_CREDIT_HANDED
                                                                       : KF_CREDIT_NOT_DONE;
        if (!need)
            return added || (changed & S_BIT (KF_IDEA_DYNAMIC)) ? KF_CREDIT_NOT_DONE
                                                                 : KF_CREDIT_HANDED;
        return ((child & need) == need && ((changed & terms) || s_cheaper (row, need)))
                   || (added & either)
                   ? KF_CREDIT_HANDED
                   : KF_CREDIT_NOT_DONE;
    }
    if (kf_prompt_try_counts (handed, added, idea, &by_code) && by_code)
        return KF_CREDIT_CODE;
    return split || completes ? KF_CREDIT_CODE : KF_CREDIT_NONE;
}

bool
kf_prompt_credit_counts (kf_credit_t credit)
{
    return credit == KF_CREDIT_HANDED || credit == KF_CREDIT_CODE;
}
