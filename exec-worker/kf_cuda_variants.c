/*  kf_cuda_variants.c - the CUDA judge's timing sets (kf_cuda_eval.h).
 *
 *  With the candidate in its own process, the timed calls cycle through
 *  several input sets the candidate was already judged correct on (the
 *  correctness pass's first sets, or the exported ones), each with its
 *  own outputs, all in one allocation the runner maps (call K of a batch
 *  uses set K modulo their number, kf_runner.c). Before every sample the
 *  judge poisons every set's outputs; after it, it checks each set the
 *  sample's calls reached: inputs as staged, canaries intact, outputs
 *  against that set's right ones, on the device. So a kernel that skips
 *  its work when its inputs look like the last call's is timed doing the
 *  work, and one that leaves a set unwritten or wrong in any sample is
 *  incorrect. Memory allowing (an eighth of the device for the sets, their
 *  staged inputs and right outputs together), at least two sets; else the
 *  timing keeps the case's own buffers, as before. The memory is taken
 *  before the candidate's first call (a candidate that takes all the
 *  device's memory there must not leave the judge without its sets) and
 *  filled after the correctness pass.
 */
#include "kf_cuda_eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kf_cuda_variants_s {
    int n;
    size_t variant_bytes;          // the runner's share of one set
    kf_cuda_share_t share;
    kf_cuda_dbuf_t in_d[KF_CUDA_MAX_VARIANTS][KF_CUDA_MAX_TENSORS];   // shared
    kf_cuda_dbuf_t out_d[KF_CUDA_MAX_VARIANTS][KF_CUDA_MAX_TENSORS];  // shared
    kf_cuda_dbuf_t ref_d[KF_CUDA_MAX_VARIANTS][KF_CUDA_MAX_TENSORS];  // the judge's
    void *src_d[KF_CUDA_MAX_VARIANTS][KF_CUDA_MAX_TENSORS];           // the judge's
};

int
kf_cuda_variants_count (const kf_cuda_eval_t *e)
{
    return e->var ? e->var->n : 1;
}

void
kf_cuda_variants_free (kf_cuda_eval_t *e)
{
    struct kf_cuda_variants_s *v = e->var;
    if (!v)
        return;
    for (int s = 0; s < KF_CUDA_MAX_VARIANTS; s++)
        for (int t = 0; t < KF_CUDA_MAX_TENSORS; t++) {
            if (v->ref_d[s][t].base)
                kf_cuda_eval_api->Free (v->ref_d[s][t].base);
            if (v->src_d[s][t])
                kf_cuda_eval_api->Free (v->src_d[s][t]);
        }
    kf_cuda_share_free (&v->share);
    free (v);
    e->var = NULL;
}

//  How many sets fit MEMORY_BYTES / 8 (4 GiB when the device's memory is
//  unknown), at most KF_CUDA_MAX_VARIANTS; the runner's share of one in
//  *SHARED.
static int
s_how_many (const kf_cuda_eval_t *e, size_t memory_bytes, size_t *shared)
{
    size_t judge = 0;
    *shared = 0;
    for (int i = 0; i < e->n_in; i++) {
        *shared += kf_cuda_dbuf_size (e->in[i].bytes);
        judge += e->in[i].bytes ? e->in[i].bytes : 1;
    }
    for (int o = 0; o < e->n_out; o++) {
        *shared += kf_cuda_dbuf_size (e->out[o].bytes);
        judge += kf_cuda_dbuf_size (e->out[o].bytes);
    }
    size_t budget = memory_bytes ? memory_bytes / 8 : (size_t) 4 << 30;
    size_t n = budget / (*shared + judge);
    return n > KF_CUDA_MAX_VARIANTS ? KF_CUDA_MAX_VARIANTS : (int) n;
}

//  Set S's inputs staged and copied in, its right outputs made: drawn
//  with SEED as correctness set S was and run through the reference, or
//  the exported set S copied up.
static int
s_fill (kf_cuda_eval_t *e, struct kf_cuda_variants_s *v, uint64_t seed, int s)
{
    void *staging[KF_CUDA_MAX_TENSORS];
    memcpy (staging, e->src_d, sizeof staging);
    memcpy (e->src_d, v->src_d[s], sizeof e->src_d);
    int st = kf_cuda_draw_inputs (e, seed, s);
    memcpy (e->src_d, staging, sizeof staging);
    if (st)
        return st;
    int rc = 0;
    for (int i = 0; i < e->n_in && !rc; i++)
        rc = kf_cuda_eval_api->Memcpy (v->in_d[s][i].data, v->src_d[s][i], e->in[i].bytes,
                                       KF_CUDA_D2D);
    if (rc)
        return kf_cuda_harness (e, rc, "staging a timing set");
    const kf_eval_refdata_t *rd = e->rd;
    if (rd) {
        for (int o = 0; o < e->n_out && !rc; o++)
            rc = kf_cuda_eval_api->Memcpy (v->ref_d[s][o].data,
                                           e->data + rd->out_off[s * rd->n_out + o],
                                           e->out[o].bytes, KF_CUDA_H2D);
        return kf_cuda_harness (e, rc, "copying a timing set's right outputs");
    }
    kf_tensor_t in_t[KF_CUDA_MAX_TENSORS], ref_t[KF_CUDA_MAX_TENSORS];
    for (int i = 0; i < e->n_in; i++)
        kf_eval_tensor (&in_t[i], &e->in[i], v->in_d[s][i].data);
    for (int o = 0; o < e->n_out; o++)
        kf_eval_tensor (&ref_t[o], &e->out[o], v->ref_d[s][o].data);
    e->scratch.used = 0;
    int r = e->ref_fn (in_t, e->n_in, ref_t, e->n_out, &e->ctx);
    rc = kf_cuda_settle ();
    if (r || rc) {
        snprintf (e->detail, sizeof e->detail, "reference failed on timing set %d%s%s", s,
                  rc ? ": " : "", rc ? kf_cuda_err (rc) : "");
        return KF_CUDA_REF_FAILED;
    }
    return KF_CUDA_OK;
}

//  The exported sets' scalars must agree: a batch's calls share one set
//  of them. How many leading sets do.
static int
s_same_scalars (const kf_eval_refdata_t *rd, int n)
{
    size_t k = (size_t) rd->n_scalars;
    for (int s = 1; s < n; s++)
        if (k && memcmp (rd->values, rd->values + (size_t) s * k, k * sizeof *rd->values))
            return s;
    return n;
}

int
kf_cuda_variants_reserve (kf_cuda_eval_t *e, size_t memory_bytes)
{
    if (!e->runner || e->var)
        return KF_CUDA_OK;
    size_t shared;
    int n = s_how_many (e, memory_bytes, &shared);
    if (e->rd) {
        n = n < e->rd->n_sets ? n : e->rd->n_sets;
        n = s_same_scalars (e->rd, n);
    }
    if (n < 2)
        return KF_CUDA_OK;
    struct kf_cuda_variants_s *v = calloc (1, sizeof *v);
    if (!v) {
        snprintf (e->detail, sizeof e->detail, "harness: out of memory for the timing sets");
        return KF_CUDA_HARNESS;
    }
    e->var = v;
    v->n = n;
    v->variant_bytes = shared;
    char why[300];
    if (kf_cuda_share_new (&v->share, kf_cuda_eval_api, e->device, shared * (size_t) n, why,
                           sizeof why)) {
        snprintf (e->detail, sizeof e->detail, "harness: sharing the timing sets: %s", why);
        return KF_CUDA_HARNESS;
    }
    int rc = 0;
    for (int s = 0; s < n && !rc; s++) {
        size_t at = (size_t) s * shared;
        for (int i = 0; i < e->n_in && !rc; i++)
            if (!(rc = kf_cuda_dbuf_new (&v->in_d[s][i], e->in[i].bytes, &v->share, &at)))
                rc = kf_cuda_eval_api->Malloc (&v->src_d[s][i],
                                               e->in[i].bytes ? e->in[i].bytes : 1);
        for (int o = 0; o < e->n_out && !rc; o++)
            if (!(rc = kf_cuda_dbuf_new (&v->out_d[s][o], e->out[o].bytes, &v->share, &at)))
                rc = kf_cuda_dbuf_new (&v->ref_d[s][o], e->out[o].bytes, NULL, NULL);
    }
    return rc ? kf_cuda_harness (e, rc, "allocating the timing sets") : KF_CUDA_OK;
}

int
kf_cuda_variants_setup (kf_cuda_eval_t *e, uint64_t seed)
{
    struct kf_cuda_variants_s *v = e->var;
    if (!v)
        return KF_CUDA_OK;
    for (int s = 0; s < v->n; s++) {
        int st = s_fill (e, v, seed, s);
        if (st)
            return st;
    }
    if (e->rd)
        e->ctx.scalars = e->rd->values;
    return kf_cuda_runner_layout (e, &v->share, v->in_d[0], v->out_d[0], v->n, v->variant_bytes);
}

int
kf_cuda_variants_poison (kf_cuda_eval_t *e)
{
    struct kf_cuda_variants_s *v = e->var;
    int rc = 0;
    for (int s = 0; v && s < v->n && !rc; s++)
        for (int o = 0; o < e->n_out && !rc; o++)
            rc = kf_cuda_eval_api->Memcpy (v->out_d[s][o].data, e->poison_d[o],
                                           e->out[o].bytes, KF_CUDA_D2D);
    return kf_cuda_harness (e, rc, "poisoning the timing sets' outputs");
}

int
kf_cuda_variants_check (kf_cuda_eval_t *e, int calls, const char *when)
{
    struct kf_cuda_variants_s *v = e->var;
    if (!v)
        return KF_CUDA_OK;
    int used = calls < v->n ? calls : v->n;
    for (int s = 0; s < used; s++) {
        char where[128];
        snprintf (where, sizeof where, "%s, input set %d of %d", when, s + 1, v->n);
        int st = kf_cuda_check_buffers (e, v->in_d[s], v->src_d[s], v->out_d[s], where);
        if (!st)
            st = kf_cuda_compare_buffers (e, v->out_d[s], v->ref_d[s], where);
        if (st)
            return st;
    }
    return KF_CUDA_OK;
}
