/*  kf_search_idea_bound.c - an idea that moves no fewer bytes is not
 *  handed alone to a kernel at the memory bound (kf_search_idea.h).
 *
 *  Round 16: candidate 8 ran at 100% of the measured copy bandwidth, and
 *  its two children of generation 2 were handed explicit SIMD and
 *  streaming stores, one each: the SIMD child could change nothing
 *  measurable, since the kernel's time was its bytes. Where the parent
 *  is at or above KF_SEARCH_IDEA_BOUND of the memory rate (since round
 *  17 all cores' cold read, its bytes counted as they cross the bus:
 *  kf_search_idea_memory_share), such an idea is paired with one that
 *  cuts the bytes moved and that the parent does not do yet.
 *
 *  Round 21: and streaming stores, which cut bytes, are not handed to a
 *  kernel bound by its arithmetic (kf_search_idea_arith_bound).
 *
 *  Round 38: a formula's estimated arithmetic (kf_prompt_arith.h) counts
 *  in both readings.
 */
#include "kf_search_idea.h"
#include "kf_json.h"
#include "kf_prompt_arith.h"
#include "kf_prompt_class.h"
#include "kf_prompt_target.h"
#include <math.h>

kf_share_t
kf_search_idea_memory_share (json_t *kernel, json_t *spec, json_t *hardware,
                             kf_target_kind_t kind)
{
    //  Round 17: N + 2M was set against the copy figure, which counts N +
    //  M (57.9 GB/s, "90%", where all cores read 86.2 GB/s cold: 67%).
    //  The bound is what the machine reads with every core, counted as
    //  the bytes cross the bus; the copy, like for like, where no cold
    //  read was measured (and on a GPU).
    json_t *bw = json_object_get (kernel, "bandwidth");
    json_t *dev = json_array_get (json_object_get (hardware, "devices"), 0);
    kf_stores_t stores = kf_prompt_stores (kernel, spec, NULL, kind);
    kf_share_t all = kf_prompt_memory_share (bw, spec, dev, stores, KF_SHARE_ALL_CORES);
    if (kind == KF_TARGET_HOST && all.share > 0)
        return all;
    return kf_prompt_memory_share (bw, spec, dev, stores, KF_SHARE_COPY);
}

kf_share_t
kf_search_idea_one_core_share (json_t *kernel, json_t *spec, json_t *hardware)
{
    json_t *dev = json_array_get (json_object_get (hardware, "devices"), 0);
    return kf_prompt_memory_share (json_object_get (kernel, "bandwidth"), spec, dev,
                                   kf_prompt_stores (kernel, spec, NULL, KF_TARGET_HOST),
                                   KF_SHARE_ONE_CORE);
}

bool
kf_search_idea_cuts_bytes (const char *idea)
{
    kf_idea_feature_t f = kf_prompt_idea_feature (idea);
    return f == KF_IDEA_STREAM || f == KF_IDEA_FUSED_ROW || f == KF_IDEA_EPILOGUE;
}

int
kf_search_idea_pair (const char *const *ideas, size_t n, size_t idx, double share,
                     unsigned parent_features, int parent_built, const bool *spent,
                     const bool *held)
{
    if (idx >= n || share < KF_SEARCH_IDEA_BOUND || kf_search_idea_cuts_bytes (ideas[idx]))
        return -1;
    for (size_t c = 0; c < n; c++)
        if (kf_search_idea_cuts_bytes (ideas[c]) && (int) c != parent_built
            && !((parent_features >> kf_prompt_idea_feature (ideas[c])) & 1u)
            && !(spent && spent[c]) && !(held && held[c]))
            return (int) c;
    //  Round 48: else, for a parent on one thread, threads, which raise the
    //  rate its bytes may move at from one core's to all cores'.
    for (size_t c = 0; c < n && !(parent_features & (1u << KF_IDEA_THREADS)); c++)
        if (c != idx && kf_prompt_idea_feature (ideas[c]) == KF_IDEA_THREADS
            && (int) c != parent_built && !(spent && spent[c]) && !(held && held[c]))
            return (int) c;
    return -1;
}

double
kf_search_idea_arith_estimate (json_t *spec, json_t *hardware, double cycles)
{
    kf_arith_t a;
    json_t *d = json_array_get (json_object_get (hardware, "devices"), 0);
    return kf_prompt_formula_arith (spec, d, &a) && cycles >= KF_PROMPT_ARITH_FILLS * a.cycles
               ? a.cycles
               : 0;
}

bool
kf_search_idea_arith_bound (json_t *kernel, json_t *spec, json_t *hardware,
                            kf_target_kind_t kind, double *cycles, double *budget)
{
    *cycles = *budget = 0;
    kf_per_vector_t pv;
    if (kind != KF_TARGET_HOST
        || !kf_prompt_per_vector (kernel, spec, hardware,
                                  (int) kf_prompt_stores (kernel, spec, NULL, kind), &pv))
        return false;
    *cycles = pv.cycles;
    *budget = pv.budget;
    //  Round 38: or where its formula's estimated arithmetic alone takes
    //  longer than its bytes (atan * exp, about 30 cycles a vector
    //  against 27: streaming stores gained nothing, cheaper math 1.5x).
    return pv.budget > 0
           && (pv.cycles >= KF_SEARCH_IDEA_ARITH * pv.budget
               || kf_search_idea_arith_estimate (spec, hardware, pv.cycles) >= pv.budget);
}

double
kf_search_idea_bound_share (json_t *kernel, json_t *spec, json_t *hardware,
                            kf_target_kind_t kind, kf_share_t *share, double *cycles,
                            double *budget)
{
    *share = kf_search_idea_memory_share (kernel, spec, hardware, kind);
    //  Round 48: a one-thread kernel at 94% of what one core moves (76% of
    //  all cores') was handed fewer instructions alone, twice, and gained
    //  nothing: one thread is bound by one core's rate.
    const char *language = *kf_jstr (kernel, "language") ? kf_jstr (kernel, "language") : "c";
    if (kind == KF_TARGET_HOST
        && !kf_prompt_source_does (kf_jstr (kernel, "source"), language, KF_IDEA_THREADS)) {
        kf_share_t one = kf_search_idea_one_core_share (kernel, spec, hardware);
        if (one.share > share->share)
            *share = one;
    }
    kf_search_idea_arith_bound (kernel, spec, hardware, kind, cycles, budget);
    //  Round 38: a kernel near its budget whose formula's arithmetic
    //  would fill most of that time is not bound by memory alone: its
    //  budget says nothing of which binds (kf_prompt_arith.h).
    return fmax (share->share, kf_search_idea_budget_share_of (spec, hardware, *cycles, *budget));
}

double
kf_search_idea_budget_share_of (json_t *spec, json_t *hardware, double cycles, double budget)
{
    if (budget > 0
        && kf_search_idea_arith_estimate (spec, hardware, cycles) >= KF_PROMPT_ARITH_FILLS * budget)
        return 0;
    return kf_search_idea_budget_share (cycles, budget);
}

double
kf_search_idea_budget_share (double cycles, double budget)
{
    double at = cycles > 0 && budget > 0 ? budget / cycles : 0;
    //  Round 35: a one-thread kernel at 16 cycles a vector against a
    //  budget of 27 was called bound by memory ("its bytes take 100% of
    //  its time") and handed streaming stores with another idea; cheaper
    //  math alone then took it from 4.69 to 3.85 ms (the helper's own
    //  timing). Coming in well under the estimate shows the estimate
    //  loose there, not where memory binds.
    return at > KF_SEARCH_IDEA_LOOSE ? 0 : at;
}

void
kf_search_idea_with_note (json_t *prompt, const char *with, const kf_share_t *share, double at,
                          double cycles, double budget)
{
    if (with && at > share->share)
        json_object_set_new (prompt, "with",
                             json_pack ("{s:s, s:f, s:f, s:f, s:f}", "idea", with, "cycles",
                                        cycles, "budget", budget, "share", fmin (at, 1),
                                        "bound", KF_SEARCH_IDEA_BOUND));
    else if (with || share->share >= KF_SEARCH_IDEA_BOUND)
        //  Round 40: "fewer instructions" alone to a one-thread kernel at
        //  1.01 times all cores' cold read rate, no idea that cuts bytes
        //  free to go with it, and no word of the bound: "alone".
        json_object_set_new (prompt, with ? "with" : "alone",
                             json_pack ("{s:s, s:f, s:f, s:s, s:s, s:f}", "idea",
                                        with ? with : "", "share", share->share, "bound",
                                        KF_SEARCH_IDEA_BOUND, "traffic", share->traffic,
                                        "against", share->rate_name, "rate_gbs", share->rate));
}
