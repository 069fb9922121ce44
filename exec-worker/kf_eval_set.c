/*  kf_eval_set.c - one set of the correctness pass, written once above
 *  the backends' steps (kf_eval_set.h).
 *
 *  The order of the checks is the verdict's: a crash (or the harness
 *  failing) ends the set at once; then inputs and canaries, which a
 *  kernel that also returned non-zero may have broken (the stronger
 *  finding); then its non-zero return; then the outputs. The set counts
 *  once the candidate's call came back, whatever it found.
 */
#include "kf_eval_set.h"

int
kf_eval_set_run (const kf_eval_set_t *s, int set, const char *when)
{
    const kf_eval_set_ops_t *ops = s->ops;
    double t = kf_eval_now (), t0;
    int st = ops->inputs (ops->arg, set);
    if (st)
        return st;
    t0 = kf_eval_now ();
    kf_eval_split_add (KF_EVAL_S_INPUTS, t0 - t);
    t = t0;
    if (!s->exported) {
        if ((st = ops->ref_stage (ops->arg)))
            return st;
        t0 = kf_eval_now ();
        kf_eval_split_add (KF_EVAL_S_COPIES, t0 - t);
        int r = ops->ref_call (ops->arg, when);
        t = kf_eval_now ();
        kf_eval_split_add (KF_EVAL_S_CALLS, t - t0);
        *s->ref_s += t - t0;
        (*s->ref_calls)++;
        if (s->count_warm)
            kf_eval_warm_count (s->warm, true, t0);
        if (r)
            return r;
        if (ops->ref_keep && (st = ops->ref_keep (ops->arg)))
            return st;
    }
    if (s->fingerprint && (st = ops->fingerprint (ops->arg)))
        return st;
    if (!s->candidate)
        return KF_EVAL_ST_OK;       // a probe: the reference alone
    //  The candidate gets the inputs as drawn, whatever the reference did.
    if ((st = ops->cand_stage (ops->arg)))
        return st;
    t0 = kf_eval_now ();
    kf_eval_split_add (KF_EVAL_S_COPIES, t0 - t);
    int called = ops->cand_call (ops->arg, when);
    t = kf_eval_now ();
    kf_eval_split_add (KF_EVAL_S_CALLS, t - t0);
    if (s->count_warm)
        kf_eval_warm_count (s->warm, false, t0);
    s->worst->sets++;
    if (called == KF_EVAL_ST_CRASHED || called >= KF_EVAL_ST_HARNESS)
        return called;
    st = ops->check_memory (ops->arg, when);
    t0 = kf_eval_now ();
    kf_eval_split_add (KF_EVAL_S_COPIES, t0 - t);
    if (st)
        return st;
    if (called)
        return called;
    st = ops->compare (ops->arg, when);
    kf_eval_split_add (KF_EVAL_S_COMPARE, kf_eval_now () - t0);
    return st;
}

void
kf_eval_worst_merge (kf_eval_worst_t *into, const kf_eval_worst_t *w)
{
    into->sets += w->sets;
    if (w->match_fraction < into->match_fraction)
        into->match_fraction = w->match_fraction;
    if (w->cosine < into->cosine)
        into->cosine = w->cosine;
    if (w->max_abs > into->max_abs)
        into->max_abs = w->max_abs;
    if (w->max_rel > into->max_rel)
        into->max_rel = w->max_rel;
    into->nonfinite_mismatch += w->nonfinite_mismatch;
}
