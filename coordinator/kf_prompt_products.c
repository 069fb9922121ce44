/*  kf_prompt_products.c - the operations of a task's products, derived
 *  from its shapes where the task states no count (declared in
 *  kf_prompt_target.h): a matrix product's, a convolution's, and which of
 *  them (or attention's, kf_prompt_attention.c) a task's product is.
 *  Moved out of kf_prompt_position.c, which states the figures.
 */
#include "kf_prompt_target.h"
#include "kf_prompt_class.h"
#include "kf_str.h"
#include "kf_prompt_formula.h"
#include "kf_prompt_layout.h"
#include "kf_json.h"
#include <stdio.h>
#include <string.h>

//  The product's shapes: *BATCH products (1 for a plain one) of
//  2*M*N*K operations each, MNK (may be NULL) its M, N and K; 0 when the
//  shapes do not say. Two matrices among the inputs make the product (a
//  bias or a scale may come with them, and since round 21 a residual of
//  the output's shape: mm_bt_gelu_residual read "compute: not known"),
//  one matrix out; of rank 2, or all of rank 3 with one batch size
//  (torch.bmm: round 12's bmm_relu read "compute: not known"). Pairs
//  that fit with different counts make the count a guess: 0.
#define S_MATS 4

//  The matrix products SPEC's reference writes in its forward (not its
//  docstring): its `@`s, and its calls of matmul, mm and linear.
static int
s_products (json_t *spec)
{
    const char *src = kf_jstr (json_object_get (spec, "reference"), "source");
    const char *from = src && strstr (src, "def forward") ? kf_prompt_forward_from (src) : NULL;
    if (!from)
        return 0;
    const char *end = strstr (from, "\ndef ");
    const char *cls = strstr (from, "\nclass ");
    if (!end || (cls && cls < end))
        end = cls ? cls : from + strlen (from);
    static const char *const forms[] = { " @ ", "matmul(", ".mm(", "linear(" };
    int n = 0;
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++)
        for (const char *p = strstr (from, forms[f]); p && p < end; p = strstr (p + 1, forms[f]))
            n++;
    return n;
}

double
kf_prompt_chain_flops (json_t *spec, long long mkrn[4])
{
    json_t *out = json_array_get (json_object_get (spec, "outputs"), 0), *mat[3];
    int n = 0;
    size_t i;
    json_t *t;
    if (kf_prompt_task_class (spec) != KF_CLASS_MATMUL
        || json_array_size (json_object_get (spec, "outputs")) != 1 || kf_prompt_rank (out) != 2
        || s_products (spec) != 2)
        return 0;
    json_array_foreach (json_object_get (spec, "inputs"), i, t) {
        if (kf_prompt_rank (t) != 2)
            continue;
        if (n == 3)
            return 0;   //  a fourth matrix: no chain of two
        mat[n++] = t;
    }
    long long om = kf_prompt_dim (out, 0), on = kf_prompt_dim (out, 1);
    for (int a = 0; n == 3 && a < 3; a++)
        for (int b = 0; b < 3; b++) {
            int c = 3 - a - b;
            if (a == b || c == a || c == b)
                continue;
            long long k = kf_prompt_dim (mat[a], 1), r = kf_prompt_dim (mat[b], 1);
            if (kf_prompt_dim (mat[a], 0) != om || kf_prompt_dim (mat[b], 0) != k
                || kf_prompt_dim (mat[c], 0) != r || kf_prompt_dim (mat[c], 1) != on || k <= 0
                || r <= 0 || om <= 0 || on <= 0)
                continue;
            if (mkrn) {
                mkrn[0] = om;
                mkrn[1] = k;
                mkrn[2] = r;
                mkrn[3] = on;
            }
            return 2.0 * (double) om * (double) r * ((double) k + (double) on);
        }
    return 0;
}

double
kf_prompt_matmul_count (json_t *spec, long long *batch, long long mnk[3])
{
    *batch = 1;
    if (kf_prompt_task_class (spec) != KF_CLASS_MATMUL)
        return 0;
    json_t *inputs = json_object_get (spec, "inputs"), *outputs = json_object_get (spec, "outputs");
    json_t *out = json_array_get (outputs, 0);
    size_t rank = kf_prompt_rank (out);
    if (json_array_size (outputs) != 1 || rank < 1 || rank > 3)
        return 0;
    //  Round 31: a product each of whose rows the epilogue reduces to one
    //  value (logsumexp(a @ w.t(), dim=1): [M] out of [M][N]); its N is
    //  the operands'.
    bool reduced = rank == 1;
    if (reduced)
        rank = 2;
    size_t o = rank - 2;   //  the first matrix dimension
    json_t *mat[S_MATS];
    int n = 0;
    size_t i;
    json_t *t;
    json_array_foreach (inputs, i, t) {
        if (kf_prompt_rank (t) > rank || (rank == 3 && kf_prompt_rank (t) == 2))
            return 0;
        if (kf_prompt_rank (t) == rank) {
            if (n == S_MATS)
                return 0;
            mat[n++] = t;
        }
    }
    //  Of more than two, those of the output's shape are the epilogue's (a
    //  residual); any other third makes the count a guess (two layers?).
    long long om = kf_prompt_dim (out, o), on = reduced ? 0 : kf_prompt_dim (out, o + 1);
    long long shared = 1;
    if (n > 2) {
        json_t *other[S_MATS];
        int kept = 0;
        for (int a = 0; a < n; a++)
            if (!(kf_prompt_dim (mat[a], o) == om && kf_prompt_dim (mat[a], o + 1) == on))
                other[kept++] = mat[a];
        //  Round 37: (a @ w) * sigmoid(a @ v) read "compute: not known":
        //  three, two of one shape, of a rank-2 task whose reference
        //  writes two products, are two products of one operand.
        if (kept == 3 && rank == 2 && s_products (spec) == 2)
            for (int a = 0; a < 3 && shared == 1; a++) {
                json_t *y = other[(a + 1) % 3], *z = other[(a + 2) % 3];
                if (kf_prompt_dim (y, 0) == kf_prompt_dim (z, 0)
                    && kf_prompt_dim (y, 1) == kf_prompt_dim (z, 1)) {
                    other[0] = other[a];
                    other[1] = y;
                    kept = 2;
                    shared = 2;
                }
            }
        //  Round 51: (x @ u) @ v read "compute: not known": three of a
        //  rank-2 task whose reference writes two products, chained.
        long long chain[4];
        double flops = kept == 3 ? kf_prompt_chain_flops (spec, chain) : 0;
        if (flops > 0 && mnk) {
            mnk[0] = chain[0];
            mnk[1] = chain[3];
            mnk[2] = chain[2];
        }
        if (flops > 0)
            return flops;
        if (kept > 2)
            return 0;
        //  Fewer: square shapes, every pair of the matrices tried.
        if (kept == 2) {
            memcpy (mat, other, sizeof other[0] * 2);
            n = 2;
        }
    }
    //  Round 41: x @ x.t() read "compute: not known", with no block
    //  sizes: its one matrix is both operands.
    if (n == 1 && kf_prompt_product_self (spec)) {
        mat[1] = mat[0];
        n = 2;
    }
    if (n < 2)
        return 0;
    if (rank == 3) {
        *batch = kf_prompt_dim (out, 0);
        for (int a = 0; a < n; a++)
            if (*batch <= 0 || kf_prompt_dim (mat[a], 0) != *batch)
                return 0;
    }
    double flops = 0;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            if (a == b)
                continue;
            json_t *x = mat[a], *w = mat[b];
            long long m = kf_prompt_dim (x, o), kx = kf_prompt_dim (x, o + 1);
            long long w0 = kf_prompt_dim (w, o), w1 = kf_prompt_dim (w, o + 1);
            //  x [M,K] by weight [N,K] (nn.Linear), or x [M,K] by [K,N], or
            //  (round 15: a.T @ b read "compute: not known") x stored [K,M]
            //  and used transposed, by [K,N].
            long long cand[3][3] = { { m, w0, kx }, { m, w1, kx }, { kx, w1, m } };
            bool fits[3] = { w1 == kx, w0 == kx, w0 == m };
            for (int c = 0; c < 3; c++) {
                if (!fits[c] || cand[c][0] != om || (!reduced && cand[c][1] != on)
                    || cand[c][1] <= 0 || cand[c][2] <= 0 || om <= 0)
                    continue;
                double v = 2.0 * (double) cand[c][0] * (double) cand[c][1] * (double) cand[c][2];
                if (flops > 0 && v != flops)
                    return 0;
                flops = v;
                if (mnk)
                    memcpy (mnk, cand[c], sizeof cand[c]);
            }
        }
    if (shared > 1)
        *batch = shared;
    return flops * (double) *batch;
}

//  A convolution's count (round 25: conv1d_relu read no compute floor):
//  the reference calls a convolution (not a transposed one), one output
//  of rank 3 to 5 [B][C_out][spatial...], and among the inputs a weight
//  of that rank [C_out][C_in / groups][kernel...] and an input [B][C_in]
//  [spatial...]. Each output element takes C_in / groups x kernel
//  multiply-adds; as a product, GROUPS products of M = C_out / groups,
//  N = B x the output's spatial size, K = C_in / groups x kernel size.
static double
s_conv (json_t *spec, long long *groups, long long mnk[3], long long taps[3], int *dims)
{
    const char *src = kf_jstr (json_object_get (spec, "reference"), "source");
    if (!src || (!strstr (src, "conv") && !strstr (src, "Conv")) || strstr (src, "onv_transpose")
        || strstr (src, "onvTranspose"))
        return 0;
    json_t *outputs = json_object_get (spec, "outputs"), *out = json_array_get (outputs, 0);
    size_t rank = kf_prompt_rank (out);
    if (json_array_size (outputs) != 1 || rank < 3 || rank > 5)
        return 0;
    long long b = kf_prompt_dim (out, 0), c_out = kf_prompt_dim (out, 1), spatial = 1;
    for (size_t i = 2; i < rank; i++)
        spatial *= kf_prompt_dim (out, i) > 0 ? kf_prompt_dim (out, i) : 0;
    json_t *weight = NULL, *x = NULL;
    size_t i;
    json_t *t;
    json_array_foreach (json_object_get (spec, "inputs"), i, t) {
        if (kf_prompt_rank (t) != rank)
            continue;
        if (kf_prompt_dim (t, 0) == c_out && kf_prompt_dim (t, 0) != b && !weight)
            weight = t;
        else if (kf_prompt_dim (t, 0) == b && !x)
            x = t;
    }
    if (!weight || !x || b <= 0 || c_out <= 0 || spatial <= 0)
        return 0;
    long long per = kf_prompt_dim (weight, 1), kernel = 1, c_in = kf_prompt_dim (x, 1);
    for (size_t d = 2; d < rank; d++)
        kernel *= kf_prompt_dim (weight, d) > 0 ? kf_prompt_dim (weight, d) : 0;
    if (per <= 0 || kernel <= 0 || c_in <= 0 || c_in % per || c_out % (c_in / per))
        return 0;
    *groups = c_in / per;
    for (size_t d = 2; taps && d < rank; d++)
        taps[d - 2] = kf_prompt_dim (weight, d);
    if (dims)
        *dims = (int) rank - 2;
    if (mnk) {
        mnk[0] = c_out / *groups;
        mnk[1] = b * spatial;
        mnk[2] = per * kernel;
    }
    return 2.0 * (double) (c_out / *groups) * (double) (b * spatial) * (double) (per * kernel)
           * (double) *groups;
}

double
kf_prompt_conv_flops (json_t *spec, long long mnk[3], long long *groups)
{
    long long g = 1;
    double flops = kf_prompt_task_class (spec) == KF_CLASS_MATMUL
                       ? s_conv (spec, &g, mnk, NULL, NULL) : 0;
    if (groups)
        *groups = g;
    return flops;
}

int
kf_prompt_conv_taps (json_t *spec, long long taps[3])
{
    long long g = 1;
    int dims = 0;
    if (kf_prompt_task_class (spec) != KF_CLASS_MATMUL || !(s_conv (spec, &g, NULL, taps, &dims) > 0))
        return 0;
    return dims;
}

double
kf_prompt_matmul_needed (json_t *spec, double count, const long long mnk[3])
{
    if (!(count > 0) || !mnk || mnk[0] <= 0 || mnk[0] != mnk[1] || !kf_prompt_product_self (spec))
        return count;
    return count * (double) (mnk[0] + 1) / (2.0 * (double) mnk[0]);
}

bool
kf_prompt_product_every_output (json_t *spec, const char *source, unsigned features)
{
    if (source && *source)
        features = kf_prompt_source_features (source, NULL);
    else if (features == ~0u)
        return false;
    return !((features >> KF_IDEA_TRIANGLE) & 1u) && kf_prompt_product_self (spec);
}

double
kf_prompt_compute_ceiling (json_t *k, json_t *dev)
{
    double one = kf_jnum (dev, "peak_gflops_one_core", 0);
    double cpus = kf_jnum (json_object_get (k, "one_core"), "cpu_per_wall", 0);
    if (one > 0 && cpus > 0)
        return one * (cpus > 1 ? cpus : 1) * KF_PROMPT_PEAK_MARGIN;
    return kf_jnum (dev, "peak_gflops", 0);
}

double
kf_prompt_matmul_flops (json_t *spec, long long mnk[3])
{
    long long batch, n[3] = { 0, 0, 0 };
    double count = kf_prompt_matmul_count (spec, &batch, n);
    if (mnk)
        memcpy (mnk, n, sizeof n);
    return kf_prompt_matmul_needed (spec, count, n);
}

double
kf_prompt_product_flops (json_t *spec, long long mnk[3])
{
    double conv = kf_prompt_conv_flops (spec, mnk, NULL);
    if (conv > 0)
        return conv;
    //  Round 27: attention's two products; MNK those of its first (queries
    //  x keys x features).
    long long n[4];
    double att = kf_prompt_attention_flops (spec, NULL, n);
    if (att > 0) {
        if (mnk) {
            mnk[0] = n[0];
            mnk[1] = n[1];
            mnk[2] = n[2];
        }
        return att;
    }
    return kf_prompt_matmul_flops (spec, mnk);
}

char *
kf_prompt_chain_idea (json_t *spec)
{
    long long c[4];
    if (!(kf_prompt_chain_flops (spec, c) > 0))
        return NULL;
    return kf_strdupf ("keep the intermediate out of memory, by chaining the two products a "
                       "block of rows at a time: a block's rows of in0 @ in1 (each row %lld "
                       "values, R) go into a small buffer in L1 or L2 and are multiplied by "
                       "in2 at once, so the [%lld][%lld] intermediate tmp (%.0f KiB) is never "
                       "written out whole and read back; in2 [R][N] is then the operand the "
                       "output's register tile walks down",
                       c[2], c[0], c[2], (double) c[0] * (double) c[2] * 4 / 1024);
}
