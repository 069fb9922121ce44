/*  kf_cuda_tensors.c - the CUDA judge's tensors (kf_cuda_eval.h): device
 *  buffers between canaries, scratch for the kernels, a case's setup, the
 *  inputs staged (drawn on the device or copied up) and the outputs
 *  poisoned before each call, and the checks after it (inputs unchanged,
 *  canaries intact, outputs compared with the right ones on the device).
 *
 *  GPU memory has no guard pages, so every device buffer sits between two
 *  canary regions that are read back after each call.
 */
#include "kf_cuda_eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_PAD 256                       // canary bytes around device buffers

// --------------------------------------------------------------------------
//  Device buffers between canaries

size_t
kf_cuda_dbuf_size (size_t bytes)
{
    return S_PAD + (bytes + S_PAD - 1) / S_PAD * S_PAD + S_PAD;
}

//  A buffer of its own, or, with SHARE, carved at *AT out of that
//  allocation (what the candidate's process sees).
int
kf_cuda_dbuf_new (kf_cuda_dbuf_t *b, size_t bytes, const kf_cuda_share_t *share, size_t *at)
{
    memset (b, 0, sizeof *b);
    b->alloc = kf_cuda_dbuf_size (bytes);
    if (share) {
        b->base = (char *) (uintptr_t) share->base + *at;
        b->shared = true;
        *at += b->alloc;
    }
    else {
        int rc = kf_cuda_eval_api->Malloc ((void **) &b->base, b->alloc);
        if (rc) {
            b->base = NULL;
            return rc;
        }
    }
    b->data = b->base + S_PAD;
    b->bytes = bytes;
    return kf_cuda_eval_api->Memset (b->base, 0xA5, b->alloc);
}

//  0 when both canaries hold, 1 when the one before was written, 2 the
//  one after; or -1 when they could not be read (*RC set).
int
kf_cuda_dbuf_canaries (const kf_cuda_dbuf_t *b, int *rc)
{
    unsigned char front[S_PAD], back[2 * S_PAD];
    size_t tail = b->alloc - S_PAD - b->bytes;
    *rc = kf_cuda_eval_api->Memcpy (front, b->base, S_PAD, KF_CUDA_D2H);
    if (!*rc)
        *rc = kf_cuda_eval_api->Memcpy (back, b->data + b->bytes, tail, KF_CUDA_D2H);
    if (*rc)
        return -1;
    for (size_t i = 0; i < S_PAD; i++)
        if (front[i] != 0xA5)
            return 1;
    for (size_t i = 0; i < tail; i++)
        if (back[i] != 0xA5)
            return 2;
    return 0;
}

// --------------------------------------------------------------------------
//  Scratch: device memory handed out in call order and kept between
//  calls, so a kernel that asks for the same sizes every call does not
//  pay a cudaMalloc inside the timed loop.

void *
kf_cuda_scratch_alloc (void *state, size_t bytes)
{
    kf_cuda_scratch_t *s = state;
    if (s->used >= KF_CUDA_MAX_SCRATCH)
        return NULL;
    int k = s->used;
    if (k < s->n && s->size[k] >= bytes) {
        s->used++;
        return s->ptr[k];
    }
    if (k < s->n && s->ptr[k]) {
        kf_cuda_eval_api->Free (s->ptr[k]);
        s->ptr[k] = NULL;
        s->size[k] = 0;
    }
    void *p = NULL;
    if (kf_cuda_eval_api->Malloc (&p, bytes ? bytes : 1)) {
        kf_cuda_eval_api->GetLastError ();
        return NULL;
    }
    s->ptr[k] = p;
    s->size[k] = bytes;
    if (k >= s->n)
        s->n = k + 1;
    s->used++;
    return p;
}

//  Poisons BUFS from the device's poison images and, with INPUTS, copies
//  the staged inputs into the kernels' input buffers; then waits for the
//  device, so no kernel (on any stream) can run before these copies land.
int
kf_cuda_stage (kf_cuda_eval_t *e, kf_cuda_dbuf_t *bufs, bool inputs)
{
    int rc = 0;
    for (int i = 0; inputs && i < e->n_in && !rc; i++)
        rc = kf_cuda_eval_api->Memcpy (e->in_d[i].data, e->src_d[i], e->in[i].bytes, KF_CUDA_D2D);
    for (int o = 0; o < e->n_out && !rc; o++)
        rc = kf_cuda_eval_api->Memcpy (bufs[o].data, e->poison_d[o], e->out[o].bytes, KF_CUDA_D2D);
    if (!rc)
        rc = kf_cuda_eval_api->DeviceSynchronize ();
    return kf_cuda_harness (e, rc, "staging inputs and poisoning outputs");
}

int
kf_cuda_poison_outputs (kf_cuda_eval_t *e, kf_cuda_dbuf_t *bufs)
{
    return kf_cuda_stage (e, bufs, false);
}

//  A judge call that failed: the device, not a kernel, is at fault.
static int
s_judge_failed (kf_cuda_eval_t *e, int rc, const char *what)
{
    snprintf (e->detail, sizeof e->detail, "harness: %s on the device: CUDA error %d", what, rc);
    return KF_CUDA_HARNESS;
}

//  SET's inputs into the staging buffers: the exported ones copied up, or
//  drawn on the device (the values the host's kf_eval_fill would draw).
int
kf_cuda_draw_inputs (kf_cuda_eval_t *e, uint64_t seed, int set)
{
    const kf_eval_refdata_t *rd = e->rd;
    for (int i = 0; i < e->n_in; i++) {
        int rc;
        if (rd) {
            rc = kf_cuda_eval_api->Memcpy (e->src_d[i], e->data + rd->in_off[set * rd->n_in + i],
                                e->in[i].bytes, KF_CUDA_H2D);
            if (rc)
                return kf_cuda_harness (e, rc, "copying inputs to the device");
            continue;
        }
        kf_elem_dist_t d;
        kf_eval_dist (json_object_get (e->in[i].spec, "dist"), &d);
        rc = kf_cuda_judge_fill (e->judge, &d, e->in[i].dtype, e->src_d[i], e->in[i].numel,
                                 kf_eval_input_seed (seed, set, i));
        if (rc)
            return s_judge_failed (e, rc, "drawing inputs");
    }
    return KF_CUDA_OK;
}

//  A probe's fingerprints of this set: its inputs and the reference's
//  outputs, read back (a probe runs once per task, so the copies do not
//  matter).
int
kf_cuda_fingerprint (kf_cuda_eval_t *e)
{
    uint64_t h = 0;
    for (int i = 0; i < e->n_in; i++) {
        size_t n = e->in[i].bytes ? e->in[i].bytes : 1;
        if (!e->in_h[i] && !(e->in_h[i] = malloc (n))) {
            snprintf (e->detail, sizeof e->detail, "harness: out of memory for a probe's inputs");
            return KF_CUDA_HARNESS;
        }
        int rc = kf_cuda_eval_api->Memcpy (e->in_h[i], e->src_d[i], e->in[i].bytes, KF_CUDA_D2H);
        if (rc)
            return kf_cuda_harness (e, rc, "reading inputs back");
        h = kf_eval_hash (e->in_h[i], e->in[i].bytes, h);
    }
    kf_eval_degen_inputs (e->degen, h);
    for (int o = 0; o < e->n_out; o++) {
        size_t n = e->out[o].bytes ? e->out[o].bytes : 1;
        if (!e->ref_h[o] && !(e->ref_h[o] = malloc (n))) {
            snprintf (e->detail, sizeof e->detail, "harness: out of memory for a probe's outputs");
            return KF_CUDA_HARNESS;
        }
        int rc = kf_cuda_eval_api->Memcpy (e->ref_h[o], e->ref_d[o].data, e->out[o].bytes, KF_CUDA_D2H);
        if (rc)
            return kf_cuda_harness (e, rc, "reading reference outputs");
        kf_eval_degen_output (e->degen, o, &e->out[o], e->ref_h[o],
                              e->tol.atol_dtype[e->out[o].dtype]);
    }
    kf_eval_degen_end_set (e->degen);
    return KF_CUDA_OK;
}

//  After a candidate call: inputs as they were, canaries intact (of the
//  inputs IN_D, staged from SRC_D, and the candidate's outputs OUT_D).
int
kf_cuda_check_buffers (kf_cuda_eval_t *e, const kf_cuda_dbuf_t *in_d, void *const *src_d,
                       const kf_cuda_dbuf_t *out_d, const char *when)
{
    int rc;
    for (int i = 0; i < e->n_in; i++) {
        uint64_t differing = 0;
        rc = kf_cuda_judge_differ (e->judge, in_d[i].data, src_d[i], e->in[i].bytes,
                                   &differing);
        if (rc)
            return s_judge_failed (e, rc, "checking inputs");
        if (differing) {
            snprintf (e->detail, sizeof e->detail,
                      "%s: inputs changed: the candidate wrote to input '%s' (%llu of %zu words differ)",
                      when, e->in[i].name, (unsigned long long) differing,
                      (e->in[i].bytes + 7) / 8);
            return KF_CUDA_INCORRECT;
        }
    }
    for (int t = 0; t < e->n_in + e->n_out; t++) {
        const kf_cuda_dbuf_t *b = t < e->n_in ? &in_d[t] : &out_d[t - e->n_in];
        const char *name = t < e->n_in ? e->in[t].name : e->out[t - e->n_in].name;
        int where = kf_cuda_dbuf_canaries (b, &rc);
        if (where < 0)
            return kf_cuda_harness (e, rc, "reading canaries");
        if (where > 0) {
            snprintf (e->detail, sizeof e->detail, "%s: out-of-bounds write %s %s '%s'",
                      when, where == 1 ? "before" : "past the end of",
                      t < e->n_in ? "input" : "output", name);
            return KF_CUDA_CRASHED;
        }
    }
    return KF_CUDA_OK;
}

int
kf_cuda_check_memory (kf_cuda_eval_t *e, const char *when)
{
    return kf_cuda_check_buffers (e, e->in_d, e->src_d, e->cand_d, when);
}

//  The candidate's outputs OUT_D against the right ones REF_D, on the
//  device.
int
kf_cuda_compare_buffers (kf_cuda_eval_t *e, const kf_cuda_dbuf_t *out_d,
                         const kf_cuda_dbuf_t *ref_d, const char *when)
{
    int bad = 0;
    char ignored[512];
    for (int o = 0; o < e->n_out; o++) {
        kf_elem_part_t sum;
        int rc = kf_cuda_judge_compare (e->judge, e->out[o].dtype, out_d[o].data,
                                        ref_d[o].data, e->out[o].numel, e->tol.rtol,
                                        kf_eval_atol (&e->tol, e->out[o].dtype), &sum);
        if (rc)
            return s_judge_failed (e, rc, "comparing outputs");
        if (kf_eval_judge_output (&e->tol, &e->worst, &e->out[o], &sum, when,
                                  bad ? ignored : e->detail,
                                  bad ? sizeof ignored : sizeof e->detail))
            bad = 1;
    }
    return bad ? KF_CUDA_INCORRECT : KF_CUDA_OK;
}

int
kf_cuda_compare (kf_cuda_eval_t *e, const char *when)
{
    return kf_cuda_compare_buffers (e, e->cand_d, e->ref_d, when);
}

//  Frees a case's tensors; DEVICE too for a shape case whose buffers
//  must make room for the next (the main case's go with the process,
//  which ends right after the verdict, and a sticky error would fail the
//  frees anyway).
void
kf_cuda_free_tensors (kf_cuda_eval_t *e, bool device)
{
    for (int i = 0; i < KF_CUDA_MAX_TENSORS; i++) {
        free (e->in_h[i]);
        free (e->ref_h[i]);
        e->in_h[i] = e->ref_h[i] = NULL;
        if (device) {
            kf_cuda_dbuf_t *bufs[3] = { &e->in_d[i], &e->ref_d[i], &e->cand_d[i] };
            for (int k = 0; k < 3; k++)
                if (bufs[k]->base) {
                    if (!bufs[k]->shared)
                        kf_cuda_eval_api->Free (bufs[k]->base);
                    bufs[k]->base = NULL;
                }
            void **plain[2] = { &e->src_d[i], &e->poison_d[i] };
            for (int k = 0; k < 2; k++)
                if (*plain[k]) {
                    kf_cuda_eval_api->Free (*plain[k]);
                    *plain[k] = NULL;
                }
        }
    }
    if (device)
        kf_cuda_share_free (&e->share);
    free (e->scalar_names);
    free (e->scalars);
    e->scalar_names = NULL;
    e->scalars = NULL;
}

//  BYTES at device address P (N elements of DTYPE) set to the poison
//  pattern: up to a mebibyte poisoned on the host and copied up, then
//  doubled on the device until it covers the tensor.
static int
s_poison_image (void *p, int dtype, size_t n, size_t bytes)
{
    if (n == 0)
        return 0;
    size_t esz = bytes / n, chunk_n = n < ((size_t) 1 << 20) / esz ? n : ((size_t) 1 << 20) / esz;
    size_t done = chunk_n * esz;
    void *chunk = malloc (done);
    if (!chunk)
        return -1;
    kf_eval_poison (dtype, chunk, chunk_n);
    int rc = kf_cuda_eval_api->Memcpy (p, chunk, done, KF_CUDA_H2D);
    free (chunk);
    while (!rc && done < bytes) {
        size_t k = done < bytes - done ? done : bytes - done;
        rc = kf_cuda_eval_api->Memcpy ((char *) p + done, p, k, KF_CUDA_D2D);
        done += k;
    }
    return rc;
}

//  The runner maps the shared allocation and learns where each tensor's
//  data lies in it (in each of VARIANTS sets laid out alike), and the
//  scalars' names (the exported data's, or the task's).
int
kf_cuda_runner_layout (kf_cuda_eval_t *e, const kf_cuda_share_t *share,
                       const kf_cuda_dbuf_t *in_d, const kf_cuda_dbuf_t *out_d, int variants,
                       size_t variant_bytes)
{
    static kf_run_layout_t l;
    memset (&l, 0, sizeof l);
    l.n_in = (uint32_t) e->n_in;
    l.n_out = (uint32_t) e->n_out;
    l.variants = (uint32_t) variants;
    l.variant_bytes = variant_bytes;
    l.file_bytes = share->bytes;
    for (int t = 0; t < e->n_in + e->n_out; t++) {
        const kf_eval_spec_t *sp = t < e->n_in ? &e->in[t] : &e->out[t - e->n_in];
        const kf_cuda_dbuf_t *b = t < e->n_in ? &in_d[t] : &out_d[t - e->n_in];
        kf_tensor_t kt;
        kf_eval_tensor (&kt, sp, b->data);
        l.t[t].dtype = kt.dtype;
        l.t[t].rank = kt.rank;
        for (int d = 0; d < kt.rank && d < KF_MAX_RANK; d++)
            l.t[t].shape[d] = kt.shape[d];
        l.t[t].offset = (uint64_t) (b->data - (char *) (uintptr_t) share->base);
        l.t[t].bytes = b->bytes;
    }
    int n = e->rd ? e->rd->n_scalars : e->ctx.n_scalars;
    const char *const *names = e->rd ? (const char *const *) e->rd->name_ptrs : e->scalar_names;
    if (n > KF_RUN_MAX_SCALARS) {
        snprintf (e->detail, sizeof e->detail, "task: more than %d scalars", KF_RUN_MAX_SCALARS);
        return KF_CUDA_REF_FAILED;
    }
    l.n_names = (uint32_t) n;
    for (int k = 0; k < n; k++)
        snprintf (l.names[k], KF_RUN_NAME, "%s", names[k]);
    kf_run_reply_t reply;
    if (kf_runner_setup (e->runner, share->fd, &l, &reply) == 0)
        return KF_CUDA_OK;
    snprintf (e->detail, sizeof e->detail, "%s", reply.detail);
    return reply.status == KF_RUN_CRASHED ? KF_CUDA_CRASHED : KF_CUDA_HARNESS;
}

int
kf_cuda_share_with_runner (kf_cuda_eval_t *e)
{
    return kf_cuda_runner_layout (e, &e->share, e->in_d, e->cand_d, 1, e->share.bytes);
}

//  A case's tensors: device buffers between canaries and host images for
//  TASK's (possibly reshaped) inputs and outputs, and the scalars.
int
kf_cuda_setup (kf_cuda_eval_t *e, json_t *task)
{
    json_t *ins = json_object_get (task, "inputs");
    json_t *outs = json_object_get (task, "outputs");
    e->n_in = (int) json_array_size (ins);
    e->n_out = (int) json_array_size (outs);
    if (e->n_out < 1 || e->n_in > KF_CUDA_MAX_TENSORS || e->n_out > KF_CUDA_MAX_TENSORS) {
        snprintf (e->detail, sizeof e->detail, "task: need 1 to 32 outputs and at most 32 inputs");
        return KF_CUDA_REF_FAILED;
    }
    int rc;
    size_t shared_bytes = 0, at = 0;
    for (int i = 0; i < e->n_in; i++) {
        if (kf_eval_spec (&e->in[i], json_array_get (ins, (size_t) i), e->detail, sizeof e->detail))
            return KF_CUDA_REF_FAILED;
        shared_bytes += kf_cuda_dbuf_size (e->in[i].bytes);
    }
    for (int o = 0; o < e->n_out; o++) {
        if (kf_eval_spec (&e->out[o], json_array_get (outs, (size_t) o), e->detail, sizeof e->detail))
            return KF_CUDA_REF_FAILED;
        shared_bytes += kf_cuda_dbuf_size (e->out[o].bytes);
    }
    //  What the candidate's process sees: the kernels' inputs and the
    //  candidate's outputs, in one allocation it maps; nothing else.
    const kf_cuda_share_t *share = NULL;
    if (e->runner) {
        char why[300];
        if (kf_cuda_share_new (&e->share, kf_cuda_eval_api, e->device, shared_bytes, why,
                               sizeof why)) {
            snprintf (e->detail, sizeof e->detail, "harness: sharing the candidate's tensors: %s",
                      why);
            return KF_CUDA_HARNESS;
        }
        share = &e->share;
    }
    for (int i = 0; i < e->n_in; i++) {
        size_t n = e->in[i].bytes ? e->in[i].bytes : 1;
        if ((rc = kf_cuda_dbuf_new (&e->in_d[i], e->in[i].bytes, share, &at))
            || (rc = kf_cuda_eval_api->Malloc (&e->src_d[i], n)))
            return kf_cuda_harness (e, rc, "allocating inputs");
        kf_eval_tensor (&e->in_t[i], &e->in[i], e->in_d[i].data);
    }
    for (int o = 0; o < e->n_out; o++) {
        size_t n = e->out[o].bytes ? e->out[o].bytes : 1;
        //  Separate buffers: outputs never alias inputs or each other.
        if ((rc = kf_cuda_dbuf_new (&e->ref_d[o], e->out[o].bytes, NULL, NULL))
            || (rc = kf_cuda_dbuf_new (&e->cand_d[o], e->out[o].bytes, share, &at))
            || (rc = kf_cuda_eval_api->Malloc (&e->poison_d[o], n))
            || (rc = s_poison_image (e->poison_d[o], e->out[o].dtype, e->out[o].numel,
                                     e->out[o].bytes)))
            return kf_cuda_harness (e, rc, "allocating outputs");
        kf_eval_tensor (&e->ref_t[o], &e->out[o], e->ref_d[o].data);
        kf_eval_tensor (&e->cand_t[o], &e->out[o], e->cand_d[o].data);
    }
    json_t *scalars = json_object_get (task, "scalars");
    size_t n_scalars = json_object_size (scalars);
    e->scalar_names = calloc (n_scalars + 1, sizeof *e->scalar_names);
    e->scalars = calloc (n_scalars + 1, sizeof *e->scalars);
    if (!e->scalar_names || !e->scalars) {
        snprintf (e->detail, sizeof e->detail, "harness: out of memory for scalars");
        return KF_CUDA_HARNESS;
    }
    const char *key;
    json_t *value;
    e->ctx.n_scalars = 0;
    json_object_foreach (scalars, key, value) {
        e->scalar_names[e->ctx.n_scalars] = key;
        e->scalars[e->ctx.n_scalars++] = json_number_value (value);
    }
    e->ctx.backend = KF_BACKEND_CUDA;
    e->ctx.stream = e->stream;
    e->ctx.scalar_names = e->scalar_names;
    e->ctx.scalars = e->scalars;
    e->ctx.scratch_alloc = kf_cuda_scratch_alloc;
    e->ctx.scratch_state = &e->scratch;
    return e->runner ? kf_cuda_share_with_runner (e) : KF_CUDA_OK;
}
