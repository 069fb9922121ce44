/*  =========================================================================
    kf_prompt_attention.c - attention's operation count: the two products
    around its softmax, and the line that states them.

    Round 27: attention written out (q @ k^T, a softmax, @ v) had no
    compute floor; the model found the byte estimates "the wrong anchor"
    for a task of 2.15 GFLOP against 12 MiB.
    =========================================================================
*/

#include "kf_prompt_target.h"
#include "kf_prompt_formula.h"
#include "kf_prompt_class.h"
#include "kf_prompt_epilogue.h"
#include "kf_json.h"
#include <stdio.h>
#include <string.h>

bool
kf_prompt_attention_causal (json_t *spec)
{
    //  Round 28: a causal mask (torch.triu of ones, masked_fill with -inf)
    //  leaves a query its own key and those before it; the floor counted
    //  the whole square, and a kernel read 173% of one core's peak.
    json_t *ref = json_object_get (spec, "reference");
    const char *body = kf_prompt_forward_from (kf_jstr (ref, "source"));
    return strstr (body, "triu(") || strstr (body, "tril(") || strstr (body, "is_causal=True");
}

//  The (query, key) pairs a head computes: all S x SK, or with a causal
//  mask over a square the S (S + 1) / 2 on and below the diagonal.
static double
s_pairs (json_t *spec, long long s, long long sk)
{
    if (s == sk && kf_prompt_attention_causal (spec))
        return (double) s * (double) (s + 1) / 2;
    return (double) s * (double) sk;
}

double
kf_prompt_attention_flops (json_t *spec, long long *heads, long long sizes[4])
{
    if (kf_prompt_task_class (spec) != KF_CLASS_ATTENTION)
        return 0;
    json_t *in = json_object_get (spec, "inputs");
    json_t *q = json_array_get (in, 0), *k = json_array_get (in, 1), *v = json_array_get (in, 2);
    json_t *out = json_array_get (json_object_get (spec, "outputs"), 0);
    size_t r = kf_prompt_rank (q);
    if (!v || !out || r < 2 || kf_prompt_rank (k) != r || kf_prompt_rank (v) != r
        || kf_prompt_rank (out) != r)
        return 0;
    //  The leading sizes (batch, heads) alike in all four.
    long long b = 1;
    for (size_t d = 0; d + 2 < r; d++) {
        long long n = kf_prompt_dim (q, d);
        if (n <= 0 || kf_prompt_dim (k, d) != n || kf_prompt_dim (v, d) != n
            || kf_prompt_dim (out, d) != n)
            return 0;
        b *= n;
    }
    long long s = kf_prompt_dim (q, r - 2), dk = kf_prompt_dim (q, r - 1);
    long long sk = kf_prompt_dim (k, r - 2), dv = kf_prompt_dim (v, r - 1);
    if (s <= 0 || dk <= 0 || sk <= 0 || dv <= 0 || kf_prompt_dim (k, r - 1) != dk
        || kf_prompt_dim (v, r - 2) != sk || kf_prompt_dim (out, r - 2) != s
        || kf_prompt_dim (out, r - 1) != dv)
        return 0;
    if (heads)
        *heads = b;
    if (sizes) {
        sizes[0] = s;
        sizes[1] = sk;
        sizes[2] = dk;
        sizes[3] = dv;
    }
    return 2.0 * (double) b * s_pairs (spec, s, sk) * (double) (dk + dv);
}

void
kf_prompt_attention_line (FILE *f, json_t *spec, json_t *d)
{
    long long b = 0, n[4];
    double flops = kf_prompt_attention_flops (spec, &b, n);
    double one = kf_jnum (d, "peak_gflops_one_core", 0), all = kf_jnum (d, "peak_gflops", 0);
    if (!(flops > 0) || !(one > 0))
        return;
    double pairs = s_pairs (spec, n[0], n[1]), scores = (double) b * pairs;
    bool causal = pairs < (double) n[0] * (double) n[1];
    fprintf (f, "  Compute floor: attention is two products around a softmax: the scores q k^T "
             "(a multiply and an add for each of %lld features of each (query, key) pair) and "
             "their weights times v (the same for %lld features), over %lld queries x %lld "
             "keys", n[2], n[3], n[0], n[1]);
    if (causal)
        fprintf (f, ", of which the causal mask leaves %.0f pairs (each query with its own key "
                 "and those before it: %lld x %lld / 2, about half; a kernel that skips the "
                 "masked blocks does no more)", pairs, n[0], n[0] + 1);
    fprintf (f, ", in each of %lld independent (batch, head) pairs: %.4g million operations; "
             "they take at least %.3g ms at one core's measured FMA peak", b, flops * 1e-6,
             flops / one * 1e-6);
    if (all > one)
        fprintf (f, " and %.3g ms at every core's together (%.0f GFLOP/s)", flops / all * 1e-6,
                 all);
    fprintf (f, ". The softmax between them takes %.4g million exponentials (one a score%s), "
             "about %.3g ms more on one core counting an exp as %d vector operations, each an "
             "FMA's issue slot: a kernel of f32 "
             "FMAs is never faster than the products' floor, and the score matrix (%.4g MiB "
             "for all pairs) need never reach memory if each block of queries keeps its "
             "scores in cache (an online softmax rescales the output as the maximum grows).\n",
             scores * 1e-6, causal ? " left by the mask" : "",
             scores * KF_PROMPT_EXP_OPS * 2 / one * 1e-6, KF_PROMPT_EXP_OPS,
             scores * 4 / (1024.0 * 1024.0));
}
