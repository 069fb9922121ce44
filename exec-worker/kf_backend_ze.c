/*  kf_backend_ze.c - the Level Zero evaluation harness.
 *
 *  NOT YET RUN ON HARDWARE. No Intel GPU exists where this was written:
 *  the probe and the "no Level Zero device" paths run in every test; the
 *  device path below (module, kernels, buffers, command lists, timing) is
 *  written to the Level Zero 1.x specification and runs in test_ze
 *  against kf_ze_double, a test double of the loader that executes no
 *  SPIR-V, but has never executed against a real driver. docs/intel.md
 *  says what to run first on an Intel GPU host.
 *
 *  The candidate's kernels run in a process of their own (the runner,
 *  kf_runner_ze.c), on a context of its own, on inputs and outputs the
 *  judge shares with it in a memfd (kf_dev_share.h, as for OpenCL); this
 *  process holds the reference, the answers, the clock and the verdict
 *  channel.
 *
 *  A candidate is OpenCL C compiled to SPIR-V, with no host code: the
 *  artifact is a KF-SPIRV bundle and its kf-launch lines are the whole
 *  "kf_forward" (kf_ze_launch.h). The harness builds the module, creates
 *  each named kernel, sets its arguments from the plan (tensor pointers,
 *  scratch, local memory, values) and appends the launches, with a
 *  barrier between consecutive ones, to a command list it executes.
 *
 *  The reference is another bundle (run on the device the same way) or a
 *  host shared object, the task's C reference, run on the host over host
 *  copies of the same inputs. Correctness follows the CUDA harness step by
 *  step and judges by the same code (kf_eval_check): inputs drawn on the
 *  host and copied up, read back after every candidate call to prove they
 *  did not change; outputs poisoned before every call and compared on the
 *  host; every candidate tensor between canaries, read back after every
 *  call.
 *
 *  The files: this one (buffers, the device operations, setup and the
 *  child's main line), kf_ze_program.c (modules, kernels, launches),
 *  kf_ze_device.c (the device, its queue, staging, the copy bandwidth,
 *  the probe), and kf_dev_share.c (the candidate's process); their
 *  shared state is kf_ze_eval.h. The steps of a correctness set, the
 *  timing samples and the result are the OpenCL judge's too, written
 *  once above the device operations this file gives them (kf_dev_ops.h:
 *  kf_dev_check.c, kf_dev_timing.c), under the per-set loop
 *  (kf_eval_set.c) and the timing protocol (kf_eval_protocol.c) every
 *  judge shares.
 */
#include "kf_backend.h"
#include "kf_file.h"
#include "kf_ze_eval.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_MAX_ARTIFACT ((size_t) 256 << 20)   // a bundle; a larger file is no bundle
#define S_FLUSH_MAX ((size_t) 1 << 30)

// --------------------------------------------------------------------------
//  Device buffers between canaries (as in kf_cuda_tensors.c)

static uint32_t
s_dbuf_new (kf_ze_dbuf_t *b, size_t bytes)
{
    memset (b, 0, sizeof *b);
    size_t body = (bytes + KF_ZE_PAD - 1) / KF_ZE_PAD * KF_ZE_PAD;
    b->alloc = KF_ZE_PAD + body + KF_ZE_PAD;
    uint32_t rc = kf_ze_device_alloc ((void **) &b->base, b->alloc);
    if (rc) {
        b->base = NULL;
        return rc;
    }
    b->data = b->base + KF_ZE_PAD;
    b->bytes = bytes;
    unsigned char canary = 0xA5;
    rc = kf_ze_dev.api->CommandListAppendMemoryFill (kf_ze_dev.list, b->base, &canary, 1, b->alloc,
                                                NULL, 0, NULL);
    return rc ? rc : kf_ze_submit ();
}

int
kf_ze_harness (kf_ze_eval_t *e, uint32_t rc, const char *what)
{
    if (rc == 0)
        return KF_ZE_OK;
    snprintf (e->detail, sizeof e->detail, "harness: %s: %s", what, kf_ze_err (rc));
    return KF_ZE_HARNESS;
}

// --------------------------------------------------------------------------
//  The device operations the shared correctness pass runs on
//  (kf_dev_ops.h): the reference's buffers, its launches.

static kf_ze_dbuf_t *
s_ref_buf (kf_ze_eval_t *e, int t)
{
    return t < e->n_in ? &e->in_d[t] : &e->ref_d[t - e->n_in];
}

static long
s_copy_in (void *dev, int t, const void *src, size_t bytes)
{
    return kf_ze_upload (s_ref_buf (dev, t)->data, src, bytes);
}

static long
s_copy_out (void *dev, int t, void *dst, size_t bytes)
{
    return kf_ze_download (dst, s_ref_buf (dev, t)->data, bytes);
}

static int
s_launch_ref (void *dev, int calls, long *rc)
{
    kf_ze_eval_t *e = dev;
    *rc = 0;
    int st = KF_ZE_OK;
    kf_eval_set_phase ('R');
    for (int k = 0; k < calls && !st; k++)
        st = kf_ze_append_call (e, &e->ref, e->ref_d);
    if (st) {
        kf_eval_set_phase ('H');
        return st;
    }
    uint32_t done = kf_ze_submit ();
    kf_eval_set_phase ('H');
    *rc = done;
    return done ? KF_ZE_CRASHED : KF_ZE_OK;
}

//  A fill of BYTES of the flush buffer with PATTERN, waited for.
static long
s_fill (kf_ze_eval_t *e, unsigned char pattern, size_t bytes)
{
    uint32_t rc = kf_ze_dev.api->CommandListAppendMemoryFill (kf_ze_dev.list, e->flush, &pattern,
                                                              1, bytes, NULL, 0, NULL);
    if (rc) {
        kf_ze_dev.api->CommandListReset (kf_ze_dev.list);
        return rc;
    }
    return kf_ze_submit ();
}

static long
s_flush_salted (void *dev, unsigned salt)
{
    kf_ze_eval_t *e = dev;
    return s_fill (e, (unsigned char) (salt & 0x7f), e->flush_bytes);
}

static long
s_tiny (void *dev)
{
    return s_fill (dev, 0, 256);
}

static const char *
s_err (long rc)
{
    return kf_ze_err ((uint32_t) rc);
}

static const kf_dev_ops_t s_ops = {
    .copy_in = s_copy_in, .copy_out = s_copy_out, .launch_ref = s_launch_ref,
    .flush = s_flush_salted, .tiny = s_tiny, .err = s_err
};

//  The shared pass's view of E, before its tensors are read; a host
//  reference's function is set when it is loaded.
static void
s_judge_init (kf_ze_eval_t *e)
{
    e->judge = (kf_dev_judge_t) {
        .ops = &s_ops, .dev = e, .in = e->in, .out = e->out, .in_h = e->in_h,
        .back_h = e->back_h, .ref_h = e->ref_h, .cand_h = e->cand_h, .poison_h = e->poison_h,
        .in_t = e->in_t, .ref_t = e->ref_t, .host_ctx = &e->host_ctx, .tol = &e->tol,
        .worst = &e->worst, .share = &e->share, .detail = e->detail,
        .detail_size = sizeof e->detail
    };
}

// --------------------------------------------------------------------------
//  Setup and the child's entry

static int
s_setup (kf_ze_eval_t *e, const char *dir, json_t *task)
{
    //  The host buffers (kf_dev_check.c), then the reference's device
    //  buffers, each between canaries, and staging for the largest.
    int st = kf_dev_host_tensors (&e->judge, task, e->in, e->out, &e->scalar_names, &e->scalars,
                                  &e->host_ctx);
    e->n_in = e->judge.n_in;
    e->n_out = e->judge.n_out;
    if (st)
        return st;
    uint32_t rc;
    size_t largest = 64;
    for (int t = 0; t < e->n_in + e->n_out; t++) {
        size_t bytes = t < e->n_in ? e->in[t].bytes : e->out[t - e->n_in].bytes;
        if ((rc = s_dbuf_new (s_ref_buf (e, t), bytes)))
            return kf_ze_harness (e, rc, t < e->n_in ? "allocating inputs"
                                                     : "allocating outputs");
        largest = bytes > largest ? bytes : largest;
    }
    if ((rc = kf_ze_stage_reserve (largest + 2 * KF_ZE_PAD)))
        return kf_ze_harness (e, rc, "allocating the host staging buffer");

    //  The reference: a bundle, or a host shared object (a C reference).
    char path[4200];
    size_t size = 0;
    e->ref.what = "reference";
    e->cand.what = "candidate";
    snprintf (path, sizeof path, "%s/reference.so", dir);
    e->ref.bytes = kf_file_read (path, S_MAX_ARTIFACT, &size);
    if (e->ref.bytes && kf_ze_is_bundle (e->ref.bytes, size)) {
        if ((st = kf_ze_side_build (e, &e->ref, size, task))
            || (st = kf_ze_bind (e, &e->ref, e->ref_d)))
            return st;
    }
    else {
        void *lib = dlopen (path, RTLD_NOW | RTLD_LOCAL);
        e->ref.fn = lib ? (kf_ze_forward_fn *) dlsym (lib, "kf_forward") : NULL;
        if (!e->ref.fn) {
            snprintf (e->detail, sizeof e->detail, "reference does not load: %s", dlerror ());
            return KF_ZE_REF_FAILED;
        }
        e->ref.host = true;
        e->judge.ref_fn = e->ref.fn;
    }
    //  The candidate is read and built only in its own process
    //  (kf_runner_ze.c): building runs none of its code, but nothing of
    //  it need be here.
    return KF_ZE_OK;
}

//  The cache flush a timed call finds before it, waited for.
static void
s_flush (void *arg)
{
    kf_ze_eval_t *e = arg;
    unsigned char pattern = 0x5a;
    if (e->flush && kf_ze_dev.api->CommandListAppendMemoryFill (kf_ze_dev.list, e->flush,
                                                                &pattern, 1, e->flush_bytes,
                                                                NULL, 0, NULL) == 0)
        kf_ze_submit ();
    else
        kf_ze_dev.api->CommandListReset (kf_ze_dev.list);
}

static void
s_eval_free (kf_ze_eval_t *e)
{
    //  Device memory and the context go with the process, which ends
    //  right after this.
    kf_dev_share_end (&e->share);
    kf_dev_judge_free (&e->judge);
    if (kf_ze_dev.api)
        kf_ze_side_free (&e->ref);
    for (int i = 0; i < KF_ZE_MAX_TENSORS; i++) {
        free (e->in_h[i]);
        free (e->back_h[i]);
        free (e->ref_h[i]);
        free (e->cand_h[i]);
        free (e->poison_h[i]);
    }
    free (e->ref.bytes);
    free (e->cand.bytes);
    free (e->scalar_names);
    free (e->scalars);
    free (e);
}

static int
s_ze_child_main (const char *dir, json_t *job)
{
    if (kf_eval_child_begin (dir) != 0)
        return 2;
    char why[512];
    int device = (int) json_integer_value (json_object_get (job, "device"));
    if (kf_ze_find_device (device, why, sizeof why)) {
        kf_eval_write_verdict (dir, "harness_failed", why);
        return 0;
    }
    char reason[400];
    if (kf_ze_open_queue (reason, sizeof reason)) {
        snprintf (why, sizeof why, "no Level Zero device: %s", reason);
        kf_eval_write_verdict (dir, "harness_failed", why);
        return 0;
    }
    kf_ze_eval_t *e = calloc (1, sizeof *e);
    if (!e)
        return 2;
    json_t *task = json_object_get (job, "task");
    json_t *timing = json_object_get (job, "timing");
    uint64_t seed = (uint64_t) json_integer_value (json_object_get (job, "seed"));
    kf_eval_tol_from_task (task, &e->tol, &e->worst);
    kf_eval_timing_t tm = { 0 };
    json_t *result = NULL;
    double copy_gbs = 0;

    s_judge_init (e);
    e->judge.seed = seed;
    int st = s_setup (e, dir, task);
    kf_dev_share_init (&e->share, e->n_in, e->in, e->n_out, e->out, KF_ZE_PAD,
                       kf_ze_dev.memory_bytes, e->detail, sizeof e->detail);
    if (!st && kf_ze_copy_bandwidth (&copy_gbs, why, sizeof why)) {
        snprintf (e->detail, sizeof e->detail, "harness: %.400s", why);
        st = KF_ZE_HARNESS;
    }
    size_t flush_bytes = 2 * (size_t) (kf_ze_dev.cache_bytes > 0 ? kf_ze_dev.cache_bytes : 64 << 20);
    if (flush_bytes > S_FLUSH_MAX)
        flush_bytes = S_FLUSH_MAX;
    if (!st && (st = kf_ze_harness (e, kf_ze_device_alloc (&e->flush, flush_bytes),
                                "allocating the cache flush buffer")) == KF_ZE_OK)
        e->flush_bytes = flush_bytes;

    //  The candidate's process, its round trip timed after the same
    //  flush a timed call finds.
    char select[64];
    snprintf (select, sizeof select, "level-zero:%d", device);
    if (!st)
        st = kf_dev_share_start (&e->share, dir, job, task, select, s_flush, e);

    if (!st)
        st = kf_dev_correctness (&e->judge, 5);
    if (st == KF_ZE_OK)
        st = kf_dev_time (&e->judge, timing, &tm);

    json_t *dev = json_pack ("{s:s, s:i}", "name", kf_ze_dev.props.name, "index", device);
    result = kf_dev_result (&e->judge, st, &tm, copy_gbs, kf_ze_dev.cache_bytes, dev, dir);
    if (result)
        kf_eval_write_result (dir, result);
    json_decref (result);
    kf_eval_timing_free (&tm);
    s_eval_free (e);
    return 0;
}

const kf_exec_backend_t kf_exec_backend_ze = {
    .name = "level-zero",
    .child_main = s_ze_child_main,
    .devices = NULL,
    .probe = kf_ze_probe,
    .unlimited_address_space = 1,
};
