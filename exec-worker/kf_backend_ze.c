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
 *  host; device buffers between canaries read back after every call.
 *
 *  The files: this one (buffers, sides, the correctness pass, the
 *  result), kf_ze_device.c (the device, its queue, staging, the copy
 *  bandwidth, the probe) and kf_ze_timing.c (the timing protocol); their
 *  shared state is kf_ze_eval.h.
 */
#include "kf_backend.h"
#include "kf_ze_eval.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_PAD 256                       // canary bytes around device buffers
#define S_FLUSH_MAX ((size_t) 1 << 30)

// --------------------------------------------------------------------------
//  Device buffers between canaries (as in kf_cuda_tensors.c)

static uint32_t
s_dbuf_new (kf_ze_dbuf_t *b, size_t bytes)
{
    memset (b, 0, sizeof *b);
    size_t body = (bytes + S_PAD - 1) / S_PAD * S_PAD;
    b->alloc = S_PAD + body + S_PAD;
    uint32_t rc = kf_ze_device_alloc ((void **) &b->base, b->alloc);
    if (rc) {
        b->base = NULL;
        return rc;
    }
    b->data = b->base + S_PAD;
    b->bytes = bytes;
    unsigned char canary = 0xA5;
    rc = kf_ze_dev.api->CommandListAppendMemoryFill (kf_ze_dev.list, b->base, &canary, 1, b->alloc,
                                                NULL, 0, NULL);
    return rc ? rc : kf_ze_submit ();
}

//  0 when both canaries hold, 1 when the one before was written, 2 the
//  one after; -1 when they could not be read (*RC set).
static int
s_dbuf_canaries (const kf_ze_dbuf_t *b, uint32_t *rc)
{
    unsigned char front[S_PAD], back[2 * S_PAD];
    size_t tail = b->alloc - S_PAD - b->bytes;
    *rc = kf_ze_download (front, b->base, S_PAD);
    if (!*rc)
        *rc = kf_ze_download (back, b->data + b->bytes, tail);
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

int
kf_ze_harness (kf_ze_eval_t *e, uint32_t rc, const char *what)
{
    if (rc == 0)
        return KF_ZE_OK;
    snprintf (e->detail, sizeof e->detail, "harness: %s: %s", what, kf_ze_err (rc));
    return KF_ZE_HARNESS;
}

//  A failure of SIDE before it ran: the candidate's is load_failed, the
//  reference's fails the job.
static int
s_side_failed (kf_ze_eval_t *e, const kf_ze_side_t *side)
{
    (void) e;
    return side == &e->cand ? KF_ZE_LOAD_FAILED : KF_ZE_REF_FAILED;
}

//  Sets the arguments of launch L of SIDE with OUTS as the outputs.
static uint32_t
s_set_args (kf_ze_eval_t *e, kf_ze_side_t *side, int l, kf_ze_dbuf_t *outs, int *bad_arg)
{
    const kf_ze_launch_t *launch = &side->plan.launches[l];
    kf_ze_handle_t k = side->kernels[l];
    uint32_t rc = kf_ze_dev.api->KernelSetGroupSize (k, (uint32_t) launch->local[0],
                                                (uint32_t) launch->local[1],
                                                (uint32_t) launch->local[2]);
    *bad_arg = -1;
    for (int a = 0; a < launch->n_args && !rc; a++) {
        const kf_ze_arg_t *arg = &launch->args[a];
        void *ptr = NULL;
        switch (arg->kind) {
        case KF_ZE_ARG_TENSOR:
            ptr = arg->index < e->n_in ? e->in_d[arg->index].data
                                       : outs[arg->index - e->n_in].data;
            rc = kf_ze_dev.api->KernelSetArgumentValue (k, (uint32_t) a, sizeof ptr, &ptr);
            break;
        case KF_ZE_ARG_SCRATCH:
            ptr = side->scratch[arg->index];
            rc = kf_ze_dev.api->KernelSetArgumentValue (k, (uint32_t) a, sizeof ptr, &ptr);
            break;
        case KF_ZE_ARG_LOCAL:
            rc = kf_ze_dev.api->KernelSetArgumentValue (k, (uint32_t) a, arg->size, NULL);
            break;
        default:
            rc = kf_ze_dev.api->KernelSetArgumentValue (k, (uint32_t) a, arg->size, arg->value);
            break;
        }
        if (rc)
            *bad_arg = a;
    }
    return rc;
}

//  Appends one call of SIDE (every launch, a barrier after each) writing
//  OUTS. A refused argument or launch is the side's own fault.
int
kf_ze_append_call (kf_ze_eval_t *e, kf_ze_side_t *side, kf_ze_dbuf_t *outs)
{
    for (int l = 0; l < side->plan.n_launches; l++) {
        int bad_arg;
        uint32_t rc = s_set_args (e, side, l, outs, &bad_arg);
        const kf_ze_launch_t *launch = &side->plan.launches[l];
        kf_ze_group_count_t groups = { launch->groups[0], launch->groups[1], launch->groups[2] };
        if (!rc)
            rc = kf_ze_dev.api->CommandListAppendLaunchKernel (kf_ze_dev.list, side->kernels[l], &groups,
                                                          NULL, 0, NULL);
        if (!rc)
            rc = kf_ze_dev.api->CommandListAppendBarrier (kf_ze_dev.list, NULL, 0, NULL);
        if (rc) {
            kf_ze_dev.api->CommandListReset (kf_ze_dev.list);
            if (bad_arg >= 0)
                snprintf (e->detail, sizeof e->detail,
                          "%s: kf-launch of %s: argument %d refused: %s (does the kernel's "
                          "parameter have that type?)", side->what, launch->kernel, bad_arg,
                          kf_ze_err (rc));
            else
                snprintf (e->detail, sizeof e->detail, "%s: launching %s: %s", side->what,
                          launch->kernel, kf_ze_err (rc));
            return side == &e->cand ? KF_ZE_LOAD_FAILED : KF_ZE_REF_FAILED;
        }
    }
    return KF_ZE_OK;
}

//  The module and kernels of a bundle side; scratch allocated once.
static int
s_side_build (kf_ze_eval_t *e, kf_ze_side_t *side, size_t size, json_t *task)
{
    char why[400];
    if (kf_ze_bundle_parse (side->bytes, size, &side->bundle, why, sizeof why)
        || kf_ze_plan (&side->bundle, task, &side->plan, why, sizeof why)) {
        snprintf (e->detail, sizeof e->detail, "%s does not load: %s", side->what, why);
        return s_side_failed (e, side);
    }
    kf_ze_module_desc_t desc = {
        .stype = KF_ZE_STYPE_MODULE_DESC, .format = KF_ZE_MODULE_FORMAT_IL_SPIRV,
        .inputSize = side->bundle.spirv_size, .pInputModule = side->bundle.spirv,
        .pBuildFlags = ""
    };
    kf_ze_handle_t log = NULL;
    kf_eval_set_phase (side == &e->cand ? 'C' : 'R');   // the driver compiles here
    uint32_t rc = kf_ze_dev.api->ModuleCreate (kf_ze_dev.context, kf_ze_dev.device, &desc, &side->module, &log);
    kf_eval_set_phase ('H');
    if (rc) {
        char text[300] = "";
        size_t len = 0;
        if (log && kf_ze_dev.api->ModuleBuildLogGetString (log, &len, NULL) == 0 && len > 0) {
            char *full = malloc (len);
            if (full && kf_ze_dev.api->ModuleBuildLogGetString (log, &len, full) == 0)
                snprintf (text, sizeof text, ": %s", full);
            free (full);
        }
        snprintf (e->detail, sizeof e->detail, "%s does not load: the driver could not build "
                  "its SPIR-V: %s%s", side->what, kf_ze_err (rc), text);
        if (log)
            kf_ze_dev.api->ModuleBuildLogDestroy (log);
        return s_side_failed (e, side);
    }
    if (log)
        kf_ze_dev.api->ModuleBuildLogDestroy (log);
    for (int l = 0; l < side->plan.n_launches; l++) {
        kf_ze_kernel_desc_t kdesc = { .stype = KF_ZE_STYPE_KERNEL_DESC,
                                      .pKernelName = side->plan.launches[l].kernel };
        rc = kf_ze_dev.api->KernelCreate (side->module, &kdesc, &side->kernels[l]);
        if (rc) {
            snprintf (e->detail, sizeof e->detail, "%s does not load: kf-launch names kernel "
                      "'%s': %s", side->what, side->plan.launches[l].kernel, kf_ze_err (rc));
            return s_side_failed (e, side);
        }
        if (side->plan.launches[l].local[0] * side->plan.launches[l].local[1]
            * side->plan.launches[l].local[2] > kf_ze_dev.compute.maxTotalGroupSize
            && kf_ze_dev.compute.maxTotalGroupSize > 0) {
            snprintf (e->detail, sizeof e->detail, "%s does not load: %s: local size above "
                      "the device's maximum work-group size %u", side->what,
                      side->plan.launches[l].kernel, kf_ze_dev.compute.maxTotalGroupSize);
            return s_side_failed (e, side);
        }
    }
    for (int s = 0; s < side->plan.n_scratch; s++)
        if ((rc = kf_ze_device_alloc (&side->scratch[s], (size_t) side->plan.scratch_bytes[s]))) {
            snprintf (e->detail, sizeof e->detail, "%s: scratch '%s' of %llu bytes: %s",
                      side->what, side->plan.scratch_name[s],
                      (unsigned long long) side->plan.scratch_bytes[s], kf_ze_err (rc));
            return s_side_failed (e, side);
        }
    //  Every argument once, before anything runs: a kf-launch that does
    //  not fit its kernel is a load failure, not a crash.
    kf_ze_dbuf_t *outs = side == &e->cand ? e->cand_d : e->ref_d;
    int st = kf_ze_append_call (e, side, outs);
    kf_ze_dev.api->CommandListReset (kf_ze_dev.list);
    return st;
}

//  One call of SIDE, waited for, under its phase.
static int
s_call (kf_ze_eval_t *e, kf_ze_side_t *side, kf_ze_dbuf_t *outs, uint32_t *rc_out)
{
    *rc_out = 0;
    char phase = side == &e->cand ? 'C' : 'R';
    if (side->host) {
        kf_eval_set_phase (phase);
        int r = side->fn (e->in_t, e->n_in, e->ref_t, e->n_out, &e->host_ctx);
        kf_eval_set_phase ('H');
        return r ? KF_ZE_INCORRECT : KF_ZE_OK;
    }
    int st = kf_ze_append_call (e, side, outs);
    if (st)
        return st;
    kf_eval_set_phase (phase);
    *rc_out = kf_ze_submit ();
    kf_eval_set_phase ('H');
    return *rc_out ? KF_ZE_CRASHED : KF_ZE_OK;
}

static int
s_poison_outputs (kf_ze_eval_t *e, kf_ze_dbuf_t *bufs)
{
    for (int o = 0; o < e->n_out; o++) {
        uint32_t rc = kf_ze_upload (bufs[o].data, e->poison_h[o], e->out[o].bytes);
        if (rc)
            return kf_ze_harness (e, rc, "poisoning outputs");
    }
    return KF_ZE_OK;
}

static int
s_upload_inputs (kf_ze_eval_t *e)
{
    for (int i = 0; i < e->n_in; i++) {
        uint32_t rc = kf_ze_upload (e->in_d[i].data, e->in_h[i], e->in[i].bytes);
        if (rc)
            return kf_ze_harness (e, rc, "copying inputs to the device");
    }
    return KF_ZE_OK;
}

//  After a candidate call: inputs as they were, canaries intact.
static int
s_check_memory (kf_ze_eval_t *e, const char *when)
{
    uint32_t rc;
    for (int i = 0; i < e->n_in; i++) {
        rc = kf_ze_download (e->back_h[i], e->in_d[i].data, e->in[i].bytes);
        if (rc)
            return kf_ze_harness (e, rc, "reading inputs back");
        if (memcmp (e->back_h[i], e->in_h[i], e->in[i].bytes) != 0) {
            snprintf (e->detail, sizeof e->detail,
                      "%s: inputs changed: the candidate wrote to input '%s'", when, e->in[i].name);
            return KF_ZE_INCORRECT;
        }
    }
    for (int t = 0; t < e->n_in + e->n_out; t++) {
        const kf_ze_dbuf_t *b = t < e->n_in ? &e->in_d[t] : &e->cand_d[t - e->n_in];
        const char *name = t < e->n_in ? e->in[t].name : e->out[t - e->n_in].name;
        int where = s_dbuf_canaries (b, &rc);
        if (where < 0)
            return kf_ze_harness (e, rc, "reading canaries");
        if (where > 0) {
            snprintf (e->detail, sizeof e->detail, "%s: out-of-bounds write %s %s '%s'", when,
                      where == 1 ? "before" : "past the end of", t < e->n_in ? "input" : "output",
                      name);
            return KF_ZE_CRASHED;
        }
    }
    return KF_ZE_OK;
}

static int
s_compare (kf_ze_eval_t *e, const char *when)
{
    int bad = 0;
    char ignored[512];
    for (int o = 0; o < e->n_out; o++) {
        uint32_t rc = kf_ze_download (e->cand_h[o], e->cand_d[o].data, e->out[o].bytes);
        if (rc)
            return kf_ze_harness (e, rc, "reading outputs back");
    }
    for (int o = 0; o < e->n_out; o++)
        if (kf_eval_compare_output (&e->tol, &e->worst, &e->out[o], e->cand_h[o], e->ref_h[o],
                                    when, bad ? ignored : e->detail,
                                    bad ? sizeof ignored : sizeof e->detail))
            bad = 1;
    return bad ? KF_ZE_INCORRECT : KF_ZE_OK;
}

//  One correctness set: fresh inputs, the reference, the candidate on the
//  same inputs, every check.
static int
s_run_set (kf_ze_eval_t *e, uint64_t seed, int set)
{
    int st;
    uint32_t rc;
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
    st = s_call (e, &e->ref, e->ref_d, &rc);
    if (st) {
        if (st != KF_ZE_REF_FAILED)
            snprintf (e->detail, sizeof e->detail, "reference failed on set %d%s%s", set,
                      rc ? ": " : "", rc ? kf_ze_err (rc) : " (kf_forward returned non-zero)");
        return KF_ZE_REF_FAILED;
    }
    if (!e->ref.host)
        for (int o = 0; o < e->n_out; o++)
            if ((rc = kf_ze_download (e->ref_h[o], e->ref_d[o].data, e->out[o].bytes)))
                return kf_ze_harness (e, rc, "reading reference outputs");
    if ((st = s_upload_inputs (e)) || (st = s_poison_outputs (e, e->cand_d)))
        return st;
    st = s_call (e, &e->cand, e->cand_d, &rc);
    e->worst.sets = set + 1;
    char when[32];
    snprintf (when, sizeof when, "set %d", set);
    if (st == KF_ZE_CRASHED) {
        snprintf (e->detail, sizeof e->detail, "%s: Level Zero error in the candidate: %s",
                  when, kf_ze_err (rc));
        return KF_ZE_CRASHED;
    }
    if (st)
        return st;
    if ((st = s_check_memory (e, when)))
        return st;
    return s_compare (e, when);
}

// --------------------------------------------------------------------------
//  Setup and the child's entry

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
s_setup (kf_ze_eval_t *e, const char *dir, json_t *task)
{
    json_t *ins = json_object_get (task, "inputs");
    json_t *outs = json_object_get (task, "outputs");
    e->n_in = (int) json_array_size (ins);
    e->n_out = (int) json_array_size (outs);
    if (e->n_out < 1 || e->n_in > KF_ZE_MAX_TENSORS || e->n_out > KF_ZE_MAX_TENSORS) {
        snprintf (e->detail, sizeof e->detail, "task: need 1 to 32 outputs and at most 32 inputs");
        return KF_ZE_REF_FAILED;
    }
    uint32_t rc;
    size_t largest = 64;
    for (int i = 0; i < e->n_in; i++) {
        if (kf_eval_spec (&e->in[i], json_array_get (ins, (size_t) i), e->detail, sizeof e->detail))
            return KF_ZE_REF_FAILED;
        size_t n = e->in[i].bytes ? e->in[i].bytes : 1;
        if (!(e->in_h[i] = malloc (n)) || !(e->back_h[i] = malloc (n))) {
            snprintf (e->detail, sizeof e->detail, "harness: out of memory for inputs");
            return KF_ZE_HARNESS;
        }
        if ((rc = s_dbuf_new (&e->in_d[i], e->in[i].bytes)))
            return kf_ze_harness (e, rc, "allocating inputs");
        kf_eval_tensor (&e->in_t[i], &e->in[i], e->back_h[i]);
        largest = n > largest ? n : largest;
    }
    for (int o = 0; o < e->n_out; o++) {
        if (kf_eval_spec (&e->out[o], json_array_get (outs, (size_t) o), e->detail,
                          sizeof e->detail))
            return KF_ZE_REF_FAILED;
        size_t n = e->out[o].bytes ? e->out[o].bytes : 1;
        if (!(e->ref_h[o] = malloc (n)) || !(e->cand_h[o] = malloc (n))
            || !(e->poison_h[o] = malloc (n))) {
            snprintf (e->detail, sizeof e->detail, "harness: out of memory for outputs");
            return KF_ZE_HARNESS;
        }
        kf_eval_poison (e->out[o].dtype, e->poison_h[o], e->out[o].numel);
        if ((rc = s_dbuf_new (&e->ref_d[o], e->out[o].bytes))
            || (rc = s_dbuf_new (&e->cand_d[o], e->out[o].bytes)))
            return kf_ze_harness (e, rc, "allocating outputs");
        kf_eval_tensor (&e->ref_t[o], &e->out[o], e->ref_h[o]);
        largest = n > largest ? n : largest;
    }
    if ((rc = kf_ze_stage_reserve (largest + 2 * S_PAD)))
        return kf_ze_harness (e, rc, "allocating the host staging buffer");
    json_t *scalars = json_object_get (task, "scalars");
    size_t n_scalars = json_object_size (scalars);
    e->scalar_names = calloc (n_scalars + 1, sizeof *e->scalar_names);
    e->scalars = calloc (n_scalars + 1, sizeof *e->scalars);
    if (!e->scalar_names || !e->scalars) {
        snprintf (e->detail, sizeof e->detail, "harness: out of memory for scalars");
        return KF_ZE_HARNESS;
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

    //  The reference: a bundle, or a host shared object (a C reference).
    char path[4200];
    size_t size = 0;
    e->ref.what = "reference";
    e->cand.what = "candidate";
    snprintf (path, sizeof path, "%s/reference.so", dir);
    e->ref.bytes = s_read_all (path, &size);
    int st;
    if (e->ref.bytes && kf_ze_is_bundle (e->ref.bytes, size)) {
        if ((st = s_side_build (e, &e->ref, size, task)))
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
    }
    snprintf (path, sizeof path, "%s/candidate.so", dir);
    e->cand.bytes = s_read_all (path, &size);
    if (!e->cand.bytes || !kf_ze_is_bundle (e->cand.bytes, size)) {
        snprintf (e->detail, sizeof e->detail, "candidate does not load: not a KF-SPIRV bundle "
                  "(an OpenCL C source built by the compile worker's spirv toolchain)");
        return KF_ZE_LOAD_FAILED;
    }
    return s_side_build (e, &e->cand, size, task);
}

static void
s_eval_free (kf_ze_eval_t *e)
{
    //  Device memory and the context go with the process, which ends
    //  right after this.
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
    kf_ze_timing_t tm = { 0 };
    json_t *result = NULL;
    double copy_gbs = 0;

    int st = s_setup (e, dir, task);
    if (st == KF_ZE_LOAD_FAILED) {
        kf_eval_write_verdict (dir, "load_failed", e->detail);
        goto done;
    }
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

    for (int set = 0; set < 5 && st == KF_ZE_OK; set++)
        st = s_run_set (e, seed, set);
    if (st == KF_ZE_OK && (st = s_poison_outputs (e, e->cand_d)) == KF_ZE_OK
        && (st = kf_ze_time (e, timing, &tm)) == KF_ZE_OK && (st = s_check_memory (e, "timing")) == KF_ZE_OK)
        st = s_compare (e, "timing");

    if (st == KF_ZE_LOAD_FAILED) {
        kf_eval_write_verdict (dir, "load_failed", e->detail);
        goto done;
    }
    if (st == KF_ZE_REF_FAILED || st == KF_ZE_HARNESS) {
        kf_eval_write_verdict (dir, st == KF_ZE_REF_FAILED ? "reference_failed" : "harness_failed",
                               e->detail);
        goto done;
    }
    const char *verdict = st == KF_ZE_OK ? "correct" : st == KF_ZE_CRASHED ? "crashed" : "incorrect";
    result = json_object ();
    json_object_set_new (result, "verdict", json_string (verdict));
    json_object_set_new (result, "detail", json_string (st == KF_ZE_OK ? "all checks passed" : e->detail));
    json_object_set_new (result, "correctness", kf_eval_correctness_json (&e->worst));
    json_object_set_new (result, "device", json_pack ("{s:s, s:i}", "name", kf_ze_dev.props.name,
                                                      "index", device));
    json_object_set_new (result, "reference_on", json_string (e->ref.host ? "host" : "device"));
    double speedup = -1;
    if (st == KF_ZE_OK && tm.samples > 0)
        speedup = kf_eval_paired_speedup (tm.ref_ns, tm.cand_ns, tm.samples);
    if (speedup >= 0) {
        json_object_set_new (result, "speedup", json_real (speedup));
        json_object_set_new (result, "candidate", kf_eval_timing_json (tm.cand_ns, tm.samples, tm.cand_calls));
        json_object_set_new (result, "reference", kf_eval_timing_json (tm.ref_ns, tm.samples, tm.ref_calls));
        json_object_set_new (result, "sync_overhead_ns", json_real (tm.overhead_ns));
        double bytes = 0;
        for (int i = 0; i < e->n_in; i++)
            bytes += (double) e->in[i].bytes;
        for (int o = 0; o < e->n_out; o++)
            bytes += (double) e->out[o].bytes;
        double cand_med = kf_eval_median (tm.cand_ns, tm.samples);
        double cand_gbs = cand_med > 0 ? bytes / cand_med : 0;
        bool applies = bytes > (double) kf_ze_dev.cache_bytes;
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

const kf_exec_backend_t kf_exec_backend_ze = {
    .name = "level-zero",
    .child_main = s_ze_child_main,
    .devices = NULL,
    .probe = kf_ze_probe,
    .unlimited_address_space = 1,
};
