/*  kf_prompt_slim.c - which kernels a prompt leaves as one line, not
 *  code (kf_prompt_slim.h).
 */
#include "kf_prompt_slim.h"
#include "kf_json.h"
#include "kf_prompt_class.h"
#include "kf_prompt_threads.h"
#include <string.h>

//  K's figure, or 0 where it has none.
static double
s_speedup (json_t *k)
{
    return k && kf_jhas_num (k, "speedup") ? kf_jnum (k, "speedup", 0) : 0;
}

bool
kf_prompt_inspiration_slow (const kf_prompt_in_t *in, json_t *k)
{
    if (!k || kf_jint (k, "from_run"))
        return false;
    double own = s_speedup (k);
    double against = s_speedup (in->base) > 0 ? s_speedup (in->base) : s_speedup (in->best);
    return own > 0 && against > 0 && own * KF_PROMPT_INSPIRATION_SLOWER < against;
}

bool
kf_prompt_inspiration_whole (const kf_prompt_in_t *in, json_t *c)
{
    size_t i;
    json_t *k;
    json_array_foreach (in->inspirations, i, k) {
        const char *x = kf_jstr (k, "norm_hash"), *y = kf_jstr (c, "norm_hash");
        bool same = (kf_jint (k, "id") && kf_jint (k, "id") == kf_jint (c, "id"))
                    || (*x && !strcmp (x, y));
        if (same)
            return !kf_prompt_inspiration_slow (in, k);
    }
    return false;
}

void
kf_prompt_kernel_line (FILE *f, json_t *k, const char *language, const char *why)
{
    fprintf (f, "Candidate %lld", (long long) kf_jint (k, "id"));
    if (s_speedup (k) > 0) {
        //  Which protocol the figure is from, as the runtime line says it.
        const char *fid = kf_jstr (k, "fidelity");
        const char *how = !strcmp (fid, "screen") ? "screen timing"
                        : !strcmp (fid, "pending") ? "screen timing, the full one pending"
                        : *fid ? "full protocol" : "";
        fprintf (f, ": %.3fx the reference's speed%s%s%s", s_speedup (k), *how ? " (" : "", how,
                 *how ? ")" : "");
    }
    char words[KF_PROMPT_FEATURE_WORDS_MAX];
    kf_prompt_feature_words (kf_prompt_source_features (kf_jstr (k, "source"), language), words,
                             sizeof words);
    if (*words)
        fprintf (f, "; its code has: %s.\n", words);
    else
        fputs ("; its code has none of the techniques the feature reading knows (threads, "
               "SIMD intrinsics, blocking, ...).\n", f);
    fprintf (f, "Its code is left out: %s.\n", why);
}

bool
kf_prompt_inspiration_named (FILE *f, const kf_prompt_in_t *in, json_t *k,
                             const char *language)
{
    if (!kf_prompt_inspiration_slow (in, k))
        return false;
    bool of_base = s_speedup (in->base) > 0;
    char why[300];
    snprintf (why, sizeof why, "its figure is below 1/%g of %s's (%.3fx), too far behind to hold "
              "an idea that kernel can borrow", KF_PROMPT_INSPIRATION_SLOWER,
              of_base ? "the kernel to improve" : "the best kernel so far",
              s_speedup (of_base ? in->base : in->best));
    kf_prompt_kernel_line (f, k, language, why);
    return true;
}

void
kf_prompt_inspiration_behind (FILE *f, const kf_prompt_in_t *in, json_t *k)
{
    double own = s_speedup (k), against = s_speedup (in->base);
    if (!k || kf_jint (k, "from_run") || !(own > 0)
        || !(own * KF_PROMPT_INSPIRATION_BEHIND < against))
        return;
    //  Round 30: a one-thread kernel at 50.36x was called slower than a
    //  kernel to improve at 66.48x that ran two threads side by side and
    //  took 2.00 ms on one core against its 1.67 ms: per core, its design
    //  was the faster one, and the writer was told to leave it.
    double base_one = kf_prompt_threads_own_ns (in->base), own_ns = kf_jnum (k, "candidate_ns", 0);
    if (base_one > 0 && !(kf_prompt_threads_own_ns (k) > 0) && own_ns > 0 && own_ns < base_one) {
        char one[32], mine[32];
        kf_prompt_time_text (base_one, one, sizeof one);
        kf_prompt_time_text (own_ns, mine, sizeof mine);
        fprintf (f, "It is slower than the kernel to improve (%.3fx against %.3fx), but on one "
                 "thread: the kernel to improve runs threads side by side and takes %s a call "
                 "on one core, this one %s, so per core its design is the faster one; its "
                 "design may pay with threads.\n", own, against, one, mine);
        return;
    }
    //  Round 48: "not what its figures show did not pay" of a threaded
    //  kernel whose threads got 0.89 CPU-seconds a second in its timing.
    //  Round 50: not of a one-thread kernel, whose 1.00 CPU-seconds a
    //  second are all it can use.
    double side = kf_prompt_threads_side_by_side (k);
    if (side > 0 && side < KF_PROMPT_SIDE_BY_SIDE
        && kf_prompt_source_does (kf_jstr (k, "source"), in->language ? in->language : "c",
                                  KF_IDEA_THREADS)) {
        fprintf (f, "It is slower than the kernel to improve (%.3fx against %.3fx), but its "
                 "threads hardly ran side by side in its full timing (%.2f CPU-seconds a second "
                 "of its calls): its figure is the load it met as much as its design, so it "
                 "shows neither that its threads pay nor that they do not; take an idea from "
                 "it, not its whole design.\n", own, against, side);
        return;
    }
    fprintf (f, "It is slower than the kernel to improve (%.3fx against %.3fx): take an idea "
             "from it, not its whole design, and not what its figures show did not pay.\n", own,
             against);
}

bool
kf_prompt_best_named (FILE *f, const kf_prompt_in_t *in, json_t *best, const char *language)
{
    long long base = in->base ? (long long) kf_jint (in->base, "id") : 0;
    if (!in->templated || !base || !best || base == (long long) kf_jint (best, "id"))
        return false;
    char why[200];
    snprintf (why, sizeof why, "this prompt templates the kernel to improve (candidate %lld), "
              "keeping its structure, not this one", base);
    kf_prompt_kernel_line (f, best, language, why);
    return true;
}
