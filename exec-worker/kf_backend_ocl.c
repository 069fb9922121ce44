/*  kf_backend_ocl.c - the OpenCL evaluation harness.
 *
 *  Runs on any OpenCL 1.2 platform the ICD loader finds; exercised in CI
 *  on PoCL (the host CPU, Debian's pocl-opencl-icd). A candidate is the
 *  compile worker's KF-SPIRV bundle for an OpenCL C source, as for Level
 *  Zero (docs/intel.md, "The contract"): its kf-launch lines, planned by
 *  the same reader (kf_ze_launch.h), are the whole "kf_forward". This
 *  backend builds the bundle's SPIR-V where the device takes IL, else its
 *  source with the build's -D flags (the build log, when it fails, is
 *  the load failure's detail), creates each named kernel, sets its
 *  arguments from the plan and enqueues the launches in order on one
 *  in-order queue.
 *
 *  The reference is another bundle (run on the device the same way) or a
 *  host shared object, the task's C reference, run on the host over host
 *  copies of the same inputs. Correctness follows the Level Zero and CUDA
 *  harnesses step by step and judges by the same code (kf_eval_check):
 *  inputs drawn on the host and copied up, read back after every
 *  candidate call to prove they did not change; outputs poisoned before
 *  every call and compared on the host; every candidate tensor between
 *  canaries, read back after every call.
 *
 *  The candidate's kernels run in a process of their own (the runner,
 *  kf_runner_ocl.c), on inputs and outputs the judge shares with it
 *  (kf_dev_share.c, as for Level Zero); this process holds the reference,
 *  the answers, the clock and the verdict channel.
 *
 *  The files: this one (buffers, the device operations, setup and the
 *  child's main line), kf_ocl_program.c (programs, kernels, launches),
 *  kf_ocl_device.c (the device, copies, the capabilities) and
 *  kf_dev_share.c (the candidate's process); their shared state is
 *  kf_ocl_eval.h. The steps of a correctness set, the timing samples and
 *  the result are the Level Zero judge's too, written once above the
 *  device operations this file gives them (kf_dev_ops.h: kf_dev_check.c,
 *  kf_dev_timing.c), under the per-set loop (kf_eval_set.c) and the
 *  timing protocol (kf_eval_protocol.c) every judge shares.
 */
#include "kf_backend.h"
#include "kf_file.h"
#include "kf_ocl_eval.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define S_MAX_ARTIFACT ((size_t) 256 << 20)   // a bundle; a larger file is no bundle
#define S_FLUSH_MAX ((size_t) 256 << 20)

// --------------------------------------------------------------------------
//  Device buffers between canaries

static kf_cl_int
s_dbuf_new (kf_ocl_dbuf_t *b, size_t bytes)
{
    memset (b, 0, sizeof *b);
    size_t pad = kf_ocl_dev.pad;
    size_t body = (bytes + pad - 1) / pad * pad;
    b->alloc = pad + (body ? body : pad) + pad;
    b->bytes = bytes;
    kf_cl_int rc = kf_ocl_alloc (&b->base, b->alloc);
    unsigned char canary = 0xA5;
    if (!rc)
        rc = kf_ocl_dev.api->EnqueueFillBuffer (kf_ocl_dev.queue, b->base, &canary, 1, 0,
                                                b->alloc, 0, NULL, NULL);
    kf_cl_buffer_region_t region = { pad, bytes ? bytes : 1 };
    if (!rc)
        b->data = kf_ocl_dev.api->CreateSubBuffer (b->base, KF_CL_MEM_READ_WRITE,
                                                   KF_CL_BUFFER_CREATE_TYPE_REGION, &region, &rc);
    return rc;
}

int
kf_ocl_harness (kf_ocl_eval_t *e, kf_cl_int rc, const char *what)
{
    if (rc == 0)
        return KF_OCL_OK;
    snprintf (e->detail, sizeof e->detail, "harness: %s: %s", what, kf_ocl_err (rc));
    return KF_OCL_HARNESS;
}

// --------------------------------------------------------------------------
//  The device operations the shared correctness pass runs on
//  (kf_dev_ops.h): the reference's buffers, its launches.

static kf_ocl_dbuf_t *
s_ref_buf (kf_ocl_eval_t *e, int t)
{
    return t < e->n_in ? &e->in_d[t] : &e->ref_d[t - e->n_in];
}

static long
s_copy_in (void *dev, int t, const void *src, size_t bytes)
{
    return kf_ocl_upload (s_ref_buf (dev, t)->data, src, 0, bytes);
}

static long
s_copy_out (void *dev, int t, void *dst, size_t bytes)
{
    return kf_ocl_download (dst, s_ref_buf (dev, t)->data, 0, bytes);
}

static int
s_launch_ref (void *dev, int calls, long *rc)
{
    kf_ocl_eval_t *e = dev;
    kf_cl_int done = 0;
    int st = KF_OCL_OK;
    kf_eval_set_phase ('R');
    for (int k = 0; k < calls && !st; k++)
        st = kf_ocl_enqueue_call (e, &e->ref, e->ref_d, NULL, NULL);
    if (!st)
        done = kf_ocl_dev.api->Finish (kf_ocl_dev.queue);
    kf_eval_set_phase ('H');
    *rc = done;
    return st ? st : done ? KF_OCL_CRASHED : KF_OCL_OK;
}

//  A fill of BYTES of the flush buffer with PATTERN, waited for.
static long
s_fill (kf_ocl_eval_t *e, unsigned char pattern, size_t bytes)
{
    kf_cl_int rc = kf_ocl_dev.api->EnqueueFillBuffer (kf_ocl_dev.queue, e->flush, &pattern, 1, 0,
                                                      bytes, 0, NULL, NULL);
    return rc ? rc : kf_ocl_dev.api->Finish (kf_ocl_dev.queue);
}

static long
s_flush_salted (void *dev, unsigned salt)
{
    kf_ocl_eval_t *e = dev;
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
    return kf_ocl_err ((kf_cl_int) rc);
}

static const kf_dev_ops_t s_ops = {
    .copy_in = s_copy_in, .copy_out = s_copy_out, .launch_ref = s_launch_ref,
    .flush = s_flush_salted, .tiny = s_tiny, .err = s_err
};

//  The shared pass's view of E, before its tensors are read; a host
//  reference's function is set when it is loaded.
static void
s_judge_init (kf_ocl_eval_t *e)
{
    e->judge = (kf_dev_judge_t) {
        .ops = &s_ops, .dev = e, .in = e->in, .out = e->out, .in_h = e->in_h,
        .back_h = e->back_h, .ref_h = e->ref_h, .cand_h = e->cand_h, .poison_h = e->poison_h,
        .in_t = e->in_t, .ref_t = e->ref_t, .host_ctx = &e->host_ctx, .tol = &e->tol,
        .worst = &e->worst, .share = &e->share, .detail = e->detail,
        .detail_size = sizeof e->detail, .probe = e->probe, .degen = e->probe ? &e->degen : NULL
    };
}

// --------------------------------------------------------------------------
//  Setup and the child's entry

//  The cache flush a timed call finds before it, waited for.
static void
s_flush (void *arg)
{
    kf_ocl_eval_t *e = arg;
    unsigned char pattern = 0x5a;
    if (e->flush && kf_ocl_dev.api->EnqueueFillBuffer (kf_ocl_dev.queue, e->flush, &pattern, 1,
                                                       0, e->flush_bytes, 0, NULL, NULL) == 0)
        kf_ocl_dev.api->Finish (kf_ocl_dev.queue);
}

//  The task's tensors: the host buffers (kf_dev_check.c), then the
//  reference's device buffers, each between canaries.
static int
s_tensors (kf_ocl_eval_t *e, json_t *task)
{
    int st = kf_dev_host_tensors (&e->judge, task, e->in, e->out, &e->scalar_names, &e->scalars,
                                  &e->host_ctx);
    e->n_in = e->judge.n_in;
    e->n_out = e->judge.n_out;
    if (st)
        return st;
    for (int t = 0; t < e->n_in + e->n_out; t++) {
        kf_cl_int rc = s_dbuf_new (s_ref_buf (e, t), t < e->n_in ? e->in[t].bytes
                                                                 : e->out[t - e->n_in].bytes);
        if (rc)
            return kf_ocl_harness (e, rc, t < e->n_in ? "allocating inputs"
                                                      : "allocating outputs");
    }
    return KF_OCL_OK;
}

static int
s_setup (kf_ocl_eval_t *e, const char *dir, json_t *task)
{
    int st = s_tensors (e, task);
    if (st)
        return st;
    //  The reference: a bundle, or a host shared object (a C reference).
    char path[4200];
    size_t size = 0;
    e->ref.what = "reference";
    e->cand.what = "candidate";
    snprintf (path, sizeof path, "%s/reference.so", dir);
    e->ref.bytes = kf_file_read (path, S_MAX_ARTIFACT, &size);
    if (e->ref.bytes && kf_ze_is_bundle (e->ref.bytes, size)) {
        if ((st = kf_ocl_side_build (e, &e->ref, size, task)))
            return st;
    }
    else {
        void *lib = dlopen (path, RTLD_NOW | RTLD_LOCAL);
        e->ref.fn = lib ? (kf_ocl_forward_fn *) dlsym (lib, "kf_forward") : NULL;
        if (!e->ref.fn) {
            snprintf (e->detail, sizeof e->detail, "reference does not load: %s", dlerror ());
            return KF_OCL_REF_FAILED;
        }
        e->ref.host = true;
        e->judge.ref_fn = e->ref.fn;
    }
    if (e->probe)
        return KF_OCL_OK;
    //  The candidate's source is built here first, and run only in its
    //  own process, which builds it again (kf_runner_ocl.c): a platform
    //  may need to start a program to build (PoCL links each kernel with
    //  ld), which the confined process may not. A platform with a kernel
    //  cache (PoCL's, in the runner's directory: s_platform_env) then
    //  finds it built. Building runs none of the candidate's code.
    snprintf (path, sizeof path, "%s/candidate.so", dir);
    e->cand.bytes = kf_file_read (path, S_MAX_ARTIFACT, &size);
    if (!e->cand.bytes || !kf_ze_is_bundle (e->cand.bytes, size)) {
        snprintf (e->detail, sizeof e->detail, "candidate does not load: not a KF-SPIRV bundle "
                  "(an OpenCL C source built by the compile worker's spirv toolchain)");
        return KF_OCL_LOAD_FAILED;
    }
    if ((st = kf_ocl_side_build (e, &e->cand, size, task)))
        return st;
    //  Asking for the binaries has PoCL compile and link every kernel now.
    size_t bin_size = 0;
    kf_ocl_api_t *api = kf_ocl_dev.api;
    if (api->GetProgramInfo (e->cand.program, KF_CL_PROGRAM_BINARY_SIZES, sizeof bin_size,
                             &bin_size, NULL) == KF_CL_SUCCESS && bin_size > 0) {
        unsigned char *bin = malloc (bin_size);
        kf_eval_set_phase ('C');                // a source that takes forever is the candidate's
        if (bin)
            api->GetProgramInfo (e->cand.program, KF_CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
        kf_eval_set_phase ('H');
        free (bin);
    }
    return KF_OCL_OK;
}

//  The platform's settings that the runner must share: PoCL's kernel
//  cache in the runner's directory (so the runner finds the kernels the
//  judge built), and no per-launch specialisation (which would link
//  again at the first launch, in the runner). Other platforms ignore
//  them.
static void
s_platform_env (const char *dir)
{
    char run[4200], cache[4300];
    snprintf (run, sizeof run, "%s/run", dir);
    snprintf (cache, sizeof cache, "%s/pocl-cache", run);
    if (mkdir (run, 0700) == 0 || errno == EEXIST)
        setenv ("POCL_CACHE_DIR", cache, 1);
    setenv ("POCL_WORK_GROUP_SPECIALIZATION", "0", 1);
}

static void
s_eval_free (kf_ocl_eval_t *e)
{
    //  Device memory, programs and the context go with the process, which
    //  ends right after this.
    kf_dev_share_end (&e->share);
    kf_dev_judge_free (&e->judge);
    for (int i = 0; i < KF_OCL_MAX_TENSORS; i++) {
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
s_ocl_child_main (const char *dir, json_t *job)
{
    if (kf_eval_child_begin (dir) != 0)
        return 2;
    char why[512], buf[32];
    int device = (int) json_integer_value (json_object_get (job, "device"));
    s_platform_env (dir);
    if (kf_ocl_open (kf_ocl_selection (device, buf, sizeof buf), why, sizeof why)) {
        kf_eval_write_verdict (dir, "harness_failed", why);
        return 0;
    }
    kf_ocl_eval_t *e = calloc (1, sizeof *e);
    if (!e)
        return 2;
    json_t *task = json_object_get (job, "task");
    json_t *timing = json_object_get (job, "timing");
    uint64_t seed = (uint64_t) json_integer_value (json_object_get (job, "seed"));
    kf_eval_tol_from_task (task, &e->tol, &e->worst);
    kf_eval_timing_t tm = { 0 };
    json_t *result = NULL;
    double copy_gbs = 0;
    e->probe = json_is_true (json_object_get (job, "probe"));
    kf_eval_degen_init (&e->degen, (int) json_array_size (json_object_get (task, "outputs")));

    s_judge_init (e);
    e->judge.seed = seed;
    int st = s_setup (e, dir, task);
    kf_dev_share_init (&e->share, e->n_in, e->in, e->n_out, e->out, kf_ocl_dev.pad,
                       kf_ocl_dev.memory_bytes, e->detail, sizeof e->detail);
    if (!st && kf_ocl_measure (&copy_gbs, NULL, why, sizeof why)) {
        snprintf (e->detail, sizeof e->detail, "harness: %.400s", why);
        st = KF_OCL_HARNESS;
    }
    size_t flush_bytes = 2 * (size_t) (kf_ocl_dev.cache_bytes > 0 ? kf_ocl_dev.cache_bytes
                                                                 : 64 << 20);
    if (flush_bytes > S_FLUSH_MAX)
        flush_bytes = S_FLUSH_MAX;
    if (!st && (st = kf_ocl_harness (e, kf_ocl_alloc (&e->flush, flush_bytes),
                                     "allocating the cache flush buffer")) == KF_OCL_OK)
        e->flush_bytes = flush_bytes;
    //  The candidate's process, its round trip timed after the same
    //  flush a timed call finds.
    char select[300];
    snprintf (select, sizeof select, "opencl:%s", kf_ocl_selection (device, buf, sizeof buf));
    if (!st && !e->probe)
        st = kf_dev_share_start (&e->share, dir, job, task, select, s_flush, e);

    if (!st)
        st = kf_dev_correctness (&e->judge, 5);
    if (e->probe && st == KF_OCL_OK) {
        result = json_pack ("{s:s, s:b, s:o, s:f, s:i, s:i}", "verdict", "probed", "ok", 1,
                            "degenerate", kf_eval_degen_json (&e->degen), "reference_ms",
                            e->judge.ref_calls ? e->judge.ref_s * 1e3 / e->judge.ref_calls
                                               : 0.0,
                            "sets", e->degen.sets, "cases", 1);
        kf_eval_write_result (dir, result);
        goto done;
    }
    if (st == KF_OCL_OK)
        st = kf_dev_time (&e->judge, timing, &tm);

    json_t *dev = json_pack ("{s:s, s:s, s:i}", "name", kf_ocl_dev.name, "platform",
                             kf_ocl_dev.platform_name, "index", kf_ocl_dev.index);
    result = kf_dev_result (&e->judge, st, &tm, copy_gbs, kf_ocl_dev.cache_bytes, dev, dir);
    if (result) {
        json_object_set_new (result, "program", json_pack ("{s:s, s:s}", "candidate", e->cand.how,
                                                           "reference", e->ref.host ? "host"
                                                                                    : e->ref.how));
        kf_eval_write_result (dir, result);
    }

done:
    json_decref (result);
    kf_eval_timing_free (&tm);
    s_eval_free (e);
    return 0;
}

//  The worker's probe: DEVICE's index, or the name the worker was given
//  (KF_OPENCL_DEVICE, set by main.c from --device NAME).
static json_t *
s_ocl_probe (int device, char *why, size_t why_size)
{
    char buf[32];
    return kf_ocl_describe (kf_ocl_selection (device, buf, sizeof buf), why, why_size);
}

const kf_exec_backend_t kf_exec_backend_ocl = {
    .name = "opencl",
    .child_main = s_ocl_child_main,
    .devices = NULL,
    .probe = s_ocl_probe,
    //  A GPU platform maps device memory into the process, as CUDA does.
    .unlimited_address_space = 1,
};
