/*  =========================================================================
    kf_prompt_attention.c - attention's operation count: the two products
    around its softmax, and the line that states them.

    Round 27: attention written out (q @ k^T, a softmax, @ v) had no
    compute floor; the model found the byte estimates "the wrong anchor"
    for a task of 2.15 GFLOP against 12 MiB.
    =========================================================================
*/

#include "kf_prompt_target.h"
#include "kf_prompt_class.h"
#include "kf_prompt_epilogue.h"
#include "kf_json.h"
#include <stdio.h>

//  A tensor's rank and one of its sizes (0 where absent).
static size_t
s_rank (json_t *t)
{
    return json_array_size (json_object_get (t, "shape"));
}

static long long
s_dim (json_t *t, size_t d)
{
    return json_integer_value (json_array_get (json_object_get (t, "shape"), d));
}

double
kf_prompt_attention_flops (json_t *spec, long long *heads, long long sizes[4])
{
    if (kf_prompt_task_class (spec) != KF_CLASS_ATTENTION)
        return 0;
    json_t *in = json_object_get (spec, "inputs");
    json_t *q = json_array_get (in, 0), *k = json_array_get (in, 1), *v = json_array_get (in, 2);
    json_t *out = json_array_get (json_object_get (spec, "outputs"), 0);
    size_t r = s_rank (q);
    if (!v || !out || r < 2 || s_rank (k) != r || s_rank (v) != r || s_rank (out) != r)
        return 0;
    //  The leading sizes (batch, heads) alike in all four.
    long long b = 1;
    for (size_t d = 0; d + 2 < r; d++) {
        long long n = s_dim (q, d);
        if (n <= 0 || s_dim (k, d) != n || s_dim (v, d) != n || s_dim (out, d) != n)
            return 0;
        b *= n;
    }
    long long s = s_dim (q, r - 2), dk = s_dim (q, r - 1), sk = s_dim (k, r - 2);
    long long dv = s_dim (v, r - 1);
    if (s <= 0 || dk <= 0 || sk <= 0 || dv <= 0 || s_dim (k, r - 1) != dk
        || s_dim (v, r - 2) != sk || s_dim (out, r - 2) != s || s_dim (out, r - 1) != dv)
        return 0;
    if (heads)
        *heads = b;
    if (sizes) {
        sizes[0] = s;
        sizes[1] = sk;
        sizes[2] = dk;
        sizes[3] = dv;
    }
    return 2.0 * (double) b * (double) s * (double) sk * (double) (dk + dv);
}

void
kf_prompt_attention_line (FILE *f, json_t *spec, json_t *d)
{
    long long b = 0, n[4];
    double flops = kf_prompt_attention_flops (spec, &b, n);
    double one = kf_jnum (d, "peak_gflops_one_core", 0), all = kf_jnum (d, "peak_gflops", 0);
    if (!(flops > 0) || !(one > 0))
        return;
    double scores = (double) b * (double) n[0] * (double) n[1];
    fprintf (f, "  Compute floor: attention is two products around a softmax: the scores q k^T "
             "(2 x %lld queries x %lld keys x %lld features) and their weights times v (2 x "
             "%lld x %lld x %lld), over %lld independent (batch, head) pairs: %.4g million "
             "operations; they take at least %.3g ms at one core's measured FMA peak", n[0],
             n[1], n[2], n[0], n[1], n[3], b, flops * 1e-6, flops / one * 1e-6);
    if (all > one)
        fprintf (f, " and %.3g ms at every core's together (%.0f GFLOP/s)", flops / all * 1e-6,
                 all);
    fprintf (f, ". The softmax between them takes %.4g million exponentials (one a score), "
             "about %.3g ms more on one core counting an exp as %d vector operations, each an "
             "FMA's issue slot: a kernel of f32 "
             "FMAs is never faster than the products' floor, and the score matrix (%.4g MiB "
             "for all pairs) need never reach memory if each block of queries keeps its "
             "scores in cache (an online softmax rescales the output as the maximum grows).\n",
             scores * 1e-6, scores * KF_PROMPT_EXP_OPS * 2 / one * 1e-6, KF_PROMPT_EXP_OPS,
             scores * 4 / (1024.0 * 1024.0));
}
