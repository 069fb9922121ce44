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
 *  (kf_ocl_share.c); this process holds the reference, the answers, the
 *  clock and the verdict channel.
 *
 *  The files: this one (buffers, the correctness pass, the result),
 *  kf_ocl_program.c (programs, kernels, launches), kf_ocl_device.c (the
 *  device, copies, the capabilities), kf_ocl_share.c (the candidate's
 *  process) and kf_ocl_timing.c (the timing protocol); their shared
 *  state is kf_ocl_eval.h.
 */
#include "kf_backend.h"
#include "kf_ocl_eval.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

//  One call of SIDE, waited for, under its phase.
static int
s_call (kf_ocl_eval_t *e, kf_ocl_side_t *side, kf_ocl_dbuf_t *outs, kf_cl_int *rc_out)
{
    *rc_out = 0;
    char phase = side == &e->cand ? 'C' : 'R';
    if (side->host) {
        kf_eval_set_phase (phase);
        int r = side->fn (e->in_t, e->n_in, e->ref_t, e->n_out, &e->host_ctx);
        kf_eval_set_phase ('H');
        return r ? KF_OCL_INCORRECT : KF_OCL_OK;
    }
    kf_eval_set_phase (phase);
    int st = kf_ocl_enqueue_call (e, side, outs, NULL, NULL);
    if (!st)
        *rc_out = kf_ocl_dev.api->Finish (kf_ocl_dev.queue);
    kf_eval_set_phase ('H');
    return st ? st : *rc_out ? KF_OCL_CRASHED : KF_OCL_OK;
}

static int
s_poison_outputs (kf_ocl_eval_t *e, kf_ocl_dbuf_t *bufs)
{
    for (int o = 0; o < e->n_out; o++) {
        kf_cl_int rc = kf_ocl_upload (bufs[o].data, e->poison_h[o], 0, e->out[o].bytes);
        if (rc)
            return kf_ocl_harness (e, rc, "poisoning outputs");
    }
    return KF_OCL_OK;
}

static int
s_upload_inputs (kf_ocl_eval_t *e)
{
    for (int i = 0; i < e->n_in; i++) {
        kf_cl_int rc = kf_ocl_upload (e->in_d[i].data, e->in_h[i], 0, e->in[i].bytes);
        if (rc)
            return kf_ocl_harness (e, rc, "copying inputs to the device");
    }
    return KF_OCL_OK;
}

//  After a candidate call (the tensors handed back to the host): its
//  inputs as they were, every canary intact.
static int
s_check_memory (kf_ocl_eval_t *e, const char *when)
{
    for (int i = 0; i < e->n_in; i++)
        if (memcmp (e->cand_in[i], e->in_h[i], e->in[i].bytes) != 0) {
            snprintf (e->detail, sizeof e->detail,
                      "%s: inputs changed: the candidate wrote to input '%s'", when, e->in[i].name);
            return KF_OCL_INCORRECT;
        }
    for (int t = 0; t < e->n_in + e->n_out; t++) {
        const kf_run_tensor_t *rt = &e->layout.t[t];
        const unsigned char *region = e->shm + rt->offset;
        size_t pad = kf_ocl_dev.pad, end = pad + (size_t) rt->bytes;
        int where = 0;
        for (size_t k = 0; k < pad && !where; k++)
            where = region[k] != 0xA5 ? 1 : 0;
        for (size_t k = end; k < (size_t) rt->region && !where; k++)
            where = region[k] != 0xA5 ? 2 : 0;
        if (where) {
            const char *name = t < e->n_in ? e->in[t].name : e->out[t - e->n_in].name;
            snprintf (e->detail, sizeof e->detail, "%s: out-of-bounds write %s %s '%s'", when,
                      where == 1 ? "before" : "past the end of", t < e->n_in ? "input" : "output",
                      name);
            return KF_OCL_CRASHED;
        }
    }
    return KF_OCL_OK;
}

static int
s_compare (kf_ocl_eval_t *e, const char *when)
{
    int bad = 0;
    char ignored[512];
    for (int o = 0; o < e->n_out; o++)
        memcpy (e->cand_h[o], e->cand_out[o], e->out[o].bytes);
    for (int o = 0; o < e->n_out; o++)
        if (kf_eval_compare_output (&e->tol, &e->worst, &e->out[o], e->cand_h[o], e->ref_h[o],
                                    when, bad ? ignored : e->detail,
                                    bad ? sizeof ignored : sizeof e->detail))
            bad = 1;
    return bad ? KF_OCL_INCORRECT : KF_OCL_OK;
}

//  The candidate's inputs and poisoned outputs, in the shared file.
static void
s_candidate_tensors (kf_ocl_eval_t *e)
{
    for (int i = 0; i < e->n_in; i++)
        memcpy (e->cand_in[i], e->in_h[i], e->in[i].bytes);
    for (int o = 0; o < e->n_out; o++)
        memcpy (e->cand_out[o], e->poison_h[o], e->out[o].bytes);
}

//  One correctness set: fresh inputs, the reference, the candidate on the
//  same inputs, every check.
static int
s_run_set (kf_ocl_eval_t *e, uint64_t seed, int set)
{
    int st;
    kf_cl_int rc;
    for (int i = 0; i < e->n_in; i++)
        kf_eval_fill (json_object_get (e->in[i].spec, "dist"), e->in[i].dtype, e->in_h[i],
                      e->in[i].numel, kf_eval_input_seed (seed, set, i));
    if (e->ref.host) {
        //  The host reference reads a copy, so whatever it does to its
        //  inputs cannot reach the candidate's.
        for (int i = 0; i < e->n_in; i++)
            memcpy (e->back_h[i], e->in_h[i], e->in[i].bytes);
        for (int o = 0; o < e->n_out; o++)
            kf_eval_poison (e->out[o].dtype, e->ref_h[o], e->out[o].numel);
    }
    else if ((st = s_upload_inputs (e)) || (st = s_poison_outputs (e, e->ref_d)))
        return st;
    double t0 = kf_eval_now ();
    st = s_call (e, &e->ref, e->ref_d, &rc);
    e->ref_s += kf_eval_now () - t0;
    e->ref_calls++;
    if (st) {
        if (st != KF_OCL_REF_FAILED)
            snprintf (e->detail, sizeof e->detail, "reference failed on set %d%s%s", set,
                      rc ? ": " : "", rc ? kf_ocl_err (rc) : " (kf_forward returned non-zero)");
        return KF_OCL_REF_FAILED;
    }
    if (!e->ref.host)
        for (int o = 0; o < e->n_out; o++)
            if ((rc = kf_ocl_download (e->ref_h[o], e->ref_d[o].data, 0, e->out[o].bytes)))
                return kf_ocl_harness (e, rc, "reading reference outputs");
    if (e->probe) {
        //  The reference alone: are its outputs degenerate (docs/evaluation.md)?
        uint64_t h = 0;
        for (int i = 0; i < e->n_in; i++)
            h = kf_eval_hash (e->in_h[i], e->in[i].bytes, h);
        kf_eval_degen_inputs (&e->degen, h);
        for (int o = 0; o < e->n_out; o++)
            kf_eval_degen_output (&e->degen, o, &e->out[o], e->ref_h[o],
                                  e->tol.atol_dtype[e->out[o].dtype]);
        kf_eval_degen_end_set (&e->degen);
        return KF_OCL_OK;
    }
    //  The candidate, in its own process, on its copy of the inputs.
    char when[32];
    snprintf (when, sizeof when, "set %d", set);
    s_candidate_tensors (e);
    double wall;
    st = kf_ocl_share_call (e, 1, &wall, when);
    if (!st)
        st = kf_ocl_share_hand (e, true, when);
    e->worst.sets = set + 1;
    if (st)
        return st;
    if ((st = s_check_memory (e, when)))
        return st;
    return s_compare (e, when);
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

static void *
s_read_all (const char *path, size_t *size)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return NULL;
    void *data = NULL;
    if (fseek (f, 0, SEEK_END) == 0) {
        long n = ftell (f);
        if (n > 0 && fseek (f, 0, SEEK_SET) == 0 && (data = malloc ((size_t) n))
            && fread (data, 1, (size_t) n, f) != (size_t) n) {
            free (data);
            data = NULL;
        }
        *size = n > 0 ? (size_t) n : 0;
    }
    fclose (f);
    return data;
}

static int
s_tensors (kf_ocl_eval_t *e, json_t *task)
{
    json_t *ins = json_object_get (task, "inputs");
    json_t *outs = json_object_get (task, "outputs");
    e->n_in = (int) json_array_size (ins);
    e->n_out = (int) json_array_size (outs);
    if (e->n_out < 1 || e->n_in > KF_OCL_MAX_TENSORS || e->n_out > KF_OCL_MAX_TENSORS) {
        snprintf (e->detail, sizeof e->detail, "task: need 1 to 32 outputs and at most 32 inputs");
        return KF_OCL_REF_FAILED;
    }
    kf_cl_int rc;
    for (int i = 0; i < e->n_in; i++) {
        if (kf_eval_spec (&e->in[i], json_array_get (ins, (size_t) i), e->detail, sizeof e->detail))
            return KF_OCL_REF_FAILED;
        size_t n = e->in[i].bytes ? e->in[i].bytes : 1;
        if (!(e->in_h[i] = malloc (n)) || !(e->back_h[i] = malloc (n))) {
            snprintf (e->detail, sizeof e->detail, "harness: out of memory for inputs");
            return KF_OCL_HARNESS;
        }
        if ((rc = s_dbuf_new (&e->in_d[i], e->in[i].bytes)))
            return kf_ocl_harness (e, rc, "allocating inputs");
        kf_eval_tensor (&e->in_t[i], &e->in[i], e->back_h[i]);
    }
    for (int o = 0; o < e->n_out; o++) {
        if (kf_eval_spec (&e->out[o], json_array_get (outs, (size_t) o), e->detail,
                          sizeof e->detail))
            return KF_OCL_REF_FAILED;
        size_t n = e->out[o].bytes ? e->out[o].bytes : 1;
        if (!(e->ref_h[o] = malloc (n)) || !(e->cand_h[o] = malloc (n))
            || !(e->poison_h[o] = malloc (n))) {
            snprintf (e->detail, sizeof e->detail, "harness: out of memory for outputs");
            return KF_OCL_HARNESS;
        }
        kf_eval_poison (e->out[o].dtype, e->poison_h[o], e->out[o].numel);
        if ((rc = s_dbuf_new (&e->ref_d[o], e->out[o].bytes)))
            return kf_ocl_harness (e, rc, "allocating outputs");
        kf_eval_tensor (&e->ref_t[o], &e->out[o], e->ref_h[o]);
    }
    json_t *scalars = json_object_get (task, "scalars");
    size_t n_scalars = json_object_size (scalars);
    e->scalar_names = calloc (n_scalars + 1, sizeof *e->scalar_names);
    e->scalars = calloc (n_scalars + 1, sizeof *e->scalars);
    if (!e->scalar_names || !e->scalars) {
        snprintf (e->detail, sizeof e->detail, "harness: out of memory for scalars");
        return KF_OCL_HARNESS;
    }
    const char *key;
    json_t *value;
    json_object_foreach (scalars, key, value) {
        e->scalar_names[e->host_ctx.n_scalars] = key;
        e->scalars[e->host_ctx.n_scalars++] = json_number_value (value);
    }
    e->host_ctx.backend = KF_BACKEND_HOST;
    e->host_ctx.scalar_names = e->scalar_names;
    e->host_ctx.scalars = e->scalars;
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
    e->ref.bytes = s_read_all (path, &size);
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
    }
    if (e->probe)
        return KF_OCL_OK;
    //  The candidate's source is built here first, and run only in its
    //  own process, which builds it again (kf_ocl_share.c): a platform
    //  may need to start a program to build (PoCL links each kernel with
    //  ld), which the confined process may not. A platform with a kernel
    //  cache (PoCL's, in the runner's directory: s_platform_env) then
    //  finds it built. Building runs none of the candidate's code.
    snprintf (path, sizeof path, "%s/candidate.so", dir);
    e->cand.bytes = s_read_all (path, &size);
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
    kf_ocl_share_end (e);
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

//  The timed part of the result: speedup, samples, bandwidth, audit.
static void
s_timing_result (kf_ocl_eval_t *e, const kf_ocl_timing_t *tm, double copy_gbs, json_t *result)
{
    double speedup = kf_eval_paired_speedup (tm->ref_ns, tm->cand_ns, tm->samples);
    if (speedup < 0) {
        json_object_set_new (result, "speedup", json_null ());
        return;
    }
    json_object_set_new (result, "speedup", json_real (speedup));
    json_object_set_new (result, "candidate", kf_eval_timing_json (tm->cand_ns, tm->samples,
                                                                   tm->cand_calls));
    json_object_set_new (result, "reference", kf_eval_timing_json (tm->ref_ns, tm->samples,
                                                                   tm->ref_calls));
    json_object_set_new (result, "sync_overhead_ns", json_real (tm->overhead_ns));
    double bytes = 0;
    for (int i = 0; i < e->n_in; i++)
        bytes += (double) e->in[i].bytes;
    for (int o = 0; o < e->n_out; o++)
        bytes += (double) e->out[o].bytes;
    double cand_med = kf_eval_median (tm->cand_ns, tm->samples);
    double cand_gbs = cand_med > 0 ? bytes / cand_med : 0;
    bool applies = bytes > (double) kf_ocl_dev.cache_bytes;
    json_object_set_new (result, "bandwidth", json_pack (
        "{s:f, s:f, s:f, s:b}", "bytes", bytes, "candidate_gbs", cand_gbs,
        "copy_gbs", copy_gbs, "roofline_applies", applies));
    char audit[200] = "";
    if (applies && copy_gbs > 0 && cand_gbs > copy_gbs)
        snprintf (audit, sizeof audit, "moves its inputs and outputs at %.0f GB/s, above the "
                  "measured copy bandwidth of %.0f GB/s", cand_gbs, copy_gbs);
    else if (speedup > 10)
        snprintf (audit, sizeof audit, "%.1fx faster than the reference (over 10x)", speedup);
    json_object_set_new (result, "audit", json_boolean (audit[0] != 0));
    if (audit[0])
        json_object_set_new (result, "audit_reason", json_string (audit));
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
    e->shm_fd = -1;
    json_t *task = json_object_get (job, "task");
    json_t *timing = json_object_get (job, "timing");
    uint64_t seed = (uint64_t) json_integer_value (json_object_get (job, "seed"));
    kf_eval_tol_from_task (task, &e->tol, &e->worst);
    kf_ocl_timing_t tm = { 0 };
    json_t *result = NULL;
    double copy_gbs = 0;
    e->probe = json_is_true (json_object_get (job, "probe"));
    kf_eval_degen_init (&e->degen, (int) json_array_size (json_object_get (task, "outputs")));

    int st = s_setup (e, dir, task);
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
    if (!st && !e->probe)
        st = kf_ocl_share_start (e, dir, job, task, s_flush, e);

    for (int set = 0; set < 5 && st == KF_OCL_OK; set++)
        st = s_run_set (e, seed, set);
    if (e->probe && st == KF_OCL_OK) {
        result = json_pack ("{s:s, s:b, s:o, s:f, s:i, s:i}", "verdict", "probed", "ok", 1,
                            "degenerate", kf_eval_degen_json (&e->degen), "reference_ms",
                            e->ref_calls ? e->ref_s * 1e3 / e->ref_calls : 0.0,
                            "sets", e->degen.sets, "cases", 1);
        kf_eval_write_result (dir, result);
        goto done;
    }
    if (st == KF_OCL_OK && (s_candidate_tensors (e), 1)
        && (st = kf_ocl_time (e, timing, &tm)) == KF_OCL_OK
        && (st = s_check_memory (e, "timing")) == KF_OCL_OK)
        st = s_compare (e, "timing");

    if (st == KF_OCL_LOAD_FAILED || st == KF_OCL_REF_FAILED || st == KF_OCL_HARNESS) {
        kf_eval_write_verdict (dir, st == KF_OCL_LOAD_FAILED ? "load_failed"
                                    : st == KF_OCL_REF_FAILED ? "reference_failed"
                                                              : "harness_failed", e->detail);
        goto done;
    }
    const char *verdict = st == KF_OCL_OK ? "correct" : st == KF_OCL_CRASHED ? "crashed"
                                                                             : "incorrect";
    result = json_object ();
    json_object_set_new (result, "verdict", json_string (verdict));
    json_object_set_new (result, "detail", json_string (st == KF_OCL_OK ? "all checks passed"
                                                                        : e->detail));
    json_object_set_new (result, "correctness", kf_eval_correctness_json (&e->worst));
    json_object_set_new (result, "device", json_pack ("{s:s, s:s, s:i}", "name", kf_ocl_dev.name,
                                                      "platform", kf_ocl_dev.platform_name,
                                                      "index", kf_ocl_dev.index));
    json_object_set_new (result, "reference_on", json_string (e->ref.host ? "host" : "device"));
    json_object_set_new (result, "isolation", kf_ocl_share_isolation (e));
    json_object_set_new (result, "program", json_pack ("{s:s, s:s}", "candidate", e->cand.how,
                                                       "reference", e->ref.host ? "host"
                                                                                : e->ref.how));
    if (st == KF_OCL_OK && tm.samples > 0)
        s_timing_result (e, &tm, copy_gbs, result);
    else
        json_object_set_new (result, "speedup", json_null ());
    kf_eval_write_result (dir, result);

done:
    json_decref (result);
    free (tm.ref_ns);
    free (tm.cand_ns);
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
