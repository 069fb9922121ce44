/*  kf_backend_ze.c - the Level Zero evaluation harness and device probe.
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
 *  Timing: each sample is one command list: the L2 flushed by a fill of
 *  twice the largest cache the device reports, a barrier, a global
 *  timestamp, CALLS calls, a barrier, a global timestamp. The barriers
 *  wait for everything before them on the queue, so the interval holds
 *  the whole of every call. The fixed cost of an empty sample is measured
 *  and subtracted, calls per sample are chosen for about a millisecond,
 *  and reference and candidate samples alternate (a host reference is
 *  timed on the host clock), so the speedup is a paired ratio.
 */
#include "kf_backend.h"
#include "kf_eval_check.h"
#include "kf_kernel.h"
#include "kf_ze_api.h"
#include "kf_ze_launch.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define S_MAX_TENSORS 32
#define S_PAD 256                       // canary bytes around device buffers
#define S_MAX_SAMPLES 10000
#define S_COPY_BYTES ((size_t) 256 << 20)
#define S_FLUSH_MAX ((size_t) 1 << 30)

typedef int (s_forward_fn) (const kf_tensor_t *, int, kf_tensor_t *, int,
                            const kf_ctx_t *);

//  The device this process opened.
static struct {
    kf_ze_api_t *api;
    kf_ze_handle_t driver, device, context, queue, list;
    kf_ze_device_properties_t props;
    kf_ze_device_compute_properties_t compute;
    uint64_t memory_bytes, cache_bytes;
    int gpus;
} s_ze;

static const char *
s_err (uint32_t rc)
{
    static char buf[96];
    return kf_ze_api_error (rc, buf, sizeof buf);
}

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

//  Loads the loader and finds GPU DEVICE; WHY starts "no Level Zero
//  device: " whenever there is none to use.
static int
s_find_device (int device, char *why, size_t why_size)
{
    char reason[400];
    if (!s_ze.api)
        s_ze.api = kf_ze_api_new (reason, sizeof reason);
    if (!s_ze.api) {
        snprintf (why, why_size, "no Level Zero device: %s", reason);
        return -1;
    }
    kf_ze_handle_t drivers[64], devices[64];
    int gpus = kf_ze_api_gpus (s_ze.api, drivers, devices, 64, reason, sizeof reason);
    if (gpus <= 0) {
        //  Nothing is kept from a probe that found nothing: the next one
        //  looks again (another KF_ZE_LOADER, a driver installed since).
        snprintf (why, why_size, "no Level Zero device: %s", reason);
        kf_ze_api_destroy (&s_ze.api);
        return -1;
    }
    if (device < 0 || device >= gpus || device >= 64) {
        snprintf (why, why_size, "no Level Zero device: device %d requested, %d present",
                  device, gpus);
        return -1;
    }
    s_ze.gpus = gpus;
    s_ze.driver = drivers[device];
    s_ze.device = devices[device];
    memset (&s_ze.props, 0, sizeof s_ze.props);
    s_ze.props.stype = KF_ZE_STYPE_DEVICE_PROPERTIES;
    memset (&s_ze.compute, 0, sizeof s_ze.compute);
    s_ze.compute.stype = KF_ZE_STYPE_DEVICE_COMPUTE_PROPERTIES;
    uint32_t rc = s_ze.api->DeviceGetProperties (s_ze.device, &s_ze.props);
    if (!rc)
        rc = s_ze.api->DeviceGetComputeProperties (s_ze.device, &s_ze.compute);
    if (rc) {
        snprintf (why, why_size, "no Level Zero device: device properties: %s", s_err (rc));
        return -1;
    }
    //  Memory and caches: the largest of each kind the device reports.
    kf_ze_device_memory_properties_t mem[4];
    uint32_t n = 4;
    memset (mem, 0, sizeof mem);
    for (int i = 0; i < 4; i++)
        mem[i].stype = KF_ZE_STYPE_DEVICE_MEMORY_PROPERTIES;
    s_ze.memory_bytes = 0;
    if (s_ze.api->DeviceGetMemoryProperties (s_ze.device, &n, mem) == KF_ZE_SUCCESS)
        for (uint32_t i = 0; i < n && i < 4; i++)
            s_ze.memory_bytes += mem[i].totalSize;
    kf_ze_device_cache_properties_t cache[4];
    n = 4;
    memset (cache, 0, sizeof cache);
    for (int i = 0; i < 4; i++)
        cache[i].stype = KF_ZE_STYPE_DEVICE_CACHE_PROPERTIES;
    s_ze.cache_bytes = 0;
    if (s_ze.api->DeviceGetCacheProperties (s_ze.device, &n, cache) == KF_ZE_SUCCESS)
        for (uint32_t i = 0; i < n && i < 4; i++)
            if (cache[i].cacheSize > s_ze.cache_bytes)
                s_ze.cache_bytes = cache[i].cacheSize;
    return 0;
}

//  A context, the first compute queue group's queue, and one command
//  list that every operation of this process reuses.
static int
s_open_queue (char *why, size_t why_size)
{
    kf_ze_command_queue_group_properties_t groups[8];
    uint32_t n = 8, ordinal = 0;
    memset (groups, 0, sizeof groups);
    for (int i = 0; i < 8; i++)
        groups[i].stype = KF_ZE_STYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
    if (s_ze.api->DeviceGetCommandQueueGroupProperties (s_ze.device, &n, groups) == KF_ZE_SUCCESS)
        for (uint32_t i = 0; i < n && i < 8; i++)
            if (groups[i].flags & KF_ZE_COMMAND_QUEUE_GROUP_FLAG_COMPUTE) {
                ordinal = i;
                break;
            }
    kf_ze_context_desc_t cdesc = { .stype = KF_ZE_STYPE_CONTEXT_DESC };
    kf_ze_command_queue_desc_t qdesc = {
        .stype = KF_ZE_STYPE_COMMAND_QUEUE_DESC, .ordinal = ordinal,
        .mode = KF_ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS
    };
    kf_ze_command_list_desc_t ldesc = {
        .stype = KF_ZE_STYPE_COMMAND_LIST_DESC, .commandQueueGroupOrdinal = ordinal
    };
    uint32_t rc = s_ze.api->ContextCreate (s_ze.driver, &cdesc, &s_ze.context);
    if (!rc)
        rc = s_ze.api->CommandQueueCreate (s_ze.context, s_ze.device, &qdesc, &s_ze.queue);
    if (!rc)
        rc = s_ze.api->CommandListCreate (s_ze.context, s_ze.device, &ldesc, &s_ze.list);
    if (rc) {
        snprintf (why, why_size, "context and command queue: %s", s_err (rc));
        return -1;
    }
    return 0;
}

//  Runs what was appended to the list and waits for it; the list is
//  empty again afterwards. A kernel fault shows here (DEVICE_LOST).
static uint32_t
s_submit (void)
{
    uint32_t rc = s_ze.api->CommandListClose (s_ze.list);
    if (!rc)
        rc = s_ze.api->CommandQueueExecuteCommandLists (s_ze.queue, 1, &s_ze.list, NULL);
    if (!rc)
        rc = s_ze.api->CommandQueueSynchronize (s_ze.queue, UINT64_MAX);
    uint32_t reset = s_ze.api->CommandListReset (s_ze.list);
    return rc ? rc : reset;
}

//  Device ticks between two global timestamps, in nanoseconds.
static double
s_ticks_ns (uint64_t t0, uint64_t t1)
{
    uint32_t bits = s_ze.props.timestampValidBits;
    uint64_t mask = bits > 0 && bits < 64 ? (((uint64_t) 1 << bits) - 1) : UINT64_MAX;
    uint64_t ticks = (t1 - t0) & mask;
    double res = s_ze.props.timerResolution ? (double) s_ze.props.timerResolution : 1;
    return (double) ticks * res;
}

// --------------------------------------------------------------------------
//  Host-visible staging: device memory is reached by copies from memory
//  the device can read, which plain malloc'd memory need not be.

static struct {
    unsigned char *host;
    size_t size;
    uint64_t *stamps;                   // two global timestamps
} s_stage;

static uint32_t
s_stage_reserve (size_t bytes)
{
    if (s_stage.size >= bytes && s_stage.stamps)
        return 0;
    kf_ze_host_mem_alloc_desc_t desc = { .stype = KF_ZE_STYPE_HOST_MEM_ALLOC_DESC };
    uint32_t rc = 0;
    if (!s_stage.stamps)
        rc = s_ze.api->MemAllocHost (s_ze.context, &desc, 64, 64, (void **) &s_stage.stamps);
    if (!rc && s_stage.size < bytes) {
        if (s_stage.host)
            s_ze.api->MemFree (s_ze.context, s_stage.host);
        s_stage.host = NULL;
        s_stage.size = 0;
        rc = s_ze.api->MemAllocHost (s_ze.context, &desc, bytes, 64, (void **) &s_stage.host);
        if (!rc)
            s_stage.size = bytes;
    }
    return rc;
}

static uint32_t
s_upload (void *dst, const void *src, size_t bytes)
{
    uint32_t rc = s_stage_reserve (bytes);
    if (rc)
        return rc;
    memcpy (s_stage.host, src, bytes);
    rc = s_ze.api->CommandListAppendMemoryCopy (s_ze.list, dst, s_stage.host, bytes, NULL, 0, NULL);
    return rc ? rc : s_submit ();
}

static uint32_t
s_download (void *dst, const void *src, size_t bytes)
{
    uint32_t rc = s_stage_reserve (bytes);
    if (!rc)
        rc = s_ze.api->CommandListAppendMemoryCopy (s_ze.list, s_stage.host, src, bytes,
                                                    NULL, 0, NULL);
    if (!rc)
        rc = s_submit ();
    if (!rc)
        memcpy (dst, s_stage.host, bytes);
    return rc;
}

static uint32_t
s_device_alloc (void **ptr, size_t bytes)
{
    kf_ze_device_mem_alloc_desc_t desc = { .stype = KF_ZE_STYPE_DEVICE_MEM_ALLOC_DESC };
    *ptr = NULL;
    return s_ze.api->MemAllocDevice (s_ze.context, &desc, bytes ? bytes : 1, 256, s_ze.device, ptr);
}

// --------------------------------------------------------------------------
//  Device memory bandwidth: ten device-to-device copies of 256 MiB
//  between two global timestamps, bytes read plus bytes written, as for
//  the CUDA backend.

static int
s_copy_bandwidth (double *gbs, char *why, size_t why_size)
{
    void *a = NULL, *b = NULL;
    const int reps = 10;
    unsigned char one = 1;
    uint32_t rc = s_device_alloc (&a, S_COPY_BYTES);
    if (!rc) rc = s_device_alloc (&b, S_COPY_BYTES);
    if (!rc) rc = s_stage_reserve (64);
    if (!rc) rc = s_ze.api->CommandListAppendMemoryFill (s_ze.list, a, &one, 1, S_COPY_BYTES,
                                                         NULL, 0, NULL);
    if (!rc) rc = s_ze.api->CommandListAppendBarrier (s_ze.list, NULL, 0, NULL);
    if (!rc) rc = s_ze.api->CommandListAppendWriteGlobalTimestamp (s_ze.list, &s_stage.stamps[0],
                                                                   NULL, 0, NULL);
    for (int k = 0; k < reps && !rc; k++) {
        rc = s_ze.api->CommandListAppendMemoryCopy (s_ze.list, b, a, S_COPY_BYTES, NULL, 0, NULL);
        if (!rc) rc = s_ze.api->CommandListAppendBarrier (s_ze.list, NULL, 0, NULL);
    }
    if (!rc) rc = s_ze.api->CommandListAppendWriteGlobalTimestamp (s_ze.list, &s_stage.stamps[1],
                                                                   NULL, 0, NULL);
    if (!rc) rc = s_submit ();
    if (rc)
        snprintf (why, why_size, "copy bandwidth: %s", s_err (rc));
    else {
        double ns = s_ticks_ns (s_stage.stamps[0], s_stage.stamps[1]);
        *gbs = ns > 0 ? 2.0 * (double) S_COPY_BYTES * reps / ns : 0;
    }
    if (a) s_ze.api->MemFree (s_ze.context, a);
    if (b) s_ze.api->MemFree (s_ze.context, b);
    return rc ? -1 : 0;
}

static json_t *
s_ze_probe (int device, char *why, size_t why_size)
{
    if (s_find_device (device, why, why_size))
        return NULL;
    char reason[400];
    double gbs = 0;
    if (s_open_queue (reason, sizeof reason) || s_copy_bandwidth (&gbs, reason, sizeof reason)) {
        snprintf (why, why_size, "no Level Zero device: %s", reason);
        return NULL;
    }
    const kf_ze_device_properties_t *p = &s_ze.props;
    json_t *dev = json_pack (
        "{s:i, s:s, s:i, s:i, s:I, s:i, s:i, s:I, s:I, s:f, s:I, s:s}",
        "index", device, "name", p->name, "vendor_id", (int) p->vendorId,
        "device_id", (int) p->deviceId, "memory_bytes", (json_int_t) s_ze.memory_bytes,
        "execution_units", (int) (p->numSlices * p->numSubslicesPerSlice * p->numEUsPerSubslice),
        "max_group_size", (int) s_ze.compute.maxTotalGroupSize,
        "cache_bytes", (json_int_t) s_ze.cache_bytes,
        "timer_resolution_ns", (json_int_t) p->timerResolution,
        "copy_bandwidth_gbs", round (gbs * 10) / 10,
        "core_clock_mhz", (json_int_t) p->coreClockRate, "loader", s_ze.api->path);
    //  The parent only describes the device; every evaluation child opens
    //  its own context.
    if (s_stage.host)
        s_ze.api->MemFree (s_ze.context, s_stage.host);
    if (s_stage.stamps)
        s_ze.api->MemFree (s_ze.context, s_stage.stamps);
    s_ze.api->CommandListDestroy (s_ze.list);
    s_ze.api->CommandQueueDestroy (s_ze.queue);
    s_ze.api->ContextDestroy (s_ze.context);
    s_ze.list = s_ze.queue = s_ze.context = NULL;
    memset (&s_stage, 0, sizeof s_stage);
    //  SPIR-V is the device code whatever the GPU: the compile worker
    //  builds one artifact for every Level Zero device.
    return json_pack ("{s:s, s:[o]}", "arch", "spir64", "devices", dev);
}

// --------------------------------------------------------------------------
//  Device buffers between canaries (as in kf_backend_cuda.c)

typedef struct {
    char *base;
    size_t alloc;
    char *data;
    size_t bytes;
} s_dbuf_t;

static uint32_t
s_dbuf_new (s_dbuf_t *b, size_t bytes)
{
    memset (b, 0, sizeof *b);
    size_t body = (bytes + S_PAD - 1) / S_PAD * S_PAD;
    b->alloc = S_PAD + body + S_PAD;
    uint32_t rc = s_device_alloc ((void **) &b->base, b->alloc);
    if (rc) {
        b->base = NULL;
        return rc;
    }
    b->data = b->base + S_PAD;
    b->bytes = bytes;
    unsigned char canary = 0xA5;
    rc = s_ze.api->CommandListAppendMemoryFill (s_ze.list, b->base, &canary, 1, b->alloc,
                                                NULL, 0, NULL);
    return rc ? rc : s_submit ();
}

//  0 when both canaries hold, 1 when the one before was written, 2 the
//  one after; -1 when they could not be read (*RC set).
static int
s_dbuf_canaries (const s_dbuf_t *b, uint32_t *rc)
{
    unsigned char front[S_PAD], back[2 * S_PAD];
    size_t tail = b->alloc - S_PAD - b->bytes;
    *rc = s_download (front, b->base, S_PAD);
    if (!*rc)
        *rc = s_download (back, b->data + b->bytes, tail);
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
//  A side: the candidate (always a bundle) or the reference (a bundle, or
//  a host shared object).

typedef struct {
    const char *what;                   // "candidate", "reference"
    bool host;                          // a host .so: FN on host memory
    s_forward_fn *fn;
    void *bytes;                        // the artifact, kept: the bundle borrows it
    kf_ze_bundle_t bundle;
    kf_ze_plan_t plan;
    kf_ze_handle_t module;
    kf_ze_handle_t kernels[KF_ZE_MAX_LAUNCHES];
    void *scratch[KF_ZE_MAX_SCRATCH];
} s_side_t;

typedef struct {
    int n_in, n_out;
    kf_eval_spec_t in[S_MAX_TENSORS], out[S_MAX_TENSORS];
    s_dbuf_t in_d[S_MAX_TENSORS], ref_d[S_MAX_TENSORS], cand_d[S_MAX_TENSORS];
    void *in_h[S_MAX_TENSORS];          // this set's inputs
    void *back_h[S_MAX_TENSORS];        // inputs read back
    void *ref_h[S_MAX_TENSORS];         // the reference's outputs
    void *cand_h[S_MAX_TENSORS];        // the candidate's outputs, read back
    void *poison_h[S_MAX_TENSORS];
    kf_tensor_t in_t[S_MAX_TENSORS], ref_t[S_MAX_TENSORS];   // host reference's view
    kf_ctx_t host_ctx;
    const char **scalar_names;
    double *scalars;
    s_side_t ref, cand;
    void *flush;
    size_t flush_bytes;
    kf_eval_tol_t tol;
    kf_eval_worst_t worst;
    char detail[512];
} s_eval_t;

enum { S_OK = 0, S_INCORRECT, S_CRASHED, S_REF_FAILED, S_HARNESS, S_LOAD_FAILED };

static int
s_harness (s_eval_t *e, uint32_t rc, const char *what)
{
    if (rc == 0)
        return S_OK;
    snprintf (e->detail, sizeof e->detail, "harness: %s: %s", what, s_err (rc));
    return S_HARNESS;
}

//  A failure of SIDE before it ran: the candidate's is load_failed, the
//  reference's fails the job.
static int
s_side_failed (s_eval_t *e, const s_side_t *side)
{
    (void) e;
    return side == &e->cand ? S_LOAD_FAILED : S_REF_FAILED;
}

//  Sets the arguments of launch L of SIDE with OUTS as the outputs.
static uint32_t
s_set_args (s_eval_t *e, s_side_t *side, int l, s_dbuf_t *outs, int *bad_arg)
{
    const kf_ze_launch_t *launch = &side->plan.launches[l];
    kf_ze_handle_t k = side->kernels[l];
    uint32_t rc = s_ze.api->KernelSetGroupSize (k, (uint32_t) launch->local[0],
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
            rc = s_ze.api->KernelSetArgumentValue (k, (uint32_t) a, sizeof ptr, &ptr);
            break;
        case KF_ZE_ARG_SCRATCH:
            ptr = side->scratch[arg->index];
            rc = s_ze.api->KernelSetArgumentValue (k, (uint32_t) a, sizeof ptr, &ptr);
            break;
        case KF_ZE_ARG_LOCAL:
            rc = s_ze.api->KernelSetArgumentValue (k, (uint32_t) a, arg->size, NULL);
            break;
        default:
            rc = s_ze.api->KernelSetArgumentValue (k, (uint32_t) a, arg->size, arg->value);
            break;
        }
        if (rc)
            *bad_arg = a;
    }
    return rc;
}

//  Appends one call of SIDE (every launch, a barrier after each) writing
//  OUTS. A refused argument or launch is the side's own fault.
static int
s_append_call (s_eval_t *e, s_side_t *side, s_dbuf_t *outs)
{
    for (int l = 0; l < side->plan.n_launches; l++) {
        int bad_arg;
        uint32_t rc = s_set_args (e, side, l, outs, &bad_arg);
        const kf_ze_launch_t *launch = &side->plan.launches[l];
        kf_ze_group_count_t groups = { launch->groups[0], launch->groups[1], launch->groups[2] };
        if (!rc)
            rc = s_ze.api->CommandListAppendLaunchKernel (s_ze.list, side->kernels[l], &groups,
                                                          NULL, 0, NULL);
        if (!rc)
            rc = s_ze.api->CommandListAppendBarrier (s_ze.list, NULL, 0, NULL);
        if (rc) {
            s_ze.api->CommandListReset (s_ze.list);
            if (bad_arg >= 0)
                snprintf (e->detail, sizeof e->detail,
                          "%s: kf-launch of %s: argument %d refused: %s (does the kernel's "
                          "parameter have that type?)", side->what, launch->kernel, bad_arg,
                          s_err (rc));
            else
                snprintf (e->detail, sizeof e->detail, "%s: launching %s: %s", side->what,
                          launch->kernel, s_err (rc));
            return side == &e->cand ? S_LOAD_FAILED : S_REF_FAILED;
        }
    }
    return S_OK;
}

//  The module and kernels of a bundle side; scratch allocated once.
static int
s_side_build (s_eval_t *e, s_side_t *side, size_t size, json_t *task)
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
    uint32_t rc = s_ze.api->ModuleCreate (s_ze.context, s_ze.device, &desc, &side->module, &log);
    kf_eval_set_phase ('H');
    if (rc) {
        char text[300] = "";
        size_t len = 0;
        if (log && s_ze.api->ModuleBuildLogGetString (log, &len, NULL) == 0 && len > 0) {
            char *full = malloc (len);
            if (full && s_ze.api->ModuleBuildLogGetString (log, &len, full) == 0)
                snprintf (text, sizeof text, ": %s", full);
            free (full);
        }
        snprintf (e->detail, sizeof e->detail, "%s does not load: the driver could not build "
                  "its SPIR-V: %s%s", side->what, s_err (rc), text);
        if (log)
            s_ze.api->ModuleBuildLogDestroy (log);
        return s_side_failed (e, side);
    }
    if (log)
        s_ze.api->ModuleBuildLogDestroy (log);
    for (int l = 0; l < side->plan.n_launches; l++) {
        kf_ze_kernel_desc_t kdesc = { .stype = KF_ZE_STYPE_KERNEL_DESC,
                                      .pKernelName = side->plan.launches[l].kernel };
        rc = s_ze.api->KernelCreate (side->module, &kdesc, &side->kernels[l]);
        if (rc) {
            snprintf (e->detail, sizeof e->detail, "%s does not load: kf-launch names kernel "
                      "'%s': %s", side->what, side->plan.launches[l].kernel, s_err (rc));
            return s_side_failed (e, side);
        }
        if (side->plan.launches[l].local[0] * side->plan.launches[l].local[1]
            * side->plan.launches[l].local[2] > s_ze.compute.maxTotalGroupSize
            && s_ze.compute.maxTotalGroupSize > 0) {
            snprintf (e->detail, sizeof e->detail, "%s does not load: %s: local size above "
                      "the device's maximum work-group size %u", side->what,
                      side->plan.launches[l].kernel, s_ze.compute.maxTotalGroupSize);
            return s_side_failed (e, side);
        }
    }
    for (int s = 0; s < side->plan.n_scratch; s++)
        if ((rc = s_device_alloc (&side->scratch[s], (size_t) side->plan.scratch_bytes[s]))) {
            snprintf (e->detail, sizeof e->detail, "%s: scratch '%s' of %llu bytes: %s",
                      side->what, side->plan.scratch_name[s],
                      (unsigned long long) side->plan.scratch_bytes[s], s_err (rc));
            return s_side_failed (e, side);
        }
    //  Every argument once, before anything runs: a kf-launch that does
    //  not fit its kernel is a load failure, not a crash.
    s_dbuf_t *outs = side == &e->cand ? e->cand_d : e->ref_d;
    int st = s_append_call (e, side, outs);
    s_ze.api->CommandListReset (s_ze.list);
    return st;
}

//  One call of SIDE, waited for, under its phase.
static int
s_call (s_eval_t *e, s_side_t *side, s_dbuf_t *outs, uint32_t *rc_out)
{
    *rc_out = 0;
    char phase = side == &e->cand ? 'C' : 'R';
    if (side->host) {
        kf_eval_set_phase (phase);
        int r = side->fn (e->in_t, e->n_in, e->ref_t, e->n_out, &e->host_ctx);
        kf_eval_set_phase ('H');
        return r ? S_INCORRECT : S_OK;
    }
    int st = s_append_call (e, side, outs);
    if (st)
        return st;
    kf_eval_set_phase (phase);
    *rc_out = s_submit ();
    kf_eval_set_phase ('H');
    return *rc_out ? S_CRASHED : S_OK;
}

static int
s_poison_outputs (s_eval_t *e, s_dbuf_t *bufs)
{
    for (int o = 0; o < e->n_out; o++) {
        uint32_t rc = s_upload (bufs[o].data, e->poison_h[o], e->out[o].bytes);
        if (rc)
            return s_harness (e, rc, "poisoning outputs");
    }
    return S_OK;
}

static int
s_upload_inputs (s_eval_t *e)
{
    for (int i = 0; i < e->n_in; i++) {
        uint32_t rc = s_upload (e->in_d[i].data, e->in_h[i], e->in[i].bytes);
        if (rc)
            return s_harness (e, rc, "copying inputs to the device");
    }
    return S_OK;
}

//  After a candidate call: inputs as they were, canaries intact.
static int
s_check_memory (s_eval_t *e, const char *when)
{
    uint32_t rc;
    for (int i = 0; i < e->n_in; i++) {
        rc = s_download (e->back_h[i], e->in_d[i].data, e->in[i].bytes);
        if (rc)
            return s_harness (e, rc, "reading inputs back");
        if (memcmp (e->back_h[i], e->in_h[i], e->in[i].bytes) != 0) {
            snprintf (e->detail, sizeof e->detail,
                      "%s: inputs changed: the candidate wrote to input '%s'", when, e->in[i].name);
            return S_INCORRECT;
        }
    }
    for (int t = 0; t < e->n_in + e->n_out; t++) {
        const s_dbuf_t *b = t < e->n_in ? &e->in_d[t] : &e->cand_d[t - e->n_in];
        const char *name = t < e->n_in ? e->in[t].name : e->out[t - e->n_in].name;
        int where = s_dbuf_canaries (b, &rc);
        if (where < 0)
            return s_harness (e, rc, "reading canaries");
        if (where > 0) {
            snprintf (e->detail, sizeof e->detail, "%s: out-of-bounds write %s %s '%s'", when,
                      where == 1 ? "before" : "past the end of", t < e->n_in ? "input" : "output",
                      name);
            return S_CRASHED;
        }
    }
    return S_OK;
}

static int
s_compare (s_eval_t *e, const char *when)
{
    int bad = 0;
    char ignored[512];
    for (int o = 0; o < e->n_out; o++) {
        uint32_t rc = s_download (e->cand_h[o], e->cand_d[o].data, e->out[o].bytes);
        if (rc)
            return s_harness (e, rc, "reading outputs back");
    }
    for (int o = 0; o < e->n_out; o++)
        if (kf_eval_compare_output (&e->tol, &e->worst, &e->out[o], e->cand_h[o], e->ref_h[o],
                                    when, bad ? ignored : e->detail,
                                    bad ? sizeof ignored : sizeof e->detail))
            bad = 1;
    return bad ? S_INCORRECT : S_OK;
}

//  One correctness set: fresh inputs, the reference, the candidate on the
//  same inputs, every check.
static int
s_run_set (s_eval_t *e, uint64_t seed, int set)
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
        if (st != S_REF_FAILED)
            snprintf (e->detail, sizeof e->detail, "reference failed on set %d%s%s", set,
                      rc ? ": " : "", rc ? s_err (rc) : " (kf_forward returned non-zero)");
        return S_REF_FAILED;
    }
    if (!e->ref.host)
        for (int o = 0; o < e->n_out; o++)
            if ((rc = s_download (e->ref_h[o], e->ref_d[o].data, e->out[o].bytes)))
                return s_harness (e, rc, "reading reference outputs");
    if ((st = s_upload_inputs (e)) || (st = s_poison_outputs (e, e->cand_d)))
        return st;
    st = s_call (e, &e->cand, e->cand_d, &rc);
    e->worst.sets = set + 1;
    char when[32];
    snprintf (when, sizeof when, "set %d", set);
    if (st == S_CRASHED) {
        snprintf (e->detail, sizeof e->detail, "%s: Level Zero error in the candidate: %s",
                  when, s_err (rc));
        return S_CRASHED;
    }
    if (st)
        return st;
    if ((st = s_check_memory (e, when)))
        return st;
    return s_compare (e, when);
}

// --------------------------------------------------------------------------
//  Timing

typedef struct {
    double *ref_ns, *cand_ns;
    int samples, ref_calls, cand_calls;
    double overhead_ns;
} s_timing_t;

//  One sample of CALLS calls of SIDE (NULL: an empty sample).
static int
s_sample (s_eval_t *e, s_side_t *side, int calls, unsigned salt, double *ns, uint32_t *rc_out)
{
    *rc_out = 0;
    if (side && side->host) {
        double t0 = s_now ();
        kf_eval_set_phase ('R');
        for (int k = 0; k < calls; k++)
            if (side->fn (e->in_t, e->n_in, e->ref_t, e->n_out, &e->host_ctx)) {
                kf_eval_set_phase ('H');
                return S_REF_FAILED;
            }
        kf_eval_set_phase ('H');
        *ns = (s_now () - t0) * 1e9;
        return S_OK;
    }
    unsigned char pattern = (unsigned char) (salt & 0x7f);
    uint32_t rc = s_ze.api->CommandListAppendMemoryFill (s_ze.list, e->flush, &pattern, 1,
                                                         e->flush_bytes, NULL, 0, NULL);
    if (!rc) rc = s_ze.api->CommandListAppendBarrier (s_ze.list, NULL, 0, NULL);
    if (!rc) rc = s_ze.api->CommandListAppendWriteGlobalTimestamp (s_ze.list, &s_stage.stamps[0],
                                                                   NULL, 0, NULL);
    if (rc) {
        s_ze.api->CommandListReset (s_ze.list);
        return s_harness (e, rc, "starting a sample");
    }
    for (int k = 0; side && k < calls; k++) {
        int st = s_append_call (e, side, side == &e->cand ? e->cand_d : e->ref_d);
        if (st)
            return st;
    }
    rc = s_ze.api->CommandListAppendBarrier (s_ze.list, NULL, 0, NULL);
    if (!rc) rc = s_ze.api->CommandListAppendWriteGlobalTimestamp (s_ze.list, &s_stage.stamps[1],
                                                                   NULL, 0, NULL);
    if (rc) {
        s_ze.api->CommandListReset (s_ze.list);
        return s_harness (e, rc, "ending a sample");
    }
    kf_eval_set_phase (side == &e->cand ? 'C' : side ? 'R' : 'H');
    rc = s_submit ();
    kf_eval_set_phase ('H');
    if (rc) {
        *rc_out = rc;
        return side ? S_CRASHED : s_harness (e, rc, "an empty sample");
    }
    *ns = s_ticks_ns (s_stage.stamps[0], s_stage.stamps[1]);
    return S_OK;
}

static int
s_sample_failed (s_eval_t *e, int st, bool is_ref, uint32_t rc)
{
    if (st == S_HARNESS || st == S_LOAD_FAILED)
        return st;
    if (is_ref) {
        snprintf (e->detail, sizeof e->detail, "reference failed during timing%s%s",
                  rc ? ": " : "", rc ? s_err (rc) : "");
        return S_REF_FAILED;
    }
    snprintf (e->detail, sizeof e->detail, "timing: Level Zero error in the candidate: %s",
              s_err (rc));
    return st;
}

static int
s_calls_for (double per_call_ns)
{
    double calls = per_call_ns > 0 ? ceil (1e6 / per_call_ns) : 1000;
    return calls < 1 ? 1 : calls > 10000 ? 10000 : (int) calls;
}

static int
s_time (s_eval_t *e, json_t *timing, s_timing_t *t)
{
    double min_time = kf_eval_num (timing, "min_time_s", 1);
    int min_samples = (int) kf_eval_num (timing, "min_samples", 10);
    double warmup_s = kf_eval_num (timing, "warmup_s", 1);
    int warmup_calls = (int) kf_eval_num (timing, "warmup_calls", 10);
    if (min_samples < 3)
        min_samples = 3;
    int st;
    uint32_t rc;
    double ns = 0;

    double null_ns[16];
    for (int k = 0; k < 20; k++) {
        if ((st = s_sample (e, NULL, 0, (unsigned) k, &ns, &rc)))
            return st;
        if (k >= 4)
            null_ns[k - 4] = ns;
    }
    t->overhead_ns = kf_eval_median (null_ns, 16);
    //  A host reference's samples have no device overhead in them.
    double ref_overhead = e->ref.host ? 0 : t->overhead_ns;

    double ref_total = 0, cand_total = 0;
    int calls = 0;
    double start = s_now ();
    while (calls < warmup_calls || s_now () - start < warmup_s) {
        if ((st = s_sample (e, &e->ref, 1, (unsigned) calls, &ns, &rc)))
            return s_sample_failed (e, st, true, rc);
        ref_total += fmax (ns - ref_overhead, 0);
        if ((st = s_sample (e, &e->cand, 1, (unsigned) calls, &ns, &rc)))
            return s_sample_failed (e, st, false, rc);
        cand_total += fmax (ns - t->overhead_ns, 0);
        calls++;
    }
    t->ref_calls = s_calls_for (ref_total / calls);
    t->cand_calls = s_calls_for (cand_total / calls);
    t->ref_ns = malloc (S_MAX_SAMPLES * sizeof (double));
    t->cand_ns = malloc (S_MAX_SAMPLES * sizeof (double));
    if (!t->ref_ns || !t->cand_ns) {
        snprintf (e->detail, sizeof e->detail, "harness: out of memory for samples");
        return S_HARNESS;
    }
    double measured = 0;
    t->samples = 0;
    while ((t->samples < min_samples || measured < min_time) && t->samples < S_MAX_SAMPLES) {
        unsigned salt = (unsigned) t->samples;
        double ref_ns, cand_ns;
        if ((st = s_sample (e, &e->ref, t->ref_calls, salt, &ref_ns, &rc)))
            return s_sample_failed (e, st, true, rc);
        if ((st = s_sample (e, &e->cand, t->cand_calls, salt + 1, &cand_ns, &rc)))
            return s_sample_failed (e, st, false, rc);
        t->ref_ns[t->samples] = fmax (ref_ns - ref_overhead, ref_ns * 1e-3) / t->ref_calls;
        t->cand_ns[t->samples] = fmax (cand_ns - t->overhead_ns, cand_ns * 1e-3) / t->cand_calls;
        t->samples++;
        measured += (ref_ns + cand_ns) * 1e-9;
    }
    return S_OK;
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
s_setup (s_eval_t *e, const char *dir, json_t *task)
{
    json_t *ins = json_object_get (task, "inputs");
    json_t *outs = json_object_get (task, "outputs");
    e->n_in = (int) json_array_size (ins);
    e->n_out = (int) json_array_size (outs);
    if (e->n_out < 1 || e->n_in > S_MAX_TENSORS || e->n_out > S_MAX_TENSORS) {
        snprintf (e->detail, sizeof e->detail, "task: need 1 to 32 outputs and at most 32 inputs");
        return S_REF_FAILED;
    }
    uint32_t rc;
    size_t largest = 64;
    for (int i = 0; i < e->n_in; i++) {
        if (kf_eval_spec (&e->in[i], json_array_get (ins, (size_t) i), e->detail, sizeof e->detail))
            return S_REF_FAILED;
        size_t n = e->in[i].bytes ? e->in[i].bytes : 1;
        if (!(e->in_h[i] = malloc (n)) || !(e->back_h[i] = malloc (n))) {
            snprintf (e->detail, sizeof e->detail, "harness: out of memory for inputs");
            return S_HARNESS;
        }
        if ((rc = s_dbuf_new (&e->in_d[i], e->in[i].bytes)))
            return s_harness (e, rc, "allocating inputs");
        kf_eval_tensor (&e->in_t[i], &e->in[i], e->back_h[i]);
        largest = n > largest ? n : largest;
    }
    for (int o = 0; o < e->n_out; o++) {
        if (kf_eval_spec (&e->out[o], json_array_get (outs, (size_t) o), e->detail,
                          sizeof e->detail))
            return S_REF_FAILED;
        size_t n = e->out[o].bytes ? e->out[o].bytes : 1;
        if (!(e->ref_h[o] = malloc (n)) || !(e->cand_h[o] = malloc (n))
            || !(e->poison_h[o] = malloc (n))) {
            snprintf (e->detail, sizeof e->detail, "harness: out of memory for outputs");
            return S_HARNESS;
        }
        kf_eval_poison (e->out[o].dtype, e->poison_h[o], e->out[o].numel);
        if ((rc = s_dbuf_new (&e->ref_d[o], e->out[o].bytes))
            || (rc = s_dbuf_new (&e->cand_d[o], e->out[o].bytes)))
            return s_harness (e, rc, "allocating outputs");
        kf_eval_tensor (&e->ref_t[o], &e->out[o], e->ref_h[o]);
        largest = n > largest ? n : largest;
    }
    if ((rc = s_stage_reserve (largest + 2 * S_PAD)))
        return s_harness (e, rc, "allocating the host staging buffer");
    json_t *scalars = json_object_get (task, "scalars");
    size_t n_scalars = json_object_size (scalars);
    e->scalar_names = calloc (n_scalars + 1, sizeof *e->scalar_names);
    e->scalars = calloc (n_scalars + 1, sizeof *e->scalars);
    if (!e->scalar_names || !e->scalars) {
        snprintf (e->detail, sizeof e->detail, "harness: out of memory for scalars");
        return S_HARNESS;
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
        e->ref.fn = lib ? (s_forward_fn *) dlsym (lib, "kf_forward") : NULL;
        if (!e->ref.fn) {
            snprintf (e->detail, sizeof e->detail, "reference does not load: %s", dlerror ());
            return S_REF_FAILED;
        }
        e->ref.host = true;
    }
    snprintf (path, sizeof path, "%s/candidate.so", dir);
    e->cand.bytes = s_read_all (path, &size);
    if (!e->cand.bytes || !kf_ze_is_bundle (e->cand.bytes, size)) {
        snprintf (e->detail, sizeof e->detail, "candidate does not load: not a KF-SPIRV bundle "
                  "(an OpenCL C source built by the compile worker's spirv toolchain)");
        return S_LOAD_FAILED;
    }
    return s_side_build (e, &e->cand, size, task);
}

static void
s_eval_free (s_eval_t *e)
{
    //  Device memory and the context go with the process, which ends
    //  right after this.
    for (int i = 0; i < S_MAX_TENSORS; i++) {
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
    if (s_find_device (device, why, sizeof why)) {
        kf_eval_write_verdict (dir, "harness_failed", why);
        return 0;
    }
    char reason[400];
    if (s_open_queue (reason, sizeof reason)) {
        snprintf (why, sizeof why, "no Level Zero device: %s", reason);
        kf_eval_write_verdict (dir, "harness_failed", why);
        return 0;
    }
    s_eval_t *e = calloc (1, sizeof *e);
    if (!e)
        return 2;
    json_t *task = json_object_get (job, "task");
    json_t *timing = json_object_get (job, "timing");
    uint64_t seed = (uint64_t) json_integer_value (json_object_get (job, "seed"));
    kf_eval_tol_from_task (task, &e->tol, &e->worst);
    s_timing_t tm = { 0 };
    json_t *result = NULL;
    double copy_gbs = 0;

    int st = s_setup (e, dir, task);
    if (st == S_LOAD_FAILED) {
        kf_eval_write_verdict (dir, "load_failed", e->detail);
        goto done;
    }
    if (!st && s_copy_bandwidth (&copy_gbs, why, sizeof why)) {
        snprintf (e->detail, sizeof e->detail, "harness: %.400s", why);
        st = S_HARNESS;
    }
    size_t flush_bytes = 2 * (size_t) (s_ze.cache_bytes > 0 ? s_ze.cache_bytes : 64 << 20);
    if (flush_bytes > S_FLUSH_MAX)
        flush_bytes = S_FLUSH_MAX;
    if (!st && (st = s_harness (e, s_device_alloc (&e->flush, flush_bytes),
                                "allocating the cache flush buffer")) == S_OK)
        e->flush_bytes = flush_bytes;

    for (int set = 0; set < 5 && st == S_OK; set++)
        st = s_run_set (e, seed, set);
    if (st == S_OK && (st = s_poison_outputs (e, e->cand_d)) == S_OK
        && (st = s_time (e, timing, &tm)) == S_OK && (st = s_check_memory (e, "timing")) == S_OK)
        st = s_compare (e, "timing");

    if (st == S_LOAD_FAILED) {
        kf_eval_write_verdict (dir, "load_failed", e->detail);
        goto done;
    }
    if (st == S_REF_FAILED || st == S_HARNESS) {
        kf_eval_write_verdict (dir, st == S_REF_FAILED ? "reference_failed" : "harness_failed",
                               e->detail);
        goto done;
    }
    const char *verdict = st == S_OK ? "correct" : st == S_CRASHED ? "crashed" : "incorrect";
    result = json_object ();
    json_object_set_new (result, "verdict", json_string (verdict));
    json_object_set_new (result, "detail", json_string (st == S_OK ? "all checks passed" : e->detail));
    json_object_set_new (result, "correctness", kf_eval_correctness_json (&e->worst));
    json_object_set_new (result, "device", json_pack ("{s:s, s:i}", "name", s_ze.props.name,
                                                      "index", device));
    json_object_set_new (result, "reference_on", json_string (e->ref.host ? "host" : "device"));
    double speedup = -1;
    if (st == S_OK && tm.samples > 0)
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
        bool applies = bytes > (double) s_ze.cache_bytes;
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
    .probe = s_ze_probe,
    .unlimited_address_space = 1,
};
